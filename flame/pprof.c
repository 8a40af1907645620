/*
 * pprof: profile.proto written by hand (see pprof.h), with pb.c's wire
 * format and idtab.c's tables. Field numbers
 * are profile.proto's (pprof's proto/profile.proto, Apache-2.0; the
 * numbers are the format, not code).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "idtab.h"
#include "pb.h"
#include "pprof.h"

/* Profile */
#define PP_SAMPLE_TYPE	1
#define PP_SAMPLE	2
#define PP_MAPPING	3
#define PP_LOCATION	4
#define PP_FUNCTION	5
#define PP_STRING	6
#define PP_TIME		9
#define PP_DURATION	10
#define PP_PERIOD_TYPE	11
#define PP_PERIOD	12
#define PP_COMMENT	13
/* ValueType */
#define PP_VT_TYPE	1
#define PP_VT_UNIT	2
/* Sample */
#define PP_S_LOCATION	1
#define PP_S_VALUE	2
#define PP_S_LABEL	3
/* Label */
#define PP_L_KEY	1
#define PP_L_STR	2
#define PP_L_NUM	3
/* Mapping */
#define PP_M_ID		1
#define PP_M_START	2
#define PP_M_LIMIT	3
#define PP_M_OFFSET	4
#define PP_M_FILE	5
#define PP_M_BUILD_ID	6
#define PP_M_HAS_FUNCS	7
/* Location */
#define PP_LOC_ID	1
#define PP_LOC_MAPPING	2
#define PP_LOC_ADDRESS	3
#define PP_LOC_LINE	4
/* Line */
#define PP_LINE_FUNC	1
/* Function */
#define PP_F_ID		1
#define PP_F_NAME	2
#define PP_F_SYSNAME	3

struct pprof {
	struct pprof_info	 info;
	struct idtab		 strings;	/* id: the string table's index */
	struct idtab		 maps;		/* caller's key; id + 1 */
	struct idtab		 funcs;		/* name's string; id + 1 */
	struct idtab		 locs;		/* mapping, addr; id + 1 */
	struct idtab		 labels;	/* a sample's labels (u64s) */
	/* samples: a u32 id of their labels, then their locations as the
	 * Sample message's packed varints (2 or 3 bytes a location against
	 * 8 as u64s: most of a profile's memory where stacks are many) */
	struct idtab		 samples;
	struct pb_buf		 mapmsg;	/* Mapping messages, as they come */
	struct pb_buf		 locmsg;	/* Location messages */
	int64_t			*values;	/* count, nanos of each sample */
	size_t			 nvalues;
	uint64_t		 total;
	int			 failed;
};

/* The string table's index of s. */
static uint64_t
pprof_str(struct pprof *pp, const char *s)
{
	int64_t	 id;
	int	 isnew;

	if (s == NULL)
		s = "";
	if ((id = idtab_get(&pp->strings, s, strlen(s), &isnew)) == -1) {
		pp->failed = 1;
		return 0;
	}
	return (uint64_t)id;
}

struct pprof *
pprof_create(const struct pprof_info *info)
{
	struct pprof	*pp;

	if ((pp = calloc(1, sizeof(*pp))) == NULL)
		return NULL;
	pp->info = *info;
	pp->info.comment = NULL;
	/* the string table starts with "" */
	pprof_str(pp, "");
	if (pp->failed || (info->comment != NULL && (pp->info.comment =
	    strdup(info->comment)) == NULL)) {
		pprof_free(pp);
		return NULL;
	}
	return pp;
}

void
pprof_set_info(struct pprof *pp, const struct pprof_info *info)
{
	pp->info.time_nanos = info->time_nanos;
	pp->info.duration_nanos = info->duration_nanos;
	pp->info.period = info->period;
}

void
pprof_free(struct pprof *pp)
{
	if (pp == NULL)
		return;
	idtab_free(&pp->strings);
	idtab_free(&pp->maps);
	idtab_free(&pp->funcs);
	idtab_free(&pp->locs);
	idtab_free(&pp->labels);
	idtab_free(&pp->samples);
	free(pp->mapmsg.p);
	free(pp->locmsg.p);
	free(pp->values);
	free((char *)(uintptr_t)pp->info.comment);
	free(pp);
}

uint64_t
pprof_mapping(struct pprof *pp, uint64_t key, const struct pprof_map *m)
{
	struct pb_buf	 sub = { 0 };
	int64_t			 id;
	int			 isnew;

	if ((id = idtab_get(&pp->maps, &key, sizeof(key), &isnew)) ==
	    -1) {
		pp->failed = 1;
		return 0;
	}
	if (!isnew)
		return (uint64_t)id + 1;
	pb_uint(&sub, PP_M_ID, (uint64_t)id + 1);
	pb_uint(&sub, PP_M_START, m->start);
	pb_uint(&sub, PP_M_LIMIT, m->limit);
	pb_uint(&sub, PP_M_OFFSET, m->offset);
	pb_uint(&sub, PP_M_FILE, pprof_str(pp, m->file));
	pb_uint(&sub, PP_M_BUILD_ID, pprof_str(pp, m->build_id));
	/* names come with the profile: no symbolization is needed */
	pb_uint(&sub, PP_M_HAS_FUNCS, 1);
	pb_message(&pp->mapmsg, PP_MAPPING, &sub);
	free(sub.p);
	if (pp->mapmsg.failed)
		pp->failed = 1;
	return pp->failed ? 0 : (uint64_t)id + 1;
}

/* The function named name; its id. */
static uint64_t
pprof_function(struct pprof *pp, const char *name)
{
	uint64_t	 s = pprof_str(pp, name);
	int64_t		 id;
	int		 isnew;

	if ((id = idtab_get(&pp->funcs, &s, sizeof(s), &isnew)) == -1) {
		pp->failed = 1;
		return 0;
	}
	return (uint64_t)id + 1;
}

uint64_t
pprof_location(struct pprof *pp, uint64_t mapping, uint64_t addr,
    const char *const *names, size_t nnames)
{
	struct pb_buf	 sub = { 0 }, line = { 0 };
	uint64_t		 key[2] = { mapping, addr };
	int64_t			 id;
	size_t			 i;
	int			 isnew;

	if ((id = idtab_get(&pp->locs, key, sizeof(key), &isnew)) ==
	    -1) {
		pp->failed = 1;
		return 0;
	}
	if (!isnew)
		return (uint64_t)id + 1;
	pb_uint(&sub, PP_LOC_ID, (uint64_t)id + 1);
	pb_uint(&sub, PP_LOC_MAPPING, mapping);
	pb_uint(&sub, PP_LOC_ADDRESS, addr);
	for (i = 0; i < nnames; i++) {
		pb_uint(&line, PP_LINE_FUNC, pprof_function(pp, names[i]));
		pb_message(&sub, PP_LOC_LINE, &line);
	}
	pb_message(&pp->locmsg, PP_LOCATION, &sub);
	free(sub.p);
	free(line.p);
	if (pp->locmsg.failed)
		pp->failed = 1;
	return pp->failed ? 0 : (uint64_t)id + 1;
}

uint64_t
pprof_location_find(const struct pprof *pp, uint64_t mapping, uint64_t addr)
{
	uint64_t	 key[2] = { mapping, addr };

	return (uint64_t)(idtab_find(&pp->locs, key, sizeof(key)) + 1);
}

int
pprof_sample(struct pprof *pp, const uint64_t *locs, size_t n, int64_t count,
    int64_t nanos, const struct pprof_label *labels, size_t nlabels)
{
	uint64_t	 lkey[1 + 3 * PPROF_MAX_LABELS], v;
	uint8_t		 key[4 + 10 * 1024];
	int64_t		*nv;
	int64_t		 id;
	uint32_t	 lid;
	size_t		 k = 0, i, ncap;
	int		 isnew;

	if (n > 1024)
		n = 1024;	/* the leaf side stays */
	if (nlabels > PPROF_MAX_LABELS)
		nlabels = PPROF_MAX_LABELS;
	lkey[k++] = nlabels;
	for (i = 0; i < nlabels; i++) {
		lkey[k++] = pprof_str(pp, labels[i].key);
		lkey[k++] = labels[i].str != NULL ? pprof_str(pp,
		    labels[i].str) : 0;
		lkey[k++] = labels[i].str != NULL ? 0 :
		    (uint64_t)labels[i].num;
	}
	if (pp->failed || (id = idtab_get(&pp->labels, lkey,
	    k * sizeof(lkey[0]), &isnew)) == -1) {
		pp->failed = 1;
		return -1;
	}
	lid = (uint32_t)id;
	memcpy(key, &lid, sizeof(lid));
	k = sizeof(lid);
	for (i = 0; i < n; i++) {
		/* a varint, as pb_varint writes it */
		for (v = locs[i]; v >= 0x80; v >>= 7)
			key[k++] = (uint8_t)(v | 0x80);
		key[k++] = (uint8_t)v;
	}
	if ((id = idtab_get(&pp->samples, key, k, &isnew)) == -1) {
		pp->failed = 1;
		return -1;
	}
	if (isnew) {
		if (2 * (size_t)(id + 1) > pp->nvalues) {
			ncap = pp->nvalues ? pp->nvalues * 2 : 2048;
			if ((nv = reallocarray(pp->values, ncap,
			    sizeof(*nv))) == NULL) {
				pp->failed = 1;
				return -1;
			}
			pp->values = nv;
			pp->nvalues = ncap;
		}
		pp->values[2 * id] = pp->values[2 * id + 1] = 0;
	}
	pp->values[2 * id] += count;
	pp->values[2 * id + 1] += nanos;
	pp->total += (uint64_t)count;
	return 0;
}

uint64_t
pprof_samples(const struct pprof *pp)
{
	return pp->total;
}

/* A sample's key back into its message: its locations (the key's
 * varints after the labels' id), values and labels. */
static void
pprof_sample_msg(struct pprof *pp, struct pb_buf *b, size_t id,
    struct pb_buf *sub, struct pb_buf *scratch)
{
	struct pb_buf	 label = { 0 };
	const uint8_t	*key;
	uint64_t	 nl, vals[2], i, lkey[1 + 3 * PPROF_MAX_LABELS];
	uint32_t	 lid;
	size_t		 len, llen;

	key = idtab_key(&pp->samples, id, &len);
	memcpy(&lid, key, sizeof(lid));
	if (len > sizeof(lid))
		pb_bytes(sub, PP_S_LOCATION, key + sizeof(lid), len -
		    sizeof(lid));
	vals[0] = (uint64_t)pp->values[2 * id];
	vals[1] = (uint64_t)pp->values[2 * id + 1];
	pb_packed(sub, PP_S_VALUE, vals, 2, scratch);
	key = idtab_key(&pp->labels, lid, &llen);
	memcpy(lkey, key, llen);
	nl = lkey[0];
	for (i = 0; i < nl; i++) {
		pb_uint(&label, PP_L_KEY, lkey[1 + 3 * i]);
		pb_uint(&label, PP_L_STR, lkey[2 + 3 * i]);
		pb_uint(&label, PP_L_NUM, lkey[3 + 3 * i]);
		pb_message(sub, PP_S_LABEL, &label);
	}
	free(label.p);
	pb_message(b, PP_SAMPLE, sub);
}

static void
pprof_value_type(struct pb_buf *b, unsigned int field, uint64_t type,
    uint64_t unit, struct pb_buf *sub)
{
	pb_uint(sub, PP_VT_TYPE, type);
	pb_uint(sub, PP_VT_UNIT, unit);
	pb_message(b, field, sub);
}

/* Where an encoding goes, a part at a time: 0, or -1 (errno set). */
typedef int	(*pprof_put_fn)(void *, const void *, size_t);

/* What the encoding holds passed to put once it is PPROF_PART bytes or
 * more (always with last): the profile is never whole in memory. */
#define PPROF_PART	(1U << 20)

static int
pprof_part(struct pb_buf *b, pprof_put_fn put, void *arg, int last)
{
	if (b->failed) {
		errno = ENOMEM;
		return -1;
	}
	if ((!last && b->len < PPROF_PART) || b->len == 0)
		return 0;
	if (put(arg, b->p, b->len) == -1)
		return -1;
	b->len = 0;
	return 0;
}

/*
 * The Profile message, to put in parts as it is made: the root message
 * has no length of its own, so its fields go one after another, and the
 * tables already encoded (mappings, locations) go as they are.
 */
static int
pprof_encode_to(struct pprof *pp, pprof_put_fn put, void *arg)
{
	struct pb_buf	 b = { 0 }, sub = { 0 }, scratch = { 0 };
	uint64_t		 key[1];
	size_t			 i;
	uint64_t		 s_samples, s_count, s_cpu, s_ns, s_comment = 0;
	int			 rv = -1;

	s_samples = pprof_str(pp, "samples");
	s_count = pprof_str(pp, "count");
	s_cpu = pprof_str(pp, pp->info.time_type != NULL ?
	    pp->info.time_type : "cpu");
	s_ns = pprof_str(pp, "nanoseconds");
	if (pp->info.comment != NULL)
		s_comment = pprof_str(pp, pp->info.comment);
	if (pp->failed) {
		errno = ENOMEM;
		return -1;
	}
	pprof_value_type(&b, PP_SAMPLE_TYPE, s_samples, s_count, &sub);
	pprof_value_type(&b, PP_SAMPLE_TYPE, s_cpu, s_ns, &sub);
	for (i = 0; i < pp->samples.n; i++) {
		pprof_sample_msg(pp, &b, i, &sub, &scratch);
		if (pprof_part(&b, put, arg, 0) == -1)
			goto out;
	}
	if (pprof_part(&b, put, arg, 1) == -1 ||
	    (pp->mapmsg.len > 0 && put(arg, pp->mapmsg.p, pp->mapmsg.len) ==
	    -1) || (pp->locmsg.len > 0 && put(arg, pp->locmsg.p,
	    pp->locmsg.len) == -1))
		goto out;
	for (i = 0; i < pp->funcs.n; i++) {
		memcpy(key, pp->funcs.buf + pp->funcs.off[i], sizeof(key));
		pb_uint(&sub, PP_F_ID, i + 1);
		pb_uint(&sub, PP_F_NAME, key[0]);
		pb_uint(&sub, PP_F_SYSNAME, key[0]);
		pb_message(&b, PP_FUNCTION, &sub);
		if (pprof_part(&b, put, arg, 0) == -1)
			goto out;
	}
	for (i = 0; i < pp->strings.n; i++) {
		pb_bytes(&b, PP_STRING, pp->strings.buf +
		    pp->strings.off[i], pp->strings.off[i + 1] -
		    pp->strings.off[i]);
		if (pprof_part(&b, put, arg, 0) == -1)
			goto out;
	}
	pb_uint(&b, PP_TIME, (uint64_t)pp->info.time_nanos);
	pb_uint(&b, PP_DURATION, (uint64_t)pp->info.duration_nanos);
	pprof_value_type(&b, PP_PERIOD_TYPE, s_cpu, s_ns, &sub);
	pb_uint(&b, PP_PERIOD, (uint64_t)pp->info.period);
	if (s_comment != 0)
		pb_uint(&b, PP_COMMENT, s_comment);
	if (sub.failed || scratch.failed) {
		errno = ENOMEM;
		goto out;
	}
	rv = pprof_part(&b, put, arg, 1);
out:
	free(b.p);
	free(sub.p);
	free(scratch.p);
	return rv;
}

static int
pprof_put_buf(void *arg, const void *p, size_t len)
{
	struct pb_buf	*b = arg;

	pb_put(b, p, len);
	if (b->failed) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
pprof_encode(struct pprof *pp, uint8_t **out, size_t *len)
{
	struct pb_buf	 b = { 0 };

	if (pprof_encode_to(pp, pprof_put_buf, &b) == -1) {
		free(b.p);
		return -1;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/* gzip's deflate of the parts to f. */
struct pprof_gz {
	z_stream	 z;
	FILE		*f;
};

static int
pprof_gz_run(struct pprof_gz *g, int flush)
{
	uint8_t		 out[65536];
	size_t		 n;
	int		 zr;

	do {
		g->z.next_out = out;
		g->z.avail_out = sizeof(out);
		if ((zr = deflate(&g->z, flush)) == Z_STREAM_ERROR) {
			errno = EIO;
			return -1;
		}
		n = sizeof(out) - g->z.avail_out;
		if (n > 0 && fwrite(out, 1, n, g->f) != n)
			return -1;
	} while (flush == Z_FINISH ? zr != Z_STREAM_END :
	    g->z.avail_in > 0 || g->z.avail_out == 0);
	return 0;
}

static int
pprof_put_gz(void *arg, const void *p, size_t len)
{
	struct pprof_gz	*g = arg;
	const uint8_t	*s = p;
	uInt		 n;

	/* a part may be a table of more than 4 GiB in principle: in
	 * pieces deflate's counts hold */
	while (len > 0) {
		n = len > (1U << 30) ? (1U << 30) : (uInt)len;
		g->z.next_in = (Bytef *)(uintptr_t)s;
		g->z.avail_in = n;
		if (pprof_gz_run(g, Z_NO_FLUSH) == -1)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}

int
pprof_write(struct pprof *pp, FILE *f)
{
	struct pprof_gz	 g;
	int		 rv = -1;

	memset(&g, 0, sizeof(g));
	g.f = f;
	/* 15 + 16: a gzip wrapper, as pprof readers expect */
	if (deflateInit2(&g.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	if (pprof_encode_to(pp, pprof_put_gz, &g) == 0) {
		g.z.next_in = NULL;
		g.z.avail_in = 0;
		rv = pprof_gz_run(&g, Z_FINISH);
	}
	deflateEnd(&g.z);
	if (rv == -1 && errno == 0)
		errno = EIO;
	return rv == -1 || ferror(f) ? -1 : 0;
}

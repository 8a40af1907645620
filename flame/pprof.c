/*
 * pprof: profile.proto written by hand (see pprof.h).
 *
 * The wire format: each field is a key (field number << 3 | wire type)
 * and a value: a varint (type 0), or a length and bytes (type 2) for a
 * string, an embedded message or a packed run of varints. Field numbers
 * are profile.proto's (pprof's proto/profile.proto, Apache-2.0; the
 * numbers are the format, not code).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

#define PP_VARINT	0
#define PP_LEN		2

/* Byte keys to dense ids 0, 1, ... (open addressing over a hash). */
struct pprof_keys {
	uint8_t		*buf;		/* the keys, back to back */
	size_t		 len, cap;
	size_t		*off;		/* key i: buf[off[i]..off[i + 1]) */
	size_t		 n, ncap;
	uint32_t	*slot;		/* id + 1; 0: empty */
	size_t		 nslot;		/* a power of two */
};

struct pprof_buf {
	uint8_t		*p;
	size_t		 len, cap;
	int		 failed;	/* out of memory: the rest is not kept */
};

struct pprof {
	struct pprof_info	 info;
	struct pprof_keys	 strings;	/* id: the string table's index */
	struct pprof_keys	 maps;		/* caller's key; id + 1 */
	struct pprof_keys	 funcs;		/* name's string; id + 1 */
	struct pprof_keys	 locs;		/* mapping, addr; id + 1 */
	struct pprof_keys	 samples;	/* locations and labels */
	struct pprof_buf	 mapmsg;	/* Mapping messages, as they come */
	struct pprof_buf	 locmsg;	/* Location messages */
	int64_t			*values;	/* count, nanos of each sample */
	size_t			 nvalues;
	uint64_t		 total;
	int			 failed;
};

/* A word at a time: the keys are mostly u64s (locations, samples). */
static uint64_t
pprof_hash(const uint8_t *p, size_t n)
{
	uint64_t	 h = 0x9e3779b97f4a7c15ULL ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, sizeof(w));
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 32);
}

static int
pprof_keys_grow(struct pprof_keys *k)
{
	uint32_t	*slot;
	size_t		 nslot = k->nslot ? k->nslot * 2 : 1024, i, j;

	if ((slot = calloc(nslot, sizeof(*slot))) == NULL)
		return -1;
	for (i = 0; i < k->n; i++) {
		j = pprof_hash(k->buf + k->off[i], k->off[i + 1] - k->off[i]) &
		    (nslot - 1);
		while (slot[j] != 0)
			j = (j + 1) & (nslot - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(k->slot);
	k->slot = slot;
	k->nslot = nslot;
	return 0;
}

/* key's id; *isnew when it was added now. -1 without memory. */
static int64_t
pprof_keys_get(struct pprof_keys *k, const void *key, size_t len, int *isnew)
{
	const uint8_t	*kb = key;
	uint8_t		*nb;
	size_t		*no, j, id, ncap;

	*isnew = 0;
	if ((k->n + 1) * 2 > k->nslot && pprof_keys_grow(k) == -1)
		return -1;
	for (j = pprof_hash(kb, len) & (k->nslot - 1); k->slot[j] != 0;
	    j = (j + 1) & (k->nslot - 1)) {
		id = k->slot[j] - 1;
		if (k->off[id + 1] - k->off[id] == len &&
		    memcmp(k->buf + k->off[id], kb, len) == 0)
			return (int64_t)id;
	}
	if (k->n + 2 > k->ncap) {
		ncap = k->ncap ? k->ncap * 2 : 1024;
		if ((no = reallocarray(k->off, ncap, sizeof(*no))) == NULL)
			return -1;
		k->off = no;
		k->ncap = ncap;
		k->off[0] = 0;
	}
	if (k->len + len > k->cap) {
		ncap = k->cap ? k->cap * 2 : 65536;
		while (ncap < k->len + len)
			ncap *= 2;
		if ((nb = realloc(k->buf, ncap)) == NULL)
			return -1;
		k->buf = nb;
		k->cap = ncap;
	}
	if (len > 0)	/* "" is the first key: buf may be NULL yet */
		memcpy(k->buf + k->len, kb, len);
	k->len += len;
	k->off[k->n + 1] = k->len;
	k->slot[j] = (uint32_t)k->n + 1;
	*isnew = 1;
	return (int64_t)k->n++;
}

/* key's id, or -1 when it has none. */
static int64_t
pprof_keys_find(const struct pprof_keys *k, const void *key, size_t len)
{
	size_t	 j, id;

	if (k->nslot == 0)
		return -1;
	for (j = pprof_hash(key, len) & (k->nslot - 1); k->slot[j] != 0;
	    j = (j + 1) & (k->nslot - 1)) {
		id = k->slot[j] - 1;
		if (k->off[id + 1] - k->off[id] == len &&
		    memcmp(k->buf + k->off[id], key, len) == 0)
			return (int64_t)id;
	}
	return -1;
}

static void
pprof_keys_free(struct pprof_keys *k)
{
	free(k->buf);
	free(k->off);
	free(k->slot);
}

static void
pprof_put(struct pprof_buf *b, const void *p, size_t n)
{
	uint8_t	*np;
	size_t	 ncap;

	if (b->failed || n == 0)
		return;	/* p may be NULL then (no mappings) */
	if (b->len + n > b->cap) {
		ncap = b->cap ? b->cap * 2 : 4096;
		while (ncap < b->len + n)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->failed = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void
pprof_varint(struct pprof_buf *b, uint64_t v)
{
	uint8_t	 out[10];
	size_t	 n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	pprof_put(b, out, n);
}

/* A varint field; zero is the default and left out. */
static void
pprof_uint(struct pprof_buf *b, unsigned int field, uint64_t v)
{
	if (v == 0)
		return;
	pprof_varint(b, (uint64_t)field << 3 | PP_VARINT);
	pprof_varint(b, v);
}

static void
pprof_bytes(struct pprof_buf *b, unsigned int field, const void *p,
    size_t n)
{
	pprof_varint(b, (uint64_t)field << 3 | PP_LEN);
	pprof_varint(b, n);
	pprof_put(b, p, n);
}

/* A message field: the bytes of sub, then sub emptied for reuse. */
static void
pprof_message(struct pprof_buf *b, unsigned int field, struct pprof_buf *sub)
{
	if (sub->failed)
		b->failed = 1;
	pprof_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

/* A packed repeated varint field. */
static void
pprof_packed(struct pprof_buf *b, unsigned int field, const uint64_t *v,
    size_t n, struct pprof_buf *scratch)
{
	size_t	 i;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		pprof_varint(scratch, v[i]);
	pprof_message(b, field, scratch);
}

/* The string table's index of s. */
static uint64_t
pprof_str(struct pprof *pp, const char *s)
{
	int64_t	 id;
	int	 isnew;

	if (s == NULL)
		s = "";
	if ((id = pprof_keys_get(&pp->strings, s, strlen(s), &isnew)) == -1) {
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
	pprof_keys_free(&pp->strings);
	pprof_keys_free(&pp->maps);
	pprof_keys_free(&pp->funcs);
	pprof_keys_free(&pp->locs);
	pprof_keys_free(&pp->samples);
	free(pp->mapmsg.p);
	free(pp->locmsg.p);
	free(pp->values);
	free((char *)(uintptr_t)pp->info.comment);
	free(pp);
}

uint64_t
pprof_mapping(struct pprof *pp, uint64_t key, const struct pprof_map *m)
{
	struct pprof_buf	 sub = { 0 };
	int64_t			 id;
	int			 isnew;

	if ((id = pprof_keys_get(&pp->maps, &key, sizeof(key), &isnew)) ==
	    -1) {
		pp->failed = 1;
		return 0;
	}
	if (!isnew)
		return (uint64_t)id + 1;
	pprof_uint(&sub, PP_M_ID, (uint64_t)id + 1);
	pprof_uint(&sub, PP_M_START, m->start);
	pprof_uint(&sub, PP_M_LIMIT, m->limit);
	pprof_uint(&sub, PP_M_OFFSET, m->offset);
	pprof_uint(&sub, PP_M_FILE, pprof_str(pp, m->file));
	pprof_uint(&sub, PP_M_BUILD_ID, pprof_str(pp, m->build_id));
	/* names come with the profile: no symbolization is needed */
	pprof_uint(&sub, PP_M_HAS_FUNCS, 1);
	pprof_message(&pp->mapmsg, PP_MAPPING, &sub);
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

	if ((id = pprof_keys_get(&pp->funcs, &s, sizeof(s), &isnew)) == -1) {
		pp->failed = 1;
		return 0;
	}
	return (uint64_t)id + 1;
}

uint64_t
pprof_location(struct pprof *pp, uint64_t mapping, uint64_t addr,
    const char *const *names, size_t nnames)
{
	struct pprof_buf	 sub = { 0 }, line = { 0 };
	uint64_t		 key[2] = { mapping, addr };
	int64_t			 id;
	size_t			 i;
	int			 isnew;

	if ((id = pprof_keys_get(&pp->locs, key, sizeof(key), &isnew)) ==
	    -1) {
		pp->failed = 1;
		return 0;
	}
	if (!isnew)
		return (uint64_t)id + 1;
	pprof_uint(&sub, PP_LOC_ID, (uint64_t)id + 1);
	pprof_uint(&sub, PP_LOC_MAPPING, mapping);
	pprof_uint(&sub, PP_LOC_ADDRESS, addr);
	for (i = 0; i < nnames; i++) {
		pprof_uint(&line, PP_LINE_FUNC, pprof_function(pp, names[i]));
		pprof_message(&sub, PP_LOC_LINE, &line);
	}
	pprof_message(&pp->locmsg, PP_LOCATION, &sub);
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

	return (uint64_t)(pprof_keys_find(&pp->locs, key, sizeof(key)) + 1);
}

int
pprof_sample(struct pprof *pp, const uint64_t *locs, size_t n, int64_t count,
    int64_t nanos, const struct pprof_label *labels, size_t nlabels)
{
	uint64_t	 key[1 + 1024 + 1 + 3 * PPROF_MAX_LABELS];
	int64_t		*nv;
	int64_t		 id;
	size_t		 k = 0, i, ncap;
	int		 isnew;

	if (n > 1024)
		n = 1024;	/* the leaf side stays */
	if (nlabels > PPROF_MAX_LABELS)
		nlabels = PPROF_MAX_LABELS;
	key[k++] = n;
	for (i = 0; i < n; i++)
		key[k++] = locs[i];
	key[k++] = nlabels;
	for (i = 0; i < nlabels; i++) {
		key[k++] = pprof_str(pp, labels[i].key);
		key[k++] = labels[i].str != NULL ? pprof_str(pp,
		    labels[i].str) : 0;
		key[k++] = labels[i].str != NULL ? 0 :
		    (uint64_t)labels[i].num;
	}
	if (pp->failed || (id = pprof_keys_get(&pp->samples, key,
	    k * sizeof(key[0]), &isnew)) == -1) {
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

/* A sample's key back into its message. */
static void
pprof_sample_msg(struct pprof_buf *b, const uint64_t *key, const int64_t *v,
    struct pprof_buf *sub, struct pprof_buf *scratch)
{
	struct pprof_buf	 label = { 0 };
	uint64_t		 n = key[0], nl, vals[2], i;

	pprof_packed(sub, PP_S_LOCATION, key + 1, (size_t)n, scratch);
	vals[0] = (uint64_t)v[0];
	vals[1] = (uint64_t)v[1];
	pprof_packed(sub, PP_S_VALUE, vals, 2, scratch);
	nl = key[1 + n];
	for (i = 0; i < nl; i++) {
		pprof_uint(&label, PP_L_KEY, key[2 + n + 3 * i]);
		pprof_uint(&label, PP_L_STR, key[3 + n + 3 * i]);
		pprof_uint(&label, PP_L_NUM, key[4 + n + 3 * i]);
		pprof_message(sub, PP_S_LABEL, &label);
	}
	free(label.p);
	pprof_message(b, PP_SAMPLE, sub);
}

static void
pprof_value_type(struct pprof_buf *b, unsigned int field, uint64_t type,
    uint64_t unit, struct pprof_buf *sub)
{
	pprof_uint(sub, PP_VT_TYPE, type);
	pprof_uint(sub, PP_VT_UNIT, unit);
	pprof_message(b, field, sub);
}

int
pprof_encode(struct pprof *pp, uint8_t **out, size_t *len)
{
	struct pprof_buf	 b = { 0 }, sub = { 0 }, scratch = { 0 };
	uint64_t		 key[1];
	size_t			 i;
	const void		*k;
	uint64_t		 s_samples, s_count, s_cpu, s_ns, s_comment = 0;

	s_samples = pprof_str(pp, "samples");
	s_count = pprof_str(pp, "count");
	s_cpu = pprof_str(pp, "cpu");
	s_ns = pprof_str(pp, "nanoseconds");
	if (pp->info.comment != NULL)
		s_comment = pprof_str(pp, pp->info.comment);
	if (pp->failed) {
		errno = ENOMEM;
		return -1;
	}
	pprof_value_type(&b, PP_SAMPLE_TYPE, s_samples, s_count, &sub);
	pprof_value_type(&b, PP_SAMPLE_TYPE, s_cpu, s_ns, &sub);
	/* a sample's key is u64s at a multiple of 8 of a malloc'd buffer */
	for (i = 0; i < pp->samples.n; i++) {
		k = pp->samples.buf + pp->samples.off[i];
		pprof_sample_msg(&b, k, pp->values + 2 * i, &sub, &scratch);
	}
	pprof_put(&b, pp->mapmsg.p, pp->mapmsg.len);
	pprof_put(&b, pp->locmsg.p, pp->locmsg.len);
	for (i = 0; i < pp->funcs.n; i++) {
		memcpy(key, pp->funcs.buf + pp->funcs.off[i], sizeof(key));
		pprof_uint(&sub, PP_F_ID, i + 1);
		pprof_uint(&sub, PP_F_NAME, key[0]);
		pprof_uint(&sub, PP_F_SYSNAME, key[0]);
		pprof_message(&b, PP_FUNCTION, &sub);
	}
	for (i = 0; i < pp->strings.n; i++)
		pprof_bytes(&b, PP_STRING, pp->strings.buf +
		    pp->strings.off[i], pp->strings.off[i + 1] -
		    pp->strings.off[i]);
	pprof_uint(&b, PP_TIME, (uint64_t)pp->info.time_nanos);
	pprof_uint(&b, PP_DURATION, (uint64_t)pp->info.duration_nanos);
	pprof_value_type(&b, PP_PERIOD_TYPE, s_cpu, s_ns, &sub);
	pprof_uint(&b, PP_PERIOD, (uint64_t)pp->info.period);
	if (s_comment != 0)
		pprof_uint(&b, PP_COMMENT, s_comment);
	free(sub.p);
	free(scratch.p);
	if (b.failed || sub.failed || scratch.failed) {
		free(b.p);
		errno = ENOMEM;
		return -1;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

int
pprof_write(struct pprof *pp, FILE *f)
{
	z_stream	 z;
	uint8_t		*raw, out[65536];
	size_t		 len, n;
	int		 zr, rv = -1;

	if (pprof_encode(pp, &raw, &len) == -1)
		return -1;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper, as pprof readers expect */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		free(raw);
		errno = ENOMEM;
		return -1;
	}
	z.next_in = raw;
	z.avail_in = (uInt)len;	/* profiles stay far below 4 GiB */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			goto out;
		n = sizeof(out) - z.avail_out;
		if (n > 0 && fwrite(out, 1, n, f) != n)
			goto out;
	} while (zr != Z_STREAM_END);
	rv = 0;
out:
	deflateEnd(&z);
	free(raw);
	if (rv == -1 && errno == 0)
		errno = EIO;
	return rv == -1 || ferror(f) ? -1 : 0;
}

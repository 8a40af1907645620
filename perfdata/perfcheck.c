/*
 * perfcheck: records checked against the file's attrs as perf's parser
 * reads them (see perfcheck.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "perfdata/decompress.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfcheck.h"

/* perf's own record types start here; what lies below is the kernel's */
#define PC_USER_TYPES		64
/* the carry of a decoded run: less than one record */
#define PC_CARRY_MAX		65536
/* perf's BUILD_ID_SIZE: the most any record's build-id may hold */
#define PC_BUILD_ID_MAX		20
/* a compressed feature asking for more per record is not ours: the
 * daemon's largest ring (mmap_pages 65536 of 4 KiB) */
#define PC_MMAP_LEN_MAX		(256U << 20)
/* One COMPRESSED record decodes to at most this many times its payload,
 * or to one record's largest size (64 KiB: a record of zeros compresses
 * to a few bytes): a few bytes of zstd can claim 128 KiB each, and every
 * byte decoded costs a reader time and memory. perf's data compresses 3
 * to 20 times. */
#define PC_RATIO_MAX		256
#define PC_RATIO_FLOOR		65536
/* perf's PERF_ATTR_SIZE_VER0: no attr of a file is shorter */
#define PC_ATTR_SIZE_MIN	64

/* The sample fields of fixed size that perf reads before any check of
 * the record's length (evsel->sample_size). */
#define PC_SAMPLE_FIXED	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |		\
	PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |	\
	PERF_SAMPLE_PERIOD)

struct perfcheck_attr {
	uint64_t	 sample_type;
	uint64_t	 read_format;
	uint64_t	 branch_type;
	uint64_t	 regs_user;
	uint64_t	 regs_intr;
	uint64_t	 config;
	uint32_t	 type;
	int		 id_all;
	size_t		 trailer;	/* sample_id after other records */
};

struct perfcheck_id {
	uint64_t	 id;
	size_t		 attr;
};

struct perfcheck {
	struct perfcheck_attr	*attrs;
	size_t			 nr_attrs;
	struct perfcheck_id	*ids;		/* sorted by id */
	size_t			 nr_ids;
	int			 id_pos;	/* perf's, in u64s; -1: none */
	int			 is_pos;
	uint32_t		 nr_cpus;	/* 0: not known */
	uint32_t		 mmap_len;	/* 0: no compressed feature */
	struct decompress	*dz;
	uint8_t			*dbuf;		/* the carry, then what's new */
	size_t			 dcap;		/* its size: what records asked */
	int			 ours;		/* perfcheck_only_ours */
	perfcheck_visit_fn	 visit;
	void			*visit_arg;
	size_t			 attr;		/* the record's, for visit */
	struct perfcheck_sample	 smp;		/* a sample's, for visit */
	uint64_t		 rec_time;	/* the record's, for visit */
	size_t			 dlen;		/* the carry's bytes */
	char			 why[192];
};

/* A record being read: the bytes of it still to come are r[p..size). */
struct perfcheck_cur {
	const uint8_t	*r;
	size_t		 p;
	size_t		 size;
};

static int
perfcheck_u64(struct perfcheck_cur *c, uint64_t *v)
{
	if (c->size - c->p < sizeof(*v))
		return -1;
	memcpy(v, c->r + c->p, sizeof(*v));
	c->p += sizeof(*v);
	return 0;
}

static int
perfcheck_skip(struct perfcheck_cur *c, uint64_t n)
{
	if (n > c->size - c->p)
		return -1;
	c->p += (size_t)n;
	return 0;
}

/* Where perf finds a record's id: perf's evsel__calc_id_pos and
 * __evsel__calc_is_pos, in u64s from the body's start and its end. */
static int
perfcheck_id_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
	    !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR);
}

static int
perfcheck_is_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_STREAM_ID);
}

static size_t
perfcheck_trailer_len(uint64_t t)
{
	return 8 * (size_t)(!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
	    !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
	    !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER));
}

static int
perfcheck_id_cmp(const void *a, const void *b)
{
	const struct perfcheck_id	*x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* One attr of the head, and where its ids lie (*ids). */
static void
perfcheck_attr_read(struct perfcheck *pc, const uint8_t *buf,
    const struct perfdata_header *h, size_t i, struct perfdata_section *ids)
{
	struct perf_event_attr	 attr;
	struct perfcheck_attr	*a = &pc->attrs[i];
	uint64_t		 off = h->attrs.offset + i * h->attr_size;
	uint64_t		 asize = h->attr_size - sizeof(*ids);

	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, buf + off, asize < sizeof(attr) ? asize : sizeof(attr));
	memcpy(ids, buf + off + asize, sizeof(*ids));
	a->sample_type = attr.sample_type;
	a->read_format = attr.read_format;
	a->branch_type = attr.branch_sample_type;
	a->regs_user = attr.sample_regs_user;
	a->regs_intr = attr.sample_regs_intr;
	a->config = attr.config;
	a->type = attr.type;
	a->id_all = attr.sample_id_all;
	a->trailer = a->id_all ? perfcheck_trailer_len(a->sample_type) : 0;
}

static int
perfcheck_sec_cmp(const void *a, const void *b)
{
	const struct perfdata_section	*x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * The attrs' ids (secs[i] each's section), checked before any is
 * copied: each inside the file, none overlapping another (perf writes
 * them one after another), so that together they are never more than
 * the file. 0, or -1 when they cannot be read.
 */
static int
perfcheck_ids_read(struct perfcheck *pc, const uint8_t *buf, uint64_t len,
    const struct perfdata_section *secs)
{
	struct perfdata_section	*sorted;
	uint64_t		 total = 0, k, n;
	size_t			 i, j = 0;
	int			 rc = -1;

	for (i = 0; i < pc->nr_attrs; i++) {
		if (secs[i].offset > len || secs[i].size > len -
		    secs[i].offset || secs[i].size % sizeof(uint64_t) != 0)
			return -1;
		if (secs[i].size > 0)
			j++;
	}
	if ((sorted = malloc((j + 1) * sizeof(*sorted))) == NULL)
		return -1;
	for (i = 0, j = 0; i < pc->nr_attrs; i++)
		if (secs[i].size > 0)
			sorted[j++] = secs[i];
	qsort(sorted, j, sizeof(*sorted), perfcheck_sec_cmp);
	for (i = 0; i < j; i++) {
		if (i > 0 && sorted[i].offset < sorted[i - 1].offset +
		    sorted[i - 1].size)
			goto out;
		total += sorted[i].size / sizeof(uint64_t);
	}
	if (total > 0 && (pc->ids = malloc(total * sizeof(*pc->ids))) ==
	    NULL)
		goto out;
	for (i = 0; i < pc->nr_attrs; i++) {
		n = secs[i].size / sizeof(uint64_t);
		for (k = 0; k < n; k++) {
			memcpy(&pc->ids[pc->nr_ids].id, buf + secs[i].offset +
			    k * 8, 8);
			pc->ids[pc->nr_ids++].attr = i;
		}
	}
	rc = 0;
out:
	free(sorted);
	return rc;
}

struct perfcheck *
perfcheck_create(const uint8_t *buf, uint64_t len,
    const struct perfdata_header *h, const struct perfdata_section *feat)
{
	struct perfcheck		*pc;
	const struct perfdata_section	*s;
	struct perfdata_section		*secs = NULL;
	uint32_t			 v[5];
	size_t				 i;

	if (h->attr_size < PC_ATTR_SIZE_MIN + sizeof(struct perfdata_section) ||
	    h->attrs.size == 0 || h->attrs.size % h->attr_size != 0 ||
	    h->attrs.offset > len || h->attrs.size > len - h->attrs.offset) {
		errno = EINVAL;
		return NULL;
	}
	if ((pc = calloc(1, sizeof(*pc))) == NULL)
		return NULL;
	pc->nr_attrs = (size_t)(h->attrs.size / h->attr_size);
	if ((pc->attrs = calloc(pc->nr_attrs, sizeof(*pc->attrs))) == NULL ||
	    (secs = calloc(pc->nr_attrs, sizeof(*secs))) == NULL ||
	    (pc->dz = decompress_create()) == NULL)
		goto nomem;
	for (i = 0; i < pc->nr_attrs; i++) {
		perfcheck_attr_read(pc, buf, h, i, &secs[i]);
		/* perf opens no file whose events disagree on these */
		if (pc->attrs[i].id_all != pc->attrs[0].id_all ||
		    perfcheck_id_pos(pc->attrs[i].sample_type) !=
		    perfcheck_id_pos(pc->attrs[0].sample_type) ||
		    perfcheck_is_pos(pc->attrs[i].sample_type) !=
		    perfcheck_is_pos(pc->attrs[0].sample_type))
			goto bad;
	}
	pc->id_pos = perfcheck_id_pos(pc->attrs[0].sample_type);
	pc->is_pos = perfcheck_is_pos(pc->attrs[0].sample_type);
	if (pc->nr_attrs > 1 && (pc->id_pos < 0 || pc->is_pos < 0))
		goto bad;
	if (perfcheck_ids_read(pc, buf, len, secs) == -1)
		goto bad;
	free(secs);
	secs = NULL;
	if (pc->nr_ids > 1)
		qsort(pc->ids, pc->nr_ids, sizeof(*pc->ids), perfcheck_id_cmp);
	s = &feat[PERFDATA_FEAT_NRCPUS];
	if (s->size >= sizeof(v[0]) && s->offset <= len - sizeof(v[0])) {
		memcpy(&v[0], buf + s->offset, sizeof(v[0]));
		pc->nr_cpus = v[0];
	}
	/* comp_ver, type, level, ratio, mmap_len */
	s = &feat[PERFDATA_FEAT_COMPRESSED];
	if (s->size >= sizeof(v) && s->offset <= len - sizeof(v)) {
		memcpy(v, buf + s->offset, sizeof(v));
		if (v[1] == 1 && v[4] <= PC_MMAP_LEN_MAX)	/* zstd */
			pc->mmap_len = v[4];
	}
	snprintf(pc->why, sizeof(pc->why), "the end of the data");
	return pc;
nomem:
	free(secs);
	perfcheck_destroy(pc);
	errno = ENOMEM;
	return NULL;
bad:
	free(secs);
	perfcheck_destroy(pc);
	errno = EINVAL;
	return NULL;
}

void
perfcheck_destroy(struct perfcheck *pc)
{
	if (pc == NULL)
		return;
	decompress_destroy(pc->dz);
	free(pc->dbuf);
	free(pc->ids);
	free(pc->attrs);
	free(pc);
}

void
perfcheck_visit(struct perfcheck *pc, perfcheck_visit_fn fn, void *arg)
{
	pc->visit = fn;
	pc->visit_arg = arg;
}

const struct perfcheck_sample *
perfcheck_sample_fields(const struct perfcheck *pc)
{
	return &pc->smp;
}

uint64_t
perfcheck_record_time(const struct perfcheck *pc)
{
	return pc->rec_time;
}

size_t
perfcheck_nattrs(const struct perfcheck *pc)
{
	return pc->nr_attrs;
}

uint64_t
perfcheck_sample_type(const struct perfcheck *pc, size_t i)
{
	return i < pc->nr_attrs ? pc->attrs[i].sample_type : 0;
}

const char *
perfcheck_why(const struct perfcheck *pc)
{
	return pc->why;
}

/* The attr of id, as perf's evlist__event2evsel finds it: id 0 (what
 * perf synthesizes) is the first event. NULL: none of the file's. */
static const struct perfcheck_attr *
perfcheck_attr_of(const struct perfcheck *pc, uint64_t id)
{
	struct perfcheck_id	 key, *e;

	if (pc->nr_attrs == 1 || id == 0)
		return &pc->attrs[0];
	key.id = id;
	e = bsearch(&key, pc->ids, pc->nr_ids, sizeof(*pc->ids),
	    perfcheck_id_cmp);
	return e != NULL ? &pc->attrs[e->attr] : NULL;
}

static int
perfcheck_cpu(const struct perfcheck *pc, uint64_t v)
{
	uint32_t	 cpu;

	memcpy(&cpu, &v, sizeof(cpu));
	return pc->nr_cpus == 0 || cpu < pc->nr_cpus ? 0 : -1;
}

/* A read_format's values (a sample's, with the id perf always reads;
 * a READ record's as they come). */
static const char *
perfcheck_read(struct perfcheck_cur *c, uint64_t fmt, int sample)
{
	uint64_t	 nr, v, each;
	int		 id = sample || (fmt & PERF_FORMAT_ID);

	if (perfcheck_u64(c, &nr) == -1 ||
	    ((fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
	    perfcheck_u64(c, &v) == -1) ||
	    ((fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
	    perfcheck_u64(c, &v) == -1))
		return "read values overrun the record";
	if (fmt & PERF_FORMAT_GROUP) {
		each = 8 * (uint64_t)(1 + id + !!(fmt & PERF_FORMAT_LOST));
		if (nr > (c->size - c->p) / each)
			return "read group longer than the record";
		c->p += (size_t)(nr * each);
		return NULL;
	}
	if ((id && perfcheck_u64(c, &v) == -1) ||
	    ((fmt & PERF_FORMAT_LOST) && perfcheck_u64(c, &v) == -1))
		return "read values overrun the record";
	return NULL;
}

static const char *
perfcheck_regs(struct perfcheck_cur *c, uint64_t mask, uint64_t *abip,
    const uint8_t **regs)
{
	uint64_t	 abi;
	const uint8_t	*p;

	if (perfcheck_u64(c, &abi) == -1)
		return "registers overrun the record";
	if (abi > PERF_SAMPLE_REGS_ABI_64)
		return "registers of an unknown abi";
	p = c->r + c->p;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE &&
	    perfcheck_skip(c, 8 * (uint64_t)__builtin_popcountll(mask)) == -1)
		return "registers overrun the record";
	*abip = abi;
	*regs = abi != PERF_SAMPLE_REGS_ABI_NONE ? p : NULL;
	return NULL;
}

/* The fields evsel__parse_sample reads after the fixed ones, in its
 * order. NULL, or what is wrong. */
static const char *
perfcheck_sample_var(struct perfcheck_cur *c, const struct perfcheck_attr *a,
    struct perfcheck_sample *smp)
{
	uint64_t	 t = a->sample_type, nr, v, sz;
	const uint8_t	*intr;
	uint32_t	 raw;
	uint16_t	 common;
	const char	*why;

	if ((t & PERF_SAMPLE_READ) &&
	    (why = perfcheck_read(c, a->read_format, 1)) != NULL)
		return why;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (perfcheck_u64(c, &nr) == -1 || nr > (c->size - c->p) / 8)
			return "callchain longer than the record";
		smp->callchain = c->r + c->p;
		smp->nr = nr;
		c->p += (size_t)nr * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		if (c->size - c->p < sizeof(raw))
			return "raw data overruns the record";
		memcpy(&raw, c->r + c->p, sizeof(raw));
		c->p += sizeof(raw);
		/* the kernel pads it: the u64s after it stay aligned */
		if (raw > c->size - c->p || (c->p + raw) % 8 != 0)
			return "raw data longer than the record";
		/* perf reads a tracepoint's fields by the format of its
		 * attr's config, the type the data itself starts with */
		if (a->type == PERF_TYPE_TRACEPOINT) {
			if (raw < sizeof(common))
				return "tracepoint data too short";
			memcpy(&common, c->r + c->p, sizeof(common));
			if (common != a->config)
				return "tracepoint data of another event";
		}
		smp->raw = c->r + c->p;
		smp->raw_size = raw;
		c->p += raw;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		sz = (a->branch_type & PERF_SAMPLE_BRANCH_HW_INDEX) ? 8 : 0;
		if (perfcheck_u64(c, &nr) == -1 || sz > c->size - c->p ||
		    nr > (c->size - c->p - sz) / 24)
			return "branch stack longer than the record";
		c->p += (size_t)(sz + nr * 24);
	}
	if ((t & PERF_SAMPLE_REGS_USER) && (why = perfcheck_regs(c,
	    a->regs_user, &smp->abi, &smp->regs)) != NULL)
		return why;
	smp->regs_mask = a->regs_user;
	if (t & PERF_SAMPLE_STACK_USER) {
		if (perfcheck_u64(c, &sz) == -1 || sz % 8 != 0)
			return "user stack longer than the record";
		smp->stack = c->r + c->p;
		if (perfcheck_skip(c, sz) == -1)
			return "user stack longer than the record";
		if (sz != 0 && (perfcheck_u64(c, &v) == -1 || v > sz))
			return "user stack's dump size past its data";
		smp->stack_size = sz != 0 ? v : 0;
	}
	if (((t & PERF_SAMPLE_WEIGHT_TYPE) && perfcheck_u64(c, &v) == -1) ||
	    ((t & PERF_SAMPLE_DATA_SRC) && perfcheck_u64(c, &v) == -1) ||
	    ((t & PERF_SAMPLE_TRANSACTION) && perfcheck_u64(c, &v) == -1))
		return "fields overrun the record";
	if ((t & PERF_SAMPLE_REGS_INTR) && (why = perfcheck_regs(c,
	    a->regs_intr, &v, &intr)) != NULL)
		return why;
	if (((t & PERF_SAMPLE_PHYS_ADDR) && perfcheck_u64(c, &v) == -1) ||
	    ((t & PERF_SAMPLE_CGROUP) && perfcheck_u64(c, &smp->cgroup) ==
	    -1) ||
	    ((t & PERF_SAMPLE_DATA_PAGE_SIZE) && perfcheck_u64(c, &v) == -1) ||
	    ((t & PERF_SAMPLE_CODE_PAGE_SIZE) && perfcheck_u64(c, &v) == -1))
		return "fields overrun the record";
	if ((t & PERF_SAMPLE_AUX) && (perfcheck_u64(c, &sz) == -1 ||
	    sz % 8 != 0 || perfcheck_skip(c, sz) == -1))
		return "aux data longer than the record";
	return NULL;
}

static const char *
perfcheck_sample(struct perfcheck *pc, const uint8_t *r, size_t size,
    struct perfcheck_stats *st)
{
	struct perfcheck_cur		 c = { r, 8, size };
	const struct perfcheck_attr	*a = &pc->attrs[0];
	uint64_t			 t, v = 0, time = 0, id;
	const char			*why;

	if (pc->nr_attrs > 1) {
		if ((size_t)pc->id_pos >= (size - c.p) / 8)
			return "too short for its id";
		memcpy(&id, r + c.p + (size_t)pc->id_pos * 8, sizeof(id));
		if ((a = perfcheck_attr_of(pc, id)) == NULL)
			return "an id that none of the file's events has";
	}
	pc->attr = (size_t)(a - pc->attrs);
	t = a->sample_type;
	if (8 * (uint64_t)__builtin_popcountll(t & PC_SAMPLE_FIXED) >
	    size - c.p)
		return "shorter than its events' sample fields";
	memset(&pc->smp, 0, sizeof(pc->smp));
	pc->smp.cpu = UINT32_MAX;
	pc->smp.period = 1;
	c.p += 8 * (size_t)!!(t & PERF_SAMPLE_IDENTIFIER);
	if (t & PERF_SAMPLE_IP)
		perfcheck_u64(&c, &pc->smp.ip);
	if (t & PERF_SAMPLE_TID) {
		memcpy(&pc->smp.pid, r + c.p, 4);
		memcpy(&pc->smp.tid, r + c.p + 4, 4);
		c.p += 8;
	}
	if (t & PERF_SAMPLE_TIME)
		perfcheck_u64(&c, &time);
	pc->smp.time = time;
	pc->rec_time = time;
	c.p += 8 * (size_t)(!!(t & PERF_SAMPLE_ADDR) +
	    !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID));
	if (t & PERF_SAMPLE_CPU) {
		perfcheck_u64(&c, &v);
		if (perfcheck_cpu(pc, v) == -1)
			return "a CPU the file's machine does not have";
		memcpy(&pc->smp.cpu, &v, 4);
	}
	if (t & PERF_SAMPLE_PERIOD)
		perfcheck_u64(&c, &pc->smp.period);
	if ((why = perfcheck_sample_var(&c, a, &pc->smp)) != NULL)
		return why;
	/* the kernel writes exactly these fields: more is not a sample */
	if (c.p != size)
		return "longer than its sample fields";
	st->samples++;
	if (time != 0) {
		if (st->first == 0 || time < st->first)
			st->first = time;
		if (time > st->last)
			st->last = time;
	}
	return NULL;
}

/* A string that ends (NUL) within s[0..len) and fills it as the kernel
 * pads it: to the next multiple of 8. */
static int
perfcheck_str(const uint8_t *s, size_t len)
{
	const uint8_t	*nul;

	if (len == 0 || (nul = memchr(s, '\0', len)) == NULL)
		return -1;
	return len - (size_t)(nul - s) - 1 < 8 ? 0 : -1;
}

/* body bytes of a kernel record before its trailer: fixed, then a
 * string (str) or nothing. */
static const char *
perfcheck_body(const uint8_t *b, size_t body, size_t fixed, int str)
{
	if (body < fixed || (!str && body != fixed))
		return "a size its type does not have";
	if (str && perfcheck_str(b + fixed, body - fixed) == -1)
		return "a name not ended inside the record";
	return NULL;
}

/* A kernel record other than a sample: its sample_id trailer, then its
 * body by its type. */
static const char *
perfcheck_kernel(struct perfcheck *pc, const uint8_t *r, size_t size,
    struct perfcheck_stats *st)
{
	const struct perfcheck_attr	*a = &pc->attrs[0];
	const uint8_t			*b = r + 8;	/* the body */
	size_t				 n = (size - 8) / 8, body;
	uint64_t			 id, v, w;
	uint16_t			 lens[2], misc;
	uint32_t			 type;

	memcpy(&type, r, sizeof(type));
	memcpy(&misc, r + sizeof(type), sizeof(misc));
	if (a->id_all && pc->nr_attrs > 1) {
		if ((size_t)pc->is_pos > n)
			return "too short for its id";
		memcpy(&id, b + (n - (size_t)pc->is_pos) * 8, sizeof(id));
		if ((a = perfcheck_attr_of(pc, id)) == NULL)
			return "an id that none of the file's events has";
	}
	pc->attr = (size_t)(a - pc->attrs);
	if (a->trailer > size - 8)
		return "too short for its sample_id";
	body = size - 8 - a->trailer;
	if (a->id_all && (a->sample_type & PERF_SAMPLE_TIME))
		memcpy(&pc->rec_time, r + size - a->trailer +
		    ((a->sample_type & PERF_SAMPLE_TID) ? 8 : 0), 8);
	if (a->id_all && (a->sample_type & PERF_SAMPLE_CPU)) {
		/* the trailer's last u64s: CPU, then IDENTIFIER */
		memcpy(&v, r + size - 8 *
		    (1 + !!(a->sample_type & PERF_SAMPLE_IDENTIFIER)), 8);
		if (perfcheck_cpu(pc, v) == -1)
			return "a CPU the file's machine does not have";
	}
	switch (type) {
	case PERF_RECORD_MMAP:
		return perfcheck_body(b, body, 32, 1);
	case PERF_RECORD_MMAP2:
		/* pid, tid, start, len, pgoff, then the file's id: perf copies
		 * a build-id of the size its first byte gives into 20 bytes */
		if ((misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && body >= 64 &&
		    b[32] > PC_BUILD_ID_MAX)
			return "a build-id longer than 20 bytes";
		return perfcheck_body(b, body, 64, 1);
	case PERF_RECORD_COMM:
	case PERF_RECORD_CGROUP:
		return perfcheck_body(b, body, 8, 1);
	case PERF_RECORD_KSYMBOL:
		return perfcheck_body(b, body, 16, 1);
	case PERF_RECORD_LOST:
		if (body == 16) {
			memcpy(&v, b + 8, sizeof(v));
			st->lost += v;
		}
		return perfcheck_body(b, body, 16, 0);
	case PERF_RECORD_LOST_SAMPLES:
		if (body == 8) {
			memcpy(&v, b, sizeof(v));
			st->lost_samples += v;
		}
		return perfcheck_body(b, body, 8, 0);
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_AUX:
		return perfcheck_body(b, body, 24, 0);
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		return perfcheck_body(b, body, 8, 0);
	case PERF_RECORD_SWITCH:
		return perfcheck_body(b, body, 0, 0);
	case PERF_RECORD_BPF_EVENT:
		return perfcheck_body(b, body, 16, 0);
	case PERF_RECORD_READ: {
		struct perfcheck_cur	 c = { b, 8, body };
		const char		*why;

		if (body < 8)
			return "a size its type does not have";
		if ((why = perfcheck_read(&c, a->read_format, 0)) != NULL)
			return why;
		return c.p == body ? NULL : "a size its type does not have";
	}
	case PERF_RECORD_NAMESPACES:
		if (body < 16)
			return "a size its type does not have";
		memcpy(&v, b + 8, sizeof(v));
		return v == (body - 16) / 16 && (body - 16) % 16 == 0 ? NULL :
		    "namespaces not filling the record";
	case PERF_RECORD_TEXT_POKE:
		if (body < 16)
			return "a size its type does not have";
		memcpy(lens, b + 8, sizeof(lens));
		w = 12 + (uint64_t)lens[0] + lens[1];
		return w <= body && body - w < 8 ? NULL :
		    "text bytes not filling the record";
	}
	return "a record type perf does not know";
}

/*
 * The records perf record itself writes into its data beside the
 * kernel's (ID_INDEX, THREAD_MAP, CPU_MAP, STAT*, EVENT_UPDATE,
 * TIME_CONV, HEADER_FEATURE): whole in their size, read by nobody here,
 * so that a `perf record` file is read as perf reads it. The AUX ones
 * are not among them: AUXTRACE's data follows outside its size.
 */
static int
perfcheck_perf_own(uint32_t type)
{
	return type == 69 || (type >= 73 && type <= 80);
}

void
perfcheck_only_ours(struct perfcheck *pc)
{
	pc->ours = 1;
}

/* One record, not a compressed one (perfcheck_compressed walks those). */
static const char *
perfcheck_record(struct perfcheck *pc, const uint8_t *r, size_t size,
    struct perfcheck_stats *st)
{
	struct perf_event_header	 h;
	const char			*why = NULL;

	memcpy(&h, r, sizeof(h));
	pc->attr = 0;
	pc->rec_time = 0;
	if (size % 8 != 0)
		return "a size that is not a multiple of 8";
	if (h.type == PERF_RECORD_SAMPLE)
		why = perfcheck_sample(pc, r, size, st);
	else if (h.type == PERF_RECORD_FINISHED_ROUND ||
	    h.type == PERF_RECORD_FINISHED_INIT)
		why = size == sizeof(h) ? NULL :
		    "a size its type does not have";
	else if (h.type == PERF_RECORD_HEADER_BUILD_ID) {
		/* pid, the id (20 bytes and its size), then the file's name
		 * (padded to 64, not 8) */
		if (size <= sizeof(h) + 28 || memchr(r + sizeof(h) + 28, '\0',
		    size - sizeof(h) - 28) == NULL)
			why = "a name not ended inside the record";
		else if ((h.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) &&
		    r[sizeof(h) + 4 + PC_BUILD_ID_MAX] > PC_BUILD_ID_MAX)
			why = "a build-id longer than 20 bytes";
	}
	else if (h.type >= PC_USER_TYPES && (pc->ours ||
	    !perfcheck_perf_own(h.type)))
		why = "a record type our files never hold in their data";
	else if (h.type >= PC_USER_TYPES)
		;	/* perf record's own: nothing of a sample in it */
	else
		why = perfcheck_kernel(pc, r, size, st);
	if (why == NULL && pc->visit != NULL &&
	    pc->visit(pc->visit_arg, r, size, pc->attr) == -1)
		why = "stopped by its reader";
	if (why == NULL)
		st->records++;
	return why;
}

/* The records decoded from one COMPRESSED record, after what was left
 * of the last one; a record it does not finish waits for the next. */
static const char *
perfcheck_compressed(struct perfcheck *pc, const uint8_t *r, size_t size,
    struct perfcheck_stats *st)
{
	struct perf_event_header	 h;
	const char			*why;
	uint8_t				*tmp;
	size_t				 n, total, cap, p = 0;

	if (pc->mmap_len == 0)
		return "compressed, in a file without the compressed feature";
	cap = (size - sizeof(h)) * PC_RATIO_MAX;
	if (cap < PC_RATIO_FLOOR)
		cap = PC_RATIO_FLOOR;
	if (cap > pc->mmap_len)
		cap = pc->mmap_len;
	/* as large as a record may claim, not as mmap_len says */
	if (pc->dlen + cap > pc->dcap) {
		if ((tmp = realloc(pc->dbuf, pc->dlen + cap)) == NULL)
			return "out of memory to decompress it";
		pc->dbuf = tmp;
		pc->dcap = pc->dlen + cap;
	}
	n = decompress_record(pc->dz, r + sizeof(h), size - sizeof(h),
	    pc->dbuf + pc->dlen, cap, &why);
	if (n == 0 && why == NULL)
		return cap < pc->mmap_len ? "decompresses to more than 256 "
		    "times its bytes" : "decompresses to more than mmap_len";
	if (n == 0)
		return why;
	total = pc->dlen + n;
	while (total - p >= sizeof(h)) {
		memcpy(&h, pc->dbuf + p, sizeof(h));
		if (h.size < sizeof(h))
			return "decodes to a record smaller than its header";
		if (h.size > total - p)
			break;
		if (h.type == PERF_RECORD_COMPRESSED)
			return "decodes to a compressed record";
		if ((why = perfcheck_record(pc, pc->dbuf + p, h.size, st)) !=
		    NULL) {
			snprintf(pc->why, sizeof(pc->why), "type %u at %zu of "
			    "what it decodes to: %s", h.type, p, why);
			return pc->why;
		}
		p += h.size;
	}
	memmove(pc->dbuf, pc->dbuf + p, total - p);
	pc->dlen = total - p;
	st->raw += n;
	st->compressed += size;
	st->records++;
	return NULL;
}

uint64_t
perfcheck_walk(struct perfcheck *pc, const uint8_t *buf, uint64_t len,
    uint64_t off, struct perfcheck_stats *st)
{
	struct perf_event_header	 h;
	struct perfcheck_stats		 cur = *st;
	uint64_t			 kept = off;
	const char			*why = NULL;
	char				 inner[sizeof(pc->why)];

	snprintf(pc->why, sizeof(pc->why), "the end of the data");
	while (len - off >= sizeof(h)) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.type == 0 && h.size == 0)
			why = "zeros (a write that never landed)";
		else if (h.size < sizeof(h))
			why = "a size smaller than a record header";
		else if (h.size > len - off)
			why = "a record cut by the end of the data";
		else if (h.type == PERF_RECORD_COMPRESSED)
			why = perfcheck_compressed(pc, buf + off, h.size, &cur);
		else
			why = perfcheck_record(pc, buf + off, h.size, &cur);
		if (why != NULL) {
			/* why may be pc->why itself */
			snprintf(inner, sizeof(inner), "%s", why);
			snprintf(pc->why, sizeof(pc->why), "type %u (size %u) "
			    "at %llu: %.120s", h.type, h.size,
			    (unsigned long long)off, inner);
			break;
		}
		off += h.size;
		/* a cut here leaves no record half decoded */
		if (pc->dlen == 0) {
			kept = off;
			*st = cur;
		}
	}
	if (why == NULL && off < len)
		snprintf(pc->why, sizeof(pc->why), "%llu bytes at %llu, fewer "
		    "than a record header", (unsigned long long)(len - off),
		    (unsigned long long)off);
	if (why == NULL && kept < off)
		snprintf(pc->why, sizeof(pc->why), "the compressed records "
		    "from %llu leave a record half decoded",
		    (unsigned long long)kept);
	return kept;
}

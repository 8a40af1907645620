/*
 * otlp: the OTLP profiles request written by hand (see otlp.h), with
 * pb.c's wire format and idtab.c's tables. Field numbers are those of
 * opentelemetry-proto's profiles/v1development/profiles.proto and
 * collector/profiles/v1development/profiles_service.proto (Apache-2.0;
 * the numbers are the format, not code).
 *
 * A dictionary entry is interned by its own encoded message (mappings,
 * functions, attributes, stacks): two equal entries are one, as the
 * format asks, and the table is written from the keys as they are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "idtab.h"
#include "otlp.h"
#include "pb.h"

/* ExportProfilesServiceRequest */
#define OT_RESOURCE_PROFILES	1
#define OT_DICTIONARY		2
/* ProfilesDictionary */
#define OT_D_MAPPING		1
#define OT_D_LOCATION		2
#define OT_D_FUNCTION		3
#define OT_D_LINK		4
#define OT_D_STRING		5
#define OT_D_ATTRIBUTE		6
#define OT_D_STACK		7
/* ResourceProfiles */
#define OT_RP_RESOURCE		1
#define OT_RP_SCOPE_PROFILES	2
/* Resource */
#define OT_R_ATTRIBUTES		1
/* KeyValue */
#define OT_KV_KEY		1
#define OT_KV_VALUE		2
/* AnyValue */
#define OT_AV_STRING		1
#define OT_AV_INT		3
/* ScopeProfiles */
#define OT_SP_SCOPE		1
#define OT_SP_PROFILES		2
/* InstrumentationScope */
#define OT_IS_NAME		1
#define OT_IS_VERSION		2
/* Profile */
#define OT_P_SAMPLE_TYPE	1
#define OT_P_SAMPLES		2
#define OT_P_TIME		3
#define OT_P_DURATION		4
#define OT_P_PERIOD_TYPE	5
#define OT_P_PERIOD		6
#define OT_P_PROFILE_ID		7
#define OT_P_ATTRIBUTES		11
/* ValueType */
#define OT_VT_TYPE		1
#define OT_VT_UNIT		2
/* Sample */
#define OT_S_STACK		1
#define OT_S_ATTRIBUTES		2
#define OT_S_VALUES		4
#define OT_S_TIMESTAMPS		5
/* Mapping */
#define OT_M_START		1
#define OT_M_LIMIT		2
#define OT_M_OFFSET		3
#define OT_M_FILENAME		4
#define OT_M_ATTRIBUTES		5
/* Stack */
#define OT_ST_LOCATIONS		1
/* Location */
#define OT_L_MAPPING		1
#define OT_L_ADDRESS		2
#define OT_L_LINES		3
#define OT_L_ATTRIBUTES		4
/* Line */
#define OT_LN_FUNCTION		1
/* Function */
#define OT_F_NAME		1
#define OT_F_SYSTEM_NAME	2
/* KeyValueAndUnit */
#define OT_KVU_KEY		1
#define OT_KVU_VALUE		2
/* Link */
#define OT_LK_TRACE_ID		1
#define OT_LK_SPAN_ID		2

struct otlp_resource {
	char		*key;
	struct pb_buf	 attrs;		/* Resource's KeyValue fields */
};

struct otlp_profile {
	uint32_t	 resource;
	char		*name;
	struct otlp_type t;		/* its strings static */
	uint64_t	 first, last;	/* of its samples' times */
	uint32_t	 event_attr;
};

/* One sample added: its value and time, for the sample it is of. */
struct otlp_obs {
	uint32_t	 sample;
	int64_t		 value;
	uint64_t	 ts;
} __attribute__((packed));

struct otlp {
	char			*scope, *version;
	struct idtab		 strings;
	struct idtab		 maps;		/* Mapping messages */
	struct idtab		 funcs;		/* Function messages */
	struct idtab		 attrs;		/* KeyValueAndUnit messages */
	struct idtab		 stacks;	/* Stack messages */
	struct idtab		 locs;		/* mapping, addr (u64s) */
	struct pb_buf		 locmsg;	/* Location messages, by index */
	struct idtab		 samples;	/* profile, stack, attrs (u32s) */
	struct otlp_obs		*obs;
	size_t			 nobs, obs_cap;
	struct otlp_resource	*res;
	size_t			 nres;
	struct otlp_profile	*prof;
	size_t			 nprof;
	struct pb_buf		 scratch;
	int			 failed;
};

/* The length of the UTF-8 sequence at s (RFC 3629: no overlong form,
 * no surrogate, nothing past U+10FFFF), 0 if none starts there. */
static size_t
otlp_utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[0] == 0xe0 && s[1] < 0xa0) ||
		    (s[0] == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80 || (s[0] == 0xf0 && s[1] < 0x90) ||
		    (s[0] == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* s as valid UTF-8, as a string field must be (a receiver's protobuf
 * refuses the whole request otherwise): s itself, or in *copy (to free)
 * with each byte that starts no sequence as U+FFFD; a comm or a symbol
 * name may hold any bytes. NULL without memory. */
static const char *
otlp_utf8(const char *s, char **copy)
{
	const unsigned char	*p;
	size_t			 n, o = 0;

	*copy = NULL;
	for (p = (const unsigned char *)s; *p != '\0'; p += n)
		if ((n = otlp_utf8_len(p)) == 0)
			break;
	if (*p == '\0')
		return s;
	if ((*copy = malloc(strlen(s) * 3 + 1)) == NULL)
		return NULL;
	for (p = (const unsigned char *)s; *p != '\0'; p += n)
		if ((n = otlp_utf8_len(p)) == 0) {
			memcpy(*copy + o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		} else {
			memcpy(*copy + o, p, n);
			o += n;
		}
	(*copy)[o] = '\0';
	return *copy;
}

/* A string field of s, as valid UTF-8. */
static void
otlp_text(struct pb_buf *b, unsigned int field, const char *s)
{
	char	*copy;

	if ((s = otlp_utf8(s, &copy)) == NULL)
		b->failed = 1;
	else
		pb_bytes(b, field, s, strlen(s));
	free(copy);
}

static uint32_t
otlp_str(struct otlp *ot, const char *s)
{
	int64_t	 id;
	int	 isnew;
	char	*copy;

	if (s == NULL)
		s = "";
	if ((s = otlp_utf8(s, &copy)) == NULL ||
	    (id = idtab_get(&ot->strings, s, strlen(s), &isnew)) == -1) {
		free(copy);
		ot->failed = 1;
		return 0;
	}
	free(copy);
	return (uint32_t)id;
}

/* msg's index in t (the message interned by its bytes), msg emptied. */
static uint32_t
otlp_intern(struct otlp *ot, struct idtab *t, struct pb_buf *msg)
{
	int64_t	 id;
	int	 isnew;

	if (msg->failed || (id = idtab_get(t, msg->p != NULL ? (const void *)msg->p : "",
	    msg->len, &isnew)) == -1) {
		ot->failed = 1;
		msg->len = 0;
		return 0;
	}
	msg->len = 0;
	return (uint32_t)id;
}

struct otlp *
otlp_create(const char *scope, const char *version)
{
	struct otlp	*ot;
	struct pb_buf	 none = { 0 };
	/* a key no frame has (mappings are u32s): a frame at 0 of no
	 * mapping is a location of its own */
	uint64_t	 zero[2] = { UINT64_MAX, 0 };
	int64_t		 id;
	int		 isnew;

	if ((ot = calloc(1, sizeof(*ot))) == NULL)
		return NULL;
	/* each table's index 0 is its zero value, "none" */
	otlp_str(ot, "");
	otlp_intern(ot, &ot->maps, &none);
	otlp_intern(ot, &ot->funcs, &none);
	otlp_intern(ot, &ot->attrs, &none);
	otlp_intern(ot, &ot->stacks, &none);
	if ((id = idtab_get(&ot->locs, zero, sizeof(zero), &isnew)) == -1)
		ot->failed = 1;
	pb_bytes(&ot->locmsg, OT_D_LOCATION, NULL, 0);
	if (ot->locmsg.failed || ot->failed ||
	    (ot->scope = strdup(scope)) == NULL ||
	    (ot->version = strdup(version)) == NULL) {
		otlp_free(ot);
		return NULL;
	}
	return ot;
}

void
otlp_free(struct otlp *ot)
{
	size_t	 i;

	if (ot == NULL)
		return;
	idtab_free(&ot->strings);
	idtab_free(&ot->maps);
	idtab_free(&ot->funcs);
	idtab_free(&ot->attrs);
	idtab_free(&ot->stacks);
	idtab_free(&ot->locs);
	idtab_free(&ot->samples);
	free(ot->locmsg.p);
	free(ot->obs);
	for (i = 0; i < ot->nres; i++) {
		free(ot->res[i].key);
		free(ot->res[i].attrs.p);
	}
	free(ot->res);
	for (i = 0; i < ot->nprof; i++)
		free(ot->prof[i].name);
	free(ot->prof);
	free(ot->scope);
	free(ot->version);
	free(ot->scratch.p);
	free(ot);
}

/* An AnyValue of a's value into b as field; an integer 0 is written (it
 * is the oneof's choice, not a default). */
static void
otlp_anyvalue(struct pb_buf *b, unsigned int field, const struct otlp_attr *a,
    struct pb_buf *sub)
{
	if (a->str != NULL)
		otlp_text(sub, OT_AV_STRING, a->str);
	else {
		pb_varint(sub, OT_AV_INT << 3 | PB_VARINT);
		pb_varint(sub, (uint64_t)a->num);
	}
	pb_message(b, field, sub);
}

int64_t
otlp_resource(struct otlp *ot, const char *key, const struct otlp_attr *a,
    size_t n)
{
	struct otlp_resource	*tmp, *r;
	struct pb_buf		 kv = { 0 }, v = { 0 };
	size_t			 i;

	for (i = 0; i < ot->nres; i++)
		if (strcmp(ot->res[i].key, key) == 0)
			return (int64_t)i;
	if ((tmp = reallocarray(ot->res, ot->nres + 1, sizeof(*tmp))) ==
	    NULL)
		return -1;
	ot->res = tmp;
	r = &ot->res[ot->nres];
	memset(r, 0, sizeof(*r));
	if ((r->key = strdup(key)) == NULL)
		return -1;
	ot->nres++;
	for (i = 0; i < n; i++) {
		otlp_text(&kv, OT_KV_KEY, a[i].key);
		otlp_anyvalue(&kv, OT_KV_VALUE, &a[i], &v);
		pb_message(&r->attrs, OT_R_ATTRIBUTES, &kv);
	}
	free(kv.p);
	free(v.p);
	return r->attrs.failed ? -1 : (int64_t)(ot->nres - 1);
}

int64_t
otlp_profile(struct otlp *ot, uint32_t resource, const char *name,
    const struct otlp_type *t)
{
	struct otlp_profile	*tmp, *p;
	struct otlp_attr	 ev = { "perf.event", name, 0 };
	size_t			 i;

	for (i = 0; i < ot->nprof; i++)
		if (ot->prof[i].resource == resource &&
		    strcmp(ot->prof[i].name, name) == 0)
			return (int64_t)i;
	if ((tmp = reallocarray(ot->prof, ot->nprof + 1, sizeof(*tmp))) ==
	    NULL)
		return -1;
	ot->prof = tmp;
	p = &ot->prof[ot->nprof];
	memset(p, 0, sizeof(*p));
	p->resource = resource;
	p->t = *t;
	if ((p->name = strdup(name)) == NULL)
		return -1;
	p->event_attr = otlp_attribute(ot, &ev);
	ot->nprof++;
	return ot->failed ? -1 : (int64_t)(ot->nprof - 1);
}

uint32_t
otlp_attribute(struct otlp *ot, const struct otlp_attr *a)
{
	struct pb_buf	*b = &ot->scratch, v = { 0 };

	pb_uint(b, OT_KVU_KEY, otlp_str(ot, a->key));
	otlp_anyvalue(b, OT_KVU_VALUE, a, &v);
	free(v.p);
	return otlp_intern(ot, &ot->attrs, b);
}

uint32_t
otlp_mapping(struct otlp *ot, const struct otlp_map *m)
{
	struct pb_buf		 b = { 0 };
	struct otlp_attr	 bid = { "process.executable.build_id.gnu",
				     m->build_id, 0 };
	uint32_t		 a = 0, id;

	if (m->build_id != NULL && m->build_id[0] != '\0')
		a = otlp_attribute(ot, &bid);
	pb_uint(&b, OT_M_START, m->start);
	pb_uint(&b, OT_M_LIMIT, m->limit);
	pb_uint(&b, OT_M_OFFSET, m->offset);
	pb_uint(&b, OT_M_FILENAME, otlp_str(ot, m->file));
	if (a != 0) {
		pb_varint(&b, OT_M_ATTRIBUTES << 3 | PB_LEN);
		pb_varint(&b, pb_varint_len(a));
		pb_varint(&b, a);
	}
	id = otlp_intern(ot, &ot->maps, &b);
	free(b.p);
	return id;
}

/* The function named name: its index. */
static uint32_t
otlp_function(struct otlp *ot, const char *name)
{
	uint32_t	 s = otlp_str(ot, name);

	pb_uint(&ot->scratch, OT_F_NAME, s);
	pb_uint(&ot->scratch, OT_F_SYSTEM_NAME, s);
	return otlp_intern(ot, &ot->funcs, &ot->scratch);
}

uint32_t
otlp_location(struct otlp *ot, uint32_t mapping, uint64_t addr,
    const char *const *names, size_t n, int kernel)
{
	struct otlp_attr	 type = { "profile.frame.type", kernel ?
				     "kernel" : "native", 0 };
	struct pb_buf		 loc = { 0 }, line = { 0 };
	uint64_t		 key[2] = { mapping, addr };
	uint32_t		 fn, a;
	int64_t			 id;
	size_t			 i;
	int			 isnew;

	if ((id = idtab_get(&ot->locs, key, sizeof(key), &isnew)) == -1) {
		ot->failed = 1;
		return 0;
	}
	if (!isnew)
		return (uint32_t)id;
	a = otlp_attribute(ot, &type);
	pb_uint(&loc, OT_L_MAPPING, mapping);
	pb_uint(&loc, OT_L_ADDRESS, addr);
	/* a line each, the innermost first: the functions inlined at addr
	 * (--inline), then the one they are inlined into */
	for (i = 0; i < n; i++) {
		fn = otlp_function(ot, names[i]);
		line.len = 0;
		pb_uint(&line, OT_LN_FUNCTION, fn);
		pb_message(&loc, OT_L_LINES, &line);
	}
	pb_packed(&loc, OT_L_ATTRIBUTES, (uint64_t[]){ a }, 1, &line);
	pb_message(&ot->locmsg, OT_D_LOCATION, &loc);
	free(loc.p);
	free(line.p);
	if (ot->locmsg.failed)
		ot->failed = 1;
	return ot->failed ? 0 : (uint32_t)id;
}

uint32_t
otlp_location_find(const struct otlp *ot, uint32_t mapping, uint64_t addr)
{
	uint64_t	 key[2] = { mapping, addr };
	int64_t		 id = idtab_find(&ot->locs, key, sizeof(key));

	return id < 0 ? 0 : (uint32_t)id;
}

uint32_t
otlp_stack(struct otlp *ot, const uint64_t *locs, size_t n)
{
	struct pb_buf	*b = &ot->scratch;
	size_t		 i, len = 0;

	/* the packed field by hand: its length first, from the varints' */
	for (i = 0; i < n; i++)
		len += pb_varint_len(locs[i]);
	if (n > 0) {
		pb_varint(b, OT_ST_LOCATIONS << 3 | PB_LEN);
		pb_varint(b, len);
		for (i = 0; i < n; i++)
			pb_varint(b, locs[i]);
	}
	return otlp_intern(ot, &ot->stacks, b);
}

int
otlp_sample(struct otlp *ot, uint32_t profile, uint32_t stack,
    const uint32_t *attrs, size_t nattrs, int64_t value, uint64_t ts)
{
	uint32_t		 key[3 + OTLP_MAX_ATTRS];
	struct otlp_obs		*no;
	struct otlp_profile	*p;
	size_t			 i, ncap;
	int64_t			 id;
	int			 isnew;

	if (nattrs > OTLP_MAX_ATTRS)
		nattrs = OTLP_MAX_ATTRS;
	if (profile >= ot->nprof)
		return -1;
	key[0] = profile;
	key[1] = stack;
	key[2] = (uint32_t)nattrs;
	for (i = 0; i < nattrs; i++)
		key[3 + i] = attrs[i];
	if (ot->failed || (id = idtab_get(&ot->samples, key, (3 + nattrs) *
	    sizeof(key[0]), &isnew)) == -1) {
		ot->failed = 1;
		return -1;
	}
	if (ot->nobs == ot->obs_cap) {
		ncap = ot->obs_cap ? ot->obs_cap * 2 : 65536;
		if ((no = reallocarray(ot->obs, ncap, sizeof(*no))) == NULL) {
			ot->failed = 1;
			return -1;
		}
		ot->obs = no;
		ot->obs_cap = ncap;
	}
	ot->obs[ot->nobs].sample = (uint32_t)id;
	ot->obs[ot->nobs].value = value;
	ot->obs[ot->nobs].ts = ts;
	ot->nobs++;
	p = &ot->prof[profile];
	if (ts != 0 && (p->first == 0 || ts < p->first))
		p->first = ts;
	if (ts > p->last)
		p->last = ts;
	return 0;
}

uint64_t
otlp_samples(const struct otlp *ot)
{
	return ot->nobs;
}

static void
otlp_value_type(struct otlp *ot, struct pb_buf *b, unsigned int field,
    const char *type, const char *unit, struct pb_buf *sub)
{
	pb_uint(sub, OT_VT_TYPE, otlp_str(ot, type));
	pb_uint(sub, OT_VT_UNIT, otlp_str(ot, unit));
	pb_message(b, field, sub);
}

/* A sample's values and timestamps, o[0..n): packed varints, packed
 * fixed64s. */
static void
otlp_observations(struct pb_buf *b, const struct otlp_obs *o, size_t n)
{
	uint8_t		 le[8];
	size_t		 i, j, len = 0;

	for (i = 0; i < n; i++)
		len += pb_varint_len((uint64_t)o[i].value);
	pb_varint(b, OT_S_VALUES << 3 | PB_LEN);
	pb_varint(b, len);
	for (i = 0; i < n; i++)
		pb_varint(b, (uint64_t)o[i].value);
	pb_varint(b, OT_S_TIMESTAMPS << 3 | PB_LEN);
	pb_varint(b, 8 * (uint64_t)n);
	for (i = 0; i < n; i++) {
		for (j = 0; j < 8; j++)
			le[j] = (uint8_t)(o[i].ts >> (8 * j));
		pb_put(b, le, 8);
	}
}

/* Profile pi's message into b: its samples in the order of their ids,
 * sample i's observations sorted[first[i]..first[i + 1]). */
static void
otlp_profile_msg(struct otlp *ot, struct pb_buf *b, uint32_t pi,
    const size_t *first, const struct otlp_obs *sorted, struct pb_buf *s,
    struct pb_buf *sub)
{
	const struct otlp_profile	*p = &ot->prof[pi];
	const uint8_t			*kb;
	uint32_t			 key[3 + OTLP_MAX_ATTRS];
	uint64_t			 v[OTLP_MAX_ATTRS], id[2];
	size_t				 i, j, len;

	otlp_value_type(ot, b, OT_P_SAMPLE_TYPE, p->t.type, p->t.unit, sub);
	for (i = 0; i < ot->samples.n; i++) {
		kb = idtab_key(&ot->samples, i, &len);
		if (len < 3 * sizeof(key[0]) || len > sizeof(key))
			continue;
		memcpy(key, kb, len);
		if (key[0] != pi || key[2] > OTLP_MAX_ATTRS)
			continue;
		pb_uint(s, OT_S_STACK, key[1]);
		for (j = 0; j < key[2]; j++)
			v[j] = key[3 + j];
		pb_packed(s, OT_S_ATTRIBUTES, v, key[2], sub);
		otlp_observations(s, sorted + first[i], first[i + 1] -
		    first[i]);
		pb_message(b, OT_P_SAMPLES, s);
	}
	pb_fixed64(b, OT_P_TIME, p->first);
	pb_uint(b, OT_P_DURATION, p->last - p->first);
	if (p->t.period_type != NULL)
		otlp_value_type(ot, b, OT_P_PERIOD_TYPE, p->t.period_type,
		    p->t.period_unit, sub);
	pb_uint(b, OT_P_PERIOD, (uint64_t)p->t.period);
	/* a random id: a collector may use it to drop a profile sent twice */
	if (getrandom(id, sizeof(id), 0) == (ssize_t)sizeof(id) &&
	    (id[0] | id[1]) != 0)
		pb_bytes(b, OT_P_PROFILE_ID, id, sizeof(id));
	pb_packed(b, OT_P_ATTRIBUTES, (uint64_t[]){ p->event_attr }, 1, sub);
}

/* The dictionary's bytes into b. */
static void
otlp_dictionary(struct otlp *ot, struct pb_buf *b)
{
	static const uint8_t	 zeros[16];
	struct pb_buf		 link = { 0 };
	const uint8_t		*k;
	size_t			 i, len;

	for (i = 0; i < ot->maps.n; i++) {
		k = idtab_key(&ot->maps, i, &len);
		pb_bytes(b, OT_D_MAPPING, k, len);
	}
	pb_put(b, ot->locmsg.p, ot->locmsg.len);
	for (i = 0; i < ot->funcs.n; i++) {
		k = idtab_key(&ot->funcs, i, &len);
		pb_bytes(b, OT_D_FUNCTION, k, len);
	}
	/* link_table[0]: the zero link, its ids at their lengths */
	pb_bytes(&link, OT_LK_TRACE_ID, zeros, 16);
	pb_bytes(&link, OT_LK_SPAN_ID, zeros, 8);
	pb_message(b, OT_D_LINK, &link);
	free(link.p);
	for (i = 0; i < ot->strings.n; i++) {
		k = idtab_key(&ot->strings, i, &len);
		pb_bytes(b, OT_D_STRING, k, len);
	}
	for (i = 0; i < ot->attrs.n; i++) {
		k = idtab_key(&ot->attrs, i, &len);
		pb_bytes(b, OT_D_ATTRIBUTE, k, len);
	}
	for (i = 0; i < ot->stacks.n; i++) {
		k = idtab_key(&ot->stacks, i, &len);
		pb_bytes(b, OT_D_STACK, k, len);
	}
}

int
otlp_encode(struct otlp *ot, uint8_t **out, size_t *len)
{
	struct pb_buf		 b = { 0 }, rp = { 0 }, sp = { 0 }, pr = { 0 };
	struct pb_buf		 s = { 0 }, sub = { 0 }, dict = { 0 };
	struct otlp_obs		*sorted = NULL;
	size_t			*first = NULL, *at = NULL, i, r, pi;
	int			 rv = -1;

	/* the observations by sample (a counting sort), each sample's in
	 * the order they came */
	if ((first = calloc(ot->samples.n + 1, sizeof(*first))) == NULL ||
	    (at = calloc(ot->samples.n + 1, sizeof(*at))) == NULL ||
	    (ot->nobs > 0 && (sorted = reallocarray(NULL, ot->nobs,
	    sizeof(*sorted))) == NULL))
		goto out;
	for (i = 0; i < ot->nobs; i++)
		first[ot->obs[i].sample + 1]++;
	for (i = 0; i < ot->samples.n; i++)
		first[i + 1] += first[i];
	memcpy(at, first, (ot->samples.n + 1) * sizeof(*at));
	for (i = 0; i < ot->nobs; i++)
		sorted[at[ot->obs[i].sample]++] = ot->obs[i];
	for (r = 0; r < ot->nres; r++) {
		pb_bytes(&rp, OT_RP_RESOURCE, ot->res[r].attrs.p,
		    ot->res[r].attrs.len);
		pb_bytes(&sub, OT_IS_NAME, ot->scope, strlen(ot->scope));
		pb_bytes(&sub, OT_IS_VERSION, ot->version,
		    strlen(ot->version));
		pb_message(&sp, OT_SP_SCOPE, &sub);
		for (pi = 0; pi < ot->nprof; pi++) {
			if (ot->prof[pi].resource != r)
				continue;
			otlp_profile_msg(ot, &pr, (uint32_t)pi, first, sorted,
			    &s, &sub);
			pb_message(&sp, OT_SP_PROFILES, &pr);
		}
		pb_message(&rp, OT_RP_SCOPE_PROFILES, &sp);
		pb_message(&b, OT_RESOURCE_PROFILES, &rp);
	}
	otlp_dictionary(ot, &dict);
	pb_message(&b, OT_DICTIONARY, &dict);
	if (b.failed || rp.failed || sp.failed || pr.failed || s.failed ||
	    sub.failed || dict.failed || ot->failed)
		goto out;
	*out = b.p;
	*len = b.len;
	b.p = NULL;	/* the caller owns it now */
	rv = 0;
out:
	free(b.p);
	free(rp.p);
	free(sp.p);
	free(pr.p);
	free(s.p);
	free(sub.p);
	free(dict.p);
	free(sorted);
	free(first);
	free(at);
	if (rv == -1)
		errno = ENOMEM;
	return rv;
}

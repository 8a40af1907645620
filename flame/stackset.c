/*
 * stackset: distinct strings and stacks, counted (see stackset.h). Two
 * open-addressing tables of ids, doubled at half full; strings live in
 * one growing arena, stacks in blocks that never move. The stack table
 * holds each stack's hash beside its index: a probe that misses costs no
 * visit to the stack (folding a large file is mostly these probes).
 */
#include <stdlib.h>
#include <string.h>

#include "stackset.h"

struct stackset_str {
	uint32_t	 off;		/* in the arena */
	uint32_t	 len;
	uint32_t	 hash;
	uint8_t		 kind;
	uint8_t		 bare;		/* a frame without a symbol */
};

#define STACKSET_BLOCK	(256 * 1024)

struct stackset_block {
	struct stackset_block	*next;
	size_t			 used, size;
	_Alignas(8) unsigned char data[];
};

struct stackset {
	char			*arena;
	size_t			 arena_len, arena_cap;
	struct stackset_str	*strs;
	size_t			 nstrs, strs_cap;
	uint32_t		*strtab;	/* string ids + 1; 0: empty */
	size_t			 strtab_size;	/* a power of two */
	struct stack		**stacks;
	size_t			 nstacks, stacks_cap;
	uint64_t		*stacktab;	/* hash << 32 | index + 1 */
	size_t			 stacktab_size;
	struct stackset_block	*blocks;	/* where the stacks live */
	uint64_t		 samples;
};

/* A fast hash of bytes, eight at a time. */
static uint32_t
stackset_hash(const void *p, size_t len, uint64_t seed)
{
	const unsigned char	*s = p;
	uint64_t		 h = seed ^ (len * 0x9e3779b97f4a7c15ULL), w;

	while (len >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
		s += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	return (uint32_t)h;
}

struct stackset *
stackset_create(void)
{
	struct stackset	*ss;

	if ((ss = calloc(1, sizeof(*ss))) == NULL)
		return NULL;
	ss->strtab_size = 1024;
	ss->stacktab_size = 1024;
	if ((ss->strtab = calloc(ss->strtab_size, sizeof(uint32_t))) == NULL ||
	    (ss->stacktab = calloc(ss->stacktab_size, sizeof(uint64_t))) ==
	    NULL) {
		stackset_free(ss);
		return NULL;
	}
	return ss;
}

void
stackset_free(struct stackset *ss)
{
	struct stackset_block	*b;

	if (ss == NULL)
		return;
	while ((b = ss->blocks) != NULL) {
		ss->blocks = b->next;
		free(b);
	}
	free(ss->stacks);
	free(ss->stacktab);
	free(ss->strtab);
	free(ss->strs);
	free(ss->arena);
	free(ss);
}

/* Doubles an id table; slot(id) gives each id's hash. */
static int
stackset_grow(uint32_t **tab, size_t *size, const uint32_t *hashes,
    size_t stride, size_t n)
{
	uint32_t	*t;
	size_t		 i, j, mask = *size * 2 - 1;

	if ((t = calloc(*size * 2, sizeof(uint32_t))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		j = *(const uint32_t *)((const char *)hashes + i * stride) &
		    mask;
		while (t[j] != 0)
			j = (j + 1) & mask;
		t[j] = (uint32_t)i + 1;
	}
	free(*tab);
	*tab = t;
	*size *= 2;
	return 0;
}

uint32_t
stackset_intern(struct stackset *ss, const char *s, size_t len,
    enum stack_kind kind)
{
	struct stackset_str	*e, *tmp;
	uint32_t		 h = stackset_hash(s, len, (uint64_t)kind);
	size_t			 j, mask, cap;
	char			*a;

	if ((ss->nstrs + 1) * 2 > ss->strtab_size &&
	    stackset_grow(&ss->strtab, &ss->strtab_size, &ss->strs[0].hash,
	    sizeof(ss->strs[0]), ss->nstrs) == -1)
		return STACKSET_NONE;
	mask = ss->strtab_size - 1;

	for (j = h & mask; ss->strtab[j] != 0; j = (j + 1) & mask) {
		e = &ss->strs[ss->strtab[j] - 1];
		if (e->hash == h && e->len == len && e->kind == (uint8_t)kind &&
		    memcmp(ss->arena + e->off, s, len) == 0)
			return ss->strtab[j] - 1;
	}
	if (len >= UINT32_MAX / 2 || ss->nstrs >= STACKSET_NONE - 1)
		return STACKSET_NONE;
	if (ss->arena_len + len + 1 > ss->arena_cap) {
		cap = ss->arena_cap ? ss->arena_cap * 2 : 65536;
		while (cap < ss->arena_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX || (a = realloc(ss->arena, cap)) == NULL)
			return STACKSET_NONE;
		ss->arena = a;
		ss->arena_cap = cap;
	}
	if (ss->nstrs == ss->strs_cap) {
		cap = ss->strs_cap ? ss->strs_cap * 2 : 1024;
		if ((tmp = realloc(ss->strs, cap * sizeof(*tmp))) == NULL)
			return STACKSET_NONE;
		ss->strs = tmp;
		ss->strs_cap = cap;
	}
	e = &ss->strs[ss->nstrs];
	e->off = (uint32_t)ss->arena_len;
	e->len = (uint32_t)len;
	e->hash = h;
	e->kind = (uint8_t)kind;
	/* "[unknown]", "[libfoo.so]": what perf and fold name a frame
	 * whose symbol is not known */
	e->bare = kind != STACK_LABEL && len >= 2 && s[0] == '[' &&
	    s[len - 1] == ']';
	memcpy(ss->arena + ss->arena_len, s, len);
	ss->arena[ss->arena_len + len] = '\0';
	ss->arena_len += len + 1;
	ss->strtab[j] = (uint32_t)ss->nstrs + 1;
	ss->nstrs++;
	return (uint32_t)ss->nstrs - 1;
}

const char *
stackset_str(const struct stackset *ss, uint32_t id)
{
	if (id >= ss->nstrs)
		return "";
	return ss->arena + ss->strs[id].off;
}

enum stack_kind
stackset_kind(const struct stackset *ss, uint32_t id)
{
	return id < ss->nstrs ? (enum stack_kind)ss->strs[id].kind :
	    STACK_USER;
}

size_t
stackset_nstr(const struct stackset *ss)
{
	return ss->nstrs;
}

static uint32_t
stackset_stack_hash(const struct stack_key *k, const uint32_t *frames,
    uint32_t n)
{
	return stackset_hash(frames, n * sizeof(uint32_t),
	    stackset_hash(k, sizeof(*k), 7));
}

/* Doubles the stack table. */
static int
stackset_grow_stacks(struct stackset *ss)
{
	uint64_t	*t;
	size_t		 i, j, mask = ss->stacktab_size * 2 - 1;

	if ((t = calloc(ss->stacktab_size * 2, sizeof(uint64_t))) == NULL)
		return -1;
	for (i = 0; i < ss->stacktab_size; i++) {
		if (ss->stacktab[i] == 0)
			continue;
		for (j = (ss->stacktab[i] >> 32) & mask; t[j] != 0;
		    j = (j + 1) & mask)
			;
		t[j] = ss->stacktab[i];
	}
	free(ss->stacktab);
	ss->stacktab = t;
	ss->stacktab_size *= 2;
	return 0;
}

/* Room for a stack of n frames, 8-aligned, in the blocks. */
static struct stack *
stackset_alloc(struct stackset *ss, uint32_t n)
{
	struct stackset_block	*b = ss->blocks;
	size_t			 need = (sizeof(struct stack) +
	    n * sizeof(uint32_t) + 7) & ~(size_t)7, size;
	void			*p;

	if (b == NULL || b->size - b->used < need) {
		size = need > STACKSET_BLOCK ? need : STACKSET_BLOCK;
		if ((b = malloc(sizeof(*b) + size)) == NULL)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = ss->blocks;
		ss->blocks = b;
	}
	p = b->data + b->used;
	b->used += need;
	return p;
}

/*
 * A run of one frame without a symbol as one frame. A binary built
 * without frame pointers gives the kernel's unwinder garbage to follow:
 * chains of up to 127 [unknown] frames that make a graph 2,000 pixels
 * tall and tell nothing a single [unknown] does not. A symbol repeated
 * (recursion) is kept. Here, where every reader's stacks come in (perf
 * script's, a companion's, a merge's, a native reader's), so that none
 * need do it. frames itself, or buf (STACKSET_MAX_FRAMES) with n changed.
 */
static const uint32_t *
stackset_squeeze(const struct stackset *ss, const uint32_t *frames,
    uint32_t *n, uint32_t *buf)
{
	uint32_t	 i, k;

	for (i = 1; i < *n; i++)
		if (frames[i] == frames[i - 1] && frames[i] < ss->nstrs &&
		    ss->strs[frames[i]].bare)
			break;
	if (i >= *n || *n > STACKSET_MAX_FRAMES)
		return frames;
	memcpy(buf, frames, i * sizeof(*buf));
	for (k = i; i < *n; i++)
		if (frames[i] != buf[k - 1] || frames[i] >= ss->nstrs ||
		    !ss->strs[frames[i]].bare)
			buf[k++] = frames[i];
	*n = k;
	return buf;
}

int
stackset_add(struct stackset *ss, const struct stack_key *k,
    const uint32_t *frames_in, uint32_t n, uint64_t count)
{
	struct stack	*st, **tmp;
	uint32_t	 buf[STACKSET_MAX_FRAMES];
	const uint32_t	*frames = stackset_squeeze(ss, frames_in, &n, buf);
	uint32_t	 h = stackset_stack_hash(k, frames, n);
	size_t		 j, mask, cap;

	/* at most half full: probes stay short, and one is always empty */
	if ((ss->nstacks + 1) * 2 > ss->stacktab_size &&
	    stackset_grow_stacks(ss) == -1)
		return -1;
	mask = ss->stacktab_size - 1;
	for (j = h & mask; ss->stacktab[j] != 0; j = (j + 1) & mask) {
		if ((uint32_t)(ss->stacktab[j] >> 32) != h)
			continue;
		st = ss->stacks[(uint32_t)ss->stacktab[j] - 1];
		if (st->nframes == n &&
		    memcmp(&st->key, k, sizeof(*k)) == 0 &&
		    memcmp(st->frames, frames, n * sizeof(uint32_t)) == 0) {
			st->count += count;
			ss->samples += count;
			return 0;
		}
	}
	if (ss->nstacks >= UINT32_MAX - 1)
		return -1;
	if (ss->nstacks == ss->stacks_cap) {
		cap = ss->stacks_cap ? ss->stacks_cap * 2 : 1024;
		if ((tmp = realloc(ss->stacks, cap * sizeof(*tmp))) == NULL)
			return -1;
		ss->stacks = tmp;
		ss->stacks_cap = cap;
	}
	if ((st = stackset_alloc(ss, n)) == NULL)
		return -1;
	st->count = count;
	st->hash = h;
	st->nframes = n;
	st->key = *k;
	memcpy(st->frames, frames, n * sizeof(uint32_t));
	ss->stacks[ss->nstacks] = st;
	ss->stacktab[j] = (uint64_t)h << 32 | (uint32_t)(ss->nstacks + 1);
	ss->nstacks++;
	ss->samples += count;
	return 0;
}

size_t
stackset_nstacks(const struct stackset *ss)
{
	return ss->nstacks;
}

const struct stack *
stackset_stack(const struct stackset *ss, size_t i)
{
	return ss->stacks[i];
}

uint64_t
stackset_samples(const struct stackset *ss)
{
	return ss->samples;
}

/* src's id in dst, interned on first use through map. */
static uint32_t
stackset_map(struct stackset *dst, const struct stackset *src,
    uint32_t *map, uint32_t id)
{
	const struct stackset_str	*e;

	if (id == STACKSET_NONE || id >= src->nstrs)
		return STACKSET_NONE;
	if (map[id] == STACKSET_NONE) {
		e = &src->strs[id];
		map[id] = stackset_intern(dst, src->arena + e->off, e->len,
		    (enum stack_kind)e->kind);
	}
	return map[id];
}

int
stackset_merge(struct stackset *dst, const struct stackset *src)
{
	const struct stack	*st;
	struct stack_key	 k;
	uint32_t		*map = NULL, frames[STACKSET_MAX_FRAMES];
	size_t			 i, f;
	int			 rv = -1;

	if (src->nstrs > 0) {
		if ((map = malloc(src->nstrs * sizeof(uint32_t))) == NULL)
			return -1;
		memset(map, 0xff, src->nstrs * sizeof(uint32_t));
	}
	for (i = 0; i < src->nstacks; i++) {
		st = src->stacks[i];
		k = st->key;
		k.host = stackset_map(dst, src, map, k.host);
		k.event = stackset_map(dst, src, map, k.event);
		k.comm = stackset_map(dst, src, map, k.comm);
		k.cgroup = stackset_map(dst, src, map, k.cgroup);
		for (f = 0; f < st->nframes && f < STACKSET_MAX_FRAMES; f++)
			if ((frames[f] = stackset_map(dst, src, map,
			    st->frames[f])) == STACKSET_NONE)
				goto out;
		if (stackset_add(dst, &k, frames, (uint32_t)f, st->count) == -1)
			goto out;
	}
	rv = 0;
out:
	free(map);
	return rv;
}

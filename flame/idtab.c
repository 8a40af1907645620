/*
 * idtab: byte keys to dense ids (see idtab.h).
 */
#include <stdlib.h>
#include <string.h>

#include "idtab.h"

/* A word at a time: the keys are mostly u64s (locations, samples). */
static uint64_t
idtab_hash(const uint8_t *p, size_t n)
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
idtab_grow(struct idtab *k)
{
	uint32_t	*slot;
	size_t		 nslot = k->nslot ? k->nslot * 2 : 1024, i, j;

	if ((slot = calloc(nslot, sizeof(*slot))) == NULL)
		return -1;
	for (i = 0; i < k->n; i++) {
		j = idtab_hash(k->buf + k->off[i], k->off[i + 1] - k->off[i]) &
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
int64_t
idtab_get(struct idtab *k, const void *key, size_t len, int *isnew)
{
	const uint8_t	*kb = key;
	uint8_t		*nb;
	size_t		*no, j, id, ncap;

	*isnew = 0;
	if ((k->n + 1) * 2 > k->nslot && idtab_grow(k) == -1)
		return -1;
	for (j = idtab_hash(kb, len) & (k->nslot - 1); k->slot[j] != 0;
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
int64_t
idtab_find(const struct idtab *k, const void *key, size_t len)
{
	size_t	 j, id;

	if (k->nslot == 0)
		return -1;
	for (j = idtab_hash(key, len) & (k->nslot - 1); k->slot[j] != 0;
	    j = (j + 1) & (k->nslot - 1)) {
		id = k->slot[j] - 1;
		if (k->off[id + 1] - k->off[id] == len &&
		    memcmp(k->buf + k->off[id], key, len) == 0)
			return (int64_t)id;
	}
	return -1;
}

const uint8_t *
idtab_key(const struct idtab *k, size_t id, size_t *len)
{
	*len = k->off[id + 1] - k->off[id];
	return k->buf + k->off[id];
}

void
idtab_free(struct idtab *k)
{
	free(k->buf);
	free(k->off);
	free(k->slot);
}

/*
 * idtab: byte strings interned to dense ids 0, 1, 2, ... in the order
 * they first come (open addressing over a hash), the keys kept back to
 * back. The profile encoders (pprof.c, otlp.c) intern their strings,
 * mappings, locations, stacks and samples with it, so that a table is
 * written from its keys in id order and memory grows with what is
 * distinct.
 */
#ifndef PERFSPILL_IDTAB_H
#define PERFSPILL_IDTAB_H

#include <stddef.h>
#include <stdint.h>

struct idtab {
	uint8_t		*buf;		/* the keys, back to back */
	size_t		 len, cap;
	size_t		*off;		/* key i: buf[off[i]..off[i + 1]) */
	size_t		 n, ncap;
	uint32_t	*slot;		/* id + 1; 0: empty */
	size_t		 nslot;		/* a power of two */
};

/* key's id, *isnew when it was added now; -1 without memory. A zeroed
 * struct idtab is an empty table. */
int64_t		 idtab_get(struct idtab *, const void *key, size_t len,
		    int *isnew);
/* key's id, or -1 when it has none. */
int64_t		 idtab_find(const struct idtab *, const void *key, size_t len);
/* Key id's bytes (a key of u64s, added at a multiple of 8 of the table's
 * malloc'd buffer, may be read as u64s) and length. */
const uint8_t	*idtab_key(const struct idtab *, size_t id, size_t *len);
void		 idtab_free(struct idtab *);

#endif

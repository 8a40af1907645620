/*
 * sbuf: a growable byte buffer for building perf records in memory
 * (the synthesized preamble of a trace file) before one write hands
 * them to the disk.
 */
#ifndef PERFSPILL_SBUF_H
#define PERFSPILL_SBUF_H

#include <stddef.h>
#include <stdint.h>

struct sbuf {
	uint8_t	*data;
	size_t	 len;
	size_t	 cap;
};

void	 sbuf_init(struct sbuf *);
void	 sbuf_finish(struct sbuf *);
/* Each returns a pointer to the appended bytes inside the buffer, or
 * NULL when memory runs out; the pointer is valid until the next append. */
void	*sbuf_append(struct sbuf *, const void *, size_t);
void	*sbuf_zero(struct sbuf *, size_t);
/* Steal the bytes: the caller owns and frees them; the sbuf is empty. */
uint8_t	*sbuf_take(struct sbuf *, size_t *);

#endif

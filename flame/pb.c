/*
 * pb: protobuf fields into a growing buffer (see pb.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pb.h"

void
pb_put(struct pb_buf *b, const void *p, size_t n)
{
	uint8_t	*np;
	size_t	 ncap;

	if (b->failed || n == 0)
		return;
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

void
pb_varint(struct pb_buf *b, uint64_t v)
{
	uint8_t	 out[10];
	size_t	 n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	pb_put(b, out, n);
}

size_t
pb_varint_len(uint64_t v)
{
	size_t	 n = 1;

	for (; v >= 0x80; v >>= 7)
		n++;
	return n;
}

void
pb_uint(struct pb_buf *b, unsigned int field, uint64_t v)
{
	if (v == 0)
		return;
	pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(b, v);
}

void
pb_fixed64(struct pb_buf *b, unsigned int field, uint64_t v)
{
	uint8_t	 le[8];
	size_t	 i;

	if (v == 0)
		return;
	/* little-endian on the wire, whatever the host */
	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_varint(b, (uint64_t)field << 3 | PB_FIXED64);
	pb_put(b, le, 8);
}

void
pb_bytes(struct pb_buf *b, unsigned int field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | PB_LEN);
	pb_varint(b, n);
	pb_put(b, p, n);
}

void
pb_message(struct pb_buf *b, unsigned int field, struct pb_buf *sub)
{
	if (sub->failed)
		b->failed = 1;
	pb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

void
pb_packed(struct pb_buf *b, unsigned int field, const uint64_t *v, size_t n,
    struct pb_buf *scratch)
{
	size_t	 i;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		pb_varint(scratch, v[i]);
	pb_message(b, field, scratch);
}

/*
 * sbuf: growable byte buffer (see sbuf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "perfdata/sbuf.h"

void
sbuf_init(struct sbuf *sb)
{
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

void
sbuf_finish(struct sbuf *sb)
{
	free(sb->data);
	sbuf_init(sb);
}

static int
sbuf_reserve(struct sbuf *sb, size_t n)
{
	size_t	 cap;
	uint8_t	*p;

	if (n <= sb->cap - sb->len)
		return 0;
	cap = sb->cap ? sb->cap : 4096;
	while (cap - sb->len < n) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	if ((p = realloc(sb->data, cap)) == NULL)
		return -1;
	sb->data = p;
	sb->cap = cap;
	return 0;
}

void *
sbuf_append(struct sbuf *sb, const void *src, size_t n)
{
	void	*dst;

	if (sbuf_reserve(sb, n) == -1)
		return NULL;
	dst = sb->data + sb->len;
	if (n)
		memcpy(dst, src, n);
	sb->len += n;
	return dst;
}

void *
sbuf_zero(struct sbuf *sb, size_t n)
{
	void	*dst;

	if (sbuf_reserve(sb, n) == -1)
		return NULL;
	dst = sb->data + sb->len;
	memset(dst, 0, n);
	sb->len += n;
	return dst;
}

uint8_t *
sbuf_take(struct sbuf *sb, size_t *len)
{
	uint8_t	*p = sb->data;

	*len = sb->len;
	sbuf_init(sb);
	return p;
}

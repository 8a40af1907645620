/*
 * compress-none stands for libzstd in a build without it. A compression
 * setting is refused at start with a clear error (see record.c), so
 * nothing here runs.
 */
#include <stddef.h>
#include <stdint.h>

#include "compress.h"

int
compress_available(void)
{
	return 0;
}

struct compress *
compress_create(int level)
{
	return NULL;
}

void
compress_destroy(struct compress *z)
{
}

void
compress_reset(struct compress *z)
{
}

size_t
compress_memory(int level)
{
	return 0;
}

size_t
compress_bound(size_t len)
{
	return len;
}

size_t
compress_records(struct compress *z, uint8_t *dst, size_t cap,
    const void *s1, size_t l1, const void *s2, size_t l2)
{
	return 0;
}

/*
 * decompress-none: the build without libzstd. It cannot read a
 * compressed record, so salvage keeps a -z file only up to its first
 * one (see decompress.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "perfdata/decompress.h"

struct decompress *
decompress_create(void)
{
	static char	 none;

	/* not NULL: NULL means out of memory */
	return (struct decompress *)(void *)&none;
}

void
decompress_destroy(struct decompress *z)
{
}

size_t
decompress_record(struct decompress *z, const void *src, size_t len,
    void *dst, size_t cap, const char **why)
{
	*why = "this perfspilld was built without libzstd";
	return 0;
}

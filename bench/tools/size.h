/*
 * size.h: "50M" -> 52428800, for the benchmark's stand-alone tools (each
 * is one .c file compiled on its own, so the one function lives here).
 * K, M, G are powers of 1024; 0 on a malformed size.
 */
#ifndef BENCH_TOOLS_SIZE_H
#define BENCH_TOOLS_SIZE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static inline uint64_t
tool_size(const char *s)
{
	char			*end;
	unsigned long long	 v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'G': case 'g': v <<= 10;	/* FALLTHROUGH */
	case 'M': case 'm': v <<= 10;	/* FALLTHROUGH */
	case 'K': case 'k': v <<= 10; end++;
	}
	return *end ? 0 : v;
}

#endif

/*
 * addrtab: the search that names an address, shared by the tables of
 * kernel symbols (ksyms), JIT entries (jitmap) and ELF functions
 * (symelf): each an array sorted by a start address that is its
 * elements' first member.
 */
#ifndef PERFSPILL_ADDRTAB_H
#define PERFSPILL_ADDRTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many of the n elements (stride bytes each) start at or before
 * addr: the one that may hold addr is the one before that index. */
static inline size_t
addrtab_upto(const void *base, size_t n, size_t stride, uint64_t addr)
{
	const unsigned char	*b = base;
	size_t			 lo = 0, hi = n, mid;
	uint64_t		 start;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&start, b + mid * stride, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif

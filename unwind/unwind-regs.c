/*
 * unwind-regs: a raw sample's user registers by perf's numbers (see
 * unwind-int.h). A file of its own because the front (unwind.c) calls
 * the backends and the backends read registers: here, neither calls the
 * other in a circle.
 */
#include <string.h>

#include "unwind-int.h"

/* The sampled pc: the IP register (perf's 8) of the sample, or -1. */
int
uw_sample_ip(const struct unwind_sample *s, uint64_t *ip)
{
	return uw_sample_reg(s, 8, ip);
}

int
uw_sample_reg(const struct unwind_sample *s, int perf, uint64_t *v)
{
	uint64_t	 below;

	if (s->regs == NULL || perf < 0 || perf > 63 ||
	    !(s->regs_mask & (1ULL << perf)))
		return -1;
	below = s->regs_mask & ((1ULL << perf) - 1);
	memcpy(v, s->regs + (size_t)__builtin_popcountll(below) * 8, 8);
	return 0;
}

/*
 * unwind-none: the backend without libdw (meson's choice): no sample is
 * unwound; each gives its sampled pc alone and counts as
 * UNWIND_STOP_NOCFI (see unwind-int.h).
 */
#include "unwind-int.h"

int
uw_be_init(struct unwind *uw)
{
	return 0;
}

void
uw_be_finish(struct unwind *uw)
{
}

void
uw_be_bin_free(void *arg, struct uw_bin *b)
{
}

enum unwind_stop
uw_be_sample(struct unwind *uw, const struct unwind_sample *s,
    uint64_t *ips, size_t max, size_t *n)
{
	if (max == 0 || uw_sample_ip(s, &ips[0]) == -1)
		return UNWIND_STOP_REGS;
	*n = 1;
	return UNWIND_STOP_NOCFI;
}

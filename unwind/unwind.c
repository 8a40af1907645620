/*
 * unwind: the front of unwind.h that every backend shares: the
 * unwinder's config, its address spaces (unwind-maps.c) and counts;
 * the backend (unwind-dwfl.c, or unwind-none.c without libdw) unwinds
 * the samples and keeps what it opened in uw->be.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

#define UW_DEFAULT_CACHE	(256ULL << 20)

struct unwind *
unwind_create(const struct unwind_config *cfg)
{
	struct unwind	*uw;

	if ((uw = calloc(1, sizeof(*uw))) == NULL)
		return NULL;
	if (cfg != NULL)
		uw->cfg = *cfg;
	if (uw->cfg.cache_bytes == 0)
		uw->cfg.cache_bytes = UW_DEFAULT_CACHE;
	if (uw_space_init(&uw->sp) == -1) {
		free(uw);
		return NULL;
	}
	if (uw_be_init(uw) == -1) {
		uw_space_finish(&uw->sp, NULL, NULL);
		free(uw);
		return NULL;
	}
	return uw;
}

void
unwind_destroy(struct unwind *uw)
{
	if (uw == NULL)
		return;
	uw_space_finish(&uw->sp, uw_be_bin_free, uw);
	uw_be_finish(uw);
	free(uw);
}

int
unwind_map_add(struct unwind *uw, const struct unwind_map *m)
{
	return uw_space_map(&uw->sp, m);
}

int
unwind_fork(struct unwind *uw, uint32_t ppid, uint32_t pid)
{
	return uw_space_fork(&uw->sp, ppid, pid);
}

void
unwind_exec(struct unwind *uw, uint32_t pid, uint64_t time)
{
	uw_space_exec(&uw->sp, pid, time);
}

void
unwind_exit(struct unwind *uw, uint32_t pid)
{
	uw_space_exit(&uw->sp, pid);
}

void
unwind_stats(const struct unwind *uw, struct unwind_stats *st)
{
	*st = uw->st;
	st->processes = uw->sp.nprocs;
}

const char *
unwind_stop_name(enum unwind_stop why)
{
	static const char *const names[UNWIND_STOP_COUNT] = {
		[UNWIND_STOP_END] = "end",
		[UNWIND_STOP_REGS] = "registers",
		[UNWIND_STOP_NOMAP] = "no mapping",
		[UNWIND_STOP_NOELF] = "no binary",
		[UNWIND_STOP_NOCFI] = "no cfi",
		[UNWIND_STOP_STACK] = "stack",
		[UNWIND_STOP_DEPTH] = "depth",
		[UNWIND_STOP_OTHER] = "other",
	};

	return (unsigned)why < UNWIND_STOP_COUNT ? names[why] : "?";
}

enum unwind_stop
unwind_sample(struct unwind *uw, const struct unwind_sample *s,
    uint64_t *ips, size_t max, size_t *n)
{
	enum unwind_stop	 why;

	*n = 0;
	uw->st.samples++;
	why = uw_be_sample(uw, s, ips, max, n);
	uw->st.frames += *n;
	uw->st.stops[why]++;
	return why;
}

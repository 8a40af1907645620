/*
 * rawstack: raw DWARF samples' user stacks through unwind/ (see
 * rawstack.h). The kernel part is the kernel's callchain up to its
 * PERF_CONTEXT_USER; perf record --call-graph dwarf asks for no user
 * part (exclude_callchain_user), and one that is there is dropped for
 * the unwound one, as perf report does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "rawstack.h"
#include "unwind/unwind.h"

#define RAWSTACK_MAX	PROFILE_MAX_FRAMES

struct rawstack {
	struct unwind	*uw;
	int		 verbose;
	uint64_t	 cc[RAWSTACK_MAX + 2];
	uint64_t	 ips[RAWSTACK_MAX];
};

struct rawstack *
rawstack_create(int verbose)
{
	struct unwind_config	 cfg = { .debuginfod = 1, .verbose = verbose };
	struct rawstack		*rs;

	if ((rs = calloc(1, sizeof(*rs))) == NULL)
		return NULL;
	if ((rs->uw = unwind_create(&cfg)) == NULL) {
		free(rs);
		return NULL;
	}
	rs->verbose = verbose;
	return rs;
}

void
rawstack_destroy(struct rawstack *rs)
{
	struct unwind_stats	 st;
	int			 i;

	if (rs == NULL)
		return;
	if (rs->verbose) {
		unwind_stats(rs->uw, &st);
		fprintf(stderr, "perfspill-flame: unwound %llu user stacks, "
		    "%llu frames, %llu binaries;", (unsigned long long)
		    st.samples, (unsigned long long)st.frames,
		    (unsigned long long)st.binaries);
		for (i = 0; i < UNWIND_STOP_COUNT; i++)
			if (st.stops[i] > 0)
				fprintf(stderr, " %s %llu", unwind_stop_name(
				    (enum unwind_stop)i),
				    (unsigned long long)st.stops[i]);
		fprintf(stderr, "\n");
	}
	unwind_destroy(rs->uw);
	free(rs);
}

int
rawstack_mmap(struct rawstack *rs, const struct profile_mapping *m)
{
	struct unwind_map	 um = {
		.pid = m->pid,
		.start = m->start,
		.len = m->end - m->start,
		.pgoff = m->pgoff,
		.path = m->file,
		.build_id = m->build_id,
		.build_id_len = m->build_id_len,
	};

	return unwind_map_add(rs->uw, &um);
}

int
rawstack_fork(struct rawstack *rs, uint32_t ppid, uint32_t pid)
{
	return unwind_fork(rs->uw, ppid, pid);
}

void
rawstack_exec(struct rawstack *rs, uint32_t pid)
{
	/* perfread gives the records in time order: every mapping goes */
	unwind_exec(rs->uw, pid, 0);
}

int
rawstack_has(const struct perfcheck_sample *s)
{
	return s->regs != NULL && s->stack != NULL;
}

const uint64_t *
rawstack_join(struct rawstack *rs, const struct perfcheck_sample *s,
    int kernel, uint64_t *nr)
{
	struct unwind_sample	 us = {
		.pid = s->pid,
		.tid = s->tid,
		.abi = s->abi,
		.regs_mask = s->regs_mask,
		.regs = s->regs,
		.stack = s->stack,
		.stack_size = s->stack_size,
	};
	uint64_t		 a, i, n = 0;
	size_t			 nu = 0, room;

	if (s->callchain == NULL && kernel) {
		rs->cc[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
		rs->cc[n++] = s->ip;
	}
	for (i = 0; s->callchain != NULL && i < s->nr && n < RAWSTACK_MAX;
	    i++) {
		memcpy(&a, s->callchain + i * 8, 8);
		if (a == (uint64_t)PERF_CONTEXT_USER)
			break;
		rs->cc[n++] = a;
	}
	room = RAWSTACK_MAX - n;
	if (room > 0)
		unwind_sample(rs->uw, &us, rs->ips, room, &nu);
	if (nu > 0) {
		rs->cc[n++] = (uint64_t)PERF_CONTEXT_USER;
		memcpy(rs->cc + n, rs->ips, nu * sizeof(*rs->ips));
		n += nu;
	}
	*nr = n;
	return rs->cc;
}

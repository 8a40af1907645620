/*
 * rawstack: the user stacks of raw DWARF samples (REGS_USER and
 * STACK_USER, as `perf record --call-graph dwarf` writes them), unwound
 * with unwind/ and joined to the kernel part of the sample's callchain,
 * so that perfread hands every output one callchain, as if the kernel
 * had walked the whole stack. perfread feeds it the file's mappings,
 * forks and execs in time order, and asks it for each raw sample.
 */
#ifndef PERFSPILL_RAWSTACK_H
#define PERFSPILL_RAWSTACK_H

#include <stdint.h>

#include "perfdata/perfcheck.h"
#include "profile.h"

struct rawstack;

/* NULL without memory. verbose: the binaries used and, at destroy, the
 * counts of the stacks unwound and why they stopped, on stderr. */
struct rawstack	*rawstack_create(int verbose);
void		 rawstack_destroy(struct rawstack *);
/* A user mapping of m->pid (the kernel's are not given). 0/-1. */
int		 rawstack_mmap(struct rawstack *, const struct profile_mapping *);
int		 rawstack_fork(struct rawstack *, uint32_t ppid, uint32_t pid);
void		 rawstack_exec(struct rawstack *, uint32_t pid);
/* Does s carry a user stack to unwind? */
int		 rawstack_has(const struct perfcheck_sample *);
/* s's callchain in the kernel's layout (context markers, leaf first):
 * its kernel part (the sampled ip when it has no callchain and was in
 * the kernel), then PERF_CONTEXT_USER and the unwound user frames. The
 * entries live until the next call; *nr is how many. */
const uint64_t	*rawstack_join(struct rawstack *,
		    const struct perfcheck_sample *, int kernel, uint64_t *nr);

#endif

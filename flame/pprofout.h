/*
 * pprofout: the trace files a run picked as a pprof profile (pprof.h).
 * Each file is read again (perfread, symbolize, the JIT maps copied
 * beside it), for what folded stacks and their companions do not keep:
 * every frame's address and mapping (file, build-id, offset), and each
 * sample's labels host, comm, pid, cgroup and event. The filters and the
 * time range keep the samples the folded output keeps, and a frame is
 * named as it names it, so that the two give the same shares.
 */
#ifndef PERFSPILL_PPROFOUT_H
#define PERFSPILL_PPROFOUT_H

#include <stdint.h>

#include "opts.h"
#include "outread.h"
#include "pick.h"

/* Writes the profile of l's files that cover marks (their samples in
 * o's range, of host only when it is not NULL) to path ("-": stdout);
 * 0, or -1 with a message printed. A file that cannot be read is named
 * and left out, as the graph leaves it out. */
int	pprofout_write(const struct pick_list *l, const enum pick_cover *cover,
	    const struct opts *o, const char *host, const char *path,
	    struct outread_stats *);

#endif

/*
 * target finds the tasks a session records with perf record's -p, -t and
 * -u (config pids, tids, user), as the thread ids perf_event_open takes:
 * every thread of each process, each thread named, every thread of each
 * process of the user. Read from /proc once at the start; what these
 * tasks start later is followed by attr.inherit (evsel.c). Called on the
 * loop's thread at a start.
 */
#ifndef PERFSPILL_TARGET_H
#define PERFSPILL_TARGET_H

#include <stddef.h>

#include "config.h"

/* At most this many threads in one session's targets: each costs an fd
 * per event and CPU. */
#define TARGET_MAX_TIDS	4096

/*
 * The thread ids of cfg's pids, tids and user under proc ("/proc", or a
 * test's tree) into a new array *out of *n, without repeats. 0, or -1
 * with err set (no such process or user, no task left, too many).
 */
int	target_tids(const struct config *cfg, const char *proc, int **out,
	    size_t *n, char *err, size_t len);

#endif

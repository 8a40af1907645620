/*
 * cpuring opens the perf events of one CPU and their one ring. Every
 * event (and, when a cgroup filter is set, every event once per cgroup)
 * is opened on the CPU; the first fd owns the ring and the others are
 * redirected into it. record.c opens every online CPU this way at start
 * and a CPU that comes online while recording (CPU hotplug).
 *
 * Threads: the loop opens, enables and closes a CPU's events (under the
 * recording's lock, while the drain thread does not watch the ring);
 * the slot and list functions keep no state, and any thread calls
 * them.
 */
#ifndef PERFSPILL_CPURING_H
#define PERFSPILL_CPURING_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "evsel.h"
#include "ring.h"

/*
 * What to open. evs[0] is the recording's tracking-only event (record.c):
 * slot 0, the fd that owns the ring. Without cgroups each event is one
 * fd, system-wide. With cgroups (perf record -G) the tracking event is
 * still opened system-wide, so that the COMM/MMAP/FORK of every task
 * arrive (a task may join a recorded cgroup after it exec'd), and every
 * other event is opened once per cgroup with PERF_FLAG_PID_CGROUP. With
 * thread targets the same, once per thread. A group's members (evsel's
 * leader_off) name their leader's fd of the same CPU and target.
 */
struct cpuring_spec {
	struct evsel	*evs;		/* precise_ip lowered where refused */
	size_t		 nr_evs;
	const int	*cgfds;		/* cgroup directories, or NULL */
	size_t		 nr_cg;
	size_t		 pages;		/* data pages of the ring */
	/* cgfds holds thread ids (perf record -p, -t, -u): each event is
	 * opened once per thread, and a thread gone since is left out */
	int		 tids;
};

/* fds (and ids) a CPU holds: the slots of the spec. */
size_t	cpuring_nr_fds(const struct cpuring_spec *);
/* The event a slot belongs to. Slots of one event are consecutive. */
size_t	cpuring_slot_event(const struct cpuring_spec *, size_t slot);
/* The slot of event ev for target t (the cgroup or thread index). */
size_t	cpuring_slot(const struct cpuring_spec *, size_t ev, size_t t);

/*
 * Open every slot on cpu, disabled, into fds[] and their kernel ids into
 * ids[] (both cpuring_nr_fds long), and map the ring. 0, or -1 with err
 * filled and nothing left open.
 */
int	cpuring_open(const struct cpuring_spec *, int cpu, int *fds,
	    uint64_t *ids, struct ring *, struct config_error *err);
/* Enable (on 1) or disable every fd; disabling goes from the last. */
void	cpuring_enable(const int *fds, size_t n, int on);
/* The largest CPU number a list may name: far above any machine, a bound
 * on what a corrupt list can make us allocate. */
#define CPURING_CPU_MAX	65535

/* Parse a sysfs CPU list ("0-3,6,8-9\n") into a new array. 0, or -1
 * with errno (EINVAL: malformed or empty). */
int	cpuring_parse_list(const char *line, int **out, size_t *nr);
/* The same, read from a file such as /sys/devices/system/cpu/online. */
int	cpuring_read_list(const char *path, int **out, size_t *nr);
/* How many CPUs may ever be online (sysfs "possible"), 0 if unknown. */
size_t	cpuring_possible(void);

/* Unmap the ring and close every fd (-1 entries are skipped). */
void	cpuring_close(int *fds, size_t n, struct ring *);

#endif

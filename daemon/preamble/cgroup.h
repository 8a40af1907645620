/*
 * cgroup reads the cgroup2 hierarchy as perf sees it: where it is
 * mounted, the id perf uses for a cgroup (the directory's file handle,
 * which is its inode number, as PERF_SAMPLE_CGROUP reports it), and the
 * cgroup directories a filtered recording opens (perf record -G). It
 * also reads the memory limit of the daemon's own cgroup, which a start
 * must fit in.
 *
 * Threads: nothing here keeps state. The loop calls these functions at a
 * start; a preamble's cgroup ids are read on the rotation's worker
 * thread.
 */
#ifndef PERFSPILL_CGROUP_H
#define PERFSPILL_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* The cgroup2 mount point from /proc/self/mountinfo into buf. 0, or -1
 * with errno (ENOENT: no cgroup2 mounted). */
int	cgroup_mount(char *buf, size_t len);

/* The id of the cgroup at path (an absolute directory). 0 or -1. */
int	cgroup_id(const char *path, uint64_t *id);

/* Open the cgroup rel (below mount) for perf_event_open's pid argument.
 * The fd, or -1 with err filled ("no such cgroup"). */
int	cgroup_open(const char *mount, const char *rel, char *err, size_t len);

/*
 * The memory limit the daemon runs under: the lowest memory.max (cgroup2)
 * or memory.limit_in_bytes (the v1 memory controller, where it is
 * mounted) of its cgroup and every ancestor, as the kernel enforces
 * them. 1 with *limit and where (the file that sets it) filled; 0 when
 * no limit is set or no memory cgroup is found.
 */
int	cgroup_memory_limit(uint64_t *limit, char *where, size_t len);

#endif

/*
 * jitnames: the JIT perf maps of a directory (/tmp) by name, perf-PID.map,
 * for jitcopy (jitcopy.h). It owns the set of their pids, known from an
 * inotify watch on the directory kept from one readdir on (a readdir of
 * /tmp, which a compile load fills with its temporary files, took 0.4 ms
 * a second here, and 67 disk reads from a cold cache); the directory is
 * read each time where the watch cannot be had or holds too many names,
 * and once again when its events were lost.
 *
 * It also answers the loop's question each tick: must the file worker
 * scan the maps' processes now? A scan is what remembers who runs a
 * process with a map, for after it exits; it is due while a map's
 * process may be alive. The loop answers from the watch's events and
 * one stat of /proc/PID a map: it never reads the directory. So an idle
 * machine (no map, or only those of exited processes) costs the worker
 * no wakeup: the scans that saw an exited process alive keep who ran
 * it, and a process that takes its pid has a /proc/PID again.
 *
 * The set is shared by the loop (its look) and the file worker (the
 * scans) under the set's lock; the worker alone reads the directory,
 * and the loop never waits for it: a look that finds the lock taken
 * (the worker is scanning) asks for nothing.
 */
#ifndef PERFSPILL_JITNAMES_H
#define PERFSPILL_JITNAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* map names the inotify watch keeps; past it, a readdir each scan */
#define JITNAMES_MAX		16384
/* map names the loop's look checks (a stat of /proc/PID each); past
 * it, a scan is due at each look, as without a watch */
#define JITNAMES_LOOK_MAX	64

struct jitnames;

/* Called in the loop. */
/* The names of the directory dirfd (dir: its path, for the watch);
 * dirfd stays the caller's and must outlive the set. Without inotify
 * the directory is read at each scan. NULL (logged) without memory. */
struct jitnames	*jitnames_create(int dirfd, const char *dir);
void		 jitnames_free(struct jitnames *);
/* Is a scan of the maps' processes due? 1 when a map's pid has a
 * /proc/PID, or the set is not known here (a directory read at each
 * scan or to read again, more names than JITNAMES_LOOK_MAX); 0 when
 * not, or when the worker holds the set (it scans now). Reads the
 * watch's events; never reads the directory. */
int		 jitnames_due(struct jitnames *);

/* Called on the file worker. */
/* The pids of the map names in the directory now, ascending, into
 * *pids (malloc'ed, the caller frees it; NULL when there are none):
 * how many, or -1 when the directory cannot be read. */
ssize_t		 jitnames_list(struct jitnames *, uint32_t **pids);

/* Called on any thread (pure). */
/* "perf-PID.map" of name, PID decimal without leading zeros: its pid,
 * or 0. */
uint32_t	 jitnames_pid_of(const char *name);

#endif

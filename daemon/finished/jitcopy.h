/*
 * jitcopy: the JIT symbols of a finished file, copied beside it. A JIT
 * runtime (Java with perf maps, node --perf-basic-prof, LuaJIT) names its
 * generated code only in /tmp/perf-PID.map, a file that never leaves the
 * host and outlives its process only until /tmp is cleaned. When a file
 * finishes, the maps of the processes with samples in it are copied into
 * NAME.data.perf-maps.tar (ustar: `tar -x -C /tmp` gives perf report on
 * another host what it reads on this one), listed in the manifest,
 * removed with the file by retention. perfspill-flame reads them.
 *
 * The daemon reads /tmp as root, so a map is taken only when it cannot be
 * a door to another file: opened beneath /tmp by name without following
 * a link, a regular file with one link, owned by the user the process
 * ran as, and bounded in size and count. A process that has exited is
 * known by the user a scan of /tmp saw it run as while its map was
 * there; one never seen alive is skipped. The scans run on the file
 * worker while a recording runs, each second while a map's pid is
 * alive: the loop's look at each recording tick (jitcopy_look) asks
 * for one only then, from the map names jitnames.h keeps, so that an
 * idle machine costs the worker no wakeup (it woke each second for
 * nothing). A process gone since the last scan is known by that scan;
 * one gone before any scan saw it (it lived less than a second) is
 * not, as before. A daemon that does not record does not scan: no file
 * of it can have samples of a process it did not see.
 *
 * A pid is not a process: once one exits, another may get its pid and
 * write a map for it (issue 40). So the process a map is taken for is
 * the one with the pid and its start time (/proc/PID/stat, field 22),
 * and it must have started before the pid's first sample in the file;
 * the map must be owned by the user that process ran as. Its start time
 * is on the boot clock in ticks (10 ms): a process started less than a
 * tick after the pid's first sample is not told apart from the sampled
 * one. A pid whose process runs again under another start time than
 * the scans saw gets no map (the map may be the sampled one's, but the
 * daemon cannot tell).
 *
 * A scan counts only what can be a process's map: a name above
 * pid_max or of a pid neither alive nor seen alive is skipped before
 * the count of JITCOPY_MAX_SEEN; a scan that stops short says so in the
 * log, at most once a minute.
 *
 * Everything here that reads /tmp or a finished file runs on the file
 * worker's thread (fileworker.h): a large file finishing with maps
 * present took the loop for seconds (issue 40). The loop queues a
 * finished file and is called back when its copy is done; the files are
 * done in the order they came.
 */
#ifndef PERFSPILL_JITCOPY_H
#define PERFSPILL_JITCOPY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "fileworker.h"
#include "manifest.h"

#define JITCOPY_SUFFIX		MANIFEST_JITMAPS_SUFFIX
#define JITCOPY_MAX_MAPS		64		/* processes per file */
#define JITCOPY_MAX_BYTES	(64u << 20)	/* one map */
#define JITCOPY_MAX_TOTAL	(256u << 20)	/* one file's companion */

struct jitcopy;

/* What jitcopy put beside a file. */
struct jitcopy_result {
	uint32_t	 pids[JITCOPY_MAX_MAPS];	/* whose maps, ascending */
	size_t		 n;			/* 0: no companion */
	uint64_t	 bytes;
};

/* Called in the loop when a file's copy is done: rc 0, or -1 (logged:
 * no companion then); name is the file's. */
typedef void	(*jitcopy_done_fn)(void *arg, const char *name,
		    const struct jitcopy_result *, int rc);

/* Called in the loop. */
/* Watches dir (NULL: /tmp, or the test hook PERFSPILL_TEST_JITMAP_DIR)
 * for perf maps, scanned on the worker fw;
 * NULL (logged) when fw is NULL, the directory cannot be opened or
 * without memory. The test hook PERFSPILL_TEST_JITCOPY_HOLD=PATH (read
 * here) holds each copy after its scan, before the file is read: the
 * worker creates PATH and waits until it is removed. */
struct jitcopy	*jitcopy_create(struct event_base *, struct fileworker *fw,
		    const char *dir);
/* After fileworker_free(fw): the worker no longer scans or copies.
 * Accepts NULL. */
void		 jitcopy_free(struct jitcopy *);
/* A recording's tick (and its start); the next comes in next_ms
 * (drain_ms): queues a scan on the worker when a map's process may be
 * alive (jitnames_due), unless one is queued; the recordings' ticks
 * together look at most once a second, and a timer of base looks each
 * second until a tick slower than that comes. Cheap: it reads the
 * watch's events and stats /proc/PID of a few maps, never /tmp.
 * Accepts NULL. */
void		 jitcopy_look(struct jitcopy *, uint64_t next_ms);
/* Queues the finished file name of dirfd: its maps are copied into
 * name's companion (written whole, then renamed) on the worker, and
 * done(arg) is called in the loop after it, in the order the files came
 * (fileworker_holds(fw, name) holds it meanwhile). The file itself is
 * only read. 0, or -1 without memory. */
int		 jitcopy_submit(struct jitcopy *, int dirfd, const char *name,
		    jitcopy_done_fn done, void *arg);

/* What a process's start time may lie past its pid's first sample and
 * still be the sampled process: the error of the clocks' offset (a few
 * microseconds measured) and their drift since the file was recorded. */
#define JITCOPY_CLOCK_SLACK	2000000		/* ns */

/* Called on any thread (pure). */
/* Field 22 of a /proc/PID/stat text, the start time in clock ticks
 * after boot (the comm, field 2, may hold spaces and parentheses). 0,
 * or -1 when the text is not one. */
int		 jitcopy_stat_start(const char *stat, uint64_t *start);
/* Did a process that started start ticks (hz a second) after boot start
 * before a sample at first (perf clock, ns; off: perf clock minus boot
 * clock), within JITCOPY_CLOCK_SLACK? 0 when not, or not known (first 0,
 * values past the clocks' range). */
int		 jitcopy_started_before(uint64_t start, long hz, int64_t off,
		    uint64_t first);
/* The ustar header of a member name of size bytes into hdr[512]. */
void		 jitcopy_tar_header(uint8_t *hdr, const char *name,
		    uint64_t size, unsigned int uid, unsigned int gid,
		    int64_t mtime);

#endif

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
 * known by the user a scan of /tmp (each second, a readdir) saw it run
 * as while its map was there; one never seen alive is skipped.
 */
#ifndef PERFSPILL_JITCOPY_H
#define PERFSPILL_JITCOPY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "manifest.h"

#define JITCOPY_SUFFIX		MANIFEST_JITMAPS_SUFFIX
#define JITCOPY_MAX_MAPS		64		/* processes per file */
#define JITCOPY_MAX_BYTES	(64u << 20)	/* one map */
#define JITCOPY_MAX_TOTAL	(256u << 20)	/* one file's companion */

struct jitcopy;

/* What jitcopy_file put beside a file. */
struct jitcopy_result {
	uint32_t	 pids[JITCOPY_MAX_MAPS];	/* whose maps, ascending */
	size_t		 n;			/* 0: no companion */
	uint64_t	 bytes;
};

/* Watches dir (NULL: /tmp) for perf maps on base; NULL (logged) when the
 * directory cannot be opened or without memory. */
struct jitcopy	*jitcopy_create(struct event_base *, const char *dir);
void		 jitcopy_free(struct jitcopy *);
/* Copies the maps of the processes with samples in the finished file
 * name of dirfd into name's companion (written whole, then renamed);
 * nothing when no map is there. 0, or -1 with errno (logged): no
 * companion then. The file itself is only read. */
int		 jitcopy_file(struct jitcopy *, int dirfd, const char *name,
		    struct jitcopy_result *);
/* "perf-PID.map" of name, PID decimal without leading zeros: its pid,
 * or 0. */
uint32_t	 jitcopy_pid_of(const char *name);
/* The ustar header of a member name of size bytes into hdr[512]. */
void		 jitcopy_tar_header(uint8_t *hdr, const char *name,
		    uint64_t size, unsigned int uid, unsigned int gid,
		    int64_t mtime);

#endif

/*
 * companion: NAME.data.folded beside a finished NAME.data, the file's
 * whole folded profile, kept so that perf reads each file once. Made on
 * first use (or by an on_finish program), reused while the data file has
 * the size and mtime it was made from, and removed with the data file by
 * the daemon's retention (daemon/finished/manifest.c names it).
 *
 * Text, one record a line: a header of facts, the strings once each
 * ("s ID KIND TEXT"), then the stacks as ids ("c COUNT HOST EVENT COMM
 * CGROUP PID FRAME..."), root first. A tenth of the size of the data
 * file or less for a day-long recording, and read without perf.
 */
#ifndef PERFSPILL_COMPANION_H
#define PERFSPILL_COMPANION_H

#include <stdint.h>

#include "perfdata/beside.h"
#include "stackset.h"

#define COMPANION_SUFFIX	BESIDE_FOLDED_SUFFIX

/* What the companion says of its data file. */
struct companion_facts {
	uint64_t	 src_size;	/* the data file it was made from */
	int64_t		 src_mtime;	/* ns since the epoch */
	uint64_t	 src_head;	/* perfread's head_hash of it */
	uint64_t	 samples;
	uint64_t	 first, last;	/* perf clock ns */
	int64_t		 wall_off;	/* wall ns = perf ns + wall_off */
	int		 cgroups;	/* the file records cgroups */
	char		 host[256];
};

/* NAME.data.folded of path into buf; -1 when it does not fit. */
int	companion_name(const char *path, char *buf, size_t len);
/* Writes ss as path's companion, atomically (an unnamed file linked in
 * when whole); 0, or -1 with errno (a read-only directory: no cache). */
int	companion_write(const char *path, const struct stackset *,
	    const struct companion_facts *);
/* Reads path's companion into ss (a new one: it is left half filled on
 * an error) when it was made from the data file as it is now (size,
 * mtime, head of want; a zero head is not compared), its stacks under want's host when that is given (the
 * manifest's word); 0, or -1 with errno (ENOENT: none; ESTALE: made from
 * another file; EINVAL: not a companion; EPERM: not a regular file of
 * root's or ours, or too large). With ss NULL only the facts are read. */
int	companion_read(const char *path, struct stackset *,
	    const struct companion_facts *want, struct companion_facts *);

#endif

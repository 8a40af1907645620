/*
 * outread: what the profile outputs (pprofout, otlpout) share. The files
 * a run picked are read again (perfread, symbolize, the JIT maps beside
 * them: folded stacks and companions keep no addresses), sample by
 * sample, with the folded output's range, filters and names, so that an
 * output's stacks and counts are the folded output's. Each frame becomes
 * a location of the output's own (struct outread_ops), found once per
 * place: the file's mappings by address, the places seen in a
 * direct-mapped cache before the output's table, a name made only the
 * first time a place is seen.
 */
#ifndef PERFSPILL_OUTREAD_H
#define PERFSPILL_OUTREAD_H

#include <stddef.h>
#include <stdint.h>

#include "opts.h"
#include "pick.h"
#include "profile.h"

/* A kept sample's names as fold stores them, and its wall time. */
struct outread_names {
	const char	*host, *comm, *event;
	const char	*cgroup;	/* NULL: none recorded */
	int64_t		 wall;		/* ns since the epoch */
};

/* An output: its callbacks, each with the output's arg. An id 0 is out
 * of memory (or, from location_find, not there yet). */
struct outread_ops {
	const char	*what;		/* "pprof": "reading for pprof" */
	/* a new file (the last one's pointers are gone; NULL: nothing to
	 * do): 0, or -1 */
	int		 (*file)(void *, const struct pick_file *);
	/* a sample the range and filters keep, its frames' locations
	 * locs[0..n), the leaf first: 0, or -1 without memory */
	int		 (*sample)(void *, const struct profile_sample *,
			    const struct outread_names *, const uint64_t *locs,
			    size_t n);
	/* the output's mapping of m, known by key (unique in the run);
	 * build_id in hex, "" unknown */
	uint64_t	 (*mapping)(void *, uint64_t key,
			    const struct profile_mapping *m,
			    const char *build_id);
	uint64_t	 (*location_find)(void *, uint64_t mapping,
			    uint64_t addr);
	/* a new location, named as the folded output names the frame:
	 * names[0..n), the innermost first, the functions inlined there
	 * (--inline) and the one they are inlined into, last */
	uint64_t	 (*location)(void *, uint64_t mapping, uint64_t addr,
			    const char *const *names, size_t n, int kernel);
};

/* An output's write counts the samples it kept and the bytes it wrote
 * (gzipped ones, for pprof). */
struct outread_stats {
	uint64_t	 samples;
	uint64_t	 bytes;
};

/* Reads l's files that cover marks (of host only when it is not NULL)
 * into ops; 0, or -1 with a message printed (out of memory, or ops'
 * -1). A file that cannot be read is named and left out. */
int	outread_files(const struct pick_list *l, const enum pick_cover *cover,
	    const struct opts *o, const char *host,
	    const struct outread_ops *ops, void *arg);

/* Time that samples of this event stand for: the period of a clock. */
int	outread_clock(const char *event);

#endif

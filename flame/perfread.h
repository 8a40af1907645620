/*
 * perfread: a trace file's samples read from the file itself, with the
 * perf.data library the daemon uses too (perfdata/: perfdata for the layout,
 * perfcheck for the record checks salvage uses, decompress for zstd),
 * into the profile model (profile.h). No perf, no text: a comm or a
 * symbol name is data, never something the reader parses.
 *
 * A record that fails perfcheck stops the walk: the file is then one
 * perf could not read either, and perfread_walk says why (the caller
 * skips the file with a warning naming it).
 */
#ifndef PERFSPILL_PERFREAD_H
#define PERFSPILL_PERFREAD_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct perfread;
struct symbolize;

/* One sample; 0 to go on, -1 to stop the walk (perfread_walk returns -1
 * then, with errno as the callback left it). */
typedef int (*perfread_fn)(void *, const struct profile_sample *);

struct perfread_opts {
	uint64_t	 tmin, tmax;	/* perf clock ns: [tmin, tmax); samples
					 * outside are not passed on */
	const uint32_t	*pids;		/* only these (npids 0: all) */
	size_t		 npids;
	int		 no_symbols;	/* addresses and mappings only */
	int		 off_cpu;	/* fold_read's: the walk passes off-CPU
					 * time (offcpu.h), not samples */
	int		 verbose;	/* the unwinding's counts on stderr */
	int		 names;		/* SYMBOLIZE_* of fold_read's symbolizer */
};

/* Opens path (a finished trace file, or one being written: a .partial
 * whose header is not final yet, read up to its last whole round as
 * info's live says) and reads its head; NULL with a message in err
 * (errlen bytes) when it is not one perf reads. */
struct perfread	*perfread_open(const char *path, char *err, size_t errlen);
const struct profile_info *perfread_info(const struct perfread *);
/* Every sample of the file, in file order, to fn; sy names the frames
 * (NULL: no names). A raw DWARF sample's user stack is unwound
 * (rawstack.h) and comes with the kernel's part as one callchain. 0, or -1 with a message in err: a record that fails
 * the checks (its offset and why), out of memory, or fn's -1. */
int		 perfread_walk(struct perfread *, const struct perfread_opts *,
		    struct symbolize *, perfread_fn, void *,
		    struct profile_stats *, char *err, size_t errlen);
void		 perfread_close(struct perfread *);

#endif

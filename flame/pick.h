/*
 * pick: which trace files a graph reads. Finds the finished NAME.data
 * files given or under the directories given, learns each one's host and
 * sample times (from its manifest NAME.data.json; without one, from its
 * companion or perf's header of the file, placed on the wall clock by the
 * time in its name or its mtime), and says how much of each a time range
 * covers, and of which recording session each is.
 */
#ifndef PERFSPILL_PICK_H
#define PERFSPILL_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "opts.h"

struct pick_file {
	char		*path;
	char		 host[256];
	char		 session[64];	/* "default", or the on-demand one's */
	int		 named;		/* given itself, not found in a dir */
	uint64_t	 size;
	int64_t		 mtime;		/* ns since the epoch */
	uint64_t	 head;		/* perfread's head_hash */
	uint64_t	 samples;	/* 0: unknown, or none */
	uint64_t	 first, last;	/* perf clock ns of its samples */
	int64_t		 wall_off;	/* wall ns = perf clock ns + this */
	int		 cgroups;	/* records each sample's cgroup */
	const char	*facts;		/* "manifest", "companion", "header",
					 * "live" */
	int		 live;		/* NAME.data.partial, being written:
					 * first and last are a guess (its
					 * name's time, now) and the perf
					 * clock is placed by this host's */
};

struct pick_list {
	struct pick_file	*f;
	size_t			 n, cap;
};

enum pick_cover {
	PICK_NONE,		/* outside the range */
	PICK_PART,		/* the range cuts it */
	PICK_WHOLE,
};

/* Adds the file at path, or the *.data files below the directory at path
 * and the perfspill-*.data.partial files being written there; 0, or -1
 * with a message printed. */
int		 pick_add(struct pick_list *, const char *path);
/* A file being written that was finished (renamed) since it was found:
 * f becomes its final name, read as a finished file. 0, or -1 when it
 * has none (f unchanged). */
int		 pick_finished(struct pick_file *);
/* Learns the file's facts; 0, or -1 with a message printed. */
int		 pick_facts(struct pick_file *, int verbose);
/* How much of the file [from, to) (wall ns) covers. */
enum pick_cover	 pick_cover(const struct pick_file *, int64_t, int64_t);
/* Is the file of a session o asks for? Without --session, a file found in
 * a directory is of the default session; one named is whatever its own. */
int		 pick_session(const struct pick_file *, const struct opts *);
/* The reason a path cannot be read, when it is a permission: names the
 * directory that denies it and the group that may read it. */
void		 pick_denied(const char *path);
/* By host, then time. */
void		 pick_sort(struct pick_list *);
/* The clocks, saturating (a file's times are whatever it says, up to
 * 2^64 - 1): the wall ns of perf clock ns t, the wall_off that makes t
 * wall ns, and the perf clock ns of wall ns (0 for one before its 0). */
int64_t		 pick_wall(uint64_t t, int64_t wall_off);
int64_t		 pick_off(int64_t wall, uint64_t t);
uint64_t	 pick_perf(int64_t wall, int64_t wall_off);
void		 pick_free(struct pick_list *);

#endif

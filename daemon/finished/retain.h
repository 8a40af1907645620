/*
 * retain: the finished trace files of the output directory and the limits
 * on them: one disk budget for every session's files. Only names
 * perfspilld makes (perfspill-*.data) are counted or removed; the oldest
 * goes first, by the time in the name (perfspill-HOST[-SESSION]-TIME-SEQ:
 * names of different sessions do not sort by time); a file being written
 * (*.partial) is never touched.
 *
 * Threads: nothing here keeps state. The loop calls every function (a
 * finished file, a tick, status, salvage's list); the file worker's
 * salvage calls retain_is_trace too.
 */
#ifndef PERFSPILL_RETAIN_H
#define PERFSPILL_RETAIN_H

#include <stddef.h>
#include <stdint.h>
#include <dirent.h>

#include "record-finish.h"

struct retain_file {
	char		name[256];
	uint64_t	size;
	int		held;		/* never removed (its hand-off runs) */
	int64_t		when;		/* opened: the name's time, else mtime */
	int64_t		mtime;		/* its last write: when it was finished */
	unsigned int	seq;		/* the name's seq: ties in a second */
};

/* Nonzero when the finished file name must stay whatever the limits. */
typedef int (*retain_hold_cb)(const char *name, void *arg);

struct retain_list {
	struct retain_file	*files;		/* oldest first */
	size_t			 nr;
	uint64_t		 bytes;
};

int	retain_scan(int dirfd, struct retain_list *);
/* dirfd's entries on a descriptor of its own; NULL with errno. */
DIR	*retain_opendir(int dirfd);
void	retain_list_free(struct retain_list *);
/* The finished files of dirfd counted into *k (record_finish_ops'
 * kept); 0, or -1 when the directory cannot be read. */
int	retain_kept(int dirfd, struct record_kept *k);
/*
 * Remove the oldest finished files until at most max_files (0: no limit)
 * remain and they hold at most max_size bytes (0: no limit); then, for
 * min_free bytes free (0: no limit), only when removing can reach it and
 * never the newest file. A file hold (may be NULL) names is skipped, and
 * counts. A file's manifest (NAME.json) goes with it. Each removal is
 * logged with its reason. Returns the number removed, or -1.
 */
int	retain_enforce(int dirfd, uint64_t max_files, uint64_t max_size,
	    uint64_t min_free, retain_hold_cb hold, void *hold_arg);
/* Why retain_plan removes a file. */
enum retain_why {
	RETAIN_KEEP,
	RETAIN_MAX_FILES,
	RETAIN_MAX_SIZE,
	RETAIN_MIN_FREE,
};
/*
 * retain_enforce's decision without the disk: with avail bytes free
 * (UINT64_MAX: unknown, min_free is then not applied), set why[i] for
 * each of l's files (l->nr of them, oldest first; held ones stay) and
 * return how many go. *out_of_reach is set when free space is short of min_free and
 * removing every file but the newest would not reach it: none is then
 * removed for min_free.
 */
size_t	retain_plan(const struct retain_list *l, uint64_t avail,
	    uint64_t max_files, uint64_t max_size, uint64_t min_free,
	    enum retain_why *why, int *out_of_reach);
/* Is name one of ours, finished? */
int	retain_is_trace(const char *name);
/* The time (UTC seconds) and seq a trace file name ends with,
 * ...-YYYYMMDDTHHMMSSZ-SEQ.data. 0, or -1 when it has none. */
int	retain_name_time(const char *name, int64_t *when, unsigned int *seq);
/* Sort l's files oldest first: time, then seq, then name. */
void	retain_sort(struct retain_list *l);

#endif

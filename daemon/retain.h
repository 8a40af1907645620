/*
 * retain: the finished trace files of the output directory and the limits
 * on them. Only names perfspilld makes (perfspill-*.data) are counted or
 * removed; the oldest (names sort by time) goes first; a file being
 * written (*.partial) is never touched.
 */
#ifndef PERFSPILL_RETAIN_H
#define PERFSPILL_RETAIN_H

#include <stddef.h>
#include <stdint.h>
#include <dirent.h>

struct retain_file {
	char		name[256];
	uint64_t	size;
};

struct retain_list {
	struct retain_file	*files;		/* oldest first */
	size_t			 nr;
	uint64_t		 bytes;
};

int	retain_scan(int dirfd, struct retain_list *);
/* dirfd's entries on a descriptor of its own; NULL with errno. */
DIR	*retain_opendir(int dirfd);
void	retain_list_free(struct retain_list *);
/* Free bytes for unprivileged writers on the directory's filesystem. */
int	retain_free_bytes(int dirfd, uint64_t *);
/*
 * Remove the oldest finished files until at most max_files (0: no limit)
 * remain, they hold at most max_size bytes (0: no limit), and at least
 * min_free bytes are free. Returns the number removed, or -1.
 */
int	retain_enforce(int dirfd, uint64_t max_files, uint64_t max_size,
	    uint64_t min_free);
/* Is name one of ours, finished? */
int	retain_is_trace(const char *name);

#endif

/*
 * view: the stacks a graph shows. From every counted stack it keeps those
 * the filters let through (comm, pid, cgroup, event, host; kernel or user
 * frames only), puts the chosen roots (host, cgroup, comm, process,
 * event) above their frames, and adds up the stacks that became equal.
 * The result is a stackset without keys, in frame order for output.
 */
#ifndef PERFSPILL_VIEW_H
#define PERFSPILL_VIEW_H

#include <stdio.h>

#include "opts.h"
#include "stackset.h"

#define VIEW_MAX_NAMES	8

/* What the graph is of, for its title. */
struct view_info {
	uint64_t	 samples;
	size_t		 nhosts, nevents;	/* distinct, counted */
	const char	*hosts[VIEW_MAX_NAMES];	/* the first ones */
	const char	*events[VIEW_MAX_NAMES];
};

/* Do the filters keep a sample of these (only_host: that host's only,
 * or NULL; cgroup NULL: none recorded)? The names as fold stores them. */
int		 view_match(const struct opts *, const char *only_host,
		    const char *host, const char *comm, const char *event,
		    const char *cgroup, uint32_t pid);
/* The view of all's stacks (host: only that host's, or NULL), a new
 * stackset; NULL without memory. Strings of info point into all. */
struct stackset	*view_build(const struct stackset *all, const struct opts *,
		    const char *host, struct view_info *);
/* Remembers s in names[] when it is not there, up to VIEW_MAX_NAMES
 * of them; *n counts the rest too. */
void		 view_note(const char **names, size_t *n, const char *s);
/* The frame that stands for those a depth bound leaves out. */
#define VIEW_CUT	"[...]"

/* The view v with every stack of more than max frames (roots included)
 * drawn as its max - 2 frames nearest the root, VIEW_CUT, and its leaf: a
 * new stackset, NULL without memory. *cut: the samples of stacks cut. */
struct stackset	*view_bound(const struct stackset *v, unsigned int max,
		    uint64_t *cut);
/* The view's stacks sorted by their frames' names (the order flame
 * graphs and folded files list them in); malloc'd, NULL without memory. */
const struct stack **view_sort(const struct stackset *);
/* A stack's "frame;frame;frame" ("[no stack]" without frames). */
void		 view_write_frames(const struct stackset *, const struct stack *,
		    FILE *);
/* "frame;frame;frame COUNT" lines; 0 or -1 (errno). */
int		 view_write_folded(const struct stackset *, FILE *);

#endif

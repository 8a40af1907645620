/*
 * diff: a differential profile, two views (view.h) side by side: A, the
 * base, and B. Each stack of either is kept once per side it is on, the
 * side in its key (pid: DIFF_A or DIFF_B), so that sorted by frames
 * (view_sort) a stack's two counts are neighbours: the flame graph lays
 * out both at once (svg.c) and folded output pairs them.
 */
#ifndef PERFSPILL_DIFF_H
#define PERFSPILL_DIFF_H

#include <stdio.h>

#include "stackset.h"

#define DIFF_A	0	/* key.pid of a stack's count on the base side */
#define DIFF_B	1

/* The stacks of a and b (views: stacksets without keys) by side, a new
 * stackset; NULL without memory. */
struct stackset	*diff_build(const struct stackset *a,
		    const struct stackset *b);
/* "frame;frame COUNT_A COUNT_B" lines, as flamegraph's difffolded.pl
 * writes them; 0 or -1 (errno). */
int		 diff_write_folded(const struct stackset *, FILE *);

#endif

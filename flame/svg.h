/*
 * svg: a flame graph as one self-contained SVG file that a browser opens.
 * Each frame is a rectangle as wide as its samples, stacked on its caller
 * (or hanging below it: an icicle graph); frames too narrow to see are
 * left out, so the file's size is bounded by the width, not the stacks.
 * Its script (flame.js, built in) shows a frame and its share on hover,
 * zooms into a frame on click (and back), and highlights the frames a
 * search matches, with their share.
 */
#ifndef PERFSPILL_SVG_H
#define PERFSPILL_SVG_H

#include <stdio.h>

#include "stackset.h"

struct svg_opts {
	const char	*title;
	const char	*subtitle;	/* hosts, range, events, samples */
	unsigned int	 width;
	/* a browser draws it as wide as its window (flame.js): no --width */
	int		 fit;
	int		 inverted;	/* icicle: the root at the top */
	/* a differential graph of a diff.h profile: each frame as wide as
	 * the mean of its shares of A and B, red as its share grew, blue as
	 * it shrank, dashed when on one side only; its title gives both */
	int		 diff;
	int		 time;		/* counts are ns (--off-cpu) */
};

/* Writes the view's stacks (a stackset without keys) as a flame graph;
 * 0, or -1 (errno). */
int	svg_write(FILE *, const struct stackset *, const struct svg_opts *);
/* s with &, <, >, " escaped and any byte that is not UTF-8 or is a control
 * character written as '?': names from perf may hold either. */
void	svg_escape(FILE *, const char *, size_t);

#endif

/*
 * beside: the names of the files that perfspill keeps beside a finished
 * NAME.data in the output directory. They are part of what the daemon
 * and perfspill-flame share about a file: perfspill-flame makes and
 * reads the folded companion, the daemon copies the JIT maps, and the
 * daemon's retention removes both with NAME.
 */
#ifndef PERFSPILL_BESIDE_H
#define PERFSPILL_BESIDE_H

/* perfspill-flame's folded stacks of NAME (flame/companion.h). */
#define BESIDE_FOLDED_SUFFIX	".folded"
/* The JIT maps of NAME's processes (daemon/finished/jitcopy.h). */
#define BESIDE_JITMAPS_SUFFIX	".perf-maps.tar"

#endif

/*
 * progress: one line on the terminal that says how far a long run is
 * (the file being read, of how many, and its samples so far), rewritten
 * in place a few times a second and cleared at the end. Off when stderr
 * is not a terminal, unless asked for.
 */
#ifndef PERFSPILL_PROGRESS_H
#define PERFSPILL_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* on: 1, 0, or -1 for "when stderr is a terminal". */
void	progress_init(int on, size_t files);
/* The next file: its name, and its samples when known (0: unknown). */
void	progress_file(const char *path, uint64_t samples, const char *how);
/* Samples of the current file read so far (a fold_opts callback). */
void	progress_samples(void *, uint64_t);
void	progress_done(void);

#endif

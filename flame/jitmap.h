/*
 * jitmap: the names a JIT gives its generated code in /tmp/perf-PID.map
 * ("START SIZE NAME" a line, hex), as perf reads them. Such a file is
 * anyone's to write in /tmp: it is read only when it is a regular file
 * (no symlink, no FIFO) owned by us or root, and of a bounded size.
 */
#ifndef PERFSPILL_JITMAP_H
#define PERFSPILL_JITMAP_H

#include <stdint.h>
#include <stdio.h>

struct jitmap;

/* The map of pid, or NULL when there is none to read (err says why
 * when there is one that was refused; "" otherwise). */
struct jitmap	*jitmap_load(uint32_t pid, char *err, size_t errlen);
/* A map's lines from f (the file above, or a copy of one: jitsym.h);
 * NULL without memory. */
struct jitmap	*jitmap_read(FILE *f);
void		 jitmap_free(struct jitmap *);
const char	*jitmap_lookup(const struct jitmap *, uint64_t addr);

#endif

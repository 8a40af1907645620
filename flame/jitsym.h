/*
 * jitsym: the JIT maps the daemon copied beside a trace file
 * (NAME.data.perf-maps.tar: ustar members perf-PID.map), so that code a
 * JIT made is named wherever the file is read, not only on its host while
 * /tmp holds the live map. symbolize.c takes a process's copy before
 * /tmp's file: the copy is the map of the process the file recorded,
 * /tmp's may be a later one's of the same pid.
 */
#ifndef PERFSPILL_JITSYM_H
#define PERFSPILL_JITSYM_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap.h"

#define JITSYM_SUFFIX	".perf-maps.tar"

struct jitsym;

/* The maps beside the trace file at path; NULL with errno (ENOENT:
 * none; EINVAL: not a tar of maps; ENOMEM). */
struct jitsym	*jitsym_load(const char *path);
void		 jitsym_free(struct jitsym *);
/* pid's map, or NULL (js may be NULL). */
const struct jitmap *jitsym_map(const struct jitsym *, uint32_t pid);
/* How many processes' maps. */
size_t		 jitsym_count(const struct jitsym *);

#endif

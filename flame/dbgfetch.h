/*
 * dbgfetch: a binary or its debug file by build-id from the debuginfod
 * servers of DEBUGINFOD_URLS (libdebuginfod), for binaries of other
 * hosts. dbgfetch-debuginfod.c implements it; dbgfetch-none.c, chosen by
 * meson without libdebuginfod, finds nothing.
 */
#ifndef PERFSPILL_DBGFETCH_H
#define PERFSPILL_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>

/* A read-only fd of the executable (debug 0) or debug file (1) and its
 * path in *path (malloc'd), or -1. */
int	dbgfetch(const uint8_t *build_id, size_t len, int debug, char **path);
void	dbgfetch_end(void);

#endif

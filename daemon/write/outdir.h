/*
 * outdir: the output directory itself, apart from the files in it. One
 * daemon owns it at a time, by exclusive locks on the directory and on
 * OUTDIR_LOCK_FILE (which names the holder) held for the daemon's life
 * and taken before anything in it is touched; it
 * notices when the directory is removed under it and opens it again, lock
 * and all, once it is back.
 *
 * Threads: nothing here keeps state; the loop calls every function
 * (start-up, the tick, retention, status).
 */
#ifndef PERFSPILL_OUTDIR_H
#define PERFSPILL_OUTDIR_H

#include <stdint.h>

/* Not perfspill-*: salvage, retention and status never see it. */
#define OUTDIR_LOCK_FILE	".perfspilld.lock"

/* Create path (and its parents) when missing and open it; -1 with errno. */
int	outdir_create(const char *path);
/*
 * Lock dirfd for this process and write our pid into the lock file.
 * Returns the lock's fd (close-on-exec; closing it releases the lock), or
 * -1 with the reason logged: another perfspilld holds it (its pid named)
 * or the lock file cannot be made.
 */
int	outdir_lock(int dirfd, const char *path);
/* 1 when dirfd's directory has been removed (or renamed away from path),
 * 0 while it is there. */
int	outdir_gone(int dirfd, const char *path);
/*
 * path is a directory again: open it, lock it, and put it and its lock in
 * place of dirfd and lockfd (same numbers, so that every holder of dirfd
 * follows). 0, or -1 with errno and dirfd, lockfd unchanged.
 */
int	outdir_reopen(int dirfd, int lockfd, const char *path);
/* Free bytes for unprivileged writers on the directory's filesystem (a
 * recording's pause and retention's min_free read it). 0, or -1. */
int	outdir_free_bytes(int dirfd, uint64_t *);

#endif

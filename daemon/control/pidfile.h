/*
 * pidfile writes perfspilld's pid in a file (by default next to its
 * control socket, /run/perfspill/perfspilld.pid), so that a script can
 * end this daemon and not every perfspilld on the machine. The file is
 * locked for the daemon's life: a file nobody holds is stale and is taken
 * over.
 *
 * Threads: daemon.c calls these in main's thread, at start-up before the
 * loop runs and at teardown after it (pidfile_default keeps no state).
 */
#ifndef PERFSPILL_PIDFILE_H
#define PERFSPILL_PIDFILE_H

#include <stddef.h>

struct pidfile;

/* The default path for a socket path: its directory/perfspilld.pid. */
void	pidfile_default(const char *socket, char *buf, size_t len);
/* Write our pid to path. NULL with errno set (EEXIST: another live
 * daemon holds it, its pid in *other). */
struct pidfile	*pidfile_create(const char *path, long *other);
/* Remove the file and free; NULL is fine. */
void	pidfile_destroy(struct pidfile *);

#endif

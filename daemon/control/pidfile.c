/*
 * pidfile holds the daemon's pid file with an flock (see pidfile.h).
 * The lock, not the pid, tells a live owner from a stale file: pids are
 * reused, and a crashed daemon leaves its file behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "pidfile.h"

struct pidfile {
	char	*path;
	int	 fd;
};

void
pidfile_default(const char *socket, char *buf, size_t len)
{
	const char	*slash = strrchr(socket, '/');
	int		 dirlen = slash ? (int)(slash - socket) : 0;

	snprintf(buf, len, "%.*s/perfspilld.pid", dirlen, socket);
}

struct pidfile *
pidfile_create(const char *path, long *other)
{
	struct pidfile	*pf;
	char		 buf[32];
	struct stat	 a, b;
	ssize_t		 n;
	int		 saved, tries;

	*other = 0;
	if ((pf = calloc(1, sizeof(*pf))) == NULL)
		return NULL;
	pf->fd = -1;
	if ((pf->path = strdup(path)) == NULL)
		goto error;
	for (tries = 0;; tries++) {
		if ((pf->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW, 0644)) == -1)
			goto error;
		if (flock(pf->fd, LOCK_EX | LOCK_NB) == -1) {
			if (errno == EWOULDBLOCK) {
				n = pread(pf->fd, buf, sizeof(buf) - 1, 0);
				buf[n > 0 ? n : 0] = '\0';
				*other = strtol(buf, NULL, 10);
				errno = EEXIST;
			}
			goto error;
		}
		/* the owner may have removed the file between our open and
		 * our lock: then the lock is on a file nobody will read */
		if (fstat(pf->fd, &a) == -1)
			goto error;
		if (stat(path, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			break;
		close(pf->fd);
		pf->fd = -1;
		if (tries == 3) {
			errno = EAGAIN;
			goto error;
		}
	}
	n = pread(pf->fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		log_info("%s: taking over a stale pid file (pid %ld)", path,
		    strtol(buf, NULL, 10));
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(pf->fd, 0) == -1 || pwrite(pf->fd, buf, (size_t)n, 0) != n)
		goto error;
	return pf;

error:
	saved = errno;
	if (pf->fd != -1)
		close(pf->fd);
	free(pf->path);
	free(pf);
	errno = saved;
	return NULL;
}

void
pidfile_destroy(struct pidfile *pf)
{
	if (pf == NULL)
		return;
	/* unlink while still holding the lock: a new daemon that opened
	 * the old file meanwhile finds it gone and has its own */
	if (unlink(pf->path) == -1)
		log_warn("%s", pf->path);
	close(pf->fd);
	free(pf->path);
	free(pf);
}

/*
 * outdir: creating and locking the output directory (see outdir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "outdir.h"

int
outdir_create(const char *path)
{
	char	 p[CONFIG_PATH_LEN], *s;

	snprintf(p, sizeof(p), "%s", path);
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(p, 0750) == -1 && errno != EEXIST)
		return -1;
	return open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int
outdir_lock(int dirfd, const char *path)
{
	char	 buf[32];
	ssize_t	 n;
	int	 fd, len;

	if ((fd = openat(dirfd, OUTDIR_LOCK_FILE, O_RDWR | O_CREAT |
	    O_CLOEXEC | O_NOFOLLOW, 0640)) == -1) {
		log_warn("%s/%s", path, OUTDIR_LOCK_FILE);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK) {
			log_warn("locking %s/%s", path, OUTDIR_LOCK_FILE);
			goto error;
		}
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		log_warnx("output directory %s is in use by another perfspilld "
		    "(pid %s)", path, buf[0] ? buf : "unknown");
		errno = EWOULDBLOCK;
		goto error;
	}
	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, buf, (size_t)len, 0) != len)
		log_warn("%s/%s: writing our pid", path, OUTDIR_LOCK_FILE);
	return fd;
error:
	close(fd);
	return -1;
}

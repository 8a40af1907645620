/*
 * outdir: creating, locking and re-finding the output directory (see
 * outdir.h).
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
	int	 fd, len, e;

	if ((fd = openat(dirfd, OUTDIR_LOCK_FILE, O_RDWR | O_CREAT |
	    O_CLOEXEC | O_NOFOLLOW, 0640)) == -1) {
		log_warn("%s/%s", path, OUTDIR_LOCK_FILE);
		return -1;
	}
	/*
	 * The directory itself is locked (its fd lives as long as we write
	 * in it): the lock file alone could be removed by hand, and the next
	 * daemon would lock a new one. The file's lock is kept for daemons
	 * that know only it; the file says who holds both.
	 */
	if (flock(dirfd, LOCK_EX | LOCK_NB) == -1 ||
	    flock(fd, LOCK_EX | LOCK_NB) == -1) {
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
	e = errno;
	flock(dirfd, LOCK_UN);		/* ours if only the file's failed */
	close(fd);
	errno = e;
	return -1;
}

int
outdir_gone(int dirfd, const char *path)
{
	struct stat	 st, pst;

	if (fstat(dirfd, &st) == -1 || st.st_nlink == 0)
		return 1;
	/* renamed away: the directory lives on, but not where we write */
	if (stat(path, &pst) == -1 || pst.st_dev != st.st_dev ||
	    pst.st_ino != st.st_ino)
		return 1;
	return 0;
}

int
outdir_reopen(int dirfd, int lockfd, const char *path)
{
	int	 fd, lfd = -1, e;

	/* not created: whoever removed it may mean it (an unmount, a full
	 * disk cleared by hand); recording waits for it to come back */
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if ((lfd = outdir_lock(fd, path)) == -1)
		goto error;
	if (dup3(fd, dirfd, O_CLOEXEC) == -1 ||
	    dup3(lfd, lockfd, O_CLOEXEC) == -1)
		goto error;
	close(lfd);
	close(fd);
	return 0;
error:
	e = errno;
	if (lfd != -1)
		close(lfd);
	close(fd);
	errno = e;
	return -1;
}

/*
 * outdir: creating, locking and re-finding the output directory (see
 * write.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "write.h"

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

/*
 * The pid holding the flock on dirfd's directory, from /proc/locks
 * ("N: FLOCK ADVISORY WRITE PID MAJ:MIN:INO 0 EOF"), into buf; "" when
 * it is not found there.
 */
static void
outdir_lock_holder(int dirfd, char *buf, size_t len)
{
	struct stat	 st;
	FILE		*f;
	char		 line[256], kind[16];
	unsigned int	 maj, min;
	unsigned long	 ino;
	long		 pid, any = 0;

	buf[0] = '\0';
	if (fstat(dirfd, &st) == -1 || (f = fopen("/proc/locks", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* waiters ("N: -> FLOCK ...") hold nothing */
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%lu", kind, &pid,
		    &maj, &min, &ino) != 5 || strcmp(kind, "FLOCK") != 0 ||
		    ino != (unsigned long)st.st_ino)
			continue;
		/* the device as the superblock names it; a stacked or
		 * subvolume file system may show another than stat does */
		if (maj == major(st.st_dev) && minor(st.st_dev) == min) {
			any = pid;
			break;
		}
		if (any == 0)
			any = pid;
	}
	fclose(f);
	if (any > 0)
		snprintf(buf, len, "%ld", any);
}

/* Another daemon holds the directory: say which, touching nothing. */
static void
outdir_busy(int dirfd, const char *path)
{
	char	 buf[32];
	ssize_t	 n;
	int	 fd;

	outdir_lock_holder(dirfd, buf, sizeof(buf));
	if (buf[0] == '\0' && (fd = openat(dirfd, OUTDIR_LOCK_FILE, O_RDONLY |
	    O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) != -1) {
		/* an older daemon, which locks only the file, wrote it */
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		close(fd);
	}
	log_warnx("output directory %s is in use by another perfspilld "
	    "(pid %s)", path, buf[0] ? buf : "unknown");
}

int
outdir_lock(int dirfd, const char *path)
{
	char	 buf[32];
	int	 fd = -1, len, e;

	/*
	 * The directory itself is locked (its fd lives as long as we write
	 * in it): the lock file alone could be removed by hand, and the next
	 * daemon would lock a new one. It goes first, so that a daemon that
	 * finds it taken creates no lock file. The file's lock is kept for
	 * daemons that know only it; the file says who holds both.
	 */
	if (flock(dirfd, LOCK_EX | LOCK_NB) == -1) {
		e = errno;
		if (e == EWOULDBLOCK)
			outdir_busy(dirfd, path);
		else
			log_warn("locking %s", path);
		errno = e;
		return -1;
	}
	if ((fd = openat(dirfd, OUTDIR_LOCK_FILE, O_RDWR | O_CREAT |
	    O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0640)) == -1) {
		log_warn("%s/%s", path, OUTDIR_LOCK_FILE);
		goto error;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK) {
			log_warn("locking %s/%s", path, OUTDIR_LOCK_FILE);
			goto error;
		}
		outdir_busy(dirfd, path);
		errno = EWOULDBLOCK;
		goto error;
	}
	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, buf, (size_t)len, 0) != len)
		log_warn("%s/%s: writing our pid", path, OUTDIR_LOCK_FILE);
	return fd;
error:
	e = errno;
	flock(dirfd, LOCK_UN);
	if (fd != -1)
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

int
outdir_free_bytes(int dirfd, uint64_t *out)
{
	struct statvfs	 sv;

	if (fstatvfs(dirfd, &sv) == -1)
		return -1;
	*out = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}

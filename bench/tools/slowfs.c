/*
 * slowfs: a FUSE passthrough of one directory whose writes are slow, for
 * benchmarking recorders against storage that cannot keep up.
 *
 *   slowfs BACKING MOUNTPOINT [-o bw=SIZE,lat_us=N,sync_us=N] [FUSE options]
 *
 * Every file operation goes to BACKING. A write first waits lat_us (the
 * per-request latency of a remote or busy disk), then takes its share of
 * one device's bandwidth: writes are served one after another at bw bytes
 * a second (SIZE takes K, M, G), as a single disk would. fsync waits
 * sync_us. Reads and metadata are not slowed.
 *
 * Without -o writeback_cache the kernel passes each write(2) to us before
 * it returns, so a writer that calls write or pwrite itself blocks for the
 * whole cost; one that hands the write to a thread (POSIX AIO) does not.
 * That is the case multi-cblock AIO exists for.
 *
 * Built by bench/run with gcc and libfuse3 (Debian: libfuse3-dev, fuse3).
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "size.h"

struct slowfs {
	int		 dirfd;		/* BACKING */
	char		*backing;
	char		*bw_arg;
	uint64_t	 bw;		/* bytes a second; 0: unlimited */
	unsigned int	 lat_us;
	unsigned int	 sync_us;
	pthread_mutex_t	 lock;
	struct timespec	 free_at;	/* when the device is idle again */
	uint64_t	 writes, bytes;
};

static struct slowfs	 sfs = { .dirfd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER };

#define SLOWFS_OPT(t, p) { t, offsetof(struct slowfs, p), 1 }
static const struct fuse_opt slowfs_opts[] = {
	SLOWFS_OPT("bw=%s", bw_arg),
	SLOWFS_OPT("lat_us=%u", lat_us),
	SLOWFS_OPT("sync_us=%u", sync_us),
	FUSE_OPT_END
};

/* "/a/b" -> "a/b", "/" -> "." : every call is relative to BACKING */
static const char *
slowfs_rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static void
slowfs_ts_add_ns(struct timespec *ts, uint64_t ns)
{
	ns += (uint64_t)ts->tv_nsec;
	ts->tv_sec += (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
}

static int
slowfs_ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* One disk: a request starts when the previous one has gone through. */
static void
slowfs_throttle(size_t len)
{
	struct timespec	 now, until;

	if (sfs.lat_us)
		usleep(sfs.lat_us);
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&sfs.lock);
	sfs.writes++;
	sfs.bytes += len;
	if (sfs.bw == 0) {
		pthread_mutex_unlock(&sfs.lock);
		return;
	}
	if (slowfs_ts_before(&sfs.free_at, &now))
		sfs.free_at = now;
	slowfs_ts_add_ns(&sfs.free_at, (uint64_t)len * 1000000000 / sfs.bw);
	until = sfs.free_at;
	pthread_mutex_unlock(&sfs.lock);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ==
	    EINTR)
		;
}

static int
slowfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	if (fi != NULL)
		return fstat((int)fi->fh, st) == -1 ? -errno : 0;
	return fstatat(sfs.dirfd, slowfs_rel(path), st, AT_SYMLINK_NOFOLLOW) ==
	    -1 ? -errno : 0;
}

static int
slowfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
    struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	DIR		*d;
	struct dirent	*e;
	int		 fd;

	if ((fd = openat(sfs.dirfd, slowfs_rel(path), O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d)) != NULL)
		if (fill(buf, e->d_name, NULL, 0, 0))
			break;
	closedir(d);
	return 0;
}

static int
slowfs_open_common(const char *path, int flags, mode_t mode,
    struct fuse_file_info *fi)
{
	int	 fd;

	if ((fd = openat(sfs.dirfd, slowfs_rel(path), flags | O_CLOEXEC,
	    mode)) == -1)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int
slowfs_open(const char *path, struct fuse_file_info *fi)
{
	return slowfs_open_common(path, fi->flags, 0, fi);
}

static int
slowfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return slowfs_open_common(path, fi->flags | O_CREAT, mode, fi);
}

static int
slowfs_read(const char *path, char *buf, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	ssize_t	 n = pread((int)fi->fh, buf, len, off);

	return n == -1 ? -errno : (int)n;
}

static int
slowfs_write(const char *path, const char *buf, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	ssize_t	 n;

	slowfs_throttle(len);
	n = pwrite((int)fi->fh, buf, len, off);
	return n == -1 ? -errno : (int)n;
}

static int
slowfs_release(const char *path, struct fuse_file_info *fi)
{
	close((int)fi->fh);
	return 0;
}

static int
slowfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	if (sfs.sync_us)
		usleep(sfs.sync_us);
	return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) == -1 ?
	    -errno : 0;
}

static int
slowfs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	int	 fd, rc;

	if ((fd = openat(sfs.dirfd, slowfs_rel(path), O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -errno;
	if (sfs.sync_us)
		usleep(sfs.sync_us);
	rc = fsync(fd) == -1 ? -errno : 0;
	close(fd);
	return rc;
}

static int
slowfs_mkdir(const char *path, mode_t mode)
{
	return mkdirat(sfs.dirfd, slowfs_rel(path), mode) == -1 ? -errno : 0;
}

static int
slowfs_rmdir(const char *path)
{
	return unlinkat(sfs.dirfd, slowfs_rel(path), AT_REMOVEDIR) == -1 ?
	    -errno : 0;
}

static int
slowfs_unlink(const char *path)
{
	return unlinkat(sfs.dirfd, slowfs_rel(path), 0) == -1 ? -errno : 0;
}

static int
slowfs_rename(const char *from, const char *to, unsigned int flags)
{
	if (flags)
		return -EINVAL;
	return renameat(sfs.dirfd, slowfs_rel(from), sfs.dirfd,
	    slowfs_rel(to)) == -1 ? -errno : 0;
}

static int
slowfs_truncate(const char *path, off_t len, struct fuse_file_info *fi)
{
	int	 fd, rc;

	if (fi != NULL)
		return ftruncate((int)fi->fh, len) == -1 ? -errno : 0;
	if ((fd = openat(sfs.dirfd, slowfs_rel(path), O_WRONLY | O_CLOEXEC)) ==
	    -1)
		return -errno;
	rc = ftruncate(fd, len) == -1 ? -errno : 0;
	close(fd);
	return rc;
}

static int
slowfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	if (fi != NULL)
		return fchmod((int)fi->fh, mode) == -1 ? -errno : 0;
	return fchmodat(sfs.dirfd, slowfs_rel(path), mode, 0) == -1 ? -errno : 0;
}

static int
slowfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	if (fi != NULL)
		return fchown((int)fi->fh, uid, gid) == -1 ? -errno : 0;
	return fchownat(sfs.dirfd, slowfs_rel(path), uid, gid,
	    AT_SYMLINK_NOFOLLOW) == -1 ? -errno : 0;
}

static int
slowfs_utimens(const char *path, const struct timespec tv[2],
    struct fuse_file_info *fi)
{
	if (fi != NULL)
		return futimens((int)fi->fh, tv) == -1 ? -errno : 0;
	return utimensat(sfs.dirfd, slowfs_rel(path), tv, AT_SYMLINK_NOFOLLOW) ==
	    -1 ? -errno : 0;
}

static int
slowfs_statfs(const char *path, struct statvfs *st)
{
	return fstatvfs(sfs.dirfd, st) == -1 ? -errno : 0;
}

static int
slowfs_symlink(const char *target, const char *path)
{
	return symlinkat(target, sfs.dirfd, slowfs_rel(path)) == -1 ? -errno : 0;
}

static int
slowfs_readlink(const char *path, char *buf, size_t len)
{
	ssize_t	 n;

	if (len == 0)
		return -EINVAL;
	if ((n = readlinkat(sfs.dirfd, slowfs_rel(path), buf, len - 1)) == -1)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int
slowfs_flock(const char *path, struct fuse_file_info *fi, int op)
{
	return flock((int)fi->fh, op) == -1 ? -errno : 0;
}

static void *
slowfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* the backing file system's inode numbers and attributes, unchanged */
	cfg->use_ino = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static void
slowfs_destroy(void *data)
{
	fprintf(stderr, "slowfs: %llu writes, %llu bytes\n",
	    (unsigned long long)sfs.writes, (unsigned long long)sfs.bytes);
}

static const struct fuse_operations slowfs_ops = {
	.init		= slowfs_init,
	.destroy	= slowfs_destroy,
	.getattr	= slowfs_getattr,
	.readdir	= slowfs_readdir,
	.open		= slowfs_open,
	.create		= slowfs_create,
	.read		= slowfs_read,
	.write		= slowfs_write,
	.release	= slowfs_release,
	.fsync		= slowfs_fsync,
	.fsyncdir	= slowfs_fsyncdir,
	.mkdir		= slowfs_mkdir,
	.rmdir		= slowfs_rmdir,
	.unlink		= slowfs_unlink,
	.rename		= slowfs_rename,
	.truncate	= slowfs_truncate,
	.chmod		= slowfs_chmod,
	.chown		= slowfs_chown,
	.utimens	= slowfs_utimens,
	.statfs		= slowfs_statfs,
	.symlink	= slowfs_symlink,
	.readlink	= slowfs_readlink,
	.flock		= slowfs_flock,
};

/* The first non-option argument is BACKING; the rest go to FUSE. */
static int
slowfs_arg(void *data, const char *arg, int key, struct fuse_args *out)
{
	if (key == FUSE_OPT_KEY_NONOPT && sfs.backing == NULL) {
		sfs.backing = strdup(arg);
		return 0;
	}
	return 1;
}

int
main(int argc, char *argv[])
{
	struct fuse_args	 args = FUSE_ARGS_INIT(argc, argv);
	int			 rc;

	if (fuse_opt_parse(&args, &sfs, slowfs_opts, slowfs_arg) == -1)
		return 1;
	if (sfs.backing == NULL) {
		fprintf(stderr, "usage: slowfs BACKING MOUNTPOINT "
		    "[-o bw=SIZE,lat_us=N,sync_us=N] [FUSE options]\n");
		return 1;
	}
	if (sfs.bw_arg != NULL && (sfs.bw = tool_size(sfs.bw_arg)) == 0) {
		fprintf(stderr, "slowfs: bw=%s: not a size (e.g. 50M)\n",
		    sfs.bw_arg);
		return 1;
	}
	if ((sfs.dirfd = open(sfs.backing, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		perror(sfs.backing);
		return 1;
	}
	rc = fuse_main(args.argc, args.argv, &slowfs_ops, NULL);
	fuse_opt_free_args(&args);
	return rc;
}

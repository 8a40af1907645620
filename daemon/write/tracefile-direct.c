/*
 * tracefile-direct writes a trace file's data past the page cache
 * (O_DIRECT).
 *
 * The kernel copies every buffered write into the page cache: half of
 * the recorder's CPU under a storm, and a trace that evicts the traced
 * programs' own pages. A direct write goes from our buffer to the disk,
 * but only in runs whose offset, length and buffer address are multiples
 * of the file system's alignment (statx STATX_DIOALIGN). The records of
 * a drain are any length, so the file is one stream: each request starts
 * at an aligned offset with the stream's unwritten tail (its "lead",
 * fewer bytes than one alignment unit, copied in front of the new
 * records), and ends at the last aligned offset; what is left over is
 * the next request's lead. Nothing of the ring is copied twice but that
 * tail. At close the tail, the feature table and the header go through
 * an ordinary write (tracefile.c).
 *
 * A file may have several O_DIRECT descriptors, taken in turn (glibc
 * runs one descriptor's requests one after another; TRACEFILE_DIRECT_FDS
 * says why there is one). Two requests never overlap, except a padded
 * tail (tracefile_direct_pad, or the end of a pool's request:
 * tracefile_direct_pad_slice) and the request that later rewrites its
 * block: those share a descriptor, whose queue keeps their order. A
 * cached pad (tracefile_direct_cache) writes the stream's unqueued end
 * by the buffered descriptor instead: into pages that no request in
 * flight shares (record_pool_cache takes it only where the alignment is
 * a multiple of the page, and no padded tail in flight covers them),
 * which the kernel writes out and drops before the request that later
 * writes the same bytes past the page cache.
 *
 * Where the file system refuses O_DIRECT (EINVAL at open: tmpfs before
 * Linux 6.6, some FUSE and network file systems; or at the first write)
 * the stream goes on through the buffered descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "tracefile.h"

/* The alignment the file system asks of direct I/O on fd, or 0. */
static size_t
tracefile_direct_align(int fd)
{
	struct statx	 st;
	size_t		 a;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &st) == -1 ||
	    !(st.stx_mask & STATX_DIOALIGN))
		/* no answer (before Linux 6.1): 4 KiB is a multiple of
		 * every logical block size disks have */
		return TRACEFILE_ALIGN_MAX;
	if (st.stx_dio_offset_align == 0)
		return 0;	/* the file system has no direct I/O here */
	a = st.stx_dio_offset_align;
	if (st.stx_dio_mem_align > a)
		a = st.stx_dio_mem_align;
	/* the least the kernel takes is not what it takes well: on ext4
	 * over virtio (512 allowed, blocks of 4 KiB) writes aligned to 512
	 * but not to 4 KiB ran at 62-94 MB/s instead of 284-358, for twice
	 * the CPU (bench/direct-io.md). Offsets and lengths in whole file
	 * system blocks where that is a multiple of the minimum. */
	if (st.stx_blksize > a && st.stx_blksize <= TRACEFILE_ALIGN_MAX &&
	    st.stx_blksize % a == 0)
		a = st.stx_blksize;
	return a;
}

void
tracefile_direct_init(struct tracefile *tf)
{
	struct tracefile_direct	*d = &tf->direct;
	size_t			 i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < TRACEFILE_DIRECT_FDS; i++)
		d->fds[i] = -1;
	d->flush_off = UINT64_MAX;
}

/*
 * Open the file's O_DIRECT descriptors. 0, or -1 with errno (the file
 * stays buffered; d->refused says why).
 */
int
tracefile_direct_open(struct tracefile *tf)
{
	struct tracefile_direct	*d = &tf->direct;
	struct stat		 a, b;
	size_t			 align, i;
	int			 fd;

	if ((align = tracefile_direct_align(tf->fd)) == 0 ||
	    align > TRACEFILE_ALIGN_MAX) {
		/* the buffers leave room for this much lead */
		d->refused = EINVAL;
		errno = EINVAL;
		return -1;
	}
	if (fstat(tf->fd, &a) == -1)
		goto error;
	for (i = 0; i < TRACEFILE_DIRECT_FDS; i++) {
		fd = openat(tf->dirfd, tf->partial, O_WRONLY | O_DIRECT |
		    O_CLOEXEC | O_NOFOLLOW);
		if (fd == -1)
			goto error;
		d->fds[d->nr_fds++] = fd;
		/* the very file we created, not one put in its place */
		if (fstat(fd, &b) == -1 || a.st_ino != b.st_ino ||
		    a.st_dev != b.st_dev) {
			errno = EXDEV;
			goto error;
		}
	}
	if (posix_memalign((void **)&d->tail, TRACEFILE_ALIGN_MAX,
	    TRACEFILE_ALIGN_MAX) != 0) {
		errno = ENOMEM;
		goto error;
	}
	d->align = align;
	return 0;
error:
	d->refused = errno;
	tracefile_direct_close(tf);
	errno = d->refused;
	return -1;
}

void
tracefile_direct_close(struct tracefile *tf)
{
	struct tracefile_direct	*d = &tf->direct;
	size_t			 i;

	for (i = 0; i < d->nr_fds; i++)
		close(d->fds[i]);
	for (i = 0; i < TRACEFILE_DIRECT_FDS; i++)
		d->fds[i] = -1;
	d->nr_fds = 0;
}

void
tracefile_direct_free(struct tracefile *tf)
{
	tracefile_direct_close(tf);
	free(tf->direct.tail);
	tf->direct.tail = NULL;
}

int
tracefile_direct_on(const struct tracefile *tf)
{
	return tf->direct.align > 0;
}

/* The descriptor for a request from off: the padded tail's where it
 * rewrites that block, else the next in turn (the buffered one once the
 * file system refused direct writes). */
static int
tracefile_direct_fd(struct tracefile *tf, uint64_t off)
{
	struct tracefile_direct	*d = &tf->direct;

	if (d->nr_fds == 0)
		return tf->fd;
	if (off == d->flush_off)
		return d->flush_fd;
	return d->fds[d->next++ % d->nr_fds];
}

size_t
tracefile_direct_lead(const struct tracefile *tf, uint8_t *buf)
{
	const struct tracefile_direct	*d = &tf->direct;

	memcpy(buf, d->tail, d->tail_len);
	return d->tail_len;
}

int
tracefile_direct_slice(struct tracefile *tf, uint64_t off)
{
	struct tracefile_direct	*d = &tf->direct;
	int			 fd = tracefile_direct_fd(tf, off);

	if (off == d->flush_off)
		d->flush_off = UINT64_MAX;	/* that block is written now */
	return fd;
}

void
tracefile_direct_keep(struct tracefile *tf, const uint8_t *p, size_t n)
{
	struct tracefile_direct	*d = &tf->direct;

	memcpy(d->tail, p, n);
	d->tail_len = n;
}

/* The rest of a request of total bytes from buf (from file offset off,
 * with its lead) after its last aligned byte becomes the stream's tail;
 * the bytes to write from buf, and on which descriptor. */
size_t
tracefile_direct_cut(struct tracefile *tf, uint8_t *buf, size_t total,
    uint64_t off, int *fd)
{
	struct tracefile_direct	*d = &tf->direct;
	size_t			 w = total - total % d->align;

	tracefile_direct_keep(tf, buf + w, total - w);
	if (w == 0) {
		*fd = -1;
		return 0;
	}
	*fd = tracefile_direct_slice(tf, off);
	return w;
}

/* Is the stream's tail of tail bytes to be padded: there is one, the
 * stream grew since the last pad, and the file is direct still? */
static int
tracefile_direct_due(const struct tracefile *tf, size_t tail)
{
	const struct tracefile_direct	*d = &tf->direct;

	return tail > 0 && d->flushed != tf->reserved && d->nr_fds > 0;
}

/* The tail's block, padded, goes from off on fd: the request that
 * rewrites the block follows it on that descriptor. */
static void
tracefile_direct_padded(struct tracefile *tf, uint64_t off, int fd)
{
	struct tracefile_direct	*d = &tf->direct;

	d->flush_fd = fd;
	d->flush_off = off;
	d->flushed = tf->reserved;
	d->pads++;
}

/*
 * The tail as one aligned block, zeros after it, for a request that
 * puts what the stream holds on disk now (a crash then costs less than
 * the tail: tracefile.h). The zeros end the records for salvage; the
 * stream's next request rewrites the block, on the same descriptor.
 * Returns the bytes to write from buf at *off on *fd, or 0 when the
 * stream has not grown since the last pad.
 */
size_t
tracefile_direct_pad(struct tracefile *tf, uint8_t *buf, uint64_t *off,
    int *fd)
{
	struct tracefile_direct	*d = &tf->direct;

	if (!tracefile_direct_due(tf, d->tail_len))
		return 0;
	memcpy(buf, d->tail, d->tail_len);
	memset(buf + d->tail_len, 0, d->align - d->tail_len);
	*off = tf->reserved - d->tail_len;
	*fd = tracefile_direct_fd(tf, *off);
	tracefile_direct_padded(tf, *off, *fd);
	return d->align;
}

int
tracefile_direct_pad_slice(struct tracefile *tf, uint64_t off, size_t tail)
{
	int	 fd;

	if (!tracefile_direct_due(tf, tail))
		return -1;
	fd = tracefile_direct_slice(tf, off);
	tracefile_direct_padded(tf, tf->reserved - tail, fd);
	return fd;
}

int
tracefile_direct_cache(struct tracefile *tf, const uint8_t *p, size_t n,
    uint64_t off, uint64_t from)
{
	struct tracefile_direct	*d = &tf->direct;

	if (perfdata_pwrite(tf->fd, p, n, off) == -1)
		return -1;
	/* the disk gets it within moments, not at the kernel's writeback
	 * age (30 s): a machine lost costs about what a daemon killed
	 * does. Only started: the drain thread does not wait for it */
	(void)sync_file_range(tf->fd, (off_t)off, (off_t)n,
	    SYNC_FILE_RANGE_WRITE);
	d->flushed = tf->reserved;
	d->cache_from = from;
	d->cache_to = off + n;
	return 0;
}

uint64_t
tracefile_direct_readable(const struct tracefile *tf)
{
	const struct tracefile_direct	*d = &tf->direct;

	if (d->cache_to > tf->frontier && tf->frontier >= d->cache_from)
		return d->cache_to;
	return tf->frontier;
}

int
tracefile_direct_pad_current(const struct tracefile *tf, uint64_t off,
    uint64_t seq)
{
	return tf->direct.flush_off == off && tf->direct.pads == seq;
}

uint64_t
tracefile_direct_pads(const struct tracefile *tf)
{
	return tf->direct.pads;
}

int
tracefile_direct_refuse(struct tracefile *tf, int fd, int err)
{
	struct tracefile_direct	*d = &tf->direct;

	if (fd == tf->fd || err != EINVAL)
		return -1;
	if (d->nr_fds > 0) {
		d->refused = err;
		tracefile_direct_close(tf);
		d->flush_off = UINT64_MAX;
	}
	return tf->fd;
}

/*
 * The spill: the pool is at its bound and every block in flight, so the
 * records go through the page cache instead of leaving a ring to
 * overflow. The stream's tail and the aligned part of p are written now
 * by the buffered descriptor, from the tail's aligned offset: the ranges
 * of the direct requests before it end there, and the next one begins
 * at the spill's last aligned offset with what is left over (the new
 * tail) as its lead, so no two writes overlap. A padded tail in the
 * spilled block must have landed first (record_pool_spill_ready).
 */
int
tracefile_direct_spill(struct tracefile *tf, const uint8_t *p, size_t len,
    const struct tracefile_mark *mark)
{
	struct tracefile_direct	*d = &tf->direct;
	struct iovec		 iov[2];
	uint64_t		 start;
	size_t			 total, w;
	int			 rc;

	start = tracefile_reserve(tf, len, mark) - d->tail_len;
	total = d->tail_len + len;
	w = total - total % d->align;
	if (w == 0) {
		memcpy(d->tail + d->tail_len, p, len);
		d->tail_len += len;
		return 0;
	}
	iov[0].iov_base = d->tail;
	iov[0].iov_len = d->tail_len;
	iov[1].iov_base = (void *)(uintptr_t)p;
	iov[1].iov_len = w - d->tail_len;
	rc = tracefile_pwritev(tf, start, iov, 2);
	if (d->flush_off != UINT64_MAX && d->flush_off < start + w)
		d->flush_off = UINT64_MAX;	/* that block is written now */
	tracefile_direct_keep(tf, p + (w - d->tail_len), total - w);
	return rc;
}

size_t
tracefile_direct_block(struct tracefile *tf, uint8_t *buf, size_t lead,
    size_t len, const struct tracefile_mark *mark, uint64_t *off, int *fd)
{
	*off = tracefile_reserve(tf, len, mark) - lead;
	return tracefile_direct_cut(tf, buf, lead + len, *off, fd);
}

/* The direct stream's tail, through the buffered descriptor: the last
 * bytes of a file whose requests have all completed. 0 or -1 (errno). */
int
tracefile_direct_end(struct tracefile *tf)
{
	struct tracefile_direct	*d = &tf->direct;

	if (d->tail_len == 0)
		return 0;
	return tracefile_pwrite(tf, tf->reserved - d->tail_len, d->tail,
	    d->tail_len);
}

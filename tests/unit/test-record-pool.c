/*
 * test-record-pool: the direct path's pool of blocks (record-pool.c)
 * against a fake disk: which block opens, when a slice is queued and how
 * large, what a finished block carries to the next, that a block with a
 * slice in flight is not taken, that a freed one is taken again, that
 * a pad is one request (or none, through the page cache), and that the
 * file, written by every slice, pad and the close, is the stream byte
 * for byte.
 *
 * This binary defines aio_write, aio_error, aio_return and aio_suspend
 * itself (as test-cblock-reap does): a request stays in flight until the
 * test runs the disk (disk_run) or the pool waits (aio_suspend), which
 * writes the requests in the order they were queued, for real, with
 * pwrite into a real file. The file's direct descriptor is a buffered
 * one and the stream's alignment is set by hand, so that the test runs
 * on any file system.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cblock.h"
#include "check.h"
#include "fake-aio.h"
#include "config.h"
#include "record-int.h"
#include "record-pool.h"
#include "tracefile.h"

#define MAXREQ		256
#define ALIGN		512

/* Requests queued and not yet written, in order; every one queued. */
static struct aiocb	*pending[MAXREQ];
static size_t		 npending;
static struct {
	uint64_t	 off;
	size_t		 len;
} queued[4096];
static size_t		 nqueued;

int
aio_write(struct aiocb *cb)
{
	if (npending == MAXREQ) {
		errno = EAGAIN;
		return -1;
	}
	pending[npending++] = cb;
	if (nqueued < sizeof(queued) / sizeof(queued[0])) {
		queued[nqueued].off = (uint64_t)cb->aio_offset;
		queued[nqueued++].len = cb->aio_nbytes;
	}
	cb->__error_code = EINPROGRESS;
	cb->__return_value = 0;
	return 0;
}

/* The disk writes the first n requests queued, in order. */
static void
disk_run(size_t n)
{
	struct aiocb	*cb;
	ssize_t		 w;
	size_t		 i;

	for (i = 0; i < n && i < npending; i++) {
		cb = pending[i];
		w = pwrite(cb->aio_fildes, (const void *)cb->aio_buf,
		    cb->aio_nbytes, cb->aio_offset);
		cb->__error_code = w == -1 ? errno : 0;
		cb->__return_value = w;
	}
	memmove(pending, pending + i, (npending - i) * sizeof(pending[0]));
	npending -= i;
}

/* The pool waits for a block: the disk catches up. */
int
aio_suspend(const struct aiocb *const list[], int n, const struct timespec *ts)
{
	(void)list;
	(void)n;
	(void)ts;
	disk_run(npending);
	return 0;
}

/* The stream as written so far; a byte's value follows its offset. */
static uint8_t	 want[8 << 20];
static size_t	 want_len;

static void
fill(uint8_t *p, size_t len)
{
	size_t	 i;

	if (want_len + len > sizeof(want))
		abort();
	for (i = 0; i < len; i++)
		want[want_len + i] = p[i] = (uint8_t)((want_len + i) * 13 + 5);
	want_len += len;
}

/* A file of dir whose stream is aligned to ALIGN, written through its
 * buffered descriptor (tracefile-direct.c with no direct descriptor). */
static struct tracefile *
open_file(int dirfd)
{
	struct tracefile	*tf;
	unsigned int		 seq = 0;

	if ((tf = tracefile_open(dirfd, "pool", &seq, 0)) == NULL ||
	    posix_memalign((void **)&tf->direct.tail, TRACEFILE_ALIGN_MAX,
	    TRACEFILE_ALIGN_MAX) != 0)
		abort();
	tf->direct.align = ALIGN;
	/* its "direct" descriptor: another of the same file */
	if ((tf->direct.fds[0] = dup(tf->fd)) == -1)
		abort();
	tf->direct.nr_fds = 1;
	return tf;
}

static void
reap(struct cblock_queue *q)
{
	(void)cblock_reap(q);
}

/* One room and put of len record bytes, a round's room with it. */
static uint8_t *
put(struct record_pool *pool, struct tracefile *tf, size_t len, int wait)
{
	struct tracefile_mark	 mark = { 1, 0, 0 };
	uint8_t			*room;

	if ((room = record_pool_room(pool, tf, len + 8, wait)) == NULL)
		return NULL;
	fill(room, len);
	record_pool_put(pool, tf, len, &mark);
	return room;
}

/*
 * Step by step on two blocks of 8 KiB, slices of 4 KiB: what opens,
 * what is queued, what a finished block carries over, busy and reuse.
 */
static void
test_blocks(int dirfd)
{
	struct cblock_queue	 q;
	struct record_pool	 pool;
	struct record_block	*b0, *b1;
	struct tracefile	*tf = open_file(dirfd);
	uint8_t			*room;

	want_len = 0;
	npending = nqueued = 0;
	cblock_queue_init(&q);
	CHECK_EQ(record_pool_init(&pool, &q, 8192, 4096, 2), 0);
	CHECK(record_pool_made(&pool));
	CHECK_EQ(record_pool_bytes(&pool), 2 * 8192);
	b0 = &pool.blocks[0];
	b1 = &pool.blocks[1];

	/* the first room opens the first block, at the stream's start */
	room = put(&pool, tf, 3000, 0);
	CHECK(room == b0->buf);
	CHECK(pool.open == b0 && pool.tf == tf && b0->open);
	CHECK_EQ(b0->off, 0);
	CHECK_EQ(b0->fill, 3000);
	CHECK_EQ(tf->reserved, 3000);
	/* 2560 aligned bytes: below the slice size, nothing queued */
	CHECK_EQ(record_pool_send(&pool, 0), 0);
	CHECK_EQ(nqueued, 0);

	/* the next drain follows it in the same block: no lead copied */
	room = put(&pool, tf, 3000, 0);
	CHECK(room == b0->buf + 3000);
	CHECK_EQ(b0->fill, 6000);
	CHECK_EQ(record_pool_send(&pool, 0), 0);
	CHECK_EQ(nqueued, 1);
	CHECK_EQ(queued[0].off, 0);
	CHECK_EQ(queued[0].len, 5632);		/* 6000 less its last 368 */
	CHECK_EQ(b0->sent, 5632);
	CHECK_EQ(b0->slices, 1);
	CHECK_EQ(pool.stats.inflight, 1);

	/* 3000 more do not fit in the 2192 left: the block is finished,
	 * its last 368 bytes carried to the next free one, which opens */
	room = put(&pool, tf, 3000, 0);
	CHECK(pool.open == b1 && b1->open && !b0->open);
	CHECK_EQ(pool.finished, 1);
	CHECK_EQ(b1->off, 5632);
	CHECK(room == b1->buf + 368);
	CHECK(memcmp(b1->buf, want + 5632, 368) == 0);
	CHECK_EQ(b1->fill, 368 + 3000);
	CHECK_EQ(b1->off + b1->fill, tf->reserved);
	/* nothing more of b0 was aligned: no request for it */
	CHECK_EQ(nqueued, 1);

	/* 5000 do not fit either, and b0 is still being written: no
	 * block is free. The ring waits (busy); what b1 holds goes on. */
	CHECK(record_pool_room(&pool, tf, 5000 + 8, 0) == NULL);
	CHECK_EQ(pool.busy, 1);
	CHECK(pool.open == b1);
	CHECK_EQ(nqueued, 2);
	CHECK_EQ(queued[1].off, 5632);
	CHECK_EQ(queued[1].len, 3072);		/* 3368 less its last 296 */
	CHECK_EQ(b1->slices, 1);

	/* b0's slice lands: b0 is free again and taken again */
	disk_run(1);
	reap(&q);
	CHECK_EQ(b0->slices, 0);
	CHECK_EQ(tf->frontier, 5632);
	room = put(&pool, tf, 5000, 0);
	CHECK(room != NULL);
	CHECK(pool.open == b0 && !b1->open);
	CHECK_EQ(b0->off, 5632 + 3072);
	CHECK_EQ(b0->fill, 296 + 5000);
	CHECK(memcmp(b0->buf, want + 5632 + 3072, 296) == 0);

	/* a file's last drain waits: the disk catches up, b1 is free */
	CHECK(record_pool_room(&pool, tf, 6008, 0) == NULL);
	CHECK_EQ(pool.busy, 2);
	room = put(&pool, tf, 6000, 1);
	CHECK(room != NULL && pool.open == b1);
	CHECK_EQ(pool.busy, 2);

	/* another file's room lets this one's block go: its aligned part
	 * queued, its last bytes the file's tail */
	record_pool_detach(&pool, tf);
	CHECK(pool.open == NULL && !b0->open && !b1->open);
	CHECK_EQ(tf->direct.tail_len, want_len % ALIGN);
	CHECK(memcmp(tf->direct.tail, want + want_len - want_len % ALIGN,
	    tf->direct.tail_len) == 0);
	CHECK_EQ(queued[nqueued - 1].off + queued[nqueued - 1].len,
	    want_len - want_len % ALIGN);

	/* fewer blocks: the one past the count goes once it is free */
	CHECK_EQ(record_pool_resize(&pool, 1), 0);
	CHECK_EQ(pool.nr, 2);		/* b1's slice is in flight */
	disk_run(npending);
	reap(&q);
	record_pool_trim(&pool);
	CHECK_EQ(pool.nr, 1);
	CHECK_EQ(record_pool_resize(&pool, 3), 0);
	CHECK_EQ(pool.nr, 3);
	CHECK_EQ(record_pool_bytes(&pool), 3 * 8192);

	CHECK_EQ(tracefile_direct_end(tf), 0);
	CHECK_EQ(tf->frontier, tf->reserved);
	CHECK_EQ(tf->inflight, 0);
	record_pool_finish(&pool);
	CHECK(!record_pool_made(&pool));
	unlinkat(dirfd, tf->partial, 0);
	tracefile_free(tf);
}

/*
 * The pad: what the open block holds goes as one request, its aligned
 * part and its tail padded with zeros after it; the stream goes on in
 * the block past the padded one, and the next pad's request begins at
 * the tail's block, rewriting it. On disk: the stream, then zeros to
 * the last pad's aligned end (where salvage stops).
 */
static void
test_pad(int dirfd)
{
	struct cblock_queue	 q;
	struct record_pool	 pool;
	struct record_block	*b0;
	struct tracefile	*tf = open_file(dirfd);
	uint8_t			 got[4096];
	size_t			 i;
	int			 fd;

	want_len = 0;
	npending = nqueued = 0;
	cblock_queue_init(&q);
	CHECK_EQ(record_pool_init(&pool, &q, 64 * 1024, 24 * 1024, 2), 0);
	b0 = &pool.blocks[0];
	put(&pool, tf, 3000, 0);
	CHECK_EQ(record_pool_pad(&pool, tf), 0);
	/* 2560 stream bytes and the block of the last 440, padded */
	CHECK_EQ(nqueued, 1);
	CHECK_EQ(queued[0].off, 0);
	CHECK_EQ(queued[0].len, 3072);
	CHECK_EQ(pool.pads, 1);
	CHECK_EQ(tf->direct.flush_off, 2560);
	CHECK_EQ(tf->direct.tail_len, 440);
	/* the stream goes on past the padded block, the tail before it */
	CHECK(pool.open == b0);
	CHECK_EQ(b0->start, 3072);
	CHECK_EQ(b0->sent, 3072);
	CHECK_EQ(b0->off, 2560);
	CHECK_EQ(b0->fill, 3072 + 440);
	CHECK(memcmp(b0->buf + 3072, want + 2560, 440) == 0);
	/* nothing new: no pad */
	CHECK_EQ(record_pool_pad(&pool, tf), 0);
	CHECK_EQ(nqueued, 1);
	CHECK_EQ(pool.pads, 1);

	/* the disk writes it: the stream, zeros after it */
	disk_run(npending);
	reap(&q);
	CHECK_EQ(tf->frontier, 2560);
	fd = openat(dirfd, tf->partial, O_RDONLY);
	CHECK(fd != -1 && pread(fd, got, 3072, 0) == 3072);
	CHECK(memcmp(got, want, 3000) == 0);
	for (i = 3000; i < 3072; i++)
		CHECK_EQ(got[i], 0);

	/* more: the next pad's request rewrites the tail's block from its
	 * start, on the same descriptor */
	put(&pool, tf, 1000, 0);
	CHECK_EQ(record_pool_pad(&pool, tf), 0);
	CHECK_EQ(nqueued, 2);
	CHECK_EQ(queued[1].off, 2560);
	CHECK_EQ(queued[1].len, 1536);	/* 1024 stream bytes, a block */
	CHECK_EQ(tf->direct.flush_off, 3584);
	CHECK_EQ(pool.pads, 2);
	disk_run(npending);
	reap(&q);
	CHECK_EQ(tf->frontier, 3584);
	CHECK(pread(fd, got, 4096, 0) == 4096);
	CHECK(memcmp(got, want, 4000) == 0);
	for (i = 4000; i < 4096; i++)
		CHECK_EQ(got[i], 0);

	/* the close writes the tail; the file is the stream */
	record_pool_detach(&pool, tf);
	disk_run(npending);
	reap(&q);
	CHECK_EQ(tracefile_direct_end(tf), 0);
	CHECK_EQ(tf->frontier, tf->reserved);
	CHECK(pread(fd, got, 4000, 0) == 4000);
	CHECK(memcmp(got, want, 4000) == 0);
	close(fd);
	record_pool_finish(&pool);
	unlinkat(dirfd, tf->partial, 0);
	tracefile_free(tf);
}

/*
 * The cached pad: what the open block took since its last slice and the
 * last such pad goes into the file by its buffered descriptor, with no
 * request; the block stays as it is, and its slice later writes the
 * same bytes. Not under a page's alignment, nor while a padded tail in
 * flight is to be rewritten by the block's next slice.
 */
static void
test_cache(int dirfd)
{
	struct cblock_queue	 q;
	struct record_pool	 pool;
	struct record_block	*b0;
	struct tracefile	*tf = open_file(dirfd);
	size_t			 page = (size_t)sysconf(_SC_PAGESIZE);
	static uint8_t		 got[65536];
	int			 fd;

	want_len = 0;
	npending = nqueued = 0;
	tf->direct.align = page;
	cblock_queue_init(&q);
	CHECK_EQ(record_pool_init(&pool, &q, 64 * 1024, 24 * 1024, 2), 0);
	b0 = &pool.blocks[0];
	fd = openat(dirfd, tf->partial, O_RDONLY);
	CHECK(fd != -1);
	/* no open block: the caller pads by a request */
	CHECK_EQ(record_pool_cache(&pool, tf), -1);

	put(&pool, tf, 3000, 0);
	CHECK_EQ(record_pool_cache(&pool, tf), 0);
	CHECK_EQ(nqueued, 0);
	CHECK_EQ(pool.pads, 1);
	CHECK_EQ(b0->cached, 3000);
	CHECK_EQ(b0->sent, 0);
	CHECK(pread(fd, got, sizeof(got), 0) == 3000);
	CHECK(memcmp(got, want, 3000) == 0);
	CHECK_EQ(tracefile_direct_readable(tf), 3000);
	/* nothing new: nothing written */
	CHECK_EQ(record_pool_cache(&pool, tf), 0);
	CHECK_EQ(pool.pads, 1);

	/* a slice takes [0, 24576); the pad writes only what is past it
	 * and past the last pad, readable once the slice landed */
	put(&pool, tf, 22000, 0);
	CHECK_EQ(record_pool_send(&pool, 0), 0);
	CHECK_EQ(nqueued, 1);
	CHECK_EQ(queued[0].len, 24576);
	CHECK_EQ(record_pool_cache(&pool, tf), 0);
	CHECK_EQ(pool.pads, 2);
	CHECK_EQ(tf->direct.cache_from, 24576);
	CHECK_EQ(tracefile_direct_readable(tf), 0);
	disk_run(npending);
	reap(&q);
	CHECK_EQ(tracefile_direct_readable(tf), 25000);
	CHECK(pread(fd, got, sizeof(got), 0) == 25000);
	CHECK(memcmp(got, want, 25000) == 0);

	/* a padded tail by request in flight: the block's next slice
	 * rewrites it, and its zeros would land over cached bytes */
	put(&pool, tf, 1000, 0);
	CHECK_EQ(record_pool_pad(&pool, tf), 0);
	CHECK(tf->direct.flush_off != UINT64_MAX);
	put(&pool, tf, 100, 0);
	CHECK_EQ(record_pool_cache(&pool, tf), -1);
	disk_run(npending);
	reap(&q);
	CHECK_EQ(record_pool_cache(&pool, tf), 0);
	/* past it, the zeros of the padded tail */
	CHECK(pread(fd, got, sizeof(got), 0) >= 26100);
	CHECK(memcmp(got, want, 26100) == 0);

	/* more than a slice since the last pad (a storm): a request, not
	 * a write the kernel may throttle on the drain's thread */
	put(&pool, tf, 12000, 0);
	put(&pool, tf, 13000, 0);
	CHECK_EQ(record_pool_cache(&pool, tf), -1);
	CHECK_EQ(record_pool_pad(&pool, tf), 0);
	disk_run(npending);
	reap(&q);
	put(&pool, tf, 100, 0);
	CHECK_EQ(record_pool_cache(&pool, tf), 0);

	/* an alignment under a page: a request */
	put(&pool, tf, 100, 0);
	tf->direct.align = page / 2;
	CHECK_EQ(record_pool_cache(&pool, tf), -1);
	tf->direct.align = page;

	/* the close writes the rest; the file is the stream */
	record_pool_detach(&pool, tf);
	disk_run(npending);
	reap(&q);
	CHECK_EQ(tracefile_direct_end(tf), 0);
	CHECK_EQ(tf->frontier, tf->reserved);
	CHECK(pread(fd, got, sizeof(got), 0) >= (ssize_t)want_len);
	CHECK(memcmp(got, want, want_len) == 0);
	close(fd);
	record_pool_finish(&pool);
	unlinkat(dirfd, tf->partial, 0);
	tracefile_free(tf);
}

/*
 * A long stream of drains of any length (the first after a head that
 * leaves a tail), rounds, pads now and then, the disk late: every
 * request aligned and in stream order, most of them at least a slice,
 * and the file the stream byte for byte.
 */
static void
test_stream(int dirfd)
{
	struct cblock_queue	 q;
	struct cblock_stats	 heap;
	struct record_pool	 pool;
	struct tracefile	*tf = open_file(dirfd);
	struct cblock		*cb;
	struct stat		 st;
	uint8_t			*b, *got;
	uint64_t		 off, end = 0;
	size_t			 i, k, len, w, small = 0, pads = 0;
	int			 fd;

	want_len = 0;
	npending = nqueued = 0;
	memset(&heap, 0, sizeof(heap));
	cblock_queue_init(&q);
	CHECK_EQ(record_pool_init(&pool, &q, 64 * 1024, 24 * 1024, 3), 0);

	/* a head of 1000 bytes, as record_write_extra writes it */
	if ((b = cblock_buffer(8192)) == NULL)
		abort();
	fill(b, 1000);
	w = tracefile_direct_block(tf, b, 0, 1000, NULL, &off, &fd);
	CHECK_EQ(w, 512);
	cb = cblock_create_heap(b, w, &heap);
	CHECK(cb != NULL && cblock_submit(&q, cb, tf, off, fd) == 0);

	srand(7);
	for (k = 0; k < 600; k++) {
		len = 8 * (size_t)(1 + rand() % (k % 3 ? 3000 : 40));
		if (put(&pool, tf, len, 0) == NULL) {
			disk_run(npending);
			reap(&q);
			CHECK(put(&pool, tf, len, 0) != NULL);
		}
		CHECK_EQ(pool.open->off % ALIGN, 0);
		CHECK_EQ(pool.open->sent % ALIGN, 0);
		CHECK_EQ(pool.open->start % ALIGN, 0);
		CHECK_EQ(pool.open->off + (pool.open->fill -
		    pool.open->start), tf->reserved);
		if (k % 4 == 3)
			put(&pool, tf, 8, 0);	/* a round */
		CHECK_EQ(record_pool_send(&pool, 0), 0);
		/* the disk runs behind: a request or two at a time */
		if (k % 3 == 0) {
			disk_run(k % 2 + 1);
			reap(&q);
		}
		/* the pool's pad (one request from the block) more often,
		 * the disk late behind it, rewritten by what follows */
		if (k % 7 == 5)
			CHECK_EQ(record_pool_pad(&pool, tf), 0);
		/* a padded tail of its own now and then, as a file without
		 * an open block pads */
		if (k % 50 == 49 && (b = cblock_buffer(TRACEFILE_ALIGN_MAX))) {
			record_pool_flush(&pool, tf);
			if ((w = tracefile_direct_pad(tf, b, &off, &fd)) > 0 &&
			    (cb = cblock_create_heap(b, w, &heap)) != NULL) {
				cb->pad = 1;
				CHECK_EQ(cblock_submit(&q, cb, tf, off, fd), 0);
				pads++;
			} else
				free(b);
		}
	}
	record_pool_detach(&pool, tf);
	disk_run(npending);
	reap(&q);
	CHECK(pads > 0);
	CHECK(pool.pads > 50);
	CHECK(pool.finished > 10);
	CHECK_EQ(tf->inflight, 0);
	CHECK_EQ(tf->frontier, tf->reserved - tf->direct.tail_len);
	CHECK_EQ(tracefile_direct_end(tf), 0);
	CHECK_EQ(tf->frontier, tf->reserved);
	CHECK_EQ(tf->reserved, want_len);
	CHECK_EQ(tf->bad_off, UINT64_MAX);

	/* requests aligned, in stream order (a pad is rewritten by the
	 * next one: it may begin where the pad did); few below a slice:
	 * those that finished a block, a pad's, the last */
	for (i = 0; i < nqueued; i++) {
		CHECK_EQ(queued[i].off % ALIGN, 0);
		CHECK_EQ(queued[i].len % ALIGN, 0);
		CHECK(queued[i].off <= end);
		if (queued[i].off + queued[i].len > end)
			end = queued[i].off + queued[i].len;
		if (queued[i].len < 24 * 1024)
			small++;
	}
	CHECK(small <= pool.finished + pool.busy + 2 * pads + pool.pads + 2);

	fd = openat(dirfd, tf->partial, O_RDONLY);
	CHECK(fd != -1 && fstat(fd, &st) == 0 &&
	    (uint64_t)st.st_size >= want_len);
	got = malloc(want_len);
	CHECK(got != NULL && pread(fd, got, want_len, 0) ==
	    (ssize_t)want_len);
	CHECK(got != NULL && memcmp(got, want, want_len) == 0);
	free(got);
	close(fd);
	record_pool_finish(&pool);
	unlinkat(dirfd, tf->partial, 0);
	tracefile_free(tf);
}

/* Block sizes, slices and counts: a ring's drain always fits a fresh
 * block. */
static void
test_sizes(void)
{
	size_t	 page = (size_t)sysconf(_SC_PAGESIZE);

	CHECK(record_pool_block(512 * 1024) >= 1024 * 1024 +
	    TRACEFILE_ALIGN_MAX);
	CHECK(record_pool_block(4 << 20) >= (8 << 20) + TRACEFILE_ALIGN_MAX);
	CHECK_EQ(record_pool_block(4096) % page, 0);
	/* slices of up to 4 MiB: a block under that goes out whole when
	 * finished */
	CHECK_EQ(record_pool_write(record_pool_block(512 * 1024 + 8)),
	    record_pool_block(512 * 1024 + 8) - TRACEFILE_ALIGN_MAX);
	CHECK_EQ(record_pool_write(record_pool_block(4 << 20)), 4 << 20);
	CHECK_EQ(record_pool_write(64 * 1024), 60 * 1024);
	CHECK_EQ(record_pool_count(0), 2);
	CHECK_EQ(record_pool_count(1), 2);
	CHECK_EQ(record_pool_count(4), 8);
	CHECK_EQ(record_pool_count(8), RECORD_POOL_BASE_MAX);
}

/*
 * The pool's shape: the units cblocks buy, merged into blocks of up to
 * a 4 MiB slice, at least 2 blocks, so that the bytes held are those of
 * the units and requests are as large as they can be.
 */
static void
test_shape(void)
{
	size_t			 small = 512 * 1024 + 16, big = 1024 * 1024 + 16;
	size_t			 u = record_pool_block(small);
	size_t			 v = record_pool_block(big);
	struct record_pool_shape s;

	/* the defaults (128 pages, cblocks 2): 4 units in 2 blocks of 2,
	 * 8 under a burst, the bytes of 16 units as before */
	record_pool_shape(2, small, 0, 0, &s);
	CHECK_EQ(s.cap, 2 * u);
	CHECK_EQ(s.write, 2 * u - TRACEFILE_ALIGN_MAX);
	CHECK_EQ(s.base, 2);
	CHECK_EQ(s.bound, 8);
	/* the storm's (cblocks 4): 2 blocks of 4 units, slices of 4 MiB */
	record_pool_shape(4, small, 0, 0, &s);
	CHECK_EQ(s.cap, 4 * u);
	CHECK_EQ(s.write, 4 << 20);
	CHECK_EQ(s.base, 2);
	CHECK_EQ(s.bound, 8);
	/* the shipped config's (256 pages, cblocks 2): 2 blocks of 2 units
	 * of 2 MiB and a bit, slices of 4 MiB */
	record_pool_shape(2, big, 0, 0, &s);
	CHECK_EQ(s.cap, 2 * v);
	CHECK_EQ(s.write, 4 << 20);
	CHECK_EQ(s.base, 2);
	/* cblocks 1: 2 units, not merged; cblocks 3: 2 blocks of 3 */
	record_pool_shape(1, small, 0, 0, &s);
	CHECK_EQ(s.cap, u);
	CHECK_EQ(s.base, 2);
	record_pool_shape(3, small, 0, 0, &s);
	CHECK_EQ(s.cap, 3 * u);
	CHECK_EQ(s.base, 2);
	/* cblocks 8: 16 units, 4 blocks of 4; 16 under a burst (48 MiB
	 * past the base, within the 64 the bound allows) */
	record_pool_shape(8, small, 0, 0, &s);
	CHECK_EQ(s.cap, 4 * u);
	CHECK_EQ(s.base, 4);
	CHECK_EQ(s.bound, 16);
	/* a pool made keeps its blocks: cblocks 2 -> 4 doubles their
	 * number, 4 -> 1 keeps 2 of them */
	record_pool_shape(4, small, 2 * u, 0, &s);
	CHECK_EQ(s.cap, 2 * u);
	CHECK_EQ(s.base, 4);
	record_pool_shape(1, small, 4 * u, 0, &s);
	CHECK_EQ(s.cap, 4 * u);
	CHECK_EQ(s.base, 2);
	/* a ring of 4 MiB: units past a slice are not merged, and the
	 * bound is the base and 64 MiB */
	record_pool_shape(8, (4 << 20) + 16, 0, 0, &s);
	CHECK_EQ(s.cap, record_pool_block((4 << 20) + 16));
	CHECK_EQ(s.base, 16);
	CHECK_EQ(s.bound, 16 + (64 << 20) / s.cap);
	/* a file system of a few MiB: slices of a sixteenth of it, at
	 * least 1 MiB, in blocks of the same size; 64 MiB and more: 4 MiB */
	record_pool_shape(4, small, 0, 6000000, &s);
	CHECK_EQ(s.cap, 4 * u);
	CHECK_EQ(s.write, RECORD_POOL_MIN_BLOCK);
	record_pool_shape(4, small, 0, 32 << 20, &s);
	CHECK_EQ(s.write, 2 << 20);
	record_pool_shape(4, small, 0, 64 << 20, &s);
	CHECK_EQ(s.write, 4 << 20);
	/* a test's bound, below the base, lowers the base too */
	setenv("PERFSPILL_TEST_POOL_BOUND", "1", 1);
	record_pool_shape(4, small, 0, 0, &s);
	CHECK_EQ(s.bound, 1);
	CHECK_EQ(s.base, 1);
	unsetenv("PERFSPILL_TEST_POOL_BOUND");
}

/*
 * The elastic pool: a slow disk (nothing completes) makes the pool grow
 * past its base up to its bound, then refuse; the spill then writes the
 * chunk through the page cache from where the direct requests end, so
 * that no two writes overlap and the file is the stream byte for byte;
 * the blocks past the base go back once a look finds them unused.
 */
static void
test_elastic(int dirfd)
{
	struct cblock_queue	 q;
	struct record_pool	 pool;
	struct tracefile_mark	 mark = { 1, 0, 0 };
	struct tracefile	*tf = open_file(dirfd);
	struct stat		 st;
	static uint8_t		 chunk[5000];
	uint8_t			*got;
	uint64_t		 a;
	size_t			 i;
	int			 fd;

	want_len = 0;
	npending = nqueued = 0;
	cblock_queue_init(&q);
	CHECK_EQ(record_pool_init(&pool, &q, 8192, 4096, 2), 0);
	record_pool_set_bound(&pool, 4);
	CHECK_EQ(pool.want, 2);
	CHECK_EQ(pool.max, 4);
	/* each drain of 5000 finishes the block before it; none lands */
	for (i = 0; i < 4; i++)
		CHECK(put(&pool, tf, 5000, 0) != NULL);
	CHECK_EQ(pool.nr, 4);
	CHECK_EQ(pool.grown, 2);
	CHECK_EQ(pool.peak, 4);
	CHECK_EQ(record_pool_bytes(&pool), 4 * 8192);
	/* at the bound: no room */
	CHECK(record_pool_room(&pool, tf, 5008, 0) == NULL);
	CHECK_EQ(pool.nr, 4);

	/* the spill: from the tail's aligned offset, after every request */
	CHECK_EQ(record_pool_spill_ready(&pool, tf), 0);
	CHECK(pool.open == NULL);
	a = want_len - want_len % ALIGN;
	CHECK_EQ(tf->direct.tail_len, want_len % ALIGN);
	for (i = 0; i < nqueued; i++)
		CHECK(queued[i].off + queued[i].len <= a);
	fill(chunk, sizeof(chunk));
	CHECK_EQ(record_pool_spill(&pool, tf, chunk, sizeof(chunk), &mark),
	    0);
	CHECK_EQ(pool.spills, 1);
	CHECK_EQ(pool.spill_bytes, sizeof(chunk));
	CHECK_EQ(tf->reserved, want_len);
	CHECK_EQ(tf->direct.tail_len, want_len % ALIGN);
	CHECK(memcmp(tf->direct.tail, want + want_len - want_len % ALIGN,
	    tf->direct.tail_len) == 0);
	/* a small spill only grows the tail */
	fill(chunk, 10);
	CHECK_EQ(record_pool_spill(&pool, tf, chunk, 10, NULL), 0);
	CHECK_EQ(tf->direct.tail_len, want_len % ALIGN);

	/* the disk catches up; the stream goes on in the pool, its lead
	 * the spill's tail */
	disk_run(npending);
	reap(&q);
	CHECK(put(&pool, tf, 3000, 0) != NULL);
	CHECK(pool.open == &pool.blocks[0]);
	CHECK_EQ(pool.blocks[0].off, (want_len - 3000) -
	    (want_len - 3000) % ALIGN);
	record_pool_detach(&pool, tf);
	disk_run(npending);
	reap(&q);
	CHECK_EQ(tracefile_direct_end(tf), 0);
	CHECK_EQ(tf->frontier, tf->reserved);
	CHECK_EQ(tf->inflight, 0);
	CHECK_EQ(tf->bad_off, UINT64_MAX);
	CHECK_EQ(tf->kept.samples, 6);
	if ((fd = openat(dirfd, tf->partial, O_RDONLY)) == -1 ||
	    fstat(fd, &st) == -1 || (got = malloc(want_len)) == NULL)
		abort();
	CHECK_EQ((uint64_t)st.st_size, want_len);
	CHECK_EQ(pread(fd, got, want_len, 0), (ssize_t)want_len);
	CHECK(memcmp(got, want, want_len) == 0);
	free(got);
	close(fd);

	/* the burst is over: the first look clears what was used, the next
	 * gives the blocks past the base back, the base stays */
	record_pool_shrink(&pool);
	CHECK_EQ(pool.nr, 4);
	record_pool_shrink(&pool);
	CHECK_EQ(pool.nr, 2);
	CHECK_EQ(pool.shrunk, 2);
	CHECK_EQ(record_pool_bytes(&pool), 2 * 8192);
	/* a bound below the base lowers it (tests' spill) */
	record_pool_set_bound(&pool, 1);
	CHECK_EQ(pool.want, 1);
	CHECK_EQ(pool.nr, 1);
	record_pool_finish(&pool);
	unlinkat(dirfd, tf->partial, 0);
	tracefile_free(tf);
}

int
main(void)
{
	char	 dir[] = "./test-record-pool-XXXXXX";
	int	 dirfd;

	if (mkdtemp(dir) == NULL ||
	    (dirfd = open(dir, O_RDONLY | O_DIRECTORY)) == -1) {
		perror(dir);
		return 1;
	}
	test_blocks(dirfd);
	test_pad(dirfd);
	test_cache(dirfd);
	test_stream(dirfd);
	test_elastic(dirfd);
	test_sizes();
	test_shape();
	close(dirfd);
	rmdir(dir);
	return check_exit();
}

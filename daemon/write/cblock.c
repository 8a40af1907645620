/*
 * cblock picks, submits and completes AIO control blocks (see
 * cblock.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cblock.h"
#include "log.h"
#include "tracefile.h"

/*
 * Fault the pages in now: touched first by a drain, they cost tens of
 * milliseconds of page faults while the rings fill (lost events at the
 * start of a recording). Not memset(0): the compiler turns malloc and
 * memset(0) into calloc, which leaves fresh pages untouched.
 */
uint8_t *
cblock_buffer(size_t len)
{
	volatile uint8_t	*v;
	void			*buf;
	size_t			 i, psz = (size_t)sysconf(_SC_PAGESIZE);

	/* page-aligned: a direct write's buffer must be (tracefile-direct) */
	if (posix_memalign(&buf, psz, len > 0 ? len : 1) != 0)
		return NULL;
	v = buf;
	for (i = 0; i < len; i += psz)
		v[i] = 0;
	if (len > 0)
		v[len - 1] = 0;
	return buf;
}

int
cblock_init(struct cblock *cb, size_t cap)
{
	memset(cb, 0, sizeof(*cb));
	if ((cb->buf = cblock_buffer(cap)) == NULL)
		return -1;
	cb->cap = cap;
	return 0;
}

void
cblock_finish(struct cblock *cb)
{
	if (cb == NULL)
		return;
	free(cb->buf);
	cb->buf = NULL;
	cb->cap = 0;
}

struct cblock *
cblock_create_heap(uint8_t *buf, size_t len, struct cblock_stats *stats)
{
	struct cblock	*cb;

	if ((cb = calloc(1, sizeof(*cb))) == NULL)
		return NULL;
	cb->buf = buf;
	cb->cap = cb->len = len;
	cb->heap = 1;
	cb->stats = stats;
	return cb;
}

struct cblock *
cblock_create_slice(uint8_t *buf, size_t len, unsigned int *slices,
    struct cblock_stats *stats)
{
	struct cblock	*cb;

	if ((cb = cblock_create_heap(buf, len, stats)) == NULL)
		return NULL;
	cb->slices = slices;
	(*slices)++;
	return cb;
}

/* A one-shot request is done with: its struct goes, and its buffer
 * unless that is a pool block's. */
static void
cblock_drop(struct cblock *cb)
{
	if (!cb->heap)
		return;
	if (cb->slices != NULL)
		(*cb->slices)--;
	else
		free(cb->buf);
	free(cb);
}

int
cblock_pick(const struct cblock *cbs, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (!cbs[i].busy)
			return (int)i;
	return -1;
}

enum cblock_step
cblock_step(struct cblock *cb, int aio_err, ssize_t ret)
{
	if (aio_err == EINPROGRESS)
		return CBLOCK_INPROGRESS;
	if (aio_err != 0 || ret < 0) {
		cb->err = aio_err ? aio_err : EIO;
		return CBLOCK_FAILED;
	}
	if (ret == 0) {
		/* no progress at all: resubmitting would spin forever */
		cb->err = ENOSPC;
		return CBLOCK_FAILED;
	}
	cb->done += (size_t)ret;
	if (cb->done < cb->len)
		return CBLOCK_RESUBMIT;
	return CBLOCK_DONE;
}

void
cblock_queue_init(struct cblock_queue *q)
{
	TAILQ_INIT(&q->busy);
	q->nr_busy = 0;
	const char	*e = getenv("PERFSPILL_TEST_WRITE_HOLD_MS");
	long		 v;

	q->writeback = 0;
	q->prio = 0;
	q->hold_ms = 0;
	if (e != NULL && (v = strtol(e, NULL, 10)) > 0 && v <= 10000)
		q->hold_ms = v;
	q->hold_while = getenv("PERFSPILL_TEST_WRITE_HOLD_WHILE");
}

/* 1 while the hold hook keeps cb's finished request busy. */
static int
cblock_held(const struct cblock_queue *q, const struct cblock *cb)
{
	struct timespec	 now;
	long long	 ms;

	if (q->hold_ms == 0 ||
	    (q->hold_while != NULL && access(q->hold_while, F_OK) == -1))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(now.tv_sec - cb->sent.tv_sec) * 1000 +
	    (now.tv_nsec - cb->sent.tv_nsec) / 1000000;
	return ms < q->hold_ms;
}

void
cblock_queue_writeback(struct cblock_queue *q, int on)
{
	q->writeback = on;
}

/*
 * A request of cb has landed in the page cache. Start its disk write now
 * rather than when the dirty limits force it: a recorder writing at a
 * steady rate then never owns a pile of dirty pages that writeback must
 * work through all at once, throttling every writer on the disk (ours
 * included) meanwhile. SYNC_FILE_RANGE_WRITE alone does not wait for the
 * disk. The cblock's request before this one was handed over a round
 * ago and is most likely clean now: drop it, as nothing reads a trace
 * file back while it is written. Pages still dirty or under writeback
 * are left alone by the kernel, so this loses nothing. Both are hints:
 * their errors change nothing. wb_tf is only compared, never followed:
 * a new file at a freed one's address at worst gets a useless hint.
 */
static void
cblock_writeback(struct cblock *cb)
{
	int	 fd = cb->tf->fd;

	(void)sync_file_range(fd, (off_t)cb->off, (off_t)cb->len,
	    SYNC_FILE_RANGE_WRITE);
	if (cb->wb_tf == cb->tf && cb->wb_len > 0)
		(void)posix_fadvise(fd, (off_t)cb->wb_off, (off_t)cb->wb_len,
		    POSIX_FADV_DONTNEED);
	cb->wb_tf = cb->tf;
	cb->wb_off = cb->off;
	cb->wb_len = cb->len;
}

/* The calling thread's SCHED_FIFO priority, as it declared it. */
static _Thread_local int cblock_self_prio;

void
cblock_queue_prio(struct cblock_queue *q, int prio)
{
	q->prio = prio;
}

void
cblock_thread_prio(int prio)
{
	cblock_self_prio = prio;
}

static _Thread_local int cblock_self_pinned;
static _Thread_local cpu_set_t cblock_self_all, cblock_self_own;

void
cblock_thread_pin(const cpu_set_t *all, const cpu_set_t *own)
{
	cblock_self_all = *all;
	cblock_self_own = *own;
	cblock_self_pinned = 1;
}

/* aio_write at q's priority (cblock_queue_prio), from every CPU
 * (cblock_thread_pin). */
static int
cblock_aio_submit(struct cblock_queue *q, struct aiocb *aio)
{
	struct sched_param	 sp, was;
	int			 pol, rc, e, reprio;

	reprio = q->prio != cblock_self_prio &&
	    pthread_getschedparam(pthread_self(), &pol, &was) == 0;
	if (reprio) {
		memset(&sp, 0, sizeof(sp));
		sp.sched_priority = q->prio;
		(void)pthread_setschedparam(pthread_self(), q->prio ?
		    SCHED_FIFO : SCHED_OTHER, &sp);
	}
	if (cblock_self_pinned)
		(void)pthread_setaffinity_np(pthread_self(),
		    sizeof(cblock_self_all), &cblock_self_all);
	rc = aio_write(aio);
	e = errno;
	if (cblock_self_pinned)
		(void)pthread_setaffinity_np(pthread_self(),
		    sizeof(cblock_self_own), &cblock_self_own);
	if (reprio)
		(void)pthread_setschedparam(pthread_self(), pol, &was);
	errno = e;
	return rc;
}

/* The file offset of a pad's padded tail block. */
static uint64_t
cblock_pad_off(const struct cblock *cb)
{
	return cb->off + cb->stream;
}

/* The stream bytes of a request: all of them, or a pad's before its
 * padded tail. */
static size_t
cblock_stream_len(const struct cblock *cb)
{
	return cb->pad ? cb->stream : cb->len;
}

static int
cblock_aio_write(struct cblock_queue *q, struct cblock *cb)
{
	memset(&cb->aio, 0, sizeof(cb->aio));
	cb->aio.aio_fildes = cb->fd;
	cb->aio.aio_buf = cb->buf + cb->done;
	cb->aio.aio_nbytes = cb->len - cb->done;
	cb->aio.aio_offset = (off_t)(cb->off + cb->done);
	/*
	 * aio_reqprio 0, not perf's multi-AIO rule max(_SC_AIO_PRIO_DELTA_MAX
	 * - i, 0). glibc gives a request the caller's priority minus
	 * aio_reqprio, and its AIO thread calls pthread_setschedparam
	 * whenever that differs from the last request's: under SCHED_OTHER
	 * (priority 0) and at any SCHED_FIFO priority below the delta the
	 * result is negative, so every change of cblock cost a failed
	 * sched_setscheduler (about one write in three with 4 cblocks,
	 * bench/history/2026-12-03/notes.md). Order on disk never depended
	 * on it: each request carries its own offset. At 0 the AIO threads
	 * follow the loop's policy. No signal either: the loop reaps on
	 * every pass.
	 */
	cb->aio.aio_reqprio = 0;
	cb->aio.aio_sigevent.sigev_notify = SIGEV_NONE;
	/*
	 * glibc refuses for a moment when it has no room for a request or
	 * no thread to run it. Its threads finish earlier requests without
	 * us: the request waits in the busy set, deferred, and the next
	 * reap (every drain pass, the reaper while a file is finished)
	 * offers it again, rather than the loop sleeping here. Its offset
	 * is reserved, so the order of the queue does not matter.
	 */
	cb->deferred = 0;
	if (q->hold_ms != 0)
		clock_gettime(CLOCK_MONOTONIC, &cb->sent);
	if (cb->refused && cb->pad && cb->refused++ <= CBLOCK_TEST_REFUSALS &&
	    tracefile_direct_pad_current(cb->tf, cblock_pad_off(cb),
	    cb->pad_seq)) {
		cb->deferred = 1;
		return 0;
	}
	if (cblock_aio_submit(q, &cb->aio) == -1) {
		if (errno != EAGAIN)
			return -1;
		cb->deferred = 1;
	}
	return 0;
}

static void
cblock_release(struct cblock_queue *q, struct cblock *cb)
{
	TAILQ_REMOVE(&q->busy, cb, entry);
	q->nr_busy--;
	cb->busy = 0;
	cb->stats->inflight--;
	cb->tf = NULL;
	cblock_drop(cb);
}

/* What a finished request tells its file. A padded tail is not part of
 * the file's stream: a request of one alone only ends; one after the
 * stream's bytes ends with them, whole once they are written whatever
 * became of the tail (the stream's next request writes its block). */
static void
cblock_completed(struct cblock *cb, size_t written, int err)
{
	size_t	 n = cblock_stream_len(cb);

	if (n == 0)
		tracefile_completed(cb->tf, UINT64_MAX, 0, 0);
	else if (written >= n)
		tracefile_completed(cb->tf, cb->off, n, 0);
	else
		tracefile_completed(cb->tf, cb->off, written, err);
}

/* A pad's request, its padded tail left out (its block is the stream's
 * next request's to write): its stream's bytes alone, as a plain one. */
static void
cblock_stream_only(struct cblock *cb)
{
	cb->len = cb->stream;
	cb->pad = 0;
	cb->stream = 0;
}

/*
 * A pad whose block the stream's next request took since, or a later
 * pad: written now, its tail would land after them and put zeros into
 * the file. Its stream's bytes alone are left to write (1), or none
 * (0: it ends). Called for a request glibc does not hold (deferred, or
 * partly written).
 */
static int
cblock_unpad(struct cblock *cb)
{
	if (!cb->pad || tracefile_direct_pad_current(cb->tf,
	    cblock_pad_off(cb), cb->pad_seq))
		return 1;
	if (cb->stream == 0 || cb->done >= cb->stream)
		return 0;
	cblock_stream_only(cb);
	return 1;
}

/* A request that cblock_unpad ended: whole as far as it got (cb->done,
 * all of its stream's bytes), released without another write. */
static void
cblock_unpadded_end(struct cblock_queue *q, struct cblock *cb)
{
	cb->stats->completed++;
	cb->stats->bytes_written += cblock_stream_len(cb);
	cblock_completed(cb, cb->done, 0);
	cblock_release(q, cb);
}

/*
 * A direct write refused with EINVAL: the file system takes O_DIRECT at
 * open but not at write (some FUSE and network file systems). The file
 * goes on through its buffered descriptor, this request first. 0 when
 * it was queued again there.
 */
static int
cblock_retry_buffered(struct cblock_queue *q, struct cblock *cb)
{
	int	 fd;

	if (cb->done != 0 ||
	    (fd = tracefile_direct_refuse(cb->tf, cb->fd, cb->err)) == -1)
		return -1;
	if (cb->pad && cb->stream == 0)
		return -1;	/* the stream's next request writes it */
	/* the same: the stream's bytes before it go alone */
	if (cb->pad)
		cblock_stream_only(cb);
	cb->fd = fd;
	cb->err = 0;
	cb->stats->resubmitted++;
	if (cblock_aio_write(q, cb) == -1) {
		cb->err = errno;
		return -1;
	}
	return 0;
}

/* The test hook's padded tail: the Nth of the daemon, N from
 * PERFSPILL_TEST_PAD_EAGAIN (cblock.h); 0 when the hook is off. */
static int
cblock_test_refuse(void)
{
	static _Atomic long	 n = -1, pads;
	const char		*e;
	long			 want = atomic_load(&n);

	if (want == -1) {
		e = getenv("PERFSPILL_TEST_PAD_EAGAIN");
		want = e != NULL ? strtol(e, NULL, 10) : 0;
		atomic_store(&n, want > 0 ? want : 0);
	}
	return want > 0 && atomic_fetch_add(&pads, 1) + 1 == want;
}

int
cblock_submit(struct cblock_queue *q, struct cblock *cb, struct tracefile *tf,
    uint64_t off, int fd)
{
	cb->tf = tf;
	cb->fd = fd;
	cb->off = off;
	cb->done = 0;
	cb->err = 0;
	cb->refused = 0;
	/* a pad is submitted as it is made: it is its file's last */
	if (cb->pad) {
		cb->pad_seq = tracefile_direct_pads(tf);
		cb->refused = cblock_test_refuse();
	}
	cb->stats->submitted++;
	if (cblock_aio_write(q, cb) == -1) {
		int	 saved = errno;

		/* never queued: not busy, and its bytes will not land */
		cb->stats->failed++;
		cb->stats->bytes_dropped += cblock_stream_len(cb);
		tracefile_failed(tf, off, saved);
		cb->busy = 0;
		cb->tf = NULL;
		cblock_drop(cb);
		errno = saved;
		return -1;
	}
	/* in the busy set only once glibc owns the request */
	cb->busy = 1;
	TAILQ_INSERT_TAIL(&q->busy, cb, entry);
	q->nr_busy++;
	tracefile_queued(tf, off, cblock_stream_len(cb));
	cb->stats->inflight++;
	return 0;
}

size_t
cblock_reap(struct cblock_queue *q)
{
	struct cblock	*cb, *next;
	enum cblock_step step;
	int		 e;
	ssize_t		 ret;

	for (cb = TAILQ_FIRST(&q->busy); cb != NULL; cb = next) {
		next = TAILQ_NEXT(cb, entry);
		if (cb->deferred && cblock_unpad(cb) == 0) {
			/* its block is the stream's again, or a later pad's:
			 * written now, it would land after them */
			cblock_unpadded_end(q, cb);
			continue;
		}
		if (cb->deferred) {
			/* its aiocb was never queued: aio_error cannot say */
			cb->stats->resubmitted++;
			if (cblock_aio_write(q, cb) == 0)
				continue;
			cb->err = errno;
			step = CBLOCK_FAILED;
		} else {
			e = aio_error(&cb->aio);
			if (e != EINPROGRESS && cblock_held(q, cb))
				e = EINPROGRESS;
			ret = e == EINPROGRESS ? 0 : aio_return(&cb->aio);
			step = cblock_step(cb, e, ret);
		}
		switch (step) {
		case CBLOCK_INPROGRESS:
			break;
		case CBLOCK_RESUBMIT:
			if (cblock_unpad(cb) == 0) {
				cblock_unpadded_end(q, cb);
				break;
			}
			cb->stats->resubmitted++;
			if (cblock_aio_write(q, cb) == 0)
				break;
			cb->err = errno;
			/* FALLTHROUGH */
		case CBLOCK_FAILED:
			if (cblock_retry_buffered(q, cb) == 0)
				break;
			/* a padded tail's bytes are written again later */
			if (cb->done < cblock_stream_len(cb)) {
				cb->stats->failed++;
				cb->stats->bytes_dropped +=
				    cblock_stream_len(cb) - cb->done;
				cb->stats->bytes_written += cb->done;
			} else
				cb->stats->bytes_written +=
				    cblock_stream_len(cb);
			/* failed at the request's start: the part written
			 * may end inside a record */
			cblock_completed(cb, cb->done, cb->err);
			cblock_release(q, cb);
			break;
		case CBLOCK_DONE:
			cb->stats->completed++;
			cb->stats->bytes_written += cblock_stream_len(cb);
			cblock_completed(cb, cb->len, 0);
			if (q->writeback && !cb->heap && cb->fd == cb->tf->fd)
				cblock_writeback(cb);
			cblock_release(q, cb);
			break;
		}
	}
	return q->nr_busy;
}

/*
 * Sleep until one of list completes. 0, or -1 when waiting cannot work.
 * Under the hold hook a finished request still counts as busy, and
 * aio_suspend returns at once for it: a millisecond's sleep keeps the
 * waiter from spinning (at SCHED_FIFO, on the drain thread).
 */
static int
cblock_suspend(const struct cblock_queue *q, const struct aiocb *const *list,
    size_t k)
{
	const struct timespec	 ms = { 0, 1000000 };

	if (aio_suspend(list, (int)k, NULL) == -1 && errno != EINTR &&
	    errno != EAGAIN)
		return -1;
	if (q->hold_ms != 0)
		nanosleep(&ms, NULL);
	return 0;
}

void
cblock_wait(struct cblock_queue *q, struct cblock *cbs, size_t n)
{
	const struct aiocb	*list[64];
	size_t			 i, k;

	for (;;) {
		cblock_reap(q);
		for (i = k = 0; i < n && k < 64; i++) {
			if (!cbs[i].busy)
				return;
			if (!cbs[i].deferred)
				list[k++] = &cbs[i].aio;
		}
		if (k == 0 || cblock_suspend(q, list, k) == -1)
			return;
	}
}

/* The aiocbs glibc holds of q, at most n of them, into list. */
static size_t
cblock_glibc(struct cblock_queue *q, const struct aiocb **list, size_t n)
{
	struct cblock	*cb;
	size_t		 k = 0;

	TAILQ_FOREACH(cb, &q->busy, entry)
		if (!cb->deferred && k < n)
			list[k++] = &cb->aio;
	return k;
}

int
cblock_wait_any(struct cblock_queue *q)
{
	const struct aiocb	*list[64];
	size_t			 n = q->nr_busy, k;

	while (cblock_reap(q) >= n) {
		if (n == 0 || (k = cblock_glibc(q, list, 64)) == 0 ||
		    cblock_suspend(q, list, k) == -1)
			return -1;
	}
	return 0;
}

void
cblock_wait_all(struct cblock_queue *q)
{
	const struct aiocb	*list[64];
	size_t			 k;

	while (cblock_reap(q) > 0) {
		if ((k = cblock_glibc(q, list, 64)) == 0 ||
		    cblock_suspend(q, list, k) == -1)
			return;
	}
}

int
cblock_pad_busy(const struct cblock_queue *q, const struct tracefile *tf,
    uint64_t off)
{
	const struct cblock	*cb;

	TAILQ_FOREACH(cb, &q->busy, entry)
		if (cb->pad && cb->tf == tf && cblock_pad_off(cb) == off)
			return 1;
	return 0;
}

int
cblock_wait_pads(struct cblock_queue *q, const struct tracefile *tf)
{
	const struct aiocb	*list[64];
	struct cblock		*cb;
	size_t			 k;

	for (;;) {
		cblock_reap(q);
		k = 0;
		TAILQ_FOREACH(cb, &q->busy, entry) {
			if (!cb->pad || cb->tf != tf)
				continue;
			if (cb->deferred)
				return -1;
			if (k < 64)
				list[k++] = &cb->aio;
		}
		if (k == 0)
			return 0;
		if (cblock_suspend(q, list, k) == -1)
			return -1;
	}
}

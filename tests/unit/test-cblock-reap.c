/*
 * test-cblock-reap: cblock_submit, cblock_reap and cblock_wait against a
 * fake AIO layer, so that partial writes, refusals and failures happen
 * when the test says and not when the disk does.
 *
 * This binary defines aio_write, aio_error, aio_return and aio_suspend
 * itself; the linker resolves libdaemon's calls to them here before it
 * looks at the C library. The fakes keep their state where glibc does, in
 * the aiocb's __error_code and __return_value, and like glibc they leave
 * both alone when they refuse a request: an aiocb that was never queued
 * reads as error 0, return 0.
 */
#include <aio.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cblock.h"
#include "check.h"
#include "fake-aio.h"
#include "tracefile.h"

#define MAXREQ	64

/* What the next calls of aio_write do: 0 queues, an errno refuses. */
static int	 script[8];
static size_t	 nscript;

/* Every request aio_write accepted, in order. */
static struct aiocb	 reqs[MAXREQ];
static struct aiocb	*reqp[MAXREQ];
static size_t		 nreqs;
static unsigned int	 nwrite_calls;

int
aio_write(struct aiocb *cb)
{
	int	 e;

	nwrite_calls++;
	if (nscript > 0) {
		e = script[0];
		memmove(script, script + 1, --nscript * sizeof(script[0]));
		if (e != 0) {
			errno = e;
			return -1;
		}
	}
	if (nreqs < MAXREQ) {
		reqs[nreqs] = *cb;
		reqp[nreqs++] = cb;
	}
	cb->__error_code = EINPROGRESS;
	cb->__return_value = 0;
	return 0;
}

/* Completes every request still in progress, in full: the disk caught up
 * while the daemon slept. */
int
aio_suspend(const struct aiocb *const list[], int n, const struct timespec *ts)
{
	struct aiocb	*cb;
	int		 i;

	for (i = 0; i < n; i++) {
		cb = (struct aiocb *)(uintptr_t)list[i];
		if (cb->__error_code == EINPROGRESS) {
			cb->__error_code = 0;
			cb->__return_value = (ssize_t)cb->aio_nbytes;
		}
	}
	return 0;
}

static void
fake_reset(void)
{
	nscript = 0;
	nreqs = 0;
	nwrite_calls = 0;
	memset(reqs, 0, sizeof(reqs));
}

static void
fake_refuse(int e)
{
	if (nscript < sizeof(script) / sizeof(script[0]))
		script[nscript++] = e;
}

static void
fake_complete(struct cblock *cb, int e, ssize_t ret)
{
	cb->aio.__error_code = e;
	cb->aio.__return_value = ret;
}

struct fixture {
	struct cblock_queue	 q;
	struct cblock		 cbs[2];
	struct cblock_stats	 stats;
	struct tracefile	 tf;
};

static void
setup(struct fixture *f)
{
	int	 i;

	fake_reset();
	memset(f, 0, sizeof(*f));
	cblock_queue_init(&f->q);
	for (i = 0; i < 2; i++) {
		if (cblock_init(&f->cbs[i], 4096) == -1)
			abort();
		f->cbs[i].stats = &f->stats;
		f->cbs[i].len = 4096;
		memset(f->cbs[i].buf, 'a' + i, 4096);
	}
	/* only what cblock touches: never opened, never closed */
	f->tf.fd = 1000;
	f->tf.bad_off = UINT64_MAX;
	tracefile_direct_init(&f->tf);
}

/* cb's one request failed: dropped bytes lost, the file cut at bad_off. */
static void
check_refused(struct fixture *f, struct cblock *cb, uint64_t dropped,
    uint64_t bad_off, int err)
{
	CHECK_EQ(cb->busy, 0);
	CHECK_U64(f->stats.failed, 1);
	CHECK_U64(f->stats.bytes_dropped, dropped);
	CHECK_U64(f->tf.bad_off, bad_off);
	CHECK_EQ(f->tf.err, err);
	CHECK_EQ(f->tf.inflight, 0);
}

static void
teardown(struct fixture *f)
{
	cblock_finish(&f->cbs[0]);
	cblock_finish(&f->cbs[1]);
	/* what submit queued against the file */
	free(f->tf.writes);
	free(f->tf.chunks);
}

static void
test_request(void)
{
	struct fixture	 f;
	struct cblock	*cb = &f.cbs[1];

	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 8192, f.tf.fd), 0);
	CHECK_EQ(nreqs, 1);
	CHECK(reqp[0] == &cb->aio);
	CHECK_EQ(reqs[0].aio_fildes, 1000);
	CHECK(reqs[0].aio_buf == cb->buf);
	CHECK_EQ(reqs[0].aio_nbytes, 4096);
	CHECK_EQ(reqs[0].aio_offset, 8192);
	CHECK_EQ(reqs[0].aio_reqprio, 0);
	/* polled: a signal could be lost at the rt-signal limit anyway */
	CHECK_EQ(reqs[0].aio_sigevent.sigev_notify, SIGEV_NONE);

	/* nothing happens until the request says so */
	CHECK_EQ(cblock_reap(&f.q), 1);
	CHECK_EQ(cblock_reap(&f.q), 1);
	CHECK_EQ(cb->busy, 1);
	fake_complete(cb, 0, 4096);
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_EQ(cb->busy, 0);
	CHECK(cb->tf == NULL);
	CHECK_U64(f.tf.written, 4096);
	CHECK_EQ(f.tf.inflight, 0);
	CHECK_U64(f.stats.completed, 1);
	CHECK_U64(f.stats.bytes_written, 4096);
	CHECK_U64(f.stats.inflight, 0);
	teardown(&f);
}

static void
test_partial(void)
{
	struct fixture	 f;
	struct cblock	*cb = &f.cbs[0];

	/* a short write is continued where it stopped */
	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 4096, f.tf.fd), 0);
	fake_complete(cb, 0, 1000);
	CHECK_EQ(cblock_reap(&f.q), 1);
	CHECK_EQ(nreqs, 2);
	CHECK(reqs[1].aio_buf == cb->buf + 1000);
	CHECK_EQ(reqs[1].aio_nbytes, 3096);
	CHECK_EQ(reqs[1].aio_offset, 4096 + 1000);
	CHECK_U64(f.stats.resubmitted, 1);
	CHECK_U64(f.tf.written, 0);
	fake_complete(cb, 0, 3096);
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_U64(f.tf.written, 4096);
	CHECK_U64(f.stats.completed, 1);
	CHECK_U64(f.stats.bytes_written, 4096);
	CHECK_U64(f.stats.failed, 0);
	CHECK_U64(f.tf.bad_off, UINT64_MAX);
	teardown(&f);

	/* a short write, then an error: the file is cut where the request
	 * began, a record boundary, not inside what was half written */
	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 4096, f.tf.fd), 0);
	fake_complete(cb, 0, 1000);
	CHECK_EQ(cblock_reap(&f.q), 1);
	fake_complete(cb, ENOSPC, -1);
	CHECK_EQ(cblock_reap(&f.q), 0);
	check_refused(&f, cb, 3096, 4096, ENOSPC);
	CHECK_U64(f.stats.bytes_written, 1000);
	teardown(&f);

	/* a short write whose continuation is refused */
	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 0, f.tf.fd), 0);
	fake_complete(cb, 0, 96);
	fake_refuse(EINVAL);
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_EQ(cb->busy, 0);
	CHECK_U64(f.stats.resubmitted, 1);
	CHECK_U64(f.stats.failed, 1);
	CHECK_U64(f.stats.bytes_dropped, 4000);
	CHECK_U64(f.tf.bad_off, 0);
	CHECK_EQ(f.tf.err, EINVAL);
	teardown(&f);

	/* no progress at all */
	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 0, f.tf.fd), 0);
	fake_complete(cb, 0, 0);
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_EQ(nreqs, 1);
	CHECK_U64(f.stats.failed, 1);
	CHECK_U64(f.tf.bad_off, 0);
	teardown(&f);
}

static void
test_refused(void)
{
	struct fixture	 f;
	struct cblock	*cb = &f.cbs[0];

	/* refused outright: not busy, counted as dropped, file cut there */
	setup(&f);
	fake_refuse(EINVAL);
	errno = 0;
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 12288, f.tf.fd), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(cb->busy, 0);
	CHECK_EQ(f.q.nr_busy, 0);
	CHECK(TAILQ_EMPTY(&f.q.busy));
	CHECK_EQ(f.tf.inflight, 0);
	CHECK_U64(f.stats.inflight, 0);
	CHECK_U64(f.stats.failed, 1);
	CHECK_U64(f.stats.bytes_dropped, 4096);
	CHECK_U64(f.tf.bad_off, 12288);
	CHECK_EQ(f.tf.err, EINVAL);
	/* the first failure wins: it is where the file is cut */
	fake_refuse(EIO);
	CHECK_EQ(cblock_submit(&f.q, &f.cbs[1], &f.tf, 16384, f.tf.fd), -1);
	CHECK_U64(f.tf.bad_off, 12288);
	CHECK_EQ(f.tf.err, EINVAL);
	teardown(&f);
}

/*
 * glibc refuses with EAGAIN while it cannot queue a request. cblock does
 * not wait for it: the request joins the busy set deferred, its aiocb
 * never asked about (it was not queued), and every reap offers it again
 * until glibc takes it or refuses it for good.
 */
static void
test_eagain(void)
{
	struct fixture	 f;
	struct cblock	*cb0 = &f.cbs[0], *cb1 = &f.cbs[1];

	setup(&f);
	fake_refuse(EAGAIN);
	CHECK_EQ(cblock_submit(&f.q, cb0, &f.tf, 0, f.tf.fd), 0);
	CHECK_EQ(nwrite_calls, 1);
	CHECK_EQ(cb0->busy, 1);
	CHECK_EQ(cb0->deferred, 1);
	CHECK_EQ(f.q.nr_busy, 1);
	CHECK_EQ(f.tf.inflight, 1);
	CHECK_U64(f.stats.inflight, 1);
	CHECK_U64(f.stats.failed, 0);
	CHECK_U64(f.stats.bytes_dropped, 0);
	CHECK_U64(f.tf.bad_off, UINT64_MAX);
	/* refused again at the first reap, taken at the second */
	fake_refuse(EAGAIN);
	CHECK_EQ(cblock_reap(&f.q), 1);
	CHECK_EQ(nwrite_calls, 2);
	CHECK_EQ(cb0->deferred, 1);
	CHECK_EQ(nreqs, 0);
	CHECK_EQ(cblock_reap(&f.q), 1);
	CHECK_EQ(nwrite_calls, 3);
	CHECK_EQ(cb0->deferred, 0);
	CHECK_EQ(nreqs, 1);
	CHECK_U64(reqs[0].aio_offset, 0);
	CHECK_EQ(reqs[0].aio_nbytes, 4096);
	fake_complete(cb0, 0, 4096);
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_U64(f.stats.completed, 1);
	CHECK_U64(f.tf.written, 4096);
	CHECK_EQ(f.tf.inflight, 0);
	teardown(&f);

	/* an EAGAIN leaves the other, completed, request to the next reap */
	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, cb0, &f.tf, 0, f.tf.fd), 0);
	fake_complete(cb0, 0, 4096);
	fake_refuse(EAGAIN);
	CHECK_EQ(cblock_submit(&f.q, cb1, &f.tf, 4096, f.tf.fd), 0);
	CHECK_EQ(cb0->busy, 1);
	CHECK_EQ(cb1->busy, 1);
	CHECK_EQ(f.q.nr_busy, 2);
	CHECK_U64(f.stats.completed, 0);
	CHECK_EQ(cblock_reap(&f.q), 1);
	CHECK_EQ(cb0->busy, 0);
	CHECK_EQ(cb1->deferred, 0);
	CHECK_U64(f.stats.completed, 1);
	CHECK_U64(f.stats.failed, 0);
	CHECK_U64(f.tf.bad_off, UINT64_MAX);
	teardown(&f);

	/* refused for good at a retry: failed, the file cut at its start */
	setup(&f);
	fake_refuse(EAGAIN);
	CHECK_EQ(cblock_submit(&f.q, cb1, &f.tf, 8192, f.tf.fd), 0);
	fake_refuse(EINVAL);
	CHECK_EQ(cblock_reap(&f.q), 0);
	check_refused(&f, cb1, 4096, 8192, EINVAL);
	teardown(&f);

	/* cblock_wait does not spin on requests glibc does not hold: with
	 * every cblock deferred it returns, and the drain leaves the data
	 * in the ring */
	setup(&f);
	fake_refuse(EAGAIN);
	fake_refuse(EAGAIN);
	CHECK_EQ(cblock_submit(&f.q, cb0, &f.tf, 0, f.tf.fd), 0);
	CHECK_EQ(cblock_submit(&f.q, cb1, &f.tf, 4096, f.tf.fd), 0);
	fake_refuse(EAGAIN);
	fake_refuse(EAGAIN);
	cblock_wait(&f.q, f.cbs, 2);
	CHECK_EQ(nwrite_calls, 4);
	CHECK_EQ(cblock_pick(f.cbs, 2), -1);
	/* glibc takes them now: the wait sleeps until they are done */
	cblock_wait(&f.q, f.cbs, 2);
	CHECK(cblock_pick(f.cbs, 2) != -1);
	cblock_wait_all(&f.q);
	CHECK_EQ(f.q.nr_busy, 0);
	CHECK_U64(f.stats.completed, 2);
	CHECK_U64(f.tf.written, 8192);
	teardown(&f);
}

static void
test_wait(void)
{
	struct fixture	 f;

	setup(&f);
	CHECK_EQ(cblock_submit(&f.q, &f.cbs[0], &f.tf, 0, f.tf.fd), 0);
	CHECK_EQ(cblock_submit(&f.q, &f.cbs[1], &f.tf, 4096, f.tf.fd), 0);
	CHECK_EQ(cblock_pick(f.cbs, 2), -1);
	cblock_wait(&f.q, f.cbs, 2);
	CHECK(cblock_pick(f.cbs, 2) != -1);
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_U64(f.stats.completed, 2);
	CHECK_U64(f.tf.written, 8192);

	/* returns at once when one is free already */
	CHECK_EQ(cblock_submit(&f.q, &f.cbs[0], &f.tf, 8192, f.tf.fd), 0);
	cblock_wait(&f.q, f.cbs, 2);
	CHECK_EQ(f.cbs[0].busy, 1);
	fake_complete(&f.cbs[0], 0, 4096);
	CHECK_EQ(cblock_reap(&f.q), 0);
	teardown(&f);
}

static void
test_heap(void)
{
	struct fixture	 f;
	struct cblock	*cb;
	uint8_t		*buf;

	setup(&f);
	if ((buf = malloc(64)) == NULL)
		abort();
	cb = cblock_create_heap(buf, 64, &f.stats);
	CHECK(cb != NULL);
	if (cb == NULL)
		return;
	CHECK_EQ(cb->heap, 1);
	CHECK_EQ(cb->len, 64);
	CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 0, f.tf.fd), 0);
	CHECK_EQ(reqs[0].aio_nbytes, 64);
	fake_complete(cb, 0, 64);
	/* freed here: a leak checker sees the rest */
	CHECK_EQ(cblock_reap(&f.q), 0);
	CHECK_U64(f.stats.completed, 1);
	CHECK_U64(f.tf.written, 64);
	teardown(&f);
}

/* A pad's request of stream bytes (0: a padded tail alone) and the
 * tail's block at 8192, the file left as tracefile_direct_pad and
 * tracefile_direct_pad_slice leave it: the pad current. */
static struct cblock *
pad_setup(struct fixture *f, size_t stream)
{
	struct cblock	*cb;
	uint8_t		*buf;

	setup(f);
	if ((buf = calloc(1, stream + 4096)) == NULL ||
	    (cb = cblock_create_heap(buf, stream + 4096, &f->stats)) == NULL)
		abort();
	cb->pad = 1;
	cb->stream = stream;
	f->tf.direct.nr_fds = 1;
	f->tf.direct.flush_off = 8192;
	f->tf.direct.pads = 1;
	return cb;
}

/* The pad's request ended as one completion, not a failure, nothing
 * left in flight and the file not cut; then the fixture goes. */
static void
pad_teardown(struct fixture *f)
{
	CHECK_U64(f->stats.completed, 1);
	CHECK_U64(f->stats.failed, 0);
	CHECK_U64(f->stats.inflight, 0);
	CHECK_EQ(f->tf.inflight, 0);
	CHECK_U64(f->tf.bad_off, UINT64_MAX);
	f->tf.direct.nr_fds = 0;
	teardown(f);
}

/*
 * A padded tail refused with EAGAIN waits in the busy set; offered again
 * while it is its file's current pad, it is dropped once the stream's
 * next request took its block, or a later pad replaced it: written then,
 * it would land after them and put zeros over records (issue 40).
 */
static void
test_stale_pad(void)
{
	struct fixture	 f;
	struct cblock	*cb;
	int		 later;

	for (later = 0; later < 2; later++) {
		cb = pad_setup(&f, 0);
		fake_refuse(EAGAIN);
		CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 8192, f.tf.fd), 0);
		CHECK_EQ(cb->deferred, 1);
		CHECK_U64(cb->pad_seq, 1);
		/* still current: offered again (and refused again) */
		fake_refuse(EAGAIN);
		CHECK_EQ(cblock_reap(&f.q), 1);
		CHECK_EQ(nwrite_calls, 2);
		CHECK_U64(f.stats.resubmitted, 1);
		if (later)
			f.tf.direct.pads = 2;
		else
			(void)tracefile_direct_slice(&f.tf, 8192);
		/* its block is taken: dropped unwritten, never offered */
		CHECK_EQ(cblock_reap(&f.q), 0);
		CHECK_EQ(nwrite_calls, 2);
		CHECK_EQ(nreqs, 0);
		pad_teardown(&f);
	}
}

/*
 * The pool's pad (record_pool_pad): one request of the stream's bytes
 * (here 4096 from 4096) and the padded tail's block after them (8192).
 * Refused with EAGAIN, and its tail's block taken meanwhile by the
 * stream's next request, it is offered again without that block: its
 * stream bytes alone, which land whole. Partly written (its stream
 * bytes, not the block) and its block taken, it ends there, not
 * offered again. Either way the file is not cut.
 */
static void
test_stale_pad_stream(void)
{
	struct fixture	 f;
	struct cblock	*cb;
	int		 partial;

	for (partial = 0; partial < 2; partial++) {
		cb = pad_setup(&f, 4096);
		if (!partial)
			fake_refuse(EAGAIN);
		CHECK_EQ(cblock_submit(&f.q, cb, &f.tf, 4096, f.tf.fd), 0);
		CHECK_EQ(cb->deferred, !partial);
		if (partial) {
			/* the stream's bytes are written, not the block */
			fake_complete(cb, 0, 4096);
			fake_refuse(EAGAIN);
			CHECK_EQ(cblock_reap(&f.q), 1);
			CHECK_EQ(cb->deferred, 1);
			CHECK_U64(cb->done, 4096);
		}
		(void)tracefile_direct_slice(&f.tf, 8192);
		nreqs = 0;
		if (!partial) {
			/* offered again: the stream's bytes alone */
			CHECK_EQ(cblock_reap(&f.q), 1);
			CHECK_EQ(nreqs, 1);
			CHECK_U64(reqs[0].aio_offset, 4096);
			CHECK_U64(reqs[0].aio_nbytes, 4096);
			CHECK_EQ(cb->pad, 0);
			fake_complete(cb, 0, 4096);
		}
		CHECK_EQ(cblock_reap(&f.q), 0);
		if (partial)
			CHECK_EQ(nreqs, 0);
		CHECK_U64(f.stats.bytes_written, 4096);
		CHECK_U64(f.tf.written, 4096);
		pad_teardown(&f);
	}
}

int
main(void)
{
	test_request();
	test_partial();
	test_refused();
	test_eagain();
	test_wait();
	test_heap();
	test_stale_pad();
	test_stale_pad_stream();
	return check_exit();
}

/*
 * writer: the three ways a recording's bytes reach its file (write.h),
 * each a table of the same operations, and the one place that chooses
 * among them (writer_choose). Everything here runs under the recording's
 * lock.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <linux/perf_event.h>

#include "log.h"
#include "tracefile.h"

/* A cblock's room for the direct stream's lead (tracefile.h). */
#define WRITER_LEAD_MAX		TRACEFILE_ALIGN_MAX

struct writer_ops {
	const char	*name;
	int		(*room)(struct writer *, struct writer_lane *,
			    size_t need, int last, struct writer_room *);
	void		(*put)(struct writer *, struct writer_lane *,
			    struct writer_room *, const uint8_t *, size_t,
			    const struct tracefile_mark *);
	void		(*round)(struct writer *);
	void		(*flush)(struct writer *, int last);
	int		(*extra)(struct writer *, uint8_t *, size_t,
			    const struct tracefile_mark *);
	void		(*pad)(struct writer *);
};

static const struct perf_event_header writer_round_hdr = {
	PERF_RECORD_FINISHED_ROUND, 0, WRITER_ROUND_LEN
};

/* Serial: each piece written on the spot, at the offset it reserves. */
static void
writer_serial_round(struct writer *w)
{
	uint64_t	 off = tracefile_reserve(w->tf, WRITER_ROUND_LEN, NULL);

	tracefile_pwrite(w->tf, off, &writer_round_hdr, WRITER_ROUND_LEN);
}

static int
writer_serial_extra(struct writer *w, uint8_t *buf, size_t len,
    const struct tracefile_mark *mark)
{
	uint64_t	 off = tracefile_reserve(w->tf, len, mark);
	int		 rc;

	rc = tracefile_pwrite(w->tf, off, buf, len);
	free(buf);
	return rc;
}

/*
 * A buffered file's drain takes a free cblock of the ring, or leaves the
 * ring when every cblock is in flight (a disk slower than the data).
 * Waiting would hold the drain for as long as the disk takes; the ring
 * may overflow meanwhile, and the kernel counts that loss exactly. Only
 * a file's last drain (rotation, stop, CPU offline) waits, so that every
 * ring ends in the file it belongs to.
 */
static int
writer_aio_room(struct writer *w, struct writer_lane *l, size_t need,
    int last, struct writer_room *r)
{
	size_t	 n = w->cblocks;
	int	 k;

	if ((k = cblock_pick(l->cbs, n)) == -1 && last) {
		cblock_wait(&w->q, l->cbs, n);
		k = cblock_pick(l->cbs, n);
	}
	if (k == -1)
		return -1;
	r->cb = &l->cbs[k];
	r->buf = r->cb->buf;
	r->cap = r->cb->cap - WRITER_ROUND_LEN;
	return 0;
}

/* The chunk waits in its cblock (staged) for the pass's end to submit
 * it. */
static void
writer_aio_put(struct writer *w, struct writer_lane *l,
    struct writer_room *r, const uint8_t *data, size_t len,
    const struct tracefile_mark *mark)
{
	struct cblock	*cb = r->cb;

	if (data != cb->buf)
		memcpy(cb->buf, data, len);
	cb->len = len;
	cb->mark = *mark;
	cb->busy = 1;	/* staged: not pickable until submitted */
	w->staged[w->nstaged++] = cb;
}

/* The round goes into the last staged cblock: each one left room for
 * it. */
static void
writer_aio_round(struct writer *w)
{
	struct cblock	*cb;

	if (w->nstaged == 0) {
		writer_serial_round(w);
		return;
	}
	cb = w->staged[w->nstaged - 1];
	memcpy(cb->buf + cb->len, &writer_round_hdr, WRITER_ROUND_LEN);
	cb->len += WRITER_ROUND_LEN;
}

static void
writer_aio_flush(struct writer *w, int last)
{
	struct cblock	*cb;
	uint64_t	 off;
	size_t		 i;

	for (i = 0; i < w->nstaged; i++) {
		cb = w->staged[i];
		cb->busy = 0;
		off = tracefile_reserve(w->tf, cb->len, &cb->mark);
		if (cblock_submit(&w->q, cb, w->tf, off, w->tf->fd) == -1)
			log_warn("%s: aio_write", w->tf->partial);
	}
	w->nstaged = 0;
}

/* A preamble is one request of its own, at the offset it reserves. */
static int
writer_aio_extra(struct writer *w, uint8_t *buf, size_t len,
    const struct tracefile_mark *mark)
{
	struct cblock	*cb;
	uint64_t	 off = tracefile_reserve(w->tf, len, mark);

	if ((cb = cblock_create_heap(buf, len, &w->heap_stats)) == NULL) {
		free(buf);
		return -1;
	}
	return cblock_submit(&w->q, cb, w->tf, off, w->tf->fd);
}

/*
 * A direct file's drain takes room at the end of the stream in the
 * pool's open block; the pool grows up to its bound under a burst
 * (record-pool.h). At the bound the chunk goes through the page cache
 * instead (the spill: no room, the caller's own buffer): the drain does
 * not leave a ring to overflow while memory or the page cache can take
 * its data. Only when the spill cannot be written either does the drain
 * leave the ring, and the kernel counts what it then loses.
 */
static int
writer_pool_room(struct writer *w, struct writer_lane *l, size_t need,
    int last, struct writer_room *r)
{
	r->cb = NULL;
	r->cap = need - WRITER_ROUND_LEN;
	if ((r->buf = record_pool_room(&w->pool, w->tf, need, last)) != NULL)
		return 0;
	return record_pool_spill_ready(&w->pool, w->tf);
}

static void
writer_pool_put(struct writer *w, struct writer_lane *l,
    struct writer_room *r, const uint8_t *data, size_t len,
    const struct tracefile_mark *mark)
{
	if (r->buf != NULL)
		record_pool_put(&w->pool, w->tf, len, mark);
	else if (record_pool_spill(&w->pool, w->tf, data, len, mark) == -1)
		l->stats.bytes_dropped += len;
}

/* The round goes into the open block, where each room left space for
 * it; after a spill (no block is open) it goes through the page cache
 * too. */
static void
writer_pool_round(struct writer *w)
{
	uint8_t		*room;

	if ((room = record_pool_room(&w->pool, w->tf, WRITER_ROUND_LEN,
	    0)) != NULL) {
		memcpy(room, &writer_round_hdr, WRITER_ROUND_LEN);
		record_pool_put(&w->pool, w->tf, WRITER_ROUND_LEN, NULL);
		return;
	}
	(void)record_pool_spill(&w->pool, w->tf,
	    (const uint8_t *)&writer_round_hdr, WRITER_ROUND_LEN, NULL);
}

/* The pool sends a slice once enough is unsent, and everything at a
 * file's last drain. */
static void
writer_pool_flush(struct writer *w, int last)
{
	(void)record_pool_send(&w->pool, last);
}

/*
 * A preamble on the direct path is copied after the stream's tail into
 * an aligned buffer of its own; its aligned part is written and the rest
 * becomes the stream's tail. It does not go through the pool: a preamble
 * is not ring data, and comes once a file. The pool's open block of the
 * file, if there is one, hands the stream's tail over first.
 */
static int
writer_pool_extra(struct writer *w, uint8_t *buf, size_t len,
    const struct tracefile_mark *mark)
{
	struct tracefile	*tf = w->tf;
	struct cblock		*cb;
	uint8_t			*b;
	uint64_t		 off;
	size_t			 lead, n;
	int			 fd;

	record_pool_detach(&w->pool, tf);
	if ((b = cblock_buffer(WRITER_LEAD_MAX + len)) == NULL) {
		free(buf);
		return -1;
	}
	lead = tracefile_direct_lead(tf, b);
	memcpy(b + lead, buf, len);
	free(buf);
	/* the request before the stream moves: out of memory then skips
	 * this write, it does not cut the file */
	if ((cb = cblock_create_heap(b, 0, &w->heap_stats)) == NULL) {
		free(b);
		return -1;
	}
	if ((n = tracefile_direct_block(tf, b, lead, len, mark, &off,
	    &fd)) == 0) {
		/* all of it is the stream's tail now */
		free(cb);
		free(b);
		return 0;
	}
	cb->cap = cb->len = n;
	if (cblock_submit(&w->q, cb, tf, off, fd) == -1) {
		log_warn("%s: aio_write", tf->partial);
		return -1;
	}
	return 0;
}

/*
 * What the direct stream holds in memory since the last drain goes
 * where a crash of the daemon leaves it (docs/file-format.md), no more
 * than direct_tail_ms later. The open block's unsent bytes go into the
 * page cache from this thread (record_pool_cache): no request, so
 * glibc's AIO thread neither wakes nor sleeps on the disk each period
 * (always-on: two of the daemon's four wakeups a second). Where that
 * cannot be had, they go with the stream's tail, padded, by one
 * request (record_pool_pad: a slice and the padded tail apart woke the
 * AIO thread twice a period). The tail of a file without an open block
 * (a preamble or a spill wrote it last), or of a block a large drain
 * left without room past its end, goes by a request of its own.
 */
static void
writer_pool_pad(struct writer *w)
{
	struct cblock	*cb;
	uint8_t		*b;
	uint64_t	 off;
	size_t		 n;
	int		 fd;

	if (record_pool_cache(&w->pool, w->tf) == 0 ||
	    record_pool_pad(&w->pool, w->tf) == 0)
		return;
	record_pool_flush(&w->pool, w->tf);
	if ((b = cblock_buffer(WRITER_LEAD_MAX)) == NULL)
		return;
	if ((n = tracefile_direct_pad(w->tf, b, &off, &fd)) == 0 ||
	    (cb = cblock_create_heap(b, n, &w->heap_stats)) == NULL) {
		free(b);
		return;
	}
	w->pool.pads++;
	cb->pad = 1;
	(void)cblock_submit(&w->q, cb, w->tf, off, fd);
}

static const struct writer_ops writer_serial = {
	.name = "serial",
	.round = writer_serial_round,
	.extra = writer_serial_extra,
};

static const struct writer_ops writer_aio = {
	.name = "aio",
	.room = writer_aio_room,
	.put = writer_aio_put,
	.round = writer_aio_round,
	.flush = writer_aio_flush,
	.extra = writer_aio_extra,
};

static const struct writer_ops writer_pool = {
	.name = "pool",
	.room = writer_pool_room,
	.put = writer_pool_put,
	.round = writer_pool_round,
	.flush = writer_pool_flush,
	.extra = writer_pool_extra,
	.pad = writer_pool_pad,
};

/* The one place that decides how the file is written. */
static void
writer_choose(struct writer *w)
{
	if (w->mode == WRITER_SERIAL)
		w->ops = &writer_serial;
	else if (w->tf != NULL && tracefile_direct_on(w->tf))
		w->ops = &writer_pool;
	else
		w->ops = &writer_aio;
}

void
writer_init(struct writer *w)
{
	memset(w, 0, sizeof(*w));
	/* SIGEV_NONE: completions are polled at every drain and by the
	 * reaper; a signal per write would cost the syscalls we record */
	cblock_queue_init(&w->q);
	writer_choose(w);
}

int
writer_staging(struct writer *w, size_t n)
{
	struct cblock	**s;

	if (n <= w->cap_staged)
		return 0;
	if ((s = realloc(w->staged, n * sizeof(*s))) == NULL)
		return -1;
	w->staged = s;
	w->cap_staged = n;
	return 0;
}

void
writer_finish(struct writer *w)
{
	record_pool_finish(&w->pool);
	w->lanes = 0;
	free(w->staged);
	w->staged = NULL;
	w->nstaged = w->cap_staged = 0;
}

void
writer_set_file(struct writer *w, struct tracefile *tf)
{
	w->tf = tf;
	writer_choose(w);
}

void
writer_set_mode(struct writer *w, size_t n)
{
	w->mode = n > 0 ? WRITER_AIO : WRITER_SERIAL;
	w->cblocks = n;
	writer_choose(w);
}

int
writer_copies(const struct writer *w)
{
	return w->mode != WRITER_SERIAL;
}

int
writer_pads(const struct writer *w)
{
	return w->ops->pad != NULL && w->tf != NULL;
}

/*
 * A direct file's drains go into the pool (record-pool.h): two units of
 * twice a ring's worth (at least 1 MiB) per cblock, merged into blocks
 * of up to a 4 MiB slice, growing to four times that under a burst. A
 * buffered file's go into each ring's own cblocks, as perf's --aio.
 */
int
writer_buffers(struct writer *w, struct tracefile *tf, uint64_t n,
    size_t chunk)
{
	struct record_pool_shape s;
	struct statvfs		 sv;
	uint64_t		 fs_bytes = 0;
	int			 made = record_pool_made(&w->pool);

	if (n == 0)
		return 0;
	if (!tracefile_direct_on(tf)) {
		w->lanes = 1;
		return 1;
	}
	/* the base, and the bound a burst grows it to: what record_memory
	 * counted (a test's bound may be lower); a pool made keeps its
	 * blocks' size and slices, a new one takes slices the file system
	 * has room for */
	if (!made && fstatvfs(tf->fd, &sv) == 0)
		fs_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
	record_pool_shape(n, chunk + WRITER_ROUND_LEN,
	    made ? w->pool.cap : 0, fs_bytes, &s);
	if (made) {
		if (record_pool_resize(&w->pool, s.base) == -1)
			return -1;
	} else if (record_pool_init(&w->pool, &w->q, s.cap, s.write,
	    s.base) == -1)
		return -1;
	record_pool_set_bound(&w->pool, s.bound);
	return 0;
}

int
writer_lane_make(struct writer *w, struct writer_lane *l, size_t n,
    size_t chunk)
{
	size_t	 cap = chunk + WRITER_ROUND_LEN;

	while (l->nr < n) {
		if (cblock_init(&l->cbs[l->nr], cap) == -1)
			return -1;
		l->cbs[l->nr].stats = &l->stats;
		l->nr++;
	}
	return 0;
}

void
writer_lane_free(struct writer_lane *l)
{
	size_t	 i;

	for (i = 0; i < l->nr; i++)
		cblock_finish(&l->cbs[i]);
	l->nr = 0;
}

void
writer_shrink(struct writer *w)
{
	record_pool_shrink(&w->pool);
}

uint64_t
writer_bytes(const struct writer *w)
{
	return record_pool_bytes(&w->pool);
}

size_t
writer_slice(const struct writer *w)
{
	return record_pool_made(&w->pool) ? w->pool.write : 0;
}

int
writer_room(struct writer *w, struct writer_lane *l, size_t need, int last,
    struct writer_room *r)
{
	memset(r, 0, sizeof(*r));
	return w->ops->room != NULL ? w->ops->room(w, l, need, last, r) : 0;
}

void
writer_put(struct writer *w, struct writer_lane *l, struct writer_room *r,
    const uint8_t *data, size_t len, const struct tracefile_mark *mark)
{
	w->ops->put(w, l, r, data, len, mark);
}

int
writer_writev(struct writer *w, struct writer_lane *l,
    const struct iovec *iov, int n, const struct tracefile_mark *mark)
{
	uint64_t	 off;
	size_t		 len = 0;
	int		 i;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	off = tracefile_reserve(w->tf, len, mark);
	if (tracefile_pwritev(w->tf, off, iov, n) == -1) {
		l->stats.bytes_dropped += len;
		return -1;
	}
	l->stats.bytes_written += len;
	return 0;
}

void
writer_round(struct writer *w)
{
	w->ops->round(w);
}

void
writer_flush(struct writer *w, int last)
{
	if (w->ops->flush != NULL)
		w->ops->flush(w, last);
}

int
writer_extra(struct writer *w, uint8_t *buf, size_t len,
    const struct tracefile_mark *mark)
{
	if (w->tf == NULL) {
		free(buf);
		errno = EINVAL;
		return -1;
	}
	return w->ops->extra(w, buf, len, mark);
}

/*
 * As an extra, each batch of the worker's records detached the pool's
 * open block (a slice for its aligned part) and was a request of its
 * own: two requests a drain pass, each waking a glibc AIO thread
 * (always-on: 8.5-10.6 wakeups a second of that thread, 3.0-3.2 this
 * way; bench/history/2026-12-06-loss).
 */
int
writer_append(struct writer *w, uint8_t *buf, size_t len,
    const struct tracefile_mark *mark)
{
	uint8_t	*room;

	if (w->tf != NULL && w->ops == &writer_pool &&
	    (room = record_pool_room(&w->pool, w->tf, len, 0)) != NULL) {
		memcpy(room, buf, len);
		record_pool_put(&w->pool, w->tf, len, mark);
		free(buf);
		return 0;
	}
	return writer_extra(w, buf, len, mark);
}

void
writer_pad(struct writer *w)
{
	if (w->tf != NULL && w->ops->pad != NULL)
		w->ops->pad(w);
}

void
writer_reap(struct writer *w)
{
	cblock_reap(&w->q);
}

void
writer_detach(struct writer *w, struct tracefile *tf)
{
	record_pool_detach(&w->pool, tf);
}

void
writer_wait_all(struct writer *w)
{
	cblock_wait_all(&w->q);
}

size_t
writer_busy(const struct writer *w)
{
	return w->q.nr_busy;
}

int
writer_pad_busy(const struct writer *w, const struct tracefile *tf,
    uint64_t off)
{
	return cblock_pad_busy(&w->q, tf, off);
}

void
writer_queue(struct writer *w, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	struct cblock	*cb;
	uint64_t	 off;

	if (len == 0) {
		free(buf);
		return;
	}
	off = tracefile_reserve(tf, len, mark);
	if ((cb = cblock_create_heap(buf, len, &w->heap_stats)) == NULL) {
		free(buf);
		tracefile_failed(tf, off, ENOMEM);
		return;
	}
	if (cblock_submit(&w->q, cb, tf, off, tf->fd) == -1)
		log_warn("%s: aio_write", tf->partial);
}

void
writer_writeback(struct writer *w, int on)
{
	cblock_queue_writeback(&w->q, on);
}

void
writer_prio(struct writer *w, int prio)
{
	cblock_queue_prio(&w->q, prio);
}

/*
 * record-sink holds the writers of a drain's rings (record-int.h, struct
 * record_sink), one per file: serial pwrite, the ring's own AIO cblocks
 * (a buffered file), the direct pool (which spills through the page
 * cache at its bound), a flight window, and the sink that drops the data
 * while the recording is paused (and counts it). Each sink takes a
 * ring's bytes through its push, as perf's record__pushfn takes
 * perf_mmap__push's, and the file's other bytes (a preamble, the direct
 * tail's pad) through extra and pad. The drain (record-drain.c) knows
 * none of them, and the write layer (daemon/write/) knows nothing of
 * rings. All of it runs on the drain thread, or in the loop with the
 * recording's lock held.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "log.h"
#include "record-int.h"

static const struct perf_event_header record_round_hdr = {
	PERF_RECORD_FINISHED_ROUND, 0, RECORD_ROUND_LEN
};

/* The sinks that write from the ring (or drop its data) push with this:
 * each piece stays where it lies, and done finds it noted in t. */
static void
record_sink_take(void *to, const uint8_t *buf, size_t len)
{
	struct record_take	*t = to;

	t->iov[t->niov].iov_base = (void *)(uintptr_t)buf;
	t->iov[t->niov].iov_len = len;
	t->niov++;
	t->len += len;
}

/* The sinks that copy push with this: the pieces go one after the other
 * to the copy that room chose (as perf's record__aio_pushfn copies). */
static void
record_sink_copy(void *to, const uint8_t *buf, size_t len)
{
	struct record_take	*t = to;

	memcpy(t->copy + t->len, buf, len);
	t->len += len;
}

/* A paused recording still releases each ring, so that the ring keeps
 * moving, and counts what it drops. */
static void
record_drop_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	c->aio.bytes_dropped += (uint64_t)t->len;
	ring_release(&c->ring, t->head);
}

/* A flight recording has no file: its window (record-window.c) takes
 * the data and closes a round as a file would. */
static void
record_window_sink_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	record_window_take(rec, c, t);
	w->nflight++;
}

static void
record_window_sink_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	record_window_round(rec);
}

/* With cblocks 0 the serial sink writes each chunk on the spot, from
 * the ring. */
static void
record_serial_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	w->drained += record_chunk_serial(rec, c, tf, t);
	w->npushed++;
}

static void
record_serial_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	uint64_t	 off = tracefile_reserve(tf, RECORD_ROUND_LEN, NULL);

	tracefile_pwrite(tf, off, &record_round_hdr, RECORD_ROUND_LEN);
}

/* The serial sink writes a preamble at the offset it reserves. */
static int
record_serial_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	uint64_t	 off = tracefile_reserve(tf, len, mark);
	int		 rc;

	rc = tracefile_pwrite(tf, off, buf, len);
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
record_aio_room(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, int last)
{
	size_t	 n = rec->cfg.cblocks;
	int	 k;

	if ((k = cblock_pick(c->cbs, n)) == -1 && last) {
		cblock_wait(&rec->q, c->cbs, n);
		k = cblock_pick(c->cbs, n);
	}
	if (k == -1)
		return -1;
	t->cb = &c->cbs[k];
	t->room = t->cb->buf;
	/* with -z the copy is compressed from the drain's buffer into it */
	t->copy = rec->zc ? rec->xbuf : t->room;
	return 0;
}

/* The copy becomes a chunk in its cblock, which waits (staged) for the
 * pass's end to submit it. */
static void
record_aio_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	struct cblock	*cb = t->cb;

	cb->len = record_chunk(rec, c, tf, t, cb->buf,
	    cb->cap - RECORD_ROUND_LEN, &cb->mark);
	if (cb->len == 0)
		return;
	cb->busy = 1;	/* staged: not pickable until submitted */
	rec->staged[w->nstaged++] = cb;
	w->drained += cb->len;
	w->npushed++;
}

/* The round goes into the last staged cblock: each one left room for
 * it. */
static void
record_aio_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	struct cblock	*cb;

	if (w->nstaged == 0) {
		record_serial_round(rec, tf, w);
		return;
	}
	cb = rec->staged[w->nstaged - 1];
	memcpy(cb->buf + cb->len, &record_round_hdr, RECORD_ROUND_LEN);
	cb->len += RECORD_ROUND_LEN;
}

static void
record_aio_flush(struct record *rec, struct tracefile *tf,
    struct record_sweep *w, int last)
{
	struct cblock	*cb;
	uint64_t	 off;
	size_t		 i;

	for (i = 0; i < w->nstaged; i++) {
		cb = rec->staged[i];
		cb->busy = 0;
		off = tracefile_reserve(tf, cb->len, &cb->mark);
		if (cblock_submit(&rec->q, cb, tf, off, tf->fd) == -1)
			log_warn("%s: aio_write", tf->partial);
	}
}

/* A preamble is one request of its own, at the offset it reserves. */
static int
record_aio_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	struct cblock	*cb;
	uint64_t	 off = tracefile_reserve(tf, len, mark);

	if ((cb = cblock_create_heap(buf, len, &rec->heap_stats)) == NULL) {
		free(buf);
		return -1;
	}
	return cblock_submit(&rec->q, cb, tf, off, tf->fd);
}

/* A drain of n ring bytes needs this much room in the pool: its chunk
 * (compressed with -z) and a round after it. */
static size_t
record_pool_need(const struct record *rec, uint64_t n)
{
	return (rec->zc ? compress_bound((size_t)n) : (size_t)n) +
	    RECORD_ROUND_LEN;
}

/*
 * A direct file's drain takes room at the end of the stream in the
 * pool's open block; the pool grows up to its bound under a burst
 * (record-pool.h). At the bound the chunk goes through the page cache
 * instead (the spill): the drain does not leave a ring to overflow
 * while memory or the page cache can take its data. Only when the spill
 * cannot be written either does the drain leave the ring, and the
 * kernel counts what it then loses.
 */
static int
record_pool_sink_room(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, int last)
{
	t->room = record_pool_room(&rec->pool, tf,
	    record_pool_need(rec, t->head - t->tail), last);
	if (t->room == NULL) {
		if (record_pool_spill_ready(&rec->pool, tf) == -1)
			return -1;
		t->spill = 1;
	}
	/* with -z, or a spill, the copy goes to the drain's buffer first */
	t->copy = rec->zc || t->spill ? rec->xbuf : t->room;
	return 0;
}

static void
record_pool_sink_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	struct tracefile_mark	 mark;
	uint8_t			*dst;
	size_t			 len, avail;

	if (t->spill) {
		/* the drain's own buffers: the copy, or with -z its output */
		dst = rec->zc ? rec->zbuf : rec->xbuf;
		avail = rec->zc ? rec->zcap : (size_t)t->n;
	} else {
		dst = t->room;
		avail = record_pool_need(rec, (uint64_t)t->n) -
		    RECORD_ROUND_LEN;
	}
	if ((len = record_chunk(rec, c, tf, t, dst, avail, &mark)) == 0)
		return;
	if (!t->spill)
		record_pool_put(&rec->pool, tf, len, &mark);
	else if (record_pool_spill(&rec->pool, tf, dst, len, &mark) == -1)
		c->aio.bytes_dropped += len;
	w->drained += len;
	w->npushed++;
}

/* The round goes into the open block, where each room left space for
 * it; after a spill (no block is open) it goes through the page cache
 * too. */
static void
record_pool_sink_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	uint8_t		*room;

	if ((room = record_pool_room(&rec->pool, tf, RECORD_ROUND_LEN,
	    0)) != NULL) {
		memcpy(room, &record_round_hdr, RECORD_ROUND_LEN);
		record_pool_put(&rec->pool, tf, RECORD_ROUND_LEN, NULL);
		return;
	}
	(void)record_pool_spill(&rec->pool, tf,
	    (const uint8_t *)&record_round_hdr, RECORD_ROUND_LEN, NULL);
}

/* The pool sends a slice once enough is unsent, and everything at a
 * file's last drain. */
static void
record_pool_sink_flush(struct record *rec, struct tracefile *tf,
    struct record_sweep *w, int last)
{
	(void)record_pool_send(&rec->pool, last);
}

/*
 * A preamble on the direct path is copied after the stream's tail into
 * an aligned buffer of its own; its aligned part is written and the rest
 * becomes the stream's tail. It does not go through the pool: a preamble
 * is not ring data, and comes once a file. The pool's open block of tf,
 * if there is one, hands the stream's tail over first.
 */
static int
record_pool_sink_extra(struct record *rec, struct tracefile *tf,
    uint8_t *buf, size_t len, const struct tracefile_mark *mark)
{
	struct cblock	*cb;
	uint8_t		*b;
	uint64_t	 off;
	size_t		 lead, w;
	int		 fd;

	record_pool_detach(&rec->pool, tf);
	if ((b = cblock_buffer(RECORD_LEAD_MAX + len)) == NULL) {
		free(buf);
		return -1;
	}
	lead = tracefile_direct_lead(tf, b);
	memcpy(b + lead, buf, len);
	free(buf);
	/* the request before the stream moves: out of memory then skips
	 * this write, it does not cut the file */
	if ((cb = cblock_create_heap(b, 0, &rec->heap_stats)) == NULL) {
		free(b);
		return -1;
	}
	if ((w = tracefile_direct_block(tf, b, lead, len, mark, &off,
	    &fd)) == 0) {
		/* all of it is the stream's tail now */
		free(cb);
		free(b);
		return 0;
	}
	cb->cap = cb->len = w;
	if (cblock_submit(&rec->q, cb, tf, off, fd) == -1) {
		log_warn("%s: aio_write", tf->partial);
		return -1;
	}
	return 0;
}

/*
 * The direct stream's tail (fewer bytes than one alignment unit) has
 * stayed in memory since the last drain: put it on disk, padded, so that
 * a crash costs what the rings and the requests in flight held, and no
 * more than direct_tail_ms of that tail (docs/file-format.md).
 */
static void
record_pool_sink_pad(struct record *rec, struct tracefile *tf)
{
	struct cblock	*cb;
	uint8_t		*b;
	uint64_t	 off;
	size_t		 n;
	int		 fd;

	/* what the open block holds goes now, its last bytes padded */
	record_pool_flush(&rec->pool, tf);
	if ((b = cblock_buffer(RECORD_LEAD_MAX)) == NULL)
		return;
	if ((n = tracefile_direct_pad(tf, b, &off, &fd)) == 0 ||
	    (cb = cblock_create_heap(b, n, &rec->heap_stats)) == NULL) {
		free(b);
		return;
	}
	cb->pad = 1;
	(void)cblock_submit(&rec->q, cb, tf, off, fd);
}

static const struct record_sink record_sink_drop = {
	.name = "drop",
	.reads_ring = 1,
	.push = record_sink_take,
	.done = record_drop_done,
};

static const struct record_sink record_sink_window = {
	.name = "window",
	.reads_ring = 1,
	.push = record_sink_take,
	.done = record_window_sink_done,
	.round = record_window_sink_round,
};

static const struct record_sink record_sink_serial = {
	.name = "serial",
	.reads_ring = 1,
	.push = record_sink_take,
	.done = record_serial_done,
	.round = record_serial_round,
	.extra = record_serial_extra,
};

static const struct record_sink record_sink_aio = {
	.name = "aio",
	.room = record_aio_room,
	.push = record_sink_copy,
	.done = record_aio_done,
	.round = record_aio_round,
	.flush = record_aio_flush,
	.extra = record_aio_extra,
};

static const struct record_sink record_sink_pool = {
	.name = "pool",
	.room = record_pool_sink_room,
	.push = record_sink_copy,
	.done = record_pool_sink_done,
	.round = record_pool_sink_round,
	.flush = record_pool_sink_flush,
	.extra = record_pool_sink_extra,
	.pad = record_pool_sink_pad,
};

/*
 * With call_graph compact a ring's bytes go to the unwinding worker's
 * queue (record-compact.c), or, when the queue is full, to the file's
 * writer as they are (raw, and counted). push takes the pieces both
 * ways: into the worker's buffer, or where the writer's room chose.
 */
static int
record_compact_sink_room(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, int last)
{
	const struct record_sink	*wr = record_sink_writer(rec, tf);

	t->item = NULL;
	if (record_compact_room(rec->compact, t) == 0)
		return 0;
	return wr->room != NULL ? wr->room(rec, c, tf, t, last) : 0;
}

static void
record_compact_sink_push(void *to, const uint8_t *buf, size_t len)
{
	struct record_take	*t = to;

	if (t->copy != NULL)
		memcpy(t->copy + t->len, buf, len);
	record_sink_take(to, buf, len);
}

static void
record_compact_sink_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	const struct record_sink	*wr = record_sink_writer(rec, tf);

	if (t->item != NULL) {
		record_compact_take(rec->compact, rec, c, tf, t);
		w->npushed++;
		return;
	}
	/* from the ring, which the writer releases */
	record_compact_raw(rec->compact, c->ring.data, c->ring.size, t->tail,
	    t->head);
	wr->done(rec, c, tf, t, w);
	record_compact_raw_count(rec->compact, tf,
	    c->counts.samples - t->before.samples);
}

static void
record_compact_sink_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	(void)record_compact_round(rec->compact, tf);
}

/*
 * The file's writer writes what the worker rewrote into the file. On
 * the direct path it joins the stream in the pool's open block, as a
 * ring's bytes do, and goes with the block's next slice: as an extra it
 * was two requests a pass (the block's aligned part, then its own), and
 * every request wakes an AIO thread (always-on: 2 of its 4 wakeups a
 * pass). At the pool's bound it is an extra still.
 */
static int
record_compact_sink_write(struct record *rec, struct tracefile *tf,
    uint8_t *buf, size_t len, const struct tracefile_mark *mark)
{
	const struct record_sink	*wr = record_sink_writer(rec, tf);
	uint8_t				*room;

	if (wr == &record_sink_pool && (room = record_pool_room(&rec->pool,
	    tf, len, 0)) != NULL) {
		memcpy(room, buf, len);
		record_pool_put(&rec->pool, tf, len, mark);
		free(buf);
		return 0;
	}
	return wr->extra(rec, tf, buf, len, mark);
}

/* The writer's queued writes (raw chunks) go first, then what the
 * worker finished. */
static void
record_compact_sink_flush(struct record *rec, struct tracefile *tf,
    struct record_sweep *w, int last)
{
	const struct record_sink	*wr = record_sink_writer(rec, tf);

	if (wr->flush != NULL)
		wr->flush(rec, tf, w, last);
	w->drained += record_compact_collect(rec->compact, rec, last,
	    record_compact_sink_write);
	/* a file's last drain sends what the worker's samples added to
	 * the pool's open block too */
	if (last && wr->flush != NULL)
		wr->flush(rec, tf, w, last);
}

/* A preamble, or task records carried over, go to the worker's maps
 * too. */
static int
record_compact_sink_extra(struct record *rec, struct tracefile *tf,
    uint8_t *buf, size_t len, const struct tracefile_mark *mark)
{
	record_compact_preamble(rec->compact, buf, len);
	return record_sink_writer(rec, tf)->extra(rec, tf, buf, len, mark);
}

static void
record_compact_sink_pad(struct record *rec, struct tracefile *tf)
{
	const struct record_sink	*wr = record_sink_writer(rec, tf);

	if (wr->pad != NULL)
		wr->pad(rec, tf);
}

static const struct record_sink record_sink_compact = {
	.name = "compact",
	.flush_idle = 1,
	.room = record_compact_sink_room,
	.push = record_compact_sink_push,
	.done = record_compact_sink_done,
	.round = record_compact_sink_round,
	.flush = record_compact_sink_flush,
	.extra = record_compact_sink_extra,
	.pad = record_compact_sink_pad,
};

const struct record_sink *
record_sink_writer(struct record *rec, struct tracefile *tf)
{
	if (rec->mode == RECORD_SERIAL)
		return &record_sink_serial;
	return tracefile_direct_on(tf) ? &record_sink_pool : &record_sink_aio;
}

const struct record_sink *
record_sink(struct record *rec, struct tracefile *tf)
{
	if (tf == NULL)
		return rec->flight != NULL ? &record_sink_window :
		    &record_sink_drop;
	/* the serial writer reads the ring in place: no copy for the
	 * worker, the samples go raw (cblocks 0 is refused with compact
	 * at a start, and left for a buffered file while recording) */
	if (rec->compact != NULL && rec->mode != RECORD_SERIAL)
		return &record_sink_compact;
	return record_sink_writer(rec, tf);
}

int
record_write_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	const struct record_sink	*sk = record_sink(rec, tf);

	if (sk->extra == NULL) {
		free(buf);
		errno = EINVAL;
		return -1;
	}
	return sk->extra(rec, tf, buf, len, mark);
}

void
record_pad_tail(struct record *rec)
{
	const struct record_sink	*sk = record_sink(rec, rec->cur);

	if (rec->cur != NULL && sk->pad != NULL)
		sk->pad(rec, rec->cur);
}

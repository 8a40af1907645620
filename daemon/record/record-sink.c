/*
 * record-sink: where a drain's chunks go (record-int.h), one sink per
 * file: serial pwrite, the ring's own AIO cblocks (a buffered file), the
 * direct pool (spilling through the page cache at its bound), a flight
 * window, or nowhere while paused (counted as dropped). The drain
 * (record-drain.c) knows none of them; the write layer (daemon/write/)
 * knows nothing of rings.
 */
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>

#include "log.h"
#include "record-int.h"

static const struct perf_event_header record_round_hdr = {
	PERF_RECORD_FINISHED_ROUND, 0, RECORD_ROUND_LEN
};

/* Paused: keep the ring moving, count what is dropped. */
static void
record_drop_push(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	c->aio.bytes_dropped += (uint64_t)t->n;
	ring_release(&c->ring, t->head);
}

/* A flight recording has no file: its window takes the data
 * (record-window.c), and closes a round as a file would. */
static void
record_window_push(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	record_window_take(rec, c, t->tail, t->head, t->bogus != 0);
	w->nflight++;
}

static void
record_window_sink_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	record_window_round(rec);
}

/* cblocks 0: written on the spot from the ring. */
static void
record_serial_push(struct record *rec, struct record_cpu *c,
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

/*
 * A buffered file: a free cblock of the ring, or leave the ring: every
 * cblock in flight (a disk slower than the data). Waiting would hold the
 * drain for as long as the disk takes; the ring may overflow meanwhile,
 * and the kernel counts that loss exactly. Only a file's last drain
 * (rotation, stop, CPU offline) waits, so that every ring ends in the
 * file it belongs to.
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
	return 0;
}

/* The copy, staged for the pass's end to submit. */
static void
record_aio_push(struct record *rec, struct record_cpu *c,
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

/* Into the last staged cblock (each left room for it). */
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

/* The pool's room a drain of n ring bytes needs, and a round after it. */
static size_t
record_pool_need(const struct record *rec, uint64_t n)
{
	return (rec->zc ? compress_bound((size_t)n) : (size_t)n) +
	    RECORD_ROUND_LEN;
}

/*
 * A direct file: room at the end of the stream in the pool's open
 * block; the pool grows up to its bound under a burst (record-pool.h).
 * At the bound the chunk goes through the page cache instead (the
 * spill): the drain does not leave a ring to overflow while memory or
 * the page cache can take it. Only when the spill cannot be written
 * either is the ring left, and the kernel counts what it then loses.
 */
static int
record_pool_sink_room(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, int last)
{
	t->room = record_pool_room(&rec->pool, tf,
	    record_pool_need(rec, t->head - t->tail), last);
	if (t->room != NULL)
		return 0;
	if (record_pool_spill_ready(&rec->pool, tf) == -1)
		return -1;
	t->spill = 1;
	return 0;
}

static void
record_pool_sink_push(struct record *rec, struct record_cpu *c,
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

/* Into the open block, where each room left space for it; after a
 * spill (no block open) through the page cache too. */
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

/* A slice once enough is unsent; everything at a file's last drain. */
static void
record_pool_sink_flush(struct record *rec, struct tracefile *tf,
    struct record_sweep *w, int last)
{
	(void)record_pool_send(&rec->pool, last);
}

static const struct record_sink record_sinks[] = {
	{ "drop", 1, NULL, record_drop_push, NULL, NULL },
	{ "window", 1, NULL, record_window_push, record_window_sink_round, NULL },
	{ "serial", 1, NULL, record_serial_push, record_serial_round, NULL },
	{ "aio", 0, record_aio_room, record_aio_push, record_aio_round,
	    record_aio_flush },
	{ "pool", 0, record_pool_sink_room, record_pool_sink_push,
	    record_pool_sink_round, record_pool_sink_flush },
};

const struct record_sink *
record_sink(struct record *rec)
{
	struct tracefile	*tf = rec->cur;

	if (tf == NULL)
		return &record_sinks[rec->flight != NULL ? 1 : 0];
	if (rec->mode == RECORD_SERIAL)
		return &record_sinks[2];
	return &record_sinks[tracefile_direct_on(tf) ? 4 : 3];
}

/*
 * record-sink holds where a drain's rings go (record-int.h, struct
 * record_sink): the current file, copied (a cblock or the direct pool:
 * the writer's room) or written from where the bytes lie (serial); the
 * unwinding worker (compact) before the file; a flight window; and the
 * sink that drops the data while the recording is paused (and counts
 * it). Each sink takes a ring's bytes through its push, as perf's
 * record__pushfn takes perf_mmap__push's, and the file's other bytes (a
 * preamble, the direct tail's pad) through extra and pad. The file's
 * sinks make the chunk (record-chunk.c) and hand it to the recording's
 * writer (write/write.h), which alone knows how the file is written.
 * The drain (record-drain.c) knows none of them, and write/ knows
 * nothing of rings. All of it runs on the drain thread, or in the loop
 * with the recording's lock held.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "log.h"
#include "record-int.h"

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
	c->lane.stats.bytes_dropped += (uint64_t)t->len;
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

/* With cblocks 0 the serial sink has the writer write each chunk on the
 * spot, from the ring. */
static void
record_serial_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	w->drained += record_chunk_serial(rec, c, tf, t);
	w->npushed++;
}

/*
 * A file's rounds are RECORD_ROUND_GAP_NS apart at least (while what
 * they hold stays under RECORD_ROUND_BYTES, which perf sorts in memory).
 * At a round perf flushes what is older than the newest event it had
 * seen at the round before; an event the kernel stamped before that
 * and published to its ring later arrives out of order. A pass reads
 * every ring's head at one moment, so such an event was unpublished
 * for as long as the two rounds are apart: microseconds where passes
 * run back to back (a storm, a rotation's last drains), while a
 * virtual CPU the host stops leaves a half-written record for
 * milliseconds (6 ms seen here). perf then says "1 out of order events
 * recorded" (test_order, a ring-full rotation, once).
 */
#define RECORD_ROUND_GAP_NS	(20 * 1000000u)
#define RECORD_ROUND_BYTES	(64u << 20)

/* The file's round, queued writes, other bytes and tail: the writer's. */
static void
record_file_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	rec->unrounded += rec->round_bytes + w->drained;
	if (rec->pass_ns - rec->round_ns < RECORD_ROUND_GAP_NS &&
	    rec->unrounded < RECORD_ROUND_BYTES)
		return;
	writer_round(&rec->w);
	rec->round_ns = rec->pass_ns;
	rec->unrounded = 0;
}

static void
record_file_flush(struct record *rec, struct tracefile *tf,
    struct record_sweep *w, int last)
{
	writer_flush(&rec->w, last);
}

static int
record_file_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	return writer_extra(&rec->w, buf, len, mark);
}

static void
record_file_pad(struct record *rec, struct tracefile *tf)
{
	writer_pad(&rec->w);
}

/* A drain of n ring bytes needs this much room: its chunk (compressed
 * with -z) and a round after it. */
static size_t
record_file_need(const struct record *rec, uint64_t n)
{
	return (rec->zc ? compress_bound((size_t)n) : (size_t)n) +
	    WRITER_ROUND_LEN;
}

/*
 * The writer's room for the ring's chunk (record-chunk.c makes it
 * there). The copy goes there too, unless the chunk is compressed (-z)
 * or the writer gave no buffer (the direct pool at its bound spills
 * through the page cache): then it goes to the drain's own buffer.
 * -1: no room now, the ring is left (write.h says when).
 */
static int
record_file_room(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, int last)
{
	if (writer_room(&rec->w, &c->lane, record_file_need(rec,
	    t->head - t->tail), last, &t->room) == -1)
		return -1;
	t->copy = rec->zc || t->room.buf == NULL ? rec->xbuf : t->room.buf;
	return 0;
}

static void
record_file_done(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, struct record_sweep *w)
{
	struct tracefile_mark	 mark;
	uint8_t			*dst = t->room.buf;
	size_t			 len, avail = t->room.cap;

	if (dst == NULL) {
		/* the drain's own buffers: the copy, or with -z its output */
		dst = rec->zc ? rec->zbuf : rec->xbuf;
		avail = rec->zc ? rec->zcap : (size_t)t->n;
	}
	if ((len = record_chunk(rec, c, tf, t, dst, avail, &mark)) == 0)
		return;
	writer_put(&rec->w, &c->lane, &t->room, dst, len, &mark);
	w->drained += len;
	w->npushed++;
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
	.round = record_file_round,
	.extra = record_file_extra,
};

static const struct record_sink record_sink_file = {
	.name = "file",
	.room = record_file_room,
	.push = record_sink_copy,
	.done = record_file_done,
	.round = record_file_round,
	.flush = record_file_flush,
	.extra = record_file_extra,
	.pad = record_file_pad,
};

/*
 * With call_graph compact a ring's bytes go to the unwinding worker's
 * queue (record-compact.c), or, when the queue is full, to the file as
 * they are (raw, and counted). push takes the pieces both ways: into
 * the worker's buffer, or where the file's room chose.
 */
static int
record_compact_sink_room(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, struct record_take *t, int last)
{
	t->item = NULL;
	if (record_compact_room(rec->compact, t) == 0)
		return 0;
	return record_file_room(rec, c, tf, t, last);
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
	if (t->item != NULL) {
		record_compact_take(rec->compact, rec, c, tf, t);
		w->npushed++;
		return;
	}
	/* from the ring, which the file's done releases */
	record_compact_raw(rec->compact, c->ring.data, c->ring.size, t->tail,
	    t->head);
	record_file_done(rec, c, tf, t, w);
	record_compact_raw_count(rec->compact, tf,
	    c->counts.samples - t->before.samples);
}

static void
record_compact_sink_round(struct record *rec, struct tracefile *tf,
    struct record_sweep *w)
{
	(void)record_compact_round(rec->compact, tf);
}

/* What the worker rewrote joins the file's stream (writer_append). */
static int
record_compact_sink_write(struct record *rec, struct tracefile *tf,
    uint8_t *buf, size_t len, const struct tracefile_mark *mark)
{
	return writer_append(&rec->w, buf, len, mark);
}

/* The writer's queued writes (raw chunks) go first, then what the
 * worker finished; a file's last drain then sends what that added to
 * the pool's open block too. */
static void
record_compact_sink_flush(struct record *rec, struct tracefile *tf,
    struct record_sweep *w, int last)
{
	writer_flush(&rec->w, last);
	w->drained += record_compact_collect(rec->compact, rec, last,
	    record_compact_sink_write);
	if (last)
		writer_flush(&rec->w, last);
}

/* A preamble, or task records carried over, go to the worker's maps
 * too. */
static int
record_compact_sink_extra(struct record *rec, struct tracefile *tf,
    uint8_t *buf, size_t len, const struct tracefile_mark *mark)
{
	record_compact_preamble(rec->compact, buf, len);
	return writer_extra(&rec->w, buf, len, mark);
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
	.pad = record_file_pad,
};

/*
 * Where the drain's rings go: decided when a file becomes current
 * (record_set_file), or what decides it changes (the write mode, a
 * flight window, the unwinding worker). How the file is written is the
 * writer's choice, made at the same moments (writer_set_file,
 * writer_set_mode); the sink only asks whether the writer wants a copy
 * or the pieces where they lie. With no file, the ring goes to a flight
 * window or is dropped (paused).
 */
void
record_sink_choose(struct record *rec)
{
	if (rec->cur == NULL)
		rec->sink = rec->flight != NULL ? &record_sink_window :
		    &record_sink_drop;
	/* the serial writer reads the ring in place: no copy for the
	 * worker, the samples go raw (cblocks 0 is refused with compact
	 * at a start, and left for a buffered file while recording) */
	else if (!writer_copies(&rec->w))
		rec->sink = &record_sink_serial;
	else if (rec->compact != NULL)
		rec->sink = &record_sink_compact;
	else
		rec->sink = &record_sink_file;
}

void
record_set_file(struct record *rec, struct tracefile *tf)
{
	rec->cur = tf;
	writer_set_file(&rec->w, tf);
	record_sink_choose(rec);
}

int
record_write_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	const struct record_sink	*sk = rec->sink;

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
	const struct record_sink	*sk = rec->sink;

	if (rec->cur != NULL && sk->pad != NULL)
		sk->pad(rec, rec->cur);
}

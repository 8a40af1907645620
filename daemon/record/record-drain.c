/*
 * record-drain: one pass over every ring into the current file, in the
 * serial mode (cblocks = 0: pwrite from the ring), the AIO mode (a copy
 * in a free cblock, then aio_write) or paused (counted as dropped), with
 * compression and our own samples left out, and the rounds perf sorts
 * by.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include "log.h"
#include "perf-abi.h"
#include "perfdata.h"
#include "record-int.h"
#include "track.h"

static void	record_count_file(struct tracefile *,
		    const struct ring_counts *, const struct ring_counts *);

/* The sample times of ring data in two pieces (a wrap may cut a record
 * in two: its time is not looked for). */
static void
record_mark(struct record *rec, struct tracefile_mark *m,
    const uint8_t *const src[2], const size_t l[2])
{
	struct perf_event_header	 h;
	size_t				 pos, have;

	pos = perfdata_sample_times(src[0], l[0], rec->time_off, &m->first,
	    &m->last);
	if (l[1] == 0)
		return;
	if ((have = l[0] - pos) == 0) {
		perfdata_sample_times(src[1], l[1], rec->time_off, &m->first,
		    &m->last);
		return;
	}
	if (have < sizeof(h)) {
		memcpy(&h, src[0] + pos, have);
		memcpy((uint8_t *)&h + have, src[1], sizeof(h) - have);
	} else
		memcpy(&h, src[0] + pos, sizeof(h));
	if (h.size >= have && h.size - have <= l[1])
		perfdata_sample_times(src[1] + (h.size - have),
		    l[1] - (h.size - have), rec->time_off, &m->first,
		    &m->last);
}

/* Write bytes that are not ring data (the preamble) to tf; takes buf. */
int
record_write_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len)
{
	struct cblock	*cb;
	uint8_t		*b;
	uint64_t	 off;
	size_t		 lead, w;
	int		 rc, fd;

	if (tracefile_direct_on(tf)) {
		/*
		 * An aligned copy after the stream's tail, its aligned part
		 * written, the rest the stream's tail: a preamble is not
		 * ring data, and comes once a file. The pool's open block
		 * of tf, if any, hands that tail over first.
		 */
		record_pool_detach(&rec->pool, tf);
		if ((b = cblock_buffer(RECORD_LEAD_MAX + len)) == NULL) {
			free(buf);
			return -1;
		}
		lead = tracefile_direct_lead(tf, b);
		memcpy(b + lead, buf, len);
		free(buf);
		/* the request before the stream moves: out of memory then
		 * skips this write, it does not cut the file */
		if ((cb = cblock_create_heap(b, 0, &rec->heap_stats)) ==
		    NULL) {
			free(b);
			return -1;
		}
		if ((w = tracefile_direct_block(tf, b, lead, len, NULL, &off,
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
	off = tracefile_reserve(tf, len, NULL);
	if (rec->mode == RECORD_SERIAL) {
		rc = tracefile_pwrite(tf, off, buf, len);
		free(buf);
		return rc;
	}
	if ((cb = cblock_create_heap(buf, len, &rec->heap_stats)) == NULL) {
		free(buf);
		return -1;
	}
	return cblock_submit(&rec->q, cb, tf, off, tf->fd);
}

/*
 * The direct stream's tail (fewer bytes than one alignment unit) has
 * stayed in memory since the last drain: put it on disk, padded, so that
 * a crash costs what the rings and the requests in flight held, and no
 * more than direct_tail_ms of that tail (docs/file-format.md).
 */
void
record_pad_tail(struct record *rec)
{
	struct tracefile	*tf = rec->cur;
	struct cblock		*cb;
	uint8_t			*b;
	uint64_t		 off;
	size_t			 n;
	int			 fd;

	if (tf == NULL || !tracefile_direct_on(tf))
		return;
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

/*
 * While a rotation's preamble walks /proc, the task records drained into
 * the old file are kept for the new one too (track.h): a task born after
 * the walk passed it is named there and nowhere else.
 */
void
record_keep_begin(struct record *rec)
{
	rec->kept.len = 0;
	rec->keeping = 1;
}

void
record_keep_end(struct record *rec)
{
	rec->keeping = 0;
	rec->kept.len = 0;
}

static void
record_keep(struct record *rec, const uint8_t *data, size_t size,
    uint64_t from, uint64_t to)
{
	if (!rec->keeping)
		return;
	if (track_copy(&rec->kept, data, size, from, to) == -1) {
		log_warnx("out of memory keeping task records for the next "
		    "file; tasks born during its /proc walk may go unnamed");
		record_keep_end(rec);
	}
}

/* What one pass found in a ring, for the push of its mode. */
struct record_take {
	uint64_t		 head, tail;
	struct ring_span	 sp;
	int64_t			 n;		/* bytes */
	struct ring_counts	 before;	/* the ring's counts until now */
	size_t			 bogus;		/* build-id flags to repair */
};

/*
 * The serial mode (cblocks = 0, or the ring's cblocks could not be
 * made): write from the ring (or a copy without our own samples), then
 * release it. The bytes it put into tf.
 */
static size_t
record_push_serial(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, const struct record_take *t)
{
	struct tracefile_mark	 mark;
	struct iovec		 iov[2];
	const uint8_t		*src[2];
	size_t			 len, l[2];
	uint64_t		 off;

	src[0] = c->ring.data + t->sp.off[0];
	l[0] = t->sp.len[0];
	src[1] = c->ring.data + t->sp.off[1];
	l[1] = t->sp.len[1];
	if (c->counts.self != t->before.self || t->bogus) {
		l[0] = ring_copy_excl(&c->ring, t->tail, t->head, rec->xbuf,
		    rec->self_pid, rec->pid_off);
		src[0] = rec->xbuf;
		l[1] = 0;
		if (t->bogus)
			buildid_repair(rec->xbuf, l[0],
			    rec->cfg.kernel_build_id);
	}
	/* a rotation's tracking records: from the copy where
	 * there is one, whose build-id flags are repaired */
	if (src[0] == rec->xbuf)
		record_keep(rec, rec->xbuf, l[0], 0, l[0]);
	else
		record_keep(rec, c->ring.data, c->ring.size, t->tail, t->head);
	mark.samples = c->counts.samples - t->before.samples;
	mark.first = mark.last = 0;
	record_mark(rec, &mark, src, l);
	if (rec->zc != NULL && l[0] + l[1] > 0 &&
	    (len = compress_records(rec->zc, rec->zbuf,
	    rec->zcap, src[0], l[0], src[1], l[1])) > 0) {
		tracefile_compressed(tf, l[0] + l[1], len);
		src[0] = rec->zbuf;
		l[0] = len;
		l[1] = 0;
	}
	len = l[0] + l[1];
	off = tracefile_reserve(tf, len, &mark);
	iov[0].iov_base = (void *)(uintptr_t)src[0];
	iov[0].iov_len = l[0];
	iov[1].iov_base = (void *)(uintptr_t)src[1];
	iov[1].iov_len = l[1];
	if (tracefile_pwritev(tf, off, iov, 2) == -1)
		c->aio.bytes_dropped += len;
	else
		c->aio.bytes_written += len;
	ring_release(&c->ring, t->head);
	record_count_file(tf, &c->counts, &t->before);
	return len;
}

static void
record_note_mmap2(uint8_t *r, size_t len, void *arg)
{
	struct record	*rec = arg;

	buildid_note_copy(rec->bids, r, len, rec->cfg.kernel_build_id);
}

/*
 * The AIO mode, in the manner of perf's perf_mmap__push: copy the ring
 * to dst (room for avail bytes: a cblock, or the pool's open block),
 * release the ring, and return the bytes put at dst (0: only our own
 * samples were there), mark what they hold.
 */
static size_t
record_copy_ring(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, const struct record_take *t, uint8_t *dst,
    size_t avail, struct tracefile_mark *mark)
{
	struct ring_filter	 f;
	uint8_t			*src = rec->zc ? rec->xbuf : dst;
	size_t			 len, n;

	/*
	 * Copy first (it streams), then one walk over the copy while it is
	 * in the cache: count, drop our own samples, take the sample times,
	 * note (and repair) the MMAP2s for the build-ids. Compression
	 * happens here too, into dst: the AIO path stays the same, with
	 * fewer bytes.
	 */
	ring_copy(&c->ring, &t->sp, src);
	/* the copy is ours: give the space back to the kernel now */
	ring_release(&c->ring, t->head);
	memset(&f, 0, sizeof(f));
	f.pid = rec->self_pid;
	f.pid_off = rec->pid_off;
	f.time_off = rec->time_off;
	f.mmap2 = record_note_mmap2;
	f.arg = rec;
	len = ring_filter_buf(src, (size_t)t->n, &c->counts, &f);
	record_count_file(tf, &c->counts, &t->before);
	if (len == 0)
		return 0;	/* only our own samples */
	record_keep(rec, src, len, 0, len);
	mark->samples = c->counts.samples - t->before.samples;
	mark->first = f.first;
	mark->last = f.last;
	if (rec->zc == NULL)
		return len;
	if ((n = compress_records(rec->zc, dst, avail, src, len, NULL, 0)) >
	    0) {
		tracefile_compressed(tf, len, n);
		return n;
	}
	memcpy(dst, src, len);
	return len;
}

/* A buffered file: the copy goes to cb, a free cblock of c, staged
 * for the pass to submit. 1 with cb staged (cb->len: its records), 0
 * when only our own samples were there. */
static int
record_push_aio(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, const struct record_take *t, struct cblock *cb)
{
	cb->len = record_copy_ring(rec, c, tf, t, cb->buf,
	    cb->cap - RECORD_ROUND_LEN, &cb->mark);
	if (cb->len == 0)
		return 0;
	cb->busy = 1;	/* staged: not pickable until submitted */
	return 1;
}

/* The pool's room a drain of n ring bytes needs, and a round after it. */
static size_t
record_pool_need(const struct record *rec, uint64_t n)
{
	return (rec->zc ? compress_bound((size_t)n) : (size_t)n) +
	    RECORD_ROUND_LEN;
}

/* A direct file: the copy goes to the end of the stream, at room in
 * the pool's open block. The bytes it put there. */
static size_t
record_push_pool(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, const struct record_take *t, uint8_t *room)
{
	struct tracefile_mark	 mark;
	size_t			 len;

	len = record_copy_ring(rec, c, tf, t, room, record_pool_need(rec,
	    (uint64_t)t->n) - RECORD_ROUND_LEN, &mark);
	if (len > 0)
		record_pool_put(&rec->pool, tf, len, &mark);
	return len;
}

/*
 * A free cblock of c for this pass, or NULL to leave the ring: every
 * cblock in flight (a disk slower than the data). Waiting would hold the
 * loop for as long as the disk takes, and status, stop and the control
 * socket with it (seen: 0.1-1.1 s on a 50 MB/s disk); the ring may
 * overflow meanwhile, and the kernel counts that loss exactly. Only a
 * file's last drain (rotation, stop, CPU offline) waits, so that every
 * ring ends in the file it belongs to.
 */
static struct cblock *
record_free_cblock(struct record *rec, struct record_cpu *c, int last)
{
	size_t	 n = rec->cfg.cblocks;
	int	 k;

	if ((k = cblock_pick(c->cbs, n)) == -1 && last) {
		cblock_wait(&rec->q, c->cbs, n);
		k = cblock_pick(c->cbs, n);
	}
	return k == -1 ? NULL : &c->cbs[k];
}

/* What one pass did, ring by ring (record_drain), for its end. */
struct record_sweep {
	size_t		 nstaged;	/* cblocks staged (buffered file) */
	size_t		 npushed;	/* rings copied to cblocks or the pool */
	size_t		 nserial;	/* rings written serially */
	size_t		 nflight;	/* rings taken by a flight window */
	size_t		 left;		/* non-empty rings not read */
	uint64_t	 drained;	/* bytes copied to the file */
};

/*
 * A pass's end, once its rings are copied: the FINISHED_ROUND where the
 * pass read every ring (into the pool's open block, the last staged
 * cblock, or a write of its own), the staged cblocks and the pool's
 * slices submitted, and what the file's writes came to.
 */
static void
record_pass_end(struct record *rec, struct tracefile *tf, int direct,
    const struct record_sweep *w, int last, struct record_pass *pass)
{
	struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND, 0,
	    RECORD_ROUND_LEN };
	struct cblock		*cb;
	uint8_t			*room;
	uint64_t		 off;
	size_t			 i;

	/* flight hook: a pass that read every ring closes the window's
	 * round, as it would a file's */
	if (w->nflight > 0 && w->left == 0)
		record_window_round(rec);
	if (w->npushed == 0 && w->nserial == 0)
		return;
	if (w->left > 0)
		rec->round_bytes += w->drained;
	else if (direct) {
		/* each room left space for it */
		room = record_pool_room(&rec->pool, tf, RECORD_ROUND_LEN, 0);
		memcpy(room, &round, RECORD_ROUND_LEN);
		record_pool_put(&rec->pool, tf, RECORD_ROUND_LEN, NULL);
		rec->round_bytes = 0;
	} else if (w->nstaged > 0) {
		cb = rec->staged[w->nstaged - 1];
		memcpy(cb->buf + cb->len, &round, RECORD_ROUND_LEN);
		cb->len += RECORD_ROUND_LEN;
		rec->round_bytes = 0;
	} else {
		off = tracefile_reserve(tf, RECORD_ROUND_LEN, NULL);
		tracefile_pwrite(tf, off, &round, RECORD_ROUND_LEN);
		rec->round_bytes = 0;
	}
	/* a slice once enough is unsent; everything at a file's last drain */
	if (direct)
		(void)record_pool_send(&rec->pool, last);
	for (i = 0; i < w->nstaged; i++) {
		cb = rec->staged[i];
		cb->busy = 0;
		off = tracefile_reserve(tf, cb->len, &cb->mark);
		if (cblock_submit(&rec->q, cb, tf, off, tf->fd) == -1)
			log_warn("%s: aio_write", tf->partial);
	}
	if (tf->bad_off != UINT64_MAX)
		pass->err = tf->err;
	else if (rec->cfg.rotate_size && tf->reserved >= rec->cfg.rotate_size)
		pass->full = 1;
}

/*
 * One pass over every ring. perf's ordering rule: at a FINISHED_ROUND it
 * sorts and flushes everything up to the newest time it had seen at the
 * previous one. So a round may only close after a pass that read every
 * ring up to the head it saw: an event left behind in a ring (below min,
 * or no buffer free for it) would arrive after perf had flushed newer
 * ones, a FORK or COMM after the samples that need it. Such a pass writes
 * no FINISHED_ROUND; its data belongs to the round the next full pass
 * closes.
 *
 * A buffered file's rings go to cblocks of their own, submitted at the
 * pass's end; a direct file's go one after another into the pool's open
 * block (record-pool.h), written in large slices.
 *
 * The pass reports (pass) and decides nothing: a failed write, a file at
 * its rotation size, rings left for want of a buffer are for record.c.
 */
void
record_drain(struct record *rec, uint64_t min, int last,
    struct record_pass *pass)
{
	struct record_cpu	*c;
	struct record_take	 t;
	struct record_sweep	 w = { 0 };
	struct cblock		*cb = NULL;
	size_t			 i, n;
	struct tracefile	*tf = rec->cur;
	int			 aio = rec->mode == RECORD_AIO && tf != NULL;
	int			 direct = aio && tracefile_direct_on(tf);
	uint8_t			*room = NULL;

	memset(pass, 0, sizeof(*pass));
	if (rec->state != RECORD_RUNNING)
		return;
	/* completions are polled: aio_error reads memory, no system call */
	cblock_reap(&rec->q);
	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		if (c->ring.base == NULL)
			continue;
		t.head = ring_head(&c->ring);
		t.tail = ring_tail(&c->ring);
		c->full = track_ring_full(c->ring.size, t.head - t.tail);
		if (t.head == t.tail)
			continue;
		if (t.head - t.tail < min) {
			w.left++;
			continue;
		}
		/* before reading any of the ring: no scan of data that
		 * cannot be copied now */
		if (direct)
			room = record_pool_room(&rec->pool, tf,
			    record_pool_need(rec, t.head - t.tail), last);
		else if (aio)
			room = (cb = record_free_cblock(rec, c, last)) ?
			    cb->buf : NULL;
		if (aio && room == NULL) {
			w.left++;
			pass->busy++;
			continue;
		}
		if ((t.n = ring_span(t.head, t.tail, c->ring.size, &t.sp)) <
		    0) {
			log_warnx("cpu %d: ring head %" PRIu64 " and tail %"
			    PRIu64 " are inconsistent; skipping its data",
			    c->cpu, t.head, t.tail);
			ring_release(&c->ring, t.head);
			continue;
		}
		t.before = c->counts;
		c->bytes += (uint64_t)t.n;
		t.bogus = 0;
		if (!aio) {
			/* paused or serial: read the records in the ring (the
			 * AIO mode reads its copy, record_copy_ring) */
			t.bogus = buildid_note_ring(rec->bids, c->ring.data,
			    c->ring.size, t.tail, t.head,
			    rec->cfg.kernel_build_id);
			ring_count_excl(c->ring.data, c->ring.size, t.tail,
			    t.head, &c->counts, rec->self_pid, rec->pid_off);
		}
		if (tf == NULL && rec->flight != NULL) {
			/* flight hook: a flight recording has no file; its
			 * window takes the data (record-flight.c) */
			record_window_take(rec, c, t.tail, t.head, t.bogus != 0);
			w.nflight++;
			continue;
		}
		if (tf == NULL) {
			/* paused: keep the ring moving, count what is dropped */
			c->aio.bytes_dropped += (uint64_t)t.n;
			ring_release(&c->ring, t.head);
			continue;
		}
		if (!aio) {
			w.drained += record_push_serial(rec, c, tf, &t);
			w.nserial++;
			continue;
		}
		if (direct) {
			if ((n = record_push_pool(rec, c, tf, &t, room)) > 0) {
				w.drained += n;
				w.npushed++;
			}
			continue;
		}
		if (record_push_aio(rec, c, tf, &t, cb) == 1) {
			rec->staged[w.nstaged++] = cb;
			w.drained += cb->len;
			w.npushed++;
		}
	}
	record_pass_end(rec, tf, direct, &w, last, pass);
}

/* What a drain of one ring (counts, was before) put into tf. */
static void
record_count_file(struct tracefile *tf, const struct ring_counts *now,
    const struct ring_counts *before)
{
	tracefile_count(tf, now->samples - before->samples,
	    now->lost - before->lost, now->lost_samples - before->lost_samples);
}

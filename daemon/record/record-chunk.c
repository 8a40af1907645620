/*
 * record-chunk makes a ring's new data a chunk for the file: the span is
 * copied (or, serially, written where it lies), our own samples are left
 * out, build-id flags repaired, the sample times and counts taken, and
 * the chunk compressed with -z; a rotation's task records are kept
 * meanwhile. The sinks (record-sink.c) call it with their buffer, on the
 * drain thread or in the loop with the recording's lock held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include "log.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfdata.h"
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

/*
 * The serial sink's chunk (cblocks = 0, or the ring's cblocks could not
 * be made): the pieces its push took written from the ring (or a copy
 * without our own samples), then the ring released. The bytes it put
 * into tf.
 */
size_t
record_chunk_serial(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, const struct record_take *t)
{
	struct tracefile_mark	 mark;
	struct iovec		 iov[2];
	const uint8_t		*src[2];
	size_t			 len, l[2];

	src[0] = t->iov[0].iov_base;
	l[0] = t->iov[0].iov_len;
	src[1] = t->niov > 1 ? t->iov[1].iov_base : NULL;
	l[1] = t->niov > 1 ? t->iov[1].iov_len : 0;
	if (c->counts.self != t->before.self || t->repair) {
		l[0] = ring_copy_excl(&c->ring, t->tail, t->head, rec->xbuf,
		    rec->self_pid, rec->pid_off);
		src[0] = rec->xbuf;
		l[1] = 0;
		if (t->repair)
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
	iov[0].iov_base = (void *)(uintptr_t)src[0];
	iov[0].iov_len = l[0];
	iov[1].iov_base = (void *)(uintptr_t)src[1];
	iov[1].iov_len = l[1];
	(void)writer_writev(&rec->w, &c->lane, iov, 2, &mark);
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
 * Every sink that copies: the ring's bytes, which its push copied to
 * t->copy (dst itself, or without -z the drain's buffer), made the
 * chunk at dst (a cblock, the pool's open block, the spill's buffer):
 * the ring released, and the bytes put at dst returned (0: only our own
 * samples were there), mark what they hold.
 */
size_t
record_chunk(struct record *rec, struct record_cpu *c,
    struct tracefile *tf, const struct record_take *t, uint8_t *dst,
    size_t avail, struct tracefile_mark *mark)
{
	struct ring_filter	 f;
	uint8_t			*src = t->copy;
	size_t			 len, n;

	/*
	 * The copy first (push made it: it streams), then one walk over the
	 * copy while it is in the cache: count, drop our own samples, take
	 * the sample times, note (and repair) the MMAP2s for the build-ids.
	 * Compression happens here too, into dst: the write path stays the
	 * same, with fewer bytes.
	 */
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

/* What a drain of one ring (counts, was before) put into tf. */
static void
record_count_file(struct tracefile *tf, const struct ring_counts *now,
    const struct ring_counts *before)
{
	tracefile_count(tf, now->samples - before->samples,
	    now->lost - before->lost, now->lost_samples - before->lost_samples);
}

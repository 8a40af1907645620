/*
 * record-drain makes one pass over every ring. The drain threads make
 * them, a rotation's last one too (the switch the loop asks of them);
 * the loop makes a file's last one at a stop, a snapshot or a CPU
 * offline, and a rotation's and the tick's when no drain thread runs,
 * with the recording's lock held. A pass pushes each ring's new bytes to the
 * file's sink (record-sink.c), as perf's perf_mmap__push hands them to
 * record__pushfn; the sink makes the chunk (record-chunk.c leaves our
 * own samples out and compresses) and queues its write. The pass closes
 * the rounds by which perf sorts the events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include "log.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfdata.h"
#include "record-int.h"
#include "track.h"
#include "worker.h"

/*
 * A pass ends once its rings are pushed: the sink puts a FINISHED_ROUND
 * after its last chunk where the pass read every ring, queues its
 * writes, and the pass reports what the file's writes came to.
 */
static void
record_pass_end(struct record *rec, const struct record_sink *sk,
    struct tracefile *tf, struct record_sweep *w, int last,
    struct record_pass *pass)
{
	if (w->nflight > 0 && w->left == 0 && sk->round != NULL)
		sk->round(rec, tf, w);
	if (tf == NULL || (w->npushed == 0 && !sk->flush_idle))
		return;
	if (w->npushed == 0)
		;	/* nothing new: no round */
	else if (w->left > 0)
		rec->round_bytes += w->drained;
	else {
		sk->round(rec, tf, w);
		rec->round_bytes = 0;
	}
	if (sk->flush != NULL)
		sk->flush(rec, tf, w, last);
	if (tracefile_error(tf) != 0)
		pass->err = tracefile_error(tf);
	else if (rec->cfg.rotate_size &&
	    tracefile_reserved(tf) >= rec->cfg.rotate_size)
		pass->full = 1;
}

/*
 * One pass pushes each ring's new bytes to the file's sink
 * (record-sink.c), which makes them a chunk. perf's ordering rule is
 * this: at a FINISHED_ROUND it sorts and flushes everything up to the
 * newest time it had seen at the previous one. So a round may only close
 * after a pass that read every ring up to the head it saw: an event left
 * behind in a ring (below min, or no buffer free for it) would arrive
 * after perf had flushed newer ones, a FORK or COMM after the samples
 * that need it. Such a pass writes no FINISHED_ROUND; its data belongs to
 * the round the next full pass closes.
 *
 * The pass reports (pass) and decides nothing: a failed write, a file at
 * its rotation size, rings left for want of a buffer are for record.c.
 * Its work is bounded: each ring is read once, up to the head it had.
 */
void
record_drain(struct record *rec, uint64_t min, int last,
    struct record_pass *pass)
{
	const struct record_sink *sk;
	struct record_cpu	*c;
	struct record_take	 t;
	struct record_sweep	 w = { 0 };
	struct tracefile	*tf = rec->cur;
	size_t			 i;

	memset(pass, 0, sizeof(*pass));
	if (rec->state != RECORD_RUNNING)
		return;
	sk = rec->sink;
	/* completions are polled: aio_error reads memory, no system call */
	writer_reap(&rec->w);
	/*
	 * Every ring's head first, then their data: a pass takes what the
	 * rings held at one moment. Read one by one, a head would be read
	 * after the rings before it were pushed (a millisecond or more on a
	 * storm), and a file's last pass could end with a thread's samples,
	 * read late from its CPU's ring, while the FORK that names it, made
	 * on another CPU after that ring's head was read, went to the next
	 * file.
	 */
	rec->pass_ns = worker_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].ring.base != NULL)
			rec->cpus[i].pass_head = ring_head(&rec->cpus[i].ring);
	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		if (c->ring.base == NULL)
			continue;
		if (last && i > 0)
			record_test_gap("PERFSPILL_TEST_RING_GAP");
		t.head = c->pass_head;
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
		memset(&t.room, 0, sizeof(t.room));
		t.copy = NULL;
		if (sk->room != NULL && sk->room(rec, c, tf, &t, last) == -1) {
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
		t.repair = 0;
		if (sk->reads_ring) {
			/* the records are read in the ring (the others read
			 * their copy, record_chunk) */
			t.repair = buildid_note_ring(rec->bids, c->ring.data,
			    c->ring.size, t.tail, t.head,
			    rec->cfg.kernel_build_id);
			ring_count_excl(c->ring.data, c->ring.size, t.tail,
			    t.head, &c->counts, rec->self_pid, rec->pid_off);
		}
		t.len = 0;
		t.niov = 0;
		ring_push(&c->ring, &t.sp, sk->push, &t);
		sk->done(rec, c, tf, &t, &w);
	}
	record_pass_end(rec, sk, tf, &w, last, pass);
	/* the files this pass mapped are read in one batch, after it */
	buildid_kick(rec->bids);
}

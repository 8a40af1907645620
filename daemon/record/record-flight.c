/*
 * record-flight: a flight recording's side of the drain and its
 * snapshots. The drain hands each ring's data to the window (flight.h)
 * instead of a file: nothing is written while it waits. A snapshot takes
 * the window in the loop and creates its file at once (its name is
 * known to whoever asked); the preamble (/proc walk) is built on the
 * rotation thread; then the loop queues preamble, task store and window
 * as AIO writes (no copy: the window's chunks become the writes' buffers)
 * and closes the file, which is finished as any other (record-file.c:
 * manifest, hand-off, retention). Whether and when to snapshot is
 * record.c's decision.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flight.h"
#include "log.h"
#include "record-int.h"

/* The causes of snapshots still being finished, for their manifests. */
#define RECORD_FLIGHT_PENDING	8

struct record_flight {
	struct flight		 fl;
	struct flight_snap	 snap;		/* taken, waiting for its file */
	struct tracefile	*tf;		/* ...created at the snapshot */
	struct timespec		 t0;		/* when the snapshot began */
	struct {
		unsigned int	 seq;
		char		 why[RECORD_WHY_LEN];
		struct timespec	 t0;
	}			 pending[RECORD_FLIGHT_PENDING];
	size_t			 nr_pending;
	uint64_t		 snapshots;	/* finished whole */
	uint64_t		 failed;
	uint64_t		 last_ms;	/* the last one's time to finish */
	uint64_t		 stall_us_max;	/* the loop's longest part */
	char			 last_why[RECORD_WHY_LEN];
	char			 last_file[NAME_MAX + 1];
};

static uint64_t
record_flight_us(const struct timespec *a)
{
	struct timespec	 b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (uint64_t)((b.tv_sec - a->tv_sec) * 1000000L +
	    (b.tv_nsec - a->tv_nsec) / 1000);
}

static void
record_flight_stall(struct record_flight *rf, const struct timespec *t)
{
	uint64_t	 us = record_flight_us(t);

	if (us > rf->stall_us_max)
		rf->stall_us_max = us;
}

int
record_flight_create(struct record *rec)
{
	struct record_flight	*rf;

	if ((rf = calloc(1, sizeof(*rf))) == NULL)
		return -1;
	flight_init(&rf->fl, rec->cfg.window, rec->cfg.window_bytes,
	    rec->time_off);
	TAILQ_INIT(&rf->snap.chunks);
	rec->flight = rf;
	return 0;
}

void
record_flight_free(struct record *rec)
{
	struct record_flight	*rf = rec->flight;

	if (rf == NULL)
		return;
	flight_finish(&rf->fl);
	flight_snap_free(&rf->snap);
	/* a file begun and never written is finished empty (removed) */
	if (rf->tf != NULL) {
		tracefile_failed(rf->tf, 0, ECANCELED);
		tracefile_close(rf->tf, NULL, NULL);
		TAILQ_INSERT_TAIL(&rec->closing, rf->tf, entry);
	}
	free(rf);
	rec->flight = NULL;
}

int
record_flight_seed(struct record *rec)
{
	struct record_prep	*p;
	const uint8_t		*t;
	size_t			 len;
	int			 rc = -1;

	if ((p = record_prep_create(rec, NULL)) == NULL)
		return -1;
	record_prep_run(p);
	if ((t = record_prep_tasks(p, &len)) != NULL &&
	    flight_seed(&rec->flight->fl, t, len) == 0)
		rc = 0;
	record_prep_free(p);
	return rc;
}

/*
 * The drain's hook (record-drain.c): [tail, head) of c's ring goes to
 * the window, without our own samples, build-id flags repaired; the
 * ring is released at once. Memory that runs out loses the chunk,
 * counted as dropped.
 */
void
record_flight_take(struct record *rec, struct record_cpu *c, uint64_t tail,
    uint64_t head, int bogus)
{
	struct record_flight	*rf = rec->flight;
	uint8_t			*buf;
	size_t			 len;

	if ((buf = malloc((size_t)(head - tail) + FLIGHT_ROUND_LEN)) == NULL) {
		c->aio.bytes_dropped += head - tail;
		rf->fl.st.oom++;
		ring_release(&c->ring, head);
		return;
	}
	len = ring_copy_excl(&c->ring, tail, head, buf, rec->self_pid,
	    rec->pid_off);
	ring_release(&c->ring, head);
	if (bogus)
		buildid_repair(buf, len, rec->cfg.kernel_build_id);
	rec->round_bytes += len;
	if (flight_add(&rf->fl, buf, len) == -1)
		c->aio.bytes_dropped += len;
}

/* The drain's other hook: a pass read every ring, the round closes. */
void
record_flight_round(struct record *rec)
{
	flight_round(&rec->flight->fl);
	rec->round_bytes = 0;
}

/*
 * A snapshot's first half, in the loop: every ring is drained into the
 * window, the window is taken and its file created. *name: the final
 * name it will have. 0, or -1 with errno.
 */
int
record_flight_begin(struct record *rec, const char *why, const char **name)
{
	struct record_flight	*rf = rec->flight;
	struct record_pass	 pass;
	struct timespec		 t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rf->tf != NULL) {
		errno = EBUSY;
		return -1;
	}
	/* what the rings hold joins the window, and its round closes */
	record_drain(rec, 0, 1, &pass);
	/* through the page cache: the window goes out from the buffers it
	 * was drained into, unaligned, with no copy */
	if ((rf->tf = tracefile_open(rec->dirfd, rec->host, &rec->seq, 0)) ==
	    NULL)
		return -1;
	if (flight_take(&rf->fl, &rf->snap) == -1)
		log_warnx("%s: out of memory for the task store; tasks that "
		    "exited may go unnamed", rf->tf->partial);
	rf->t0 = t0;
	snprintf(rf->last_why, sizeof(rf->last_why), "%s", why);
	*name = rf->tf->name;
	record_flight_stall(rf, &t0);
	return 0;
}

/* Queue len bytes of buf (taken) at the next offset of tf, through AIO
 * whatever the recording's cblocks: the loop never writes a window. */
static void
record_flight_queue(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	struct cblock	*cb;
	uint64_t	 off;

	if (len == 0) {
		free(buf);
		return;
	}
	off = tracefile_reserve(tf, len, mark);
	if ((cb = cblock_create_heap(buf, len, &rec->heap_stats)) == NULL) {
		free(buf);
		tracefile_failed(tf, off, ENOMEM);
		return;
	}
	if (cblock_submit(&rec->q, cb, tf, off, tf->fd) == -1)
		log_warn("%s: aio_write", tf->partial);
}

/*
 * A snapshot's second half, in the loop, once p (the preamble: the tasks
 * alive now) is built: the preamble, the task store (the tasks the
 * window's records do not name from their start; not the FORK of a task
 * the preamble names, which perf would take for a new copy of its
 * parent), then the window's chunks; the file is closed and finishes
 * when the writes have landed. 0, or -1 when the file had to be given
 * up (it is finished empty, i.e. removed).
 */
int
record_flight_write(struct record *rec, struct record_prep *p)
{
	struct record_flight	*rf = rec->flight;
	struct tracefile	*tf = rf->tf;
	struct flight_chunk	*c;
	struct tracefile_mark	 mark;
	struct timespec		 t;
	uint8_t			*buf;
	size_t			 len;

	clock_gettime(CLOCK_MONOTONIC, &t);
	rf->tf = NULL;
	if (tf == NULL)
		return -1;
	if (p == NULL || (buf = record_prep_head(p, tf, &len)) == NULL) {
		log_warn("%s: cannot build the snapshot's preamble",
		    tf->partial);
		flight_snap_free(&rf->snap);
		tracefile_failed(tf, 0, errno ? errno : EIO);
		tracefile_close(tf, NULL, NULL);
		TAILQ_INSERT_TAIL(&rec->closing, tf, entry);
		rf->failed++;
		return -1;
	}
	record_flight_queue(rec, tf, buf, len, NULL);
	if (rf->snap.store != NULL) {
		len = record_prep_drop_forks(p, rf->snap.store,
		    rf->snap.store_len);
		record_flight_queue(rec, tf, rf->snap.store, len, NULL);
		rf->snap.store = NULL;
	}
	while ((c = TAILQ_FIRST(&rf->snap.chunks)) != NULL) {
		TAILQ_REMOVE(&rf->snap.chunks, c, entry);
		mark.samples = c->samples;
		mark.first = c->first;
		mark.last = c->last;
		tracefile_count(tf, c->samples, 0, 0);
		record_flight_queue(rec, tf, c->buf, c->len, &mark);
		free(c);
	}
	flight_snap_free(&rf->snap);
	if (rf->nr_pending < RECORD_FLIGHT_PENDING) {
		rf->pending[rf->nr_pending].seq = tf->seq;
		rf->pending[rf->nr_pending].t0 = rf->t0;
		snprintf(rf->pending[rf->nr_pending].why, RECORD_WHY_LEN, "%s",
		    rf->last_why);
		rf->nr_pending++;
	}
	log_info("snapshot (%s): writing %s", rf->last_why, tf->partial);
	record_close_file(rec, tf);
	record_flight_stall(rf, &t);
	return 0;
}

/*
 * A file of the recording is finished (record-file.c): when it was a
 * snapshot, what took it (for its manifest) into why, and its time from
 * the snapshot to a finished file is noted. 1 for a snapshot, else 0.
 */
int
record_flight_done(struct record *rec, const struct tracefile *tf,
    int whole, char *why, size_t len)
{
	struct record_flight	*rf = rec->flight;
	size_t			 i;

	if (rf == NULL)
		return 0;
	for (i = 0; i < rf->nr_pending; i++)
		if (rf->pending[i].seq == tf->seq)
			break;
	if (i == rf->nr_pending)
		return 0;
	snprintf(why, len, "%s", rf->pending[i].why);
	if (whole) {
		rf->snapshots++;
		rf->last_ms = record_flight_us(&rf->pending[i].t0) / 1000;
		snprintf(rf->last_file, sizeof(rf->last_file), "%s", tf->name);
	} else
		rf->failed++;
	rf->pending[i] = rf->pending[--rf->nr_pending];
	return 1;
}

/* A snapshot is being built: its file exists, its writes do not. */
int
record_flight_busy(const struct record *rec)
{
	return rec->flight != NULL && rec->flight->tf != NULL;
}

uint64_t
record_flight_bytes(const struct record *rec)
{
	return rec->flight != NULL ? rec->flight->fl.st.bytes +
	    rec->flight->fl.store.len : 0;
}

json_object *
record_flight_status(struct record *rec)
{
	struct record_flight	*rf = rec->flight;
	json_object		*o = json_object_new_object();

#define U64(k, v)	json_object_object_add(o, k, json_object_new_uint64(v))
	U64("window", rec->cfg.window);
	U64("window_bytes", rec->cfg.window_bytes);
	U64("memory_max", flight_memory_max(rec->cfg.window_bytes));
	U64("bytes", rf->fl.st.bytes);
	U64("chunks", rf->fl.st.chunks);
	U64("evicted_bytes", rf->fl.st.evicted);
	U64("store_bytes", rf->fl.store.len);
	U64("store_pruned", rf->fl.st.store_pruned);
	U64("store_dropped", rf->fl.st.store_dropped);
	U64("out_of_memory", rf->fl.st.oom);
	U64("snapshots", rf->snapshots);
	U64("snapshots_failed", rf->failed);
	U64("last_snapshot_ms", rf->last_ms);
	U64("snapshot_stall_us_max", rf->stall_us_max);
#undef U64
	if (rf->last_file[0]) {
		json_object_object_add(o, "last_snapshot",
		    json_object_new_string(rf->last_file));
		json_object_object_add(o, "last_trigger",
		    json_object_new_string(rf->last_why));
	}
	return o;
}

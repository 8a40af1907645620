/*
 * record-flight takes a flight recording's snapshots. The drain hands
 * each ring's data to the window (record-window.c, flight.h) instead of a
 * file: nothing is written while it waits. A snapshot takes the window in
 * the loop and creates its file at once (its name is known to whoever
 * asked); the preamble (/proc walk) is built on the rotation thread; then
 * the loop queues preamble, task store and window as AIO writes (no copy:
 * the window's chunks become the writes' buffers) and closes the file,
 * which is finished as any other (record-file.c: manifest, hand-off,
 * retention). Whether and when to snapshot is record.c's decision.
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
	if ((rf->tf = tracefile_open(rec->dirfd, rec->stem, &rec->seq, 0)) ==
	    NULL)
		return -1;
	if (flight_take(&rf->fl, &rf->snap) == -1)
		log_warnx("%s: out of memory for the task store; tasks that "
		    "exited may go unnamed", tracefile_partial(rf->tf));
	rf->t0 = t0;
	snprintf(rf->last_why, sizeof(rf->last_why), "%s", why);
	*name = tracefile_name(rf->tf);
	record_window_stall(rf, &t0);
	return 0;
}

/* Queue len bytes of buf (taken) at the next offset of tf, through AIO
 * whatever the recording's cblocks: the loop never writes a window. */
static void
record_flight_queue(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len, const struct tracefile_mark *mark)
{
	writer_queue(&rec->w, tf, buf, len, mark);
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
	struct tracefile_info	 info;
	struct timespec		 t;
	uint8_t			*buf;
	size_t			 len;

	clock_gettime(CLOCK_MONOTONIC, &t);
	rf->tf = NULL;
	if (tf == NULL)
		return -1;
	if (p == NULL || (buf = record_prep_head(p, tf, &len)) == NULL) {
		log_warn("%s: cannot build the snapshot's preamble",
		    tracefile_partial(tf));
		flight_snap_free(&rf->snap);
		tracefile_failed(tf, 0, errno ? errno : EIO);
		tracefile_close(tf, NULL, NULL);
		tracefile_list_add(&rec->files.closing, tf);
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
	tracefile_info(tf, &info);
	if (rf->nr_pending < RECORD_FLIGHT_PENDING) {
		rf->pending[rf->nr_pending].seq = info.seq;
		rf->pending[rf->nr_pending].t0 = rf->t0;
		snprintf(rf->pending[rf->nr_pending].why, RECORD_WHY_LEN, "%s",
		    rf->last_why);
		rf->nr_pending++;
	}
	log_info("snapshot (%s): writing %s", rf->last_why, info.partial);
	record_close_file(rec, tf);
	record_window_stall(rf, &t);
	return 0;
}


/*
 * record-window holds a flight recording's memory: the drain's hooks that
 * hand each ring's data to the window (flight.h) instead of a file, what
 * a finished snapshot tells the window, and its figures. The snapshots
 * themselves are record-flight.c's; whether and when to take one,
 * record.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flight.h"
#include "jemit.h"
#include "record-int.h"
#include "proto.h"

uint64_t
record_window_us(const struct timespec *a)
{
	struct timespec	 b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (uint64_t)((b.tv_sec - a->tv_sec) * 1000000L +
	    (b.tv_nsec - a->tv_nsec) / 1000);
}

void
record_window_stall(struct record_flight *rf, const struct timespec *t)
{
	uint64_t	 us = record_window_us(t);

	if (us > rf->stall_us_max)
		rf->stall_us_max = us;
}

int
record_window_create(struct record *rec)
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
record_window_free(struct record *rec)
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
		tracefile_list_add(&rec->files.closing, rf->tf);
	}
	free(rf);
	rec->flight = NULL;
}

/*
 * The window sink's done (record-sink.c): the ring's [tail, head) goes
 * to the window, without our own samples, build-id flags repaired; the
 * ring is released at once. Memory that runs out loses the chunk,
 * counted as dropped.
 */
void
record_window_take(struct record *rec, struct record_cpu *c,
    struct record_take *t)
{
	struct record_flight	*rf = rec->flight;
	uint64_t		 tail = t->tail, head = t->head;
	uint8_t			*buf;
	size_t			 len;

	if ((buf = malloc((size_t)(head - tail) + FLIGHT_ROUND_LEN)) == NULL) {
		c->lane.stats.bytes_dropped += head - tail;
		rf->fl.st.oom++;
		ring_release(&c->ring, head);
		return;
	}
	len = ring_copy_excl(&c->ring, tail, head, buf, rec->self_pid,
	    rec->pid_off);
	ring_release(&c->ring, head);
	if (t->repair)
		buildid_repair(buf, len, rec->cfg.kernel_build_id);
	rec->round_bytes += len;
	if (flight_add(&rf->fl, buf, len) == -1)
		c->lane.stats.bytes_dropped += len;
}

/* The drain's other hook: a pass read every ring, the round closes. */
void
record_window_round(struct record *rec)
{
	flight_round(&rec->flight->fl);
	rec->round_bytes = 0;
}

/*
 * A file of the recording is finished (record-file.c): when it was a
 * snapshot, what took it (for its manifest) into why, and its time from
 * the snapshot to a finished file is noted. 1 for a snapshot, else 0.
 */
int
record_window_done(struct record *rec, const struct tracefile *tf,
    int whole, char *why, size_t len)
{
	struct record_flight	*rf = rec->flight;
	struct tracefile_info	 info;
	size_t			 i;

	if (rf == NULL)
		return 0;
	tracefile_info(tf, &info);
	for (i = 0; i < rf->nr_pending; i++)
		if (rf->pending[i].seq == info.seq)
			break;
	if (i == rf->nr_pending)
		return 0;
	snprintf(why, len, "%s", rf->pending[i].why);
	if (whole) {
		rf->snapshots++;
		rf->last_ms = record_window_us(&rf->pending[i].t0) / 1000;
		snprintf(rf->last_file, sizeof(rf->last_file), "%s", info.name);
	} else
		rf->failed++;
	rf->pending[i] = rf->pending[--rf->nr_pending];
	return 1;
}

/* A snapshot is being built: its file exists, its writes do not. */
int
record_window_busy(const struct record *rec)
{
	return rec->flight != NULL && rec->flight->tf != NULL;
}

uint64_t
record_window_bytes(const struct record *rec)
{
	return rec->flight != NULL ? rec->flight->fl.st.bytes +
	    rec->flight->fl.store.len : 0;
}

static const struct jemit_field record_window_last_rows[] = {
	JEMIT_S("last_snapshot", struct record_flight, last_file),
	JEMIT_S("last_trigger", struct record_flight, last_why),
	JEMIT_ROWS_END
};

/* The window's status, after its settings: what the drain put into it,
 * as published (record-publish.c)... */
static const struct jemit_field record_window_drain_rows[] = {
	JEMIT_U("bytes", struct record_counters, window.bytes),
	JEMIT_U("chunks", struct record_counters, window.chunks),
	JEMIT_U("evicted_bytes", struct record_counters, window.evicted),
	JEMIT_U("store_bytes", struct record_counters, window_store),
	JEMIT_U("store_pruned", struct record_counters, window.store_pruned),
	JEMIT_U("store_dropped", struct record_counters,
	    window.store_dropped),
	JEMIT_U("out_of_memory", struct record_counters, window.oom),
	JEMIT_ROWS_END
};

/* ...and the snapshots, the loop's. */
static const struct jemit_field record_window_rows[] = {
	JEMIT_U("snapshots", struct record_flight, snapshots),
	JEMIT_U("snapshots_failed", struct record_flight, failed),
	JEMIT_U("last_snapshot_ms", struct record_flight, last_ms),
	JEMIT_U("snapshot_stall_us_max", struct record_flight, stall_us_max),
	/* the last snapshot's name and trigger once there was one */
	JEMIT_IF(JEMIT_STR, struct record_flight, last_file,
	    record_window_last_rows),
	JEMIT_ROWS_END
};

json_object *
record_window_status(struct record *rec, const struct record_counters *c)
{
	json_object		*o = json_object_new_object();

	proto_add_u64(o, "window", rec->cfg.window);
	proto_add_u64(o, "window_bytes", rec->cfg.window_bytes);
	proto_add_u64(o, "memory_max", flight_memory_max(rec->cfg.window_bytes));
	jemit_add(o, record_window_drain_rows, c);
	jemit_add(o, record_window_rows, rec->flight);
	return o;
}

/*
 * test-flight: the flight recorder's window (whole rounds go when older
 * than the window or past its bytes; a snapshot takes whole rounds and
 * squeezes out the samples older than the window) and its task store
 * (the task records of what left the window; pruned of the tasks that
 * exited, but not of a parent whose child lives; bounded).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "check.h"
#include "flight.h"
#include "perfdata/perf-abi.h"

#define SEC	UINT64_C(1000000000)
#define TOFF	8	/* a test sample: header, then its time */

struct chunk {
	uint8_t	*buf;
	size_t	 len;
	size_t	 cap;
};

static void
put(struct chunk *c, uint32_t type, const uint32_t *body, size_t n)
{
	struct perf_event_header h = { type, 0, 0 };

	h.size = (uint16_t)(sizeof(h) + n * 4);
	/* doubled, not grown by a record: 60000 reallocs of a growing
	 * buffer each copy it under ASan (the test timed out there) */
	if (c->len + h.size + FLIGHT_ROUND_LEN > c->cap) {
		c->cap = 2 * (c->len + h.size + FLIGHT_ROUND_LEN);
		c->buf = realloc(c->buf, c->cap);
	}
	memcpy(c->buf + c->len, &h, sizeof(h));
	memcpy(c->buf + c->len + sizeof(h), body, n * 4);
	c->len += h.size;
}

static void
sample(struct chunk *c, uint64_t t)
{
	uint32_t	 b[2];

	memcpy(b, &t, sizeof(t));
	put(c, PERF_RECORD_SAMPLE, b, 2);
}

static void
comm(struct chunk *c, uint32_t tid)
{
	uint32_t	 b[4] = { tid, tid, 0x6d6f63, 0 };

	put(c, PERF_RECORD_COMM, b, 4);
}

/* FORK or EXIT: pid, ppid, tid, ptid, time */
static void
task(struct chunk *c, uint32_t type, uint32_t tid, uint32_t parent)
{
	uint32_t	 b[6] = { tid, parent, tid, parent, 0, 0 };

	put(c, type, b, 6);
}

static int
add(struct flight *fl, struct chunk *c)
{
	int	 rc = flight_add(fl, c->buf, c->len);

	c->buf = NULL;
	c->len = 0;
	c->cap = 0;
	return rc;
}

/* The records of type in buf, and of them those of tid (at off 4 of a
 * COMM's body, 8 of a FORK's or EXIT's). */
static size_t
count(const uint8_t *buf, size_t len, uint32_t type, uint32_t tid)
{
	struct perf_event_header h;
	size_t		 pos, n = 0;
	uint32_t	 v;

	for (pos = 0; pos + sizeof(h) <= len; pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.type != type)
			continue;
		if (tid == UINT32_MAX)
			n++;
		else {
			memcpy(&v, buf + pos + sizeof(h) +
			    (type == PERF_RECORD_COMM ? 4 : 8), 4);
			n += v == tid;
		}
	}
	return n;
}

static void
test_time_window(void)
{
	struct flight		 fl;
	struct flight_snap	 snap;
	struct flight_chunk	*k;
	struct chunk		 c = { NULL, 0, 0 };
	uint64_t		 t;
	size_t			 rounds = 0;

	flight_init(&fl, 2, UINT64_C(1) << 30, TOFF);
	/* one round a half second, from 1 s to 6 s; task 7's COMM first */
	comm(&c, 7);
	for (t = SEC; t <= 6 * SEC; t += SEC / 2) {
		sample(&c, t);
		sample(&c, t + SEC / 4);
		CHECK_EQ(add(&fl, &c), 0);
		flight_round(&fl);
	}
	/* rounds of which no sample is within 2 s of 6.25 s went */
	TAILQ_FOREACH(k, &fl.chunks, entry) {
		CHECK(k->round_end);
		CHECK(k->newest + 2 * SEC >= fl.newest);
		rounds++;
	}
	CHECK_EQ(rounds, 5);	/* 4.0 .. 6.0 */
	CHECK(fl.st.evicted > 0);
	/* the COMM left with the first round: in the store */
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 7), 1);
	CHECK_EQ(flight_take(&fl, &snap), 0);
	CHECK_EQ(snap.cutoff, fl.newest - 2 * SEC);
	CHECK_EQ(fl.st.bytes, 0);
	CHECK(TAILQ_EMPTY(&fl.chunks));
	/* 4.0 is older than 6.25 - 2: squeezed out of its round */
	rounds = 0;
	TAILQ_FOREACH(k, &snap.chunks, entry) {
		CHECK(k->first >= snap.cutoff);
		CHECK_EQ(count(k->buf, k->len, PERF_RECORD_FINISHED_ROUND,
		    UINT32_MAX), 1);
		rounds++;
	}
	CHECK_EQ(rounds, 5);
	CHECK_EQ(snap.samples, 9);
	CHECK_EQ(count(snap.store, snap.store_len, PERF_RECORD_COMM, 7), 1);
	flight_snap_free(&snap);
	flight_finish(&fl);
}

static void
test_bytes_and_open_round(void)
{
	struct flight	 fl;
	struct chunk	 c = { NULL, 0, 0 };
	int		 i, j;

	flight_init(&fl, 0, 1 << 20, TOFF);
	/* 64 rounds of 64 KiB: the window keeps at most 1 MiB of them */
	for (i = 0; i < 64; i++) {
		for (j = 0; j < 4096; j++)
			sample(&c, (uint64_t)(i * 4096 + j + 1));
		CHECK_EQ(add(&fl, &c), 0);
		flight_round(&fl);
		CHECK(fl.st.bytes <= (1 << 20));
	}
	CHECK(fl.st.bytes > (1 << 20) - 2 * 65536);
	/* an open round is never cut: chunks wait for their round's end */
	for (i = 0; i < 40; i++) {
		sample(&c, UINT64_C(1) << 40);
		CHECK_EQ(add(&fl, &c), 0);
	}
	CHECK_EQ(TAILQ_LAST(&fl.chunks, flight_chunks)->round_end, 0);
	flight_finish(&fl);
}

static void
test_store_prune(void)
{
	struct flight	 fl;
	struct chunk	 c = { NULL, 0, 0 };

	flight_init(&fl, 1, UINT64_C(1) << 30, TOFF);
	/* 10 lived and exited; 20 (a shell) forked 21 and exited, 21 lives
	 * on; 30 exited, and its tid was used again by a new task */
	comm(&c, 10);
	comm(&c, 20);
	task(&c, PERF_RECORD_FORK, 21, 20);
	task(&c, PERF_RECORD_EXIT, 10, 1);
	task(&c, PERF_RECORD_EXIT, 20, 1);
	comm(&c, 30);
	task(&c, PERF_RECORD_EXIT, 30, 1);
	task(&c, PERF_RECORD_FORK, 30, 1);
	comm(&c, 30);
	sample(&c, SEC);
	CHECK_EQ(add(&fl, &c), 0);
	flight_round(&fl);
	sample(&c, 10 * SEC);
	CHECK_EQ(add(&fl, &c), 0);
	flight_round(&fl);	/* the first round leaves */
	flight_compact(&fl);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 10), 0);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_EXIT, 10), 0);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 20), 1);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_FORK, 21), 1);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 30), 1);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_FORK, 30), 1);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_EXIT, 30), 0);
	CHECK(fl.st.store_pruned >= 4);
	/* once 21 exits too, its shell goes with it */
	task(&c, PERF_RECORD_EXIT, 21, 20);
	sample(&c, 20 * SEC);
	CHECK_EQ(add(&fl, &c), 0);
	flight_round(&fl);
	sample(&c, 30 * SEC);
	CHECK_EQ(add(&fl, &c), 0);
	flight_round(&fl);
	flight_compact(&fl);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 20), 0);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_FORK, 21), 0);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 30), 1);
	flight_finish(&fl);
}

static void
test_store_cap(void)
{
	struct flight	 fl;
	struct chunk	 c = { NULL, 0, 0 };
	uint32_t	 tid;

	flight_init(&fl, 1, 1 << 20, TOFF);
	/* live tasks only, far past the 1 MiB cap: the oldest go */
	for (tid = 1; tid <= 60000; tid++)
		comm(&c, tid);
	sample(&c, SEC);
	CHECK_EQ(add(&fl, &c), 0);
	flight_round(&fl);
	sample(&c, 10 * SEC);
	CHECK_EQ(add(&fl, &c), 0);
	flight_round(&fl);
	CHECK(fl.store.len <= fl.store_cap);
	CHECK(fl.st.store_dropped > 0);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 1), 0);
	CHECK_EQ(count(fl.store.data, fl.store.len, PERF_RECORD_COMM, 60000),
	    1);
	CHECK_EQ(flight_memory_max(1 << 20), 2 * (1 << 20) + (1 << 20));
	flight_finish(&fl);
}

int
main(void)
{
	test_time_window();
	test_bytes_and_open_round();
	test_store_prune();
	test_store_cap();
	return check_exit();
}

/*
 * test-track: which drained records a rotation carries over, from plain
 * buffers and from a wrapped ring area, and that a damaged record ends
 * the walk instead of being copied.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "check.h"
#include "perfdata/sbuf.h"
#include "track.h"

#define SIZE	128

/* Put a record of type and size at pos of a circular area; its bytes
 * after the header are its type, so that a copy can be recognised. */
static uint64_t
put(uint8_t *area, size_t size, uint64_t pos, uint32_t type, uint16_t len)
{
	struct perf_event_header	 h = { type, 0, len };
	uint8_t				 rec[64];
	size_t				 i;

	memset(rec, (int)type, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	for (i = 0; i < len; i++)
		area[(pos + i) % size] = rec[i];
	return pos + len;
}

static void
test_plain(void)
{
	uint8_t		 buf[320];
	struct sbuf	 out;
	uint64_t	 end = 0, v;
	struct perf_event_header h;

	sbuf_init(&out);
	end = put(buf, sizeof(buf), end, PERF_RECORD_SAMPLE, 40);
	end = put(buf, sizeof(buf), end, PERF_RECORD_COMM, 32);
	end = put(buf, sizeof(buf), end, PERF_RECORD_SAMPLE, 24);
	end = put(buf, sizeof(buf), end, PERF_RECORD_FORK, 48);
	end = put(buf, sizeof(buf), end, PERF_RECORD_EXIT, 48);
	end = put(buf, sizeof(buf), end, PERF_RECORD_MMAP2, 56);
	CHECK_EQ(track_copy(&out, buf, (size_t)end, 0, end), 0);
	CHECK_EQ(out.len, 32 + 48 + 56);
	/* a LOST record may stand for a FORK: it goes too, its count zeroed
	 * (the loss is counted in the old file only) */
	out.len = 0;
	CHECK_EQ(track_copy(&out, buf, (size_t)end, 0, end), 0);
	end = put(buf, sizeof(buf), end, PERF_RECORD_LOST, 32);
	memset(buf + end - 24, 0x5a, 16);	/* id, lost */
	CHECK_EQ(track_copy(&out, buf, (size_t)end, end - 32, end), 0);
	CHECK_EQ(out.len, 32 + 48 + 56 + 32);
	memcpy(&h, out.data + 136, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_LOST);
	CHECK_EQ(out.data[136 + 8], 0x5a);	/* the id kept */
	memcpy(&v, out.data + 136 + 16, sizeof(v));
	CHECK_EQ(v, 0);
	CHECK_EQ(buf[end - 16], 0x5a);		/* the ring's copy untouched */
	out.len = 32 + 48 + 56;
	end -= 32;
	memcpy(&h, out.data, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_COMM);
	CHECK_EQ(out.data[31], PERF_RECORD_COMM);
	memcpy(&h, out.data + 32, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_FORK);
	memcpy(&h, out.data + 80, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_MMAP2);
	CHECK_EQ(out.data[135], PERF_RECORD_MMAP2);

	/* appends: a second drain adds to the first */
	CHECK_EQ(track_copy(&out, buf, (size_t)end, 40, 72), 0);
	CHECK_EQ(out.len, 32 + 48 + 56 + 32);

	/* nothing wanted, nothing drained */
	out.len = 0;
	CHECK_EQ(track_copy(&out, buf, (size_t)end, 0, 40), 0);
	CHECK_EQ(track_copy(&out, buf, (size_t)end, 40, 40), 0);
	CHECK_EQ(out.len, 0);
	sbuf_finish(&out);
}

static void
test_wrap(void)
{
	uint8_t		 area[SIZE];
	struct sbuf	 out;
	uint64_t	 start, end;
	struct perf_event_header h;
	size_t		 i;

	sbuf_init(&out);
	/* a COMM whose header and body straddle the end of the area, many
	 * laps into the ring's life */
	start = (UINT64_C(1) << 33) + SIZE - 44;
	end = put(area, SIZE, start, PERF_RECORD_SAMPLE, 40);
	end = put(area, SIZE, end, PERF_RECORD_COMM, 32);	/* header split */
	end = put(area, SIZE, end, PERF_RECORD_MMAP, 40);
	CHECK_EQ(track_copy(&out, area, SIZE, start, end), 0);
	CHECK_EQ(out.len, 72);
	memcpy(&h, out.data, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_COMM);
	CHECK_EQ(h.size, 32);
	for (i = sizeof(h); i < 32; i++)
		CHECK_EQ(out.data[i], PERF_RECORD_COMM);
	memcpy(&h, out.data + 32, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_MMAP);
	sbuf_finish(&out);
}

static void
test_damaged(void)
{
	uint8_t		 buf[128];
	struct sbuf	 out;
	uint64_t	 end = 0;
	struct perf_event_header small = { PERF_RECORD_COMM, 0, 4 };

	sbuf_init(&out);
	end = put(buf, sizeof(buf), end, PERF_RECORD_COMM, 32);
	/* a size past the end of the data: the walk stops before it */
	end = put(buf, sizeof(buf), end, PERF_RECORD_FORK, 48);
	CHECK_EQ(track_copy(&out, buf, sizeof(buf), 0, end - 8), 0);
	CHECK_EQ(out.len, 32);
	/* a size below a header: no endless loop, nothing copied */
	out.len = 0;
	memcpy(buf, &small, sizeof(small));
	CHECK_EQ(track_copy(&out, buf, sizeof(buf), 0, 64), 0);
	CHECK_EQ(out.len, 0);
	/* from past to, or more than the area: read nothing */
	CHECK_EQ(track_copy(&out, buf, sizeof(buf), 64, 0), 0);
	CHECK_EQ(track_copy(&out, buf, sizeof(buf), 0, 1000), 0);
	CHECK_EQ(track_copy(&out, buf, 0, 0, 0), 0);
	CHECK_EQ(out.len, 0);
	sbuf_finish(&out);
}

/* A COMM or FORK record of tid: the u32 fields of perf's layouts. */
static size_t
task(uint8_t *buf, uint32_t type, uint32_t tid)
{
	struct perf_event_header	 h = { type, 0, 40 };
	uint32_t			 f[4] = { 100, 0, 0, 0 };

	if (type == PERF_RECORD_COMM)
		f[1] = tid;		/* pid, tid, comm */
	else
		f[2] = tid;		/* pid, ppid, tid, ptid, time */
	memset(buf, 0, h.size);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), f, sizeof(f));
	return h.size;
}

static void
test_forks(void)
{
	uint8_t		 pre[256], kept[256];
	uint32_t	*tids = NULL, tid;
	size_t		 n = 0, len = 0, klen = 0, nr;
	struct perf_event_header h;

	/* the preamble names 7, 3 and 5 (and holds an MMAP2 between) */
	len += task(pre + len, PERF_RECORD_COMM, 7);
	len += put(pre, sizeof(pre), len, PERF_RECORD_MMAP2, 40) - len;
	len += task(pre + len, PERF_RECORD_COMM, 3);
	len += task(pre + len, PERF_RECORD_COMM, 5);
	CHECK_EQ(track_tids(pre, len, &tids, &n), 0);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK_EQ(tids[0], 3);
		CHECK_EQ(tids[1], 5);
		CHECK_EQ(tids[2], 7);
	}
	/* kept: FORK 5 (named: dropped), COMM 5 (kept), FORK 9 (new) */
	klen += task(kept + klen, PERF_RECORD_FORK, 5);
	klen += task(kept + klen, PERF_RECORD_COMM, 5);
	klen += task(kept + klen, PERF_RECORD_FORK, 9);
	nr = track_drop_forks(kept, klen, tids, n);
	CHECK_EQ(nr, 80);
	memcpy(&h, kept, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_COMM);
	memcpy(&h, kept + 40, sizeof(h));
	CHECK_EQ(h.type, PERF_RECORD_FORK);
	memcpy(&tid, kept + 40 + sizeof(h) + 8, sizeof(tid));
	CHECK_EQ(tid, 9);
	/* no list: every FORK stays */
	CHECK_EQ(track_drop_forks(kept, nr, NULL, 0), 80);
	free(tids);
	/* no COMM at all: an empty list */
	CHECK_EQ(track_tids(kept, 0, &tids, &n), 0);
	CHECK_EQ(n, 0);
	CHECK(tids == NULL);
}

/* A ring may have dropped a record only with less room left than the
 * largest record (a quarter of a small ring). */
static void
test_ring_full(void)
{
	size_t	 big = 2u << 20, small = 32u << 10;

	CHECK_EQ(track_ring_full(big, 0), 0);
	CHECK_EQ(track_ring_full(big, big / 2), 0);
	CHECK_EQ(track_ring_full(big, big - TRACK_RECORD_MAX), 0);
	CHECK_EQ(track_ring_full(big, big - TRACK_RECORD_MAX + 1), 1);
	CHECK_EQ(track_ring_full(big, big), 1);
	CHECK_EQ(track_ring_full(small, small - small / 4), 0);
	CHECK_EQ(track_ring_full(small, small - small / 4 + 8), 1);
	/* an inconsistent head: no room to trust */
	CHECK_EQ(track_ring_full(small, (uint64_t)small + 8), 1);
	CHECK_EQ(track_ring_full(0, 0), 0);
}

int
main(void)
{
	test_plain();
	test_wrap();
	test_damaged();
	test_forks();
	test_ring_full();
	return check_exit();
}

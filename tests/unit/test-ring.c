/*
 * test-ring: the arithmetic of reading a perf ring, on hand-built data
 * areas. The wrap cases matter most: the data area wraps every few
 * milliseconds under load, and the 64-bit counters wrap too, if rarely.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#include "check.h"
#include "ring.h"

#define SIZE	256

static void
test_span(void)
{
	struct ring_span	 sp;
	uint64_t		 t;

	/* empty */
	memset(&sp, 0xff, sizeof(sp));
	CHECK_EQ(ring_span(64, 64, SIZE, &sp), 0);
	CHECK_EQ(sp.len[0], 0);
	CHECK_EQ(sp.len[1], 0);

	/* one span in the middle */
	CHECK_EQ(ring_span(48, 16, SIZE, &sp), 32);
	CHECK_EQ(sp.off[0], 16);
	CHECK_EQ(sp.len[0], 32);
	CHECK_EQ(sp.len[1], 0);

	/* ends exactly at the end of the area: still one span */
	CHECK_EQ(ring_span(SIZE, 200, SIZE, &sp), 56);
	CHECK_EQ(sp.off[0], 200);
	CHECK_EQ(sp.len[0], 56);
	CHECK_EQ(sp.len[1], 0);

	/* wraps: the tail end of the area, then its start */
	CHECK_EQ(ring_span(SIZE + 16, 240, SIZE, &sp), 32);
	CHECK_EQ(sp.off[0], 240);
	CHECK_EQ(sp.len[0], 16);
	CHECK_EQ(sp.off[1], 0);
	CHECK_EQ(sp.len[1], 16);

	/* after many laps only the offset within the area counts */
	t = (UINT64_C(1) << 40) + 3 * SIZE + 128;
	CHECK_EQ(ring_span(t + 200, t, SIZE, &sp), 200);
	CHECK_EQ(sp.off[0], 128);
	CHECK_EQ(sp.len[0], 128);
	CHECK_EQ(sp.off[1], 0);
	CHECK_EQ(sp.len[1], 72);

	/* exactly full, aligned and not */
	CHECK_EQ(ring_span(SIZE, 0, SIZE, &sp), SIZE);
	CHECK_EQ(sp.off[0], 0);
	CHECK_EQ(sp.len[0], SIZE);
	CHECK_EQ(sp.len[1], 0);
	CHECK_EQ(ring_span(100 + SIZE, 100, SIZE, &sp), SIZE);
	CHECK_EQ(sp.off[0], 100);
	CHECK_EQ(sp.len[0], SIZE - 100);
	CHECK_EQ(sp.off[1], 0);
	CHECK_EQ(sp.len[1], 100);

	/* more than the area holds, or head behind tail: the kernel never
	 * does this, so it is refused rather than read as garbage */
	CHECK_EQ(ring_span(SIZE + 1, 0, SIZE, &sp), -1);
	CHECK_EQ(ring_span(1000 + 2 * SIZE, 1000, SIZE, &sp), -1);
	CHECK_EQ(ring_span(10, 20, SIZE, &sp), -1);
	CHECK_EQ(ring_span(0, UINT64_MAX - SIZE - 8, SIZE, &sp), -1);

	/* the 64-bit counters wrap: head < tail numerically, head - tail is
	 * still the byte count */
	t = UINT64_MAX - 7;		/* 2^64 - 8: offset 248 */
	CHECK_EQ(ring_span(24, t, SIZE, &sp), 32);
	CHECK_EQ(sp.off[0], 248);
	CHECK_EQ(sp.len[0], 8);
	CHECK_EQ(sp.off[1], 0);
	CHECK_EQ(sp.len[1], 24);
	t = UINT64_MAX - 63;		/* 2^64 - 64: offset 192 */
	CHECK_EQ(ring_span(0, t, SIZE, &sp), 64);
	CHECK_EQ(sp.off[0], 192);
	CHECK_EQ(sp.len[0], 64);
	CHECK_EQ(sp.len[1], 0);
	CHECK_EQ(ring_span(SIZE - 64, t, SIZE, &sp), SIZE);
}

/* Store v at the ring position pos, wrapping byte by byte as the kernel's
 * output does. */
static void
put(uint8_t *data, uint64_t pos, const void *v, size_t len)
{
	const uint8_t	*p = v;
	size_t		 i;

	for (i = 0; i < len; i++)
		data[(pos + i) & (SIZE - 1)] = p[i];
}

/* A record of the given type and size at pos; u64 fields follow the
 * header. Returns the position after it. */
static uint64_t
record(uint8_t *data, uint64_t pos, uint32_t type, uint16_t size,
    const uint64_t *fields, size_t nfields)
{
	struct perf_event_header	 h;
	size_t				 i;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.size = size;
	put(data, pos, &h, sizeof(h));
	for (i = 0; i < nfields; i++)
		put(data, pos + sizeof(h) + 8 * i, &fields[i], 8);
	return pos + size;
}

static void
test_count_wrap(void)
{
	uint8_t			 data[SIZE];
	struct ring_counts	 c;
	uint64_t		 pos, tail;
	const uint64_t		 lost5[] = { 1, 5 };	/* id, lost */
	const uint64_t		 lost3[] = { 2, 3 };
	const uint64_t		 ls7[] = { 7 };		/* lost */

	memset(data, 0xaa, sizeof(data));
	tail = pos = 216;
	pos = record(data, pos, PERF_RECORD_SAMPLE, 24, NULL, 0);
	/* header at 240, id at 248, lost at 256: the lost field is the first
	 * word of the area, past the wrap */
	CHECK_EQ(pos, 240);
	pos = record(data, pos, PERF_RECORD_LOST, 24, lost5, 2);
	pos = record(data, pos, PERF_RECORD_LOST_SAMPLES, 16, ls7, 1);
	pos = record(data, pos, PERF_RECORD_MMAP, 32, NULL, 0);
	pos = record(data, pos, PERF_RECORD_SAMPLE, 48, NULL, 0);
	pos = record(data, pos, PERF_RECORD_LOST, 24, lost3, 2);
	CHECK_EQ(pos, 384);
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, tail, pos, &c, 0, 0);
	CHECK_U64(c.records, 6);
	CHECK_U64(c.samples, 2);
	CHECK_U64(c.lost, 8);
	CHECK_U64(c.lost_samples, 7);
	CHECK_U64(c.bad, 0);

	/* a LOST_SAMPLES whose header ends the area and whose lost field
	 * starts it */
	memset(data, 0, sizeof(data));
	pos = record(data, SIZE - 8, PERF_RECORD_LOST_SAMPLES, 16, ls7, 1);
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, SIZE - 8, pos, &c, 0, 0);
	CHECK_U64(c.records, 1);
	CHECK_U64(c.lost_samples, 7);
	CHECK_U64(c.bad, 0);

	/* the whole area in one read, exactly full */
	memset(data, 0, sizeof(data));
	for (pos = 64; pos < 64 + SIZE; )
		pos = record(data, pos, PERF_RECORD_SAMPLE, 32, NULL, 0);
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, 64, 64 + SIZE, &c, 0, 0);
	CHECK_U64(c.records, SIZE / 32);
	CHECK_U64(c.samples, SIZE / 32);
	CHECK_U64(c.bad, 0);

	/* empty */
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, 64, 64, &c, 0, 0);
	CHECK_U64(c.records, 0);
	CHECK_U64(c.bad, 0);
}

static void
test_count_bad(void)
{
	uint8_t			 data[SIZE];
	struct ring_counts	 c;
	uint64_t		 pos;

	/* a header of size 0 would loop forever: counted as bad, and
	 * nothing after it is trusted */
	memset(data, 0, sizeof(data));
	pos = record(data, 0, PERF_RECORD_SAMPLE, 16, NULL, 0);
	record(data, pos, PERF_RECORD_SAMPLE, 0, NULL, 0);
	record(data, pos + 8, PERF_RECORD_SAMPLE, 16, NULL, 0);
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, 0, 40, &c, 0, 0);
	CHECK_U64(c.records, 1);
	CHECK_U64(c.samples, 1);
	CHECK_U64(c.bad, 1);

	/* smaller than a header */
	memset(data, 0, sizeof(data));
	record(data, 0, PERF_RECORD_SAMPLE, 4, NULL, 0);
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, 0, 32, &c, 0, 0);
	CHECK_U64(c.records, 0);
	CHECK_U64(c.bad, 1);

	/* a record that claims more than [tail, head) holds */
	memset(data, 0, sizeof(data));
	pos = record(data, 0, PERF_RECORD_SAMPLE, 16, NULL, 0);
	record(data, pos, PERF_RECORD_SAMPLE, 64, NULL, 0);
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, 0, 48, &c, 0, 0);
	CHECK_U64(c.records, 1);
	CHECK_U64(c.bad, 1);
}

static void
test_count_counter_wrap(void)
{
	uint8_t			 data[SIZE];
	struct ring_counts	 c;
	uint64_t		 pos, tail;
	const uint64_t		 lost5[] = { 1, 5 };
	int			 i;

	/* [tail, head) straddles 2^64: head < tail numerically, as in
	 * ring_span, yet the records in between are all there */
	memset(data, 0, sizeof(data));
	tail = pos = UINT64_MAX - 39;	/* 2^64 - 40 */
	for (i = 0; i < 4; i++)
		pos = record(data, pos, PERF_RECORD_SAMPLE, 16, NULL, 0);
	pos = record(data, pos, PERF_RECORD_LOST, 24, lost5, 2);
	CHECK_U64(pos, 48);		/* wrapped past zero */
	memset(&c, 0, sizeof(c));
	ring_count_excl(data, SIZE, tail, pos, &c, 0, 0);
	CHECK_U64(c.records, 5);
	CHECK_U64(c.samples, 4);
	CHECK_U64(c.lost, 5);
	CHECK_U64(c.bad, 0);
}

/* A sample record of 32 bytes: header, id, ip, pid/tid. */
static size_t
put_sample(uint8_t *buf, size_t off, uint32_t pid, uint64_t tag)
{
	struct perf_event_header	 h = { PERF_RECORD_SAMPLE, 0, 32 };
	uint32_t			 pt[2] = { pid, pid };

	memset(buf + off, 0, 32);
	memcpy(buf + off, &h, sizeof(h));
	memcpy(buf + off + 8, &tag, sizeof(tag));
	memcpy(buf + off + 24, pt, sizeof(pt));
	return off + 32;
}

/* put_sample's record at ring position pos, wrapping as the kernel does. */
static uint64_t
ring_sample(uint8_t *data, uint64_t pos, uint32_t pid, uint64_t tag)
{
	uint8_t	 rec[32];

	put_sample(rec, 0, pid, tag);
	put(data, pos, rec, sizeof(rec));
	return pos + sizeof(rec);
}

/* ring_copy_excl returned want bytes equal to want_buf, and wrote no
 * byte past them. */
static void
check_copy(const uint8_t *dst, size_t got, const uint8_t *want,
    size_t want_len, int line)
{
	CHECK_U64(got, want_len);
	if (got == want_len && memcmp(dst, want, want_len) != 0) {
		printf("test-ring.c:%d: copied bytes differ\n", line);
		CHECK(0);
	}
	CHECK_EQ(dst[want_len], 0xaa);
}

/*
 * ring_copy_excl: the drain's copy of a ring without the daemon's own
 * samples (pid 77, pid at 24 as in put_sample). Kept records come out
 * whole, in order and unwrapped, however the ring's end cut them.
 */
static void
test_copy_excl(void)
{
	uint8_t			 data[SIZE], dst[2 * SIZE], want[SIZE];
	struct ring		 r;
	struct perf_event_header h;
	uint64_t		 tail, pos, f[3] = { 1, 2, 77 };
	size_t			 n;

	memset(&r, 0, sizeof(r));
	r.data = data;
	r.size = SIZE;

	/*
	 * After some laps, 48 bytes before the area's end: ours at the
	 * start, then a sample split 16/16 by the end of the area, a
	 * 40-byte COMM-like record whose u32 at 24 is 77 (not a sample:
	 * kept), ours in the middle, another sample, ours at the end.
	 */
	memset(data, 0, sizeof(data));
	tail = 5 * SIZE + SIZE - 48;
	pos = ring_sample(data, tail, 77, 1);
	pos = ring_sample(data, pos, 5, 2);
	pos = record(data, pos, PERF_RECORD_COMM, 40, f, 3);
	pos = ring_sample(data, pos, 77, 3);
	pos = ring_sample(data, pos, 6, 4);
	pos = ring_sample(data, pos, 77, 5);
	n = put_sample(want, 0, 5, 2);
	memset(&h, 0, sizeof(h));
	h.type = PERF_RECORD_COMM;
	h.size = 40;
	memset(want + n, 0, 40);
	memcpy(want + n, &h, sizeof(h));
	memcpy(want + n + 8, f, sizeof(f));
	n = put_sample(want, n + 40, 6, 4);
	memset(dst, 0xaa, sizeof(dst));
	check_copy(dst, ring_copy_excl(&r, tail, pos, dst, 77, 24), want, n,
	    __LINE__);

	/* pid_off 0 excludes nothing: the ring's bytes as they are */
	memset(dst, 0xaa, sizeof(dst));
	memcpy(want, data + SIZE - 48, 48);
	memcpy(want + 48, data, (size_t)(pos - tail) - 48);
	check_copy(dst, ring_copy_excl(&r, tail, pos, dst, 77, 0), want,
	    (size_t)(pos - tail), __LINE__);

	/* another pid to exclude: only its samples go */
	memset(dst, 0xaa, sizeof(dst));
	n = put_sample(want, 0, 77, 1);
	memcpy(want + n, data + SIZE - 16, 16);	/* pid 5's sample... */
	memcpy(want + n + 16, data, 16);	/* ...split by the end */
	n += 32;
	memcpy(want + n, data + 16, 40 + 32);	/* COMM, ours */
	n += 40 + 32;
	n = put_sample(want, n, 77, 5);
	check_copy(dst, ring_copy_excl(&r, tail, pos, dst, 6, 24), want, n,
	    __LINE__);

	/* ours split by the end of the area, its pid after the wrap; the
	 * 64-bit counters wrap at the same place */
	memset(data, 0, sizeof(data));
	tail = UINT64_MAX - 15;		/* offset 240 */
	pos = ring_sample(data, tail, 77, 1);
	pos = ring_sample(data, pos, 9, 2);
	CHECK_U64(pos, 48);
	n = put_sample(want, 0, 9, 2);
	memset(dst, 0xaa, sizeof(dst));
	check_copy(dst, ring_copy_excl(&r, tail, pos, dst, 77, 24), want, n,
	    __LINE__);

	/* nothing but ours, and nothing at all */
	memset(data, 0, sizeof(data));
	pos = ring_sample(data, 100 * SIZE, 77, 1);
	pos = ring_sample(data, pos, 77, 2);
	memset(dst, 0xaa, sizeof(dst));
	check_copy(dst, ring_copy_excl(&r, 100 * SIZE, pos, dst, 77, 24),
	    want, 0, __LINE__);
	check_copy(dst, ring_copy_excl(&r, pos, pos, dst, 77, 24), want, 0,
	    __LINE__);

	/* a header of size 0, or a record that runs past head: the copy
	 * stops before it and keeps what came whole */
	memset(data, 0, sizeof(data));
	pos = ring_sample(data, 0, 5, 1);
	n = put_sample(want, 0, 5, 1);
	memset(dst, 0xaa, sizeof(dst));
	check_copy(dst, ring_copy_excl(&r, 0, pos + 32, dst, 77, 24), want,
	    n, __LINE__);
	ring_sample(data, pos, 6, 2);
	memset(dst, 0xaa, sizeof(dst));
	check_copy(dst, ring_copy_excl(&r, 0, pos + 24, dst, 77, 24), want,
	    n, __LINE__);
}

/*
 * ring_filter_buf: our own samples (pid 77) leave the copy, the others
 * stay whole and in order, and the counts say which is which.
 */
static void
test_filter_buf(void)
{
	uint8_t			 buf[512];
	struct ring_counts	 c;
	struct ring_filter	 f;
	size_t			 len = 0, out, i;
	uint64_t		 tag;
	static const uint32_t	 pids[] = { 77, 5, 6, 77, 77, 7, 77 };

	for (i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		len = put_sample(buf, len, pids[i], 100 + i);
	memset(&c, 0, sizeof(c));
	memset(&f, 0, sizeof(f));
	f.pid = 77;
	f.pid_off = 24;
	out = ring_filter_buf(buf, len, &c, &f);
	CHECK_U64(out, 3 * 32);
	CHECK_U64(c.samples, 3);
	CHECK_U64(c.records, 3);
	CHECK_U64(c.self, 4);
	memcpy(&tag, buf + 8, 8);
	CHECK_U64(tag, 101);
	memcpy(&tag, buf + 32 + 8, 8);
	CHECK_U64(tag, 102);
	memcpy(&tag, buf + 64 + 8, 8);
	CHECK_U64(tag, 105);

	/* pid_off 0 keeps everything and moves nothing */
	len = 0;
	for (i = 0; i < 3; i++)
		len = put_sample(buf, len, 77, i);
	memset(&c, 0, sizeof(c));
	f.pid_off = 0;
	CHECK_U64(ring_filter_buf(buf, len, &c, &f), len);
	CHECK_U64(c.self, 0);
	CHECK_U64(c.samples, 3);

	/* only our own: nothing is left */
	memset(&c, 0, sizeof(c));
	f.pid_off = 24;
	CHECK_U64(ring_filter_buf(buf, len, &c, &f), 0);
	CHECK_U64(c.self, 3);
}

static int	 mmap2_seen;

/* the hook may write the record: mark it as buildid_note_copy would */
static void
mark_mmap2(uint8_t *rec, size_t len, void *arg)
{
	uint16_t	 misc = 0x4000;

	mmap2_seen += *(int *)arg;
	if (len >= 8)
		memcpy(rec + offsetof(struct perf_event_header, misc), &misc,
		    sizeof(misc));
}

/*
 * The same walk takes the times of the samples it keeps (not of ours)
 * and hands each MMAP2 to the hook, whose change stays in the record
 * where the squeeze moved it.
 */
static void
test_filter_times_mmap2(void)
{
	uint8_t				 buf[512];
	struct perf_event_header	 h = { PERF_RECORD_MMAP2, 0, 48 };
	struct ring_counts		 c;
	struct ring_filter		 f;
	size_t				 len = 0;
	uint16_t			 misc;
	int				 one = 1;

	len = put_sample(buf, len, 77, 50);
	len = put_sample(buf, len, 5, 300);
	memset(buf + len, 0, 48);
	memcpy(buf + len, &h, sizeof(h));
	len += 48;
	len = put_sample(buf, len, 6, 200);
	len = put_sample(buf, len, 77, 900);
	memset(&c, 0, sizeof(c));
	memset(&f, 0, sizeof(f));
	f.pid = 77;
	f.pid_off = 24;
	f.time_off = 8;
	f.mmap2 = mark_mmap2;
	f.arg = &one;
	CHECK_U64(ring_filter_buf(buf, len, &c, &f), 32 + 48 + 32);
	CHECK_U64(f.first, 200);
	CHECK_U64(f.last, 300);
	CHECK_U64(mmap2_seen, 1);
	CHECK_U64(c.records, 3);
	memcpy(&h, buf + 32, sizeof(h));
	CHECK_U64(h.type, PERF_RECORD_MMAP2);
	memcpy(&misc, buf + 32 + offsetof(struct perf_event_header, misc),
	    sizeof(misc));
	CHECK_U64(misc, 0x4000);

	/* no time_off: no times */
	memset(&c, 0, sizeof(c));
	f.time_off = 0;
	f.first = f.last = 0;
	ring_filter_buf(buf, 32, &c, &f);
	CHECK_U64(f.first, 0);
	CHECK_U64(f.last, 0);
}

int
main(void)
{
	test_filter_buf();
	test_filter_times_mmap2();
	test_copy_excl();
	test_span();
	test_count_wrap();
	test_count_bad();
	test_count_counter_wrap();
	return check_exit();
}

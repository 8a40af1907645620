/*
 * test-perfcheck: the record checks salvage cuts by. A file of two
 * events (cpu-clock with callchains, a tracepoint with raw data) on a
 * 4-CPU machine, then records that perf reads and, one at a time after
 * them, records that it refuses or misreads: the walk must stop just
 * before each of those, and count what it kept.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "check.h"
#include "compress.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfcheck.h"
#include "perfdata/perfdata.h"

#define TP_ID		77		/* the tracepoint's attr.config */
#define ST_CLOCK	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |		\
	PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define ST_TP		(ST_CLOCK | PERF_SAMPLE_RAW)

static uint8_t			 file[1 << 16];
static struct perfdata_header	 hdr;
static struct perfdata_section	 feat[PERFDATA_FEAT_MAX];
static uint64_t			 data_off, end;

/* The head: ids, two attrs, the nrcpus and compressed payloads. */
static void
head(void)
{
	struct perf_event_attr	 a[2];
	uint64_t		 ids[] = { 11, 12, 21 }, sec[2], off;
	uint32_t		 nrcpus[2] = { 4, 4 }, comp[5] = { 0, 1, 3, 0,
				    4096 };
	int			 i;

	memset(file, 0, sizeof(file));
	memset(&hdr, 0, sizeof(hdr));
	memset(feat, 0, sizeof(feat));
	memset(a, 0, sizeof(a));
	off = sizeof(hdr);
	memcpy(file + off, ids, sizeof(ids));
	a[0].type = PERF_TYPE_SOFTWARE;
	a[0].sample_type = ST_CLOCK;
	a[1].type = PERF_TYPE_TRACEPOINT;
	a[1].config = TP_ID;
	a[1].sample_type = ST_TP;
	hdr.magic = PERFDATA_MAGIC;
	hdr.size = sizeof(hdr);
	hdr.attr_size = sizeof(a[0]) + sizeof(sec);
	hdr.attrs.offset = off + sizeof(ids);
	hdr.attrs.size = 2 * hdr.attr_size;
	for (i = 0; i < 2; i++) {
		a[i].size = sizeof(a[i]);
		a[i].sample_id_all = 1;
		off = hdr.attrs.offset + (uint64_t)i * hdr.attr_size;
		memcpy(file + off, &a[i], sizeof(a[i]));
		sec[0] = sizeof(hdr) + (i == 0 ? 0 : 16);
		sec[1] = i == 0 ? 16 : 8;
		memcpy(file + off + sizeof(a[i]), sec, sizeof(sec));
	}
	off = hdr.attrs.offset + hdr.attrs.size;
	feat[PERFDATA_FEAT_NRCPUS].offset = off;
	feat[PERFDATA_FEAT_NRCPUS].size = sizeof(nrcpus);
	memcpy(file + off, nrcpus, sizeof(nrcpus));
	off += sizeof(nrcpus);
	feat[PERFDATA_FEAT_COMPRESSED].offset = off;
	feat[PERFDATA_FEAT_COMPRESSED].size = sizeof(comp);
	memcpy(file + off, comp, sizeof(comp));
	off += sizeof(comp) + 4;
	data_off = hdr.data.offset = end = off;
}

/* Append a record (header, then len bytes of body) at end. */
static uint64_t
put(uint32_t type, uint16_t misc, const void *body, size_t len)
{
	struct perf_event_header	 h = { type, misc,
					    (uint16_t)(sizeof(h) + len) };
	uint64_t			 at = end;

	memcpy(file + end, &h, sizeof(h));
	if (len > 0)	/* a header alone: body may be NULL */
		memcpy(file + end + sizeof(h), body, len);
	end += sizeof(h) + len;
	return at;
}

/* A sample of event id: ip, pid/tid, time, cpu, period, a callchain of
 * nr entries (n of them in the record), raw data for the tracepoint. */
static size_t
sample(uint64_t *u, uint64_t id, uint64_t time, uint32_t cpu, uint64_t nr,
    uint64_t n)
{
	size_t		 k = 0, i;
	uint32_t	 rawsz = 12;
	uint16_t	 common = TP_ID;

	u[k++] = id;
	u[k++] = 0xffffffff81000000ULL;
	u[k++] = (uint64_t)42 << 32 | 42;
	u[k++] = time;
	u[k++] = cpu;
	u[k++] = 1000;
	u[k++] = nr;
	for (i = 0; i < n; i++)
		u[k++] = 0x400000 + i;
	if (id == 21) {
		/* u32 size, then 12 bytes starting with common_type: 16 */
		memset(&u[k], 0, 16);
		memcpy(&u[k], &rawsz, 4);
		memcpy((uint8_t *)&u[k] + 4, &common, 2);
		k += 2;
	}
	return k * 8;
}

/* The trailer of a non-sample record: tid, time, cpu, identifier. */
static size_t
trailer(uint8_t *at, uint64_t id, uint32_t cpu)
{
	uint64_t	 t[4] = { 0, 0, cpu, id };

	memcpy(at, t, sizeof(t));
	return sizeof(t);
}

/* The file is ours (salvage's walk): perfcheck_only_ours. */
static int	 ours;

static uint64_t
walk(struct perfcheck_stats *st, const char **why)
{
	static char		 buf[256];
	struct perfcheck	*pc;
	uint64_t		 e;

	memset(st, 0, sizeof(*st));
	pc = perfcheck_create(file, end, &hdr, feat);
	CHECK(pc != NULL);
	if (pc == NULL)
		return 0;
	if (ours)
		perfcheck_only_ours(pc);
	e = perfcheck_walk(pc, file, end, data_off, st);
	snprintf(buf, sizeof(buf), "%s", perfcheck_why(pc));
	*why = buf;
	perfcheck_destroy(pc);
	return e;
}

/* Records perf reads: the walk keeps them all and counts them. */
static uint64_t
good(void)
{
	uint64_t	 u[64];
	uint8_t		 b[128];
	size_t		 n;

	head();
	put(PERF_RECORD_SAMPLE, 0, u, sample(u, 11, 500, 1, 3, 3));
	put(PERF_RECORD_SAMPLE, 0, u, sample(u, 21, 700, 3, 0, 0));
	/* COMM: pid, tid, "spinner\0", trailer of event 12 */
	memset(b, 0, sizeof(b));
	memcpy(b + 8, "spinner", 8);
	n = 16 + trailer(b + 16, 12, 0);
	put(PERF_RECORD_COMM, 0, b, n);
	/* LOST: id, lost, trailer of the synthesized kind (id 0) */
	memset(b, 0, sizeof(b));
	u[0] = 11;
	u[1] = 5;
	memcpy(b, u, 16);
	n = 16 + trailer(b + 16, 0, 2);
	put(PERF_RECORD_LOST, 0, b, n);
	put(PERF_RECORD_FINISHED_ROUND, 0, NULL, 0);
	return end;
}

static void
test_good(void)
{
	struct perfcheck_stats	 st;
	const char		*why;
	uint64_t		 e = good();

	CHECK_U64(walk(&st, &why), e);
	CHECK_STR(why, "the end of the data");
	CHECK_U64(st.samples, 2);
	CHECK_U64(st.records, 5);
	CHECK_U64(st.first, 500);
	CHECK_U64(st.last, 700);
	CHECK_U64(st.lost, 5);
	/* cut inside the last record: kept up to it */
	end -= 4;
	CHECK_U64(walk(&st, &why), e - 8);
	CHECK(strstr(why, "fewer than a record header") != NULL);
}

/* After the good records, one that fails: the walk stops before it. */
static void
bad(const char *what, uint32_t type, uint16_t misc, const void *body,
    size_t len, const char *expect)
{
	struct perfcheck_stats	 st;
	const char		*why;
	uint64_t		 e = good();

	put(type, misc, body, len);
	if (type == 0)
		memset(file + e, 0, sizeof(struct perf_event_header));
	put(PERF_RECORD_FINISHED_ROUND, 0, NULL, 0);
	CHECK_U64(walk(&st, &why), e);
	if (strstr(why, expect) == NULL) {
		check_failed++;
		printf("%s: stopped for \"%s\", not \"%s\"\n", what, why,
		    expect);
	} else
		check_passed++;
	CHECK_U64(st.samples, 2);
}

static void
test_bad_samples(void)
{
	uint64_t	 u[64];
	size_t		 n;

	n = sample(u, 11, 900, 1, 3, 3);
	u[6] = 1000;		/* callchain longer than the record */
	bad("callchain", PERF_RECORD_SAMPLE, 0, u, n, "callchain longer");
	n = sample(u, 99, 900, 1, 0, 0);
	bad("unknown id", PERF_RECORD_SAMPLE, 0, u, n, "an id that none");
	n = sample(u, 11, 900, 4, 0, 0);
	bad("cpu", PERF_RECORD_SAMPLE, 0, u, n, "a CPU");
	n = sample(u, 11, 900, 1, 3, 3);
	bad("too long", PERF_RECORD_SAMPLE, 0, u, n + 8, "longer than its");
	bad("too short", PERF_RECORD_SAMPLE, 0, u, 32, "shorter than its");
	n = sample(u, 21, 900, 1, 0, 0);
	memset((uint8_t *)u + n - 16, 0xff, 4);		/* raw size */
	bad("raw size", PERF_RECORD_SAMPLE, 0, u, n, "raw data longer");
	n = sample(u, 21, 900, 1, 0, 0);
	memset((uint8_t *)u + n - 12, 0x01, 2);		/* common_type */
	bad("raw type", PERF_RECORD_SAMPLE, 0, u, n, "of another event");
	bad("not 8-aligned", PERF_RECORD_SAMPLE, 0, u, 52, "multiple of 8");
}

static void
test_bad_records(void)
{
	struct perfcheck_stats	 st;
	const char		*why;
	uint8_t			 b[256];
	size_t			 n;

	/* MMAP2: pid, tid, start, len, pgoff, id (24), prot, flags, name */
	memset(b, 'x', sizeof(b));
	memset(b, 0, 64);
	n = 64 + 16 + trailer(b + 80, 11, 0);
	bad("mmap2 name", PERF_RECORD_MMAP2, 0, b, n, "a name not ended");
	memset(b + 64, 0, 16);
	memcpy(b + 64, "/bin/x", 6);
	b[32] = 21;
	bad("mmap2 build-id", PERF_RECORD_MMAP2,
	    PERF_RECORD_MISC_MMAP_BUILD_ID, b, n, "longer than 20");
	/* an 8-byte name with room for more: not how the kernel pads */
	memset(b, 0, sizeof(b));
	n = 8 + 16 + trailer(b + 24, 11, 0);
	memcpy(b + 8, "ab", 2);
	bad("comm padding", PERF_RECORD_COMM, 0, b, n, "a name not ended");
	/* FORK: five u32 and a u64: 24 bytes, and the trailer */
	memset(b, 0, sizeof(b));
	n = 16 + trailer(b + 16, 11, 0);
	bad("fork size", PERF_RECORD_FORK, 0, b, n, "a size its type");
	n = 24 + trailer(b + 24, 99, 0);
	bad("trailer id", PERF_RECORD_FORK, 0, b, n, "an id that none");
	n = 24 + trailer(b + 24, 11, 17);
	bad("trailer cpu", PERF_RECORD_FORK, 0, b, n, "a CPU");
	bad("short", PERF_RECORD_FORK, 0, b, 8, "too short");
	bad("round size", PERF_RECORD_FINISHED_ROUND, 0, b, 8, "a size its");
	bad("user type", PERF_RECORD_AUXTRACE, 0, b, 32, "never hold");
	bad("kernel type", 40, 0, b, 40, "does not know");
	bad("zeros", 0, 0, NULL, 0, "zeros");
	/* perf record's own EVENT_UPDATE (78): whole in its size, kept in
	 * any perf.data file; in one of ours (salvage) it is damage, whose
	 * body perf may fail on (a fuzzed partial: "failed to process type:
	 * 78") */
	memset(b, 0xa5, sizeof(b));
	(void)good();
	put(78, 0, b, 160);
	put(PERF_RECORD_FINISHED_ROUND, 0, NULL, 0);
	CHECK_U64(walk(&st, &why), end);
	CHECK_U64(st.records, 7);
	ours = 1;
	bad("perf's own type in ours", 78, 0, b, 160, "never hold");
	ours = 0;
}

static void
test_compressed(void)
{
	struct perfcheck_stats	 st;
	struct compress		*z;
	const char		*why;
	uint64_t		 u[64], e, inner;
	uint8_t			 raw[4096], out[8192];
	size_t			 n, len = 0, k;

	if (!compress_available()) {
		printf("no zstd in this build: no compressed records\n");
		return;
	}
	/* twenty samples, compressed as the daemon does */
	for (k = 0; k < 20; k++) {
		struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };

		n = sample(u, 11, 1000 + k, 0, 2, 2);
		h.size = (uint16_t)(sizeof(h) + n);
		memcpy(raw + len, &h, sizeof(h));
		memcpy(raw + len + sizeof(h), u, n);
		len += h.size;
	}
	z = compress_create(3);
	n = compress_records(z, out, sizeof(out), raw, len, NULL, 0);
	CHECK(n > 8);
	good();
	e = end;
	memcpy(file + end, out, n);
	end += n;
	CHECK_U64(walk(&st, &why), end);
	CHECK_U64(st.samples, 22);
	CHECK_U64(st.last, 1019);
	CHECK_U64(st.raw, len);

	/* a damaged payload (here its zstd magic): cut before the record */
	file[e + 8] ^= 0x5a;
	CHECK_U64(walk(&st, &why), e);

	/* a record that leaves the next one half decoded: never cut
	 * between the two */
	compress_reset(z);
	inner = len / 2 + 3;
	good();
	n = compress_records(z, out, sizeof(out), raw, inner, NULL, 0);
	memcpy(file + end, out, n);
	end += n;
	CHECK_U64(walk(&st, &why), e);
	CHECK(strstr(why, "half decoded") != NULL);
	n = compress_records(z, out, sizeof(out), raw + inner, len - inner,
	    NULL, 0);
	memcpy(file + end, out, n);
	end += n;
	CHECK_U64(walk(&st, &why), end);
	CHECK_U64(st.samples, 22);
	compress_destroy(z);
}

/* The attrs' ids sections: each inside the file and none overlapping
 * another, checked before any is copied. */
static void
test_ids(void)
{
	struct perfcheck	*pc;
	uint64_t		 sec[2], at;

	good();
	at = hdr.attrs.offset + hdr.attr_size - sizeof(sec);
	pc = perfcheck_create(file, end, &hdr, feat);
	CHECK(pc != NULL);
	perfcheck_destroy(pc);
	/* attr 1's section over attr 0's */
	memcpy(sec, file + at + hdr.attr_size, sizeof(sec));
	sec[0] -= 8;
	memcpy(file + at + hdr.attr_size, sec, sizeof(sec));
	errno = 0;
	CHECK(perfcheck_create(file, end, &hdr, feat) == NULL);
	CHECK(errno == EINVAL);
	/* attr 0's past the file's end */
	good();
	sec[0] = end - 8;
	sec[1] = 16;
	memcpy(file + at, sec, sizeof(sec));
	CHECK(perfcheck_create(file, end, &hdr, feat) == NULL);
	/* an attr shorter than perf's first */
	good();
	hdr.attr_size = 32 + sizeof(sec);
	CHECK(perfcheck_create(file, end, &hdr, feat) == NULL);
}

/* A compressed record decodes to at most 256 times its bytes, or 64 KiB
 * when that is more. */
static void
test_compressed_ratio(void)
{
	static uint8_t		 raw[200 * 1024], out[8192];
	struct perfcheck_stats	 st;
	struct compress		*z;
	const char		*why;
	uint64_t		 u[64], e;
	uint32_t		 mmap_len = 1 << 20;
	size_t			 n, len = 0;

	if (!compress_available())
		return;
	/* the same sample again and again: 160 KiB compress to little */
	while (len + 64 <= 160 * 1024) {
		struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };

		n = sample(u, 11, 1000, 0, 2, 2);	/* 72 bytes */
		h.size = (uint16_t)(sizeof(h) + n);
		memcpy(raw + len, &h, sizeof(h));
		memcpy(raw + len + sizeof(h), u, n);
		len += h.size;
	}
	z = compress_create(3);
	n = compress_records(z, out, sizeof(out), raw, len, NULL, 0);
	CHECK(n > 8 && (n - 8) * 256 < len);
	good();
	memcpy(file + feat[PERFDATA_FEAT_COMPRESSED].offset + 16, &mmap_len,
	    sizeof(mmap_len));
	e = end;
	memcpy(file + end, out, n);
	end += n;
	CHECK_U64(walk(&st, &why), e);
	CHECK(strstr(why, "more than 256 times its bytes") != NULL);
	/* under 64 KiB it is read, whatever the ratio */
	compress_reset(z);
	len = 60 * 1024 / 80 * 80;	/* whole samples of 80 bytes */
	n = compress_records(z, out, sizeof(out), raw, len, NULL, 0);
	good();
	memcpy(file + feat[PERFDATA_FEAT_COMPRESSED].offset + 16, &mmap_len,
	    sizeof(mmap_len));
	memcpy(file + end, out, n);
	end += n;
	CHECK_U64(walk(&st, &why), end);
	compress_destroy(z);
}

int
main(void)
{
	test_good();
	test_bad_samples();
	test_bad_records();
	test_compressed();
	test_ids();
	test_compressed_ratio();
	return check_exit();
}

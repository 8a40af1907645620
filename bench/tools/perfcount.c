/*
 * perfcount: count the records of a perf.data file (perf's file format,
 * PERFILE2 with a data section, or the pipe format that perfspilld writes)
 * without perf: a fast cross-check of `perf report --stats` for the
 * benchmark, and the count of samples that a given process caused.
 *
 *   perfcount [--pid PID]... FILE
 *
 * Prints one JSON object: the number of records of each type, the sum of
 * the `lost` fields of PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES, and
 * with --pid the number of SAMPLE records whose pid is one of PIDs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#define MAX_ATTRS	64
#define MAX_PIDS	16
#define REC_HEADER_ATTR		64
#define REC_HEADER_TRACING_DATA	66
#define REC_AUXTRACE		71

struct attr {
	uint64_t	 sample_type;
	uint64_t	 first_id;
};

static struct attr	 attrs[MAX_ATTRS];
static size_t		 nr_attrs;
static uint64_t		 types[256];
static uint64_t		 lost, lost_samples, pid_samples, bad;
static uint32_t		 pids[MAX_PIDS];
static size_t		 nr_pids;

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t	 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t	 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void
add_attr(const uint8_t *a, size_t len)
{
	if (nr_attrs == MAX_ATTRS || len < 32)
		return;
	attrs[nr_attrs++].sample_type = rd64(a + 24);
}

/* The pid of a sample: after IDENTIFIER and IP, if present. */
static int
sample_pid(const uint8_t *rec, size_t len, uint32_t *pid)
{
	uint64_t	 st;
	size_t		 off = 8;

	if (nr_attrs == 0)
		return -1;
	st = attrs[0].sample_type;
	/* perf and perfspilld both use one layout up to TID for every event
	 * of a recording (IDENTIFIER, IP, TID); check the first attr only */
	if (!(st & PERF_SAMPLE_TID))
		return -1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		off += 8;
	if (st & PERF_SAMPLE_IP)
		off += 8;
	if (off + 4 > len)
		return -1;
	*pid = rd32(rec + off);
	return 0;
}

static void
count(const uint8_t *rec, size_t len)
{
	uint32_t	 type = rd32(rec), pid;
	size_t		 i;

	types[type < 256 ? type : 255]++;
	switch (type) {
	case PERF_RECORD_SAMPLE:
		if (nr_pids && sample_pid(rec, len, &pid) == 0)
			for (i = 0; i < nr_pids; i++)
				if (pids[i] == pid) {
					pid_samples++;
					break;
				}
		break;
	case PERF_RECORD_LOST:
		if (len >= 24)
			lost += rd64(rec + 16);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len >= 16)
			lost_samples += rd64(rec + 8);
		break;
	case REC_HEADER_ATTR:
		add_attr(rec + 8, len - 8);
		break;
	}
}

/* Walk records in [p, end); in the pipe format some records carry a
 * payload after them (tracing data, auxtrace) that must be skipped. */
static void
walk(const uint8_t *p, const uint8_t *end, int pipe)
{
	uint16_t	 size;
	uint32_t	 type;
	uint64_t	 extra;

	while (p + 8 <= end) {
		type = rd32(p);
		size = (uint16_t)(rd64(p) >> 48);
		if (size < 8 || p + size > end) {
			bad++;
			return;
		}
		count(p, size);
		extra = 0;
		if (pipe && type == REC_HEADER_TRACING_DATA && size >= 12)
			extra = (rd32(p + 8) + 7u) & ~7u;
		else if (type == REC_AUXTRACE && size >= 16)
			extra = rd64(p + 8);
		if ((uint64_t)(end - p) < size + extra) {
			bad++;
			return;
		}
		p += size + extra;
	}
	if (p != end)
		bad++;
}

int
main(int argc, char **argv)
{
	struct stat	 st;
	const uint8_t	*m, *h;
	int		 fd, i, pipe;
	uint64_t	 attr_size, a_off, a_size, d_off, d_size, j;

	for (i = 1; i + 1 < argc && strcmp(argv[i], "--pid") == 0; i += 2)
		if (nr_pids < MAX_PIDS)
			pids[nr_pids++] = (uint32_t)strtoul(argv[i + 1], NULL, 10);
	if (i != argc - 1) {
		fprintf(stderr, "usage: perfcount [--pid PID]... FILE\n");
		return 2;
	}
	if ((fd = open(argv[i], O_RDONLY)) == -1 || fstat(fd, &st) == -1) {
		fprintf(stderr, "perfcount: %s: %s\n", argv[i], strerror(errno));
		return 1;
	}
	if (st.st_size < 16) {
		fprintf(stderr, "perfcount: %s: too short\n", argv[i]);
		return 1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "perfcount: mmap: %s\n", strerror(errno));
		return 1;
	}
	madvise((void *)m, (size_t)st.st_size, MADV_SEQUENTIAL);
	if (memcmp(m, "PERFILE2", 8) != 0) {
		fprintf(stderr, "perfcount: %s: not a perf.data file\n", argv[i]);
		return 1;
	}
	pipe = rd64(m + 8) == 16;
	if (pipe) {
		walk(m + 16, m + st.st_size, 1);
	} else {
		h = m;
		attr_size = rd64(h + 16);
		a_off = rd64(h + 24);
		a_size = rd64(h + 32);
		d_off = rd64(h + 40);
		d_size = rd64(h + 48);
		if (attr_size < 16 || a_off + a_size > (uint64_t)st.st_size ||
		    d_off + d_size > (uint64_t)st.st_size) {
			fprintf(stderr, "perfcount: bad header\n");
			return 1;
		}
		/* each entry: the attr, then a file section of its ids */
		for (j = 0; j + attr_size <= a_size; j += attr_size)
			add_attr(m + a_off + j, (size_t)(attr_size - 16));
		walk(m + d_off, m + d_off + d_size, 0);
	}
	printf("{\"format\": \"%s\", \"bytes\": %lld, \"records\": {",
	    pipe ? "pipe" : "file", (long long)st.st_size);
	for (i = 0, j = 0; i < 256; i++)
		if (types[i])
			printf("%s\"%d\": %" PRIu64, j++ ? ", " : "", i, types[i]);
	printf("}, \"samples\": %" PRIu64 ", \"lost\": %" PRIu64
	    ", \"lost_samples\": %" PRIu64 ", \"pid_samples\": %" PRIu64
	    ", \"bad\": %" PRIu64 "}\n", types[PERF_RECORD_SAMPLE], lost,
	    lost_samples, pid_samples, bad);
	return 0;
}

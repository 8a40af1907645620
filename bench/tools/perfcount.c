/*
 * perfcount: count the records of a perf.data file (perf's file format,
 * PERFILE2 with a data section, as perfspilld writes it, or the pipe
 * format)
 * without perf: a fast cross-check of `perf report --stats` for the
 * benchmark, and the count of samples that a given process caused.
 *
 *   perfcount [--pid PID]... FILE
 *
 * FILE may also be the directory that `perf record --threads` writes:
 * its header file `data` (PERFILE2) and the record streams data.N of the
 * writer threads are counted together.
 *
 * Prints one JSON object: the number of records of each type, the sum of
 * the `lost` fields of PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES, and
 * with --pid the number of SAMPLE records whose pid is one of PIDs
 * (pid_samples) and of each of them (by_pid).
 * Records inside PERF_RECORD_COMPRESSED (perf -z, perfspilld -z) are
 * decompressed and counted as what they carry, as perf report does.
 */
#define _GNU_SOURCE
#include <dirent.h>
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
#include <zstd.h>

#include "../../perfdata/perf-abi.h"

#define MAX_ATTRS	64
#define MAX_PIDS	16

struct attr {
	uint64_t	 sample_type;
	uint64_t	 first_id;
};

static struct attr	 attrs[MAX_ATTRS];
static size_t		 nr_attrs;
static uint64_t		 types[256];
static uint64_t		 lost, lost_samples, pid_samples, bad;
static uint64_t		 first_time = UINT64_MAX, last_time;
static uint64_t		 lost_early, lost_first_time = UINT64_MAX, lost_last_time;
static int		 times_ok = 1;
#define EARLY_NS	500000000ull	/* "early": the first 0.5 s */
#define SID_BITS	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
			 PERF_SAMPLE_IDENTIFIER)

struct lost_at {
	uint64_t	 time, n;
};
static struct lost_at	*losts;
static size_t		 nr_losts, cap_losts;
static uint32_t		 pids[MAX_PIDS];
static uint64_t		 pid_counts[MAX_PIDS];
static size_t		 nr_pids;
/* the decompressed stream: one zstd stream runs through all COMPRESSED
 * records of a file, and a record may be split between two of them */
static ZSTD_DStream	*zd;
static uint8_t		*zbuf;
static size_t		 zlen, zcap;
static uint64_t		 zbytes;

static size_t	walk_some(const uint8_t *, const uint8_t *, int);
static void	decompress(const uint8_t *, size_t);

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
	attrs[nr_attrs].sample_type = rd64(a + 24);
	/* times of LOST records need one sample_id layout for all events */
	if (nr_attrs > 0 && (attrs[nr_attrs].sample_type & SID_BITS) !=
	    (attrs[0].sample_type & SID_BITS))
		times_ok = 0;
	nr_attrs++;
}

/* The sample_type that dates records: one layout shared by every attr,
 * with PERF_SAMPLE_TIME in it. 0, or -1 when records carry no usable time. */
static int
time_sample_type(uint64_t *st)
{
	if (nr_attrs == 0 || !times_ok)
		return -1;
	*st = attrs[0].sample_type;
	return (*st & PERF_SAMPLE_TIME) ? 0 : -1;
}

static int
sample_time(const uint8_t *rec, size_t len, uint64_t *t)
{
	uint64_t	 st;
	size_t		 off = 8;

	if (time_sample_type(&st) == -1)
		return -1;
	off += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	off += (st & PERF_SAMPLE_IP) ? 8 : 0;
	off += (st & PERF_SAMPLE_TID) ? 8 : 0;
	if (off + 8 > len)
		return -1;
	*t = rd64(rec + off);
	return 0;
}

/* The time in the sample_id trailer of a non-sample record. */
static int
trailer_time(const uint8_t *rec, size_t len, size_t body, uint64_t *t)
{
	uint64_t	 st;
	size_t		 sid = 0, off;

	if (time_sample_type(&st) == -1)
		return -1;
	sid += (st & PERF_SAMPLE_TID) ? 8 : 0;
	sid += 8;
	sid += (st & PERF_SAMPLE_ID) ? 8 : 0;
	sid += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	sid += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	sid += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	if (len < body + sid)
		return -1;
	off = len - sid + ((st & PERF_SAMPLE_TID) ? 8 : 0);
	*t = rd64(rec + off);
	return 0;
}

static void
note_lost(const uint8_t *rec, size_t len, size_t body, uint64_t n)
{
	uint64_t	 t;
	struct lost_at	*tmp;

	if (trailer_time(rec, len, body, &t) == -1)
		return;
	if (nr_losts == cap_losts) {
		cap_losts = cap_losts ? 2 * cap_losts : 64;
		if ((tmp = realloc(losts, cap_losts * sizeof(*losts))) == NULL)
			return;
		losts = tmp;
	}
	losts[nr_losts].time = t;
	losts[nr_losts++].n = n;
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
	uint64_t	 t;
	size_t		 i;

	types[type < 256 ? type : 255]++;
	switch (type) {
	case PERF_RECORD_SAMPLE:
		if (sample_time(rec, len, &t) == 0) {
			if (t < first_time)
				first_time = t;
			if (t > last_time)
				last_time = t;
		}
		if (nr_pids && sample_pid(rec, len, &pid) == 0)
			for (i = 0; i < nr_pids; i++)
				if (pids[i] == pid) {
					pid_samples++;
					pid_counts[i]++;
					break;
				}
		break;
	case PERF_RECORD_LOST:
		if (len >= 24) {
			lost += rd64(rec + 16);
			note_lost(rec, len, 24, rd64(rec + 16));
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len >= 16)
			lost_samples += rd64(rec + 8);
		break;
	case PERF_RECORD_HEADER_ATTR:
		add_attr(rec + 8, len - 8);
		break;
	case PERF_RECORD_COMPRESSED:
		decompress(rec + 8, len - 8);
		break;
	}
}

static void
decompress(const uint8_t *src, size_t len)
{
	ZSTD_inBuffer	 in = { src, len, 0 };
	ZSTD_outBuffer	 out;
	size_t		 r, used;
	uint8_t		*tmp;

	if (zd == NULL && (zd = ZSTD_createDStream()) == NULL) {
		bad++;
		return;
	}
	while (in.pos < in.size) {
		if (zcap - zlen < 65536) {
			zcap = zcap ? 2 * zcap : 1 << 20;
			if ((tmp = realloc(zbuf, zcap)) == NULL) {
				bad++;
				return;
			}
			zbuf = tmp;
		}
		out = (ZSTD_outBuffer){ zbuf, zcap, zlen };
		r = ZSTD_decompressStream(zd, &out, &in);
		if (ZSTD_isError(r)) {
			fprintf(stderr, "perfcount: zstd: %s\n",
			    ZSTD_getErrorName(r));
			bad++;
			return;
		}
		zbytes += out.pos - zlen;
		zlen = out.pos;
		used = walk_some(zbuf, zbuf + zlen, 0);
		memmove(zbuf, zbuf + used, zlen - used);
		zlen -= used;
	}
}

/* Count the whole records in [start, end) and return how many bytes they
 * take; in the pipe format some records carry a payload after them
 * (tracing data, auxtrace) that must be skipped. */
static size_t
walk_some(const uint8_t *start, const uint8_t *end, int pipe)
{
	const uint8_t	*p = start;
	uint16_t	 size;
	uint32_t	 type;
	uint64_t	 extra;

	while (p + 8 <= end) {
		type = rd32(p);
		size = (uint16_t)(rd64(p) >> 48);
		if (size < 8) {
			bad++;
			return (size_t)(end - start);
		}
		extra = 0;
		if (pipe && type == PERF_RECORD_HEADER_TRACING_DATA &&
		    size >= 12)
			extra = (rd32(p + 8) + 7u) & ~7u;
		else if (type == PERF_RECORD_AUXTRACE && size >= 16)
			extra = rd64(p + 8);
		if ((uint64_t)(end - p) < size + extra)
			break;
		count(p, size);
		p += size + extra;
	}
	return (size_t)(p - start);
}

static void
walk(const uint8_t *p, const uint8_t *end, int pipe)
{
	if (walk_some(p, end, pipe) != (size_t)(end - p))
		bad++;
}

/* Map a whole file read-only; NULL on error (said on stderr). */
static const uint8_t *
map_file(int dirfd, const char *path, size_t *len)
{
	struct stat	 st;
	const uint8_t	*m;
	int		 fd;

	if ((fd = openat(dirfd, path, O_RDONLY)) == -1 ||
	    fstat(fd, &st) == -1) {
		fprintf(stderr, "perfcount: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	*len = (size_t)st.st_size;
	if (*len == 0) {
		close(fd);
		return (const uint8_t *)"";
	}
	m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "perfcount: mmap %s: %s\n", path, strerror(errno));
		return NULL;
	}
	madvise((void *)m, *len, MADV_SEQUENTIAL);
	return m;
}

/* perf record --threads: every data.N beside the header file */
static int
walk_thread_files(int dirfd, long long *bytes)
{
	DIR		*d;
	struct dirent	*e;
	const uint8_t	*m;
	size_t		 len;
	int		 fd;

	if ((fd = dup(dirfd)) == -1 || (d = fdopendir(fd)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "data.", 5) != 0)
			continue;
		if ((m = map_file(dirfd, e->d_name, &len)) == NULL) {
			closedir(d);
			return -1;
		}
		*bytes += (long long)len;
		walk(m, m + len, 0);
	}
	closedir(d);
	return 0;
}

int
main(int argc, char **argv)
{
	struct stat	 st;
	const uint8_t	*m, *h;
	int		 dirfd, i, pipe;
	size_t		 len;
	long long	 total;
	uint64_t	 attr_size, a_off, a_size, d_off, d_size, j;

	for (i = 1; i + 1 < argc && strcmp(argv[i], "--pid") == 0; i += 2)
		if (nr_pids < MAX_PIDS)
			pids[nr_pids++] = (uint32_t)strtoul(argv[i + 1], NULL, 10);
	if (i != argc - 1) {
		fprintf(stderr, "usage: perfcount [--pid PID]... FILE\n");
		return 2;
	}
	if ((dirfd = open(argv[i], O_RDONLY | O_DIRECTORY)) != -1) {
		/* perf record --threads */
		if ((m = map_file(dirfd, "data", &len)) == NULL)
			return 1;
	} else if ((m = map_file(AT_FDCWD, argv[i], &len)) == NULL)
		return 1;
	st.st_size = (off_t)len;
	total = (long long)len;
	if (st.st_size < 16) {
		fprintf(stderr, "perfcount: %s: too short\n", argv[i]);
		return 1;
	}
	if (rd64(m) != PERFDATA_MAGIC) {
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
		if (dirfd != -1 && walk_thread_files(dirfd, &total) == -1) {
			fprintf(stderr, "perfcount: %s: %s\n", argv[i],
			    strerror(errno));
			return 1;
		}
	}
	/* where in the recording the kernel dropped records (LOST, by time;
	 * perf's LOST_SAMPLES written at exit carry no useful time) */
	for (j = 0; j < nr_losts && first_time != UINT64_MAX; j++) {
		uint64_t	 lt = losts[j].time;

		if (lt < lost_first_time)
			lost_first_time = lt;
		if (lt > lost_last_time)
			lost_last_time = lt;
		if (lt < first_time + EARLY_NS)
			lost_early += losts[j].n;
	}
	printf("{\"format\": \"%s\", \"bytes\": %lld, \"records\": {",
	    pipe ? "pipe" : dirfd != -1 ? "directory" : "file", total);
	for (i = 0, j = 0; i < 256; i++)
		if (types[i])
			printf("%s\"%d\": %" PRIu64, j++ ? ", " : "", i, types[i]);
	if (zlen != 0)
		bad++;		/* a record cut inside the compressed stream */
	printf("}, \"decompressed_bytes\": %" PRIu64, zbytes);
	printf(", \"samples\": %" PRIu64 ", \"lost\": %" PRIu64
	    ", \"lost_samples\": %" PRIu64 ", \"pid_samples\": %" PRIu64
	    ", \"bad\": %" PRIu64, types[PERF_RECORD_SAMPLE], lost,
	    lost_samples, pid_samples, bad);
	printf(", \"by_pid\": {");
	for (j = 0; j < nr_pids; j++)
		printf("%s\"%" PRIu32 "\": %" PRIu64, j ? ", " : "", pids[j],
		    pid_counts[j]);
	printf("}");
	if (first_time != UINT64_MAX && times_ok) {
		printf(", \"span_s\": %.6f", (double)(last_time - first_time) /
		    1e9);
		if (nr_losts)
			printf(", \"lost_timed\": %zu, \"lost_early\": %" PRIu64
			    ", \"first_lost_s\": %.6f, \"last_lost_s\": %.6f",
			    nr_losts, lost_early,
			    (double)((int64_t)(lost_first_time - first_time)) /
			    1e9, (double)((int64_t)(lost_last_time -
			    first_time)) / 1e9);
	}
	printf("}\n");
	return 0;
}

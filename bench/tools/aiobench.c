/*
 * aiobench: what glibc's POSIX AIO costs and how fast it writes one file,
 * buffered or O_DIRECT, the way perfspilld would spill a ring: fixed-size
 * blocks in sequence, K of them in flight, spread over D descriptors of
 * the same file, completions polled with aio_error (SIGEV_NONE) every
 * POLL microseconds from the main thread, never waited for. Prints one
 * JSON object: throughput, the process's CPU (getrusage RUSAGE_SELF: the
 * main thread and glibc's AIO threads), the main thread's own share, the
 * page cache before and after (/proc/meminfo) and the file's resident
 * pages (mincore).
 *
 *   aiobench [-b BLOCK] [-k INFLIGHT] [-d FDS] [-s SIZE] [-p POLL_US]
 *            [-t AIO_THREADS] [-n AIO_NUM] [--direct] [--dup]
 *            [--alloc append|fallocate|keep] [--skew BYTES] [--no-fsync]
 *            FILE
 *
 * glibc serves the requests of one descriptor one after another (one AIO
 * thread per descriptor at a time), so K blocks on one descriptor are K
 * queued writes, not K concurrent ones: -d opens the file D times (or
 * dup()s the first descriptor with --dup; glibc keys on the number) and
 * in-flight slot j always writes through descriptor j mod D.
 *
 * --alloc: append extends i_size with every write (the daemon today);
 * fallocate reserves the whole file first (fallocate mode 0: i_size set,
 * unwritten extents); keep reserves without changing i_size
 * (FALLOC_FL_KEEP_SIZE: every write still extends i_size). --skew starts
 * the first block at that offset (e.g. 512: aligned for the device, not
 * for ext4's 4 KiB blocks). The file is truncated first and fdatasync'd
 * at the end (inside the timed window unless --no-fsync).
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "size.h"

struct meminfo {
	long	cached_kb;
	long	dirty_kb;
	long	writeback_kb;
};

struct slot {
	struct aiocb	 aio;
	uint8_t		*buf;
	int		 busy;
	int		 fd;
	uint64_t	 off;	/* of the block; the request may be its rest */
	size_t		 done;
};

struct opts {
	size_t		 block;
	int		 inflight;
	int		 nfds;
	uint64_t	 size;
	long		 poll_us;
	int		 aio_threads;
	int		 aio_num;
	int		 direct;
	int		 dup;
	const char	*alloc;
	uint64_t	 skew;
	int		 fsync;
	const char	*path;
};

static uint64_t
parse_size(const char *s)
{
	uint64_t	 v;

	if ((v = tool_size(s)) == 0 && strcmp(s, "0") != 0) {
		fprintf(stderr, "aiobench: bad size: %s\n", s);
		exit(2);
	}
	return v;
}

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static void
meminfo_read(struct meminfo *m)
{
	FILE	*f;
	char	 line[256];
	long	 v;

	memset(m, 0, sizeof(*m));
	if ((f = fopen("/proc/meminfo", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Cached: %ld", &v) == 1)
			m->cached_kb = v;
		else if (sscanf(line, "Dirty: %ld", &v) == 1)
			m->dirty_kb = v;
		else if (sscanf(line, "Writeback: %ld", &v) == 1)
			m->writeback_kb = v;
	}
	fclose(f);
}

/* pages of the file in the page cache, as fincore(1) counts them */
static long
resident_pages(const char *path)
{
	struct stat	 st;
	unsigned char	*vec;
	void		*p;
	size_t		 n, i, pg = (size_t)sysconf(_SC_PAGESIZE);
	long		 res = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || st.st_size == 0) {
		close(fd);
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	n = ((size_t)st.st_size + pg - 1) / pg;
	if ((vec = malloc(n)) == NULL || mincore(p, (size_t)st.st_size,
	    vec) == -1)
		res = -1;
	else
		for (i = 0; i < n; i++)
			res += vec[i] & 1;
	free(vec);
	munmap(p, (size_t)st.st_size);
	return res;
}

static void
usage(void)
{
	fprintf(stderr, "usage: aiobench [-b BLOCK] [-k INFLIGHT] [-d FDS] "
	    "[-s SIZE] [-p POLL_US] [-t AIO_THREADS] [-n AIO_NUM] [--direct] "
	    "[--dup] [--alloc append|fallocate|keep] [--skew BYTES] "
	    "[--no-fsync] FILE\n");
	exit(2);
}

static void
parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "direct", no_argument, NULL, 'D' },
		{ "dup", no_argument, NULL, 'U' },
		{ "alloc", required_argument, NULL, 'A' },
		{ "skew", required_argument, NULL, 'S' },
		{ "no-fsync", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	memset(o, 0, sizeof(*o));
	o->block = 256 << 10;
	o->inflight = 4;
	o->nfds = 1;
	o->size = 1ULL << 30;
	o->poll_us = 100;
	/* perfspilld's own aio_init (daemon/control/perfspilld.c) */
	o->aio_threads = 4;
	o->aio_num = 64;
	o->alloc = "append";
	o->fsync = 1;
	while ((ch = getopt_long(argc, argv, "b:k:d:s:p:t:n:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b': o->block = (size_t)parse_size(optarg); break;
		case 'k': o->inflight = atoi(optarg); break;
		case 'd': o->nfds = atoi(optarg); break;
		case 's': o->size = parse_size(optarg); break;
		case 'p': o->poll_us = atol(optarg); break;
		case 't': o->aio_threads = atoi(optarg); break;
		case 'n': o->aio_num = atoi(optarg); break;
		case 'D': o->direct = 1; break;
		case 'U': o->dup = 1; break;
		case 'A': o->alloc = optarg; break;
		case 'S': o->skew = parse_size(optarg); break;
		case 'F': o->fsync = 0; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || o->block == 0 || o->inflight < 1 ||
	    o->nfds < 1 || o->nfds > o->inflight || o->size < o->block ||
	    o->poll_us < 0 || (strcmp(o->alloc, "append") != 0 &&
	    strcmp(o->alloc, "fallocate") != 0 &&
	    strcmp(o->alloc, "keep") != 0))
		usage();
	o->path = argv[optind];
	o->size -= o->size % o->block;
}

static int
open_fds(const struct opts *o, int *fds)
{
	int	 flags = O_WRONLY | (o->direct ? O_DIRECT : 0), i;

	if ((fds[0] = open(o->path, O_CREAT | O_TRUNC | flags, 0644)) == -1) {
		perror(o->path);
		return -1;
	}
	if (strcmp(o->alloc, "append") != 0 && fallocate(fds[0],
	    strcmp(o->alloc, "keep") == 0 ? FALLOC_FL_KEEP_SIZE : 0,
	    (off_t)o->skew, (off_t)o->size) == -1) {
		perror("fallocate");
		return -1;
	}
	for (i = 1; i < o->nfds; i++) {
		fds[i] = o->dup ? dup(fds[0]) : open(o->path, flags);
		if (fds[i] == -1) {
			perror(o->path);
			return -1;
		}
	}
	return 0;
}

static int
submit(struct slot *s, size_t len)
{
	memset(&s->aio, 0, sizeof(s->aio));
	s->aio.aio_fildes = s->fd;
	s->aio.aio_buf = s->buf + s->done;
	s->aio.aio_nbytes = len - s->done;
	s->aio.aio_offset = (off_t)(s->off + s->done);
	s->aio.aio_sigevent.sigev_notify = SIGEV_NONE;
	return aio_write(&s->aio);
}

int
main(int argc, char **argv)
{
	struct opts	 o;
	struct aioinit	 ai;
	struct slot	*slots;
	struct meminfo	 m0, m1;
	struct rusage	 r0, r1, t0, t1;
	struct timespec	 nap;
	int		*fds, i, e, busy;
	uint64_t	 next, polls = 0, eagain = 0, partial = 0;
	double		 w0, w1, w2;
	ssize_t		 ret;

	parse_opts(&o, argc, argv);
	memset(&ai, 0, sizeof(ai));
	ai.aio_threads = o.aio_threads;
	ai.aio_num = o.aio_num;
	ai.aio_idle_time = 30;
	aio_init(&ai);

	if ((fds = calloc((size_t)o.nfds, sizeof(*fds))) == NULL ||
	    (slots = calloc((size_t)o.inflight, sizeof(*slots))) == NULL)
		return 1;
	for (i = 0; i < o.inflight; i++) {
		if (posix_memalign((void **)&slots[i].buf, 4096, o.block)) {
			fprintf(stderr, "aiobench: out of memory\n");
			return 1;
		}
		/* not zeros: nothing along the way may skip or share them */
		memset(slots[i].buf, 0x5a + i, o.block);
	}
	if (open_fds(&o, fds) == -1)
		return 1;
	for (i = 0; i < o.inflight; i++)
		slots[i].fd = fds[i % o.nfds];

	nap.tv_sec = o.poll_us / 1000000;
	nap.tv_nsec = (o.poll_us % 1000000) * 1000;
	meminfo_read(&m0);
	getrusage(RUSAGE_SELF, &r0);
	getrusage(RUSAGE_THREAD, &t0);
	w0 = now();
	next = 0;
	busy = 0;
	for (;;) {
		for (i = 0; i < o.inflight; i++) {
			struct slot	*s = &slots[i];

			if (s->busy) {
				if ((e = aio_error(&s->aio)) == EINPROGRESS)
					continue;
				ret = aio_return(&s->aio);
				if (e != 0 || ret <= 0) {
					fprintf(stderr, "aiobench: write at "
					    "%llu: %s\n", (unsigned long long)
					    s->aio.aio_offset,
					    strerror(e ? e : EIO));
					return 1;
				}
				s->done += (size_t)ret;
				if (s->done < o.block) {
					partial++;
					if (submit(s, o.block) == -1)
						goto failed;
					continue;
				}
				s->busy = 0;
				busy--;
			}
			if (next >= o.size)
				continue;
			s->off = o.skew + next;
			s->done = 0;
			if (submit(s, o.block) == -1) {
				if (errno != EAGAIN)
					goto failed;
				eagain++;
				continue;
			}
			s->busy = 1;
			busy++;
			next += o.block;
		}
		if (busy == 0 && next >= o.size)
			break;
		polls++;
		nanosleep(&nap, NULL);
	}
	w1 = now();
	if (o.fsync && fdatasync(fds[0]) == -1) {
		perror("fdatasync");
		return 1;
	}
	w2 = now();
	getrusage(RUSAGE_THREAD, &t1);
	getrusage(RUSAGE_SELF, &r1);
	meminfo_read(&m1);

	printf("{\"block\": %zu, \"inflight\": %d, \"fds\": %d, "
	    "\"dup\": %s, \"direct\": %s, \"alloc\": \"%s\", \"skew\": %llu, "
	    "\"bytes\": %llu, \"poll_us\": %ld, \"aio_threads\": %d, "
	    "\"aio_num\": %d, \"fsync\": %s, "
	    "\"wall_write\": %.6f, \"wall\": %.6f, "
	    "\"utime\": %.6f, \"stime\": %.6f, "
	    "\"main_utime\": %.6f, \"main_stime\": %.6f, "
	    "\"polls\": %llu, \"eagain\": %llu, \"partial\": %llu, "
	    "\"cached_kb_before\": %ld, \"cached_kb_after\": %ld, "
	    "\"dirty_kb_before\": %ld, \"dirty_kb_after\": %ld, "
	    "\"resident_pages\": %ld}\n",
	    o.block, o.inflight, o.nfds, o.dup ? "true" : "false",
	    o.direct ? "true" : "false", o.alloc,
	    (unsigned long long)o.skew, (unsigned long long)o.size,
	    o.poll_us, o.aio_threads, o.aio_num, o.fsync ? "true" : "false",
	    w1 - w0, w2 - w0,
	    tv(r1.ru_utime) - tv(r0.ru_utime),
	    tv(r1.ru_stime) - tv(r0.ru_stime),
	    tv(t1.ru_utime) - tv(t0.ru_utime),
	    tv(t1.ru_stime) - tv(t0.ru_stime),
	    (unsigned long long)polls, (unsigned long long)eagain,
	    (unsigned long long)partial,
	    m0.cached_kb, m1.cached_kb, m0.dirty_kb, m1.dirty_kb,
	    resident_pages(o.path));
	return 0;

failed:
	perror("aio_write");
	return 1;
}

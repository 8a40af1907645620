/*
 * unwind-bench: the CPU that unwind/ takes per raw DWARF sample of a
 * perf.data file (perf record --call-graph dwarf), without the rest of
 * perfspill-flame: the file's mappings and forks are given to one
 * unwinder, its samples copied, then all of them unwound, ROUNDS times,
 * the process's CPU time measured around that alone. METHOD is that of
 * unwind_config (0: libdwfl for each sample; 1: the CFA tables, libdwfl
 * for what they do not cover). A tool for developers (docs/flame.md's
 * figures), never installed.
 *
 * usage: unwind-bench FILE [ROUNDS [METHOD]]
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata/perfcheck.h"
#include "perfdata/perfdata.h"
#include "unwind/unwind.h"

struct bench_sample {
	struct unwind_sample	 s;
	uint8_t			*copy;
};

struct bench {
	struct unwind		*uw;
	struct bench_sample	*v;
	size_t			 n, cap;
	struct perfcheck	*pc;
};

static int
bench_visit(void *arg, const uint8_t *rec, size_t size, size_t attr)
{
	struct bench			*b = arg;
	const struct perfcheck_sample	*smp;
	struct perf_event_header	 h;
	struct unwind_map		 m;
	struct unwind_sample		*s;
	uint32_t			 v[4];
	uint64_t			 q[3];
	uint8_t				*copy;

	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		memset(&m, 0, sizeof(m));
		memcpy(&m.pid, rec + 8, 4);
		memcpy(q, rec + 16, sizeof(q));
		m.start = q[0];
		m.len = q[1];
		m.pgoff = q[2];
		m.path = (const char *)rec + (h.type == PERF_RECORD_MMAP2 ?
		    8 + 64 : 8 + 32);
		if ((h.misc & PERF_RECORD_MISC_CPUMODE_MASK) !=
		    PERF_RECORD_MISC_KERNEL && unwind_map_add(b->uw, &m) == -1)
			return -1;
		return 0;
	case PERF_RECORD_FORK:
		memcpy(v, rec + 8, sizeof(v));
		return unwind_fork(b->uw, v[1], v[0]);
	case PERF_RECORD_COMM:
		memcpy(v, rec + 8, 4);
		if (h.misc & PERF_RECORD_MISC_COMM_EXEC)
			unwind_exec(b->uw, v[0], 0);
		return 0;
	case PERF_RECORD_SAMPLE:
		smp = perfcheck_sample_fields(b->pc);
		if (smp->regs == NULL || smp->stack == NULL)
			return 0;
		if (b->n == b->cap) {
			b->cap = b->cap ? b->cap * 2 : 1024;
			if ((b->v = realloc(b->v, b->cap * sizeof(*b->v))) ==
			    NULL)
				return -1;
		}
		/* the record stays mapped: only its copy from a compressed
		 * one would move, so every record is copied */
		if ((copy = malloc(size)) == NULL)
			return -1;
		memcpy(copy, rec, size);
		b->v[b->n].copy = copy;
		s = &b->v[b->n++].s;
		memset(s, 0, sizeof(*s));
		s->pid = smp->pid;
		s->tid = smp->tid;
		s->abi = smp->abi;
		s->regs_mask = smp->regs_mask;
		s->regs = copy + (smp->regs - rec);
		s->stack = copy + (smp->stack - rec);
		s->stack_size = smp->stack_size;
		return 0;
	}
	return 0;
}

static double
bench_cpu(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct unwind_config	 cfg = { 0 };
	struct perfdata_header	 hdr;
	struct perfdata_section	 feat[PERFDATA_FEAT_MAX];
	struct perfcheck_stats	 cs;
	struct unwind_stats	 st;
	struct bench		 b = { 0 };
	struct stat		 sb;
	uint64_t		 ips[512], sum = 0;
	const uint8_t		*map;
	double			 t0, t1;
	size_t			 i, n;
	unsigned int		 id;
	int			 fd, r, rounds;

	if (argc < 2)
		errx(2, "usage: unwind-bench FILE [ROUNDS [METHOD]]");
	rounds = argc > 2 ? atoi(argv[2]) : 3;
	cfg.method = argc > 3 ? atoi(argv[3]) : 0;
	if ((fd = open(argv[1], O_RDONLY)) == -1 || fstat(fd, &sb) == -1)
		err(1, "%s", argv[1]);
	if ((map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd,
	    0)) == MAP_FAILED)
		err(1, "mmap");
	memcpy(&hdr, map, sizeof(hdr));
	for (id = 0; id < PERFDATA_FEAT_MAX; id++)
		if (perfdata_feat_find(map, (uint64_t)sb.st_size, &hdr, id,
		    &feat[id]) == -1)
			memset(&feat[id], 0, sizeof(feat[id]));
	if ((b.pc = perfcheck_create(map, (uint64_t)sb.st_size, &hdr,
	    feat)) == NULL || (b.uw = unwind_create(&cfg)) == NULL)
		errx(1, "%s: cannot be read", argv[1]);
	memset(&cs, 0, sizeof(cs));
	perfcheck_visit(b.pc, bench_visit, &b);
	perfcheck_walk(b.pc, map, hdr.data.offset + hdr.data.size,
	    hdr.data.offset, &cs);
	/* a first round opens the binaries; the others are timed */
	for (i = 0; i < b.n; i++)
		unwind_sample(b.uw, &b.v[i].s, ips, 512, &n);
	t0 = bench_cpu();
	for (r = 0; r < rounds; r++)
		for (i = 0; i < b.n; i++) {
			unwind_sample(b.uw, &b.v[i].s, ips, 512, &n);
			sum += n;
		}
	t1 = bench_cpu();
	unwind_stats(b.uw, &st);
	printf("%llu evicted, %llu MB, %llu processes, %llu fallbacks, %llu rules; ", (unsigned long long)st.evicted, (unsigned long long)st.cache_bytes >> 20, (unsigned long long)st.processes, (unsigned long long)st.fallbacks, (unsigned long long)st.rules);
	printf("%zu samples, method %d, %.2f us a sample, %.1f frames a "
	    "sample, %llu binaries;", b.n, cfg.method, b.n ? (t1 - t0) * 1e6 /
	    ((double)b.n * rounds) : 0.0, b.n ? (double)sum / ((double)b.n *
	    rounds) : 0.0, (unsigned long long)st.binaries);
	for (id = 0; id < UNWIND_STOP_COUNT; id++)
		if (st.stops[id] > 0)
			printf(" %s %llu", unwind_stop_name((enum unwind_stop)id),
			    (unsigned long long)st.stops[id]);
	printf("\n");
	unwind_destroy(b.uw);
	perfcheck_destroy(b.pc);
	for (i = 0; i < b.n; i++)
		free(b.v[i].copy);
	free(b.v);
	return 0;
}

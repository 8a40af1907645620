/*
 * publish: the drain's counters as record_publish leaves them and
 * record_published reads them without the lock (record-publish.c). A
 * thread publishes over and over, every counter set to the same value,
 * while this one reads: a read that mixed two publications (a counter of
 * one, another of the next) is a torn read, which the sequence count
 * must prevent. Then a publication's fields, the file's name included,
 * read back as they were.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record-int.h"

#define NCPUS		4
#define ROUNDS		200000

static atomic_int	 reading, done;

/* Every counter of the pass, and of each CPU, at k. */
static void
set_all(struct record *rec, uint64_t k)
{
	size_t	 i;

	rec->thread.passes = k;
	rec->thread.busy = k;
	rec->w.heap_stats.submitted = k;
	rec->w.pool.spills = k;
	for (i = 0; i < rec->nr_cpus; i++) {
		rec->cpus[i].bytes = k;
		rec->cpus[i].counts.samples = k;
		rec->cpus[i].counts.lost = k;
		rec->cpus[i].lane.stats.bytes_written = k;
	}
}

static void *
publisher(void *arg)
{
	struct record	*rec = arg;
	uint64_t	 k;

	/* the reader reads already: the two overlap */
	while (!atomic_load(&reading))
		;
	for (k = 1; k <= ROUNDS; k++) {
		set_all(rec, k);
		record_publish(rec);
	}
	atomic_store(&done, 1);
	return NULL;
}

/* 1 when every counter read is the same value, *k. */
static int
consistent(const struct record_counters *c,
    const struct record_cpu_counters *cpus, uint64_t *k)
{
	size_t	 i;

	*k = c->passes;
	if (c->busy != *k || c->heap.submitted != *k ||
	    c->pool.spills != *k)
		return 0;
	for (i = 0; i < NCPUS; i++)
		if (cpus[i].bytes != *k || cpus[i].counts.samples != *k ||
		    cpus[i].counts.lost != *k ||
		    cpus[i].stats.bytes_written != *k)
			return 0;
	return 1;
}

static void
test_no_torn_reads(void)
{
	struct record		*rec = calloc(1, sizeof(*rec));
	struct record_counters	 c;
	struct record_cpu_counters cpus[NCPUS];
	pthread_t		 th;
	uint64_t		 k, last = 0, reads = 0, torn = 0, back = 0;
	uint64_t		 between = 0;

	rec->cpus = calloc(NCPUS, sizeof(*rec->cpus));
	rec->nr_cpus = NCPUS;
	rec->state = RECORD_IDLE;	/* no buffers to count */
	CHECK_EQ(pthread_create(&th, NULL, publisher, rec), 0);
	atomic_store(&reading, 1);
	while (!atomic_load(&done)) {
		record_published(rec, &c, cpus, NCPUS);
		reads++;
		if (!consistent(&c, cpus, &k))
			torn++;
		else {
			back += k < last;
			between += k > 0 && k < ROUNDS;
			last = k;
		}
	}
	pthread_join(th, NULL);
	CHECK_EQ(torn, 0);
	CHECK_EQ(back, 0);
	printf("%" PRIu64 " reads, %" PRIu64 " mid-way\n", reads, between);
	/* the last publication, whole */
	record_published(rec, &c, cpus, NCPUS);
	CHECK(consistent(&c, cpus, &k));
	CHECK_EQ(k, ROUNDS);
	free(rec->cpus);
	free(rec);
}

static void
test_fields_read_back(void)
{
	struct record		*rec = calloc(1, sizeof(*rec));
	struct record_counters	 c;
	struct record_cpu_counters cpus[2];

	rec->cpus = calloc(2, sizeof(*rec->cpus));
	rec->nr_cpus = 2;
	rec->thread.passes = 7;
	rec->cpus[1].counts.records = 11;
	rec->cpus[1].lane.nr = 3;
	record_publish(rec);
	record_published(rec, &c, cpus, 2);
	CHECK_EQ(c.passes, 7);
	CHECK_EQ(c.file, 0);		/* no current file */
	CHECK_EQ(cpus[0].counts.records, 0);
	CHECK_EQ(cpus[1].counts.records, 11);
	CHECK_EQ(cpus[1].cblocks, 3);
	/* only the first CPUs asked for are written */
	memset(cpus, 0xff, sizeof(cpus));
	record_published(rec, &c, cpus, 1);
	CHECK_EQ(cpus[0].counts.records, 0);
	CHECK_EQ(cpus[1].counts.records, (intmax_t)UINT64_MAX);
	free(rec->cpus);
	free(rec);
}

int
main(void)
{
	test_no_torn_reads();
	test_fields_read_back();
	return check_exit();
}

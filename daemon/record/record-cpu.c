/*
 * record-cpu makes and frees one CPU of a recording: its events and ring
 * (cpuring.h) and the cblocks its drains copy into, side by side, as
 * perf's mmap.c keeps a map's AIO buffers with the map (or, for a direct
 * file, the pool every ring shares). record.c decides when a CPU is
 * opened (start, hotplug) and closed; this file does it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record-int.h"

/* Room for every CPU that may come online: cpus never moves, since a
 * busy cblock's AIO request points into it. */
static struct record_cpu *record_cpu_make(struct record *, int);

int
record_cpus_alloc(struct record *rec, const int *cpus, size_t n)
{
	size_t	 i;

	rec->cap_cpus = cpuring_possible();
	if (rec->cap_cpus < n)
		rec->cap_cpus = n;
	rec->nr_cpus = 0;
	rec->cpus = calloc(rec->cap_cpus, sizeof(*rec->cpus));
	if (writer_staging(&rec->w, rec->cap_cpus) == -1 || rec->cpus == NULL)
		return -1;
	/* a CPU listed twice (record.c's test hook of many rings) gets a
	 * ring each time */
	for (i = 0; i < n; i++)
		if (record_cpu_make(rec, cpus[i]) == NULL)
			return -1;
	return 0;
}

/* The slot of cpu, made (closed, offline) when it has none yet; NULL
 * when there is no room or memory. */
struct record_cpu *
record_cpu_slot(struct record *rec, int cpu)
{
	size_t	 i;

	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].cpu == cpu)
			return &rec->cpus[i];
	return record_cpu_make(rec, cpu);
}

/* A new slot for cpu, closed (offline). */
static struct record_cpu *
record_cpu_make(struct record *rec, int cpu)
{
	struct record_cpu	*c;
	size_t			 i;

	if (rec->nr_cpus == rec->cap_cpus)
		return NULL;
	c = &rec->cpus[rec->nr_cpus];
	memset(c, 0, sizeof(*c));
	c->rec = rec;
	c->cpu = cpu;
	c->offline = 1;
	if ((c->fds = malloc(rec->nr_fds * sizeof(int))) == NULL ||
	    (c->ids = calloc(rec->nr_fds, sizeof(uint64_t))) == NULL) {
		free(c->fds);
		c->fds = NULL;
		return NULL;
	}
	for (i = 0; i < rec->nr_fds; i++)
		c->fds[i] = -1;
	rec->nr_cpus++;
	return c;
}

/* The largest chunk a drain of one ring makes: a ring's worth, or its
 * compressed bound. */
static size_t
record_chunk_max(const struct record *rec)
{
	return rec->zc ? rec->zcap :
	    rec->cfg.mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * n cblocks for c (write.h's lane), made before the first drain that
 * uses them: making one faults its pages in, too slow while the rings
 * fill.
 */
int
record_cpu_buffers(struct record *rec, struct record_cpu *c, size_t n)
{
	return writer_lane_make(&rec->w, &c->lane, n, record_chunk_max(rec));
}

/*
 * What tf's writes need (writer_buffers): the writer's pool for a
 * direct file; for a buffered one, each open ring's own cblocks, as
 * perf's --aio, made only once such a file is current (O_DIRECT
 * refused, a live cblocks change while a buffered file is current), so
 * that a direct recording holds no memory per CPU but its rings.
 */
int
record_cpus_buffers(struct record *rec, struct tracefile *tf, uint64_t n)
{
	size_t	 i;
	int	 rc;

	if ((rc = writer_buffers(&rec->w, tf, n, record_chunk_max(rec))) <= 0)
		return rc;
	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].ring.base != NULL &&
		    record_cpu_buffers(rec, &rec->cpus[i], n) == -1)
			return -1;
	return 0;
}

/* The cblocks of c: only once glibc holds none of their requests. */
void
record_cpu_free_buffers(struct record_cpu *c)
{
	writer_lane_free(&c->lane);
}

/*
 * Open c's events, disabled, map its ring, have the drain thread watch it
 * and give it the cblocks of the write mode. 0, or -1 with err filled
 * and nothing of it left open.
 */
int
record_cpu_open(struct record *rec, struct record_cpu *c,
    struct config_error *err)
{
	if (cpuring_open(&rec->spec, c->cpu, c->fds, c->ids, &c->ring,
	    err) == -1)
		return -1;
	if (record_thread_watch(rec, c) == -1 ||
	    (writer_copies(&rec->w) && rec->w.lanes &&
	    record_cpu_buffers(rec, c, rec->cfg.cblocks) == -1)) {
		record_cpu_close(rec, c);
		config_fail(err, PROTO_E_SYSTEM, NULL, "cpu %d: out of memory",
		    c->cpu);
		return -1;
	}
	c->offline = 0;
	c->open_failed = 0;
	return 0;
}

void
record_cpu_close(struct record *rec, struct record_cpu *c)
{
	record_thread_unwatch(rec, c);
	if (c->fds != NULL)
		cpuring_close(c->fds, rec->nr_fds, &c->ring);
}

void
record_cpus_close(struct record *rec)
{
	size_t	 i;

	for (i = 0; i < rec->nr_cpus; i++) {
		record_cpu_close(rec, &rec->cpus[i]);
		free(rec->cpus[i].fds);
		rec->cpus[i].fds = NULL;
		free(rec->cpus[i].ids);
		rec->cpus[i].ids = NULL;
	}
}

/* Only once nothing is in flight: the buffers belong to AIO until then. */
void
record_cpus_free(struct record *rec)
{
	size_t	 i;

	record_cpus_close(rec);
	for (i = 0; i < rec->nr_cpus; i++)
		record_cpu_free_buffers(&rec->cpus[i]);
	free(rec->cpus);
	rec->cpus = NULL;
	rec->nr_cpus = 0;
}

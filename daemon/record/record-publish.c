/*
 * record-publish hands the drain's counters to the loop, which reads
 * them without the recording's lock: status, the metrics and systemd's
 * STATUS= line must answer while a pass holds the lock, and must not
 * make the real-time drain thread wait behind a loop at the normal
 * scheduler either.
 *
 * Whoever holds the lock publishes what it changed before it lets go:
 * the drain thread at the end of each pass (record-thread.c), the loop
 * as it leaves the record code (record_unlock), which covers its own
 * drains, a rotation's switch where it makes it (a drain thread's
 * switch is its pass's), the reaper's completions and a live change. So there is one publisher at a time, the lock's holder, and
 * any number of readers that never take the lock: a seqlock. The count
 * is odd while a publication is under way; a reader that saw it odd, or
 * changed across its copy, copies again. Every published word is an
 * atomic, stored and loaded relaxed between the count's release and
 * acquire fences (as Boehm's "Can seqlocks get along with programming
 * language memory models?" does), so that no reader races a writer.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "record-int.h"

/* Each struct is copied word by word. */
_Static_assert(sizeof(struct record_counters) % sizeof(uint64_t) == 0,
    "record_counters: not whole words");
_Static_assert(sizeof(struct record_cpu_counters) % sizeof(uint64_t) == 0,
    "record_cpu_counters: not whole words");

/* The words of a plain struct in and out of its atomics. */
static void
record_words_store(_Atomic uint64_t *dst, const void *src, size_t len)
{
	uint64_t	 w;
	size_t		 i;

	for (i = 0; i < len / sizeof(w); i++) {
		memcpy(&w, (const uint8_t *)src + i * sizeof(w), sizeof(w));
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
}

static void
record_words_load(void *dst, const _Atomic uint64_t *src, size_t len)
{
	uint64_t	 w;
	size_t		 i;

	for (i = 0; i < len / sizeof(w); i++) {
		w = atomic_load_explicit(&src[i], memory_order_relaxed);
		memcpy((uint8_t *)dst + i * sizeof(w), &w, sizeof(w));
	}
}

static void
record_pool_counters(const struct record_pool *p,
    struct record_pool_counters *c)
{
	c->nr = p->nr;
	c->cap = p->cap;
	c->write = p->write;
	c->finished = p->finished;
	c->busy = p->busy;
	c->want = p->want;
	c->max = p->max;
	c->peak = p->peak;
	c->grown = p->grown;
	c->shrunk = p->shrunk;
	c->spills = p->spills;
	c->spill_bytes = p->spill_bytes;
	c->pads = p->pads;
	c->stats = p->stats;
}

/* The bytes of buffers the recording holds now: the lock's holder, as
 * it publishes them for status. */
static uint64_t
record_buffer_bytes(const struct record *rec)
{
	size_t		 i, j;
	uint64_t	 n = writer_bytes(&rec->w);

	for (i = 0; i < rec->nr_cpus; i++)
		for (j = 0; j < rec->cpus[i].lane.nr; j++)
			n += rec->cpus[i].lane.cbs[j].cap;
	if (rec->xbuf != NULL)
		n += rec->cfg.mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
	if (rec->zbuf != NULL)
		n += rec->zcap;
	return n;
}

/* What the drain changed and the loop reports, as it is now. */
static void
record_counters_take(const struct record *rec, struct record_counters *c)
{
	const struct tracefile	*tf = rec->cur;
	struct tracefile_info	 info;

	memset(c, 0, sizeof(*c));
	c->passes = rec->thread.passes;
	c->busy = rec->thread.busy;
	c->buffers = rec->state == RECORD_IDLE ? 0 : record_buffer_bytes(rec);
	c->pool_made = record_pool_made(&rec->w.pool);
	record_pool_counters(&rec->w.pool, &c->pool);
	c->heap = rec->w.heap_stats;
	c->copies = (uint64_t)writer_copies(&rec->w);
	if (rec->flight != NULL) {
		c->window = rec->flight->fl.st;
		c->window_store = rec->flight->fl.store.len;
	}
	if (tf == NULL)
		return;
	/* a direct write refused (EINVAL) turns the file buffered as its
	 * completion is reaped: in a pass, too */
	c->direct = tracefile_direct_on(tf);
	c->direct_refused = (uint64_t)tracefile_direct_refused(tf);
	tracefile_info(tf, &info);
	c->file = 1;
	c->file_bytes = info.reserved;
	c->file_samples = info.samples;
	snprintf(c->file_name, sizeof(c->file_name), "%s", info.partial);
}

void
record_publish(struct record *rec)
{
	struct record_published	*p = &rec->published;
	struct record_counters	 c;
	struct record_cpu_counters cc;
	const struct record_cpu	*rc;
	unsigned int		 seq;
	size_t			 i;

	record_counters_take(rec, &c);
	seq = atomic_load_explicit(&p->seq, memory_order_relaxed);
	atomic_store_explicit(&p->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	record_words_store(p->words, &c, sizeof(c));
	for (i = 0; i < rec->nr_cpus; i++) {
		rc = &rec->cpus[i];
		cc.bytes = rc->bytes;
		cc.counts = rc->counts;
		cc.cblocks = rc->lane.nr;
		cc.stats = rc->lane.stats;
		record_words_store(rec->cpus[i].published, &cc, sizeof(cc));
	}
	atomic_store_explicit(&p->seq, seq + 2, memory_order_release);
}

void
record_published(const struct record *rec, struct record_counters *c,
    struct record_cpu_counters *cpus, size_t ncpus)
{
	const struct record_published *p = &rec->published;
	unsigned int		 seq;
	size_t			 i;

	for (;;) {
		seq = atomic_load_explicit(&p->seq, memory_order_acquire);
		if (seq & 1) {
			/* a publication under way: it takes microseconds */
			sched_yield();
			continue;
		}
		record_words_load(c, p->words, sizeof(*c));
		for (i = 0; i < ncpus; i++)
			record_words_load(&cpus[i], rec->cpus[i].published,
			    sizeof(cpus[i]));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&p->seq, memory_order_relaxed) == seq)
			return;
	}
}

/*
 * record-pool keeps the blocks a direct file's stream is built in,
 * shared by every ring (see record-pool.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "log.h"
#include "record-pool.h"
#include "tracefile.h"

size_t
record_pool_block(size_t chunk)
{
	size_t	 page = (size_t)sysconf(_SC_PAGESIZE), b;

	/* two drains of a full ring at least, a lead and a round with them,
	 * and the pad's room (record_pool_room) */
	b = 2 * chunk;
	if (b < RECORD_POOL_MIN_BLOCK)
		b = RECORD_POOL_MIN_BLOCK;
	b += TRACEFILE_ALIGN_MAX + 2 * sizeof(uint64_t) +
	    RECORD_POOL_PAD_ROOM(TRACEFILE_ALIGN_MAX);
	return (b + page - 1) / page * page;
}

size_t
record_pool_write(size_t cap)
{
	size_t	 w = cap - TRACEFILE_ALIGN_MAX;

	return w < RECORD_POOL_WRITE ? w : RECORD_POOL_WRITE;
}

size_t
record_pool_count(uint64_t cblocks)
{
	uint64_t	 n = cblocks * RECORD_POOL_PER_CBLOCK;

	if (n < 2)
		n = 2;
	return n > RECORD_POOL_BASE_MAX ? RECORD_POOL_BASE_MAX : (size_t)n;
}

void
record_pool_shape(uint64_t cblocks, size_t chunk, size_t cap,
    uint64_t fs_bytes, struct record_pool_shape *s)
{
	const char	*e = getenv("PERFSPILL_TEST_POOL_BOUND");
	size_t		 unit = record_pool_block(chunk), n, k, m;
	long		 v;

	n = record_pool_count(cblocks);
	if (cap >= unit)
		k = cap / unit;
	else {
		/* units to a slice, rounded up: at most a unit past it */
		k = (RECORD_POOL_WRITE + unit - 1) / unit;
		if (k > n / 2)
			k = n / 2;
		if (k < 1)
			k = 1;
	}
	s->cap = k * unit;
	s->write = record_pool_write(s->cap);
	/*
	 * On a file system of a few MiB (a test's tmpfs, a small
	 * partition), slices of a sixteenth of it, at least 1 MiB: a 4 MiB
	 * request that finds too little room is refused whole, and a 6 MB
	 * tmpfs then held nothing past its first two files, where 1 MiB
	 * requests fill it.
	 */
	if (fs_bytes > 0) {
		uint64_t small = fs_bytes / 16;

		if (small < RECORD_POOL_MIN_BLOCK)
			small = RECORD_POOL_MIN_BLOCK;
		if (small < s->write)
			s->write = (size_t)small;
	}
	s->base = n / k < 2 ? 2 : n / k;
	/* RECORD_POOL_GROW x the base, and no more than
	 * RECORD_POOL_GROW_BYTES past it (large rings make large blocks:
	 * their base holds a burst already) */
	m = s->base * RECORD_POOL_GROW;
	if ((m - s->base) * s->cap > RECORD_POOL_GROW_BYTES)
		m = s->base + RECORD_POOL_GROW_BYTES / s->cap;
	/* tests lower the bound to reach the spill with a small storm */
	if (e != NULL && (v = strtol(e, NULL, 10)) >= 1 &&
	    (size_t)v <= s->base)
		m = (size_t)v;
	s->bound = m > RECORD_POOL_MAX ? RECORD_POOL_MAX : m;
	if (s->base > s->bound)
		s->base = s->bound;
}

/*
 * A block's memory: its own mapping, faulted in now (a first touch by a
 * drain costs page faults while the rings fill), given back to the
 * kernel when the pool shrinks (a freed heap block of this size would
 * stay in glibc's heap).
 */
static uint8_t *
record_pool_alloc(size_t len)
{
	void	*p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
record_pool_release(struct record_pool *pool, struct record_block *b)
{
	if (b->buf != NULL)
		munmap(b->buf, pool->cap);
	b->buf = NULL;
}

static int
record_pool_free_block(const struct record_block *b)
{
	return !b->open && b->slices == 0;
}

/* Make block nr. 0 or -1. */
static int
record_pool_make(struct record_pool *pool)
{
	struct record_block	*b = &pool->blocks[pool->nr];

	memset(b, 0, sizeof(*b));
	if ((b->buf = record_pool_alloc(pool->cap)) == NULL)
		return -1;
	pool->nr++;
	if (pool->nr > pool->peak)
		pool->peak = pool->nr;
	return 0;
}

int
record_pool_init(struct record_pool *pool, struct cblock_queue *q, size_t cap,
    size_t write, size_t n)
{
	memset(pool, 0, sizeof(*pool));
	/* tests reach the pad by request, which the cached pad leaves to
	 * a file without an open block, with a trickle of data */
	pool->pad_requests = getenv("PERFSPILL_TEST_PAD_REQUESTS") != NULL;
	pool->q = q;
	pool->cap = cap;
	pool->write = write;
	if (record_pool_resize(pool, n) == -1) {
		record_pool_finish(pool);
		return -1;
	}
	return 0;
}

int
record_pool_resize(struct record_pool *pool, size_t n)
{
	if (n > RECORD_POOL_MAX)
		n = RECORD_POOL_MAX;
	while (pool->nr < n)
		if (record_pool_make(pool) == -1)
			return -1;
	/* the blocks past n go at the next trim: a bound set next keeps
	 * those a burst made */
	pool->want = pool->max = n;
	return 0;
}

void
record_pool_set_bound(struct record_pool *pool, size_t max)
{
	if (max > RECORD_POOL_MAX)
		max = RECORD_POOL_MAX;
	if (max < 1)
		max = 1;
	/* below the base only in tests (record_pool_bound) */
	if (pool->want > max)
		pool->want = max;
	pool->max = max;
	record_pool_trim(pool);
}

void
record_pool_shrink(struct record_pool *pool)
{
	struct record_block	*b;
	size_t			 i;

	/* from the end only (slices point into the blocks, which never
	 * move), the free blocks past the base no drain opened since the
	 * last look: the burst is over */
	while (pool->nr > pool->want) {
		b = &pool->blocks[pool->nr - 1];
		if (!record_pool_free_block(b) || b->used)
			break;
		record_pool_release(pool, b);
		pool->nr--;
		pool->shrunk++;
	}
	for (i = 0; i < pool->nr; i++)
		pool->blocks[i].used = 0;
}

void
record_pool_trim(struct record_pool *pool)
{
	/* from the end only: slices point into the blocks, which never move */
	while (pool->nr > pool->max &&
	    record_pool_free_block(&pool->blocks[pool->nr - 1])) {
		record_pool_release(pool, &pool->blocks[pool->nr - 1]);
		pool->nr--;
	}
}

void
record_pool_finish(struct record_pool *pool)
{
	size_t	 i;

	for (i = 0; i < pool->nr; i++)
		record_pool_release(pool, &pool->blocks[i]);
	pool->nr = pool->want = pool->max = 0;
	pool->open = NULL;
	pool->tf = NULL;
}

int
record_pool_made(const struct record_pool *pool)
{
	return pool->nr > 0;
}

uint64_t
record_pool_bytes(const struct record_pool *pool)
{
	return (uint64_t)pool->nr * pool->cap;
}

/* A free block to open, the first one: the blocks in use stay few and
 * warm in the cache, and those past the base free for the shrink. None
 * free: a new one while the bound allows (a burst, or a disk slow for a
 * while). NULL when every one is open or in flight at the bound. */
static struct record_block *
record_pool_pick(struct record_pool *pool)
{
	size_t	 i;

	record_pool_trim(pool);
	for (i = 0; i < pool->max && i < pool->nr; i++)
		if (record_pool_free_block(&pool->blocks[i]))
			return &pool->blocks[i];
	if (pool->nr >= pool->max || record_pool_make(pool) == -1)
		return NULL;
	pool->grown++;
	return &pool->blocks[pool->nr - 1];
}

/* Queue [sent, end) of the open block as one request; sent moves on
 * also when it cannot be queued (the file is cut there). */
static int
record_pool_slice(struct record_pool *pool, size_t end)
{
	struct record_block	*b = pool->open;
	struct tracefile	*tf = pool->tf;
	struct cblock		*cb;
	uint64_t		 off = b->off + (b->sent - b->start);
	size_t			 len = end - b->sent;

	b->sent = end;
	if ((cb = cblock_create_slice(b->buf + end - len, len, &b->slices,
	    &pool->stats)) == NULL) {
		pool->stats.failed++;
		pool->stats.bytes_dropped += len;
		tracefile_failed(tf, off, ENOMEM);
		return -1;
	}
	if (cblock_submit(pool->q, cb, tf, off, tracefile_direct_slice(tf,
	    off)) == -1) {
		log_warn("%s: aio_write", tf->partial);
		return -1;
	}
	return 0;
}

int
record_pool_send(struct record_pool *pool, int all)
{
	struct record_block	*b = pool->open;
	size_t			 align, end;

	if (b == NULL)
		return 0;
	align = pool->tf->direct.align;
	end = b->fill - b->fill % align;
	if (end == b->sent || (!all && end - b->sent < pool->write))
		return 0;
	return record_pool_slice(pool, end);
}

void
record_pool_flush(struct record_pool *pool, struct tracefile *tf)
{
	struct record_block	*b = pool->open;

	if (b == NULL || pool->tf != tf)
		return;
	(void)record_pool_send(pool, 1);
	tracefile_direct_keep(tf, b->buf + b->sent, b->fill - b->sent);
}

int
record_pool_pad(struct record_pool *pool, struct tracefile *tf)
{
	struct record_block	*b = pool->open;
	struct cblock		*cb;
	uint64_t		 off;
	size_t			 align, end, tail, padded, stream;
	int			 fd;

	if (b == NULL || pool->tf != tf)
		return -1;
	align = tf->direct.align;
	end = b->fill - b->fill % align;
	tail = b->fill - end;
	padded = end + align;
	if (tail > 0 && padded + tail > pool->cap)
		return -1;
	off = b->off + (b->sent - b->start);
	stream = end - b->sent;
	if ((fd = tracefile_direct_pad_slice(tf, off, tail)) == -1) {
		/* no pad due: the aligned part alone, if there is one */
		if (stream > 0)
			pool->pads++;
		record_pool_flush(pool, tf);
		return 0;
	}
	pool->pads++;
	memset(b->buf + b->fill, 0, padded - b->fill);
	cb = cblock_create_slice(b->buf + b->sent, stream + align, &b->slices,
	    &pool->stats);
	/* the stream goes on past the padded block, from the tail's
	 * offset, the tail copied there: the request's bytes stay as they
	 * are until it completes */
	memcpy(b->buf + padded, b->buf + end, tail);
	tracefile_direct_keep(tf, b->buf + end, tail);
	b->off = off + stream;
	b->start = b->sent = padded;
	b->fill = padded + tail;
	if (cb == NULL) {
		/* as a slice's (record_pool_slice): the stream's part cannot
		 * be written, the file is cut there; a pad alone is only
		 * not made */
		if (stream > 0) {
			pool->stats.failed++;
			pool->stats.bytes_dropped += stream;
			tracefile_failed(tf, off, ENOMEM);
		}
		return 0;
	}
	cb->pad = 1;
	cb->stream = stream;
	if (cblock_submit(pool->q, cb, tf, off, fd) == -1)
		log_warn("%s: aio_write", tf->partial);
	return 0;
}

int
record_pool_cache(struct record_pool *pool, struct tracefile *tf)
{
	struct record_block	*b = pool->open;
	const struct tracefile_direct *d = &tf->direct;
	size_t			 page = (size_t)sysconf(_SC_PAGESIZE), from;

	if (b == NULL || pool->tf != tf || pool->pad_requests ||
	    d->nr_fds == 0 || d->align % page != 0)
		return -1;
	/* a buffered write may be throttled (balance_dirty_pages: up to
	 * 200 ms under other writers' dirty pages); at less than a slice a
	 * period the rings hold seconds of data, under a storm not */
	if (tf->reserved - d->flushed > pool->write)
		return -1;
	if (d->flush_off != UINT64_MAX && cblock_pad_busy(pool->q, tf,
	    d->flush_off))
		return -1;
	from = b->cached > b->sent ? b->cached : b->sent;
	if (from >= b->fill)
		return 0;
	if (tracefile_direct_cache(tf, b->buf + from, b->fill - from, b->off +
	    (from - b->start), b->off + (b->sent - b->start)) == -1)
		return -1;
	b->cached = b->fill;
	pool->pads++;
	return 0;
}

void
record_pool_detach(struct record_pool *pool, struct tracefile *tf)
{
	if (pool->open == NULL || pool->tf != tf)
		return;
	record_pool_flush(pool, tf);
	pool->open->open = 0;
	pool->open = NULL;
	pool->tf = NULL;
	record_pool_trim(pool);
}

/* b opens for tf's stream, after what a (the block before, finished:
 * its last bytes) or the file itself (its tail) holds. */
static void
record_pool_open(struct record_pool *pool, struct tracefile *tf,
    struct record_block *b, struct record_block *a)
{
	b->start = b->sent = b->cached = 0;
	if (a != NULL) {
		b->off = a->off + (a->sent - a->start);
		b->fill = a->fill - a->sent;
		memcpy(b->buf, a->buf + a->sent, b->fill);
		a->open = 0;
		pool->finished++;
	} else {
		b->fill = tracefile_direct_lead(tf, b->buf);
		b->off = tf->reserved - b->fill;
	}
	b->open = 1;
	b->used = 1;
	pool->open = b;
	pool->tf = tf;
}

uint8_t *
record_pool_room(struct record_pool *pool, struct tracefile *tf, size_t need,
    int wait)
{
	struct record_block	*a, *b;

	if (pool->open != NULL && pool->tf != tf)
		record_pool_detach(pool, pool->tf);
	a = pool->open;
	if (a != NULL && pool->cap - a->fill >= need +
	    RECORD_POOL_PAD_ROOM(tf->direct.align))
		return a->buf + a->fill;
	while ((b = record_pool_pick(pool)) == NULL) {
		/* what the open block holds goes on meanwhile */
		(void)record_pool_send(pool, 1);
		if (!wait || cblock_wait_any(pool->q) == -1) {
			pool->busy++;
			return NULL;
		}
	}
	if (a != NULL)
		(void)record_pool_send(pool, 1);
	record_pool_open(pool, tf, b, a);
	return b->buf + b->fill;
}

void
record_pool_put(struct record_pool *pool, struct tracefile *tf, size_t len,
    const struct tracefile_mark *mark)
{
	struct record_block	*b = pool->open;

	(void)tracefile_reserve(tf, len, mark);
	b->fill += len;
}

int
record_pool_spill_ready(struct record_pool *pool, struct tracefile *tf)
{
	/* the open block's aligned part goes as a slice (it needs no
	 * block), its last bytes become the file's tail */
	record_pool_detach(pool, tf);
	/* a padded tail in flight rewrites its block with zeros after the
	 * tail: it must land before the spill writes that block */
	if (tf->direct.flush_off != UINT64_MAX &&
	    cblock_wait_pads(pool->q, tf) == -1) {
		pool->busy++;
		return -1;
	}
	return 0;
}

int
record_pool_spill(struct record_pool *pool, struct tracefile *tf,
    const uint8_t *p, size_t len, const struct tracefile_mark *mark)
{
	pool->spills++;
	pool->spill_bytes += len;
	if (pool->open != NULL && pool->tf == tf)
		record_pool_detach(pool, tf);
	if (tracefile_direct_spill(tf, p, len, mark) == -1) {
		log_warn("%s: spill through the page cache", tf->partial);
		return -1;
	}
	return 0;
}

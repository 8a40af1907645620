/*
 * tracefile-queue follows a trace file's writes from reservation to
 * landing: offsets reserved in order, the requests against them in offset
 * order, the frontier below which everything is on disk, what landed
 * (samples, first and last times), the first failure the file is cut at,
 * and the synchronous writes of the serial mode and the page-cache spill.
 * The write layer (cblock, record-pool, tracefile-direct) reports here;
 * tracefile.c owns the file's life (create, close, finish).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tracefile.h"

/* Sum up b into a. */
static void
tracefile_mark_merge(struct tracefile_mark *a, const struct tracefile_mark *b)
{
	a->samples += b->samples;
	if (b->first != 0 && (a->first == 0 || b->first < a->first))
		a->first = b->first;
	if (b->last > a->last)
		a->last = b->last;
}

/*
 * A slot at the end of a queue (chunks, writes) of *arr: entries before
 * *first are done with; the live ones are moved down before it grows,
 * and *arr may move. NULL when memory runs out.
 */
static void *
tracefile_queue_slot(void **arr, size_t *first, size_t *nr, size_t *cap,
    size_t size)
{
	uint8_t	*p = *arr;
	size_t	 n;

	if (*nr == *cap && *first > 0) {
		*nr -= *first;
		memmove(p, p + *first * size, *nr * size);
		*first = 0;
	}
	if (*nr == *cap) {
		n = *cap ? *cap * 2 : 64;
		if ((p = reallocarray(p, n, size)) == NULL)
			return NULL;
		*arr = p;
		*cap = n;
	}
	return p + (*nr)++ * size;
}

static void
tracefile_chunk_push(struct tracefile *tf, uint64_t off, uint64_t len,
    const struct tracefile_mark *mark)
{
	static const struct tracefile_mark	 none;
	struct tracefile_chunk	*p;
	void			*arr = tf->chunks;

	p = tracefile_queue_slot(&arr, &tf->chunk_first, &tf->nr_chunks,
	    &tf->chunk_cap, sizeof(*p));
	tf->chunks = arr;
	if (p == NULL) {
		/* untracked: counted as if it lands */
		tracefile_mark_merge(&tf->kept, mark ? mark : &none);
		return;
	}
	p->off = off;
	p->len = len;
	p->mark = mark ? *mark : none;
}

uint64_t
tracefile_reserve(struct tracefile *tf, size_t len,
    const struct tracefile_mark *mark)
{
	uint64_t	 off = tf->reserved;

	tf->reserved += len;
	tracefile_chunk_push(tf, off, len, mark);
	return off;
}

/*
 * The reservations wholly below the frontier have landed, in order: kept
 * sums them up, and the last few are remembered for a cut-back.
 */
static void
tracefile_land(struct tracefile *tf)
{
	struct tracefile_chunk	*c;

	while (tf->chunk_first < tf->nr_chunks) {
		c = &tf->chunks[tf->chunk_first];
		if (c->off + c->len > tf->frontier)
			break;
		memmove(tf->landed + 1, tf->landed,
		    (TRACEFILE_LANDED - 1) * sizeof(tf->landed[0]));
		tf->landed[0].off = c->off;
		tf->landed[0].before = tf->kept;
		if (tf->nr_landed < TRACEFILE_LANDED)
			tf->nr_landed++;
		tracefile_mark_merge(&tf->kept, &c->mark);
		tf->chunk_first++;
	}
}

/* The start of the reservation holding byte off: a record boundary. */
static uint64_t
tracefile_chunk_start(const struct tracefile *tf, uint64_t off)
{
	size_t	 lo = tf->chunk_first, hi = tf->nr_chunks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (tf->chunks[mid].off + tf->chunks[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < tf->nr_chunks && tf->chunks[lo].off <= off)
		return tf->chunks[lo].off;
	return off;
}

/* A request [off, end) against the file, queued in offset order. */
static void
tracefile_write_push(struct tracefile *tf, uint64_t off, uint64_t end)
{
	struct tracefile_write	*p;
	void			*arr = tf->writes;

	p = tracefile_queue_slot(&arr, &tf->write_first, &tf->nr_writes,
	    &tf->write_cap, sizeof(*p));
	tf->writes = arr;
	if (p == NULL) {
		/* untracked: the frontier stops short of it, and the samples
		 * after it go uncounted, not unwritten */
		log_warnx("%s: out of memory tracking a write", tf->partial);
		return;
	}
	p->off = off;
	p->end = end;
	p->done = 0;
}

/* The request from off is on disk: move the frontier over every request
 * done in a row, and land what it passed. A failed request is never done:
 * nothing after it is counted. */
static void
tracefile_write_done(struct tracefile *tf, uint64_t off)
{
	struct tracefile_write	*w;
	size_t			 i;

	for (i = tf->write_first; i < tf->nr_writes; i++)
		if (tf->writes[i].off == off && !tf->writes[i].done) {
			tf->writes[i].done = 1;
			break;
		}
	while (tf->write_first < tf->nr_writes) {
		w = &tf->writes[tf->write_first];
		if (!w->done || w->off != tf->frontier)
			break;
		tf->frontier = w->end;
		tf->write_first++;
	}
	tracefile_land(tf);
}

void
tracefile_count(struct tracefile *tf, uint64_t samples, uint64_t lost,
    uint64_t lost_samples)
{
	tf->samples += samples;
	tf->lost += lost;
	tf->lost_samples += lost_samples;
}

void
tracefile_compressed(struct tracefile *tf, size_t raw, size_t compressed)
{
	tf->raw += raw;
	tf->compressed += compressed;
}

void
tracefile_count_compact(struct tracefile *tf, uint64_t unwound, uint64_t raw)
{
	tf->compact_unwound += unwound;
	tf->compact_raw += raw;
}

void
tracefile_queued(struct tracefile *tf, uint64_t off, size_t len)
{
	tf->inflight++;
	if (len > 0)
		tracefile_write_push(tf, off, off + len);
}

void
tracefile_completed(struct tracefile *tf, uint64_t off, size_t written,
    int err)
{
	tf->inflight--;
	tf->written += written;
	if (err != 0)
		tracefile_failed(tf, off, err);
	else
		tracefile_write_done(tf, off);
}

int
tracefile_pwrite(struct tracefile *tf, uint64_t off, const void *buf,
    size_t len)
{
	struct iovec	 iov = { (void *)(uintptr_t)buf, len };

	return tracefile_pwritev(tf, off, &iov, 1);
}

int
tracefile_pwritev(struct tracefile *tf, uint64_t off, const struct iovec *iov,
    int n)
{
	const uint8_t	*p;
	uint64_t	 start = off, total = 0;
	size_t		 len;
	ssize_t		 w;
	int		 i;

	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	tracefile_write_push(tf, start, start + total);
	for (i = 0; i < n; i++) {
		p = iov[i].iov_base;
		len = iov[i].iov_len;
		while (len > 0) {
			w = pwrite(tf->fd, p, len, (off_t)off);
			if (w == -1 && errno == EINTR)
				continue;
			if (w <= 0) {
				if (w == 0)
					errno = ENOSPC;
				/* the cut goes where the request began: a
				 * record boundary, not inside what was half
				 * written */
				tracefile_failed(tf, start, errno);
				return -1;
			}
			p += w;
			off += (uint64_t)w;
			len -= (size_t)w;
			tf->written += (uint64_t)w;
		}
	}
	tracefile_write_done(tf, start);
	return 0;
}

void
tracefile_failed(struct tracefile *tf, uint64_t off, int err)
{
	/* a request of the direct stream may begin inside a record */
	off = tracefile_chunk_start(tf, off);
	if (off < tf->bad_off) {
		tf->bad_off = off;
		tf->err = err;
	}
}

/*
 * ring maps, reads and releases a perf ring (see ring.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "ring.h"

int64_t
ring_span(uint64_t head, uint64_t tail, size_t size, struct ring_span *sp)
{
	uint64_t	 n = head - tail;	/* both wrap at 2^64 */
	size_t		 start;

	if (n > size)
		return -1;
	start = (size_t)(tail & (size - 1));
	if (start + n <= size) {
		sp->off[0] = start;
		sp->len[0] = (size_t)n;
		sp->off[1] = 0;
		sp->len[1] = 0;
	} else {
		sp->off[0] = start;
		sp->len[0] = size - start;
		sp->off[1] = 0;
		sp->len[1] = (size_t)n - sp->len[0];
	}
	return (int64_t)n;
}

static uint64_t
ring_u64_at(const uint8_t *data, size_t size, uint64_t pos)
{
	uint64_t	 v;

	/* fields are 8-byte aligned and size is a multiple of 8: never split */
	memcpy(&v, data + (pos & (size - 1)), sizeof(v));
	return v;
}

static uint32_t
ring_u32_at(const uint8_t *data, size_t size, uint64_t pos)
{
	uint32_t	 v;

	/* 4-byte aligned inside an 8-byte field: never split either */
	memcpy(&v, data + (pos & (size - 1)), sizeof(v));
	return v;
}

static int
ring_is_self(const uint8_t *data, size_t size, uint64_t pos,
    const struct perf_event_header *h, uint32_t pid, size_t pid_off)
{
	return pid_off != 0 && h->type == PERF_RECORD_SAMPLE &&
	    h->size >= pid_off + 4 &&
	    ring_u32_at(data, size, pos + pid_off) == pid;
}

void
ring_count_excl(const uint8_t *data, size_t size, uint64_t tail,
    uint64_t head, struct ring_counts *c, uint32_t pid, size_t pid_off)
{
	struct perf_event_header	 h;
	uint64_t			 pos, raw;

	/* != rather than <: the counters wrap at 2^64 */
	for (pos = tail; pos != head; pos += h.size) {
		raw = ring_u64_at(data, size, pos);
		memcpy(&h, &raw, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - pos) {
			c->bad++;
			return;
		}
		if (ring_is_self(data, size, pos, &h, pid, pid_off)) {
			c->self++;
			continue;
		}
		c->records++;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			c->samples++;
			break;
		case PERF_RECORD_LOST:		/* header, id, lost */
			c->lost += ring_u64_at(data, size, pos + 16);
			break;
		case PERF_RECORD_LOST_SAMPLES:	/* header, lost */
			c->lost_samples += ring_u64_at(data, size, pos + 8);
			break;
		}
	}
}

int
ring_map(struct ring *r, int fd, size_t pages)
{
	size_t	 psz = (size_t)sysconf(_SC_PAGESIZE);

	r->map_len = (pages + 1) * psz;
	r->size = pages * psz;
	r->base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -1;
	}
	r->data = (uint8_t *)r->base + psz;
	return 0;
}

void
ring_unmap(struct ring *r)
{
	if (r->base != NULL)
		munmap(r->base, r->map_len);
	r->base = NULL;
	r->data = NULL;
}

uint64_t
ring_head(const struct ring *r)
{
	const struct perf_event_mmap_page *pg = r->base;

	/* pairs with the kernel's store of data_head after the record */
	return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
}

uint64_t
ring_tail(const struct ring *r)
{
	const struct perf_event_mmap_page *pg = r->base;

	return __atomic_load_n(&pg->data_tail, __ATOMIC_RELAXED);
}

void
ring_release(struct ring *r, uint64_t tail)
{
	struct perf_event_mmap_page *pg = r->base;

	/* every read of the data happens before the kernel may overwrite it */
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

void
ring_push(const struct ring *r, const struct ring_span *sp, ring_push_fn push,
    void *to)
{
	push(to, r->data + sp->off[0], sp->len[0]);
	if (sp->len[1])
		push(to, r->data + sp->off[1], sp->len[1]);
}

size_t
ring_copy_excl(const struct ring *r, uint64_t tail, uint64_t head,
    uint8_t *dst, uint32_t pid, size_t pid_off)
{
	struct perf_event_header	 h;
	uint64_t			 pos, raw;
	size_t				 out = 0, off, first;

	for (pos = tail; pos != head; pos += h.size) {
		raw = ring_u64_at(r->data, r->size, pos);
		memcpy(&h, &raw, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - pos)
			break;
		if (ring_is_self(r->data, r->size, pos, &h, pid, pid_off))
			continue;
		off = (size_t)(pos & (r->size - 1));
		first = r->size - off < h.size ? r->size - off : h.size;
		memcpy(dst + out, r->data + off, first);
		if (first < h.size)
			memcpy(dst + out + first, r->data, h.size - first);
		out += h.size;
	}
	return out;
}

size_t
ring_filter_buf(uint8_t *buf, size_t len, struct ring_counts *c,
    struct ring_filter *f)
{
	struct perf_event_header	 h;
	size_t				 pos, out = 0, run = 0, run_len = 0;
	uint32_t			 p;
	uint64_t			 v;

	/*
	 * One pass over a copy that is still in the cache: count, and move
	 * runs of kept records down over our own samples. Runs, not records:
	 * most drains keep everything and move nothing.
	 */
	for (pos = 0; pos + sizeof(h) <= len; pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos) {
			c->bad++;
			break;
		}
		if (h.type == PERF_RECORD_SAMPLE && f->pid_off != 0 &&
		    h.size >= f->pid_off + 4) {
			memcpy(&p, buf + pos + f->pid_off, sizeof(p));
			if (p == f->pid) {
				c->self++;
				if (run_len > 0 && run != out)
					memmove(buf + out, buf + run, run_len);
				out += run_len;
				run = pos + h.size;
				run_len = 0;
				continue;
			}
		}
		run_len += h.size;
		c->records++;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			c->samples++;
			if (f->time_off == 0 || h.size < f->time_off + 8)
				break;
			memcpy(&v, buf + pos + f->time_off, sizeof(v));
			if (f->first == 0 || v < f->first)
				f->first = v;
			if (v > f->last)
				f->last = v;
			break;
		case PERF_RECORD_MMAP2:
			if (f->mmap2 != NULL)
				f->mmap2(buf + pos, h.size, f->arg);
			break;
		case PERF_RECORD_LOST:
			memcpy(&v, buf + pos + 16, sizeof(v));
			c->lost += v;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			memcpy(&v, buf + pos + 8, sizeof(v));
			c->lost_samples += v;
			break;
		}
	}
	if (run_len > 0 && run != out)
		memmove(buf + out, buf + run, run_len);
	return out + run_len;
}

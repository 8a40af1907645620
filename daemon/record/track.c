/*
 * track copies the task records a rotation carries over (see track.h).
 */
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "perfdata/sbuf.h"
#include "track.h"

/* LOST too, its count zeroed (track.h) */
#define TRACK_ROTATE_TYPES	(1u << PERF_RECORD_MMAP | \
	1u << PERF_RECORD_MMAP2 | 1u << PERF_RECORD_COMM | \
	1u << PERF_RECORD_FORK | 1u << PERF_RECORD_LOST)

/* Copy len bytes at pos of the circular area into dst. */
static void
track_read(uint8_t *dst, const uint8_t *data, size_t size, uint64_t pos,
    size_t len)
{
	size_t	 off = (size_t)(pos % size), first = size - off;

	if (first > len)
		first = len;
	memcpy(dst, data + off, first);
	memcpy(dst + first, data, len - first);
}

int
track_copy(struct sbuf *out, const uint8_t *data, size_t size, uint64_t from,
    uint64_t to)
{
	struct perf_event_header	 h;
	const uint64_t			 none = 0;
	size_t				 pos = out->len;

	if (track_copy_types(out, data, size, from, to,
	    TRACK_ROTATE_TYPES) == -1)
		return -1;
	/* what was copied is whole records, one after the other */
	for (; pos + sizeof(h) <= out->len; pos += h.size) {
		memcpy(&h, out->data + pos, sizeof(h));
		if (h.type == PERF_RECORD_LOST &&
		    h.size >= sizeof(h) + 2 * sizeof(none))	/* id, lost */
			memcpy(out->data + pos + sizeof(h) + sizeof(none),
			    &none, sizeof(none));
	}
	return 0;
}

int
track_copy_types(struct sbuf *out, const uint8_t *data, size_t size,
    uint64_t from, uint64_t to, uint32_t types)
{
	struct perf_event_header	 h;
	uint8_t				*dst;

	if (size == 0)
		return 0;
	while (to - from >= sizeof(h) && to - from <= size) {
		track_read((uint8_t *)&h, data, size, from, sizeof(h));
		if (h.size < sizeof(h) || h.size > to - from)
			break;
		if (h.type < 32 && (types & 1u << h.type)) {
			if ((dst = sbuf_zero(out, h.size)) == NULL)
				return -1;
			track_read(dst, data, size, from, h.size);
		}
		from += h.size;
	}
	return 0;
}

uint32_t
track_u32(const uint8_t *rec, size_t off)
{
	struct perf_event_header	 h;
	uint32_t			 v;

	memcpy(&h, rec, sizeof(h));
	if (h.size < sizeof(h) + off + sizeof(v))
		return 0;
	memcpy(&v, rec + sizeof(h) + off, sizeof(v));
	return v;
}

static int
track_cmp(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int
track_tids(const uint8_t *buf, size_t len, uint32_t **tids, size_t *nr)
{
	struct perf_event_header	 h;
	uint32_t			*t = NULL, *tmp;
	size_t				 off, n = 0, cap = 0;

	for (off = 0; len - off >= sizeof(h); off += h.size) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		if (h.type != PERF_RECORD_COMM)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((tmp = realloc(t, cap * sizeof(*t))) == NULL) {
				free(t);
				return -1;
			}
			t = tmp;
		}
		t[n++] = track_u32(buf + off, 4);
	}
	if (n > 0)
		qsort(t, n, sizeof(*t), track_cmp);
	*tids = t;
	*nr = n;
	return 0;
}

size_t
track_drop_forks(uint8_t *buf, size_t len, const uint32_t *tids, size_t nr)
{
	struct perf_event_header	 h;
	size_t				 off, kept = 0;
	uint32_t			 tid;

	for (off = 0; len - off >= sizeof(h); off += h.size) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		if (h.type == PERF_RECORD_FORK) {
			tid = track_u32(buf + off, 8);
			if (nr > 0 && bsearch(&tid, tids, nr, sizeof(*tids),
			    track_cmp) != NULL)
				continue;
		}
		memmove(buf + kept, buf + off, h.size);
		kept += h.size;
	}
	return kept;
}

int
track_ring_full(size_t size, uint64_t used)
{
	uint64_t	 slack = size / 4;

	if (slack > TRACK_RECORD_MAX)
		slack = TRACK_RECORD_MAX;
	return used > size || size - used < slack;
}

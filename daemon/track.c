/*
 * track: the task records a rotation carries over (see track.h).
 */
#include <string.h>
#include <linux/perf_event.h>

#include "sbuf.h"
#include "track.h"

static int
track_wanted(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
	    type == PERF_RECORD_COMM || type == PERF_RECORD_FORK;
}

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
	uint8_t				*dst;

	if (size == 0)
		return 0;
	while (to - from >= sizeof(h) && to - from <= size) {
		track_read((uint8_t *)&h, data, size, from, sizeof(h));
		if (h.size < sizeof(h) || h.size > to - from)
			break;
		if (track_wanted(h.type)) {
			if ((dst = sbuf_zero(out, h.size)) == NULL)
				return -1;
			track_read(dst, data, size, from, h.size);
		}
		from += h.size;
	}
	return 0;
}

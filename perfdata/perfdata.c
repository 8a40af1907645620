/*
 * perfdata: parse a file's head, find where its records stop being
 * whole, and finish it (see perfdata.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata/perf-abi.h"
#include "perfdata/perfdata.h"
#include "perfdata/sbuf.h"

/* record types end well below this; a larger one is garbage */
#define REC_TYPE_MAX		128

int
perfdata_feat_isset(const struct perfdata_header *h, unsigned int id)
{
	return id < PERFDATA_FEAT_BITS &&
	    (h->features[id / 64] & (1ULL << (id % 64))) != 0;
}

void
perfdata_feat_set(struct perfdata_header *h, unsigned int id)
{
	h->features[id / 64] |= 1ULL << (id % 64);
}

int
perfdata_feat_find(const uint8_t *map, uint64_t size,
    const struct perfdata_header *h, unsigned int id,
    struct perfdata_section *out)
{
	uint64_t	 off = h->data.offset + h->data.size;
	unsigned int	 i;

	if (!perfdata_feat_isset(h, id) || h->data.offset > size ||
	    h->data.size > size - h->data.offset)
		return -1;
	for (i = 0; i < id; i++)
		if (perfdata_feat_isset(h, i))
			off += sizeof(*out);
	if (off > size || sizeof(*out) > size - off)
		return -1;
	memcpy(out, map + off, sizeof(*out));
	return out->offset > size || out->size > size - out->offset ? -1 : 0;
}

int
perfdata_parse(const uint8_t *buf, uint64_t len, struct perfdata_layout *l)
{
	const struct perfdata_header	*h = &l->hdr;
	uint64_t			 off, nr = 0;
	unsigned int			 id;

	memset(l, 0, sizeof(*l));
	if (len < sizeof(l->hdr))
		goto bad;
	memcpy(&l->hdr, buf, sizeof(l->hdr));
	if (h->magic != PERFDATA_MAGIC || h->size != sizeof(*h) ||
	    h->attr_size == 0 || h->data.offset < sizeof(*h) ||
	    h->data.offset > len || h->attrs.offset + h->attrs.size >
	    h->data.offset)
		goto bad;
	for (id = 0; id < PERFDATA_FEAT_BITS; id++) {
		if (!perfdata_feat_isset(h, id))
			continue;
		/* the head only ever names the features we write */
		if (id >= PERFDATA_FEAT_MAX)
			goto bad;
		nr++;
	}
	/* the head's own table lies just before the data */
	if (nr * sizeof(struct perfdata_section) > h->data.offset -
	    sizeof(*h))
		goto bad;
	off = h->data.offset - nr * sizeof(struct perfdata_section);
	for (id = 0; id < PERFDATA_FEAT_MAX; id++) {
		if (!perfdata_feat_isset(h, id))
			continue;
		memcpy(&l->feat[id], buf + off, sizeof(l->feat[id]));
		off += sizeof(l->feat[id]);
		if (l->feat[id].offset > h->data.offset ||
		    l->feat[id].size > h->data.offset - l->feat[id].offset)
			goto bad;
	}
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

uint64_t
perfdata_valid_end(const uint8_t *buf, uint64_t len, uint64_t off,
    uint64_t *nr)
{
	struct perf_event_header	 h;
	uint32_t			 tsize;

	while (off + sizeof(h) <= len) {
		memcpy(&h, buf + off, sizeof(h));
		/* zeros: space reserved for a write that never landed */
		if (h.size < sizeof(h) || h.type == 0 ||
		    ((h.size & 7) != 0 && h.type != PERF_RECORD_COMPRESSED) ||
		    h.type >= REC_TYPE_MAX || off + h.size > len)
			break;
		if (h.type == PERF_RECORD_HEADER_TRACING_DATA) {
			/* pipe files: the tracing data follows, 8-aligned */
			if (h.size < sizeof(h) + 4)
				break;
			memcpy(&tsize, buf + off + sizeof(h), 4);
			if (off + h.size + (((uint64_t)tsize + 7) & ~7ULL) > len)
				break;
			off += ((uint64_t)tsize + 7) & ~7ULL;
		}
		off += h.size;
		if (nr != NULL)
			(*nr)++;
	}
	return off;
}

/* A sample's fields up to its ip: the header, the id, the ip. */
static size_t
perfdata_after_ip(uint64_t type)
{
	return sizeof(struct perf_event_header) +
	    ((type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0) +
	    ((type & PERF_SAMPLE_IP) ? 8 : 0);
}

size_t
perfdata_pid_off(uint64_t type)
{
	return (type & PERF_SAMPLE_TID) ? perfdata_after_ip(type) : 0;
}

size_t
perfdata_time_off(uint64_t type)
{
	if (!(type & PERF_SAMPLE_TIME))
		return 0;
	return perfdata_after_ip(type) + ((type & PERF_SAMPLE_TID) ? 8 : 0);
}

size_t
perfdata_id_time_back(uint64_t type)
{
	/* sample_id: pid/tid, time, id, stream_id, cpu, identifier */
	if (!(type & PERF_SAMPLE_TIME))
		return 0;
	return 8 * (size_t)__builtin_popcountll(type & (PERF_SAMPLE_TIME |
	    PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
	    PERF_SAMPLE_IDENTIFIER));
}

size_t
perfdata_sample_times(const uint8_t *buf, size_t len, size_t time_off,
    uint64_t *first, uint64_t *last)
{
	struct perf_event_header	 h;
	size_t				 pos;
	uint64_t			 t;

	for (pos = 0; pos + sizeof(h) <= len; pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos)
			break;
		if (h.type != PERF_RECORD_SAMPLE || time_off == 0 ||
		    h.size < time_off + sizeof(t))
			continue;
		memcpy(&t, buf + pos + time_off, sizeof(t));
		if (*first == 0 || t < *first)
			*first = t;
		if (t > *last)
			*last = t;
	}
	return pos;
}

int
perfdata_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = pwrite(fd, p, len, (off_t)off)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int
perfdata_finish(int fd, const struct perfdata_layout *l, uint64_t data_end,
    const struct perfdata_extra *x, uint64_t *sizep)
{
	struct perfdata_header	 hdr = l->hdr;
	struct perfdata_section	 sec[PERFDATA_FEAT_MAX], *s;
	struct sbuf		 tail;
	uint64_t		 times[2], pos;
	unsigned int		 id, nr = 0;
	int			 saved;

	if (data_end < hdr.data.offset) {
		errno = EINVAL;
		return -1;
	}
	memcpy(sec, l->feat, sizeof(sec));
	if (x != NULL && x->build_ids_len > 0) {
		perfdata_feat_set(&hdr, PERFDATA_FEAT_BUILD_ID);
		sec[PERFDATA_FEAT_BUILD_ID].size = x->build_ids_len;
	}
	if (x != NULL && x->first_sample != 0) {
		perfdata_feat_set(&hdr, PERFDATA_FEAT_SAMPLE_TIME);
		sec[PERFDATA_FEAT_SAMPLE_TIME].size = sizeof(times);
	}
	for (id = 0; id < PERFDATA_FEAT_MAX; id++)
		nr += perfdata_feat_isset(&hdr, id);

	/*
	 * perf finds the table at the end of the data; the payloads learnt
	 * while recording follow it, the others stay in the head.
	 */
	sbuf_init(&tail);
	if (nr > 0 && sbuf_zero(&tail, nr * sizeof(*s)) == NULL)
		goto nomem;
	pos = data_end + nr * sizeof(*s);
	if (x != NULL && x->build_ids_len > 0) {
		sec[PERFDATA_FEAT_BUILD_ID].offset = pos;
		if (sbuf_append(&tail, x->build_ids, x->build_ids_len) == NULL)
			goto nomem;
		pos += x->build_ids_len;
	}
	if (x != NULL && x->first_sample != 0) {
		times[0] = x->first_sample;
		times[1] = x->last_sample;
		sec[PERFDATA_FEAT_SAMPLE_TIME].offset = pos;
		if (sbuf_append(&tail, times, sizeof(times)) == NULL)
			goto nomem;
		pos += sizeof(times);
	}
	s = (struct perfdata_section *)(void *)tail.data;
	for (id = 0; id < PERFDATA_FEAT_MAX; id++) {
		if (perfdata_feat_isset(&hdr, id))
			memcpy(s++, &sec[id], sizeof(*s));
	}

	hdr.data.size = data_end - hdr.data.offset;
	/* the head's compressed feature was written before its ratio was
	 * known: comp_ver, type, level, then comp_ratio */
	if (x != NULL && x->comp_ratio != 0 &&
	    perfdata_feat_isset(&hdr, PERFDATA_FEAT_COMPRESSED) &&
	    l->feat[PERFDATA_FEAT_COMPRESSED].size >= 4 * sizeof(uint32_t) &&
	    perfdata_pwrite(fd, &x->comp_ratio, sizeof(x->comp_ratio),
	    l->feat[PERFDATA_FEAT_COMPRESSED].offset + 3 * sizeof(uint32_t)) ==
	    -1)
		goto error;
	/* the header last: until it lands the file is plainly unfinished */
	if (perfdata_pwrite(fd, tail.data, tail.len, data_end) == -1 ||
	    ftruncate(fd, (off_t)pos) == -1 ||
	    perfdata_pwrite(fd, &hdr, sizeof(hdr), 0) == -1)
		goto error;
	sbuf_finish(&tail);
	if (sizep != NULL)
		*sizep = pos;
	return 0;
nomem:
	errno = ENOMEM;
error:
	saved = errno;
	sbuf_finish(&tail);
	errno = saved;
	return -1;
}

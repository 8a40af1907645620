/*
 * compress-zstd makes PERF_RECORD_COMPRESSED records with libzstd (see
 * compress.h).
 */
#include <stdlib.h>
#include <string.h>
/* ZSTD_estimateCStreamSize is in zstd's "static" section: stable since
 * 1.4 and exported by the shared library Debian ships */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <linux/perf_event.h>

#include "compress.h"
#include "log.h"
#include "perfdata/perf-abi.h"

/* perf's limit for one record, less the header and perf's own margin */
#define REC_MAX			(65535 - sizeof(struct perf_event_header) - 1)

struct compress {
	ZSTD_CStream	*cs;
	int		 level;
};

int
compress_available(void)
{
	return 1;
}

struct compress *
compress_create(int level)
{
	struct compress	*z;
	size_t		 rc;

	if ((z = calloc(1, sizeof(*z))) == NULL)
		return NULL;
	z->level = level;
	if ((z->cs = ZSTD_createCStream()) == NULL) {
		free(z);
		return NULL;
	}
	rc = ZSTD_initCStream(z->cs, level);
	if (ZSTD_isError(rc)) {
		log_warnx("zstd level %d: %s", level, ZSTD_getErrorName(rc));
		compress_destroy(z);
		return NULL;
	}
	return z;
}

void
compress_destroy(struct compress *z)
{
	if (z == NULL)
		return;
	ZSTD_freeCStream(z->cs);
	free(z);
}

void
compress_reset(struct compress *z)
{
	/* drop the stream's history: the next byte starts a new frame */
	ZSTD_CCtx_reset(z->cs, ZSTD_reset_session_only);
}

size_t
compress_memory(int level)
{
	/* the stream's window is allocated at its first input, sized by
	 * the level (a flush does not shrink it): 1.3 MiB at level 1,
	 * 9 MiB at 7, 780 MiB at 22 */
	return ZSTD_estimateCStreamSize(level);
}

size_t
compress_bound(size_t len)
{
	size_t	 b = ZSTD_compressBound(len);

	/* one header per record, and one flush record per span at worst */
	return b + (b / REC_MAX + 4) * sizeof(struct perf_event_header) + 64;
}

/* Close the record whose payload (n bytes) follows the header at rec. */
static size_t
compress_emit(uint8_t *rec, size_t n)
{
	struct perf_event_header h;

	h.type = PERF_RECORD_COMPRESSED;
	h.misc = 0;
	h.size = (uint16_t)(sizeof(h) + n);
	memcpy(rec, &h, sizeof(h));
	return sizeof(h) + n;
}

static size_t
compress_span(struct compress *z, uint8_t *dst, size_t cap, const void *src,
    size_t len)
{
	ZSTD_inBuffer		 in = { src, len, 0 };
	ZSTD_outBuffer		 out;
	struct perf_event_header h;
	size_t			 used = 0, rc, room;

	/* each pass fills one record: feed what fits, then flush so that
	 * the record decodes without the next; go on until the input is in
	 * and the flush has nothing left */
	do {
		if (cap - used <= sizeof(h))
			return 0;
		room = cap - used - sizeof(h);
		out.dst = dst + used + sizeof(h);
		out.size = room > REC_MAX ? REC_MAX : room;
		out.pos = 0;
		if (in.pos < in.size &&
		    ZSTD_isError(ZSTD_compressStream(z->cs, &out, &in)))
			return 0;
		rc = ZSTD_flushStream(z->cs, &out);
		if (ZSTD_isError(rc))
			return 0;
		if (out.pos > 0)
			used += compress_emit(dst + used, out.pos);
	} while (in.pos < in.size || rc != 0);
	return used;
}

size_t
compress_records(struct compress *z, uint8_t *dst, size_t cap,
    const void *s1, size_t l1, const void *s2, size_t l2)
{
	size_t	 a, b = 0;

	if ((a = compress_span(z, dst, cap, s1, l1)) == 0 && l1 > 0)
		goto fail;
	if (l2 > 0 && (b = compress_span(z, dst + a, cap - a, s2, l2)) == 0)
		goto fail;
	return a + b;
fail:
	/* a broken stream would poison the whole file: start over */
	compress_reset(z);
	return 0;
}

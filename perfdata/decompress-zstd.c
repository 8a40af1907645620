/*
 * decompress-zstd: the zstd stream of PERF_RECORD_COMPRESSED records
 * through libzstd (see decompress.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>

#include "perfdata/decompress.h"

struct decompress {
	ZSTD_DStream	*ds;
};

struct decompress *
decompress_create(void)
{
	struct decompress	*z;

	if ((z = calloc(1, sizeof(*z))) == NULL)
		return NULL;
	if ((z->ds = ZSTD_createDStream()) == NULL ||
	    ZSTD_isError(ZSTD_initDStream(z->ds))) {
		decompress_destroy(z);
		return NULL;
	}
	return z;
}

void
decompress_destroy(struct decompress *z)
{
	if (z == NULL)
		return;
	ZSTD_freeDStream(z->ds);
	free(z);
}

size_t
decompress_record(struct decompress *z, const void *src, size_t len,
    void *dst, size_t cap, const char **why)
{
	ZSTD_inBuffer	 in = { src, len, 0 };
	ZSTD_outBuffer	 out = { dst, cap, 0 }, more;
	uint8_t		 byte;
	size_t		 rc;

	while (in.pos < in.size) {
		if (out.pos == out.size) {
			/* perf would call again with no room, for ever */
			*why = NULL;
			return 0;
		}
		rc = ZSTD_decompressStream(z->ds, &out, &in);
		if (ZSTD_isError(rc)) {
			*why = ZSTD_getErrorName(rc);
			return 0;
		}
	}
	/* a full buffer may leave zstd holding more of this record */
	more = (ZSTD_outBuffer){ &byte, 1, 0 };
	if (out.pos == out.size && !ZSTD_isError(ZSTD_decompressStream(z->ds,
	    &more, &in)) && more.pos > 0) {
		*why = NULL;
		return 0;
	}
	if (out.pos == 0)
		*why = "decompresses to nothing (perf: couldn't decompress)";
	return out.pos;
}

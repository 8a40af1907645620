/*
 * decompress: the zstd stream of a file's PERF_RECORD_COMPRESSED
 * records, read back the way perf reads it (util/session.c): one stream
 * for the whole file, each record's payload decoded in turn into a
 * buffer of the compressed feature's mmap_len bytes. A record that does
 * not decode, that decodes to nothing, or that would fill more than that
 * buffer is one perf refuses (or, for the last, never finishes reading).
 *
 * decompress-zstd.c implements it where meson finds libzstd,
 * decompress-none.c (every compressed record refused) elsewhere.
 */
#ifndef PERFSPILL_DECOMPRESS_H
#define PERFSPILL_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

struct decompress;

struct decompress *decompress_create(void);
void		 decompress_destroy(struct decompress *);
/*
 * Decode one record's payload src[0..len) into dst (capacity cap).
 * Returns the bytes decoded (> 0), or 0 when perf could not read it
 * (*why says why) or when it decodes to more than cap (*why NULL: the
 * caller knows what cap stood for). The stream goes on from where the
 * last call left it.
 */
size_t		 decompress_record(struct decompress *, const void *src,
		    size_t len, void *dst, size_t cap, const char **why);

#endif

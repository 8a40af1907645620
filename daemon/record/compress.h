/*
 * compress compresses drained ring data with zstd into
 * PERF_RECORD_COMPRESSED records, as perf record -z writes them. The
 * records of one file form one zstd stream that perf decompresses in
 * order; each record holds at most 64 KiB - 9 bytes of it, since a
 * record's size is 16 bits, and is not padded to 8 bytes (perf reads it
 * by its header size). compress_reset starts a new stream: every file
 * must be decodable alone.
 *
 * compress-zstd.c implements it where meson finds libzstd,
 * compress-none.c (compression refused with a clear error) elsewhere.
 *
 * Threads: one thread at a time uses a struct compress. The recording's
 * own stream is the drain's (the drain thread, or the loop under the
 * recording's lock), and a preamble's is its rotation worker thread's.
 * The functions without one keep no state: any thread.
 */
#ifndef PERFSPILL_COMPRESS_H
#define PERFSPILL_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

struct compress;

/* 1 when this build can compress. */
int		 compress_available(void);
struct compress	*compress_create(int level);
void		 compress_destroy(struct compress *);
void		 compress_reset(struct compress *);
/* Bytes a stream of this level may hold once it has compressed (its
 * window and tables, zstd's own estimate): record_memory counts them
 * before a start. 0 where nothing can be compressed. */
size_t		 compress_memory(int level);
/* Worst case of compress_records' output for len input bytes. */
size_t		 compress_bound(size_t len);
/*
 * Compress s1[0..l1) then s2[0..l2) into dst (capacity cap) as
 * PERF_RECORD_COMPRESSED records. Returns the bytes written, or 0 when
 * the library failed (the caller then writes the data uncompressed).
 */
size_t		 compress_records(struct compress *, uint8_t *dst, size_t cap,
		    const void *s1, size_t l1, const void *s2, size_t l2);

#endif

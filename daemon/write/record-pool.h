/*
 * record-pool holds the buffers of a recording whose file takes direct
 * I/O: a few large page-aligned blocks shared by every ring, instead of
 * cblocks x a ring's worth per CPU.
 *
 * Why: a direct request costs the writer about the same whatever its
 * size up to a MiB or so on a VM (exits, a completion interrupt, a
 * wakeup; bench/direct-io): per-ring cblocks made one request per drain
 * (128-256 KiB with the default ring), costing more CPU than the page
 * cache's copy. Here the drains of every ring go one after another into
 * the open block, in the file's own order: the stream. The open block is
 * written in slices of at least write bytes (up to 4 MiB), and a block is
 * finished (its aligned part written, its last bytes, fewer than one
 * alignment unit, carried to the start of a fresh block) only when the
 * next drain would not fit. So the one copy out of the ring is the copy to
 * disk, no drain carries a lead, and the memory does not grow with the
 * CPUs.
 *
 * Ownership: a block is the pool's; each slice in flight is a heap
 * cblock pointing into it (cblock_create_slice), counted in its slices.
 * A block is free once it is not open and none of its slices is in
 * flight. The open block belongs to one file (tf); when it has none,
 * that file's tail is in the tracefile (tracefile_direct_keep), where a
 * pad and the close find it.
 *
 * Threads: the pool is the recording's, under its lock. The drain (the
 * drain thread, or the loop's own drains) takes room, puts, sends,
 * flushes and spills; the loop makes, resizes, bounds, shrinks (the
 * tick), trims and finishes the pool, and detaches a file it closes.
 * The sizing functions (block, write, count, bound) keep no state: any
 * thread.
 */
#ifndef PERFSPILL_RECORD_POOL_H
#define PERFSPILL_RECORD_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "cblock.h"

struct config;
struct tracefile;

/*
 * Units per cblock: one filling while the one before is written. A unit
 * is record_pool_block's size; cblocks buy the pool 2 units each (2 to
 * 16), and the pool cuts those bytes into blocks of as many units as make
 * a slice of RECORD_POOL_WRITE, keeping at least 2 blocks
 * (record_pool_shape).
 */
#define RECORD_POOL_PER_CBLOCK	2
#define RECORD_POOL_BASE_MAX	(2 * 8)
/*
 * Under a burst (or a disk slow for a while) the pool grows to this many
 * times its base, and gives the blocks past the base back once no drain
 * has opened them for a tick: a full storm on 2 CPUs is ~100 MB/s, and
 * 4 x 8 blocks of a MiB hold a third of a second of it. Past the bound
 * the drain spills through the page cache (writer.c). The bound is
 * what record_memory counts.
 */
#define RECORD_POOL_GROW	4
#define RECORD_POOL_GROW_BYTES	(64 * 1024 * 1024)
#define RECORD_POOL_MAX		(RECORD_POOL_BASE_MAX * RECORD_POOL_GROW)
/*
 * The least unit, and the largest slice. A direct request of 1 MiB
 * costs the writer about what the page cache's copy of it does, and
 * smaller ones cost more per byte (bench/direct-io/aio.md). Larger ones
 * cost less again on a VM: under a storm each request is a wakeup of
 * glibc's AIO thread, its pages pinned and a doorbell (a VM exit), and
 * requests of 4 MiB halved that thread's CPU against 1 MiB ones
 * (bench/history/2026-12-07-blocks). glibc runs one descriptor's
 * requests one after another, so smaller slices would overlap nothing
 * either. A block goes out as one request when it is finished
 * (bench/pool/RESULTS.md: slices of half a block cost a third more CPU).
 */
#define RECORD_POOL_MIN_BLOCK	(1024 * 1024)
#define RECORD_POOL_WRITE	(4 * 1024 * 1024)
/*
 * The open block keeps this much room past a drain for a file of
 * alignment a (record_pool_room), so that a pad is one request
 * (record_pool_pad): the tail's block padded with zeros right after the
 * aligned part, then the tail again, aligned, where the stream goes on.
 */
#define RECORD_POOL_PAD_ROOM(a)	(2 * (size_t)(a))

struct record_block {
	uint8_t			*buf;
	/* the stream starts at buf[start] (aligned: 0, or past a pad),
	 * at file offset off (aligned) */
	size_t			 start;
	uint64_t		 off;
	size_t			 fill;	/* stream bytes in buf */
	size_t			 sent;	/* of them queued: aligned */
	size_t			 cached; /* of them in the page cache: a
					 * pad's (record_pool_cache) */
	unsigned int		 slices; /* requests in flight into buf */
	int			 open;
	int			 used;	/* opened since the last shrink */
};

struct record_pool {
	struct record_block	 blocks[RECORD_POOL_MAX];
	size_t			 nr;	/* made */
	size_t			 want;	/* the base: kept while recording */
	size_t			 max;	/* the bound: a burst grows to it */
	size_t			 peak;	/* most blocks made at once */
	size_t			 cap;	/* bytes of each */
	size_t			 write;	/* a slice once this much is unsent */
	struct record_block	*open;
	struct tracefile	*tf;	/* the open block's file */
	struct cblock_queue	*q;
	struct cblock_stats	 stats;
	uint64_t		 finished; /* blocks filled (a lead carried) */
	uint64_t		 busy;	/* rooms refused: no block free */
	uint64_t		 grown, shrunk;	/* blocks made past the base,
						 * given back */
	uint64_t		 spills, spill_bytes; /* through the page cache */
	uint64_t		 pads;	/* pads that wrote (record_pool_cache,
					 * record_pool_pad) */
	int			 pad_requests;	/* a test's: no cached pads */
};

/* The unit for rings whose drain takes at most chunk bytes in a block
 * (ring, or its compressed bound, and the round's record). */
size_t	 record_pool_block(size_t chunk);
/* The slice size for blocks of cap bytes: RECORD_POOL_WRITE, or what a
 * block holds past its lead room when that is less. */
size_t	 record_pool_write(size_t cap);
/* Units for cblocks (at least 2, at most RECORD_POOL_BASE_MAX). */
size_t	 record_pool_count(uint64_t cblocks);

/* A pool's geometry: what writer_buffers makes and record_memory
 * counts. */
struct record_pool_shape {
	size_t	 cap;	/* bytes of a block: units merged */
	size_t	 write;	/* the slice */
	size_t	 base;	/* blocks held while recording (not past the
			 * bound) */
	size_t	 bound;	/* blocks a burst grows to: RECORD_POOL_GROW x
			 * the base, at most RECORD_POOL_GROW_BYTES more
			 * (lower in tests: PERFSPILL_TEST_POOL_BOUND
			 * blocks, not below 1) */
};
/*
 * The shape of the pool for cblocks and drains of chunk bytes: the
 * units record_pool_count gives, in blocks of as many units as reach a
 * slice of RECORD_POOL_WRITE and leave at least 2 blocks, so that the
 * pool holds the bytes cblocks buy and no more. cap: a pool made already
 * keeps its blocks' size (a live change of cblocks changes their
 * number; 0 for a new pool); with the least cblocks it may then hold
 * more than a new pool would (2 blocks, not fewer). fs_bytes: the size
 * of the file system the file is on (0: not known), whose sixteenth
 * caps the slice, at least RECORD_POOL_MIN_BLOCK.
 */
void	 record_pool_shape(uint64_t cblocks, size_t chunk, size_t cap,
	    uint64_t fs_bytes, struct record_pool_shape *);

/* n blocks of cap bytes (their pages faulted in), slices of at least
 * write bytes, queued on q. 0 or -1 (nothing kept). */
int	 record_pool_init(struct record_pool *, struct cblock_queue *,
	    size_t cap, size_t write, size_t n);
/* Use n blocks from now, as base and bound: more are made (0 or -1),
 * those past n are freed once free, at the next trim (or bound set). */
int	 record_pool_resize(struct record_pool *, size_t n);
/* A burst may make blocks up to max (a max below the base lowers the
 * base: tests). */
void	 record_pool_set_bound(struct record_pool *, size_t max);
/* Give back the free blocks past the base that no drain opened since
 * the last call (the tick's). */
void	 record_pool_shrink(struct record_pool *);
/* Only once none of its slices is in flight. */
void	 record_pool_finish(struct record_pool *);
/* Free the blocks past the bound that are free. */
void	 record_pool_trim(struct record_pool *);
/* 1 when pool holds blocks. */
int	 record_pool_made(const struct record_pool *);
/* Bytes of the blocks made. */
uint64_t record_pool_bytes(const struct record_pool *);

/*
 * Room for need bytes at the end of tf's stream, in the open block:
 * where to put them, or NULL when no block is free (wait: wait for one,
 * a file's last drain; NULL then only when no request can complete).
 * An open block of another file is let go first (record_pool_detach);
 * an open block without the room is finished: its aligned part queued,
 * its last bytes carried to a free block, which opens.
 */
uint8_t	*record_pool_room(struct record_pool *, struct tracefile *,
	    size_t need, int wait);
/* len bytes holding mark were put at the room: the stream grows. */
void	 record_pool_put(struct record_pool *, struct tracefile *, size_t len,
	    const struct tracefile_mark *);
/* Queue the open block's aligned unsent bytes: all of them, or only
 * once they are write bytes. 0, or -1 (a request could not be queued:
 * tf is cut there). */
int	 record_pool_send(struct record_pool *, int all);
/* The stream's unwritten end on its way to disk as far as it can go:
 * every aligned byte queued, the last bytes made tf's tail for a pad
 * (tracefile_direct_pad); the block stays open. */
void	 record_pool_flush(struct record_pool *, struct tracefile *);
/*
 * The pad (direct_tail_ms): what tf's open block holds on disk now, as
 * one request: its unsent aligned part and, after it, its last bytes
 * (the stream's tail) as one aligned block padded with zeros, from the
 * block's own memory. The stream goes on in the same block past the
 * padded one, where the tail is copied, aligned; the next request
 * rewrites the tail's block on the same descriptor (tracefile-direct.c).
 * 0 when it was done (or nothing was due), -1 when tf has no open block
 * or the block has no room past its end for the padded tail (what a
 * fresh block took left less than RECORD_POOL_PAD_ROOM; not with the
 * blocks record_pool_block sizes): the caller pads from
 * tf's tail (tracefile_direct_pad) after record_pool_flush, by a
 * request of its own.
 */
int	 record_pool_pad(struct record_pool *, struct tracefile *);
/*
 * The pad without a request, where it can be had: what tf's open block
 * holds past its last slice and past the last such pad, written by the
 * file's buffered descriptor now (tracefile_direct_cache), on the
 * drain's thread. The block stays as it is; its slice later rewrites
 * those bytes past the page cache, and the kernel writes the cached
 * pages out and drops them before it does. Why: a pad by request woke
 * glibc's AIO thread each period and put it to sleep on the disk, two
 * of the always-on recorder's four wakeups a second; a few KiB into the
 * page cache cost the drain thread neither. 0 when it was done (or
 * nothing was new), -1 when the caller pads by a request
 * (record_pool_pad): tf has no open block; the stream grew by more
 * than a slice since the last pad (a storm: the drain thread must not
 * be the one the kernel throttles for dirty pages); the alignment is
 * under a page (the cached pages would share one with a slice in
 * flight); a padded tail in flight is to be rewritten by this block's
 * next slice (its zeros would land over the cached bytes); the write
 * failed.
 */
int	 record_pool_cache(struct record_pool *, struct tracefile *);
/* tf's open block, if it has one, is let go: its aligned part queued,
 * its last bytes made tf's tail (before a pad, a write of tf's own, its
 * close). */
void	 record_pool_detach(struct record_pool *, struct tracefile *);

/*
 * The spill, when no block can be had at the bound: tf's open block let
 * go and any padded tail of tf in flight landed (-1: one is not yet
 * glibc's to wait for; leave the ring), then len bytes of records at p
 * appended to the stream through the page cache (tracefile_direct_spill).
 * 0, or -1 (the write failed: tf is cut there).
 */
int	 record_pool_spill_ready(struct record_pool *, struct tracefile *);
int	 record_pool_spill(struct record_pool *, struct tracefile *,
	    const uint8_t *p, size_t len, const struct tracefile_mark *);

#endif

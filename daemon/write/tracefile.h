/*
 * tracefile: one trace file's life. It is created as NAME.data.partial,
 * receives its head (synth, perfdata.h) and then data at offsets
 * reserved in order, and on close waits for every request against it.
 * Then it is finished in the loop with a few small synchronous writes
 * to the page cache (the feature table and late features after the
 * data, the header at offset 0: perfdata_finish), its data fsync'd
 * through AIO so that the loop does not wait for that flush (in the
 * loop only when glibc has no slot for the request), renamed to
 * NAME.data and the directory fsync'd: the rename and that fsync are
 * synchronous in the loop, a metadata flush of one directory. A program
 * watching the directory only ever sees whole files under *.data.
 *
 * The data goes past the page cache where the file system allows
 * (tracefile-direct.c): O_DIRECT descriptors beside the buffered one,
 * every request aligned, the stream's unaligned tail kept in memory as
 * the lead of the next request. Requests complete in any order; a
 * reservation (records whole) counts as landed once every byte of it is
 * on disk, whichever requests carried them.
 *
 * Threads: a file that takes data is the recording's, under its lock:
 * the drain (the drain thread, or the loop's own drains) reserves and
 * writes, reaping completes requests, and the loop creates, switches and
 * closes files; once a closed file has landed (tracefile_landed) the
 * loop alone finishes and frees it, without the lock. A flight
 * snapshot's file is the loop's from its creation.
 *
 * This header is write/'s own: the struct and the functions the writer,
 * cblocks and the pool use. The other folders see a file through
 * write.h, where it is opaque.
 */
#ifndef PERFSPILL_TRACEFILE_H
#define PERFSPILL_TRACEFILE_H

#include <aio.h>
#include <limits.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>
#include <time.h>

#include "perfdata/perfdata.h"
#include "perfdata/sbuf.h"
#include "write.h"

enum tracefile_state {
	TRACEFILE_OPEN,		/* takes new data */
	TRACEFILE_CLOSING,	/* no new data; requests still in flight */
	TRACEFILE_SYNCING,	/* aio_fsync in flight */
	TRACEFILE_DONE,		/* renamed (or failed); fd closed */
};

/* Where a write landed, and what the file kept before it. */
struct tracefile_landed {
	uint64_t		 off;
	struct tracefile_mark	 before;
};
#define TRACEFILE_LANDED	4

/* A reservation not yet known to be on disk, in offset order. */
struct tracefile_chunk {
	uint64_t		 off;
	uint64_t		 len;
	struct tracefile_mark	 mark;
};

/* A request against the file, queued in offset order: a reservation (a
 * buffered file), or an aligned run of the stream (direct I/O). */
struct tracefile_write {
	uint64_t		 off;
	uint64_t		 end;
	int			 done;
};

/*
 * O_DIRECT descriptors of one file. glibc runs the requests of one
 * descriptor one after another, but ext4 takes the inode's lock for the
 * whole of an extending direct write: with 4 descriptors a profile of
 * the daemon under the syscall storm had 41 % of its samples spinning on
 * it (rwsem_down_write_slowpath, rwsem_spin_on_owner), with 1 none, for
 * the same bytes. One, until a file system that overlaps them is met.
 */
#define TRACEFILE_DIRECT_FDS	1
/* The largest alignment taken: a request's buffer holds up to this much
 * lead before its records, and buffers are page-aligned. */
#define TRACEFILE_ALIGN_MAX	4096

/* The O_DIRECT side of a file (tracefile-direct.c). */
struct tracefile_direct {
	int			 fds[TRACEFILE_DIRECT_FDS];
	size_t			 nr_fds;	/* 0: buffered */
	size_t			 next;		/* round robin */
	size_t			 align;		/* offsets, lengths, buffers */
	uint8_t			*tail;		/* the stream's last bytes, not */
	size_t			 tail_len;	/* ...yet written: < align */
	/* the tail written padded (tracefile_direct_pad), in flight on
	 * this descriptor; the request that rewrites that block follows
	 * it on the same one, so that glibc keeps them in order */
	int			 flush_fd;
	uint64_t		 flush_off;
	uint64_t		 flushed;	/* reserved at the last flush */
	uint64_t		 pads;		/* padded tails made */
	/* the last pad through the page cache (tracefile_direct_cache):
	 * the stream from cache_from to cache_to is there, and readable
	 * once every request below cache_from has landed */
	uint64_t		 cache_from, cache_to;
	int			 refused;	/* errno: why it is not direct */
};

struct tracefile {
	int			 dirfd;		/* not owned */
	int			 fd;
	char			 name[NAME_MAX - 15];	/* final name */
	char			 partial[NAME_MAX + 1];
	enum tracefile_state	 state;
	uint64_t		 reserved;	/* next free offset */
	uint64_t		 written;	/* bytes on disk */
	uint64_t		 bad_off;	/* first failed offset, or UINT64_MAX */
	int			 err;		/* errno of the first failure */
	unsigned int		 inflight;
	uint64_t		 header_len;	/* the preamble: no records yet */
	struct perfdata_layout	 layout;	/* of the head, to finish it */
	int			 removed;	/* failed inside the preamble */
	int			 unfinished;	/* left as .partial for salvage */
	uint64_t		 size;		/* of the finished file */
	time_t			 opened;
	uint64_t		 samples;	/* ring samples placed in this file */
	uint64_t		 lost, lost_samples;	/* ...and loss records */
	uint64_t		 raw, compressed;	/* bytes of records, -z */
	/* call_graph compact: samples written unwound, and raw (the
	 * worker's queue was full) */
	uint64_t		 compact_unwound, compact_raw;
	unsigned int		 seq;		/* the seq in its name */
	struct tracefile_mark	 kept;		/* of them, in the finished file */
	/*
	 * Writes in reservation order until every one before them landed:
	 * a file is cut at its first failed write, and kept sums up the
	 * writes before it.
	 */
	struct tracefile_chunk	*chunks;
	size_t			 chunk_first, nr_chunks, chunk_cap;
	/* requests in offset order; everything below frontier is on disk */
	struct tracefile_write	*writes;
	size_t			 write_first, nr_writes, write_cap;
	uint64_t		 frontier;
	struct tracefile_direct	 direct;
	/* the last writes kept, newest first: a full disk that has no room
	 * for the feature table gets it by cutting them off */
	struct tracefile_landed	 landed[TRACEFILE_LANDED];
	size_t			 nr_landed;
	/*
	 * PERF_RECORD_HEADER_BUILD_ID records, the build_id feature of the
	 * finished file: the kernel's from the head, then any appended
	 * before tracefile_close.
	 */
	struct sbuf		 buildids;
	struct aiocb		 sync;
	tracefile_done_cb	 done;
	void			*done_arg;
	TAILQ_ENTRY(tracefile)	 entry;
};

/* Reserve len bytes holding what mark says (NULL: no samples). */
uint64_t tracefile_reserve(struct tracefile *, size_t len,
	    const struct tracefile_mark *);
/* An AIO request of len bytes from off was queued (len 0: not part of
 * the file's stream, a padded tail); it completed having written that
 * many bytes, and failed with err (0: it is whole). */
void	 tracefile_queued(struct tracefile *, uint64_t off, size_t len);
void	 tracefile_completed(struct tracefile *, uint64_t off, size_t written,
	    int err);
/* Synchronous write at off (the serial mode, cblocks = 0), of the request
 * reserved there: one buffer, or pieces (a ring's data around its wrap).
 * 0 or -1. */
int	 tracefile_pwrite(struct tracefile *, uint64_t off, const void *,
	    size_t);
int	 tracefile_pwritev(struct tracefile *, uint64_t off,
	    const struct iovec *, int);

/*
 * tracefile-direct.c: the direct stream. A request of a direct file is
 * built as: tracefile_direct_lead copies the stream's unwritten tail to
 * the start of an aligned buffer (returns its length, lead), the records
 * follow it (len bytes), and tracefile_direct_block reserves them and
 * returns how many bytes to write from the buffer at *off on *fd (a
 * multiple of the alignment; 0: nothing yet), keeping the rest as the
 * new tail. No other request of the file may come between the two.
 */
void	 tracefile_direct_init(struct tracefile *);
int	 tracefile_direct_open(struct tracefile *);
void	 tracefile_direct_close(struct tracefile *);
void	 tracefile_direct_free(struct tracefile *);
size_t	 tracefile_direct_lead(const struct tracefile *, uint8_t *);
size_t	 tracefile_direct_block(struct tracefile *, uint8_t *, size_t lead,
	    size_t len, const struct tracefile_mark *, uint64_t *off, int *fd);
size_t	 tracefile_direct_pad(struct tracefile *, uint8_t *, uint64_t *off,
	    int *fd);
/* Is the padded tail at off, the file's pad number seq (its pads count
 * once it was made), still the one to write? Not once the stream's next
 * request took its block, nor once a later pad replaced it. */
int	 tracefile_direct_pad_current(const struct tracefile *, uint64_t off,
	    uint64_t seq);
/* The padded tails made so far: the last one's number. */
uint64_t tracefile_direct_pads(const struct tracefile *);
/*
 * For a writer that keeps the stream's unwritten end in a buffer of its
 * own (a pool block, record-pool.h), so that no lead is copied per
 * request: tracefile_direct_slice gives the descriptor for its request
 * of the stream from off (aligned; reserved already), and
 * tracefile_direct_keep makes the n bytes at p (fewer than one
 * alignment unit, the stream's last bytes past its last aligned offset)
 * the tail that a pad or the close writes and the next lead begins with.
 */
int	 tracefile_direct_slice(struct tracefile *, uint64_t off);
/* The same for a request from off that also writes the stream's tail,
 * its last tail bytes, as one aligned block padded with zeros after the
 * aligned part before it (the pool's pad, record_pool_pad): one request
 * a period where a slice and tracefile_direct_pad made two. -1 when no
 * pad is due (no tail, the stream did not grow since the last pad, or
 * the file went buffered): the request then ends at the tail. */
int	 tracefile_direct_pad_slice(struct tracefile *, uint64_t off,
	    size_t tail);
void	 tracefile_direct_keep(struct tracefile *, const uint8_t *p, size_t n);
/*
 * A pad without a request (record_pool_cache): the n bytes at p, the
 * stream's unqueued end from off, written now by the buffered
 * descriptor and their writeback started, not waited for; from is where
 * the stream's unqueued part begins (off, or before it where an earlier
 * call wrote). Nothing else is due for a pad then. 0, or -1 with errno
 * (nothing changed: the caller pads by a request).
 */
int	 tracefile_direct_cache(struct tracefile *, const uint8_t *p, size_t n,
	    uint64_t off, uint64_t from);
/* The end of what a reader of the file sees of the stream now: the
 * frontier, or past it what the last cached pad wrote once every request
 * below that landed. */
uint64_t tracefile_direct_readable(const struct tracefile *);
/* tracefile_direct_block's second half (tracefile-direct.c): the tail
 * kept, the aligned length and its descriptor returned. */
size_t	 tracefile_direct_cut(struct tracefile *, uint8_t *, size_t total,
	    uint64_t off, int *fd);
/* len bytes of records at p appended to the stream through the page
 * cache (no pool block free at its bound): the tail and p's aligned part
 * written by the buffered descriptor now, the rest kept as the tail.
 * 0, or -1 (tf is cut there). */
int	 tracefile_direct_spill(struct tracefile *, const uint8_t *p,
	    size_t len, const struct tracefile_mark *);
/* A direct request on fd failed with err: EINVAL means the file system
 * takes no direct writes after all. Returns the descriptor to write it
 * again on (the buffered one), or -1 when err is a real failure. */
int	 tracefile_direct_refuse(struct tracefile *, int fd, int err);
int	 tracefile_direct_end(struct tracefile *);

#endif

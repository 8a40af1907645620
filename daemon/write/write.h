/*
 * write: the one header of daemon/write/ that the other folders include
 * (scripts/folders declares it, scripts/callgraph checks it). write/ owns
 * a trace file end to end: the file and its queue of requests, direct
 * I/O, the pool of aligned blocks, cblocks (AIO) and the writer that the
 * drain hands its bytes to. The write mode is chosen in one place,
 * writer_choose (writer.c), when a file becomes the writer's.
 *
 * Outside write/ a trace file is opaque: a recording opens, counts into,
 * closes and lists its files through the functions below, and reads
 * what it needs of one through tracefile_info (one call for a finish, a
 * flush, status) or the few accessors a log line or a pass takes. The
 * file's own header, tracefile.h, is write/'s.
 *
 * The writer's buffers are embedded in the recording (its writer, each
 * CPU's lane), so their types come complete from cblock.h and
 * record-pool.h, which this header includes and nothing outside write/
 * includes by name.
 */
#ifndef PERFSPILL_WRITE_H
#define PERFSPILL_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <linux/perf_event.h>

#include "cblock.h"
#include "config.h"
#include "record-pool.h"

/*
 * tracefile.c: one trace file's life (tracefile.h says how), here only
 * as a pointer. Threads: the loop opens, closes, polls and frees a file
 * and reads its info; the drain (the drain thread, or the loop's own
 * drains) counts into the current one, under the recording's lock.
 */
struct tracefile;
typedef void (*tracefile_done_cb)(struct tracefile *, void *);
/* A recording's files in flight (closing, finishing): tracefile_list_*. */
TAILQ_HEAD(tracefile_list, tracefile);

/* What a file is and holds, filled in one call (tracefile_info). The
 * names point into the file: valid until it is freed. */
struct tracefile_info {
	const char		*name;		/* final name */
	const char		*partial;	/* its name while written */
	unsigned int		 seq;		/* the seq in its name */
	time_t			 opened;
	uint64_t		 reserved;	/* the next free offset */
	uint64_t		 frontier;	/* on disk below it */
	uint64_t		 readable;	/* a reader sees it below:
						 * the frontier, or a cached
						 * pad's end past it */
	size_t			 tail;		/* the direct stream's last
						 * bytes, not yet written */
	uint64_t		 cut;		/* first failed offset, or
						 * UINT64_MAX */
	int			 err;		/* errno of the first failure */
	int			 removed;	/* failed inside the preamble */
	int			 unfinished;	/* left .partial: salvage */
	uint64_t		 size;		/* of the finished file */
	uint64_t		 samples;	/* ring samples placed in it */
	uint64_t		 lost, lost_samples;	/* ...and loss records */
	uint64_t		 compact_unwound, compact_raw;	/* samples of
						 * call_graph compact */
	struct tracefile_mark	 kept;		/* of them, in the finished
						 * file */
	const void		*buildids;	/* the build_id feature's */
	size_t			 buildids_len;	/* ...records */
};

/* Make a unique name from host, the current UTC time and seq, and create
 * the .partial file in dirfd; direct: its data past the page cache where
 * the file system takes O_DIRECT. */
struct tracefile *tracefile_open(int dirfd, const char *host, unsigned int *seq,
	    int direct);
/* Why a file opened direct is written through the page cache (errno),
 * or 0. */
int	 tracefile_direct_refused(const struct tracefile *);
/* The head synth built (buf, the first len bytes): where the data starts
 * and the features to finish the file with; a file cut inside it holds
 * nothing worth keeping. 0 or -1. */
int	 tracefile_set_head(struct tracefile *, const uint8_t *buf, size_t len);
/* PERF_RECORD_HEADER_BUILD_ID records for the build_id feature of the
 * finished file, after those already there. 0 or -1. */
int	 tracefile_add_buildids(struct tracefile *, const void *, size_t);
/* What a drain placed in the file: ring samples and loss records. */
void	 tracefile_count(struct tracefile *, uint64_t samples, uint64_t lost,
	    uint64_t lost_samples);
/* raw bytes of records went into the file as compressed bytes (-z):
 * the ratio of its compressed feature. */
void	 tracefile_compressed(struct tracefile *, size_t raw, size_t compressed);
/* The request reserved at off failed with err: the file will be cut
 * there when it is finished, since a hole would end perf's reading; off
 * must be the reserved offset, a record boundary, even when part of the
 * request was written. */
void	 tracefile_failed(struct tracefile *, uint64_t off, int err);
void	 tracefile_close(struct tracefile *, tracefile_done_cb, void *);
/* A closed file with no request in flight: nothing but tracefile_poll
 * touches it from now on (where requests complete on another thread,
 * ask under the lock that thread's reaping holds). */
int	 tracefile_landed(const struct tracefile *);
/* Move a closing file on; returns 1 once it is DONE (done_cb called). */
int	 tracefile_poll(struct tracefile *);
void	 tracefile_free(struct tracefile *);
/* A file opened and never written: unlinked and freed (loop). */
void	 tracefile_discard(struct tracefile *);
/* 1 when the file's data is the aligned stream (its descriptors may have
 * been refused since: the stream then goes on through the buffered one). */
int	 tracefile_direct_on(const struct tracefile *);
/* What a file is and holds now (the loop, or under the lock). */
void	 tracefile_info(const struct tracefile *, struct tracefile_info *);
/* The names a log line gives, the next free offset (a rotation by
 * size) and when the file was opened (by age), without the whole info. */
const char *tracefile_name(const struct tracefile *);
const char *tracefile_partial(const struct tracefile *);
uint64_t tracefile_reserved(const struct tracefile *);
time_t	 tracefile_opened(const struct tracefile *);
/* errno of the file's first failed write, 0 while it is whole. */
int	 tracefile_error(const struct tracefile *);
/* call_graph compact placed samples unwound, and raw (the worker's queue
 * was full), in the file. */
void	 tracefile_count_compact(struct tracefile *, uint64_t unwound,
	    uint64_t raw);
/* fstat of the file's descriptor: 0 or -1. */
int	 tracefile_stat(const struct tracefile *, struct stat *);
/* A list of files: tf at its tail, tf off it, the file after tf. */
void	 tracefile_list_add(struct tracefile_list *, struct tracefile *);
void	 tracefile_list_remove(struct tracefile_list *, struct tracefile *);
struct tracefile *tracefile_list_next(const struct tracefile *);

/*
 * outdir.c: the output directory itself, apart from the files in it. One
 * daemon owns it at a time, by exclusive locks on the directory and on
 * OUTDIR_LOCK_FILE (which names the holder) held for the daemon's life
 * and taken before anything in it is touched; it
 * notices when the directory is removed under it and opens it again, lock
 * and all, once it is back.
 *
 * Threads: nothing here keeps state; the loop calls every function
 * (start-up, the tick, retention, status).
 */
/* Not perfspill-*: salvage, retention and status never see it. */
#define OUTDIR_LOCK_FILE	".perfspilld.lock"

/* Create path (and its parents) when missing and open it; -1 with errno. */
int	outdir_create(const char *path);
/*
 * Lock dirfd for this process and write our pid into the lock file.
 * Returns the lock's fd (close-on-exec; closing it releases the lock), or
 * -1 with the reason logged: another perfspilld holds it (its pid named)
 * or the lock file cannot be made.
 */
int	outdir_lock(int dirfd, const char *path);
/* 1 when dirfd's directory has been removed (or renamed away from path),
 * 0 while it is there. */
int	outdir_gone(int dirfd, const char *path);
/*
 * path is a directory again: open it, lock it, and put it and its lock in
 * place of dirfd and lockfd (same numbers, so that every holder of dirfd
 * follows). 0, or -1 with errno and dirfd, lockfd unchanged.
 */
int	outdir_reopen(int dirfd, int lockfd, const char *path);
/* Free bytes for unprivileged writers on the directory's filesystem (a
 * recording's pause and retention's min_free read it). 0, or -1. */
int	outdir_free_bytes(int dirfd, uint64_t *);

/*
 * writer.c puts a recording's bytes into its current trace file: the one
 * component of write/ that the drain talks to, in the shape of perf's
 * perf_mmap__push(map, to, push) and record__pushfn. One writer per
 * recording, whose file changes with each rotation.
 *
 * The write mode is chosen in one place, writer_choose, when a file
 * becomes the writer's (writer_set_file) or a live change of cblocks
 * sets another mode (writer_set_mode):
 * - serial (cblocks 0): pwrite of the pieces where they lie, in the
 *   ring, on the spot (writer_writev);
 * - a buffered file: each ring's own cblocks (its lane), copied into by
 *   the drain and submitted to aio_write at the pass's end, as perf's
 *   --aio; a ring whose cblocks are all in flight is left for later;
 * - a file opened past the page cache (direct I/O, which it stays): the
 *   pool of aligned blocks shared by every ring (record-pool.h), which
 *   spills through the page cache at its bound.
 * The drain asks room for a ring's bytes (writer_room), copies them
 * there and makes them records, and puts them (writer_put); a pass ends
 * with a FINISHED_ROUND (writer_round) and the writes queued
 * (writer_flush). Bytes that are not ring data (a preamble, the tasks a
 * rotation kept, what the unwinding worker rewrote) go through
 * writer_extra, and the direct stream's tail through writer_pad.
 *
 * Threads: a writer is the recording's, under its lock. The drain (the
 * drain thread, or the loop's own drains) writes; the loop sets the file
 * and the mode, makes and frees the buffers, and reaps the queue for
 * the files it closes.
 */
/* A pass's FINISHED_ROUND rides at the end of its last chunk: room for
 * it is kept after each. */
#define WRITER_ROUND_LEN	sizeof(struct perf_event_header)

enum writer_mode {
	WRITER_SERIAL,		/* cblocks 0 */
	WRITER_AIO,		/* a copy in a cblock or the pool */
};

/* One ring's cblocks, for a buffered file's AIO mode; made only once
 * such a file is current, so that a direct recording holds no memory
 * per CPU but its rings. */
struct writer_lane {
	struct cblock		 cbs[CONFIG_CBLOCKS_MAX];
	size_t			 nr;		/* made; the writer uses cblocks */
	struct cblock_stats	 stats;
};

/* The room writer_room gave for one ring's drain. */
struct writer_room {
	uint8_t			*buf;	/* NULL: the caller's own (a spill) */
	size_t			 cap;	/* bytes for the chunk */
	struct cblock		*cb;	/* the lane's cblock it is in */
};

struct writer_ops;

struct writer {
	const struct writer_ops	*ops;	/* writer_choose's */
	struct tracefile	*tf;	/* the current file, or NULL */
	enum writer_mode	 mode;
	size_t			 cblocks;	/* per lane */
	/* a direct file's buffers: blocks shared by every ring */
	struct record_pool	 pool;
	/* a buffered file in the AIO mode was current: the lanes have
	 * cblocks */
	int			 lanes;
	struct cblock_queue	 q;
	struct cblock_stats	 heap_stats;	/* preambles, pads */
	struct cblock		**staged;	/* one pass's cblocks */
	size_t			 nstaged;
	size_t			 cap_staged;
};

/* The loop: an empty writer (serial, no file); its buffers. */
void	writer_init(struct writer *);
/* Room to stage one cblock of each of n lanes in a pass: 0 or -1. */
int	writer_staging(struct writer *, size_t n);
/* Every buffer freed, once nothing is in flight (writer_wait_all). */
void	writer_finish(struct writer *);
/* The loop, the lock held: a file becomes current (NULL: none). */
void	writer_set_file(struct writer *, struct tracefile *);
/* The mode for cblocks n (0: serial), chosen again for the file. */
void	writer_set_mode(struct writer *, size_t n);
/* The drain copies a ring's bytes into room (1), or hands the pieces
 * where they lie (0: serial). */
int	writer_copies(const struct writer *);
/* The current file has a direct stream, whose tail writer_pad pads. */
int	writer_pads(const struct writer *);

/*
 * What tf's writes need with n cblocks, made before a drain needs them
 * (making a buffer faults its pages in, too slow while the rings fill):
 * the pool for a direct file, for chunks of up to chunk bytes (0);
 * else 1, and the caller gives each lane its cblocks (writer_lane_make).
 * -1: out of memory.
 */
int	writer_buffers(struct writer *, struct tracefile *, uint64_t n,
	    size_t chunk);
/* n cblocks for a lane, each for chunks of up to chunk bytes. */
int	writer_lane_make(struct writer *, struct writer_lane *, size_t n,
	    size_t chunk);
/* A lane's cblocks freed: only once glibc holds none of them. */
void	writer_lane_free(struct writer_lane *);
/* A burst that is over gives its pool blocks back (the tick). */
void	writer_shrink(struct writer *);
/* The bytes of buffers the writer holds (not the lanes'). */
uint64_t writer_bytes(const struct writer *);
/* The largest request the pool makes (a slice), 0 without a pool: room
 * a disk must have for the first write of a file to land. */
size_t	writer_slice(const struct writer *);

/*
 * The drain. Room for a drain of need bytes (its chunk, a round after
 * it) of lane: 0, or -1 when there is none now (every cblock in flight,
 * or the pool at its bound and the spill refused); a file's last drain
 * (last) waits for a cblock instead.
 */
int	writer_room(struct writer *, struct writer_lane *, size_t need,
	    int last, struct writer_room *);
/* The chunk of len bytes at data (the room's buffer, or the caller's
 * own where the room had none), holding mark, into the file. */
void	writer_put(struct writer *, struct writer_lane *,
	    struct writer_room *, const uint8_t *data, size_t len,
	    const struct tracefile_mark *);
/* Serial: the pieces at iov into the file, written now. 0, or -1 (the
 * bytes are counted dropped in the lane). */
int	writer_writev(struct writer *, struct writer_lane *,
	    const struct iovec *, int n, const struct tracefile_mark *);
/* A FINISHED_ROUND after what the pass put. */
void	writer_round(struct writer *);
/* The pass's writes queued (all of them: last). */
void	writer_flush(struct writer *, int last);
/* Bytes that are not ring data, into the file; takes buf. 0 or -1. */
int	writer_extra(struct writer *, uint8_t *buf, size_t len,
	    const struct tracefile_mark *);
/* Records made from ring data elsewhere (the unwinding worker's), into
 * the file as a ring's chunk where the writer has a stream with room
 * (the pool's open block: they go with its next slice, no request of
 * their own), else as writer_extra. Takes buf. 0 or -1. */
int	writer_append(struct writer *, uint8_t *buf, size_t len,
	    const struct tracefile_mark *);
/* What the direct stream holds in memory, where a crash of the daemon
 * leaves it: in the page cache, or on disk padded (writer.c). */
void	writer_pad(struct writer *);
/* Completions polled (aio_error reads memory, no system call). */
void	writer_reap(struct writer *);

/* The loop: tf stops taking data; the pool's open block of it goes. */
void	writer_detach(struct writer *, struct tracefile *);
/* Wait out every request in flight (a destroy). */
void	writer_wait_all(struct writer *);
/* Requests in flight, of every file. */
size_t	writer_busy(const struct writer *);
/* tf's padded tail at off still in flight (a flush's answer waits). */
int	writer_pad_busy(const struct writer *, const struct tracefile *,
	    uint64_t off);
/* len bytes of buf (taken) at tf's next offset, as one request through
 * AIO, whatever the mode: a file not the writer's (a flight snapshot,
 * written by the loop, which never writes from the ring). */
void	writer_queue(struct writer *, struct tracefile *, uint8_t *buf,
	    size_t len, const struct tracefile_mark *);
/* The queue's settings: writeback on or off, the requests' priority
 * (cblock.h says why both). */
void	writer_writeback(struct writer *, int on);
void	writer_prio(struct writer *, int prio);

#endif

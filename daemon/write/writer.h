/*
 * writer puts a recording's bytes into its current trace file: the one
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
#ifndef PERFSPILL_WRITER_H
#define PERFSPILL_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include "cblock.h"
#include "config.h"
#include "record-pool.h"
#include "tracefile.h"

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
/* The direct stream's tail on disk, padded, where there is one. */
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

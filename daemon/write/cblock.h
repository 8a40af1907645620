/*
 * cblock is a control block of the multi-block AIO spill. Each ring owns
 * up to CONFIG_CBLOCKS_MAX of them, each with a buffer of the ring's
 * size. A drain copies the ring's new data into a free cblock, releases
 * the ring at once, and hands the copy to aio_write at the file offset
 * reserved for it; the disk write then happens while the ring already
 * fills again.
 *
 * Ownership: a busy cblock's buffer and aiocb belong to glibc's AIO
 * thread until aio_error stops saying EINPROGRESS. Nothing frees or reuses
 * a busy cblock; a file is finished only once every request against it
 * completed (tracefile.h), and the buffers are freed only once glibc
 * holds none of them (cblock_wait_all).
 *
 * Threads: a queue and its cblocks are the recording's, under its lock.
 * The drain (the drain thread, or the loop's own drains) picks, submits
 * and reaps; the loop submits too (preambles, pads, a last drain), reaps
 * with its reaper, and sets the queue up and tears it down (init,
 * writeback, prio, wait_all). cblock_thread_prio runs on the drain thread
 * as it starts. cblock_step and cblock_buffer keep no state: any
 * thread.
 */
#ifndef PERFSPILL_CBLOCK_H
#define PERFSPILL_CBLOCK_H

#include <aio.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

struct tracefile;

/* What a write holds: ring samples, the perf times of the first and
 * last of them (0: none). */
struct tracefile_mark {
	uint64_t	 samples;
	uint64_t	 first;
	uint64_t	 last;
};

/* The most offers the test hook refuses (PERFSPILL_TEST_PAD_EAGAIN). */
#define CBLOCK_TEST_REFUSALS	10000

struct cblock_stats {
	uint64_t	inflight;
	uint64_t	submitted;
	uint64_t	completed;
	uint64_t	resubmitted;	/* partial writes continued, refused
					 * ones (EAGAIN) offered again */
	uint64_t	failed;
	uint64_t	bytes_written;
	uint64_t	bytes_dropped;	/* copied but could not be written */
};

struct cblock {
	struct aiocb		 aio;
	uint8_t			*buf;
	size_t			 cap;
	size_t			 len;	/* bytes of this request */
	size_t			 done;	/* of them already on disk */
	uint64_t		 off;	/* file offset of buf[0] */
	struct tracefile_mark	 mark;	/* the ring samples in buf */
	int			 busy;
	int			 heap;	/* one-shot: freed when it completes */
	/* a slice: a heap request into a buffer it does not own (a pool
	 * block, record-pool.h), counted there while it is in flight */
	unsigned int		*slices;
	/* a request that ends with a padded tail, its last block: that
	 * block is outside the stream; the stream's bytes before it */
	int			 pad;
	size_t			 stream;
	uint64_t		 pad_seq; /* ...which of its file's pads */
	int			 refused; /* the test hook refuses it */
	int			 fd;	/* the descriptor it writes on */
	int			 err;	/* errno of a failed write */
	int			 deferred; /* refused for now: not glibc's */
	struct timespec		 sent;	/* handed to glibc (the hold hook) */
	struct tracefile	*tf;
	struct tracefile	*wb_tf;	/* the request before, in writeback */
	uint64_t		 wb_off;
	size_t			 wb_len;
	struct cblock_stats	*stats;
	TAILQ_ENTRY(cblock)	 entry;
};

TAILQ_HEAD(cblock_list, cblock);

/* The set of requests in flight. */
struct cblock_queue {
	struct cblock_list	 busy;
	size_t			 nr_busy;
	int			 writeback;	/* see cblock_queue_writeback */
	int			 prio;		/* see cblock_queue_prio */
	long			 hold_ms;	/* see cblock_queue_init */
	const char		*hold_while;
};

/* A drain buffer of len bytes, its pages already faulted in. */
uint8_t	*cblock_buffer(size_t len);
int	 cblock_init(struct cblock *, size_t cap);
void	 cblock_finish(struct cblock *);
struct cblock *cblock_create_heap(uint8_t *buf, size_t len,
	    struct cblock_stats *);
/* A one-shot request of len bytes at buf, a buffer someone else owns:
 * *slices counts it from now until it is released (completed, failed,
 * or never queued). */
struct cblock *cblock_create_slice(uint8_t *buf, size_t len,
	    unsigned int *slices, struct cblock_stats *);

/* Index of the first free cblock of cbs[0..n), or -1 when all are busy. */
int	 cblock_pick(const struct cblock *cbs, size_t n);

/* What a completion means for a request (pure: unit tested). */
enum cblock_step {
	CBLOCK_INPROGRESS,	/* still queued or writing */
	CBLOCK_DONE,		/* every byte written */
	CBLOCK_RESUBMIT,	/* a partial write: write the rest */
	CBLOCK_FAILED,		/* an error, or a write of 0 bytes */
};
enum cblock_step cblock_step(struct cblock *, int aio_err, ssize_t ret);

/*
 * Requests signal nothing (SIGEV_NONE): cblock_reap polls them. Tests
 * make the disk slow on purpose: PERFSPILL_TEST_WRITE_HOLD_MS=N, read
 * here, keeps every finished request busy until N ms after it was
 * handed to glibc, as a disk that takes N ms a write would; with
 * PERFSPILL_TEST_WRITE_HOLD_WHILE=PATH only while PATH exists, so that
 * a test slows the disk for its storm alone. A test of what happens
 * when the disk falls behind (the pool grows, blocks spill) then does
 * not depend on how fast this machine's disk is.
 */
void	 cblock_queue_init(struct cblock_queue *);
/*
 * On: each completed request's range is handed to writeback at once
 * (sync_file_range), and the cblock's request before it, written back
 * meanwhile, is dropped from the page cache (posix_fadvise DONTNEED), so
 * that a recording does not pile up dirty and cached pages. Off (the
 * default): the kernel's own writeback decides.
 */
void	 cblock_queue_writeback(struct cblock_queue *, int on);
/*
 * glibc queues a descriptor's requests by the submitting thread's
 * scheduling priority, not by arrival: a request of a SCHED_FIFO thread
 * overtakes an earlier one of a normal thread, and a padded tail
 * (tracefile_direct_pad) landing after the request that rewrites its
 * block put zeros into the file. So every request of q is made at one
 * priority: prio, the drain thread's SCHED_FIFO (0: none). A thread that
 * runs at it says so (cblock_thread_prio); any other is raised to it for
 * the aio_write and put back (two system calls: the loop's few requests,
 * a preamble, a pad, a last drain).
 */
void	 cblock_queue_prio(struct cblock_queue *, int prio);
void	 cblock_thread_prio(int prio);
/*
 * A drain thread pinned to one CPU (record-thread.c) makes its requests
 * with the daemon's CPUs (all), then pins itself back (own): glibc
 * starts an AIO thread from the thread whose request finds none idle,
 * and a new thread runs on its creator's CPUs; one pinned to a single
 * CPU would write only when that CPU runs. Two system calls a request.
 */
void	 cblock_thread_pin(const cpu_set_t *all, const cpu_set_t *own);
/* Queue cb's len bytes at file offset off of tf, on fd (tf's buffered
 * descriptor or one of its direct ones). 0, or -1 with errno (the
 * cblock is then not busy and its bytes are counted as dropped). A request
 * glibc cannot take for the moment (EAGAIN) is busy but deferred: the
 * next cblock_reap offers it again, unless it is a padded tail whose
 * block the stream's next request has taken since (or a later pad): that
 * one ends unwritten, since it would land after the request that
 * rewrites its block and put zeros into the file. The test hook
 * PERFSPILL_TEST_PAD_EAGAIN=N (read at the first submission) refuses the
 * Nth padded tail of the daemon with EAGAIN for as long as it is its
 * file's current pad, at most CBLOCK_TEST_REFUSALS offers. */
int	 cblock_submit(struct cblock_queue *, struct cblock *,
	    struct tracefile *, uint64_t off, int fd);
/*
 * Look at every request in flight: finish the done ones, resubmit partial
 * writes, record failures in their tracefile. Returns the number still
 * busy.
 */
size_t	 cblock_reap(struct cblock_queue *);
/* Block until at least one of cbs[0..n) is no longer busy, or none of
 * them is glibc's to wait for (all deferred). */
void	 cblock_wait(struct cblock_queue *, struct cblock *cbs, size_t n);
/* Block until one request of q is no longer busy (reaped): 0, or -1
 * when none is glibc's to wait for (none busy, or all deferred). */
int	 cblock_wait_any(struct cblock_queue *);
/* Block until no padded tail of tf is in flight (a small request, rare:
 * before a spill rewrites its block). 0, or -1 when one is deferred. */
int	 cblock_wait_pads(struct cblock_queue *, const struct tracefile *);
/* 1 while a padded tail of tf written from off is in flight on q (loop;
 * a flush waits for it to land: record-flush.c), else 0. */
int	 cblock_pad_busy(const struct cblock_queue *, const struct tracefile *,
	    uint64_t off);
/* Block until glibc holds no request of q: before the buffers are freed
 * at exit. Deferred requests are not glibc's; they stay busy. */
void	 cblock_wait_all(struct cblock_queue *);

#endif

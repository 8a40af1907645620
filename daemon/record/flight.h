/*
 * flight keeps a flight recording's memory. The window is the ring data
 * of the last `window` seconds (and at most `window_bytes`), held as the
 * chunks the drain copied out, in drain order; it is cut only at the end
 * of a round (a FINISHED_ROUND: docs/file-format.md), so that what
 * remains, and what a snapshot writes, is a run of whole rounds and perf
 * never sees an event older than one it already flushed.
 *
 * The task store holds the task records (COMM, FORK, EXIT, MMAP, MMAP2,
 * KSYMBOL, CGROUP) of the chunks that left the window: a snapshot writes
 * them before the window, so that a task whose COMM or MMAP2 is older
 * than the window, and that has exited since (no /proc walk names it),
 * is still named. The store is pruned of the tasks that exited before
 * the window (their EXIT left the window too: no sample of theirs is in
 * it) and is bounded by flight_store_cap: past it, its oldest records go
 * (counted: a task still alive is named by the snapshot's /proc walk).
 *
 * Pure memory: no fds, no clock; the window's time is that of its
 * newest sample (perf's clock). Unit tested (tests/unit/test-flight.c).
 *
 * Threads: the struct flight is the recording's, under its lock: the
 * drain adds chunks (which compacts the store when it has grown) and
 * closes rounds, on the drain thread or in the loop, and the loop seeds
 * the store and takes snapshots. A taken snapshot (struct flight_snap)
 * is the loop's alone. flight_scan,
 * flight_store_cap and flight_memory_max keep no state: any thread.
 */
#ifndef PERFSPILL_FLIGHT_H
#define PERFSPILL_FLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "perfdata/sbuf.h"

/* A FINISHED_ROUND record: the room every chunk keeps at its end. */
#define FLIGHT_ROUND_LEN	8

struct flight_chunk {
	TAILQ_ENTRY(flight_chunk) entry;
	uint8_t		*buf;		/* malloc'd; len + FLIGHT_ROUND_LEN */
	size_t		 len;
	uint64_t	 samples;
	uint64_t	 first, last;	/* its sample times; 0: none */
	uint64_t	 newest;	/* of it and every chunk before it */
	int		 round_end;	/* a FINISHED_ROUND ends it */
};
TAILQ_HEAD(flight_chunks, flight_chunk);

struct flight_stats {
	uint64_t	 bytes;		/* held in the window now */
	uint64_t	 chunks;
	uint64_t	 store_bytes;	/* held in the task store now */
	uint64_t	 evicted;	/* bytes that left the window */
	uint64_t	 store_pruned;	/* records of tasks that exited */
	uint64_t	 store_dropped;	/* records past the store's cap */
	uint64_t	 oom;		/* chunks or records lost to malloc */
};

struct flight {
	struct flight_chunks	 chunks;
	uint64_t		 window_ns;
	uint64_t		 window_bytes;
	size_t			 time_off;	/* of a sample's time; 0: none */
	uint64_t		 newest;	/* the newest sample time */
	struct sbuf		 store;
	size_t			 store_cap;
	size_t			 store_compact;	/* its length after the last
						 * compaction */
	struct flight_stats	 st;
};

/* What a snapshot took: the window's chunks (whole rounds, the samples
 * older than cutoff squeezed out) and a copy of the store before them. */
struct flight_snap {
	struct flight_chunks	 chunks;
	uint8_t			*store;		/* malloc'd, or NULL */
	size_t			 store_len;
	uint64_t		 cutoff;	/* perf time: samples from it */
	uint64_t		 samples;
	uint64_t		 bytes;
};

/* The task store's cap for a window of window_bytes: an eighth of it, at
 * least 1 MiB. */
size_t	 flight_store_cap(uint64_t window_bytes);
/*
 * The most memory a flight recording holds beyond its rings: the window
 * while a snapshot of the last one is still being written (twice
 * window_bytes) and the task store. The window also holds the round
 * being drained, which is at most the rings' size (record.c forces a
 * full pass then), counted with the rings.
 */
uint64_t flight_memory_max(uint64_t window_bytes);

void	 flight_init(struct flight *, uint64_t window_secs,
	    uint64_t window_bytes, size_t time_off);
void	 flight_finish(struct flight *);
/*
 * Append a chunk of whole records (buf: malloc'd, len bytes used and
 * room for FLIGHT_ROUND_LEN more; taken in all cases). 0, or -1 when
 * memory ran out (the chunk is lost and counted).
 */
int	 flight_add(struct flight *, uint8_t *buf, size_t len);
/* Records (the tasks alive at the start, synthesized) into the task
 * store, before anything the rings bring. 0, or -1 out of memory. */
int	 flight_seed(struct flight *, const uint8_t *buf, size_t len);
/* A drain pass that read every ring ended: close the round (a
 * FINISHED_ROUND after its last chunk), then let the window go of the
 * whole rounds that are older than window or past window_bytes. */
void	 flight_round(struct flight *);
/* Take the window (it starts empty again) into snap. The caller closed
 * the round. 0, or -1 when memory ran out for the store's copy (the
 * snapshot then has no store). */
int	 flight_take(struct flight *, struct flight_snap *);
void	 flight_snap_free(struct flight_snap *);
/* Prune the task store now (done by itself whenever the store doubled
 * or passed its cap). */
void	 flight_compact(struct flight *);

/* The sample count and sample times of buf's whole records. */
void	 flight_scan(const uint8_t *buf, size_t len, size_t time_off,
	    uint64_t *samples, uint64_t *first, uint64_t *last);

#endif

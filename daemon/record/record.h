/*
 * record is one recording session. It opens the configured events on
 * every online CPU (one ring per CPU, the CPU's other events redirected
 * into it), drains the rings on its real-time drain thread
 * (record-thread.c) into the direct path's shared pool or each ring's
 * cblocks, written by AIO, and owns the current trace file and the files
 * still being finished.
 *
 * Threads: every function here is called in the loop, and takes the
 * recording's lock itself where it needs it; the callbacks it is given
 * are called in the loop too. The drain thread is record's own and no
 * caller sees it. record_memory and record_cpus_online keep no state:
 * any thread.
 */
#ifndef PERFSPILL_RECORD_H
#define PERFSPILL_RECORD_H

#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"
#include "record-finish.h"

struct record;

/* The longest session name (session.h checks them). */
#define RECORD_NAME_MAX	32

enum record_state {
	RECORD_IDLE,
	RECORD_RUNNING,
	RECORD_STOPPING,	/* rings closed, files being finished */
};

/* Called once when a stop has finished every file; file is the name of
 * the last finished file (or NULL when none could be finished). */
typedef void (*record_stop_cb)(struct record *, const char *file, void *);

/*
 * A recording writing into dirfd. Each file it closes goes to finish's
 * functions (record-finish.h: the manifest, the hand-off, retention,
 * the salvage of a full disk's leftovers), called in the loop with ctx;
 * finish must outlive the recording.
 */
struct record	*record_create(struct event_base *, int dirfd,
		    const struct record_finish_ops *finish, void *ctx);
/*
 * The session the recording is (session.h): its files are named
 * perfspill-HOST-NAME-TIME-SEQ.data and their manifests and hand-offs
 * say NAME; NULL (the default session) keeps perfspill-HOST-TIME-SEQ.
 * name is a checked session name (session_name_check). Before a start.
 */
void		 record_set_name(struct record *, const char *name);
/* Retention now, by the recording's settings (a file held when its turn
 * came is free now), through finish's retain; the files removed, or -1.
 * In the loop. */
int		 record_retain(struct record *);
/* The output directory's lock (write.h): a directory removed and made
 * again is locked anew before anything is written into it. */
void		 record_set_lock(struct record *, int lockfd);
void		 record_destroy(struct record *);

enum record_state record_state(const struct record *);
/* Why a start must wait (NULL when idle); with hint, what to do instead. */
const char	*record_busy(const struct record *, int hint);

/* Start with cfg (already validated). 0, or -1 with err filled. */
int	record_start(struct record *, const struct config *cfg,
	    struct config_error *err);
/* Stop: disable, drain, finish every file, then cb. A flight
 * recording's window is written first as a last snapshot (its file is
 * the last file), unless discard. 0, or -1 when idle. */
int	record_stop(struct record *, int discard, record_stop_cb cb,
	    void *arg);
/* What the last stop did with a flight recording's window; *why (may be
 * NULL) says why it failed. Valid from the stop's callback on. */
enum record_window_end {
	RECORD_WINDOW_NONE,	/* not a flight recording */
	RECORD_WINDOW_WRITTEN,	/* a last snapshot */
	RECORD_WINDOW_EMPTY,	/* nothing since the last snapshot */
	RECORD_WINDOW_DISCARDED,/* as asked */
	RECORD_WINDOW_FAILED,	/* refused: *why */
};
enum record_window_end record_window_end(const struct record *,
	    const char **why);
/*
 * Finish the current file and continue in a new one; why is logged.
 * wait: the new file is current when this returns (its preamble built in
 * the loop, the switch made by a drain thread while the loop waits);
 * else the preamble is built on a thread and the switch comes later. 0,
 * or -1 when not recording (or no new file could be made).
 */
int	record_rotate(struct record *, const char *why, int wait);
/*
 * A flight recording (mode flight) writes its window as one finished
 * file and goes on recording; why ("command", "SIGUSR2", "psi:cpu") goes
 * into its manifest. *name (may be NULL): the file's final name, valid
 * until the next call into the recording; the file is whole when the
 * file hook (record_finish_ops' file_done) names it. 0, or -1 with err
 * filled (not a flight recording, a snapshot already being written, the
 * last one less than snapshot_interval ago (limit), no output directory
 * or no room: the window then stays in memory).
 */
int	record_snapshot(struct record *, const char *why, const char **name,
	    struct config_error *err);
int	record_is_flight(const struct record *);
/* 1 while the file being written goes past the page cache (O_DIRECT),
 * else 0: status' write_path, for metrics. */
int	record_write_direct(const struct record *);
/* The drain's buffers held now (bytes), and the drains spilled through
 * the page cache at the pool's bound (this recording). */
void	record_buffer_use(struct record *, uint64_t *bytes, uint64_t *spills);
/*
 * A flush (record_flush) is done: what the recording held when it was
 * asked is on disk in its current file, file (the .partial's name), of
 * bytes; file NULL when the recording writes no file to flush into now
 * (paused, a flight window in memory, stopping: a stop or rotation
 * finishes what it holds). In the loop.
 */
typedef void (*record_flushed_cb)(struct record *, const char *file,
    uint64_t bytes, void *arg);
/*
 * In the loop: have the drain thread put what the rings, the pool's open
 * block and the direct stream's tail hold into the current file, as its
 * padder does, and call cb (in the loop) once that is on disk: no
 * rotation, no rename, no other write than those the recording makes
 * anyway. 0 queued; 1 when the recording writes no file now (cb is not
 * called); -1 when too many flushes wait already.
 */
int	record_flush(struct record *, record_flushed_cb, void *arg);
/* Forget the flushes that would answer arg (its client went). */
void	record_flush_cancel(struct record *, void *arg);
/* The final name of the file being written now, or NULL. */
const char *record_file_name(const struct record *);
/* Why the last recording lost files (its output directory was removed),
 * for stop to report; NULL when nothing was lost that way. */
const char	*record_problem(const struct record *);
/* The daemon's counters since it started, this recording included, and
 * the gauges of now (record-metrics.h); the caller sets started and
 * version. */
struct metrics;
void	record_metrics(struct record *, struct metrics *);
/* The output directory's gauges of m: files kept, their bytes, free
 * space, when the newest file was finished (every session's). */
void	record_disk_metrics(struct record *, struct metrics *);
/* Totals of the last finished recording (a new reference), or NULL. */
json_object *record_last_totals(struct record *);
/*
 * What a recording with cfg holds on ncpus CPUs, in bytes, worked out
 * before anything is allocated (record-memory.c has the formula).
 */
struct record_memory {
	uint64_t	 ring;		/* per CPU: the kernel's ring */
	uint64_t	 cblocks;	/* per CPU: the buffered path's AIO
					 * buffers */
	uint64_t	 per_cpu;	/* ring + cblocks */
	uint64_t	 pool;		/* once: the direct path's blocks */
	uint64_t	 buffers;	/* what total counts of those two */
	uint64_t	 drain;		/* once: the drain's copy of a ring */
	uint64_t	 compress;	/* once, -z: output buffer, zstd streams */
	uint64_t	 window;	/* once, mode flight: the window twice
					 * over and its task store */
	uint64_t	 compact;	/* once, call_graph compact: the
					 * worker's queue and binaries */
	size_t		 ncpus;
	uint64_t	 total;
};
void	record_memory(const struct config *cfg, size_t ncpus,
	    struct record_memory *);
/* How many CPUs are online (a start opens a ring on each). 0 or -1. */
int	record_cpus_online(size_t *n);
/* Apply live settings (cblocks, rotation, retention) of cfg now. */
void	record_update(struct record *, const struct config *cfg);
json_object *record_status(struct record *);
/* One line for systemd's STATUS=: state, rate, lost. */
void	record_summary(struct record *, char *, size_t);

#endif

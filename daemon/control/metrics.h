/*
 * metrics writes perfspilld's counters in the Prometheus text exposition
 * format (version 0.0.4), for `perfspillctl metrics` and for
 * node_exporter's textfile collector (the metrics_file key).
 *
 * Counters are monotonic over the daemon's life: a stop and a start do
 * not reset them, so a scraper's rate() stays right across recordings.
 */
#ifndef PERFSPILL_METRICS_H
#define PERFSPILL_METRICS_H

#include <stdint.h>
#include <time.h>

#include "sbuf.h"

/* One session's own series, labelled with its name. */
struct metrics_session {
	const char	*name;
	uint64_t	 samples;
	uint64_t	 lost;
	uint64_t	 lost_samples;
	uint64_t	 bytes_written;
	uint64_t	 files_finished;
	uint64_t	 memory;	/* what it holds (record_memory) */
	uint64_t	 buffers;	/* ...of it the drain's buffers now */
	uint64_t	 spills;	/* chunks spilled through the page cache */
	uint64_t	 direct;	/* 1: its file goes past the page cache */
	uint64_t	 data_on_disk;	/* its current file's mtime; 0: none */
	int		 recording;
};

/*
 * Why recording is paused. Each reason is a series of its own, 0 or 1,
 * always there: a pause changes values, never which series exist, so
 * that an alert and a graph follow one series (status has the words).
 */
enum metrics_pause {
	METRICS_PAUSE_DISK_FULL,	/* ENOSPC, EDQUOT */
	METRICS_PAUSE_MIN_FREE,		/* below min_free */
	METRICS_PAUSE_DIR_REMOVED,	/* the output directory went */
	METRICS_PAUSE_WRITE_ERROR,	/* any other failed write */
	METRICS_PAUSE__COUNT
};

struct metrics {
	/* counters, since the daemon started */
	uint64_t	 samples;	/* samples written to trace files */
	uint64_t	 lost;		/* events the kernel dropped (LOST) */
	uint64_t	 lost_samples;	/* samples it dropped (LOST_SAMPLES) */
	uint64_t	 bytes_written;
	uint64_t	 bytes_dropped;	/* drained but never on disk */
	uint64_t	 self_excluded;	/* our own samples left out */
	uint64_t	 files_finished;
	uint64_t	 files_removed;	/* by retention */
	uint64_t	 handoffs_ok;
	uint64_t	 handoffs_failed;
	uint64_t	 recordings;	/* starts */
	/* call_graph compact: samples unwound, and written raw */
	uint64_t	 compact_unwound_samples;
	uint64_t	 compact_raw_samples;
	/* gauges, now */
	uint64_t	 aio_inflight;
	int		 recording;	/* 1 while recording (paused or not) */
	unsigned int	 paused;	/* 1 << enum metrics_pause, or 0 */
	/* the output directory, every session's files: now */
	uint64_t	 retained_files;	/* finished, kept by retention */
	uint64_t	 retained_bytes;
	uint64_t	 disk_free;	/* for unprivileged writers */
	time_t		 last_finished;	/* the newest file's mtime; 0: none */
	time_t		 data_on_disk;	/* the newest current file's mtime
					 * (the last write that landed); 0 */
	time_t		 started;	/* the daemon's start */
	const char	*version;
	uint64_t	 memory;	/* what the sessions hold */
	uint64_t	 memory_budget;	/* ...and may hold (session.h) */
	/* every session's own series; the counters above are the sum over
	 * the daemon's life, ended sessions included */
	const struct metrics_session *sessions;
	size_t		 nr_sessions;
};

/* Add the counters of from (not its gauges) to to: a daemon's totals
 * over several recordings. */
void	metrics_add(struct metrics *to, const struct metrics *from);
/* Append the exposition text. 0, or -1 when memory runs out. */
int	metrics_format(struct sbuf *out, const struct metrics *);
/* Replace path with the text atomically (a temporary file beside it, then
 * rename), as node_exporter's textfile collector wants. 0 or -1 (errno). */
int	metrics_write_file(const char *path, const struct sbuf *);

#endif

/*
 * record-finish: what a recording hands on once a file stops taking data,
 * and to whom. record/ owns the rings, the drain and the flight window;
 * what happens to a finished file (its manifest, its hand-off, its JIT
 * maps, retention, the salvage of a full disk's leftovers) is finished/'s.
 * The recording does not call finished/: the one who creates it (the
 * control side, on top of both) gives it a table of finished/'s
 * functions, record_finish_ops, so that the arrows between the folders
 * point down only (scripts/folders). The facts of a file are defined
 * here, where they are gathered, and finished/ reads them from here.
 */
#ifndef PERFSPILL_RECORD_FINISH_H
#define PERFSPILL_RECORD_FINISH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"

/* What the daemon knows of one finished file: what the recording (or
 * salvage) learnt of it, and what the JIT copy adds. */
struct record_file_facts {
	const char		*name;		/* NAME.data, in the output dir */
	const char		*host;
	const char		*session;	/* "default", a name; NULL: not
						 * known (salvaged) */
	unsigned int		 seq;
	uint64_t		 bytes;
	uint64_t		 samples;
	uint64_t		 lost;		/* PERF_RECORD_LOST */
	uint64_t		 lost_samples;	/* PERF_RECORD_LOST_SAMPLES */
	/* call_graph compact: samples unwound, and left raw */
	int			 compact;
	uint64_t		 unwound, raw_samples;
	uint64_t		 time_first;	/* perf clock, ns; 0: unknown */
	uint64_t		 time_last;
	time_t			 opened;	/* wall clock */
	time_t			 finished;
	const struct config	*cfg;		/* the recording's, or NULL */
	const uint8_t		*buildids;	/* HEADER_BUILD_ID records */
	size_t			 buildids_len;
	int			 salvaged;	/* from a .partial after a crash */
	/* a flight recording's snapshot: what took it ("command",
	 * "SIGUSR2", "psi:cpu"); NULL for any other file */
	const char		*trigger;
	/* NAME.perf-maps.tar beside it (jitcopy.h): the processes whose
	 * JIT maps it holds; n 0: none */
	const uint32_t		*jit_pids;
	size_t			 jit_n;
};

/* The finished files of the output directory (every session's), as
 * retention counts them, for status and the metrics. */
struct record_kept {
	uint64_t	 nr, bytes;
	int64_t		 last_finished;		/* the newest mtime; 0: none */
	char		 oldest[256], newest[256];
};

/*
 * What a recording hands its files to, given at record_create with one
 * ctx for all. Every function is called in the loop (the event loop's
 * thread, never the drain thread); every field but salvage is set.
 */
struct record_finish_ops {
	/*
	 * In the loop: a file was closed, with what is known of it (f is
	 * valid during the call); whole 0 when it did not get its final
	 * name (removed because nothing of it could be written, left
	 * .partial for lack of space, or lost with a removed output
	 * directory). Called before retention looks at the directory, so
	 * that a hand-off registered here holds the file. The one hook that
	 * writes the manifest, copies the JIT maps and registers the
	 * hand-off.
	 */
	void	(*file_done)(void *ctx, const struct record_file_facts *f,
		    int whole);
	/* In the loop: nonzero while the finished file name must stay (its
	 * hand-off, JIT copy or salvage is not done). */
	int	(*holds)(void *ctx, const char *name);
	/* In the loop: remove the oldest finished files of dirfd by these
	 * limits (0: none), keeping what holds names; the files removed,
	 * or -1. */
	int	(*retain)(void *ctx, int dirfd, uint64_t max_files,
		    uint64_t max_size, uint64_t min_free);
	/* In the loop: the finished files of dirfd into *k; 0, or -1 when
	 * the directory cannot be read. */
	int	(*kept)(void *ctx, int dirfd, struct record_kept *k);
	/* In the loop: a .partial a full disk left (no writer holds it) is
	 * to be finished now that there may be room; it comes back through
	 * file_done's owner, not through the recording. NULL: the leftovers
	 * wait for salvage at the next start. */
	void	(*salvage)(void *ctx, const char *partial);
	/* In the loop: a recording's tick (at its start, then every
	 * drain_ms while it runs; the next in next_ms), for finished/'s
	 * look at what it keeps for the files to come (the JIT maps of
	 * /tmp), which must cost the loop little. NULL: none. */
	void	(*tick)(void *ctx, uint64_t next_ms);
};

#endif

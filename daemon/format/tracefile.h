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
 */
#ifndef PERFSPILL_TRACEFILE_H
#define PERFSPILL_TRACEFILE_H

#include <aio.h>
#include <limits.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>
#include <time.h>

#include "perfdata.h"
#include "sbuf.h"

enum tracefile_state {
	TRACEFILE_OPEN,		/* takes new data */
	TRACEFILE_CLOSING,	/* no new data; requests still in flight */
	TRACEFILE_SYNCING,	/* aio_fsync in flight */
	TRACEFILE_DONE,		/* renamed (or failed); fd closed */
};

struct tracefile;
typedef void (*tracefile_done_cb)(struct tracefile *, void *);

/* What a write holds: ring samples, the perf times of the first and
 * last of them (0: none). */
struct tracefile_mark {
	uint64_t	 samples;
	uint64_t	 first;
	uint64_t	 last;
};

/* Where a write landed, and what the file kept before it. */
struct tracefile_landed {
	uint64_t		 off;
	struct tracefile_mark	 before;
};
#define TRACEFILE_LANDED	4

/* A reserved write not yet known to be on disk, in offset order. */
struct tracefile_chunk {
	uint64_t		 off;
	struct tracefile_mark	 mark;
	int			 done;
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
	unsigned int		 seq;		/* the seq in its name */
	struct tracefile_mark	 kept;		/* of them, in the finished file */
	/*
	 * Writes in reservation order until every one before them landed:
	 * a file is cut at its first failed write, and kept sums up the
	 * writes before it.
	 */
	struct tracefile_chunk	*chunks;
	size_t			 chunk_first, nr_chunks, chunk_cap;
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

TAILQ_HEAD(tracefile_list, tracefile);

/* Make a unique name from host, the current UTC time and seq, and create
 * the .partial file in dirfd. */
struct tracefile *tracefile_open(int dirfd, const char *host, unsigned int *seq);
/* The head synth built (buf, the first len bytes): where the data starts
 * and the features to finish the file with; a file cut inside it holds
 * nothing worth keeping. 0 or -1. */
int	 tracefile_set_head(struct tracefile *, const uint8_t *buf, size_t len);
/* PERF_RECORD_HEADER_BUILD_ID records for the build_id feature of the
 * finished file, after those already there. 0 or -1. */
int	 tracefile_add_buildids(struct tracefile *, const void *, size_t);
/* Reserve len bytes holding what mark says (NULL: no samples). */
uint64_t tracefile_reserve(struct tracefile *, size_t len,
	    const struct tracefile_mark *);
/* What a drain placed in the file: ring samples and loss records. */
void	 tracefile_count(struct tracefile *, uint64_t samples, uint64_t lost,
	    uint64_t lost_samples);
/* raw bytes of records went into the file as compressed bytes (-z):
 * the ratio of its compressed feature. */
void	 tracefile_compressed(struct tracefile *, size_t raw, size_t compressed);
/* An AIO request against the file was queued; it completed having
 * written that many bytes, and failed with err (0: it is whole). */
void	 tracefile_queued(struct tracefile *);
void	 tracefile_completed(struct tracefile *, uint64_t off, size_t written,
	    int err);
/* Synchronous write at off (the serial mode, cblocks = 0), of the request
 * reserved there: one buffer, or pieces (a ring's data around its wrap).
 * 0 or -1. */
int	 tracefile_pwrite(struct tracefile *, uint64_t off, const void *,
	    size_t);
int	 tracefile_pwritev(struct tracefile *, uint64_t off,
	    const struct iovec *, int);
/* The request reserved at off failed with err: the file will be cut
 * there when it is finished, since a hole would end perf's reading; off
 * must be the reserved offset, a record boundary, even when part of the
 * request was written. */
void	 tracefile_failed(struct tracefile *, uint64_t off, int err);
void	 tracefile_close(struct tracefile *, tracefile_done_cb, void *);
/* Move a closing file on; returns 1 once it is DONE (done_cb called). */
int	 tracefile_poll(struct tracefile *, const struct sigevent *);
void	 tracefile_free(struct tracefile *);

#endif

/*
 * tracefile: one trace file's life. It is created as NAME.data.partial,
 * receives writes at offsets reserved in order, and on close waits for
 * every request against it, fsyncs it through AIO (so the loop never
 * blocks), renames it to NAME.data and fsyncs the directory. A program
 * watching the directory only ever sees whole files under *.data.
 */
#ifndef PERFSPILL_TRACEFILE_H
#define PERFSPILL_TRACEFILE_H

#include <aio.h>
#include <limits.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "sbuf.h"

enum tracefile_state {
	TRACEFILE_OPEN,		/* takes new data */
	TRACEFILE_CLOSING,	/* no new data; requests still in flight */
	TRACEFILE_SYNCING,	/* aio_fsync in flight */
	TRACEFILE_DONE,		/* renamed (or failed); fd closed */
};

struct tracefile;
typedef void (*tracefile_done_cb)(struct tracefile *, void *);

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
	int			 removed;	/* failed inside the preamble */
	time_t			 opened;
	uint64_t		 samples;	/* ring samples placed in this file */
	uint64_t		 lost, lost_samples;	/* ...and loss records */
	uint64_t		 time_first;	/* its samples' times, perf clock */
	uint64_t		 time_last;
	unsigned int		 seq;		/* the seq in its name */
	struct sbuf		 buildids;	/* HEADER_BUILD_ID records */
	struct aiocb		 sync;
	tracefile_done_cb	 done;
	void			*done_arg;
	TAILQ_ENTRY(tracefile)	 entry;
};

TAILQ_HEAD(tracefile_list, tracefile);

/* Make a unique name from host, the current UTC time and seq, and create
 * the .partial file in dirfd. */
struct tracefile *tracefile_open(int dirfd, const char *host, unsigned int *seq);
uint64_t tracefile_reserve(struct tracefile *, size_t);
/* Synchronous write at off (the serial mode, cblocks = 0). 0 or -1. */
int	 tracefile_pwrite(struct tracefile *, uint64_t off, const void *,
	    size_t);
/* A request against off..off+len failed with err: the file will be cut
 * there when it is finished, since a hole would end perf's reading. */
void	 tracefile_failed(struct tracefile *, uint64_t off, int err);
void	 tracefile_close(struct tracefile *, tracefile_done_cb, void *);
/* Move a closing file on; returns 1 once it is DONE (done_cb called). */
int	 tracefile_poll(struct tracefile *, const struct sigevent *);
void	 tracefile_free(struct tracefile *);

#endif

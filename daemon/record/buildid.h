/*
 * buildid reads the build-ids of the files that recorded tasks map in
 * user space, as perf record reads them, so that the kernel need not put
 * them in its MMAP2 records (attr.build_id), which breaks any perf record
 * running beside us on the kernels we target (docs/file-format.md).
 *
 * The drain notes the MMAP2 records of the ring data it drains: a lookup
 * in a table that lives as long as the daemon. A worker thread reads the
 * notes of a file it has not seen, and looks again (a stat) at a file
 * mapped again: one rewritten in place since (same device and inode) is
 * read again, so that an id follows the file, also within one trace
 * file. The drain never opens a mapped file. When a trace file is
 * finished, it takes a PERF_RECORD_HEADER_BUILD_ID for each id its
 * mappings found, resolved by then. Reading one file's id, and the
 * record that names it, are perfdata/buildid.h's; this file keeps the
 * table.
 *
 * Threads: the functions on a struct buildid run under the recording's
 * lock, on the drain thread (the notes) or in the loop (create, flush,
 * stats, destroy); the worker thread is buildid.c's own. The functions
 * without a struct buildid keep no state, and any thread calls them (a
 * rotation's preamble is built on a worker thread).
 */
#ifndef PERFSPILL_BUILDID_H
#define PERFSPILL_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/buildid.h"
#include "perfdata/sbuf.h"

/* How long finishing the last file of a recording waits for the files
 * its rings named last; a rotation does not wait, the new file takes
 * what is still being read. */
#define BUILDID_STOP_WAIT_MS	1000
/* Files remembered over the daemon's life; past it, new ones are not
 * read (perf then reads them itself at report time). */
#define BUILDID_MAX_FILES	65536

/* A HEADER_BUILD_ID for each name and id that the MMAP2 records of
 * buf[0..len) (a preamble's, whole and 8-aligned) carry. 0 or -1. */
int	buildid_preamble(struct sbuf *, const uint8_t *buf, size_t len);

struct buildid;

struct buildid	*buildid_create(void);
/* Stops the worker; waits for a read in progress. NULL is fine. Both
 * run in the loop. */
void		 buildid_destroy(struct buildid *);
/*
 * Note the MMAP2 records of ring data [tail, head) of a data area of
 * size bytes (a power of two); records may wrap. kernel: we asked for
 * attr.build_id. Returns how many of them carry a build-id flag that
 * another recorder's attr.build_id put on a record holding no build-id:
 * the ring is read-only, so the caller repairs its copy. The drain's: on
 * the drain thread, or in the loop, under the recording's lock.
 */
size_t		 buildid_note_ring(struct buildid *, const uint8_t *data,
		    size_t size, uint64_t tail, uint64_t head, int kernel);
/* Note one whole MMAP2 record of a drained copy, clearing such a flag
 * in place (counted). The drain's, as buildid_note_ring. */
void		 buildid_note_copy(struct buildid *, uint8_t *rec, size_t size,
		    int kernel);
/* Wake the worker for the looks the notes since the last wakeup
 * queued, once enough wait or the first has waited long enough
 * (buildid.c says why that loses nothing): once a drain pass, after it
 * noted everything it drained. The drain's, as buildid_note_ring. */
void		 buildid_kick(struct buildid *);
/* Wake the worker for every look queued, now: a rotation begins, whose
 * switch flushes the file's build-ids. As buildid_kick. */
void		 buildid_hurry(struct buildid *);
/* Clear those flags in a drained copy of whole records. Any thread. */
void		 buildid_repair(uint8_t *buf, size_t len, int kernel);
/* Files known, and stray build-id flags found, over the daemon's life;
 * files waiting for the worker to look at them now. In the loop. */
void		 buildid_stats(struct buildid *, uint64_t *files,
		    uint64_t *cleared, uint64_t *reading);
/*
 * The file that the notes since the last flush went to is being
 * finished: append a HEADER_BUILD_ID to out for each of its files with a
 * build-id, waiting at most wait_ms for those still being read; the ones
 * still unread then go to the next file instead. 0, or -1 (ENOMEM). In
 * the loop, under the recording's lock.
 */
int		 buildid_flush(struct buildid *, struct sbuf *out,
		    unsigned int wait_ms);

#endif

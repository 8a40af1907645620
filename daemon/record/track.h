/*
 * track copies the task records (MMAP, MMAP2, COMM, FORK, and LOST,
 * which may stand for a FORK) that a rotation carries over. The new
 * file's preamble walks /proc while the drain thread still drains the
 * rings into the old file: a task born during the walk is named only in
 * the old file's ring data, so those records are copied out as they are
 * drained and written again after the new preamble. perf takes a second
 * COMM or MMAP of a task as the same fact once more, but a second
 * FORK replaces the task with a copy of its parent: a FORK is dropped
 * when the preamble names its task already (its parent may be gone).
 * A LOST record goes to both files, its count zeroed in the new one: a
 * task whose FORK the kernel dropped during the walk is unnamed in both,
 * and each file must say that it lost records; the count stays in the
 * file of its time only, so that a sum of LOST over a rotated series
 * (what a fleet's loss figures are) counts each loss once and equals
 * status' count.
 *
 * Threads: nothing here keeps state, and the buffers are the caller's.
 * The drain copies task records (a rotation's carry-over, a flight
 * recording's store, the compact worker's maps) on the drain thread or
 * in the loop; a preamble's worker thread reads the tids of its own
 * walk; the switch drops FORKs at a take-over (a drain thread's pass for
 * the loop, or the loop).
 */
#ifndef PERFSPILL_TRACK_H
#define PERFSPILL_TRACK_H

#include <stddef.h>
#include <stdint.h>

struct sbuf;

/*
 * Append to out the task records among the whole records of [from, to)
 * of a circular area of size bytes (any size; a plain buffer of len bytes
 * is from 0, to len, size len). A record header that is short or runs
 * past to ends the walk. 0, or -1 when memory runs out.
 */
int	track_copy(struct sbuf *out, const uint8_t *data, size_t size,
	    uint64_t from, uint64_t to);
/* The same, for the record types in types (a mask of 1 << type, types
 * below 32): the flight recorder's task store keeps another set. */
int	track_copy_types(struct sbuf *out, const uint8_t *data, size_t size,
	    uint64_t from, uint64_t to, uint32_t types);

/* The u32 at off of the body of the record at rec (pid, tid: COMM at 0,
 * 4; FORK pid, ppid, tid at 0, 4, 8), or 0 when it is too short. */
uint32_t track_u32(const uint8_t *rec, size_t off);

/* The tids that the COMM records of buf[0..len) name, sorted, in a
 * malloc'd array (NULL when there are none). 0, or -1 out of memory. */
int	track_tids(const uint8_t *buf, size_t len, uint32_t **tids,
	    size_t *nr);
/* Squeeze out of buf[0..len) the FORK records of a tid among tids[0..nr)
 * (sorted); returns the length kept. */
size_t	track_drop_forks(uint8_t *buf, size_t len, const uint32_t *tids,
	    size_t nr);

/*
 * Whether a ring of size bytes holding used bytes may have dropped a
 * record since it was last emptied: less room is left than a record may
 * take (a quarter of a small ring). Room only shrinks until the reader
 * frees it, so with more left nothing can have been dropped.
 */
#define TRACK_RECORD_MAX	65536	/* perf_event_header's u16 size */
int	track_ring_full(size_t size, uint64_t used);

#endif

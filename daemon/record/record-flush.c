/*
 * record-flush puts what a recording holds and has not written (its
 * rings, the pool's open block, the direct stream's unaligned tail) on
 * disk in its current file when a reader asks (perfspill-flame before it
 * reads the .partial being written), without a rotation: the file is
 * neither cut nor renamed, and no write is made that the recording would
 * not make anyway within drain_ms and direct_tail_ms.
 *
 * The loop asks by message, as its padder does: a ticket in the
 * drain thread's flush word and a wake. The thread's next pass reads
 * every ring (a round perf may sort, ending in a FINISHED_ROUND) and
 * pads the direct tail, then notes where the file ended and wakes the
 * loop. The loop answers a flush once everything below that end is
 * where a reader sees it (on disk below the file's frontier, in the
 * page cache past it by the pad, or the padded tail's request), polling
 * completions with the reaper meanwhile. Nothing here blocks the loop
 * or the drain.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record-int.h"

/* Polling completions while a flush waits for its writes. */
#define RECORD_FLUSH_POLL_US	2000

uint64_t
record_flush_add(struct record *rec, record_flushed_cb cb, void *arg)
{
	struct record_flush	*fl = &rec->flush;

	if (fl->nr == RECORD_FLUSH_WAITERS)
		return 0;
	fl->w[fl->nr].cb = cb;
	fl->w[fl->nr].arg = arg;
	/* flushes asked before the thread's pass share it */
	if (fl->asked == fl->passed)
		fl->asked++;
	fl->w[fl->nr++].ticket = fl->asked;
	return fl->asked;
}

void
record_flush_passed(struct record *rec, uint64_t ticket)
{
	struct record_flush	*fl = &rec->flush;
	struct tracefile_info	 info = { .partial = "" };

	fl->passed = ticket;
	if (rec->cur != NULL)
		tracefile_info(rec->cur, &info);
	snprintf(fl->file, sizeof(fl->file), "%s", info.partial);
	fl->target = info.reserved;
	fl->tail = info.tail;
}

/*
 * Has the flush pass's data landed? Everything below the file's end
 * then is where a reader sees it: on disk by the stream's requests (the
 * frontier) and, past them, in the page cache by the pass's pad
 * (readable), or the last bytes padded into one aligned block by a
 * request of their own (a pad that could not be cached). A file
 * that is no longer current was rotated or closed: its close waits for
 * every write. A file whose writes failed will not land: the tick
 * pauses the recording.
 */
static int
record_flush_landed(struct record *rec)
{
	struct record_flush	*fl = &rec->flush;
	struct tracefile	*tf = rec->cur;
	struct tracefile_info	 info;

	if (tf == NULL)
		return 1;
	tracefile_info(tf, &info);
	/* by name: a file freed since may have left its address to one
	 * made after it */
	if (strcmp(fl->file, info.partial) != 0 ||
	    info.cut != UINT64_MAX || info.readable >= fl->target)
		return 1;
	return fl->tail > 0 && info.frontier >= fl->target - fl->tail &&
	    !writer_pad_busy(&rec->w, tf, fl->target - fl->tail);
}

/* Answer waiter i and take it off the list. */
static void
record_flush_answer(struct record *rec, size_t i, const char *file,
    uint64_t bytes)
{
	struct record_flush	*fl = &rec->flush;
	record_flushed_cb	 cb = fl->w[i].cb;
	void			*arg = fl->w[i].arg;

	fl->w[i] = fl->w[--fl->nr];
	cb(rec, file, bytes, arg);
}

size_t
record_flush_poll(struct record *rec)
{
	struct record_flush	*fl = &rec->flush;
	struct timeval		 tv = { 0, RECORD_FLUSH_POLL_US };
	size_t			 i = 0;
	int			 landed;

	if (fl->nr == 0)
		return 0;
	if (rec->state != RECORD_RUNNING || rec->paused[0] != '\0') {
		record_flush_answer_all(rec);
		return 0;
	}
	writer_reap(&rec->w);
	landed = record_flush_landed(rec);
	while (i < fl->nr) {
		if (fl->w[i].ticket > fl->passed || !landed) {
			i++;
			continue;
		}
		record_flush_answer(rec, i, fl->file[0] != '\0' ? fl->file :
		    NULL, fl->target);
	}
	/* the reaper polls completions until the writes land */
	if (fl->nr > 0 && rec->reaper != NULL)
		event_add(rec->reaper, &tv);
	return fl->nr;
}

void
record_flush_answer_all(struct record *rec)
{
	while (rec->flush.nr > 0)
		record_flush_answer(rec, rec->flush.nr - 1, NULL, 0);
}

void
record_flush_forget(struct record *rec, void *arg)
{
	struct record_flush	*fl = &rec->flush;
	size_t			 i = 0;

	while (i < fl->nr) {
		if (fl->w[i].arg == arg)
			fl->w[i] = fl->w[--fl->nr];
		else
			i++;
	}
}

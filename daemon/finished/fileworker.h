/*
 * fileworker: the one thread beside the loop that reads whole finished
 * files. Reading a file of a gigabyte takes seconds, which the loop (and
 * the control socket with it) cannot give (issue 40): the JIT copy's
 * walk (jitcopy.c) and the salvage of leftovers (salvage.c) queue their
 * work here. The worker runs the jobs in the order they came, one at a
 * time (a disk reads one file well, not two), and tells the loop on an
 * eventfd; the loop then calls each job's done callback, in the same
 * order. A job without a done callback (jitcopy's scan of /tmp's maps,
 * which the loop asks for while a map's process lives) ends on the
 * worker, without waking the loop. The worker has no timer of its own:
 * it sleeps until a job comes.
 */
#ifndef PERFSPILL_FILEWORKER_H
#define PERFSPILL_FILEWORKER_H

#include <stddef.h>

#include <event2/event.h>

struct fileworker;

/* A job's work, on the worker; its end, in the loop (or in
 * fileworker_drain's caller). */
typedef void	(*fileworker_work_fn)(void *arg);
typedef void	(*fileworker_done_fn)(void *arg);

/* Called in the loop. */
/* The worker thread, which tells the loop of base; NULL (logged)
 * without memory, an event or a thread. */
struct fileworker	*fileworker_create(struct event_base *);
/* Queues a job on the file name (a finished file's name in the output
 * directory, for fileworker_holds; "" for none): work(arg) on the
 * worker, then done(arg) in the loop; done NULL: nothing after work,
 * and the loop is not told. 0, or -1 without memory. */
int		 fileworker_submit(struct fileworker *, const char *name,
		    fileworker_work_fn work, fileworker_done_fn done,
		    void *arg);
/* Is a job on name queued, running or not called back yet? (retention's
 * hold, as handoff_holds). Accepts NULL. */
int		 fileworker_holds(struct fileworker *, const char *name);
/* Blocks until every job queued, and every job their done callbacks
 * queue, is done and called back (here). Accepts NULL. */
void		 fileworker_drain(struct fileworker *);
/* Drains, then ends the worker. Accepts NULL. */
void		 fileworker_free(struct fileworker *);

/* Called on the worker. */
/* The test hooks' hold (PERFSPILL_TEST_JITCOPY_HOLD, ..._SALVAGE_HOLD):
 * creates path and waits until the test removes it; what names the held
 * work for the log. Nothing when path is NULL. */
void		 fileworker_hold(const char *path, const char *what);

#endif

/*
 * handoff: runs the on_finish program for each finished trace file, so
 * that a fleet ships files as soon as they are whole. A queue of files,
 * at most on_finish_jobs programs at once, each killed after
 * on_finish_timeout (SIGTERM, then SIGKILL); a failure is retried with a
 * doubling back-off, on_finish_tries runs in all. Retention asks
 * handoff_holds before removing a file.
 *
 * The program never runs in the recorder's sandbox (no network, root):
 * when perfspilld is a systemd service each try is a unit of its own,
 * perfspill-handoff@.service, started over the bus (handoff-unit.c);
 * otherwise it is a child of ours run as on_finish_user, its output read
 * into the log with a bound (handoff-spawn.c). Nothing here waits, except
 * handoff_destroy for the programs that still run when the daemon exits.
 *
 * Threads: every function here runs in the loop, whose events (a
 * child's exit and output, the timers, the bus' replies) drive the
 * queue.
 */
#ifndef PERFSPILL_HANDOFF_H
#define PERFSPILL_HANDOFF_H

#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"
#include "manifest.h"

struct handoff;

struct handoff	*handoff_create(struct event_base *, int dirfd);
/* Take the on_finish keys (and output_dir, remove_after_handoff) of
 * cfg; programs already running finish with the old settings. With
 * on_finish set, what perfspilld writes in the output directory from now
 * on gets on_finish_user's group, so that the program can read it (the
 * directory's group and set-group-ID bit, outside systemd). */
void		 handoff_configure(struct handoff *, const struct config *);
/* Queue f's file (its manifest written or not: manifest_ok). */
void		 handoff_add(struct handoff *,
		    const struct record_file_facts *f, int manifest_ok);
/* Queue the hand-offs a previous daemon left owed (their marks). */
void		 handoff_resume(struct handoff *);
/* Is name's hand-off queued, running or waiting for a retry? */
int		 handoff_holds(const char *name, void *handoff);
json_object	*handoff_status(struct handoff *);
/* Runs that succeeded and that failed, over the daemon's life. */
void		 handoff_counts(const struct handoff *, uint64_t *ok,
		    uint64_t *failed);
/* The daemon exits: what runs is ended (SIGTERM, SIGKILL after
 * HANDOFF_KILL_GRACE seconds, its process group waited for; a unit is
 * stopped), the queue is dropped; the marks stay for the next daemon.
 * Accepts NULL. */
void		 handoff_destroy(struct handoff *);

#endif

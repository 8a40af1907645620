/*
 * session keeps the recordings the daemon holds side by side. The
 * configured always-on recording is the session "default": it lives as
 * long as the daemon, and start, stop, rotate and status without a
 * session name act on it. On-demand sessions are started by name beside
 * it, each a struct record of its own (its events, frequency, rings,
 * cblocks, rotation, its files named after it), and end by themselves
 * after their duration. A session is its record and what the control side
 * keeps of it: its settings, its memory figure, its end. What the
 * recording does is record.c's to decide; a flight-recorder session is a
 * session whose settings say so.
 *
 * The table keeps the limits a fleet trusts: at most max_sessions
 * on-demand sessions at once, and one memory budget that every start
 * (of any session) is held against before anything of it is allocated:
 * record_memory's figure plus what the sessions already running hold
 * must fit in the budget, which is the daemon's cgroup limit (or the
 * machine's memory, whichever is lower) less SESSION_RESERVE for the
 * daemon itself, and at most max_memory. Retention is one disk budget
 * across sessions, with the daemon's settings (retain.h).
 *
 * Each session's record has its own build-id table: a table hands a
 * finished file the notes made since its last flush (buildid.h), which
 * is one stream of files; a shared table would have to split its notes
 * by session. The cost is a worker thread per session and a second read,
 * from the page cache, of the mapped files a session sees.
 *
 * Threads: the table and its sessions are the loop's alone; every
 * function here runs in the loop (session_name_check keeps no state:
 * any thread). status, metrics and summary read each recording's
 * counters without its lock (record-publish.c).
 */
#ifndef PERFSPILL_SESSION_H
#define PERFSPILL_SESSION_H

#include <stdint.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"
#include "manifest.h"
#include "metrics.h"
#include "record.h"
#include "retain.h"

#define SESSION_DEFAULT		"default"
#define SESSION_NAME_MAX	RECORD_NAME_MAX
/* the name perfspill-flame's --session gives every session */
#define SESSION_RESERVED	"all"
/* Kept out of the budget for the daemon's own memory: its loop and
 * clients, the build-id tables, a rotation's /proc walk, the AIO
 * threads; what record_memory does not count. */
#define SESSION_RESERVE		(UINT64_C(64) << 20)
/* The longest --duration: a week. */
#define SESSION_DURATION_MAX	(7 * 86400)

struct session;
struct session_table;

/*
 * A session's recording has finished its last file (a stop, its
 * duration, the daemon's shutdown): called once per stop, with the
 * session still there (session_record is valid); an on-demand session
 * is freed after the call returns.
 */
typedef void (*session_stopped_cb)(struct session *, const char *file,
    void *arg);

/* What every session's record is given (record.h). */
struct session_hooks {
	/* finished/'s functions, for every recording's closed files */
	const struct record_finish_ops	*finish;
	void			*finish_ctx;
	session_stopped_cb	 stopped;
	void			*stopped_arg;
};

/* cfg: the daemon's configured settings, read for the limits and the
 * retention of every session; it must outlive the table. NULL when
 * memory runs out. */
struct session_table *session_table_create(struct event_base *, int dirfd,
	    int lockfd, const struct config *cfg, const struct session_hooks *);
void		 session_table_destroy(struct session_table *);

struct session	*session_default(struct session_table *);
/* The session named name (NULL or "default": the default one), or NULL. */
struct session	*session_find(struct session_table *, const char *name);
const char	*session_name(const struct session *);
/* The session after s (NULL: the first, the default one), ended ones
 * left out; NULL after the last. */
struct session	*session_next(struct session_table *, struct session *s);
struct record	*session_record(const struct session *);
int		 session_on_demand(const struct session *);

/* A name a client may give an on-demand session: 1 to SESSION_NAME_MAX
 * of [a-z0-9_-], not starting with '-', not "default" nor "all". 0, or
 * -1 with err. */
int	session_name_check(const char *name, struct config_error *err);

/*
 * Start a session with cfg (validated): name NULL or "default" is the
 * default one; another name makes an on-demand session that stops after
 * duration seconds (0: the configured session_duration). Refused, with
 * nothing allocated, when it already records, when max_sessions
 * on-demand ones run, or when its memory does not fit in the budget
 * (the error names the figures). 0, or -1 with err filled.
 */
int	session_start(struct session_table *, const char *name,
	    const struct config *cfg, uint64_t duration,
	    struct config_error *err);
/* Stop s: its recording finishes its files, then the stopped hook; a
 * flight recording writes its window first unless discard (its duration
 * over and the daemon's shutdown write it). 0, or -1 when it is not
 * recording. */
int	session_stop(struct session *, int discard);
/*
 * SIGUSR2, as perf record --switch-output=signal, for every session
 * recording: a continuous one rotates (waiting), a flight one takes a
 * snapshot (within its snapshot_interval it is refused). What each did,
 * or why not, is logged with why; how many sessions record.
 */
size_t	session_switch_output(struct session_table *, const char *why);
/* The name of a flight session recording (the first), or NULL: for a
 * hint where a snapshot asked the wrong one. */
const char *session_flight_name(struct session_table *);
/* Stop every session (shutdown). How many are still busy. */
size_t	session_stop_all(struct session_table *);
/* Sessions recording or finishing their files. */
size_t	session_busy(struct session_table *);
/*
 * The settings changed (configure, reload): the default session gets the
 * live keys of cfg (its settings with its one-off ones on top), every
 * on-demand one the daemon's retention (one disk budget).
 */
void	session_update(struct session_table *, const struct config *cfg);
/* Would the default session, recording now, fit in the budget (with
 * cfg's max_memory) with cfg's live keys (cblocks)? 0, or -1 with err
 * naming the figures. */
int	session_check_update(struct session_table *, const struct config *cfg,
	    struct config_error *err);

/* An on-demand session's "duration" (seconds) and "ends" (when, seconds
 * since the epoch) added to o, while it records. */
void	session_add_end(const struct session *, json_object *o);
/* {"sessions": [every session's status], "memory": {the budget}} keys
 * added to o. */
void	session_status(struct session_table *, json_object *o);
/* The daemon's metrics over every session, those that ended included,
 * and each session's own (m->sessions, valid until the next call). */
void	session_metrics(struct session_table *, struct metrics *m);
/* One line for systemd's STATUS=: the default session's, and how many
 * others record. */
void	session_summary(struct session_table *, char *, size_t);

#endif

/*
 * daemon holds the state perfspilld's parts share, and daemon.c runs the
 * daemon's life: load, start-up, reload, shutdown, teardown. daemon.c
 * owns the instance and hands it to the control commands; there is one,
 * passed by pointer, never a global. perfspilld.c's main only parses the
 * options and runs the loop.
 *
 * Threads: struct daemon is the loop's alone; daemon_init, daemon_load
 * and daemon_start run in main's thread before the loop runs (it becomes
 * the loop's thread), daemon_load again in the loop for a reload, and
 * daemon_finish after the loop returned.
 */
#ifndef PERFSPILL_DAEMON_H
#define PERFSPILL_DAEMON_H

#include <stdint.h>

#include <event2/event.h>

#include "config.h"

struct control;
struct record;
struct session;
struct session_table;
struct notify;
struct handoff;
struct jitcopy;
struct fileworker;
struct control_client;
struct pidfile;
struct cmd_flush;

#define DAEMON_NSIGNALS	4	/* SIGTERM, SIGINT, SIGHUP, SIGUSR2 */

struct daemon {
	struct event_base	*base;
	struct config		 cfg;		/* the configured settings */
	/* the running recording's one-off start settings, or NULL: it
	 * records with cfg and these on top (cmd_settings) */
	json_object		*overrides;
	const char		*config_path;	/* NULL: built-in defaults */
	/* what the command line fixed: reload keeps these */
	const char		*cli_socket;
	const char		*cli_output_dir;
	const char		*cli_pid_file;	/* NULL: beside the socket */
	int			 dirfd;		/* the output directory */
	int			 lockfd;	/* its lock (write.h), held for life */
	struct session_table	*sessions;	/* every recording (session.h) */
	struct record		*rec;		/* ...the default session's */
	struct control		*ctl;
	struct notify		*notify;
	struct handoff		*handoff;	/* on_finish of finished files */
	struct fileworker	*fw;		/* reads finished files */
	struct jitcopy		*jitcopy;	/* JIT maps copied beside them */
	struct pidfile		*pidfile;
	struct event		*sigs[DAEMON_NSIGNALS];
	/* the lifecycle, for the commands that ask for it (reload,
	 * shutdown): cmd.c calls these hooks, set by daemon_init, and never
	 * daemon.c by name, so that calls go one way */
	int			(*reload)(struct daemon *,
				    struct config_error *err);
	void			(*shutdown)(struct daemon *);
	int			 exiting;
	time_t			 started;
	struct event		*metrics_ev;	/* metrics_file's timer, or NULL */
	int			 metrics_failing; /* its last write failed */
	/* clients waiting for a session's stop to finish */
	struct {
		struct control_client	*c;
		struct session		*s;
	}			 stop_waiters[16];
	size_t			 nr_stop_waiters;
	/* clients waiting for the file their rotate finished */
	struct {
		struct control_client	*c;
		json_object		*reply;
		char			 file[256];
		int			 done;	/* finished within the rotate */
		int			 whole;
	}			 rotate_waiters[64];
	size_t			 nr_rotate_waiters;
	/* clients waiting for their flush to land (cmd.c) */
	struct cmd_flush	*flushes[16];
	size_t			 nr_flushes;
	/* whole files handed to jitcopy (and leftovers to salvage, each
	 * counted once until its copy is done), and those done */
	uint64_t		 files_queued, files_copied;
	/* leftovers whose salvage, JIT copy and manifest are not done */
	uint64_t		 salvaging;
	/* replies that wait for the files before them to be copied */
	struct {
		struct control_client	*c;
		json_object		*reply;
		uint64_t		 until;	/* files_copied to reach */
	}			 late[16];
	size_t			 nr_late;
};

/* Empty, with its hooks: reload re-reads the config file (0, or -1 with
 * err filled and nothing changed); shutdown finishes the current file
 * whole, then leaves the loop (again: nothing). */
void	daemon_init(struct daemon *);
/* Defaults, then the config file, then the command line (cli_*): the
 * precedence that start-up and a reload share. 0, or -1 with err. */
int	daemon_load(struct daemon *, struct config *, struct config_error *);
/* Everything up to READY=1 with d->cfg loaded: output directory and its
 * lock, loop and signals, salvage and retention, record, hand-off,
 * control socket, pid file, notify, metrics; records if record_on_start.
 * Exits with a message when one of them cannot be had. */
void	daemon_start(struct daemon *);
/* After the loop: every part freed in reverse, signals blocked. */
void	daemon_finish(struct daemon *);

#endif

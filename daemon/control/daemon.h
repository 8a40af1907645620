/*
 * daemon: the state perfspilld's parts share, owned by perfspilld.c and
 * handed to the control commands. There is one instance, passed by
 * pointer, never a global.
 */
#ifndef PERFSPILL_DAEMON_H
#define PERFSPILL_DAEMON_H

#include <event2/event.h>

#include "config.h"

struct control;
struct record;
struct session;
struct session_table;
struct notify;
struct handoff;
struct control_client;

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
	int			 dirfd;		/* the output directory */
	int			 lockfd;	/* its lock (outdir.h), held for life */
	struct session_table	*sessions;	/* every recording (session.h) */
	struct record		*rec;		/* ...the default session's */
	struct control		*ctl;
	struct notify		*notify;
	struct handoff		*handoff;	/* on_finish of finished files */
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
	}			 rotate_waiters[16];
	size_t			 nr_rotate_waiters;
};

/* Re-read the config file; 0, or -1 with err filled (nothing changed). */
int	daemon_reload(struct daemon *, struct config_error *err);
/* Finish the current file whole, then leave the loop. */
void	daemon_shutdown(struct daemon *);

#endif

/*
 * command: the table of control commands (see command.h).
 */
#include <stdio.h>
#include <string.h>

#include "command.h"

const struct command command_table[COMMAND__COUNT] = {
	{ COMMAND_PING, "ping", 0, COMMAND_ARGS_NONE, "",
	    "is the daemon there?",
	    "Is the daemon there? Prints pong.\n" },
	{ COMMAND_VERSION, "version", 0, COMMAND_ARGS_NONE, "",
	    "the daemon's version and protocol",
	    "The daemon's version and protocol.\n" },
	{ COMMAND_STATUS, "status", 0, COMMAND_ARGS_SESSION,
	    "[--session NAME] [-w|--watch [SECS]]",
	    "state, settings, per-CPU counters, files",
	    "State, the configured settings and those of the recording in\n"
	    "progress, totals and per-CPU counters (bytes, samples, lost, AIO\n"
	    "in flight/completed/resubmitted/failed), the current file,\n"
	    "finished files and free disk; every session with its memory and\n"
	    "the memory budget. -w or --watch refreshes every SECS (default 1,\n"
	    "a positive number) and shows rates since the last refresh; on a\n"
	    "terminal it redraws the screen. --session NAME shows that\n"
	    "session's recording in place of the default one's. The lost line\n"
	    "adds up every session's losses and names the sessions that lost.\n" },
	{ COMMAND_START, "start", 1, COMMAND_ARGS_SETTINGS,
	    "[--session NAME [--duration T] | --persist] [--off-cpu] "
	    "[OPTIONS]",
	    "start recording (options below)",
	    "Start recording with the configured settings. Options apply to\n"
	    "this recording only, as perf record's do; --persist also keeps\n"
	    "them as the configured settings, as 'configure' would.\n"
	    "--session NAME starts an on-demand session beside the default\n"
	    "(configured) one, with its own events, rings and files\n"
	    "(perfspill-HOST-NAME-TIME-SEQ.data); NAME is 1-32 of a-z 0-9 _ -.\n"
	    "It ends by itself after --duration T (e.g. 30s, 5m; default\n"
	    "session_duration, 10m). At most max_sessions run at once, and\n"
	    "every start must fit in the memory budget (perfspilld.json(5)):\n"
	    "  perfspillctl start --session deep --duration 30s -F 999 -g\n"
	    "--off-cpu records every sched:sched_switch with its stack (-e\n"
	    "sched:sched_switch -c 1 -g) in session offcpu unless --session\n"
	    "names another: what perfspill-flame --off-cpu reads.\n" },
	{ COMMAND_STOP, "stop", 1, COMMAND_ARGS_STOP,
	    "[--session NAME] [--discard]",
	    "stop; returns when the last file is whole",
	    "Stop recording (the default session, or --session NAME). Returns\n"
	    "once every write is synced and the last file has its final name,\n"
	    "and prints that file. A flight recording writes its window first,\n"
	    "as perf record --overwrite writes its buffer at exit, and says so;\n"
	    "--discard throws the window away instead.\n" },
	{ COMMAND_CONFIGURE, "configure", 1, COMMAND_ARGS_SETTINGS,
	    "KEY=VALUE...",
	    "change settings (see perfspilld.json(5))",
	    "Change settings (keys of perfspilld.json(5), '-' or '_'). They\n"
	    "are kept for later starts until a reload or a daemon restart.\n"
	    "cblocks, rotation and retention apply at once, also to the\n"
	    "recording in progress; the others at the next start. The output\n"
	    "says which. Lists are comma separated:\n"
	    "  perfspillctl configure cblocks=4 max_size=8G\n"
	    "  perfspillctl configure events=cpu-clock,sched:sched_switch\n" },
	{ COMMAND_ROTATE, "rotate", 1, COMMAND_ARGS_SESSION, "[--session NAME]",
	    "finish the current file, start the next",
	    "Finish the current file (of the default session, or --session\n"
	    "NAME) and continue in a new one. Returns once\n"
	    "the finished file is whole (every write synced, renamed), as\n"
	    "stop does, and prints it and the new current file.\n" },
	{ COMMAND_RELOAD, "reload", 1, COMMAND_ARGS_NONE, "",
	    "re-read the daemon's config file",
	    "Make the daemon re-read its config file (as SIGHUP does); the\n"
	    "settings changed by configure are replaced by the file's.\n" },
	{ COMMAND_SHUTDOWN, "shutdown", 1, COMMAND_ARGS_NONE, "",
	    "finish the last file and end the daemon",
	    "End the daemon this socket belongs to (as SIGTERM does): a\n"
	    "recording is stopped and its last file finished first. Returns\n"
	    "once the daemon has exited.\n" },
	{ COMMAND_METRICS, "metrics", 0, COMMAND_ARGS_NONE, "",
	    "counters in the Prometheus text format",
	    "The daemon's counters and gauges in the Prometheus text format\n"
	    "(samples, lost, bytes written and dropped, files finished and\n"
	    "removed, hand-offs, AIO in flight, paused and why). Counters\n"
	    "count from the daemon's start: a stop and a start do not reset\n"
	    "them. metrics_file in perfspilld.json(5) writes the same text\n"
	    "for node_exporter's textfile collector.\n" },
	{ COMMAND_SNAPSHOT, "snapshot", 1, COMMAND_ARGS_SESSION,
	    "[--session NAME]",
	    "write a flight recording's window to a file",
	    "Write the window of a flight recording (mode flight: the last\n"
	    "window seconds, held in memory; the default session, or --session\n"
	    "NAME) as one finished trace file and go on recording; the next\n"
	    "snapshot holds what came after it. Returns once the file is\n"
	    "whole, as rotate does, and prints it. One is refused within\n"
	    "snapshot_interval of the last. SIGUSR2 takes one of every flight\n"
	    "session (and rotates the others). See perfspilld.json(5): mode,\n"
	    "window, window_bytes, snapshot_interval, triggers.\n" },
	/* open to readers (the socket's group), as status is: it shows no
	 * data, changes no setting and no file, and costs the recording a
	 * pass it makes anyway every drain_ms (flushes asked together
	 * share one) */
	{ COMMAND_FLUSH, "flush", 0, COMMAND_ARGS_SESSION, "[--session NAME]",
	    "put what the daemon holds into the file being written",
	    "Put what every session (or --session NAME) holds and has not\n"
	    "written yet (its rings, buffers, the direct stream's tail) into\n"
	    "its current .partial file, on disk, and print each file and where\n"
	    "its data ends. No file is cut or renamed: perfspill-flame sends\n"
	    "this before it reads the files being written. Open to the\n"
	    "socket's group, as status is.\n" },
};

const struct command *
command_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < COMMAND__COUNT; i++)
		if (strcmp(command_table[i].name, name) == 0)
			return &command_table[i];
	return NULL;
}

int
command_takes(const struct command *c, const char *key)
{
	switch (c->args) {
	case COMMAND_ARGS_STOP:
		if (strcmp(key, "discard") == 0)
			return 1;
		/* FALLTHROUGH */
	case COMMAND_ARGS_SESSION:
		return strcmp(key, "session") == 0;
	case COMMAND_ARGS_SETTINGS:
	case COMMAND_ARGS_NONE:
		break;
	}
	return 0;
}

const char *
command_args_words(const struct command *c)
{
	switch (c->args) {
	case COMMAND_ARGS_STOP:
		return "no argument but \"session\" and \"discard\"";
	case COMMAND_ARGS_SESSION:
		return "no argument but \"session\"";
	case COMMAND_ARGS_SETTINGS:
		return "settings";
	case COMMAND_ARGS_NONE:
		break;
	}
	return "no arguments";
}

const char *
command_names(void)
{
	static char	 buf[256];
	size_t		 i, n = 0;
	int		 r;

	for (i = 0; i < COMMAND__COUNT; i++) {
		r = snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "",
		    command_table[i].name);
		if (r < 0 || (size_t)r >= sizeof(buf) - n)
			break;
		n += (size_t)r;
	}
	return buf;
}

/*
 * command: the table of control commands and the presentation of start's
 * options (see command.h).
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
	{ COMMAND_STATUS, "status", 0, COMMAND_ARGS_NONE, "[--watch [SECS]]",
	    "state, settings, per-CPU counters, files",
	    "State, the configured settings and those of the recording in\n"
	    "progress, totals and per-CPU counters (bytes, samples, lost, AIO\n"
	    "in flight/completed/resubmitted/failed), the current file,\n"
	    "finished files and free disk; every session with its memory and\n"
	    "the memory budget. --watch refreshes every SECS\n"
	    "(default 1, a positive number) and shows rates since the last\n"
	    "refresh; on a terminal it redraws the screen.\n" },
	{ COMMAND_START, "start", 1, COMMAND_ARGS_SETTINGS,
	    "[--session NAME [--duration T]] [OPTIONS]",
	    "start recording (options below)",
	    "Start recording with the configured settings. Options apply to\n"
	    "this recording only, as perf record's do; 'configure' changes\n"
	    "the settings themselves.\n"
	    "--session NAME starts an on-demand session beside the default\n"
	    "(configured) one, with its own events, rings and files\n"
	    "(perfspill-HOST-NAME-TIME-SEQ.data); NAME is 1-32 of a-z 0-9 _ -.\n"
	    "It ends by itself after --duration T (e.g. 30s, 5m; default\n"
	    "session_duration, 10m). At most max_sessions run at once, and\n"
	    "every start must fit in the memory budget (perfspilld.json(5)):\n"
	    "  perfspillctl start --session deep --duration 30s -F 999 -g\n" },
	{ COMMAND_STOP, "stop", 1, COMMAND_ARGS_SESSION, "[--session NAME]",
	    "stop; returns when the last file is whole",
	    "Stop recording (the default session, or --session NAME). Returns\n"
	    "once every write is synced and the last file has its final name,\n"
	    "and prints that file.\n" },
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
};

static const struct command_opt command_opts[] = {
	{ "events", 'e', "event", "E",
	    "event, repeatable or comma separated\n"
	    "(cpu-clock, context-switches, sched:sched_switch)" },
	{ "freq", 'F', NULL, "HZ", "sampling frequency" },
	{ "period", 'c', NULL, "N", "sample every N events (instead of -F)" },
	{ "callgraph", 'g', NULL, NULL, "record callchains (--no-callgraph: don't)" },
	{ "mmap_pages", 'm', NULL, "PAGES",
	    "ring size per CPU in pages (power of two)" },
	{ "wakeup_pct", 0, NULL, "PCT", "wake the loop when a ring is this full" },
	{ "drain_ms", 0, NULL, "MS", "drain every ring at least this often" },
	{ "mmap_flush", 0, NULL, "SIZE",
	    "least a woken ring must hold to be drained\n"
	    "(default a quarter of the ring)" },
	{ "compression", 'z', "compression-level", "N", "zstd level, 0 for none" },
	{ "exclude_self", 0, NULL, NULL,
	    "keep perfspilld's own samples out (--no-exclude-self)" },
	{ "realtime", 'r', NULL, "PRIO",
	    "drain at SCHED_FIFO priority PRIO (1-99), 0 off" },
	{ "writeback", 0, NULL, NULL,
	    "start each write's writeback at once and drop written pages\n"
	    "from the page cache (a congested disk; --no-writeback)" },
	{ "kernel_build_id", 0, NULL, NULL,
	    "build-ids in the kernel's MMAP2 records; breaks a\n"
	    "perf record running beside it (see perfspilld.json(5))" },
	{ "all_cgroups", 0, NULL, NULL,
	    "record each sample's cgroup, as perf record --all-cgroups\n"
	    "(--no-all-cgroups: don't; 8 bytes a sample)" },
	{ "cgroups", 'G', "cgroup", "PATH",
	    "record only this cgroup (path below the cgroup2 mount),\n"
	    "repeatable or comma separated, as perf record -G" },
	{ "cblocks", 0, NULL, "N", "AIO buffers per ring, 0 (serial write) to 8" },
	{ "rotate_size", 0, NULL, "SIZE", "rotate when a file reaches SIZE (e.g. 256M)" },
	{ "rotate_interval", 0, NULL, "T", "rotate after T (e.g. 3600, 1h)" },
	{ "max_files", 0, NULL, "N", "keep at most N finished files" },
	{ "max_size", 0, NULL, "SIZE", "keep at most SIZE of finished files" },
	{ "min_free", 0, NULL, "SIZE", "leave SIZE free on the filesystem" },
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

const struct command_opt *
command_opt_find(const char *key)
{
	size_t	 i;

	for (i = 0; i < sizeof(command_opts) / sizeof(command_opts[0]); i++)
		if (strcmp(command_opts[i].key, key) == 0)
			return &command_opts[i];
	return NULL;
}

const struct command_opt *
command_opt_at(size_t i)
{
	if (i >= sizeof(command_opts) / sizeof(command_opts[0]))
		return NULL;
	return &command_opts[i];
}

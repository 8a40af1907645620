/*
 * config: the settings of perfspilld and their one validator. The config
 * file, `start` and `configure` all use this schema (docs/protocol.md,
 * man/perfspilld.json.5), so a value is checked the same way wherever it
 * comes from. Applying is all or nothing: on any error the settings are
 * left as they were.
 */
#ifndef PERFSPILL_CONFIG_H
#define PERFSPILL_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "proto.h"

#define CONFIG_MAX_EVENTS	16
#define CONFIG_EVENT_LEN	128
#define CONFIG_MAX_GROUPS	8
#define CONFIG_NAME_LEN		64
#define CONFIG_CBLOCKS_MAX	8
#define CONFIG_PATH_LEN		512
#define CONFIG_MAX_CGROUPS	16
#define CONFIG_CGROUP_LEN	256
#define CONFIG_MAX_TRIGGERS	8

/*
 * What makes a flight recording snapshot by itself (perfspilld.json(5)).
 * One kind today; a new kind is a new enum value, its fields here and its
 * parsing in config.c's trigger table.
 */
enum config_trigger_kind {
	CONFIG_TRIGGER_PSI,	/* a pressure stall (PSI) trigger */
};
enum config_psi_resource {
	CONFIG_PSI_CPU,
	CONFIG_PSI_MEMORY,
	CONFIG_PSI_IO,
};
struct config_trigger {
	enum config_trigger_kind	 kind;
	enum config_psi_resource	 resource;
	int				 full;	/* "full", not "some" */
	uint64_t			 stall_ms;	/* stalled this long... */
	uint64_t			 window_ms;	/* ...within this window */
	/* a cgroup's pressure (below the cgroup2 mount); "": the system's */
	char				 cgroup[CONFIG_CGROUP_LEN];
};

/*
 * How a sample's stack is recorded (call_graph; callgraph: true is fp).
 * A truth test of cfg->callgraph asks whether callchains are recorded.
 */
enum config_callgraph {
	CONFIG_CG_NONE = 0,
	CONFIG_CG_FP = 1,	/* the kernel's frame-pointer walk */
	CONFIG_CG_DWARF,	/* registers and stack dump, unwound later */
	CONFIG_CG_COMPACT,	/* ...unwound by the daemon, written as a
				 * plain callchain (unwind-worker) */
};

/* perf's bounds of a stack dump: a multiple of 8 up to USHRT_MAX's */
#define CONFIG_STACK_DEFAULT	8192
#define CONFIG_STACK_MAX	65528

struct config {
	/* recording: take effect at the next start */
	char		events[CONFIG_MAX_EVENTS][CONFIG_EVENT_LEN];
	size_t		nr_events;
	uint64_t	freq;		/* Hz; 0 when period is used */
	uint64_t	period;		/* events per sample; 0 when freq is used */
	/* callchains: none, frame pointers, or DWARF (the user stack and
	 * registers with each sample, as perf record --call-graph dwarf) */
	int		callgraph;	/* enum config_callgraph */
	uint64_t	stack_size;	/* DWARF modes: user stack bytes a sample */
	uint64_t	mmap_pages;	/* data pages per ring, a power of two */
	uint64_t	wakeup_pct;	/* wake the drain thread when a ring is
					 * this full */
	uint64_t	drain_ms;	/* periodic drain even without a wakeup */
	int		compression;	/* 0 off, 1..22 zstd level */
	int		exclude_self;	/* keep perfspilld's own samples out */
	int		kernel_build_id;/* attr.build_id: see perfspilld.json(5) */
	uint64_t	realtime;	/* the drain thread's SCHED_FIFO priority */
	int		writeback;	/* sync_file_range each write, drop it
					 * once written: a congested disk */
	uint64_t	mmap_flush;	/* least bytes a wakeup drains; 0: ring/4 */
	int		direct_io;	/* O_DIRECT where the file system takes it */
	uint64_t	direct_tail_ms;	/* the direct stream's tail on disk by then */
	int		all_cgroups;	/* PERF_SAMPLE_CGROUP and cgroup records */
	/* record only these cgroups (perf -G), relative to the cgroup2
	 * mount; none: every task */
	char		cgroups[CONFIG_MAX_CGROUPS][CONFIG_CGROUP_LEN];
	size_t		nr_cgroups;
	/* perf record -C: the CPUs recorded, a list ("0-3,6"); "": all */
	char		cpus[CONFIG_NAME_LEN];
	int		all_user;	/* perf record --all-user */
	int		all_kernel;	/* ...--all-kernel */
	/* perf record -p, -t, -u: a session records these tasks and what
	 * they start ("": none); a list of ids, or a user's name or id */
	char		pids[CONFIG_PATH_LEN];
	char		tids[CONFIG_PATH_LEN];
	char		user[CONFIG_NAME_LEN];
	/* the flight recorder (record-flight.c): the last window in memory,
	 * written only on a snapshot */
	int		flight;		/* mode: 0 "continuous", 1 "flight" */
	uint64_t	window;		/* seconds of samples kept */
	uint64_t	window_bytes;	/* ...and at most this many bytes */
	struct config_trigger triggers[CONFIG_MAX_TRIGGERS];
	size_t		nr_triggers;
	/* live: applied while recording */
	uint64_t	cblocks;	/* 0 serial write, 1..CONFIG_CBLOCKS_MAX AIO */
	uint64_t	rotate_size;	/* bytes; 0 off */
	uint64_t	rotate_interval;/* seconds; 0 off */
	uint64_t	max_files;	/* finished files kept; 0 unlimited */
	uint64_t	max_size;	/* bytes of finished files kept; 0 unlimited */
	uint64_t	min_free;	/* bytes left free on the filesystem */
	uint64_t	trigger_interval;/* seconds between triggered snapshots */
	uint64_t	snapshot_interval;/* ...between asked ones; 0 off */
	/* daemon: config file only, never over the socket */
	int		record_on_start;
	/* sessions beside the default one (session.h) */
	uint64_t	max_sessions;	/* on-demand ones at once */
	uint64_t	max_memory;	/* bytes all sessions hold; 0: no
					 * bound but the cgroup's, the RAM */
	uint64_t	session_duration; /* seconds, without --duration */
	char		output_dir[CONFIG_PATH_LEN];
	char		socket_path[CONFIG_PATH_LEN];
	unsigned int	socket_mode;
	char		socket_group[CONFIG_NAME_LEN];
	char		control_groups[CONFIG_MAX_GROUPS][CONFIG_NAME_LEN];
	size_t		nr_control_groups;
	uint64_t	max_clients;
	uint64_t	client_timeout;	/* seconds a client may stay idle */
	/* the hand-off of finished files (handoff.h); "" off */
	char		on_finish[CONFIG_PATH_LEN];
	uint64_t	on_finish_jobs;		/* programs at once */
	uint64_t	on_finish_timeout;	/* seconds, then killed */
	uint64_t	on_finish_tries;	/* runs before giving up */
	uint64_t	on_finish_retry;	/* first back-off, seconds */
	int		remove_after_handoff;	/* a file shipped goes */
	/* the program runs as this user when perfspilld starts it itself */
	char		on_finish_user[CONFIG_NAME_LEN];
	/* under systemd, in perfspill-handoff@.service instead */
	int		on_finish_unit;
	char		metrics_file[CONFIG_PATH_LEN];	/* "" off */
	uint64_t	metrics_interval;	/* seconds between writes */
};

/* Where a set of settings comes from: decides which keys it may name. */
enum config_origin {
	CONFIG_FILE,		/* every key */
	CONFIG_REQUEST,		/* start/configure: no daemon keys */
};

/* What a key does to a recording in progress. */
enum config_when {
	CONFIG_LIVE,		/* applied at once */
	CONFIG_NEXT_START,	/* kept, used by the next start */
	CONFIG_DAEMON,		/* config file only */
};

struct config_error {
	enum proto_err	code;
	char		key[CONFIG_NAME_LEN];
	char		msg[256];
};

/* Every key at its row's default. */
void	config_defaults(struct config *);

/* Fill *err (code, key or NULL, message); returns -1 for "return". */
int	config_fail(struct config_error *err, enum proto_err code,
	    const char *key, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/*
 * Apply the keys of obj on top of *cfg. All or nothing: returns 0 when
 * every key was valid (and *cfg now holds them), -1 with *err filled and
 * *cfg untouched otherwise. When changed is not NULL it receives a JSON
 * object {"live":[keys], "next_start":[keys]} naming what was set.
 */
int	config_apply(struct config *cfg, json_object *obj,
	    enum config_origin, struct config_error *err,
	    json_object **changed);

/*
 * freq against the kernel's kernel.perf_event_max_sample_rate (maxrate,
 * 0: unknown), which the kernel may lower while it runs and so is no
 * key's fixed bound: start, configure and -n refuse a frequency above
 * it. 0, or -1 with *err.
 */
int	config_check_freq(const struct config *cfg, unsigned long maxrate,
	    struct config_error *err);

/* Read and validate a config file (JSON; comments are allowed). */
int	config_load(struct config *cfg, const char *path,
	    struct config_error *err);

/* The settings as JSON, every key, in schema order (what -n prints). */
json_object	*config_to_json(const struct config *, int with_daemon_keys);

/* The recording settings as a perf-like command line (for the file). */
void	config_cmdline(const struct config *, char *, size_t);

/* call_graph's value as the config writes it ("fp", "dwarf,8192"). */
const char	*config_callgraph_str(const struct config *, char *, size_t);

/* The name of a PSI resource ("cpu", "memory", "io"). */
const char	*config_psi_name(enum config_psi_resource);

/* Copy the live keys (CONFIG_LIVE) of src into dst, and nothing else. */
void	config_copy_live(struct config *dst, const struct config *src);

/*
 * The JSON value a config file would hold for text as a person writes it
 * on a command line (key=text): for a list key the names split on commas,
 * for a path, name or mode key the string, else true or false, a whole
 * number, or the string; for a key of no row the same guess (the daemon
 * names it). NULL when out of memory.
 */
json_object	*config_text_value(const char *key, const char *text);

/* What a client needs to present key i of the schema (start's options). */
enum config_kind {
	CONFIG_KIND_VALUE,	/* a number or name */
	CONFIG_KIND_SIZE,	/* bytes */
	CONFIG_KIND_SECS,	/* seconds */
	CONFIG_KIND_BOOL,
	CONFIG_KIND_LIST,	/* an array of names */
	CONFIG_KIND_OBJECTS,	/* an array of objects, written as JSON */
};
struct config_keyinfo {
	const char		*name;
	enum config_when	 when;
	enum config_kind	 kind;
	const char		*def;		/* as text; NULL: not set */
	/* perfspillctl start's option --NAME (with '-' for '_'): */
	int			 opt;		/* its short letter, 0: none */
	const char		*alias;		/* another long name, or NULL */
	const char		*metavar;	/* NULL for booleans */
	const char		*help;		/* lines; NULL for daemon keys */
};
/* 0 and *info filled for key i, -1 past the last key. */
int	config_key_at(size_t i, struct config_keyinfo *info);
/* 0 and *info filled for the key named name, -1 for an unknown name. */
int	config_key_info(const char *name, struct config_keyinfo *info);

/* Whether cfg records tasks (pids, tids, user) rather than CPUs. */
int	config_task_target(const struct config *);

/* realtime's default: where CAP_SYS_NICE is missing, a start with it
 * drains on the normal scheduler instead of failing (a priority asked
 * for is refused) */
#define CONFIG_REALTIME_DEFAULT	1

#endif

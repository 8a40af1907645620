/*
 * config: schema table, validation and normalised output of the settings
 * (see config.h). Each key is one row of config_keys; the same rows drive
 * validation, the defaults, the "takes effect when" answer of configure,
 * the normalised JSON that `perfspilld -n` prints, and perfspillctl
 * start's options and help.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "config.h"
#include "evparse.h"
#include "jcheck.h"
#include "size.h"
#include "suggest.h"

enum config_type {
	T_UINT,		/* JSON integer in [min, max] */
	T_SIZE,		/* integer bytes or "512M" */
	T_SECS,		/* integer seconds or "1h" */
	T_BOOL,
	T_PATH,		/* absolute path string */
	T_NAME,		/* user or group name */
	T_MODE,		/* octal string "0660" */
	T_EVENTS,	/* array of event names */
	T_GROUPS,	/* array of group names */
	T_CGROUPS,	/* array of cgroup paths */
	T_RECMODE,	/* "continuous" or "flight" */
	T_CALLGRAPH,	/* "fp", "dwarf[,SIZE]", "compact[,SIZE]", "none" */
	T_TRIGGERS,	/* array of trigger objects */
	T_IDS,		/* "1,2,3" ("0-3,6" with F_RANGES); "" none */
};

#define F_POW2		0x1	/* value must be a power of two */
#define F_ZERO_OK	0x2	/* 0 means off and is allowed below min */
#define F_EMPTY_OK	0x4	/* a path: "" means off */
#define F_RANGES	0x8	/* an id list: "0-3" is 0,1,2,3 */

/*
 * One row per setting: its schema (type, when it applies, range), its
 * default, and how perfspillctl start presents it (option letter, another
 * long name, the value's name, a help line). The defaults, start's options
 * and its help are derived from these rows; tests/unit/docs-check.py
 * checks the man pages and docs/protocol.md against them.
 */
struct config_key {
	const char	*name;
	enum config_type type;
	enum config_when when;
	size_t		 off;
	size_t		 size;		/* of the field at off */
	uint64_t	 min, max;
	int		 flags;
	/* the default as a config file could write it ("256M", "1h", a
	 * list comma separated), validated like one; NULL: not set (0) */
	const char	*def;
	int		 opt;		/* start's short option, 0: none */
	const char	*alias;		/* another long option, or NULL */
	const char	*metavar;	/* NULL for booleans */
	const char	*help;		/* start's help; lines end in \n */
};

#define KEY(n, t, w, f) \
	.name = n, .type = t, .when = w, .off = offsetof(struct config, f), \
	.size = sizeof(((struct config *)NULL)->f)

static const struct config_key config_keys[] = {
	{ KEY("events", T_EVENTS, CONFIG_NEXT_START, events),
	    .min = 1, .max = CONFIG_MAX_EVENTS, .def = "cpu-clock",
	    .opt = 'e', .alias = "event", .metavar = "EVENT",
	    .help = "event, repeatable or comma separated, as perf record -e\n"
	    "(cpu-clock, cpu-clock:u, sched:sched_switch, r1a8,\n"
	    "pmu/term=value/, {cpu-clock,task-clock})" },
	{ KEY("freq", T_UINT, CONFIG_NEXT_START, freq),
	    .min = 1, .max = 1000000, .def = "99",
	    .opt = 'F', .metavar = "HZ",
	    .help = "sampling frequency" },
	{ KEY("period", T_UINT, CONFIG_NEXT_START, period),
	    .min = 1, .max = UINT64_C(1) << 62, .def = NULL,
	    .opt = 'c', .alias = "count", .metavar = "N",
	    .help = "sample every N events (instead of -F)" },
	{ KEY("callgraph", T_BOOL, CONFIG_NEXT_START, callgraph),
	    .min = 0, .max = 1, .def = "true",
	    .opt = 'g',
	    .help = "record callchains (--no-callgraph: don't)" },
	/* after callgraph: a normalised config read back keeps its mode */
	{ KEY("call_graph", T_CALLGRAPH, CONFIG_NEXT_START, callgraph),
	    .def = "fp", .metavar = "MODE",
	    .help = "fp (as -g), dwarf[,SIZE] as perf record (SIZE: user\n"
	    "stack bytes a sample, default 8192), compact[,SIZE] (DWARF\n"
	    "unwound by the daemon, written as callchains), or none" },
	{ KEY("mmap_pages", T_UINT, CONFIG_NEXT_START, mmap_pages),
	    .min = 1, .max = 65536, .flags = F_POW2, .def = "128",
	    .opt = 'm', .metavar = "PAGES",
	    .help = "ring size per CPU in pages (power of two)" },
	{ KEY("wakeup_pct", T_UINT, CONFIG_NEXT_START, wakeup_pct),
	    .min = 0, .max = 90, .def = "0",
	    .metavar = "PCT",
	    .help = "wake the drain thread when a ring is this full\n"
	    "(0: by the events' rate, 50 to 90)" },
	{ KEY("drain_ms", T_UINT, CONFIG_NEXT_START, drain_ms),
	    .min = 10, .max = 10000, .def = "1000",
	    .metavar = "MS",
	    .help = "drain every ring at least this often" },
	{ KEY("mmap_flush", T_SIZE, CONFIG_NEXT_START, mmap_flush),
	    .min = 0, .max = UINT64_C(1) << 32, .def = "0",
	    .metavar = "SIZE",
	    .help = "least a woken ring must hold to be drained\n"
	    "(default a quarter of the ring)" },
	{ KEY("compression", T_UINT, CONFIG_NEXT_START, compression),
	    .min = 0, .max = 22, .def = "0",
	    .opt = 'z', .alias = "compression-level", .metavar = "LEVEL",
	    .help = "zstd level, 0 for none" },
	{ KEY("exclude_self", T_BOOL, CONFIG_NEXT_START, exclude_self),
	    .min = 0, .max = 1, .def = "true",
	    .help = "keep perfspilld's own samples out (--no-exclude-self)" },
	{ KEY("kernel_build_id", T_BOOL, CONFIG_NEXT_START, kernel_build_id),
	    .min = 0, .max = 1, .def = "false",
	    .help = "build-ids in the kernel's MMAP2 records; breaks a\n"
	    "perf record running beside it (see perfspilld.json(5))" },
	{ KEY("all_cgroups", T_BOOL, CONFIG_NEXT_START, all_cgroups),
	    .min = 0, .max = 1, .def = "false",
	    .help = "record each sample's cgroup, as perf record --all-cgroups\n"
	    "(--no-all-cgroups: don't; 8 bytes a sample)" },
	{ KEY("cgroups", T_CGROUPS, CONFIG_NEXT_START, cgroups),
	    .min = 0, .max = CONFIG_MAX_CGROUPS, .def = "",
	    .opt = 'G', .alias = "cgroup", .metavar = "PATH",
	    .help = "record only this cgroup (path below the cgroup2 mount),\n"
	    "repeatable or comma separated, as perf record -G" },
	{ KEY("cpus", T_IDS, CONFIG_NEXT_START, cpus),
	    .flags = F_RANGES, .def = "",
	    .opt = 'C', .alias = "cpu", .metavar = "LIST",
	    .help = "record only these CPUs (0-3,6), as perf record -C" },
	{ KEY("all_user", T_BOOL, CONFIG_NEXT_START, all_user),
	    .min = 0, .max = 1, .def = "false",
	    .help = "user space only: events without a u, k or h modifier\n"
	    "leave the kernel out, as perf record --all-user" },
	{ KEY("all_kernel", T_BOOL, CONFIG_NEXT_START, all_kernel),
	    .min = 0, .max = 1, .def = "false",
	    .help = "the kernel only, as perf record --all-kernel" },
	{ KEY("pids", T_IDS, CONFIG_NEXT_START, pids),
	    .def = "",
	    .opt = 'p', .alias = "pid", .metavar = "PID",
	    .help = "a session records these processes (PID[,PID]) and\n"
	    "their new threads and children, as perf record -p" },
	{ KEY("tids", T_IDS, CONFIG_NEXT_START, tids),
	    .def = "",
	    .opt = 't', .alias = "tid", .metavar = "TID",
	    .help = "...these threads (TID[,TID]) and what they start" },
	{ KEY("user", T_NAME, CONFIG_NEXT_START, user),
	    .flags = F_EMPTY_OK, .def = "",
	    .opt = 'u', .alias = "uid", .metavar = "USER",
	    .help = "...the processes of USER (a name or uid) at the start\n"
	    "and their children, as perf record -u" },
	{ KEY("mode", T_RECMODE, CONFIG_NEXT_START, flight),
	    .min = 0, .max = 1, .def = "continuous",
	    .metavar = "MODE",
	    .help = "continuous (files) or flight (the last window in memory,\n"
	    "written on a snapshot)" },
	{ KEY("window", T_SECS, CONFIG_NEXT_START, window),
	    .min = 1, .max = 86400, .def = "60",
	    .metavar = "TIME",
	    .help = "a flight recording keeps the last TIME (e.g. 60s)" },
	{ KEY("window_bytes", T_SIZE, CONFIG_NEXT_START, window_bytes),
	    .min = 1 << 20, .max = UINT64_C(1) << 40, .def = "64M",
	    .metavar = "SIZE",
	    .help = "...and at most SIZE of ring data (e.g. 64M)" },
	{ KEY("triggers", T_TRIGGERS, CONFIG_NEXT_START, triggers),
	    .min = 0, .max = CONFIG_MAX_TRIGGERS, .def = NULL,
	    .metavar = "JSON",
	    .help = "snapshot on these, a JSON array: '[{\"kind\":\"psi\",\n"
	    "\"resource\":\"cpu\",\"stall_ms\":150,\"window_ms\":2000}]'" },
	{ KEY("realtime", T_UINT, CONFIG_NEXT_START, realtime),
	    .min = 0, .max = 99, .def = "1",
	    .opt = 'r', .metavar = "PRIO",
	    .help = "drain thread at SCHED_FIFO priority PRIO (1-99), 0 off" },
	{ KEY("writeback", T_BOOL, CONFIG_NEXT_START, writeback),
	    .min = 0, .max = 1, .def = "false",
	    .help = "start each write's writeback at once and drop written pages\n"
	    "from the page cache (a congested disk; --no-writeback)" },
	{ KEY("direct_io", T_BOOL, CONFIG_NEXT_START, direct_io),
	    .min = 0, .max = 1, .def = "true",
	    .help = "write past the page cache (O_DIRECT) where the file system\n"
	    "takes it (--no-direct-io: through the page cache)" },
	{ KEY("direct_tail_ms", T_UINT, CONFIG_NEXT_START, direct_tail_ms),
	    .min = 10, .max = 60000, .def = "1000",
	    .metavar = "MS",
	    .help = "put the direct stream's unaligned tail on disk this often" },
	{ KEY("cblocks", T_UINT, CONFIG_LIVE, cblocks),
	    .min = 0, .max = CONFIG_CBLOCKS_MAX, .def = "2",
	    .metavar = "N",
	    .help = "AIO buffers per ring, 0 (serial write) to 8" },
	{ KEY("rotate_size", T_SIZE, CONFIG_LIVE, rotate_size),
	    .min = 1 << 20, .max = UINT64_C(1) << 50, .flags = F_ZERO_OK,
	    .def = "256M",
	    .metavar = "SIZE",
	    .help = "rotate when a file reaches SIZE (e.g. 256M)" },
	{ KEY("rotate_interval", T_SECS, CONFIG_LIVE, rotate_interval),
	    .min = 1, .max = 86400 * 365, .flags = F_ZERO_OK, .def = "1h",
	    .metavar = "TIME",
	    .help = "rotate after TIME (e.g. 3600, 1h)" },
	{ KEY("max_files", T_UINT, CONFIG_LIVE, max_files),
	    .min = 0, .max = 1000000, .def = "168",
	    .metavar = "N",
	    .help = "keep at most N finished files" },
	{ KEY("max_size", T_SIZE, CONFIG_LIVE, max_size),
	    .min = 1 << 20, .max = UINT64_C(1) << 50, .flags = F_ZERO_OK,
	    .def = "4G",
	    .metavar = "SIZE",
	    .help = "keep at most SIZE of finished files" },
	{ KEY("min_free", T_SIZE, CONFIG_LIVE, min_free),
	    .min = 0, .max = UINT64_C(1) << 50, .def = "1G",
	    .metavar = "SIZE",
	    .help = "leave SIZE free on the filesystem" },
	{ KEY("trigger_interval", T_SECS, CONFIG_LIVE, trigger_interval),
	    .min = 1, .max = 86400, .def = "60",
	    .metavar = "TIME",
	    .help = "at least TIME between triggered snapshots (default 60s)" },
	{ KEY("snapshot_interval", T_SECS, CONFIG_LIVE, snapshot_interval),
	    .min = 1, .max = 86400, .flags = F_ZERO_OK, .def = "10",
	    .metavar = "TIME",
	    .help = "refuse a snapshot (command, SIGUSR2) sooner than TIME\n"
	    "after the last one, 0 off (default 10s)" },
	{ KEY("record_on_start", T_BOOL, CONFIG_DAEMON, record_on_start),
	    .min = 0, .max = 1, .def = "false" },
	{ KEY("max_sessions", T_UINT, CONFIG_DAEMON, max_sessions),
	    .min = 0, .max = 64, .def = "2" },
	{ KEY("max_memory", T_SIZE, CONFIG_DAEMON, max_memory),
	    .min = 1 << 20, .max = UINT64_C(1) << 50, .flags = F_ZERO_OK,
	    .def = "0" },
	{ KEY("session_duration", T_SECS, CONFIG_DAEMON, session_duration),
	    .min = 1, .max = 7 * 86400, .def = "10m" },
	{ KEY("output_dir", T_PATH, CONFIG_DAEMON, output_dir),
	    .def = PERFSPILL_OUTPUT_DIR },
	{ KEY("socket", T_PATH, CONFIG_DAEMON, socket_path),
	    .def = PERFSPILL_SOCKET },
	{ KEY("socket_mode", T_MODE, CONFIG_DAEMON, socket_mode),
	    .min = 0, .max = 0777, .def = "0660" },
	{ KEY("socket_group", T_NAME, CONFIG_DAEMON, socket_group),
	    .def = "perfspill" },
	{ KEY("control_groups", T_GROUPS, CONFIG_DAEMON, control_groups),
	    .min = 0, .max = CONFIG_MAX_GROUPS, .def = "" },
	{ KEY("max_clients", T_UINT, CONFIG_DAEMON, max_clients),
	    .min = 1, .max = 4096, .def = "128" },
	{ KEY("client_timeout", T_SECS, CONFIG_DAEMON, client_timeout),
	    .min = 1, .max = 3600, .def = "30" },
	{ KEY("metrics_file", T_PATH, CONFIG_DAEMON, metrics_file),
	    .flags = F_EMPTY_OK, .def = "" },
	{ KEY("metrics_interval", T_SECS, CONFIG_DAEMON, metrics_interval),
	    .min = 1, .max = 3600, .def = "5" },
	{ KEY("on_finish", T_PATH, CONFIG_DAEMON, on_finish),
	    .flags = F_EMPTY_OK, .def = "" },
	{ KEY("on_finish_jobs", T_UINT, CONFIG_DAEMON, on_finish_jobs),
	    .min = 1, .max = 64, .def = "2" },
	{ KEY("on_finish_timeout", T_SECS, CONFIG_DAEMON, on_finish_timeout),
	    .min = 1, .max = 86400, .def = "600" },
	{ KEY("on_finish_tries", T_UINT, CONFIG_DAEMON, on_finish_tries),
	    .min = 1, .max = 100, .def = "5" },
	{ KEY("on_finish_retry", T_SECS, CONFIG_DAEMON, on_finish_retry),
	    .min = 1, .max = 86400, .def = "30" },
	{ KEY("remove_after_handoff", T_BOOL, CONFIG_DAEMON,
	    remove_after_handoff),
	    .min = 0, .max = 1, .def = "false" },
	{ KEY("on_finish_user", T_NAME, CONFIG_DAEMON, on_finish_user),
	    .def = "perfspill-handoff" },
	{ KEY("on_finish_unit", T_BOOL, CONFIG_DAEMON, on_finish_unit),
	    .min = 0, .max = 1, .def = "true" },
};
#define NKEYS	(sizeof(config_keys) / sizeof(config_keys[0]))

static int	config_set(struct config *, const struct config_key *,
		    json_object *, struct config_error *);

/*
 * Every row's default, through the validator a config file goes through:
 * a row whose default its own range refuses is a bug of this table,
 * caught at once (test-config runs this).
 */
void
config_defaults(struct config *cfg)
{
	struct config_error	 err;
	json_object		*v;
	size_t			 i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NKEYS; i++) {
		if (config_keys[i].def == NULL)
			continue;
		v = config_text_value(config_keys[i].name, config_keys[i].def);
		if (v == NULL || config_set(cfg, &config_keys[i], v, &err) ==
		    -1) {
			fprintf(stderr, "config: the default of %s: %s\n",
			    config_keys[i].name, v ? err.msg : "out of memory");
			abort();
		}
		json_object_put(v);
	}
}

static const struct config_key *
config_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

json_object *
config_text_value(const char *key, const char *text)
{
	const struct config_key	*k = config_find(key);
	json_object		*v;
	char			*copy, *tok, *save = NULL, *end;
	long long		 n;
	size_t			 len;

	if (k != NULL && (k->type == T_EVENTS || k->type == T_GROUPS ||
	    k->type == T_CGROUPS)) {
		if ((v = json_object_new_array()) == NULL ||
		    (copy = strdup(text)) == NULL) {
			json_object_put(v);
			return NULL;
		}
		for (tok = k->type == T_EVENTS ? NULL : strtok_r(copy, ",",
		    &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
			json_object_array_add(v, json_object_new_string(tok));
		/* an event's own commas, in a group or a PMU's terms, stay */
		for (tok = copy; k->type == T_EVENTS && *text != '\0';
		    tok += len + 1) {
			len = evparse_item(tok);
			end = tok + len;
			save = *end == '\0' ? NULL : end;
			*end = '\0';
			json_object_array_add(v, json_object_new_string(tok));
			if (save == NULL)
				break;
		}
		free(copy);
		return v;
	}
	if (k != NULL && (k->type == T_PATH || k->type == T_NAME ||
	    k->type == T_MODE || k->type == T_RECMODE ||
	    k->type == T_CALLGRAPH || k->type == T_IDS))
		return json_object_new_string(text);
	/* a structured value (triggers) is written as JSON */
	if (k != NULL && k->type == T_TRIGGERS)
		return (v = json_tokener_parse(text)) != NULL ? v :
		    json_object_new_string(text);
	if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
		return json_object_new_boolean(text[0] == 't');
	errno = 0;
	n = strtoll(text, &end, 10);
	if (*text != '\0' && *end == '\0' && errno == 0)
		return json_object_new_int64(n);
	return json_object_new_string(text);
}

void
config_copy_live(struct config *dst, const struct config *src)
{
	size_t	 i;

	/* every live key is one field; a list's count would be another */
	for (i = 0; i < NKEYS; i++)
		if (config_keys[i].when == CONFIG_LIVE)
			memcpy((char *)dst + config_keys[i].off,
			    (const char *)src + config_keys[i].off,
			    config_keys[i].size);
}

static void
config_keyinfo(const struct config_key *k, struct config_keyinfo *info)
{
	info->name = k->name;
	info->when = k->when;
	info->def = k->def;
	info->opt = k->opt;
	info->alias = k->alias;
	info->metavar = k->metavar;
	info->help = k->help;
	info->kind = k->type == T_BOOL ? CONFIG_KIND_BOOL :
	    k->type == T_EVENTS || k->type == T_GROUPS ||
	    k->type == T_CGROUPS ? CONFIG_KIND_LIST :
	    k->type == T_TRIGGERS ? CONFIG_KIND_OBJECTS :
	    k->type == T_SIZE ? CONFIG_KIND_SIZE :
	    k->type == T_SECS ? CONFIG_KIND_SECS : CONFIG_KIND_VALUE;
}

int
config_key_at(size_t i, struct config_keyinfo *info)
{
	if (i >= NKEYS)
		return -1;
	config_keyinfo(&config_keys[i], info);
	return 0;
}

int
config_key_info(const char *name, struct config_keyinfo *info)
{
	const struct config_key	*k;

	if ((k = config_find(name)) == NULL)
		return -1;
	config_keyinfo(k, info);
	return 0;
}

int
config_fail(struct config_error *err, enum proto_err code, const char *key,
    const char *fmt, ...)
{
	va_list	 ap;

	err->code = code;
	snprintf(err->key, sizeof(err->key), "%s", key ? key : "");
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *
config_type_name(enum config_type t)
{
	switch (t) {
	case T_UINT:	return "an integer";
	case T_SIZE:	return "a size (bytes, or a string such as \"512M\")";
	case T_SECS:	return "a duration (seconds, or a string such as \"1h\")";
	case T_BOOL:	return "true or false";
	case T_PATH:	return "an absolute path";
	case T_NAME:	return "a name";
	case T_MODE:	return "an octal mode string such as \"0660\"";
	case T_EVENTS:	return "an array of event names";
	case T_GROUPS:	return "an array of group names";
	case T_CGROUPS:	return "an array of cgroup paths (\"system.slice/x.service\")";
	case T_RECMODE:	return "\"continuous\" or \"flight\"";
	case T_CALLGRAPH: return "\"fp\", \"dwarf[,SIZE]\", \"compact[,SIZE]\" or \"none\"";
	case T_TRIGGERS: return "an array of trigger objects ({\"kind\": \"psi\", ...})";
	case T_IDS:	return "a string of ids, comma separated (\"1,2\"), or \"\"";
	}
	return "?";
}

/* A name of a user, group or event: printable, no spaces or slashes in
 * group names; events allow ':' and '-'. */
static int
config_valid_name(const char *s, size_t max, const char *extra)
{
	size_t	 n = strlen(s);

	if (n == 0 || n >= max)
		return 0;
	for (; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		    *s == '.')
			continue;
		if (extra && strchr(extra, *s))
			continue;
		return 0;
	}
	return 1;
}

static int
config_set_uint(const struct config_key *k, json_object *v, uint64_t *out,
    struct config_error *err)
{
	uint64_t	 n;
	int64_t		 i;
	const char	*s;
	int		 rc;

	if (json_object_is_type(v, json_type_int)) {
		i = json_object_get_int64(v);
		if (i < 0)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s must not be negative", k->name);
		n = json_object_get_uint64(v);
	} else if (json_object_is_type(v, json_type_string) &&
	    (k->type == T_SIZE || k->type == T_SECS)) {
		s = json_object_get_string(v);
		rc = k->type == T_SIZE ? size_parse(s, &n) :
		    size_parse_secs(s, &n);
		if (rc == -1)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s: cannot parse '%.64s' as %s", k->name, s,
			    config_type_name(k->type));
	} else
		return config_fail(err, PROTO_E_BAD_TYPE, k->name,
		    "%s must be %s", k->name, config_type_name(k->type));

	if (n == 0 && (k->flags & F_ZERO_OK)) {
		*out = 0;
		return 0;
	}
	if (n < k->min || n > k->max)
		return config_fail(err, PROTO_E_BAD_VALUE, k->name,
		    "%s must be between %" PRIu64 " and %" PRIu64 "%s "
		    "(got %" PRIu64 ")", k->name, k->min, k->max,
		    (k->flags & F_ZERO_OK) ? ", or 0 for off" : "", n);
	if ((k->flags & F_POW2) && (n & (n - 1)) != 0)
		return config_fail(err, PROTO_E_BAD_VALUE, k->name,
		    "%s must be a power of two (got %" PRIu64 ")", k->name, n);
	*out = n;
	return 0;
}

static int
config_set_strings(const struct config_key *k, json_object *v, char *dst,
    size_t len, size_t max, size_t *nr, const char *extra,
    struct config_error *err)
{
	size_t		 i, n;
	json_object	*e;
	const char	*s;

	if (!json_object_is_type(v, json_type_array))
		return config_fail(err, PROTO_E_BAD_TYPE, k->name,
		    "%s must be %s", k->name, config_type_name(k->type));
	n = json_object_array_length(v);
	if (n < k->min || n > max)
		return config_fail(err, PROTO_E_BAD_VALUE, k->name,
		    "%s takes %" PRIu64 " to %zu entries (got %zu)", k->name,
		    k->min, max, n);
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s[%zu] must be a string", k->name, i);
		s = json_object_get_string(e);
		if (!config_valid_name(s, len, extra))
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s[%zu]: '%.64s' is not a valid name", k->name, i,
			    s);
		snprintf(dst + i * len, len, "%s", s);
	}
	*nr = n;
	return 0;
}

/* perf's -e syntax (evparse.h), each entry maybe a list or a group;
 * what the machine has is the daemon's to check at a start. */
static int
config_set_events(const struct config_key *k, json_object *v,
    struct config *cfg, struct config_error *err)
{
	struct evparse_event	 pe[EVPARSE_MAX_EVENTS];
	size_t			 i, n, total = 0;
	char			 msg[256];

	if (config_set_strings(k, v, &cfg->events[0][0], CONFIG_EVENT_LEN,
	    CONFIG_MAX_EVENTS, &cfg->nr_events, ":{},/=", err) == -1)
		return -1;
	for (i = 0; i < cfg->nr_events; i++) {
		if (evparse_list(cfg->events[i], pe, EVPARSE_MAX_EVENTS, &n,
		    msg, sizeof(msg)) == -1)
			return config_fail(err, PROTO_E_EVENT, k->name, "%s",
			    msg);
		if ((total += n) > CONFIG_MAX_EVENTS)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s: more than %d events in all", k->name,
			    CONFIG_MAX_EVENTS);
	}
	return 0;
}

/* Paths below the cgroup2 mount: names joined by '/', never "..", so
 * that a request cannot name a directory outside the hierarchy. p is
 * normalised in place ("/a/b/" is "a/b", as perf -G takes both); 0 when
 * it is such a path, -1 when not. */
static int
config_cgroup_path(char *p)
{
	char	*q;

	while (*p == '/')
		memmove(p, p + 1, strlen(p));
	while ((q = strrchr(p, '/')) != NULL && q[1] == '\0')
		*q = '\0';
	if (*p == '\0' || strstr(p, "//") != NULL ||
	    strcmp(p, "..") == 0 || strcmp(p, ".") == 0 ||
	    strncmp(p, "../", 3) == 0 || strncmp(p, "./", 2) == 0 ||
	    strstr(p, "/../") != NULL || strstr(p, "/./") != NULL ||
	    ((q = strrchr(p, '/')) != NULL && (strcmp(q, "/..") == 0 ||
	    strcmp(q, "/.") == 0)))
		return -1;
	return 0;
}

static int
config_set_cgroups(const struct config_key *k, json_object *v,
    struct config *cfg, struct config_error *err)
{
	size_t	 i;

	if (config_set_strings(k, v, &cfg->cgroups[0][0], CONFIG_CGROUP_LEN,
	    CONFIG_MAX_CGROUPS, &cfg->nr_cgroups, "/@:+=\\", err) == -1)
		return -1;
	for (i = 0; i < cfg->nr_cgroups; i++)
		if (config_cgroup_path(cfg->cgroups[i]) == -1)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s[%zu]: '%.64s' is not a cgroup path below the "
			    "cgroup2 mount (e.g. \"system.slice\")", k->name,
			    i, cfg->cgroups[i]);
	return 0;
}

/*
 * A list of ids as perf's -C, -p and -t take it: "1,2", with F_RANGES
 * also "0-3,6"; "" for none. Stored as written, once checked.
 */
static int
config_set_ids(const struct config_key *k, json_object *v, char *field,
    struct config_error *err)
{
	const char		*s, *p;
	char			*end;
	unsigned long long	 a, b;
	size_t			 cap = k->size;

	if (!json_object_is_type(v, json_type_string))
		return config_fail(err, PROTO_E_BAD_TYPE, k->name,
		    "%s must be %s", k->name, config_type_name(k->type));
	s = json_object_get_string(v);
	if (strlen(s) >= cap)
		return config_fail(err, PROTO_E_BAD_VALUE, k->name,
		    "%s: longer than %zu characters", k->name, cap - 1);
	for (p = s; *p;) {
		errno = 0;
		a = strtoull(p, &end, 10);
		if (end == p || *p < '0' || *p > '9' || errno != 0 ||
		    a > INT32_MAX)
			goto bad;
		if (*end == '-' && (k->flags & F_RANGES)) {
			p = end + 1;
			b = strtoull(p, &end, 10);
			if (end == p || *p < '0' || *p > '9' || errno != 0 ||
			    b < a || b > 65535)
				goto bad;
		}
		if (*end != ',' && *end != '\0')
			goto bad;
		p = *end == ',' ? end + 1 : end;
		if (*end == ',' && *p == '\0')
			goto bad;
	}
	snprintf(field, cap, "%s", s);
	return 0;
bad:
	return config_fail(err, PROTO_E_BAD_VALUE, k->name, "%s: '%.64s' is "
	    "not a list of %s (%s)", k->name, s, (k->flags & F_RANGES) ?
	    "CPUs" : "ids", (k->flags & F_RANGES) ? "0-3,6" : "1234,5678");
}

int
config_task_target(const struct config *cfg)
{
	return cfg->pids[0] != '\0' || cfg->tids[0] != '\0' ||
	    cfg->user[0] != '\0';
}

static const char *const config_psi_names[] = { "cpu", "memory", "io" };

const char *
config_psi_name(enum config_psi_resource r)
{
	return (size_t)r < sizeof(config_psi_names) /
	    sizeof(config_psi_names[0]) ? config_psi_names[r] : "?";
}

/* Index of s among names[0..n), or -1. */
static int
config_word(const char *s, const char *const *names, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

/* The string member key of trigger i, or NULL with *err filled. */
static const char *
config_trigger_str(json_object *t, size_t i, const char *key,
    struct config_error *err)
{
	json_object	*v;

	if (!json_object_object_get_ex(t, key, &v) ||
	    !json_object_is_type(v, json_type_string)) {
		config_fail(err, PROTO_E_BAD_VALUE, "triggers", "triggers[%zu]: "
		    "\"%s\" must be a string", i, key);
		return NULL;
	}
	return json_object_get_string(v);
}

/*
 * One PSI trigger: {"kind": "psi", "resource": "cpu", "type": "some",
 * "stall_ms": 150, "window_ms": 2000, "cgroup": "a/b"}; the kernel's
 * bounds (a window of 500 ms to 10 s, a stall within it) are checked
 * here, so that a start fails only for what the machine lacks (without
 * CAP_SYS_RESOURCE the kernel takes only whole multiples of 2 s).
 */
static int
config_set_psi(json_object *t, size_t i, struct config_trigger *tr,
    struct config_error *err)
{
	static const char *const types[] = { "some", "full" };
	json_object_iter	 it;
	const char		*s;
	int			 w;
	int64_t			 n;

	/* 2 s: a window the kernel takes without CAP_SYS_RESOURCE too */
	tr->stall_ms = 150;
	tr->window_ms = 2000;
	json_object_object_foreachC(t, it) {
		if (strcmp(it.key, "kind") == 0)
			continue;
		if (strcmp(it.key, "resource") == 0 ||
		    strcmp(it.key, "type") == 0 ||
		    strcmp(it.key, "cgroup") == 0) {
			if ((s = config_trigger_str(t, i, it.key, err)) == NULL)
				return -1;
			if (strcmp(it.key, "cgroup") == 0) {
				snprintf(tr->cgroup, sizeof(tr->cgroup), "%s", s);
				if (strlen(s) >= sizeof(tr->cgroup) ||
				    config_cgroup_path(tr->cgroup) == -1)
					return config_fail(err,
					    PROTO_E_BAD_VALUE, "triggers",
					    "triggers[%zu]: '%.64s' is not a "
					    "cgroup path below the cgroup2 "
					    "mount", i, s);
				continue;
			}
			w = strcmp(it.key, "type") == 0 ?
			    config_word(s, types, 2) :
			    config_word(s, config_psi_names, 3);
			if (w == -1)
				return config_fail(err, PROTO_E_BAD_VALUE,
				    "triggers", "triggers[%zu]: %s '%.32s' is "
				    "not one of %s", i, it.key, s,
				    strcmp(it.key, "type") == 0 ?
				    "some, full" : "cpu, memory, io");
			if (strcmp(it.key, "type") == 0)
				tr->full = w;
			else
				tr->resource = (enum config_psi_resource)w;
			continue;
		}
		if (strcmp(it.key, "stall_ms") != 0 &&
		    strcmp(it.key, "window_ms") != 0)
			return config_fail(err, PROTO_E_BAD_VALUE, "triggers",
			    "triggers[%zu]: unknown member '%.32s' (a psi "
			    "trigger has resource, type, stall_ms, window_ms, "
			    "cgroup)", i, it.key);
		if (!json_object_is_type(it.val, json_type_int) ||
		    (n = json_object_get_int64(it.val)) < 1 || n > 10000)
			return config_fail(err, PROTO_E_BAD_VALUE, "triggers",
			    "triggers[%zu]: %s must be an integer from 1 to "
			    "10000", i, it.key);
		if (strcmp(it.key, "stall_ms") == 0)
			tr->stall_ms = (uint64_t)n;
		else
			tr->window_ms = (uint64_t)n;
	}
	if (!json_object_object_get_ex(t, "resource", NULL))
		return config_fail(err, PROTO_E_BAD_VALUE, "triggers",
		    "triggers[%zu]: a psi trigger needs a resource (cpu, "
		    "memory or io)", i);
	if (tr->window_ms < 500 || tr->stall_ms > tr->window_ms)
		return config_fail(err, PROTO_E_BAD_VALUE, "triggers",
		    "triggers[%zu]: window_ms must be 500 to 10000 and "
		    "stall_ms at most window_ms (got %" PRIu64 " in %" PRIu64
		    ")", i, tr->stall_ms, tr->window_ms);
	return 0;
}

/* The trigger kinds: a new kind is a row and its parser. */
static const struct {
	const char		*name;
	enum config_trigger_kind kind;
	int			(*set)(json_object *, size_t,
				    struct config_trigger *,
				    struct config_error *);
} config_trigger_kinds[] = {	/* in enum config_trigger_kind order */
	{ "psi", CONFIG_TRIGGER_PSI, config_set_psi },
};
#define NTRIGGER_KINDS	(sizeof(config_trigger_kinds) / \
	sizeof(config_trigger_kinds[0]))

static int
config_set_triggers(const struct config_key *k, json_object *v,
    struct config *cfg, struct config_error *err)
{
	struct config_trigger	*tr;
	const char		*s;
	size_t			 i, j, n;
	json_object		*t;

	if (!json_object_is_type(v, json_type_array))
		return config_fail(err, PROTO_E_BAD_TYPE, k->name, "%s must be "
		    "%s", k->name, config_type_name(k->type));
	if ((n = json_object_array_length(v)) > CONFIG_MAX_TRIGGERS)
		return config_fail(err, PROTO_E_BAD_VALUE, k->name, "%s takes "
		    "at most %d entries (got %zu)", k->name,
		    CONFIG_MAX_TRIGGERS, n);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(v, i);
		tr = &cfg->triggers[i];
		memset(tr, 0, sizeof(*tr));
		if (!json_object_is_type(t, json_type_object))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s[%zu] must be an object with a \"kind\"",
			    k->name, i);
		if ((s = config_trigger_str(t, i, "kind", err)) == NULL)
			return -1;
		for (j = 0; j < NTRIGGER_KINDS; j++)
			if (strcmp(s, config_trigger_kinds[j].name) == 0)
				break;
		if (j == NTRIGGER_KINDS)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s[%zu]: unknown kind '%.32s' (known: psi)",
			    k->name, i, s);
		tr->kind = config_trigger_kinds[j].kind;
		if (config_trigger_kinds[j].set(t, i, tr, err) == -1)
			return -1;
	}
	cfg->nr_triggers = n;
	return 0;
}

/* Trigger i as config_set_triggers takes it. */
static json_object *
config_trigger_json(const struct config_trigger *tr)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "kind",
	    json_object_new_string(config_trigger_kinds[tr->kind].name));
	json_object_object_add(o, "resource",
	    json_object_new_string(config_psi_name(tr->resource)));
	json_object_object_add(o, "type",
	    json_object_new_string(tr->full ? "full" : "some"));
	json_object_object_add(o, "stall_ms",
	    json_object_new_uint64(tr->stall_ms));
	json_object_object_add(o, "window_ms",
	    json_object_new_uint64(tr->window_ms));
	if (tr->cgroup[0])
		json_object_object_add(o, "cgroup",
		    json_object_new_string(tr->cgroup));
	return o;
}

/* The modes of call_graph, as perf record --call-graph spells them. */
static const char *const config_cg_names[] = {
	[CONFIG_CG_NONE] = "none",
	[CONFIG_CG_FP] = "fp",
	[CONFIG_CG_DWARF] = "dwarf",
	[CONFIG_CG_COMPACT] = "compact",
};

/*
 * "MODE[,SIZE]": SIZE only after a DWARF mode, read as perf reads it
 * (any base strtoul takes, rounded up to a multiple of 8, at most 65528).
 */
static int
config_set_callgraph(const struct config_key *k, json_object *v,
    struct config *cfg, struct config_error *err)
{
	const char		*s, *comma;
	char			*end;
	unsigned long long	 size = CONFIG_STACK_DEFAULT;
	size_t			 i, n;

	if (!json_object_is_type(v, json_type_string))
		return config_fail(err, PROTO_E_BAD_TYPE, k->name,
		    "%s must be %s", k->name, config_type_name(k->type));
	s = json_object_get_string(v);
	comma = strchr(s, ',');
	n = comma ? (size_t)(comma - s) : strlen(s);
	for (i = 0; i < sizeof(config_cg_names) / sizeof(config_cg_names[0]);
	    i++)
		if (config_cg_names[i] != NULL &&
		    strlen(config_cg_names[i]) == n &&
		    strncmp(config_cg_names[i], s, n) == 0)
			break;
	if (i == sizeof(config_cg_names) / sizeof(config_cg_names[0]) ||
	    (comma != NULL && i < CONFIG_CG_DWARF))
		return config_fail(err, PROTO_E_BAD_VALUE, k->name,
		    "%s: unknown --call-graph option value '%.64s' (fp, "
		    "dwarf[,SIZE], compact[,SIZE], none)", k->name, s);
	if (comma != NULL) {
		errno = 0;
		size = strtoull(comma + 1, &end, 0);
		size = (size + 7) & ~7ULL;
		if (comma[1] == '\0' || comma[1] == '-' || *end != '\0' ||
		    errno != 0 || size == 0 || size > CONFIG_STACK_MAX)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s: incorrect stack dump size (max %d): '%.64s'",
			    k->name, CONFIG_STACK_MAX, comma + 1);
	}
	cfg->callgraph = (int)i;
	cfg->stack_size = size;
	return 0;
}

static int
config_set(struct config *cfg, const struct config_key *k, json_object *v,
    struct config_error *err)
{
	char		*field = (char *)cfg + k->off;
	const char	*s;
	char		*end;
	unsigned long	 mode;

	switch (k->type) {
	case T_UINT:
	case T_SIZE:
	case T_SECS:
		if (k->off == offsetof(struct config, compression)) {
			uint64_t	 c;

			if (config_set_uint(k, v, &c, err) == -1)
				return -1;
			cfg->compression = (int)c;
			return 0;
		}
		return config_set_uint(k, v, (uint64_t *)(void *)field, err);
	case T_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s must be true or false", k->name);
		*(int *)(void *)field = json_object_get_boolean(v);
		return 0;
	case T_PATH:
		if (!json_object_is_type(v, json_type_string))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s must be %s", k->name, config_type_name(k->type));
		s = json_object_get_string(v);
		if ((s[0] != '\0' || !(k->flags & F_EMPTY_OK)) &&
		    (s[0] != '/' || strlen(s) >= CONFIG_PATH_LEN ||
		    strstr(s, "/../") != NULL ||
		    (strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/..") == 0)))
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s must be an absolute path without '..' and "
			    "shorter than %d bytes%s", k->name, CONFIG_PATH_LEN,
			    (k->flags & F_EMPTY_OK) ? ", or \"\" for none" : "");
		if (k->off == offsetof(struct config, socket_path) &&
		    strlen(s) >= 108)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "socket path is longer than a UNIX socket allows "
			    "(107 bytes)");
		snprintf(field, CONFIG_PATH_LEN, "%s", s);
		return 0;
	case T_IDS:
		return config_set_ids(k, v, field, err);
	case T_NAME:
		if (!json_object_is_type(v, json_type_string))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s must be %s", k->name, config_type_name(k->type));
		s = json_object_get_string(v);
		if (s[0] == '\0' && (k->flags & F_EMPTY_OK)) {
			*field = '\0';
			return 0;
		}
		if (!config_valid_name(s, CONFIG_NAME_LEN, NULL))
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s: '%.64s' is not a valid name", k->name, s);
		snprintf(field, CONFIG_NAME_LEN, "%s", s);
		return 0;
	case T_MODE:
		if (!json_object_is_type(v, json_type_string))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s must be %s", k->name, config_type_name(k->type));
		s = json_object_get_string(v);
		errno = 0;
		/* octal digits only: strtoul would take "-0", "+660", " 660" */
		mode = strtoul(s, &end, 8);
		if (*s == '\0' || strspn(s, "01234567") != strlen(s) ||
		    *end != '\0' || errno != 0 || mode > 0777)
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s: '%.16s' is not an octal mode up to 0777",
			    k->name, s);
		cfg->socket_mode = (unsigned int)mode;
		return 0;
	case T_EVENTS:
		return config_set_events(k, v, cfg, err);
	case T_GROUPS:
		return config_set_strings(k, v, &cfg->control_groups[0][0],
		    CONFIG_NAME_LEN, CONFIG_MAX_GROUPS, &cfg->nr_control_groups,
		    NULL, err);
	case T_CGROUPS:
		return config_set_cgroups(k, v, cfg, err);
	case T_RECMODE:
		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(json_object_get_string(v), "continuous") != 0 &&
		    strcmp(json_object_get_string(v), "flight") != 0))
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s must be %s", k->name, config_type_name(k->type));
		cfg->flight = json_object_get_string(v)[0] == 'f';
		return 0;
	case T_TRIGGERS:
		return config_set_triggers(k, v, cfg, err);
	case T_CALLGRAPH:
		return config_set_callgraph(k, v, cfg, err);
	}
	return config_fail(err, PROTO_E_BAD_VALUE, k->name, "unhandled type");
}

/* An unknown key, and the nearest that exists ("did you mean"). */
static int
config_unknown(struct config_error *err, const char *key)
{
	struct suggest	 sg;
	size_t		 i;

	suggest_init(&sg, key);
	for (i = 0; i < NKEYS; i++)
		suggest_offer(&sg, config_keys[i].name);
	if (suggest_best(&sg) != NULL)
		return config_fail(err, PROTO_E_UNKNOWN_KEY, key, "unknown "
		    "setting '%.64s' (did you mean '%s'?)", key,
		    suggest_best(&sg));
	return config_fail(err, PROTO_E_UNKNOWN_KEY, key, "unknown setting "
	    "'%.64s'", key);
}

int
config_apply(struct config *cfg, json_object *obj, enum config_origin origin,
    struct config_error *err, json_object **changed)
{
	struct config		 tmp = *cfg;
	const struct config_key	*k;
	json_object_iter	 it;
	json_object		*live, *next, *daemon, *cg = NULL;
	int			 has_freq = 0, has_period = 0, cg_off = 0;

	if (changed)
		*changed = NULL;
	if (!json_object_is_type(obj, json_type_object))
		return config_fail(err, PROTO_E_BAD_TYPE, NULL,
		    "settings must be a JSON object");
	json_object_object_foreachC(obj, it) {
		if ((k = config_find(it.key)) == NULL)
			return config_unknown(err, it.key);
		if (origin == CONFIG_REQUEST && k->when == CONFIG_DAEMON)
			return config_fail(err, PROTO_E_NOT_SETTABLE, it.key,
			    "%s can only be set in the config file", it.key);
		if (config_set(&tmp, k, it.val, err) == -1)
			return -1;
		if (strcmp(it.key, "freq") == 0)
			has_freq = 1;
		if (strcmp(it.key, "period") == 0)
			has_period = 1;
		if (k->type == T_CALLGRAPH)
			cg = it.val;
		if (strcmp(it.key, "callgraph") == 0)
			cg_off = tmp.callgraph == CONFIG_CG_NONE;
	}
	/* call_graph says how, callgraph only whether: the first wins over
	 * the second whatever their order, and the two must not disagree */
	if (cg != NULL && config_set(&tmp, config_find("call_graph"), cg,
	    err) == -1)
		return -1;
	if (cg != NULL && cg_off && tmp.callgraph != CONFIG_CG_NONE)
		return config_fail(err, PROTO_E_BAD_VALUE, "call_graph",
		    "callgraph false and call_graph \"%s\" disagree",
		    json_object_get_string(cg));
	if (has_freq && has_period)
		return config_fail(err, PROTO_E_BAD_VALUE, "period",
		    "freq and period exclude each other: give one");
	/* the one given last in time wins over the stored other one */
	if (has_freq)
		tmp.period = 0;
	if (has_period)
		tmp.freq = 0;
	if (tmp.freq == 0 && tmp.period == 0)
		return config_fail(err, PROTO_E_BAD_VALUE, "freq",
		    "one of freq or period must be set");
	if (tmp.all_user && tmp.all_kernel)
		return config_fail(err, PROTO_E_BAD_VALUE, "all_kernel",
		    "all_user and all_kernel exclude each other: give one");
	if (config_task_target(&tmp) && tmp.nr_cgroups > 0)
		return config_fail(err, PROTO_E_BAD_VALUE, "cgroups",
		    "a session records tasks (pids, tids, user) or cgroups, "
		    "not both");

	if (changed) {
		*changed = json_object_new_object();
		live = json_object_new_array();
		next = json_object_new_array();
		daemon = json_object_new_array();
		json_object_object_foreachC(obj, it) {
			k = config_find(it.key);
			json_object_array_add(k->when == CONFIG_LIVE ? live :
			    k->when == CONFIG_NEXT_START ? next : daemon,
			    json_object_new_string(it.key));
		}
		json_object_object_add(*changed, "live", live);
		json_object_object_add(*changed, "next_start", next);
		json_object_put(daemon);
	}
	*cfg = tmp;
	return 0;
}

/* A config file larger than this is a mistake, not a config. */
#define CONFIG_FILE_MAX	(1024 * 1024)

/*
 * The file's text, NUL-terminated. Opened without blocking and checked to
 * be a regular file before a byte is read: a FIFO or a device given by
 * mistake is refused at once instead of hanging start-up or a reload.
 */
static char *
config_read_file(const char *path, size_t *lenp, struct config_error *err)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		config_fail(err, PROTO_E_BAD_JSON, NULL, "%s: %s", path,
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		config_fail(err, PROTO_E_SYSTEM, NULL, "%s: %s", path,
		    strerror(errno));
		goto error;
	}
	if (!S_ISREG(st.st_mode)) {
		config_fail(err, PROTO_E_BAD_JSON, NULL, "%s: not a regular "
		    "file (%s)", path, S_ISDIR(st.st_mode) ? "a directory" :
		    S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
		goto error;
	}
	if ((buf = malloc(CONFIG_FILE_MAX + 1)) == NULL) {
		config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
		goto error;
	}
	while (len <= CONFIG_FILE_MAX) {
		n = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			config_fail(err, PROTO_E_SYSTEM, NULL, "%s: %s", path,
			    strerror(errno));
			goto error;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > CONFIG_FILE_MAX) {
		config_fail(err, PROTO_E_TOO_BIG, NULL, "%s: larger than %d "
		    "bytes", path, CONFIG_FILE_MAX);
		goto error;
	}
	close(fd);
	buf[len] = '\0';
	*lenp = len;
	return buf;
error:
	free(buf);
	close(fd);
	return NULL;
}

/* "FILE:LINE:COL: message" as compilers say it, so that editors jump
 * there; err->msg already holds the message. */
static void
config_locate(struct config_error *err, const char *path, const char *buf,
    size_t off)
{
	char	 msg[sizeof(err->msg)];
	size_t	 line, col;
	int	 n;

	memcpy(msg, err->msg, sizeof(msg));
	if (buf != NULL) {
		jcheck_line_col(buf, off, &line, &col);
		n = snprintf(err->msg, sizeof(err->msg), "%s:%zu:%zu: ", path,
		    line, col);
	} else
		n = snprintf(err->msg, sizeof(err->msg), "%s: ", path);
	/* cut to fit */
	if (n > 0 && (size_t)n < sizeof(err->msg))
		memcpy(err->msg + n, msg, sizeof(err->msg) - (size_t)n - 1);
	err->msg[sizeof(err->msg) - 1] = '\0';
}

static json_object *
config_parse(const char *path, const char *buf, size_t len,
    struct config_error *err)
{
	json_tokener		*tok;
	json_object		*obj;
	enum json_tokener_error	 jerr;
	size_t			 end;
	char			 msg[128];

	/* not strict: the config may carry comments */
	if ((tok = json_tokener_new()) == NULL) {
		config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
		return NULL;
	}
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (obj != NULL && jerr == json_tokener_success)
		while (end < len && (buf[end] == ' ' || buf[end] == '\t' ||
		    buf[end] == '\n' || buf[end] == '\r'))
			end++;
	if (obj == NULL || jerr != json_tokener_success || end != len) {
		/* the same words the protocol uses for the same mistake */
		config_fail(err, PROTO_E_BAD_JSON, NULL, "malformed JSON: %s",
		    obj != NULL && jerr == json_tokener_success ?
		    "text after the object" : jerr == json_tokener_continue ?
		    "incomplete object" : json_tokener_error_desc(jerr));
		config_locate(err, path, buf, end);
		json_object_put(obj);
		return NULL;
	}
	if (jcheck_text(buf, len, &end, msg, sizeof(msg)) == -1) {
		config_fail(err, PROTO_E_BAD_JSON, NULL, "%s", msg);
		config_locate(err, path, buf, end);
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

int
config_load(struct config *cfg, const char *path, struct config_error *err)
{
	json_object	*obj;
	char		*buf;
	size_t		 len, off;
	int		 rc;

	if ((buf = config_read_file(path, &len, err)) == NULL)
		return -1;
	if ((obj = config_parse(path, buf, len, err)) == NULL) {
		free(buf);
		return -1;
	}
	rc = config_apply(cfg, obj, CONFIG_FILE, err, NULL);
	json_object_put(obj);
	if (rc == -1) {
		if (err->key[0] != '\0' &&
		    jcheck_key_offset(buf, len, err->key, &off) == 0)
			config_locate(err, path, buf, off);
		else
			config_locate(err, path, NULL, 0);
	}
	free(buf);
	return rc;
}

const char *
config_callgraph_str(const struct config *cfg, char *buf, size_t len)
{
	if (cfg->callgraph < CONFIG_CG_DWARF)
		snprintf(buf, len, "%s", config_cg_names[cfg->callgraph]);
	else
		snprintf(buf, len, "%s,%" PRIu64,
		    config_cg_names[cfg->callgraph], cfg->stack_size);
	return buf;
}

static json_object *
config_callgraph_json(const struct config *cfg)
{
	char	 buf[32];

	return json_object_new_string(config_callgraph_str(cfg, buf,
	    sizeof(buf)));
}

json_object *
config_to_json(const struct config *cfg, int with_daemon_keys)
{
	json_object		*o = json_object_new_object(), *a;
	const struct config_key	*k;
	const char		*field;
	char			 mode[8];
	size_t			 i, j;

	for (i = 0; i < NKEYS; i++) {
		k = &config_keys[i];
		field = (const char *)cfg + k->off;
		if (k->when == CONFIG_DAEMON && !with_daemon_keys)
			continue;
		if ((strcmp(k->name, "freq") == 0 && cfg->freq == 0) ||
		    (strcmp(k->name, "period") == 0 && cfg->period == 0))
			continue;
		switch (k->type) {
		case T_UINT:
		case T_SIZE:
		case T_SECS:
			if (k->off == offsetof(struct config, compression))
				json_object_object_add(o, k->name,
				    json_object_new_int(cfg->compression));
			else
				json_object_object_add(o, k->name,
				    json_object_new_uint64(
				    *(const uint64_t *)(const void *)field));
			break;
		case T_BOOL:
			json_object_object_add(o, k->name,
			    json_object_new_boolean(*(const int *)(const void *)
			    field));
			break;
		case T_PATH:
		case T_NAME:
		case T_IDS:
			json_object_object_add(o, k->name,
			    json_object_new_string(field));
			break;
		case T_MODE:
			snprintf(mode, sizeof(mode), "%04o", cfg->socket_mode);
			json_object_object_add(o, k->name,
			    json_object_new_string(mode));
			break;
		case T_RECMODE:
			json_object_object_add(o, k->name,
			    json_object_new_string(cfg->flight ? "flight" :
			    "continuous"));
			break;
		case T_CALLGRAPH:
			json_object_object_add(o, k->name,
			    config_callgraph_json(cfg));
			break;
		case T_TRIGGERS:
			a = json_object_new_array();
			for (j = 0; j < cfg->nr_triggers; j++)
				json_object_array_add(a,
				    config_trigger_json(&cfg->triggers[j]));
			json_object_object_add(o, k->name, a);
			break;
		case T_CGROUPS:
			a = json_object_new_array();
			for (j = 0; j < cfg->nr_cgroups; j++)
				json_object_array_add(a,
				    json_object_new_string(cfg->cgroups[j]));
			json_object_object_add(o, k->name, a);
			break;
		case T_EVENTS:
		case T_GROUPS:
			a = json_object_new_array();
			if (k->type == T_EVENTS)
				for (j = 0; j < cfg->nr_events; j++)
					json_object_array_add(a,
					    json_object_new_string(
					    cfg->events[j]));
			else
				for (j = 0; j < cfg->nr_control_groups; j++)
					json_object_array_add(a,
					    json_object_new_string(
					    cfg->control_groups[j]));
			json_object_object_add(o, k->name, a);
			break;
		}
	}
	return o;
}

void
config_cmdline(const struct config *cfg, char *buf, size_t len)
{
	char	 cg[32];
	size_t	 i, n;

	n = (size_t)snprintf(buf, len, "perfspilld record -a");
	for (i = 0; i < cfg->nr_events && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " -e %s",
		    cfg->events[i]);
	if (n < len) {
		if (cfg->freq)
			n += (size_t)snprintf(buf + n, len - n, " -F %" PRIu64,
			    cfg->freq);
		else
			n += (size_t)snprintf(buf + n, len - n, " -c %" PRIu64,
			    cfg->period);
	}
	if (n < len && cfg->callgraph == CONFIG_CG_FP)
		n += (size_t)snprintf(buf + n, len - n, " -g");
	else if (n < len && cfg->callgraph != CONFIG_CG_NONE)
		n += (size_t)snprintf(buf + n, len - n, " --call-graph %s",
		    config_callgraph_str(cfg, cg, sizeof(cg)));
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, " -m %" PRIu64
		    " --aio=%" PRIu64, cfg->mmap_pages, cfg->cblocks);
	if (n < len && cfg->kernel_build_id)
		n += (size_t)snprintf(buf + n, len - n, " --buildid-mmap");
	if (n < len && cfg->all_cgroups)
		n += (size_t)snprintf(buf + n, len - n, " --all-cgroups");
	for (i = 0; i < cfg->nr_cgroups && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " -G %s",
		    cfg->cgroups[i]);
	if (n < len && cfg->cpus[0])
		n += (size_t)snprintf(buf + n, len - n, " -C %s", cfg->cpus);
	if (n < len && (cfg->all_user || cfg->all_kernel))
		n += (size_t)snprintf(buf + n, len - n, " --all-%s",
		    cfg->all_user ? "user" : "kernel");
	if (n < len && cfg->pids[0])
		n += (size_t)snprintf(buf + n, len - n, " -p %s", cfg->pids);
	if (n < len && cfg->tids[0])
		n += (size_t)snprintf(buf + n, len - n, " -t %s", cfg->tids);
	if (n < len && cfg->user[0])
		n += (size_t)snprintf(buf + n, len - n, " -u %s", cfg->user);
	if (n < len && cfg->compression)
		snprintf(buf + n, len - n, " -z %d", cfg->compression);
}

int
config_check_freq(const struct config *cfg, unsigned long maxrate,
    struct config_error *err)
{
	if (cfg->freq && maxrate && cfg->freq > maxrate)
		return config_fail(err, PROTO_E_BAD_VALUE, "freq",
		    "freq %" PRIu64 " Hz is above the kernel's limit "
		    "kernel.perf_event_max_sample_rate=%lu", cfg->freq, maxrate);
	return 0;
}

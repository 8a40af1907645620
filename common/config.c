/*
 * config: schema table, validation and normalised output of the settings
 * (see config.h). Each key is one row of config_keys; the same rows drive
 * validation, the "takes effect when" answer of configure, and the
 * normalised JSON that `perfspilld -n` prints.
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
#include "jcheck.h"
#include "size.h"

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
};

#define F_POW2		0x1	/* value must be a power of two */
#define F_ZERO_OK	0x2	/* 0 means off and is allowed below min */
#define F_EMPTY_OK	0x4	/* a path: "" means off */

struct config_key {
	const char	*name;
	enum config_type type;
	enum config_when when;
	size_t		 off;
	size_t		 size;		/* of the field at off */
	uint64_t	 min, max;
	int		 flags;
};

#define K(n, t, w, f, lo, hi, fl) \
	{ n, t, w, offsetof(struct config, f), \
	    sizeof(((struct config *)NULL)->f), lo, hi, fl }

static const struct config_key config_keys[] = {
	K("events", T_EVENTS, CONFIG_NEXT_START, events, 1, CONFIG_MAX_EVENTS, 0),
	K("freq", T_UINT, CONFIG_NEXT_START, freq, 1, 1000000, 0),
	K("period", T_UINT, CONFIG_NEXT_START, period, 1, UINT64_C(1) << 62, 0),
	K("callgraph", T_BOOL, CONFIG_NEXT_START, callgraph, 0, 1, 0),
	K("mmap_pages", T_UINT, CONFIG_NEXT_START, mmap_pages, 1, 65536, F_POW2),
	K("wakeup_pct", T_UINT, CONFIG_NEXT_START, wakeup_pct, 1, 90, 0),
	K("drain_ms", T_UINT, CONFIG_NEXT_START, drain_ms, 10, 10000, 0),
	K("mmap_flush", T_SIZE, CONFIG_NEXT_START, mmap_flush, 0,
	    UINT64_C(1) << 32, 0),
	K("compression", T_UINT, CONFIG_NEXT_START, compression, 0, 22, 0),
	K("exclude_self", T_BOOL, CONFIG_NEXT_START, exclude_self, 0, 1, 0),
	K("kernel_build_id", T_BOOL, CONFIG_NEXT_START, kernel_build_id, 0, 1,
	    0),
	K("all_cgroups", T_BOOL, CONFIG_NEXT_START, all_cgroups, 0, 1, 0),
	K("cgroups", T_CGROUPS, CONFIG_NEXT_START, cgroups, 0,
	    CONFIG_MAX_CGROUPS, 0),
	K("realtime", T_UINT, CONFIG_NEXT_START, realtime, 0, 99, 0),
	K("writeback", T_BOOL, CONFIG_NEXT_START, writeback, 0, 1, 0),
	K("cblocks", T_UINT, CONFIG_LIVE, cblocks, 0, CONFIG_CBLOCKS_MAX, 0),
	K("rotate_size", T_SIZE, CONFIG_LIVE, rotate_size, 1 << 20,
	    UINT64_C(1) << 50, F_ZERO_OK),
	K("rotate_interval", T_SECS, CONFIG_LIVE, rotate_interval, 1,
	    86400 * 365, F_ZERO_OK),
	K("max_files", T_UINT, CONFIG_LIVE, max_files, 0, 1000000, 0),
	K("max_size", T_SIZE, CONFIG_LIVE, max_size, 1 << 20,
	    UINT64_C(1) << 50, F_ZERO_OK),
	K("min_free", T_SIZE, CONFIG_LIVE, min_free, 0, UINT64_C(1) << 50, 0),
	K("record_on_start", T_BOOL, CONFIG_DAEMON, record_on_start, 0, 1, 0),
	K("output_dir", T_PATH, CONFIG_DAEMON, output_dir, 0, 0, 0),
	K("socket", T_PATH, CONFIG_DAEMON, socket_path, 0, 0, 0),
	K("socket_mode", T_MODE, CONFIG_DAEMON, socket_mode, 0, 0777, 0),
	K("socket_group", T_NAME, CONFIG_DAEMON, socket_group, 0, 0, 0),
	K("control_groups", T_GROUPS, CONFIG_DAEMON, control_groups, 0,
	    CONFIG_MAX_GROUPS, 0),
	K("max_clients", T_UINT, CONFIG_DAEMON, max_clients, 1, 4096, 0),
	K("client_timeout", T_SECS, CONFIG_DAEMON, client_timeout, 1, 3600, 0),
	K("metrics_file", T_PATH, CONFIG_DAEMON, metrics_file, 0, 0,
	    F_EMPTY_OK),
	K("metrics_interval", T_SECS, CONFIG_DAEMON, metrics_interval, 1, 3600,
	    0),
	K("on_finish", T_PATH, CONFIG_DAEMON, on_finish, 0, 0, F_EMPTY_OK),
	K("on_finish_jobs", T_UINT, CONFIG_DAEMON, on_finish_jobs, 1, 64, 0),
	K("on_finish_timeout", T_SECS, CONFIG_DAEMON, on_finish_timeout, 1,
	    86400, 0),
	K("on_finish_tries", T_UINT, CONFIG_DAEMON, on_finish_tries, 1, 100, 0),
	K("on_finish_retry", T_SECS, CONFIG_DAEMON, on_finish_retry, 1, 86400,
	    0),
	K("remove_after_handoff", T_BOOL, CONFIG_DAEMON, remove_after_handoff,
	    0, 1, 0),
	K("on_finish_user", T_NAME, CONFIG_DAEMON, on_finish_user, 0, 0, 0),
	K("on_finish_unit", T_BOOL, CONFIG_DAEMON, on_finish_unit, 0, 1, 0),
};
#define NKEYS	(sizeof(config_keys) / sizeof(config_keys[0]))

void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->events[0], CONFIG_EVENT_LEN, "cpu-clock");
	cfg->nr_events = 1;
	cfg->freq = 99;
	cfg->callgraph = 1;
	cfg->mmap_pages = 128;
	cfg->wakeup_pct = 50;
	cfg->drain_ms = 1000;
	cfg->cblocks = 2;
	cfg->exclude_self = 1;
	cfg->rotate_size = UINT64_C(256) << 20;
	cfg->rotate_interval = 3600;
	cfg->max_files = 168;
	cfg->max_size = UINT64_C(4) << 30;
	cfg->min_free = UINT64_C(1) << 30;
	cfg->record_on_start = 0;
	snprintf(cfg->output_dir, sizeof(cfg->output_dir), "%s",
	    PERFSPILL_OUTPUT_DIR);
	snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s",
	    PERFSPILL_SOCKET);
	cfg->socket_mode = 0660;
	snprintf(cfg->socket_group, sizeof(cfg->socket_group), "perfspill");
	cfg->max_clients = 128;
	cfg->client_timeout = 30;
	cfg->on_finish_jobs = 2;
	cfg->on_finish_timeout = 600;
	cfg->on_finish_tries = 5;
	cfg->on_finish_retry = 30;
	snprintf(cfg->on_finish_user, sizeof(cfg->on_finish_user),
	    "perfspill-handoff");
	cfg->on_finish_unit = 1;
	cfg->metrics_interval = 5;
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
	info->kind = k->type == T_BOOL ? CONFIG_KIND_BOOL :
	    k->type == T_EVENTS || k->type == T_GROUPS ||
	    k->type == T_CGROUPS ? CONFIG_KIND_LIST :
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

/* Paths below the cgroup2 mount: names joined by '/', never "..", so
 * that a request cannot name a directory outside the hierarchy. */
static int
config_set_cgroups(const struct config_key *k, json_object *v,
    struct config *cfg, struct config_error *err)
{
	size_t	 i;
	char	*p, *q;

	if (config_set_strings(k, v, &cfg->cgroups[0][0], CONFIG_CGROUP_LEN,
	    CONFIG_MAX_CGROUPS, &cfg->nr_cgroups, "/@:+=\\", err) == -1)
		return -1;
	for (i = 0; i < cfg->nr_cgroups; i++) {
		p = cfg->cgroups[i];
		/* "/a/b/" is "a/b", as perf -G takes both */
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
			return config_fail(err, PROTO_E_BAD_VALUE, k->name,
			    "%s[%zu]: '%.64s' is not a cgroup path below the "
			    "cgroup2 mount (e.g. \"system.slice\")", k->name,
			    i, cfg->cgroups[i]);
	}
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
	case T_NAME:
		if (!json_object_is_type(v, json_type_string))
			return config_fail(err, PROTO_E_BAD_TYPE, k->name,
			    "%s must be %s", k->name, config_type_name(k->type));
		s = json_object_get_string(v);
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
		return config_set_strings(k, v, &cfg->events[0][0],
		    CONFIG_EVENT_LEN, CONFIG_MAX_EVENTS, &cfg->nr_events, ":",
		    err);
	case T_GROUPS:
		return config_set_strings(k, v, &cfg->control_groups[0][0],
		    CONFIG_NAME_LEN, CONFIG_MAX_GROUPS, &cfg->nr_control_groups,
		    NULL, err);
	case T_CGROUPS:
		return config_set_cgroups(k, v, cfg, err);
	}
	return config_fail(err, PROTO_E_BAD_VALUE, k->name, "unhandled type");
}

int
config_apply(struct config *cfg, json_object *obj, enum config_origin origin,
    struct config_error *err, json_object **changed)
{
	struct config		 tmp = *cfg;
	const struct config_key	*k;
	json_object_iter	 it;
	json_object		*live, *next, *daemon;
	int			 has_freq = 0, has_period = 0;

	if (changed)
		*changed = NULL;
	if (!json_object_is_type(obj, json_type_object))
		return config_fail(err, PROTO_E_BAD_TYPE, NULL,
		    "settings must be a JSON object");
	json_object_object_foreachC(obj, it) {
		if ((k = config_find(it.key)) == NULL)
			return config_fail(err, PROTO_E_UNKNOWN_KEY, it.key,
			    "unknown setting '%.64s'", it.key);
		if (origin == CONFIG_REQUEST && k->when == CONFIG_DAEMON)
			return config_fail(err, PROTO_E_NOT_SETTABLE, it.key,
			    "%s can only be set in the config file", it.key);
		if (config_set(&tmp, k, it.val, err) == -1)
			return -1;
		if (strcmp(it.key, "freq") == 0)
			has_freq = 1;
		if (strcmp(it.key, "period") == 0)
			has_period = 1;
	}
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
			json_object_object_add(o, k->name,
			    json_object_new_string(field));
			break;
		case T_MODE:
			snprintf(mode, sizeof(mode), "%04o", cfg->socket_mode);
			json_object_object_add(o, k->name,
			    json_object_new_string(mode));
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
	if (n < len && cfg->callgraph)
		n += (size_t)snprintf(buf + n, len - n, " -g");
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
	if (n < len && cfg->compression)
		snprintf(buf + n, len - n, " -z %d", cfg->compression);
}

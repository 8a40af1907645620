/*
 * cmd holds the handlers of the control commands (see cmd.h); which
 * commands exist, who may run them and whether they take args is
 * common/command.c's to say.
 * daemon.c calls in here; reload and shutdown go back through its hooks
 * (d->reload, d->shutdown), never by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "command.h"
#include "control.h"
#include "daemon.h"
#include "evsel.h"
#include "exporter.h"
#include "handoff.h"
#include "log.h"
#include "paths.h"
#include "proto.h"
#include "record.h"
#include "session.h"
#include "size.h"

typedef void (*cmd_exec)(struct daemon *, struct control_client *,
    json_object *);

static void	cmd_ping(struct daemon *, struct control_client *, json_object *);
static void	cmd_version(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_status(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_start(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_stop(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_configure(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_reload(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_rotate(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_shutdown(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_snapshot(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_metrics(struct daemon *, struct control_client *,
		    json_object *);
static void	cmd_flush(struct daemon *, struct control_client *,
		    json_object *);
static struct session *cmd_session(struct daemon *, struct control_client *,
		    json_object *);

/* The handlers of common/command.c's table: names, privilege and args
 * are there, shared with perfspillctl. */
static const cmd_exec cmd_handlers[COMMAND__COUNT] = {
	[COMMAND_PING] = cmd_ping,
	[COMMAND_VERSION] = cmd_version,
	[COMMAND_STATUS] = cmd_status,
	[COMMAND_START] = cmd_start,
	[COMMAND_STOP] = cmd_stop,
	[COMMAND_CONFIGURE] = cmd_configure,
	[COMMAND_ROTATE] = cmd_rotate,
	[COMMAND_RELOAD] = cmd_reload,
	[COMMAND_SHUTDOWN] = cmd_shutdown,
	[COMMAND_METRICS] = cmd_metrics,
	[COMMAND_SNAPSHOT] = cmd_snapshot,
	[COMMAND_FLUSH] = cmd_flush,
};

/* A flush a client waits for: one answer per session asked, the reply
 * sent once the last has come. */
struct cmd_flush {
	struct daemon		*d;
	struct control_client	*c;
	json_object		*reply;		/* {"sessions": [...]} */
	json_object		*list;		/* ...that array */
	size_t			 pending;
};

static void
cmd_error(struct control_client *c, enum proto_err code, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
cmd_error(struct control_client *c, enum proto_err code, const char *key,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	control_client_reply(c, proto_reply_error(code, key, msg));
}

static void
cmd_config_error(struct control_client *c, const struct config_error *err)
{
	control_client_reply(c, proto_reply_error(err->code,
	    err->key[0] ? err->key : NULL, err->msg));
}

void
cmd_dispatch(struct daemon *d, struct control_client *c, const char *name,
    json_object *args)
{
	const struct command	*e;

	/* a row without a handler (a client-only command) is unknown here */
	if ((e = command_find(name)) == NULL || cmd_handlers[e->id] == NULL) {
		cmd_error(c, PROTO_E_UNKNOWN_COMMAND, NULL, "unknown command "
		    "'%.64s' (%s)", name, command_names());
		return;
	}
	if (e->privileged && !control_client_privileged(c)) {
		log_info("refused '%s' from uid %d: not privileged", e->name,
		    (int)control_client_uid(c));
		cmd_error(c, PROTO_E_PERMISSION, NULL, "'%s' changes the "
		    "recorder: it needs root, or a group listed in the "
		    "setting control_groups (uid %d is neither)", e->name,
		    (int)control_client_uid(c));
		return;
	}
	if (e->args != COMMAND_ARGS_SETTINGS) {
		json_object_iter	 it;

		json_object_object_foreachC(args, it) {
			if (command_takes(e, it.key))
				continue;
			cmd_error(c, PROTO_E_UNKNOWN_KEY, it.key, "'%s' takes %s "
			    "(got '%.64s')", e->name, command_args_words(e),
			    it.key);
			return;
		}
	}
	cmd_handlers[e->id](d, c, args);
}

static size_t
cmd_find_rotate_waiter(struct daemon *d, struct control_client *c)
{
	size_t	 i;

	for (i = 0; i < d->nr_rotate_waiters; i++)
		if (d->rotate_waiters[i].c == c)
			break;
	return i;
}

static void
cmd_drop_rotate_waiter(struct daemon *d, struct control_client *c)
{
	size_t	 i = cmd_find_rotate_waiter(d, c);

	if (i == d->nr_rotate_waiters)
		return;
	json_object_put(d->rotate_waiters[i].reply);
	d->rotate_waiters[i] = d->rotate_waiters[--d->nr_rotate_waiters];
}

/* The flushes c waits for, forgotten by every session's recording. */
static void
cmd_drop_flush(struct daemon *d, struct control_client *c)
{
	struct cmd_flush	*w;
	struct session		*s = NULL;
	size_t			 i = 0;

	while (i < d->nr_flushes) {
		if ((w = d->flushes[i])->c != c) {
			i++;
			continue;
		}
		while ((s = session_next(d->sessions, s)) != NULL)
			record_flush_cancel(session_record(s), w);
		json_object_put(w->reply);
		free(w);
		d->flushes[i] = d->flushes[--d->nr_flushes];
	}
}

void
cmd_client_gone(struct daemon *d, struct control_client *c)
{
	size_t	 i;

	for (i = 0; i < d->nr_stop_waiters; i++) {
		if (d->stop_waiters[i].c != c)
			continue;
		d->stop_waiters[i] = d->stop_waiters[--d->nr_stop_waiters];
		break;
	}
	cmd_drop_rotate_waiter(d, c);
	cmd_drop_flush(d, c);
	for (i = 0; i < d->nr_late; i++) {
		if (d->late[i].c != c)
			continue;
		json_object_put(d->late[i].reply);
		d->late[i--] = d->late[--d->nr_late];
	}
}

/*
 * A reply that speaks of finished files (a stop's) goes out once the
 * files finished before it have their JIT maps and manifests: a client
 * that reads the directory on the answer finds them there. Past the
 * table's room it goes out at once.
 */
static void
cmd_reply_after_files(struct daemon *d, struct control_client *c,
    json_object *reply)
{
	if (d->files_copied >= d->files_queued || d->nr_late ==
	    sizeof(d->late) / sizeof(d->late[0])) {
		control_client_reply(c, reply);
		return;
	}
	d->late[d->nr_late].c = c;
	d->late[d->nr_late].reply = reply;
	d->late[d->nr_late++].until = d->files_queued;
}

/* The daemon leaves the loop once it is exiting, nothing records and
 * every file's copy is done. */
static void
cmd_exit_when_done(struct daemon *d)
{
	if (d->exiting && session_busy(d->sessions) == 0 &&
	    d->files_copied >= d->files_queued)
		event_base_loopexit(d->base, NULL);
}

void
cmd_files_copied(struct daemon *d)
{
	size_t	 i;

	for (i = 0; i < d->nr_late; i++) {
		if (d->late[i].until > d->files_copied)
			continue;
		control_client_reply(d->late[i].c, d->late[i].reply);
		d->late[i--] = d->late[--d->nr_late];
	}
	cmd_exit_when_done(d);
}

void
cmd_file_done(struct daemon *d, const char *file, int whole)
{
	json_object	*o;
	size_t		 i = 0;

	while (i < d->nr_rotate_waiters) {
		if (strcmp(d->rotate_waiters[i].file, file) != 0) {
			i++;
			continue;
		}
		if ((o = d->rotate_waiters[i].reply) == NULL) {
			/* within record_rotate: cmd_rotate answers */
			d->rotate_waiters[i].done = 1;
			d->rotate_waiters[i].whole = whole;
			i++;
			continue;
		}
		json_object_object_add(o, "finished_whole",
		    json_object_new_boolean(whole));
		control_client_reply(d->rotate_waiters[i].c,
		    proto_reply_ok(o));
		d->rotate_waiters[i] = d->rotate_waiters[--d->nr_rotate_waiters];
	}
}

static void
cmd_ping(struct daemon *d, struct control_client *c, json_object *args)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "pong", json_object_new_boolean(1));
	control_client_reply(c, proto_reply_ok(o));
}

static void
cmd_version(struct daemon *d, struct control_client *c, json_object *args)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "version",
	    json_object_new_string(PERFSPILL_VERSION));
	json_object_object_add(o, "protocol", json_object_new_int(PROTO_VERSION));
	control_client_reply(c, proto_reply_ok(o));
}

static void
cmd_metrics(struct daemon *d, struct control_client *c, json_object *args)
{
	struct sbuf	 sb;
	json_object	*o;

	sbuf_init(&sb);
	if (exporter_text(d, &sb) == -1) {
		sbuf_finish(&sb);
		cmd_error(c, PROTO_E_SYSTEM, NULL, "out of memory");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "text", json_object_new_string_len(
	    (const char *)sb.data, (int)sb.len));
	sbuf_finish(&sb);
	control_client_reply(c, proto_reply_ok(o));
}

static void
cmd_status(struct daemon *d, struct control_client *c, json_object *args)
{
	struct session	*s = session_default(d->sessions);
	json_object	*o, *v;

	/* --session: that session's recording where the default's is */
	if (json_object_object_get_ex(args, "session", &v) &&
	    (s = cmd_session(d, c, args)) == NULL)
		return;
	o = record_status(session_record(s));
	json_object_object_add(o, "session",
	    json_object_new_string(session_name(s)));

	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "version",
	    json_object_new_string(PERFSPILL_VERSION));
	/* "started" and "uptime" are the recording's: these the daemon's */
	json_object_object_add(o, "daemon_started",
	    json_object_new_int64((int64_t)d->started));
	json_object_object_add(o, "daemon_uptime",
	    json_object_new_int64((int64_t)(time(NULL) - d->started)));
	json_object_object_add(o, "output_dir",
	    json_object_new_string(d->cfg.output_dir));
	json_object_object_add(o, "clients",
	    json_object_new_int(control_nclients(d->ctl)));
	json_object_object_add(o, "config", config_to_json(&d->cfg, 0));
	json_object_object_add(o, "handoffs", handoff_status(d->handoff));
	json_object_object_add(o, "salvaging",
	    json_object_new_int64((int64_t)d->salvaging));
	if (d->overrides != NULL && record_state(d->rec) != RECORD_IDLE &&
	    session_record(s) == d->rec)
		json_object_object_add(o, "overrides",
		    json_object_get(d->overrides));
	/* the default session's figures stay where they were; every
	 * session's, the default's included, in "sessions" */
	session_status(d->sessions, o);
	control_client_reply(c, proto_reply_ok(o));
}

/*
 * The session a request's "session" value v names (v NULL: none): *name
 * is NULL for the default one ("default" or none), else a checked name.
 * 0, or -1 with the client answered.
 */
static int
cmd_session_name(struct control_client *c, json_object *v, const char **name)
{
	struct config_error	 err;

	*name = NULL;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		cmd_error(c, PROTO_E_BAD_TYPE, "session", "session must be a "
		    "session's name");
		return -1;
	}
	*name = json_object_get_string(v);
	if (strcmp(*name, SESSION_DEFAULT) == 0)
		*name = NULL;
	else if (session_name_check(*name, &err) == -1) {
		cmd_config_error(c, &err);
		return -1;
	}
	return 0;
}

/* The session args name, or NULL with the client answered when there is
 * no such session. */
static struct session *
cmd_session(struct daemon *d, struct control_client *c, json_object *args)
{
	struct session		*s;
	json_object		*v = NULL;
	const char		*name;

	json_object_object_get_ex(args, "session", &v);
	if (cmd_session_name(c, v, &name) == -1)
		return NULL;
	if ((s = session_find(d->sessions, name)) == NULL)
		cmd_error(c, PROTO_E_STATE, "session", "there is no session "
		    "%s (status lists them)", name);
	return s;
}

/* An answer of w has come: the reply once none is pending. */
static void
cmd_flush_done(struct cmd_flush *w)
{
	struct daemon	*d = w->d;
	size_t		 i;

	if (--w->pending > 0)
		return;
	for (i = 0; i < d->nr_flushes && d->flushes[i] != w; i++)
		;
	if (i < d->nr_flushes)
		d->flushes[i] = d->flushes[--d->nr_flushes];
	control_client_reply(w->c, proto_reply_ok(w->reply));
	free(w);
}

/* One session's answer to w: {"session", "flushed", "file",
 * "data_end"} or {"session", "flushed": false, "why"}. */
static void
cmd_flush_entry(struct cmd_flush *w, const char *session, const char *file,
    uint64_t bytes, const char *why)
{
	json_object	*e = json_object_new_object();

	json_object_object_add(e, "session", json_object_new_string(session));
	json_object_object_add(e, "flushed", json_object_new_boolean(file !=
	    NULL));
	if (file != NULL) {
		json_object_object_add(e, "file", json_object_new_string(file));
		proto_add_u64(e, "data_end", bytes);
	} else
		json_object_object_add(e, "why", json_object_new_string(why));
	json_object_array_add(w->list, e);
	cmd_flush_done(w);
}

/* A session's recording has its flush on disk (record_flushed_cb). */
static void
cmd_flushed(struct record *rec, const char *file, uint64_t bytes, void *arg)
{
	struct cmd_flush	*w = arg;
	struct session		*s = NULL;

	while ((s = session_next(w->d->sessions, s)) != NULL &&
	    session_record(s) != rec)
		;
	cmd_flush_entry(w, s != NULL ? session_name(s) : "?", file, bytes,
	    "the recording stopped or paused: what it held goes into the "
	    "file it finishes");
}

/*
 * flush: what the sessions hold goes into their current files, on disk
 * (record_flush); the reply lists each session asked with its file and
 * where its data ends there.
 */
static void
cmd_flush(struct daemon *d, struct control_client *c, json_object *args)
{
	struct cmd_flush	*w;
	struct session		*s = NULL, *one = NULL;
	json_object		*v = NULL;
	size_t			 n = 0;
	int			 rc;

	if (json_object_object_get_ex(args, "session", &v) &&
	    (one = cmd_session(d, c, args)) == NULL)
		return;
	if (d->nr_flushes == sizeof(d->flushes) / sizeof(d->flushes[0]) ||
	    (w = calloc(1, sizeof(*w))) == NULL) {
		cmd_error(c, PROTO_E_BUSY, NULL, "too many flushes wait; ask "
		    "again");
		return;
	}
	w->d = d;
	w->c = c;
	w->reply = json_object_new_object();
	w->list = json_object_new_array();
	json_object_object_add(w->reply, "sessions", w->list);
	d->flushes[d->nr_flushes++] = w;
	/* one answer more than asked until every session was asked, so
	 * that no answer replies before the last is asked */
	w->pending = 1;
	while ((s = one != NULL ? (n++ == 0 ? one : NULL) :
	    session_next(d->sessions, s)) != NULL) {
		if (record_state(session_record(s)) == RECORD_IDLE &&
		    one == NULL)
			continue;
		w->pending++;
		if ((rc = record_flush(session_record(s), cmd_flushed, w)) == 0)
			continue;
		cmd_flush_entry(w, session_name(s), NULL, 0, rc == 1 ?
		    "it writes no file now (idle, paused, a flight window in "
		    "memory, or stopping)" : "too many flushes wait");
	}
	cmd_flush_done(w);
}

/* The settings the recording in progress uses with cfg configured: cfg
 * with the start's one-off overrides on top. */
static void
cmd_settings_on(const struct daemon *d, const struct config *cfg,
    struct config *out)
{
	struct config_error	 err;

	*out = *cfg;
	/* all or nothing: on a (not expected) refusal out stays cfg */
	if (d->overrides != NULL &&
	    config_apply(out, d->overrides, CONFIG_REQUEST, &err, NULL) == -1)
		log_warnx("the start's settings no longer apply: %s", err.msg);
}

void
cmd_settings_changed(struct daemon *d)
{
	struct config	 eff;

	/* the default session's with its one-off settings; the on-demand
	 * ones take the daemon's retention from d->cfg */
	cmd_settings_on(d, &d->cfg, &eff);
	session_update(d->sessions, &eff);
}

int
cmd_settings_fit(struct daemon *d, const struct config *cfg,
    struct config_error *err)
{
	struct config	 eff;

	cmd_settings_on(d, cfg, &eff);
	return session_check_update(d->sessions, &eff, err);
}

/* What a start's "duration" says, in seconds: 0 and *secs, or -1 with
 * the client answered. */
static int
cmd_duration(struct control_client *c, json_object *v, uint64_t *secs)
{
	int64_t	 i;

	if (json_object_is_type(v, json_type_int)) {
		i = json_object_get_int64(v);
		*secs = i < 0 ? 0 : (uint64_t)i;
	} else if (!json_object_is_type(v, json_type_string) ||
	    size_parse_secs(json_object_get_string(v), secs) == -1) {
		cmd_error(c, json_object_is_type(v, json_type_string) ?
		    PROTO_E_BAD_VALUE : PROTO_E_BAD_TYPE, "duration",
		    "duration must be seconds, or a string such as \"30s\" "
		    "or \"5m\"");
		return -1;
	}
	if (*secs < 1 || *secs > SESSION_DURATION_MAX) {
		cmd_error(c, PROTO_E_BAD_VALUE, "duration", "duration must be "
		    "between 1 s and %d s (a week)", SESSION_DURATION_MAX);
		return -1;
	}
	return 0;
}

/*
 * Settings an on-demand session may not have of its own: retention is
 * one disk budget for every session (the daemon's), and so is the bound
 * that keeps snapshots from flooding it; and every recording's drain
 * thread runs at the daemon's one real-time priority, so that no
 * session's drain can starve another's. NULL, or the key.
 */
static const char *
cmd_session_refuses(json_object *settings)
{
	static const char	*keys[] = { "max_files", "max_size", "min_free",
				    "snapshot_interval", "realtime" };
	size_t			 i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_object_get_ex(settings, keys[i], NULL))
			return keys[i];
	return NULL;
}

/*
 * session_start, once more with frame pointers where the configured
 * call_graph compact cannot record what the start asks (a flight
 * window, a tracepoint, serial writes, compression: record.c says why)
 * and the start named no call graph itself: it is not refused for a
 * setting it never gave. The fallback joins the start's one-off
 * settings, so its reply ("overrides") and later configures show it.
 */
static int
cmd_session_start(struct daemon *d, const char *name, struct config *tmp,
    uint64_t duration, json_object *settings, struct config_error *err)
{
	struct config_error	 e2;
	json_object		*fp;
	char			 why[sizeof(err->msg)];

	if (session_start(d->sessions, name, tmp, duration, err) == 0)
		return 0;
	/* a refusal of what compact cannot record is a bad value; a worker
	 * that cannot start (a system error) is not fallen back from */
	if (tmp->callgraph != CONFIG_CG_COMPACT ||
	    err->code != PROTO_E_BAD_VALUE ||
	    strcmp(err->key, "call_graph") != 0 ||
	    json_object_object_get_ex(settings, "call_graph", NULL) ||
	    json_object_object_get_ex(settings, "callgraph", NULL))
		return -1;
	snprintf(why, sizeof(why), "%s", err->msg);
	fp = json_object_new_object();
	json_object_object_add(fp, "call_graph", json_object_new_string("fp"));
	if (config_apply(tmp, fp, CONFIG_REQUEST, &e2, NULL) == -1) {
		json_object_put(fp);
		return -1;
	}
	json_object_put(fp);
	if (session_start(d->sessions, name, tmp, duration, err) == -1)
		return -1;
	log_info("%s: the configured %s; this start records with call_graph "
	    "fp", name != NULL ? name : SESSION_DEFAULT, why);
	json_object_object_add(settings, "call_graph",
	    json_object_new_string("fp"));
	return 0;
}

/* An on-demand session's start: tmp is the configured settings with its
 * own on top. */
static void
cmd_start_session(struct daemon *d, struct control_client *c,
    const char *name, struct config *tmp, uint64_t duration,
    json_object *settings)
{
	struct config_error	 err;
	struct session		*s;
	json_object		*o;

	if (cmd_session_start(d, name, tmp, duration, settings, &err) == -1) {
		log_warnx("start of session %s refused: %s", name, err.msg);
		cmd_config_error(c, &err);
		return;
	}
	s = session_find(d->sessions, name);
	o = record_status(session_record(s));
	json_object_object_add(o, "session", json_object_new_string(name));
	session_add_end(s, o);
	if (json_object_object_length(settings) > 0)
		json_object_object_add(o, "overrides",
		    json_object_get(settings));
	control_client_reply(c, proto_reply_ok(o));
}

/*
 * Start. The settings in args apply on top of the configured ones, to
 * this recording only, as perf record's options do: a script's one-off
 * start (a flight recording, a higher rate) must not turn every later
 * plain start into one. "persist": true also keeps them as the
 * configured settings (as configure would). "session": NAME starts an
 * on-demand session beside the default one (its settings are always its
 * own: persist is refused there), ending after "duration".
 */
static void
cmd_start(struct daemon *d, struct control_client *c, json_object *args)
{
	struct config		 tmp = d->cfg;
	struct config_error	 err;
	json_object		*settings, *o, *dur = NULL;
	json_object_iter	 it;
	const char		*name = NULL, *key;
	uint64_t		 duration = 0;
	int			 persist = 0;

	settings = json_object_new_object();
	json_object_object_foreachC(args, it) {
		if (strcmp(it.key, "session") == 0) {
			if (cmd_session_name(c, it.val, &name) == -1)
				goto out;
			continue;
		}
		if (strcmp(it.key, "duration") == 0) {
			dur = it.val;
			continue;
		}
		if (strcmp(it.key, "persist") != 0) {
			json_object_object_add(settings, it.key,
			    json_object_get(it.val));
			continue;
		}
		if (!json_object_is_type(it.val, json_type_boolean)) {
			cmd_error(c, PROTO_E_BAD_TYPE, "persist", "persist must "
			    "be true or false");
			goto out;
		}
		persist = json_object_get_boolean(it.val);
	}
	if (dur != NULL && name == NULL) {
		cmd_error(c, PROTO_E_BAD_VALUE, "duration", "only an on-demand "
		    "session (\"session\": NAME) ends after a duration");
		goto out;
	}
	if (dur != NULL && cmd_duration(c, dur, &duration) == -1)
		goto out;
	if (name != NULL && persist) {
		cmd_error(c, PROTO_E_BAD_VALUE, "persist", "an on-demand "
		    "session's settings are its own; configure changes the "
		    "configured ones");
		goto out;
	}
	if (name != NULL && (key = cmd_session_refuses(settings)) != NULL) {
		cmd_error(c, PROTO_E_NOT_SETTABLE, key, "%s is the daemon's, "
		    "one for every session (%s); set it with configure", key,
		    strcmp(key, "realtime") == 0 ? "the drain threads' priority" :
		    "one disk budget");
		goto out;
	}
	if (config_apply(&tmp, settings, CONFIG_REQUEST, &err, NULL) == -1) {
		cmd_config_error(c, &err);
		goto out;
	}
	if (name != NULL) {
		cmd_start_session(d, c, name, &tmp, duration, settings);
		goto out;
	}
	if (cmd_session_start(d, NULL, &tmp, 0, settings, &err) == -1) {
		log_warnx("start refused: %s", err.msg);
		cmd_config_error(c, &err);
		goto out;
	}
	json_object_put(d->overrides);
	d->overrides = NULL;
	if (persist)
		d->cfg = tmp;
	if (!persist && json_object_object_length(settings) > 0)
		d->overrides = json_object_get(settings);
	o = record_status(d->rec);
	json_object_object_add(o, "session",
	    json_object_new_string(SESSION_DEFAULT));
	if (d->overrides != NULL)
		json_object_object_add(o, "overrides",
		    json_object_get(d->overrides));
	control_client_reply(c, proto_reply_ok(o));
out:
	json_object_put(settings);
}

/* What the stop did with a flight recording's window, for its reply's
 * "window"; NULL for a continuous recording. */
static const char *
cmd_window_words(const struct record *rec)
{
	switch (record_window_end(rec, NULL)) {
	case RECORD_WINDOW_WRITTEN:
		return "written";
	case RECORD_WINDOW_EMPTY:
		return "empty";
	case RECORD_WINDOW_DISCARDED:
		return "discarded";
	case RECORD_WINDOW_FAILED:
		return "lost";
	case RECORD_WINDOW_NONE:
		break;
	}
	return NULL;
}

/* Why a stop's window, which was to be written, is not in a file; NULL
 * when it is (or was not to be). */
static const char *
cmd_window_lost(const struct record *rec, const char *file)
{
	static char	 msg[512];
	const char	*why;

	switch (record_window_end(rec, &why)) {
	case RECORD_WINDOW_FAILED:
		snprintf(msg, sizeof(msg), "stopped, but the flight "
		    "recording's window could not be written: %s", why);
		return msg;
	case RECORD_WINDOW_WRITTEN:
		if (file != NULL)
			return NULL;
		return "stopped, but the flight recording's window could not "
		    "be finished as a file (see the daemon log)";
	default:
		return NULL;
	}
}

/* A session's recording has finished its last file: answer everyone who
 * waits for its stop. */
void
cmd_stopped(struct session *s, const char *file, void *arg)
{
	struct daemon	*d = arg;
	struct record	*rec = session_record(s);
	json_object	*o, *t;
	char		 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	const char	*problem, *we;
	size_t		 i = 0;

	while (i < d->nr_stop_waiters) {
		struct control_client	*c = d->stop_waiters[i].c;

		if (d->stop_waiters[i].s != s) {
			i++;
			continue;
		}
		d->stop_waiters[i] = d->stop_waiters[--d->nr_stop_waiters];
		/* stopped, but files were lost: say so, and not "ok" */
		if ((problem = record_problem(rec)) != NULL ||
		    (problem = cmd_window_lost(rec, file)) != NULL) {
			cmd_reply_after_files(d, c, proto_reply_error(
			    PROTO_E_SYSTEM, NULL, problem));
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "session",
		    json_object_new_string(session_name(s)));
		if ((we = cmd_window_words(rec)) != NULL)
			json_object_object_add(o, "window",
			    json_object_new_string(we));
		if (file != NULL) {
			snprintf(path, sizeof(path), "%s/%s", d->cfg.output_dir,
			    file);
			json_object_object_add(o, "file",
			    json_object_new_string(file));
			json_object_object_add(o, "path",
			    json_object_new_string(path));
		}
		if ((t = record_last_totals(rec)) != NULL)
			json_object_object_add(o, "totals", t);
		cmd_reply_after_files(d, c, proto_reply_ok(o));
	}
	/* they were the default recording's */
	if (!session_on_demand(s)) {
		json_object_put(d->overrides);
		d->overrides = NULL;
	}
	cmd_exit_when_done(d);
}

static void
cmd_stop(struct daemon *d, struct control_client *c, json_object *args)
{
	struct session	*s;
	json_object	*v = NULL;
	int		 discard = 0;

	if (json_object_object_get_ex(args, "discard", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			cmd_error(c, PROTO_E_BAD_TYPE, "discard", "discard must "
			    "be true or false");
			return;
		}
		discard = json_object_get_boolean(v);
	}
	if ((s = cmd_session(d, c, args)) == NULL)
		return;
	if (record_state(session_record(s)) == RECORD_IDLE) {
		cmd_error(c, PROTO_E_STATE, NULL, "not recording");
		return;
	}
	if (discard && !record_is_flight(session_record(s))) {
		cmd_error(c, PROTO_E_BAD_VALUE, "discard", "discard throws a "
		    "flight recording's window away; this recording's files "
		    "are written as it goes");
		return;
	}
	if (d->nr_stop_waiters == sizeof(d->stop_waiters) /
	    sizeof(d->stop_waiters[0])) {
		cmd_error(c, PROTO_E_BUSY, NULL, "too many clients wait for "
		    "the stop");
		return;
	}
	d->stop_waiters[d->nr_stop_waiters].c = c;
	d->stop_waiters[d->nr_stop_waiters++].s = s;
	control_client_defer(c);
	/* the reply comes from cmd_stopped, once every write is synced */
	if (record_state(session_record(s)) == RECORD_RUNNING)
		session_stop(s, discard);
}

/* A setting configured now replaces the start's one-off value of it: the
 * later, explicit word wins. freq and period are one choice. */
static void
cmd_drop_overrides(struct daemon *d, json_object *args)
{
	json_object_iter	 it;

	if (d->overrides == NULL)
		return;
	json_object_object_foreachC(args, it) {
		json_object_object_del(d->overrides, it.key);
		if (strcmp(it.key, "freq") == 0 || strcmp(it.key, "period") == 0) {
			json_object_object_del(d->overrides, "freq");
			json_object_object_del(d->overrides, "period");
		}
	}
	if (json_object_object_length(d->overrides) == 0) {
		json_object_put(d->overrides);
		d->overrides = NULL;
	}
}

static void
cmd_configure(struct daemon *d, struct control_client *c, json_object *args)
{
	struct config		 tmp = d->cfg, eff;
	struct config_error	 err;
	json_object		*changed, *o;

	if (json_object_object_length(args) == 0) {
		cmd_error(c, PROTO_E_BAD_REQUEST, NULL, "configure needs at "
		    "least one setting");
		return;
	}
	if (config_apply(&tmp, args, CONFIG_REQUEST, &err, &changed) == -1) {
		cmd_config_error(c, &err);
		return;
	}
	/* as start would refuse it; only when given: the kernel may have
	 * lowered its limit below a frequency set before */
	if (json_object_object_get_ex(args, "freq", NULL) &&
	    config_check_freq(&tmp, evsel_max_sample_rate(), &err) == -1) {
		json_object_put(changed);
		cmd_config_error(c, &err);
		return;
	}
	/* more cblocks for the recording in progress: held against the
	 * memory budget as a start is (the configured value wins over a
	 * one-off one) */
	if (json_object_object_get_ex(args, "cblocks", NULL)) {
		cmd_settings_on(d, &tmp, &eff);
		eff.cblocks = tmp.cblocks;
		if (session_check_update(d->sessions, &eff, &err) == -1) {
			json_object_put(changed);
			cmd_config_error(c, &err);
			return;
		}
	}
	d->cfg = tmp;
	cmd_drop_overrides(d, args);
	cmd_settings_changed(d);
	o = json_object_new_object();
	json_object_object_add(o, "recording", json_object_new_boolean(
	    record_state(d->rec) == RECORD_RUNNING));
	json_object_object_add(o, "applied", json_object_get(
	    json_object_object_get(changed, "live")));
	json_object_object_add(o, "next_start", json_object_get(
	    json_object_object_get(changed, "next_start")));
	json_object_put(changed);
	control_client_reply(c, proto_reply_ok(o));
}

static void
cmd_reload(struct daemon *d, struct control_client *c, json_object *args)
{
	struct config_error	 err;

	if (d->reload(d, &err) == -1) {
		cmd_config_error(c, &err);
		return;
	}
	control_client_reply(c, proto_reply_ok(config_to_json(&d->cfg, 1)));
}

/*
 * Rotate answers as stop does, once the file it finished is whole (every
 * write synced, renamed), so that the name it prints can be opened at
 * once. The waiter is registered before the rotation: a file with no
 * write in flight is finished within it.
 */
static void
cmd_rotate(struct daemon *d, struct control_client *c, json_object *args)
{
	struct session	*s;
	struct record	*rec;
	json_object	*o, *f;
	char		 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	const char	*cur;
	size_t		 w = d->nr_rotate_waiters;
	int		 wait;

	if ((s = cmd_session(d, c, args)) == NULL)
		return;
	rec = session_record(s);
	if (record_state(rec) != RECORD_RUNNING) {
		cmd_error(c, PROTO_E_STATE, NULL, "not recording");
		return;
	}
	if (record_is_flight(rec)) {
		if (session_on_demand(s))
			cmd_error(c, PROTO_E_STATE, NULL, "session %s is a "
			    "flight recording: it has no file to rotate; "
			    "'snapshot --session %s' writes its window",
			    session_name(s), session_name(s));
		else
			cmd_error(c, PROTO_E_STATE, NULL, "a flight recording "
			    "has no file to rotate: snapshot writes its window");
		return;
	}
	cur = record_file_name(rec);
	/* too many waiting: the reply names the file without waiting */
	wait = cur != NULL && strlen(cur) < sizeof(d->rotate_waiters[0].file) &&
	    w < sizeof(d->rotate_waiters) / sizeof(d->rotate_waiters[0]);
	if (wait) {
		d->rotate_waiters[w].c = c;
		d->rotate_waiters[w].reply = NULL;
		d->rotate_waiters[w].done = 0;
		snprintf(d->rotate_waiters[w].file,
		    sizeof(d->rotate_waiters[w].file), "%s", cur);
		d->nr_rotate_waiters++;
	}
	if (record_rotate(rec, "command", 1) == -1) {
		if (wait)
			cmd_drop_rotate_waiter(d, c);
		cmd_error(c, PROTO_E_SYSTEM, NULL, "cannot rotate now (paused, "
		    "or no new file could be created; see the daemon log)");
		return;
	}
	/* the new current file, as before; then the one being finished */
	o = record_status(rec);
	f = json_object_get(json_object_object_get(o, "file"));
	json_object_put(o);
	if (f == NULL)
		f = json_object_new_object();
	if (!wait) {
		control_client_reply(c, proto_reply_ok(f));
		return;
	}
	w = cmd_find_rotate_waiter(d, c);
	snprintf(path, sizeof(path), "%s/%s", d->cfg.output_dir,
	    d->rotate_waiters[w].file);
	json_object_object_add(f, "finished",
	    json_object_new_string(d->rotate_waiters[w].file));
	json_object_object_add(f, "finished_path",
	    json_object_new_string(path));
	cur = record_file_name(rec);
	if (d->rotate_waiters[w].done || (cur != NULL &&
	    strcmp(cur, d->rotate_waiters[w].file) == 0)) {
		/* whole already; or a switch being prepared will finish it
		 * later, and nobody should wait for that */
		json_object_object_add(f, "finished_whole",
		    json_object_new_boolean(d->rotate_waiters[w].done &&
		    d->rotate_waiters[w].whole));
		cmd_drop_rotate_waiter(d, c);
		control_client_reply(c, proto_reply_ok(f));
		return;
	}
	d->rotate_waiters[w].reply = f;
	control_client_defer(c);
}

/*
 * A flight recording's window as a file. Answers as rotate does, once
 * the file is whole; its name is known at once, so the waiter is
 * registered after the snapshot began (a file already whole then, its
 * preamble built in the loop for want of a thread, is answered now).
 */
static void
cmd_snapshot(struct daemon *d, struct control_client *c, json_object *args)
{
	struct config_error	 err;
	struct session		*s;
	struct record		*rec;
	json_object		*o;
	const char		*name, *fl;
	char			 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	size_t			 w = d->nr_rotate_waiters;

	if ((s = cmd_session(d, c, args)) == NULL)
		return;
	rec = session_record(s);
	if (record_snapshot(rec, "command", &name, &err) == -1) {
		/* the default asked, a flight session beside it: name it */
		if (!session_on_demand(s) && !record_is_flight(rec) &&
		    (fl = session_flight_name(d->sessions)) != NULL)
			snprintf(err.msg + strlen(err.msg), sizeof(err.msg) -
			    strlen(err.msg), "; session %s is a flight "
			    "recording: snapshot --session %s", fl, fl);
		cmd_config_error(c, &err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "session",
	    json_object_new_string(session_name(s)));
	snprintf(path, sizeof(path), "%s/%s", d->cfg.output_dir, name);
	json_object_object_add(o, "finished", json_object_new_string(name));
	json_object_object_add(o, "finished_path",
	    json_object_new_string(path));
	if (faccessat(d->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	    strlen(name) >= sizeof(d->rotate_waiters[0].file) ||
	    w == sizeof(d->rotate_waiters) / sizeof(d->rotate_waiters[0])) {
		json_object_object_add(o, "finished_whole",
		    json_object_new_boolean(faccessat(d->dirfd, name, F_OK,
		    AT_SYMLINK_NOFOLLOW) == 0));
		control_client_reply(c, proto_reply_ok(o));
		return;
	}
	d->rotate_waiters[w].c = c;
	d->rotate_waiters[w].reply = o;
	d->rotate_waiters[w].done = 0;
	snprintf(d->rotate_waiters[w].file, sizeof(d->rotate_waiters[w].file),
	    "%s", name);
	d->nr_rotate_waiters++;
	control_client_defer(c);
}

/*
 * End the daemon as SIGTERM does. The reply goes out first; the client
 * then waits for the connection to close, which happens at the exit,
 * once the last file is whole.
 */
static void
cmd_shutdown(struct daemon *d, struct control_client *c, json_object *args)
{
	json_object	*o = json_object_new_object();

	log_info("shutdown requested by uid %d", (int)control_client_uid(c));
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "recording", json_object_new_boolean(
	    session_busy(d->sessions) > 0));
	control_client_reply(c, proto_reply_ok(o));
	/* no more requests from it; kept past idle timeouts until the exit */
	control_client_defer(c);
	d->shutdown(d);
}

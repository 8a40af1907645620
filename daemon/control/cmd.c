/*
 * cmd: the handlers of the control commands (see cmd.h); which commands
 * exist, who may run them and whether they take args is common/command.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "command.h"
#include "control.h"
#include "daemon.h"
#include "exporter.h"
#include "handoff.h"
#include "log.h"
#include "paths.h"
#include "proto.h"
#include "record.h"

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
static void	cmd_metrics(struct daemon *, struct control_client *,
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
	if (e->args == COMMAND_ARGS_NONE &&
	    json_object_object_length(args) > 0) {
		struct lh_entry	*first = json_object_get_object(args)->head;
		const char	*key = first ? (const char *)first->k : "?";

		cmd_error(c, PROTO_E_UNKNOWN_KEY, key, "'%s' takes no "
		    "arguments (got '%.64s')", e->name, key);
		return;
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

void
cmd_client_gone(struct daemon *d, struct control_client *c)
{
	size_t	 i;

	for (i = 0; i < d->nr_stop_waiters; i++) {
		if (d->stop_waiters[i] != c)
			continue;
		d->stop_waiters[i] = d->stop_waiters[--d->nr_stop_waiters];
		break;
	}
	cmd_drop_rotate_waiter(d, c);
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
	json_object	*o = record_status(d->rec);

	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "version",
	    json_object_new_string(PERFSPILL_VERSION));
	json_object_object_add(o, "output_dir",
	    json_object_new_string(d->cfg.output_dir));
	json_object_object_add(o, "clients",
	    json_object_new_int(control_nclients(d->ctl)));
	json_object_object_add(o, "config", config_to_json(&d->cfg, 0));
	json_object_object_add(o, "handoffs", handoff_status(d->handoff));
	if (d->overrides != NULL && record_state(d->rec) != RECORD_IDLE)
		json_object_object_add(o, "overrides",
		    json_object_get(d->overrides));
	control_client_reply(c, proto_reply_ok(o));
}

void
cmd_settings(const struct daemon *d, struct config *out)
{
	struct config_error	 err;

	*out = d->cfg;
	/* all or nothing: on a (not expected) refusal out stays cfg */
	if (d->overrides != NULL &&
	    config_apply(out, d->overrides, CONFIG_REQUEST, &err, NULL) == -1)
		log_warnx("the start's settings no longer apply: %s", err.msg);
}

void
cmd_settings_changed(struct daemon *d)
{
	struct config	 eff;

	if (record_state(d->rec) != RECORD_RUNNING)
		return;
	cmd_settings(d, &eff);
	record_update(d->rec, &eff);
}

/*
 * Start. The settings in args apply on top of the configured ones; with
 * "persist": false (what perfspillctl sends) they apply to this recording
 * only, as perf record's options do; without it, as protocol clients
 * before it expect, they are also kept as the configured settings.
 */
static void
cmd_start(struct daemon *d, struct control_client *c, json_object *args)
{
	struct config		 tmp = d->cfg;
	struct config_error	 err;
	json_object		*settings, *o;
	json_object_iter	 it;
	int			 persist = 1;

	settings = json_object_new_object();
	json_object_object_foreachC(args, it) {
		if (strcmp(it.key, "persist") != 0) {
			json_object_object_add(settings, it.key,
			    json_object_get(it.val));
			continue;
		}
		if (!json_object_is_type(it.val, json_type_boolean)) {
			json_object_put(settings);
			cmd_error(c, PROTO_E_BAD_TYPE, "persist", "persist must "
			    "be true or false");
			return;
		}
		persist = json_object_get_boolean(it.val);
	}
	if (config_apply(&tmp, settings, CONFIG_REQUEST, &err, NULL) == -1) {
		json_object_put(settings);
		cmd_config_error(c, &err);
		return;
	}
	if (record_start(d->rec, &tmp, &err) == -1) {
		json_object_put(settings);
		log_warnx("start refused: %s", err.msg);
		cmd_config_error(c, &err);
		return;
	}
	json_object_put(d->overrides);
	d->overrides = NULL;
	if (persist)
		d->cfg = tmp;
	if (!persist && json_object_object_length(settings) > 0)
		d->overrides = settings;
	else
		json_object_put(settings);
	o = record_status(d->rec);
	if (d->overrides != NULL)
		json_object_object_add(o, "overrides",
		    json_object_get(d->overrides));
	control_client_reply(c, proto_reply_ok(o));
}

/* The record has finished its last file: answer everyone who waits. */
void
cmd_stopped(struct record *rec, const char *file, void *arg)
{
	struct daemon	*d = arg;
	json_object	*o, *t;
	char		 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	const char	*problem;

	while (d->nr_stop_waiters > 0) {
		/* stopped, but files were lost: say so, and not "ok" */
		if ((problem = record_problem(rec)) != NULL) {
			control_client_reply(
			    d->stop_waiters[--d->nr_stop_waiters],
			    proto_reply_error(PROTO_E_SYSTEM, NULL, problem));
			continue;
		}
		o = json_object_new_object();
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
		control_client_reply(d->stop_waiters[--d->nr_stop_waiters],
		    proto_reply_ok(o));
	}
	/* they were this recording's */
	json_object_put(d->overrides);
	d->overrides = NULL;
	if (d->exiting)
		event_base_loopexit(d->base, NULL);
}

static void
cmd_stop(struct daemon *d, struct control_client *c, json_object *args)
{
	if (record_state(d->rec) == RECORD_IDLE) {
		cmd_error(c, PROTO_E_STATE, NULL, "not recording");
		return;
	}
	if (d->nr_stop_waiters == sizeof(d->stop_waiters) /
	    sizeof(d->stop_waiters[0])) {
		cmd_error(c, PROTO_E_BUSY, NULL, "too many clients wait for "
		    "the stop");
		return;
	}
	d->stop_waiters[d->nr_stop_waiters++] = c;
	control_client_defer(c);
	/* the reply comes from cmd_stopped, once every write is synced */
	if (record_state(d->rec) == RECORD_RUNNING)
		record_stop(d->rec, cmd_stopped, d);
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
	struct config		 tmp = d->cfg;
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

	if (daemon_reload(d, &err) == -1) {
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
	json_object	*o, *f;
	char		 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	const char	*cur;
	size_t		 w = d->nr_rotate_waiters;
	int		 wait;

	if (record_state(d->rec) != RECORD_RUNNING) {
		cmd_error(c, PROTO_E_STATE, NULL, "not recording");
		return;
	}
	cur = record_file_name(d->rec);
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
	if (record_rotate(d->rec, "command") == -1) {
		if (wait)
			cmd_drop_rotate_waiter(d, c);
		cmd_error(c, PROTO_E_SYSTEM, NULL, "cannot rotate now (paused, "
		    "or no new file could be created; see the daemon log)");
		return;
	}
	/* the new current file, as before; then the one being finished */
	o = record_status(d->rec);
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
	cur = record_file_name(d->rec);
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
	    record_state(d->rec) != RECORD_IDLE));
	control_client_reply(c, proto_reply_ok(o));
	/* no more requests from it; kept past idle timeouts until the exit */
	control_client_defer(c);
	if (!d->exiting)
		daemon_shutdown(d);
}

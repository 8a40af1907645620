/*
 * cmd: the control command table and its handlers (see cmd.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "control.h"
#include "daemon.h"
#include "log.h"
#include "paths.h"
#include "proto.h"
#include "record.h"

struct cmd_entry {
	const char	*name;
	void		(*exec)(struct daemon *, struct control_client *,
			    json_object *);
	int		 privileged;	/* changes state: root or control group */
	int		 takes_args;	/* accepts settings in args */
};

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

static const struct cmd_entry cmd_table[] = {
	{ "ping",	cmd_ping,	0, 0 },
	{ "version",	cmd_version,	0, 0 },
	{ "status",	cmd_status,	0, 0 },
	{ "start",	cmd_start,	1, 1 },
	{ "stop",	cmd_stop,	1, 0 },
	{ "configure",	cmd_configure,	1, 1 },
	{ "rotate",	cmd_rotate,	1, 0 },
	{ "reload",	cmd_reload,	1, 0 },
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
	const struct cmd_entry	*e = NULL;
	size_t			 i;

	for (i = 0; i < sizeof(cmd_table) / sizeof(cmd_table[0]); i++)
		if (strcmp(cmd_table[i].name, name) == 0)
			e = &cmd_table[i];
	if (e == NULL) {
		cmd_error(c, PROTO_E_UNKNOWN_COMMAND, NULL, "unknown command "
		    "'%.64s' (ping, version, status, start, stop, configure, "
		    "rotate, reload)", name);
		return;
	}
	if (e->privileged && !control_client_privileged(c)) {
		log_info("refused '%s' from uid %d: not privileged", e->name,
		    (int)control_client_uid(c));
		cmd_error(c, PROTO_E_PERMISSION, NULL, "'%s' changes the "
		    "recorder and needs root or a control group member (uid "
		    "%d is neither)", e->name, (int)control_client_uid(c));
		return;
	}
	if (!e->takes_args && json_object_object_length(args) > 0) {
		struct lh_entry	*first = json_object_get_object(args)->head;
		const char	*key = first ? (const char *)first->k : "?";

		cmd_error(c, PROTO_E_UNKNOWN_KEY, key, "'%s' takes no "
		    "arguments (got '%.64s')", e->name, key);
		return;
	}
	e->exec(d, c, args);
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
	control_client_reply(c, proto_reply_ok(o));
}

static void
cmd_start(struct daemon *d, struct control_client *c, json_object *args)
{
	struct config		 tmp = d->cfg;
	struct config_error	 err;
	json_object		*o;

	if (config_apply(&tmp, args, CONFIG_REQUEST, &err, NULL) == -1) {
		cmd_config_error(c, &err);
		return;
	}
	if (record_start(d->rec, &tmp, &err) == -1) {
		log_warnx("start refused: %s", err.msg);
		cmd_config_error(c, &err);
		return;
	}
	d->cfg = tmp;
	o = record_status(d->rec);
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
	if (record_state(d->rec) == RECORD_RUNNING)
		record_update(d->rec, &d->cfg);
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

static void
cmd_rotate(struct daemon *d, struct control_client *c, json_object *args)
{
	json_object	*o;

	if (record_state(d->rec) != RECORD_RUNNING) {
		cmd_error(c, PROTO_E_STATE, NULL, "not recording");
		return;
	}
	if (record_rotate(d->rec, "command") == -1) {
		cmd_error(c, PROTO_E_SYSTEM, NULL, "cannot rotate now (paused, "
		    "or no new file could be created; see the daemon log)");
		return;
	}
	o = record_status(d->rec);
	control_client_reply(c, proto_reply_ok(json_object_get(
	    json_object_object_get(o, "file"))));
	json_object_put(o);
}

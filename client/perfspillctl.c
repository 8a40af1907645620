/*
 * perfspillctl: the control client of perfspilld. Turns a command line
 * into one JSON request (docs/protocol.md), prints the reply for people
 * or, with --json, as JSON for scripts. The commands, their usage and
 * help come from common/command.c; start's options from the config keys.
 *
 * Exit codes: 0 ok, 1 the daemon refused the request, 2 usage error,
 * 3 cannot reach the daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "paths.h"
#include "proto.h"
#include "size.h"

#define EXIT_REFUSED	1
#define EXIT_USAGE	2
#define EXIT_CONNECT	3
#define REPLY_MAX	(16 * 1024 * 1024)

struct ctl {
	const char	*socket;
	int		 json;
	int		 fd;
};

/*
 * start's options, one per request key of the config schema: the long
 * name is the key with '-' for '_', booleans also take --no-KEY; the short
 * letter, another long name and the help come from the key's row.
 */
struct ctl_opt {
	struct config_keyinfo	 key;
	char			 lname[CONFIG_NAME_LEN];
};

#define CTL_MAX_OPTS	64
#define CTL_OPT_ON	0x100	/* getopt values: key index + these */
#define CTL_OPT_OFF	0x200
#define CTL_OPT_SESSION	0x300	/* start --session, --duration */
#define CTL_OPT_DURATION 0x301

static size_t
ctl_opts(struct ctl_opt *out, size_t max)
{
	struct config_keyinfo	 k;
	size_t			 i, n = 0;
	char			*s;

	for (i = 0; config_key_at(i, &k) == 0 && n < max; i++) {
		if (k.when == CONFIG_DAEMON)
			continue;
		out[n].key = k;
		snprintf(out[n].lname, sizeof(out[n].lname), "%s", k.name);
		for (s = out[n].lname; *s; s++)
			if (*s == '_')
				*s = '-';
		n++;
	}
	return n;
}

/* What kind of value a settings key takes; VALUE for unknown keys (the
 * daemon names those). */
static enum config_kind
ctl_key_kind(const char *key)
{
	struct config_keyinfo	 k;

	return config_key_info(key, &k) == 0 ? k.kind : CONFIG_KIND_VALUE;
}

static void
ctl_print_opts(FILE *f)
{
	struct ctl_opt		 o[CTL_MAX_OPTS];
	const struct config_keyinfo *k;
	const char		*h, *nl;
	char			 left[96];
	size_t			 i, n = ctl_opts(o, CTL_MAX_OPTS);
	int			 w;

	for (i = 0; i < n; i++) {
		k = &o[i].key;
		w = snprintf(left, sizeof(left), "  %s%c%s--%s%s%s%s%s",
		    k->opt ? "-" : " ", k->opt ? k->opt : ' ',
		    k->opt ? ", " : "  ", o[i].lname, k->alias ? ", --" : "",
		    k->alias ? k->alias : "",
		    k->kind == CONFIG_KIND_BOOL ? "" : " ",
		    k->kind == CONFIG_KIND_BOOL ? "" :
		    k->metavar ? k->metavar : "VALUE");
		h = k->help ? k->help : "see perfspilld.json(5)";
		for (;;) {
			nl = strchr(h, '\n');
			if (w > 30) {
				fprintf(f, "%s\n", left);
				left[0] = '\0';
				w = 0;
			}
			fprintf(f, "%-30s %.*s\n", left,
			    nl ? (int)(nl - h) : (int)strlen(h), h);
			left[0] = '\0';
			w = 0;
			if (nl == NULL)
				break;
			h = nl + 1;
		}
	}
}

static void
usage(FILE *f)
{
	const struct command	*c;
	char			 left[64];
	size_t			 i;

	fprintf(f, "usage: perfspillctl [-s PATH] [--json] COMMAND [ARGS]\n"
	    "\nCommands (perfspillctl COMMAND --help for each):\n");
	for (i = 0; i < COMMAND__COUNT; i++) {
		c = &command_table[i];
		snprintf(left, sizeof(left), "  %s %s", c->name, c->usage);
		if (strlen(left) > 28)
			fprintf(f, "%s\n%-28s %s\n", left, "", c->summary);
		else
			fprintf(f, "%-28s %s\n", left, c->summary);
	}
	fprintf(f, "\nStart options (one-off: this recording only; the keys "
	    "of configure):\n");
	ctl_print_opts(f);
	fprintf(f,
"\n"
"Options:\n"
"  -s, --socket PATH  control socket (default $PERFSPILL_SOCKET or %s)\n"
"      --json         print the daemon's reply as JSON\n"
"  -h, --help         this help\n"
"\n"
"Exit status: 0 ok, 1 refused by the daemon, 2 usage error,\n"
"3 cannot reach the daemon.\n", PERFSPILL_SOCKET);
}

/* Per-command help: perfspillctl COMMAND --help. */
static int
ctl_cmd_help(const struct command *c)
{
	printf("usage: perfspillctl %s%s%s\n%s", c->name, *c->usage ? " " : "",
	    c->usage, c->help);
	if (c->id == COMMAND_START) {
		printf("\nOptions:\n");
		ctl_print_opts(stdout);
	}
	return 0;
}

static int
ctl_connect(struct ctl *ctl)
{
	struct sockaddr_un	 sun;

	if (strlen(ctl->socket) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "perfspillctl: socket path too long\n");
		return -1;
	}
	if ((ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", ctl->socket);
	if (connect(ctl->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "perfspillctl: cannot connect to %s: %s\n",
		    ctl->socket, strerror(errno));
		if (errno == ENOENT || errno == ECONNREFUSED)
			fprintf(stderr, "Is perfspilld running? Start it with "
			    "'systemctl start perfspilld' (or 'perfspilld -f'),\n"
			    "or point -s / PERFSPILL_SOCKET at its socket.\n");
		else if (errno == EACCES)
			fprintf(stderr, "Reading status needs membership in "
			    "the socket's group (perfspill).\n");
		close(ctl->fd);
		ctl->fd = -1;
		return -1;
	}
	return 0;
}

/* Send one request, read one reply line. NULL on a transport error. */
static json_object *
ctl_call(struct ctl *ctl, const char *cmd, json_object *args)
{
	json_object	*req = proto_request(cmd, args), *rep;
	char		*msg, *buf = NULL, *nl;
	size_t		 len, have = 0, cap = 0;
	ssize_t		 n;
	int		 send_errno = 0;

	msg = proto_serialize(req, &len);
	json_object_put(req);
	if (msg == NULL)
		return NULL;
	if (len > PROTO_MAX_MSG) {
		fprintf(stderr, "perfspillctl: request too large\n");
		free(msg);
		return NULL;
	}
	if (send(ctl->fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len) {
		/* a daemon that cannot serve us (busy) answers and closes
		 * before reading: its answer is still there to read */
		send_errno = errno;
		if (send_errno != EPIPE && send_errno != ECONNRESET) {
			fprintf(stderr, "perfspillctl: send: %s\n",
			    strerror(send_errno));
			free(msg);
			return NULL;
		}
	}
	free(msg);
	for (;;) {
		if (have + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > REPLY_MAX || (buf = realloc(buf, cap)) == NULL) {
				fprintf(stderr, "perfspillctl: reply too large\n");
				free(buf);
				return NULL;
			}
		}
		n = read(ctl->fd, buf + have, cap - have - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 && send_errno != 0)
			fprintf(stderr, "perfspillctl: send: %s\n",
			    strerror(send_errno));
		else if (n <= 0)
			fprintf(stderr, "perfspillctl: the daemon closed the "
			    "connection%s%s\n", n ? ": " : "",
			    n ? strerror(errno) : "");
		if (n <= 0) {
			free(buf);
			return NULL;
		}
		have += (size_t)n;
		buf[have] = '\0';
		if ((nl = memchr(buf, '\n', have)) != NULL) {
			*nl = '\0';
			break;
		}
	}
	rep = json_tokener_parse(buf);
	free(buf);
	if (rep == NULL)
		fprintf(stderr, "perfspillctl: malformed reply\n");
	return rep;
}

static const char *
jstr(json_object *o, const char *k)
{
	json_object	*v;

	if (o && json_object_object_get_ex(o, k, &v))
		return json_object_get_string(v);
	return "";
}

static uint64_t
ju64(json_object *o, const char *k)
{
	json_object	*v;

	if (o && json_object_object_get_ex(o, k, &v))
		return json_object_get_uint64(v);
	return 0;
}

static json_object *
jget(json_object *o, const char *k)
{
	json_object	*v;

	if (o && json_object_object_get_ex(o, k, &v))
		return v;
	return NULL;
}


/* A size or duration as one would type it (256M, 1h), exactly. */
static void
ctl_unit(uint64_t n, enum config_kind kind, char *buf, size_t len)
{
	static const char	 sizes[] = "KMGT";
	static const struct {
		uint64_t	 secs;
		char		 c;
	} t[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' } };
	uint64_t		 u;
	int			 i;

	for (i = 4; n != 0 && kind == CONFIG_KIND_SIZE && i > 0; i--) {
		u = UINT64_C(1) << (10 * i);
		if (n % u == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", n / u, sizes[i - 1]);
			return;
		}
	}
	for (i = 0; n != 0 && kind == CONFIG_KIND_SECS && i < 3; i++) {
		if (n % t[i].secs == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", n / t[i].secs,
			    t[i].c);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, n);
}

/* A setting's value as text: strings bare, lists comma separated, sizes
 * and durations with their unit. */
static void
ctl_value(const char *key, json_object *v, char *buf, size_t len)
{
	enum config_kind	 kind = ctl_key_kind(key);
	size_t			 i, n = 0;
	int			 r;

	buf[0] = '\0';
	if ((kind == CONFIG_KIND_SIZE || kind == CONFIG_KIND_SECS) &&
	    json_object_is_type(v, json_type_int)) {
		ctl_unit(json_object_get_uint64(v), kind, buf, len);
		return;
	}
	if (!json_object_is_type(v, json_type_array)) {
		snprintf(buf, len, "%s", json_object_get_string(v));
		return;
	}
	for (i = 0; i < json_object_array_length(v); i++) {
		r = snprintf(buf + n, len - n, "%s%s", i ? "," : "",
		    json_object_get_string(json_object_array_get_idx(v, i)));
		if (r < 0 || (size_t)r >= len - n)
			break;
		n += (size_t)r;
	}
}

/* "label KEY=VALUE KEY=VALUE ..." wrapped; keys in mark get a '*'. */
static void
print_settings(const char *label, json_object *s, json_object *mark)
{
	json_object_iter	 it;
	char			 v[512], word[640];
	size_t			 col = 12, w;
	int			 first = 1;

	if (s == NULL)
		return;
	printf("%-12s", label);
	json_object_object_foreachC(s, it) {
		ctl_value(it.key, it.val, v, sizeof(v));
		snprintf(word, sizeof(word), "%s=%s%s", it.key, v,
		    jget(mark, it.key) ? "*" : "");
		w = strlen(word);
		if (!first && col + 1 + w > 78) {
			printf("\n%-12s", "");
			col = 12;
		} else if (!first) {
			putchar(' ');
			col++;
		}
		fputs(word, stdout);
		col += w;
		first = 0;
	}
	putchar('\n');
}

/* Which settings the recording in progress uses, and where the
 * configured ones differ (all of them when idle). */
static void
print_status_settings(json_object *d)
{
	json_object		*over = jget(d, "overrides");
	json_object		*run = jget(d, "settings"), *cfg = jget(d, "config");
	json_object		*diff;
	json_object_iter	 it;

	if (run == NULL) {
		print_settings("configured:", cfg, NULL);
		return;
	}
	print_settings("recording:", run, over);
	if (over != NULL)
		printf("%-12s(* one-off: this recording only)\n", "");
	diff = json_object_new_object();
	json_object_object_foreachC(cfg, it) {
		if (!json_object_equal(it.val, jget(run, it.key)))
			json_object_object_add(diff, it.key,
			    json_object_get(it.val));
	}
	if (json_object_object_length(diff) > 0)
		print_settings("configured:", diff, NULL);
	else
		printf("%-12s%s\n", "configured:", "the same");
	json_object_put(diff);
}

/* The on_finish hand-off, when one is configured. */
static void
print_status_handoffs(json_object *d)
{
	json_object	*h = jget(d, "handoffs");

	if (h == NULL || *jstr(h, "program") == '\0')
		return;
	printf("hand-off:   %" PRIu64 " running, %" PRIu64 " queued, %" PRIu64
	    " retrying; %" PRIu64 " ok, %" PRIu64 " failed (%" PRIu64
	    " timed out), %" PRIu64 " given up\n", ju64(h, "running"),
	    ju64(h, "queued"), ju64(h, "retrying"), ju64(h, "ok"),
	    ju64(h, "failed"), ju64(h, "timed_out"), ju64(h, "gave_up"));
}

/* Every session in a line, and the memory budget they share. */
static void
print_status_sessions(json_object *d)
{
	json_object	*a = jget(d, "sessions"), *s, *t, *m = jget(d, "memory");
	char		 b1[32], b2[32], ends[32];
	size_t		 i, n = a ? json_object_array_length(a) : 0;
	int64_t		 left;

	if (n == 0)
		return;
	printf("\n%-12s %-10s %10s %8s %10s %8s  %s\n", "SESSION", "STATE",
	    "samples", "lost", "memory", "ends in", "file");
	for (i = 0; i < n; i++) {
		s = json_object_array_get_idx(a, i);
		t = jget(s, "totals");
		snprintf(ends, sizeof(ends), "-");
		if (jget(s, "ends") != NULL) {
			left = json_object_get_int64(jget(s, "ends")) -
			    (int64_t)time(NULL);
			snprintf(ends, sizeof(ends), "%" PRId64 " s",
			    left > 0 ? left : 0);
		}
		printf("%-12s %-10s %10" PRIu64 " %8" PRIu64 " %10s %8s  %s\n",
		    jstr(s, "name"), *jstr(s, "paused") ? "paused" :
		    jstr(s, "state"), ju64(t, "samples"), ju64(t, "lost") +
		    ju64(t, "lost_samples"), jget(s, "memory") ?
		    size_format(ju64(jget(s, "memory"), "total"), b1,
		    sizeof(b1)) : "-", ends, jstr(jget(s, "file"), "name"));
	}
	if (m != NULL)
		printf("memory:     %s held of a budget of %s (%s); at most "
		    "%" PRIu64 " on-demand session(s)\n", size_format(ju64(m,
		    "held"), b1, sizeof(b1)), size_format(ju64(m, "budget"),
		    b2, sizeof(b2)), jstr(m, "budget_from"),
		    ju64(m, "max_sessions"));
}

static void
print_status(json_object *d, json_object *prev, double dt)
{
	json_object	*t = jget(d, "totals"), *cpus = jget(d, "cpus"), *c;
	json_object	*f = jget(d, "file"), *pt = jget(prev, "totals");
	char		 b1[32], b2[32], b3[32];
	size_t		 i, n;
	double		 up = (double)ju64(d, "uptime"), rate, brate;

	printf("state:      %s\n", jstr(d, "state"));
	if (*jstr(d, "paused"))
		printf("paused:     %s\n", jstr(d, "paused"));
	printf("output dir: %s\n", jstr(d, "output_dir"));
	print_status_handoffs(d);
	if (t == NULL) {
		if (*jstr(d, "last_file"))
			printf("last file:  %s\n", jstr(d, "last_file"));
		print_status_settings(d);
		print_status_sessions(d);
		return;
	}
	if (pt != NULL && dt > 0) {
		rate = (double)(ju64(t, "samples") - ju64(pt, "samples")) / dt;
		brate = (double)(ju64(t, "bytes") - ju64(pt, "bytes")) / dt;
	} else {
		rate = up > 0 ? (double)ju64(t, "samples") / up : 0;
		brate = up > 0 ? (double)ju64(t, "bytes") / up : 0;
	}
	printf("uptime:     %" PRIu64 " s\n", ju64(d, "uptime"));
	printf("samples:    %" PRIu64 " (%.0f/s)   records %" PRIu64 "\n",
	    ju64(t, "samples"), rate, ju64(t, "records"));
	printf("data:       %s (%s/s)\n", size_format(ju64(t, "bytes"), b1,
	    sizeof(b1)), size_format((uint64_t)brate, b2, sizeof(b2)));
	printf("lost:       %" PRIu64 " events, %" PRIu64 " samples; %s "
	    "dropped\n", ju64(t, "lost"), ju64(t, "lost_samples"),
	    size_format(ju64(t, "bytes_dropped"), b3, sizeof(b3)));
	if (f != NULL)
		printf("file:       %s (%s, %" PRIu64 " samples)\n",
		    jstr(f, "name"), size_format(ju64(f, "bytes"), b1,
		    sizeof(b1)), ju64(f, "samples"));
	printf("finished:   %" PRIu64 " file(s) this run\n",
	    ju64(t, "files_finished"));
	printf("\n%4s %12s %10s %8s %8s %9s %9s %6s %6s\n", "CPU", "bytes",
	    "samples", "lost", "lostsmp", "aio-fly", "aio-done", "resub",
	    "fail");
	n = cpus ? json_object_array_length(cpus) : 0;
	for (i = 0; i < n; i++) {
		c = json_object_array_get_idx(cpus, i);
		printf("%4" PRIu64 " %12s %10" PRIu64 " %8" PRIu64 " %8" PRIu64
		    " %9" PRIu64 " %9" PRIu64 " %6" PRIu64 " %6" PRIu64 "\n",
		    ju64(c, "cpu"), size_format(ju64(c, "bytes"), b1,
		    sizeof(b1)), ju64(c, "samples"), ju64(c, "lost"),
		    ju64(c, "lost_samples"), ju64(c, "aio_inflight"),
		    ju64(c, "aio_completed"), ju64(c, "aio_resubmitted"),
		    ju64(c, "aio_failed"));
	}
	if ((f = jget(d, "flight")) != NULL)
		printf("flight:     window %s (%" PRIu64 " s, at most %s), "
		    "%" PRIu64 " snapshot(s)%s%s\n", size_format(ju64(f,
		    "bytes"), b1, sizeof(b1)), ju64(f, "window"),
		    size_format(ju64(f, "window_bytes"), b2, sizeof(b2)),
		    ju64(f, "snapshots"), *jstr(f, "last_snapshot") ?
		    ", last " : "", jstr(f, "last_snapshot"));
	putchar('\n');
	print_status_settings(d);
	print_status_sessions(d);
}

/* label, then the keys of the array a, comma separated; nothing when a
 * is empty or missing. */
static void
print_keys(const char *label, json_object *a)
{
	size_t	 i, n = a ? json_object_array_length(a) : 0;

	if (n == 0)
		return;
	printf("%s", label);
	for (i = 0; i < n; i++)
		printf("%s%s", i ? ", " : " ", json_object_get_string(
		    json_object_array_get_idx(a, i)));
	putchar('\n');
}

/* Print a reply; returns the exit code. */
static int
ctl_print(struct ctl *ctl, const struct command *c, json_object *rep,
    json_object *prev, double dt)
{
	json_object	*err = jget(rep, "error"), *d = jget(rep, "data");
	json_object_iter it;
	char		 v[512];

	if (ctl->json) {
		printf("%s\n", json_object_to_json_string_ext(rep,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		return err ? EXIT_REFUSED : 0;
	}
	if (err != NULL || !json_object_get_boolean(jget(rep, "ok"))) {
		fprintf(stderr, "perfspillctl: %s refused: %s [%s%s%s]\n",
		    c->name, jstr(err, "message"), jstr(err, "code"),
		    *jstr(err, "key") ? ", key " : "", jstr(err, "key"));
		return EXIT_REFUSED;
	}
	switch (c->id) {
	case COMMAND_STATUS:
		print_status(d, prev, dt);
		break;
	case COMMAND_STOP:
		if (*jstr(d, "session") && strcmp(jstr(d, "session"),
		    "default") != 0)
			printf("session %s: ", jstr(d, "session"));
		if (*jstr(d, "path"))
			printf("stopped; trace file: %s\nread it with: perf "
			    "report -i %s\n", jstr(d, "path"), jstr(d, "path"));
		else
			printf("stopped; no file was finished\n");
		break;
	case COMMAND_START:
		if (*jstr(d, "session") && strcmp(jstr(d, "session"),
		    "default") != 0)
			printf("session %s: ", jstr(d, "session"));
		if (jget(d, "file") != NULL)
			printf("recording into %s\n",
			    jstr(jget(d, "file"), "name"));
		else
			printf("flight recording: nothing is written until a "
			    "snapshot\n");
		if (jget(d, "overrides") != NULL)
			print_settings("one-off:", jget(d, "overrides"), NULL);
		break;
	case COMMAND_CONFIGURE:
		print_keys("applied now:", jget(d, "applied"));
		print_keys(json_object_get_boolean(jget(d, "recording")) ?
		    "at the next start (not this recording):" :
		    "at the next start:", jget(d, "next_start"));
		break;
	case COMMAND_ROTATE:
		if (json_object_get_boolean(jget(d, "finished_whole")))
			printf("finished:    %s\n", jstr(d, "finished_path"));
		else if (*jstr(d, "finished_path"))
			printf("finishing:   %s (not whole yet)\n",
			    jstr(d, "finished_path"));
		printf("now writing: %s\n", jstr(d, "name"));
		break;
	case COMMAND_SNAPSHOT:
		printf("%s %s\n", json_object_get_boolean(jget(d,
		    "finished_whole")) ? "snapshot:" : "snapshot (not whole "
		    "yet):", jstr(d, "finished_path"));
		break;
	case COMMAND_RELOAD:
		printf("reloaded the config file\n");
		print_settings("settings:", d, NULL);
		break;
	case COMMAND_SHUTDOWN:
		/* ctl_shutdown says when it has exited */
		break;
	case COMMAND_METRICS:
		fputs(jstr(d, "text"), stdout);
		break;
	case COMMAND_PING:
		printf("pong\n");
		break;
	case COMMAND_VERSION:
		printf("perfspilld %s (protocol %" PRIu64 ")\n",
		    jstr(d, "version"), ju64(d, "protocol"));
		break;
	default:
		json_object_object_foreachC(d, it) {
			ctl_value(it.key, it.val, v, sizeof(v));
			printf("%s: %s\n", it.key, v);
		}
		break;
	}
	return 0;
}

/* "KEY=VALUE" into args, as config_text_value reads VALUE; a list key
 * given again (-e A -e B) adds to the list. */
static int
ctl_add_kv(json_object *args, const char *kv)
{
	const char	*eq = strchr(kv, '=');
	char		 key[64], *p;
	json_object	*v, *a;
	size_t		 i;

	if (eq == NULL || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		fprintf(stderr, "perfspillctl: '%s' is not KEY=VALUE\n", kv);
		return -1;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	for (p = key; *p; p++)
		if (*p == '-')
			*p = '_';
	if ((v = config_text_value(key, eq + 1)) == NULL)
		return -1;
	if (json_object_is_type(v, json_type_array) &&
	    json_object_object_get_ex(args, key, &a) &&
	    json_object_is_type(a, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++)
			json_object_array_add(a, json_object_get(
			    json_object_array_get_idx(v, i)));
		json_object_put(v);
		return 0;
	}
	json_object_object_add(args, key, v);
	return 0;
}

/* start's options into args, as one-off settings ("persist": false). */
static int
ctl_start_args(int argc, char **argv, json_object *args)
{
	struct ctl_opt	 o[CTL_MAX_OPTS];
	struct option	 lo[3 * CTL_MAX_OPTS + 2];
	char		 shorts[3 * CTL_MAX_OPTS + 2], kv[256];
	char		 noname[CTL_MAX_OPTS][CONFIG_NAME_LEN + 3];
	size_t		 i, n = ctl_opts(o, CTL_MAX_OPTS), nl = 0, ns = 0;
	int		 ch, k;

	for (i = 0; i < n; i++) {
		const struct config_keyinfo *p = &o[i].key;
		int	 arg = p->kind == CONFIG_KIND_BOOL ?
			    no_argument : required_argument;

		lo[nl++] = (struct option){ o[i].lname, arg, NULL,
		    CTL_OPT_ON + (int)i };
		if (p->alias)
			lo[nl++] = (struct option){ p->alias, arg, NULL,
			    CTL_OPT_ON + (int)i };
		if (arg == no_argument) {
			snprintf(noname[i], sizeof(noname[i]), "no-%s",
			    o[i].lname);
			lo[nl++] = (struct option){ noname[i], no_argument,
			    NULL, CTL_OPT_OFF + (int)i };
		}
		if (p->opt) {
			shorts[ns++] = (char)p->opt;
			if (arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	lo[nl++] = (struct option){ "session", required_argument, NULL,
	    CTL_OPT_SESSION };
	lo[nl++] = (struct option){ "duration", required_argument, NULL,
	    CTL_OPT_DURATION };
	lo[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nl] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns++] = 'h';
	shorts[ns] = '\0';

	optind = 1;
	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (ch == '?')
			return -1;
		if (ch == 'h') {
			ctl_cmd_help(&command_table[COMMAND_START]);
			exit(0);
		}
		if (ch == CTL_OPT_SESSION) {
			json_object_object_add(args, "session",
			    json_object_new_string(optarg));
			continue;
		}
		if (ch == CTL_OPT_DURATION) {
			/* seconds as a number, "30s" as a string */
			snprintf(kv, sizeof(kv), "duration=%s", optarg);
			if (ctl_add_kv(args, kv) == -1)
				return -1;
			continue;
		}
		k = -1;
		if (ch >= CTL_OPT_ON && ch < CTL_OPT_ON + (int)n)
			k = ch - CTL_OPT_ON;
		else if (ch >= CTL_OPT_OFF && ch < CTL_OPT_OFF + (int)n)
			k = ch - CTL_OPT_OFF;
		else
			for (i = 0; i < n; i++)
				if (o[i].key.opt == ch)
					k = (int)i;
		if (k == -1)
			return -1;
		if (o[k].key.kind == CONFIG_KIND_BOOL) {
			json_object_object_add(args, o[k].key.name,
			    json_object_new_boolean(ch < CTL_OPT_OFF));
			continue;
		}
		snprintf(kv, sizeof(kv), "%s=%s", o[k].key.name, optarg);
		if (ctl_add_kv(args, kv) == -1)
			return -1;
	}
	if (optind != argc) {
		fprintf(stderr, "perfspillctl: start: unexpected argument "
		    "'%s'\n", argv[optind]);
		return -1;
	}
	json_object_object_add(args, "persist", json_object_new_boolean(0));
	return 0;
}

/* stop, rotate: [--session NAME] [--session=NAME]. */
static int
ctl_session_args(const struct command *c, int argc, char **argv,
    json_object *args)
{
	const char	*v = NULL;

	if (argc == 3 && strcmp(argv[1], "--session") == 0)
		v = argv[2];
	else if (argc == 2 && strncmp(argv[1], "--session=", 10) == 0)
		v = argv[1] + 10;
	else if (argc != 1) {
		fprintf(stderr, "perfspillctl: %s takes only --session NAME\n",
		    c->name);
		return -1;
	}
	if (v != NULL)
		json_object_object_add(args, "session",
		    json_object_new_string(v));
	return 0;
}

/* status [--watch [SECS]] [-w [SECS]] [--watch=SECS]; *watch 0: once. */
static int
ctl_status_args(int argc, char **argv, double *watch)
{
	const char	*v;
	char		*end;
	int		 i;

	for (i = 1; i < argc; i++) {
		v = NULL;
		if (strncmp(argv[i], "--watch=", 8) == 0)
			v = argv[i] + 8;
		else if (strcmp(argv[i], "--watch") == 0 ||
		    strcmp(argv[i], "-w") == 0) {
			*watch = 1;
			/* an optional value: the next word unless an option */
			if (i + 1 < argc && (argv[i + 1][0] != '-' ||
			    (argv[i + 1][1] >= '0' && argv[i + 1][1] <= '9')))
				v = argv[++i];
		} else {
			fprintf(stderr, "perfspillctl: status: unknown option "
			    "'%s'\n", argv[i]);
			return -1;
		}
		if (v == NULL)
			continue;
		errno = 0;
		*watch = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || errno != 0 ||
		    !(*watch > 0 && *watch <= 86400)) {
			fprintf(stderr, "perfspillctl: status: --watch takes "
			    "the seconds between refreshes, a number above 0 "
			    "and at most 86400 (got '%s')\n", v);
			return -1;
		}
	}
	return 0;
}

static int
ctl_watch(struct ctl *ctl, double secs)
{
	json_object		*rep, *prev = NULL;
	struct timespec		 t0, t1;
	double			 dt = 0;
	int			 rc, tty = isatty(STDOUT_FILENO), n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((rep = ctl_call(ctl, "status", NULL)) == NULL)
			return EXIT_CONNECT;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		t0 = t1;
		/* redraw a terminal; a pipe or file gets plain reports */
		if (!ctl->json && tty)
			printf("\033[H\033[2J");
		else if (!ctl->json && n > 0)
			putchar('\n');
		rc = ctl_print(ctl, &command_table[COMMAND_STATUS], rep,
		    jget(prev, "data"), dt);
		n++;
		fflush(stdout);
		json_object_put(prev);
		prev = rep;
		if (rc != 0)
			break;
		usleep((useconds_t)(secs * 1e6));
	}
	json_object_put(prev);
	return rc;
}

/*
 * shutdown: the daemon answers, then exits; its end closes our
 * connection, so that returning means it is gone.
 */
static int
ctl_shutdown(struct ctl *ctl)
{
	json_object	*rep;
	char		 c;
	ssize_t		 n;
	int		 rc, busy;
	long		 pid;

	if ((rep = ctl_call(ctl, "shutdown", NULL)) == NULL)
		return EXIT_CONNECT;
	rc = ctl_print(ctl, &command_table[COMMAND_SHUTDOWN], rep, NULL, 0);
	pid = (long)ju64(jget(rep, "data"), "pid");
	busy = json_object_get_boolean(jget(jget(rep, "data"), "recording"));
	json_object_put(rep);
	if (rc != 0)
		return rc;
	if (!ctl->json)
		printf("perfspilld (pid %ld) is shutting down%s\n", pid,
		    busy ? ": finishing the last file" : "");
	fflush(stdout);
	while ((n = read(ctl->fd, &c, 1)) == -1 && errno == EINTR)
		;
	if (n != 0) {
		fprintf(stderr, "perfspillctl: the daemon did not close the "
		    "connection as it should at its exit\n");
		return EXIT_CONNECT;
	}
	if (!ctl->json)
		printf("perfspilld (pid %ld) has exited\n", pid);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct ctl		 ctl;
	const struct command	*c;
	json_object		*args = NULL, *rep;
	int			 ch, rc, i, j;
	double			 watch = 0;

	memset(&ctl, 0, sizeof(ctl));
	ctl.fd = -1;
	ctl.socket = getenv("PERFSPILL_SOCKET");
	if (ctl.socket == NULL || *ctl.socket == '\0')
		ctl.socket = PERFSPILL_SOCKET;
	/* stop at the command: its options are its own */
	while ((ch = getopt_long(argc, argv, "+s:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			ctl.socket = optarg;
			break;
		case 'j':
			ctl.json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("perfspillctl %s\n", PERFSPILL_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((c = command_find(argv[optind])) == NULL) {
		fprintf(stderr, "perfspillctl: unknown command '%s' (%s)\n",
		    argv[optind], command_names());
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	/* --json and --help after the command too; the rest is its own */
	for (i = j = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			ctl.json = 1;
		else if (strcmp(argv[i], "--help") == 0 ||
		    (strcmp(argv[i], "-h") == 0 && c->id != COMMAND_START))
			return ctl_cmd_help(c);
		else
			argv[j++] = argv[i];
	}
	argc = j;
	argv[argc] = NULL;
	args = json_object_new_object();
	rc = EXIT_USAGE;
	switch (c->id) {
	case COMMAND_START:
		if (ctl_start_args(argc, argv, args) == -1) {
			fprintf(stderr, "see 'perfspillctl start --help'\n");
			goto out;
		}
		break;
	case COMMAND_CONFIGURE:
		if (argc < 2) {
			fprintf(stderr, "perfspillctl: configure needs "
			    "KEY=VALUE...\n");
			goto out;
		}
		for (i = 1; i < argc; i++)
			if (ctl_add_kv(args, argv[i]) == -1)
				goto out;
		break;
	case COMMAND_STATUS:
		if (ctl_status_args(argc, argv, &watch) == -1)
			goto out;
		break;
	case COMMAND_STOP:
	case COMMAND_ROTATE:
		if (ctl_session_args(c, argc, argv, args) == -1)
			goto out;
		break;
	default:
		if (argc > 1) {
			fprintf(stderr, "perfspillctl: %s takes no arguments\n",
			    c->name);
			goto out;
		}
		break;
	}
	if (ctl_connect(&ctl) == -1) {
		rc = EXIT_CONNECT;
		goto out;
	}
	if (watch > 0) {
		rc = ctl_watch(&ctl, watch);
		goto out;
	}
	if (c->id == COMMAND_SHUTDOWN) {
		rc = ctl_shutdown(&ctl);
		goto out;
	}
	/* ctl_call takes args into the request */
	rep = ctl_call(&ctl, c->name, args);
	args = NULL;
	if (rep == NULL) {
		rc = EXIT_CONNECT;
		goto out;
	}
	rc = ctl_print(&ctl, c, rep, NULL, 0);
	json_object_put(rep);
out:
	json_object_put(args);
	if (ctl.fd != -1)
		close(ctl.fd);
	return rc;
}

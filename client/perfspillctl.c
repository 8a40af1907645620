/*
 * perfspillctl: the control client of perfspilld. Turns a command line
 * into one JSON request (docs/protocol.md), prints the reply for people
 * or, with --json, as JSON for scripts. The commands, their usage and
 * help come from common/command.c; start's options from the config keys.
 *
 * Exit codes: 0 ok, 1 the daemon refused the request, 2 usage error,
 * 3 cannot reach the daemon, 4 it went away while status --watch
 * watched it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "paths.h"
#include "proto.h"
#include "size.h"
#include "suggest.h"

#define EXIT_REFUSED	1
#define EXIT_USAGE	2
#define EXIT_CONNECT	3
#define EXIT_GONE	4
#define REPLY_MAX	(16 * 1024 * 1024)

struct ctl {
	const char	*socket;
	int		 json;
	int		 fd;
	int		 watching;	/* status --watch */
	int		 gone;		/* ...and the daemon went away */
	FILE		*out;		/* status' text, when not stdout */
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
#define CTL_OPT_PERSIST	0x302	/* start --persist */
#define CTL_OPT_OFF_CPU	0x303	/* start --off-cpu */
#define CTL_OFF_CPU_SESSION "offcpu"	/* --off-cpu's, unless named */

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
"3 cannot reach the daemon, 4 it went away during status --watch.\n",
	    PERFSPILL_SOCKET);
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

/*
 * A request that reached no daemon: said on stderr, and with --json on
 * stdout too as a reply of code "unreachable" (or "gone": the daemon
 * went away), so that a script reading stdout always gets one line.
 */
static void ctl_transport(struct ctl *, const char *, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
ctl_transport(struct ctl *ctl, const char *code, const char *fmt, ...)
{
	json_object	*o, *e;
	va_list		 ap;
	char		 msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "perfspillctl: %s\n", msg);
	if (!ctl->json)
		return;
	o = json_object_new_object();
	e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_string(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", e);
	printf("%s\n", json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
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
		ctl_transport(ctl, "unreachable", "cannot connect to %s: %s",
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
		if (n <= 0 && ctl->watching && have == 0) {
			/* a shutdown or restart: no more status to watch */
			ctl_transport(ctl, "gone", "perfspilld went away (it "
			    "closed the connection): no more status to watch");
			ctl->gone = 1;
		} else if (n <= 0 && send_errno != 0)
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
	/* every duration with its unit: 10s beside 1m, never a bare 10 */
	snprintf(buf, len, "%" PRIu64 "%s", n, kind == CONFIG_KIND_SECS &&
	    n != 0 ? "s" : "");
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

/* A span of seconds as people read it: "42s", "5m 3s", "2h 5m", "3d 4h". */
static char *
ctl_age(int64_t secs, char *buf, size_t len)
{
	if (secs < 0)
		secs = 0;
	if (secs < 60)
		snprintf(buf, len, "%" PRId64 "s", secs);
	else if (secs < 3600)
		snprintf(buf, len, "%" PRId64 "m %" PRId64 "s", secs / 60,
		    secs % 60);
	else if (secs < 86400)
		snprintf(buf, len, "%" PRId64 "h %" PRId64 "m", secs / 3600,
		    secs % 3600 / 60);
	else
		snprintf(buf, len, "%" PRId64 "d %" PRId64 "h", secs / 86400,
		    secs % 86400 / 3600);
	return buf;
}

/*
 * One setting as a word of the settings lines: KEY=VALUE, and for a 0
 * that stands for something else, what it stands for (all, the
 * settings the key's value is worked out from).
 */
static void
ctl_setting_word(const char *key, json_object *v, json_object *all,
    char *buf, size_t len)
{
	char		 val[512], sz[32];
	uint64_t	 ring;

	ctl_value(key, v, val, sizeof(val));
	if (strcmp(key, "mmap_flush") == 0 && json_object_get_uint64(v) == 0) {
		/* 0: the drain's default, a quarter of the ring */
		ring = json_object_get_uint64(jget(all, "mmap_pages")) *
		    (uint64_t)sysconf(_SC_PAGESIZE);
		if (ring != 0) {
			ctl_unit(ring / 4, CONFIG_KIND_SIZE, sz, sizeof(sz));
			snprintf(buf, len, "%s=%s(ring/4)", key, sz);
		} else
			snprintf(buf, len, "%s=ring/4", key);
		return;
	}
	snprintf(buf, len, "%s=%s", key, val);
}

/* "label KEY=VALUE KEY=VALUE ..." wrapped; keys in mark get a '*'; all
 * is the whole set s is taken from (for what a 0 means). */
static void
print_settings(FILE *out, const char *label, json_object *s,
    json_object *mark, json_object *all)
{
	json_object_iter	 it;
	char			 v[560], word[640];
	size_t			 col = 12, w;
	int			 first = 1;

	if (s == NULL)
		return;
	fprintf(out, "%-12s", label);
	json_object_object_foreachC(s, it) {
		ctl_setting_word(it.key, it.val, all ? all : s, v, sizeof(v));
		snprintf(word, sizeof(word), "%s%s", v,
		    jget(mark, it.key) ? "*" : "");
		w = strlen(word);
		if (!first && col + 1 + w > 78) {
			fprintf(out, "\n%-12s", "");
			col = 12;
		} else if (!first) {
			fputc(' ', out);
			col++;
		}
		fputs(word, out);
		col += w;
		first = 0;
	}
	fputc('\n', out);
}

/* Which settings the recording in progress uses, and where the
 * configured ones differ (all of them when idle). */
static void
print_status_settings(FILE *out, json_object *d)
{
	json_object		*over = jget(d, "overrides");
	json_object		*run = jget(d, "settings"), *cfg = jget(d, "config");
	json_object		*diff;
	json_object_iter	 it;

	if (run == NULL) {
		print_settings(out, "configured:", cfg, NULL, cfg);
		return;
	}
	print_settings(out, "recording:", run, over, run);
	if (over != NULL)
		fprintf(out, "%-12s(* one-off: this recording only)\n", "");
	diff = json_object_new_object();
	json_object_object_foreachC(cfg, it) {
		if (!json_object_equal(it.val, jget(run, it.key)))
			json_object_object_add(diff, it.key,
			    json_object_get(it.val));
	}
	if (json_object_object_length(diff) > 0)
		print_settings(out, "configured:", diff, NULL, cfg);
	else
		fprintf(out, "%-12s%s\n", "configured:", "the same");
	json_object_put(diff);
}

/* The on_finish hand-off, when one is configured. */
static void
print_status_handoffs(FILE *out, json_object *d)
{
	json_object	*h = jget(d, "handoffs");

	if (h == NULL || *jstr(h, "program") == '\0')
		return;
	fprintf(out, "hand-off:   %" PRIu64 " running, %" PRIu64 " queued, %"
	    PRIu64 " retrying; %" PRIu64 " ok, %" PRIu64 " failed (%" PRIu64
	    " timed out), %" PRIu64 " given up\n", ju64(h, "running"),
	    ju64(h, "queued"), ju64(h, "retrying"), ju64(h, "ok"),
	    ju64(h, "failed"), ju64(h, "timed_out"), ju64(h, "gave_up"));
}

/*
 * Every session in a line, and the memory budget they share. "counted"
 * is what a session's start was held to (record_memory: its rings, its
 * buffers, the copy, and the per-CPU cblocks a buffered file would
 * make), not what it has allocated now (write path: buffers).
 */
static void
print_status_sessions(FILE *out, json_object *d)
{
	json_object	*a = jget(d, "sessions"), *s, *t, *m = jget(d, "memory");
	char		 b1[32], b2[32], ends[32];
	size_t		 i, n = a ? json_object_array_length(a) : 0;
	int64_t		 left;

	if (n == 0)
		return;
	fprintf(out, "\n%-12s %-10s %10s %8s %10s %8s\n", "SESSION",
	    "STATE", "samples", "lost", "counted", "ends in");
	for (i = 0; i < n; i++) {
		s = json_object_array_get_idx(a, i);
		t = jget(s, "totals");
		snprintf(ends, sizeof(ends), "-");
		if (jget(s, "ends") != NULL) {
			left = json_object_get_int64(jget(s, "ends")) -
			    (int64_t)time(NULL);
			ctl_age(left, ends, sizeof(ends));
		}
		fprintf(out, "%-12s %-10s %10" PRIu64 " %8" PRIu64 " %10s %8s"
		    "\n", jstr(s, "name"), *jstr(s, "paused") ? "paused" :
		    jstr(s, "state"), ju64(t, "samples"), ju64(t, "lost") +
		    ju64(t, "lost_samples"), jget(s, "memory") ?
		    size_format(ju64(jget(s, "memory"), "total"), b1,
		    sizeof(b1)) : "-", ends);
		/* the default's file is above; a line of its own keeps the
		 * table within 80 columns */
		if (*jstr(jget(s, "file"), "name") && i > 0)
			fprintf(out, "%-12s file: %s\n", "", jstr(jget(s,
			    "file"), "name"));
	}
	if (m == NULL)
		return;
	/* the budget as many decimals apart from the memory it is taken
	 * from as budget_from needs to read right */
	fprintf(out, "memory:     %s counted of a budget of %s; at most %"
	    PRIu64 " on-demand\n", size_format(ju64(m, "held"), b1,
	    sizeof(b1)), size_format_apart(ju64(m, "budget"), ju64(m,
	    "limit"), b2, sizeof(b2)), ju64(m, "max_sessions"));
	fprintf(out, "budget:     %s\n", jstr(m, "budget_from"));
}

/*
 * The lost line: with one session its losses; with more, the total over
 * every session and the sessions that lost first (a burst session's
 * losses are what an operator must not miss), then the shown session's.
 */
static void
print_status_lost(FILE *out, json_object *d, json_object *t)
{
	json_object	*a = jget(d, "sessions"), *s, *st;
	uint64_t	 ev = 0, smp = 0, e;
	size_t		 i, n = a != NULL ? json_object_array_length(a) : 0;
	char		 who[256], b[32];
	int		 off = 0;

	who[0] = '\0';
	for (i = 0; i < n; i++) {
		s = json_object_array_get_idx(a, i);
		st = jget(s, "totals");
		ev += ju64(st, "lost");
		smp += ju64(st, "lost_samples");
		if ((e = ju64(st, "lost") + ju64(st, "lost_samples")) == 0 ||
		    off >= (int)sizeof(who))
			continue;
		off += snprintf(who + off, sizeof(who) - (size_t)off,
		    "%s%s %" PRIu64, off ? ", " : "", jstr(s, "name"), e);
	}
	if (n > 1)
		fprintf(out, "lost:       %" PRIu64 " events, %" PRIu64
		    " samples in %zu sessions%s%s%s\n            %s: ", ev,
		    smp, n, who[0] ? " (" : "", who, who[0] ? ")" : "",
		    *jstr(d, "session") ? jstr(d, "session") : "default");
	else
		fprintf(out, "lost:       ");
	fprintf(out, "%" PRIu64 " events, %" PRIu64 " samples; %s dropped\n",
	    ju64(t, "lost"), ju64(t, "lost_samples"),
	    size_format(ju64(t, "bytes_dropped"), b, sizeof(b)));
}

/* How the data reaches the disk, and the drain's buffers held now. */
static void
print_status_write_path(FILE *out, json_object *d)
{
	json_object	*p = jget(d, "pool");
	char		 b1[32], b2[32];

	if (!*jstr(d, "write_path"))
		return;
	/* a flight recording has no file between snapshots: no path */
	if (jget(d, "flight") != NULL && jget(d, "file") == NULL)
		fprintf(out, "write path: none between snapshots (flight); "
		    "buffers %s held now", size_format(ju64(d,
		    "buffers"), b1, sizeof(b1)));
	else
		fprintf(out, "write path: %s%s%s; buffers %s held now",
		    jstr(d, "write_path"), *jstr(d, "write_path_why") ? ": " :
		    "", jstr(d, "write_path_why"), size_format(ju64(d,
		    "buffers"), b1, sizeof(b1)));
	if (p != NULL)
		fprintf(out, " (%" PRIu64 " x %s pool)", ju64(p, "blocks"),
		    size_format(ju64(p, "block_bytes"), b2, sizeof(b2)));
	fputc('\n', out);
	/* the pool grows under a burst up to its bound, then spills through
	 * the page cache rather than let a ring overflow: how near it came */
	if (p != NULL && jget(p, "max_blocks") != NULL)
		fprintf(out, "pool:       %" PRIu64 " blocks, up to %" PRIu64
		    " (peak %" PRIu64 "); spilled %s in %" PRIu64 " writes\n",
		    ju64(p, "blocks"), ju64(p, "max_blocks"),
		    ju64(p, "peak_blocks"), size_format(ju64(p, "spill_bytes"),
		    b1, sizeof(b1)), ju64(p, "spills"));
}

/* The output directory: the files kept (every session's, those of
 * earlier runs too), free space. */
static void
print_status_files(FILE *out, json_object *d, json_object *t)
{
	json_object	*f = jget(d, "files"), *k = jget(d, "disk");
	char		 b1[32], b2[32];

	fprintf(out, "output dir: %s", jstr(d, "output_dir"));
	if (k != NULL)
		fprintf(out, " (%s free)", size_format(ju64(k, "free"), b1,
		    sizeof(b1)));
	fputc('\n', out);
	fprintf(out, "files:      ");
	if (t != NULL)
		fprintf(out, "%" PRIu64 " finished by this recording; ",
		    ju64(t, "files_finished"));
	fprintf(out, "%" PRIu64 " in the directory, %s\n", ju64(f, "count"),
	    size_format(ju64(f, "bytes"), b1, sizeof(b1)));
	if (*jstr(f, "newest"))
		fprintf(out, "newest:     %s (%s ago)\n", jstr(f, "newest"),
		    ctl_age((int64_t)time(NULL) - (int64_t)ju64(f,
		    "last_finished"), b2, sizeof(b2)));
}

/*
 * The default session's recording, what matters most first (state,
 * rate, lost, write path, then the file), so that a watch on an 80x24
 * terminal keeps them in view; watching leaves out the settings, which
 * do not change between two refreshes.
 */
static void
print_status(FILE *out, json_object *d, json_object *prev, double dt,
    int watching)
{
	json_object	*t = jget(d, "totals"), *cpus = jget(d, "cpus"), *c;
	json_object	*f = jget(d, "file"), *pt = jget(prev, "totals");
	char		 b1[32], b2[32];
	size_t		 i, n;
	double		 up = (double)ju64(d, "uptime"), rate, brate;

	if (*jstr(d, "session") && strcmp(jstr(d, "session"), "default") != 0)
		fprintf(out, "session:    %s\n", jstr(d, "session"));
	fprintf(out, "state:      %s%s%s\n", jstr(d, "state"),
	    *jstr(d, "paused") ? ", paused: " : "", jstr(d, "paused"));
	if (t != NULL) {
		if (pt != NULL && dt > 0) {
			rate = (double)(ju64(t, "samples") -
			    ju64(pt, "samples")) / dt;
			brate = (double)(ju64(t, "bytes") -
			    ju64(pt, "bytes")) / dt;
		} else {
			rate = up > 0 ? (double)ju64(t, "samples") / up : 0;
			brate = up > 0 ? (double)ju64(t, "bytes") / up : 0;
		}
		fprintf(out, "rate:       %.0f samples/s, %s/s (%s)\n", rate,
		    size_format((uint64_t)brate, b1, sizeof(b1)), pt != NULL &&
		    dt > 0 ? "since the last refresh" : "the recording's mean");
		print_status_lost(out, d, t);
		print_status_write_path(out, d);
		if (f != NULL)
			fprintf(out, "file:       %s\n            %s, %" PRIu64
			    " samples\n", jstr(f, "name"), size_format(ju64(f,
			    "bytes"), b1, sizeof(b1)), ju64(f, "samples"));
		fprintf(out, "recorded:   %" PRIu64 " samples, %" PRIu64
		    " records, %s in %s\n", ju64(t, "samples"), ju64(t,
		    "records"), size_format(ju64(t, "bytes"), b1, sizeof(b1)),
		    ctl_age((int64_t)ju64(d, "uptime"), b2, sizeof(b2)));
	} else if (*jstr(d, "last_file"))
		fprintf(out, "last file:  %s\n", jstr(d, "last_file"));
	print_status_files(out, d, t);
	if (jget(d, "daemon_uptime") != NULL)
		fprintf(out, "uptime:     %s (perfspilld %s, pid %" PRIu64
		    ")\n", ctl_age((int64_t)ju64(d, "daemon_uptime"), b1,
		    sizeof(b1)), jstr(d, "version"), ju64(d, "pid"));
	print_status_handoffs(out, d);
	if ((f = jget(d, "flight")) != NULL) {
		fprintf(out, "flight:     window %s (%" PRIu64 " s, at most %s), "
		    "%" PRIu64 " snapshot(s)\n", size_format(ju64(f, "bytes"),
		    b1, sizeof(b1)), ju64(f, "window"), size_format(ju64(f,
		    "window_bytes"), b2, sizeof(b2)), ju64(f, "snapshots"));
		if (*jstr(f, "last_snapshot"))
			fprintf(out, "snapshot:   %s\n", jstr(f,
			    "last_snapshot"));
	}
	if (t != NULL) {
		fprintf(out, "\n%4s %12s %10s %8s %8s %9s %9s %6s %6s\n", "CPU",
		    "bytes", "samples", "lost", "lostsmp", "aio-fly",
		    "aio-done", "resub", "fail");
		n = cpus ? json_object_array_length(cpus) : 0;
		for (i = 0; i < n; i++) {
			c = json_object_array_get_idx(cpus, i);
			fprintf(out, "%4" PRIu64 " %12s %10" PRIu64 " %8" PRIu64
			    " %8" PRIu64 " %9" PRIu64 " %9" PRIu64 " %6" PRIu64
			    " %6" PRIu64 "\n", ju64(c, "cpu"),
			    size_format(ju64(c, "bytes"), b1, sizeof(b1)),
			    ju64(c, "samples"), ju64(c, "lost"),
			    ju64(c, "lost_samples"), ju64(c, "aio_inflight"),
			    ju64(c, "aio_completed"),
			    ju64(c, "aio_resubmitted"), ju64(c, "aio_failed"));
		}
	}
	if (!watching) {
		fputc('\n', out);
		print_status_settings(out, d);
	}
	print_status_sessions(out, d);
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
/* flush's reply: each session's file and where its data ends on disk. */
static void
print_flush(json_object *d)
{
	json_object	*a = jget(d, "sessions"), *e;
	size_t		 i, n = a != NULL ? json_object_array_length(a) : 0;

	if (n == 0)
		printf("no session records\n");
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(a, i);
		if (json_object_get_boolean(jget(e, "flushed")))
			printf("session %s: on disk in %s up to byte %" PRIu64
			    "\n", jstr(e, "session"), jstr(e, "file"),
			    ju64(e, "data_end"));
		else
			printf("session %s: not flushed: %s\n", jstr(e,
			    "session"), jstr(e, "why"));
	}
}

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
		print_status(ctl->out ? ctl->out : stdout, d, prev, dt,
		    ctl->watching);
		break;
	case COMMAND_STOP:
		if (*jstr(d, "session") && strcmp(jstr(d, "session"),
		    "default") != 0)
			printf("session %s: ", jstr(d, "session"));
		if (strcmp(jstr(d, "window"), "written") == 0)
			printf("stopped; its window was written as a last "
			    "snapshot\n");
		else if (strcmp(jstr(d, "window"), "discarded") == 0)
			printf("stopped; its window was discarded, as "
			    "asked\n");
		else if (strcmp(jstr(d, "window"), "empty") == 0)
			printf("stopped; its window was empty (nothing since "
			    "the last snapshot)\n");
		if (*jstr(d, "path"))
			printf("%strace file: %s\nread it with: perf "
			    "report -i %s\n", *jstr(d, "window") ? "" :
			    "stopped; ", jstr(d, "path"), jstr(d, "path"));
		else if (!*jstr(d, "window"))
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
			print_settings(stdout, "one-off:", jget(d,
			    "overrides"), NULL, jget(d, "settings"));
		break;
	case COMMAND_CONFIGURE:
		print_keys("applied now:", jget(d, "applied"));
		print_keys(json_object_get_boolean(jget(d, "recording")) ?
		    "at the next start (not this recording):" :
		    "at the next start:", jget(d, "next_start"));
		break;
	case COMMAND_FLUSH:
		print_flush(d);
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
		if (*jstr(d, "session") && strcmp(jstr(d, "session"),
		    "default") != 0)
			printf("session %s: ", jstr(d, "session"));
		printf("%s %s\n", json_object_get_boolean(jget(d,
		    "finished_whole")) ? "snapshot:" : "snapshot (not whole "
		    "yet):", jstr(d, "finished_path"));
		break;
	case COMMAND_RELOAD:
		printf("reloaded the config file\n");
		print_settings(stdout, "settings:", d, NULL, d);
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

/*
 * perf record's options that perfspillctl start has under another name,
 * or that mean nothing here: said when one is given, instead of getopt's
 * bare "unrecognized option".
 */
static const struct {
	const char	*perf;
	const char	*hint;
} ctl_perf_opts[] = {
	{ "--aio", "perf's --aio N is --cblocks N here (AIO buffers per "
	    "ring; 0 writes serially)" },
	{ "--switch-output", "perfspilld switches files by itself: "
	    "--rotate-interval TIME, --rotate-size SIZE (as perf's "
	    "--switch-output=TIME or SIZE), or perfspillctl rotate" },
	{ "--overwrite", "perf's --overwrite ring is --mode flight here: the "
	    "last --window in memory, written by perfspillctl snapshot" },
	{ "--call-graph", "-g (--callgraph) records frame-pointer "
	    "callchains" },
	{ "--all-cpus", "perfspilld records every CPU unless -C LIST is "
	    "given" },
	{ "-a", "perfspilld records every CPU unless -C LIST is given" },
	{ "--output", "the files go to the daemon's output_dir; read them "
	    "with perfspill-flame or perf report -i" },
	{ "-o", "the files go to the daemon's output_dir; read them with "
	    "perfspill-flame or perf report -i" },
};

/* What to say of start's unknown option arg, beside getopt's message. */
static void
ctl_option_hint(const char *arg, const struct option *lo)
{
	struct suggest	 sg;
	char		 word[64];
	size_t		 i, n;

	n = strcspn(arg, "=");
	for (i = 0; i < sizeof(ctl_perf_opts) / sizeof(ctl_perf_opts[0]); i++)
		if (strlen(ctl_perf_opts[i].perf) == n &&
		    strncmp(arg, ctl_perf_opts[i].perf, n) == 0) {
			fprintf(stderr, "perfspillctl: %s\n",
			    ctl_perf_opts[i].hint);
			return;
		}
	if (strncmp(arg, "--", 2) != 0 || n - 2 >= sizeof(word))
		return;
	snprintf(word, sizeof(word), "%.*s", (int)(n - 2), arg + 2);
	suggest_init(&sg, word);
	for (; lo->name != NULL; lo++)
		suggest_offer(&sg, lo->name);
	if (suggest_best(&sg) != NULL)
		fprintf(stderr, "perfspillctl: did you mean --%s?\n",
		    suggest_best(&sg));
}

/* start's options into args: one-off settings ("persist": false, sent
 * also to daemons that kept a start's settings without it), or with
 * --persist kept as the configured ones. */
static int
ctl_start_args(int argc, char **argv, json_object *args)
{
	struct ctl_opt	 o[CTL_MAX_OPTS];
	struct option	 lo[3 * CTL_MAX_OPTS + 7];
	char		 shorts[3 * CTL_MAX_OPTS + 2], kv[256];
	char		 noname[CTL_MAX_OPTS][CONFIG_NAME_LEN + 3];
	size_t		 i, n = ctl_opts(o, CTL_MAX_OPTS), nl = 0, ns = 0;
	int		 ch, k, persist = 0, off_cpu = 0, sampling = 0;

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
	lo[nl++] = (struct option){ "persist", no_argument, NULL,
	    CTL_OPT_PERSIST };
	lo[nl++] = (struct option){ "off-cpu", no_argument, NULL,
	    CTL_OPT_OFF_CPU };
	lo[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nl] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns++] = 'h';
	shorts[ns] = '\0';

	optind = 1;
	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (ch == '?') {
			/* the word getopt stopped at (an unknown short
			 * letter may be inside a cluster: -ga) */
			if (optopt != 0 && strchr(shorts, optopt) == NULL) {
				snprintf(kv, sizeof(kv), "-%c", optopt);
				ctl_option_hint(kv, lo);
			} else if (optopt == 0)
				ctl_option_hint(argv[optind - 1], lo);
			return -1;
		}
		if (ch == 'h') {
			ctl_cmd_help(&command_table[COMMAND_START]);
			exit(0);
		}
		if (ch == CTL_OPT_SESSION) {
			json_object_object_add(args, "session",
			    json_object_new_string(optarg));
			continue;
		}
		if (ch == CTL_OPT_PERSIST) {
			persist = 1;
			continue;
		}
		if (ch == CTL_OPT_OFF_CPU) {
			/* what perfspill-flame --off-cpu reads: every switch
			 * with its stack, in the sleeping task (perf record
			 * -e sched:sched_switch -c 1 -g) */
			if (ctl_add_kv(args, "events=sched:sched_switch") ==
			    -1 || ctl_add_kv(args, "period=1") == -1)
				return -1;
			json_object_object_add(args, "callgraph",
			    json_object_new_boolean(1));
			/* a switch the daemon leaves the CPU in is the
			 * switch-in of the task after it: without it that
			 * task's time off would be lost */
			json_object_object_add(args, "exclude_self",
			    json_object_new_boolean(0));
			off_cpu = 1;
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
		if (strcmp(o[k].key.name, "events") == 0 ||
		    strcmp(o[k].key.name, "period") == 0 ||
		    strcmp(o[k].key.name, "freq") == 0)
			sampling = 1;
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
	/* a session beside the always-on recording, never in place of it */
	if (off_cpu && persist) {
		fprintf(stderr, "perfspillctl: start: --off-cpu records a "
		    "session of its own: not with --persist\n");
		return -1;
	}
	/* another event, period or rate would record other events as
	 * often as every switch, or miss switches, which perfspill-flame
	 * --off-cpu cannot time */
	if (off_cpu && sampling) {
		fprintf(stderr, "perfspillctl: start: --off-cpu records every "
		    "sched:sched_switch: not with -e, -c or -F\n");
		return -1;
	}
	if (off_cpu && !json_object_object_get_ex(args, "session", NULL))
		json_object_object_add(args, "session",
		    json_object_new_string(CTL_OFF_CPU_SESSION));
	json_object_object_add(args, "persist",
	    json_object_new_boolean(persist));
	return 0;
}

/* stop, rotate, snapshot: [--session NAME] [--session=NAME]; stop also
 * [--discard]. */
static int
ctl_session_args(const struct command *c, int argc, char **argv,
    json_object *args)
{
	const char	*v = NULL;
	int		 i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--session") == 0 && i + 1 < argc &&
		    v == NULL)
			v = argv[++i];
		else if (strncmp(argv[i], "--session=", 10) == 0 && v == NULL)
			v = argv[i] + 10;
		else if (strcmp(argv[i], "--discard") == 0 &&
		    command_takes(c, "discard"))
			json_object_object_add(args, "discard",
			    json_object_new_boolean(1));
		else {
			fprintf(stderr, "perfspillctl: %s takes only %s\n",
			    c->name, c->usage);
			return -1;
		}
	}
	if (v != NULL)
		json_object_object_add(args, "session",
		    json_object_new_string(v));
	return 0;
}

/* status [--session NAME] [--watch [SECS]] [-w [SECS]] [--watch=SECS];
 * *watch 0: once. */
static int
ctl_status_args(int argc, char **argv, double *watch, json_object *args)
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
		} else if (strcmp(argv[i], "--session") == 0 && i + 1 < argc) {
			json_object_object_add(args, "session",
			    json_object_new_string(argv[++i]));
			continue;
		} else if (strncmp(argv[i], "--session=", 10) == 0) {
			json_object_object_add(args, "session",
			    json_object_new_string(argv[i] + 10));
			continue;
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

/*
 * One refresh on a terminal: at most its rows less one (the cursor's
 * line), each line cut at its columns, so that nothing scrolls the
 * first lines (state, rate, lost) off the top. What does not fit is
 * counted on the last line.
 */
static void
ctl_watch_frame(const char *text, size_t len)
{
	struct winsize	 ws;
	size_t		 rows = 24, cols = 80, lines = 0, fit, row, col;
	const char	*p, *end = text + len, *nl;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 2 &&
	    ws.ws_col > 0) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	for (p = text; p < end; p++)
		lines += *p == '\n';
	/* the cursor's row stays free; a cut leaves a row for saying so */
	fit = lines < rows ? lines : rows - 2;
	for (p = text, row = 0; p < end && row < fit; p = nl + 1, row++) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		/* columns are characters: UTF-8 continuation bytes take none */
		for (col = 0; p < nl; p++) {
			if (((unsigned char)*p & 0xc0) != 0x80 && col++ == cols)
				break;
			putchar(*p);
		}
		putchar('\n');
	}
	if (fit < lines)
		printf("%.*s\n", (int)cols, "... more below: a taller terminal "
		    "shows it, or perfspillctl status");
}

/*
 * status --watch: a terminal is redrawn in place, one screen at a time;
 * a pipe or file gets whole reports one after another. Both leave out
 * the settings (print_status).
 */
static int
ctl_watch(struct ctl *ctl, double secs, json_object *args)
{
	json_object		*rep, *prev = NULL;
	struct timespec		 t0, t1;
	double			 dt = 0;
	char			*frame = NULL;
	size_t			 flen = 0;
	int			 rc, tty = isatty(STDOUT_FILENO), n = 0;

	ctl->watching = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((rep = ctl_call(ctl, "status", json_object_get(args))) ==
		    NULL) {
			json_object_put(prev);
			return ctl->gone ? EXIT_GONE : EXIT_CONNECT;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		t0 = t1;
		if (!ctl->json && tty)
			ctl->out = open_memstream(&frame, &flen);
		else if (!ctl->json && n > 0)
			putchar('\n');
		rc = ctl_print(ctl, &command_table[COMMAND_STATUS], rep,
		    jget(prev, "data"), dt);
		if (ctl->out != NULL) {
			fclose(ctl->out);
			ctl->out = NULL;
			printf("\033[H\033[2J");
			ctl_watch_frame(frame, flen);
			free(frame);
			frame = NULL;
		}
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
	struct suggest		 sg;
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
		suggest_init(&sg, argv[optind]);
		for (i = 0; i < COMMAND__COUNT; i++)
			suggest_offer(&sg, command_table[i].name);
		if (suggest_best(&sg) != NULL)
			fprintf(stderr, "perfspillctl: unknown command '%s' "
			    "(did you mean '%s'?)\n", argv[optind],
			    suggest_best(&sg));
		else
			fprintf(stderr, "perfspillctl: unknown command '%s' "
			    "(%s)\n", argv[optind], command_names());
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
		if (ctl_status_args(argc, argv, &watch, args) == -1)
			goto out;
		break;
	case COMMAND_STOP:
	case COMMAND_ROTATE:
	case COMMAND_SNAPSHOT:
	case COMMAND_FLUSH:
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
		rc = ctl_watch(&ctl, watch, args);
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

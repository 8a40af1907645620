/*
 * perfspillctl: the control client of perfspilld. Turns a command line
 * into one JSON request (docs/protocol.md), prints the reply for people
 * or, with --json, as JSON for scripts.
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

static void
usage(FILE *f)
{
	fprintf(f,
"usage: perfspillctl [-s PATH] [--json] COMMAND [ARGS]\n"
"\n"
"Commands:\n"
"  status [--watch [SECS]]   state, settings, per-CPU counters, files\n"
"  start [OPTIONS]           start recording (options below)\n"
"  stop                      stop; returns when the last file is whole\n"
"  rotate                    finish the current file, start the next\n"
"  configure KEY=VALUE...    change settings (see perfspilld.json(5))\n"
"  reload                    re-read the daemon's config file\n"
"  ping | version\n"
"\n"
"Start options (the same settings as configure):\n"
"  -e, --event E             event, repeatable or comma separated\n"
"                            (cpu-clock, context-switches, sched:sched_switch)\n"
"  -F, --freq HZ             sampling frequency\n"
"  -c, --period N            sample every N events (instead of -F)\n"
"  -g, --callgraph           record callchains   (--no-callgraph: don't)\n"
"  -m, --mmap-pages N        ring size per CPU in pages (power of two)\n"
"      --cblocks N           AIO buffers per ring, 0 (serial write) to 8\n"
"      --mmap-flush SIZE     least a woken ring must hold to be drained\n"
"                            (default a quarter of the ring)\n"
"      --rotate-size SIZE    rotate when a file reaches SIZE (e.g. 256M)\n"
"      --rotate-interval T   rotate after T (e.g. 3600, 1h)\n"
"      --max-files N         keep at most N finished files\n"
"      --max-size SIZE       keep at most SIZE of finished files\n"
"      --min-free SIZE       leave SIZE free on the filesystem\n"
"  -z, --compression-level N zstd level, 0 for none\n"
"  -r, --realtime PRIO       drain at SCHED_FIFO priority PRIO (1-99), 0 off\n"
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
static const struct {
	const char	*name;
	const char	*text;
} cmd_help[] = {
	{ "status", "usage: perfspillctl status [--watch [SECS]] [--json]\n"
	    "State, settings in force, totals and per-CPU counters (bytes,\n"
	    "samples, lost, AIO in flight/completed/resubmitted/failed), the\n"
	    "current file, finished files and free disk. --watch refreshes\n"
	    "every SECS (default 1) and shows rates since the last refresh.\n" },
	{ "start", "usage: perfspillctl start [-e EVENT]... [-F HZ | -c N] "
	    "[-g] [-m PAGES]\n"
	    "       [--cblocks N] [--rotate-size SIZE] [--rotate-interval T]\n"
	    "       [--max-files N] [--max-size SIZE] [--min-free SIZE] "
	    "[-z LEVEL]\n"
	    "Start recording. Options override the daemon's settings and are\n"
	    "kept for later starts; see perfspillctl --help for each one.\n" },
	{ "stop", "usage: perfspillctl stop\n"
	    "Stop recording. Returns once every write is synced and the last\n"
	    "file has its final name, and prints that file.\n" },
	{ "rotate", "usage: perfspillctl rotate\n"
	    "Finish the current file and continue in a new one.\n" },
	{ "configure", "usage: perfspillctl configure KEY=VALUE...\n"
	    "Change settings (keys of perfspilld.json(5), '-' or '_').\n"
	    "cblocks, rotation and retention apply at once, the others at\n"
	    "the next start; the reply says which. Lists are comma separated:\n"
	    "  perfspillctl configure cblocks=4 max_size=8G\n"
	    "  perfspillctl configure events=cpu-clock,sched:sched_switch\n" },
	{ "reload", "usage: perfspillctl reload\n"
	    "Make the daemon re-read its config file (as SIGHUP does).\n" },
	{ "ping", "usage: perfspillctl ping\nIs the daemon there?\n" },
	{ "version", "usage: perfspillctl version\n"
	    "The daemon's version and protocol.\n" },
};

static int
ctl_cmd_help(const char *cmd)
{
	size_t	 i;

	for (i = 0; i < sizeof(cmd_help) / sizeof(cmd_help[0]); i++) {
		if (strcmp(cmd_help[i].name, cmd) == 0) {
			fputs(cmd_help[i].text, stdout);
			return 0;
		}
	}
	usage(stdout);
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
	if (t == NULL) {
		if (*jstr(d, "last_file"))
			printf("last file:  %s\n", jstr(d, "last_file"));
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
	printf("events:     %s\n", json_object_to_json_string_ext(
	    jget(jget(d, "settings"), "events"), JSON_C_TO_STRING_PLAIN));
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
}

/* Print a reply; returns the exit code. */
static int
ctl_print(struct ctl *ctl, const char *cmd, json_object *rep,
    json_object *prev, double dt)
{
	json_object	*err = jget(rep, "error"), *d = jget(rep, "data");

	if (ctl->json) {
		printf("%s\n", json_object_to_json_string_ext(rep,
		    JSON_C_TO_STRING_PLAIN));
		return err ? EXIT_REFUSED : 0;
	}
	if (err != NULL || !json_object_get_boolean(jget(rep, "ok"))) {
		fprintf(stderr, "perfspillctl: %s refused: %s [%s%s%s]\n", cmd,
		    jstr(err, "message"), jstr(err, "code"),
		    *jstr(err, "key") ? ", key " : "", jstr(err, "key"));
		return EXIT_REFUSED;
	}
	if (strcmp(cmd, "status") == 0)
		print_status(d, prev, dt);
	else if (strcmp(cmd, "stop") == 0) {
		if (*jstr(d, "path"))
			printf("stopped; trace file: %s\nread it with: perf "
			    "report -i %s\n", jstr(d, "path"), jstr(d, "path"));
		else
			printf("stopped; no file was finished\n");
	} else if (strcmp(cmd, "start") == 0)
		printf("recording into %s\n", jstr(jget(d, "file"), "name"));
	else if (strcmp(cmd, "ping") == 0)
		printf("pong\n");
	else if (strcmp(cmd, "version") == 0)
		printf("perfspilld %s (protocol %" PRIu64 ")\n",
		    jstr(d, "version"), ju64(d, "protocol"));
	else
		printf("%s\n", json_object_to_json_string_ext(d,
		    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
	return 0;
}

/* "KEY=VALUE" into args; numbers and booleans keep their JSON type,
 * lists split on commas. */
static int
ctl_add_kv(json_object *args, const char *kv)
{
	const char	*eq = strchr(kv, '=');
	char		 key[64], *end, *copy, *tok, *save = NULL;
	const char	*v;
	long long	 n;
	json_object	*a;

	if (eq == NULL || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		fprintf(stderr, "perfspillctl: '%s' is not KEY=VALUE\n", kv);
		return -1;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	for (end = key; *end; end++)
		if (*end == '-')
			*end = '_';
	v = eq + 1;
	if (strcmp(key, "events") == 0 || strcmp(key, "control_groups") == 0) {
		a = json_object_new_array();
		if ((copy = strdup(v)) == NULL)
			return -1;
		for (tok = strtok_r(copy, ",", &save); tok;
		    tok = strtok_r(NULL, ",", &save))
			json_object_array_add(a, json_object_new_string(tok));
		free(copy);
		json_object_object_add(args, key, a);
		return 0;
	}
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		json_object_object_add(args, key,
		    json_object_new_boolean(v[0] == 't'));
		return 0;
	}
	errno = 0;
	n = strtoll(v, &end, 10);
	if (*v != '\0' && *end == '\0' && errno == 0)
		json_object_object_add(args, key, json_object_new_int64(n));
	else
		json_object_object_add(args, key, json_object_new_string(v));
	return 0;
}

static int
ctl_start_args(int argc, char **argv, json_object *args)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "period", required_argument, NULL, 'c' },
		{ "callgraph", no_argument, NULL, 'g' },
		{ "no-callgraph", no_argument, NULL, 'G' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "cblocks", required_argument, NULL, 'b' },
		{ "rotate-size", required_argument, NULL, 'R' },
		{ "rotate-interval", required_argument, NULL, 'I' },
		{ "max-files", required_argument, NULL, 'N' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "min-free", required_argument, NULL, 'f' },
		{ "compression-level", required_argument, NULL, 'z' },
		{ "realtime", required_argument, NULL, 'r' },
		{ "mmap-flush", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *keys[128] = {
		['F'] = "freq", ['c'] = "period", ['m'] = "mmap_pages",
		['b'] = "cblocks", ['R'] = "rotate_size",
		['I'] = "rotate_interval", ['N'] = "max_files",
		['M'] = "max_size", ['f'] = "min_free", ['z'] = "compression",
		['r'] = "realtime", ['L'] = "mmap_flush",
	};
	json_object	*events = NULL;
	char		 kv[256], *copy, *tok, *save;
	int		 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "e:F:c:gm:z:r:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'e':
			if (events == NULL) {
				events = json_object_new_array();
				json_object_object_add(args, "events", events);
			}
			if ((copy = strdup(optarg)) == NULL)
				return -1;
			save = NULL;
			for (tok = strtok_r(copy, ",", &save); tok;
			    tok = strtok_r(NULL, ",", &save))
				json_object_array_add(events,
				    json_object_new_string(tok));
			free(copy);
			break;
		case 'g':
		case 'G':
			json_object_object_add(args, "callgraph",
			    json_object_new_boolean(ch == 'g'));
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case '?':
			return -1;
		default:
			snprintf(kv, sizeof(kv), "%s=%s", keys[ch], optarg);
			if (ctl_add_kv(args, kv) == -1)
				return -1;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "perfspillctl: start: unexpected argument "
		    "'%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int
ctl_watch(struct ctl *ctl, double secs)
{
	json_object		*rep, *prev = NULL;
	struct timespec		 t0, t1;
	double			 dt = 0;
	int			 rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((rep = ctl_call(ctl, "status", NULL)) == NULL)
			return EXIT_CONNECT;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		t0 = t1;
		if (!ctl->json)
			printf("\033[H\033[2J");
		rc = ctl_print(ctl, "status", rep, jget(prev, "data"), dt);
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
	struct ctl	 ctl;
	json_object	*args, *rep;
	const char	*cmd;
	int		 ch, rc, i;
	double		 watch = 0;

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
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || (strcmp(argv[i], "-h") == 0 &&
		    strcmp(cmd, "start") != 0))
			return ctl_cmd_help(cmd);
	args = json_object_new_object();
	if (strcmp(cmd, "start") == 0) {
		if (ctl_start_args(argc, argv, args) == -1) {
			fprintf(stderr, "see 'perfspillctl --help'\n");
			rc = EXIT_USAGE;
			goto out;
		}
	} else if (strcmp(cmd, "configure") == 0) {
		if (argc < 2) {
			fprintf(stderr, "perfspillctl: configure needs "
			    "KEY=VALUE...\n");
			rc = EXIT_USAGE;
			goto out;
		}
		for (i = 1; i < argc; i++) {
			if (ctl_add_kv(args, argv[i]) == -1) {
				rc = EXIT_USAGE;
				goto out;
			}
		}
	} else if (strcmp(cmd, "status") == 0) {
		for (i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--watch") == 0 ||
			    strcmp(argv[i], "-w") == 0) {
				watch = 1;
				if (i + 1 < argc && atof(argv[i + 1]) > 0)
					watch = atof(argv[++i]);
			} else if (strcmp(argv[i], "--json") == 0)
				ctl.json = 1;
			else {
				fprintf(stderr, "perfspillctl: status: unknown "
				    "option '%s'\n", argv[i]);
				rc = EXIT_USAGE;
				goto out;
			}
		}
	} else if (strcmp(cmd, "stop") == 0 || strcmp(cmd, "ping") == 0 ||
	    strcmp(cmd, "version") == 0 || strcmp(cmd, "rotate") == 0 ||
	    strcmp(cmd, "reload") == 0) {
		if (argc > 1) {
			fprintf(stderr, "perfspillctl: %s takes no arguments\n",
			    cmd);
			rc = EXIT_USAGE;
			goto out;
		}
	} else {
		fprintf(stderr, "perfspillctl: unknown command '%s'\n", cmd);
		usage(stderr);
		rc = EXIT_USAGE;
		goto out;
	}
	if (ctl_connect(&ctl) == -1) {
		rc = EXIT_CONNECT;
		goto out;
	}
	if (watch > 0) {
		rc = ctl_watch(&ctl, watch);
		goto out;
	}
	/* ctl_call takes args into the request */
	rep = ctl_call(&ctl, cmd, args);
	args = NULL;
	if (rep == NULL) {
		rc = EXIT_CONNECT;
		goto out;
	}
	rc = ctl_print(&ctl, cmd, rep, NULL, 0);
	json_object_put(rep);
out:
	json_object_put(args);
	if (ctl.fd != -1)
		close(ctl.fd);
	return rc;
}

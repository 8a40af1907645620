/*
 * perfspilld: option parsing, start-up, signals and the event loop.
 * Everything else lives in its own file: record (rings and AIO), control
 * (socket), cmd (commands), notify (systemd).
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "cmd.h"
#include "config.h"
#include "control.h"
#include "daemon.h"
#include "exporter.h"
#include "handoff.h"
#include "log.h"
#include "manifest.h"
#include "notify.h"
#include "outdir.h"
#include "paths.h"
#include "pidfile.h"
#include "record.h"
#include "retain.h"
#include "salvage.h"

static void
usage(FILE *f)
{
	fprintf(f,
"usage: perfspilld [-fnv] [-c FILE] [--socket PATH] [--output-dir DIR]\n"
"                  [--pid-file PATH]\n"
"\n"
"Always-on profiling recorder: keeps a perf ring per CPU and spills it\n"
"through multi-block POSIX AIO into rotating trace files that perf reads.\n"
"Driven by perfspillctl(1).\n"
"\n"
"  -c, --config FILE     config file (default %s;\n"
"                        built-in defaults when it does not exist)\n"
"  -f, --foreground      stay in the foreground (systemd, terminals)\n"
"      --socket PATH     control socket (default %s)\n"
"      --output-dir DIR  where trace files go (default %s)\n"
"      --pid-file PATH   where the pid goes (default perfspilld.pid\n"
"                        next to the socket)\n"
"  -n, --check-config    validate the config, print it normalised, exit\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this help\n"
"      --version         print the version\n",
	    PERFSPILL_CONFIG, PERFSPILL_SOCKET, PERFSPILL_OUTPUT_DIR);
}

/* Defaults, then the file, then the command line: the precedence that
 * start-up and SIGHUP share. */
static int
daemon_load(struct daemon *d, struct config *cfg, struct config_error *err)
{
	const char	*path = d->config_path;

	config_defaults(cfg);
	if (path == NULL && access(PERFSPILL_CONFIG, F_OK) == 0)
		path = PERFSPILL_CONFIG;
	if (path != NULL && config_load(cfg, path, err) == -1)
		return -1;
	if (d->cli_socket != NULL)
		snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s",
		    d->cli_socket);
	if (d->cli_output_dir != NULL)
		snprintf(cfg->output_dir, sizeof(cfg->output_dir), "%s",
		    d->cli_output_dir);
	return 0;
}

/*
 * A file was closed. A whole one gets its manifest beside it, then its
 * hand-off (which retention, run after this, must see); then the rotates
 * waiting for it are answered either way.
 */
static void
daemon_file_done(const struct manifest_facts *f, int whole, void *arg)
{
	struct daemon	*d = arg;
	int		 manifest_ok = 1;

	if (whole) {
		if (manifest_write(d->dirfd, f) == -1) {
			log_warn("%s: writing its manifest", f->name);
			manifest_ok = 0;
		}
		handoff_add(d->handoff, f, manifest_ok);
	}
	cmd_file_done(d, f->name, whole);
}

int
daemon_reload(struct daemon *d, struct config_error *err)
{
	struct config	 cfg;

	notify_send(d->notify, "RELOADING=1");
	if (daemon_load(d, &cfg, err) == -1) {
		log_warnx("reload refused, settings unchanged: %s", err->msg);
		notify_send(d->notify, "READY=1");
		return -1;
	}
	if (strcmp(cfg.socket_path, d->cfg.socket_path) != 0 ||
	    strcmp(cfg.output_dir, d->cfg.output_dir) != 0)
		log_warnx("socket and output_dir changes take effect at the "
		    "next daemon start");
	/* these stay as the running daemon uses them */
	memcpy(cfg.socket_path, d->cfg.socket_path, sizeof(cfg.socket_path));
	memcpy(cfg.output_dir, d->cfg.output_dir, sizeof(cfg.output_dir));
	d->cfg = cfg;
	control_update(d->ctl, &d->cfg);
	handoff_configure(d->handoff, &d->cfg);
	cmd_settings_changed(d);
	exporter_start(d);
	log_info("configuration reloaded");
	notify_send(d->notify, "READY=1");
	notify_status(d->notify);
	return 0;
}

void
daemon_shutdown(struct daemon *d)
{
	notify_send(d->notify, "STOPPING=1");
	d->exiting = 1;
	switch (record_state(d->rec)) {
	case RECORD_RUNNING:
		log_info("shutting down: finishing the current file");
		record_stop(d->rec, cmd_stopped, d);
		break;
	case RECORD_STOPPING:
		break;		/* cmd_stopped leaves the loop */
	case RECORD_IDLE:
		event_base_loopexit(d->base, NULL);
		break;
	}
}

static void
daemon_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon		*d = arg;
	struct config_error	 err;

	switch (sig) {
	case SIGTERM:
	case SIGINT:
		if (!d->exiting)
			daemon_shutdown(d);
		break;
	case SIGHUP:
		daemon_reload(d, &err);
		break;
	case SIGUSR2:
		/* as perf record --switch-output does on SIGUSR2 */
		if (record_rotate(d->rec, "SIGUSR2") == -1)
			log_info("SIGUSR2: not recording, nothing to rotate");
		break;
	}
}

static void
daemon_status_line(char *buf, size_t len, void *arg)
{
	struct daemon	*d = arg;

	record_summary(d->rec, buf, len);
}

/* Fork into the background; the parent exits once the child is ready
 * (or with its error), so that "perfspilld && perfspillctl" works. */
static int
daemon_background(int *ready_fd)
{
	int	 p[2];
	pid_t	 pid;
	char	 c = 1;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1)
		return -1;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		_exit(c == 0 ? 0 : 1);
	}
	close(p[0]);
	setsid();
	*ready_fd = p[1];
	return 0;
}

/*
 * Without a terminal the messages go to syslog; where nothing listens on
 * /dev/log (no systemd, no syslog daemon) to a file in the state
 * directory rather than nowhere. The first message says where.
 */
static void
daemon_detach(struct daemon *d)
{
	char	 path[CONFIG_PATH_LEN + 32];
	int	 nullfd, logfd = -1;

	snprintf(path, sizeof(path), "%s/perfspilld.log", d->cfg.output_dir);
	if (log_use_syslog() == 0)
		log_info("running in the background; logging to syslog");
	else if ((logfd = openat(d->dirfd, "perfspilld.log", O_WRONLY |
	    O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640)) == -1)
		log_warn("no syslog at %s and cannot open %s; messages go "
		    "nowhere", _PATH_LOG, path);
	else
		log_info("running in the background; no syslog at %s, "
		    "logging to %s", _PATH_LOG, path);
	if ((nullfd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		dup2(nullfd, STDIN_FILENO);
		dup2(nullfd, STDOUT_FILENO);
		dup2(logfd != -1 ? logfd : nullfd, STDERR_FILENO);
		if (nullfd > STDERR_FILENO)
			close(nullfd);
	}
	if (logfd != -1) {
		if (logfd > STDERR_FILENO)
			close(logfd);
		log_use_file();
		log_info("perfspilld %s logging here", PERFSPILL_VERSION);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	  required_argument, NULL, 'c' },
		{ "foreground",	  no_argument,	     NULL, 'f' },
		{ "socket",	  required_argument, NULL, 'S' },
		{ "output-dir",	  required_argument, NULL, 'O' },
		{ "pid-file",	  required_argument, NULL, 'P' },
		{ "check-config", no_argument,	     NULL, 'n' },
		{ "verbose",	  no_argument,	     NULL, 'v' },
		{ "help",	  no_argument,	     NULL, 'h' },
		{ "version",	  no_argument,	     NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct daemon		 d;
	struct config_error	 err;
	struct config_error	 serr;
	struct event		*sigs[4];
	static const int	 signos[4] = { SIGTERM, SIGINT, SIGHUP, SIGUSR2 };
	struct aioinit		 ai;
	struct pidfile		*pf;
	const char		*pidpath = NULL;
	char			 pidbuf[CONFIG_PATH_LEN + 16];
	long			 other;
	sigset_t		 block;
	int			 ch, foreground = 0, check = 0, verbose = 0;
	int			 ready_fd = -1, i, saved;
	char			 zero = 0;
	json_object		*o;

	memset(&d, 0, sizeof(d));
	d.dirfd = -1;
	d.lockfd = -1;
	while ((ch = getopt_long(argc, argv, "c:fnvh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			d.config_path = optarg;
			break;
		case 'f':
			foreground = 1;
			break;
		case 'S':
			d.cli_socket = optarg;
			break;
		case 'O':
			d.cli_output_dir = optarg;
			break;
		case 'P':
			pidpath = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("perfspilld %s\n", PERFSPILL_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "perfspilld: unexpected argument '%s'\n",
		    argv[optind]);
		usage(stderr);
		return 2;
	}
	log_init("perfspilld", verbose);
	if (d.cli_output_dir != NULL && d.cli_output_dir[0] != '/')
		fatalx("--output-dir must be an absolute path");
	if (pidpath != NULL && pidpath[0] != '/')
		fatalx("--pid-file must be an absolute path");
	if (d.cli_socket != NULL && (d.cli_socket[0] != '/' ||
	    strlen(d.cli_socket) >= 108))
		fatalx("--socket must be an absolute path under 108 bytes");
	if (daemon_load(&d, &d.cfg, &err) == -1)
		fatalx("%s", err.msg);
	if (check) {
		o = config_to_json(&d.cfg, 1);
		printf("%s\n", json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
		    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		return 0;
	}
	if (!foreground && daemon_background(&ready_fd) == -1)
		fatal("fork");

	signal(SIGPIPE, SIG_IGN);
	memset(&ai, 0, sizeof(ai));
	/* glibc serves one fd's requests one at a time: a few threads carry
	 * the current file plus files being finished; keep them warm */
	ai.aio_threads = 4;
	ai.aio_num = 64;
	ai.aio_idle_time = 30;
	aio_init(&ai);

	if ((d.dirfd = outdir_create(d.cfg.output_dir)) == -1)
		fatal("output directory %s", d.cfg.output_dir);
	/* before salvage and retention: a second daemon changes nothing */
	if ((d.lockfd = outdir_lock(d.dirfd, d.cfg.output_dir)) == -1)
		fatalx("not starting; nothing in %s was changed",
		    d.cfg.output_dir);
	if ((d.base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	for (i = 0; i < 4; i++) {
		sigs[i] = evsignal_new(d.base, signos[i], daemon_signal_cb, &d);
		if (sigs[i] == NULL || evsignal_add(sigs[i], NULL) == -1)
			fatalx("cannot install signal handlers");
	}
	if ((d.rec = record_create(d.base, d.dirfd)) == NULL)
		fatal("record_create");
	if ((d.handoff = handoff_create(d.base, d.dirfd)) == NULL)
		fatalx("cannot set up the on_finish hand-off");
	/* what the last daemon owed, before retention: it keeps those */
	handoff_configure(d.handoff, &d.cfg);
	handoff_resume(d.handoff);
	/* a crash left .partial files: make them whole before anything new,
	 * with their manifests and hand-offs */
	salvage_dir(d.dirfd, daemon_file_done, &d);
	retain_enforce(d.dirfd, d.cfg.max_files, d.cfg.max_size, d.cfg.min_free,
	    handoff_holds, d.handoff);
	record_on_file_done(d.rec, daemon_file_done, &d);
	record_set_retain_hold(d.rec, handoff_holds, d.handoff);
	record_set_lock(d.rec, d.lockfd);
	if ((d.ctl = control_create(&d)) == NULL)
		fatalx("cannot open the control socket %s", d.cfg.socket_path);
	/* after the socket, whose directory exists now */
	if (pidpath == NULL) {
		pidfile_default(d.cfg.socket_path, pidbuf, sizeof(pidbuf));
		pidpath = pidbuf;
	}
	if ((pf = pidfile_create(pidpath, &other)) == NULL) {
		saved = errno;
		control_destroy(d.ctl);
		errno = saved;
		if (errno == EEXIST)
			fatalx("%s: another perfspilld (pid %ld) runs with this "
			    "pid file", pidpath, other);
		fatal("pid file %s", pidpath);
	}
	d.notify = notify_create(d.base, daemon_status_line, &d);
	log_info("perfspilld %s started; trace files go to %s",
	    PERFSPILL_VERSION, d.cfg.output_dir);
	d.started = time(NULL);
	if (d.cfg.record_on_start && record_start(d.rec, &d.cfg, &serr) == -1)
		log_warnx("cannot record at start: %s", serr.msg);
	exporter_start(&d);
	notify_send(d.notify, "READY=1");
	notify_status(d.notify);
	if (ready_fd != -1) {
		/* detach from the terminal or pipe that started us, so that a
		 * shell waiting for its output is not held open; where the log
		 * goes is said while the parent still waits */
		daemon_detach(&d);
		if (write(ready_fd, &zero, 1) != 1)
			log_warn("signalling readiness");
		close(ready_fd);
	}

	event_base_dispatch(d.base);
	/* the last callbacks queued replies (stop, shutdown): send them */
	event_base_loop(d.base, EVLOOP_NONBLOCK);

	/*
	 * The last file is whole; what remains is freeing. A second SIGTERM
	 * now must not kill us with its default action once the loop's
	 * handlers are gone: block them, the exit status stays 0.
	 */
	sigemptyset(&block);
	for (i = 0; i < 4; i++)
		sigaddset(&block, signos[i]);
	sigprocmask(SIG_BLOCK, &block, NULL);
	log_info("exiting");
	exporter_finish(&d);
	control_destroy(d.ctl);
	record_destroy(d.rec);
	handoff_destroy(d.handoff);
	notify_destroy(d.notify);
	for (i = 0; i < 4; i++)
		event_free(sigs[i]);
	event_base_free(d.base);
	close(d.dirfd);
	pidfile_destroy(pf);
	close(d.lockfd);
	return 0;
}

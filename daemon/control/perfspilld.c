/*
 * perfspilld reads the command line, goes into the background and runs
 * the event loop. The daemon's life (start-up, reload, shutdown,
 * teardown) is daemon.c; everything else lives in its own file: record
 * (rings and AIO), control (socket), cmd (commands), notify (systemd).
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "daemon.h"
#include "evsel.h"
#include "log.h"
#include "paths.h"

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

/* Fork into the background; the parent exits once the child is ready
 * (or with its error), so that "perfspilld && perfspillctl" works. */
static int
background(int *ready_fd)
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
detach(struct daemon *d)
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
	int			 ch, foreground = 0, check = 0, verbose = 0;
	int			 ready_fd = -1;
	char			 zero = 0;
	json_object		*o;

	daemon_init(&d);
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
			d.cli_pid_file = optarg;
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
	if (d.cli_pid_file != NULL && d.cli_pid_file[0] != '/')
		fatalx("--pid-file must be an absolute path");
	if (d.cli_socket != NULL && (d.cli_socket[0] != '/' ||
	    strlen(d.cli_socket) >= 108))
		fatalx("--socket must be an absolute path under 108 bytes");
	if (daemon_load(&d, &d.cfg, &err) == -1)
		fatalx("%s", err.msg);
	if (check) {
		/* what start would refuse on this machine */
		if (config_check_freq(&d.cfg, evsel_max_sample_rate(), &err) ==
		    -1)
			fatalx("%s", err.msg);
		o = config_to_json(&d.cfg, 1);
		printf("%s\n", json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
		    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		return 0;
	}
	if (!foreground && background(&ready_fd) == -1)
		fatal("fork");
	daemon_start(&d);
	if (ready_fd != -1) {
		/* detach from the terminal or pipe that started us, so that a
		 * shell waiting for its output is not held open; where the log
		 * goes is said while the parent still waits */
		detach(&d);
		if (write(ready_fd, &zero, 1) != 1)
			log_warn("signalling readiness");
		close(ready_fd);
	}

	event_base_dispatch(d.base);
	/* the last callbacks queued replies (stop, shutdown): send them */
	event_base_loop(d.base, EVLOOP_NONBLOCK);

	daemon_finish(&d);
	return 0;
}

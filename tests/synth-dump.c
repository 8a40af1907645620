/*
 * synth-dump: record the way perfspilld does, with the daemon's own
 * parts, so tests can check the files with the real perf: the events
 * are parsed and configured by evsel.c, opened one ring per CPU by
 * cpuring.c (the CPU list read by it too), read by ring.c, compressed by
 * compress.c; the file starts with synth_preamble() and is finished by
 * perfdata_finish(). It starts the command, copies the rings into the
 * file, one FINISHED_ROUND after each pass, until the command exits.
 * What it leaves out is the daemon's loop, AIO and rotation.
 *
 * usage: synth-dump out [-g] [-k] [-F freq] [-m pages] [-P procfs]
 *	      [-z level] [-e event]... -- command [arg ...]
 * -k samples on CLOCK_MONOTONIC (use_clockid); -P reads the tasks of the
 * preamble from another procfs (a fake one, in tests); -z writes the
 * ring data as PERF_RECORD_COMPRESSED (where the build has libzstd).
 */
#include <sys/wait.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compress.h"
#include "config.h"
#include "cpuring.h"
#include "evsel.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfdata.h"
#include "ring.h"
#include "synth.h"

#define DUMP_MAX_EVENTS	8
#define DUMP_MAX_FREQ	5000	/* this VM stalls at higher rates */

static void	dump_fatal(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));

static void
dump_fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	fprintf(stderr, "synth-dump: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (saved != 0)
		fprintf(stderr, ": %s", strerror(saved));
	fputc('\n', stderr);
	exit(1);
}

static void
dump_write(int fd, const void *p, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			dump_fatal("write");
		}
		p = (const char *)p + w;
		n -= w;
	}
}

/*
 * Copy what the kernel wrote since the last pass (ring.c: head with
 * acquire, at most two spans, tail released after the copy), through
 * the compressor when there is one.
 */
static size_t
dump_drain(struct ring *r, struct compress *zc, int out)
{
	struct ring_span	 sp;
	uint64_t		 head = ring_head(r), tail = ring_tail(r);
	int64_t			 n;
	uint8_t			*z;
	size_t			 zlen;

	if ((n = ring_span(head, tail, r->size, &sp)) <= 0)
		return 0;
	if (zc == NULL) {
		dump_write(out, r->data + sp.off[0], sp.len[0]);
		dump_write(out, r->data + sp.off[1], sp.len[1]);
	} else {
		if ((z = malloc(compress_bound((size_t)n))) == NULL)
			dump_fatal("malloc");
		zlen = compress_records(zc, z, compress_bound((size_t)n),
		    r->data + sp.off[0], sp.len[0], r->data + sp.off[1],
		    sp.len[1]);
		if (zlen == 0)
			dump_fatal("compress_records");
		dump_write(out, z, zlen);
		free(z);
	}
	ring_release(r, head);
	return (size_t)n;
}

int
main(int argc, char **argv)
{
	struct evsel		 evs[DUMP_MAX_EVENTS];
	struct synth_event	 events[DUMP_MAX_EVENTS];
	struct synth_ctx	 ctx;
	struct cpuring_spec	 spec;
	struct config		 cfg;
	struct config_error	 err;
	struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND, 0,
				    sizeof(round) };
	struct ring		*rings;
	struct pollfd		*pfds;
	struct compress		*zc = NULL;
	struct sbuf		 sb;
	struct perfdata_layout	 layout;
	off_t			 end;
	const char		*names[DUMP_MAX_EVENTS], *procfs = "/proc";
	const char		*out_path;
	uint64_t		*ids, *ev_ids[DUMP_MAX_EVENTS];
	char			*cmdline, byte, msg[256];
	size_t			 len, pages = 64, copied, nr_cpus, n, c, i;
	long			 freq = 1000;
	int			 callchain = 0, clockid = 0, level = 0;
	int			 ch, *cpus, *fds, out, status = 0;
	int			 go[2], done = 0, exited = 0, rv = 0;
	pid_t			 child;

	/* The settings as given, before getopt permutes argv. */
	for (len = 0, ch = 0; ch < argc; ch++)
		len += strlen(argv[ch]) + 1;
	if ((cmdline = calloc(1, len + 1)) == NULL)
		dump_fatal("calloc");
	for (ch = 0; ch < argc; ch++) {
		if (ch != 0)
			strcat(cmdline, " ");
		strcat(cmdline, argv[ch]);
	}

	n = 0;
	while ((ch = getopt(argc, argv, "e:F:gkm:P:z:")) != -1) {
		switch (ch) {
		case 'e':
			if (n == DUMP_MAX_EVENTS)
				dump_fatal("too many events");
			names[n++] = optarg;
			break;
		case 'F':
			freq = strtol(optarg, NULL, 10);
			if (freq < 1 || freq > DUMP_MAX_FREQ)
				dump_fatal("-F: 1 to %d", DUMP_MAX_FREQ);
			break;
		case 'g':
			callchain = 1;
			break;
		case 'k':
			clockid = 1;
			break;
		case 'm':
			pages = strtoul(optarg, NULL, 10);
			if (pages == 0 || (pages & (pages - 1)) != 0)
				dump_fatal("-m: a power of two");
			break;
		case 'P':
			procfs = optarg;
			break;
		case 'z':
			level = (int)strtol(optarg, NULL, 10);
			errno = ENOTSUP;
			if (level < 1 || !compress_available() ||
			    (zc = compress_create(level)) == NULL)
				dump_fatal("-z %s", optarg);
			break;
		default:
			fprintf(stderr, "usage: synth-dump out [-gk] [-F freq] "
			    "[-m pages] [-P procfs] [-z level] [-e event]... "
			    "-- command [arg ...]\n");
			return 2;
		}
	}
	if (argc - optind < 2)
		dump_fatal("need an output file and a command");
	out_path = argv[optind];
	if (n == 0)
		names[n++] = "cpu-clock";

	if (cpuring_read_list("/sys/devices/system/cpu/online", &cpus,
	    &nr_cpus) == -1)
		dump_fatal("cpu/online");
	if ((rings = calloc(nr_cpus, sizeof *rings)) == NULL ||
	    (pfds = calloc(nr_cpus, sizeof *pfds)) == NULL ||
	    (fds = calloc(nr_cpus * n, sizeof *fds)) == NULL ||
	    (ids = calloc(nr_cpus * n, sizeof *ids)) == NULL)
		dump_fatal("calloc");

	/* The command waits for the preamble so that it starts recorded. */
	if (pipe2(go, O_CLOEXEC) == -1)
		dump_fatal("pipe");
	if ((child = fork()) == -1)
		dump_fatal("fork");
	if (child == 0) {
		close(go[1]);
		/* A byte means go; EOF means synth-dump gave up. */
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		execvp(argv[optind + 1], argv + optind + 1);
		fprintf(stderr, "synth-dump: %s: %s\n", argv[optind + 1],
		    strerror(errno));
		_exit(127);
	}
	close(go[0]);

	/* the daemon's settings, these few changed, make its attrs */
	config_defaults(&cfg);
	cfg.freq = (uint64_t)freq;
	cfg.callgraph = callchain;
	cfg.mmap_pages = pages;
	for (i = 0; i < n; i++)
		if (evsel_parse(&evs[i], names[i], msg, sizeof msg) == -1)
			dump_fatal("%s", msg);
	evsel_config(evs, n, &cfg, pages * (size_t)sysconf(_SC_PAGESIZE));
	for (i = 0; clockid && i < n; i++) {
		evs[i].attr.use_clockid = 1;
		evs[i].attr.clockid = CLOCK_MONOTONIC;
	}
	memset(&spec, 0, sizeof spec);
	spec.evs = evs;
	spec.nr_evs = n;
	spec.pages = pages;
	for (c = 0; c < nr_cpus; c++) {
		if (cpuring_open(&spec, cpus[c], fds + c * n, ids + c * n,
		    &rings[c], &err) == -1)
			dump_fatal("%s", err.msg);
		pfds[c].fd = fds[c * n];
		pfds[c].events = POLLIN;
	}

	/* after every open: cpuring_open may have lowered precise_ip */
	for (i = 0; i < n; i++) {
		if ((ev_ids[i] = calloc(nr_cpus, sizeof *ev_ids[i])) == NULL)
			dump_fatal("calloc");
		for (c = 0; c < nr_cpus; c++)
			ev_ids[i][c] = ids[c * n + i];
		memset(&events[i], 0, sizeof events[i]);
		events[i].attr = evs[i].attr;
		events[i].name = evs[i].name;
		events[i].tp_system = evs[i].tp_system[0] ? evs[i].tp_system :
		    NULL;
		events[i].tp_name = evs[i].tp_name[0] ? evs[i].tp_name : NULL;
		events[i].ids = ev_ids[i];
		events[i].nr_ids = nr_cpus;
	}

	/*
	 * Events first, then /proc: a task that starts in between is seen
	 * twice, never missed.
	 */
	cpuring_enable(fds, nr_cpus * n, 1);

	memset(&ctx, 0, sizeof ctx);
	ctx.events = events;
	ctx.nr_events = n;
	ctx.cpus = cpus;
	ctx.nr_cpus = nr_cpus;
	ctx.cmdline = cmdline;
	ctx.tracefs = evsel_tracefs();
	ctx.procfs = procfs;
	ctx.comp_level = level;
	/* perf record's choice: a whole ring mapping, control page too. */
	ctx.comp_mmap_len = (uint32_t)rings[0].map_len;
	sbuf_init(&sb);
	if (synth_preamble(&sb, &ctx, NULL) == -1)
		dump_fatal("synth_preamble");
	if (perfdata_parse(sb.data, sb.len, &layout) == -1)
		dump_fatal("perfdata_parse");

	if ((out = open(out_path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC,
	    0644)) == -1)
		dump_fatal("%s", out_path);
	dump_write(out, sb.data, sb.len);
	sbuf_finish(&sb);

	dump_write(go[1], "", 1);
	close(go[1]);
	while (!done) {
		poll(pfds, nr_cpus, 100);
		if (!exited && waitpid(child, &status, WNOHANG) == child) {
			exited = 1;
			cpuring_enable(fds, nr_cpus * n, 0);
		} else if (exited)
			done = 1;	/* one last pass after disabling */
		copied = 0;
		for (c = 0; c < nr_cpus; c++)
			copied += dump_drain(&rings[c], zc, out);
		if (copied != 0)
			dump_write(out, &round, sizeof(round));
	}
	if ((end = lseek(out, 0, SEEK_CUR)) == -1)
		dump_fatal("lseek");
	if (perfdata_finish(out, &layout, (uint64_t)end, NULL, NULL) == -1)
		dump_fatal("perfdata_finish");
	if (close(out) == -1)
		dump_fatal("close");

	for (c = 0; c < nr_cpus; c++)
		cpuring_close(fds + c * n, n, &rings[c]);
	for (i = 0; i < n; i++)
		free(ev_ids[i]);
	compress_destroy(zc);
	free(ids);
	free(fds);
	free(pfds);
	free(rings);
	free(cpus);
	free(cmdline);

	if (WIFEXITED(status))
		rv = WEXITSTATUS(status);
	else
		rv = 128 + WTERMSIG(status);
	return rv;
}

/*
 * synth-dump: record the way perfspilld does, so tests can check the
 * files with the real perf. It opens the events on every online CPU,
 * one ring per CPU (further events of a CPU redirected into it),
 * writes synth_preamble(), starts the command, and copies the rings
 * into the file, one FINISHED_ROUND after each pass, until the
 * command exits; then it finishes the file as the daemon does
 * (perfdata_finish).
 *
 * usage: synth-dump out [-g] [-k] [-F freq] [-m pages] [-P procfs]
 *	      [-t tracefs] [-z level] [-e event]... -- command [arg ...]
 * An event is cpu-clock or a tracepoint sys:name; -P reads the tasks
 * of the preamble from another procfs (a fake one, in tests); -z
 * writes the ring data as PERF_RECORD_COMPRESSED (built with
 * -DDUMP_ZSTD -lzstd).
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef DUMP_ZSTD
#include <zstd.h>
#endif

#include "perf-abi.h"
#include "perfdata.h"
#include "synth.h"

#define DUMP_MAX_EVENTS	8
#define DUMP_MAX_FREQ	5000	/* this VM stalls at higher rates */

struct dump_ring {
	int		 fd;
	void		*base;
	size_t		 size;	/* data area, a power of two */
	size_t		 page;
};

static void	dump_fatal(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));
static int	dump_online(int **);
static int	dump_event(const char *, const char *,
		    struct perf_event_attr *, char **, char **);
static void	dump_write(int, const void *, size_t);
static size_t	dump_drain(struct dump_ring *, int);
static int	dump_zstd_init(int);
static void	dump_emit(int, const void *, size_t);

#ifdef DUMP_ZSTD
/* One zstd stream for the whole file, as perf reads it. */
static ZSTD_CStream	*dump_zstd;

static int
dump_zstd_init(int level)
{
	if ((dump_zstd = ZSTD_createCStream()) == NULL)
		return -1;
	return ZSTD_isError(ZSTD_initCStream(dump_zstd, level)) ? -1 : 0;
}

/*
 * Ring bytes as COMPRESSED records of at most 64K, flushed completely
 * before returning, so no record holds more than this call's input:
 * perf decompresses one record into a buffer of comp_mmap_len.
 */
static void
dump_emit(int out, const void *p, size_t n)
{
	static unsigned char		 buf[65535];
	struct perf_event_header	 h;
	ZSTD_inBuffer			 in = { p, n, 0 };
	ZSTD_outBuffer			 o;
	size_t				 rc;

	if (dump_zstd == NULL) {
		dump_write(out, p, n);
		return;
	}
	do {
		o.dst = buf + sizeof h;
		o.size = sizeof buf - sizeof h - 1;
		o.pos = 0;
		if (in.pos < in.size) {
			rc = ZSTD_compressStream(dump_zstd, &o, &in);
			if (ZSTD_isError(rc))
				dump_fatal("zstd: %s", ZSTD_getErrorName(rc));
		}
		rc = ZSTD_flushStream(dump_zstd, &o);
		if (ZSTD_isError(rc))
			dump_fatal("zstd: %s", ZSTD_getErrorName(rc));
		if (o.pos == 0)
			continue;
		memset(&h, 0, sizeof h);
		h.type = PERF_RECORD_COMPRESSED;
		h.size = sizeof h + o.pos;
		memcpy(buf, &h, sizeof h);
		dump_write(out, buf, h.size);
	} while (in.pos < in.size || rc != 0);
}
#else
static int
dump_zstd_init(int level)
{
	(void)level;
	errno = ENOTSUP;
	return -1;
}

static void
dump_emit(int out, const void *p, size_t n)
{
	dump_write(out, p, n);
}
#endif

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

/* The online CPUs, from "0-3,5". */
static int
dump_online(int **cpus)
{
	FILE	*f;
	char	 buf[4096], *p;
	long	 a, b;
	int	 n = 0;

	if ((f = fopen("/sys/devices/system/cpu/online", "r")) == NULL)
		dump_fatal("cpu/online");
	if (fgets(buf, sizeof buf, f) == NULL)
		dump_fatal("cpu/online");
	fclose(f);
	if ((*cpus = calloc(4096, sizeof **cpus)) == NULL)
		dump_fatal("calloc");
	for (p = buf; *p != '\0' && *p != '\n'; p++) {
		a = b = strtol(p, &p, 10);
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (; a <= b && n < 4096; a++)
			(*cpus)[n++] = a;
		if (*p != ',')
			break;
	}
	return n;
}

static int
dump_event(const char *name, const char *tracefs,
    struct perf_event_attr *attr, char **sys, char **tp)
{
	char	path[4096], *colon;
	FILE	*f;
	int	id;

	*sys = *tp = NULL;
	if (strcmp(name, "cpu-clock") == 0) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		return 0;
	}
	if ((colon = strchr(name, ':')) == NULL)
		return -1;
	if ((*sys = strndup(name, colon - name)) == NULL ||
	    (*tp = strdup(colon + 1)) == NULL)
		dump_fatal("strdup");
	snprintf(path, sizeof path, "%s/events/%s/%s/id", tracefs, *sys, *tp);
	if ((f = fopen(path, "r")) == NULL)
		dump_fatal("%s", path);
	if (fscanf(f, "%d", &id) != 1)
		dump_fatal("%s: no id", path);
	fclose(f);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	attr->sample_period = 1;
	attr->sample_type |= PERF_SAMPLE_RAW;
	return 0;
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
 * Copy what the kernel wrote since the last pass: read data_head with
 * acquire so the data before it is visible, copy at most two chunks
 * (the data may wrap), then hand the space back by storing data_tail
 * with release, after the copy.
 */
static size_t
dump_drain(struct dump_ring *r, int out)
{
	struct perf_event_mmap_page	*pc = r->base;
	const unsigned char		*data;
	uint64_t			 head, tail, n, off, first;

	head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	tail = pc->data_tail;
	if (head == tail)
		return 0;
	data = (const unsigned char *)r->base + r->page;
	n = head - tail;
	off = tail & (r->size - 1);
	first = n < r->size - off ? n : r->size - off;
	dump_emit(out, data + off, first);
	if (first < n)
		dump_emit(out, data, n - first);
	__atomic_store_n(&pc->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

int
main(int argc, char **argv)
{
	struct synth_event	 events[DUMP_MAX_EVENTS];
	struct synth_ctx	 ctx;
	struct perf_event_attr	 attr;
	struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND, 0,
				    sizeof(round) };
	struct dump_ring	*rings;
	struct pollfd		*pfds;
	struct sbuf		 sb;
	struct perfdata_layout	 layout;
	off_t			 end;
	const char		*names[DUMP_MAX_EVENTS], *tracefs, *procfs;
	const char		*out_path;
	uint64_t		*ids[DUMP_MAX_EVENTS];
	char			*cmdline, *sys, *tp, byte;
	size_t			 len, pages = 64, copied;
	long			 freq = 1000;
	int			 nr_events = 0, callchain = 0, clockid = 0;
	int			 level = 0;
	int			 ch, i, c, nr_cpus, *cpus, *fds, out, fd;
	int			 status = 0;
	int			 go[2], done = 0, exited = 0, rv = 0;
	pid_t			 child;

	tracefs = "/sys/kernel/tracing";
	procfs = "/proc";

	/* The settings as given, before getopt permutes argv. */
	for (len = 0, i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if ((cmdline = calloc(1, len + 1)) == NULL)
		dump_fatal("calloc");
	for (i = 0; i < argc; i++) {
		if (i != 0)
			strcat(cmdline, " ");
		strcat(cmdline, argv[i]);
	}

	while ((ch = getopt(argc, argv, "e:F:gkm:P:t:z:")) != -1) {
		switch (ch) {
		case 'e':
			if (nr_events == DUMP_MAX_EVENTS)
				dump_fatal("too many events");
			names[nr_events++] = optarg;
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
		case 't':
			tracefs = optarg;
			break;
		case 'z':
			level = strtol(optarg, NULL, 10);
			if (level < 1 || dump_zstd_init(level) == -1)
				dump_fatal("-z %s", optarg);
			break;
		default:
			fprintf(stderr, "usage: synth-dump out [-gk] [-F freq] "
			    "[-m pages] [-P procfs] [-t tracefs] [-z level] "
			    "[-e event]... -- command [arg ...]\n");
			return 2;
		}
	}
	if (argc - optind < 2)
		dump_fatal("need an output file and a command");
	out_path = argv[optind];
	if (nr_events == 0)
		names[nr_events++] = "cpu-clock";

	nr_cpus = dump_online(&cpus);
	if ((rings = calloc(nr_cpus, sizeof *rings)) == NULL ||
	    (pfds = calloc(nr_cpus, sizeof *pfds)) == NULL ||
	    (fds = calloc(nr_cpus * nr_events, sizeof *fds)) == NULL)
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

	for (i = 0; i < nr_events; i++) {
		memset(&attr, 0, sizeof attr);
		attr.size = sizeof attr;
		attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
		    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		    PERF_SAMPLE_PERIOD;
		if (callchain)
			attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr.freq = 1;
		attr.sample_freq = freq;
		attr.sample_id_all = 1;
		attr.disabled = 1;
		if (clockid) {
			attr.use_clockid = 1;
			attr.clockid = CLOCK_MONOTONIC;
		}
		if (dump_event(names[i], tracefs, &attr, &sys, &tp) == -1)
			dump_fatal("%s: unknown event", names[i]);
		if (attr.type == PERF_TYPE_TRACEPOINT)
			attr.freq = 0;
		if (i == 0) {
			/* The first event reports tasks and mappings; no
			 * attr.build_id: on Linux 6.1 it breaks any perf
			 * record running beside this test (as perfspilld's
			 * kernel_build_id documents) */
			attr.mmap = attr.mmap2 = attr.comm = attr.comm_exec = 1;
			attr.task = 1;
		}
		memset(&events[i], 0, sizeof events[i]);
		events[i].attr = attr;
		events[i].name = names[i];
		events[i].tp_system = sys;
		events[i].tp_name = tp;
		if ((ids[i] = calloc(nr_cpus, sizeof *ids[i])) == NULL)
			dump_fatal("calloc");
		events[i].ids = ids[i];
		events[i].nr_ids = nr_cpus;
	}

	for (c = 0; c < nr_cpus; c++) {
		for (i = 0; i < nr_events; i++) {
			fd = syscall(SYS_perf_event_open, &events[i].attr, -1,
			    cpus[c], -1, PERF_FLAG_FD_CLOEXEC);
			if (fd == -1)
				dump_fatal("perf_event_open %s cpu %d",
				    names[i], cpus[c]);
			fds[c * nr_events + i] = fd;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &ids[i][c]) == -1)
				dump_fatal("PERF_EVENT_IOC_ID");
			if (i != 0) {
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
				    rings[c].fd) == -1)
					dump_fatal("PERF_EVENT_IOC_SET_OUTPUT");
				continue;
			}
			rings[c].fd = fd;
			rings[c].page = sysconf(_SC_PAGESIZE);
			rings[c].size = pages * rings[c].page;
			rings[c].base = mmap(NULL, rings[c].size +
			    rings[c].page, PROT_READ|PROT_WRITE, MAP_SHARED,
			    fd, 0);
			if (rings[c].base == MAP_FAILED)
				dump_fatal("mmap");
			pfds[c].fd = fd;
			pfds[c].events = POLLIN;
		}
	}

	/*
	 * Events first, then /proc: a task that starts in between is seen
	 * twice, never missed.
	 */
	for (i = 0; i < nr_events * nr_cpus; i++) {
		if (ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0) == -1)
			dump_fatal("PERF_EVENT_IOC_ENABLE");
	}

	memset(&ctx, 0, sizeof ctx);
	ctx.events = events;
	ctx.nr_events = nr_events;
	ctx.cpus = cpus;
	ctx.nr_cpus = nr_cpus;
	ctx.cmdline = cmdline;
	ctx.tracefs = tracefs;
	ctx.procfs = procfs;
	ctx.comp_level = level;
	/* perf record's choice: a whole ring mapping, control page too. */
	ctx.comp_mmap_len = (pages + 1) * rings[0].page;
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
			for (i = 0; i < nr_events * nr_cpus; i++)
				ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
		} else if (exited)
			done = 1;	/* one last pass after disabling */
		copied = 0;
		for (c = 0; c < nr_cpus; c++)
			copied += dump_drain(&rings[c], out);
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
		munmap(rings[c].base, rings[c].size + rings[c].page);
	for (i = 0; i < nr_events * nr_cpus; i++)
		close(fds[i]);
	for (i = 0; i < nr_events; i++) {
		free(ids[i]);
		free((char *)events[i].tp_system);
		free((char *)events[i].tp_name);
	}
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

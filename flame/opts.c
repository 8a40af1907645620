/*
 * opts: perfspill-flame's options, times and durations (see opts.h).
 */
#include <ctype.h>
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"
#include "symbolize.h"
#include "paths.h"
#include "size.h"
#include "stackset.h"
#include "suggest.h"

static const char opts_usage[] =
"usage: perfspill-flame [OPTIONS] [[-i] FILE|DIR]...\n";

static const char opts_help[] =
"Flame graphs and folded stacks from perfspilld's trace files.\n"
"\n"
"Reads the finished trace files given, and those in each DIR (and its\n"
"subdirectories; default: " PERFSPILL_OUTPUT_DIR ") itself (no perf),\n"
"keeps the samples inside the time range, and writes an SVG flame graph\n"
"(open it in a browser) and/or folded stacks (\"comm;frame;frame COUNT\").\n"
"Files from many hosts merge into one graph (counts added), or one each.\n"
"\n"
"  -i, --input FILE|DIR   read FILE, or the files below DIR (as perf's -i;\n"
"                         the same as naming it after the options)\n"
"      --session NAME     the files of the recording session NAME (may be\n"
"                         repeated; all: every session, their samples\n"
"                         added). Default: the files in a DIR of session\n"
"                         default only, each FILE named whatever its own\n"
"\n"
"Time range (wall clock; default: everything; files picked by their\n"
"manifests NAME.data.json, or by their sample times):\n"
"      --since DURATION   the last DURATION up to now: 90s, 15m, 3h, 2d\n"
"      --from TIME        from TIME: 2026-12-03T02:40[:05][Z|+01:00]\n"
"                         (no zone: local time), 02:40 (today), -3h\n"
"                         (before now), now, @EPOCH-SECONDS\n"
"      --to TIME          up to TIME, same forms (default: now)\n"
"\n"
"Output:\n"
"  -o, --output FILE      the SVG flame graph (- for stdout); flame.svg\n"
"                         when no output is named (-f or -P alone write\n"
"                         only theirs)\n"
"  -f, --folded FILE      folded stacks, one line per stack (- for stdout)\n"
"  -P, --pprof FILE       the profile as pprof's profile.proto, gzipped\n"
"                         (go tool pprof, Pyroscope, Parca, speedscope)\n"
"      --otlp FILE        the profiles as an OpenTelemetry OTLP\n"
"                         ExportProfilesServiceRequest (protobuf)\n"
"      --off-cpu          off-CPU time instead of samples: each task's\n"
"                         sched_switch stack weighed by the time until it\n"
"                         runs again (perfspillctl start --off-cpu; reads\n"
"                         session offcpu unless --session is given)\n"
"      --title TEXT       the graph's title (default: what it shows)\n"
"      --roots LIST       what stacks are grouped under, outermost first,\n"
"                         of host,cgroup,comm,pid,event (default comm;\n"
"                         pid: one root per process, \"comm [pid]\";\n"
"                         none: the stacks alone)\n"
"      --per-host         one graph (and folded file) per host: the host\n"
"                         goes into each name (flame.svg: flame-HOST.svg,\n"
"                         or where %h stands)\n"
"  -I, --icicle           icicle graph: the roots at the top (also\n"
"                         --inverted; -i is --input, as in perf)\n"
"      --reverse          leaves as roots (who calls the hot functions)\n"
"      --width PIXELS     the graph's width (default: the browser window's,\n"
"                         1200 in other viewers)\n"
"      --max-depth N      draw at most N frames of a stack, its roots\n"
"                         included: those nearest the root and the leaf,\n"
"                         with [...] for the frames between (default 64;\n"
"                         0: all). Folded stacks are written whole\n"
"\n"
"Differential graph: what changed from A, the base, to B, the profile the\n"
"options above give; frames red where their share grew, blue where it\n"
"shrank, marked where only one side has them; folded output is\n"
"\"stack A B\" pairs (each base option left out is taken from B):\n"
"      --base FILE|DIR    A's trace files (repeat for more)\n"
"      --base-from TIME   A's time range, same forms as --from and --to\n"
"      --base-to TIME\n"
"      --base-host NAME   A's hosts (repeat for more)\n"
"\n";

/* in two: C99 compilers need take no string over 4095 bytes */
static const char opts_help_filters[] =
"The files being written (perfspill-*.data.partial) are read too, up to\n"
"their last whole round; first perfspilld is asked to put on disk what it\n"
"holds (the control command flush: no file is cut). The subtitle says\n"
"where their data ends.\n"
"      --socket PATH      perfspilld's control socket (default\n"
"                         $PERFSPILL_SOCKET or " PERFSPILL_SOCKET ")\n"
"      --no-flush         do not ask the daemon\n"
"\n"
"Filters (a sample is kept when it matches one of each list given; each\n"
"option may be repeated):\n"
"      --comm NAME        the command name, as the kernel keeps it: its\n"
"                         first 15 characters (systemd-journal)\n"
"  -p, --pid PID          the process\n"
"      --cgroup PATH      the cgroup or one below it (files recorded with\n"
"                         all_cgroups)\n"
"  -e, --event NAME       the event, when a file holds several\n"
"      --host NAME        the host\n"
"      --kernel-only      keep only kernel frames\n"
"      --user-only        keep only user-space frames\n"
"A filter that keeps no sample is an error (exit 1), as an empty range is.\n"
"\n"
"Names, as perf report shows them (C++ and Rust demangled, foo@plt):\n"
"      --no-demangle      keep C++ and Rust names mangled\n"
"      --inline           a frame for each function inlined at an address,\n"
"                         \"name (inlined)\", from debug info (as perf\n"
"                         report --inline)\n"
"Companions hold the default names: with either, none is read or made.\n"
"\n"
"Companions: each whole file is folded once into NAME.data.folded beside\n"
"it, which later runs read instead of the file; retention removes it\n"
"with its data file.\n"
"      --no-companion     neither read nor write companions\n"
"      --refold           make them anew (after installing debug symbols)\n"
"      --companion        only make the companions of the files given\n"
"                         (e.g. from an on_finish program), of every\n"
"                         session unless --session is given; no output\n"
"\n"
"  -q, --quiet            no progress (shown on a terminal by default)\n"
"  -v, --verbose          say what is read, and where symbols come from\n"
"  -h, --help\n"
"  -V, --version\n"
"\n"
"Binaries are found by build-id (/usr/lib/debug, ~/.debug, their path,\n"
"DEBUGINFOD_URLS). See perfspill-flame(1).\n";

enum {
	OPT_FROM = 0x100,
	OPT_TO,
	OPT_TITLE,
	OPT_ROOTS,
	OPT_PER_HOST,
	OPT_WIDTH,
	OPT_COMM,
	OPT_CGROUP,
	OPT_HOST,
	OPT_KERNEL_ONLY,
	OPT_USER_ONLY,
	OPT_NO_COMPANION,
	OPT_REFOLD,
	OPT_COMPANION,
	OPT_SESSION,
	OPT_MAX_DEPTH,
	OPT_BASE,
	OPT_BASE_FROM,
	OPT_BASE_TO,
	OPT_BASE_HOST,
	OPT_OFF_CPU,
	OPT_OTLP,
	OPT_NO_DEMANGLE,
	OPT_INLINE,
	OPT_SOCKET,
	OPT_NO_FLUSH,
	OPT_SINCE,
	OPT_REVERSE,
};

static const struct option opts_long[] = {
	{ "since",		required_argument,	NULL, OPT_SINCE },
	{ "from",		required_argument,	NULL, OPT_FROM },
	{ "to",			required_argument,	NULL, OPT_TO },
	{ "output",		required_argument,	NULL, 'o' },
	{ "folded",		required_argument,	NULL, 'f' },
	{ "pprof",		required_argument,	NULL, 'P' },
	{ "otlp",		required_argument,	NULL, OPT_OTLP },
	{ "off-cpu",		no_argument,		NULL, OPT_OFF_CPU },
	{ "base",		required_argument,	NULL, OPT_BASE },
	{ "base-from",		required_argument,	NULL, OPT_BASE_FROM },
	{ "base-to",		required_argument,	NULL, OPT_BASE_TO },
	{ "base-host",		required_argument,	NULL, OPT_BASE_HOST },
	{ "title",		required_argument,	NULL, OPT_TITLE },
	{ "roots",		required_argument,	NULL, OPT_ROOTS },
	{ "per-host",		no_argument,		NULL, OPT_PER_HOST },
	{ "input",		required_argument,	NULL, 'i' },
	{ "session",		required_argument,	NULL, OPT_SESSION },
	{ "no-demangle",	no_argument,		NULL, OPT_NO_DEMANGLE },
	{ "inline",		no_argument,		NULL, OPT_INLINE },
	{ "icicle",		no_argument,		NULL, 'I' },
	{ "inverted",		no_argument,		NULL, 'I' },
	{ "reverse",		no_argument,		NULL, OPT_REVERSE },
	{ "width",		required_argument,	NULL, OPT_WIDTH },
	{ "max-depth",		required_argument,	NULL, OPT_MAX_DEPTH },
	{ "comm",		required_argument,	NULL, OPT_COMM },
	{ "pid",		required_argument,	NULL, 'p' },
	{ "cgroup",		required_argument,	NULL, OPT_CGROUP },
	{ "event",		required_argument,	NULL, 'e' },
	{ "host",		required_argument,	NULL, OPT_HOST },
	{ "kernel-only",	no_argument,		NULL, OPT_KERNEL_ONLY },
	{ "user-only",		no_argument,		NULL, OPT_USER_ONLY },
	{ "no-companion",	no_argument,		NULL, OPT_NO_COMPANION },
	{ "refold",		no_argument,		NULL, OPT_REFOLD },
	{ "companion",		no_argument,		NULL, OPT_COMPANION },
	{ "socket",		required_argument,	NULL, OPT_SOCKET },
	{ "no-flush",		no_argument,		NULL, OPT_NO_FLUSH },
	{ "quiet",		no_argument,		NULL, 'q' },
	{ "verbose",		no_argument,		NULL, 'v' },
	{ "help",		no_argument,		NULL, 'h' },
	{ "version",		no_argument,		NULL, 'V' },
	{ NULL,			0,			NULL, 0 },
};

static _Noreturn void opts_bad(const char *, ...)
    __attribute__((format(printf, 1, 2)));

static void
opts_bad(const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "perfspill-flame: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%sTry 'perfspill-flame --help'.\n", opts_usage);
	exit(OPTS_EXIT_USAGE);
}

int64_t
opts_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

char *
opts_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 10000000000ULL)
		snprintf(buf, len, "%.1f s", (double)ns / 1e9);
	else if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3f us", (double)ns / 1e3);
	return buf;
}

int
opts_duration(const char *s, int64_t *out)
{
	uint64_t	 secs;

	if (size_parse_secs(s, &secs) == -1 || secs > INT64_MAX / 1000000000)
		return -1;
	*out = (int64_t)secs * 1000000000;
	return 0;
}

/* n digits of s as a number; -1 when one is not a digit. */
static int
opts_digits(const char *s, int n)
{
	int	 v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "HH:MM[:SS[.frac]]" at s; the rest in *end. 0 or -1. */
static int
opts_clock(const char *s, struct tm *tm, int64_t *ns, const char **end)
{
	int	 digits = 0;

	*ns = 0;
	if ((tm->tm_hour = opts_digits(s, 2)) < 0 || s[2] != ':' ||
	    (tm->tm_min = opts_digits(s + 3, 2)) < 0 || tm->tm_hour > 23 ||
	    tm->tm_min > 59)
		return -1;
	s += 5;
	tm->tm_sec = 0;
	if (*s == ':') {
		if ((tm->tm_sec = opts_digits(s + 1, 2)) < 0 ||
		    tm->tm_sec > 60)
			return -1;
		s += 3;
		if (*s == '.' || *s == ',') {
			for (s++; isdigit((unsigned char)*s); s++)
				if (digits < 9) {
					*ns = *ns * 10 + (*s - '0');
					digits++;
				}
			if (digits == 0)
				return -1;
			while (digits++ < 9)
				*ns *= 10;
		}
	}
	*end = s;
	return 0;
}

int
opts_time(const char *s, int64_t now, int64_t *out)
{
	struct tm	 tm;
	int64_t		 ns, d, off = 0;
	time_t		 t, nows;
	const char	*p;
	char		*e;
	int		 zone = 0, oh, om;
	long long	 epoch;

	if (strcmp(s, "now") == 0) {
		*out = now;
		return 0;
	}
	if (s[0] == '-') {
		if (opts_duration(s + 1, &d) == -1 || d > now)
			return -1;
		*out = now - d;
		return 0;
	}
	if (s[0] == '@') {
		errno = 0;
		epoch = strtoll(s + 1, &e, 10);
		if (e == s + 1 || *e != '\0' || errno != 0 ||
		    epoch > INT64_MAX / 1000000000 || epoch < 0)
			return -1;
		*out = (int64_t)epoch * 1000000000;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	if (strlen(s) >= 10 && s[4] == '-' && s[7] == '-') {
		if ((tm.tm_year = opts_digits(s, 4)) < 0 ||
		    (tm.tm_mon = opts_digits(s + 5, 2)) < 1 ||
		    (tm.tm_mday = opts_digits(s + 8, 2)) < 1 ||
		    tm.tm_mon > 12 || tm.tm_mday > 31)
			return -1;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		p = s + 10;
		if (*p == '\0') {
			ns = 0;
		} else if ((*p != 'T' && *p != ' ') ||
		    opts_clock(p + 1, &tm, &ns, &p) == -1)
			return -1;
	} else {
		/* a time of day: today's, in local time */
		nows = (time_t)(now / 1000000000);
		localtime_r(&nows, &tm);
		if (opts_clock(s, &tm, &ns, &p) == -1)
			return -1;
	}
	if (*p == 'Z' && p[1] == '\0')
		zone = 1;
	else if ((*p == '+' || *p == '-') && (oh = opts_digits(p + 1, 2)) >= 0
	    && ((p[3] == ':' && (om = opts_digits(p + 4, 2)) >= 0 &&
	    p[6] == '\0') || ((om = opts_digits(p + 3, 2)) >= 0 &&
	    p[5] == '\0'))) {
		zone = 1;
		off = ((int64_t)oh * 3600 + (int64_t)om * 60) *
		    (*p == '+' ? 1 : -1);
	} else if (*p != '\0')
		return -1;
	if (zone) {
		if ((t = timegm(&tm)) == (time_t)-1)
			return -1;
		t -= (time_t)off;
	} else {
		tm.tm_isdst = -1;
		if ((t = mktime(&tm)) == (time_t)-1)
			return -1;
	}
	/* nanoseconds since the epoch hold years 1678 to 2261 */
	if (t > INT64_MAX / 1000000000 - 1 || t < INT64_MIN / 1000000000 + 1)
		return -1;
	*out = (int64_t)t * 1000000000 + ns;
	return 0;
}

char *
opts_utc(int64_t ns, char *buf, size_t len, int decimals)
{
	struct tm	 tm;
	time_t		 t = (time_t)(ns / 1000000000);
	int64_t		 frac = ns % 1000000000;
	char		 digits[16];

	if (frac < 0) {
		frac += 1000000000;
		t--;
	}
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (decimals > 9)
		decimals = 9;
	if (decimals > 0 && strlen(buf) + (size_t)decimals + 3 <= len) {
		snprintf(digits, sizeof(digits), "%09lld", (long long)frac);
		digits[decimals] = '\0';
		strcat(buf, ".");
		strcat(buf, digits);
	}
	if (strlen(buf) + 2 <= len)
		strcat(buf, "Z");
	return buf;
}

static void
opts_push(const char **list, size_t *n, const char *v, const char *what)
{
	if (*n == OPTS_MAX_LIST)
		opts_bad("too many %s options", what);
	list[(*n)++] = v;
}

static void
opts_roots(struct opts *o, char *arg)
{
	static const char *const names[] = { "host", "cgroup", "comm", "pid",
	    "event" };
	char	*tok, *save = NULL;
	size_t	 i;

	o->nroots = 0;
	if (strcmp(arg, "none") == 0)
		return;
	for (tok = strtok_r(arg, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(tok, names[i]) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			opts_bad("--roots: '%s' is none of host, cgroup, comm, "
			    "pid, event, none", tok);
		if (o->nroots == OPTS_MAX_ROOTS)
			opts_bad("--roots: at most 4 of %s", "them");
		o->roots[o->nroots++] = (enum opts_root)i;
	}
}

/*
 * What to say of an unknown option arg beside getopt's message: the
 * short letters that changed so that one letter means one thing in
 * perfspillctl and perfspill-flame, else the nearest long option.
 */
static void
opts_hint(const char *arg, int letter)
{
	const struct option	*lo;
	struct suggest		 sg;
	char			 word[64];
	size_t			 n;

	if (letter == 's')
		fprintf(stderr, "perfspill-flame: -s is perfspillctl's "
		    "--socket; the range is --since DURATION\n");
	else if (letter == 'r')
		fprintf(stderr, "perfspill-flame: -r is perfspillctl's "
		    "--realtime (perf's); leaves as roots is --reverse\n");
	if (letter != 0 || strncmp(arg, "--", 2) != 0)
		return;
	n = strcspn(arg + 2, "=");
	if (n >= sizeof(word))
		return;
	snprintf(word, sizeof(word), "%.*s", (int)n, arg + 2);
	suggest_init(&sg, word);
	for (lo = opts_long; lo->name != NULL; lo++)
		suggest_offer(&sg, lo->name);
	if (suggest_best(&sg) != NULL)
		fprintf(stderr, "perfspill-flame: did you mean --%s?\n",
		    suggest_best(&sg));
}

void
opts_parse(struct opts *o, int argc, char **argv)
{
	const char	*from = NULL, *to = NULL, *since = NULL;
	const char	*bfrom = NULL, *bto = NULL;
	int64_t		 now = opts_now(), d;
	unsigned long	 v;
	char		*e;
	int		 c;

	memset(o, 0, sizeof(*o));
	o->from = INT64_MIN;
	o->to = INT64_MAX;
	o->roots[0] = OPTS_ROOT_COMM;
	o->nroots = 1;
	o->width = 1200;
	o->max_depth = OPTS_MAX_DEPTH;
	o->companion = 1;
	o->progress = -1;
	while ((c = getopt_long(argc, argv, "o:f:P:i:Ip:e:qvhV", opts_long,
	    NULL)) != -1) {
		switch (c) {
		case OPT_SINCE:
			since = optarg;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_TO:
			to = optarg;
			break;
		case 'o':
			o->svg = optarg;
			break;
		case 'f':
			o->folded = optarg;
			break;
		case 'P':
			o->pprof = optarg;
			break;
		case OPT_OTLP:
			o->otlp = optarg;
			break;
		case OPT_OFF_CPU:
			o->off_cpu = 1;
			break;
		case OPT_BASE:
			opts_push(o->base_inputs, &o->nbase_inputs, optarg,
			    "--base");
			o->diff = 1;
			break;
		case OPT_BASE_FROM:
			bfrom = optarg;
			o->diff = 1;
			break;
		case OPT_BASE_TO:
			bto = optarg;
			o->diff = 1;
			break;
		case OPT_BASE_HOST:
			opts_push(o->base_hosts, &o->nbase_hosts, optarg,
			    "--base-host");
			o->diff = 1;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_ROOTS:
			opts_roots(o, optarg);
			break;
		case OPT_PER_HOST:
			o->per_host = 1;
			break;
		case 'i':
			opts_push(o->inputs, &o->ninputs, optarg, "input");
			break;
		case OPT_SESSION:
			if (strcmp(optarg, "all") == 0)
				o->all_sessions = 1;
			else if (optarg[0] == '\0')
				opts_bad("%s", "--session: a name, or all");
			else
				opts_push(o->sessions, &o->nsessions, optarg,
				    "--session");
			break;
		case 'I':
			o->inverted = 1;
			break;
		case OPT_REVERSE:
			o->reverse = 1;
			break;
		case OPT_WIDTH:
			errno = 0;
			v = strtoul(optarg, &e, 10);
			if (*e != '\0' || errno != 0 || v < 200 || v > 100000)
				opts_bad("--width: '%s' is not a width from "
				    "200 to 100000 pixels", optarg);
			o->width = (unsigned int)v;
			o->width_set = 1;
			break;
		case OPT_MAX_DEPTH:
			errno = 0;
			v = strtoul(optarg, &e, 10);
			if (*e != '\0' || e == optarg || errno != 0 ||
			    (v != 0 && v < 4) || v > STACKSET_MAX_FRAMES)
				opts_bad("--max-depth: '%s' is not a depth from 4 "
				    "to %d frames, or 0 for all", optarg,
				    STACKSET_MAX_FRAMES);
			o->max_depth = (unsigned int)v;
			break;
		case OPT_COMM:
			opts_push(o->comms, &o->ncomms, optarg, "--comm");
			break;
		case 'p':
			errno = 0;
			v = strtoul(optarg, &e, 10);
			if (*e != '\0' || e == optarg || errno != 0 ||
			    v > UINT32_MAX)
				opts_bad("--pid: '%s' is not a process id",
				    optarg);
			if (o->npids == OPTS_MAX_LIST)
				opts_bad("too many %s options", "--pid");
			o->pids[o->npids++] = (uint32_t)v;
			break;
		case OPT_CGROUP:
			opts_push(o->cgroups, &o->ncgroups, optarg,
			    "--cgroup");
			break;
		case 'e':
			opts_push(o->events, &o->nevents, optarg, "--event");
			break;
		case OPT_HOST:
			opts_push(o->hosts, &o->nhosts, optarg, "--host");
			break;
		case OPT_KERNEL_ONLY:
			o->kernel_only = 1;
			break;
		case OPT_USER_ONLY:
			o->user_only = 1;
			break;
		case OPT_NO_COMPANION:
			o->companion = 0;
			break;
		case OPT_REFOLD:
			o->refold = 1;
			break;
		case OPT_COMPANION:
			o->companion_only = 1;
			break;
		case OPT_NO_DEMANGLE:
			o->no_demangle = 1;
			break;
		case OPT_INLINE:
			o->inline_frames = 1;
			break;
		case OPT_SOCKET:
			o->socket = optarg;
			break;
		case OPT_NO_FLUSH:
			o->no_flush = 1;
			break;
		case 'q':
			o->progress = 0;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			printf("%s\n%s%s", opts_usage, opts_help,
			    opts_help_filters);
			exit(0);
		case 'V':
			printf("perfspill-flame %s\n", PERFSPILL_VERSION);
			exit(0);
		default:
			opts_hint(argv[optind - 1], optopt);
			fprintf(stderr, "%sTry 'perfspill-flame --help'.\n",
			    opts_usage);
			exit(OPTS_EXIT_USAGE);
		}
	}
	for (; optind < argc; optind++)
		opts_push(o->inputs, &o->ninputs, argv[optind], "input");
	if (since != NULL && (from != NULL || to != NULL))
		opts_bad("%s", "--since is a range of its own: give it, or "
		    "--from and --to");
	if (since != NULL) {
		if (opts_duration(since, &d) == -1)
			opts_bad("--since: '%s' is not a duration (90s, 15m, "
			    "3h, 2d)", since);
		o->from = now - d;
		o->to = now;
		o->ranged = 1;
	}
	if (from != NULL) {
		if (opts_time(from, now, &o->from) == -1)
			opts_bad("--from: '%s' is not a time (see --help)",
			    from);
		o->ranged = 1;
	}
	if (to != NULL) {
		if (opts_time(to, now, &o->to) == -1)
			opts_bad("--to: '%s' is not a time (see --help)", to);
		o->ranged = 1;
	}
	if (o->from >= o->to)
		opts_bad("%s", "the time range is empty: --from must be "
		    "before --to");
	o->base_from = o->from;
	o->base_to = o->to;
	o->base_ranged = o->ranged;
	if (bfrom != NULL || bto != NULL) {
		/* A's own range: an end not given is open */
		o->base_from = INT64_MIN;
		o->base_to = INT64_MAX;
		o->base_ranged = 1;
	}
	if (bfrom != NULL && opts_time(bfrom, now, &o->base_from) == -1)
		opts_bad("--base-from: '%s' is not a time (see --help)", bfrom);
	if (bto != NULL && opts_time(bto, now, &o->base_to) == -1)
		opts_bad("--base-to: '%s' is not a time (see --help)", bto);
	if (o->base_from >= o->base_to)
		opts_bad("%s", "the base's time range is empty: --base-from "
		    "must be before --base-to");
	if (o->diff && (o->per_host || o->pprof != NULL || o->companion_only))
		opts_bad("%s", "a differential graph is one SVG and/or folded "
		    "pairs: not with --per-host, --pprof or --companion");
	if (o->diff && o->otlp != NULL)
		opts_bad("%s", "a differential graph is not an OTLP profile");
	if (o->off_cpu && o->companion_only)
		opts_bad("%s", "--off-cpu reads the files each time: companions "
		    "hold sample counts");

	if (o->kernel_only && o->user_only)
		opts_bad("%s", "--kernel-only and --user-only leave nothing");
	if (o->companion_only && !o->companion)
		opts_bad("%s", "--companion and --no-companion contradict");
	/* a companion holds the default names: others are made each run */
	if (o->companion_only && (o->no_demangle || o->inline_frames))
		opts_bad("%s", "companions hold the default names: not with "
		    "--no-demangle or --inline");
	if (o->no_demangle || o->inline_frames)
		o->companion = 0;
	if (o->all_sessions && o->nsessions > 0)
		opts_bad("%s", "--session all takes every session: give it, "
		    "or names");
	/* a companion is of its file alone: make every session's */
	if (o->companion_only && o->nsessions == 0)
		o->all_sessions = 1;
	if (o->companion_only && o->ranged)
		opts_bad("%s", "--companion folds whole files: no time range");
	if (o->svg == NULL && o->folded == NULL && o->pprof == NULL &&
	    o->otlp == NULL && !o->companion_only)
		o->svg = "flame.svg";
	if (o->svg != NULL && o->folded != NULL &&
	    strcmp(o->svg, "-") == 0 && strcmp(o->folded, "-") == 0)
		opts_bad("%s", "the SVG and the folded stacks cannot both go "
		    "to stdout");
	if ((o->svg != NULL && strcmp(o->svg, "-") == 0) +
	    (o->folded != NULL && strcmp(o->folded, "-") == 0) +
	    (o->pprof != NULL && strcmp(o->pprof, "-") == 0) +
	    (o->otlp != NULL && strcmp(o->otlp, "-") == 0) > 1)
		opts_bad("%s", "only one output can go to stdout");
	if (o->per_host && ((o->svg != NULL && strcmp(o->svg, "-") == 0) ||
	    (o->folded != NULL && strcmp(o->folded, "-") == 0) ||
	    (o->pprof != NULL && strcmp(o->pprof, "-") == 0) ||
	    (o->otlp != NULL && strcmp(o->otlp, "-") == 0)))
		opts_bad("%s", "--per-host writes one file per host: give "
		    "names, not -");
	if (o->ninputs == 0)
		o->inputs[o->ninputs++] = PERFSPILL_OUTPUT_DIR;
	if (o->diff && o->nbase_inputs == 0) {
		memcpy(o->base_inputs, o->inputs, sizeof(o->inputs));
		o->nbase_inputs = o->ninputs;
	}
}

int
opts_names(const struct opts *o)
{
	return (o->no_demangle ? 0 : SYMBOLIZE_DEMANGLE) |
	    (o->inline_frames ? SYMBOLIZE_INLINE : 0);
}

/*
 * opts: perfspill-flame's command line, and the times and durations it
 * takes (--since 3h, --from 2026-12-03T02:40, --to -30m).
 */
#ifndef PERFSPILL_OPTS_H
#define PERFSPILL_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define OPTS_MAX_LIST	64
#define OPTS_MAX_ROOTS	4
#define OPTS_EXIT_USAGE	2
#define OPTS_MAX_DEPTH	64	/* --max-depth's default */
#define OPTS_COMM_LEN	15	/* the kernel keeps this much of a comm */
#define OPTS_OFF_CPU_SESSION "offcpu"	/* perfspillctl start --off-cpu's */

/* What the frames under the graph's root are grouped by, outermost first. */
enum opts_root {
	OPTS_ROOT_HOST,
	OPTS_ROOT_CGROUP,
	OPTS_ROOT_COMM,
	OPTS_ROOT_PID,		/* "comm [pid]": one root per process */
	OPTS_ROOT_EVENT,
};

struct opts {
	int64_t		 from, to;	/* wall ns: [from, to) */
	int		 ranged;	/* from or to given */
	const char	*inputs[OPTS_MAX_LIST];
	size_t		 ninputs;
	const char	*svg;		/* NULL: none */
	const char	*folded;	/* NULL: none; "-": stdout */
	const char	*pprof;		/* NULL: none (profile.proto, gzip) */
	const char	*otlp;		/* NULL: none (OTLP profiles request) */
	int		 off_cpu;	/* weigh by off-CPU time (offcpu.h) */
	const char	*title;
	/* filters: a sample is kept when it matches any of each list given */
	const char	*comms[OPTS_MAX_LIST];
	size_t		 ncomms;
	uint32_t	 pids[OPTS_MAX_LIST];
	size_t		 npids;
	const char	*cgroups[OPTS_MAX_LIST];
	size_t		 ncgroups;
	const char	*events[OPTS_MAX_LIST];
	size_t		 nevents;
	const char	*hosts[OPTS_MAX_LIST];
	size_t		 nhosts;
	int		 kernel_only, user_only;
	enum opts_root	 roots[OPTS_MAX_ROOTS];
	size_t		 nroots;
	const char	*sessions[OPTS_MAX_LIST]; /* none: "default" */
	size_t		 nsessions;
	int		 all_sessions;	/* --session all */
	int		 inverted;	/* icicle: roots at the top */
	int		 reverse;	/* leaves as roots */
	int		 per_host;	/* one output per host */
	unsigned int	 width;
	int		 width_set;	/* --width given: no fitting to a window */
	unsigned int	 max_depth;	/* frames a graph draws; 0: all */
	int		 companion;	/* read and write NAME.data.folded */
	int		 refold;	/* ignore companions, make them anew */
	int		 companion_only; /* --companion: make them, no output */
	/* a differential graph: A, the base, against B, what the inputs,
	 * range and hosts above give; each base setting not given is B's */
	int		 diff;
	const char	*base_inputs[OPTS_MAX_LIST];
	size_t		 nbase_inputs;
	int64_t		 base_from, base_to;	/* wall ns: [from, to) */
	int		 base_ranged;
	const char	*base_hosts[OPTS_MAX_LIST];
	size_t		 nbase_hosts;
	int		 no_demangle;	/* C++ and Rust names as in the file */
	int		 inline_frames;	/* --inline: inlined functions' frames */
	const char	*socket;	/* perfspilld's; NULL: the default */
	int		 no_flush;	/* do not ask it to flush */
	int		 progress;	/* -1: on a terminal */
	int		 verbose;
};

/* Parses argv into o; 0, or exits (--help, --version, a usage error). */
void	opts_parse(struct opts *, int, char **);
/* A time as the command line takes it, into wall ns since the epoch:
 * "2026-12-03T02:40[:05[.25]][Z|+01:00]" (a space may stand for T; no
 * zone: local time), "02:40" (today), "now", "-90m" (before now),
 * "@1764729600" (epoch seconds). 0 or -1. */
int	opts_time(const char *, int64_t now, int64_t *);
/* "90s", "15m", "3h", "2d" (or plain seconds) to ns. 0 or -1. */
int	opts_duration(const char *, int64_t *);
/* A time of ns as people read it ("31.250 ms", "2.500 s"), into buf. */
char	*opts_ns(uint64_t ns, char *buf, size_t len);
/* The SYMBOLIZE_* flags (symbolize.h) the options ask for. */
int	opts_names(const struct opts *);
/* Wall ns now. */
int64_t	opts_now(void);
/* UTC "YYYY-MM-DDTHH:MM:SS[.fff]Z" of wall ns, into buf. */
char	*opts_utc(int64_t, char *, size_t, int decimals);

#endif

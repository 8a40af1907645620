/*
 * evparse: the grammar of perf record's -e, as perf-list(1)'s syntax
 * section writes it, with no look at the machine: a symbolic event and
 * its modifiers ("cpu-clock:u"), a tracepoint ("sched:sched_switch"), a
 * raw event ("r1a8"), a PMU event with terms ("msr/event=0x0/",
 * "software/config=0,period=1000/k"), and groups of them
 * ("{cpu-clock,task-clock}:u"). The config validator (common/config.c)
 * checks a setting's syntax with it; daemon/record/evsel.c resolves what
 * it parsed against sysfs and tracefs. Pure: no thread of its own, safe
 * anywhere.
 */
#ifndef PERFSPILL_EVPARSE_H
#define PERFSPILL_EVPARSE_H

#include <stddef.h>
#include <stdint.h>

#define EVPARSE_NAME_LEN	128	/* config.h's CONFIG_EVENT_LEN */
#define EVPARSE_MAX_TERMS	16
#define EVPARSE_TERM_LEN	64
#define EVPARSE_MAX_EVENTS	16	/* in one setting, groups expanded */

enum evparse_kind {
	EVPARSE_SYMBOL,		/* cpu-clock, cycles, ... (evparse_symbol) */
	EVPARSE_TRACEPOINT,	/* system:name */
	EVPARSE_RAW,		/* rNNN: the PMU's own encoding */
	EVPARSE_PMU,		/* pmu/term=value,.../ */
};

/* One PMU term: "event=0x3c" (has_value), or a bare "tsc" (an event of
 * the PMU's events/ directory, or a format term set to 1). */
struct evparse_term {
	char		 name[EVPARSE_TERM_LEN];
	char		 value[EVPARSE_TERM_LEN];
	int		 has_value;
};

/* The modifiers after ':' (perf-list(1) "EVENT MODIFIERS"). */
struct evparse_mods {
	int		 user, kernel, hv;	/* u k h: any given excludes the others */
	int		 guest, host;		/* G H */
	int		 no_idle;		/* I */
	int		 pinned;		/* D */
	int		 precise;		/* p, pp, ppp: 1..3 */
	int		 max_precise;		/* P: the most the kernel takes */
};

struct evparse_event {
	/* what perf names it in perf report, perf script, perf evlist */
	char			 name[EVPARSE_NAME_LEN];
	enum evparse_kind	 kind;
	/* the symbol, "system:name", or the PMU's name */
	char			 base[EVPARSE_NAME_LEN];
	uint64_t		 raw;			/* EVPARSE_RAW */
	struct evparse_term	 terms[EVPARSE_MAX_TERMS];
	size_t			 nr_terms;
	struct evparse_mods	 mods;
	/* 0: alone or a group's leader; else the leader is this many
	 * events before it in the list */
	size_t			 leader_off;
};

/* A symbolic event perf knows (perf list "Software event" and "Hardware
 * event"): its PERF_TYPE_* and config. 0, or -1 for an unknown name. */
int	evparse_symbol(const char *name, uint32_t *type, uint64_t *config);

/*
 * Parse one setting's text, a comma separated list of events and groups,
 * into out[0..*n). 0, or -1 with err set to a message that starts, as
 * perf's does, "event syntax error: 'TEXT'".
 */
int	evparse_list(const char *text, struct evparse_event *out, size_t max,
	    size_t *n, char *err, size_t len);

/*
 * The length of the first item of a comma separated list of events: up
 * to the first comma outside a group's braces and a PMU event's slashes
 * ("{a,b},c" is "{a,b}", "msr/event=1,umask=2/,c" is up to the second
 * comma). A command line's "-e A,B" splits with it.
 */
size_t	evparse_item(const char *text);

/* A number as a term's value or a modifier-free raw code: decimal, or
 * hexadecimal with 0x. 0, or -1. */
int	evparse_number(const char *s, uint64_t *v);

#endif

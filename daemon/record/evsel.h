/*
 * evsel turns events as perf users write them (common/evparse.h's
 * grammar: "cpu-clock:u", "sched:sched_switch", "r1a8", "msr/event=0x0/",
 * "{cpu-clock,task-clock}") into perf_event_attrs, with the PMU terms and
 * events read from sysfs (evsel-pmu.c), and makes the checks that give a
 * clear error before any perf_event_open: unknown name, tracepoint not
 * found, no hardware PMU. Called on the loop's thread at a start (and by
 * tests); nothing here runs on the drain thread.
 */
#ifndef PERFSPILL_EVSEL_H
#define PERFSPILL_EVSEL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "config.h"

struct evsel {
	char			name[CONFIG_EVENT_LEN];
	struct perf_event_attr	attr;
	char			tp_system[64];	/* empty unless a tracepoint */
	char			tp_name[64];
	/* 0: alone or a group's leader; else the leader is this many
	 * evsels before it (perf_event_open's group_fd) */
	size_t			leader_off;
	int			precise_fixed;	/* p modifiers: never lowered */
	int			own_period;	/* a period or freq term */
	int			excl_fixed;	/* u, k or h: --all-user and
						 * --all-kernel leave it */
};

/* Where the kernel lists its PMUs (format/, events/, type). */
#define EVSEL_PMU_ROOT	"/sys/bus/event_source/devices"

/* The mounted tracefs ("/sys/kernel/tracing" or the debugfs one), or NULL. */
const char	*evsel_tracefs(void);

/* Resolve one event into ev (type, config, modifiers). 0, or -1 with
 * err set; a list or group is refused (evsel_parse_list takes them). */
int	evsel_parse(struct evsel *ev, const char *name, char *err, size_t len);

/* Resolve a setting's events, a list with groups, into evs[0..*n) (at
 * most max). 0, or -1 with err set. */
int	evsel_parse_list(struct evsel *evs, size_t max, size_t *n,
	    const char *text, char *err, size_t len);

/*
 * A PMU event (evparse's EVPARSE_PMU) against root (EVSEL_PMU_ROOT, or
 * a test's tree): the PMU's type, its format terms ("event" is
 * "config:0-7") and events ("tsc" is "event=0x00"), and the terms every
 * PMU takes (config, config1, config2, period, freq, name). 0, or -1
 * with err set. evsel-pmu.c.
 */
struct evparse_event;
int	evsel_pmu(struct evsel *ev, const char *root,
	    const struct evparse_event *pe, char *err, size_t len);

/* Fill the sampling part of every attr from the settings. */
void	evsel_config(struct evsel *evs, size_t n, const struct config *,
	    size_t ring_bytes);

/* The user registers a DWARF sample carries on this architecture (perf's
 * PERF_REGS_MASK), or 0 where DWARF stacks are not supported. */
uint64_t	evsel_user_regs(void);

/* Bytes in a ring of ring_bytes that wake the drain thread
 * (wakeup_pct; with 0, the least of what evsel_config may set). */
uint64_t	evsel_wakeup_bytes(const struct config *, size_t ring_bytes);

/* The kernel's perf_event_max_sample_rate, or 0 when unreadable. */
unsigned long	evsel_max_sample_rate(void);

#endif

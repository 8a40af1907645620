/*
 * evsel: event names as perf users write them ("cpu-clock",
 * "context-switches", "cycles", "sched:sched_switch") turned into a
 * perf_event_attr, and the checks that give a clear error before any
 * perf_event_open: unknown name, tracepoint not found, no hardware PMU.
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
};

/* The mounted tracefs ("/sys/kernel/tracing" or the debugfs one), or NULL. */
const char	*evsel_tracefs(void);

/* Resolve name into ev (type and config only). 0, or -1 with err set. */
int	evsel_parse(struct evsel *ev, const char *name, char *err, size_t len);

/* Fill the sampling part of every attr from the settings. */
void	evsel_config(struct evsel *evs, size_t n, const struct config *,
	    size_t ring_bytes);

/* The user registers a DWARF sample carries on this architecture (perf's
 * PERF_REGS_MASK), or 0 where DWARF stacks are not supported. */
uint64_t	evsel_user_regs(void);

/* Bytes in a ring of ring_bytes that wake the loop (wakeup_pct). */
uint64_t	evsel_wakeup_bytes(const struct config *, size_t ring_bytes);

/* The kernel's perf_event_max_sample_rate, or 0 when unreadable. */
unsigned long	evsel_max_sample_rate(void);

#endif

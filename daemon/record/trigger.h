/*
 * trigger arms what makes a flight recording snapshot by itself, as the
 * config's triggers say (config.h). Today the kernel's pressure stall
 * triggers (PSI, Documentation/accounting/psi.rst): /proc/pressure/RES or
 * a cgroup's RES.pressure, opened read-write, given "some|full STALL
 * WINDOW" in microseconds; the kernel then signals POLLPRI at most once a
 * window while the stall is over the threshold. A trigger reports (cb)
 * and decides nothing: whether to snapshot is record.c's. Every function
 * here, and cb, runs in the loop.
 */
#ifndef PERFSPILL_TRIGGER_H
#define PERFSPILL_TRIGGER_H

#include <event2/event.h>

#include "config.h"

struct trigger_set;

/* A trigger fired; why names it ("psi:cpu", "psi:memory:CGROUP"). */
typedef void (*trigger_cb)(const char *why, void *arg);

/*
 * Arm cfg's triggers in the loop of base; cgroupfs: the cgroup2 mount,
 * for triggers on a cgroup's pressure. NULL with err filled when one
 * cannot be set up (no PSI in this kernel, a refused threshold, no such
 * cgroup); a set with no triggers when cfg has none.
 */
struct trigger_set *trigger_open(struct event_base *, const struct config *,
	    const char *cgroupfs, trigger_cb, void *arg,
	    struct config_error *err);
void	trigger_close(struct trigger_set *);
/* Times each trigger fired, in cfg's order, into n[0..nr). */
void	trigger_counts(const struct trigger_set *, uint64_t *n, size_t nr);

#endif

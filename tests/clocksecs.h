/*
 * clocksecs: a clock in seconds, for the test loads (flametarget,
 * deepstack, taskstorm), which run for a span of wall or CPU time.
 */
#ifndef PERFSPILL_CLOCKSECS_H
#define PERFSPILL_CLOCKSECS_H

#include <time.h>

static inline double
clock_secs(clockid_t id)
{
	struct timespec	 t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif

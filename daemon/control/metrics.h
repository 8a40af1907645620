/*
 * metrics writes perfspilld's counters in the Prometheus text exposition
 * format (version 0.0.4), for `perfspillctl metrics` and for
 * node_exporter's textfile collector (the metrics_file key).
 *
 * Counters are monotonic over the daemon's life: a stop and a start do
 * not reset them, so a scraper's rate() stays right across recordings.
 * The counters themselves (struct metrics) are record-metrics.h's: the
 * recording fills them, this file sums and formats them.
 *
 * Threads: the loop calls every function here (the command, the
 * exporter's timer); they keep no state of their own.
 */
#ifndef PERFSPILL_METRICS_H
#define PERFSPILL_METRICS_H

#include <stdint.h>
#include <time.h>

#include "perfdata/sbuf.h"
#include "record-metrics.h"

/* Add the counters of from (not its gauges) to to: a daemon's totals
 * over several recordings. */
void	metrics_add(struct metrics *to, const struct metrics *from);
/* Append the exposition text. 0, or -1 when memory runs out. */
int	metrics_format(struct sbuf *out, const struct metrics *);
/* Replace path with the text atomically (a temporary file beside it, then
 * rename), as node_exporter's textfile collector wants. 0 or -1 (errno). */
int	metrics_write_file(const char *path, const struct sbuf *);

#endif

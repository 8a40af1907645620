/*
 * exporter gathers the daemon's metrics (metrics.h) from the recorder
 * and the daemon, for the `metrics` command, and writes them every
 * metrics_interval seconds to metrics_file for node_exporter's textfile
 * collector. It runs in the loop.
 */
#ifndef PERFSPILL_EXPORTER_H
#define PERFSPILL_EXPORTER_H

#include "perfdata/sbuf.h"

struct daemon;

/* The exposition text of now. 0, or -1 when memory runs out. */
int	exporter_text(struct daemon *, struct sbuf *);
/* (Re)arm the periodic write after a start or a reload: metrics_file ""
 * stops it. Writes once at once, so a scraper sees the daemon soon. */
void	exporter_start(struct daemon *);
/* A last write at exit (recording 0), then the timer goes. */
void	exporter_finish(struct daemon *);

#endif

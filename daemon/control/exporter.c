/*
 * exporter writes the metrics of the recorder and the daemon (see
 * exporter.h).
 *
 * The file is small (a few KiB) and replaced with one write and a rename
 * on the loop: cheaper than a thread, and a slow disk delays the loop by
 * one page-cache write at most every metrics_interval seconds. A failing
 * write is logged once until it works again, not at every interval.
 */
#include <errno.h>
#include <event2/event.h>

#include "daemon.h"
#include "exporter.h"
#include "handoff.h"
#include "log.h"
#include "metrics.h"
#include "paths.h"
#include "session.h"

int
exporter_text(struct daemon *d, struct sbuf *out)
{
	struct metrics	 m;

	/* every session's, those that ended included */
	session_metrics(d->sessions, &m);
	handoff_counts(d->handoff, &m.handoffs_ok, &m.handoffs_failed);
	m.started = d->started;
	m.version = PERFSPILL_VERSION;
	return metrics_format(out, &m);
}

static void
exporter_write(struct daemon *d)
{
	struct sbuf	 sb;
	int		 rc;

	sbuf_init(&sb);
	if ((rc = exporter_text(d, &sb)) == 0)
		rc = metrics_write_file(d->cfg.metrics_file, &sb);
	sbuf_finish(&sb);
	if (rc == -1 && !d->metrics_failing)
		log_warn("metrics_file %s", d->cfg.metrics_file);
	else if (rc == 0 && d->metrics_failing)
		log_info("metrics_file %s written again", d->cfg.metrics_file);
	d->metrics_failing = rc == -1;
}

static void
exporter_cb(evutil_socket_t fd, short what, void *arg)
{
	exporter_write(arg);
}

void
exporter_start(struct daemon *d)
{
	struct timeval	 tv;

	if (d->metrics_ev != NULL) {
		event_free(d->metrics_ev);
		d->metrics_ev = NULL;
	}
	if (d->cfg.metrics_file[0] == '\0')
		return;
	d->metrics_ev = event_new(d->base, -1, EV_PERSIST, exporter_cb, d);
	tv.tv_sec = (time_t)d->cfg.metrics_interval;
	tv.tv_usec = 0;
	if (d->metrics_ev == NULL || event_add(d->metrics_ev, &tv) == -1) {
		log_warnx("metrics_file %s: cannot start its timer",
		    d->cfg.metrics_file);
		return;
	}
	exporter_write(d);
}

void
exporter_finish(struct daemon *d)
{
	if (d->metrics_ev == NULL)
		return;
	exporter_write(d);
	event_free(d->metrics_ev);
	d->metrics_ev = NULL;
}

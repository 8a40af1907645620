/*
 * notify sends sd_notify messages and runs the watchdog timer (see
 * notify.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"

/* STATUS= is refreshed at this period even without a watchdog. */
#define NOTIFY_STATUS_USEC	(5 * 1000000ULL)

struct notify {
	struct event		*timer;
	notify_status_fn	 fn;
	void			*arg;
	int			 watchdog;
	char			 last[256];
};

static void
notify_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct notify	*n = arg;

	if (n->watchdog)
		sd_notify(0, "WATCHDOG=1");
	notify_status(n);
}

struct notify *
notify_create(struct event_base *base, notify_status_fn fn, void *arg)
{
	struct notify	*n;
	uint64_t	 usec = NOTIFY_STATUS_USEC;
	struct timeval	 tv;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->fn = fn;
	n->arg = arg;
	if (getenv("NOTIFY_SOCKET") == NULL)
		return n;
	if (sd_watchdog_enabled(0, &usec) > 0) {
		/* feed it twice per interval: one late tick is not a kill */
		n->watchdog = 1;
		usec /= 2;
		log_info("watchdog enabled: pinging every %llu ms",
		    (unsigned long long)(usec / 1000));
	} else
		usec = NOTIFY_STATUS_USEC;
	n->timer = event_new(base, -1, EV_PERSIST, notify_timer_cb, n);
	tv.tv_sec = (time_t)(usec / 1000000);
	tv.tv_usec = (suseconds_t)(usec % 1000000);
	if (n->timer != NULL)
		event_add(n->timer, &tv);
	return n;
}

void
notify_destroy(struct notify *n)
{
	if (n == NULL)
		return;
	if (n->timer != NULL)
		event_free(n->timer);
	free(n);
}

void
notify_send(struct notify *n, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	if (n == NULL || getenv("NOTIFY_SOCKET") == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sd_notify(0, msg);
}

void
notify_status(struct notify *n)
{
	char	 line[256];

	if (n == NULL || n->fn == NULL || getenv("NOTIFY_SOCKET") == NULL)
		return;
	n->fn(line, sizeof(line), n->arg);
	notify_send(n, "STATUS=%s", line);
}

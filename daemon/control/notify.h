/*
 * notify is the daemon's side of systemd's notify protocol: READY=1,
 * STATUS= one-line state, RELOADING=1, STOPPING=1, and WATCHDOG=1 sent
 * from a timer of the event loop, so that a stuck loop stops feeding the
 * watchdog and systemd restarts it. Without NOTIFY_SOCKET all are
 * no-ops. Every function here runs in the loop.
 */
#ifndef PERFSPILL_NOTIFY_H
#define PERFSPILL_NOTIFY_H

#include <event2/event.h>

struct notify;
typedef void (*notify_status_fn)(char *buf, size_t len, void *arg);

struct notify	*notify_create(struct event_base *, notify_status_fn, void *);
void		 notify_destroy(struct notify *);
void		 notify_send(struct notify *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* Send STATUS= now (after a state change). */
void		 notify_status(struct notify *);

#endif

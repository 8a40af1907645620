/*
 * trigger arms the triggers of a flight recording (see trigger.h).
 *
 * libevent's EV_READ does not see POLLPRI, so each PSI fd goes into an
 * epoll set of its own with EPOLLPRI, and the loop watches that epoll
 * fd. One set per trigger, not one for all: when the loop's own epoll
 * polls a nested epoll fd, the kernel polls the PSI fd inside it, which
 * consumes the PSI event; the nested set's epoll_wait may then find
 * nothing, and only its readiness says which trigger fired.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "log.h"
#include "trigger.h"

struct trigger {
	struct trigger_set	*set;
	int			 fd;	/* the pressure file */
	int			 epfd;
	struct event		*ev;
	uint64_t		 fired;
	char			 why[CONFIG_CGROUP_LEN + 32];
};

struct trigger_set {
	struct trigger		 t[CONFIG_MAX_TRIGGERS];
	size_t			 nr;
	trigger_cb		 cb;
	void			*arg;
};

static void
trigger_cb_ev(evutil_socket_t fd, short what, void *arg)
{
	struct trigger		*t = arg;
	struct epoll_event	 e[1];

	/* empties the nested set's ready list; the event may be gone */
	while (epoll_wait(t->epfd, e, 1, 0) > 0)
		;
	t->fired++;
	t->set->cb(t->why, t->set->arg);
}

/* Arm trigger tr as t. 0, or -1 with err filled. */
static int
trigger_psi(struct event_base *base, struct trigger *t,
    const struct config_trigger *tr, const char *cgroupfs,
    struct config_error *err)
{
	const char		*res = config_psi_name(tr->resource);
	struct epoll_event	 e;
	char			 path[CONFIG_PATH_LEN + CONFIG_CGROUP_LEN + 32];
	char			 line[64];
	int			 n;

	if (tr->cgroup[0]) {
		if (cgroupfs == NULL || cgroupfs[0] == '\0')
			return config_fail(err, PROTO_E_SYSTEM, "triggers",
			    "a psi trigger on cgroup %s needs the cgroup2 "
			    "hierarchy, which is not mounted", tr->cgroup);
		snprintf(path, sizeof(path), "%s/%s/%s.pressure", cgroupfs,
		    tr->cgroup, res);
		snprintf(t->why, sizeof(t->why), "psi:%s:%s", res, tr->cgroup);
	} else {
		snprintf(path, sizeof(path), "/proc/pressure/%s", res);
		snprintf(t->why, sizeof(t->why), "psi:%s", res);
	}
	if ((t->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1)
		return config_fail(err, PROTO_E_SYSTEM, "triggers", "psi "
		    "trigger: cannot open %s: %s%s", path, strerror(errno),
		    errno == ENOENT ? " (the kernel needs CONFIG_PSI, and psi=1 "
		    "on its command line where it is off by default; a cgroup "
		    "trigger needs the cgroup to exist)" : "");
	n = snprintf(line, sizeof(line), "%s %" PRIu64 " %" PRIu64,
	    tr->full ? "full" : "some", tr->stall_ms * 1000,
	    tr->window_ms * 1000);
	/* the terminating NUL too: the kernel's parser wants a string */
	if (write(t->fd, line, (size_t)n + 1) == -1)
		return config_fail(err, PROTO_E_SYSTEM, "triggers", "psi "
		    "trigger: %s refused \"%s\": %s%s", path, line,
		    strerror(errno), errno == EINVAL && tr->window_ms % 2000 ?
		    " (without CAP_SYS_RESOURCE the kernel takes only a "
		    "window_ms that is a multiple of 2000)" : "");
	if ((t->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return config_fail(err, PROTO_E_SYSTEM, "triggers",
		    "epoll_create1: %s", strerror(errno));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLPRI;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->fd, &e) == -1)
		return config_fail(err, PROTO_E_SYSTEM, "triggers", "psi "
		    "trigger: cannot poll %s: %s", path, strerror(errno));
	if ((t->ev = event_new(base, t->epfd, EV_READ | EV_PERSIST,
	    trigger_cb_ev, t)) == NULL || event_add(t->ev, NULL) == -1)
		return config_fail(err, PROTO_E_SYSTEM, "triggers",
		    "out of memory");
	log_info("trigger %s armed: %s %s", t->why, path, line);
	return 0;
}

struct trigger_set *
trigger_open(struct event_base *base, const struct config *cfg,
    const char *cgroupfs, trigger_cb cb, void *arg, struct config_error *err)
{
	struct trigger_set	*s;
	size_t			 i;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
		return NULL;
	}
	s->cb = cb;
	s->arg = arg;
	for (i = 0; i < cfg->nr_triggers; i++) {
		s->t[i].set = s;
		s->t[i].fd = s->t[i].epfd = -1;
		s->nr = i + 1;
		/* one kind today: CONFIG_TRIGGER_PSI */
		if (trigger_psi(base, &s->t[i], &cfg->triggers[i], cgroupfs,
		    err) == -1) {
			trigger_close(s);
			return NULL;
		}
	}
	return s;
}

void
trigger_close(struct trigger_set *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nr; i++) {
		if (s->t[i].ev != NULL)
			event_free(s->t[i].ev);
		if (s->t[i].epfd != -1)
			close(s->t[i].epfd);
		if (s->t[i].fd != -1)
			close(s->t[i].fd);
	}
	free(s);
}

void
trigger_counts(const struct trigger_set *s, uint64_t *n, size_t nr)
{
	size_t	 i;

	for (i = 0; i < nr; i++)
		n[i] = s != NULL && i < s->nr ? s->t[i].fired : 0;
}

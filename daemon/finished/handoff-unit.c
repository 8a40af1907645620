/*
 * handoff-unit: the on_finish program in a unit of its own, where
 * perfspilld is a systemd service. The recorder's unit has no network
 * and runs as root; perfspill-handoff@.service runs the program as its
 * own user, with the network, its own bounds and its output in the
 * journal. Each try starts the instance named after the file's mark
 * (systemd's path escaping of .NAME.handoff, which the unit reads as its
 * EnvironmentFile=) with StartUnit over the system bus; the start job's
 * JobRemoved says how it ended. The bus is driven from the loop: no call
 * here waits, except those at the daemon's exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

#include "handoff-int.h"
#include "log.h"

#define SD_DEST		"org.freedesktop.systemd1"
#define SD_PATH		"/org/freedesktop/systemd1"
#define SD_MANAGER	"org.freedesktop.systemd1.Manager"

static void	handoff_unit_arm(struct handoff *);

int
handoff_unit_available(void)
{
	char	*unit = NULL;
	size_t	 n;
	int	 yes;

	/* systemd is PID 1 and we are one of its services (not a command
	 * run from a login session or a container's shell) */
	if (sd_booted() <= 0 || sd_pid_get_unit(0, &unit) < 0)
		return 0;
	n = strlen(unit);
	yes = n > 8 && strcmp(unit + n - 8, ".service") == 0;
	free(unit);
	return yes;
}

/*
 * systemd's escaping of a path as a unit's instance (systemd.unit(5),
 * systemd-escape --path): without the leading '/', '/' as '-', and each
 * byte other than [A-Za-z0-9:_.] (and a '.' first) as \xNN.
 */
static int
handoff_unit_name(const char *path, char *out, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*s = (const unsigned char *)path;
	const unsigned char	*first;
	size_t			 n;

	n = (size_t)snprintf(out, len, "%s", HANDOFF_UNIT_PREFIX);
	while (*s == '/')
		s++;
	for (first = s; *s != '\0'; s++) {
		if (n + 4 + sizeof(".service") > len)
			return -1;
		if (*s == '/')
			out[n++] = '-';
		else if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == ':' || *s == '_' ||
		    (*s == '.' && s != first)) {
			out[n++] = (char)*s;
		} else {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[*s >> 4];
			out[n++] = hex[*s & 15];
		}
	}
	snprintf(out + n, len - n, ".service");
	return 0;
}

static struct handoff_job *
handoff_unit_job(struct handoff *ho, const char *job_path)
{
	struct handoff_job	*j;

	TAILQ_FOREACH(j, &ho->q, entry)
		if (j->state == HANDOFF_RUNNING && j->via == HANDOFF_VIA_UNIT &&
		    j->job_path != NULL && strcmp(j->job_path, job_path) == 0)
			return j;
	return NULL;
}

/* The bus is gone (dbus restarted): what runs is not heard of again. */
static void
handoff_unit_lost(struct handoff *ho, int r)
{
	struct handoff_job	*j;
	char			 how[HANDOFF_UNIT_NAME_MAX + 64];

	log_warnx("on_finish: lost the system bus: %s", strerror(-r));
	if (ho->bus_ev != NULL) {
		event_free(ho->bus_ev);
		ho->bus_ev = NULL;
	}
	TAILQ_FOREACH(j, &ho->q, entry) {
		handoff_unit_forget(j);
		j->lost = j->state == HANDOFF_RUNNING &&
		    j->via == HANDOFF_VIA_UNIT;
	}
	ho->bus = sd_bus_flush_close_unref(ho->bus);
	/* one at a time: an end may start (or free) other jobs */
	for (;;) {
		TAILQ_FOREACH(j, &ho->q, entry)
			if (j->lost)
				break;
		if (j == NULL)
			break;
		j->lost = 0;
		snprintf(how, sizeof(how), "lost track of %s (the system bus "
		    "went away)", j->unit);
		j->ho->ended(j, 0, how);
	}
}

static void
handoff_unit_io(evutil_socket_t fd, short what, void *arg)
{
	struct handoff	*ho = arg;
	int		 r;

	(void)fd;
	(void)what;
	while ((r = sd_bus_process(ho->bus, NULL)) > 0)
		if (ho->bus == NULL)
			return;
	if (r < 0) {
		handoff_unit_lost(ho, r);
		return;
	}
	handoff_unit_arm(ho);
}

/* Wait for what the bus wants next: input, room to write, a timeout. */
static void
handoff_unit_arm(struct handoff *ho)
{
	struct timeval	 tv, *tvp = NULL;
	struct timespec	 now;
	uint64_t	 until, at;
	short		 what = 0;
	int		 ev, fd;

	if (ho->bus == NULL)
		return;
	if ((fd = sd_bus_get_fd(ho->bus)) < 0 ||
	    (ev = sd_bus_get_events(ho->bus)) < 0) {
		handoff_unit_lost(ho, fd < 0 ? fd : -ENOTCONN);
		return;
	}
	if (ev & POLLIN)
		what |= EV_READ;
	if (ev & POLLOUT)
		what |= EV_WRITE;
	if (sd_bus_get_timeout(ho->bus, &until) >= 0 && until != UINT64_MAX) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		at = (uint64_t)now.tv_sec * 1000000 +
		    (uint64_t)now.tv_nsec / 1000;
		until = until > at ? until - at : 0;
		tv.tv_sec = (time_t)(until / 1000000);
		tv.tv_usec = (suseconds_t)(until % 1000000);
		tvp = &tv;
	}
	if (ho->bus_ev != NULL)
		event_del(ho->bus_ev);
	else if ((ho->bus_ev = event_new(ho->base, -1, 0, NULL, NULL)) ==
	    NULL) {
		handoff_unit_lost(ho, -ENOMEM);
		return;
	}
	event_assign(ho->bus_ev, ho->base, fd, what, handoff_unit_io, ho);
	event_add(ho->bus_ev, tvp);
}

/* The unit's own word on a failed try: Result=, the exit status. */
static int
handoff_unit_props(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct handoff_job	*j = arg;
	const char		*key, *result = "failed";
	char			 how[2 * HANDOFF_UNIT_NAME_MAX + 96];
	int32_t			 code = 0, status = 0;

	(void)ret;
	j->slot = sd_bus_slot_unref(j->slot);
	if (!sd_bus_message_is_method_error(m, NULL) &&
	    sd_bus_message_enter_container(m, 'a', "{sv}") > 0) {
		while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
			if (sd_bus_message_read(m, "s", &key) < 0)
				break;
			if (strcmp(key, "Result") == 0)
				sd_bus_message_read(m, "v", "s", &result);
			else if (strcmp(key, "ExecMainCode") == 0)
				sd_bus_message_read(m, "v", "i", &code);
			else if (strcmp(key, "ExecMainStatus") == 0)
				sd_bus_message_read(m, "v", "i", &status);
			else
				sd_bus_message_skip(m, "v");
			sd_bus_message_exit_container(m);
		}
	}
	/* ExecMainCode is a CLD_* code: 1 exited, 2 killed, 3 dumped */
	if (strcmp(result, "exit-code") == 0 && code == 1)
		snprintf(how, sizeof(how), "exit status %d", (int)status);
	else if (code == 2 || code == 3)
		snprintf(how, sizeof(how), "killed by signal %d", (int)status);
	else
		snprintf(how, sizeof(how), "%s failed: %s (journalctl -u "
		    "'%s')", j->unit, result, j->unit);
	/* no failed instance left behind: each is one try of one file */
	sd_bus_call_method_async(j->ho->bus, NULL, SD_DEST, SD_PATH,
	    SD_MANAGER, "ResetFailedUnit", NULL, NULL, "s", j->unit);
	j->ho->ended(j, 0, how);
	return 1;
}

static int
handoff_unit_removed(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct handoff		*ho = arg;
	struct handoff_job	*j;
	const char		*job, *unit, *result;
	char			*path = NULL;
	char			 how[HANDOFF_UNIT_NAME_MAX + 64];
	uint32_t		 id;

	(void)ret;
	if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0 ||
	    (j = handoff_unit_job(ho, job)) == NULL)
		return 0;
	free(j->job_path);
	j->job_path = NULL;
	if (strcmp(result, "done") == 0) {
		j->ho->ended(j, 1, "done");
		return 0;
	}
	if (strcmp(result, "failed") == 0 && sd_bus_path_encode(SD_PATH
	    "/unit", j->unit, &path) >= 0 && sd_bus_call_method_async(ho->bus,
	    &j->slot, SD_DEST, path, "org.freedesktop.DBus.Properties",
	    "GetAll", handoff_unit_props, j, "s",
	    "org.freedesktop.systemd1.Service") >= 0) {
		free(path);
		return 0;
	}
	free(path);
	/* canceled: stopped with perfspilld (BindsTo=) or by hand */
	snprintf(how, sizeof(how), "%s: %s", j->unit, result);
	j->ho->ended(j, 0, how);
	return 0;
}

static int
handoff_unit_started(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct handoff_job	*j = arg;
	const sd_bus_error	*e;
	const char		*job;
	char			 how[HANDOFF_UNIT_NAME_MAX + 256];

	(void)ret;
	j->slot = sd_bus_slot_unref(j->slot);
	if ((e = sd_bus_message_get_error(m)) != NULL ||
	    sd_bus_message_read(m, "o", &job) < 0 ||
	    (j->job_path = strdup(job)) == NULL) {
		snprintf(how, sizeof(how), "cannot start %s: %s", j->unit,
		    e != NULL && e->message != NULL ? e->message :
		    "no job in the reply");
		j->ho->ended(j, 0, how);
	}
	return 0;
}

static int
handoff_unit_connect(struct handoff *ho, char *how, size_t len)
{
	int	 r;

	if ((r = sd_bus_open_system(&ho->bus)) < 0 ||
	    (r = sd_bus_match_signal_async(ho->bus, NULL, SD_DEST, SD_PATH,
	    SD_MANAGER, "JobRemoved", handoff_unit_removed, NULL, ho)) < 0 ||
	    (r = sd_bus_call_method_async(ho->bus, NULL, SD_DEST, SD_PATH,
	    SD_MANAGER, "Subscribe", NULL, NULL, "")) < 0) {
		snprintf(how, len, "cannot reach systemd on the system bus: "
		    "%s (on_finish_unit false runs the program directly)",
		    strerror(-r));
		ho->bus = sd_bus_flush_close_unref(ho->bus);
		return -1;
	}
	return 0;
}

int
handoff_unit_start(struct handoff_job *j, char *how, size_t len)
{
	struct handoff	*ho = j->ho;
	char		 mark[CONFIG_PATH_LEN + NAME_MAX + 16];
	int		 r;

	handoff_mark_path(j, mark, sizeof(mark));
	if (handoff_unit_name(mark, j->unit, sizeof(j->unit)) == -1) {
		snprintf(how, len, "the unit name for %s is longer than "
		    "systemd allows; a shorter output_dir, or on_finish_unit "
		    "false, runs it", mark);
		return -1;
	}
	if (ho->bus == NULL && handoff_unit_connect(ho, how, len) == -1)
		return -1;
	/* the unit reads the facts, the program and the try from here */
	handoff_mark_write(j);
	if ((r = sd_bus_call_method_async(ho->bus, &j->slot, SD_DEST, SD_PATH,
	    SD_MANAGER, "StartUnit", handoff_unit_started, j, "ss", j->unit,
	    "replace")) < 0) {
		snprintf(how, len, "cannot start %s: %s", j->unit,
		    strerror(-r));
		return -1;
	}
	handoff_unit_arm(ho);
	return 0;
}

void
handoff_unit_signal(struct handoff_job *j, int sig)
{
	if (j->ho->bus == NULL)
		return;
	/* every process of the unit, as the timeout kills a process group */
	sd_bus_call_method_async(j->ho->bus, NULL, SD_DEST, SD_PATH,
	    SD_MANAGER, "KillUnit", NULL, NULL, "ssi", j->unit, "all", sig);
	handoff_unit_arm(j->ho);
}

void
handoff_unit_forget(struct handoff_job *j)
{
	j->slot = sd_bus_slot_unref(j->slot);
	free(j->job_path);
	j->job_path = NULL;
}

void
handoff_unit_finish(struct handoff *ho)
{
	struct handoff_job	*j;
	int			 n = 0;

	if (ho->bus == NULL)
		return;
	/* the template binds its units to perfspilld.service; this stops
	 * them as well where a drop-in took that away, or we are not the
	 * unit it names */
	TAILQ_FOREACH(j, &ho->q, entry) {
		if (j->state != HANDOFF_RUNNING || j->via != HANDOFF_VIA_UNIT)
			continue;
		log_warnx("on_finish for %s: still running at exit; stopping "
		    "%s (the next start runs it again)", j->name, j->unit);
		sd_bus_call_method_async(ho->bus, NULL, SD_DEST, SD_PATH,
		    SD_MANAGER, "StopUnit", NULL, NULL, "ss", j->unit,
		    "replace");
		n++;
	}
	if (n > 0)
		sd_bus_flush(ho->bus);
	if (ho->bus_ev != NULL) {
		event_free(ho->bus_ev);
		ho->bus_ev = NULL;
	}
	TAILQ_FOREACH(j, &ho->q, entry)
		handoff_unit_forget(j);
	ho->bus = sd_bus_flush_close_unref(ho->bus);
}

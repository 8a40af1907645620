/*
 * handoff: the on_finish program of each finished file (see handoff.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "handoff-int.h"
#include "jemit.h"
#include "log.h"
#include "proto.h"

/* The longest back-off between two tries, seconds. */
#define HANDOFF_RETRY_MAX	3600

static void	handoff_kick(struct handoff *);
static void	handoff_free_job(struct handoff_job *);
static void	handoff_reap(evutil_socket_t, short, void *);

static void	handoff_run_ended(struct handoff_job *, int, const char *);

struct handoff *
handoff_create(struct event_base *base, int dirfd)
{
	struct handoff	*ho;

	if ((ho = calloc(1, sizeof(*ho))) == NULL)
		return NULL;
	ho->base = base;
	ho->ended = handoff_run_ended;
	ho->dirfd = dirfd;
	TAILQ_INIT(&ho->q);
	/* children are reaped here (handoff-spawn.c): nothing else of ours
	 * forks after start-up. What a program starts and leaves becomes
	 * ours too, to be killed and reaped with its process group. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("on_finish: cannot be the subreaper of its programs");
	if ((ho->sigchld = evsignal_new(base, SIGCHLD, handoff_reap, ho)) ==
	    NULL || evsignal_add(ho->sigchld, NULL) == -1) {
		if (ho->sigchld != NULL)
			event_free(ho->sigchld);
		free(ho);
		return NULL;
	}
	return ho;
}

void
handoff_configure(struct handoff *ho, const struct config *cfg)
{
	struct handoff_job	*j, *next;
	int			 unit;

	snprintf(ho->prog, sizeof(ho->prog), "%s", cfg->on_finish);
	snprintf(ho->dir, sizeof(ho->dir), "%s", cfg->output_dir);
	snprintf(ho->user, sizeof(ho->user), "%s", cfg->on_finish_user);
	/* runs already started finish the way they were started */
	unit = cfg->on_finish_unit && handoff_unit_available();
	if (ho->prog[0] != '\0')
		log_info("on_finish: %s runs %s", ho->prog, unit ?
		    "in a unit of its own, " HANDOFF_UNIT_PREFIX ".service" :
		    "as a child of perfspilld, as on_finish_user");
	ho->use_unit = unit;
	if (ho->prog[0] != '\0')
		handoff_spawn_group(cfg, ho->dirfd);
	ho->jobs = cfg->on_finish_jobs;
	ho->timeout = cfg->on_finish_timeout;
	ho->tries = cfg->on_finish_tries;
	ho->retry = cfg->on_finish_retry;
	ho->remove_after = cfg->remove_after_handoff;
	handoff_kick(ho);
	if (ho->prog[0] != '\0')
		return;
	/* turned off: what waits would hold its file from retention for
	 * good; what runs finishes */
	for (j = TAILQ_FIRST(&ho->q); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->state == HANDOFF_RUNNING)
			continue;
		log_warnx("on_finish for %s: not run (on_finish is off now)",
		    j->name);
		ho->gave_up++;
		handoff_mark_remove(j);
		handoff_free_job(j);
	}
}

static void
handoff_setenv(struct handoff_job *j, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
handoff_setenv(struct handoff_job *j, const char *k, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (j->nenv == HANDOFF_NENV)
		return;
	n = snprintf(j->env[j->nenv], HANDOFF_ENV_LEN, "%s=", k);
	va_start(ap, fmt);
	vsnprintf(j->env[j->nenv] + n, HANDOFF_ENV_LEN - (size_t)n, fmt, ap);
	va_end(ap);
	j->nenv++;
}

static void
handoff_utc(char *buf, size_t len, time_t t)
{
	struct tm	 tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
handoff_free_job(struct handoff_job *j)
{
	TAILQ_REMOVE(&j->ho->q, j, entry);
	handoff_spawn_forget(j);
	handoff_unit_forget(j);
	if (j->timer != NULL)
		event_free(j->timer);
	free(j);
}

static void
handoff_timer(evutil_socket_t fd, short what, void *arg)
{
	struct handoff_job	*j = arg;
	struct timeval		 tv = { HANDOFF_KILL_GRACE, 0 };
	int			 sig;

	(void)fd;
	(void)what;
	if (j->state == HANDOFF_WAITING) {
		/* the back-off is over: back in line */
		j->state = HANDOFF_QUEUED;
		handoff_kick(j->ho);
		return;
	}
	if (j->state != HANDOFF_RUNNING)
		return;
	/* the program has its own process group, or unit: whatever it
	 * started (curl under a shell) goes with it */
	if (!j->killed) {
		log_warnx("on_finish for %s: still running after %" PRIu64
		    "s; terminating it", j->name, j->ho->timeout);
		j->killed = 1;
		sig = SIGTERM;
		evtimer_add(j->timer, &tv);
	} else {
		log_warnx("on_finish for %s: killing it", j->name);
		sig = SIGKILL;
	}
	if (j->via == HANDOFF_VIA_UNIT)
		handoff_unit_signal(j, sig);
	else
		handoff_spawn_signal(j, sig);
}

static struct handoff_job *
handoff_new_job(struct handoff *ho, const char *name)
{
	struct handoff_job	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->timer = evtimer_new(ho->base, handoff_timer, j)) == NULL) {
		free(j);
		log_warnx("on_finish for %s: out of memory; not run", name);
		ho->gave_up++;
		return NULL;
	}
	j->ho = ho;
	j->out_fd = -1;
	snprintf(j->name, sizeof(j->name), "%s", name);
	snprintf(j->path, sizeof(j->path), "%s/%s", ho->dir, name);
	return j;
}

void
handoff_add(struct handoff *ho, const struct record_file_facts *f,
    int manifest_ok)
{
	struct handoff_job	*j;
	char			 a[32], b[32];

	if (ho->prog[0] == '\0')
		return;
	if ((j = handoff_new_job(ho, f->name)) == NULL)
		return;
	if (manifest_ok)
		snprintf(j->manifest, sizeof(j->manifest), "%s.json", j->path);
	handoff_utc(a, sizeof(a), f->opened);
	handoff_utc(b, sizeof(b), f->finished);
	/* a small fixed environment: nothing of the daemon's own leaks */
	handoff_setenv(j, "PATH", "%s", "/usr/local/sbin:/usr/local/bin:"
	    "/usr/sbin:/usr/bin:/sbin:/bin");
	handoff_setenv(j, "PERFSPILL_FILE", "%s", j->path);
	handoff_setenv(j, "PERFSPILL_MANIFEST", "%s", j->manifest);
	handoff_setenv(j, "PERFSPILL_NAME", "%s", f->name);
	handoff_setenv(j, "PERFSPILL_DIR", "%s", ho->dir);
	handoff_setenv(j, "PERFSPILL_HOST", "%s", f->host);
	if (f->session != NULL)
		handoff_setenv(j, "PERFSPILL_SESSION", "%s", f->session);
	handoff_setenv(j, "PERFSPILL_SEQ", "%u", f->seq);
	handoff_setenv(j, "PERFSPILL_BYTES", "%" PRIu64, f->bytes);
	handoff_setenv(j, "PERFSPILL_SAMPLES", "%" PRIu64, f->samples);
	handoff_setenv(j, "PERFSPILL_LOST", "%" PRIu64, f->lost);
	handoff_setenv(j, "PERFSPILL_LOST_SAMPLES", "%" PRIu64,
	    f->lost_samples);
	handoff_setenv(j, "PERFSPILL_START", "%s", a);
	handoff_setenv(j, "PERFSPILL_END", "%s", b);
	handoff_setenv(j, "PERFSPILL_FIRST_SAMPLE_TIME", "%" PRIu64,
	    f->time_first);
	handoff_setenv(j, "PERFSPILL_LAST_SAMPLE_TIME", "%" PRIu64,
	    f->time_last);
	handoff_mark_write(j);
	j->state = HANDOFF_QUEUED;
	TAILQ_INSERT_TAIL(&ho->q, j, entry);
	handoff_kick(ho);
}

/*
 * The hand-offs a previous daemon left owed, from their marks, queued
 * before retention first runs so that it keeps their files. A mark whose
 * file is gone (removed by hand) is dropped.
 */
void
handoff_resume(struct handoff *ho)
{
	struct handoff_job	*j;
	struct dirent		*de;
	struct stat		 st;
	char			 name[NAME_MAX + 1], line[HANDOFF_ENV_LEN];
	size_t			 n, sl = strlen(HANDOFF_MARK_SUFFIX);
	FILE			*f;
	DIR			*dir;
	int			 fd;

	/* off: the marks wait for a daemon that has on_finish again */
	if (ho->prog[0] == '\0')
		return;
	if ((fd = openat(ho->dirfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (dir = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		log_warn("on_finish: looking for hand-offs owed");
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		n = strlen(de->d_name);
		if (de->d_name[0] != '.' || n <= sl + 1 || n - 1 - sl >=
		    sizeof(name) || strcmp(de->d_name + n - sl,
		    HANDOFF_MARK_SUFFIX) != 0)
			continue;
		memcpy(name, de->d_name + 1, n - 1 - sl);
		name[n - 1 - sl] = '\0';
		if (fstatat(ho->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode)) {
			log_info("on_finish for %s: file gone; hand-off "
			    "dropped", name);
			unlinkat(ho->dirfd, de->d_name, 0);
			continue;
		}
		if ((j = handoff_new_job(ho, name)) == NULL)
			continue;
		if ((fd = openat(ho->dirfd, de->d_name, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW)) == -1 || (f = fdopen(fd, "r")) == NULL) {
			log_warn("on_finish for %s: %s", name, de->d_name);
			if (fd != -1)
				close(fd);
			handoff_free_job(j);
			continue;
		}
		while (j->nenv < HANDOFF_NENV &&
		    fgets(line, sizeof(line), f) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			handoff_mark_unescape(line);
			/* this daemon's program and count, not the last's */
			if (strncmp(line, HANDOFF_ENV_PROGRAM "=",
			    strlen(HANDOFF_ENV_PROGRAM) + 1) == 0 ||
			    strncmp(line, HANDOFF_ENV_TRY "=",
			    strlen(HANDOFF_ENV_TRY) + 1) == 0)
				continue;
			if (strncmp(line, "PERFSPILL_MANIFEST=", 19) == 0 &&
			    strlen(line + 19) < sizeof(j->manifest))
				memcpy(j->manifest, line + 19,
				    strlen(line + 19) + 1);
			if (strchr(line, '=') != NULL)
				snprintf(j->env[j->nenv++], HANDOFF_ENV_LEN,
				    "%s", line);
		}
		fclose(f);
		log_info("on_finish for %s: resumed (owed by the last daemon)",
		    name);
		j->state = HANDOFF_QUEUED;
		TAILQ_INSERT_TAIL(&ho->q, j, entry);
	}
	closedir(dir);
	handoff_kick(ho);
}

/* A run ended (or could not start): count it, retry or let the file go. */
static void
handoff_ended(struct handoff_job *j, int ok, const char *how)
{
	struct handoff	*ho = j->ho;
	struct timeval	 tv = { 0, 0 };
	uint64_t	 wait;
	unsigned int	 k;

	if (ok) {
		ho->ok++;
		log_info("on_finish for %s: %s", j->name, how);
		if (ho->remove_after) {
			if (unlinkat(ho->dirfd, j->name, 0) == -1)
				log_warn("on_finish for %s: removing it",
				    j->name);
			else {
				ho->removed++;
				log_info("removed %s: handed off "
				    "(remove_after_handoff)", j->name);
			}
			manifest_unlink_beside(ho->dirfd, j->name);
		}
		handoff_mark_remove(j);
		handoff_free_job(j);
		return;
	}
	ho->failed++;
	if (j->tries >= ho->tries) {
		ho->gave_up++;
		log_warnx("on_finish for %s: %s; giving up after %u tries "
		    "(retention may remove it now)", j->name, how, j->tries);
		handoff_mark_remove(j);
		handoff_free_job(j);
		return;
	}
	/* doubling from on_finish_retry: a receiver that is down for a
	 * while is not hammered, and a short outage costs little */
	wait = ho->retry;
	for (k = 1; k < j->tries && wait < HANDOFF_RETRY_MAX; k++)
		wait *= 2;
	if (wait > HANDOFF_RETRY_MAX)
		wait = HANDOFF_RETRY_MAX;
	log_warnx("on_finish for %s: %s; try %u of %" PRIu64 " in %" PRIu64
	    "s", j->name, how, j->tries + 1, ho->tries, wait);
	j->state = HANDOFF_WAITING;
	tv.tv_sec = (time_t)wait;
	evtimer_add(j->timer, &tv);
}

/* Start queued jobs while there are free slots. */
static void
handoff_kick(struct handoff *ho)
{
	struct handoff_job	*j, *next;
	struct timeval		 tv;
	char			 how[2 * CONFIG_PATH_LEN + 128];

	for (j = TAILQ_FIRST(&ho->q); j != NULL && ho->running < ho->jobs &&
	    ho->prog[0] != '\0'; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->state != HANDOFF_QUEUED)
			continue;
		j->killed = 0;
		j->tries++;
		j->via = ho->use_unit ? HANDOFF_VIA_UNIT : HANDOFF_VIA_SPAWN;
		if ((j->via == HANDOFF_VIA_UNIT ? handoff_unit_start(j, how,
		    sizeof(how)) : handoff_spawn_start(j, how, sizeof(how))) ==
		    -1) {
			handoff_ended(j, 0, how);
			continue;
		}
		j->state = HANDOFF_RUNNING;
		ho->running++;
		tv.tv_sec = (time_t)ho->timeout;
		tv.tv_usec = 0;
		evtimer_add(j->timer, &tv);
		log_debug("on_finish for %s: started %s (try %u)", j->name,
		    j->via == HANDOFF_VIA_UNIT ? j->unit : "its program",
		    j->tries);
	}
}

static void
handoff_reap(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	handoff_spawn_reap(arg);
}

static void
handoff_run_ended(struct handoff_job *j, int ok, const char *how)
{
	struct handoff	*ho = j->ho;
	char		 buf[64];

	evtimer_del(j->timer);
	j->state = HANDOFF_QUEUED;	/* until handoff_ended says */
	ho->running--;
	if (j->killed) {
		ho->timed_out++;
		snprintf(buf, sizeof(buf), "timed out after %" PRIu64 "s",
		    ho->timeout);
		how = buf;
		ok = 0;
	}
	handoff_ended(j, ok, how);
	handoff_kick(ho);
}

int
handoff_holds(const char *name, void *arg)
{
	struct handoff		*ho = arg;
	struct handoff_job	*j;

	TAILQ_FOREACH(j, &ho->q, entry)
		if (strcmp(j->name, name) == 0)
			return 1;
	return 0;
}

/* Where the program runs: a unit of its own, or a child of ours as a
 * user. */
static void
handoff_add_via(json_object *o, const char *key, const void *base)
{
	const struct handoff	*ho = base;

	json_object_object_add(o, key, json_object_new_string(ho->use_unit ?
	    HANDOFF_UNIT_PREFIX ".service" : "spawn"));
}

static uint64_t
handoff_count(const struct handoff *ho, enum handoff_state state)
{
	const struct handoff_job	*j;
	uint64_t			 n = 0;

	TAILQ_FOREACH(j, &ho->q, entry)
		if (j->state == state)
			n++;
	return n;
}

/* The jobs waiting for a free slot. */
static void
handoff_add_queued(json_object *o, const char *key, const void *ho)
{
	proto_add_u64(o, key, handoff_count(ho, HANDOFF_QUEUED));
}

/* The jobs that failed, waiting for their next try. */
static void
handoff_add_retrying(json_object *o, const char *key, const void *ho)
{
	proto_add_u64(o, key, handoff_count(ho, HANDOFF_WAITING));
}

static const struct jemit_field handoff_rows[] = {
	JEMIT_S("program", struct handoff, prog),
	JEMIT_FN_ROW("via", handoff_add_via),
	JEMIT_S("user", struct handoff, user),
	JEMIT_U("running", struct handoff, running),
	JEMIT_FN_ROW("queued", handoff_add_queued),
	JEMIT_FN_ROW("retrying", handoff_add_retrying),
	JEMIT_U("ok", struct handoff, ok),
	JEMIT_U("failed", struct handoff, failed),
	JEMIT_U("timed_out", struct handoff, timed_out),
	JEMIT_U("gave_up", struct handoff, gave_up),
	JEMIT_U("removed", struct handoff, removed),
	JEMIT_ROWS_END
};

json_object *
handoff_status(struct handoff *ho)
{
	return jemit_object(handoff_rows, ho);
}

void
handoff_counts(const struct handoff *ho, uint64_t *ok, uint64_t *failed)
{
	*ok = ho->ok;
	*failed = ho->failed;
}

void
handoff_destroy(struct handoff *ho)
{
	struct handoff_job	*j;

	if (ho == NULL)
		return;
	/* what runs is ended and waited for: no program outlives us */
	handoff_spawn_finish(ho);
	handoff_unit_finish(ho);
	while ((j = TAILQ_FIRST(&ho->q)) != NULL) {
		if (j->state != HANDOFF_RUNNING)
			log_warnx("on_finish for %s: not run (exiting; the "
			    "next start runs it)", j->name);
		handoff_free_job(j);
	}
	event_free(ho->sigchld);
	free(ho);
}

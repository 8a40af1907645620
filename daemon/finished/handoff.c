/*
 * handoff: the on_finish program of each finished file (see handoff.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "handoff.h"
#include "log.h"

/* Seconds between SIGTERM and SIGKILL of a program past its timeout. */
#define HANDOFF_KILL_GRACE	5
/* The longest back-off between two tries, seconds. */
#define HANDOFF_RETRY_MAX	3600
#define HANDOFF_NENV		20
#define HANDOFF_ENV_LEN		(CONFIG_PATH_LEN + NAME_MAX + 32)
/* .NAME.handoff: the file's hand-off has not succeeded yet */
#define HANDOFF_MARK_SUFFIX	".handoff"

enum handoff_state {
	HANDOFF_QUEUED,		/* waiting for a free slot */
	HANDOFF_RUNNING,
	HANDOFF_WAITING,	/* failed; tried again when the timer fires */
};

struct handoff_job {
	struct handoff		*ho;
	char			 name[NAME_MAX + 1];
	char			 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	char			 manifest[CONFIG_PATH_LEN + NAME_MAX + 8];
	char			 env[HANDOFF_NENV][HANDOFF_ENV_LEN];
	size_t			 nenv;
	enum handoff_state	 state;
	unsigned int		 tries;		/* runs started */
	pid_t			 pid;
	int			 killed;	/* SIGTERM sent at the timeout */
	struct event		*timer;		/* timeout, or the retry */
	TAILQ_ENTRY(handoff_job) entry;
};

TAILQ_HEAD(handoff_jobs, handoff_job);

struct handoff {
	struct event_base	*base;
	int			 dirfd;
	struct event		*sigchld;
	char			 prog[CONFIG_PATH_LEN];
	char			 dir[CONFIG_PATH_LEN];
	uint64_t		 jobs, timeout, tries, retry;
	int			 remove_after;
	struct handoff_jobs	 q;		/* every job, in arrival order */
	size_t			 running;
	uint64_t		 ok, failed, gave_up, timed_out, removed;
};

static void	handoff_kick(struct handoff *);
static void	handoff_free_job(struct handoff_job *);
static void	handoff_unmark(struct handoff_job *);
static void	handoff_reap(evutil_socket_t, short, void *);

struct handoff *
handoff_create(struct event_base *base, int dirfd)
{
	struct handoff	*ho;

	if ((ho = calloc(1, sizeof(*ho))) == NULL)
		return NULL;
	ho->base = base;
	ho->dirfd = dirfd;
	TAILQ_INIT(&ho->q);
	/* children are reaped here, by pid: nothing else of ours forks
	 * after start-up, and waitpid(-1) would take no one else's */
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

	snprintf(ho->prog, sizeof(ho->prog), "%s", cfg->on_finish);
	snprintf(ho->dir, sizeof(ho->dir), "%s", cfg->output_dir);
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
		handoff_unmark(j);
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

/*
 * The mark of a file whose hand-off is owed: it outlives the daemon, so
 * that the next one (an upgrade, a reboot) runs what this one could not
 * finish, with the same facts. Hidden, so retention and listings pass it.
 */
static void
handoff_mark_name(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, ".%s" HANDOFF_MARK_SUFFIX, name);
}

static void
handoff_mark(struct handoff_job *j)
{
	char	 mark[NAME_MAX + 16];
	FILE	*f;
	size_t	 i;
	int	 fd;

	handoff_mark_name(j->name, mark, sizeof(mark));
	if ((fd = openat(j->ho->dirfd, mark, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC | O_NOFOLLOW, 0640)) == -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		log_warn("on_finish for %s: %s (not run again after a restart)",
		    j->name, mark);
		if (fd != -1)
			close(fd);
		return;
	}
	for (i = 0; i < j->nenv; i++)
		fprintf(f, "%s\n", j->env[i]);
	if (fclose(f) == EOF)
		log_warn("on_finish for %s: %s", j->name, mark);
}

/* The hand-off is over for good: done, given up or turned off. */
static void
handoff_unmark(struct handoff_job *j)
{
	char	 mark[NAME_MAX + 16];

	handoff_mark_name(j->name, mark, sizeof(mark));
	if (unlinkat(j->ho->dirfd, mark, 0) == -1 && errno != ENOENT)
		log_warn("on_finish for %s: removing %s", j->name, mark);
}

static void
handoff_free_job(struct handoff_job *j)
{
	TAILQ_REMOVE(&j->ho->q, j, entry);
	if (j->timer != NULL)
		event_free(j->timer);
	free(j);
}

static void
handoff_timer(evutil_socket_t fd, short what, void *arg)
{
	struct handoff_job	*j = arg;
	struct timeval		 tv = { HANDOFF_KILL_GRACE, 0 };

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
	/* the program has its own process group: whatever it started
	 * (curl under a shell) goes with it */
	if (!j->killed) {
		log_warnx("on_finish for %s: still running after %" PRIu64
		    "s; terminating it", j->name, j->ho->timeout);
		j->killed = 1;
		kill(-j->pid, SIGTERM);
		evtimer_add(j->timer, &tv);
	} else {
		log_warnx("on_finish for %s: killing it", j->name);
		kill(-j->pid, SIGKILL);
	}
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
	snprintf(j->name, sizeof(j->name), "%s", name);
	snprintf(j->path, sizeof(j->path), "%s/%s", ho->dir, name);
	return j;
}

void
handoff_add(struct handoff *ho, const struct manifest_facts *f,
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
	handoff_mark(j);
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

static int
handoff_spawn(struct handoff_job *j)
{
	struct handoff			*ho = j->ho;
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	struct sched_param		 sp;
	sigset_t			 all, none;
	char				*argv[4], *envp[HANDOFF_NENV + 2];
	char				 try[32];
	size_t				 i;
	int				 rc;

	argv[0] = ho->prog;
	argv[1] = j->path;
	argv[2] = j->manifest;
	argv[3] = NULL;
	for (i = 0; i < j->nenv; i++)
		envp[i] = j->env[i];
	snprintf(try, sizeof(try), "PERFSPILL_TRY=%u", j->tries + 1);
	envp[i++] = try;
	envp[i] = NULL;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	sigfillset(&all);
	sigemptyset(&none);
	memset(&sp, 0, sizeof(sp));
	/*
	 * Its own process group (the timeout kills the group), default
	 * signal actions and no mask (we ignore SIGPIPE), the normal
	 * scheduler (the loop may be SCHED_FIFO), stdin from /dev/null,
	 * stdout and stderr to our stderr, which is the log under systemd;
	 * no other descriptor: a ring or the socket is not the program's.
	 */
	rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSCHEDULER);
	if (rc == 0)
		rc = posix_spawnattr_setpgroup(&attr, 0);
	if (rc == 0)
		rc = posix_spawnattr_setsigdefault(&attr, &all);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (rc == 0)
		rc = posix_spawnattr_setschedpolicy(&attr, SCHED_OTHER);
	if (rc == 0)
		rc = posix_spawnattr_setschedparam(&attr, &sp);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
		    O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, 2, 1);
	if (rc == 0)
		rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (rc == 0)
		rc = posix_spawn(&j->pid, ho->prog, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
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
		handoff_unmark(j);
		handoff_free_job(j);
		return;
	}
	ho->failed++;
	if (j->tries >= ho->tries) {
		ho->gave_up++;
		log_warnx("on_finish for %s: %s; giving up after %u tries "
		    "(retention may remove it now)", j->name, how, j->tries);
		handoff_unmark(j);
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
	char			 how[CONFIG_PATH_LEN + 64];

	for (j = TAILQ_FIRST(&ho->q); j != NULL && ho->running < ho->jobs &&
	    ho->prog[0] != '\0'; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->state != HANDOFF_QUEUED)
			continue;
		j->killed = 0;
		if (handoff_spawn(j) == -1) {
			j->tries++;
			snprintf(how, sizeof(how), "cannot run %s: %s",
			    ho->prog, strerror(errno));
			handoff_ended(j, 0, how);
			continue;
		}
		j->tries++;
		j->state = HANDOFF_RUNNING;
		ho->running++;
		tv.tv_sec = (time_t)ho->timeout;
		tv.tv_usec = 0;
		evtimer_add(j->timer, &tv);
		log_debug("on_finish for %s: started pid %ld (try %u)",
		    j->name, (long)j->pid, j->tries);
	}
}

static void
handoff_reap(evutil_socket_t fd, short what, void *arg)
{
	struct handoff		*ho = arg;
	struct handoff_job	*j, *next;
	char			 how[64];
	int			 st;
	pid_t			 pid;

	(void)fd;
	(void)what;
	/* one SIGCHLD may stand for several exits: look at every child */
	for (j = TAILQ_FIRST(&ho->q); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->state != HANDOFF_RUNNING)
			continue;
		while ((pid = waitpid(j->pid, &st, WNOHANG)) == -1 &&
		    errno == EINTR)
			;
		if (pid == 0)
			continue;
		evtimer_del(j->timer);
		j->state = HANDOFF_QUEUED;	/* until handoff_ended says */
		ho->running--;
		if (pid == -1)
			snprintf(how, sizeof(how), "lost its exit status: %s",
			    strerror(errno));
		else if (j->killed) {
			ho->timed_out++;
			snprintf(how, sizeof(how), "timed out after %" PRIu64
			    "s", ho->timeout);
		} else if (WIFEXITED(st))
			snprintf(how, sizeof(how), "exit status %d",
			    WEXITSTATUS(st));
		else
			snprintf(how, sizeof(how), "killed by signal %d",
			    WTERMSIG(st));
		handoff_ended(j, pid != -1 && !j->killed && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0, how);
	}
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

json_object *
handoff_status(struct handoff *ho)
{
	struct handoff_job	*j;
	json_object		*o;
	uint64_t		 queued = 0, waiting = 0;

	TAILQ_FOREACH(j, &ho->q, entry) {
		if (j->state == HANDOFF_QUEUED)
			queued++;
		else if (j->state == HANDOFF_WAITING)
			waiting++;
	}
	if ((o = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(o, "program", json_object_new_string(ho->prog));
	json_object_object_add(o, "running",
	    json_object_new_uint64(ho->running));
	json_object_object_add(o, "queued", json_object_new_uint64(queued));
	json_object_object_add(o, "retrying", json_object_new_uint64(waiting));
	json_object_object_add(o, "ok", json_object_new_uint64(ho->ok));
	json_object_object_add(o, "failed", json_object_new_uint64(ho->failed));
	json_object_object_add(o, "timed_out",
	    json_object_new_uint64(ho->timed_out));
	json_object_object_add(o, "gave_up",
	    json_object_new_uint64(ho->gave_up));
	json_object_object_add(o, "removed",
	    json_object_new_uint64(ho->removed));
	return o;
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
	while ((j = TAILQ_FIRST(&ho->q)) != NULL) {
		if (j->state == HANDOFF_RUNNING) {
			log_warnx("on_finish for %s: still running at exit; "
			    "terminating it (the next start runs it again)",
			    j->name);
			kill(-j->pid, SIGTERM);
		} else
			log_warnx("on_finish for %s: not run (exiting; the "
			    "next start runs it)", j->name);
		handoff_free_job(j);
	}
	event_free(ho->sigchld);
	free(ho);
}

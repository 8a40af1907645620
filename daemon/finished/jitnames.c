/*
 * jitnames: the perf map names of a directory, and whether a scan of
 * their processes is due (see jitnames.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitnames.h"
#include "log.h"

struct jitnames {
	int		 dirfd;		/* the caller's */
	int		 procfd;	/* /proc, for the look; -1: none */
	pthread_mutex_t	 lock;
	/* under lock: the pids of the map names in the directory,
	 * ascending, kept by an inotify watch (ifd) from one readdir on
	 * (ok); ifd -1: a readdir each scan */
	int		 ifd;
	int		 ok;
	uint32_t	*names;
	size_t		 nnames;
};

uint32_t
jitnames_pid_of(const char *name)
{
	unsigned long	 pid = 0;
	const char	*p;

	if (strncmp(name, "perf-", 5) != 0 || name[5] < '1' || name[5] > '9')
		return 0;
	for (p = name + 5; *p >= '0' && *p <= '9'; p++)
		if ((pid = pid * 10 + (unsigned long)(*p - '0')) > INT32_MAX)
			return 0;
	return strcmp(p, ".map") == 0 ? (uint32_t)pid : 0;
}

static int
jitnames_cmp(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The watch gives up: a readdir each scan from now on. Under lock. */
static void
jitnames_unwatch(struct jitnames *jn)
{
	if (jn->ifd != -1)
		close(jn->ifd);
	jn->ifd = -1;
	free(jn->names);
	jn->names = NULL;
	jn->nnames = 0;
	jn->ok = 0;
}

/* pid's map name came (in 1) or went (0). -1 when the set is full.
 * Under lock. */
static int
jitnames_name(struct jitnames *jn, uint32_t pid, int in)
{
	uint32_t	*at;
	size_t		 i;

	at = bsearch(&pid, jn->names, jn->nnames, sizeof(*jn->names),
	    jitnames_cmp);
	if (!in) {
		if (at != NULL) {
			i = (size_t)(at - jn->names);
			memmove(at, at + 1, (jn->nnames - i - 1) *
			    sizeof(*at));
			jn->nnames--;
		}
		return 0;
	}
	if (at != NULL)
		return 0;
	if (jn->nnames == JITNAMES_MAX)
		return -1;
	for (i = jn->nnames; i > 0 && jn->names[i - 1] > pid; i--)
		jn->names[i] = jn->names[i - 1];
	jn->names[i] = pid;
	jn->nnames++;
	return 0;
}

/* The directory's entries, for a readdir; NULL (errno) when it cannot
 * be read. */
static DIR *
jitnames_opendir(struct jitnames *jn)
{
	DIR	*dir;
	int	 fd;

	if ((fd = openat(jn->dirfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return NULL;
	if ((dir = fdopendir(fd)) == NULL)
		close(fd);
	return dir;
}

/*
 * The map names of the directory from a readdir, after the events queued
 * before it are dropped: the events after it, applied in order on top,
 * give each name's last state. -1 when it cannot be read or holds more
 * than JITNAMES_MAX of them. On the worker, under lock: the loop does
 * not touch the watch meanwhile.
 */
static int
jitnames_read(struct jitnames *jn)
{
	char		 buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	struct dirent	*e;
	DIR		*dir;
	uint32_t	 pid;
	int		 rc = 0;

	/* what they said is in the readdir */
	while (read(jn->ifd, buf, sizeof(buf)) > 0)
		;
	if ((dir = jitnames_opendir(jn)) == NULL)
		return -1;
	jn->nnames = 0;
	while (rc == 0 && (e = readdir(dir)) != NULL)
		if ((pid = jitnames_pid_of(e->d_name)) == 0)
			continue;
		else if (jn->nnames == JITNAMES_MAX)
			rc = -1;
		else
			jn->names[jn->nnames++] = pid;
	closedir(dir);
	/* a name is one file: no pid twice */
	qsort(jn->names, jn->nnames, sizeof(*jn->names), jitnames_cmp);
	return rc;
}

/*
 * The watch's events since the last look, applied to the set: 0, or -1
 * when the set must be read again (events lost, too many names: ok
 * cleared) or the watch was given up (the directory itself went). Under
 * lock, in the loop or on the worker.
 */
static int
jitnames_events(struct jitnames *jn)
{
	char				 buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event	*ev;
	ssize_t				 n;
	size_t				 off;
	uint32_t			 pid;

	while (jn->ok && (n = read(jn->ifd, buf, sizeof(buf))) > 0)
		for (off = 0; off + sizeof(*ev) <= (size_t)n;
		    off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(void *)(buf + off);
			/* events lost: the set is made again */
			if (ev->mask & IN_Q_OVERFLOW) {
				jn->ok = 0;
				break;
			}
			/* the directory itself went: the fd still reads it */
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF |
			    IN_MOVE_SELF | IN_UNMOUNT)) {
				jitnames_unwatch(jn);
				return -1;
			}
			if (ev->len == 0 || (pid = jitnames_pid_of(ev->name)) ==
			    0)
				continue;
			if (jitnames_name(jn, pid, (ev->mask & (IN_CREATE |
			    IN_MOVED_TO)) != 0) == -1)
				jn->ok = 0;
		}
	return jn->ok ? 0 : -1;
}

struct jitnames *
jitnames_create(int dirfd, const char *dir)
{
	struct jitnames	*jn;

	if ((jn = calloc(1, sizeof(*jn))) == NULL) {
		log_warn("jit maps");
		return NULL;
	}
	jn->dirfd = dirfd;
	pthread_mutex_init(&jn->lock, NULL);
	jn->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* without the watch (no inotify, no memory, no /proc to look at),
	 * a readdir each scan; the first readdir waits for the first scan:
	 * a daemon that does not record never reads the directory */
	jn->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (jn->ifd == -1)
		return jn;
	if (jn->procfd != -1)
		jn->names = calloc(JITNAMES_MAX, sizeof(*jn->names));
	if (jn->names == NULL || inotify_add_watch(jn->ifd, dir, IN_CREATE |
	    IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF |
	    IN_MOVE_SELF | IN_ONLYDIR) == -1)
		jitnames_unwatch(jn);
	return jn;
}

void
jitnames_free(struct jitnames *jn)
{
	if (jn == NULL)
		return;
	jitnames_unwatch(jn);
	if (jn->procfd != -1)
		close(jn->procfd);
	pthread_mutex_destroy(&jn->lock);
	free(jn);
}

/* Does pid have a /proc directory now (a process, or a thread)? */
static int
jitnames_alive(struct jitnames *jn, uint32_t pid)
{
	struct stat	 st;
	char		 name[16];

	snprintf(name, sizeof(name), "%u", pid);
	return fstatat(jn->procfd, name, &st, 0) == 0;
}

int
jitnames_due(struct jitnames *jn)
{
	size_t	 i;
	int	 due = 0;

	/* the worker scans now: nothing to ask for */
	if (pthread_mutex_trylock(&jn->lock) != 0)
		return 0;
	if (jn->ifd == -1 || !jn->ok || jitnames_events(jn) == -1 ||
	    jn->nnames > JITNAMES_LOOK_MAX)
		due = 1;
	/* a map whose pid lives: its process is to be seen (a new one
	 * that took the pid of an old map writes to that map too); the
	 * maps of gone processes need no scan, the scans that saw them
	 * alive keep who ran them */
	for (i = 0; !due && i < jn->nnames; i++)
		due = jitnames_alive(jn, jn->names[i]);
	pthread_mutex_unlock(&jn->lock);
	return due;
}

/* A readdir of every map name, ascending, into *pids. */
static ssize_t
jitnames_readdir(struct jitnames *jn, uint32_t **pids)
{
	struct dirent	*e;
	DIR		*dir;
	uint32_t	*p, pid;
	size_t		 n = 0, cap = 0;

	*pids = NULL;
	if ((dir = jitnames_opendir(jn)) == NULL)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		if ((pid = jitnames_pid_of(e->d_name)) == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			if ((p = reallocarray(*pids, cap, sizeof(*p))) ==
			    NULL) {
				closedir(dir);
				free(*pids);
				*pids = NULL;
				return -1;
			}
			*pids = p;
		}
		(*pids)[n++] = pid;
	}
	closedir(dir);
	if (n > 1)
		qsort(*pids, n, sizeof(**pids), jitnames_cmp);
	return (ssize_t)n;
}

ssize_t
jitnames_list(struct jitnames *jn, uint32_t **pids)
{
	ssize_t	 n;

	*pids = NULL;
	pthread_mutex_lock(&jn->lock);
	if (jn->ifd != -1 && jitnames_events(jn) == -1 && jn->ifd != -1) {
		/* read again, the loop's look kept off by the lock */
		if (jitnames_read(jn) == 0)
			jn->ok = 1;
		else
			jitnames_unwatch(jn);
	}
	if (jn->ifd == -1) {
		pthread_mutex_unlock(&jn->lock);
		return jitnames_readdir(jn, pids);
	}
	n = (ssize_t)jn->nnames;
	if (n > 0 && (*pids = malloc(jn->nnames * sizeof(**pids))) == NULL)
		n = -1;
	else if (n > 0)
		memcpy(*pids, jn->names, jn->nnames * sizeof(**pids));
	pthread_mutex_unlock(&jn->lock);
	return n;
}

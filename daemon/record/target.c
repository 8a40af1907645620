/*
 * target finds the thread ids of a session's task targets (see
 * target.h).
 */
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "target.h"

struct target_set {
	int	*tids;
	size_t	 n;
};

static int
target_add(struct target_set *s, int tid, char *err, size_t len)
{
	int	*t;
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if (s->tids[i] == tid)
			return 0;
	if (s->n == TARGET_MAX_TIDS) {
		snprintf(err, len, "more than %d threads to record: name "
		    "fewer processes", TARGET_MAX_TIDS);
		return -1;
	}
	if ((t = realloc(s->tids, (s->n + 1) * sizeof(*t))) == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	s->tids = t;
	s->tids[s->n++] = tid;
	return 0;
}

/* A decimal id of a /proc entry, or -1. */
static int
target_id(const char *s)
{
	char	*end;
	long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return *end == '\0' && errno == 0 && v > 0 && v <= 0x7fffffff ?
	    (int)v : -1;
}

/* Every thread of process pid; 1 when it is gone. */
static int
target_process(struct target_set *s, const char *proc, int pid, char *err,
    size_t len)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*e;
	int		 tid, rc = 0;

	snprintf(path, sizeof(path), "%s/%d/task", proc, pid);
	if ((d = opendir(path)) == NULL)
		return 1;
	while (rc == 0 && (e = readdir(d)) != NULL)
		if ((tid = target_id(e->d_name)) != -1)
			rc = target_add(s, tid, err, len);
	closedir(d);
	return rc;
}

/* "1,2,3" into each id; each is a process (threads: 0) or a thread. */
static int
target_list(struct target_set *s, const char *proc, const char *list,
    int threads, char *err, size_t len)
{
	char		 path[64], word[16];
	const char	*p;
	size_t		 k;
	int		 id, rc;
	struct stat	 st;

	for (p = list; *p; p += k + (p[k] == ',')) {
		k = strcspn(p, ",");
		snprintf(word, sizeof(word), "%.*s", (int)k, p);
		if ((id = target_id(word)) == -1) {
			snprintf(err, len, "'%s' is not a process id", word);
			return -1;
		}
		if (threads) {
			/* a thread is /proc/TID too, though readdir hides it */
			snprintf(path, sizeof(path), "%s/%d", proc, id);
			if (stat(path, &st) == -1) {
				snprintf(err, len, "tids: no thread %d", id);
				return -1;
			}
			if (target_add(s, id, err, len) == -1)
				return -1;
			continue;
		}
		if ((rc = target_process(s, proc, id, err, len)) == -1)
			return -1;
		if (rc == 1) {
			snprintf(err, len, "pids: no process %d", id);
			return -1;
		}
	}
	return 0;
}

/* Every process whose /proc directory the user owns, as perf's -u. */
static int
target_user(struct target_set *s, const char *proc, const char *user,
    char *err, size_t len)
{
	struct passwd	*pw;
	char		 path[64];
	DIR		*d;
	struct dirent	*e;
	struct stat	 st;
	uid_t		 uid;
	int		 pid, id;

	if ((pw = getpwnam(user)) != NULL)
		uid = pw->pw_uid;
	else if ((id = target_id(user)) != -1 || strcmp(user, "0") == 0)
		uid = (uid_t)(id == -1 ? 0 : id);
	else {
		snprintf(err, len, "user: no user '%s'", user);
		return -1;
	}
	if ((d = opendir(proc)) == NULL) {
		snprintf(err, len, "cannot read %s: %s", proc, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if ((pid = target_id(e->d_name)) == -1)
			continue;
		snprintf(path, sizeof(path), "%s/%d", proc, pid);
		if (stat(path, &st) == -1 || st.st_uid != uid)
			continue;
		if (target_process(s, proc, pid, err, len) == -1) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int
target_tids(const struct config *cfg, const char *proc, int **out, size_t *n,
    char *err, size_t len)
{
	struct target_set	 s = { NULL, 0 };

	if (target_list(&s, proc, cfg->pids, 0, err, len) == -1 ||
	    target_list(&s, proc, cfg->tids, 1, err, len) == -1 ||
	    (cfg->user[0] && target_user(&s, proc, cfg->user, err, len) == -1))
		goto error;
	if (s.n == 0) {
		snprintf(err, len, "user: '%s' runs no process", cfg->user);
		goto error;
	}
	*out = s.tids;
	*n = s.n;
	return 0;
error:
	free(s.tids);
	return -1;
}

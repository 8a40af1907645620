/*
 * pick: the trace files of a graph and their facts (see pick.h).
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "companion.h"
#include "opts.h"
#include "perfread.h"
#include "pick.h"

/* Host folders of a fleet store, and a little more; no deeper. */
#define PICK_MAX_DEPTH	4

static int
pick_push(struct pick_list *l, const char *path, const struct stat *st,
    int named)
{
	struct pick_file	*tmp;
	size_t			 i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->f[i].path, path) == 0)
			return 0;	/* given twice */
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		if ((tmp = realloc(l->f, l->cap * sizeof(*tmp))) == NULL)
			goto nomem;
		l->f = tmp;
	}
	memset(&l->f[l->n], 0, sizeof(l->f[0]));
	if ((l->f[l->n].path = strdup(path)) == NULL)
		goto nomem;
	l->f[l->n].named = named;
	l->f[l->n].size = (uint64_t)st->st_size;
	l->f[l->n].mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 +
	    st->st_mtim.tv_nsec;
	l->n++;
	return 0;
nomem:
	warnx("out of memory");
	return -1;
}

static int
pick_is_data(const char *name)
{
	size_t	 n = strlen(name);

	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".data") == 0;
}

/* A trace file perfspilld is writing now: perfspill-*.data.partial. */
static int
pick_is_live(const char *name)
{
	size_t	 n = strlen(name);

	return strncmp(name, "perfspill-", 10) == 0 && n > 23 &&
	    strcmp(name + n - 13, ".data.partial") == 0;
}

static int
pick_dir(struct pick_list *l, const char *path, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 sub[PATH_MAX];
	int		 rv = 0;

	if ((d = opendir(path)) == NULL) {
		if (errno == EACCES)
			pick_denied(path);
		else
			warn("%s", path);
		return -1;
	}
	while ((de = readdir(d)) != NULL && rv == 0) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >=
		    (int)sizeof(sub))
			continue;
		/* lstat: a symbolic link to a directory is not followed */
		if (lstat(sub, &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode) && depth < PICK_MAX_DEPTH)
			rv = pick_dir(l, sub, depth + 1);
		else if ((pick_is_data(de->d_name) ||
		    pick_is_live(de->d_name)) &&
		    stat(sub, &st) == 0 && S_ISREG(st.st_mode))
			rv = pick_push(l, sub, &st, 0);
	}
	closedir(d);
	return rv;
}

int
pick_add(struct pick_list *l, const char *path)
{
	struct stat	 st;

	if (stat(path, &st) == -1) {
		if (errno == EACCES)
			pick_denied(path);
		else
			warn("%s", path);
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return pick_dir(l, path, 0);
	if (!S_ISREG(st.st_mode)) {
		warnx("%s: not a trace file or a directory", path);
		return -1;
	}
	return pick_push(l, path, &st, 1);
}

static int
pick_manifest(struct pick_file *f)
{
	json_object	*o, *v, *s;
	char		 name[PATH_MAX];
	const char	*utc;
	int64_t		 wall;
	int		 rv = -1;

	if (snprintf(name, sizeof(name), "%s.json", f->path) >=
	    (int)sizeof(name) || access(name, R_OK) == -1)
		return -1;
	if ((o = json_object_from_file(name)) == NULL) {
		warnx("%s: not a manifest (%s); reading the file's own "
		    "header", name, json_util_get_last_err());
		return -1;
	}
	if (json_object_object_get_ex(o, "host", &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(f->host, sizeof(f->host), "%s",
		    json_object_get_string(v));
	if (json_object_object_get_ex(o, "session", &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(f->session, sizeof(f->session), "%s",
		    json_object_get_string(v));
	if (json_object_object_get_ex(o, "samples", &v))
		f->samples = (uint64_t)json_object_get_uint64(v);
	if (json_object_object_get_ex(o, "settings", &s) &&
	    json_object_object_get_ex(s, "all_cgroups", &v))
		f->cgroups = json_object_get_boolean(v);
	if (f->samples == 0) {
		rv = 0;		/* a file without samples: nothing to place */
		goto out;
	}
	if (!json_object_object_get_ex(o, "first_sample_time", &v) ||
	    !json_object_is_type(v, json_type_int))
		goto out;
	f->first = (uint64_t)json_object_get_uint64(v);
	if (!json_object_object_get_ex(o, "last_sample_time", &v) ||
	    !json_object_is_type(v, json_type_int))
		goto out;
	f->last = (uint64_t)json_object_get_uint64(v);
	if (!json_object_object_get_ex(o, "first_sample_utc_approx", &v) ||
	    (utc = json_object_get_string(v)) == NULL ||
	    opts_time(utc, 0, &wall) == -1)
		goto out;
	f->wall_off = pick_off(wall, f->first);
	f->facts = "manifest";
	rv = 0;
out:
	json_object_put(o);
	return rv;
}

/* "perfspill-HOST-20261203T170849Z-000000.data": the host and the time
 * the file was opened, a little before its first sample. */
static int
pick_name(const char *path, char *host, size_t hlen, int64_t *wall)
{
	const char	*base = strrchr(path, '/'), *p;
	struct tm	 tm;
	char		 stamp[17];
	time_t		 t;

	base = base != NULL ? base + 1 : path;
	if (strncmp(base, "perfspill-", 10) != 0)
		return -1;
	for (p = base + strlen(base); p > base + 10; p--) {
		if (p[-1] != '-' || strlen(p) < 17 || p[8] != 'T' ||
		    p[15] != 'Z' || p[16] != '-')
			continue;
		memcpy(stamp, p, 16);
		stamp[16] = '\0';
		memset(&tm, 0, sizeof(tm));
		if (strptime(stamp, "%Y%m%dT%H%M%SZ", &tm) == NULL ||
		    (t = timegm(&tm)) == (time_t)-1)
			continue;
		snprintf(host, hlen, "%.*s", (int)(p - 1 - (base + 10)),
		    base + 10);
		*wall = (int64_t)t * 1000000000;
		return 0;
	}
	return -1;
}

/* The facts perf.data's own header gives: read with perfread. */
static int
pick_header(struct pick_file *f, int verbose)
{
	const struct profile_info	*pi;
	struct perfread			*r;
	char				 host[256], err[256];
	int64_t				 wall;

	(void)verbose;
	if ((r = perfread_open(f->path, err, sizeof(err))) == NULL) {
		warnx("%s: %s", f->path, err);
		return -1;
	}
	pi = perfread_info(r);
	snprintf(f->host, sizeof(f->host), "%s", pi->host);
	f->cgroups = pi->cgroups;
	f->head = pi->head_hash;
	f->first = pi->first;
	f->last = pi->last;
	perfread_close(r);
	if (f->first == 0 && f->last == 0)
		return 0;	/* no samples */
	f->samples = 0;
	if (pick_name(f->path, host, sizeof(host), &wall) == 0) {
		f->wall_off = pick_off(wall, f->first);
		if (f->host[0] == '\0')
			snprintf(f->host, sizeof(f->host), "%s", host);
	} else
		f->wall_off = pick_off(f->mtime, f->last);
	f->facts = "header";
	return 0;
}

/* The file's head hash, what its companion must have been made from. */
static int
pick_head(struct pick_file *f)
{
	struct perfread	*r;
	char		 err[256];

	if ((r = perfread_open(f->path, err, sizeof(err))) == NULL) {
		warnx("%s: %s", f->path, err);
		return -1;
	}
	f->head = perfread_info(r)->head_hash;
	perfread_close(r);
	return 0;
}

/*
 * A file being written has no manifest, companion or sample times yet:
 * it is placed from the time its name gives (when it was opened) to now,
 * and its samples on the wall clock by this host's clocks now, as the
 * daemon's manifests place them (perf's clock counts like
 * CLOCK_MONOTONIC). Its data is read for what a range keeps.
 */
static int
pick_live(struct pick_file *f)
{
	struct perfread	*r;
	struct timespec	 mono, real;
	char		 host[256], err[256];
	int64_t		 wall, now;

	if ((r = perfread_open(f->path, err, sizeof(err))) == NULL) {
		warnx("%s: %s", f->path, err);
		return -1;
	}
	snprintf(f->host, sizeof(f->host), "%s", perfread_info(r)->host);
	f->cgroups = perfread_info(r)->cgroups;
	f->head = perfread_info(r)->head_hash;
	perfread_close(r);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	now = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	f->wall_off = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - now;
	f->last = (uint64_t)now;
	f->first = 1;
	if (pick_name(f->path, host, sizeof(host), &wall) == 0) {
		if (f->host[0] == '\0')
			snprintf(f->host, sizeof(f->host), "%s", host);
		/* the name's second, not after the file's first sample */
		if (wall - f->wall_off > 1)
			f->first = (uint64_t)(wall - f->wall_off);
	}
	f->live = 1;
	f->facts = "live";
	return 0;
}

int
pick_finished(struct pick_file *f)
{
	struct stat	 st;
	char		*final;
	size_t		 n = strlen(f->path) - strlen(".partial");

	if ((final = strndup(f->path, n)) == NULL)
		return -1;
	if (stat(final, &st) == -1 || !S_ISREG(st.st_mode)) {
		free(final);
		return -1;
	}
	free(f->path);
	f->path = final;
	f->live = 0;
	f->size = (uint64_t)st.st_size;
	f->mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 +
	    st.st_mtim.tv_nsec;
	return 0;
}

static int
pick_learn(struct pick_file *f, int verbose)
{
	struct companion_facts	 want, cf;

	if (pick_is_live(strrchr(f->path, '/') != NULL ?
	    strrchr(f->path, '/') + 1 : f->path)) {
		if (access(f->path, F_OK) == 0 || errno != ENOENT ||
		    pick_finished(f) == -1)
			return pick_live(f);
		/* finished (renamed) since the directory was read */
	}
	if (pick_head(f) == -1)
		return -1;
	if (pick_manifest(f) == 0)
		return 0;
	memset(&want, 0, sizeof(want));
	want.src_size = f->size;
	want.src_mtime = f->mtime;
	want.src_head = f->head;
	if (companion_read(f->path, NULL, &want, &cf) == 0) {
		snprintf(f->host, sizeof(f->host), "%s", cf.host);
		f->samples = cf.samples;
		f->first = cf.first;
		f->last = cf.last;
		f->wall_off = cf.wall_off;
		f->cgroups = cf.cgroups;
		f->facts = "companion";
		return 0;
	}
	return pick_header(f, verbose);
}

/* "perfspill-HOST-NAME-TIME-SEQ.data" is of session NAME: what the name
 * holds between the host (known by now) and the time. A file without
 * one, or named otherwise, is of the default session. */
static void
pick_session_of_name(struct pick_file *f)
{
	char	 stem[256];
	int64_t	 wall;
	size_t	 n = strlen(f->host);

	snprintf(f->session, sizeof(f->session), "default");
	if (pick_name(f->path, stem, sizeof(stem), &wall) == 0 && n > 0 &&
	    strncmp(stem, f->host, n) == 0 && stem[n] == '-' &&
	    stem[n + 1] != '\0')
		snprintf(f->session, sizeof(f->session), "%s", stem + n + 1);
}

int
pick_facts(struct pick_file *f, int verbose)
{
	if (pick_learn(f, verbose) == -1)
		return -1;
	if (f->session[0] == '\0')
		pick_session_of_name(f);
	if (f->host[0] == '\0')
		snprintf(f->host, sizeof(f->host), "unknown");
	return 0;
}

int
pick_session(const struct pick_file *f, const struct opts *o)
{
	size_t	 i;

	if (o->all_sessions)
		return 1;
	/* --off-cpu's default is the session start --off-cpu records */
	if (o->nsessions == 0)
		return f->named || strcmp(f->session, o->off_cpu ?
		    OPTS_OFF_CPU_SESSION : "default") == 0;
	for (i = 0; i < o->nsessions; i++)
		if (strcmp(o->sessions[i], f->session) == 0)
			return 1;
	return 0;
}

void
pick_denied(const char *path)
{
	struct stat	 st;
	struct group	*gr;
	struct passwd	*pw;
	char		 dir[PATH_MAX], deny[PATH_MAX], *slash;

	/* the outermost directory on the way that we may not search (or,
	 * the last, read): perfspilld keeps its output directory 0750 */
	snprintf(dir, sizeof(dir), "%s", path);
	deny[0] = '\0';
	for (;;) {
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
		    access(dir, strcmp(dir, path) == 0 ? R_OK | X_OK : X_OK)
		    == -1)
			snprintf(deny, sizeof(deny), "%s", dir);
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
			break;
		*slash = '\0';
	}
	if (deny[0] == '\0' || stat(deny, &st) == -1) {
		warnx("%s: %s", path, strerror(EACCES));
		return;
	}
	gr = getgrgid(st.st_gid);
	pw = getpwuid(st.st_uid);
	if (st.st_gid == 0 || gr == NULL || (st.st_mode & 0050) == 0)
		warnx("%s: %s: only %s may read %s (mode %04o): run "
		    "perfspill-flame as root", path, strerror(EACCES),
		    pw != NULL ? pw->pw_name : "its owner", deny,
		    (unsigned int)(st.st_mode & 07777));
	else
		warnx("%s: %s: %s is read by %s and the group %s (mode "
		    "%04o): run perfspill-flame as root or as a member of %s "
		    "(usermod -aG %s USER, then log in again)", path,
		    strerror(EACCES), deny, pw != NULL ? pw->pw_name :
		    "its owner", gr->gr_name,
		    (unsigned int)(st.st_mode & 07777), gr->gr_name,
		    gr->gr_name);
}

enum pick_cover
pick_cover(const struct pick_file *f, int64_t from, int64_t to)
{
	int64_t	 a, b;

	if (f->first == 0 && f->last == 0)
		return PICK_NONE;	/* no samples */
	a = pick_wall(f->first, f->wall_off);
	b = pick_wall(f->last, f->wall_off);
	if (b < from || a >= to)
		return PICK_NONE;
	if (a >= from && b < to)
		return PICK_WHOLE;
	return PICK_PART;
}

int64_t
pick_wall(uint64_t t, int64_t wall_off)
{
	int64_t	 w;

	if (__builtin_add_overflow((int64_t)(t > INT64_MAX ? INT64_MAX : t),
	    wall_off, &w))
		return wall_off > 0 ? INT64_MAX : INT64_MIN;
	return w;
}

int64_t
pick_off(int64_t wall, uint64_t t)
{
	int64_t	 off;

	if (__builtin_sub_overflow(wall, (int64_t)(t > INT64_MAX ? INT64_MAX :
	    t), &off))
		return INT64_MIN;
	return off;
}

uint64_t
pick_perf(int64_t wall, int64_t wall_off)
{
	int64_t	 t;

	if (__builtin_sub_overflow(wall, wall_off, &t))
		return wall_off > 0 ? 0 : UINT64_MAX;
	return t < 0 ? 0 : (uint64_t)t;
}

static int
pick_cmp(const void *x, const void *y)
{
	const struct pick_file	*a = x, *b = y;
	int			 c = strcmp(a->host, b->host);
	int64_t			 ta = pick_wall(a->first, a->wall_off);
	int64_t			 tb = pick_wall(b->first, b->wall_off);

	if (c != 0)
		return c;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return strcmp(a->path, b->path);
}

void
pick_sort(struct pick_list *l)
{
	if (l->n > 1)
		qsort(l->f, l->n, sizeof(l->f[0]), pick_cmp);
}

void
pick_free(struct pick_list *l)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		free(l->f[i].path);
	free(l->f);
	memset(l, 0, sizeof(*l));
}

/*
 * retain: scan and trim the finished trace files (see retain.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "manifest.h"
#include "retain.h"
#include "size.h"
#include "write.h"

int
retain_is_trace(const char *name)
{
	size_t	 n = strlen(name);

	return strncmp(name, "perfspill-", 10) == 0 && n > 15 &&
	    strcmp(name + n - 5, ".data") == 0;
}

/* n decimal digits at s into *v. */
static int
retain_digits(const char *s, size_t n, int *v)
{
	size_t	 i;

	for (*v = 0, i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

int
retain_name_time(const char *name, int64_t *when, unsigned int *seq)
{
	/* "-20261202T150000Z-000003.data": a fixed width from the end */
	static const size_t	 tail = 1 + 16 + 1 + 6 + 5;
	size_t			 n = strlen(name);
	const char		*t;
	struct tm		 tm;
	int			 v;

	if (n < tail || strcmp(name + n - 5, ".data") != 0)
		return -1;
	t = name + n - tail;
	if (t[0] != '-' || t[9] != 'T' || t[16] != 'Z' || t[17] != '-')
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (retain_digits(t + 1, 4, &tm.tm_year) == -1 ||
	    retain_digits(t + 5, 2, &tm.tm_mon) == -1 ||
	    retain_digits(t + 7, 2, &tm.tm_mday) == -1 ||
	    retain_digits(t + 10, 2, &tm.tm_hour) == -1 ||
	    retain_digits(t + 12, 2, &tm.tm_min) == -1 ||
	    retain_digits(t + 14, 2, &tm.tm_sec) == -1 ||
	    retain_digits(t + 18, 6, &v) == -1)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*when = (int64_t)timegm(&tm);
	*seq = (unsigned int)v;
	return 0;
}

static int
retain_cmp(const void *a, const void *b)
{
	const struct retain_file	*x = a, *y = b;

	if (x->when != y->when)
		return x->when < y->when ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
retain_sort(struct retain_list *l)
{
	if (l->nr > 1)
		qsort(l->files, l->nr, sizeof(l->files[0]), retain_cmp);
}

DIR *
retain_opendir(int dirfd)
{
	DIR	*dir;
	int	 fd;

	/* a private fd: readdir must not move the daemon's dirfd */
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NULL;
	if ((dir = fdopendir(fd)) == NULL)
		close(fd);
	return dir;
}

int
retain_scan(int dirfd, struct retain_list *l)
{
	DIR			*dir;
	struct dirent		*de;
	struct stat		 st;
	struct retain_file	*tmp, *f;
	size_t			 cap = 0;

	memset(l, 0, sizeof(*l));
	if ((dir = retain_opendir(dirfd)) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		if (!retain_is_trace(de->d_name) ||
		    strlen(de->d_name) >= sizeof(l->files[0].name))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (l->nr == cap) {
			cap = cap ? cap * 2 : 64;
			if ((tmp = realloc(l->files, cap * sizeof(*tmp))) == NULL) {
				closedir(dir);
				retain_list_free(l);
				return -1;
			}
			l->files = tmp;
		}
		f = &l->files[l->nr];
		memcpy(f->name, de->d_name, strlen(de->d_name) + 1);
		f->held = 0;
		f->size = (uint64_t)st.st_size;
		f->mtime = (int64_t)st.st_mtime;
		/* a name not of ours in form (made by hand) by its mtime */
		if (retain_name_time(f->name, &f->when, &f->seq) == -1) {
			f->when = (int64_t)st.st_mtime;
			f->seq = 0;
		}
		l->bytes += (uint64_t)st.st_size;
		l->nr++;
	}
	closedir(dir);
	retain_sort(l);
	return 0;
}

void
retain_list_free(struct retain_list *l)
{
	free(l->files);
	memset(l, 0, sizeof(*l));
}

int
retain_kept(int dirfd, struct record_kept *k)
{
	struct retain_list	 l;
	size_t			 i;

	memset(k, 0, sizeof(*k));
	if (retain_scan(dirfd, &l) == -1)
		return -1;
	k->nr = l.nr;
	k->bytes = l.bytes;
	for (i = 0; i < l.nr; i++)
		if (l.files[i].mtime > k->last_finished)
			k->last_finished = l.files[i].mtime;
	if (l.nr > 0) {
		snprintf(k->oldest, sizeof(k->oldest), "%s", l.files[0].name);
		snprintf(k->newest, sizeof(k->newest), "%s",
		    l.files[l.nr - 1].name);
	}
	retain_list_free(&l);
	return 0;
}

size_t
retain_plan(const struct retain_list *l, uint64_t avail, uint64_t max_files,
    uint64_t max_size, uint64_t min_free, enum retain_why *why,
    int *out_of_reach)
{
	uint64_t	 bytes = l->bytes, removable = 0;
	size_t		 i, j, n = 0, newest;

	*out_of_reach = 0;
	for (i = 0; i < l->nr; i++)
		why[i] = RETAIN_KEEP;
	/* a held file stays and counts: the next ones go in its place */
	for (i = 0; i < l->nr; i++) {
		if (l->files[i].held)
			continue;
		if (max_files && l->nr - n > max_files)
			why[i] = RETAIN_MAX_FILES;
		else if (max_size && bytes > max_size)
			why[i] = RETAIN_MAX_SIZE;
		else
			break;
		bytes -= l->files[i].size;
		if (avail != UINT64_MAX)
			avail += l->files[i].size;
		n++;
	}
	if (min_free == 0 || avail == UINT64_MAX || avail >= min_free ||
	    n == l->nr)
		return n;
	/*
	 * min_free is about the filesystem, which other writers share: remove
	 * only when removing reaches it, and never the newest finished file
	 * (just written; nothing would be left to ship) nor a held one.
	 */
	newest = l->nr - 1;
	for (j = 0; j < newest; j++)
		if (why[j] == RETAIN_KEEP && !l->files[j].held)
			removable += l->files[j].size;
	if (avail + removable < min_free) {
		*out_of_reach = 1;
		return n;
	}
	for (j = 0; j < newest && avail < min_free; j++) {
		if (why[j] != RETAIN_KEEP || l->files[j].held)
			continue;
		why[j] = RETAIN_MIN_FREE;
		avail += l->files[j].size;
		n++;
	}
	return n;
}

int
retain_enforce(int dirfd, uint64_t max_files, uint64_t max_size,
    uint64_t min_free, retain_hold_cb hold, void *hold_arg)
{
	struct retain_list	 l;
	enum retain_why		*why = NULL;
	uint64_t		 avail = UINT64_MAX, bytes;
	size_t			 i;
	int			 removed = 0, out_of_reach;
	char			 reason[96], a[32], b[32];

	if (retain_scan(dirfd, &l) == -1)
		return -1;
	for (i = 0; i < l.nr && hold != NULL; i++)
		l.files[i].held = hold(l.files[i].name, hold_arg);
	if (min_free && outdir_free_bytes(dirfd, &avail) == -1)
		avail = UINT64_MAX;
	if (l.nr > 0 && (why = calloc(l.nr, sizeof(*why))) == NULL) {
		retain_list_free(&l);
		return -1;
	}
	if (retain_plan(&l, avail, max_files, max_size, min_free, why,
	    &out_of_reach) == 0 && !out_of_reach)
		goto out;
	if (out_of_reach)
		log_warnx("retention: %s free is below min_free %s, and "
		    "removing every finished file but the newest cannot reach "
		    "it: none removed for min_free",
		    size_format(avail, a, sizeof(a)),
		    size_format(min_free, b, sizeof(b)));
	bytes = l.bytes;
	for (i = 0; i < l.nr; i++) {
		switch (why[i]) {
		case RETAIN_KEEP:
			continue;
		case RETAIN_MAX_FILES:
			snprintf(reason, sizeof(reason), "more than max_files %"
			    PRIu64 " finished files", max_files);
			break;
		case RETAIN_MAX_SIZE:
			snprintf(reason, sizeof(reason), "finished files hold %"
			    PRIu64 " bytes, above max_size %" PRIu64, bytes,
			    max_size);
			break;
		case RETAIN_MIN_FREE:
			snprintf(reason, sizeof(reason), "%s free, below "
			    "min_free %s", size_format(avail, a, sizeof(a)),
			    size_format(min_free, b, sizeof(b)));
			break;
		}
		bytes -= l.files[i].size;
		if (avail != UINT64_MAX)
			avail += l.files[i].size;
		if (unlinkat(dirfd, l.files[i].name, 0) == -1) {
			log_warn("retention: cannot remove %s", l.files[i].name);
			continue;
		}
		log_info("retention: removed %s (%" PRIu64 " bytes): %s",
		    l.files[i].name, l.files[i].size, reason);
		/* its manifest and companion describe nothing now */
		manifest_unlink_beside(dirfd, l.files[i].name);
		removed++;
	}
out:
	free(why);
	retain_list_free(&l);
	return removed;
}

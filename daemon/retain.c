/*
 * retain: scan and trim the finished trace files (see retain.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "log.h"
#include "retain.h"

int
retain_is_trace(const char *name)
{
	size_t	 n = strlen(name);

	return strncmp(name, "perfspill-", 10) == 0 && n > 15 &&
	    strcmp(name + n - 5, ".data") == 0;
}

static int
retain_cmp(const void *a, const void *b)
{
	return strcmp(((const struct retain_file *)a)->name,
	    ((const struct retain_file *)b)->name);
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
	struct retain_file	*tmp;
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
		memcpy(l->files[l->nr].name, de->d_name, strlen(de->d_name) + 1);
		l->files[l->nr].size = (uint64_t)st.st_size;
		l->bytes += (uint64_t)st.st_size;
		l->nr++;
	}
	closedir(dir);
	if (l->nr > 1)
		qsort(l->files, l->nr, sizeof(l->files[0]), retain_cmp);
	return 0;
}

void
retain_list_free(struct retain_list *l)
{
	free(l->files);
	memset(l, 0, sizeof(*l));
}

int
retain_free_bytes(int dirfd, uint64_t *out)
{
	struct statvfs	 sv;

	if (fstatvfs(dirfd, &sv) == -1)
		return -1;
	*out = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}

int
retain_enforce(int dirfd, uint64_t max_files, uint64_t max_size,
    uint64_t min_free)
{
	struct retain_list	 l;
	uint64_t		 avail = UINT64_MAX;
	size_t			 i;
	int			 removed = 0;

	if (retain_scan(dirfd, &l) == -1)
		return -1;
	if (min_free && retain_free_bytes(dirfd, &avail) == -1)
		avail = UINT64_MAX;
	for (i = 0; i < l.nr; i++) {
		if ((max_files == 0 || l.nr - i <= max_files) &&
		    (max_size == 0 || l.bytes <= max_size) &&
		    (min_free == 0 || avail >= min_free))
			break;
		if (unlinkat(dirfd, l.files[i].name, 0) == -1) {
			log_warn("retention: cannot remove %s", l.files[i].name);
			continue;
		}
		log_info("retention: removed %s (%llu bytes)", l.files[i].name,
		    (unsigned long long)l.files[i].size);
		l.bytes -= l.files[i].size;
		if (avail != UINT64_MAX)
			avail += l.files[i].size;
		removed++;
	}
	retain_list_free(&l);
	return removed;
}

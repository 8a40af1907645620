/*
 * cgroup: the cgroup2 mount, cgroup ids and directories (see cgroup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"

int
cgroup_mount(char *buf, size_t len)
{
	FILE	*f;
	char	*line = NULL, *sep, mnt[4096], fstype[64];
	size_t	 cap = 0;
	int	 found = 0;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	/* "36 25 0:31 / /sys/fs/cgroup rw,... - cgroup2 cgroup2 rw,..." */
	while (!found && getline(&line, &cap, f) != -1) {
		if ((sep = strstr(line, " - ")) == NULL ||
		    sscanf(sep, " - %63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2") != 0 ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		/* mountinfo escapes spaces as \040: such a mount is not ours */
		if (strchr(mnt, '\\') != NULL || strlen(mnt) >= len)
			continue;
		snprintf(buf, len, "%s", mnt);
		found = 1;
	}
	free(line);
	fclose(f);
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

int
cgroup_id(const char *path, uint64_t *id)
{
	struct {
		struct file_handle	fh;
		uint64_t		id;
	}	h;
	int	mount_id;

	/* cgroupfs hands out 8-byte handles holding the kernfs node id,
	 * the value the kernel puts in PERF_SAMPLE_CGROUP */
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(h.id);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == -1)
		return -1;
	if (h.fh.handle_bytes != sizeof(h.id)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

int
cgroup_open(const char *mount, const char *rel, char *err, size_t len)
{
	char	 path[4096];
	int	 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", mount, rel) >=
	    sizeof(path)) {
		snprintf(err, len, "cgroup '%s': path too long", rel);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, len, "cgroup '%s': %s (%s)", rel, errno == ENOENT ?
		    "no such cgroup" : strerror(errno), path);
		return -1;
	}
	return fd;
}

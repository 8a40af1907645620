/*
 * cgroup finds the cgroup2 mount, cgroup ids and directories (see
 * cgroup.h).
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

/*
 * Where the memory controller is: its mount point and the mount's root
 * (a container may see a subtree) for the v1 controller when one is
 * mounted (it cannot be on both), else the cgroup2 mount. v1: 1, v2: 0,
 * none: -1.
 */
static int
cgroup_memory_mount(char *mnt, size_t len, char *root, size_t rlen)
{
	FILE	*f;
	char	*line = NULL, *sep, m[4096], r[4096], fstype[64], opts[512];
	char	*o, *save;
	size_t	 cap = 0;
	int	 v1 = 0, v2 = 0;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	/* "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory" */
	while (!v1 && getline(&line, &cap, f) != -1) {
		if ((sep = strstr(line, " - ")) == NULL ||
		    sscanf(sep, " - %63s %*s %511s", fstype, opts) != 2 ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    strchr(m, '\\') != NULL || strlen(m) >= len ||
		    strlen(r) >= rlen)
			continue;
		if (strcmp(fstype, "cgroup") == 0) {
			for (o = strtok_r(opts, ",", &save); o != NULL && !v1;
			    o = strtok_r(NULL, ",", &save))
				v1 = strcmp(o, "memory") == 0;
			if (!v1)
				continue;
		} else if (strcmp(fstype, "cgroup2") != 0 || v2)
			continue;
		v2 = 1;
		snprintf(mnt, len, "%s", m);
		snprintf(root, rlen, "%s", r);
	}
	free(line);
	fclose(f);
	return v1 ? 1 : v2 ? 0 : -1;
}

/* Our cgroup's path in the hierarchy: the v1 line naming the memory
 * controller, or the cgroup2 line "0::PATH". 0 or -1. */
static int
cgroup_self(int v1, char *path, size_t len)
{
	FILE	*f;
	char	*line = NULL, *ctl, *p, *o, *save;
	size_t	 cap = 0;
	int	 found = 0;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	/* "4:memory:/system.slice/x.service", "0::/system.slice/x.service" */
	while (!found && getline(&line, &cap, f) != -1) {
		line[strcspn(line, "\n")] = '\0';
		if ((ctl = strchr(line, ':')) == NULL ||
		    (p = strchr(++ctl, ':')) == NULL)
			continue;
		*p++ = '\0';
		if (!v1)
			found = strncmp(line, "0:", 2) == 0 && *ctl == '\0';
		for (o = strtok_r(ctl, ",", &save); v1 && o != NULL && !found;
		    o = strtok_r(NULL, ",", &save))
			found = strcmp(o, "memory") == 0;
		if (found && strlen(p) < len)
			snprintf(path, len, "%s", p);
		else
			found = 0;
	}
	free(line);
	fclose(f);
	return found ? 0 : -1;
}

/* The limit in file path: 0 with *v, -1 for none ("max", absent). */
static int
cgroup_read_limit(const char *path, uint64_t *v)
{
	FILE		*f;
	char		 buf[64], *end;
	unsigned long long n;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	errno = 0;
	n = strtoull(buf, &end, 10);
	if (end == buf || errno != 0 || (*end != '\n' && *end != '\0'))
		return -1;	/* "max" */
	/* v1's "unlimited" is the page counter's largest value */
	if (n >= (1ULL << 62))
		return -1;
	*v = n;
	return 0;
}

int
cgroup_memory_limit(uint64_t *limit, char *where, size_t len)
{
	char		 mnt[4096], root[4096], self[4096], dir[8192], file[8300];
	const char	*rel, *name;
	char		*slash;
	size_t		 mlen;
	uint64_t	 v;
	int		 v1, found = 0;

	if ((v1 = cgroup_memory_mount(mnt, sizeof(mnt), root,
	    sizeof(root))) == -1 || cgroup_self(v1, self, sizeof(self)) == -1)
		return 0;
	name = v1 ? "memory.limit_in_bytes" : "memory.max";
	/* the path is relative to the hierarchy's root; the mount may show
	 * only a subtree of it */
	rel = self;
	if (strcmp(root, "/") != 0 && strncmp(self, root, strlen(root)) == 0)
		rel = self + strlen(root);
	snprintf(dir, sizeof(dir), "%s%s%s", mnt, *rel == '/' ? "" : "/", rel);
	mlen = strlen(mnt);
	/* every level up to the mount: each one's limit applies */
	for (;;) {
		while ((slash = strrchr(dir, '/')) != NULL && slash[1] == '\0' &&
		    strlen(dir) > mlen)
			*slash = '\0';
		snprintf(file, sizeof(file), "%s/%s", dir, name);
		if (cgroup_read_limit(file, &v) == 0 && (!found || v < *limit)) {
			*limit = v;
			snprintf(where, len, "%s", file);
			found = 1;
		}
		if (strlen(dir) <= mlen || (slash = strrchr(dir, '/')) == NULL ||
		    slash < dir + mlen)
			break;
		*slash = '\0';
	}
	return found;
}

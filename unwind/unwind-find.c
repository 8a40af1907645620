/*
 * unwind-find: where a binary of a given build-id is on this host (see
 * unwind-int.h): the recorded path when the file there has that id,
 * perf's build-id cache (~/.debug/.build-id/xx/rest/{elf,debug}), the
 * debug file under /usr/lib/debug/.build-id, and debuginfod. A file of
 * another build-id is never taken: a binary replaced since the
 * recording is not the one that ran.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "unwind-int.h"

#define UW_DEBUG_ROOT	"/usr/lib/debug/.build-id"

int
unwind_has_build_id(const char *path, const uint8_t *id, size_t len)
{
	const void	*bid;
	struct stat	 st;
	Elf		*e;
	ssize_t		 n;
	int		 fd, rv = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) != NULL) {
		n = dwelf_elf_gnu_build_id(e, &bid);
		rv = n == (ssize_t)len && memcmp(bid, id, len) == 0;
		elf_end(e);
	}
	close(fd);
	return rv;
}

char *
unwind_find_local(const uint8_t *id, size_t len, const char *path, int kind,
    const char *home)
{
	char	 hex[2 * UNWIND_BUILD_ID_MAX + 1], buf[4096];
	size_t	 i;

	if (len == 0 || len > UNWIND_BUILD_ID_MAX)
		return NULL;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (kind == 0 && path != NULL && path[0] == '/' &&
	    unwind_has_build_id(path, id, len))
		return strdup(path);
	/* perf's cache: .build-id/xx/rest links to a directory of the
	 * binary ("elf") and its debug file ("debug") */
	if (home != NULL && len > 1) {
		snprintf(buf, sizeof(buf), "%s/.debug/.build-id/%.2s/%s/%s",
		    home, hex, hex + 2, kind == 0 ? "elf" : "debug");
		if (unwind_has_build_id(buf, id, len))
			return strdup(buf);
	}
	if (len > 1) {
		snprintf(buf, sizeof(buf), "%s/%.2s/%s.debug", UW_DEBUG_ROOT,
		    hex, hex + 2);
		if (unwind_has_build_id(buf, id, len))
			return strdup(buf);
	}
	return NULL;
}

char *
uw_find(const uint8_t *id, size_t len, const char *path, int kind,
    const char *home, struct uw_debuginfod *dbg)
{
	char	*p;
	int	 fd;

	if ((p = unwind_find_local(id, len, path, kind, home)) != NULL)
		return p;
	if (dbg != NULL && len > 0 && len <= UNWIND_BUILD_ID_MAX &&
	    (fd = uw_debuginfod_find(dbg, id, len, kind, &p)) != -1) {
		close(fd);
		return p;
	}
	return NULL;
}

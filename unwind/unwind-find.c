/*
 * unwind-find finds where the binary of a given build-id is (unwind.h's
 * finder): at the recorded path when the file there has that id, in
 * perf's build-id cache (~/.debug/.build-id/xx/rest/{elf,debug}), as the
 * debug file under /usr/lib/debug/.build-id, and from debuginfod. The
 * unwinder and perfspill-flame's symbols both look with it. A file of
 * another build-id is never taken: a binary replaced since the
 * recording is not the one that ran.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "unwind-int.h"

#define UW_DEBUG_ROOT	"/usr/lib/debug/.build-id"

int
unwind_open_regular(const char *path)
{
	struct stat	 st, st2;
	char		 self[64];
	int		 pfd, fd;

	if ((pfd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(pfd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -1;
	}
	/* what was looked at, not what the path names by now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	close(pfd);
	if (fd != -1 && (fstat(fd, &st2) == -1 || !S_ISREG(st2.st_mode) ||
	    st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)) {
		close(fd);
		return -1;
	}
	return fd;
}

int
unwind_has_build_id(const char *path, const uint8_t *id, size_t len)
{
	const void	*bid;
	Elf		*e;
	ssize_t		 n;
	int		 fd, rv = 0;

	if ((fd = unwind_open_regular(path)) == -1)
		return 0;
	if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) != NULL) {
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

struct unwind_finder {
	const char		*home;		/* perf's cache's: $HOME */
	struct uw_debuginfod	*dbg;		/* NULL: no server asked */
	char			*vdso;		/* this process's vdso, as a
						 * file; NULL: not made */
	int			 vdso_fd;	/* ...its memfd; -1: none */
	int			 vdso_tried;
};

struct unwind_finder *
unwind_finder_create(int debuginfod)
{
	struct unwind_finder	*uf;

	if ((uf = calloc(1, sizeof(*uf))) == NULL)
		return NULL;
	uf->home = getenv("HOME");
	uf->vdso_fd = -1;
	/* without libdebuginfod there is no client, and none is asked */
	if (debuginfod)
		uf->dbg = uw_debuginfod_create();
	return uf;
}

void
unwind_finder_destroy(struct unwind_finder *uf)
{
	if (uf == NULL)
		return;
	uw_debuginfod_destroy(uf->dbg);
	if (uf->vdso_fd != -1)
		close(uf->vdso_fd);
	free(uf->vdso);
	free(uf);
}

/*
 * The kernel's vdso is the same for every process of this host, so a
 * recording of this host is unwound and named through this process's
 * own, copied once into a memfd that stays open as long as the finder.
 */
const char *
unwind_finder_vdso(struct unwind_finder *uf, const uint8_t *id, size_t len)
{
	const uint8_t	*base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	unsigned long	 a = 0, e = 0;
	char		 line[512];
	FILE		*f;

	if (!uf->vdso_tried && base != NULL &&
	    (f = fopen("/proc/self/maps", "re")) != NULL) {
		uf->vdso_tried = 1;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, "[vdso]") != NULL &&
			    sscanf(line, "%lx-%lx", &a, &e) == 2 &&
			    a == (unsigned long)(uintptr_t)base)
				break;
		fclose(f);
		if (a == (unsigned long)(uintptr_t)base &&
		    (uf->vdso_fd = memfd_create("vdso", MFD_CLOEXEC)) != -1 &&
		    (write(uf->vdso_fd, base, e - a) != (ssize_t)(e - a) ||
		    asprintf(&uf->vdso, "/proc/self/fd/%d", uf->vdso_fd) ==
		    -1))
			uf->vdso = NULL;
	}
	if (uf->vdso == NULL || (len > 0 && !unwind_has_build_id(uf->vdso, id,
	    len)))
		return NULL;
	return uf->vdso;
}

char *
unwind_finder_find(struct unwind_finder *uf, const uint8_t *id, size_t len,
    const char *path, int kind)
{
	char	*p;
	int	 fd;

	if ((p = unwind_find_local(id, len, path, kind, uf->home)) != NULL)
		return p;
	if (uf->dbg != NULL && len > 0 && len <= UNWIND_BUILD_ID_MAX &&
	    (fd = uw_debuginfod_find(uf->dbg, id, len, kind, &p)) != -1) {
		close(fd);
		return p;
	}
	return NULL;
}

int
unwind_finder_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr base, const char *file, const char *debuglink,
    GElf_Word crc, char **path)
{
	struct unwind_finder	*uf = *(struct unwind_finder **)userdata;
	const unsigned char	*id;
	GElf_Addr		 vaddr;
	char			*p;
	int			 len, fd;

	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (uf != NULL && len > 0 && (p = unwind_finder_find(uf, id,
	    (size_t)len, NULL, 1)) != NULL) {
		/* only a regular file is opened: a FIFO's open blocks */
		if ((fd = unwind_open_regular(p)) != -1) {
			*path = p;
			return fd;
		}
		free(p);
	}
	return dwfl_standard_find_debuginfo(mod, userdata, name, base, file,
	    debuglink, crc, path);
}

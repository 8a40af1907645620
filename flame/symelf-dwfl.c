/*
 * symelf: user code's names with elfutils' libdwfl (see symelf.h).
 *
 * One module a binary, known by its build-id (or its path when the
 * trace file gives none), reported on its own Dwfl at its ELF addresses:
 * a frame's file offset becomes the address of the PT_LOAD segment that
 * holds it. The binary is found, by build-id: at its path on this host
 * when the ids match, in perf's build-id cache (~/.debug), as the debug
 * file under /usr/lib/debug/.build-id, and from debuginfod; its symbols
 * then come from it or from its debug file (the same places, then
 * libdwfl's own search: .gnu_debuglink, .gnu_debugdata).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "addrtab.h"
#include "dbgfetch.h"
#include "symelf.h"

#define SYMELF_DEBUG_ROOT	"/usr/lib/debug/.build-id"
#define SYMELF_PAGE		4096

/* A function of a module's symbol table, at its module address. */
struct symelf_sym {
	GElf_Addr	 start, end;
	const char	*name;
	uint8_t		 bind;
};

struct symelf_mod {
	uint8_t		 id[PROFILE_BUILD_ID_MAX];
	uint8_t		 idlen;
	char		*file;		/* the key without a build-id */
	Dwfl		*dwfl;		/* NULL: not found */
	Dwfl_Module	*mod;
	GElf_Addr	 bias;
	GElf_Phdr	*load;		/* its PT_LOAD segments */
	size_t		 nload;
	struct symelf_sym *syms;	/* sorted, one per address */
	size_t		 nsyms;
};

struct symelf {
	struct symelf_mod	*m;
	size_t			 n, cap;
	int			 verbose;
	const char		*home;
};

static char *symelf_debuginfo_path = NULL;

struct symelf *
symelf_create(int verbose)
{
	struct symelf	*se;

	if ((se = calloc(1, sizeof(*se))) == NULL)
		return NULL;
	se->verbose = verbose;
	se->home = getenv("HOME");
	elf_version(EV_CURRENT);
	return se;
}

void
symelf_destroy(struct symelf *se)
{
	size_t	 i;

	if (se == NULL)
		return;
	for (i = 0; i < se->n; i++) {
		if (se->m[i].dwfl != NULL)
			dwfl_end(se->m[i].dwfl);
		free(se->m[i].load);
		free(se->m[i].syms);
		free(se->m[i].file);
	}
	free(se->m);
	free(se);
	dbgfetch_end();
}

static void
symelf_hex(const uint8_t *id, size_t len, char *buf)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
}

/*
 * The regular file at path, opened to read (-1: none). The path is what
 * a record of the file names: it is looked at (O_PATH) before it is
 * opened, and only a regular file is, through the descriptor of what was
 * looked at (an open of a FIFO blocks or wakes its writer, one of a
 * device may act on it).
 */
static int
symelf_open_reg(const char *path)
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

/* Does the ELF file at path have build-id id? */
static int
symelf_has_id(const char *path, const uint8_t *id, size_t len)
{
	const void	*bid;
	Elf		*e;
	ssize_t		 n;
	int		 fd, rv = 0;

	if ((fd = symelf_open_reg(path)) == -1)
		return 0;
	if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) != NULL) {
		n = dwelf_elf_gnu_build_id(e, &bid);
		rv = n == (ssize_t)len && memcmp(bid, id, len) == 0;
		elf_end(e);
	}
	close(fd);
	return rv;
}

/* The first of the places a build-id's file may be that holds it:
 * kind 0 the binary, 1 its debug file. */
static char *
symelf_find(struct symelf *se, const uint8_t *id, size_t len,
    const char *file, int kind)
{
	char	 hex[2 * PROFILE_BUILD_ID_MAX + 1], buf[4096], *p = NULL;
	int	 fd;

	symelf_hex(id, len, hex);
	if (kind == 0 && file != NULL && file[0] == '/' &&
	    symelf_has_id(file, id, len))
		return strdup(file);
	/* perf's cache: .build-id/xx/rest links to a directory of the
	 * binary ("elf") and its debug file ("debug") */
	if (se->home != NULL && len > 1) {
		snprintf(buf, sizeof(buf), "%s/.debug/.build-id/%.2s/%s/%s",
		    se->home, hex, hex + 2, kind == 0 ? "elf" : "debug");
		if (symelf_has_id(buf, id, len))
			return strdup(buf);
	}
	if (len > 1) {
		snprintf(buf, sizeof(buf), "%s/%.2s/%s.debug",
		    SYMELF_DEBUG_ROOT, hex, hex + 2);
		if (symelf_has_id(buf, id, len))
			return strdup(buf);
	}
	if ((fd = dbgfetch(id, len, kind, &p)) != -1) {
		close(fd);
		return p;
	}
	return NULL;
}

/* libdwfl asks for a module's debug file: ours first, then its own. */
static int
symelf_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr base, const char *file, const char *debuglink,
    GElf_Word crc, char **path)
{
	struct symelf	*se = *(struct symelf **)userdata;
	const unsigned char *id;
	GElf_Addr	 vaddr;
	char		*p;
	int		 len, fd;

	(void)se;
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len > 0 && (p = symelf_find(*(struct symelf **)userdata, id,
	    (size_t)len, NULL, 1)) != NULL) {
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) != -1) {
			*path = p;
			return fd;
		}
		free(p);
	}
	return dwfl_standard_find_debuginfo(mod, userdata, name, base, file,
	    debuglink, crc, path);
}

static const Dwfl_Callbacks symelf_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = symelf_find_debuginfo,
	.debuginfo_path = &symelf_debuginfo_path,
};

/* This process's vdso as a file (a memfd): the kernel's vdso is the
 * same for every process of this host. Its path, or NULL. */
static char *
symelf_vdso(const struct profile_mapping *m)
{
	const uint8_t	*base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	unsigned long	 a = 0, b = 0;
	char		 line[512], *p = NULL;
	FILE		*f;
	int		 fd;

	if (base == NULL || (f = fopen("/proc/self/maps", "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "[vdso]") != NULL &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2 &&
		    a == (unsigned long)(uintptr_t)base)
			break;
	fclose(f);
	if (a != (unsigned long)(uintptr_t)base ||
	    (fd = memfd_create("vdso", MFD_CLOEXEC)) == -1)
		return NULL;
	if (write(fd, base, b - a) == (ssize_t)(b - a) &&
	    asprintf(&p, "/proc/self/fd/%d", fd) != -1 &&
	    (m->build_id_len == 0 || symelf_has_id(p, m->build_id,
	    m->build_id_len)))
		return p;	/* the memfd stays open for the run */
	free(p);
	close(fd);
	return NULL;
}

/* Of two functions at one address, the one perf names (its
 * choose_best_symbol): a sized one, a strong one, a global one, fewer
 * leading underscores, the longer name. 1: a, 0: b. */
static int
symelf_better(const struct symelf_sym *a, const struct symelf_sym *b)
{
	size_t	 ua = strspn(a->name, "_"), ub = strspn(b->name, "_");

	if ((a->end > a->start) != (b->end > b->start))
		return a->end > a->start;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (ua != ub)
		return ua < ub;
	return strlen(a->name) >= strlen(b->name);
}

static int
symelf_sym_cmp(const void *x, const void *y)
{
	const struct symelf_sym	*a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* The module's functions, sorted, aliases resolved as perf does, a
 * function without a size ending at the next one. */
static int
symelf_symtab(struct symelf_mod *sm)
{
	GElf_Sym	 sym;
	GElf_Addr	 addr;
	GElf_Word	 shndx;
	const char	*name;
	size_t		 i, j;
	int		 n, type;

	if ((n = dwfl_module_getsymtab(sm->mod)) <= 0)
		return 0;
	if ((sm->syms = calloc((size_t)n, sizeof(*sm->syms))) == NULL)
		return -1;
	for (i = 1; i < (size_t)n; i++) {
		name = dwfl_module_getsym_info(sm->mod, (int)i, &sym, &addr,
		    &shndx, NULL, NULL);
		type = GELF_ST_TYPE(sym.st_info);
		if (name == NULL || name[0] == '\0' || shndx == SHN_UNDEF ||
		    sym.st_value == 0 ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		sm->syms[sm->nsyms].start = addr;
		sm->syms[sm->nsyms].end = addr + sym.st_size;
		sm->syms[sm->nsyms].name = name;
		sm->syms[sm->nsyms].bind = GELF_ST_BIND(sym.st_info);
		sm->nsyms++;
	}
	if (sm->nsyms == 0)
		return 0;
	qsort(sm->syms, sm->nsyms, sizeof(*sm->syms), symelf_sym_cmp);
	for (i = 1, j = 0; i < sm->nsyms; i++) {
		if (sm->syms[i].start == sm->syms[j].start) {
			if (symelf_better(&sm->syms[i], &sm->syms[j]))
				sm->syms[j] = sm->syms[i];
		} else
			sm->syms[++j] = sm->syms[i];
	}
	sm->nsyms = j + 1;
	for (i = 0; i + 1 < sm->nsyms; i++)
		if (sm->syms[i].end == sm->syms[i].start)
			sm->syms[i].end = sm->syms[i + 1].start;
	if (sm->syms[i].end == sm->syms[i].start)
		sm->syms[i].end = sm->syms[i].start + 4096;
	return 0;
}

/* Reports the binary of m (found, or not: dwfl stays NULL). */
static void
symelf_open(struct symelf *se, struct symelf_mod *sm,
    const struct profile_mapping *m)
{
	GElf_Phdr	 ph;
	Elf		*e;
	char		*path;
	size_t		 i, nph;
	void		**ud;
	int		 fd;

	if (strcmp(m->file, "[vdso]") == 0)
		path = symelf_vdso(m);
	else
		path = sm->idlen > 0 ? symelf_find(se, sm->id, sm->idlen,
		    m->file, 0) : m->file[0] == '/' ? strdup(m->file) : NULL;
	if (path == NULL && sm->idlen > 0)
		/* no binary anywhere: its debug file has the symbols and
		 * the same segments */
		path = symelf_find(se, sm->id, sm->idlen, NULL, 1);
	if (path == NULL) {
		if (se->verbose)
			warnx("%s: no binary with its build-id found", m->file);
		return;
	}
	if ((sm->dwfl = dwfl_begin(&symelf_callbacks)) == NULL ||
	    (fd = symelf_open_reg(path)) == -1)
		goto fail;
	dwfl_report_begin(sm->dwfl);
	/* the descriptor is the module's from here, when it is one */
	if ((sm->mod = dwfl_report_elf(sm->dwfl, m->file, path, fd, 0,
	    false)) == NULL)
		close(fd);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (sm->mod == NULL)
		goto fail;
	dwfl_module_info(sm->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*(struct symelf **)ud = se;
	if ((e = dwfl_module_getelf(sm->mod, &sm->bias)) == NULL ||
	    elf_getphdrnum(e, &nph) != 0 ||
	    (sm->load = calloc(nph ? nph : 1, sizeof(*sm->load))) == NULL)
		goto fail;
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD)
			sm->load[sm->nload++] = ph;
	if (symelf_symtab(sm) == -1)
		goto fail;
	if (se->verbose)
		fprintf(stderr, "perfspill-flame: %s: symbols from %s\n",
		    m->file, path);
	free(path);
	return;
fail:
	if (se->verbose)
		warnx("%s: %s: %s", m->file, path, dwfl_errmsg(-1));
	if (sm->dwfl != NULL)
		dwfl_end(sm->dwfl);
	sm->dwfl = NULL;
	free(path);
}

static struct symelf_mod *
symelf_mod(struct symelf *se, const struct profile_mapping *m)
{
	struct symelf_mod	*tmp, *sm;
	size_t			 i;

	for (i = 0; i < se->n; i++) {
		sm = &se->m[i];
		if (m->build_id_len > 0 ? sm->idlen == m->build_id_len &&
		    memcmp(sm->id, m->build_id, sm->idlen) == 0 :
		    sm->idlen == 0 && strcmp(sm->file, m->file) == 0)
			return sm;
	}
	if (se->n == se->cap) {
		se->cap = se->cap ? se->cap * 2 : 32;
		if ((tmp = realloc(se->m, se->cap * sizeof(*tmp))) == NULL)
			return NULL;
		se->m = tmp;
	}
	sm = &se->m[se->n];
	memset(sm, 0, sizeof(*sm));
	memcpy(sm->id, m->build_id, m->build_id_len);
	sm->idlen = m->build_id_len;
	if ((sm->file = strdup(m->file)) == NULL)
		return NULL;
	se->n++;
	symelf_open(se, sm, m);
	return sm;
}

const char *
symelf_lookup(struct symelf *se, const struct profile_mapping *m,
    uint64_t off)
{
	struct symelf_mod	*sm;
	GElf_Addr		 addr = 0;
	size_t			 i;
	int			 found = 0;

	if (m == NULL || (m->file[0] == '[' && strcmp(m->file, "[vdso]") !=
	    0) || (sm = symelf_mod(se, m)) == NULL || sm->dwfl == NULL)
		return NULL;
	for (i = 0; i < sm->nload && !found; i++)
		if (sm->load[i].p_filesz > 0 && off >= sm->load[i].p_offset &&
		    off - sm->load[i].p_offset < sm->load[i].p_memsz) {
			addr = off - sm->load[i].p_offset + sm->load[i].p_vaddr;
			found = 1;
		}
	/*
	 * A debug file alone (the binary is on another host) keeps the
	 * segments' addresses, not their file offsets: the mapping is the
	 * executable segment, mapped from its page.
	 */
	for (i = 0; i < sm->nload && !found; i++)
		if (sm->load[i].p_filesz == 0 && (sm->load[i].p_flags & PF_X)) {
			addr = off - m->pgoff + (sm->load[i].p_vaddr &
			    ~(GElf_Addr)(SYMELF_PAGE - 1));
			found = 1;
		}
	if (!found)
		return NULL;
	addr += sm->bias;
	/* the last function that starts at or before addr */
	i = addrtab_upto(sm->syms, sm->nsyms, sizeof(*sm->syms), addr);
	return i > 0 && addr < sm->syms[i - 1].end ? sm->syms[i - 1].name :
	    NULL;
}

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
#include <inttypes.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include "addrtab.h"
#include "unwind/unwind.h"
#include "demangle.h"
#include "symbolize.h"
#include "symelf.h"

#define SYMELF_PAGE		4096
#define SYMELF_INLINED		" (inlined)"

/* A function of a module's symbol table, at its module address. */
struct symelf_sym {
	GElf_Addr	 start, end;
	const char	*name;		/* as the file has it, until named */
	uint32_t	 order;		/* in the table: perf's last tie-break */
	uint8_t		 bind;
	uint8_t		 ifunc;		/* an IFUNC, or an alias of one */
	uint8_t		 named;		/* name is perf's (demangled) */
	uint8_t		 own;		/* name is ours to free */
};

/* The names of an address's inline chain, kept for the run. */
struct symelf_chain {
	struct symelf_chain	*next;
	GElf_Addr		 addr;
	size_t			 n;	/* 0: none there */
	char			*names[];
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
	struct symelf_chain *chains;	/* every one, to free */
	struct symelf_chain **bychain;	/* open addressing by addr: the
					 * processes of a file share a
					 * library's addresses */
	size_t		 nchains, chains_size;
};

struct symelf {
	struct symelf_mod	*m;
	size_t			 n, cap;
	int			 verbose;
	int			 flags;		/* SYMBOLIZE_* */
	struct unwind_finder	*find;		/* every module's userdata */
};

static char *symelf_debuginfo_path = NULL;

struct symelf *
symelf_create(int verbose, int flags)
{
	struct symelf	*se;

	if ((se = calloc(1, sizeof(*se))) == NULL)
		return NULL;
	se->verbose = verbose;
	se->flags = flags;
	if ((se->find = unwind_finder_create(1)) == NULL) {
		free(se);
		return NULL;
	}
	elf_version(EV_CURRENT);
	return se;
}

static void
symelf_mod_free(struct symelf_mod *sm)
{
	struct symelf_chain	*c;
	size_t			 i;

	for (i = 0; i < sm->nsyms; i++)
		if (sm->syms[i].own)
			free((char *)sm->syms[i].name);
	while ((c = sm->chains) != NULL) {
		sm->chains = c->next;
		for (i = 0; i < c->n; i++)
			free(c->names[i]);
		free(c);
	}
	free(sm->bychain);
	if (sm->dwfl != NULL)
		dwfl_end(sm->dwfl);
	free(sm->load);
	free(sm->syms);
	free(sm->file);
}

void
symelf_destroy(struct symelf *se)
{
	size_t	 i;

	if (se == NULL)
		return;
	for (i = 0; i < se->n; i++)
		symelf_mod_free(&se->m[i]);
	free(se->m);
	unwind_finder_destroy(se->find);
	free(se);
}

static const Dwfl_Callbacks symelf_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = unwind_finder_debuginfo,
	.debuginfo_path = &symelf_debuginfo_path,
};

/* s's name as perf shows it: demangled unless told not to. */
static const char *
symelf_name(const struct symelf *se, struct symelf_sym *s)
{
	char	*d;

	if (!s->named) {
		s->named = 1;
		if ((se->flags & SYMBOLIZE_DEMANGLE) &&
		    (d = demangle(s->name)) !=
		    NULL) {
			s->name = d;
			s->own = 1;
		}
	}
	return s->name;
}

/* Of two symbols at one address, the one perf names (its
 * choose_best_symbol, on the names it shows): a sized one, a strong one,
 * a global one, fewer leading underscores, the longer name, and of two
 * that tie the first in the table. 1: a, 0: b. */
static int
symelf_better(const struct symelf *se, struct symelf_sym *a,
    struct symelf_sym *b)
{
	const char	*na = symelf_name(se, a), *nb = symelf_name(se, b);
	size_t		 ua = strspn(na, "_"), ub = strspn(nb, "_");

	if ((a->end > a->start) != (b->end > b->start))
		return a->end > a->start;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (ua != ub)
		return ua < ub;
	if (strlen(na) != strlen(nb))
		return strlen(na) > strlen(nb);
	return a->order < b->order;
}

static int
symelf_sym_cmp(const void *x, const void *y)
{
	const struct symelf_sym	*a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Does perf keep symbol sym of elf (its elf_sym__filter, or a label in
 * a text or data section), in a section that is loaded? */
static int
symelf_keep(Elf *elf, const GElf_Sym *sym, GElf_Word shndx)
{
	GElf_Shdr	 sh;
	Elf_Scn		*scn;
	const char	*sname;
	size_t		 shstr;
	int		 type = GELF_ST_TYPE(sym->st_info);
	int		 vis = GELF_ST_VISIBILITY(sym->st_other);

	if (sym->st_name == 0 || shndx == SHN_UNDEF || shndx == SHN_ABS ||
	    elf == NULL || (scn = elf_getscn(elf, shndx)) == NULL ||
	    gelf_getshdr(scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC))
		return 0;
	if (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT)
		return 1;
	if (type != STT_NOTYPE || vis == STV_HIDDEN || vis == STV_INTERNAL ||
	    elf_getshdrstrndx(elf, &shstr) != 0 ||
	    (sname = elf_strptr(elf, shstr, sh.sh_name)) == NULL)
		return 0;
	return strstr(sname, "text") != NULL || strstr(sname, "data") != NULL;
}

/* perf's symbols__fixup_end: a symbol without a size ends where the next
 * one starts, the last a page on. */
static void
symelf_fixup_end(struct symelf_sym *syms, size_t n)
{
	size_t	 i;

	for (i = 0; i + 1 < n; i++)
		if (syms[i].end == syms[i].start)
			syms[i].end = syms[i + 1].start;
	if (n > 0 && syms[n - 1].end == syms[n - 1].start)
		syms[n - 1].end = ((syms[n - 1].start + SYMELF_PAGE - 1) &
		    ~(GElf_Addr)(SYMELF_PAGE - 1)) + SYMELF_PAGE;
}

/* Sorts syms and keeps one symbol an address, as perf does. */
static void
symelf_sort(const struct symelf *se, struct symelf_mod *sm)
{
	size_t	 i, j;
	uint8_t	 ifunc;

	qsort(sm->syms, sm->nsyms, sizeof(*sm->syms), symelf_sym_cmp);
	symelf_fixup_end(sm->syms, sm->nsyms);
	for (i = 1, j = 0; i < sm->nsyms; i++) {
		if (sm->syms[i].start == sm->syms[j].start) {
			ifunc = sm->syms[i].ifunc | sm->syms[j].ifunc;
			if (symelf_better(se, &sm->syms[i], &sm->syms[j])) {
				if (sm->syms[j].own)
					free((char *)sm->syms[j].name);
				sm->syms[j] = sm->syms[i];
			} else if (sm->syms[i].own)
				free((char *)sm->syms[i].name);
			sm->syms[j].ifunc = ifunc;
		} else
			sm->syms[++j] = sm->syms[i];
	}
	if (sm->nsyms > 0)
		sm->nsyms = j + 1;
}

/* The module's symbols, in table order (aliases are resolved later). */
static int
symelf_symtab(struct symelf_mod *sm)
{
	GElf_Sym	 sym;
	GElf_Addr	 addr;
	GElf_Word	 shndx;
	Elf		*elf;
	const char	*name;
	size_t		 i;
	int		 n;

	if ((n = dwfl_module_getsymtab(sm->mod)) <= 0)
		return 0;
	if ((sm->syms = calloc((size_t)n, sizeof(*sm->syms))) == NULL)
		return -1;
	for (i = 1; i < (size_t)n; i++) {
		elf = NULL;
		name = dwfl_module_getsym_info(sm->mod, (int)i, &sym, &addr,
		    &shndx, &elf, NULL);
		if (name == NULL || name[0] == '\0' || sym.st_value == 0 ||
		    !symelf_keep(elf, &sym, shndx))
			continue;
		sm->syms[sm->nsyms].start = addr;
		sm->syms[sm->nsyms].end = addr + sym.st_size;
		sm->syms[sm->nsyms].name = name;
		sm->syms[sm->nsyms].order = (uint32_t)i;
		sm->syms[sm->nsyms].bind = GELF_ST_BIND(sym.st_info);
		sm->syms[sm->nsyms].ifunc = GELF_ST_TYPE(sym.st_info) ==
		    STT_GNU_IFUNC;
		sm->nsyms++;
	}
	return 0;
}

/* The symbol that holds addr, or NULL. */
static struct symelf_sym *
symelf_sym(struct symelf_mod *sm, GElf_Addr addr)
{
	size_t	 i;

	/* the last function that starts at or before addr */
	i = addrtab_upto(sm->syms, sm->nsyms, sizeof(*sm->syms), addr);
	return i > 0 && addr < sm->syms[i - 1].end ? &sm->syms[i - 1] : NULL;
}

/* The section called name of elf, its header in sh; NULL: none. */
static Elf_Scn *
symelf_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn		*scn = NULL;
	const char	*sname;
	size_t		 shstr;

	if (elf_getshdrstrndx(elf, &shstr) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, sh) != NULL &&
		    (sname = elf_strptr(elf, shstr, sh->sh_name)) != NULL &&
		    strcmp(sname, name) == 0)
			return scn;
	return NULL;
}

/* One synthesized symbol (a PLT entry) added to the table: name (a
 * dynamic symbol's, demangled with dem as perf does) and suffix. */
static int
symelf_add(const struct symelf *se, struct symelf_sym **syms, size_t *n,
    size_t *cap, GElf_Addr start, GElf_Addr size, const char *name, int dem,
    const char *suffix)
{
	struct symelf_sym	*tmp;
	char			*d = NULL, *p;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if ((tmp = realloc(*syms, *cap * sizeof(*tmp))) == NULL)
			return -1;
		*syms = tmp;
	}
	if (dem && (se->flags & SYMBOLIZE_DEMANGLE))
		d = demangle(name);
	if (asprintf(&p, "%s%s", d != NULL ? d : name, suffix) == -1) {
		free(d);
		return -1;
	}
	free(d);
	memset(&(*syms)[*n], 0, sizeof(**syms));
	(*syms)[*n].start = start;
	(*syms)[*n].end = start + size;
	(*syms)[*n].name = p;
	(*syms)[*n].order = UINT32_MAX;
	(*syms)[*n].bind = STB_GLOBAL;
	(*syms)[*n].named = 1;
	(*syms)[*n].own = 1;
	(*n)++;
	return 0;
}

/* The symbol the jump of a .plt.got entry at data p (size len) goes
 * through: "jmp *disp(%rip)", after an endbr64 and a bnd prefix; the
 * GOT slot's address from the entry's address, or 0. */
static GElf_Addr
symelf_plt_got_slot(const uint8_t *p, size_t len, GElf_Addr at)
{
	static const uint8_t	 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t			 k = 0;
	int32_t			 disp;

	if (len >= sizeof(endbr64) && memcmp(p, endbr64, sizeof(endbr64)) ==
	    0)
		k += sizeof(endbr64);
	if (k < len && p[k] == 0xf2)
		k++;
	if (k + 6 > len || p[k] != 0xff || p[k + 1] != 0x25)
		return 0;
	memcpy(&disp, p + k + 2, sizeof(disp));
	return at + k + 6 + (GElf_Addr)(int64_t)disp;
}

/* The name of the dynamic symbol a relocation's info refers to. */
static const char *
symelf_dynname(Elf *elf, Elf_Data *dynsym, size_t strndx, GElf_Xword info)
{
	GElf_Sym	 sym;

	if (GELF_R_SYM(info) == 0 ||
	    gelf_getsym(dynsym, (int)GELF_R_SYM(info), &sym) == NULL)
		return NULL;
	return elf_strptr(elf, strndx, sym.st_name);
}

/* The relocations of a SHT_RELA or SHT_REL section, i-th: its offset,
 * info and addend (0 in a SHT_REL). */
static int
symelf_rel(Elf_Data *d, int rela, size_t i, GElf_Addr *off,
    GElf_Xword *info, GElf_Sxword *addend)
{
	GElf_Rela	 ra;
	GElf_Rel	 r;

	if (rela) {
		if (gelf_getrela(d, (int)i, &ra) == NULL)
			return -1;
		*off = ra.r_offset;
		*info = ra.r_info;
		*addend = ra.r_addend;
	} else {
		if (gelf_getrel(d, (int)i, &r) == NULL)
			return -1;
		*off = r.r_offset;
		*info = r.r_info;
		*addend = 0;
	}
	return 0;
}

static int
symelf_rel_cmp(const void *x, const void *y)
{
	const GElf_Addr	*a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/*
 * The PLT's entries as perf's dso__synthesize_plt_symbols names them,
 * from the binary itself (a debug file's PLT holds no bytes): each
 * entry of .plt after its header, or of .plt.sec where the binary has
 * one (x86's IBT: .plt is then named ".plt" whole), is the next
 * relocation of .rela.plt (.plt.sec's in their GOT slots' order), and
 * each of .plt.got is the .rela.dyn relocation of the GOT slot its jump
 * reads. A symbol that runs over the PLT's start ends there.
 */
static int
symelf_plt(const struct symelf *se, struct symelf_mod *sm, Elf *elf,
    GElf_Addr bias)
{
	GElf_Shdr	 plt, sec, rel, dyn, pgot, *ent;
	GElf_Ehdr	 eh;
	Elf_Scn		*rscn, *dscn, *gscn;
	Elf_Data	*rd, *gd, *symd;
	GElf_Addr	 at, hdr, esz, (*slots)[3] = NULL, off;
	GElf_Xword	 info;
	GElf_Sxword	 addend;
	struct symelf_sym *target;
	char		 buf[64];
	const char	*name;
	size_t		 cap = sm->nsyms, sorted = sm->nsyms, nrel, i, k;
	size_t		 strndx, t;
	int		 x86, rela, rv = -1;

	if (gelf_getehdr(elf, &eh) == NULL ||
	    symelf_section(elf, ".plt", &plt) == NULL ||
	    plt.sh_type == SHT_NOBITS)
		return 0;
	x86 = eh.e_machine == EM_X86_64 || eh.e_machine == EM_386;
	ent = x86 && symelf_section(elf, ".plt.sec", &sec) != NULL &&
	    sec.sh_type != SHT_NOBITS ? &sec : &plt;
	/* perf's sizes of an entry and of the header */
	switch (eh.e_machine) {
	case EM_AARCH64:
		hdr = 32;
		esz = 16;
		break;
	case EM_ARM:
		hdr = 20;
		esz = 12;
		break;
	default:
		esz = ent->sh_entsize;
		if (x86 && esz != 8 && esz != 16)
			esz = ent->sh_addralign == 8 ? 8 : 16;
		hdr = esz;
		break;
	}
	if (esz == 0)
		return 0;
	for (i = 0; i < sm->nsyms; i++)
		if (sm->syms[i].start < plt.sh_addr + bias &&
		    sm->syms[i].end > plt.sh_addr + bias)
			sm->syms[i].end = plt.sh_addr + bias;
	if (ent == &sec) {
		if (symelf_add(se, &sm->syms, &sm->nsyms, &cap, plt.sh_addr +
		    bias, plt.sh_size, ".plt", 0, "") == -1)
			return -1;
		hdr = 0;
	}
	if (((rscn = symelf_section(elf, ".rela.plt", &rel)) != NULL ||
	    (rscn = symelf_section(elf, ".rel.plt", &rel)) != NULL) &&
	    (rel.sh_type == SHT_RELA || rel.sh_type == SHT_REL) &&
	    rel.sh_entsize > 0 && rel.sh_link != 0 &&
	    (dscn = elf_getscn(elf, rel.sh_link)) != NULL &&
	    gelf_getshdr(dscn, &dyn) != NULL && dyn.sh_type == SHT_DYNSYM &&
	    (rd = elf_getdata(rscn, NULL)) != NULL &&
	    (symd = elf_getdata(dscn, NULL)) != NULL) {
		rela = rel.sh_type == SHT_RELA;
		strndx = dyn.sh_link;
		nrel = rel.sh_size / rel.sh_entsize;
		if ((slots = calloc(nrel ? nrel : 1, sizeof(*slots))) == NULL)
			goto out;
		for (i = 0; i < nrel; i++) {
			if (symelf_rel(rd, rela, i, &slots[i][0], &info,
			    &addend) == -1)
				break;
			slots[i][1] = info;
			slots[i][2] = (GElf_Addr)addend;
		}
		nrel = i;
		/* .plt.sec's entries are in the order of their GOT slots */
		if (ent == &sec)
			qsort(slots, nrel, sizeof(*slots), symelf_rel_cmp);
		at = ent->sh_addr + hdr;
		for (i = 0; i < nrel && at + esz <= ent->sh_addr +
		    ent->sh_size; i++, at += esz) {
			name = symelf_dynname(elf, symd, strndx, slots[i][1]);
			/*
			 * No symbol: x86-64's IRELATIVE, whose addend is the
			 * IFUNC's address (perf since 6.3; 6.1 says "@plt"):
			 * its name, or the entry's file offset.
			 */
			if (name == NULL || name[0] == '\0') {
				/* of the table as sorted, before the PLT */
				t = addrtab_upto(sm->syms, sorted,
				    sizeof(*sm->syms), slots[i][2] + bias);
				target = t > 0 ? &sm->syms[t - 1] : NULL;
				if (rela && eh.e_machine == EM_X86_64 &&
				    GELF_R_TYPE(slots[i][1]) ==
				    R_X86_64_IRELATIVE && target != NULL &&
				    target->start == slots[i][2] + bias &&
				    target->ifunc)
					name = symelf_name(se, target);
				else {
					snprintf(buf, sizeof(buf), "offset_%#"
					    PRIx64, (uint64_t)(at -
					    ent->sh_addr + ent->sh_offset));
					name = buf;
				}
				if (symelf_add(se, &sm->syms, &sm->nsyms,
				    &cap, at + bias, esz, name, 0, "@plt") ==
				    -1)
					goto out;
			} else if (symelf_add(se, &sm->syms, &sm->nsyms, &cap,
			    at + bias, esz, name, 1, "@plt") == -1)
				goto out;
		}
	}
	if (x86 && (gscn = symelf_section(elf, ".plt.got", &pgot)) != NULL &&
	    pgot.sh_type != SHT_NOBITS && pgot.sh_entsize > 0 &&
	    (gd = elf_getdata(gscn, NULL)) != NULL &&
	    (rscn = symelf_section(elf, ".rela.dyn", &rel)) != NULL &&
	    rel.sh_type == SHT_RELA && rel.sh_entsize > 0 &&
	    (dscn = elf_getscn(elf, rel.sh_link)) != NULL &&
	    gelf_getshdr(dscn, &dyn) != NULL &&
	    (rd = elf_getdata(rscn, NULL)) != NULL &&
	    (symd = elf_getdata(dscn, NULL)) != NULL) {
		for (k = 0; k + pgot.sh_entsize <= gd->d_size; k +=
		    pgot.sh_entsize) {
			at = symelf_plt_got_slot((const uint8_t *)gd->d_buf +
			    k, pgot.sh_entsize, pgot.sh_addr + k);
			name = NULL;
			for (i = 0; at != 0 && i < rel.sh_size /
			    rel.sh_entsize && name == NULL; i++)
				if (symelf_rel(rd, 1, i, &off, &info,
				    &addend) == 0 && off == at)
					name = symelf_dynname(elf, symd,
					    dyn.sh_link, info);
			if (name != NULL && name[0] != '\0' && symelf_add(se,
			    &sm->syms, &sm->nsyms, &cap, pgot.sh_addr + k +
			    bias, pgot.sh_entsize, name, 1, "@plt") == -1)
				goto out;
		}
	}
	rv = 0;
out:
	free(slots);
	return rv;
}

/* Reports the binary of m (found, or not: dwfl stays NULL). */
static void
symelf_open(struct symelf *se, struct symelf_mod *sm,
    const struct profile_mapping *m)
{
	GElf_Phdr	 ph;
	Elf		*e;
	const char	*v;
	char		*path;
	size_t		 i, nph;
	void		**ud;
	int		 fd;

	if (strcmp(m->file, "[vdso]") == 0)
		path = (v = unwind_finder_vdso(se->find, m->build_id,
		    m->build_id_len)) != NULL ? strdup(v) : NULL;
	else
		path = sm->idlen > 0 ? unwind_finder_find(se->find, sm->id,
		    sm->idlen, m->file, 0) : m->file[0] == '/' ?
		    strdup(m->file) : NULL;
	if (path == NULL && sm->idlen > 0)
		/* no binary anywhere: its debug file has the symbols and
		 * the same segments */
		path = unwind_finder_find(se->find, sm->id, sm->idlen, NULL,
		    1);
	if (path == NULL) {
		if (se->verbose)
			warnx("%s: no binary with its build-id found", m->file);
		return;
	}
	/* libdwfl opens a path it is given itself, without O_NONBLOCK: an
	 * MMAP that names a FIFO hung the reader. It gets the descriptor of
	 * a regular file instead, which is the module's from then on. */
	if ((sm->dwfl = dwfl_begin(&symelf_callbacks)) == NULL ||
	    (fd = unwind_open_regular(path)) == -1)
		goto fail;
	dwfl_report_begin(sm->dwfl);
	if ((sm->mod = dwfl_report_elf(sm->dwfl, m->file, path, fd, 0,
	    false)) == NULL)
		close(fd);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (sm->mod == NULL)
		goto fail;
	dwfl_module_info(sm->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*(struct unwind_finder **)ud = se->find;
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
	symelf_sort(se, sm);
	if (symelf_plt(se, sm, e, sm->bias) == -1)
		goto fail;
	symelf_sort(se, sm);
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

/* The module of m and the module address of file offset off in it;
 * NULL when it has no symbols or off is in none of its segments. */
static struct symelf_mod *
symelf_addr(struct symelf *se, const struct profile_mapping *m,
    uint64_t off, GElf_Addr *addr)
{
	struct symelf_mod	*sm;
	size_t			 i;

	if (m == NULL || (m->file[0] == '[' && strcmp(m->file, "[vdso]") !=
	    0) || (sm = symelf_mod(se, m)) == NULL || sm->dwfl == NULL)
		return NULL;
	for (i = 0; i < sm->nload; i++)
		if (sm->load[i].p_filesz > 0 && off >= sm->load[i].p_offset &&
		    off - sm->load[i].p_offset < sm->load[i].p_memsz) {
			*addr = off - sm->load[i].p_offset +
			    sm->load[i].p_vaddr + sm->bias;
			return sm;
		}
	/*
	 * A debug file alone (the binary is on another host) keeps the
	 * segments' addresses, not their file offsets: the mapping is the
	 * executable segment, mapped from its page.
	 */
	for (i = 0; i < sm->nload; i++)
		if (sm->load[i].p_filesz == 0 && (sm->load[i].p_flags & PF_X)) {
			*addr = off - m->pgoff + (sm->load[i].p_vaddr &
			    ~(GElf_Addr)(SYMELF_PAGE - 1)) + sm->bias;
			return sm;
		}
	return NULL;
}

const char *
symelf_lookup(struct symelf *se, const struct profile_mapping *m,
    uint64_t off)
{
	struct symelf_mod	*sm;
	struct symelf_sym	*sym;
	GElf_Addr		 addr;

	if ((sm = symelf_addr(se, m, off, &addr)) == NULL ||
	    (sym = symelf_sym(sm, addr)) == NULL)
		return NULL;
	return symelf_name(se, sym);
}

/* A function's name in DWARF: its linkage name where it has one,
 * demangled as its symbol would be; else its name, within the
 * namespaces and classes that hold its definition (work::squash). */
static char *
symelf_die_name(const struct symelf *se, Dwarf_Die *die)
{
	Dwarf_Attribute	 a;
	Dwarf_Die	 origin, spec, *scopes = NULL;
	const char	*name, *outer;
	char		*d, *q = NULL, *tmp;
	int		 n, i, tag;

	if ((name = dwarf_formstring(dwarf_attr_integrate(die,
	    DW_AT_linkage_name, &a))) != NULL ||
	    (name = dwarf_formstring(dwarf_attr_integrate(die,
	    DW_AT_MIPS_linkage_name, &a))) != NULL) {
		if ((se->flags & SYMBOLIZE_DEMANGLE) &&
		    (d = demangle(name)) != NULL)
			return d;
		return strdup(name);
	}
	if ((name = dwarf_diename(die)) == NULL)
		return NULL;
	if ((q = strdup(name)) == NULL)
		return NULL;
	/* the declaration's scopes: of the abstract origin and of the
	 * declaration that a definition outside its namespace names */
	if (dwarf_formref_die(dwarf_attr(die, DW_AT_abstract_origin, &a),
	    &origin) != NULL)
		die = &origin;
	if (dwarf_formref_die(dwarf_attr(die, DW_AT_specification, &a),
	    &spec) != NULL)
		die = &spec;
	if ((n = dwarf_getscopes_die(die, &scopes)) <= 0)
		return q;
	for (i = 1; i < n; i++) {
		tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		outer = dwarf_diename(&scopes[i]);
		if (asprintf(&tmp, "%s::%s", outer != NULL ? outer :
		    "(anonymous namespace)", q) == -1)
			break;
		free(q);
		q = tmp;
	}
	free(scopes);
	return q;
}

/* The slot of addr's chain in sm's table (grown to stay half empty);
 * NULL without memory. */
static struct symelf_chain **
symelf_chain_slot(struct symelf_mod *sm, GElf_Addr addr)
{
	struct symelf_chain	**old = sm->bychain, **tab;
	size_t			 i, j, osize = sm->chains_size, size;

	if ((sm->nchains + 1) * 2 > osize) {
		size = osize ? osize * 2 : 1024;
		if ((tab = calloc(size, sizeof(*tab))) == NULL)
			return NULL;
		for (i = 0; i < osize; i++) {
			if (old[i] == NULL)
				continue;
			j = (size_t)(old[i]->addr * 0x9e3779b97f4a7c15ULL >>
			    32) & (size - 1);
			while (tab[j] != NULL)
				j = (j + 1) & (size - 1);
			tab[j] = old[i];
		}
		free(old);
		sm->bychain = tab;
		sm->chains_size = size;
	}
	j = (size_t)(addr * 0x9e3779b97f4a7c15ULL >> 32) &
	    (sm->chains_size - 1);
	while (sm->bychain[j] != NULL && sm->bychain[j]->addr != addr)
		j = (j + 1) & (sm->chains_size - 1);
	return &sm->bychain[j];
}

/* addr's chain, found in DWARF (see symelf_inlines); NULL without memory
 * or DWARF there. */
static struct symelf_chain *
symelf_chain(struct symelf *se, struct symelf_mod *sm,
    struct symelf_sym *sym, GElf_Addr addr)
{
	struct symelf_chain	*c;
	Dwarf_Die		*cu, *pc = NULL, *scopes = NULL;
	Dwarf_Addr		 bias;
	char			*name, *tmp;
	int			 n, i, tag, fail = 0;

	/* the innermost scope at addr, then the DIEs that hold it, callers
	 * of an inlined function included */
	if ((cu = dwfl_module_addrdie(sm->mod, addr, &bias)) == NULL ||
	    (n = dwarf_getscopes(cu, addr - bias, &pc)) <= 0 ||
	    (n = dwarf_getscopes_die(&pc[0], &scopes)) <= 0)
		n = 0;
	free(pc);
	if ((c = calloc(1, sizeof(*c) + (size_t)n * sizeof(char *))) ==
	    NULL) {
		free(scopes);
		return NULL;
	}
	c->addr = addr;
	/*
	 * Innermost first, as addr2line -i: each inlined function, then the
	 * function they are in. That one is the symbol's frame when the
	 * names agree; otherwise perf shows DWARF's name, as inlined, in
	 * its place (a part of foo named foo.cold).
	 */
	for (i = 0; i < n && !fail; i++) {
		tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram)
			continue;
		if ((name = symelf_die_name(se, &scopes[i])) == NULL) {
			fail = 1;
			break;
		}
		if (tag == DW_TAG_subprogram &&
		    strcmp(name, symelf_name(se, sym)) == 0)
			c->names[c->n++] = name;
		else if (asprintf(&tmp, "%s" SYMELF_INLINED, name) == -1) {
			free(name);
			fail = 1;
		} else {
			free(name);
			c->names[c->n++] = tmp;
		}
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
	if (fail) {
		for (i = 0; i < (int)c->n; i++)
			free(c->names[i]);
		c->n = 0;
	}
	c->next = sm->chains;
	sm->chains = c;
	return c;
}

size_t
symelf_inlines(struct symelf *se, const struct profile_mapping *m,
    uint64_t off, const char *const **names)
{
	struct symelf_chain	**slot;
	struct symelf_mod	*sm;
	struct symelf_sym	*sym;
	GElf_Addr		 addr;

	if (!(se->flags & SYMBOLIZE_INLINE) ||
	    (sm = symelf_addr(se, m, off, &addr)) == NULL ||
	    (sym = symelf_sym(sm, addr)) == NULL ||
	    (slot = symelf_chain_slot(sm, addr)) == NULL)
		return 0;
	if (*slot == NULL) {
		if ((*slot = symelf_chain(se, sm, sym, addr)) == NULL)
			return 0;
		sm->nchains++;
	}
	*names = (const char *const *)(*slot)->names;
	return (*slot)->n;
}

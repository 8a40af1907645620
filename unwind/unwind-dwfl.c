/*
 * unwind-dwfl: the unwinder of unwind.h with elfutils' libdwfl, as
 * perf's util/unwind-libdw.c does it, but with one Dwfl per process
 * kept from sample to sample rather than one per sample: its modules
 * (ELF and parsed CFI) are reported once, when a pc first falls into
 * them, at the bias their mapping's file offset gives.
 *
 * A sample is unwound by dwfl_getthread_frames on the process's Dwfl,
 * attached (dwfl_attach_state) to callbacks that take the initial
 * registers from the sample's REGS_USER and read memory from its
 * STACK_USER dump, or, outside it, from the mapped binary's bytes. The
 * CFI is the module's .eh_frame, or the .debug_frame of its debug
 * file (found by build-id).
 *
 * The memory bound: each Dwfl counts its modules' file sizes (mapped
 * and, as the CFI is used, touched); past the bound, the processes
 * least recently unwound lose their Dwfl and build it again when a
 * sample of theirs comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "unwind-int.h"

#define UW_ABI_64		2	/* PERF_SAMPLE_REGS_ABI_64 */
#define UW_NDWARF		17	/* x86-64 DWARF regs 0..16 (rip) */
#define UW_PERF_SP		7
#define UW_PERF_IP		8
#define UW_PERF_MAX		24

/* What a binary is on this host, looked for once (uw_bin's priv). */
struct uw_file {
	int		 looked;
	char		*path;		/* NULL: not found */
	uint64_t	 size;		/* of the file */
	uint64_t	 cfi;		/* bytes of its CFI sections */
	GElf_Addr	 first;		/* the first PT_LOAD's page */
	GElf_Phdr	*load;		/* its PT_LOAD segments */
	size_t		 nload;
	int		 dyn;		/* ET_DYN: placed by its bias */
	struct uw_table	*table;		/* its CFA rules; NULL: not open */
	int		 table_tried;
	uint64_t	 table_bytes;	/* counted in the cache */
	uint64_t	 used;		/* the unwinder's clock */
};

/* A process's Dwfl and the sample being unwound on it (uw_proc's
 * priv). */
struct uw_dwfl {
	Dwfl			*dwfl;
	struct unwind		*uw;
	struct uw_proc		*proc;
	uint64_t		 gen;		/* the maps' it was built on */
	int			 attached;
	uint64_t		 bytes;		/* of its modules */
	uint64_t		 used;		/* the unwinder's clock */
	/* the sample now */
	const struct unwind_sample *s;
	uint64_t		 sp;
	uint64_t		*ips;
	size_t			 max, n;
	enum unwind_stop	 why;		/* set by a callback */
	int			 stack_miss;
};

struct uw_be {
	struct unwind_finder	*find;
	char			*debuginfo_path;
	Dwfl_Callbacks		 cbs;
	uint64_t		 clock;
};

static const int uw_perf_to_dwarf[UW_PERF_MAX] = {
	/* AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8 .. R15 */
	0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1,
	8, 9, 10, 11, 12, 13, 14, 15,
};

/* With eh_frame_only no debug file is looked for: the CFI is .eh_frame's
 * or none. */
static int
uw_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr base, const char *file, const char *debuglink,
    GElf_Word crc, char **path)
{
	return -1;
}

static void
uw_proc_free(void *arg, struct uw_proc *p)
{
	struct unwind	*uw = arg;
	struct uw_dwfl	*d = p->priv;

	if (d == NULL)
		return;
	if (d->dwfl != NULL)
		dwfl_end(d->dwfl);
	uw->st.cache_bytes -= d->bytes;
	free(d);
	p->priv = NULL;
}

void
uw_be_bin_free(void *arg, struct uw_bin *b)
{
	struct uw_file	*f = b->priv;

	if (f == NULL)
		return;
	uw_table_close(f->table);
	free(f->path);
	free(f->load);
	free(f);
}

int
uw_be_init(struct unwind *uw)
{
	struct uw_be	*be;

	if ((be = calloc(1, sizeof(*be))) == NULL)
		return -1;
	uw->be = be;
	uw->sp.proc_free = uw_proc_free;
	uw->sp.arg = uw;
	if ((be->find = unwind_finder_create(uw->cfg.debuginfod)) == NULL) {
		uw_be_finish(uw);
		return -1;
	}
	be->cbs.find_elf = dwfl_build_id_find_elf;
	be->cbs.find_debuginfo = uw->cfg.eh_frame_only ? uw_no_debuginfo :
	    unwind_finder_debuginfo;
	be->cbs.debuginfo_path = &be->debuginfo_path;
	elf_version(EV_CURRENT);
	return 0;
}

void
uw_be_finish(struct unwind *uw)
{
	struct uw_be	*be = uw->be;

	if (be == NULL)
		return;
	unwind_finder_destroy(be->find);
	free(be);
	uw->be = NULL;
}

/* The bytes of e's CFI and the sections libdw reads with it: what
 * parsing them may cost in memory, as the cache counts it (the file
 * itself is mapped, not copied). */
static uint64_t
uw_cfi_size(Elf *e)
{
	GElf_Shdr	 sh;
	Elf_Scn		*scn = NULL;
	const char	*name;
	uint64_t	 n = 4096;
	size_t		 shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return n;
	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL && (name = elf_strptr(e,
		    shstrndx, sh.sh_name)) != NULL &&
		    (strcmp(name, ".eh_frame") == 0 ||
		    strcmp(name, ".eh_frame_hdr") == 0 ||
		    strcmp(name, ".debug_frame") == 0))
			n += sh.sh_size;
	return n;
}

/* Finds b's binary and reads its segments, once. */
static struct uw_file *
uw_file(struct unwind *uw, struct uw_bin *b)
{
	struct uw_file	*f = b->priv;
	const char	*v;
	struct stat	 st;
	GElf_Ehdr	 eh;
	GElf_Phdr	 ph;
	Elf		*e;
	size_t		 i, nph;
	int		 fd;

	if (f == NULL) {
		if ((f = calloc(1, sizeof(*f))) == NULL)
			return NULL;
		b->priv = f;
	}
	if (f->looked)
		return f->path != NULL ? f : NULL;
	f->looked = 1;
	if (strcmp(b->path, "[vdso]") == 0)
		f->path = (v = unwind_finder_vdso(uw->be->find, b->id,
		    b->idlen)) != NULL ? strdup(v) : NULL;
	else if (b->idlen > 0)
		f->path = unwind_finder_find(uw->be->find, b->id, b->idlen,
		    b->path, 0);
	else if (b->path[0] == '/')
		f->path = strdup(b->path);
	if (f->path == NULL) {
		if (uw->cfg.verbose)
			fprintf(stderr, "unwind: %s: no binary with its "
			    "build-id found\n", b->path);
		return NULL;
	}
	if ((fd = unwind_open_regular(f->path)) == -1)
		goto fail;
	if (fstat(fd, &st) == -1 || (e = elf_begin(fd, ELF_C_READ_MMAP,
	    NULL)) == NULL) {
		close(fd);
		goto fail;
	}
	f->size = (uint64_t)st.st_size;
	if (gelf_getehdr(e, &eh) == NULL || elf_getphdrnum(e, &nph) != 0 ||
	    (f->load = calloc(nph ? nph : 1, sizeof(*f->load))) == NULL) {
		elf_end(e);
		close(fd);
		goto fail;
	}
	f->dyn = eh.e_type == ET_DYN;
	f->cfi = uw_cfi_size(e);
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD) {
			if (f->nload == 0)
				f->first = ph.p_vaddr & -(ph.p_align ?
				    ph.p_align : 1);
			f->load[f->nload++] = ph;
		}
	elf_end(e);
	close(fd);
	uw->st.binaries++;
	if (uw->cfg.verbose)
		fprintf(stderr, "unwind: %s: from %s\n", b->path, f->path);
	return f;
fail:
	if (uw->cfg.verbose)
		fprintf(stderr, "unwind: %s: %s: unreadable\n", b->path,
		    f->path);
	free(f->path);
	f->path = NULL;
	return NULL;
}

/* The mapping's bias: the address of the binary's ELF address 0, as
 * the segment that holds the mapping's file offset places it. */
static int
uw_bias(const struct uw_file *f, const struct uw_map *m, GElf_Addr *bias)
{
	size_t	 i;

	if (!f->dyn) {
		*bias = 0;	/* ET_EXEC: at its own addresses */
		return 0;
	}
	for (i = 0; i < f->nload; i++) {
		const GElf_Phdr *ph = &f->load[i];
		GElf_Off off = ph->p_offset & ~(GElf_Off)4095;

		if (m->pgoff >= off && m->pgoff < ph->p_offset +
		    ph->p_filesz) {
			*bias = m->start - m->pgoff + ph->p_offset -
			    ph->p_vaddr;
			return 0;
		}
	}
	return -1;
}

/* Where the binary's first segment lies (dwfl_report_elf's base). */
static int
uw_base(const struct uw_file *f, const struct uw_map *m, GElf_Addr *base)
{
	if (uw_bias(f, m, base) == -1)
		return -1;
	if (f->dyn)
		*base += f->first;
	return 0;
}

/* The module that holds pc, reported now if it was not: 0, or -1 with
 * d->why saying why not. */
static int
uw_report(struct uw_dwfl *d, uint64_t pc)
{
	struct unwind		*uw = d->uw;
	const struct uw_map	*m;
	struct uw_file		*f;
	Dwfl_Module		*mod;
	GElf_Addr		 base;
	void			**ud;

	if (dwfl_addrmodule(d->dwfl, pc) != NULL)
		return 0;
	if ((m = uw_proc_lookup(d->proc, pc)) == NULL) {
		d->why = UNWIND_STOP_NOMAP;
		return -1;
	}
	if ((f = uw_file(uw, m->bin)) == NULL || uw_base(f, m, &base) == -1) {
		d->why = UNWIND_STOP_NOELF;
		return -1;
	}
	dwfl_report_begin_add(d->dwfl);
	mod = dwfl_report_elf(d->dwfl, m->bin->path, f->path, -1, base,
	    false);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (mod == NULL) {
		if (uw->cfg.verbose)
			fprintf(stderr, "unwind: %s: %s\n", f->path,
			    dwfl_errmsg(-1));
		d->why = UNWIND_STOP_NOELF;
		return -1;
	}
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*(struct unwind_finder **)ud = uw->be->find;
	d->bytes += 2 * f->cfi;
	uw->st.cache_bytes += 2 * f->cfi;
	if (dwfl_addrmodule(d->dwfl, pc) != mod) {
		d->why = UNWIND_STOP_NOELF;
		return -1;
	}
	return 0;
}

static pid_t
uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp != NULL)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool
uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uw_dwfl	*d = arg;
	Dwarf_Word	 r;
	uint64_t	 v;
	int		 i;

	for (i = 0; i < UW_PERF_MAX; i++) {
		if (uw_perf_to_dwarf[i] < 0 || uw_sample_reg(d->s, i, &v) == -1)
			continue;
		r = v;
		if (!dwfl_thread_state_registers(thread, uw_perf_to_dwarf[i], 1,
		    &r))
			return false;
	}
	return true;
}

/* Reads 8 bytes of the mapped binary at addr. */
static int
uw_read_file(struct uw_dwfl *d, uint64_t addr, Dwarf_Word *out)
{
	const struct uw_map	*m;
	Dwfl_Module		*mod;
	Dwarf_Addr		 bias;
	const char		*raw;
	size_t			 size;
	uint64_t		 off;
	Elf			*e;

	if ((m = uw_proc_lookup(d->proc, addr)) == NULL ||
	    addr + 8 > m->end || uw_report(d, addr) == -1 ||
	    (mod = dwfl_addrmodule(d->dwfl, addr)) == NULL ||
	    (e = dwfl_module_getelf(mod, &bias)) == NULL ||
	    (raw = elf_rawfile(e, &size)) == NULL)
		return -1;
	off = addr - m->start + m->pgoff;
	if (off > size || size - off < 8)
		return -1;
	memcpy(out, raw + off, 8);
	return 0;
}

static bool
uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_dwfl	*d = arg;

	if (addr >= d->sp && addr - d->sp <= d->s->stack_size &&
	    d->s->stack_size - (addr - d->sp) >= 8) {
		memcpy(result, d->s->stack + (addr - d->sp), 8);
		return true;
	}
	if (uw_read_file(d, addr, result) == 0)
		return true;
	d->stack_miss = 1;
	return false;
}

static const Dwfl_Thread_Callbacks uw_thread_callbacks = {
	.next_thread = uw_next_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int
uw_frame(Dwfl_Frame *state, void *arg)
{
	struct uw_dwfl	*d = arg;
	Dwarf_Addr	 pc;
	bool		 act;

	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (d->n > 0 && pc == d->ips[d->n - 1] && d->n > 1 &&
	    pc == d->ips[d->n - 2])
		return DWARF_CB_ABORT;	/* looping in place */
	if (d->n == d->max) {
		d->why = UNWIND_STOP_DEPTH;
		return DWARF_CB_ABORT;
	}
	d->ips[d->n++] = pc;
	/* the caller's module: the call is before its return address */
	if (uw_report(d, act || pc == 0 ? pc : pc - 1) == -1)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* Closes the CFA table least recently used: 0, or -1 when none is
 * open. */
static int
uw_evict_table(struct unwind *uw)
{
	struct uw_file	*f, *old = NULL;
	struct uw_bin	*b;
	size_t		 i;

	for (i = 0; i < uw->sp.binsize; i++)
		for (b = uw->sp.bins[i]; b != NULL; b = b->next)
			if ((f = b->priv) != NULL && f->table != NULL &&
			    (old == NULL || f->used < old->used))
				old = f;
	if (old == NULL)
		return -1;
	uw_table_close(old->table);
	old->table = NULL;
	old->table_tried = 0;
	uw->st.cache_bytes -= old->table_bytes;
	old->table_bytes = 0;
	return 0;
}

/* Closes the Dwfls of the processes least recently unwound, then the
 * CFA tables least recently used, until the cache is under its bound
 * (keep: the process in use). */
static void
uw_evict(struct unwind *uw, const struct uw_proc *keep)
{
	struct uw_proc	*p, *old;
	struct uw_dwfl	*d;
	size_t		 i;

	while (uw->st.cache_bytes > uw->cfg.cache_bytes) {
		old = NULL;
		for (i = 0; i < uw->sp.size; i++) {
			p = &uw->sp.procs[i];
			if (!p->used || p == keep || (d = p->priv) == NULL ||
			    d->bytes == 0)
				continue;
			if (old == NULL || d->used <
			    ((struct uw_dwfl *)old->priv)->used)
				old = p;
		}
		if (old == NULL)
			break;
		uw_proc_free(uw, old);
		uw->st.evicted++;
	}
	while (uw->st.cache_bytes > uw->cfg.cache_bytes &&
	    uw_evict_table(uw) == 0)
		uw->st.evicted++;
}

static struct uw_dwfl *
uw_dwfl(struct unwind *uw, struct uw_proc *p)
{
	struct uw_dwfl	*d = p->priv;

	if (d != NULL && d->gen != p->gen) {
		/* the mappings changed: the modules are reported again */
		uw_proc_free(uw, p);
		d = NULL;
	}
	if (d == NULL) {
		if ((d = calloc(1, sizeof(*d))) == NULL)
			return NULL;
		if ((d->dwfl = dwfl_begin(&uw->be->cbs)) == NULL) {
			free(d);
			return NULL;
		}
		d->uw = uw;
		d->gen = p->gen;
		p->priv = d;
	}
	d->proc = p;	/* the table moves its slots as it grows */
	d->used = ++uw->be->clock;
	return d;
}

/* The CFA rules of f, opened at its first need. */
static struct uw_table *
uw_file_table(struct unwind *uw, struct uw_file *f)
{
	if (f->table == NULL && !f->table_tried) {
		f->table_tried = 1;
		f->table = uw_table_open(f->path);
	}
	if (f->table != NULL)
		f->used = ++uw->be->clock;
	return f->table;
}

/* 8 bytes of the stack dump at addr: 0, or -1 outside it. */
static int
uw_stack_read(const struct unwind_sample *s, uint64_t sp, uint64_t addr,
    uint64_t *v)
{
	if (addr < sp || addr - sp > s->stack_size || s->stack_size -
	    (addr - sp) < 8)
		return -1;
	memcpy(v, s->stack + (addr - sp), 8);
	return 0;
}

/* The CFA rule at address at of process p: 0, or -1 with *why (1 when
 * the binary has no table: its rules are libdwfl's). */
static int
uw_rule_at(struct unwind *uw, struct uw_proc *p, uint64_t at,
    const struct uw_rule **rp, enum unwind_stop *why)
{
	const struct uw_map	*m;
	struct uw_file		*f;
	struct uw_table		*t;
	GElf_Addr		 bias;
	int			 added;

	if ((m = uw_proc_lookup(p, at)) == NULL) {
		*why = UNWIND_STOP_NOMAP;
		return -1;
	}
	if ((f = uw_file(uw, m->bin)) == NULL) {
		*why = UNWIND_STOP_NOELF;
		return -1;
	}
	if ((t = uw_file_table(uw, f)) == NULL ||
	    uw_bias(f, m, &bias) == -1 ||
	    (*rp = uw_table_rule(t, at - bias, &added)) == NULL) {
		*why = UNWIND_STOP_OTHER;
		return 1;
	}
	if (added) {
		uw->st.rules++;
		uw->st.cache_bytes -= f->table_bytes;
		f->table_bytes = uw_table_bytes(t) + 2 * f->cfi;
		uw->st.cache_bytes += f->table_bytes;
	}
	return 0;
}

/*
 * Unwinds s with the binaries' CFA tables: each frame's CFA from rsp or
 * rbp, the return address and rbp read from the stack dump. ips[0] is
 * the sampled pc already (*n 1). 1: a frame the tables do not cover
 * (the sample goes to libdwfl), 0 with *why: done.
 */
static int
uw_table_unwind(struct unwind *uw, struct uw_proc *p,
    const struct unwind_sample *s, uint64_t *ips, size_t max, size_t *n,
    enum unwind_stop *why)
{
	const struct uw_rule	*r;
	uint64_t		 pc = ips[0], sp, bp = 0, cfa, ra, at, sp0;
	int			 havebp, rc;

	if (uw_sample_reg(s, UW_PERF_SP, &sp) == -1)
		return 1;
	havebp = uw_sample_reg(s, 6, &bp) == 0;
	sp0 = sp;
	for (;;) {
		/* a caller's pc is a return address: its call is before */
		at = *n > 1 ? pc - 1 : pc;
		if ((rc = uw_rule_at(uw, p, at, &r, why)) != 0)
			return rc == 1;
		if (r->kind == UW_RULE_END) {
			*why = UNWIND_STOP_END;
			return 0;
		}
		if (r->kind != UW_RULE_CFA || (r->cfa_reg == 6 && !havebp))
			return 1;
		cfa = (r->cfa_reg == 7 ? sp : bp) + (int64_t)r->cfa_off;
		if (uw_stack_read(s, sp0, cfa + (int64_t)r->ra_off, &ra) == -1) {
			*why = UNWIND_STOP_STACK;
			return 0;
		}
		if (r->rbp_saved == 2)
			havebp = 0;
		else if (r->rbp_saved)
			/* outside the copy (an epilogue's slot already popped,
			 * below rsp) rbp is not known; only a CFA from rbp
			 * needs it */
			havebp = uw_stack_read(s, sp0, cfa +
			    (int64_t)r->rbp_off, &bp) == 0;
		if (ra == 0) {
			*why = UNWIND_STOP_END;
			return 0;
		}
		if (cfa <= sp)
			return 1;	/* no progress: let libdwfl judge */
		if (*n == max) {
			*why = UNWIND_STOP_DEPTH;
			return 0;
		}
		sp = cfa;
		pc = ra;
		ips[(*n)++] = pc;
	}
}

enum unwind_stop
uw_be_sample(struct unwind *uw, const struct unwind_sample *s,
    uint64_t *ips, size_t max, size_t *n)
{
	struct uw_proc	*p;
	struct uw_dwfl	*d;
	enum unwind_stop why;
	const struct uw_rule *r;
	Dwfl_Module	*mod;
	Dwarf_Addr	 bias;
	uint64_t	 ip;
	int		 rc;

	if (s->abi != UW_ABI_64 || max == 0 || uw_sample_ip(s, &ip) == -1)
		return UNWIND_STOP_REGS;
	ips[(*n)++] = ip;	/* the leaf, whatever comes of the rest */
	if ((p = uw_proc_get(&uw->sp, s->pid, 0)) == NULL)
		return UNWIND_STOP_NOMAP;
	if (uw->cfg.method == UNWIND_METHOD_TABLE) {
		if (uw_table_unwind(uw, p, s, ips, max, n, &why) == 0) {
			uw_evict(uw, p);
			return why;
		}
		uw->st.fallbacks++;
		*n = 1;
	}
	if ((d = uw_dwfl(uw, p)) == NULL)
		return UNWIND_STOP_OTHER;
	d->s = s;
	if (uw_sample_reg(s, UW_PERF_SP, &d->sp) == -1)
		d->sp = UINT64_MAX;	/* no stack pointer: no stack read */
	d->ips = ips;
	d->max = max;
	d->n = 0;
	d->why = UNWIND_STOP_OTHER;
	d->stack_miss = 0;
	if (uw_report(d, ip) == -1)
		return d->why;
	if (!d->attached) {
		if (!dwfl_attach_state(d->dwfl, NULL, (pid_t)p->pid,
		    &uw_thread_callbacks, d))
			return UNWIND_STOP_OTHER;
		d->attached = 1;
	}
	rc = dwfl_getthread_frames(d->dwfl, (pid_t)p->pid, uw_frame, d);
	if (d->n > 0)
		*n = d->n;
	/* libdwfl ends a stack whose return address it could not read as
	 * if the CFI said there was none: after a read past the dump, the
	 * last frame's own rule says whether it is the outermost */
	if (rc == 0 && (!d->stack_miss || (uw_rule_at(uw, p, *n > 1 ?
	    ips[*n - 1] - 1 : ips[0], &r, &why) == 0 &&
	    r->kind == UW_RULE_END)))
		why = UNWIND_STOP_END;
	else if (rc == 0)
		why = UNWIND_STOP_STACK;
	else if (d->why != UNWIND_STOP_OTHER)
		why = d->why;
	else if (d->stack_miss)
		why = UNWIND_STOP_STACK;
	else if ((mod = dwfl_addrmodule(d->dwfl, ips[*n - 1] - (*n > 1))) !=
	    NULL && dwfl_module_eh_cfi(mod, &bias) == NULL &&
	    dwfl_module_dwarf_cfi(mod, &bias) == NULL)
		why = UNWIND_STOP_NOCFI;
	else
		why = UNWIND_STOP_OTHER;
	uw_evict(uw, p);
	return why;
}

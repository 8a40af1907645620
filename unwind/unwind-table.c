/*
 * unwind-table: one binary's CFA rules, as its .eh_frame gives them,
 * looked up once per pc (dwarf_getcfi_elf, dwarf_cfi_addrframe) and kept
 * in a table of the binary's own, shared by every process that maps it
 * (see unwind-int.h). A rule is kept in the form x86-64 code almost
 * always has: the CFA a register (rsp or rbp) plus an offset, the
 * return address and rbp saved at offsets from it or left as they are;
 * the .plt's CFA expression is that form too, its offset taken at the
 * pc. Anything else (a DWARF expression, a register rule, a signal frame,
 * no FDE at all) is marked hard, and the unwinder gives that sample to
 * libdwfl, which evaluates everything.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <gelf.h>
#include <elfutils/libdw.h>

#include "unwind-int.h"

#define UW_DW_RBP	6
#define UW_DW_RSP	7
#define UW_DW_RA	16

struct uw_table {
	int		 fd;
	Elf		*elf;
	Dwarf_CFI	*cfi;		/* of .eh_frame; NULL: none */
	uint64_t	 entry;		/* e_entry; 0: none */
	struct uw_rule	*slots;		/* open addressing by vaddr */
	size_t		 size, n;
};

struct uw_table *
uw_table_open(const char *path)
{
	struct uw_table	*t;
	GElf_Ehdr	 eh;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->size = 256;
	if ((t->slots = calloc(t->size, sizeof(*t->slots))) == NULL)
		goto fail;
	if ((t->fd = unwind_open_regular(path)) == -1)
		goto fail;
	if ((t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL)) == NULL)
		goto fail;
	if (gelf_getehdr(t->elf, &eh) != NULL)
		t->entry = eh.e_entry;
	/* NULL: no .eh_frame; every pc of the binary is then hard */
	t->cfi = dwarf_getcfi_elf(t->elf);
	return t;
fail:
	uw_table_close(t);
	return NULL;
}

void
uw_table_close(struct uw_table *t)
{
	if (t == NULL)
		return;
	if (t->cfi != NULL)
		dwarf_cfi_end(t->cfi);
	if (t->elf != NULL)
		elf_end(t->elf);
	if (t->fd > 0)
		close(t->fd);
	free(t->slots);
	free(t);
}

size_t
uw_table_bytes(const struct uw_table *t)
{
	/* the rules, and what libdw keeps of the CFI it parsed: about as
	 * much again per rule */
	return sizeof(*t) + t->size * sizeof(*t->slots) * 2;
}

/* Is ops one DW_OP_call_frame_cfa, maybe plus a constant? Its offset
 * in *off. */
static int
uw_cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return 1;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/*
 * Is ops the CFA expression of an x86-64 .plt (every binary's: the
 * linker writes it, perf's unwinders know it), rsp + 8, plus 8 more
 * past the entry's push, at offset k of its 16 bytes:
 * breg7 8; breg16 0; lit15; and; lit<k>; ge; lit3; shl; plus.
 * The CFA offset at vaddr (a bias keeps the low 4 bits) in *off.
 */
static int
uw_cfa_plt(const Dwarf_Op *ops, size_t nops, uint64_t vaddr, int32_t *off)
{
	static const uint8_t	 atoms[9] = {
		DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
		DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus,
	};
	size_t			 i;
	unsigned		 k;

	if (nops != 9 || ops[0].number != 8 || ops[1].number != 0 ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
		return 0;
	for (i = 0; i < 9; i++)
		if (i != 4 && ops[i].atom != atoms[i])
			return 0;
	k = ops[4].atom - DW_OP_lit0;
	*off = 8 + ((vaddr & 15) >= k ? 8 : 0);
	return 1;
}

/* Does an FDE describe vaddr? */
static int
uw_has_fde(struct uw_table *t, uint64_t vaddr)
{
	Dwarf_Frame	*fr = NULL;

	if (dwarf_cfi_addrframe(t->cfi, vaddr, &fr) != 0)
		return 0;
	free(fr);
	return 1;
}

/*
 * Is vaddr, which no FDE describes, in the code that starts at the
 * binary's entry point, before any FDE? The kernel starts a process
 * there (at the interpreter's entry point when the program has one):
 * nothing called that code, so it is the outermost frame. ld.so's
 * _start (hand-written: mov %rsp,%rdi; call _dl_start) has no FDE, and
 * a sample in the dynamic loader's start-up returns into it; libdwfl
 * has no rule there either and ends the stack after the same frames,
 * but only once a Dwfl was built for the process, which a compile
 * load's new processes then each ask for.
 */
static int
uw_entry_code(struct uw_table *t, uint64_t vaddr)
{
	uint64_t	 a;

	if (t->entry == 0 || vaddr < t->entry || vaddr - t->entry >=
	    UW_ENTRY_SPAN)
		return 0;
	for (a = t->entry; a < vaddr; a++)
		if (uw_has_fde(t, a))
			return 0;
	return 1;
}

/* The rule at vaddr from the CFI. */
static void
uw_rule_make(struct uw_table *t, uint64_t vaddr, struct uw_rule *r)
{
	Dwarf_Frame	*fr = NULL;
	Dwarf_Addr	 start, end;
	Dwarf_Op	 mem[3], *ops;
	size_t		 nops;
	bool		 signal;
	int64_t		 off;
	int		 rc;

	r->kind = UW_RULE_HARD;
	if (t->cfi == NULL)
		return;
	if (dwarf_cfi_addrframe(t->cfi, vaddr, &fr) != 0) {
		if (uw_entry_code(t, vaddr))
			r->kind = UW_RULE_END;
		return;
	}
	if (dwarf_frame_info(fr, &start, &end, &signal) != UW_DW_RA ||
	    signal)
		goto out;
	/* the CFA: DW_OP_bregx of rsp or rbp and an offset, or the .plt's
	 * expression (a pc in a .plt is a leaf: vaddr is the pc) */
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0)
		goto out;
	if (uw_cfa_plt(ops, nops, vaddr, &r->cfa_off))
		r->cfa_reg = UW_DW_RSP;
	else if (nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != UW_DW_RSP && ops[0].number != UW_DW_RBP) ||
	    (int64_t)ops[0].number2 < INT32_MIN ||
	    (int64_t)ops[0].number2 > INT32_MAX)
		goto out;
	else {
		r->cfa_reg = (uint8_t)ops[0].number;
		r->cfa_off = (int32_t)ops[0].number2;
	}
	/* the return address: saved at CFA + off, or undefined (the
	 * outermost frame: _start, a thread's start) */
	/* (libdw.h: no ops and ops_mem given, "undefined"; no ops and
	 * NULL, "same value") */
	rc = dwarf_frame_register(fr, UW_DW_RA, mem, &ops, &nops);
	if (rc == 0 && ops != NULL && nops == 0) {
		r->kind = UW_RULE_END;
		goto out;
	}
	if (rc != 0 || !uw_cfa_plus(ops, nops, &off) || off < INT16_MIN ||
	    off > INT16_MAX)
		goto out;
	r->ra_off = (int16_t)off;
	/* rbp: the same as in the caller, or saved at CFA + off */
	rc = dwarf_frame_register(fr, UW_DW_RBP, mem, &ops, &nops);
	if (rc == 0 && ops == NULL && nops == 0)
		r->rbp_saved = 0;
	else if (rc == 0 && ops != NULL && nops == 0)
		r->rbp_saved = 2;	/* undefined: not known after */
	else if (rc == 0 && uw_cfa_plus(ops, nops, &off) && off >= INT16_MIN &&
	    off <= INT16_MAX) {
		r->rbp_saved = 1;
		r->rbp_off = (int16_t)off;
	} else
		goto out;
	r->kind = UW_RULE_CFA;
out:
	free(fr);
}

static int
uw_table_grow(struct uw_table *t)
{
	struct uw_rule	*old = t->slots, *s;
	size_t		 i, j, oldsize = t->size;

	if ((s = calloc(oldsize * 2, sizeof(*s))) == NULL)
		return -1;
	t->slots = s;
	t->size = oldsize * 2;
	for (i = 0; i < oldsize; i++) {
		if (old[i].kind == UW_RULE_NONE)
			continue;
		j = (size_t)((old[i].vaddr * 0x9e3779b97f4a7c15ULL) >> 7) &
		    (t->size - 1);
		while (t->slots[j].kind != UW_RULE_NONE)
			j = (j + 1) & (t->size - 1);
		t->slots[j] = old[i];
	}
	free(old);
	return 0;
}

const struct uw_rule *
uw_table_rule(struct uw_table *t, uint64_t vaddr, int *added)
{
	struct uw_rule	*r;
	size_t		 j;

	*added = 0;
	if ((t->n + 1) * 2 > t->size && uw_table_grow(t) == -1)
		return NULL;
	j = (size_t)((vaddr * 0x9e3779b97f4a7c15ULL) >> 7) & (t->size - 1);
	for (;;) {
		r = &t->slots[j];
		if (r->kind == UW_RULE_NONE)
			break;
		if (r->vaddr == vaddr)
			return r;
		j = (j + 1) & (t->size - 1);
	}
	memset(r, 0, sizeof(*r));
	r->vaddr = vaddr;
	uw_rule_make(t, vaddr, r);
	t->n++;
	*added = 1;
	return r;
}

/*
 * unwind/: the address spaces a trace's records build (mappings that
 * overlap, split and replace, forks, execs, exits, a table that grows
 * and shrinks), and the unwinding itself on this very process: three
 * functions capture their registers and 8 KB of stack as perf would,
 * and both methods (CFA tables, libdwfl) must give the return addresses
 * the compiler knows (__builtin_return_address) up to _start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef UW_TEST_TABLE
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#endif

#include "check.h"
#include "unwind/unwind-int.h"

static void
test_maps(void)
{
	struct uw_space		 sp;
	struct unwind_map	 m = { .pid = 7, .path = "/bin/a" };
	const struct uw_proc	*p;
	const struct uw_map	*um;
	static const uint64_t	 times[] = { 0, 90, 110, 120 };
	uint32_t		 pid;
	int			 i;

	CHECK_EQ(uw_space_init(&sp), 0);
	m.start = 0x1000;
	m.len = 0x3000;		/* [0x1000, 0x4000) */
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	/* a mapping inside it splits it in three */
	m.path = "/bin/b";
	m.start = 0x2000;
	m.len = 0x1000;
	m.pgoff = 0x10000;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	p = uw_proc_get(&sp, 7, 0);
	CHECK(p != NULL && p->nmaps == 3);
	um = uw_proc_lookup(p, 0x1fff);
	CHECK(um != NULL && strcmp(um->bin->path, "/bin/a") == 0);
	um = uw_proc_lookup(p, 0x2000);
	CHECK(um != NULL && strcmp(um->bin->path, "/bin/b") == 0 &&
	    um->pgoff == 0x10000);
	um = uw_proc_lookup(p, 0x3000);
	/* the tail keeps its file offset from its own start */
	CHECK(um != NULL && strcmp(um->bin->path, "/bin/a") == 0 &&
	    um->start == 0x3000 && um->pgoff == 0x2000);
	CHECK(uw_proc_lookup(p, 0x4000) == NULL);
	CHECK(uw_proc_lookup(p, 0xfff) == NULL);
	/* one that covers the head and the middle replaces them */
	m.path = "/bin/c";
	m.start = 0x800;
	m.len = 0x2000;		/* [0x800, 0x2800) */
	m.pgoff = 0;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	p = uw_proc_get(&sp, 7, 0);
	CHECK_EQ(p->nmaps, 3);
	um = uw_proc_lookup(p, 0x2800);
	CHECK(um != NULL && strcmp(um->bin->path, "/bin/b") == 0 &&
	    um->start == 0x2800 && um->pgoff == 0x10800);
	/* one binary per path (no build-id): shared by the mappings */
	CHECK(uw_proc_lookup(p, 0x800)->bin == uw_proc_lookup(p,
	    0x27ff)->bin);
	/* a fork copies, a thread shares, an exec empties, exit forgets */
	CHECK_EQ(uw_space_fork(&sp, 7, 8), 0);
	CHECK_EQ(uw_space_fork(&sp, 7, 7), 0);
	p = uw_proc_get(&sp, 8, 0);
	CHECK(p != NULL && p->nmaps == 3 && uw_proc_lookup(p, 0x3000) !=
	    NULL);
	uw_space_exec(&sp, 8, 0);
	p = uw_proc_get(&sp, 8, 0);
	CHECK(p != NULL && p->nmaps == 0);
	CHECK(uw_proc_get(&sp, 7, 0)->nmaps == 3);
	/* an exec read after the new program's first mappings (another
	 * CPU's ring read first) keeps those, made after its time, and
	 * drops the old program's and the unknown (synthesized) ones */
	m.pid = 8;
	m.len = 0x1000;
	for (i = 0; i < 4; i++) {
		m.path = i < 2 ? "/bin/old" : "/bin/new";
		m.start = 0x10000 * (i + 1);
		m.time = times[i];
		CHECK_EQ(uw_space_map(&sp, &m), 0);
	}
	uw_space_exec(&sp, 8, 100);
	p = uw_proc_get(&sp, 8, 0);
	CHECK(p != NULL && p->nmaps == 2);
	CHECK(uw_proc_lookup(p, 0x10000) == NULL &&
	    uw_proc_lookup(p, 0x20000) == NULL);
	um = uw_proc_lookup(p, 0x40000);
	CHECK(um != NULL && strcmp(um->bin->path, "/bin/new") == 0 &&
	    um->time == 120 && uw_proc_lookup(p, 0x30000) != NULL);
	/* the old program's mapping and an older exec (a program that
	 * execs itself twice), read after that exec, change nothing */
	m.path = "/bin/old";
	m.start = 0x50000;
	m.time = 95;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	uw_space_exec(&sp, 8, 60);
	p = uw_proc_get(&sp, 8, 0);
	CHECK(p->nmaps == 2 && uw_proc_lookup(p, 0x50000) == NULL);
	/* in time order (time 0), an exec drops every mapping */
	uw_space_exec(&sp, 8, 0);
	CHECK_EQ(uw_proc_get(&sp, 8, 0)->nmaps, 0);
	m.pid = 7;
	m.path = "/bin/c";
	m.time = 0;
	/* many processes: the table grows, and each exit keeps the others
	 * reachable (linear probing's deletion) */
	m.start = 0x1000;
	m.len = 0x1000;
	for (pid = 100; pid < 2100; pid++) {
		m.pid = pid;
		CHECK_EQ(uw_space_map(&sp, &m), 0);
	}
	for (pid = 100; pid < 2100; pid += 2)
		uw_space_exit(&sp, pid);
	for (pid = 100; pid < 2100; pid++)
		if ((uw_proc_get(&sp, pid, 0) != NULL) != (pid % 2 == 1))
			break;
	CHECK_EQ(pid, 2100);
	CHECK_EQ(sp.nprocs, 1000 + 2);
	uw_space_finish(&sp, NULL, NULL);
}

/* The maps' gen, on which a process's Dwfl is built: a mapping into
 * free space or over the same file at the same place keeps it, one
 * that puts another file or another placement there changes it. */
static void
test_maps_gen(void)
{
	struct uw_space		 sp;
	struct unwind_map	 m = { .pid = 9, .path = "/lib/x.so" };
	const struct uw_proc	*p;
	uint64_t		 gen;

	CHECK_EQ(uw_space_init(&sp), 0);
	m.start = 0x10000;
	m.len = 0x4000;		/* ld.so's reservation of the whole */
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	gen = uw_proc_get(&sp, 9, 0)->gen;
	/* its text segment over it, at the same place */
	m.start = 0x11000;
	m.len = 0x1000;
	m.pgoff = 0x1000;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	p = uw_proc_get(&sp, 9, 0);
	CHECK_EQ(p->gen, gen);
	CHECK_EQ(p->nmaps, 3);
	/* another library beside it */
	m.path = "/lib/y.so";
	m.start = 0x20000;
	m.pgoff = 0;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	CHECK_EQ(uw_proc_get(&sp, 9, 0)->gen, gen);
	/* the same file over it at another place: a dlclose and dlopen */
	m.path = "/lib/x.so";
	m.start = 0x13000;
	m.pgoff = 0;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	CHECK(uw_proc_get(&sp, 9, 0)->gen != gen);
	gen = uw_proc_get(&sp, 9, 0)->gen;
	/* another file inside a mapping */
	m.path = "/lib/z.so";
	m.start = 0x12000;
	m.len = 0x800;
	m.pgoff = 0;
	CHECK_EQ(uw_space_map(&sp, &m), 0);
	CHECK(uw_proc_get(&sp, 9, 0)->gen != gen);
	uw_space_finish(&sp, NULL, NULL);
}

#ifdef UW_TEST_TABLE
/* This binary's .plt, as the linker wrote it (its entries' CFA an
 * expression of rip): the CFA tables give each pc of an entry its rule,
 * rsp + 8 up to the entry's push and rsp + 16 after it, as libdwfl
 * would evaluate it. */
static void
test_table_plt(void)
{
	const struct uw_rule	*r;
	struct uw_table		*t;
	GElf_Shdr		 sh;
	Elf_Scn			*scn = NULL;
	const char		*name;
	uint64_t		 plt = 0, a;
	size_t			 shstrndx, size = 0;
	Elf			*e;
	int			 fd, added, n = 0;

	elf_version(EV_CURRENT);
	CHECK((fd = open("/proc/self/exe", O_RDONLY)) != -1);
	CHECK((e = elf_begin(fd, ELF_C_READ, NULL)) != NULL);
	CHECK_EQ(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL && (name = elf_strptr(e,
		    shstrndx, sh.sh_name)) != NULL && strcmp(name, ".plt") == 0) {
			plt = sh.sh_addr;
			size = sh.sh_size;
		}
	elf_end(e);
	close(fd);
	if (size < 48) {
		printf("test_table_plt: skipped, no .plt of 2 entries here\n");
		return;
	}
	CHECK((t = uw_table_open("/proc/self/exe")) != NULL);
	/* the second entry (after PLT0): jmp *GOT; push $n; jmp PLT0 */
	for (a = plt + 16; a < plt + 32; a++) {
		CHECK((r = uw_table_rule(t, a, &added)) != NULL);
		if (r->kind == UW_RULE_HARD)
			continue;	/* another linker's form */
		CHECK_EQ(r->kind, UW_RULE_CFA);
		CHECK_EQ(r->cfa_reg, 7);
		CHECK_EQ(r->cfa_off, (a & 15) >= 11 ? 16 : 8);
		CHECK_EQ(r->ra_off, -8);
		n++;
	}
	printf("test_table_plt: %d of 16 pcs of a .plt entry by the "
	    "tables\n", n);
	CHECK_EQ(n, 16);
	uw_table_close(t);
}

/* Does an FDE of cfi describe a? */
static int
has_fde(Dwarf_CFI *cfi, uint64_t a)
{
	Dwarf_Frame	*fr = NULL;

	if (dwarf_cfi_addrframe(cfi, a, &fr) != 0)
		return 0;
	free(fr);
	return 1;
}

/*
 * The interpreter's entry point (glibc's ld.so _start: no FDE): each pc
 * from it up to the first FDE ends the stack, as nothing called that
 * code; a pc past that FDE that no FDE describes is still libdwfl's.
 */
static void
test_table_entry(void)
{
	const struct uw_rule	*r;
	struct uw_table		*t;
	Dwarf_CFI		*cfi;
	GElf_Phdr		 ph;
	GElf_Ehdr		 eh;
	char			 interp[256] = "";
	uint64_t		 a, entry;
	size_t			 i, nph, len;
	Elf			*e;
	int			 fd, added, n = 0, after = 0;
	const char		*data;

	elf_version(EV_CURRENT);
	CHECK((fd = open("/proc/self/exe", O_RDONLY)) != -1);
	CHECK((e = elf_begin(fd, ELF_C_READ, NULL)) != NULL);
	CHECK_EQ(elf_getphdrnum(e, &nph), 0);
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL &&
		    ph.p_type == PT_INTERP && (data = elf_rawfile(e, &len)) !=
		    NULL && ph.p_offset + ph.p_filesz <= len &&
		    ph.p_filesz < sizeof(interp))
			memcpy(interp, data + ph.p_offset, ph.p_filesz);
	elf_end(e);
	close(fd);
	if (interp[0] == '\0') {
		printf("test_table_entry: skipped, no interpreter\n");
		return;
	}
	CHECK((fd = open(interp, O_RDONLY)) != -1);
	CHECK((e = elf_begin(fd, ELF_C_READ, NULL)) != NULL);
	CHECK(gelf_getehdr(e, &eh) != NULL);
	entry = eh.e_entry;
	CHECK((cfi = dwarf_getcfi_elf(e)) != NULL);
	if (has_fde(cfi, entry)) {
		printf("test_table_entry: skipped, %s's entry point has an "
		    "FDE\n", interp);
		goto out;
	}
	CHECK((t = uw_table_open(interp)) != NULL);
	for (a = entry; a < entry + UW_ENTRY_SPAN && !has_fde(cfi, a); a++) {
		CHECK((r = uw_table_rule(t, a, &added)) != NULL);
		CHECK_EQ(r->kind, UW_RULE_END);
		n++;
	}
	for (; a < entry + UW_ENTRY_SPAN; a++)
		if (!has_fde(cfi, a)) {
			CHECK((r = uw_table_rule(t, a, &added)) != NULL);
			CHECK_EQ(r->kind, UW_RULE_HARD);
			after++;
		}
	printf("test_table_entry: %s: %d pcs from the entry point end the "
	    "stack, %d past an FDE do not\n", interp, n, after);
	CHECK(n > 0);
	uw_table_close(t);
out:
	dwarf_cfi_end(cfi);
	elf_end(e);
	close(fd);
}
#endif

/* What the innermost function captured, as a sample holds it. */
static uint64_t		 t_regs[24];	/* perf's 0..23 */
static uint8_t		 t_stack[8192];
static uint64_t		 t_size;
static void		*t_ra[3];	/* into f2, f1, test_live */

/* Copies the stack from sp up, the bytes a sanitizer may have poisoned
 * included, as the kernel does. */
__attribute__((noinline, no_sanitize_address)) static void
t_copy(uint64_t sp, uint64_t top)
{
	volatile const uint8_t	*src = (const uint8_t *)(uintptr_t)sp;
	uint64_t		 i;

	t_size = top - sp < sizeof(t_stack) ? top - sp : sizeof(t_stack);
	for (i = 0; i < t_size; i++)
		t_stack[i] = src[i];
}

/* The end of the [stack] mapping that holds addr (the copy stops
 * there). */
static uint64_t
t_stack_top(uint64_t addr)
{
	unsigned long	 a, b;
	char		 line[512];
	uint64_t	 top = addr + sizeof(t_stack);
	FILE		*f;

	if ((f = fopen("/proc/self/maps", "re")) == NULL)
		return top;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && addr >= a &&
		    addr < b)
			top = b;
	fclose(f);
	return top;
}

__attribute__((noinline)) static void
f3(void)
{
	uint64_t	 ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" :
	    "=r"(ip), "=r"(sp), "=r"(bp));
	t_regs[6] = bp;
	t_regs[7] = sp;
	t_regs[8] = ip;
	t_copy(sp, t_stack_top(sp));
	t_ra[0] = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void
f2(void)
{
	f3();
	t_ra[1] = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void
f1(void)
{
	f2();
	t_ra[2] = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* This process's mappings of files into the unwinder, as pid (out of
 * line: its 8 KB of buffers would put main past the stack copied). */
__attribute__((noinline)) static void
t_maps(struct unwind *uw, uint32_t pid)
{
	struct unwind_map	 m = { .pid = pid };
	unsigned long		 a, b, off;
	char			 line[4096], perm[8], path[4096];
	FILE			*f;

	if ((f = fopen("/proc/self/maps", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &a, &b, perm,
		    &off, path) < 4 || perm[2] != 'x' || path[0] == '\0')
			continue;
		m.start = a;
		m.len = b - a;
		m.pgoff = off;
		m.path = path;
		unwind_map_add(uw, &m);
	}
	fclose(f);
}

static void
test_live(int method)
{
	struct unwind_config	 cfg = { .method = method };
	struct unwind_sample	 s;
	struct unwind_stats	 st;
	struct unwind		*uw;
	enum unwind_stop	 why;
	uint64_t		 regs[20], ips[128];
	size_t			 i, j, n;

	f1();
	t_ra[2] = __builtin_return_address(0);	/* unused: f1's caller */
	CHECK((uw = unwind_create(&cfg)) != NULL);
	t_maps(uw, 42);
	/* the sample's registers: those of the mask, lowest first */
	for (i = 0, j = 0; i < 24; i++)
		if (UNWIND_X86_64_REGS_MASK & (1ULL << i))
			regs[j++] = t_regs[i];
	memset(&s, 0, sizeof(s));
	s.pid = s.tid = 42;
	s.abi = 2;	/* PERF_SAMPLE_REGS_ABI_64 */
	s.regs_mask = UNWIND_X86_64_REGS_MASK;
	s.regs = (const uint8_t *)regs;
	s.stack = t_stack;
	s.stack_size = t_size;
	why = unwind_sample(uw, &s, ips, 128, &n);
	printf("method %d: %zu frames, %s (stack %ju bytes from %jx)\n", method, n, unwind_stop_name(why), (uintmax_t)t_size, (uintmax_t)t_regs[7]);
	for (i = 0; i < n; i++)
		printf("  %jx\n", (uintmax_t)ips[i]);
	CHECK_EQ(why, UNWIND_STOP_END);
	CHECK(n >= 5);
	CHECK(n >= 3 && ips[0] == t_regs[8]);
	/* f3 returns into f2, f2 into f1 */
	CHECK(n >= 3 && ips[1] == (uint64_t)(uintptr_t)t_ra[0]);
	CHECK(n >= 3 && ips[2] == (uint64_t)(uintptr_t)t_ra[1]);
	unwind_stats(uw, &st);
	CHECK_EQ(st.samples, 1);
	CHECK_EQ(st.stops[UNWIND_STOP_END], 1);
	CHECK_EQ(st.frames, n);
	/* another process: no mappings, the pc alone */
	s.pid = 43;
	CHECK_EQ(unwind_sample(uw, &s, ips, 128, &n), UNWIND_STOP_NOMAP);
	CHECK_EQ(n, 1);
	/* another ABI: nothing */
	s.pid = 42;
	s.abi = 1;
	CHECK_EQ(unwind_sample(uw, &s, ips, 128, &n), UNWIND_STOP_REGS);
	CHECK_EQ(n, 0);
	/* a stack cut short stops where it was cut */
	s.abi = 2;
	s.stack_size = 8;
	why = unwind_sample(uw, &s, ips, 128, &n);
	CHECK(why != UNWIND_STOP_END && n >= 1);
	/* max frames */
	s.stack_size = t_size;
	CHECK_EQ(unwind_sample(uw, &s, ips, 2, &n), UNWIND_STOP_DEPTH);
	CHECK_EQ(n, 2);
	unwind_destroy(uw);
}

int
main(void)
{
	test_maps();
	test_maps_gen();
#ifdef UW_TEST_TABLE
	test_table_plt();
	test_table_entry();
#endif
	test_live(UNWIND_METHOD_TABLE);
	test_live(UNWIND_METHOD_DWFL);
	return check_exit();
}

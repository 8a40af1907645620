/*
 * unwind: user stacks from raw DWARF samples (PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER, as `perf record --call-graph dwarf` records
 * them) turned into return addresses, with elfutils' CFI (.eh_frame,
 * .debug_frame) of the exact binary each mapping recorded.
 *
 * One struct unwind models the address spaces of the processes a trace
 * shows, from its MMAP/MMAP2, FORK, EXIT and exec COMM records, and
 * keeps the binaries it opened (their ELF and CFI, one per build-id)
 * under a memory bound. A binary is taken by build-id: at the recorded
 * path when the ids match, from perf's cache (~/.debug/.build-id), as
 * the debug file under /usr/lib/debug/.build-id, and from debuginfod
 * when the config allows it; never a file of another build-id (a
 * mapping recorded without one is taken at its path).
 *
 * Threads: an unwinder has no global state and takes no lock. Every
 * function on one struct unwind runs on the thread that owns it (the
 * daemon's unwinding worker; perfspill-flame's only thread); two
 * unwinders on two threads are independent (libelf's one-time
 * elf_version call is the only process-wide state touched, and it is
 * idempotent). unwind_stats may be called
 * by the owner only, too: a thread that publishes the counts copies
 * them out on the owner's thread.
 *
 * Only x86-64 samples are unwound (perf's register numbering of
 * arch/x86/include/uapi/asm/perf_regs.h, ABI PERF_SAMPLE_REGS_ABI_64);
 * another ABI counts as a failure (UNWIND_STOP_REGS).
 */
#ifndef PERFSPILL_UNWIND_H
#define PERFSPILL_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define UNWIND_BUILD_ID_MAX	20	/* perf's BUILD_ID_SIZE */

/* perf's x86-64 user register mask that `perf record --call-graph
 * dwarf` asks for: AX .. SS and R8 .. R15, without DS, ES, FS and GS
 * (perf's PERF_REGS_MASK); what the daemon records. The unwinder reads
 * IP, SP and BP of it, and gives libdwfl the rest. */
#define UNWIND_X86_64_REGS_MASK	0xff0fffULL

struct unwind;

struct unwind_config {
	size_t		 cache_bytes;	/* bound on the binaries kept open
					 * (their ELF and CFI, estimated);
					 * 0: 256 MiB. Past it the least
					 * recently used are closed. */
	int		 debuginfod;	/* 1: ask DEBUGINFOD_URLS' servers
					 * for a binary not found here */
	int		 verbose;	/* 1: say on stderr which binary is
					 * used for which mapping */
	int		 method;	/* UNWIND_METHOD_*: how frames are
					 * stepped (0: the default) */
	int		 eh_frame_only;	/* 1: the CFI of .eh_frame alone, no
					 * debug file looked for (libdw
					 * decompresses a debug file's DWARF
					 * whole to read its .debug_frame:
					 * milliseconds per binary and
					 * process, the daemon's cost) */
};

/* The default steps each frame with the binary's CFA rules, looked up
 * once per pc and kept per binary; a frame whose rules are more than
 * a register plus an offset (a DWARF expression, a signal frame) has
 * its sample unwound by libdwfl. DWFL unwinds every sample by libdwfl
 * (for comparison: docs/flame.md gives both costs). */
#define UNWIND_METHOD_TABLE	0
#define UNWIND_METHOD_DWFL	1

/* A mapping of a file into a process, as an MMAP or MMAP2 record
 * says (a data mapping, MISC_MMAP_DATA, need not be given). */
struct unwind_map {
	uint32_t	 pid;
	uint64_t	 start, len, pgoff;
	const char	*path;		/* as recorded: "/usr/bin/python3",
					 * "[vdso]", "//anon", ... */
	const uint8_t	*build_id;	/* NULL/0: the record has none */
	size_t		 build_id_len;
	uint64_t	 time;		/* the record's (sample_id), perf's
					 * clock; 0: unknown (synthesized) */
};

/* One sample's user part, its fields as the record holds them. */
struct unwind_sample {
	uint32_t	 pid, tid;
	uint64_t	 abi;		/* PERF_SAMPLE_REGS_ABI_*: the
					 * record's, 0 when it has none */
	uint64_t	 regs_mask;	/* the attr's sample_regs_user */
	const uint8_t	*regs;		/* popcount(regs_mask) u64s, lowest
					 * register first; may be unaligned */
	const uint8_t	*stack;		/* the STACK_USER bytes, from the
					 * stack pointer up; may be
					 * unaligned */
	uint64_t	 stack_size;	/* its dyn_size: the bytes valid */
};

/* Why an unwinding stopped. UNWIND_STOP_END is a whole stack (the CFI
 * of _start or of a thread's start says there is no caller); the
 * others are failures, the stack cut where they say. */
enum unwind_stop {
	UNWIND_STOP_END = 0,	/* the outermost frame reached */
	UNWIND_STOP_REGS,	/* no registers, another ABI or arch */
	UNWIND_STOP_NOMAP,	/* a pc in no mapping of the process */
	UNWIND_STOP_NOELF,	/* the mapping's binary not found (or
				 * replaced: another build-id) */
	UNWIND_STOP_NOCFI,	/* the binary has no CFI for the pc */
	UNWIND_STOP_STACK,	/* a read past the stack dump */
	UNWIND_STOP_DEPTH,	/* max frames reached */
	UNWIND_STOP_OTHER,	/* anything else libdw reports */
	UNWIND_STOP_COUNT
};

struct unwind_stats {
	uint64_t	 samples;	/* unwind_sample calls */
	uint64_t	 frames;	/* addresses returned */
	uint64_t	 stops[UNWIND_STOP_COUNT];	/* samples by why */
	uint64_t	 binaries;	/* binaries opened */
	uint64_t	 evicted;	/* closed for the memory bound */
	uint64_t	 cache_bytes;	/* estimated, now */
	uint64_t	 processes;	/* address spaces modelled now */
	uint64_t	 fallbacks;	/* samples the CFA tables left to
					 * libdwfl (UNWIND_METHOD_TABLE) */
	uint64_t	 rules;		/* CFA rules looked up */
};

/* NULL config: the defaults. NULL without memory. */
struct unwind	*unwind_create(const struct unwind_config *);
void		 unwind_destroy(struct unwind *);

/*
 * The address spaces. A mapping replaces what it overlaps in its
 * process, as mmap does. fork: a new process (pid != ppid) starts with
 * a copy of its parent's mappings; a new thread (pid == ppid) changes
 * nothing. exec: the process's mappings are dropped (an exec COMM
 * record, PERF_RECORD_MISC_COMM_EXEC, at its time), but for those
 * recorded after that time: a reader of per-CPU rings one after another
 * may see the new program's mappings, on another CPU's ring (its exec
 * slept on the disk and woke there), before the exec, and the mappings
 * (and execs) older than the last exec read are left out; time 0 drops
 * them all, for a reader in time order. exit: the process is forgotten
 * (give it the process's last thread's EXIT, pid == tid). 0/-1 (-1:
 * out of memory).
 */
int		 unwind_map_add(struct unwind *, const struct unwind_map *);
int		 unwind_fork(struct unwind *, uint32_t ppid, uint32_t pid);
void		 unwind_exec(struct unwind *, uint32_t pid, uint64_t time);
void		 unwind_exit(struct unwind *, uint32_t pid);

/*
 * Unwinds s: ips gets up to max addresses, leaf first: the sampled pc,
 * then each caller's return address, as a frame-pointer callchain holds
 * them (what follows PERF_CONTEXT_USER). *n is how many; the return
 * value says why it stopped (UNWIND_STOP_END: a whole stack). Nothing
 * of s is kept after the call.
 */
enum unwind_stop unwind_sample(struct unwind *, const struct unwind_sample *,
		    uint64_t *ips, size_t max, size_t *n);

void		 unwind_stats(const struct unwind *, struct unwind_stats *);
/* "end", "registers", "no mapping", ...: for messages and metrics. */
const char	*unwind_stop_name(enum unwind_stop);

/*
 * Where the file of build-id id is on this host (the places above but
 * debuginfod; perfspill-flame's symbols look there too): kind 0 the
 * binary, at path when its id matches, in perf's cache under home
 * (NULL: not looked at), or else its debug file; kind 1 the debug file.
 * A malloc'd path, or NULL. They keep no state: any thread. Built with
 * libdw only.
 */
char		*unwind_find_local(const uint8_t *id, size_t len,
		    const char *path, int kind, const char *home);
/* Does the ELF file at path have build-id id? */
int		 unwind_has_build_id(const char *path, const uint8_t *id,
		    size_t len);
/*
 * The regular file at path, opened to read, or -1. A path is what a
 * record of a file names: it is looked at (O_PATH) before it is opened,
 * and only a regular file is, through the descriptor of what was looked
 * at (an open of a FIFO blocks or wakes its writer, one of a device may
 * act on it). Any thread.
 */
int		 unwind_open_regular(const char *path);

/*
 * A finder looks for a build-id's files in unwind_find_local's places
 * and then, when it was made with debuginfod 1 and DEBUGINFOD_URLS is
 * set, asks the debuginfod servers through one client that it begins at
 * its first need. An unwinder finds its binaries with a finder of its
 * own; perfspill-flame's symbols (symelf) use another. Only the thread
 * that owns a finder uses it. These functions exist in builds with libdw
 * only.
 */
struct unwind_finder;

/* unwind_finder_create returns NULL without memory. */
struct unwind_finder *unwind_finder_create(int debuginfod);
void		 unwind_finder_destroy(struct unwind_finder *);
/* unwind_finder_find returns the path (malloc'd) of the file of build-id
 * id that the first place holds, or NULL: kind 0 asks for the binary
 * (at path when its id matches), kind 1 for its debug file. */
char		*unwind_finder_find(struct unwind_finder *, const uint8_t *id,
		    size_t len, const char *path, int kind);
/* unwind_finder_vdso returns this process's vdso as a file (a path that
 * lives as long as the finder) when it has build-id id (len 0: any), or
 * NULL. */
const char	*unwind_finder_vdso(struct unwind_finder *, const uint8_t *id,
		    size_t len);
/*
 * unwind_finder_debuginfo is libdwfl's find_debuginfo callback
 * (Dwfl_Callbacks) for modules whose userdata (dwfl_module_info's)
 * points to a finder: the finder looks for the module's debug file by
 * its build-id first, then libdwfl searches its own way (.gnu_debuglink,
 * .gnu_debugdata). A module whose userdata is still NULL gets libdwfl's
 * search alone. The types are libdwfl's, spelled without its header
 * (Dwarf_Addr is a uint64_t, GElf_Word a uint32_t).
 */
struct Dwfl_Module;
int		 unwind_finder_debuginfo(struct Dwfl_Module *, void **userdata,
		    const char *name, uint64_t base, const char *file,
		    const char *debuglink, uint32_t crc, char **path);

#endif

/*
 * unwind-int: what the files of unwind/ share and nothing else sees:
 * the address spaces (unwind-maps.c), the places a binary is found by
 * build-id (unwind-find.c, unwind-debuginfod.c) and the unwinder
 * proper (unwind-dwfl.c or unwind-none.c), which owns struct unwind.
 * Everything runs on the unwinder's owner thread (unwind.h).
 */
#ifndef PERFSPILL_UNWIND_INT_H
#define PERFSPILL_UNWIND_INT_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

struct uw_debuginfod;

/* A binary, known by its build-id (or by its path when the mapping
 * gave none); what the unwinder keeps of it is its own (priv). */
struct uw_bin {
	uint8_t		 id[UNWIND_BUILD_ID_MAX];
	uint8_t		 idlen;
	char		*path;		/* as recorded */
	void		*priv;		/* the unwinder's */
	struct uw_bin	*next;		/* of the table's chain */
};

struct uw_map {
	uint64_t	 start, end, pgoff;
	uint64_t	 time;		/* its record's; 0: unknown */
	struct uw_bin	*bin;
};

/* A process's mappings, sorted by start, none overlapping. */
struct uw_proc {
	uint32_t	 pid;
	uint32_t	 used;		/* a slot of the table */
	struct uw_map	*maps;
	size_t		 nmaps, cap;
	uint64_t	 gen;		/* bumped when a mapping is replaced
					 * by another file or placement */
	uint64_t	 exec_time;	/* of its last exec; 0: none known */
	void		*priv;		/* the unwinder's */
};

struct uw_space {
	struct uw_proc	*procs;		/* open addressing by pid */
	size_t		 nprocs, size;
	struct uw_bin	**bins;		/* chained by hash of id/path */
	size_t		 nbins, binsize;
	/* called when a process is dropped, to free its priv */
	void		(*proc_free)(void *, struct uw_proc *);
	void		*arg;
};

/* The unwinder: the common part, and its backend's state (be). */
struct uw_be;
struct unwind {
	struct unwind_config	 cfg;
	struct uw_space		 sp;
	struct unwind_stats	 st;
	struct uw_be		*be;
};

/* The backend (unwind-dwfl.c or unwind-none.c): set up uw->be (and
 * uw->sp's proc_free), free a binary's priv, unwind one sample. */
int		 uw_be_init(struct unwind *);
void		 uw_be_finish(struct unwind *);
void		 uw_be_bin_free(void *, struct uw_bin *);
enum unwind_stop uw_be_sample(struct unwind *, const struct unwind_sample *,
		    uint64_t *ips, size_t max, size_t *n);
/* Register perf (perf's x86-64 number) of the sample: 0, or -1 when
 * the sample has none. */
int		 uw_sample_reg(const struct unwind_sample *, int perf,
		    uint64_t *);
int		 uw_sample_ip(const struct unwind_sample *, uint64_t *);

int		 uw_space_init(struct uw_space *);
void		 uw_space_finish(struct uw_space *, void (*bin_free)(void *,
		    struct uw_bin *), void *);
struct uw_proc	*uw_proc_get(struct uw_space *, uint32_t pid, int create);
int		 uw_space_map(struct uw_space *, const struct unwind_map *);
int		 uw_space_fork(struct uw_space *, uint32_t ppid, uint32_t pid);
void		 uw_space_exec(struct uw_space *, uint32_t pid, uint64_t time);
void		 uw_space_exit(struct uw_space *, uint32_t pid);
const struct uw_map *uw_proc_lookup(const struct uw_proc *, uint64_t addr);

/* A CFA rule of a binary at one ELF address (unwind-table.c). */
enum {
	UW_RULE_NONE = 0,	/* a free slot */
	UW_RULE_CFA,		/* the CFA a register plus an offset */
	UW_RULE_END,		/* no return address: the outermost frame */
	UW_RULE_HARD,		/* anything else: libdwfl's */
};
struct uw_rule {
	uint64_t	 vaddr;
	int32_t		 cfa_off;	/* CFA = reg(cfa_reg) + cfa_off */
	int16_t		 ra_off;	/* return address at CFA + ra_off */
	int16_t		 rbp_off;	/* rbp at CFA + rbp_off, */
	uint8_t		 rbp_saved;	/* ... if saved (else unchanged) */
	uint8_t		 cfa_reg;	/* DWARF 7 rsp or 6 rbp */
	uint8_t		 kind;
};
struct uw_table;
/* The entry point's code that no FDE describes ends the stack up to
 * this many bytes past it (glibc's ld.so _start and _dl_start_user are
 * 64 bytes; unwind-table.c says why). */
#define UW_ENTRY_SPAN	256
/* The binary at path's .eh_frame rules (none: every rule hard); NULL
 * when it cannot be read. */
struct uw_table	*uw_table_open(const char *path);
void		 uw_table_close(struct uw_table *);
size_t		 uw_table_bytes(const struct uw_table *);
/* The rule at vaddr, looked up now (*added 1) or before; NULL without
 * memory. */
const struct uw_rule *uw_table_rule(struct uw_table *, uint64_t vaddr,
		    int *added);

struct uw_debuginfod *uw_debuginfod_create(void);
void		 uw_debuginfod_destroy(struct uw_debuginfod *);
/* A read-only fd of the file and its path (malloc'd), or -1. */
int		 uw_debuginfod_find(struct uw_debuginfod *, const uint8_t *,
		    size_t, int kind, char **path);

#endif

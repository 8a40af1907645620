/*
 * symbolize: names for the frames of a profile. A user binary is found
 * by the build-id the trace file records for it: in /usr/lib/debug/
 * .build-id, in perf's build-id cache (~/.debug), at the path the file
 * names when the binary there has that build-id, and from a debuginfod
 * server (DEBUGINFOD_URLS); a mapping whose build-id the file does not
 * give is looked up at its path. The kernel's names come from
 * /proc/kallsyms when the file's kernel build-id is this host's; JIT
 * code from /tmp/perf-PID.map. A frame that none of them names has no
 * symbol (NULL), as perf shows "[unknown]".
 *
 * symbolize-dwfl.c implements it with elfutils where meson finds libdw;
 * symbolize-none.c names nothing but the kernel and JIT maps elsewhere.
 */
#ifndef PERFSPILL_SYMBOLIZE_H
#define PERFSPILL_SYMBOLIZE_H

#include "profile.h"

struct symbolize;
struct jitsym;

/* How user code is named (perf report's defaults: SYMBOLIZE_DEMANGLE). */
#define SYMBOLIZE_DEMANGLE	0x1	/* C++, Rust: off with --no-demangle */
#define SYMBOLIZE_INLINE	0x2	/* inlined frames (--inline) */

/* kernel_build_id: the file's (len 0: not known: the kernel stays
 * unnamed); flags: SYMBOLIZE_*. NULL without memory. */
struct symbolize *symbolize_create(const uint8_t *kernel_build_id,
		    size_t kernel_build_id_len, int verbose, int flags);
void		 symbolize_destroy(struct symbolize *);
/* The JIT maps copied beside the file (jitsym.h; NULL: none), taken
 * before /tmp's; js must outlive sy. */
void		 symbolize_use_copies(struct symbolize *,
		    const struct jitsym *);
/* The function at f's address (f->map, f->offset set), or NULL; the
 * name lives as long as sy. */
const char	*symbolize_frame(struct symbolize *, uint32_t pid,
		    const struct profile_frame *f);
/* With SYMBOLIZE_INLINE, the names of the frames f stands for, leaf
 * first, where debug info has functions inlined at its address (the
 * inlined ones, "name (inlined)", then the one they are in); *names
 * lives as long as sy. 0: f is one frame, symbolize_frame's. */
size_t		 symbolize_inlines(struct symbolize *,
		    const struct profile_frame *f, const char *const **names);

#endif

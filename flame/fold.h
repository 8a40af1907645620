/*
 * fold: a trace file's samples into counted stacks. perfread reads the
 * file (no perf, no text); fold names each frame and adds the sample to
 * a stackset, so that memory is bounded by the distinct stacks, never by
 * the samples.
 *
 * Names are data: a comm, a symbol, a cgroup or an event name is stored
 * with ';' (which separates frames in folded stacks) as ':' and every
 * control byte (a newline would start another folded line, or another
 * companion record) as "\xNN". A frame without a symbol is named as perf
 * shows it: "[unknown]" in code no mapping holds, else its file's name
 * in brackets ("[libfoo.so.1]", "[kernel.kallsyms]", "[vdso]").
 */
#ifndef PERFSPILL_FOLD_H
#define PERFSPILL_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "perfread.h"
#include "profile.h"
#include "stackset.h"

struct fold_opts {
	uint64_t		 tmin, tmax;	/* perf clock ns: [tmin, tmax) */
	uint32_t		 host;		/* string id in the stackset */
	const uint32_t		*pids;		/* only these (npids 0: all) */
	size_t			 npids;
	int			 names;		/* SYMBOLIZE_* */
	/* every few thousand samples kept */
	void			(*progress)(void *, uint64_t);
	void			*progress_arg;
};

struct fold_stats {
	uint64_t		 read;		/* samples in the file */
	uint64_t		 kept;		/* inside the range */
	uint64_t		 first, last;	/* perf clock ns of those kept */
	uint64_t		 lost;		/* the kernel's LOST counts */
	uint64_t		 head_hash;	/* perfread's, for a companion */
};

struct fold;

struct fold	*fold_create(struct stackset *, const struct fold_opts *);
/* Adds one sample (a perfread_fn); 0, or -1 without memory. */
int		 fold_sample(void *fold, const struct profile_sample *);
void		 fold_end(struct fold *, struct fold_stats *);
void		 fold_free(struct fold *);

/* A name made safe for the stackset (see above) into buf (len bytes,
 * NUL-ended); its length. */
size_t		 fold_name(char *buf, size_t len, const char *s, size_t n);

/* The name of a frame without a symbol, as perf shows it ("[unknown]",
 * "[libfoo.so.1]", "[kernel.kallsyms]"), made safe as fold_name does,
 * into buf; its length. */
size_t		 fold_nosym_name(char *buf, size_t len,
		    const struct profile_frame *);

/* Reads the trace file at path into fn (a perfread_fn), its frames named
 * (the JIT maps copied beside it first): what fold_file and the pprof
 * output share. 0, or -1 with a message in err (errno ENOMEM: out of
 * memory; else a file that cannot be read). head_hash may be NULL. */
int		 fold_read(const char *path, const struct perfread_opts *,
		    perfread_fn, void *, int verbose, struct profile_stats *,
		    uint64_t *head_hash, char *err, size_t errlen);

/* Folds the trace file at path into ss; 0, or -1 with a message in err:
 * a file that cannot be read whole (the caller skips it). */
int		 fold_file(struct stackset *, const char *path,
		    const struct fold_opts *, int verbose, struct fold_stats *,
		    char *err, size_t errlen);

#endif

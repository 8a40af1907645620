/*
 * fold: perf script's text into counted stacks. perf reads the trace file
 * (symbols, maps, callchains: the work that costs); this reads its lines
 * as they stream and adds each sample to a stackset, so that memory is
 * bounded by the distinct stacks, never by the samples.
 *
 * The lines are those of
 *   perf script --ns -F comm,pid,tid,time,event,ip,sym,dso
 * a sample's header line ("comm pid/tid secs.nsecs: event:"), then one
 * line per callchain entry ("\tADDR SYM (DSO)") and a blank line; or,
 * without callchains, the sample's own ADDR SYM (DSO) on its header line.
 */
#ifndef PERFSPILL_FOLD_H
#define PERFSPILL_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "stackset.h"

/* A thread's cgroup, for files that record each sample's cgroup:
 * perf script 6.1 does not print it, perf report sorts by it. */
struct fold_cgmap;

struct fold_opts {
	uint64_t		 tmin, tmax;	/* perf clock ns: [tmin, tmax) */
	uint32_t		 host;		/* string id in the stackset */
	const struct fold_cgmap	*cgmap;		/* NULL: no cgroups */
	/* every few thousand samples read, kept or not */
	void			(*progress)(void *, uint64_t);
	void			*progress_arg;
};

struct fold_stats {
	uint64_t		 read;		/* samples perf printed */
	uint64_t		 kept;		/* inside the time range */
	uint64_t		 first, last;	/* perf clock ns of those kept */
	uint64_t		 bad;		/* lines not understood */
};

struct fold;

struct fold	*fold_create(struct stackset *, const struct fold_opts *);
/* Feeds perf script's output; whole lines are taken, a partial last one
 * is kept for the next call. 0, or -1 without memory. */
int		 fold_feed(struct fold *, const char *, size_t);
/* The end of the output: the last sample counted. 0 or -1. */
int		 fold_end(struct fold *, struct fold_stats *);
void		 fold_free(struct fold *);

/* Folds a trace file with perf script into ss; 0, or -1 with a message
 * printed. fields_cgroup: the file records cgroups (perf report maps
 * threads to them first). */
int		 fold_file(struct stackset *, const char *path,
		    const struct fold_opts *, int cgroups, int verbose,
		    struct fold_stats *);

/* perf report --sort pid,cgroup -n output to a map into ss's strings;
 * NULL without memory. */
struct fold_cgmap *fold_cgmap_parse(struct stackset *, const char *);
void		 fold_cgmap_free(struct fold_cgmap *);
/* The cgroup string id of a thread, or STACKSET_NONE. */
uint32_t	 fold_cgmap_get(const struct fold_cgmap *, uint32_t tid);

#endif

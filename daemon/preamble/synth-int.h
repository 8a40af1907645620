/*
 * synth-int: what the synth*.c files share and nobody else sees: the
 * record builder (synth.c) and the part of the preamble each file
 * writes. synth-preamble.c puts the parts in order.
 *
 * Threads: every function here runs within synth.h's, on their caller's
 * thread, on that call's own buffers; none keeps state.
 */
#ifndef PERFSPILL_SYNTH_INT_H
#define PERFSPILL_SYNTH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/perf-abi.h"
#include "perfdata/perfdata.h"
#include "synth.h"

#define SYNTH_ALIGN(x, a)	(((x) + (a) - 1) / (a) * (a))

/*
 * A record is built in place at the end of an sbuf. A failed append
 * sticks, so a record can be filled without checking each step; the
 * end (or cancel) call drops the partial record from the sbuf.
 */
struct synth_rec {
	struct sbuf	*out;
	size_t		 start;
	int		 failed;
};

void	synth_rec_begin(struct synth_rec *, struct sbuf *, uint32_t,
	    uint16_t);
void	synth_rec_begin_raw(struct synth_rec *, struct sbuf *);
void	synth_rec_put(struct synth_rec *, const void *, size_t);
void	synth_rec_zero(struct synth_rec *, size_t);
void	synth_rec_u32(struct synth_rec *, uint32_t);
void	synth_rec_u64(struct synth_rec *, uint64_t);
void	synth_rec_str(struct synth_rec *, const char *, size_t);
size_t	synth_rec_len(const struct synth_rec *);
void	synth_rec_patch(struct synth_rec *, size_t, const void *, size_t);
int	synth_rec_end(struct synth_rec *, size_t);
void	synth_rec_cancel(struct synth_rec *);
/* perf's string: u32 padded length, the string padded to
 * PERFDATA_NAME_ALIGN */
void	synth_rec_lenstr(struct synth_rec *, const char *);

/* perf's "avail" CPUs: the highest present one + 1; 0 when unknown. */
uint32_t synth_cpus_avail(void);

/* Bytes of zeroed sample_id every kernel-type record must carry. */
size_t	synth_trailer(const struct synth_ctx *);
/* The name perf should show for an event; never NULL. */
const char *synth_event_name(const struct synth_event *, char *, size_t);
/* Read a whole file (proc and tracefs files have no size) into a
 * NUL-terminated buffer the caller frees; -1 with errno. */
int	synth_slurp(const char *, char **, size_t *);
const char *synth_procfs(const struct synth_ctx *);

/* synth-feature.c: the payloads and the head's table of them */
int	synth_feature_all(struct sbuf *, const struct synth_ctx *,
	    struct perfdata_header *);

/* synth-topology.c: feature fills, 0 written, 1 skipped, -1 error */
int	synth_topology_cpus(struct synth_rec *, const struct synth_ctx *);
int	synth_topology_numa(struct synth_rec *, const struct synth_ctx *);
int	synth_topology_pmus(struct synth_rec *, const struct synth_ctx *);

/* synth-tracing.c: 0 written, 1 no tracepoint, -1 error */
int	synth_tracing_data(struct synth_rec *, const struct synth_ctx *);

/* synth-cgroup.c */
int	synth_cgroups(struct sbuf *, const struct synth_ctx *);

/* synth-proc.c */
int	synth_proc_kernel(struct sbuf *, const struct synth_ctx *);
int	synth_proc_kernel_bid(struct sbuf *, const struct synth_ctx *);
int	synth_proc_tasks(struct sbuf *, const struct synth_ctx *);

#endif

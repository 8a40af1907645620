/*
 * synth: the records that make a trace file self-contained.
 *
 * Our trace files use perf's pipe format (see docs/file-format.md): a
 * 16-byte header, then a stream of records. synth builds everything that
 * precedes the kernel's ring data: the header, one HEADER_ATTR per event
 * (with the kernel ids of its per-CPU instances), the event names
 * (EVENT_UPDATE), HEADER_FEATURE records (hostname, osrelease, nrcpus,
 * cmdline, event desc, ...), HEADER_TRACING_DATA for tracepoint events,
 * the kernel mmap, and COMM/MMAP2 of every task that exists now (from
 * /proc), then FINISHED_INIT. Every file of a rotation series gets its own
 * preamble, so any single file can be read alone.
 */
#ifndef PERFSPILL_SYNTH_H
#define PERFSPILL_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "sbuf.h"

struct synth_event {
	struct perf_event_attr	 attr;		/* as passed to perf_event_open */
	const char		*name;		/* "cpu-clock", "sched:sched_switch" */
	const char		*tp_system;	/* "sched", or NULL if no tracepoint */
	const char		*tp_name;	/* "sched_switch", or NULL */
	const uint64_t		*ids;		/* PERF_EVENT_IOC_ID of each instance */
	size_t			 nr_ids;
};

struct synth_ctx {
	const struct synth_event *events;	/* events[0] carries the tracking bits */
	size_t			 nr_events;
	const int		*cpus;		/* online CPUs recorded */
	size_t			 nr_cpus;
	const char		*cmdline;	/* the settings as a command line */
	const char		*tracefs;	/* e.g. "/sys/kernel/tracing" */
	const char		*procfs;	/* "/proc"; tests may point elsewhere */
	int			 comp_level;	/* >0: HEADER_COMPRESSED (zstd) */
	uint32_t		 comp_mmap_len;	/* largest decompressed record run */
};

/* Append the whole preamble (pipe header first) to out. 0 or -1 (errno set);
 * a task that vanishes while /proc is read is skipped, not an error. */
int	synth_preamble(struct sbuf *out, const struct synth_ctx *ctx);

/* Size of the sample_id trailer that non-sample records carry for this
 * sample_type when sample_id_all is set (perf's id_hdr_size). */
size_t	synth_id_hdr_size(uint64_t sample_type);

/* Append one PERF_RECORD_FINISHED_ROUND. */
int	synth_finished_round(struct sbuf *out);

#endif

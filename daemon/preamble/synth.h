/*
 * synth: what makes a trace file self-contained.
 *
 * Our trace files use perf's seekable perf.data layout (see perfdata.h
 * and docs/file-format.md). synth builds everything before the kernel's
 * ring data: the head (a provisional file header, the attrs with the
 * kernel ids of their per-CPU instances, the feature payloads known at
 * the start: hostname, osrelease, nrcpus, cmdline, event desc with the
 * names, cpu and numa topology, tracing data for tracepoint events, the
 * kernel's build-id, ..., and the head's table of them), then the first
 * records of the data section: the kernel mmap and COMM/MMAP2 of every
 * task that exists now (from /proc), then FINISHED_INIT. Every file of a
 * rotation series gets its own, so any single file can be read alone.
 *
 * The attrs are written at this build's sizeof(struct perf_event_attr):
 * perf 6.1 reads the ids after its own attr size (128 bytes, the uapi of
 * Debian 12). Build against the uapi headers of the perf that reads the
 * files.
 *
 * Threads: nothing here keeps state but its context, which is its
 * caller's. synth_preamble runs where a rotation's preamble is built
 * (record_prep_run: the rotation thread, or the loop for a start, a
 * command's rotate or a snapshot); synth_kernel_range in the loop at a
 * start.
 */
#ifndef PERFSPILL_SYNTH_H
#define PERFSPILL_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "perfdata/sbuf.h"

struct synth_event {
	struct perf_event_attr	 attr;		/* as passed to perf_event_open */
	const char		*name;		/* "cpu-clock", "sched:sched_switch" */
	const char		*tp_system;	/* "sched", or NULL if no tracepoint */
	const char		*tp_name;	/* "sched_switch", or NULL */
	const uint64_t		*ids;		/* PERF_EVENT_IOC_ID of each instance */
	size_t			 nr_ids;
	/* 0: alone or a group's leader; else the leader is this many
	 * events before it (HEADER_GROUP_DESC, perf evlist -g) */
	size_t			 leader_off;
};

struct synth_ctx {
	const struct synth_event *events;	/* events[0] carries the tracking bits */
	size_t			 nr_events;
	const int		*cpus;		/* online CPUs recorded */
	size_t			 nr_cpus;
	const char		*cmdline;	/* the settings as a command line */
	const char		*tracefs;	/* e.g. "/sys/kernel/tracing" */
	const char		*procfs;	/* "/proc"; tests may point elsewhere */
	const char		*cgroupfs;	/* cgroup2 mount: CGROUP records; or NULL */
	uint64_t		 kernel_text;	/* _text, _etext; 0: read kallsyms */
	uint64_t		 kernel_etext;
	int			 comp_level;	/* >0: HEADER_COMPRESSED (zstd) */
	uint32_t		 comp_mmap_len;	/* largest decompressed record run */
};

/* Build the whole preamble in the empty out: out's offsets are the file's
 * (perfdata_parse reads the head back). 0 or -1 (errno set); a task that
 * vanishes while /proc is read is skipped, not an error. With tasks,
 * where the records of the tasks lie in out: the bulk of the preamble,
 * plain kernel-type records that may go compressed. */
struct synth_span {
	size_t	 off;
	size_t	 len;
};
int	synth_preamble(struct sbuf *out, const struct synth_ctx *ctx,
	    struct synth_span *tasks);

/* _text and _etext from procfs/kallsyms (0 when hidden), read once per
 * recording: the scan is most of a preamble's cost. 0 or -1 (ENOMEM). */
int	synth_kernel_range(const char *procfs, uint64_t *text, uint64_t *etext);

#endif

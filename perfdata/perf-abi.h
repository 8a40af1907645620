/*
 * perf-abi: the numbers of perf's own file format that the kernel's uapi
 * header (linux/perf_event.h) does not have, in one place. They are ABI:
 * perf reads files with them, so they never change; each is named as in
 * perf's source so that it can be looked up there. Record types and misc
 * bits: tools/lib/perf/include/perf/event.h and tools/perf/util/event.h;
 * the file header and feature ids: tools/perf/util/header.h (kept under
 * our PERFDATA_ names: perf's HEADER_* would be too vague here).
 */
#ifndef PERFSPILL_PERF_ABI_H
#define PERFSPILL_PERF_ABI_H

#include <stdint.h>
#include <linux/perf_event.h>

/* Record types perf writes itself, after the kernel's (below 64). */
#define PERF_RECORD_HEADER_ATTR		64
#define PERF_RECORD_HEADER_TRACING_DATA	66
#define PERF_RECORD_HEADER_BUILD_ID	67
#define PERF_RECORD_FINISHED_ROUND	68
#define PERF_RECORD_AUXTRACE		71
#define PERF_RECORD_COMPRESSED		81	/* size not 8-aligned */
#define PERF_RECORD_FINISHED_INIT	82

/* HEADER_BUILD_ID's misc bit: the id's size byte is valid. */
#define PERF_RECORD_MISC_BUILD_ID_SIZE	(1 << 15)

/*
 * PERF_RECORD_HEADER_BUILD_ID (tools/lib/perf/include/perf/event.h): the
 * build-id of the file a task mapped. The id is zero-padded to 20 bytes
 * and its size is in the byte after it (with the misc bit above; older
 * records have no size: 20); the name is NUL-padded to PERFDATA_NAME_ALIGN.
 */
struct perf_record_header_build_id {
	struct perf_event_header header;
	int32_t		pid;		/* -1: the host kernel */
	uint8_t		build_id[20];
	uint8_t		size;
	uint8_t		reserved[3];
	char		filename[];
};

/* perf pads the strings of its features and records to this: NAME_ALIGN
 * of tools/perf/util/header.h. */
#define PERFDATA_NAME_ALIGN		64

/* The compressor named by the compressed feature: perf's PERF_COMP_ZSTD
 * (tools/perf/util/compress.h, enum perf_compress_type). */
#define PERF_COMP_ZSTD			1

/* "PERFILE2" read as a little-endian u64: both the file and pipe header. */
#define PERFDATA_MAGIC			0x32454c4946524550ULL
/* The pipe format's header: the magic and its own size, 16. */
#define PERFDATA_PIPE_HEADER_LEN	16

/* Feature ids: bit numbers of the file header's feature bitmap. */
#define PERFDATA_FEAT_TRACING_DATA	1
#define PERFDATA_FEAT_BUILD_ID		2
#define PERFDATA_FEAT_HOSTNAME		3
#define PERFDATA_FEAT_OSRELEASE		4
#define PERFDATA_FEAT_VERSION		5
#define PERFDATA_FEAT_ARCH		6
#define PERFDATA_FEAT_NRCPUS		7
#define PERFDATA_FEAT_CPUDESC		8
#define PERFDATA_FEAT_CPUID		9
#define PERFDATA_FEAT_TOTAL_MEM		10
#define PERFDATA_FEAT_CMDLINE		11
#define PERFDATA_FEAT_EVENT_DESC	12
#define PERFDATA_FEAT_CPU_TOPOLOGY	13
#define PERFDATA_FEAT_NUMA_TOPOLOGY	14
#define PERFDATA_FEAT_PMU_MAPPINGS	16
#define PERFDATA_FEAT_GROUP_DESC	17
#define PERFDATA_FEAT_SAMPLE_TIME	21
#define PERFDATA_FEAT_CLOCKID		23
#define PERFDATA_FEAT_COMPRESSED	27
#define PERFDATA_FEAT_CLOCK_DATA	29
/* ids we may write are below this; perf's bitmap has 256 bits */
#define PERFDATA_FEAT_MAX		32
#define PERFDATA_FEAT_BITS		256

#endif

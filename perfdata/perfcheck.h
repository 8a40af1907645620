/*
 * perfcheck: is a record of a perf.data file one that perf reads whole?
 * The body of every record is checked against the file's attrs as perf's
 * parser reads it (tools/perf/util/evsel.c, session.c): the event a
 * record belongs to (its id), every field of a sample's sample_type up
 * to its callchain, raw, branch-stack, register and stack lengths, which
 * must fill the record exactly, the sample_id trailer of the other
 * kernel records, their sizes and the strings inside them, the few
 * record types of perf's own that our files hold, and the payload of
 * each PERF_RECORD_COMPRESSED, which must decode (one zstd stream per
 * file, as perf reads it) into whole records that pass the same checks.
 *
 * Salvage cuts a .partial before the first record that fails, so that
 * what it keeps is a file perf reads without "failed to process"; the
 * same walk counts a finished file's samples and their times for its
 * manifest, inside compressed records too.
 */
#ifndef PERFSPILL_PERFCHECK_H
#define PERFSPILL_PERFCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"

struct perfcheck;

/* What the walk found in the records it kept. */
struct perfcheck_stats {
	uint64_t	 records;	/* compressed ones and those inside */
	uint64_t	 samples;
	uint64_t	 lost;		/* PERF_RECORD_LOST's counts */
	uint64_t	 lost_samples;	/* PERF_RECORD_LOST_SAMPLES' */
	uint64_t	 first, last;	/* sample times; 0: none */
	uint64_t	 raw;		/* bytes decoded from COMPRESSED... */
	uint64_t	 compressed;	/* ...and the records' own bytes */
};

/*
 * The checker of the file whose first len bytes buf holds: its attrs
 * and ids (as h places them), and of the features in feat (size 0:
 * none) those that shape records: nrcpus (a CPU number must be below
 * it) and compressed (how much one record may decode to). NULL with
 * errno: EINVAL when the attrs cannot be read, ENOMEM.
 */
struct perfcheck *perfcheck_create(const uint8_t *buf, uint64_t len,
		    const struct perfdata_header *h,
		    const struct perfdata_section *feat);
void		 perfcheck_destroy(struct perfcheck *);
/*
 * The file is perfspilld's own (salvage): the record types of perf
 * record's own that a perf.data file may hold (ID_INDEX, THREAD_MAP,
 * CPU_MAP, STAT*, EVENT_UPDATE, TIME_CONV, HEADER_FEATURE) fail as any
 * type our files never hold. Their bodies are not checked, and perf
 * fails on some (a fuzzed partial's EVENT_UPDATE: "failed to process
 * type: 78"): in a partial of ours they are damage.
 */
void		 perfcheck_only_ours(struct perfcheck *);

/*
 * Walk the records of buf[off..len) and return where perf's reading of
 * them may end: after the last record before the first that fails (or
 * that the end of buf cuts), and never inside a run of compressed
 * records that leaves a record half decoded. st (zeroed by the caller)
 * adds up the records kept. Call once per checker: the zstd stream goes
 * on from where it was.
 */
uint64_t	 perfcheck_walk(struct perfcheck *, const uint8_t *buf,
		    uint64_t len, uint64_t off, struct perfcheck_stats *st);

/*
 * A reader of the records (perfspill-flame's perfread): fn sees each
 * record the walk finds right, a compressed record's decoded ones in its
 * place, with the index of the attr it belongs to (0 for perf's own
 * records). fn's -1 stops the walk before that record, as a failed check
 * would ("stopped by its reader").
 */
typedef int	(*perfcheck_visit_fn)(void *, const uint8_t *rec, size_t size,
		    size_t attr);
void		 perfcheck_visit(struct perfcheck *, perfcheck_visit_fn,
		    void *);
/* A sample's fields, as the check found them: valid while fn sees the
 * sample (a PERF_RECORD_SAMPLE) and until the next record. */
struct perfcheck_sample {
	uint64_t	 ip, time, period, cgroup;
	uint32_t	 pid, tid, cpu;		/* cpu UINT32_MAX: none */
	const uint8_t	*callchain;		/* nr u64s, maybe unaligned
						 * (after a COMPRESSED record);
						 * NULL: none */
	uint64_t	 nr;			/* its entries */
	const uint8_t	*raw;			/* PERF_SAMPLE_RAW's bytes, maybe
						 * unaligned; NULL: none */
	uint32_t	 raw_size;
	/* REGS_USER and STACK_USER (raw DWARF samples), maybe unaligned */
	const uint8_t	*regs;			/* popcount(regs_mask) u64s;
						 * NULL: none (or ABI_NONE) */
	uint64_t	 abi, regs_mask;	/* the record's, the attr's */
	const uint8_t	*stack;			/* NULL: none */
	uint64_t	 stack_size;		/* its dyn_size */
};
const struct perfcheck_sample *perfcheck_sample_fields(
		    const struct perfcheck *);
/* The time of the record fn sees: a sample's, or another kernel
 * record's sample_id time; 0 when it has none. */
uint64_t	 perfcheck_record_time(const struct perfcheck *);

/* The file's attrs, as read at create: how many, and attr i's fields
 * (i < perfcheck_nattrs). */
size_t		 perfcheck_nattrs(const struct perfcheck *);
uint64_t	 perfcheck_sample_type(const struct perfcheck *, size_t);

/* Why the walk stopped: "the end of the data", or the first record
 * that fails, its offset, type and what is wrong with it. */
const char	*perfcheck_why(const struct perfcheck *);

#endif

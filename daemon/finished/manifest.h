/*
 * manifest: NAME.data.json beside each finished NAME.data, so that a fleet
 * store indexes files without parsing perf's format. It is written after
 * the data file got its final name (temp file, fsync, rename): the facts
 * (samples, build-ids) are only complete once the file is, and a watcher
 * that sees the manifest finds the data file already whole.
 */
#ifndef PERFSPILL_MANIFEST_H
#define PERFSPILL_MANIFEST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <json-c/json.h>

#include "config.h"
#include "perfdata/beside.h"

/* What the daemon knows of one finished file. */
struct manifest_facts {
	const char		*name;		/* NAME.data, in the output dir */
	const char		*host;
	const char		*session;	/* "default", a name; NULL: not
						 * known (salvaged) */
	unsigned int		 seq;
	uint64_t		 bytes;
	uint64_t		 samples;
	uint64_t		 lost;		/* PERF_RECORD_LOST */
	uint64_t		 lost_samples;	/* PERF_RECORD_LOST_SAMPLES */
	/* call_graph compact: samples unwound, and left raw */
	int			 compact;
	uint64_t		 unwound, raw_samples;
	uint64_t		 time_first;	/* perf clock, ns; 0: unknown */
	uint64_t		 time_last;
	time_t			 opened;	/* wall clock */
	time_t			 finished;
	const struct config	*cfg;		/* the recording's, or NULL */
	const uint8_t		*buildids;	/* HEADER_BUILD_ID records */
	size_t			 buildids_len;
	int			 salvaged;	/* from a .partial after a crash */
	/* a flight recording's snapshot: what took it ("command",
	 * "SIGUSR2", "psi:cpu"); NULL for any other file */
	const char		*trigger;
	/* NAME.perf-maps.tar beside it (jitcopy.h): the processes whose
	 * JIT maps it holds; n 0: none */
	const uint32_t		*jit_pids;
	size_t			 jit_n;
};

/* perfspill-flame's folded companion of NAME: NAME.folded. Made and read
 * by that tool (flame/companion.c), removed with NAME by the daemon. */
#define MANIFEST_FOLDED_SUFFIX	BESIDE_FOLDED_SUFFIX

/* The JIT maps of NAME's processes: NAME.perf-maps.tar (jitcopy.h). */
#define MANIFEST_JITMAPS_SUFFIX	BESIDE_JITMAPS_SUFFIX

/* A file was finished, by a recording or by salvage: its facts (valid
 * during the call), whole 1 when it got its final name f->name. The one
 * hook that writes the manifest and registers the hand-off. */
typedef void (*manifest_file_cb)(const struct manifest_facts *f, int whole,
    void *);

/* The manifest's JSON (a new reference), or NULL without memory. */
json_object	*manifest_build(const struct manifest_facts *);
/* [{"build_id": hex, "path": name}] of HEADER_BUILD_ID records, one per
 * (id, path); a malformed record ends the walk. */
json_object	*manifest_buildids(const uint8_t *, size_t);
/* Write NAME.json into dirfd atomically; 0, or -1 with errno. */
int		 manifest_write(int dirfd, const struct manifest_facts *);
/* ...of a manifest built before (manifest_build): the facts of a file
 * are taken when it finishes, its JIT maps added once copied. */
int		 manifest_write_built(int dirfd, const char *name,
		    json_object *);
/* Sets a built manifest's "perf_maps" to f's JIT maps (jit_pids). */
void		 manifest_set_jitmaps(json_object *,
		    const struct manifest_facts *f);
/* NAME.json for NAME into buf; -1 when it does not fit. */
int		 manifest_name(const char *name, char *buf, size_t len);
/* Removes what describes NAME once NAME is gone: its manifest and its
 * companions (folded stacks, JIT maps; any may be missing). */
void		 manifest_unlink_beside(int dirfd, const char *name);

#endif

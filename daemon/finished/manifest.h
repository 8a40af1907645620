/*
 * manifest: NAME.data.json beside each finished NAME.data, so that a fleet
 * store indexes files without parsing perf's format. It is written after
 * the data file got its final name (temp file, fsync, rename): the facts
 * (samples, build-ids) are only complete once the file is, and a watcher
 * that sees the manifest finds the data file already whole.
 *
 * Threads: the loop calls every function here (a finished file's hook,
 * a JIT copy's end, retention, a hand-off); manifest_name keeps no
 * state, and the file worker's salvage calls it too.
 */
#ifndef PERFSPILL_MANIFEST_H
#define PERFSPILL_MANIFEST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <json-c/json.h>

#include "perfdata/beside.h"
#include "record-finish.h"

/* perfspill-flame's folded companion of NAME: NAME.folded. Made and read
 * by that tool (flame/companion.c), removed with NAME by the daemon. */
#define MANIFEST_FOLDED_SUFFIX	BESIDE_FOLDED_SUFFIX

/* The JIT maps of NAME's processes: NAME.perf-maps.tar (jitcopy.h). */
#define MANIFEST_JITMAPS_SUFFIX	BESIDE_JITMAPS_SUFFIX

/* The manifest's JSON (a new reference), or NULL without memory. */
json_object	*manifest_build(const struct record_file_facts *);
/* [{"build_id": hex, "path": name}] of HEADER_BUILD_ID records, one per
 * (id, path); a malformed record ends the walk. */
json_object	*manifest_buildids(const uint8_t *, size_t);
/* Write NAME.json into dirfd atomically; 0, or -1 with errno. */
int		 manifest_write(int dirfd, const struct record_file_facts *);
/* ...of a manifest built before (manifest_build): the facts of a file
 * are taken when it finishes, its JIT maps added once copied. */
int		 manifest_write_built(int dirfd, const char *name,
		    json_object *);
/* Sets a built manifest's "perf_maps" to f's JIT maps (jit_pids). */
void		 manifest_set_jitmaps(json_object *,
		    const struct record_file_facts *f);
/* NAME.json for NAME into buf; -1 when it does not fit. */
int		 manifest_name(const char *name, char *buf, size_t len);
/* Removes what describes NAME once NAME is gone: its manifest and its
 * companions (folded stacks, JIT maps; any may be missing). */
void		 manifest_unlink_beside(int dirfd, const char *name);

#endif

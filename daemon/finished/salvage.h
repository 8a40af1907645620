/*
 * salvage: the .partial files a crashed daemon (kill -9, power loss) left
 * in the output directory, or a full disk left unfinished. Each is walked
 * record by record from the start of its data section, cut after its
 * last whole record, finished with the header and the features its head
 * holds (perfdata.h), fsync'd and renamed to its final name so that perf
 * reads it. What cannot be saved is logged and kept under a .damaged
 * name: nothing is deleted silently. A finished file a crash left without
 * its manifest is read for one.
 *
 * Reading a leftover takes as long as its size (a second a gigabyte or
 * more): it runs on the file worker (fileworker.h), never on the loop,
 * so that the control socket answers meanwhile (issue 40). The daemon
 * lists the leftovers at start (a readdir), opens its socket, and each
 * one's facts come back to the loop when its salvage is done.
 */
#ifndef PERFSPILL_SALVAGE_H
#define PERFSPILL_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

#include "fileworker.h"
#include "manifest.h"

/* A leftover found by salvage_list. */
typedef void	(*salvage_found_fn)(void *arg, const char *name);
/* A leftover's salvage is done (in the loop): f, the facts of the file
 * it made whole (whole, named f->name, for its manifest and hand-off
 * like any finished file), or NULL when nothing was saved (logged: a
 * .partial stays for the next try, or is kept as .damaged). */
typedef void	(*salvage_done_fn)(void *arg, const char *name,
		    const struct record_file_facts *f);

/* Called in the loop. */
/* Every leftover of dirfd to found: each *.data.partial (no writer may
 * hold it) and each finished file without its manifest; how many, or
 * -1 (logged) when the directory cannot be read. */
int		salvage_list(int dirfd, salvage_found_fn found, void *arg);
/* Queues the salvage of the leftover name of dirfd on fw (held there
 * under its final name), then done(arg) in the loop. The test hook
 * PERFSPILL_TEST_SALVAGE_HOLD=PATH (read here) holds the salvage before
 * the file is read: the worker creates PATH and waits until it is
 * removed. 0, or -1 without memory. */
int		salvage_submit(struct fileworker *fw, int dirfd,
		    const char *name, salvage_done_fn done, void *arg);

#endif

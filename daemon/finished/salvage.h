/*
 * salvage: the .partial files a crashed daemon (kill -9, power loss) left
 * in the output directory. Each is walked record by record from the start
 * of its data section, cut after its last whole record, finished with
 * the header and the features its head holds (perfdata.h), fsync'd and
 * renamed to its final name so that perf reads it. What cannot be saved
 * is logged and kept under a .damaged name: nothing is deleted silently.
 */
#ifndef PERFSPILL_SALVAGE_H
#define PERFSPILL_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

/*
 * Salvage every *.data.partial of dirfd, and give a finished file a
 * crash left without its manifest one (and its hand-off); returns how
 * many .partial files were saved. Each file salvage finished goes to
 * done with the facts read back from it (whole 1), for its manifest and
 * hand-off like any finished file, as a recording's files go to
 * record_on_file_done's.
 */
int		salvage_dir(int dirfd, manifest_file_cb, void *);
/* Salvage one .partial (no writer may hold it); 0: saved as its final
 * name, -1: not (logged; it stays for the next try). */
int		salvage_file(int dirfd, const char *partial, manifest_file_cb,
		    void *);

#endif

/*
 * buildid: the build-id of an ELF file, read as perf record reads it
 * (the NT_GNU_BUILD_ID note), and the PERF_RECORD_HEADER_BUILD_ID that
 * names a file and its id in a perf.data file. Pure reading and record
 * building, no state: the daemon's table of mapped files and their ids
 * is daemon/record/buildid.h.
 */
#ifndef PERFSPILL_PERFDATA_BUILDID_H
#define PERFSPILL_PERFDATA_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/sbuf.h"

#define BUILDID_MAX		20	/* the most an MMAP2 record holds */

/*
 * The NT_GNU_BUILD_ID note of an ELF file: from the program headers
 * (PT_NOTE), else from the section headers (SHT_NOTE). 0 with the id
 * and its size (1..BUILDID_MAX), or -1 when the file has none.
 */
int	buildid_elf(int fd, uint8_t *id, size_t *len);
/* The same from a run of notes (align 4 or 8), as in /sys/kernel/notes. */
int	buildid_notes(const uint8_t *notes, size_t size, size_t align,
	    uint8_t *id, size_t *len);
/* Append one PERF_RECORD_HEADER_BUILD_ID (perf's layout, the name padded
 * to 64 bytes as perf writes it). 0, or -1 when memory runs out. */
int	buildid_record(struct sbuf *, int32_t pid, uint16_t misc,
	    const uint8_t *id, size_t len, const char *name);

#endif

/*
 * salvage: the .partial files a crashed daemon (kill -9, power loss) left
 * in the output directory. Each is walked record by record from the pipe
 * header, cut after its last whole record, fsync'd and renamed to its
 * final name so that perf reads it. What cannot be saved is logged and
 * kept under a .damaged name: nothing is deleted silently.
 */
#ifndef PERFSPILL_SALVAGE_H
#define PERFSPILL_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid prefix of a pipe-format stream of len bytes: the
 * end of its last whole record (0 when the header itself is bad). */
uint64_t	salvage_valid_len(const uint8_t *buf, uint64_t len);

/* Salvage every *.data.partial of dirfd; returns how many were saved. */
int		salvage_dir(int dirfd);

#endif

/*
 * otlpout: the trace files a run picked as one OTLP profiles request
 * (otlp.h), written as protobuf bytes (no gzip: what protoc --decode
 * reads; ship-otlp.sh gzips it for the wire). Each file is read again
 * (perfread, symbolize, the JIT maps beside it), as for pprof: a
 * resource per host (host.name, and from the file's manifest host.id,
 * host.arch, os.type and os.version), a profile per event of it, and on
 * each sample process.pid, thread.id, process.executable.name (the
 * thread's comm), process.linux.cgroup and container.id (when the cgroup
 * path names a container's 64-hex id). The filters, the time range and
 * the frame names are the folded output's, so that the stacks and their
 * counts are the same.
 */
#ifndef PERFSPILL_OTLPOUT_H
#define PERFSPILL_OTLPOUT_H

#include <stddef.h>
#include <stdint.h>

#include "opts.h"
#include "outread.h"
#include "pick.h"

/* Writes the request of l's files that cover marks (of host only when
 * it is not NULL) to path ("-": stdout); 0, or -1 with a message
 * printed. A file that cannot be read is named and left out. */
int	otlpout_write(const struct pick_list *l, const enum pick_cover *cover,
	    const struct opts *o, const char *host, const char *path,
	    struct outread_stats *);

/* The container id a cgroup path names (docker-ID.scope, cri-containerd-
 * ID.scope, crio-ID, libpod-ID, /docker/ID, kubepods .../ID: the last
 * run of 64 hex digits in a component), into buf (65 bytes); 0, or -1
 * when it names none. */
int	otlpout_container(const char *cgroup, char *buf, size_t len);

#endif

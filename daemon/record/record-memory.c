/*
 * record-memory: what a recording will hold, computed from its settings
 * before anything of it is allocated, so that a start the machine (or
 * the daemon's cgroup) cannot hold is refused instead of getting the
 * daemon OOM-killed. This is the one place that knows the sizes of a
 * recording's buffers: a new buffer in the drain is a new line here.
 *
 * The formula (docs/protocol.md, "Memory"), with P the page size, R =
 * mmap_pages x P the ring's data, B = R plus an 8-byte FINISHED_ROUND and
 * 4 KiB of room for the direct stream's lead (with -z: the compressed
 * bound of R instead of R):
 *
 *   per CPU   ring     (1 + mmap_pages) x P     the kernel's ring
 *             cblocks  cblocks x B              the drain's AIO buffers
 *   once      drain    R                        the copy without our samples
 *             compress (-z only) bound(R)       serial mode's output
 *                      + 2 x zstd stream        the drain's, a rotation's
 *             window   (mode flight) 2 x window_bytes + its task store
 *   total = CPUs x (ring + cblocks) + drain + compress + window
 *
 * CPUs are the online ones at the start; a CPU that comes online later
 * adds its per-CPU share. A rotation's preamble (the /proc walk) and the
 * daemon's own bookkeeping are not counted here: the budget keeps room
 * for them (session.c).
 */
#include <unistd.h>

#include "record-int.h"

void
record_memory(const struct config *cfg, size_t ncpus,
    struct record_memory *m)
{
	uint64_t	 page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t	 ring = cfg->mmap_pages * page, cap;

	cap = (cfg->compression > 0 ? compress_bound(ring) : ring) +
	    RECORD_ROUND_LEN + RECORD_LEAD_MAX;
	m->ncpus = ncpus;
	m->ring = ring + page;
	m->cblocks = cfg->cblocks * cap;
	m->per_cpu = m->ring + m->cblocks;
	m->drain = ring;
	m->compress = cfg->compression > 0 ? compress_bound(ring) +
	    2 * (uint64_t)compress_memory(cfg->compression) : 0;
	/* a new window fills while the last is being written */
	m->window = cfg->flight ? flight_memory_max(cfg->window_bytes) : 0;
	m->total = m->per_cpu * ncpus + m->drain + m->compress + m->window;
}

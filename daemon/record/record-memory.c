/*
 * record-memory computes what a recording will hold from its settings,
 * before anything of it is allocated, so that a start the machine (or the
 * daemon's cgroup) cannot hold is refused instead of getting the daemon
 * OOM-killed. This is the one place that knows the sizes of a recording's
 * buffers: a new buffer in the drain is a new line here.
 *
 * The formula (docs/protocol.md, "Memory"), with P the page size, R =
 * mmap_pages x P the ring's data, C = R (with -z: the compressed bound
 * of R) and B = C plus an 8-byte FINISHED_ROUND:
 *
 *   per CPU   ring     (1 + mmap_pages) x P     the kernel's ring
 *             cblocks  cblocks x B              the buffered path's AIO
 *                                               buffers
 *   once      pool     K blocks of k units      the direct path's blocks
 *                      U = max(1 MiB, 2 B)      every ring shares, at the
 *                      + 12 KiB                 bound a burst grows them
 *                      (record_pool_block)      to: n = 2 x cblocks units
 *                                               (2 to 16) merged k at a
 *                                               time, k = min(n / 2,
 *                                               ceil(4 MiB / U)) (at least
 *                                               1), into a base of n / k
 *                                               blocks held throughout;
 *                                               K = 4 x the base, at most
 *                                               64 MiB past it
 *                                               (record_pool_shape)
 *             drain    R                        the copy without our samples
 *             compress (-z only) bound(R)       serial mode's output
 *                      + 2 x zstd stream        the drain's, a rotation's
 *             window   (mode flight) 2 x window_bytes + its task store
 *   buffers = CPUs x cblocks buffered; direct: the pool and that (a
 *             recording whose file system refuses O_DIRECT at a write, or
 *             whose cblocks go from 0 up while a file is buffered, makes
 *             per-CPU cblocks beside its pool); mode flight: none
 *   total = CPUs x ring + buffers + drain + compress + window
 *
 * A DWARF call graph (call_graph "dwarf,SIZE") adds no buffer: its
 * samples, SIZE bytes larger, pass through the rings and buffers above.
 * call_graph "compact" adds the unwinding worker's queue (16 MiB + 2 x
 * CPUs x R: record_compact_bound) and its binaries' CFI (the unwinder's
 * cache, at most 64 MiB: RECORD_COMPACT_CACHE); its bit a pid (512 KiB)
 * is left to the budget's room for the daemon itself.
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
	uint64_t	 ring = cfg->mmap_pages * page, chunk, all;
	struct record_pool_shape pool;

	chunk = (cfg->compression > 0 ? compress_bound(ring) : ring) +
	    WRITER_ROUND_LEN;
	m->ncpus = ncpus;
	m->ring = ring + page;
	m->cblocks = cfg->cblocks * chunk;
	m->per_cpu = m->ring + m->cblocks;
	record_pool_shape(cfg->cblocks, (size_t)chunk, 0, 0, &pool);
	m->pool = cfg->cblocks == 0 ? 0 : pool.bound * (uint64_t)pool.cap;
	all = m->cblocks * ncpus;
	/* the direct path makes the pool, and per-CPU cblocks too once a
	 * file of the recording is buffered (O_DIRECT refused at a write,
	 * cblocks raised from 0 while a buffered file is current): both
	 * are held from then on until the stop */
	m->buffers = cfg->direct_io ? m->pool + all : all;
	if (cfg->flight) {
		/* no file between snapshots: no cblocks, no pool (a
		 * snapshot's writes take buffers of their own, counted in
		 * the window) */
		m->cblocks = m->pool = m->buffers = 0;
		m->per_cpu = m->ring;
	}
	m->drain = ring;
	m->compress = cfg->compression > 0 ? compress_bound(ring) +
	    2 * (uint64_t)compress_memory(cfg->compression) : 0;
	/* a new window fills while the last is being written */
	m->window = cfg->flight ? flight_memory_max(cfg->window_bytes) : 0;
	m->compact = cfg->callgraph == CONFIG_CG_COMPACT ?
	    record_compact_bound(cfg, ncpus) + RECORD_COMPACT_CACHE : 0;
	m->total = m->ring * ncpus + m->buffers + m->drain + m->compress +
	    m->window + m->compact;
}

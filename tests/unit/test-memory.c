/*
 * record_memory: what a start will hold, the formula docs/protocol.md
 * states, worked by hand for the shipped defaults and the case.
 */
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "compress.h"
#include "config.h"
#include "record.h"
#include "record-pool.h"

int
main(void)
{
	struct config		 cfg;
	struct record_memory	 m;
	uint64_t		 page = (uint64_t)sysconf(_SC_PAGESIZE);

	/* the defaults: 128 pages, 2 cblocks, no compression, 2 CPUs, the
	 * direct path: the pool at its bound (4 blocks of 1 MiB + 8 KiB
	 * held, 16 under a burst), and per-CPU cblocks should a file of the
	 * recording be buffered */
	config_defaults(&cfg);
	record_memory(&cfg, 2, &m);
	CHECK_U64(m.ring, 129 * page);
	CHECK_U64(m.cblocks, 2 * (128 * page + 8));
	CHECK_U64(m.per_cpu, m.ring + m.cblocks);
	CHECK_U64(m.drain, 128 * page);
	CHECK_U64(m.compress, 0);
	CHECK_U64(m.buffers, m.pool + 2 * m.cblocks);
	CHECK_U64(m.total, 2 * m.ring + m.buffers + m.drain);
	CHECK_EQ(m.ncpus, 2);
	if (page == 4096) {	/* 19.8 MiB, what status shows */
		CHECK_U64(m.pool, 16 * (1024 * 1024 + 16384));
		CHECK_U64(m.total, 20717600);
	}
	/* the pool does not grow with the CPUs; per-CPU cblocks do */
	record_memory(&cfg, 192, &m);
	CHECK_U64(m.pool, 16 * (uint64_t)record_pool_block(128 * page + 8));
	CHECK_U64(m.buffers, m.pool + 192 * m.cblocks);
	if (page == 4096) {
		/* the defaults at 2, 192 and 384 CPUs (docs/protocol.md):
		 * 19.8 MiB, 305.5 MiB, 594.3 MiB; rings and the per-CPU
		 * cblocks a buffered file would make grow, the pool not */
		record_memory(&cfg, 2, &m);
		CHECK_U64(m.total, 20717600);
		record_memory(&cfg, 192, &m);
		CHECK_U64(m.total, 320343040);
		record_memory(&cfg, 384, &m);
		CHECK_U64(m.total, 623122432);
		/* a small ring: blocks of the least size, 1 MiB; 8 held,
		 * 32 under a burst */
		cfg.mmap_pages = 16;
		cfg.cblocks = 4;
		record_memory(&cfg, 64, &m);
		CHECK_U64(m.pool, 32 * (1024 * 1024 + 16384));
		/* a large one: blocks of two rings, 2 held, 8 at most (48 MiB
		 * past the base, within the 64 the bound allows) */
		cfg.mmap_pages = 1024;
		cfg.cblocks = 1;
		record_memory(&cfg, 64, &m);
		CHECK_U64(m.pool, 8 * (8 * 1024 * 1024 + 16384));
		/* larger still: no more than 64 MiB past the base, so a
		 * block of 64 MiB does not grow at all */
		cfg.mmap_pages = 8192;
		record_memory(&cfg, 2, &m);
		CHECK_U64(m.pool, 2 * (uint64_t)record_pool_block(
		    8192 * page + 8));
		config_defaults(&cfg);
	}
	/* the buffered path holds its cblocks only */
	cfg.direct_io = 0;
	record_memory(&cfg, 2, &m);
	CHECK_U64(m.buffers, 2 * m.cblocks);
	CHECK_U64(m.total, 2 * m.per_cpu + m.drain);
	config_defaults(&cfg);

	/* -m 65536 --cblocks 8 on 2 CPUs: 12.8 GiB, not what a 1 GiB
	 * cgroup holds (issue: the daemon was OOM-killed) */
	cfg.mmap_pages = 65536;
	cfg.cblocks = 8;
	record_memory(&cfg, 2, &m);
	CHECK_U64(m.cblocks, 8 * (65536 * page + 8));
	/* 16 blocks of two rings each: twice the per-CPU cblocks of 2 CPUs */
	CHECK_U64(m.buffers, m.pool + 2 * m.cblocks);
	CHECK(m.pool >= 16 * 2 * (65536 * page + 8));
	CHECK_U64(m.total, 2 * 65537 * page + m.buffers + 65536 * page);
	CHECK(m.total > (UINT64_C(1) << 30));

	/* cblocks 0: the ring and the drain's copy only */
	cfg.cblocks = 0;
	cfg.mmap_pages = 16;
	record_memory(&cfg, 4, &m);
	CHECK_U64(m.pool, 0);
	CHECK_U64(m.total, 4 * 17 * page + 16 * page);

	/* -z: each cblock takes the compressed bound, and the streams */
	if (compress_available()) {
		cfg.cblocks = 1;
		cfg.compression = 3;
		record_memory(&cfg, 1, &m);
		CHECK_U64(m.cblocks, compress_bound(16 * page) + 8);
		CHECK_U64(m.compress, compress_bound(16 * page) +
		    2 * (uint64_t)compress_memory(3));
		CHECK(compress_memory(3) > 0);
		CHECK(compress_memory(19) > compress_memory(3));
	}
	/* mode flight: the window twice over and its task store */
	config_defaults(&cfg);
	cfg.flight = 1;
	cfg.window_bytes = UINT64_C(64) << 20;
	record_memory(&cfg, 2, &m);
	CHECK(m.window >= 2 * cfg.window_bytes);
	/* no file between snapshots: no cblocks, no pool */
	CHECK_U64(m.buffers, 0);
	CHECK_U64(m.pool, 0);
	CHECK_U64(m.total, 2 * m.ring + m.buffers + m.drain + m.window);
	return check_exit();
}

/*
 * test-cblock: the pure parts of the AIO control blocks: which one a
 * drain takes, what a completion means, and the request priorities.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cblock.h"
#include "check.h"

static void
test_pick(void)
{
	struct cblock	 cbs[4];

	memset(cbs, 0, sizeof(cbs));
	CHECK_EQ(cblock_pick(cbs, 1), 0);
	CHECK_EQ(cblock_pick(cbs, 4), 0);

	/* the first free one, not the last freed one */
	cbs[0].busy = 1;
	cbs[2].busy = 1;
	CHECK_EQ(cblock_pick(cbs, 4), 1);
	cbs[1].busy = 1;
	CHECK_EQ(cblock_pick(cbs, 4), 3);
	/* n bounds the search: cbs[3] is free but not among the first 3 */
	CHECK_EQ(cblock_pick(cbs, 3), -1);
	cbs[3].busy = 1;
	CHECK_EQ(cblock_pick(cbs, 4), -1);
	cbs[2].busy = 0;
	CHECK_EQ(cblock_pick(cbs, 4), 2);

	/* none at all (cblocks = 0 is the serial mode) */
	CHECK_EQ(cblock_pick(cbs, 0), -1);
}

static void
test_step(void)
{
	struct cblock	 cb;

	memset(&cb, 0, sizeof(cb));
	cb.len = 4096;

	/* still queued: nothing changes */
	CHECK_EQ(cblock_step(&cb, EINPROGRESS, 0), CBLOCK_INPROGRESS);
	CHECK_EQ(cb.done, 0);
	CHECK_EQ(cb.err, 0);

	/* all of it at once */
	CHECK_EQ(cblock_step(&cb, 0, 4096), CBLOCK_DONE);
	CHECK_EQ(cb.done, 4096);
	CHECK_EQ(cb.err, 0);

	/* a partial write, then the rest */
	memset(&cb, 0, sizeof(cb));
	cb.len = 4096;
	CHECK_EQ(cblock_step(&cb, 0, 1000), CBLOCK_RESUBMIT);
	CHECK_EQ(cb.done, 1000);
	CHECK_EQ(cblock_step(&cb, EINPROGRESS, 0), CBLOCK_INPROGRESS);
	CHECK_EQ(cb.done, 1000);
	CHECK_EQ(cblock_step(&cb, 0, 3000), CBLOCK_RESUBMIT);
	CHECK_EQ(cb.done, 4000);
	CHECK_EQ(cblock_step(&cb, 0, 96), CBLOCK_DONE);
	CHECK_EQ(cb.done, 4096);
	CHECK_EQ(cb.err, 0);

	/* an error keeps its errno and makes no progress */
	memset(&cb, 0, sizeof(cb));
	cb.len = 4096;
	CHECK_EQ(cblock_step(&cb, ENOSPC, -1), CBLOCK_FAILED);
	CHECK_EQ(cb.err, ENOSPC);
	CHECK_EQ(cb.done, 0);
	memset(&cb, 0, sizeof(cb));
	cb.len = 4096;
	cb.done = 512;
	CHECK_EQ(cblock_step(&cb, EIO, -1), CBLOCK_FAILED);
	CHECK_EQ(cb.err, EIO);
	CHECK_EQ(cb.done, 512);

	/* a negative return without an errno is still a failure */
	memset(&cb, 0, sizeof(cb));
	cb.len = 4096;
	CHECK_EQ(cblock_step(&cb, 0, -1), CBLOCK_FAILED);
	CHECK(cb.err != 0);

	/* 0 bytes written: resubmitting would spin, so it fails */
	memset(&cb, 0, sizeof(cb));
	cb.len = 4096;
	CHECK_EQ(cblock_step(&cb, 0, 0), CBLOCK_FAILED);
	CHECK(cb.err != 0);
	CHECK_EQ(cb.done, 0);
}

static void
test_init(void)
{
	struct cblock	 cb;
	int		 i;

	/* aio_reqprio is 0 on every request: test-cblock-reap checks it */
	for (i = 0; i < 4; i++) {
		CHECK_EQ(cblock_init(&cb, 64), 0);
		CHECK(cb.buf != NULL);
		CHECK_EQ(cb.cap, 64);
		CHECK_EQ(cb.busy, 0);
		CHECK_EQ(cb.len, 0);
		cblock_finish(&cb);
		CHECK(cb.buf == NULL);
	}

	/* destroy functions take NULL */
	cblock_finish(NULL);
}

/*
 * A cblock's buffer is resident before the first drain: pages faulted in
 * by that drain's copy cost more than a big ring lasts at a high rate.
 * (memset(0) after malloc did not do it: the compiler made it calloc.)
 */
static void
test_buffer_resident(void)
{
	struct cblock	 cb;
	size_t		 psz = (size_t)sysconf(_SC_PAGESIZE), len, i, missing = 0;
	uintptr_t	 start, end;
	unsigned char	*vec;

	CHECK_EQ(cblock_init(&cb, 4u << 20), 0);
	start = (uintptr_t)cb.buf & ~(uintptr_t)(psz - 1);
	end = ((uintptr_t)cb.buf + cb.cap + psz - 1) & ~(uintptr_t)(psz - 1);
	len = (size_t)(end - start) / psz;
	vec = malloc(len);
	CHECK(vec != NULL);
	if (vec != NULL && mincore((void *)start, end - start, vec) == 0) {
		for (i = 0; i < len; i++)
			missing += !(vec[i] & 1);
		CHECK_EQ(missing, 0);
	} else
		CHECK(!"mincore failed");
	free(vec);
	cblock_finish(&cb);
}

int
main(void)
{
	test_pick();
	test_step();
	test_init();
	test_buffer_resident();
	return check_exit();
}

/*
 * cpu: CPU-bound work with a small call tree (so callchains have depth),
 * THREADS threads doing WORK units each (a fixed batch); prints the wall
 * time of the batch in seconds on stdout.
 *
 *   cpu THREADS WORK
 *
 * Built with -fno-omit-frame-pointer, and every level noinline, so that
 * frame-pointer callchains (-g) see every level.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "batch.h"

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t
leaf(uint64_t x)
{
	int	 i;

	for (i = 0; i < 64; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) static uint64_t
mid_a(uint64_t x)
{
	return leaf(x) ^ leaf(x + 1);
}

__attribute__((noinline)) static uint64_t
mid_b(uint64_t x)
{
	return leaf(x) + mid_a(x >> 1);
}

__attribute__((noinline)) static uint64_t
recurse(uint64_t x, int depth)
{
	if (depth == 0)
		return (x & 1) ? mid_a(x) : mid_b(x);
	return recurse(x + (uint64_t)depth, depth - 1) ^ x;
}

static void *
worker(void *arg)
{
	uint64_t	 x = (uint64_t)(uintptr_t)arg;
	long		 i;

	for (i = 0; i < batch_count; i++)
		x = recurse(x, (int)(i % 8));
	sink = x;
	return NULL;
}

int
main(int argc, char **argv)
{
	return batch_threads(argc, argv, "cpu", worker);
}

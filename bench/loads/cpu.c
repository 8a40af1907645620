/*
 * cpu: CPU-bound work with a small call tree (so callchains have depth),
 * THREADS threads doing WORK units each (a fixed batch); prints the wall
 * time of the batch in seconds on stdout.
 *
 *   cpu THREADS WORK
 *
 * Built with -O1 -fno-omit-frame-pointer -fno-inline so that frame-pointer
 * callchains (-g) see every level.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long work;
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

	for (i = 0; i < work; i++)
		x = recurse(x, (int)(i % 8));
	sink = x;
	return NULL;
}

int
main(int argc, char **argv)
{
	struct timespec	 a, b;
	pthread_t	*t;
	int		 i, n;

	if (argc != 3) {
		fprintf(stderr, "usage: cpu THREADS WORK\n");
		return 2;
	}
	n = atoi(argv[1]);
	work = atol(argv[2]);
	if (n < 1 || work < 1 || (t = calloc((size_t)n, sizeof(*t))) == NULL)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker,
		    (void *)(uintptr_t)(i + 1)) != 0)
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}

/*
 * deepstack: the deep stacks of a whole machine, for the flame graph's
 * first screen (test_flame.py). Two threads spin for SECONDS of their
 * own CPU each:
 *   - the main thread in descend(), 80 calls deep: a real stack of known
 *     frames, deeper than a graph draws by default;
 *   - a second thread in a loop whose frame pointer leads the kernel's
 *     unwinder through a ring of made-up frames whose return addresses
 *     are mapped nowhere: what a binary built without frame pointers
 *     gives, up to perf_event_max_stack (127) frames of [unknown].
 * Built with frame pointers at -O0 (as flametarget), x86-64 only (the
 * made-up frames are its frame layout).
 *
 * deepstack SECONDS: prints "ready" when both threads run.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clocksecs.h"

#define DEPTH	80
#define RING	16

static volatile unsigned long	 sink;
static double			 secs;
static pthread_barrier_t	 start;

__attribute__((noinline)) static void
bottom(void)
{
	unsigned long	 i;

	while (clock_secs(CLOCK_THREAD_CPUTIME_ID) < secs)
		for (i = 0; i < 100000; i++)
			sink += i;
}

__attribute__((noinline)) static void
descend(int n)
{
	if (n > 0)
		descend(n - 1);
	else
		bottom();
	sink++;		/* no tail call: each level keeps its frame */
}

/* {next frame, return address}: what the unwinder reads at the frame
 * pointer. A ring: it walks until its depth limit. */
static uintptr_t	 ring[RING][2];

__attribute__((noinline)) static void
lost(void)
{
	unsigned long	 n;

	while (clock_secs(CLOCK_THREAD_CPUTIME_ID) < secs) {
		n = 50000000;
		/* rbp points into the ring while the loop runs; nothing
		 * here uses it, and it is restored before any call */
		__asm__ volatile(
		    "push %%rbp\n\t"
		    "mov %1, %%rbp\n\t"
		    "1: dec %0\n\t"
		    "jnz 1b\n\t"
		    "pop %%rbp"
		    : "+r"(n) : "r"(&ring[0][0]) : "cc", "memory");
	}
}

static void *
lost_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	lost();
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t	 t;
	int		 i;

	if (argc != 2 || (secs = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: deepstack SECONDS\n");
		return 2;
	}
	for (i = 0; i < RING; i++) {
		ring[i][0] = (uintptr_t)&ring[(i + 1) % RING][0];
		/* the first page: never mapped */
		ring[i][1] = 0x100 + (uintptr_t)i * 0x10;
	}
	pthread_barrier_init(&start, NULL, 2);
	if (pthread_create(&t, NULL, lost_thread, NULL) != 0)
		return 1;
	pthread_barrier_wait(&start);
	printf("ready\n");
	fflush(stdout);
	descend(DEPTH);
	pthread_join(t, NULL);
	return 0;
}

/*
 * offcpusleep: a known off-CPU profile for perfspill-flame --off-cpu
 * (test_offcpu.py). Each round sleeps 30 ms in wait_long and 10 ms in
 * wait_short, each through a helper of its own, so that a frame-pointer
 * unwind from the system call (libc's wrapper keeps no frame) still
 * passes through the wait_* that called it. It measures the time each
 * wait really took (a loaded machine wakes a sleeper late) and prints
 * both totals in ns at the end: "long N short M".
 *
 * usage: offcpusleep ROUNDS
 * Prints "ready" (then sleeps 200 ms, for the recording to see it) and
 * the totals.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void __attribute__((noinline))
nap_long(void)
{
	struct timespec	 ts = { 0, 30000000 };

	nanosleep(&ts, NULL);
}

static void __attribute__((noinline))
nap_short(void)
{
	struct timespec	 ts = { 0, 10000000 };

	nanosleep(&ts, NULL);
}

static uint64_t __attribute__((noinline))
wait_long(void)
{
	uint64_t	 t = now_ns();

	nap_long();
	return now_ns() - t;
}

static uint64_t __attribute__((noinline))
wait_short(void)
{
	uint64_t	 t = now_ns();

	nap_short();
	return now_ns() - t;
}

int
main(int argc, char **argv)
{
	struct timespec	 settle = { 0, 200000000 };
	uint64_t	 lng = 0, shrt = 0;
	long		 i, rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 25;

	printf("ready\n");
	fflush(stdout);
	nanosleep(&settle, NULL);
	for (i = 0; i < rounds; i++) {
		lng += wait_long();
		shrt += wait_short();
	}
	printf("long %llu short %llu\n", (unsigned long long)lng,
	    (unsigned long long)shrt);
	return 0;
}

/*
 * nofpstack: a stack no frame-pointer walk can follow, for the DWARF
 * call-graph tests (test_dwarf.py). Built -O2 -fomit-frame-pointer as
 * Debian builds its programs: main -> outer_fn -> middle_fn -> leaf_fn,
 * each kept a frame of its own (noinline, work after the call), the
 * leaf spinning for SECONDS of its own CPU.
 *
 * nofpstack SECONDS: prints "ready" and its pid, then spins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clocksecs.h"

static volatile unsigned long	 sink;
static double			 secs;

__attribute__((noinline, noclone)) static void
leaf_fn(void)
{
	unsigned long	 i;

	while (clock_secs(CLOCK_THREAD_CPUTIME_ID) < secs)
		for (i = 0; i < 100000; i++)
			sink += i;
}

__attribute__((noinline, noclone)) static void
middle_fn(int n)
{
	leaf_fn();
	sink += (unsigned long)n;	/* no tail call: the frame stays */
}

__attribute__((noinline, noclone)) static void
outer_fn(int n)
{
	middle_fn(n + 1);
	sink += (unsigned long)n;
}

int
main(int argc, char **argv)
{
	secs = argc > 1 ? atof(argv[1]) : 2.0;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	outer_fn(argc);
	sink++;
	return 0;
}

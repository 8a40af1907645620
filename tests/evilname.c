/*
 * evilname: a program whose names are an attacker's (test_flame_native.py).
 * It names itself ARGV[1] (prctl PR_SET_NAME: any bytes a comm may hold),
 * prints "ready", and spins SECONDS of CPU time in a function whose name
 * the test then patches in a copy's .strtab (the Q to a newline, the Z to
 * a ';'): perf script prints both raw.
 *
 * evilname COMM SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "clocksecs.h"

static volatile unsigned long sink;

/* the name the test patches; the symbol must not be static-folded away */
__attribute__((noinline)) void
evil_fnQINJECTED_ROOTZINJECTED_KERNEL_FN(unsigned long n);

__attribute__((noinline)) void
evil_fnQINJECTED_ROOTZINJECTED_KERNEL_FN(unsigned long n)
{
	unsigned long	 i;

	for (i = 0; i < n; i++)
		sink += i * 3;
}

int
main(int argc, char **argv)
{
	double	 secs;

	if (argc != 3) {
		fprintf(stderr, "usage: evilname COMM SECONDS\n");
		return 2;
	}
	secs = atof(argv[2]);
	if (argv[1][0] != '\0' && prctl(PR_SET_NAME, argv[1], 0, 0, 0) != 0) {
		perror("prctl");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (clock_secs(CLOCK_PROCESS_CPUTIME_ID) < secs)
		evil_fnQINJECTED_ROOTZINJECTED_KERNEL_FN(100000);
	return 0;
}

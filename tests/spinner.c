/*
 * spinner: a load with known function names for the integration tests.
 * spinner SECONDS spends about two thirds of its CPU in spin_alpha and a
 * third in spin_beta, called through spin_outer, so that perf script and
 * perf report -g can be checked for those names and that call tree.
 * SECONDS is CPU time, not wall time: on a busy machine it runs longer
 * and a cpu-clock recording still sees as many of its samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void
spin_alpha(unsigned long n)
{
	unsigned long	 i;

	for (i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) static void
spin_beta(unsigned long n)
{
	unsigned long	 i;

	for (i = 0; i < n; i++)
		sink ^= i * 13;
}

__attribute__((noinline)) static void
spin_outer(void)
{
	spin_alpha(2000000);
	spin_beta(1000000);
}

int
main(int argc, char *argv[])
{
	double		 secs = argc > 1 ? atof(argv[1]) : 2.0;
	struct timespec	 t0, t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	do {
		spin_outer();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) +
	    (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}

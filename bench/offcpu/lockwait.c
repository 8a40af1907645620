/*
 * lockwait: a lock-contended load for bench/offcpu. THREADS threads take
 * one mutex in turn, each holding it for about HOLD_US of spinning, so
 * that the others sleep on it (futex) most of the time.
 *
 * usage: lockwait SECONDS [THREADS [HOLD_US]]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static double		 secs = 5;
static long		 hold_us = 500;

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void __attribute__((noinline))
hold(void)
{
	double	 end = now() + (double)hold_us / 1e6;

	while (now() < end)
		;
}

static void * __attribute__((noinline))
worker(void *arg)
{
	double	 end = now() + secs;

	(void)arg;
	while (now() < end) {
		pthread_mutex_lock(&lock);
		hold();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t	 t[64];
	long		 i, n = 4;

	if (argc > 1)
		secs = atof(argv[1]);
	if (argc > 2)
		n = atol(argv[2]);
	if (argc > 3)
		hold_us = atol(argv[3]);
	if (n < 1 || n > 64)
		n = 4;
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

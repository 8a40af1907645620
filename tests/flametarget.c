/*
 * flametarget: a load with known functions and known CPU shares for the
 * flame graph tests (test_flame.py). Two threads run worker(): the main
 * thread calls it with leaf_seventy, a second thread with leaf_thirty,
 * each until its own thread CPU time reaches 70 % and 30 % of SECONDS.
 * The shares hold on a loaded machine, where the threads may get any
 * share of the wall clock: a cpu-clock recording samples CPU time.
 *
 * Built with frame pointers, at -O0 so that the leaf functions have
 * frames of their own, so that the main thread's callchain reads
 * main -> worker -> leaf_seventy.
 *
 * flametarget SECONDS [PAUSE [SPLIT]]: prints "ready" when both threads
 * run, and "half" when both have spent half of their share, then waits
 * PAUSE seconds (default 0) before the second half: a gap with no
 * samples of ours, that a test can cut a time range in. SPLIT (default
 * 70) is leaf_seventy's percentage of the CPU, leaf_thirty's the rest:
 * 30 gives the 30/70 that a differential graph compares with 70/30.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "clocksecs.h"

struct job {
	void			(*leaf)(unsigned long);
	double			 secs;
	pthread_barrier_t	*half;
	double			 pause;
};

static volatile unsigned long sink;

__attribute__((noinline)) static void
leaf_seventy(unsigned long n)
{
	unsigned long	 i;

	for (i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) static void
leaf_thirty(unsigned long n)
{
	unsigned long	 i;

	for (i = 0; i < n; i++)
		sink ^= i * 13;
}

/* Runs j->leaf for j->secs of this thread's CPU, in two halves. */
__attribute__((noinline)) static void
worker(struct job *j)
{
	double	 t0 = clock_secs(CLOCK_THREAD_CPUTIME_ID);

	while (clock_secs(CLOCK_THREAD_CPUTIME_ID) - t0 < j->secs / 2)
		j->leaf(200000);
	if (pthread_barrier_wait(j->half) == PTHREAD_BARRIER_SERIAL_THREAD) {
		printf("half\n");
		if (j->pause > 0)
			usleep((useconds_t)(j->pause * 1e6));
	}
	pthread_barrier_wait(j->half);
	while (clock_secs(CLOCK_THREAD_CPUTIME_ID) - t0 < j->secs)
		j->leaf(200000);
}

static void *
worker_thread(void *arg)
{
	worker(arg);
	return NULL;
}

int
main(int argc, char *argv[])
{
	pthread_barrier_t	 half;
	pthread_t		 t;
	double			 secs = argc > 1 ? atof(argv[1]) : 2.0;
	double			 pause = argc > 2 ? atof(argv[2]) : 0.0;
	double			 split = argc > 3 ? atof(argv[3]) / 100 : 0.7;
	struct job		 a = { leaf_seventy, split * secs, &half, pause };
	struct job		 b = { leaf_thirty, (1 - split) * secs, &half,
	    pause };

	if (split <= 0 || split >= 1) {
		fprintf(stderr, "flametarget: SPLIT is a percentage between "
		    "0 and 100\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_barrier_init(&half, NULL, 2);
	if (pthread_create(&t, NULL, worker_thread, &b) != 0) {
		perror("pthread_create");
		return 1;
	}
	printf("ready\n");
	worker(&a);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&half);
	return 0;
}

/*
 * taskstorm: tasks born while perfspilld records.
 *
 *   taskstorm THREADS SECS [LIFE_MS [yield|idle]]
 *
 * prints "ready", then runs THREADS threads that call getppid() through
 * syscall(2) until SECS have passed. Each call is one raw_syscalls hit,
 * and the threads' FORK records race their first samples through the
 * rings: every sample must still carry the program's name. With LIFE_MS
 * each thread ends after that long, and the main thread starts one every
 * LIFE_MS / THREADS, so that threads are born all along (during a
 * rotation's /proc walk too) and a newer thread is alive whenever one
 * has ended. With "yield"
 * the threads call sched_yield() instead: next to a busy process each
 * call is a context switch, a sched_switch storm. With "idle" they sleep
 * 50 us after each call: births without the storm.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clocksecs.h"

static double		 end, life;
static long		 call = SYS_getppid;
static int		 idle;
static pthread_mutex_t	 mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 cv = PTHREAD_COND_INITIALIZER;
static int		 live;

static void	*worker(void *);

static int
spawn(void)
{
	pthread_attr_t	 a;
	pthread_t	 t;
	int		 rc;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&mtx);
	if ((rc = pthread_create(&t, &a, worker, NULL)) == 0)
		live++;
	pthread_mutex_unlock(&mtx);
	pthread_attr_destroy(&a);
	return rc;
}

static void *
worker(void *arg)
{
	struct timespec	 nap = { 0, 50000 };
	double		 lap = clock_secs(CLOCK_MONOTONIC) + life;
	int		 i;

	(void)arg;
	if (lap > end)
		lap = end;
	do {
		for (i = 0; i < (idle ? 1 : 1000); i++)
			syscall(call);
		if (idle)
			nanosleep(&nap, NULL);
	} while (clock_secs(CLOCK_MONOTONIC) < lap);
	pthread_mutex_lock(&mtx);
	live--;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mtx);
	return NULL;
}

int
main(int argc, char **argv)
{
	struct timespec	 gap;
	double		 secs, step;
	int		 i, n;

	if (argc < 3 || argc > 5 || (n = atoi(argv[1])) < 1 ||
	    (secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: taskstorm THREADS SECS [LIFE_MS "
		    "[yield|idle]]\n");
		return 2;
	}
	life = argc >= 4 ? atof(argv[3]) / 1000 : secs;
	if (life <= 0)
		return 2;
	if (argc == 5 && strcmp(argv[4], "yield") == 0)
		call = SYS_sched_yield;
	else if (argc == 5)
		idle = 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	end = clock_secs(CLOCK_MONOTONIC) + secs;
	for (i = 0; i < n; i++)
		if (spawn() != 0)
			return 1;
	/* staggered: the threads end one by one, each after a newer began */
	step = life / n;
	gap.tv_sec = (time_t)step;
	gap.tv_nsec = (long)((step - (double)gap.tv_sec) * 1e9);
	while (life < secs && clock_secs(CLOCK_MONOTONIC) + step < end) {
		nanosleep(&gap, NULL);
		if (spawn() != 0)
			return 1;
	}
	pthread_mutex_lock(&mtx);
	while (live > 0)
		pthread_cond_wait(&cv, &mtx);
	pthread_mutex_unlock(&mtx);
	return 0;
}

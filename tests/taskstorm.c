/*
 * taskstorm: tasks born while perfspilld records.
 *
 *   taskstorm THREADS SECS [LIFE_MS [yield|idle]]
 *
 * prints "ready", then runs THREADS threads that call getppid() through
 * syscall(2) until SECS have passed. Each call is one raw_syscalls hit,
 * and the threads' FORK records race their first samples through the
 * rings: every sample must still carry the program's name. With LIFE_MS
 * each thread ends after that long and a new one takes its place, so
 * that threads are born all along (during a rotation's /proc walk too).
 * With "yield" the threads call sched_yield() instead: next to a busy
 * process each call is a context switch, a sched_switch storm. With
 * "idle" they sleep 50 us after each call: births without the storm.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


/* a lap's threads end together: a thread of the lap alive long after
 * its sibling ended would blur when the lap was over */
static pthread_barrier_t	 lap_end;
static long			 call = SYS_getppid;
static int			 idle;

static double
now(void)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *
worker(void *arg)
{
	double	 end = *(double *)arg;
	int	 i;


	do {
		for (i = 0; i < 1000; i++)
			syscall(call);
	} while (now() < end);
	pthread_barrier_wait(&lap_end);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t	*t;
	double		 secs, end, life, lap;
	int		 i, n;

	if (argc < 3 || argc > 5 || (n = atoi(argv[1])) < 1 ||
	    (secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: taskstorm THREADS SECS [LIFE_MS "
		    "[yield|idle]]\n");
		return 2;
	}
	life = argc >= 4 ? atof(argv[3]) / 1000 : secs;
	if (argc == 5 && strcmp(argv[4], "yield") == 0)
		call = SYS_sched_yield;
	else if (argc == 5)
		idle = 1;
	if (life <= 0 || (t = calloc((size_t)n, sizeof(*t))) == NULL ||
	    pthread_barrier_init(&lap_end, NULL, (unsigned int)n) != 0)
		return 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	end = now() + secs;
	do {
		lap = now() + life;
		if (lap > end)
			lap = end;
		for (i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, worker, &lap) != 0)
				return 1;
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	} while (now() < end);
	pthread_barrier_destroy(&lap_end);
	free(t);
	return 0;
}

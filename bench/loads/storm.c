/*
 * storm: a syscall storm. THREADS threads each call getppid() through
 * syscall(2) CALLS times (a fixed batch), then the program prints the
 * wall time of the batch in seconds on stdout.
 *
 *   storm THREADS CALLS
 *
 * Every call is one raw_syscalls:sys_enter hit (and one sys_exit).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long calls;

static void *
worker(void *arg)
{
	long	 i;

	(void)arg;
	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	return NULL;
}

int
main(int argc, char **argv)
{
	struct timespec	 a, b;
	pthread_t	*t;
	int		 i, n;

	if (argc != 3) {
		fprintf(stderr, "usage: storm THREADS CALLS\n");
		return 2;
	}
	n = atoi(argv[1]);
	calls = atol(argv[2]);
	if (n < 1 || calls < 1 || (t = calloc((size_t)n, sizeof(*t))) == NULL)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}

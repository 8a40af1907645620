/*
 * batch: the clock and the threaded main the loads share (batch.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "batch.h"

long	batch_count;
double	batch_seconds;

double
batch_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
batch_due(double start, long i)
{
	double	 due;

	if (batch_seconds <= 0)
		return;
	due = start + batch_seconds * (double)i / (double)batch_count;
	/* spin, not sleep: a paced load still keeps its CPU busy, as the
	 * same load at full speed on a slower machine would */
	while (batch_now() < due)
		;
}

int
batch_threads(int argc, char **argv, const char *name,
    void *(*worker)(void *))
{
	pthread_t	*t;
	double		 a;
	int		 i, n;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s THREADS COUNT [SECONDS]\n", name);
		return 2;
	}
	n = atoi(argv[1]);
	batch_count = atol(argv[2]);
	batch_seconds = argc == 4 ? atof(argv[3]) : 0;
	if (n < 1 || batch_count < 1 || batch_seconds < 0 ||
	    (t = calloc((size_t)n, sizeof(*t))) == NULL)
		return 2;
	a = batch_now();
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker,
		    (void *)(uintptr_t)(i + 1)) != 0)
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%.6f\n", batch_now() - a);
	free(t);
	return 0;
}

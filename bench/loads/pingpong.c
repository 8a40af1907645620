/*
 * pingpong: PAIRS pairs of processes bounce one byte over two pipes
 * ROUNDS times each (a fixed batch), then the program prints the wall time
 * of the batch in seconds on stdout. Every round trip is at least two
 * context switches (sched:sched_switch) on each side.
 *
 *   pingpong PAIRS ROUNDS [RATE]
 *
 * RATE, if given and > 0, paces each pair to about RATE round trips per
 * second (a light background load) instead of running flat out.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"

static void
pair(long rounds, double rate)
{
	int	 ab[2], ba[2];
	long	 i;
	char	 c = 'x';
	pid_t	 pid;
	double	 t0;
	struct timespec	 ts;

	if (pipe(ab) == -1 || pipe(ba) == -1)
		_exit(1);
	if ((pid = fork()) == -1)
		_exit(1);
	if (pid == 0) {
		for (i = 0; i < rounds; i++) {
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	t0 = batch_now();
	for (i = 0; i < rounds; i++) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			_exit(1);
		if (rate > 0) {
			double	 due = t0 + (double)(i + 1) / rate;
			double	 d = due - batch_now();

			if (d > 0) {
				ts.tv_sec = (time_t)d;
				ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
				nanosleep(&ts, NULL);
			}
		}
	}
	waitpid(pid, NULL, 0);
	_exit(0);
}

int
main(int argc, char **argv)
{
	double	 a, rate = 0;
	long	 rounds;
	int	 i, n, st, rc = 0;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: pingpong PAIRS ROUNDS [RATE]\n");
		return 2;
	}
	n = atoi(argv[1]);
	rounds = atol(argv[2]);
	if (argc == 4)
		rate = atof(argv[3]);
	if (n < 1 || rounds < 1)
		return 2;
	a = batch_now();
	for (i = 0; i < n; i++) {
		pid_t	 p = fork();

		if (p == -1)
			return 1;
		if (p == 0)
			pair(rounds, rate);
	}
	for (i = 0; i < n; i++) {
		if (wait(&st) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
	}
	printf("%.6f\n", batch_now() - a);
	return rc;
}

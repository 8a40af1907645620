/*
 * mixed: an ordinary mixed load for the always-on profile. It compiles
 * the given C files with CC, two compilers at a time, ITER times over (a
 * fixed batch: processes start and exit, exec, mmap, page faults, disk),
 * while one pipe ping-pong pair bounces at a low RATE in the background.
 * Prints the wall time of the batch in seconds on stdout.
 *
 *   mixed CC OUTDIR ITER RATE FILE.c...
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"

static pid_t
pinger(double rate)
{
	int		 ab[2], ba[2];
	char		 c = 'x';
	pid_t		 p, q;
	struct timespec	 ts;

	if (pipe(ab) == -1 || pipe(ba) == -1 || (p = fork()) == -1)
		exit(1);
	if (p != 0) {
		close(ab[0]);
		close(ab[1]);
		close(ba[0]);
		close(ba[1]);
		return p;
	}
	if ((q = fork()) == -1)
		_exit(1);
	if (q == 0) {
		close(ab[1]);
		close(ba[0]);
		while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(1e9 / rate);
	for (;;) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			break;
		nanosleep(&ts, NULL);
	}
	kill(q, SIGKILL);
	_exit(0);
}

static pid_t
compile(const char *cc, const char *outdir, const char *src, int slot)
{
	/* slot: a unique number, so two compilers never share an output */
	char	 out[4096];
	pid_t	 p;

	snprintf(out, sizeof(out), "%s/mixed-%d.o", outdir, slot);
	if ((p = fork()) == -1)
		exit(1);
	if (p == 0) {
		execlp(cc, cc, "-O2", "-g", "-c", src, "-o", out, (char *)NULL);
		_exit(127);
	}
	return p;
}

int
main(int argc, char **argv)
{
	const char	*cc, *outdir;
	double		 a, rate;
	int		 iter, nsrc, i, k, running = 0, st, rc = 0, n = 0;
	pid_t		 ping, p;

	if (argc < 6) {
		fprintf(stderr, "usage: mixed CC OUTDIR ITER RATE FILE.c...\n");
		return 2;
	}
	cc = argv[1];
	outdir = argv[2];
	iter = atoi(argv[3]);
	rate = atof(argv[4]);
	nsrc = argc - 5;
	a = batch_now();
	ping = rate > 0 ? pinger(rate) : -1;
	for (i = 0; i < iter; i++)
		for (k = 0; k < nsrc; k++) {
			if (running == 2) {
				if ((p = wait(&st)) == -1)
					return 1;
				if (p != ping && (!WIFEXITED(st) ||
				    WEXITSTATUS(st) != 0))
					rc = 1;
				running--;
			}
			compile(cc, outdir, argv[5 + k], n++);
			running++;
		}
	while (running > 0) {
		if ((p = wait(&st)) == -1)
			break;
		if (p == ping)
			continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
		running--;
	}
	if (ping > 0) {
		kill(ping, SIGKILL);
		waitpid(ping, NULL, 0);
	}
	printf("%.6f\n", batch_now() - a);
	return rc;
}

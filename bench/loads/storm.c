/*
 * storm: a syscall storm. THREADS threads each call getppid() through
 * syscall(2) CALLS times (a fixed batch), then the program prints the
 * wall time of the batch in seconds on stdout.
 *
 *   storm THREADS CALLS [SECONDS]
 *
 * Every call is one raw_syscalls:sys_enter hit (and one sys_exit). With
 * SECONDS each thread spreads its calls evenly over that time, spinning
 * between them: the same event rate on a machine whose system calls are
 * ten times cheaper (a slower machine, or one that recording slows, just
 * takes longer). The clock is read once every PACE_CALLS calls, so that
 * a clock without a vDSO would add few events of its own.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "batch.h"

#define PACE_CALLS	16

static void *
worker(void *arg)
{
	double	 start = batch_now();
	long	 i;

	(void)arg;
	for (i = 0; i < batch_count; i++) {
		if (i % PACE_CALLS == 0)
			batch_due(start, i);
		syscall(SYS_getppid);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	return batch_threads(argc, argv, "storm", worker);
}

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
#include <sys/syscall.h>
#include <unistd.h>

#include "batch.h"

static void *
worker(void *arg)
{
	long	 i;

	(void)arg;
	for (i = 0; i < batch_count; i++)
		syscall(SYS_getppid);
	return NULL;
}

int
main(int argc, char **argv)
{
	return batch_threads(argc, argv, "storm", worker);
}

/*
 * worker starts threads beside the loop, and times their waits (see
 * worker.h).
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

int
worker_spawn(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t		 attr;
	struct sched_param	 sp;
	cpu_set_t		 cpus;
	int			 rc;

	memset(&sp, 0, sizeof(sp));
	if ((rc = pthread_attr_init(&attr)) != 0)
		return rc;
	/* on the daemon's CPUs, not on the one CPU a drain thread that
	 * spawns a worker is pinned to */
	if (worker_cpus(&cpus) == 0)
		(void)pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	if ((rc = pthread_attr_setinheritsched(&attr,
	    PTHREAD_EXPLICIT_SCHED)) == 0 &&
	    (rc = pthread_attr_setschedpolicy(&attr, SCHED_OTHER)) == 0 &&
	    (rc = pthread_attr_setschedparam(&attr, &sp)) == 0)
		rc = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

void
worker_deadline(clockid_t id, uint64_t ns, struct timespec *until)
{
	clock_gettime(id, until);
	until->tv_sec += (time_t)(ns / 1000000000u);
	until->tv_nsec += (long)(ns % 1000000000u);
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

uint64_t
worker_now_ns(clockid_t id)
{
	struct timespec	 ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
worker_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	return sched_getaffinity(getpid(), sizeof(*set), set);
}

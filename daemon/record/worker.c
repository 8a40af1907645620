/*
 * worker starts threads beside the loop (see worker.h).
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "worker.h"

int
worker_spawn(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t		 attr;
	struct sched_param	 sp;
	int			 rc;

	memset(&sp, 0, sizeof(sp));
	if ((rc = pthread_attr_init(&attr)) != 0)
		return rc;
	if ((rc = pthread_attr_setinheritsched(&attr,
	    PTHREAD_EXPLICIT_SCHED)) == 0 &&
	    (rc = pthread_attr_setschedpolicy(&attr, SCHED_OTHER)) == 0 &&
	    (rc = pthread_attr_setschedparam(&attr, &sp)) == 0)
		rc = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

/*
 * worker: threads that do slow work beside the event loop (a rotation's
 * /proc walk, reading build-ids). They never run at the loop's real-time
 * priority, which they would otherwise inherit and use to hold off
 * everything else on their CPU.
 */
#ifndef PERFSPILL_WORKER_H
#define PERFSPILL_WORKER_H

#include <pthread.h>

/* pthread_create at SCHED_OTHER; 0 or an error number. */
int	worker_spawn(pthread_t *, void *(*)(void *), void *);

#endif

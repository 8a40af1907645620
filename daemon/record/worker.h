/*
 * worker starts threads that do slow work beside the event loop (a
 * rotation's /proc walk, reading build-ids, copying JIT maps). They run
 * at SCHED_OTHER whatever the thread that starts them runs at (the
 * daemon itself may have been started at a real-time priority, which
 * they would otherwise inherit and use to hold off everything else on
 * their CPU). worker_spawn is called in the loop.
 */
#ifndef PERFSPILL_WORKER_H
#define PERFSPILL_WORKER_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_create at SCHED_OTHER; 0 or an error number. */
int	worker_spawn(pthread_t *, void *(*)(void *), void *);
/* The deadline of a timed wait ns from now on clock id (any thread). */
void	worker_deadline(clockid_t id, uint64_t ns, struct timespec *);

#endif

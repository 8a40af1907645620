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
#include <sched.h>
#include <stdint.h>
#include <time.h>

/* pthread_create at SCHED_OTHER, on the daemon's CPUs; 0 or an error
 * number. */
int	worker_spawn(pthread_t *, void *(*)(void *), void *);
/* The deadline of a timed wait ns from now on clock id (any thread). */
void	worker_deadline(clockid_t id, uint64_t ns, struct timespec *);
/* Now on clock id, in nanoseconds (any thread). */
uint64_t worker_now_ns(clockid_t id);
/* The CPUs the daemon may run on: its main thread's (a unit's
 * CPUAffinity=, a cpuset), whichever thread asks; a drain thread is
 * pinned to one of them. 0, or -1 with errno. Any thread. */
int	worker_cpus(cpu_set_t *);

#endif

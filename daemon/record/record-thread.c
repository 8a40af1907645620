/*
 * record-thread runs the drain on threads of its own, one per CPU, and
 * owns the lock they share with the loop.
 *
 * Why: at a high event rate a ring fills in milliseconds (a 512 KiB ring
 * holds ~10 ms of a syscall storm), and a drain woken late loses what
 * overflows. The loop cannot be both on time and the daemon's: under CFS
 * it waits behind the very threads that fill the rings, and at
 * SCHED_FIFO everything it does (a status, a rotation's take-over, a
 * file's finish) would run at that priority. So the rings are watched
 * by a thread of their own (epoll on each ring's descriptor), at
 * SCHED_FIFO `realtime` when set, whose only work is a drain pass: each
 * ring read at most once per wakeup, up to the head it had (bounded by
 * the rings' size), into the file's sink, which never waits for the disk
 * (record-sink.c). The loop keeps the control socket, the timers,
 * rotation, pauses and the closing files (simpleperf's high-priority
 * reader thread is the model).
 *
 * Locking: one recursive mutex per recording (rec->lock) guards what
 * the drain thread shares with the loop: the rings, the current file and
 * its writers, the queue (record-int.h says which parts of struct record
 * are the loop's alone). The loop takes it where it changes what the
 * drain writes (a pause, a CPU coming or going, a stop, the tick's
 * reaping), and for no longer: not while it finishes files, walks /proc
 * for a rotation or starts its thread, reads the online CPUs, or wakes
 * a drain thread, which would find the lock held. Nor for status and
 * the metrics: each pass, and the loop as it lets go, publishes the
 * counters they read (record-publish.c).
 *
 * Nor for a rotation's switch, which the loop asks for by message
 * (record_thread_switch): the old file's last drain (up to 5 ms more,
 * waiting for a full ring's LOST record), the new file made current and
 * the tasks born during the walk written are the next pass's work, under
 * the lock that pass takes anyway, while the loop waits for its answer
 * (an eventfd) without the lock. Made by the loop under the lock, a
 * switch held every drain thread back 0.2-3 ms under a storm (once
 * 67 ms: the loop, at the normal scheduler, preempted meanwhile); what
 * the loop still holds the lock for during a storm takes a few
 * microseconds of its CPU time (a hold longer than 100 us is the loop
 * preempted while it holds it, which priority inheritance ends as soon
 * as a drain thread waits).
 *
 * The mutex inherits priority. On a machine the recorded load saturates,
 * the loop, at the normal scheduler, may be preempted while it holds the
 * lock, for a whole time slice, however little it has left to do: the
 * drain thread then waits behind the load it records (priority
 * inversion). A drain thread waiting on the mutex lends the loop its
 * SCHED_FIFO priority until the loop lets go. It waits at most
 * RECORD_THREAD_WAIT_NS at a time, then looks whether it is asked to
 * stop: the loop may stop and join it while holding the lock.
 *
 * One drain thread per CPU the daemon may run on, pinned there, watches
 * that CPU's rings (perf record --threads=cpu does the same). One thread
 * for every ring sleeps where it last ran, and the kernel wakes a
 * real-time thread on that CPU: when that CPU cannot run it (a VM's
 * virtual CPU the host stopped for 5-15 ms, which this 2-CPU VM does
 * every 100 ms under a storm; a CPU stuck in a long non-preemptible
 * kernel section), the other CPUs' rings overflow while their own CPUs
 * go on filling them (0.1-0.5 % of a storm's events lost, both rings
 * full at once; a pinned thread per CPU lost 0-0.07 % in the same
 * runs). A CPU that stops stops the thread that drains its rings and
 * the load that fills them alike. Each thread's pass, under the lock,
 * still reads every ring above the minimum chunk, so the rounds close
 * as before; the threads only share the wakeups.
 *
 * The threads decide nothing: a pass that failed a write or filled the
 * file is handed to the loop (loopfd), which pauses or rotates.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "log.h"
#include "record-int.h"
#include "worker.h"

#define RECORD_THREAD_EVENTS	64
/* drain threads at most, whatever the number of CPUs: the CPUs beyond
 * share them */
#define RECORD_DRAINERS_MAX	256
/* the loop holds the lock: wait this long at most, then look whether
 * the thread is to stop (the loop joins it with the lock held) */
#define RECORD_THREAD_WAIT_NS	2000000
/* a timed pass this close to its time is made (epoll waits in whole
 * milliseconds, rounded up: a wait must not end just short of it and
 * cost a second wakeup) */
#define RECORD_THREAD_SLACK_NS	1000000

int
record_lock_init(struct record *rec)
{
	pthread_mutexattr_t	 a;
	int			 rc;

	if ((rc = pthread_mutexattr_init(&a)) != 0)
		return rc;
	if ((rc = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE)) ==
	    0 && (rc = pthread_mutexattr_setprotocol(&a,
	    PTHREAD_PRIO_INHERIT)) == 0)
		rc = pthread_mutex_init(&rec->lock, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

void
record_lock(struct record *rec)
{
	pthread_mutex_lock(&rec->lock);
	rec->held++;
}

/* The loop lets go: what it changed of the drain's counters (its own
 * drains, a switch, the reaper's completions) is published first. */
void
record_unlock(struct record *rec)
{
	if (rec->held == 1)
		record_publish(rec);
	rec->held--;
	pthread_mutex_unlock(&rec->lock);
}

/*
 * A wait with the lock held (a file's last drain waiting for the kernel
 * to write into a ring again) lets the drain threads have the lock
 * meanwhile: the other rings fill on during the wait. The loop lets go
 * where it holds the lock once; held twice (a caller that counts on the
 * lock across it), it sleeps with it. Held by the loop not at all, the
 * holder is a drain thread making a rotation's switch for the loop,
 * which waits without the lock (record_thread_switch): it lets go too,
 * and takes the lock back without a bound, as the loop cannot stop it
 * meanwhile.
 */
void
record_sleep(struct record *rec, const struct timespec *ts)
{
	if (rec->held > 1) {
		nanosleep(ts, NULL);
	} else if (rec->held == 1) {
		record_unlock(rec);
		nanosleep(ts, NULL);
		record_lock(rec);
	} else {
		pthread_mutex_unlock(&rec->lock);
		nanosleep(ts, NULL);
		pthread_mutex_lock(&rec->lock);
	}
}

/* A switch made (or the drainer that took it leaves): the loop reads. */
static void
record_thread_answer(struct record_thread *t)
{
	uint64_t	 one = 1;

	(void)write(t->switchfd, &one, sizeof(one));
}

/*
 * A rotation's switch, the loop's message: the pass makes it instead of
 * its drain (the switch's last drain reads every ring), and answers; the
 * flags it leaves (pad, flush) are for the pass that follows at
 * once, into the new file.
 */
static int
record_thread_switch_pass(struct record *rec, struct record_switch *sw)
{
	sw->make(rec, sw);
	record_publish(rec);
	atomic_store(&sw->done, 1);
	record_thread_answer(&rec->thread);
	return 0;
}

/*
 * Is d's timed pass due (the first drainer's, every drain_ms)? Then the
 * next is set a period on, from the last one's due time (a late pass
 * does not put the ones after it off), or from now when the thread
 * slept through a whole period (the loop held the lock). A pass in the
 * last half of the period (a ring's watermark woke the thread) takes
 * the timed one early, and the next is a period from it: every ring is
 * still read at least every drain_ms, with one wakeup where the
 * watermark and the timer made two. Every pad_ticks-th one pads the
 * direct tail too (*pad): at most direct_tail_ms apart still.
 */
static int
record_thread_timed(struct record *rec, struct record_drainer *d, int *pad)
{
	struct record_thread	*t = &rec->thread;
	uint64_t		 now;

	if (d->due_ns == 0)
		return 0;
	now = worker_now_ns(CLOCK_MONOTONIC);
	if (now + t->period_ns / 2 < d->due_ns)
		return 0;
	if (now + RECORD_THREAD_SLACK_NS < d->due_ns)
		d->due_ns = now + t->period_ns;
	else
		d->due_ns += t->period_ns;
	if (d->due_ns <= now)
		d->due_ns = now + t->period_ns;
	*pad |= record_thread_pad_due(rec, &d->ticks);
	return 1;
}

int
record_thread_pad_due(struct record *rec, unsigned int *ticks)
{
	struct record_thread	*t = &rec->thread;

	if (t->pad_ticks == 0 || ++*ticks < t->pad_ticks)
		return 0;
	*ticks = 0;
	/* only a direct file has a tail to pad (a flight recording has no
	 * file) */
	return rec->cur != NULL && tracefile_direct_on(rec->cur);
}

/* A pass of the thread, under the lock: the epoll timeout after it (ms;
 * -1: until a ring wakes it or its timed pass is due). */
static int
record_thread_pass(struct record *rec, struct record_drainer *d)
{
	struct record_thread	*t = &rec->thread;
	struct record_pass	 pass;
	struct record_switch	*sw;
	uint64_t		 one = 1, flush;
	int			 ms, pad = 0, all, sweep;

	if ((sw = atomic_exchange(&t->switch_asked, NULL)) != NULL)
		return record_thread_switch_pass(rec, sw);
	if (rec->state != RECORD_RUNNING) {
		/* no pass now: the next timed one is a period on */
		(void)record_thread_timed(rec, d, &pad);
		return -1;
	}
	t->passes++;
	/* rings below the minimum chunk wait, unless the open round has
	 * grown to the size of all the rings (record.c, record_wakeup),
	 * the timed pass is due or the loop's padder or a flush asked for
	 * every ring */
	flush = atomic_exchange(&t->flush, 0);
	pad = atomic_exchange(&t->pad, 0) != 0 || flush != 0;
	sweep = record_thread_timed(rec, d, &pad);
	all = sweep || pad;
	record_drain(rec, all || rec->round_bytes >= rec->round_max ? 0 :
	    rec->min_chunk, 0, &pass);
	/* what every ring held is in the stream now: its tail goes to
	 * disk, so that a crash costs no more than direct_tail_ms of it
	 * (a pad before this pass would leave the pass's data in memory
	 * for another period) */
	if (pad)
		record_pad_tail(rec);
	/* a reader's flush: the loop answers once this pass has landed */
	if (flush != 0) {
		record_flush_passed(rec, flush);
		(void)write(t->loopfd, &one, sizeof(one));
	}
	if (pass.err != 0 || pass.full) {
		if (t->pending.err == 0)
			t->pending.err = pass.err;
		t->pending.full |= pass.full;
		(void)write(t->loopfd, &one, sizeof(one));
	}
	if (pass.busy == 0) {
		d->retry_ms = 1;
		ms = -1;
	} else {
		/* rings left for want of a buffer: again after 1 ms, then 2,
		 * 4, 8 while they stay so (record-int.h, RECORD_RETRY_*) */
		t->busy++;
		ms = d->retry_ms;
		if (d->retry_ms < RECORD_RETRY_MAX_US / 1000)
			d->retry_ms *= 2;
	}
	/* the pass's counters, for status to read without the lock */
	record_publish(rec);
	/* the test hook PERFSPILL_TEST_DRAIN_HOLD=PATH holds the thread,
	 * with the lock, at the end of a timed pass, while PATH exists:
	 * status must answer meanwhile from what the pass published
	 * (tests/integration/test_drain.py); the timed pass, so that the
	 * next, and the loop's next look, which take the lock, are
	 * drain_ms away */
	if (sweep)
		record_test_hold("PERFSPILL_TEST_DRAIN_HOLD", "drain");
	return ms;
}

/*
 * The drain thread takes the lock: 0, or -1 when the loop held it all of
 * RECORD_THREAD_WAIT_NS (the thread looks at its stop flag and comes
 * back). While it waits the loop runs at its priority (the mutex
 * inherits it).
 */
static int
record_thread_lock(struct record *rec)
{
	struct timespec	 t0, t1, until;
	int		 rc = EINVAL;

	if (pthread_mutex_trylock(&rec->lock) == 0)
		return 0;
	atomic_fetch_add(&rec->thread.contended, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/*
	 * A kernel before 5.14 (no FUTEX_LOCK_PI2) or a glibc before 2.35
	 * times a priority-inheriting wait on CLOCK_REALTIME alone, and
	 * refuses one on CLOCK_MONOTONIC at once (EINVAL): the thread would
	 * spin at SCHED_FIFO for as long as the loop holds the lock, never
	 * lending it its priority. There it waits on the wall clock, which
	 * a clock step may only lengthen or shorten that one wait.
	 */
	if (!atomic_load(&rec->thread.realtime_wait)) {
		worker_deadline(CLOCK_MONOTONIC, RECORD_THREAD_WAIT_NS, &until);
		rc = pthread_mutex_clocklock(&rec->lock, CLOCK_MONOTONIC,
		    &until);
		/* said once, by whichever drain thread saw it first */
		if (rc == EINVAL &&
		    atomic_exchange(&rec->thread.realtime_wait, 1) == 0)
			log_info("the drain thread's lock is timed on the wall "
			    "clock (no FUTEX_LOCK_PI2: a kernel before 5.14)");
	}
	if (atomic_load(&rec->thread.realtime_wait)) {
		worker_deadline(CLOCK_REALTIME, RECORD_THREAD_WAIT_NS, &until);
		rc = pthread_mutex_timedlock(&rec->lock, &until);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&rec->thread.waited_ns, (unsigned long)
	    ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec));
	return rc == 0 ? 0 : -1;
}

/* How long d waits for its rings (ms, -1: for ever): until the retry
 * after a pass that left rings (retry), or its timed pass. */
static int
record_thread_timeout(const struct record_drainer *d, int retry)
{
	uint64_t	 now, ms;

	if (d->due_ns == 0)
		return retry;
	now = worker_now_ns(CLOCK_MONOTONIC);
	ms = d->due_ns > now ? (d->due_ns - now + 999999) / 1000000 : 0;
	return retry != -1 && (uint64_t)retry < ms ? retry : (int)ms;
}

static void *
record_thread_main(void *arg)
{
	struct record_drainer	*d = arg;
	struct record		*rec = d->rec;
	struct record_thread	*t = &rec->thread;
	struct epoll_event	 ev[RECORD_THREAD_EVENTS];
	struct record_cpu	*hung[RECORD_THREAD_EVENTS];
	uint64_t		 v;
	int			 n, i, nhung, timeout = -1, wait_ms, again = 0;
	sigset_t		 all;
	cpu_set_t		 own, every;

	/* the daemon's signals are the loop's (SIGUSR2, SIGHUP, SIGTERM:
	 * libevent's handlers), not a real-time thread's to run */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* named here (prctl), not by its creator: that writes
	 * /proc/self/task/TID/comm, which the unit's sandbox check refuses */
	pthread_setname_np(pthread_self(), "drain");
	/* its requests are made at its own priority, from every CPU
	 * (cblock.h) */
	cblock_thread_prio((int)t->prio);
	if (d->pinned) {
		CPU_ZERO(&own);
		CPU_SET(d->cpu, &own);
		if (worker_cpus(&every) == 0)
			cblock_thread_pin(&every, &own);
	}
	while (!atomic_load(&t->stop)) {
		wait_ms = again ? 0 : record_thread_timeout(d, timeout);
		n = epoll_wait(d->epfd, ev, RECORD_THREAD_EVENTS, wait_ms);
		if (atomic_load(&t->stop))
			break;
		if (n == -1 && errno != EINTR)
			break;
		for (i = nhung = 0; i < n; i++) {
			if (ev[i].data.ptr == NULL) {
				(void)read(d->wakefd, &v, sizeof(v));
				continue;
			}
			/* a ring whose CPU went away: the tick closes it;
			 * until then it must not wake a real-time thread
			 * over and over (unwatched under the lock: the loop
			 * may be closing it) */
			if (ev[i].events & (EPOLLHUP | EPOLLERR))
				hung[nhung++] = ev[i].data.ptr;
		}
		if (n == 0 && !again && wait_ms == -1)
			continue;
		if (record_thread_lock(rec) != 0) {
			again = 1;
			continue;
		}
		again = 0;
		for (i = 0; i < nhung; i++)
			record_thread_unwatch(rec, hung[i]);
		t->wakeups++;
		timeout = record_thread_pass(rec, d);
		pthread_mutex_unlock(&rec->lock);
	}
	/* left for an error, not asked: a switch the loop waits for is
	 * the loop's to make, unless another drainer takes it first */
	if (!atomic_load(&t->stop)) {
		atomic_fetch_add(&t->gone, 1);
		record_thread_answer(t);
	}
	return NULL;
}

/* A pass's outcome, in the loop. */
static void
record_thread_loop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record		*rec = arg;
	struct record_thread	*t = &rec->thread;
	struct record_pass	 pass;
	uint64_t		 v;

	(void)read(fd, &v, sizeof(v));
	record_lock(rec);
	pass = t->pending;
	memset(&t->pending, 0, sizeof(t->pending));
	record_unlock(rec);
	/* passed takes the lock where it needs it: a rotation's begin (its
	 * preamble's copy, its thread) is made without it */
	if (rec->state == RECORD_RUNNING && t->passed != NULL &&
	    (pass.err != 0 || pass.full))
		t->passed(rec, &pass);
	record_lock(rec);
	record_flush_poll(rec);
	record_unlock(rec);
}

void
record_thread_init(struct record *rec)
{
	struct record_thread	*t = &rec->thread;

	memset(t, 0, sizeof(*t));
	t->loopfd = t->switchfd = -1;
}

/* The drainer that watches cpu's rings: its own, or (a CPU that came
 * online after the first start, or beyond RECORD_DRAINERS_MAX) one that
 * shares. */
static struct record_drainer *
record_drainer_of(struct record_thread *t, int cpu)
{
	size_t	 i;

	for (i = 0; i < t->nr_dr; i++)
		if (t->dr[i].cpu == cpu)
			return &t->dr[i];
	return &t->dr[(size_t)cpu % t->nr_dr];
}

/* One drainer per CPU the daemon may run on (its affinity: a unit's
 * CPUAffinity=, a cpuset), made at the first start and kept. */
static int
record_drainers_make(struct record_thread *t, struct record *rec)
{
	struct record_drainer	*d;
	struct epoll_event	 e;
	cpu_set_t		 set;
	int			 cpu, n = 0;

	if (worker_cpus(&set) == -1 || CPU_COUNT(&set) == 0)
		CPU_SET(0, &set);
	if ((t->dr = calloc((size_t)CPU_COUNT(&set) < RECORD_DRAINERS_MAX ?
	    (size_t)CPU_COUNT(&set) : RECORD_DRAINERS_MAX, sizeof(*d))) ==
	    NULL)
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && n < RECORD_DRAINERS_MAX; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		d = &t->dr[n++];
		d->rec = rec;
		d->cpu = cpu;
		d->epfd = d->wakefd = -1;
		t->nr_dr = (size_t)n;
		if ((d->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1 ||
		    (d->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) ==
		    -1)
			return -1;
		memset(&e, 0, sizeof(e));
		e.events = EPOLLIN;
		e.data.ptr = NULL;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->wakefd, &e) == -1)
			return -1;
	}
	return 0;
}

/* Wake d (its flag is set, or stop). */
static void
record_drainer_wake(const struct record_drainer *d)
{
	uint64_t	 one = 1;

	(void)write(d->wakefd, &one, sizeof(one));
}

/*
 * Start d's thread at the drainers' policy, on its CPU. A CPU it may not
 * be pinned to (gone offline since: EINVAL; a sandbox that refuses
 * sched_setaffinity: EPERM) leaves it running anywhere, as one thread
 * for all the rings did; what fails then (the policy) is the caller's
 * error. 0, or an errno.
 */
static int
record_drainer_start(struct record_thread *t, struct record_drainer *d,
    pthread_attr_t *attr)
{
	cpu_set_t	 one;
	int		 rc;

	CPU_ZERO(&one);
	CPU_SET(d->cpu, &one);
	d->retry_ms = 1;
	/* read by the thread as it starts */
	d->pinned = 1;
	if ((rc = pthread_attr_setaffinity_np(attr, sizeof(one), &one)) ==
	    0)
		rc = pthread_create(&d->th, attr, record_thread_main, d);
	if (rc != 0) {
		t->unpinned = rc;
		d->pinned = 0;
		if (worker_cpus(&one) == 0 &&
		    (rc = pthread_attr_setaffinity_np(attr, sizeof(one),
		    &one)) == 0)
			rc = pthread_create(&d->th, attr, record_thread_main,
			    d);
	}
	d->started = rc == 0;
	return rc;
}

/* Join every drainer that runs. */
static void
record_drainers_join(struct record_thread *t)
{
	size_t	 i;

	atomic_store(&t->stop, 1);
	for (i = 0; i < t->nr_dr; i++)
		if (t->dr[i].started)
			record_drainer_wake(&t->dr[i]);
	for (i = 0; i < t->nr_dr; i++)
		if (t->dr[i].started) {
			pthread_join(t->dr[i].th, NULL);
			t->dr[i].started = 0;
		}
}

int
record_thread_start(struct record *rec, record_passed_fn passed)
{
	struct record_thread	*t = &rec->thread;
	pthread_attr_t		 attr;
	struct sched_param	 sp;
	size_t			 i;
	int			 rc;

	if (t->dr == NULL) {
		/* the loop waits on switchfd: it blocks */
		if ((t->loopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) ==
		    -1 || (t->switchfd = eventfd(0, EFD_CLOEXEC)) == -1 ||
		    record_drainers_make(t, rec) == -1) {
			record_thread_free(rec);
			return -1;
		}
		if ((t->loop_ev = event_new(rec->base, t->loopfd,
		    EV_READ | EV_PERSIST, record_thread_loop_cb, rec)) ==
		    NULL || event_add(t->loop_ev, NULL) == -1) {
			record_thread_free(rec);
			errno = ENOMEM;
			return -1;
		}
	}
	t->passed = passed;
	t->unpinned = 0;
	/* the first drainer reads every ring every drain_ms by itself: no
	 * one wakes it for that (the loop looks at its own duties less
	 * often, record.c) */
	t->period_ns = rec->cfg.drain_ms * 1000000u;
	t->pad_ticks = rec->cfg.drain_ms > 0 &&
	    rec->cfg.drain_ms <= rec->cfg.direct_tail_ms ?
	    (unsigned int)(rec->cfg.direct_tail_ms / rec->cfg.drain_ms) : 0;
	for (i = 0; i < t->nr_dr; i++) {
		t->dr[i].due_ns = 0;
		t->dr[i].ticks = 0;
	}
	if (t->period_ns > 0)
		t->dr[0].due_ns = worker_now_ns(CLOCK_MONOTONIC) +
		    t->period_ns;
	atomic_store(&t->stop, 0);
	atomic_store(&t->pad, 0);
	atomic_store(&t->flush, 0);
	atomic_store(&t->switch_asked, NULL);
	atomic_store(&t->gone, 0);
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = (int)rec->cfg.realtime;
	/* explicit: not the loop's (nor whatever started the daemon) */
	t->prio = rec->cfg.realtime;
	if ((rc = pthread_attr_init(&attr)) != 0) {
		errno = rc;
		return -1;
	}
	if ((rc = pthread_attr_setinheritsched(&attr,
	    PTHREAD_EXPLICIT_SCHED)) == 0 &&
	    (rc = pthread_attr_setschedpolicy(&attr, rec->cfg.realtime ?
	    SCHED_FIFO : SCHED_OTHER)) == 0 &&
	    (rc = pthread_attr_setschedparam(&attr, &sp)) == 0)
		for (i = 0; i < t->nr_dr && rc == 0; i++)
			rc = record_drainer_start(t, &t->dr[i], &attr);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		/* all or none: the caller may try the normal scheduler */
		record_drainers_join(t);
		errno = rc;
		return -1;
	}
	if (t->unpinned != 0)
		log_warnx("a drain thread runs unpinned: pinning it to its CPU "
		    "failed (%s)", strerror(t->unpinned));
	t->running = 1;
	/* every request of the recording at the threads' priority: glibc
	 * orders a descriptor's queue by it (cblock.h) */
	writer_prio(&rec->w, (int)rec->cfg.realtime);
	return 0;
}

/* Set flag and wake a thread (the first: any pass takes the flags):
 * 0, or -1 when none runs. */
static int
record_thread_wake(struct record_thread *t, atomic_int *flag)
{
	if (!t->running)
		return -1;
	atomic_store(flag, 1);
	record_drainer_wake(&t->dr[0]);
	return 0;
}

int
record_thread_pad(struct record *rec)
{
	return record_thread_wake(&rec->thread, &rec->thread.pad);
}

int
record_thread_flush(struct record *rec, uint64_t ticket)
{
	struct record_thread	*t = &rec->thread;

	if (!t->running)
		return -1;
	atomic_store(&t->flush, ticket);
	record_drainer_wake(&t->dr[0]);
	return 0;
}

/*
 * The loop asks for a rotation's switch and waits for it, without the
 * lock: the drainers' passes go on meanwhile (the switch's own takes it
 * the time of its last drains and the install), and the loop, at the
 * normal scheduler, holds none of them back however long it waits to
 * run again. The first drainer is woken, as for a pad; any pass takes
 * the switch. A wakeup that is not the answer is a drainer that left: a
 * switch no pass has taken is then the loop's.
 */
int
record_thread_switch(struct record *rec, struct record_switch *sw)
{
	struct record_thread	*t = &rec->thread;
	struct timespec		 poll = { 0, 100000 };
	uint64_t		 v;

	if (!t->running || atomic_load(&t->gone) > 0)
		return -1;
	atomic_store(&sw->done, 0);
	atomic_store(&t->switch_asked, sw);
	record_drainer_wake(&t->dr[0]);
	for (;;) {
		/* an eventfd of ours fails no read: should it, poll */
		if (read(t->switchfd, &v, sizeof(v)) == -1 && errno != EINTR)
			nanosleep(&poll, NULL);
		if (atomic_load(&sw->done))
			return 0;
		if (atomic_load(&t->gone) > 0 &&
		    atomic_exchange(&t->switch_asked, NULL) == sw)
			return -1;
	}
}

void
record_thread_stop(struct record *rec)
{
	struct record_thread	*t = &rec->thread;

	/* they never wait for the lock: joining under it is safe */
	if (!t->running)
		return;
	record_drainers_join(t);
	t->running = 0;
	writer_prio(&rec->w, 0);
}

void
record_thread_free(struct record *rec)
{
	struct record_thread	*t = &rec->thread;
	size_t			 i;

	record_thread_stop(rec);
	if (t->loop_ev != NULL)
		event_free(t->loop_ev);
	for (i = 0; i < t->nr_dr; i++) {
		if (t->dr[i].epfd != -1)
			close(t->dr[i].epfd);
		if (t->dr[i].wakefd != -1)
			close(t->dr[i].wakefd);
	}
	free(t->dr);
	if (t->loopfd != -1)
		close(t->loopfd);
	if (t->switchfd != -1)
		close(t->switchfd);
	record_thread_init(rec);
}

int
record_thread_watch(struct record *rec, struct record_cpu *c)
{
	struct epoll_event	 e;

	if (rec->thread.nr_dr == 0) {
		errno = EBADF;
		return -1;
	}
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.ptr = c;
	if (epoll_ctl(record_drainer_of(&rec->thread, c->cpu)->epfd,
	    EPOLL_CTL_ADD, c->fds[0], &e) == -1)
		return -1;
	c->watched = 1;
	return 0;
}

void
record_thread_unwatch(struct record *rec, struct record_cpu *c)
{
	if (c->watched && c->fds != NULL)
		(void)epoll_ctl(record_drainer_of(&rec->thread, c->cpu)->epfd,
		    EPOLL_CTL_DEL, c->fds[0], NULL);
	c->watched = 0;
}

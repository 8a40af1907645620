/*
 * fileworker: the thread that reads finished files (see fileworker.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include "fileworker.h"
#include "log.h"
#include "worker.h"

struct fileworker_job {
	char			 name[NAME_MAX + 1];
	fileworker_work_fn	 work;
	fileworker_done_fn	 done;
	void			*arg;
	TAILQ_ENTRY(fileworker_job) entry;
};

TAILQ_HEAD(fileworker_jobs, fileworker_job);

struct fileworker {
	/* the loop's */
	struct event		*ev;		/* on donefd */
	int			 donefd;	/* eventfd: a job is done */
	/* shared, under lock */
	pthread_t		 th;
	pthread_mutex_t		 lock;
	pthread_cond_t		 wake;
	pthread_cond_t		 idle;		/* a job is done */
	struct fileworker_jobs	 queue;		/* for the worker, in order */
	struct fileworker_jobs	 done;		/* for the loop, in order */
	struct fileworker_job	*busy;		/* the worker's now */
	int			 stop;
};

/* The worker: the jobs queued, in order. */
static void *
fileworker_main(void *arg)
{
	struct fileworker	*fw = arg;
	struct fileworker_job	*j;
	uint64_t		 one = 1;
	sigset_t		 all;

	/* named, as the build-id reader: its wakeups are counted apart
	 * (tests/integration/test_wakeups.py) */
	pthread_setname_np(pthread_self(), "fileworker");
	/* the daemon's signals are the loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&fw->lock);
	for (;;) {
		if ((j = TAILQ_FIRST(&fw->queue)) != NULL) {
			TAILQ_REMOVE(&fw->queue, j, entry);
			fw->busy = j;
			pthread_mutex_unlock(&fw->lock);
			j->work(j->arg);
			pthread_mutex_lock(&fw->lock);
			fw->busy = NULL;
			if (j->done == NULL)
				free(j);
			else {
				TAILQ_INSERT_TAIL(&fw->done, j, entry);
				(void)write(fw->donefd, &one, sizeof(one));
			}
			pthread_cond_broadcast(&fw->idle);
			continue;
		}
		if (fw->stop)
			break;
		pthread_cond_wait(&fw->wake, &fw->lock);
	}
	pthread_mutex_unlock(&fw->lock);
	return NULL;
}

/* The jobs done, their callbacks in the order they came. */
static void
fileworker_reap(struct fileworker *fw)
{
	struct fileworker_jobs	 done;
	struct fileworker_job	*j;

	TAILQ_INIT(&done);
	pthread_mutex_lock(&fw->lock);
	TAILQ_CONCAT(&done, &fw->done, entry);
	pthread_mutex_unlock(&fw->lock);
	while ((j = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, j, entry);
		j->done(j->arg);
		free(j);
	}
}

static void
fileworker_done_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t	 v;

	(void)what;
	(void)read(fd, &v, sizeof(v));
	fileworker_reap(arg);
}

struct fileworker *
fileworker_create(struct event_base *base)
{
	struct fileworker	*fw;
	int			 rc;

	if ((fw = calloc(1, sizeof(*fw))) == NULL) {
		log_warn("file worker");
		return NULL;
	}
	fw->donefd = -1;
	TAILQ_INIT(&fw->queue);
	TAILQ_INIT(&fw->done);
	pthread_mutex_init(&fw->lock, NULL);
	pthread_cond_init(&fw->wake, NULL);
	pthread_cond_init(&fw->idle, NULL);
	if ((fw->donefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (fw->ev = event_new(base, fw->donefd, EV_READ | EV_PERSIST,
	    fileworker_done_cb, fw)) == NULL || event_add(fw->ev, NULL) == -1) {
		log_warn("file worker: no event");
		goto error;
	}
	if ((rc = worker_spawn(&fw->th, fileworker_main, fw)) != 0) {
		errno = rc;
		log_warn("file worker: no thread");
		goto error;
	}
	return fw;
error:
	if (fw->ev != NULL)
		event_free(fw->ev);
	if (fw->donefd != -1)
		close(fw->donefd);
	pthread_cond_destroy(&fw->wake);
	pthread_cond_destroy(&fw->idle);
	pthread_mutex_destroy(&fw->lock);
	free(fw);
	return NULL;
}

int
fileworker_submit(struct fileworker *fw, const char *name,
    fileworker_work_fn work, fileworker_done_fn done, void *arg)
{
	struct fileworker_job	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->work = work;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&fw->lock);
	TAILQ_INSERT_TAIL(&fw->queue, j, entry);
	pthread_mutex_unlock(&fw->lock);
	/* after the unlock: woken under it, the worker met the lock held
	 * and slept again on it (two switches a job); the job is queued,
	 * so a worker about to wait sees it */
	pthread_cond_signal(&fw->wake);
	return 0;
}

int
fileworker_holds(struct fileworker *fw, const char *name)
{
	struct fileworker_job	*j;
	int			 held = 0;

	if (fw == NULL)
		return 0;
	pthread_mutex_lock(&fw->lock);
	if (fw->busy != NULL && strcmp(fw->busy->name, name) == 0)
		held = 1;
	TAILQ_FOREACH(j, &fw->queue, entry)
		held |= strcmp(j->name, name) == 0;
	TAILQ_FOREACH(j, &fw->done, entry)
		held |= strcmp(j->name, name) == 0;
	pthread_mutex_unlock(&fw->lock);
	return held;
}

void
fileworker_drain(struct fileworker *fw)
{
	int	 more;

	if (fw == NULL)
		return;
	/* a callback may queue another job (a salvaged file's JIT copy) */
	do {
		pthread_mutex_lock(&fw->lock);
		while (!TAILQ_EMPTY(&fw->queue) || fw->busy != NULL)
			pthread_cond_wait(&fw->idle, &fw->lock);
		pthread_mutex_unlock(&fw->lock);
		fileworker_reap(fw);
		pthread_mutex_lock(&fw->lock);
		more = !TAILQ_EMPTY(&fw->queue) || fw->busy != NULL ||
		    !TAILQ_EMPTY(&fw->done);
		pthread_mutex_unlock(&fw->lock);
	} while (more);
}

void
fileworker_free(struct fileworker *fw)
{
	if (fw == NULL)
		return;
	fileworker_drain(fw);
	pthread_mutex_lock(&fw->lock);
	fw->stop = 1;
	pthread_cond_signal(&fw->wake);
	pthread_mutex_unlock(&fw->lock);
	pthread_join(fw->th, NULL);
	fileworker_reap(fw);
	event_free(fw->ev);
	close(fw->donefd);
	pthread_cond_destroy(&fw->wake);
	pthread_cond_destroy(&fw->idle);
	pthread_mutex_destroy(&fw->lock);
	free(fw);
}

void
fileworker_hold(const char *path, const char *what)
{
	struct timespec	 ts = { 0, 10000000 };
	int		 fd;

	if (path == NULL)
		return;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return;
	close(fd);
	log_info("%s: held by the test hook until %s is removed", what, path);
	while (access(path, F_OK) == 0)
		nanosleep(&ts, NULL);
}

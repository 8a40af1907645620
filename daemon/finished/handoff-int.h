/*
 * handoff-int: what handoff.c (the queue, retries, marks) shares with
 * the two ways of running the on_finish program:
 *   handoff-spawn.c  a child of perfspilld, as on_finish_user, its output
 *                    read into the log (outside systemd)
 *   handoff-unit.c   one perfspill-handoff@.service per try, started over
 *                    the system bus, outside the recorder's sandbox
 * A runner starts a try and reports its end through ho->ended.
 *
 * Threads: every function here runs in the loop, as handoff.h's do.
 */
#ifndef PERFSPILL_HANDOFF_INT_H
#define PERFSPILL_HANDOFF_INT_H

#include <limits.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <event2/event.h>

#include "config.h"
#include "handoff.h"

/* .NAME.handoff: the file's hand-off has not succeeded yet */
#define HANDOFF_MARK_SUFFIX	".handoff"
/* written into the mark at each try for the unit; not a fact to keep */
#define HANDOFF_ENV_PROGRAM	"PERFSPILL_PROGRAM"
#define HANDOFF_ENV_TRY		"PERFSPILL_TRY"
#define HANDOFF_NENV		20
#define HANDOFF_ENV_LEN		(CONFIG_PATH_LEN + NAME_MAX + 32)
/* Seconds between SIGTERM and SIGKILL of a program past its timeout,
 * and of what still runs when the daemon exits. */
#define HANDOFF_KILL_GRACE	5
/* Output of one try that reaches the log (handoff-spawn.c); the rest is
 * read and dropped, so that a chatty program cannot fill the disk. */
#define HANDOFF_OUTPUT_MAX	(16 * 1024)
#define HANDOFF_LINE_MAX	400
/* The template unit of handoff-unit.c (units/perfspill-handoff@.service) */
#define HANDOFF_UNIT_PREFIX	"perfspill-handoff@"
#define HANDOFF_UNIT_NAME_MAX	256

enum handoff_state {
	HANDOFF_QUEUED,		/* waiting for a free slot */
	HANDOFF_RUNNING,
	HANDOFF_WAITING,	/* failed; tried again when the timer fires */
};

enum handoff_via {
	HANDOFF_VIA_SPAWN,	/* a child of ours */
	HANDOFF_VIA_UNIT,	/* a unit of systemd's */
};

struct sd_bus;
struct sd_bus_slot;

struct handoff_job {
	struct handoff		*ho;
	char			 name[NAME_MAX + 1];
	char			 path[CONFIG_PATH_LEN + NAME_MAX + 2];
	char			 manifest[CONFIG_PATH_LEN + NAME_MAX + 8];
	char			 env[HANDOFF_NENV][HANDOFF_ENV_LEN];
	size_t			 nenv;
	enum handoff_state	 state;
	enum handoff_via	 via;		/* of the running try */
	unsigned int		 tries;		/* runs started */
	int			 killed;	/* SIGTERM sent at the timeout */
	struct event		*timer;		/* timeout, or the retry */
	/* handoff-spawn.c: the child (its process group) and its output */
	pid_t			 pid;
	int			 out_fd;
	struct event		*out_ev;
	size_t			 out_bytes;
	char			 line[HANDOFF_LINE_MAX];
	size_t			 line_len;
	/* handoff-unit.c: the unit, the start job, a call in flight */
	char			 unit[HANDOFF_UNIT_NAME_MAX];
	char			*job_path;
	struct sd_bus_slot	*slot;
	int			 lost;		/* the bus went with it */
	TAILQ_ENTRY(handoff_job) entry;
};

TAILQ_HEAD(handoff_jobs, handoff_job);

struct handoff {
	struct event_base	*base;
	int			 dirfd;
	struct event		*sigchld;
	char			 prog[CONFIG_PATH_LEN];
	char			 dir[CONFIG_PATH_LEN];
	char			 user[CONFIG_NAME_LEN];	/* on_finish_user */
	int			 use_unit;	/* on_finish_unit and a service */
	uint64_t		 jobs, timeout, tries, retry;
	int			 remove_after;
	struct handoff_jobs	 q;		/* every job, in arrival order */
	size_t			 running;
	uint64_t		 ok, failed, gave_up, timed_out, removed;
	/* handoff-spawn.c: process groups left by programs that exited */
	pid_t			 leftover[64];
	size_t			 nr_leftover;
	/* handoff-unit.c: the system bus, connected at the first try */
	struct sd_bus		*bus;
	struct event		*bus_ev;
	/* how a runner reports that a try ended: ok, or how it failed
	 * ("exit status 3"); the job may be freed (handoff.c) */
	void			(*ended)(struct handoff_job *, int ok,
				    const char *how);
};

/* handoff-mark.c */
/* Write j's mark (.NAME.handoff): its facts, the program and the try. */
void	handoff_mark_write(struct handoff_job *);
void	handoff_mark_path(const struct handoff_job *, char *, size_t);
void	handoff_mark_remove(struct handoff_job *);
void	handoff_mark_unescape(char *line);

/* handoff-spawn.c */
/* The output directory gives what is made in it on_finish_user's group */
void	handoff_spawn_group(const struct config *, int dirfd);
int	handoff_spawn_start(struct handoff_job *, char *how, size_t len);
void	handoff_spawn_signal(struct handoff_job *, int sig);
void	handoff_spawn_reap(struct handoff *);
void	handoff_spawn_forget(struct handoff_job *);
void	handoff_spawn_finish(struct handoff *);

/* handoff-unit.c */
int	handoff_unit_available(void);
int	handoff_unit_start(struct handoff_job *, char *how, size_t len);
void	handoff_unit_signal(struct handoff_job *, int sig);
void	handoff_unit_forget(struct handoff_job *);
void	handoff_unit_finish(struct handoff *);

#endif

/*
 * handoff-spawn: the on_finish program as a child of perfspilld, where
 * the daemon is not a systemd service (by hand, tests): run as
 * on_finish_user in a process group of its own, its stdout and stderr a
 * pipe read into the log (HANDOFF_OUTPUT_MAX bytes a try, the rest
 * dropped), reaped from the loop's SIGCHLD. perfspilld is the subreaper
 * of what the program starts, so that a process group is ours to kill
 * and wait for until its last process is gone: at the daemon's exit
 * nothing of it is left running.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "handoff-int.h"
#include "log.h"

#define HANDOFF_MAX_GROUPS	64

/* Who the program runs as: on_finish_user's ids, or our own. */
struct handoff_cred {
	uid_t	 uid;
	gid_t	 gid;
	gid_t	 groups[HANDOFF_MAX_GROUPS];
	int	 ngroups;
	int	 change;	/* we are root: switch to them */
};

static int
handoff_spawn_cred(const char *user, struct handoff_cred *c, char *how,
    size_t len)
{
	struct passwd	*pw;

	memset(c, 0, sizeof(*c));
	if (geteuid() != 0) {
		/* we cannot switch, and need not: we are not root */
		c->uid = geteuid();
		c->gid = getegid();
		return 0;
	}
	errno = 0;
	if ((pw = getpwnam(user)) == NULL) {
		snprintf(how, len, "cannot run it as user '%s' "
		    "(on_finish_user): %s", user, errno ? strerror(errno) :
		    "no such user");
		return -1;
	}
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	c->ngroups = HANDOFF_MAX_GROUPS;
	if (getgrouplist(user, pw->pw_gid, c->groups, &c->ngroups) == -1)
		c->ngroups = 0;
	if (c->ngroups == 0) {
		c->groups[0] = pw->pw_gid;
		c->ngroups = 1;
	}
	c->change = 1;
	return 0;
}

void
handoff_spawn_group(const struct config *cfg, int dirfd)
{
	struct passwd	*pw;
	struct stat	 st;

	/*
	 * Data files and manifests are made 0640: their group must be the
	 * program's. Under systemd perfspilld.service's Group= gives it
	 * (and StateDirectory= the directory's). By hand, as root, the
	 * output directory takes it, with the set-group-ID bit, so that
	 * what is created in it has it too; the daemon's own credentials
	 * stay as they are. Called at start (before salvage and the first
	 * file) and at a reload, with on_finish set.
	 */
	if ((pw = getpwnam(cfg->on_finish_user)) == NULL ||
	    fstat(dirfd, &st) == -1)
		return;
	if (st.st_gid == pw->pw_gid && ((st.st_mode & S_ISGID) ||
	    getegid() == pw->pw_gid))
		return;
	if (geteuid() != 0 || fchown(dirfd, (uid_t)-1, pw->pw_gid) == -1 ||
	    fchmod(dirfd, (st.st_mode & 07777) | S_ISGID) == -1)
		log_warn("on_finish: cannot give %s the group of "
		    "on_finish_user '%s': its program may not read the files",
		    cfg->output_dir, cfg->on_finish_user);
}

/* Log what the program wrote, line by line, up to HANDOFF_OUTPUT_MAX. */
static void
handoff_spawn_line(struct handoff_job *j)
{
	if (j->line_len == 0)
		return;
	if (j->out_bytes < HANDOFF_OUTPUT_MAX)
		log_info("on_finish for %s: | %.*s", j->name,
		    (int)j->line_len, j->line);
	j->out_bytes += j->line_len;
	if (j->out_bytes >= HANDOFF_OUTPUT_MAX &&
	    j->out_bytes - j->line_len < HANDOFF_OUTPUT_MAX)
		log_warnx("on_finish for %s: output past %d KiB is not "
		    "logged", j->name, HANDOFF_OUTPUT_MAX / 1024);
	j->line_len = 0;
}

/* Read what there is (never waits); at EOF or at the end, close. */
static void
handoff_spawn_drain(struct handoff_job *j, int last)
{
	char	 buf[4096];
	ssize_t	 n, i;

	while (j->out_fd != -1) {
		if ((n = read(j->out_fd, buf, sizeof(buf))) == -1 &&
		    errno == EINTR)
			continue;
		if (n > 0) {
			for (i = 0; i < n; i++) {
				if (buf[i] == '\n' ||
				    j->line_len == sizeof(j->line)) {
					handoff_spawn_line(j);
					if (buf[i] == '\n')
						continue;
				}
				j->line[j->line_len++] = buf[i];
			}
			continue;
		}
		if (n == -1 && errno == EAGAIN && !last)
			return;
		/* EOF, an error, or the program is gone: a process it left
		 * behind writes into a closed pipe */
		handoff_spawn_line(j);
		handoff_spawn_forget(j);
	}
}

static void
handoff_spawn_out(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	handoff_spawn_drain(arg, 0);
}

/*
 * The child, between fork and exec: async-signal-safe calls only (the
 * daemon has threads). Ids are changed with the raw system calls, which
 * act on this one thread, all the process has now.
 */
static void
handoff_spawn_child(struct handoff_job *j, const struct handoff_cred *c,
    int null_fd, int out_fd, int err_fd, char **argv, char **envp)
{
	struct sched_param	 sp;
	sigset_t		 none;
	pid_t			 parent = getppid();
	int			 e, sig;

	setpgid(0, 0);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* the loop may be SCHED_FIFO (realtime): not the program */
	memset(&sp, 0, sizeof(sp));
	sched_setscheduler(0, SCHED_OTHER, &sp);
	if (dup2(null_fd, 0) == -1 || dup2(out_fd, 1) == -1 ||
	    dup2(out_fd, 2) == -1)
		goto fail;
	if (c->change && (syscall(SYS_setgroups, (size_t)c->ngroups,
	    c->groups) == -1 || syscall(SYS_setresgid, c->gid, c->gid,
	    c->gid) == -1 || syscall(SYS_setresuid, c->uid, c->uid,
	    c->uid) == -1))
		goto fail;
	/* the daemon killed without a word (kill -9): the program is told;
	 * set after the ids change, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	/* no other descriptor: a ring or the socket is not the program's;
	 * err_fd is close-on-exec and says why exec failed */
	if (err_fd > 3) {
		if (dup2(err_fd, 3) == -1)
			goto fail;
		err_fd = 3;
	}
	close_range((unsigned int)err_fd + 1, ~0U, 0);
	if (err_fd == 3 && fcntl(3, F_SETFD, FD_CLOEXEC) == -1)
		goto fail;
	execve(j->ho->prog, argv, envp);
fail:
	e = errno;
	(void)!write(err_fd, &e, sizeof(e));
	_exit(127);
}

int
handoff_spawn_start(struct handoff_job *j, char *how, size_t len)
{
	struct handoff		*ho = j->ho;
	struct handoff_cred	 c;
	char			*argv[4], *envp[HANDOFF_NENV + 2];
	char			 try[32];
	sigset_t		 all, old;
	size_t			 i;
	ssize_t			 n;
	int			 out[2] = { -1, -1 }, err[2] = { -1, -1 };
	int			 null_fd = -1, e = 0;
	pid_t			 pid;

	if (handoff_spawn_cred(ho->user, &c, how, len) == -1)
		return -1;
	argv[0] = ho->prog;
	argv[1] = j->path;
	argv[2] = j->manifest;
	argv[3] = NULL;
	for (i = 0; i < j->nenv; i++)
		envp[i] = j->env[i];
	snprintf(try, sizeof(try), "PERFSPILL_TRY=%u", j->tries);
	envp[i++] = try;
	envp[i] = NULL;

	if ((null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1)
		goto error;
	/* no handler of ours may run in the child before it resets them */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		handoff_spawn_child(j, &c, null_fd, out[1], err[1], argv,
		    envp);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		errno = e;
		goto error;
	}
	close(null_fd);
	close(out[1]);
	close(err[1]);
	/* as posix_spawn does: the exec succeeded, or we are told why not */
	while ((n = read(err[0], &e, sizeof(e))) == -1 && errno == EINTR)
		;
	close(err[0]);
	j->pid = pid;
	j->out_fd = out[0];
	j->out_bytes = 0;
	j->line_len = 0;
	if (n == sizeof(e)) {
		/* it exits 127 at once, with nothing to say */
		handoff_spawn_forget(j);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		j->pid = 0;
		snprintf(how, len, "cannot run %s: %s%s%s%s", ho->prog,
		    strerror(e), c.change ? " (as on_finish_user " : "",
		    c.change ? ho->user : "", c.change ? ")" : "");
		return -1;
	}
	fcntl(j->out_fd, F_SETFL, O_NONBLOCK);
	if ((j->out_ev = event_new(ho->base, j->out_fd, EV_READ | EV_PERSIST,
	    handoff_spawn_out, j)) == NULL || event_add(j->out_ev, NULL) == -1)
		log_warnx("on_finish for %s: its output is not logged",
		    j->name);
	return 0;
error:
	e = errno;
	if (null_fd != -1)
		close(null_fd);
	for (i = 0; i < 2; i++) {
		if (out[i] != -1)
			close(out[i]);
		if (err[i] != -1)
			close(err[i]);
	}
	snprintf(how, len, "cannot run %s: %s", ho->prog, strerror(e));
	return -1;
}

void
handoff_spawn_signal(struct handoff_job *j, int sig)
{
	if (j->pid > 0)
		kill(-j->pid, sig);
}

void
handoff_spawn_forget(struct handoff_job *j)
{
	if (j->out_ev != NULL) {
		event_free(j->out_ev);
		j->out_ev = NULL;
	}
	if (j->out_fd != -1) {
		close(j->out_fd);
		j->out_fd = -1;
	}
}

/* Does process group pgid still hold a child of ours (a zombie too)?
 * While it does, its number cannot be taken by another group. */
static int
handoff_spawn_group_lives(pid_t pgid)
{
	siginfo_t	 si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PGID, (id_t)pgid, &si, WEXITED | WNOHANG |
	    WNOWAIT) == 0;
}

/*
 * A program exited and left processes in its group (a shell's
 * background job): as systemd does with a unit's, they are asked to end
 * now and killed at the daemon's exit if they have not.
 */
static void
handoff_spawn_leftovers(struct handoff *ho, pid_t pgid)
{
	size_t	 i;

	for (i = 0; i < ho->nr_leftover; ) {
		if (!handoff_spawn_group_lives(ho->leftover[i]))
			ho->leftover[i] = ho->leftover[--ho->nr_leftover];
		else
			i++;
	}
	if (pgid <= 0 || !handoff_spawn_group_lives(pgid))
		return;
	kill(-pgid, SIGTERM);
	if (ho->nr_leftover < sizeof(ho->leftover) / sizeof(ho->leftover[0]))
		ho->leftover[ho->nr_leftover++] = pgid;
	else
		kill(-pgid, SIGKILL);
}

void
handoff_spawn_reap(struct handoff *ho)
{
	struct handoff_job	*j;
	char			 how[64];
	int			 st;
	pid_t			 pid;

	/*
	 * One SIGCHLD may stand for several exits. Every child is ours to
	 * reap: the programs, and as their subreaper, what they left.
	 */
	for (;;) {
		while ((pid = waitpid(-1, &st, WNOHANG)) == -1 &&
		    errno == EINTR)
			;
		if (pid <= 0)
			break;
		TAILQ_FOREACH(j, &ho->q, entry)
			if (j->state == HANDOFF_RUNNING &&
			    j->via == HANDOFF_VIA_SPAWN && j->pid == pid)
				break;
		if (j == NULL)
			continue;
		handoff_spawn_drain(j, 1);
		j->pid = 0;
		handoff_spawn_leftovers(ho, pid);
		if (WIFEXITED(st))
			snprintf(how, sizeof(how), "exit status %d",
			    WEXITSTATUS(st));
		else
			snprintf(how, sizeof(how), "killed by signal %d",
			    WTERMSIG(st));
		j->ho->ended(j, WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    how);
	}
	handoff_spawn_leftovers(ho, 0);
}

/* Reap every child until none is left or the grace is over; 0 if none. */
static int
handoff_spawn_wait_all(unsigned int secs)
{
	struct timespec	 step = { 0, 20 * 1000 * 1000 };
	unsigned int	 i;
	pid_t		 pid;

	for (i = 0; i < secs * 50; i++) {
		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (pid == -1 && errno == ECHILD)
			return 0;
		nanosleep(&step, NULL);
	}
	return -1;
}

static void
handoff_spawn_kill_all(struct handoff *ho, int sig)
{
	struct handoff_job	*j;
	size_t			 i;

	TAILQ_FOREACH(j, &ho->q, entry)
		if (j->state == HANDOFF_RUNNING &&
		    j->via == HANDOFF_VIA_SPAWN && j->pid > 0 &&
		    handoff_spawn_group_lives(j->pid))
			kill(-j->pid, sig);
	for (i = 0; i < ho->nr_leftover; i++)
		if (handoff_spawn_group_lives(ho->leftover[i]))
			kill(-ho->leftover[i], sig);
}

void
handoff_spawn_finish(struct handoff *ho)
{
	struct handoff_job	*j;
	int			 n = 0;

	TAILQ_FOREACH(j, &ho->q, entry) {
		if (j->state != HANDOFF_RUNNING ||
		    j->via != HANDOFF_VIA_SPAWN)
			continue;
		log_warnx("on_finish for %s: still running at exit; "
		    "terminating it (the next start runs it again)", j->name);
		handoff_spawn_drain(j, 1);
		n++;
	}
	handoff_spawn_leftovers(ho, 0);
	if (n == 0 && ho->nr_leftover == 0)
		return;
	handoff_spawn_kill_all(ho, SIGTERM);
	if (handoff_spawn_wait_all(HANDOFF_KILL_GRACE) == 0)
		return;
	log_warnx("on_finish: programs still running %ds after SIGTERM; "
	    "killing them", HANDOFF_KILL_GRACE);
	handoff_spawn_kill_all(ho, SIGKILL);
	if (handoff_spawn_wait_all(HANDOFF_KILL_GRACE) == -1)
		log_warnx("on_finish: a program outlived SIGKILL");
}

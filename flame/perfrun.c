/*
 * perfrun: start the stock perf on a pipe and judge how it ended (see
 * perfrun.h).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfrun.h"

#define PERFRUN_MAX_ARGS	32
/* perf's last words shown when it fails: its messages can be long */
#define PERFRUN_ERR_TAIL	4000

extern char	**environ;

const char *
perfrun_program(void)
{
	const char	*p = getenv("PERFSPILL_PERF");

	return p != NULL && p[0] != '\0' ? p : "perf";
}

/* Is prog an executable file, itself or on PATH? */
static int
perfrun_found(const char *prog)
{
	const char	*path = getenv("PATH"), *p, *e;
	char		 buf[4096];

	if (strchr(prog, '/') != NULL)
		return access(prog, X_OK) == 0;
	if (path == NULL)
		path = "/usr/bin:/bin";
	for (p = path; ; p = e + 1) {
		e = strchrnul(p, ':');
		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p), p,
		    prog) < (int)sizeof(buf) && access(buf, X_OK) == 0)
			return 1;
		if (*e == '\0')
			return 0;
	}
}

static void
perfrun_missing(const char *prog)
{
	if (strcmp(prog, "perf") == 0)
		warnx("perf not found on PATH: it reads the trace files; "
		    "install it with: apt-get install linux-perf "
		    "(the Debian package linux-perf)");
	else
		warnx("%s (PERFSPILL_PERF) not found or not executable; "
		    "unset it to use perf from the Debian package linux-perf",
		    prog);
}

int
perfrun_start(struct perfrun *pr, const char *const *args)
{
	posix_spawn_file_actions_t	 fa;
	const char			*prog = perfrun_program();
	char				*argv[PERFRUN_MAX_ARGS + 4];
	int				 p[2] = { -1, -1 }, rc, n;
	size_t				 i, off = 0;

	memset(pr, 0, sizeof(*pr));
	pr->out = pr->err = -1;
	pr->pid = -1;
	if (!perfrun_found(prog)) {
		perfrun_missing(prog);
		return -1;
	}
	/*
	 * perf script writes its stdout through stdio's 4 KiB buffer: a
	 * pipe write, and a wakeup of ours, every 4 KiB (168 MB of text for
	 * 400,000 samples with callchains). Under stdbuf (coreutils) it
	 * writes 1 MiB at a time: perf and the folder together took 1.10 s
	 * of CPU instead of 1.40 on one such file (3 runs each, alternated).
	 */
	n = 0;
	if (perfrun_found("stdbuf")) {
		argv[n++] = (char *)"stdbuf";
		argv[n++] = (char *)"-o1M";
	}
	argv[n++] = (char *)prog;
	for (i = 0; args[i] != NULL && i < PERFRUN_MAX_ARGS; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	n = snprintf(pr->what, sizeof(pr->what), "perf");
	for (i = 0; args[i] != NULL && n > 0 &&
	    (size_t)n < sizeof(pr->what); i++) {
		off = (size_t)n;
		n += snprintf(pr->what + off, sizeof(pr->what) - off, " %s",
		    args[i]);
	}
	if ((pr->err = memfd_create("perf-stderr", MFD_CLOEXEC)) == -1 ||
	    pipe2(p, O_CLOEXEC) == -1) {
		warn("cannot start perf");
		goto error;
	}
	/* a larger pipe: fewer switches between perf and us */
	fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, pr->err, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
	    O_RDONLY, 0);
	rc = posix_spawnp(&pr->pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	p[1] = -1;
	if (rc != 0) {
		errno = rc;
		if (rc == ENOENT && argv[0] == prog)
			perfrun_missing(prog);
		else
			warn("cannot run %s", argv[0]);
		pr->pid = -1;
		goto error;
	}
	pr->out = p[0];
	return 0;
error:
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	if (pr->err != -1)
		close(pr->err);
	pr->err = -1;
	return -1;
}

/* perf's messages, the last PERFRUN_ERR_TAIL bytes, to our stderr. */
static void
perfrun_show(struct perfrun *pr)
{
	struct stat	 st;
	char		 buf[PERFRUN_ERR_TAIL + 1];
	off_t		 from;
	ssize_t		 n;

	if (pr->err == -1 || fstat(pr->err, &st) == -1 || st.st_size == 0)
		return;
	from = st.st_size > PERFRUN_ERR_TAIL ? st.st_size - PERFRUN_ERR_TAIL
	    : 0;
	if ((n = pread(pr->err, buf, sizeof(buf) - 1, from)) <= 0)
		return;
	buf[n] = '\0';
	fprintf(stderr, "%s: %s%s", pr->what, from > 0 ? "..." : "", buf);
	if (buf[n - 1] != '\n')
		fputc('\n', stderr);
}

static int
perfrun_wait(struct perfrun *pr, int *status)
{
	pid_t	 r;

	if (pr->out != -1)
		close(pr->out);
	pr->out = -1;
	if (pr->pid == -1)
		return -1;
	while ((r = waitpid(pr->pid, status, 0)) == -1 && errno == EINTR)
		;
	pr->pid = -1;
	return r == -1 ? -1 : 0;
}

int
perfrun_finish(struct perfrun *pr, int verbose)
{
	int	 status = 0, rv = -1;

	if (perfrun_wait(pr, &status) == -1)
		warn("%s", pr->what);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		rv = 0;
	if (rv == -1 || verbose)
		perfrun_show(pr);
	if (rv == -1 && WIFEXITED(status))
		warnx("%s failed (exit %d)", pr->what, WEXITSTATUS(status));
	else if (rv == -1 && WIFSIGNALED(status))
		warnx("%s was killed by signal %d", pr->what,
		    WTERMSIG(status));
	if (pr->err != -1)
		close(pr->err);
	pr->err = -1;
	return rv;
}

void
perfrun_abort(struct perfrun *pr)
{
	int	 status;

	if (pr->pid != -1)
		kill(pr->pid, SIGTERM);
	perfrun_wait(pr, &status);
	if (pr->err != -1)
		close(pr->err);
	pr->err = -1;
}

int
perfrun_capture(const char *const *args, char **out, size_t *len,
    int verbose)
{
	struct perfrun	 pr;
	char		*buf = NULL, *tmp;
	size_t		 cap = 0, n = 0;
	ssize_t		 r;

	*out = NULL;
	*len = 0;
	if (perfrun_start(&pr, args) == -1)
		return -1;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 65536;
			if ((tmp = realloc(buf, cap)) == NULL) {
				warn("reading %s", pr.what);
				free(buf);
				perfrun_abort(&pr);
				return -1;
			}
			buf = tmp;
		}
		if ((r = read(pr.out, buf + n, cap - n - 1)) == -1) {
			if (errno == EINTR)
				continue;
			warn("reading %s", pr.what);
			free(buf);
			perfrun_abort(&pr);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (perfrun_finish(&pr, verbose) == -1) {
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}

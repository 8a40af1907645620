/*
 * perfrun: the stock perf as the reader of trace files. Starts it with
 * its output on a pipe and its messages kept aside (shown when it fails,
 * or with -v), and says which package to install when it is missing.
 */
#ifndef PERFSPILL_PERFRUN_H
#define PERFSPILL_PERFRUN_H

#include <stddef.h>
#include <sys/types.h>

struct perfrun {
	pid_t		 pid;
	int		 out;		/* perf's stdout, to read */
	int		 err;		/* a memfd holding perf's stderr */
	char		 what[256];	/* "perf script -i NAME", for messages */
};

/* The perf program: $PERFSPILL_PERF, or "perf" on PATH. */
const char	*perfrun_program(void);
/* Starts perf ARGS... (args[0] is the subcommand; NULL-terminated).
 * 0, or -1 with a message printed (perf missing: the package named). */
int		 perfrun_start(struct perfrun *, const char *const *args);
/* Waits for it; 0 when it exited 0, else -1 with its messages printed.
 * verbose: its messages are printed in any case. */
int		 perfrun_finish(struct perfrun *, int verbose);
/* Stops it early (SIGTERM) and waits: the caller has read enough. */
void		 perfrun_abort(struct perfrun *);
/* Runs it to the end and returns its whole output (NUL-terminated,
 * malloc'd) in *out; 0, or -1 with a message printed. */
int		 perfrun_capture(const char *const *args, char **out,
		    size_t *len, int verbose);

#endif

/*
 * log: leveled messages to stderr (see log.h). errno is preserved across
 * every call so that callers can log and then still report the error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static const char	*log_ident = "perfspill";
static int		 log_verbose;
static int		 log_prefix;	/* write <N> priority prefixes */
static int		 log_syslog;	/* backgrounded: stderr is gone */
static int		 log_file;	/* backgrounded: stderr is our log file */

/*
 * Is stderr the journal? JOURNAL_STREAM is inherited by everything a
 * service starts, so it counts only when it names stderr's own device
 * and inode (systemd.exec(5)).
 */
static int
log_to_journal(void)
{
	const char		*e = getenv("JOURNAL_STREAM");
	unsigned long long	 dev, ino;
	struct stat		 st;

	if (e == NULL || sscanf(e, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) == -1)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

void
log_init(const char *ident, int verbose)
{
	log_ident = ident;
	log_verbose = verbose;
	/* only journald reads <N> as a level; a terminal, a pipe (| less,
	 * a script) or a file would show it as text */
	log_prefix = log_to_journal();
}

int
log_use_syslog(void)
{
	struct stat	 st;

	/* without a syslog daemon (or journald) the messages would vanish */
	if (stat(_PATH_LOG, &st) == -1 || !S_ISSOCK(st.st_mode))
		return -1;
	openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_syslog = 1;
	return 0;
}

void
log_use_file(void)
{
	log_file = 1;
}

static void
log_vmsg(int pri, const char *fmt, va_list ap, const char *suffix)
{
	char	 msg[1024];
	int	 saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_syslog)
		syslog(pri, "%s%s%s", msg, suffix ? ": " : "",
		    suffix ? suffix : "");
	else if (log_file) {
		time_t		 now = time(NULL);
		struct tm	 tm;
		char		 ts[32];

		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ",
		    gmtime_r(&now, &tm));
		fprintf(stderr, "%s %s[%ld]: %s%s%s\n", ts, log_ident,
		    (long)getpid(), msg, suffix ? ": " : "",
		    suffix ? suffix : "");
	}
	else if (log_prefix)
		fprintf(stderr, "<%d>%s%s%s\n", pri, msg,
		    suffix ? ": " : "", suffix ? suffix : "");
	else
		fprintf(stderr, "%s: %s%s%s\n", log_ident, msg,
		    suffix ? ": " : "", suffix ? suffix : "");
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	char	 err[128];

	snprintf(err, sizeof(err), "%s", strerror(errno));
	va_start(ap, fmt);
	log_vmsg(LOG_WARNING, fmt, ap, err);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	log_vmsg(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	char	 err[128];

	snprintf(err, sizeof(err), "%s", strerror(errno));
	va_start(ap, fmt);
	log_vmsg(LOG_CRIT, fmt, ap, err);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}

/*
 * log: messages to stderr. When stderr is the journal (JOURNAL_STREAM
 * names it) each line starts with a <N> syslog priority so that journald
 * files it at the right level; anywhere else (a terminal, a pipe, a
 * file) it is plain text.
 */
#ifndef PERFSPILL_LOG_H
#define PERFSPILL_LOG_H

#include <stdarg.h>

#define LOG_ATTR(f, a)	__attribute__((format(printf, f, a)))

void	log_init(const char *, int verbose);
/* From now on to syslog (LOG_DAEMON): for a daemon without a terminal.
 * -1 when there is no syslog socket to take the messages. */
int	log_use_syslog(void);
/* From now on time-stamped lines on stderr, which the caller has made a
 * log file. */
void	log_use_file(void);
void	log_warn(const char *, ...) LOG_ATTR(1, 2);	/* appends strerror(errno) */
void	log_warnx(const char *, ...) LOG_ATTR(1, 2);
void	log_info(const char *, ...) LOG_ATTR(1, 2);
void	log_debug(const char *, ...) LOG_ATTR(1, 2);
_Noreturn void	fatal(const char *, ...) LOG_ATTR(1, 2);
_Noreturn void	fatalx(const char *, ...) LOG_ATTR(1, 2);

#endif

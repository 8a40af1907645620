/*
 * handoff-mark: the mark of a file whose hand-off is owed
 * (.NAME.handoff), written, read back and removed, for handoff.c (the
 * queue, and resuming after a restart) and handoff-unit.c (the unit
 * reads it as its environment file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "handoff-int.h"
#include "log.h"

/*
 * The mark of a file whose hand-off is owed: it outlives the daemon, so
 * that the next one (an upgrade, a reboot) runs what this one could not
 * finish, with the same facts. Hidden, so retention and listings pass it.
 * It is also the environment file of perfspill-handoff@.service, which
 * reads it as systemd reads EnvironmentFile=: a backslash takes the next
 * character as it is, so quotes, blanks and backslashes of a value are
 * written behind one.
 */
static void
handoff_mark_name(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, ".%s" HANDOFF_MARK_SUFFIX, name);
}

void
handoff_mark_path(const struct handoff_job *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s/.%s" HANDOFF_MARK_SUFFIX, j->ho->dir, j->name);
}

static void
handoff_mark_line(FILE *f, const char *line)
{
	const char	*eq = strchr(line, '=');
	const char	*s;

	if (eq == NULL)
		return;
	fwrite(line, 1, (size_t)(eq - line) + 1, f);
	for (s = eq + 1; *s != '\0'; s++) {
		if (strchr("\\\"' \t", *s) != NULL)
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('\n', f);
}

/* handoff_mark_line's escapes undone, in place */
void
handoff_mark_unescape(char *line)
{
	char	*r, *w;

	for (r = w = line; *r != '\0'; r++) {
		if (*r == '\\' && r[1] != '\0')
			r++;
		*w++ = *r;
	}
	*w = '\0';
}

void
handoff_mark_write(struct handoff_job *j)
{
	char	 mark[NAME_MAX + 16], line[HANDOFF_ENV_LEN];
	FILE	*f;
	size_t	 i;
	int	 fd;

	handoff_mark_name(j->name, mark, sizeof(mark));
	if ((fd = openat(j->ho->dirfd, mark, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC | O_NOFOLLOW, 0640)) == -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		log_warn("on_finish for %s: %s (not run again after a restart)",
		    j->name, mark);
		if (fd != -1)
			close(fd);
		return;
	}
	for (i = 0; i < j->nenv; i++)
		handoff_mark_line(f, j->env[i]);
	/* for the unit: what it runs, which try this is */
	snprintf(line, sizeof(line), HANDOFF_ENV_PROGRAM "=%s", j->ho->prog);
	handoff_mark_line(f, line);
	snprintf(line, sizeof(line), HANDOFF_ENV_TRY "=%u", j->tries);
	handoff_mark_line(f, line);
	if (fclose(f) == EOF)
		log_warn("on_finish for %s: %s", j->name, mark);
}

/* The hand-off is over for good: done, given up or turned off. */
void
handoff_mark_remove(struct handoff_job *j)
{
	char	 mark[NAME_MAX + 16];

	handoff_mark_name(j->name, mark, sizeof(mark));
	if (unlinkat(j->ho->dirfd, mark, 0) == -1 && errno != ENOENT)
		log_warn("on_finish for %s: removing %s", j->name, mark);
}


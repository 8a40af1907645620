/*
 * progress: the progress line (see progress.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define PROGRESS_EVERY_NS	250000000	/* four lines a second */

static struct {
	int		 on;
	size_t		 files, file;
	const char	*name;
	const char	*how;
	uint64_t	 samples;
	int64_t		 last;
	int		 shown;
} progress;

static int64_t
progress_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
progress_init(int on, size_t files)
{
	memset(&progress, 0, sizeof(progress));
	progress.on = on == -1 ? isatty(STDERR_FILENO) : on;
	progress.files = files;
}

/*
 * The terminal's columns: its window size, else $COLUMNS, else 80. A
 * line as wide as the terminal wraps, and "\r\033[K" then clears only
 * its last row: every line stays at least a column short of it.
 */
static size_t
progress_columns(void)
{
	struct winsize	 ws;
	const char	*e;
	long		 v;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if ((e = getenv("COLUMNS")) != NULL && (v = strtol(e, NULL, 10)) > 0 &&
	    v < 10000)
		return (size_t)v;
	return 80;
}

/* Characters of s (UTF-8 continuation bytes take no column). */
static size_t
progress_width(const char *s)
{
	size_t	 n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void
progress_show(uint64_t n)
{
	const char	*base = strrchr(progress.name, '/');
	char		 head[64], tail[96];
	size_t		 cols = progress_columns(), room, w;

	base = base != NULL ? base + 1 : progress.name;
	snprintf(head, sizeof(head), "[%zu/%zu] %s ", progress.file,
	    progress.files, progress.how);
	if (progress.samples > 0)
		snprintf(tail, sizeof(tail), ": %llu of %llu samples (%.0f%%)",
		    (unsigned long long)n, (unsigned long long)progress.samples,
		    n >= progress.samples ? 100.0 : 100.0 * (double)n /
		    (double)progress.samples);
	else
		snprintf(tail, sizeof(tail), ": %llu samples",
		    (unsigned long long)n);
	w = progress_width(head) + progress_width(tail);
	room = cols > w + 1 ? cols - 1 - w : 0;
	fputs("\r\033[K", stderr);
	if (room >= 12 || progress_width(base) <= room) {
		fputs(head, stderr);
		/* a name cut keeps its end: the time and sequence of a
		 * trace file, what tells one from the next */
		if (progress_width(base) > room) {
			w = progress_width(base) - (room - 3);
			for (; w > 0 && *base; base++)
				w -= ((unsigned char)*base & 0xc0) != 0x80;
			while (((unsigned char)*base & 0xc0) == 0x80)
				base++;
			fputs("...", stderr);
		}
		fprintf(stderr, "%s%s", base, tail);
	} else
		/* a terminal narrower than the counts: they alone, cut */
		fprintf(stderr, "%.*s", (int)(cols > 1 ? cols - 1 : 0),
		    tail + 2);
	fflush(stderr);
	progress.shown = 1;
}

void
progress_file(const char *path, uint64_t samples, const char *how)
{
	progress.file++;
	progress.name = path;
	progress.how = how;
	progress.samples = samples;
	if (!progress.on)
		return;
	progress.last = progress_now();
	progress_show(0);
}

void
progress_samples(void *arg, uint64_t n)
{
	int64_t	 now;

	(void)arg;
	if (!progress.on)
		return;
	now = progress_now();
	if (now - progress.last < PROGRESS_EVERY_NS)
		return;
	progress.last = now;
	progress_show(n);
}

void
progress_done(void)
{
	if (progress.on && progress.shown)
		fputs("\r\033[K", stderr);
	progress.shown = 0;
}

/*
 * progress: the progress line (see progress.h).
 */
#include <stdio.h>
#include <string.h>
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

static void
progress_show(uint64_t n)
{
	const char	*base = strrchr(progress.name, '/');

	base = base != NULL ? base + 1 : progress.name;
	if (progress.samples > 0)
		fprintf(stderr, "\r\033[K[%zu/%zu] %s %s: %llu of %llu samples "
		    "(%.0f%%)", progress.file, progress.files, progress.how,
		    base, (unsigned long long)n,
		    (unsigned long long)progress.samples, n >=
		    progress.samples ? 100.0 : 100.0 * (double)n /
		    (double)progress.samples);
	else
		fprintf(stderr, "\r\033[K[%zu/%zu] %s %s: %llu samples",
		    progress.file, progress.files, progress.how, base,
		    (unsigned long long)n);
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

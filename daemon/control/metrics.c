/*
 * metrics writes the Prometheus text format (see metrics.h). Each family
 * gets its HELP and TYPE lines; label values are escaped as the format
 * says (backslash, double quote, line feed): the version is a build's
 * text.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "utf8.h"

static int
metrics_printf(struct sbuf *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
metrics_printf(struct sbuf *out, const char *fmt, ...)
{
	char	 buf[512];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return sbuf_append(out, buf, (size_t)n) == NULL ? -1 : 0;
}

static int
metrics_family(struct sbuf *out, const char *name, const char *type,
    const char *help)
{
	return metrics_printf(out, "# HELP perfspill_%s %s\n# TYPE perfspill_%s "
	    "%s\n", name, help, name, type);
}

static int
metrics_u64(struct sbuf *out, const char *name, const char *type,
    const char *help, uint64_t v)
{
	if (metrics_family(out, name, type, help) == -1)
		return -1;
	return metrics_printf(out, "perfspill_%s %" PRIu64 "\n", name, v);
}

/*
 * A label value: \ " and line feed escaped, at most 200 bytes of it,
 * whole characters only; a byte that is not UTF-8 (a path in another
 * encoding) becomes '?', as the text format is UTF-8 and a scraper
 * refuses the whole page for one bad label.
 */
static void
metrics_escape(char *dst, size_t len, const char *src)
{
	const unsigned char	*s = (const unsigned char *)src;
	size_t			 n = 0, c, u;

	for (; *s != '\0'; s += c) {
		c = (u = utf8_len((const char *)s)) == 0 ? 1 : u;
		if (n + c + 2 >= len || n + c > 200)
			break;
		if (*s == '\\' || *s == '"') {
			dst[n++] = '\\';
			dst[n++] = (char)*s;
		} else if (*s == '\n') {
			dst[n++] = '\\';
			dst[n++] = 'n';
		} else if (u == 0)
			dst[n++] = '?';
		else {
			memcpy(dst + n, s, c);
			n += c;
		}
	}
	dst[n] = '\0';
}

void
metrics_add(struct metrics *to, const struct metrics *from)
{
	to->samples += from->samples;
	to->lost += from->lost;
	to->lost_samples += from->lost_samples;
	to->bytes_written += from->bytes_written;
	to->bytes_dropped += from->bytes_dropped;
	to->self_excluded += from->self_excluded;
	to->files_finished += from->files_finished;
	to->files_removed += from->files_removed;
	to->handoffs_ok += from->handoffs_ok;
	to->handoffs_failed += from->handoffs_failed;
	to->recordings += from->recordings;
	to->compact_unwound_samples += from->compact_unwound_samples;
	to->compact_raw_samples += from->compact_raw_samples;
}

/*
 * Each session's own series, one family per figure, labelled with the
 * session's name (a checked name: nothing to escape). The series of an
 * on-demand session go when it ends; the daemon's totals keep its
 * counts.
 */
static int
metrics_sessions(struct sbuf *out, const struct metrics *m)
{
	static const struct {
		const char	*name;
		const char	*type;
		const char	*help;
		size_t		 off;
	} fams[] = {
#define C(n, h)	{ #n "_total", "counter", h, \
	offsetof(struct metrics_session, n) }
		C(samples, "Samples the session wrote."),
		C(lost, "Events the kernel dropped in the session's rings "
		    "(PERF_RECORD_LOST)."),
		C(lost_samples, "Samples the kernel dropped for the session "
		    "(PERF_RECORD_LOST_SAMPLES)."),
		C(bytes_written, "Bytes of the session's files written."),
		C(files_finished, "The session's trace files finished."),
		C(spills, "Drains written through the page cache: the direct "
		    "path's pool was at its bound."),
#undef C
		{ "memory_bytes", "gauge", "Memory the session holds: rings, "
		    "buffers, compression, as its start counted it.",
		    offsetof(struct metrics_session, memory) },
		{ "buffer_bytes", "gauge", "The drain's buffers the session "
		    "holds now: the direct path's pool grows under a burst, "
		    "up to what memory_bytes counts.",
		    offsetof(struct metrics_session, buffers) },
		{ "direct_io", "gauge", "1 while the session's current file "
		    "is written past the page cache (O_DIRECT).",
		    offsetof(struct metrics_session, direct) },
		{ "data_on_disk_timestamp_seconds", "gauge", "When the "
		    "session's data last reached its current file (the "
		    ".partial's mtime), seconds since the epoch; 0 while it "
		    "writes none.",
		    offsetof(struct metrics_session, data_on_disk) },
	};
	const struct metrics_session	*ms;
	size_t				 i, j;
	uint64_t			 v;
	char				 name[64];

	if (m->nr_sessions == 0)
		return 0;
	if (metrics_family(out, "session_recording", "gauge", "1 while the "
	    "session records (paused or not).") == -1)
		return -1;
	for (j = 0; j < m->nr_sessions; j++)
		if (metrics_printf(out, "perfspill_session_recording{session="
		    "\"%s\"} %d\n", m->sessions[j].name,
		    m->sessions[j].recording) == -1)
			return -1;
	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		snprintf(name, sizeof(name), "session_%s", fams[i].name);
		if (metrics_family(out, name, fams[i].type, fams[i].help) ==
		    -1)
			return -1;
		for (j = 0; j < m->nr_sessions; j++) {
			ms = &m->sessions[j];
			v = *(const uint64_t *)(const void *)((const char *)ms +
			    fams[i].off);
			if (metrics_printf(out, "perfspill_%s{session=\"%s\"} %"
			    PRIu64 "\n", name, ms->name, v) == -1)
				return -1;
		}
	}
	return 0;
}

/* The last time data reached a trace file: a file being written, the
 * newest finished one, or else the daemon's start. */
static time_t
metrics_data_on_disk(const struct metrics *m)
{
	time_t	 t = m->data_on_disk;

	if (m->last_finished > t)
		t = m->last_finished;
	return t > 0 ? t : m->started > 0 ? m->started : 0;
}

/* One series per reason, 0 or 1: the label set never changes. */
static int
metrics_paused(struct sbuf *out, const struct metrics *m)
{
	static const char *const reasons[METRICS_PAUSE__COUNT] = {
		[METRICS_PAUSE_DISK_FULL] = "disk_full",
		[METRICS_PAUSE_MIN_FREE] = "min_free",
		[METRICS_PAUSE_DIR_REMOVED] = "output_dir_removed",
		[METRICS_PAUSE_WRITE_ERROR] = "write_error",
	};
	size_t	 i;

	if (metrics_family(out, "paused", "gauge", "1 while recording is "
	    "paused for the reason the label names (perfspillctl status "
	    "says more), else 0.") == -1)
		return -1;
	for (i = 0; i < METRICS_PAUSE__COUNT; i++)
		if (metrics_printf(out, "perfspill_paused{reason=\"%s\"} %u\n",
		    reasons[i], (m->paused >> i) & 1u) == -1)
			return -1;
	return 0;
}

int
metrics_format(struct sbuf *out, const struct metrics *m)
{
	static const struct {
		const char	*name;
		const char	*help;
		size_t		 off;
	} counters[] = {
#define C(n, h)	{ #n "_total", h, offsetof(struct metrics, n) }
		C(samples, "Samples written to trace files."),
		C(lost, "Events the kernel dropped because a ring was full "
		    "(PERF_RECORD_LOST)."),
		C(lost_samples, "Samples the kernel dropped "
		    "(PERF_RECORD_LOST_SAMPLES)."),
		C(self_excluded, "perfspilld's own samples left out of the "
		    "files (exclude_self)."),
		C(files_finished, "Trace files finished (synced and renamed to "
		    "*.data)."),
		C(files_removed, "Finished trace files removed by retention."),
		C(recordings, "Recordings started."),
		C(compact_unwound_samples, "Samples of call_graph compact "
		    "that the daemon unwound and wrote as callchains."),
		C(compact_raw_samples, "Samples of call_graph compact written "
		    "raw: the unwinding worker's queue was full."),
#undef C
	};
	char	 version[256];
	size_t	 i;

	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (metrics_u64(out, counters[i].name, "counter",
		    counters[i].help, *(const uint64_t *)(const void *)
		    ((const char *)m + counters[i].off)) == -1)
			return -1;
	if (metrics_family(out, "bytes_total", "counter", "Bytes drained from "
	    "the rings, by what became of them.") == -1 ||
	    metrics_printf(out, "perfspill_bytes_total{result=\"written\"} %"
	    PRIu64 "\nperfspill_bytes_total{result=\"dropped\"} %" PRIu64 "\n",
	    m->bytes_written, m->bytes_dropped) == -1)
		return -1;
	if (metrics_family(out, "handoffs_total", "counter", "Runs of the "
	    "on_finish program, by outcome.") == -1 ||
	    metrics_printf(out, "perfspill_handoffs_total{result=\"ok\"} %"
	    PRIu64 "\nperfspill_handoffs_total{result=\"failed\"} %" PRIu64
	    "\n", m->handoffs_ok, m->handoffs_failed) == -1)
		return -1;
	if (metrics_u64(out, "aio_inflight", "gauge", "AIO writes in flight.",
	    m->aio_inflight) == -1 ||
	    metrics_u64(out, "recording", "gauge", "1 while a recording runs "
	    "(paused or not).", (uint64_t)m->recording) == -1)
		return -1;
	if (metrics_paused(out, m) == -1)
		return -1;
	if (metrics_u64(out, "memory_bytes", "gauge", "Memory the sessions "
	    "hold: rings, buffers, compression, as a start counts it.",
	    m->memory) == -1 ||
	    metrics_u64(out, "memory_budget_bytes", "gauge", "What the "
	    "sessions may hold: the cgroup's limit or the machine's memory, "
	    "less a reserve, or max_memory.", m->memory_budget) == -1 ||
	    metrics_sessions(out, m) == -1)
		return -1;
	if (metrics_u64(out, "retained_files", "gauge", "Finished trace "
	    "files in the output directory, every session's.",
	    m->retained_files) == -1 ||
	    metrics_u64(out, "retained_bytes", "gauge", "Bytes of the "
	    "finished trace files in the output directory.",
	    m->retained_bytes) == -1 ||
	    metrics_u64(out, "disk_free_bytes", "gauge", "Free bytes on the "
	    "output directory's file system, for unprivileged writers.",
	    m->disk_free) == -1 ||
	    metrics_u64(out, "last_file_finished_timestamp_seconds", "gauge",
	    "When the newest finished trace file in the output directory was "
	    "last written, seconds since the epoch; 0 while there is none.",
	    (uint64_t)(m->last_finished > 0 ? m->last_finished : 0)) == -1)
		return -1;
	if (metrics_u64(out, "data_on_disk_timestamp_seconds", "gauge", "When "
	    "data last reached a trace file in the output directory (a file "
	    "being written or the newest finished one), seconds since the "
	    "epoch; when perfspilld started, until then. A staleness alert "
	    "that a new host does not fire.",
	    (uint64_t)metrics_data_on_disk(m)) == -1)
		return -1;
	if (metrics_u64(out, "start_time_seconds", "gauge", "When perfspilld "
	    "started, seconds since the epoch.", (uint64_t)m->started) == -1)
		return -1;
	metrics_escape(version, sizeof(version), m->version ? m->version : "");
	if (metrics_family(out, "build_info", "gauge", "perfspilld's version.") ==
	    -1 || metrics_printf(out, "perfspill_build_info{version=\"%s\"} 1\n",
	    version) == -1)
		return -1;
	return 0;
}

int
metrics_write_file(const char *path, const struct sbuf *text)
{
	char	 tmp[PATH_MAX];
	int	 fd, e;

	/* beside the target: rename is atomic only within one file system;
	 * node_exporter skips names that do not end in .prom */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0644)) == -1)
		return -1;
	if (write(fd, text->data, text->len) != (ssize_t)text->len) {
		e = errno ? errno : EIO;
		goto fail;
	}
	if (close(fd) == -1) {
		e = errno;
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) == -1) {
		e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
fail:
	if (fd != -1)
		close(fd);
	unlink(tmp);
	errno = e;
	return -1;
}

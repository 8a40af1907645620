/*
 * test-metrics: the Prometheus text that metrics_format writes, line by
 * line (a scraper rejects the whole page for one bad line), and the
 * atomic replacement of a textfile-collector file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "metrics.h"

static char *
test_metrics_text(const struct metrics *m)
{
	struct sbuf	 sb;
	char		*s;

	sbuf_init(&sb);
	CHECK(metrics_format(&sb, m) == 0);
	s = calloc(1, sb.len + 1);
	memcpy(s, sb.data, sb.len);
	sbuf_finish(&sb);
	return s;
}

static int
test_metrics_has_line(const char *text, const char *line)
{
	size_t	 n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

/*
 * Prometheus' own linter on the text: `promtool check metrics` (Debian's
 * prometheus package; scripts/deps installs it) exits non-zero on a
 * page a scraper refuses and on a name against its conventions. Where
 * it is not installed (a package build) the check says so and is left
 * out; tests/integration/test_metrics.py requires it.
 */
static void
test_metrics_promtool(const char *text)
{
	static int	 said;
	FILE		*p;
	int		 rc;

	if (access("/usr/bin/promtool", X_OK) == -1) {
		if (!said++)
			printf("SKIP promtool check metrics: /usr/bin/promtool "
			    "is not installed (Debian's prometheus)\n");
		return;
	}
	fflush(stdout);
	CHECK((p = popen("/usr/bin/promtool check metrics", "w")) != NULL);
	if (p == NULL)
		return;
	fputs(text, p);
	rc = pclose(p);
	CHECK_EQ(rc, 0);
}

static void
test_metrics_format(void)
{
	static const struct metrics_session ms[] = {
		{ "default", 12000, 7, 0, 1000000, 3, 3678240, 1056768, 2, 1,
		    1796283610, 1 },
		{ "deep", 914, 0, 0, 48576, 1, 1900000, 0, 0, 0, 0, 1 },
	};
	struct metrics	 m;
	char		*t, *line, *save;
	unsigned int	 help = 0, type = 0, samples = 0;

	memset(&m, 0, sizeof(m));
	m.sessions = ms;
	m.nr_sessions = 2;
	m.memory = 3678240 + 1900000;
	m.memory_budget = 1006632960;
	m.samples = 12914;
	m.lost = 7;
	m.bytes_written = 1048576;
	m.bytes_dropped = 3;
	m.handoffs_failed = 2;
	m.aio_inflight = 4;
	m.recording = 1;
	m.started = 1796280000;
	m.version = "0.1.0";
	m.retained_files = 17;
	m.retained_bytes = UINT64_C(4) << 30;
	m.disk_free = UINT64_C(82303217664);
	m.last_finished = 1796283600;
	t = test_metrics_text(&m);
	test_metrics_promtool(t);
	CHECK(test_metrics_has_line(t, "perfspill_samples_total 12914"));
	CHECK(test_metrics_has_line(t, "# TYPE perfspill_samples_total counter"));
	CHECK(test_metrics_has_line(t, "perfspill_lost_total 7"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_bytes_total{result=\"written\"} 1048576"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_bytes_total{result=\"dropped\"} 3"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_handoffs_total{result=\"failed\"} 2"));
	CHECK(test_metrics_has_line(t, "perfspill_aio_inflight 4"));
	CHECK(test_metrics_has_line(t, "# TYPE perfspill_aio_inflight gauge"));
	CHECK(test_metrics_has_line(t, "perfspill_recording 1"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_paused{reason=\"disk_full\"} 0"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_paused{reason=\"write_error\"} 0"));
	CHECK(strstr(t, "reason=\"\"") == NULL);
	/* the output directory: retention's files, free space, staleness */
	CHECK(test_metrics_has_line(t, "perfspill_retained_files 17"));
	CHECK(test_metrics_has_line(t, "perfspill_retained_bytes 4294967296"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_disk_free_bytes 82303217664"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_last_file_finished_timestamp_seconds 1796283600"));
	CHECK(test_metrics_has_line(t,
	    "# TYPE perfspill_retained_files gauge"));
	CHECK(test_metrics_has_line(t, "perfspill_start_time_seconds 1796280000"));
	/* staleness: the newest of the files being written and finished */
	CHECK(test_metrics_has_line(t,
	    "perfspill_data_on_disk_timestamp_seconds 1796283600"));
	m.data_on_disk = 1796283610;
	free(t);
	t = test_metrics_text(&m);
	CHECK(test_metrics_has_line(t,
	    "perfspill_data_on_disk_timestamp_seconds 1796283610"));
	CHECK(test_metrics_has_line(t, "perfspill_session_data_on_disk_"
	    "timestamp_seconds{session=\"default\"} 1796283610"));
	CHECK(test_metrics_has_line(t, "perfspill_session_data_on_disk_"
	    "timestamp_seconds{session=\"deep\"} 0"));
	/* a new host: nothing written yet, the daemon's start stands in */
	m.data_on_disk = 0;
	m.last_finished = 0;
	free(t);
	t = test_metrics_text(&m);
	CHECK(test_metrics_has_line(t,
	    "perfspill_data_on_disk_timestamp_seconds 1796280000"));
	m.last_finished = 1796283600;
	free(t);
	t = test_metrics_text(&m);
	CHECK(test_metrics_has_line(t,
	    "perfspill_build_info{version=\"0.1.0\"} 1"));
	/* the sessions' own series, labelled; the totals above are theirs */
	CHECK(test_metrics_has_line(t, "perfspill_memory_bytes 5578240"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_buffer_bytes{session=\"default\"} 1056768"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_spills_total{session=\"default\"} 2"));
	CHECK(test_metrics_has_line(t,
	    "# TYPE perfspill_session_spills_total counter"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_memory_budget_bytes 1006632960"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_recording{session=\"deep\"} 1"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_samples_total{session=\"default\"} 12000"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_lost_total{session=\"default\"} 7"));
	CHECK(test_metrics_has_line(t,
	    "# TYPE perfspill_session_samples_total counter"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_files_finished_total{session=\"deep\"} 1"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_memory_bytes{session=\"deep\"} 1900000"));
	CHECK(test_metrics_has_line(t,
	    "# TYPE perfspill_session_memory_bytes gauge"));
	/* which path each session's file takes */
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_direct_io{session=\"default\"} 1"));
	CHECK(test_metrics_has_line(t,
	    "perfspill_session_direct_io{session=\"deep\"} 0"));
	CHECK(t[strlen(t) - 1] == '\n');
	/* every family: one HELP, one TYPE, before its samples */
	for (line = strtok_r(t, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0)
			help++;
		else if (strncmp(line, "# TYPE ", 7) == 0) {
			type++;
			CHECK_EQ(help, type);
		} else {
			samples++;
			CHECK(strncmp(line, "perfspill_", 10) == 0);
			CHECK(strchr(line, ' ') != NULL);
		}
	}
	CHECK_EQ(help, type);
	CHECK(samples >= help);
	free(t);
}

/* The sample lines' names and labels, without their values: a
 * series' identity. */
static char *
test_metrics_series(const char *text)
{
	char	*out = calloc(1, strlen(text) + 1), *o = out;
	const char *p, *e, *sp;

	for (p = text; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		if (*p == '#')
			continue;
		sp = memchr(p, ' ', (size_t)(e - p));
		memcpy(o, p, (size_t)((sp ? sp : e) - p));
		o += (sp ? sp : e) - p;
		*o++ = '\n';
	}
	*o = '\0';
	return out;
}

/* A pause sets a value; the series stay the same ones. */
static void
test_metrics_paused_keeps_its_series(void)
{
	static const char *const reasons[] = { "disk_full", "min_free",
	    "output_dir_removed", "write_error" };
	struct metrics	 m;
	char		*t0, *t1, *s0, *s1, line[96];
	size_t		 i, j;

	memset(&m, 0, sizeof(m));
	m.recording = 1;
	t0 = test_metrics_text(&m);
	s0 = test_metrics_series(t0);
	for (i = 0; i < METRICS_PAUSE__COUNT; i++) {
		m.paused = 1u << i;
		t1 = test_metrics_text(&m);
		s1 = test_metrics_series(t1);
		CHECK_STR(s1, s0);
		for (j = 0; j < METRICS_PAUSE__COUNT; j++) {
			snprintf(line, sizeof(line), "perfspill_paused{reason="
			    "\"%s\"} %d", reasons[j], i == j);
			CHECK(test_metrics_has_line(t1, line));
		}
		test_metrics_promtool(t1);
		free(s1);
		free(t1);
	}
	free(s0);
	free(t0);
}

static void
test_metrics_label_is_escaped(void)
{
	struct metrics	 m;
	char		*t;

	memset(&m, 0, sizeof(m));
	m.version = "0.1 \"rc\"\\\nnow";
	t = test_metrics_text(&m);
	CHECK(test_metrics_has_line(t,
	    "perfspill_build_info{version=\"0.1 \\\"rc\\\"\\\\\\nnow\"} 1"));
	test_metrics_promtool(t);
	free(t);
}

/* The text format is UTF-8: a long label is not cut inside a character,
 * and bytes that are not UTF-8 (a Latin-1 path) are not passed on. */
static void
test_metrics_label_stays_utf8(void)
{
	struct metrics	 m;
	char		 label[256], want[256];
	char		*t;

	memset(&m, 0, sizeof(m));
	memset(label, 'a', 199);
	snprintf(label + 199, sizeof(label) - 199, "\xc3\xa9 and more");
	m.version = label;
	t = test_metrics_text(&m);
	snprintf(want, sizeof(want), "perfspill_build_info{version=\"%.199s\"} "
	    "1", label);
	CHECK(test_metrics_has_line(t, want));
	free(t);
	m.version = "/tmp/caf\xe9 build, \xe2\x82\xac ok";
	t = test_metrics_text(&m);
	CHECK(test_metrics_has_line(t, "perfspill_build_info{version=\"/tmp/"
	    "caf? build, \xe2\x82\xac ok\"} 1"));
	test_metrics_promtool(t);
	free(t);
}

static void
test_metrics_write_file(void)
{
	char		 dir[] = "/tmp/test-metrics-XXXXXX", path[64], tmp[80];
	struct sbuf	 sb;
	struct stat	 st;
	char		 buf[64];
	int		 fd;
	ssize_t		 n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/perfspill.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	sbuf_init(&sb);
	sbuf_append(&sb, "perfspill_recording 1\n", 22);
	CHECK(metrics_write_file(path, &sb) == 0);
	sb.len = 0;
	sbuf_append(&sb, "perfspill_recording 0\n", 22);
	CHECK(metrics_write_file(path, &sb) == 0);
	CHECK((fd = open(path, O_RDONLY)) != -1);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	CHECK(n == 22 && memcmp(buf, "perfspill_recording 0\n", 22) == 0);
	CHECK(stat(tmp, &st) == -1);	/* no temporary left behind */
	/* a directory that does not exist: an error, nothing written */
	snprintf(path, sizeof(path), "%s/no/perfspill.prom", dir);
	CHECK(metrics_write_file(path, &sb) == -1);
	sbuf_finish(&sb);
	snprintf(path, sizeof(path), "%s/perfspill.prom", dir);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	test_metrics_format();
	test_metrics_paused_keeps_its_series();
	test_metrics_label_is_escaped();
	test_metrics_label_stays_utf8();
	test_metrics_write_file();
	return check_exit();
}

/*
 * manifest: the JSON facts beside each finished trace file (see
 * manifest.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata/buildid.h"
#include "jemit.h"
#include "manifest.h"
#include "paths.h"
#include "perfdata/perf-abi.h"
#include "proto.h"

/* where HEADER_BUILD_ID's parts are (perf-abi.h) */
#define MANIFEST_BID(field)	\
	offsetof(struct perf_record_header_build_id, field)
#define MANIFEST_BID_NAME	MANIFEST_BID(filename)

int
manifest_name(const char *name, char *buf, size_t len)
{
	int	 n = snprintf(buf, len, "%s.json", name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

void
manifest_unlink_beside(int dirfd, const char *name)
{
	char	 buf[NAME_MAX + 16];

	if (manifest_name(name, buf, sizeof(buf)) == 0)
		unlinkat(dirfd, buf, 0);
	if (snprintf(buf, sizeof(buf), "%s%s", name, MANIFEST_FOLDED_SUFFIX) <
	    (int)sizeof(buf))
		unlinkat(dirfd, buf, 0);
	if (snprintf(buf, sizeof(buf), "%s%s", name,
	    MANIFEST_JITMAPS_SUFFIX) < (int)sizeof(buf))
		unlinkat(dirfd, buf, 0);
}

/* {"file": NAME.perf-maps.tar, "pids": [...]}, or NULL: none. */
static json_object *
manifest_jitmaps(const struct record_file_facts *f)
{
	json_object	*o, *a;
	char		 buf[NAME_MAX + 16];
	size_t		 i;

	if (f->jit_n == 0 || snprintf(buf, sizeof(buf), "%s%s", f->name,
	    MANIFEST_JITMAPS_SUFFIX) >= (int)sizeof(buf) ||
	    (o = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(o, "file", json_object_new_string(buf));
	if ((a = json_object_new_array()) != NULL)
		for (i = 0; i < f->jit_n; i++)
			json_object_array_add(a,
			    json_object_new_uint64(f->jit_pids[i]));
	json_object_object_add(o, "pids", a);
	return o;
}

/* The first line of path without its newline, or "" when unreadable. */
static void
manifest_line(const char *path, char *buf, size_t len)
{
	FILE	*f;

	buf[0] = '\0';
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void
manifest_add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v[0] ? json_object_new_string(v) : NULL);
}

static void
manifest_add_utc(json_object *o, const char *k, time_t t, long nsec)
{
	struct tm	 tm;
	char		 buf[48];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	if (nsec >= 0)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
		    ".%09ldZ", nsec);
	else
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "Z");
	json_object_object_add(o, k, json_object_new_string(buf));
}

/*
 * A sample time on the wall clock. perf's clock (events without
 * use_clockid) is the kernel's local clock, which counts like
 * CLOCK_MONOTONIC; the offset of the two clocks now maps it, to within
 * the drift since boot, which is why the manifest calls it approximate.
 */
static void
manifest_add_wall(json_object *o, const char *k, uint64_t t)
{
	struct timespec	 mono, real;
	int64_t		 off, w;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	off = ((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * 1000000000 +
	    (real.tv_nsec - mono.tv_nsec);
	w = (int64_t)t + off;
	manifest_add_utc(o, k, (time_t)(w / 1000000000),
	    (long)(w % 1000000000));
}

json_object *
manifest_buildids(const uint8_t *buf, size_t len)
{
	struct perf_event_header	 h;
	json_object			*a, *e, *seen;
	char				 hex[2 * BUILDID_MAX + 1];
	char				 key[2 * BUILDID_MAX + PATH_MAX + 2];
	size_t				 off, i, n, idlen;

	/* a file is named at its first map in the preamble and again in
	 * each flush: one entry per (id, path) */
	if ((a = json_object_new_array()) == NULL)
		return NULL;
	if ((seen = json_object_new_object()) == NULL) {
		json_object_put(a);
		return NULL;
	}
	for (off = 0; len - off >= sizeof(h); off += h.size) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		if (h.type != PERF_RECORD_HEADER_BUILD_ID ||
		    h.size <= MANIFEST_BID_NAME)
			continue;
		idlen = buf[off + MANIFEST_BID(size)];
		if (idlen == 0 || idlen > BUILDID_MAX)
			idlen = BUILDID_MAX;	/* an old record: no size */
		n = strnlen((const char *)buf + off + MANIFEST_BID_NAME,
		    h.size - MANIFEST_BID_NAME);
		for (i = 0; i < idlen; i++)
			snprintf(hex + 2 * i, 3, "%02x",
			    buf[off + MANIFEST_BID(build_id) + i]);
		snprintf(key, sizeof(key), "%s %.*s", hex, (int)n,
		    (const char *)buf + off + MANIFEST_BID_NAME);
		if (json_object_object_get_ex(seen, key, NULL))
			continue;
		json_object_object_add(seen, key, NULL);
		if ((e = json_object_new_object()) == NULL)
			break;
		json_object_object_add(e, "build_id",
		    json_object_new_string(hex));
		json_object_object_add(e, "path", json_object_new_string_len(
		    (const char *)buf + off + MANIFEST_BID_NAME, (int)n));
		json_object_array_add(a, e);
	}
	json_object_put(seen);
	return a;
}

/* A salvaged file's opening is not known: null. */
static void
manifest_add_opened(json_object *o, const char *key, const void *base)
{
	const struct record_file_facts	*f = base;

	if (f->opened != 0)
		manifest_add_utc(o, key, f->opened, -1);
	else
		json_object_object_add(o, key, NULL);
}

static void
manifest_add_finished(json_object *o, const char *key, const void *base)
{
	const struct record_file_facts	*f = base;

	manifest_add_utc(o, key, f->finished, -1);
}

/* The file, where and by which session it was recorded. */
static const struct jemit_field manifest_name_rows[] = {
	JEMIT_SP("file", struct record_file_facts, name),
	JEMIT_SP("host", struct record_file_facts, host),
	JEMIT_SP("session", struct record_file_facts, session), /* NULL: null */
	JEMIT_ROWS_END
};

/* call_graph compact: how many samples the daemon unwound, and how many
 * went raw because its worker fell behind. */
static const struct jemit_field manifest_compact_rows[] = {
	JEMIT_U("unwound_samples", struct record_file_facts, unwound),
	JEMIT_U("raw_samples", struct record_file_facts, raw_samples),
	JEMIT_ROWS_END
};

static const struct jemit_field manifest_kernel_rows[] = {
	JEMIT_S("release", struct utsname, release),
	JEMIT_S("version", struct utsname, version),
	JEMIT_S("machine", struct utsname, machine),
	JEMIT_ROWS_END
};

/* What the file is and holds, after the machine's facts. */
static const struct jemit_field manifest_facts_rows[] = {
	JEMIT_U("seq", struct record_file_facts, seq),
	JEMIT_B("salvaged", struct record_file_facts, salvaged),
	{ .key = "snapshot_trigger", .member = JEMIT_MEMBER(JEMIT_STRP,
	    struct record_file_facts, trigger), .empty = JEMIT_OMIT },
	JEMIT_FN_ROW("opened", manifest_add_opened),
	JEMIT_FN_ROW("finished", manifest_add_finished),
	JEMIT_U("bytes", struct record_file_facts, bytes),
	JEMIT_U("samples", struct record_file_facts, samples),
	JEMIT_U("lost", struct record_file_facts, lost),
	JEMIT_U("lost_samples", struct record_file_facts, lost_samples),
	JEMIT_IF(JEMIT_BOOL, struct record_file_facts, compact,
	    manifest_compact_rows),
	JEMIT_ROWS_END
};

json_object *
manifest_build(const struct record_file_facts *f)
{
	json_object	*o, *k;
	struct utsname	 u;
	char		 line[128];

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	proto_add_u64(o, "manifest_version", 1);
	jemit_add(o, manifest_name_rows, f);
	/* the machine's facts */
	manifest_line("/etc/machine-id", line, sizeof(line));
	manifest_add_str(o, "machine_id", line);
	manifest_line("/proc/sys/kernel/random/boot_id", line, sizeof(line));
	manifest_add_str(o, "boot_id", line);
	if (uname(&u) == 0 &&
	    (k = jemit_object(manifest_kernel_rows, &u)) != NULL)
		json_object_object_add(o, "kernel", k);
	json_object_object_add(o, "perfspill_version",
	    json_object_new_string(PERFSPILL_VERSION));
	jemit_add(o, manifest_facts_rows, f);
	if (f->samples > 0 && f->time_first != 0) {
		/* nanoseconds of perf's clock, as perf script prints them */
		proto_add_u64(o, "first_sample_time", f->time_first);
		proto_add_u64(o, "last_sample_time", f->time_last);
		manifest_add_wall(o, "first_sample_utc_approx", f->time_first);
		manifest_add_wall(o, "last_sample_utc_approx", f->time_last);
	} else {
		json_object_object_add(o, "first_sample_time", NULL);
		json_object_object_add(o, "last_sample_time", NULL);
	}
	json_object_object_add(o, "settings", f->cfg != NULL ?
	    config_to_json(f->cfg, 0) : NULL);
	json_object_object_add(o, "buildids",
	    manifest_buildids(f->buildids, f->buildids_len));
	json_object_object_add(o, "perf_maps", manifest_jitmaps(f));
	return o;
}

void
manifest_set_jitmaps(json_object *o, const struct record_file_facts *f)
{
	json_object_object_add(o, "perf_maps", manifest_jitmaps(f));
}

int
manifest_write(int dirfd, const struct record_file_facts *f)
{
	json_object	*o;
	int		 rc;

	if ((o = manifest_build(f)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = manifest_write_built(dirfd, f->name, o);
	json_object_put(o);
	return rc;
}

int
manifest_write_built(int dirfd, const char *file, json_object *o)
{
	const char	*s;
	char		 name[NAME_MAX + 1], tmp[NAME_MAX + 1];
	size_t		 len, done = 0;
	ssize_t		 n;
	int		 fd = -1, saved;

	if (manifest_name(file, name, sizeof(name)) == -1 ||
	    snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	/*
	 * On the loop, like the directory fsync of the data file's rename:
	 * a few KiB and one fsync (0.5-4 ms measured on this VM's ext4),
	 * without which a crash could leave an empty manifest under its
	 * final name. A leftover temp file of a crash is ours to replace.
	 */
	unlinkat(dirfd, tmp, 0);
	if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0640)) == -1)
		goto error;
	/* as the data file: for the on_finish program's group */
	fchmod(fd, 0640);
	while (done < len) {
		if ((n = write(fd, s + done, len - done)) == -1) {
			if (errno == EINTR)
				continue;
			goto error;
		}
		done += (size_t)n;
	}
	if (write(fd, "\n", 1) != 1 || fsync(fd) == -1)
		goto error;
	if (close(fd) == -1) {
		fd = -1;
		goto error;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) == -1)
		goto error;
	return 0;
error:
	saved = errno;
	if (fd != -1)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	errno = saved;
	return -1;
}

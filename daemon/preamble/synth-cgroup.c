/*
 * synth-cgroup: a PERF_RECORD_CGROUP for every cgroup that exists when
 * a file starts. The kernel reports only cgroups created after the
 * tracking event was opened (attr.cgroup); without these records perf
 * report --sort cgroup could show the id of a sample's cgroup but not
 * its name. The path is relative to the cgroup2 mount ("/" for the
 * root), the id is the directory's file handle, as perf record
 * --all-cgroups writes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "synth-int.h"

/* Deeper than any real hierarchy (systemd nests a handful of levels);
 * a bound so that a pathological tree cannot exhaust the stack. */
#define SYNTH_CGROUP_DEPTH	32

static int
synth_cgroup_one(struct sbuf *out, size_t trailer, const char *abs,
    const char *rel)
{
	struct synth_rec	 r;
	uint64_t		 id;

	/* gone meanwhile, or not a cgroup: perf simply will not name it */
	if (cgroup_id(abs, &id) == -1)
		return 0;
	synth_rec_begin(&r, out, PERF_RECORD_CGROUP, 0);
	synth_rec_u64(&r, id);
	synth_rec_str(&r, rel, 8);
	return synth_rec_end(&r, trailer);
}

static int
synth_cgroup_walk(struct sbuf *out, size_t trailer, char *abs, size_t alen,
    char *rel, size_t rlen, int depth)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 a = strlen(abs), l = strlen(rel);
	int		 rc = 0;

	if (synth_cgroup_one(out, trailer, abs, l ? rel : "/") == -1)
		return -1;
	if (depth >= SYNTH_CGROUP_DEPTH || (d = opendir(abs)) == NULL)
		return 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (a + 1 + strlen(de->d_name) >= alen ||
		    l + 1 + strlen(de->d_name) >= rlen)
			continue;
		snprintf(abs + a, alen - a, "/%s", de->d_name);
		snprintf(rel + l, rlen - l, "/%s", de->d_name);
		rc = synth_cgroup_walk(out, trailer, abs, alen, rel, rlen,
		    depth + 1);
		abs[a] = '\0';
		rel[l] = '\0';
	}
	closedir(d);
	return rc;
}

int
synth_cgroups(struct sbuf *out, const struct synth_ctx *ctx)
{
	char	 abs[4096], rel[4096];

	if (ctx->cgroupfs == NULL)
		return 0;
	snprintf(abs, sizeof(abs), "%s", ctx->cgroupfs);
	rel[0] = '\0';
	return synth_cgroup_walk(out, synth_trailer(ctx), abs, sizeof(abs),
	    rel, sizeof(rel), 0);
}

/*
 * perfspill-flame: from perfspilld's trace files to a flame graph. Picks
 * the files a time range covers (pick), folds each with the stock perf
 * (fold; a whole file once, kept as its companion), adds every file's
 * stacks together, and writes the graph (svg) and/or folded stacks (view)
 * of what the filters keep: for all hosts together, or one per host.
 *
 * Exit codes: 0 written, 1 an error (a file, perf), 2 usage.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "companion.h"
#include "fold.h"
#include "opts.h"
#include "pick.h"
#include "progress.h"
#include "stackset.h"
#include "svg.h"
#include "view.h"

/* What was read, for the title and the closing line. */
struct flame_run {
	int64_t		 from, to;	/* wall ns of the samples kept */
	size_t		 files, companions;
};

static void
flame_span(struct flame_run *r, int64_t a, int64_t b)
{
	if (r->files == 0 || a < r->from)
		r->from = a;
	if (r->files == 0 || b > r->to)
		r->to = b;
	r->files++;
}

/* A whole file: from its companion, or folded and kept as one. */
static int
flame_whole(struct stackset *all, struct pick_file *f, const struct opts *o,
    struct flame_run *run)
{
	struct companion_facts	 want, cf;
	struct fold_opts	 fo;
	struct fold_stats	 st;
	struct stackset		*one;
	int			 rv = -1;

	if ((one = stackset_create()) == NULL) {
		warnx("out of memory");
		return -1;
	}
	memset(&want, 0, sizeof(want));
	want.src_size = f->size;
	want.src_mtime = f->mtime;
	snprintf(want.host, sizeof(want.host), "%s", f->host);
	if (o->companion && !o->refold &&
	    companion_read(f->path, one, &want, &cf) == 0) {
		if (o->verbose)
			fprintf(stderr, "perfspill-flame: %s: %" PRIu64
			    " samples from its companion\n", f->path,
			    stackset_samples(one));
		progress_file(f->path, 0, "companion of");
		run->companions++;
	} else {
		if (errno != ENOENT && o->companion && !o->refold)
			warnx("%s%s: %s; folding the file again", f->path,
			    COMPANION_SUFFIX, errno == ESTALE ? "made from "
			    "another version of the file" : "not a companion");
		stackset_free(one);
		if ((one = stackset_create()) == NULL) {
			warnx("out of memory");
			return -1;
		}
		memset(&fo, 0, sizeof(fo));
		fo.tmax = UINT64_MAX;
		fo.host = stackset_intern(one, f->host, strlen(f->host),
		    STACK_LABEL);
		fo.progress = progress_samples;
		progress_file(f->path, f->samples, "folding");
		if (fold_file(one, f->path, &fo, f->cgroups, o->verbose,
		    &st) == -1)
			goto out;
		if (o->companion) {
			cf = want;
			cf.samples = st.kept;
			cf.first = f->first != 0 ? f->first : st.first;
			cf.last = f->last != 0 ? f->last : st.last;
			cf.wall_off = f->wall_off;
			cf.cgroups = f->cgroups;
			snprintf(cf.host, sizeof(cf.host), "%s", f->host);
			if (companion_write(f->path, one, &cf) == -1 &&
			    (o->verbose || o->companion_only))
				warn("%s%s: not kept", f->path,
				    COMPANION_SUFFIX);
		}
	}
	if (stackset_merge(all, one) == -1) {
		warnx("out of memory");
		goto out;
	}
	flame_span(run, (int64_t)f->first + f->wall_off,
	    (int64_t)f->last + f->wall_off);
	rv = 0;
out:
	stackset_free(one);
	return rv;
}

/* A file the range cuts: only its samples inside, straight from perf. */
static int
flame_part(struct stackset *all, struct pick_file *f, const struct opts *o,
    struct flame_run *run)
{
	struct fold_opts	 fo;
	struct fold_stats	 st;
	int64_t			 a, b;

	/* the range on perf's clock; an open end stays open */
	memset(&fo, 0, sizeof(fo));
	fo.tmax = UINT64_MAX;
	if (o->from != INT64_MIN) {
		a = o->from - f->wall_off;
		fo.tmin = a < 0 ? 0 : (uint64_t)a;
	}
	if (o->to != INT64_MAX) {
		b = o->to - f->wall_off;
		fo.tmax = b < 0 ? 0 : (uint64_t)b;
	}
	fo.host = stackset_intern(all, f->host, strlen(f->host), STACK_LABEL);
	fo.progress = progress_samples;
	progress_file(f->path, f->samples, "reading part of");
	if (fold_file(all, f->path, &fo, f->cgroups, o->verbose, &st) == -1)
		return -1;
	if (o->verbose)
		fprintf(stderr, "perfspill-flame: %s: %" PRIu64 " of %" PRIu64
		    " samples in the range\n", f->path, st.kept, st.read);
	if (st.kept > 0)
		flame_span(run, (int64_t)st.first + f->wall_off,
		    (int64_t)st.last + f->wall_off);
	return 0;
}

/* "a, b and 3 more" of up to VIEW_MAX_NAMES names of n. */
static void
flame_names(char *buf, size_t len, const char *const *names, size_t n)
{
	size_t	 i, shown = n < 3 ? n : 3, off;

	buf[0] = '\0';
	for (i = 0; i < shown; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
		    names[i]);
	}
	off = strlen(buf);
	if (n > shown)
		snprintf(buf + off, len - off, " and %zu more", n - shown);
}

static void
flame_subtitle(char *buf, size_t len, const struct view_info *vi,
    const struct flame_run *run, const struct opts *o)
{
	char	 hosts[256], events[256], a[40], b[40];
	size_t	 off, i;

	flame_names(hosts, sizeof(hosts), vi->hosts, vi->nhosts);
	flame_names(events, sizeof(events), vi->events, vi->nevents);
	opts_utc(run->from, a, sizeof(a), 0);
	opts_utc(run->to, b, sizeof(b), 0);
	a[strlen(a) - 1] = '\0';	/* one "UTC" says it for both */
	b[strlen(b) - 1] = '\0';
	a[10] = b[10] = ' ';
	snprintf(buf, len, "%s %s \xc2\xb7 %s to %s UTC \xc2\xb7 %s \xc2\xb7 "
	    "%" PRIu64 " samples", vi->nhosts == 1 ? "host" : "hosts", hosts,
	    a, strncmp(a, b, 10) == 0 ? b + 11 : b,
	    vi->nevents ? events : "no events", vi->samples);
	for (i = 0; i < o->ncomms; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, " \xc2\xb7 comm %s", o->comms[i]);
	}
	for (i = 0; i < o->npids; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, " \xc2\xb7 pid %" PRIu32,
		    o->pids[i]);
	}
	for (i = 0; i < o->ncgroups; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, " \xc2\xb7 cgroup %s",
		    o->cgroups[i]);
	}
	off = strlen(buf);
	if (o->kernel_only)
		snprintf(buf + off, len - off, " \xc2\xb7 kernel frames");
	else if (o->user_only)
		snprintf(buf + off, len - off, " \xc2\xb7 user frames");
}

/* name with the host in it: at %h, or before the extension. */
static int
flame_host_name(char *buf, size_t len, const char *name, const char *host)
{
	const char	*h = strstr(name, "%h"), *dot, *slash;
	int		 n;

	if (h != NULL)
		n = snprintf(buf, len, "%.*s%s%s", (int)(h - name), name, host,
		    h + 2);
	else {
		dot = strrchr(name, '.');
		slash = strrchr(name, '/');
		if (dot == NULL || (slash != NULL && dot < slash) ||
		    dot == name || (slash != NULL && dot == slash + 1))
			n = snprintf(buf, len, "%s-%s", name, host);
		else
			n = snprintf(buf, len, "%.*s-%s%s", (int)(dot - name),
			    name, host, dot);
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static FILE *
flame_open(const char *name)
{
	FILE	*f;

	if (strcmp(name, "-") == 0)
		return stdout;
	if ((f = fopen(name, "we")) == NULL)
		warn("%s", name);
	return f;
}

static int
flame_close(FILE *f, const char *name, int rv)
{
	if (f == stdout)
		return fflush(f) == EOF || rv == -1 ? -1 : 0;
	if (fclose(f) == EOF || rv == -1) {
		warn("%s", name);
		return -1;
	}
	return 0;
}

/* The outputs of one graph: all hosts (host NULL), or one. */
static int
flame_output(const struct stackset *all, const struct opts *o,
    const struct flame_run *run, const char *host)
{
	struct view_info	 vi;
	struct svg_opts		 so;
	struct stackset		*v;
	char			 name[PATH_MAX], sub[1024], title[512];
	FILE			*f;
	int			 rv = 0;

	if ((v = view_build(all, o, host, &vi)) == NULL) {
		warnx("out of memory");
		return -1;
	}
	if (vi.samples == 0)
		warnx("%s%sno samples match the filters", host ? host : "",
		    host ? ": " : "");
	if (o->folded != NULL) {
		if (host != NULL && flame_host_name(name, sizeof(name),
		    o->folded, host) == -1) {
			warnx("%s: name too long", o->folded);
			rv = -1;
		} else if ((f = flame_open(host ? name : o->folded)) == NULL)
			rv = -1;
		else
			rv |= flame_close(f, host ? name : o->folded,
			    view_write_folded(v, f));
	}
	if (o->svg != NULL && rv == 0) {
		if (host != NULL && flame_host_name(name, sizeof(name), o->svg,
		    host) == -1) {
			warnx("%s: name too long", o->svg);
			rv = -1;
			goto out;
		}
		flame_subtitle(sub, sizeof(sub), &vi, run, o);
		snprintf(title, sizeof(title), "%s%s", o->title ? o->title :
		    o->inverted ? "Icicle graph" : "Flame graph",
		    o->title == NULL && o->reverse ? " (reversed: callees "
		    "below their callers)" : "");
		so.title = title;
		so.subtitle = sub;
		so.width = o->width;
		so.inverted = o->inverted;
		if ((f = flame_open(host ? name : o->svg)) == NULL)
			rv = -1;
		else if ((rv = flame_close(f, host ? name : o->svg,
		    svg_write(f, v, &so))) == 0 && o->progress != 0 &&
		    strcmp(o->svg, "-") != 0)
			fprintf(stderr, "perfspill-flame: wrote %s (%" PRIu64
			    " samples)\n", host ? name : o->svg, vi.samples);
	}
out:
	stackset_free(v);
	return rv;
}

int
main(int argc, char **argv)
{
	struct opts		 o;
	struct pick_list	 l;
	struct flame_run	 run;
	struct stackset		*all = NULL;
	enum pick_cover		*cover = NULL;
	size_t			 i, j, chosen = 0;
	char			 a[40], b[40];
	int			 rv = 1;

	opts_parse(&o, argc, argv);
	memset(&l, 0, sizeof(l));
	memset(&run, 0, sizeof(run));
	for (i = 0; i < o.ninputs; i++)
		if (pick_add(&l, o.inputs[i]) == -1)
			goto out;
	if (l.n == 0) {
		warnx("no trace files (NAME.data) in %s%s", o.inputs[0],
		    o.ninputs > 1 ? " or the other paths given" : "");
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (pick_facts(&l.f[i], o.verbose) == -1)
			goto out;
	pick_sort(&l);
	if ((cover = calloc(l.n, sizeof(*cover))) == NULL ||
	    (all = stackset_create()) == NULL) {
		warnx("out of memory");
		goto out;
	}
	for (i = 0; i < l.n; i++) {
		cover[i] = pick_cover(&l.f[i], o.ranged ? o.from : INT64_MIN,
		    o.ranged ? o.to : INT64_MAX);
		if (o.verbose)
			fprintf(stderr, "perfspill-flame: %s (%s, facts from "
			    "its %s): %s\n", l.f[i].path, l.f[i].host,
			    l.f[i].facts ? l.f[i].facts : "none",
			    cover[i] == PICK_WHOLE ? "whole" : cover[i] ==
			    PICK_PART ? "part" : "not in the range");
		chosen += cover[i] != PICK_NONE;
	}
	if (chosen == 0) {
		if (o.ranged)
			warnx("none of the %zu trace files has samples from %s "
			    "to %s", l.n, opts_utc(o.from, a, sizeof(a), 0),
			    o.to == INT64_MAX ? "now" :
			    opts_utc(o.to, b, sizeof(b), 0));
		else
			warnx("none of the %zu trace files has samples", l.n);
		goto out;
	}
	progress_init(o.progress, chosen);
	for (i = 0; i < l.n; i++) {
		if (cover[i] == PICK_NONE)
			continue;
		if ((cover[i] == PICK_WHOLE ? flame_whole(all, &l.f[i], &o,
		    &run) : flame_part(all, &l.f[i], &o, &run)) == -1) {
			progress_done();
			goto out;
		}
	}
	progress_done();
	if (o.companion_only) {
		rv = 0;
		goto out;
	}
	if (run.files == 0)
		run.from = run.to = o.from;
	if (!o.per_host) {
		rv = flame_output(all, &o, &run, NULL) == -1;
		goto out;
	}
	rv = 0;
	for (i = 0; i < l.n; i++) {
		if (cover[i] == PICK_NONE)
			continue;
		for (j = 0; j < i; j++)
			if (cover[j] != PICK_NONE &&
			    strcmp(l.f[j].host, l.f[i].host) == 0)
				break;
		if (j == i && flame_output(all, &o, &run, l.f[i].host) == -1)
			rv = 1;
	}
out:
	free(cover);
	stackset_free(all);
	pick_free(&l);
	return rv;
}

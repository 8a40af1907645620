/*
 * perfspill-flame: from perfspilld's trace files to a flame graph. Picks
 * the files a time range covers (pick), folds each with perfspill's own
 * reader (fold; a whole file once, kept as its companion), adds every file's
 * stacks together, and writes the graph (svg) and/or folded stacks (view)
 * of what the filters keep: for all hosts together, or one per host. The
 * files are those of one recording session (default) unless told:
 * sessions at different rates added together count one CPU time twice.
 *
 * A file that cannot be read is skipped with a warning naming it, and
 * counted in the graph's subtitle: one bad file never hides the rest.
 *
 * Exit codes: 0 written, 1 an error (no file readable, no samples in the
 * range, of the session or through the filters, output), 2 usage.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "companion.h"
#include "diff.h"
#include "fold.h"
#include "live.h"
#include "opts.h"
#include "otlpout.h"
#include "pick.h"
#include "pprofout.h"
#include "progress.h"
#include "stackset.h"
#include "suggest.h"
#include "svg.h"
#include "view.h"

/* What was read, for the title and the closing line. */
struct flame_run {
	int64_t		 from, to;	/* wall ns of the samples kept */
	size_t		 files, companions;
	const char	*sessions[VIEW_MAX_NAMES];	/* drawn */
	size_t		 nsessions;
	uint64_t	 read;		/* samples read, before the filters */
	size_t		 skipped;	/* files that could not be read */
	/* files being written: how many were read, where their data ends
	 * and when that was read (wall ns), and whether the daemon put
	 * what it held on disk first (flush_why: why not) */
	size_t		 live;
	int64_t		 live_end, live_at;
	int		 flushed;
	char		 flush_why[256];
	/* Each host's samples lie between from and to (wall ns): a graph
	 * of one host gives that host's range and rate, since its files
	 * may cover less time than the others'. */
	struct flame_host_span {
		const char	*host;
		int64_t		 from, to;
	}		*spans;
	size_t		 nspans;
};

/* flame_span notes a file of host that was read with samples from a to
 * b (wall ns); 0, or -1 with a message printed. */
static int
flame_span(struct flame_run *r, const char *host, int64_t a, int64_t b)
{
	struct flame_host_span	*hs;
	size_t			 i;

	if (r->files == 0 || a < r->from)
		r->from = a;
	if (r->files == 0 || b > r->to)
		r->to = b;
	r->files++;
	for (i = 0; i < r->nspans; i++)
		if (strcmp(r->spans[i].host, host) == 0)
			break;
	if (i == r->nspans) {
		if ((hs = reallocarray(r->spans, r->nspans + 1,
		    sizeof(*hs))) == NULL) {
			warnx("out of memory");
			return -1;
		}
		r->spans = hs;
		r->nspans++;
		hs[i].host = host;
		hs[i].from = a;
		hs[i].to = b;
		return 0;
	}
	if (a < r->spans[i].from)
		r->spans[i].from = a;
	if (b > r->spans[i].to)
		r->spans[i].to = b;
	return 0;
}

/* A file that cannot be read: named, counted, left out. */
static void
flame_skip(struct flame_run *run, const char *path, const char *why)
{
	warnx("%s: skipped: %s", path, why);
	run->skipped++;
}

/* A whole file: from its companion, or folded and kept as one. 0, 1
 * when it was skipped, -1 on an error that ends the run. */
static int
flame_whole(struct stackset *all, struct pick_file *f, const struct opts *o,
    struct flame_run *run)
{
	struct companion_facts	 want, cf;
	struct fold_opts	 fo;
	struct fold_stats	 st;
	struct stackset		*one;
	char			 err[256];
	int			 rv = -1;

	if ((one = stackset_create()) == NULL) {
		warnx("out of memory");
		return -1;
	}
	memset(&want, 0, sizeof(want));
	want.src_size = f->size;
	want.src_mtime = f->mtime;
	want.src_head = f->head;
	snprintf(want.host, sizeof(want.host), "%s", f->host);
	/* a companion counts samples: off-CPU time is read from the file */
	if (o->companion && !o->refold && !o->off_cpu &&
	    companion_read(f->path, one, &want, &cf) == 0) {
		if (o->verbose)
			fprintf(stderr, "perfspill-flame: %s: %" PRIu64
			    " samples from its companion\n", f->path,
			    stackset_samples(one));
		progress_file(f->path, 0, "companion of");
		run->companions++;
	} else {
		if (errno != ENOENT && o->companion && !o->refold &&
		    !o->off_cpu)
			warnx("%s%s: %s; folding the file again", f->path,
			    COMPANION_SUFFIX, errno == ESTALE ? "made from "
			    "another version of the file" : errno == EPERM ?
			    "not a regular file of root's or ours of a sane "
			    "size: ignored" : "not a companion");
		stackset_free(one);
		if ((one = stackset_create()) == NULL) {
			warnx("out of memory");
			return -1;
		}
		memset(&fo, 0, sizeof(fo));
		fo.tmax = UINT64_MAX;
		fo.off_cpu = o->off_cpu;
		fo.names = opts_names(o);
		fo.host = stackset_intern(one, f->host, strlen(f->host),
		    STACK_LABEL);
		fo.progress = progress_samples;
		progress_file(f->path, f->samples, "folding");
		if (fold_file(one, f->path, &fo, o->verbose, &st, err,
		    sizeof(err)) == -1) {
			flame_skip(run, f->path, err);
			rv = 1;
			goto out;
		}
		if (o->companion && !o->off_cpu) {
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
	if (flame_span(run, f->host, pick_wall(f->first, f->wall_off),
	    pick_wall(f->last, f->wall_off)) == -1)
		goto out;
	rv = 0;
out:
	stackset_free(one);
	return rv;
}

/* A file the range cuts: only its samples inside, read from the file.
 * 0, 1 when skipped, -1 on an error that ends the run. */
static int
flame_part(struct stackset *all, struct pick_file *f, const struct opts *o,
    struct flame_run *run)
{
	struct fold_opts	 fo;
	struct fold_stats	 st;
	struct stackset		*one;
	char			 err[256];
	int			 rv = -1;

	/* the range on perf's clock; an open end stays open */
	memset(&fo, 0, sizeof(fo));
	fo.tmax = UINT64_MAX;
	fo.names = opts_names(o);
	if (o->from != INT64_MIN)
		fo.tmin = pick_perf(o->from, f->wall_off);
	if (o->to != INT64_MAX)
		fo.tmax = pick_perf(o->to, f->wall_off);
	/* a file of its own first: one that fails adds nothing */
	if ((one = stackset_create()) == NULL) {
		warnx("out of memory");
		return -1;
	}
	fo.host = stackset_intern(one, f->host, strlen(f->host), STACK_LABEL);
	fo.off_cpu = o->off_cpu;
	fo.progress = progress_samples;
	progress_file(f->path, f->samples, "reading part of");
	/* a file being written that was finished meanwhile (its open
	 * failed: nothing was added) is read under its final name */
	if (fold_file(one, f->path, &fo, o->verbose, &st, err,
	    sizeof(err)) == -1 && !(f->live && access(f->path, F_OK) == -1 &&
	    errno == ENOENT && pick_finished(f) == 0 && fold_file(one, f->path,
	    &fo, o->verbose, &st, err, sizeof(err)) == 0)) {
		flame_skip(run, f->path, err);
		rv = 1;
		goto out;
	}
	if (stackset_merge(all, one) == -1) {
		warnx("out of memory");
		goto out;
	}
	if (o->verbose)
		fprintf(stderr, "perfspill-flame: %s: %" PRIu64 " of %" PRIu64
		    " samples in the range\n", f->path, st.kept, st.read);
	if (st.kept > 0 && flame_span(run, f->host, pick_wall(st.first,
	    f->wall_off), pick_wall(st.last, f->wall_off)) == -1)
		goto out;
	if (f->live) {
		/* where the data being written ends, as read just now */
		if (st.end != 0 && (run->live == 0 ||
		    pick_wall(st.end, f->wall_off) > run->live_end))
			run->live_end = pick_wall(st.end, f->wall_off);
		run->live++;
	}
	rv = 0;
out:
	stackset_free(one);
	return rv;
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

/* The filters given, each after sep, at the end of buf. */
static void
flame_filters(char *buf, size_t len, const struct opts *o, const char *sep)
{
	size_t	 off, i;

	for (i = 0; i < o->ncomms; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, "%scomm %s", sep, o->comms[i]);
	}
	for (i = 0; i < o->npids; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, "%spid %" PRIu32, sep,
		    o->pids[i]);
	}
	for (i = 0; i < o->ncgroups; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, "%scgroup %s", sep,
		    o->cgroups[i]);
	}
	for (i = 0; i < o->nevents; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, "%sevent %s", sep,
		    o->events[i]);
	}
	for (i = 0; i < o->nhosts; i++) {
		off = strlen(buf);
		snprintf(buf + off, len - off, "%shost %s", sep, o->hosts[i]);
	}
	off = strlen(buf);
	if (o->kernel_only)
		snprintf(buf + off, len - off, "%skernel frames", sep);
	else if (o->user_only)
		snprintf(buf + off, len - off, "%suser frames", sep);
}

/*
 * Where the data of the files being written ends: "recording: to
 * 12:03:41, 0.8 s before now", and when the daemon was not asked to put
 * what it holds on disk, that it was not.
 */
static void
flame_live(char *buf, size_t len, const struct flame_run *run,
    const char *sep)
{
	char	 t[40];

	if (run->live == 0 || len == 0)
		return;
	if (run->live_end == 0) {
		snprintf(buf, len, "%srecording: nothing whole written yet%s",
		    sep, run->flushed ? "" : " (not flushed)");
		return;
	}
	opts_utc(run->live_end, t, sizeof(t), 0);
	t[19] = '\0';		/* HH:MM:SS of "YYYY-MM-DDTHH:MM:SSZ" */
	snprintf(buf, len, "%srecording: to %s, %.1f s before now%s", sep,
	    t + 11, run->live_at > run->live_end ?
	    (double)(run->live_at - run->live_end) / 1e9 : 0.0,
	    run->flushed ? "" : " (not flushed)");
}

/* Says that the filters keep nothing, as an empty range is said. */
static void
flame_nothing(const struct stackset *all, const struct opts *o,
    const struct flame_run *run, const char *host)
{
	struct suggest	 sg;
	char		 f[1024];
	size_t		 i, j;

	f[0] = '\0';
	flame_filters(f, sizeof(f), o, ", ");
	if (o->off_cpu && run->read == 0) {
		warnx("%s%sno off-CPU time in the %zu trace files read: none "
		    "has a sleep and its wake-up on sched:sched_switch "
		    "(perfspillctl start --off-cpu records them)", host ? host :
		    "", host ? ": " : "", run->files);
		return;
	}
	if (run->read == 0 || f[0] == '\0') {
		/* the manifests promised samples the range then cut away */
		flame_live(f, sizeof(f), run, "; ");
		warnx("%s%snone of the %zu trace files read has samples in the "
		    "range%s", host ? host : "", host ? ": " : "", run->files, f);
		return;
	}
	warnx("%s%snone of the %" PRIu64 " samples of the %zu trace files "
	    "read matches the filters (%s)", host ? host : "", host ? ": " :
	    "", run->read, run->files, f + 2);
	for (i = 0; i < o->ncomms; i++)
		if (strlen(o->comms[i]) > OPTS_COMM_LEN)
			warnx("--comm %s: the kernel keeps the first %d "
			    "characters of a command name: --comm %.*s",
			    o->comms[i], OPTS_COMM_LEN, OPTS_COMM_LEN,
			    o->comms[i]);
	/* a name the samples nearly have: python for python3 */
	for (i = 0; i < o->ncomms; i++) {
		suggest_init(&sg, o->comms[i]);
		for (j = 0; j < stackset_nstacks(all); j++)
			suggest_offer(&sg, stackset_str(all,
			    stackset_stack(all, j)->key.comm));
		if (suggest_best(&sg) != NULL)
			warnx("--comm %s: did you mean --comm %s?", o->comms[i],
			    suggest_best(&sg));
	}
}

/* flame_subtitle writes the graph's subtitle (of host's graph, unless
 * host is NULL). */
static void
flame_subtitle(char *buf, size_t len, const struct view_info *vi,
    const struct flame_run *run, const struct opts *o, const char *host)
{
	char	 sessions[256], hosts[256], events[256], a[40], b[40];
	char	 amount[64], t[40], rate[32];
	int64_t	 from = run->from, to = run->to;
	double	 secs;
	size_t	 off, i;

	for (i = 0; host != NULL && i < run->nspans; i++)
		if (strcmp(run->spans[i].host, host) == 0) {
			from = run->spans[i].from;
			to = run->spans[i].to;
		}
	flame_names(sessions, sizeof(sessions), run->sessions,
	    run->nsessions);
	flame_names(hosts, sizeof(hosts), vi->hosts, vi->nhosts);
	flame_names(events, sizeof(events), vi->events, vi->nevents);
	opts_utc(from, a, sizeof(a), 0);
	opts_utc(to, b, sizeof(b), 0);
	a[strlen(a) - 1] = '\0';	/* one "UTC" says it for both */
	b[strlen(b) - 1] = '\0';
	a[10] = b[10] = ' ';
	/* the rate over the time shown: what a graph of a busy minute and
	 * one of an idle hour with as many samples do not share (off-CPU
	 * time has none: its amount is a time already) */
	secs = (double)(to - from) / 1e9;
	if (secs > 0 && !o->off_cpu)
		snprintf(rate, sizeof(rate), " (%.*f/s)", (double)vi->samples /
		    secs < 10 ? 1 : 0, (double)vi->samples / secs);
	else
		rate[0] = '\0';
	if (o->off_cpu)
		snprintf(amount, sizeof(amount), "off-CPU time %s",
		    opts_ns(vi->samples, t, sizeof(t)));
	else
		snprintf(amount, sizeof(amount), "%" PRIu64 " samples%s",
		    vi->samples, rate);
	snprintf(buf, len, "%s %s \xc2\xb7 %s %s \xc2\xb7 %s to %s UTC \xc2\xb7 "
	    "%s \xc2\xb7 %s", run->nsessions == 1 ? "session" :
	    "sessions", sessions, vi->nhosts == 1 ? "host" : "hosts", hosts,
	    a, strncmp(a, b, 10) == 0 ? b + 11 : b,
	    vi->nevents ? events : "no events", amount);
	flame_filters(buf, len, o, " \xc2\xb7 ");
	off = strlen(buf);
	flame_live(buf + off, len - off, run, " \xc2\xb7 ");
	off = strlen(buf);
	if (run->skipped > 0)
		snprintf(buf + off, len - off, " \xc2\xb7 %zu file%s skipped "
		    "(unreadable)", run->skipped, run->skipped == 1 ? "" : "s");
}

/*
 * A host name fit to be part of a file name: the manifest's or the
 * header's word, which whoever made the file chose. Letters, digits, '.',
 * '_' and '-', not starting with a dot ("..", ".hidden"): 0, or -1.
 */
static int
flame_host_ok(const char *host)
{
	const char	*p;

	if (host[0] == '\0' || host[0] == '.')
		return -1;
	for (p = host; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		    *p == '-'))
			return -1;
	return 0;
}

/* name with the host in it: at %h, or before the extension. */
static int
flame_host_name(char *buf, size_t len, const char *name, const char *host)
{
	const char	*h = strstr(name, "%h"), *dot, *slash;
	int		 n;

	if (flame_host_ok(host) == -1) {
		warnx("host name \"%s\" is not fit for a file name (letters, "
		    "digits, '.', '_', '-'): no output for it", host);
		return -1;
	}
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
	if (n < 0 || (size_t)n >= len) {
		warnx("%s: name too long", name);
		return -1;
	}
	return 0;
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

/* The outputs of one graph: all hosts (host NULL), or one. 0 written, 1
 * nothing the filters keep (said), -1 an error. */
static int
flame_output(const struct stackset *all, const struct opts *o,
    const struct flame_run *run, const char *host)
{
	struct view_info	 vi;
	struct svg_opts		 so;
	struct stackset		*v, *drawn = NULL;
	char			 name[PATH_MAX], sub[1100], title[512];
	uint64_t		 cut = 0;
	size_t			 off;
	FILE			*f;
	int			 rv = 0;

	if ((v = view_build(all, o, host, &vi)) == NULL) {
		warnx("out of memory");
		return -1;
	}
	if (vi.samples == 0) {
		flame_nothing(all, o, run, host);
		stackset_free(v);
		return 1;
	}
	if (o->folded != NULL) {
		if (host != NULL && flame_host_name(name, sizeof(name),
		    o->folded, host) == -1) {
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
			rv = -1;
			goto out;
		}
		if (o->max_depth != 0 && (drawn = view_bound(v, o->max_depth,
		    &cut)) == NULL) {
			warnx("out of memory");
			rv = -1;
			goto out;
		}
		flame_subtitle(sub, sizeof(sub), &vi, run, o, host);
		off = strlen(sub);
		if (cut > 0)
			snprintf(sub + off, sizeof(sub) - off, " \xc2\xb7 "
			    "stacks over %u frames cut", o->max_depth);
		snprintf(title, sizeof(title), "%s%s", o->title ? o->title :
		    o->inverted ? "Icicle graph" : "Flame graph",
		    o->title == NULL && o->reverse ? " (reversed: callees "
		    "below their callers)" : "");
		so.title = title;
		so.subtitle = sub;
		so.width = o->width;
		so.fit = !o->width_set;
		so.inverted = o->inverted;
		so.diff = 0;
		so.time = o->off_cpu;
		if ((f = flame_open(host ? name : o->svg)) == NULL)
			rv = -1;
		else if ((rv = flame_close(f, host ? name : o->svg,
		    svg_write(f, drawn ? drawn : v, &so))) == 0 &&
		    o->progress != 0 &&
		    strcmp(o->svg, "-") != 0)
			fprintf(stderr, "perfspill-flame: wrote %s (%" PRIu64
			    " samples)\n", host ? name : o->svg, vi.samples);
	}
out:
	stackset_free(drawn);
	stackset_free(v);
	return rv;
}

/* One side of a differential graph for its title: "host h, 2026-12-04
 * 13:00:01 to 13:00:03, 2 files"; without the date when day is set
 * (both sides are of that one day). */
static void
flame_side_name(char *buf, size_t len, const struct view_info *vi,
    const struct flame_run *run, int day)
{
	char	 hosts[256], a[40], b[40];

	flame_names(hosts, sizeof(hosts), vi->hosts, vi->nhosts);
	opts_utc(run->from, a, sizeof(a), 0);
	opts_utc(run->to, b, sizeof(b), 0);
	a[strlen(a) - 1] = '\0';
	b[strlen(b) - 1] = '\0';
	a[10] = b[10] = ' ';
	snprintf(buf, len, "%s %s, %s to %s, %zu file%s",
	    vi->nhosts == 1 ? "host" : "hosts", vi->nhosts ? hosts : "none",
	    day ? a + 11 : a, day || strncmp(a, b, 10) == 0 ? b + 11 : b,
	    run->files, run->files == 1 ? "" : "s");
}

/* The differential graph and/or folded pairs of A (ao's view of a)
 * against B (o's view of b). */
static int
flame_diff_output(const struct stackset *a, const struct opts *ao,
    const struct flame_run *arun, const struct stackset *b,
    const struct opts *o, const struct flame_run *brun)
{
	struct view_info	 via, vib;
	struct svg_opts		 so;
	struct stackset		*va = NULL, *vb = NULL, *dp = NULL;
	struct stackset		*ba = NULL, *bb = NULL, *drawn = NULL;
	char			 sa[384], sb[384], title[1024], sub[1100];
	char			 d[4][40], ta[40], tb[40];
	uint64_t		 cuta = 0, cutb = 0;
	size_t			 off;
	FILE			*f;
	int			 rv = -1, day, i;

	if ((va = view_build(a, ao, NULL, &via)) == NULL ||
	    (vb = view_build(b, o, NULL, &vib)) == NULL ||
	    (dp = diff_build(va, vb)) == NULL) {
		warnx("out of memory");
		goto out;
	}
	if (via.samples == 0)
		warnx("A: no samples match the filters");
	if (vib.samples == 0)
		warnx("B: no samples match the filters");
	rv = 0;
	if (o->folded != NULL) {
		if ((f = flame_open(o->folded)) == NULL)
			rv = -1;
		else
			rv |= flame_close(f, o->folded,
			    diff_write_folded(dp, f));
	}
	if (o->svg == NULL || rv == -1)
		goto out;
	/* the date once when both sides are of one day */
	opts_utc(arun->from, d[0], sizeof(d[0]), 0);
	opts_utc(arun->to, d[1], sizeof(d[1]), 0);
	opts_utc(brun->from, d[2], sizeof(d[2]), 0);
	opts_utc(brun->to, d[3], sizeof(d[3]), 0);
	for (day = 1, i = 1; i < 4; i++)
		day &= strncmp(d[0], d[i], 10) == 0;
	d[0][10] = '\0';
	flame_side_name(sa, sizeof(sa), &via, arun, day);
	flame_side_name(sb, sizeof(sb), &vib, brun, day);
	if (o->title != NULL)
		snprintf(title, sizeof(title), "%s", o->title);
	else
		snprintf(title, sizeof(title), "Differential: A (%s) against "
		    "B (%s)%s%s UTC", sa, sb, day ? ", " : "", day ? d[0] : "");
	if (o->off_cpu) {
		opts_ns(via.samples, ta, sizeof(ta));
		opts_ns(vib.samples, tb, sizeof(tb));
	} else {
		snprintf(ta, sizeof(ta), "%" PRIu64 " samples", via.samples);
		snprintf(tb, sizeof(tb), "%" PRIu64 " samples", vib.samples);
	}
	snprintf(sub, sizeof(sub), "red: a larger share of B than of A, "
	    "blue: a smaller one, dashed: one side only \xc2\xb7 width: the "
	    "mean of both shares \xc2\xb7 %sA %s, B %s", o->off_cpu ?
	    "off-CPU time: " : "", ta, tb);
	/* drawn to --max-depth as a plain graph is, each side alike */
	if (o->max_depth != 0 && ((ba = view_bound(va, o->max_depth,
	    &cuta)) == NULL || (bb = view_bound(vb, o->max_depth, &cutb)) ==
	    NULL || (drawn = diff_build(ba, bb)) == NULL)) {
		warnx("out of memory");
		rv = -1;
		goto out;
	}
	off = strlen(sub);
	if (cuta + cutb > 0)
		snprintf(sub + off, sizeof(sub) - off, " \xc2\xb7 stacks over "
		    "%u frames cut", o->max_depth);
	memset(&so, 0, sizeof(so));
	so.title = title;
	so.subtitle = sub;
	so.width = o->width;
	so.fit = !o->width_set;
	so.inverted = o->inverted;
	so.diff = 1;
	so.time = o->off_cpu;
	if ((f = flame_open(o->svg)) == NULL)
		rv = -1;
	else if ((rv = flame_close(f, o->svg, svg_write(f, drawn ? drawn : dp,
	    &so))) == 0 &&
	    o->progress != 0 && strcmp(o->svg, "-") != 0)
		fprintf(stderr, "perfspill-flame: wrote %s (A %" PRIu64 ", B %"
		    PRIu64 " samples)\n", o->svg, via.samples, vib.samples);
out:
	stackset_free(drawn);
	stackset_free(bb);
	stackset_free(ba);
	stackset_free(dp);
	stackset_free(vb);
	stackset_free(va);
	return rv;
}

/* One side of a graph: the files its inputs, sessions and range pick,
 * and their stacks added together. */
struct flame_side {
	struct pick_list	 l;
	enum pick_cover		*cover;
	struct flame_run	 run;
	struct stackset		*all;
};

static void
flame_side_free(struct flame_side *sd)
{
	free(sd->cover);
	free(sd->run.spans);
	stackset_free(sd->all);
	pick_free(&sd->l);
}

/*
 * What the files of o's sessions hold, for a range that found nothing:
 * "; they hold samples from A to B", and whether one was being written
 * (read up to its last whole round: no rotation is needed to see it).
 */
static void
flame_held(const struct pick_list *l, const struct opts *o, char *buf,
    size_t len)
{
	int64_t	 a = 0, b = 0, x, y;
	size_t	 i, live = 0, n = 0;
	char	 ta[40], tb[40];

	for (i = 0; i < l->n; i++) {
		if (!pick_session(&l->f[i], o))
			continue;
		live += l->f[i].live;
		if (l->f[i].live || (l->f[i].first == 0 && l->f[i].last == 0))
			continue;
		x = (int64_t)l->f[i].first + l->f[i].wall_off;
		y = (int64_t)l->f[i].last + l->f[i].wall_off;
		if (n++ == 0 || x < a)
			a = x;
		if (n == 1 || y > b)
			b = y;
	}
	snprintf(buf, len, "%s%s%s%s%s", n > 0 ? "; the finished ones hold "
	    "samples from " : "", n > 0 ? opts_utc(a, ta, sizeof(ta), 0) : "",
	    n > 0 ? " to " : "", n > 0 ? opts_utc(b, tb, sizeof(tb), 0) : "",
	    live > 0 ? "; the file being written holds none there either" :
	    "; none is being written (perfspilld records nothing into this "
	    "directory now)");
}

/*
 * Files being written among l: perfspilld is asked first to put on disk
 * what it holds (flush), so that the graph reaches as near now as the
 * daemon can take it. Without an answer the graph holds what the files
 * hold, and its subtitle says where that ends.
 */
static void
flame_flush(const struct pick_list *l, const struct opts *o,
    struct flame_run *run)
{
	size_t	 i;

	for (i = 0; i < l->n && !l->f[i].live; i++)
		;
	if (i == l->n)
		return;
	/* "before now": before the files are read, after the flush */
	run->live_at = opts_now();
	if (o->no_flush) {
		snprintf(run->flush_why, sizeof(run->flush_why), "not asked "
		    "(--no-flush)");
		return;
	}
	if (live_flush(o->socket, run->flush_why,
	    sizeof(run->flush_why)) == 0) {
		run->live_at = opts_now();
		run->flushed = 1;
		return;
	}
	warnx("%s: the files being written are read as they are; what "
	    "perfspilld holds and has not written is not in the graph",
	    run->flush_why);
}

/* Picks o's files for o's sessions and range and, when fold is set,
 * folds them into sd; 0, or -1 with a message printed. */
static int
flame_gather(struct flame_side *sd, const struct opts *o, int fold)
{
	struct pick_list	*l = &sd->l;
	struct flame_run	*run = &sd->run;
	size_t			 i, chosen = 0, others = 0;
	const char		*found[VIEW_MAX_NAMES];
	size_t			 nfound = 0;
	char			 a[40], b[40], names[256], want[256];

	memset(sd, 0, sizeof(*sd));
	for (i = 0; i < o->ninputs; i++)
		if (pick_add(l, o->inputs[i]) == -1)
			return -1;
	if (l->n == 0) {
		warnx("no trace files (NAME.data) in %s%s", o->inputs[0],
		    o->ninputs > 1 ? " or the other paths given" : "");
		return -1;
	}
	for (i = 0; i < l->n; i++)
		if (pick_facts(&l->f[i], o->verbose) == -1) {
			/* named by pick; no samples: left out below */
			l->f[i].first = l->f[i].last = 0;
			l->f[i].facts = NULL;
			snprintf(l->f[i].session, sizeof(l->f[i].session),
			    "default");
			run->skipped++;
		}
	pick_sort(l);
	if (!o->companion_only)
		flame_flush(l, o, run);
	if ((sd->cover = calloc(l->n, sizeof(*sd->cover))) == NULL ||
	    (sd->all = stackset_create()) == NULL) {
		warnx("out of memory");
		return -1;
	}
	for (i = 0; i < l->n; i++) {
		if (!pick_session(&l->f[i], o)) {
			sd->cover[i] = PICK_NONE;
			others++;
			view_note(found, &nfound, l->f[i].session);
			if (o->verbose)
				fprintf(stderr, "perfspill-flame: %s: of session "
				    "%s, not read\n", l->f[i].path,
				    l->f[i].session);
			continue;
		}
		sd->cover[i] = pick_cover(&l->f[i], o->ranged ? o->from :
		    INT64_MIN, o->ranged ? o->to : INT64_MAX);
		if (o->verbose)
			fprintf(stderr, "perfspill-flame: %s (%s, session %s, "
			    "facts from its %s): %s\n", l->f[i].path,
			    l->f[i].host, l->f[i].session,
			    l->f[i].facts ? l->f[i].facts : "none",
			    sd->cover[i] == PICK_WHOLE ? "whole" :
			    sd->cover[i] == PICK_PART ? "part" :
			    "not in the range");
		chosen += sd->cover[i] != PICK_NONE;
		if (sd->cover[i] != PICK_NONE)
			view_note(run->sessions, &run->nsessions,
			    l->f[i].session);
	}
	if (chosen == 0 && others == l->n) {
		flame_names(names, sizeof(names), found, nfound);
		flame_names(want, sizeof(want), o->nsessions ? o->sessions :
		    (const char *[]){ o->off_cpu ? OPTS_OFF_CPU_SESSION :
		    "default" }, o->nsessions ? o->nsessions : 1);
		warnx("none of the %zu trace files is of session %s: they are "
		    "of %s (--session NAME, or --session all)", l->n, want,
		    names);
		return -1;
	}
	if (run->skipped == l->n) {
		warnx("none of the %zu trace files could be read", l->n);
		return -1;
	}
	if (chosen == 0) {
		flame_held(l, o, names, sizeof(names));
		if (o->ranged)
			warnx("none of the %zu trace files has samples from %s "
			    "to %s%s", l->n - others, o->from == INT64_MIN ?
			    "the start" : opts_utc(o->from, a, sizeof(a), 0),
			    o->to == INT64_MAX ? "now" :
			    opts_utc(o->to, b, sizeof(b), 0), names);
		else
			warnx("none of the %zu trace files has samples%s",
			    l->n - others, names);
		return -1;
	}
	progress_init(o->progress, chosen);
	for (i = 0; fold && i < l->n; i++) {
		/* a file being written is read, never kept as a companion */
		if (sd->cover[i] == PICK_NONE ||
		    (o->companion_only && l->f[i].live))
			continue;
		if ((sd->cover[i] == PICK_WHOLE && !l->f[i].live ?
		    flame_whole(sd->all,
		    &l->f[i], o, run) : flame_part(sd->all, &l->f[i], o,
		    run)) < 0) {
			progress_done();
			return -1;
		}
	}
	progress_done();
	if (run->skipped >= l->n) {
		warnx("none of the %zu trace files could be read", l->n);
		return -1;
	}
	run->read = stackset_samples(sd->all);
	if (run->files == 0)
		run->from = run->to = o->from;
	return 0;
}

/* A profile output (pprofout_write, otlpout_write) reads the files again
 * itself. */
typedef int	flame_profile_fn(const struct pick_list *,
		    const enum pick_cover *, const struct opts *,
		    const char *host, const char *path,
		    struct outread_stats *);

/* flame_profile has out write the profile of sd's files (host's only,
 * unless host is NULL) at path, o->pprof or o->otlp; a host's profile
 * gets a name of its own with the host's in it. */
static int
flame_profile(const struct flame_side *sd, const struct opts *o,
    const char *host, const char *path, flame_profile_fn *out)
{
	struct outread_stats	 st;
	char			 name[PATH_MAX];

	/* flame_host_name says why a name does not fit */
	if (host != NULL && flame_host_name(name, sizeof(name), path,
	    host) == -1)
		return -1;
	if (out(&sd->l, sd->cover, o, host, host ? name : path, &st) == -1)
		return -1;
	if (st.samples == 0)
		warnx("%s%sno samples match the filters", host ? host : "",
		    host ? ": " : "");
	if (o->progress != 0 && strcmp(path, "-") != 0)
		fprintf(stderr, "perfspill-flame: wrote %s (%" PRIu64 " samples, "
		    "%" PRIu64 " bytes)\n", host ? name : path, st.samples,
		    st.bytes);
	return 0;
}

/* The options of the base side of a differential graph: o's, with the
 * base's files, range and hosts. */
static void
flame_base_opts(struct opts *a, const struct opts *o)
{
	*a = *o;
	memcpy(a->inputs, o->base_inputs, sizeof(a->inputs));
	a->ninputs = o->nbase_inputs;
	a->from = o->base_from;
	a->to = o->base_to;
	a->ranged = o->base_ranged;
	if (o->nbase_hosts > 0) {
		memcpy(a->hosts, o->base_hosts, sizeof(a->hosts));
		a->nhosts = o->nbase_hosts;
	}
}

int
main(int argc, char **argv)
{
	struct opts		 o, ao;
	struct flame_side	 b, a;
	size_t			 i, j, written = 0;
	int			 rv = 1, r;

	opts_parse(&o, argc, argv);
	memset(&a, 0, sizeof(a));
	/* pprof and OTLP alone read the files themselves: nothing to fold */
	if (flame_gather(&b, &o, o.svg != NULL || o.folded != NULL ||
	    o.companion_only) == -1)
		goto out;
	if (o.companion_only) {
		rv = 0;
		goto out;
	}
	if (o.diff) {
		flame_base_opts(&ao, &o);
		if (flame_gather(&a, &ao, 1) == -1)
			goto out;
		rv = flame_diff_output(a.all, &ao, &a.run, b.all, &o,
		    &b.run) == -1;
		goto out;
	}
	if (!o.per_host) {
		rv = ((o.svg != NULL || o.folded != NULL) &&
		    flame_output(b.all, &o, &b.run, NULL) != 0) ||
		    (o.pprof != NULL && flame_profile(&b, &o, NULL, o.pprof,
		    pprofout_write) == -1) ||
		    (o.otlp != NULL && flame_profile(&b, &o, NULL, o.otlp,
		    otlpout_write) == -1);
		goto out;
	}
	/* a host whose samples the filters all leave out gets no file;
	 * none at all is the error */
	rv = 0;
	for (i = 0; i < b.l.n; i++) {
		if (b.cover[i] == PICK_NONE)
			continue;
		for (j = 0; j < i; j++)
			if (b.cover[j] != PICK_NONE &&
			    strcmp(b.l.f[j].host, b.l.f[i].host) == 0)
				break;
		if (j < i)
			continue;
		r = 0;
		if ((o.svg != NULL || o.folded != NULL) &&
		    (r = flame_output(b.all, &o, &b.run, b.l.f[i].host)) == -1)
			rv = 1;
		if (o.pprof != NULL && r == 0 && flame_profile(&b, &o,
		    b.l.f[i].host, o.pprof, pprofout_write) == -1)
			rv = 1;
		if (o.otlp != NULL && r == 0 && flame_profile(&b, &o,
		    b.l.f[i].host, o.otlp, otlpout_write) == -1)
			rv = 1;
		written += r == 0;
	}
	if (written == 0)
		rv = 1;
out:
	flame_side_free(&a);
	flame_side_free(&b);
	return rv;
}

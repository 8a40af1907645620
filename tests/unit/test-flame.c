/*
 * test-flame: the pure logic of perfspill-flame. Samples into stacks,
 * each sample's cgroup, names that are data (escaped), merging,
 * the companion written and read back, filters and roots, folded output,
 * the times the command line takes, and the SVG's escaping; runs of
 * frames without symbols made one, the graph's depth bound, the options
 * perf users read their own way (-i), and which session a file is of;
 * off-CPU time from sched_switch samples, and the format it reads them
 * by, cut at every length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "companion.h"
#include "demangle.h"
#include "fold.h"
#include "offcpu.h"
#include "opts.h"
#include "pick.h"
#include "stackset.h"
#include "svg.h"
#include "view.h"

/* Two samples with callchains, a tracepoint sample without one, a comm
 * with spaces, a frame without a symbol, a C++ name with parentheses and
 * one with the separator in it, as perfread gives them. A frame is a
 * user symbol, "K:" a kernel one, "@FILE" code in FILE without one, "?"
 * an address no mapping holds. */
struct tsample {
	const char	*comm;
	uint32_t	 pid, tid;
	uint64_t	 time;
	uint32_t	 attr;
	const char	*frames[10];	/* leaf first */
};

static const char *const events[] = { "cpu-clock", "sched:sched_switch" };

static const struct tsample script[] = {
	{ "flametarget", 100, 100, 10000000100ULL, 0,
	    { "leaf_seventy", "worker", "main" } },
	{ "flametarget", 100, 101, 10500000000ULL, 0,
	    { "K:entry_SYSCALL_64", "leaf_thirty", "@/usr/lib/libfoo.so.1",
	    "worker" } },
	{ "Web Content", 7, 7, 11000000000ULL, 0,
	    { "std::function<void ()>::operator()", "a;b" } },
	{ "dd", 42, 42, 12250000000ULL, 1, { "K:__schedule" } },
	{ "flametarget", 100, 100, 13000000000ULL, 0,
	    { "leaf_seventy", "worker", "main" } },
};

static struct profile_mapping	 maps[4];

/* The mapping of file (one object per file, as perfread keeps them). */
static const struct profile_mapping *
tmap(const char *file)
{
	size_t	 i;

	for (i = 0; i < 4 && maps[i].file != NULL; i++)
		if (strcmp(maps[i].file, file) == 0)
			return &maps[i];
	CHECK(i < 4);
	maps[i].file = file;
	maps[i].id = (uint32_t)i + 1;
	return &maps[i];
}

/* ts[0..n) folded as perfread would feed them; cgroups: tid 100's in
 * /system.slice/a, 101's in /system.slice/b, the others' in /. */
static struct stackset *
fold_samples(const struct tsample *ts, size_t n, uint64_t tmin,
    uint64_t tmax, struct fold_stats *st, int cgroups)
{
	struct stackset		*ss = stackset_create();
	struct profile_frame	 fr[10];
	struct profile_sample	 ps;
	struct fold_opts	 o;
	struct fold		*f;
	const char		*name;
	size_t			 i, k;

	memset(&o, 0, sizeof(o));
	o.tmin = tmin;
	o.tmax = tmax;
	o.host = stackset_intern(ss, "hostA", 5, STACK_LABEL);
	f = fold_create(ss, &o);
	for (i = 0; i < n; i++) {
		memset(&ps, 0, sizeof(ps));
		memset(fr, 0, sizeof(fr));
		ps.comm = ts[i].comm;
		ps.pid = ts[i].pid;
		ps.tid = ts[i].tid;
		ps.time = ts[i].time;
		ps.attr = ts[i].attr;
		ps.event = events[ts[i].attr];
		ps.period = 1;
		if (cgroups)
			ps.cgroup = ps.tid == 100 ? "/system.slice/a" :
			    ps.tid == 101 ? "/system.slice/b" : "/";
		for (k = 0; k < 10 && (name = ts[i].frames[k]) != NULL; k++) {
			fr[k].kernel = strncmp(name, "K:", 2) == 0;
			if (strcmp(name, "?") == 0)
				continue;	/* in no mapping */
			if (name[0] == '@')
				fr[k].map = tmap(name + 1);
			else
				fr[k].sym = fr[k].kernel ? name + 2 : name;
		}
		ps.nframes = (uint32_t)k;
		ps.frames = fr;
		CHECK(fold_sample(f, &ps) == 0);
	}
	fold_end(f, st);
	fold_free(f);
	return ss;
}

static struct stackset *
fold_text(const struct tsample *ts, size_t n, uint64_t tmin, uint64_t tmax,
    struct fold_stats *st)
{
	return fold_samples(ts, n, tmin, tmax, st, 0);
}

#define NSCRIPT	(sizeof(script) / sizeof(script[0]))

/* The folded text of ss (roots: comm), through view. */
static char *
folded(const struct stackset *ss, struct opts *o)
{
	struct view_info	 vi;
	struct stackset		*v = view_build(ss, o, NULL, &vi);
	char			*buf = NULL;
	size_t			 len = 0;
	FILE			*f = open_memstream(&buf, &len);

	CHECK(v != NULL);
	CHECK(view_write_folded(v, f) == 0);
	fclose(f);
	stackset_free(v);
	return buf;
}

static void
default_opts(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->roots[0] = OPTS_ROOT_COMM;
	o->nroots = 1;
}

static void
test_fold(void)
{
	struct fold_stats	 st, st1;
	struct stackset		*ss, *ss1;
	struct opts		 o;
	char			*out, *out1;

	ss = fold_text(script, NSCRIPT, 0, UINT64_MAX, &st);
	CHECK_EQ(st.read, 5);
	CHECK_EQ(st.kept, 5);
	CHECK_EQ(st.first, 10000000100ULL);
	CHECK_EQ(st.last, 13000000000ULL);
	CHECK_EQ(stackset_samples(ss), 5);
	CHECK_EQ(stackset_nstacks(ss), 4);	/* the first and last: one */
	default_opts(&o);
	out = folded(ss, &o);
	CHECK(strcmp(out,
	    "Web Content;a:b;std::function<void ()>::operator() 1\n"
	    "dd;__schedule 1\n"
	    "flametarget;main;worker;leaf_seventy 2\n"
	    "flametarget;worker;[libfoo.so.1];leaf_thirty;entry_SYSCALL_64 1\n")
	    == 0);
	if (strncmp(out, "Web", 3) != 0)
		printf("%s", out);
	/* the same samples again: the same stacks */
	ss1 = fold_text(script, NSCRIPT, 0, UINT64_MAX, &st1);
	out1 = folded(ss1, &o);
	CHECK(strcmp(out, out1) == 0);
	CHECK_EQ(st1.read, 5);
	free(out);
	free(out1);
	stackset_free(ss1);

	/* kernel frames are told apart */
	o.kernel_only = 1;
	out = folded(ss, &o);
	CHECK(strcmp(out, "dd;__schedule 1\nflametarget;entry_SYSCALL_64 1\n")
	    == 0);
	free(out);
	o.kernel_only = 0;
	o.user_only = 1;
	out = folded(ss, &o);
	CHECK(strstr(out, "entry_SYSCALL") == NULL &&
	    strstr(out, "__schedule") == NULL &&
	    strstr(out, "leaf_thirty 1\n") != NULL);
	free(out);
	stackset_free(ss);

	/* a time range: [10.5 s, 13 s) keeps the second and third and the
	 * tracepoint, not the first (before) nor the last (at its end) */
	ss = fold_text(script, NSCRIPT, 10500000000ULL, 13000000000ULL, &st);
	CHECK_EQ(st.read, 5);
	CHECK_EQ(st.kept, 3);
	CHECK_EQ(stackset_samples(ss), 3);
	CHECK_EQ(st.first, 10500000000ULL);
	CHECK_EQ(st.last, 12250000000ULL);
	stackset_free(ss);
}

static void
test_roots_filters(void)
{
	struct stackset		*ss;
	struct fold_stats	 st;
	struct opts		 o;
	char			*out;

	ss = fold_text(script, NSCRIPT, 0, UINT64_MAX, &st);
	default_opts(&o);
	o.roots[0] = OPTS_ROOT_PID;
	o.roots[1] = OPTS_ROOT_EVENT;
	o.nroots = 2;
	o.comms[0] = "flametarget";
	o.ncomms = 1;
	out = folded(ss, &o);
	CHECK(strcmp(out, "flametarget [100];cpu-clock;main;worker;"
	    "leaf_seventy 2\nflametarget [100];cpu-clock;worker;"
	    "[libfoo.so.1];leaf_thirty;entry_SYSCALL_64 1\n") == 0);
	free(out);
	default_opts(&o);
	o.reverse = 1;
	o.events[0] = "sched:sched_switch";
	o.nevents = 1;
	out = folded(ss, &o);
	CHECK(strcmp(out, "dd;__schedule 1\n") == 0);
	free(out);
	default_opts(&o);
	o.reverse = 1;
	o.pids[0] = 100;
	o.npids = 1;
	o.nroots = 0;
	out = folded(ss, &o);
	CHECK(strcmp(out, "entry_SYSCALL_64;leaf_thirty;[libfoo.so.1];"
	    "worker 1\nleaf_seventy;worker;main 2\n") == 0);
	free(out);
	stackset_free(ss);
}

static void
test_cgroups(void)
{
	struct stackset		*ss;
	struct fold_stats	 st;
	struct opts		 o;
	char			*out;

	/* each sample's own cgroup, as the file records it */
	ss = fold_samples(script, NSCRIPT, 0, UINT64_MAX, &st, 1);
	default_opts(&o);
	o.cgroups[0] = "system.slice/";
	o.ncgroups = 1;
	o.roots[0] = OPTS_ROOT_CGROUP;
	out = folded(ss, &o);
	CHECK(strcmp(out, "/system.slice/a;main;worker;leaf_seventy 2\n"
	    "/system.slice/b;worker;[libfoo.so.1];leaf_thirty;"
	    "entry_SYSCALL_64 1\n") == 0);
	free(out);
	o.cgroups[0] = "/system.slice/a/";
	o.roots[0] = OPTS_ROOT_COMM;
	out = folded(ss, &o);
	CHECK(strcmp(out, "flametarget;main;worker;leaf_seventy 2\n") == 0);
	free(out);
	stackset_free(ss);
}

/* Names are data: a comm shaped like perf script's header, and names
 * with newlines and the separator stay one frame of one line. */
static void
test_names_are_data(void)
{
	static const struct tsample evil[] = {
		{ "a 1/1 5.000000:", 4242, 4242, 1, 0, { "spin", "main" } },
		{ "evil\ncomm", 7, 7, 2, 0,
		    { "x\nINJECTED_ROOT;INJECTED_KERNEL_FN 215", "main" } },
	};
	struct stackset		*ss;
	struct fold_stats	 st;
	struct opts		 o;
	char			*out, buf[64];

	ss = fold_text(evil, 2, 0, UINT64_MAX, &st);
	default_opts(&o);
	o.roots[0] = OPTS_ROOT_PID;
	out = folded(ss, &o);
	CHECK(strcmp(out, "a 1/1 5.000000: [4242];main;spin 1\n"
	    "evil\\x0acomm [7];main;x\\x0aINJECTED_ROOT:INJECTED_KERNEL_FN "
	    "215 1\n") == 0);
	if (strncmp(out, "a 1/1", 5) != 0)
		printf("%s", out);
	free(out);
	/* --pid finds the process whatever its comm */
	default_opts(&o);
	o.pids[0] = 4242;
	o.npids = 1;
	out = folded(ss, &o);
	CHECK(strcmp(out, "a 1/1 5.000000:;main;spin 1\n") == 0);
	free(out);
	stackset_free(ss);
	CHECK_EQ(fold_name(buf, sizeof(buf), "a;b\x7f\r", 5), 11);
	CHECK(strcmp(buf, "a:b\\x7f\\x0d") == 0);
}

static void
test_merge_companion(void)
{
	struct stackset		*a, *b, *all, *back;
	struct fold_stats	 st;
	struct companion_facts	 cf, want, got;
	struct opts		 o;
	char			 dir[] = "/tmp/test-flame.XXXXXX", path[256];
	char			 name[300], *out, *out2;
	FILE			*f;

	a = fold_text(script, NSCRIPT, 0, UINT64_MAX, &st);
	b = fold_text(script, NSCRIPT, 0, 11000000000ULL, &st);
	all = stackset_create();
	CHECK(stackset_merge(all, a) == 0);
	CHECK(stackset_merge(all, b) == 0);
	CHECK_EQ(stackset_samples(all), 5 + 2);
	default_opts(&o);
	out = folded(all, &o);
	CHECK(strstr(out, "flametarget;main;worker;leaf_seventy 3\n") != NULL);
	CHECK(strstr(out, "entry_SYSCALL_64 2\n") != NULL);

	/* written and read back: the same stacks, facts kept */
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/x.data", dir);
	f = fopen(path, "w");
	fputs("data", f);
	fclose(f);
	memset(&cf, 0, sizeof(cf));
	cf.src_size = 4;
	cf.src_mtime = 1234;
	cf.samples = 7;
	cf.first = 10;
	cf.last = 20;
	cf.wall_off = -5;
	cf.cgroups = 1;
	snprintf(cf.host, sizeof(cf.host), "hostA");
	CHECK(companion_write(path, all, &cf) == 0);
	back = stackset_create();
	want = cf;
	CHECK(companion_read(path, back, &want, &got) == 0);
	CHECK_EQ(got.samples, 7);
	CHECK_EQ(got.wall_off, -5);
	CHECK(strcmp(got.host, "hostA") == 0);
	out2 = folded(back, &o);
	CHECK(strcmp(out, out2) == 0);
	CHECK_EQ(stackset_nstacks(back), stackset_nstacks(all));
	free(out2);
	stackset_free(back);
	/* under the host its manifest names now */
	back = stackset_create();
	snprintf(want.host, sizeof(want.host), "hostB");
	CHECK(companion_read(path, back, &want, &got) == 0);
	o.roots[0] = OPTS_ROOT_HOST;
	out2 = folded(back, &o);
	CHECK(strncmp(out2, "hostB;", 6) == 0 && strstr(out2, "hostA") ==
	    NULL);
	o.roots[0] = OPTS_ROOT_COMM;
	free(out2);
	stackset_free(back);
	/* made from another file: refused as stale */
	want.src_mtime = 99;
	back = stackset_create();
	CHECK(companion_read(path, back, &want, &got) == -1);
	stackset_free(back);
	/* cut short: refused */
	snprintf(name, sizeof(name), "%s.folded", path);
	CHECK(truncate(name, 200) == 0);
	back = stackset_create();
	CHECK(companion_read(path, back, NULL, &got) == -1);
	stackset_free(back);
	unlink(name);
	unlink(path);
	rmdir(dir);
	free(out);
	stackset_free(a);
	stackset_free(b);
	stackset_free(all);
}

static void
test_times(void)
{
	/* 2025-12-03T02:40:00Z */
	int64_t	 t, now = 1764729600LL * 1000000000;

	CHECK(opts_time("2025-12-03T02:40:05Z", now, &t) == 0);
	CHECK_EQ(t, now + 5000000000LL);
	CHECK(opts_time("2025-12-03 02:40:05.25+01:00", now, &t) == 0);
	CHECK_EQ(t, now - 3600000000000LL + 5250000000LL);
	CHECK(opts_time("2025-12-03T17:08:49.495407072Z", now, &t) == 0);
	CHECK_EQ(t % 1000000000, 495407072);
	CHECK(opts_time("-3h", now, &t) == 0);
	CHECK_EQ(t, now - 3 * 3600 * 1000000000LL);
	CHECK(opts_time("now", now, &t) == 0 && t == now);
	CHECK(opts_time("@1764729600", now, &t) == 0 && t == now);
	CHECK(opts_time("2025-13-03T02:40Z", now, &t) == -1);
	CHECK(opts_time("yesterday", now, &t) == -1);
	CHECK(opts_time("2025-12-03T02:40Zjunk", now, &t) == -1);
	CHECK(opts_duration("90m", &t) == 0 && t == 5400000000000LL);
	CHECK(opts_duration("3x", &t) == -1);
	CHECK(opts_time("9999-12-31T00:00Z", now, &t) == -1);
	CHECK(opts_time("-99999999d", now, &t) == -1);
}

static void
test_escape(void)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&buf, &len);

	/* markup, a control byte, a broken and an overlong UTF-8 sequence,
	 * and a whole one */
	svg_escape(f, "a<b>&\"\x01\xff\xc0\xaf\xc3\xa9", 12);
	fclose(f);
	CHECK(strcmp(buf, "a&lt;b&gt;&amp;&quot;????\xc3\xa9") == 0);
	free(buf);
}

/* A chain perf unwound through a binary without frame pointers: its
 * [unknown] run is one frame, as is a run of one library's; recursion
 * (a symbol repeated) and a kernel run stay as they are. */
static const struct tsample lost[] = {
	{ "python3", 7, 7, 20000000000ULL, 0,
	    { "spin", "?", "?", "?", "@/usr/lib/libfoo.so.1",
	    "@/usr/lib/libfoo.so.1", "rec", "rec", "?" } },
	{ "python3", 7, 7, 20100000000ULL, 0,
	    { "spin", "?", "rec", "rec", "?" } },
};

static void
test_squeeze(void)
{
	struct stackset		*ss, *v;
	struct fold_stats	 st;
	struct stack_key	 k = { 0, 0, 0, STACKSET_NONE, 0 };
	struct opts		 o;
	uint32_t		 fr[6];
	char			*out;

	ss = fold_text(lost, 2, 0, UINT64_MAX, &st);
	default_opts(&o);
	out = folded(ss, &o);
	/* the first sample's runs squeezed make it the second one's */
	CHECK(strcmp(out, "python3;[unknown];rec;rec;[libfoo.so.1];"
	    "[unknown];spin 1\npython3;[unknown];rec;rec;[unknown];spin 1\n")
	    == 0);
	if (strncmp(out, "python3;[unknown];rec;rec;[lib", 30) != 0)
		printf("%s", out);
	free(out);
	stackset_free(ss);

	/* straight into a stackset, as a native reader adds: a label's run
	 * (no frame) stays, an unknown kernel run goes */
	ss = stackset_create();
	fr[0] = stackset_intern(ss, "[x]", 3, STACK_LABEL);
	fr[1] = fr[0];
	fr[2] = stackset_intern(ss, "[kernel.kallsyms]", 17, STACK_KERNEL);
	fr[3] = fr[2];
	fr[4] = fr[2];
	fr[5] = stackset_intern(ss, "[kernel.kallsyms]", 17, STACK_USER);
	CHECK(stackset_add(ss, &k, fr, 6, 3) == 0);
	CHECK_EQ(stackset_stack(ss, 0)->nframes, 4);
	CHECK(stackset_add(ss, &k, fr, 4, 2) == 0);	/* the same stack */
	CHECK_EQ(stackset_nstacks(ss), 2);
	CHECK(stackset_add(ss, &k, fr, 5, 2) == 0);
	CHECK_EQ(stackset_nstacks(ss), 2);
	CHECK_EQ(stackset_samples(ss), 7);

	/* merged: squeezed already, no change */
	v = stackset_create();
	CHECK(stackset_merge(v, ss) == 0);
	CHECK_EQ(stackset_nstacks(v), 2);
	stackset_free(v);
	stackset_free(ss);
}

/* A stack deeper than the bound: its frames nearest the root, [...] and
 * its leaf; the samples all kept, the stacks within it untouched. */
static void
test_bound(void)
{
	struct stackset		*ss, *b;
	struct stack_key	 k = { 0, 0, 0, STACKSET_NONE, 0 };
	struct opts		 o;
	uint32_t		 fr[10];
	uint64_t		 cut;
	char			 name[8], *out;
	int			 i;

	ss = stackset_create();
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fr[i] = stackset_intern(ss, name, strlen(name), STACK_USER);
	}
	CHECK(stackset_add(ss, &k, fr, 10, 5) == 0);
	CHECK(stackset_add(ss, &k, fr, 4, 2) == 0);
	fr[3] = fr[8];
	CHECK(stackset_add(ss, &k, fr, 10, 1) == 0);
	b = view_bound(ss, 5, &cut);
	CHECK(b != NULL);
	CHECK_EQ(cut, 6);
	CHECK_EQ(stackset_samples(b), 8);
	/* the two deep ones differ only in what is cut: one stack now */
	CHECK_EQ(stackset_nstacks(b), 2);
	default_opts(&o);
	o.nroots = 0;
	out = folded(b, &o);
	CHECK(strcmp(out, "f0;f1;f2;[...];f9 6\nf0;f1;f2;f3 2\n") == 0);
	free(out);
	stackset_free(b);
	b = view_bound(ss, 10, &cut);
	CHECK(b != NULL && cut == 0 && stackset_nstacks(b) == 3);
	stackset_free(b);
	stackset_free(ss);
}

static void
parse(struct opts *o, int argc, const char **argv)
{
	optind = 0;	/* glibc: start over */
	opts_parse(o, argc, (char **)argv);
}

/* -i is the input file, as perf's; the icicle is -I or --icicle. */
static void
test_opts(void)
{
	const char	*a[] = { "perfspill-flame", "-i", "x.data", "-q",
	    "y.data", NULL };
	const char	*b[] = { "perfspill-flame", "-I", "--session", "deep",
	    "--session", "burst", "--max-depth", "0", NULL };
	const char	*c[] = { "perfspill-flame", "--inverted", "--icicle",
	    "--session", "all", NULL };
	struct opts	 o;

	parse(&o, 5, a);
	CHECK(!o.inverted && o.ninputs == 2);
	CHECK(strcmp(o.inputs[0], "x.data") == 0 &&
	    strcmp(o.inputs[1], "y.data") == 0);
	CHECK_EQ(o.max_depth, OPTS_MAX_DEPTH);
	CHECK(o.nsessions == 0 && !o.all_sessions);
	parse(&o, 8, b);
	CHECK(o.inverted && o.max_depth == 0 && o.nsessions == 2);
	CHECK(strcmp(o.sessions[1], "burst") == 0);
	parse(&o, 5, c);
	CHECK(o.inverted && o.all_sessions && o.nsessions == 0);
}

/* Without --session: the default session's files found in a directory,
 * and every file named; with it, the sessions named (or all). */
static void
test_session(void)
{
	struct pick_file	 f;
	struct opts		 o;
	const char		*deep = "deep";

	memset(&f, 0, sizeof(f));
	default_opts(&o);
	snprintf(f.session, sizeof(f.session), "deep");
	CHECK(!pick_session(&f, &o));
	f.named = 1;
	CHECK(pick_session(&f, &o));
	f.named = 0;
	o.sessions[0] = deep;
	o.nsessions = 1;
	CHECK(pick_session(&f, &o));
	snprintf(f.session, sizeof(f.session), "default");
	CHECK(!pick_session(&f, &o));
	f.named = 1;		/* --session given: it decides */
	CHECK(!pick_session(&f, &o));
	o.nsessions = 0;
	o.all_sessions = 1;
	CHECK(pick_session(&f, &o));
}

/* A tracing data feature as perf lays it out, holding sched_switch's
 * format (this kernel's offsets) among another event's. */
static size_t
tracing_blob(uint8_t *b, size_t cap)
{
	static const char magic[] = "\027\010\104tracing0.6";
	static const char other[] = "name: sched_wakeup\nID: 9\nformat:\n"
	    "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n";
	static const char sw[] = "name: sched_switch\nID: 316\nformat:\n"
	    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\t"
	    "signed:0;\n"
	    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	    "\nprint fmt: \"prev_comm=%s\"\n";
	size_t		 n = 0;
	uint64_t	 sz;
	uint32_t	 u;

#define PUT(p, len) do { memcpy(b + n, (p), (len)); n += (len); } while (0)
	if (cap < 2048)
		return 0;
	PUT(magic, sizeof(magic));		/* with the version's NUL */
	PUT("\0\10", 2);			/* little-endian, long 8 */
	u = 4096;
	PUT(&u, 4);
	PUT("header_page", 12);
	sz = 3;
	PUT(&sz, 8);
	PUT("abc", 3);
	PUT("header_event", 13);
	sz = 0;
	PUT(&sz, 8);
	u = 0;					/* no ftrace formats */
	PUT(&u, 4);
	u = 1;					/* one system, two events */
	PUT(&u, 4);
	PUT("sched", 6);
	u = 2;
	PUT(&u, 4);
	sz = sizeof(other) - 1;
	PUT(&sz, 8);
	PUT(other, sizeof(other) - 1);
	sz = sizeof(sw) - 1;
	PUT(&sz, 8);
	PUT(sw, sizeof(sw) - 1);
#undef PUT
	return n;
}

struct offcpu_got {
	uint64_t	 ns[4];		/* by the first frame's addr */
	unsigned	 n;
};

static int
offcpu_got(void *arg, const struct profile_sample *s)
{
	struct offcpu_got	*g = arg;

	/* the comm is read as the folding reads it (ASan: where it lives) */
	CHECK(strcmp(s->comm, "task") == 0);
	g->n++;
	if (s->nframes > 0 && s->frames[0].addr < 4)
		g->ns[s->frames[0].addr] += s->period;
	return 0;
}

/* A sched_switch sample of prev (in state) for next at time t, with a
 * one-frame stack at addr. */
static void
offcpu_feed(struct offcpu *oc, uint64_t t, uint32_t prev, uint64_t state,
    uint32_t next, uint64_t addr)
{
	static const char	*ev = "sched:sched_switch";
	struct profile_sample	 s;
	struct profile_frame	 fr;
	uint8_t			 raw[68];

	memset(raw, 0, sizeof(raw));
	memcpy(raw + 24, &prev, 4);
	memcpy(raw + 32, &state, 8);
	memcpy(raw + 56, &next, 4);
	memset(&fr, 0, sizeof(fr));
	fr.addr = addr;
	memset(&s, 0, sizeof(s));
	s.time = t;
	s.pid = s.tid = prev;
	s.event = ev;
	s.comm = "task";
	s.nframes = 1;
	s.frames = &fr;
	s.raw = raw;
	s.raw_size = sizeof(raw);
	CHECK(offcpu_sample(oc, &s) == 0);
}

/* The blob's first old bytes replaced by new (as long) in a copy. */
static uint8_t *
offcpu_patch(const uint8_t *blob, size_t n, const char *old, const char *new)
{
	uint8_t	*b = malloc(n), *at;

	if (b == NULL)
		return NULL;
	memcpy(b, blob, n);
	if ((at = memmem(b, n, old, strlen(old))) != NULL)
		memcpy(at, new, strlen(new));
	CHECK(at != NULL && strlen(old) == strlen(new));
	return b;
}

/* A format that lacks a field, gives one a wrong size, or puts one past
 * its samples' raw data is refused by the field's name: nothing is read
 * where the format cannot be. */
static void
test_offcpu_misfit(const uint8_t *blob, size_t n)
{
	static const char *const	 evs[] = { "sched:sched_switch" };
	static const struct {
		const char	*old, *new, *name;
	} bad[] = {
		{ "next_pid;", "next_pix;", "no field next_pid" },
		{ "prev_pid;\toffset:24;\tsize:4", "prev_pid;\toffset:24;\tsize:2",
		    "prev_pid has 2 bytes" },
		{ "prev_state;\toffset:32;\tsize:8",
		    "prev_state;\toffset:32;\tsize:2", "prev_state has 2" },
	};
	struct profile_info		 pi;
	struct perfread_opts		 o;
	struct offcpu_got		 g;
	struct offcpu			*oc;
	struct profile_sample		 s;
	uint8_t				*b, raw[68];
	char				 err[256];
	size_t				 i;

	memset(&pi, 0, sizeof(pi));
	pi.nattrs = 1;
	pi.events = evs;
	pi.tracing_len = n;
	memset(&o, 0, sizeof(o));
	o.tmax = UINT64_MAX;
	memset(&g, 0, sizeof(g));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if ((b = offcpu_patch(blob, n, bad[i].old, bad[i].new)) == NULL)
			continue;
		pi.tracing = b;
		err[0] = '\0';
		CHECK(offcpu_create(&pi, &o, offcpu_got, &g, err,
		    sizeof(err)) == NULL);
		CHECK(strstr(err, bad[i].name) != NULL);
		free(b);
	}
	/* next_pid at 96 of a 68-byte sample: the walk stops, naming it */
	if ((b = offcpu_patch(blob, n, "next_pid;\toffset:56",
	    "next_pid;\toffset:96")) == NULL)
		return;
	pi.tracing = b;
	oc = offcpu_create(&pi, &o, offcpu_got, &g, err, sizeof(err));
	CHECK(oc != NULL);
	if (oc != NULL) {
		memset(raw, 0, sizeof(raw));
		memset(&s, 0, sizeof(s));
		s.event = "sched:sched_switch";
		s.comm = "task";
		s.time = 1000;
		s.raw = raw;
		s.raw_size = sizeof(raw);
		CHECK(offcpu_sample(oc, &s) == -1);
		CHECK(offcpu_error(oc) != NULL &&
		    strstr(offcpu_error(oc), "next_pid at offset 96") != NULL);
		CHECK_EQ(g.n, 0);
		offcpu_free(oc);
	}
	free(b);
}

static void
test_offcpu(void)
{
	static const char *const	 evs[] = { "sched:sched_switch" };
	static uint8_t			 blob[4096];
	struct offcpu_fields		 f;
	struct profile_info		 pi;
	struct perfread_opts		 o;
	struct offcpu_stats		 st;
	struct offcpu_got		 g;
	struct offcpu			*oc;
	char				 err[256];
	size_t				 n = tracing_blob(blob, sizeof(blob)), i;
	uint8_t				*cut;

	CHECK(offcpu_format(blob, n, &f) == 0);
	CHECK_EQ(f.prev_pid, 24);
	CHECK_EQ(f.prev_state, 32);
	CHECK_EQ(f.prev_state_size, 8);
	CHECK_EQ(f.next_pid, 56);
	/* cut anywhere before the last field: no format, no read past it
	 * (each cut is a buffer of its own, for ASan) */
	for (i = 0; i < n - 60; i++) {
		if ((cut = malloc(i + 1)) == NULL)
			continue;
		memcpy(cut, blob, i);
		CHECK(offcpu_format(cut, i, &f) == -1);
		free(cut);
	}

	memset(&pi, 0, sizeof(pi));
	pi.nattrs = 1;
	pi.events = evs;
	pi.tracing = blob;
	pi.tracing_len = n;
	memset(&o, 0, sizeof(o));
	o.tmax = UINT64_MAX;
	memset(&g, 0, sizeof(g));
	oc = offcpu_create(&pi, &o, offcpu_got, &g, err, sizeof(err));
	CHECK(oc != NULL);
	if (oc == NULL)
		return;
	/* 100 sleeps at 1000 in frame 1; 200 is preempted at 1500 (not
	 * counted), sleeps at 2000 in frame 2; 100 runs at 4000 (another
	 * CPU), 200 at 2500; 300 sleeps in frame 3 and never comes back */
	offcpu_feed(oc, 1000, 100, 1, 200, 1);
	offcpu_feed(oc, 1500, 200, 0x100, 0, 0);
	offcpu_feed(oc, 2000, 200, 2, 0, 2);
	offcpu_feed(oc, 2500, 0, 0, 200, 0);
	offcpu_feed(oc, 3000, 300, 1, 0, 3);
	offcpu_feed(oc, 4000, 0, 0, 100, 0);
	/* 1000 threads asleep at once: the table grows under them, and
	 * each one's comm still reads as its own when it wakes */
	for (i = 0; i < 1000; i++)
		offcpu_feed(oc, 5000 + i, 1000 + (uint32_t)i, 1, 0, 0);
	for (i = 0; i < 1000; i++)
		offcpu_feed(oc, 7000 + i, 0, 0, 1000 + (uint32_t)i, 0);
	g.n -= 1000;
	offcpu_end(oc, &st);
	CHECK_EQ(g.n, 2);
	CHECK_EQ(g.ns[1], 3000);
	CHECK_EQ(g.ns[2], 500);
	CHECK_EQ(g.ns[3], 0);
	CHECK_EQ(st.switches, 2006);
	CHECK_EQ(st.paired, 1002);
	CHECK_EQ(st.open, 1);
	offcpu_free(oc);

	/* a file with the event but no format cannot be read */
	pi.tracing = NULL;
	CHECK(offcpu_create(&pi, &o, offcpu_got, &g, err, sizeof(err)) ==
	    NULL);
	test_offcpu_misfit(blob, n);
}

/* One name through demangle (want NULL: not a mangled name). */
static void
check_demangle(const char *name, const char *want)
{
	char	*d = demangle(name);

	if (want == NULL)
		CHECK(d == NULL);
	else {
		CHECK(d != NULL && strcmp(d, want) == 0);
		if (d != NULL && strcmp(d, want) != 0)
			fprintf(stderr, "demangle %s: %s, not %s\n", name, d,
			    want);
	}
	free(d);
}

/* The names perf report shows: no parameters (perf without -v), Rust's
 * legacy hash dropped, v0 decoded, OCaml's as perf's demangle-ocaml.c
 * test has them; C's left alone. */
static void
test_demangle(void)
{
	check_demangle("main", NULL);
	check_demangle("pthread_rwlock_rdlock@GLIBC_2.2.5", NULL);
	check_demangle("camlStdlib__array__map_154", "Stdlib.array.map_154");
	check_demangle("camlStdlib__anon_fn$5bstdlib$2eml$3a334$2c0$2d$2d54"
	    "$5d_1453", "Stdlib.anon_fn[stdlib.ml:334,0--54]_1453");
	check_demangle("camlStdlib__bytes__$2b$2b_2205", "Stdlib.bytes.++_2205");
	check_demangle("camlfoo", NULL);
#ifdef FLAME_DEMANGLE
	check_demangle("_ZN4work6do_mapERKSt6vectorIlSaIlEE", "work::do_map");
	check_demangle("_ZN4work3AccIlE3addERKSt6vectorIlSaIlEE",
	    "work::Acc<long>::add");
	check_demangle("_ZN3std2rt10lang_start17h5d3b2b4b5c5d1a2bE",
	    "std::rt::lang_start");
	check_demangle("_RNvNtCs1234_7mycrate4main4spin",
	    "mycrate::main::spin");
	check_demangle("_ZN4work6do_mapERKSt6vectorIlSaIlEE.cold",
	    "work::do_map");	/* its .cold part: one name, as perf */
#else
	check_demangle("_ZN4work6do_mapERKSt6vectorIlSaIlEE", NULL);
#endif
}

int
main(void)
{
	test_fold();
	test_demangle();
	test_roots_filters();
	test_cgroups();
	test_names_are_data();
	test_merge_companion();
	test_times();
	test_escape();
	test_squeeze();
	test_bound();
	test_opts();
	test_session();
	test_offcpu();
	return check_exit();
}

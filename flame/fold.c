/*
 * fold: perf script's lines into a stackset (see fold.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fold.h"
#include "perfrun.h"

/* Kernel text: the upper half of the address space on x86-64 and arm64. */
#define FOLD_KERNEL_ADDR	0xffff800000000000ULL
#define FOLD_READ_SIZE		(1 << 20)
#define FOLD_LINE_MAX		(64 * 1024)
#define FOLD_PROGRESS_EVERY	4096

struct fold {
	struct stackset		*ss;
	struct fold_opts	 o;
	struct fold_stats	 st;
	int			 open;		/* a sample's header was read */
	int			 keep;		/* ... inside the range */
	struct stack_key	 key;
	uint32_t		 frames[STACKSET_MAX_FRAMES];	/* leaf first */
	uint32_t		 nframes;
	char			*carry;		/* a partial line */
	size_t			 carry_len;
};

struct fold *
fold_create(struct stackset *ss, const struct fold_opts *o)
{
	struct fold	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	if ((f->carry = malloc(FOLD_LINE_MAX)) == NULL) {
		free(f);
		return NULL;
	}
	f->ss = ss;
	f->o = *o;
	return f;
}

void
fold_free(struct fold *f)
{
	if (f == NULL)
		return;
	free(f->carry);
	free(f);
}

/* The sample read so far into the stackset, root first. */
static int
fold_commit(struct fold *f)
{
	uint32_t	 root[STACKSET_MAX_FRAMES], i, n = f->nframes;

	if (!f->open)
		return 0;
	f->open = 0;
	if (!f->keep)
		return 0;
	for (i = 0; i < n; i++)
		root[i] = f->frames[n - 1 - i];
	return stackset_add(f->ss, &f->key, root, n, 1);
}

static int
fold_isdigit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * "secs.nsecs:" ends at the colon at s[i]: the start of the token, or
 * -1. The first such token of a header is its time: a comm holding one
 * would be cut wrong, which perf's own readers share.
 */
static long
fold_time_token(const char *s, size_t i)
{
	size_t	 j = i;

	if (j == 0 || !fold_isdigit(s[j - 1]))
		return -1;
	while (j > 0 && fold_isdigit(s[j - 1]))
		j--;
	if (j == 0 || s[j - 1] != '.')
		return -1;
	j--;
	if (j == 0 || !fold_isdigit(s[j - 1]))
		return -1;
	while (j > 0 && fold_isdigit(s[j - 1]))
		j--;
	if (j == 0 || s[j - 1] != ' ')
		return -1;
	return (long)j;
}

static uint64_t
fold_ns(const char *s, const char *end)
{
	uint64_t	 sec = 0, ns = 0;
	int		 digits = 0;

	while (s < end && *s != '.')
		sec = sec * 10 + (uint64_t)(*s++ - '0');
	if (s < end)
		s++;
	while (s < end && digits < 9) {
		ns = ns * 10 + (uint64_t)(*s++ - '0');
		digits++;
	}
	while (digits++ < 9)
		ns *= 10;
	return sec * 1000000000ULL + ns;
}

/* One callchain entry, "ADDR SYM (DSO)" without leading blanks. */
static int
fold_frame(struct fold *f, const char *s, const char *end)
{
	const char	*sym, *sym_end, *dso = NULL, *dso_end = NULL, *p, *b;
	char		 name[512];
	uint64_t	 addr = 0;
	size_t		 len;
	int		 kernel, hexd;
	uint32_t	 id;

	if (!f->open || !f->keep)
		return 0;
	for (p = s; p < end && *p != ' '; p++) {
		hexd = *p >= '0' && *p <= '9' ? *p - '0' :
		    *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (hexd < 0) {
			f->st.bad++;
			return 0;
		}
		addr = addr << 4 | (uint64_t)hexd;
	}
	while (p < end && *p == ' ')
		p++;
	sym = p;
	sym_end = end;
	/* the dso is in the last parentheses: a C++ name may hold some */
	if (end - sym >= 2 && end[-1] == ')') {
		for (b = end - 1; (b = memrchr(sym, '(', (size_t)(b - sym))) !=
		    NULL && b > sym; )
			if (b[-1] == ' ') {
				dso = b + 1;
				dso_end = end - 1;
				sym_end = b - 1;
				break;
			}
	}
	kernel = addr >= FOLD_KERNEL_ADDR || (dso != NULL &&
	    dso_end - dso > 8 && memcmp(dso, "[kernel.", 8) == 0);
	if ((sym_end - sym == 9 && memcmp(sym, "[unknown]", 9) == 0) ||
	    sym_end == sym) {
		/* no symbol: name the file it ran in, as [libfoo.so] */
		if (dso == NULL || (dso_end - dso == 9 &&
		    memcmp(dso, "[unknown]", 9) == 0)) {
			sym = "[unknown]";
			sym_end = sym + 9;
		} else {
			for (p = dso_end; p > dso && p[-1] != '/'; p--)
				;
			if (*p == '[')
				len = (size_t)snprintf(name, sizeof(name),
				    "%.*s", (int)(dso_end - p), p);
			else
				len = (size_t)snprintf(name, sizeof(name),
				    "[%.*s]", (int)(dso_end - p), p);
			if (len >= sizeof(name))
				len = sizeof(name) - 1;
			sym = name;
			sym_end = name + len;
		}
	}
	if (memchr(sym, ';', (size_t)(sym_end - sym)) != NULL) {
		/* ';' separates frames in folded stacks */
		len = (size_t)(sym_end - sym) < sizeof(name) ?
		    (size_t)(sym_end - sym) : sizeof(name) - 1;
		memmove(name, sym, len);
		for (p = name; (p = memchr(p, ';', len - (size_t)(p - name))) !=
		    NULL; )
			*(char *)p = ':';
		sym = name;
		sym_end = name + len;
	}
	if (f->nframes == STACKSET_MAX_FRAMES)
		return 0;	/* deeper than we keep: the leaf side stays */
	if ((id = stackset_intern(f->ss, sym, (size_t)(sym_end - sym),
	    kernel ? STACK_KERNEL : STACK_USER)) == STACKSET_NONE)
		return -1;
	f->frames[f->nframes++] = id;
	return 0;
}

/* "comm pid/tid secs.nsecs: event: [ADDR SYM (DSO)]" */
static int
fold_header(struct fold *f, const char *s, const char *end)
{
	const char	*p, *c_end, *ev, *ev_end, *rest;
	uint64_t	 t;
	uint32_t	 pid = 0, tid = 0;
	long		 tstart = -1;
	size_t		 i;

	for (i = 0; s + i < end; i++)
		if (s[i] == ':' && (tstart = fold_time_token(s, i)) >= 0)
			break;
	if (tstart < 0) {
		f->st.bad++;
		return 0;
	}
	t = fold_ns(s + tstart, s + i);
	/* before the time: "comm  pid/tid" */
	p = s + tstart;
	while (p > s && p[-1] == ' ')
		p--;
	c_end = p;
	while (p > s && p[-1] != ' ')
		p--;
	{
		const char	*q = p;

		while (q < c_end && fold_isdigit(*q))
			pid = pid * 10 + (uint32_t)(*q++ - '0');
		if (q < c_end && *q == '/')
			for (q++; q < c_end && fold_isdigit(*q); q++)
				tid = tid * 10 + (uint32_t)(*q - '0');
		else
			tid = pid;
	}
	c_end = p;
	while (c_end > s && c_end[-1] == ' ')
		c_end--;
	p = s;
	while (p < c_end && *p == ' ')
		p++;
	/* after it: "event:" then blanks, then maybe the sample's ip */
	ev = s + i + 1;
	while (ev < end && *ev == ' ')
		ev++;
	for (ev_end = ev; ev_end < end; ev_end++)
		if (*ev_end == ':' && (ev_end + 1 == end || ev_end[1] == ' '))
			break;
	rest = ev_end < end ? ev_end + 1 : end;
	while (rest < end && *rest == ' ')
		rest++;
	f->st.read++;
	if (f->o.progress != NULL && f->st.read % FOLD_PROGRESS_EVERY == 0)
		f->o.progress(f->o.progress_arg, f->st.read);
	f->open = 1;
	f->nframes = 0;
	f->keep = t >= f->o.tmin && t < f->o.tmax;
	if (!f->keep)
		return 0;
	f->st.kept++;
	if (f->st.first == 0 || t < f->st.first)
		f->st.first = t;
	if (t > f->st.last)
		f->st.last = t;
	f->key.host = f->o.host;
	f->key.pid = pid;
	if ((f->key.comm = stackset_intern(f->ss, p, (size_t)(c_end - p),
	    STACK_LABEL)) == STACKSET_NONE ||
	    (f->key.event = stackset_intern(f->ss, ev, (size_t)(ev_end - ev),
	    STACK_LABEL)) == STACKSET_NONE)
		return -1;
	f->key.cgroup = f->o.cgmap != NULL ? fold_cgmap_get(f->o.cgmap, tid) :
	    STACKSET_NONE;
	if (rest < end)
		return fold_frame(f, rest, end);
	return 0;
}

static int
fold_line(struct fold *f, const char *s, size_t len)
{
	const char	*end = s + len;

	if (len == 0)
		return fold_commit(f);
	if (*s == '\t' || *s == ' ') {
		/* a callchain entry, or the padded comm of a header */
		const char	*p = s;

		while (p < end && (*p == '\t' || *p == ' '))
			p++;
		if (*s == '\t' || (f->open && memchr(p, ':', (size_t)(end -
		    p)) == NULL))
			return p < end ? fold_frame(f, p, end) : 0;
	}
	if (fold_commit(f) == -1)
		return -1;
	return fold_header(f, s, end);
}

int
fold_feed(struct fold *f, const char *buf, size_t len)
{
	const char	*p = buf, *end = buf + len, *nl;
	size_t		 take;

	if (f->carry_len > 0) {
		nl = memchr(p, '\n', len);
		take = nl != NULL ? (size_t)(nl - p) : len;
		if (f->carry_len + take < FOLD_LINE_MAX) {
			memcpy(f->carry + f->carry_len, p, take);
			f->carry_len += take;
		} else
			f->carry_len = FOLD_LINE_MAX;	/* cut: too long */
		if (nl == NULL)
			return 0;
		if (fold_line(f, f->carry, f->carry_len < FOLD_LINE_MAX ?
		    f->carry_len : FOLD_LINE_MAX - 1) == -1)
			return -1;
		f->carry_len = 0;
		p = nl + 1;
	}
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (fold_line(f, p, (size_t)(nl - p)) == -1)
			return -1;
		p = nl + 1;
	}
	if (p < end) {
		take = (size_t)(end - p) < FOLD_LINE_MAX ? (size_t)(end - p) :
		    FOLD_LINE_MAX - 1;
		memcpy(f->carry, p, take);
		f->carry_len = take;
	}
	return 0;
}

int
fold_end(struct fold *f, struct fold_stats *st)
{
	if (f->carry_len > 0 && fold_line(f, f->carry, f->carry_len) == -1)
		return -1;
	f->carry_len = 0;
	if (fold_commit(f) == -1)
		return -1;
	if (st != NULL)
		*st = f->st;
	return 0;
}

/* The thread -> cgroup map: a small open-addressing table. */
struct fold_cgmap_ent {
	uint32_t	 tid;
	uint32_t	 cgroup;
	uint64_t	 samples;
	int		 used;
};

struct fold_cgmap {
	struct fold_cgmap_ent	*e;
	size_t			 size, n;
};

static struct fold_cgmap_ent *
fold_cgmap_slot(const struct fold_cgmap *m, uint32_t tid)
{
	size_t	 j = (tid * 2654435761U) & (m->size - 1);

	while (m->e[j].used && m->e[j].tid != tid)
		j = (j + 1) & (m->size - 1);
	return &m->e[j];
}

static int
fold_cgmap_put(struct fold_cgmap *m, uint32_t tid, uint32_t cg,
    uint64_t samples)
{
	struct fold_cgmap_ent	*e, *old;
	size_t			 i, osize;

	if ((m->n + 1) * 2 > m->size) {
		old = m->e;
		osize = m->size;
		if ((m->e = calloc(osize * 2, sizeof(*m->e))) == NULL) {
			m->e = old;
			return -1;
		}
		m->size = osize * 2;
		for (i = 0; i < osize; i++)
			if (old[i].used)
				*fold_cgmap_slot(m, old[i].tid) = old[i];
		free(old);
	}
	e = fold_cgmap_slot(m, tid);
	if (!e->used) {
		m->n++;
		e->used = 1;
		e->tid = tid;
	} else if (e->samples >= samples)
		return 0;	/* a thread that moved: most of its samples */
	e->cgroup = cg;
	e->samples = samples;
	return 0;
}

struct fold_cgmap *
fold_cgmap_parse(struct stackset *ss, const char *text)
{
	struct fold_cgmap	*m;
	const char		*line, *nl, *p, *tok, *cg, *end;
	unsigned long long	 samples;
	uint32_t		 tid, id;
	char			*e;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->size = 64;
	if ((m->e = calloc(m->size, sizeof(*m->e))) == NULL)
		goto error;
	/* "  49.40%   703   11604:flametarget   /system.slice/x" */
	for (line = text; *line != '\0'; line = *nl ? nl + 1 : nl) {
		nl = strchrnul(line, '\n');
		end = nl;
		while (end > line && (end[-1] == ' ' || end[-1] == '\r'))
			end--;
		p = line;
		while (p < end && *p == ' ')
			p++;
		if (p == end || *p == '#' || !fold_isdigit(*p))
			continue;
		while (p < end && *p != ' ')	/* the percentage */
			p++;
		samples = strtoull(p, &e, 10);
		p = e;
		while (p < end && *p == ' ')
			p++;
		tok = p;
		tid = 0;
		while (p < end && fold_isdigit(*p))
			tid = tid * 10 + (uint32_t)(*p++ - '0');
		if (p == tok || p == end || *p != ':')
			continue;
		for (cg = end; cg > p && cg[-1] != ' '; cg--)
			;
		if (cg == end)
			continue;
		if ((id = stackset_intern(ss, cg, (size_t)(end - cg),
		    STACK_LABEL)) ==
		    STACKSET_NONE || fold_cgmap_put(m, tid, id, samples) == -1)
			goto error;
	}
	return m;
error:
	fold_cgmap_free(m);
	return NULL;
}

void
fold_cgmap_free(struct fold_cgmap *m)
{
	if (m == NULL)
		return;
	free(m->e);
	free(m);
}

uint32_t
fold_cgmap_get(const struct fold_cgmap *m, uint32_t tid)
{
	const struct fold_cgmap_ent	*e = fold_cgmap_slot(m, tid);

	return e->used ? e->cgroup : STACKSET_NONE;
}

/* perf's --time takes seconds.microseconds; a little wider than ours. */
static void
fold_time_arg(char *buf, size_t len, uint64_t tmin, uint64_t tmax)
{
	uint64_t	 a = tmin / 1000, b = tmax == UINT64_MAX ? 0 :
	    tmax / 1000 + 1;

	if (tmax == UINT64_MAX)
		snprintf(buf, len, "%" PRIu64 ".%06" PRIu64 ",", a / 1000000,
		    a % 1000000);
	else
		snprintf(buf, len, "%" PRIu64 ".%06" PRIu64 ",%" PRIu64
		    ".%06" PRIu64, a / 1000000, a % 1000000, b / 1000000,
		    b % 1000000);
}

int
fold_file(struct stackset *ss, const char *path, const struct fold_opts *o,
    int cgroups, int verbose, struct fold_stats *st)
{
	const char	*args[16];
	struct fold_opts fo = *o;
	struct fold_cgmap *cgm = NULL;
	struct fold	*f = NULL;
	struct perfrun	 pr;
	char		*buf = NULL, *text = NULL, tbuf[64];
	size_t		 n = 0, len;
	ssize_t		 r;
	int		 started = 0;

	if (cgroups) {
		args[n++] = "report";
		args[n++] = "-i";
		args[n++] = path;
		args[n++] = "--stdio";
		args[n++] = "-q";
		args[n++] = "-n";
		args[n++] = "--no-children";
		args[n++] = "-g";
		args[n++] = "none";
		args[n++] = "--sort";
		args[n++] = "pid,cgroup";
		args[n] = NULL;
		if (perfrun_capture(args, &text, &len, verbose) == -1)
			return -1;
		fo.cgmap = cgm = fold_cgmap_parse(ss, text);
		free(text);
		if (cgm == NULL) {
			warnx("%s: out of memory", path);
			return -1;
		}
		n = 0;
	}
	args[n++] = "script";
	args[n++] = "-i";
	args[n++] = path;
	args[n++] = "--ns";
	args[n++] = "-F";
	args[n++] = "comm,pid,tid,time,event,ip,sym,dso";
	if (o->tmin != 0 || o->tmax != UINT64_MAX) {
		/* perf skips what is outside: less to print; ours is exact */
		fold_time_arg(tbuf, sizeof(tbuf), o->tmin, o->tmax);
		args[n++] = "--time";
		args[n++] = tbuf;
	}
	args[n] = NULL;
	if ((buf = malloc(FOLD_READ_SIZE)) == NULL ||
	    (f = fold_create(ss, &fo)) == NULL) {
		warnx("%s: out of memory", path);
		goto error;
	}
	if (perfrun_start(&pr, args) == -1)
		goto error;
	started = 1;
	for (;;) {
		if ((r = read(pr.out, buf, FOLD_READ_SIZE)) == -1) {
			if (errno == EINTR)
				continue;
			warn("reading %s", pr.what);
			goto error;
		}
		if (r == 0)
			break;
		if (fold_feed(f, buf, (size_t)r) == -1) {
			warnx("%s: out of memory", path);
			goto error;
		}
	}
	started = 0;
	if (perfrun_finish(&pr, verbose) == -1)
		goto error;
	if (fold_end(f, st) == -1) {
		warnx("%s: out of memory", path);
		goto error;
	}
	if (st->bad > 0)
		warnx("%s: %" PRIu64 " lines of perf script not understood",
		    path, st->bad);
	fold_free(f);
	free(buf);
	fold_cgmap_free(cgm);
	return 0;
error:
	if (started)
		perfrun_abort(&pr);
	fold_free(f);
	free(buf);
	fold_cgmap_free(cgm);
	return -1;
}

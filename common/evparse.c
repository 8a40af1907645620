/*
 * evparse: perf's -e grammar (see evparse.h). Written from perf-list(1)
 * and from what perf record 6.1 takes and how perf report names it:
 *
 *	list	:= item (',' item)*
 *	item	:= event | '{' event (',' event)* '}' (':' mods)?
 *	event	:= symbol (':' mods)? | system ':' name (':' mods)?
 *		 | 'r' hex (':' mods)? | pmu '/' terms? '/' mods?
 *	terms	:= term (',' term)*	term := name ('=' value)?
 *
 * perf names an event as written, modifiers included, except a
 * tracepoint, named system:name, and a group's members, named without
 * the group's modifiers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "evparse.h"

struct evparse_sym {
	const char	*name;
	uint32_t	 type;
	uint64_t	 config;
};

static const struct evparse_sym evparse_syms[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	    PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	    PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	    PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
};

int
evparse_symbol(const char *name, uint32_t *type, uint64_t *config)
{
	size_t	 i;

	for (i = 0; i < sizeof(evparse_syms) / sizeof(evparse_syms[0]); i++)
		if (strcmp(evparse_syms[i].name, name) == 0) {
			*type = evparse_syms[i].type;
			*config = evparse_syms[i].config;
			return 0;
		}
	return -1;
}

int
evparse_number(const char *s, uint64_t *v)
{
	char			*end;
	unsigned long long	 n;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ?
	    16 : 10);
	if (*end != '\0' || errno != 0)
		return -1;
	*v = n;
	return 0;
}

size_t
evparse_item(const char *text)
{
	const char	*p;
	int		 brace = 0, slash = 0;

	for (p = text; *p; p++) {
		if (*p == '{')
			brace++;
		else if (*p == '}' && brace > 0)
			brace--;
		else if (*p == '/')
			slash = !slash;
		else if (*p == ',' && brace == 0 && !slash)
			break;
	}
	return (size_t)(p - text);
}

/* The parse of one setting: its text, for messages, and the output. */
struct evparse_ctx {
	const char		*text;
	struct evparse_event	*out;
	size_t			 max, n;
	char			*err;
	size_t			 len;
};

static int evparse_fail(struct evparse_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static int
evparse_fail(struct evparse_ctx *c, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(c->err, c->len, "event syntax error: '%s': ", c->text);
	if (n >= 0 && (size_t)n < c->len) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A name perf takes in a symbol, tracepoint, PMU or term. */
static int
evparse_word(const char *s, size_t n)
{
	size_t	 i;

	/* never "." or "..": a name becomes a sysfs or tracefs path */
	if (n == 0 || s[0] == '.' || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return 0;
	return 1;
}

static int
evparse_mods(struct evparse_ctx *c, const char *s, size_t n,
    struct evparse_mods *m)
{
	size_t	 i;

	if (n == 0)
		return evparse_fail(c, "a modifier is expected after ':'");
	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case 'u': m->user = 1; break;
		case 'k': m->kernel = 1; break;
		case 'h': m->hv = 1; break;
		case 'G': m->guest = 1; break;
		case 'H': m->host = 1; break;
		case 'I': m->no_idle = 1; break;
		case 'D': m->pinned = 1; break;
		case 'P': m->max_precise = 1; break;
		case 'p':
			if (++m->precise > 3)
				return evparse_fail(c, "bad modifier: at most "
				    "ppp (precise_ip 3)");
			break;
		default:
			return evparse_fail(c, "bad modifier '%c' (perf's "
			    "modifiers: u k h G H I D p pp ppp P)", s[i]);
		}
	}
	return 0;
}

/* "pmu/terms/mods" at s (n bytes, slash at s + p). */
static int
evparse_pmu(struct evparse_ctx *c, struct evparse_event *ev, const char *s,
    size_t n, size_t slash)
{
	const char		*t, *end, *close, *eq;
	size_t			 tn;
	struct evparse_term	*term;

	if (!evparse_word(s, slash) || slash >= sizeof(ev->base))
		return evparse_fail(c, "'%.*s' is not a PMU name", (int)slash,
		    s);
	memcpy(ev->base, s, slash);
	ev->base[slash] = '\0';
	t = s + slash + 1;
	end = s + n;
	if ((close = memchr(t, '/', (size_t)(end - t))) == NULL)
		return evparse_fail(c, "a PMU event ends in '/' "
		    "(%s/TERM=VALUE,.../)", ev->base);
	while (t < close) {
		tn = (size_t)(close - t);
		if ((eq = memchr(t, ',', tn)) != NULL)
			tn = (size_t)(eq - t);
		if (ev->nr_terms == EVPARSE_MAX_TERMS)
			return evparse_fail(c, "more than %d terms",
			    EVPARSE_MAX_TERMS);
		term = &ev->terms[ev->nr_terms];
		eq = memchr(t, '=', tn);
		if (!evparse_word(t, eq ? (size_t)(eq - t) : tn) ||
		    (eq ? (size_t)(eq - t) : tn) >= sizeof(term->name) ||
		    (eq && (tn - (size_t)(eq - t) - 1 == 0 ||
		    tn - (size_t)(eq - t) - 1 >= sizeof(term->value))))
			return evparse_fail(c, "'%.*s' is not a term "
			    "(NAME or NAME=VALUE)", (int)tn, t);
		if (eq) {
			memcpy(term->name, t, (size_t)(eq - t));
			term->name[eq - t] = '\0';
			memcpy(term->value, eq + 1, tn - (size_t)(eq - t) - 1);
			term->value[tn - (size_t)(eq - t) - 1] = '\0';
			term->has_value = 1;
		} else {
			memcpy(term->name, t, tn);
			term->name[tn] = '\0';
		}
		ev->nr_terms++;
		t += tn;
		if (t < close && ++t == close)
			return evparse_fail(c, "a term is expected after ','");
	}
	ev->kind = EVPARSE_PMU;
	return close + 1 < end ? evparse_mods(c, close + 1,
	    (size_t)(end - close - 1), &ev->mods) : 0;
}

/* One event, s of n bytes, no braces. */
static int
evparse_event(struct evparse_ctx *c, const char *s, size_t n)
{
	struct evparse_event	*ev;
	const char		*c1, *c2, *slash;
	uint32_t		 type;
	uint64_t		 config;
	char			 word[EVPARSE_NAME_LEN];
	size_t			 i, wn;

	if (n == 0)
		return evparse_fail(c, "an event is expected (an empty name, "
		    "or ',' at an end)");
	if (c->n == c->max)
		return evparse_fail(c, "more than %zu events", c->max);
	if (n >= sizeof(ev->name))
		return evparse_fail(c, "an event name is at most %zu "
		    "characters", sizeof(ev->name) - 1);
	ev = &c->out[c->n];
	memset(ev, 0, sizeof(*ev));
	memcpy(ev->name, s, n);
	ev->name[n] = '\0';
	if ((slash = memchr(s, '/', n)) != NULL) {
		if (evparse_pmu(c, ev, s, n, (size_t)(slash - s)) == -1)
			return -1;
		c->n++;
		return 0;
	}
	c1 = memchr(s, ':', n);
	wn = c1 ? (size_t)(c1 - s) : n;
	if (!evparse_word(s, wn))
		return evparse_fail(c, "'%.*s' is not an event name", (int)wn,
		    s);
	memcpy(word, s, wn);
	word[wn] = '\0';
	if (evparse_symbol(word, &type, &config) == 0 ||
	    (word[0] == 'r' && word[1] != '\0' &&
	    strspn(word + 1, "0123456789abcdefABCDEF") == wn - 1)) {
		/* a symbol or raw code, then its modifiers */
		snprintf(ev->base, sizeof(ev->base), "%s", word);
		ev->kind = EVPARSE_SYMBOL;
		if (evparse_symbol(word, &type, &config) == -1) {
			ev->kind = EVPARSE_RAW;
			errno = 0;
			ev->raw = strtoull(word + 1, NULL, 16);
			if (errno != 0 || wn > 17)
				return evparse_fail(c, "raw event '%s' is "
				    "above 64 bits", word);
		}
		if (c1 != NULL && evparse_mods(c, c1 + 1,
		    n - wn - 1, &ev->mods) == -1)
			return -1;
		c->n++;
		return 0;
	}
	if (c1 == NULL)
		return evparse_fail(c, "unknown event '%s' (software: "
		    "cpu-clock, task-clock, page-faults, context-switches, "
		    "cpu-migrations, ...; system:tracepoint; rNNN; "
		    "pmu/term=value/; see perf list)", word);
	/* system:name[:mods] */
	c2 = memchr(c1 + 1, ':', n - wn - 1);
	i = c2 ? (size_t)(c2 - c1 - 1) : n - wn - 1;
	if (memchr(s, '*', n) != NULL || memchr(s, '?', n) != NULL)
		return evparse_fail(c, "tracepoint globs are not supported: "
		    "name each tracepoint");
	if (!evparse_word(c1 + 1, i))
		return evparse_fail(c, "a tracepoint is written system:name "
		    "('%.*s' is not a name)", (int)i, c1 + 1);
	ev->kind = EVPARSE_TRACEPOINT;
	snprintf(ev->base, sizeof(ev->base), "%.*s", (int)(wn + 1 + i), s);
	/* perf names a tracepoint without its modifiers */
	snprintf(ev->name, sizeof(ev->name), "%s", ev->base);
	if (c2 != NULL && evparse_mods(c, c2 + 1, (size_t)(s + n - c2 - 1),
	    &ev->mods) == -1)
		return -1;
	c->n++;
	return 0;
}

/* Add the group's modifiers to a member's own. */
static void
evparse_merge(struct evparse_mods *m, const struct evparse_mods *g)
{
	m->user |= g->user;
	m->kernel |= g->kernel;
	m->hv |= g->hv;
	m->guest |= g->guest;
	m->host |= g->host;
	m->no_idle |= g->no_idle;
	m->pinned |= g->pinned;
	m->max_precise |= g->max_precise;
	if (g->precise > m->precise)
		m->precise = g->precise;
}

/* "{a,b}[:mods]", s of n bytes from '{'. */
static int
evparse_group(struct evparse_ctx *c, const char *s, size_t n)
{
	const char		*close = NULL, *p, *end = s + n;
	struct evparse_mods	 gm;
	size_t			 first = c->n, i, k;

	for (p = s + 1; p < end; p++) {
		if (*p == '{')
			return evparse_fail(c, "a group cannot hold a group");
		if (*p == '}') {
			close = p;
			break;
		}
	}
	if (close == NULL)
		return evparse_fail(c, "a group ends in '}'");
	for (p = s + 1;; p += k + 1) {
		k = evparse_item(p);
		if (p + k > close)
			k = (size_t)(close - p);
		if (evparse_event(c, p, k) == -1)
			return -1;
		if (p + k == close)
			break;
	}
	memset(&gm, 0, sizeof(gm));
	if (close + 1 < end) {
		if (close[1] != ':')
			return evparse_fail(c, "a group's modifiers follow "
			    "'}:'");
		if (evparse_mods(c, close + 2, (size_t)(end - close - 2),
		    &gm) == -1)
			return -1;
	}
	for (i = first; i < c->n; i++) {
		evparse_merge(&c->out[i].mods, &gm);
		c->out[i].leader_off = i - first;
	}
	return 0;
}

int
evparse_list(const char *text, struct evparse_event *out, size_t max,
    size_t *n, char *err, size_t len)
{
	struct evparse_ctx	 c = { text, out, max, 0, err, len };
	const char		*p = text;
	size_t			 k;

	for (;;) {
		k = evparse_item(p);
		if (p[0] == '{') {
			if (evparse_group(&c, p, k) == -1)
				return -1;
		} else if (evparse_event(&c, p, k) == -1)
			return -1;
		if (p[k] == '\0')
			break;
		p += k + 1;
	}
	*n = c.n;
	return 0;
}

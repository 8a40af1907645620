/*
 * evsel-pmu turns a PMU event, "pmu/term=value,.../", into an attr from
 * what the kernel publishes under /sys/bus/event_source/devices/PMU:
 * "type" (attr.type), format/TERM (the bits of config, config1 or config2
 * the term fills, "config:0-7,32-35"), and events/NAME (a named event as
 * terms, "event=0x3c,umask=0x00"). Terms every PMU takes are perf's:
 * config, config1, config2, period, freq, name. See evsel.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evparse.h"
#include "evsel.h"

/* The first line of root/pmu/rel into buf, newline cut. 0 or -1. */
static int
evsel_pmu_read(const char *root, const char *pmu, const char *rel, char *buf,
    size_t len)
{
	char	 path[512];
	FILE	*f;
	char	*nl;

	snprintf(path, sizeof(path), "%s/%s/%s", root, pmu, rel);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(buf, (int)len, f) == NULL) {
		fclose(f);
		errno = EINVAL;
		return -1;
	}
	fclose(f);
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	return 0;
}

/* The PMUs root holds, comma separated, for a message. */
static void
evsel_pmu_names(const char *root, const char *sub, const char *pmu,
    char *buf, size_t len)
{
	char		 dir[512];
	DIR		*d;
	struct dirent	*e;
	size_t		 n = 0;

	buf[0] = '\0';
	if (pmu != NULL)
		snprintf(dir, sizeof(dir), "%s/%s/%s", root, pmu, sub);
	else
		snprintf(dir, sizeof(dir), "%s", root);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL && n + 2 < len) {
		if (e->d_name[0] == '.' || strchr(e->d_name, '.') != NULL)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
		    e->d_name);
	}
	closedir(d);
	if (n >= len)
		buf[len - 1] = '\0';
}

/*
 * value into the bits a format line names ("config:0-7,32-35"): its
 * lowest bits into the first range, the next into the second. 0, or -1
 * with err set (a malformed line, or a value wider than the bits).
 */
static int
evsel_pmu_format(struct evsel *ev, const char *term, const char *fmt,
    uint64_t value, char *err, size_t len)
{
	__u64		*field;
	const char	*p;
	char		*end;
	unsigned long	 lo, hi;
	uint64_t	 left = value, mask;

	if (strncmp(fmt, "config:", 7) == 0) {
		field = &ev->attr.config;
		p = fmt + 7;
	} else if (strncmp(fmt, "config1:", 8) == 0) {
		field = &ev->attr.config1;
		p = fmt + 8;
	} else if (strncmp(fmt, "config2:", 8) == 0) {
		field = &ev->attr.config2;
		p = fmt + 8;
	} else
		goto bad;
	while (*p) {
		errno = 0;
		lo = strtoul(p, &end, 10);
		if (end == p || errno != 0 || lo > 63)
			goto bad;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p || errno != 0 || hi > 63 || hi < lo)
				goto bad;
		}
		mask = hi - lo == 63 ? UINT64_MAX :
		    (UINT64_C(1) << (hi - lo + 1)) - 1;
		*field = (*field & ~(mask << lo)) | ((left & mask) << lo);
		left = hi - lo == 63 ? 0 : left >> (hi - lo + 1);
		if (*end != ',' && *end != '\0')
			goto bad;
		p = *end == ',' ? end + 1 : end;
	}
	if (left != 0) {
		snprintf(err, len, "event '%s': %s=%#llx is wider than the "
		    "term's bits (%s)", ev->name, term,
		    (unsigned long long)value, fmt);
		return -1;
	}
	return 0;
bad:
	snprintf(err, len, "event '%s': cannot read the format of term '%s' "
	    "('%s')", ev->name, term, fmt);
	return -1;
}

/* One term of pmu into ev; alias: an events/ file may expand it. */
static int
evsel_pmu_term(struct evsel *ev, const char *root, const char *pmu,
    const struct evparse_term *t, int alias, char *err, size_t len)
{
	char			 fmt[256], line[512], names[256], rel[128];
	uint64_t		 v = 1;
	struct evparse_event	 pe;
	size_t			 i, np;

	if (strcmp(t->name, "name") == 0 && t->has_value) {
		snprintf(ev->name, sizeof(ev->name), "%s", t->value);
		return 0;
	}
	if (t->has_value && evparse_number(t->value, &v) == -1) {
		snprintf(err, len, "event '%s': term %s: '%s' is not a "
		    "number (decimal, or hex with 0x)", ev->name, t->name,
		    t->value);
		return -1;
	}
	if (strcmp(t->name, "config") == 0)
		ev->attr.config = v;
	else if (strcmp(t->name, "config1") == 0)
		ev->attr.config1 = v;
	else if (strcmp(t->name, "config2") == 0)
		ev->attr.config2 = v;
	else if (strcmp(t->name, "period") == 0 && t->has_value) {
		ev->attr.sample_period = v;
		ev->attr.freq = 0;
		ev->own_period = 1;
	} else if (strcmp(t->name, "freq") == 0 && t->has_value) {
		ev->attr.sample_freq = v;
		ev->attr.freq = 1;
		ev->own_period = 1;
	} else {
		snprintf(rel, sizeof(rel), "format/%s", t->name);
		if (evsel_pmu_read(root, pmu, rel, fmt, sizeof(fmt)) == 0)
			return evsel_pmu_format(ev, t->name, fmt, v, err, len);
		snprintf(rel, sizeof(rel), "events/%s", t->name);
		if (!t->has_value && alias &&
		    evsel_pmu_read(root, pmu, rel, line + 2,
		    sizeof(line) - 3) == 0) {
			/* "event=0x3c,umask=0x00" as the terms of "x/.../" */
			line[0] = 'x';
			line[1] = '/';
			strcat(line, "/");
			if (evparse_list(line, &pe, 1, &np, err, len) == -1) {
				snprintf(err, len, "event '%s': cannot read "
				    "%s/%s/%s", ev->name, root, pmu, rel);
				return -1;
			}
			for (i = 0; i < pe.nr_terms; i++)
				if (evsel_pmu_term(ev, root, pmu, &pe.terms[i],
				    0, err, len) == -1)
					return -1;
			return 0;
		}
		evsel_pmu_names(root, "format", pmu, fmt, sizeof(fmt));
		evsel_pmu_names(root, "events", pmu, names, sizeof(names));
		snprintf(err, len, "event '%s': unknown term '%s' for pmu '%s' "
		    "(valid terms: config, config1, config2, period, freq, "
		    "name%s%s; events: %s)", ev->name, t->name, pmu,
		    fmt[0] ? ", " : "", fmt, names[0] ? names : "none");
		return -1;
	}
	return 0;
}

int
evsel_pmu(struct evsel *ev, const char *root, const struct evparse_event *pe,
    char *err, size_t len)
{
	char			 buf[256];
	uint64_t		 type;
	size_t			 i;

	if (evsel_pmu_read(root, pe->base, "type", buf, sizeof(buf)) == -1 ||
	    evparse_number(buf, &type) == -1 || type > UINT32_MAX) {
		evsel_pmu_names(root, NULL, NULL, buf, sizeof(buf));
		snprintf(err, len, "event '%s': no PMU named '%s' (%s/%s/type: "
		    "%s; PMUs here: %s)", pe->name, pe->base, root, pe->base,
		    strerror(errno ? errno : EINVAL), buf);
		return -1;
	}
	if (type == PERF_TYPE_TRACEPOINT) {
		snprintf(err, len, "event '%s': write a tracepoint as "
		    "system:name (sched:sched_switch)", pe->name);
		return -1;
	}
	ev->attr.type = (__u32)type;
	for (i = 0; i < pe->nr_terms; i++)
		if (evsel_pmu_term(ev, root, pe->base, &pe->terms[i], 1, err,
		    len) == -1)
			return -1;
	return 0;
}

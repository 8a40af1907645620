/*
 * pprofout: a run's trace files as a pprof profile (see pprofout.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outread.h"
#include "paths.h"
#include "pprof.h"
#include "pprofout.h"

struct pprofout {
	struct pprof		*pp;
	const struct opts	*o;
	uint64_t		 first, last;	/* wall ns of those kept */
	uint64_t		 kept, nanos;
};

static uint64_t
pprofout_mapping(void *arg, uint64_t key, const struct profile_mapping *m,
    const char *build_id)
{
	struct pprofout		*po = arg;
	struct pprof_map	 pm;

	pm.start = m->start;
	pm.limit = m->end;
	pm.offset = m->pgoff;
	pm.file = m->file;
	pm.build_id = build_id;
	return pprof_mapping(po->pp, key, &pm);
}

static uint64_t
pprofout_location_find(void *arg, uint64_t mapping, uint64_t addr)
{
	struct pprofout	*po = arg;

	return pprof_location_find(po->pp, mapping, addr);
}

static uint64_t
pprofout_location(void *arg, uint64_t mapping, uint64_t addr,
    const char *const *names, size_t n, int kernel)
{
	struct pprofout	*po = arg;

	return pprof_location(po->pp, mapping, addr, names, n);
}

static int
pprofout_sample(void *arg, const struct profile_sample *s,
    const struct outread_names *nm, const uint64_t *locs, size_t n)
{
	struct pprofout		*po = arg;
	struct pprof_label	 lab[5];
	uint32_t		 nl = 0;
	uint64_t		 nanos;

	lab[nl].key = "host";
	lab[nl++].str = nm->host;
	lab[nl].key = "comm";
	lab[nl++].str = nm->comm;
	lab[nl].key = "pid";
	lab[nl].str = NULL;
	lab[nl++].num = s->pid;
	lab[nl].key = "event";
	lab[nl++].str = nm->event;
	if (nm->cgroup != NULL) {
		lab[nl].key = "cgroup";
		lab[nl++].str = nm->cgroup;
	}
	nanos = po->o->off_cpu || outread_clock(s->event) ? s->period : 0;
	if (pprof_sample(po->pp, locs, n, 1, (int64_t)nanos, lab, nl) == -1)
		return -1;
	po->kept++;
	po->nanos += nanos;
	if (nm->wall > 0) {
		if (po->first == 0 || (uint64_t)nm->wall < po->first)
			po->first = (uint64_t)nm->wall;
		if ((uint64_t)nm->wall > po->last)
			po->last = (uint64_t)nm->wall;
	}
	return 0;
}

static const struct outread_ops pprofout_ops = {
	.what = "pprof",
	.sample = pprofout_sample,
	.mapping = pprofout_mapping,
	.location_find = pprofout_location_find,
	.location = pprofout_location,
};

/*
 * The profile's first mapping, which pprof takes for the main binary
 * ("File:" of go tool pprof -top): what the profile covers, since a
 * whole machine's has no one binary; else it is whichever mapping the
 * first sample hit ("[kernel.kallsyms]_text"). No location points into
 * it. Its key is one no file's mapping has (file << 32 | id).
 */
static void
pprofout_main(struct pprof *pp, const struct opts *o, const char *host)
{
	struct pprof_map	 m;
	char			 name[256];

	if (o->ncomms == 1)
		snprintf(name, sizeof(name), "%s", o->comms[0]);
	else
		snprintf(name, sizeof(name), "%s%s%s (perfspill)",
		    o->ncomms > 1 ? "some processes" : "every process",
		    host != NULL ? " on " : "", host != NULL ? host : "");
	memset(&m, 0, sizeof(m));
	m.file = name;
	m.build_id = "";
	pprof_mapping(pp, UINT64_MAX, &m);
}

int
pprofout_write(const struct pick_list *l, const enum pick_cover *cover,
    const struct opts *o, const char *host, const char *path,
    struct outread_stats *st)
{
	struct pprof_info	 info;
	struct pprofout		 po;
	long			 at;
	FILE			*f;
	int			 rv = -1;

	memset(st, 0, sizeof(*st));
	memset(&po, 0, sizeof(po));
	memset(&info, 0, sizeof(info));
	info.comment = "perfspill-flame " PERFSPILL_VERSION;
	info.time_type = o->off_cpu ? "off_cpu" : NULL;
	if ((po.pp = pprof_create(&info)) == NULL) {
		warnx("out of memory");
		return -1;
	}
	po.o = o;
	pprofout_main(po.pp, o, host);
	if (outread_files(l, cover, o, host, &pprofout_ops, &po) == -1)
		goto out;
	/* the facts are known only now: a second profile object would
	 * cost a copy, the info is plain numbers */
	info.time_nanos = (int64_t)po.first;
	info.duration_nanos = (int64_t)(po.last - po.first);
	info.period = po.kept > 0 && !o->off_cpu ? (int64_t)(po.nanos /
	    po.kept) : 0;
	pprof_set_info(po.pp, &info);
	if (strcmp(path, "-") == 0)
		f = stdout;
	else if ((f = fopen(path, "we")) == NULL) {
		warn("%s", path);
		goto out;
	}
	if (pprof_write(po.pp, f) == -1) {
		warn("%s", path);
		if (f != stdout)
			fclose(f);
		goto out;
	}
	at = ftell(f);
	if ((f == stdout ? fflush(f) : fclose(f)) == EOF) {
		warn("%s", path);
		goto out;
	}
	st->samples = pprof_samples(po.pp);
	st->bytes = at > 0 ? (uint64_t)at : 0;
	rv = 0;
out:
	pprof_free(po.pp);
	return rv;
}

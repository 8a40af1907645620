/*
 * pprofout: a run's trace files as a pprof profile (see pprofout.h).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "paths.h"
#include "perfread.h"
#include "pprof.h"
#include "pprofout.h"
#include "progress.h"
#include "view.h"

#define PPROFOUT_NAME_MAX	1024
#define PPROFOUT_MAPS		4096	/* mappings remembered per file */
#define PPROFOUT_LOCS		65536	/* locations remembered, by place */

struct pprofout {
	struct pprof		*pp;
	const struct opts	*o;
	const char		*host;		/* the file's */
	uint64_t		 file;		/* its index: mapping keys */
	uint64_t		 tmin, tmax;
	uint64_t		 first, last;	/* wall ns of those kept */
	uint64_t		 kept, nanos;
	int64_t			 wall_off;
	uint64_t		 locs[PROFILE_MAX_FRAMES];
	/* the profile's id of the file's mappings, by address (perfread's
	 * mappings live until the file is closed); a miss only costs the
	 * interning again */
	struct {
		const struct profile_mapping	*m;
		uint64_t			 id;
	}			 maps[PPROFOUT_MAPS];
	/* the locations of places seen: a sample's frames are mostly those
	 * of samples before it (direct-mapped; a miss asks the profile) */
	struct {
		uint64_t	 mid, addr, loc;
	}			*lc;
	/* the last comm and event made safe: a thread's run of samples */
	const char		*comm_of, *event_of;
	char			 comm[PPROFOUT_NAME_MAX], ev[PPROFOUT_NAME_MAX];
};

/* A name as fold stores it (the filters compare with those). */
static const char *
pprofout_name(char *buf, size_t len, const char *s)
{
	fold_name(buf, len, s, strlen(s));
	return buf;
}

/* Time that samples of this event stand for: the period of a clock. */
static int
pprofout_clock(const char *event)
{
	return strncmp(event, "cpu-clock", 9) == 0 ||
	    strncmp(event, "task-clock", 10) == 0;
}

static uint64_t
pprofout_frame(struct pprofout *po, const struct profile_frame *fr)
{
	const struct profile_mapping	*m = fr->map;
	struct pprof_map		 pm;
	char				 name[PPROFOUT_NAME_MAX];
	char				 bid[2 * PROFILE_BUILD_ID_MAX + 1];
	const char			*names[1] = { name };
	uint64_t			 mid = 0, loc;
	size_t				 i, h;

	h = ((uintptr_t)m >> 4) % PPROFOUT_MAPS;
	if (m != NULL && po->maps[h].m == m)
		mid = po->maps[h].id;
	else if (m != NULL) {
		for (i = 0; i < m->build_id_len && i < PROFILE_BUILD_ID_MAX;
		    i++)
			snprintf(bid + 2 * i, 3, "%02x", m->build_id[i]);
		bid[2 * i] = '\0';
		pm.start = m->start;
		pm.limit = m->end;
		pm.offset = m->pgoff;
		pm.file = m->file;
		pm.build_id = bid;
		if ((mid = pprof_mapping(po->pp, po->file << 32 | m->id,
		    &pm)) == 0)
			return 0;
		po->maps[h].m = m;
		po->maps[h].id = mid;
	}
	h = (size_t)(((fr->addr ^ mid * 0x9e3779b97f4a7c15ULL) *
	    0xff51afd7ed558ccdULL) >> 48) % PPROFOUT_LOCS;
	if (po->lc[h].loc != 0 && po->lc[h].addr == fr->addr &&
	    po->lc[h].mid == mid)
		return po->lc[h].loc;
	/* named once: the first time its place is seen */
	if ((loc = pprof_location_find(po->pp, mid, fr->addr)) != 0)
		goto out;
	if (fr->sym != NULL)
		fold_name(name, sizeof(name), fr->sym, strlen(fr->sym));
	else
		fold_nosym_name(name, sizeof(name), fr);
	if ((loc = pprof_location(po->pp, mid, fr->addr, names, 1)) == 0)
		return 0;
out:
	po->lc[h].mid = mid;
	po->lc[h].addr = fr->addr;
	po->lc[h].loc = loc;
	return loc;
}

static int
pprofout_sample(void *arg, const struct profile_sample *s)
{
	struct pprofout		*po = arg;
	const struct opts	*o = po->o;
	struct pprof_label	 lab[5];
	const char		*comm = po->comm, *ev = po->ev;
	char			 cg[PPROFOUT_NAME_MAX];
	uint32_t		 i, n = 0, nl = 0;
	uint64_t		 nanos;
	int64_t			 wall;

	if (s->time < po->tmin || s->time >= po->tmax)
		return 0;
	if (s->comm != po->comm_of) {
		pprofout_name(po->comm, sizeof(po->comm), s->comm);
		po->comm_of = s->comm;
	}
	if (s->event != po->event_of) {
		pprofout_name(po->ev, sizeof(po->ev), s->event);
		po->event_of = s->event;
	}
	if (s->cgroup != NULL)
		pprofout_name(cg, sizeof(cg), s->cgroup);
	if (!view_match(o, NULL, po->host, comm, ev, s->cgroup != NULL ? cg :
	    NULL, s->pid))
		return 0;
	for (i = 0; i < s->nframes && i < PROFILE_MAX_FRAMES; i++) {
		if ((o->kernel_only && !s->frames[i].kernel) ||
		    (o->user_only && s->frames[i].kernel))
			continue;
		if ((po->locs[n++] = pprofout_frame(po, &s->frames[i])) == 0)
			goto nomem;
	}
	lab[nl].key = "host";
	lab[nl++].str = po->host;
	lab[nl].key = "comm";
	lab[nl++].str = comm;
	lab[nl].key = "pid";
	lab[nl].str = NULL;
	lab[nl++].num = s->pid;
	lab[nl].key = "event";
	lab[nl++].str = ev;
	if (s->cgroup != NULL) {
		lab[nl].key = "cgroup";
		lab[nl++].str = cg;
	}
	nanos = pprofout_clock(s->event) ? s->period : 0;
	if (pprof_sample(po->pp, po->locs, n, 1, (int64_t)nanos, lab, nl) ==
	    -1)
		goto nomem;
	po->kept++;
	po->nanos += nanos;
	wall = (int64_t)s->time + po->wall_off;
	if (wall > 0) {
		if (po->first == 0 || (uint64_t)wall < po->first)
			po->first = (uint64_t)wall;
		if ((uint64_t)wall > po->last)
			po->last = (uint64_t)wall;
	}
	if (po->kept % 4096 == 0)
		progress_samples(NULL, po->kept);
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* One file's samples into po; 0, 1 when it was skipped (named), -1. */
static int
pprofout_file(struct pprofout *po, const struct pick_file *f,
    enum pick_cover cover)
{
	struct perfread_opts	 ro;
	struct profile_stats	 ps;
	const struct opts	*o = po->o;
	char			 err[256];
	int64_t			 a, b;

	po->tmin = 0;
	po->tmax = UINT64_MAX;
	if (cover == PICK_PART && o->from != INT64_MIN) {
		a = o->from - f->wall_off;
		po->tmin = a < 0 ? 0 : (uint64_t)a;
	}
	if (cover == PICK_PART && o->to != INT64_MAX) {
		b = o->to - f->wall_off;
		po->tmax = b < 0 ? 0 : (uint64_t)b;
	}
	po->host = f->host;
	po->wall_off = f->wall_off;
	/* the last file's pointers are freed with it */
	memset(po->maps, 0, sizeof(po->maps));
	po->comm_of = po->event_of = NULL;
	memset(&ro, 0, sizeof(ro));
	ro.tmin = po->tmin;
	ro.tmax = po->tmax;
	progress_file(f->path, f->samples, "reading for pprof");
	errno = 0;
	if (fold_read(f->path, &ro, pprofout_sample, po, o->verbose, &ps,
	    NULL, err, sizeof(err)) == -1) {
		if (errno == ENOMEM) {
			warnx("out of memory");
			return -1;
		}
		warnx("%s: skipped: %s", f->path, err);
		return 1;
	}
	return 0;
}

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
    struct pprofout_stats *st)
{
	struct pprof_info	 info;
	struct pprofout		 po;
	size_t			 i, n = 0;
	long			 at;
	FILE			*f;
	int			 rv = -1;

	memset(st, 0, sizeof(*st));
	memset(&po, 0, sizeof(po));
	memset(&info, 0, sizeof(info));
	info.comment = "perfspill-flame " PERFSPILL_VERSION;
	if ((po.pp = pprof_create(&info)) == NULL ||
	    (po.lc = calloc(PPROFOUT_LOCS, sizeof(*po.lc))) == NULL) {
		warnx("out of memory");
		pprof_free(po.pp);
		return -1;
	}
	po.o = o;
	pprofout_main(po.pp, o, host);
	for (i = 0; i < l->n; i++)
		n += cover[i] != PICK_NONE && (host == NULL ||
		    strcmp(l->f[i].host, host) == 0);
	progress_init(o->progress, n);
	for (i = 0; i < l->n; i++) {
		if (cover[i] == PICK_NONE || (host != NULL &&
		    strcmp(l->f[i].host, host) != 0))
			continue;
		po.file = i;
		if (pprofout_file(&po, &l->f[i], cover[i]) == -1) {
			progress_done();
			goto out;
		}
	}
	progress_done();
	/* the facts are known only now: a second profile object would
	 * cost a copy, the info is plain numbers */
	info.time_nanos = (int64_t)po.first;
	info.duration_nanos = (int64_t)(po.last - po.first);
	info.period = po.kept > 0 ? (int64_t)(po.nanos / po.kept) : 0;
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
	free(po.lc);
	pprof_free(po.pp);
	return rv;
}

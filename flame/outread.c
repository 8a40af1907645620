/*
 * outread: the files read again for a profile output (see outread.h).
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "outread.h"
#include "perfread.h"
#include "progress.h"
#include "view.h"

#define OUTREAD_NAME_MAX	1024
#define OUTREAD_MAPS		4096	/* mappings remembered per file */
#define OUTREAD_LOCS		65536	/* locations remembered, by place */
#define OUTREAD_INLINE_MAX	32	/* lines of a location: deeper inlining
					 * keeps the outermost */

struct outread {
	const struct outread_ops *ops;
	void			*arg;
	const struct opts	*o;
	const char		*host;		/* the file's */
	uint64_t		 file;		/* its index: mapping keys */
	int64_t			 wall_off;
	uint64_t		 kept;
	uint64_t		 locs[PROFILE_MAX_FRAMES];
	/* the output's id of the file's mappings, by address (perfread's
	 * mappings live until the file is closed); a miss only costs the
	 * interning again */
	struct {
		const struct profile_mapping	*m;
		uint64_t			 id;
	}			 maps[OUTREAD_MAPS];
	/* the locations of places seen: a sample's frames are mostly those
	 * of samples before it (direct-mapped; a miss asks the output) */
	struct {
		uint64_t	 mid, addr, loc;
	}			*lc;
	/* the last comm and event made safe: a thread's run of samples. A
	 * thread's comm changes in place at an exec (same pointer, other
	 * name): the comm is known by its text as well */
	const char		*comm_of, *event_of;
	char			 comm_raw[OUTREAD_NAME_MAX];
	char			 comm[OUTREAD_NAME_MAX], ev[OUTREAD_NAME_MAX];
};

int
outread_clock(const char *event)
{
	return strncmp(event, "cpu-clock", 9) == 0 ||
	    strncmp(event, "task-clock", 10) == 0;
}

/* The location of fr and the nf - 1 frames inlined into fr[nf - 1] at
 * its address before it (--inline): one location, a line each, the
 * innermost first, as pprof and OTLP keep inlined functions. */
static uint64_t
outread_frame(struct outread *rd, const struct profile_frame *fr, size_t nf)
{
	const struct profile_mapping	*m = fr[nf - 1].map;
	char				 name[OUTREAD_INLINE_MAX][OUTREAD_NAME_MAX];
	char				 bid[2 * PROFILE_BUILD_ID_MAX + 1];
	const char			*names[OUTREAD_INLINE_MAX];
	uint64_t			 mid = 0, loc, addr = fr[nf - 1].addr;
	size_t				 i, h;

	h = ((uintptr_t)m >> 4) % OUTREAD_MAPS;
	if (m != NULL && rd->maps[h].m == m)
		mid = rd->maps[h].id;
	else if (m != NULL) {
		for (i = 0; i < m->build_id_len && i < PROFILE_BUILD_ID_MAX;
		    i++)
			snprintf(bid + 2 * i, 3, "%02x", m->build_id[i]);
		bid[2 * i] = '\0';
		if ((mid = rd->ops->mapping(rd->arg, rd->file << 32 | m->id, m,
		    bid)) == 0)
			return 0;
		rd->maps[h].m = m;
		rd->maps[h].id = mid;
	}
	h = (size_t)(((addr ^ mid * 0x9e3779b97f4a7c15ULL) *
	    0xff51afd7ed558ccdULL) >> 48) % OUTREAD_LOCS;
	if (rd->lc[h].loc != 0 && rd->lc[h].addr == addr &&
	    rd->lc[h].mid == mid)
		return rd->lc[h].loc;
	/* named once: the first time its place is seen */
	if ((loc = rd->ops->location_find(rd->arg, mid, addr)) != 0)
		goto out;
	if (nf > OUTREAD_INLINE_MAX) {
		fr += nf - OUTREAD_INLINE_MAX;
		nf = OUTREAD_INLINE_MAX;
	}
	for (i = 0; i < nf; i++) {
		if (fr[i].sym != NULL)
			fold_name(name[i], sizeof(name[i]), fr[i].sym,
			    strlen(fr[i].sym));
		else
			fold_nosym_name(name[i], sizeof(name[i]), &fr[i]);
		names[i] = name[i];
	}
	if ((loc = rd->ops->location(rd->arg, mid, addr, names, nf,
	    fr[nf - 1].kernel)) == 0)
		return 0;
out:
	rd->lc[h].mid = mid;
	rd->lc[h].addr = addr;
	rd->lc[h].loc = loc;
	return loc;
}

static int
outread_sample(void *arg, const struct profile_sample *s)
{
	struct outread		*rd = arg;
	const struct opts	*o = rd->o;
	struct outread_names	 nm;
	char			 cg[OUTREAD_NAME_MAX];
	uint32_t		 i, k, n = 0;

	if (s->comm != rd->comm_of || strcmp(s->comm, rd->comm_raw) != 0) {
		fold_name(rd->comm, sizeof(rd->comm), s->comm,
		    strlen(s->comm));
		snprintf(rd->comm_raw, sizeof(rd->comm_raw), "%s", s->comm);
		rd->comm_of = s->comm;
	}
	if (s->event != rd->event_of) {
		fold_name(rd->ev, sizeof(rd->ev), s->event, strlen(s->event));
		rd->event_of = s->event;
	}
	if (s->cgroup != NULL)
		fold_name(cg, sizeof(cg), s->cgroup, strlen(s->cgroup));
	if (!view_match(o, NULL, rd->host, rd->comm, rd->ev, s->cgroup !=
	    NULL ? cg : NULL, s->pid))
		return 0;
	for (i = 0; i < s->nframes && i < PROFILE_MAX_FRAMES; i += k) {
		/* a frame and the frames inlined into it: one location */
		for (k = 1; s->frames[i + k - 1].inlined && i + k <
		    s->nframes && i + k < PROFILE_MAX_FRAMES; k++)
			;
		if ((o->kernel_only && !s->frames[i].kernel) ||
		    (o->user_only && s->frames[i].kernel))
			continue;
		if ((rd->locs[n++] = outread_frame(rd, &s->frames[i], k)) ==
		    0)
			goto nomem;
	}
	/* kernel or user frames only: a sample with none of them ran
	 * elsewhere and is not counted, as in the folded output */
	if ((o->kernel_only || o->user_only) && n == 0)
		return 0;
	nm.host = rd->host;
	nm.comm = rd->comm;
	nm.event = rd->ev;
	nm.cgroup = s->cgroup != NULL ? cg : NULL;
	nm.wall = pick_wall(s->time, rd->wall_off);
	if (rd->ops->sample(rd->arg, s, &nm, rd->locs, n) == -1)
		goto nomem;
	if (++rd->kept % 4096 == 0)
		progress_samples(NULL, rd->kept);
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* One file's samples; 0, 1 when it was skipped (named), -1. */
static int
outread_file(struct outread *rd, const struct pick_file *f,
    enum pick_cover cover)
{
	struct perfread_opts	 ro;
	struct profile_stats	 ps;
	const struct opts	*o = rd->o;
	char			 err[256], what[64];

	memset(&ro, 0, sizeof(ro));
	ro.tmax = UINT64_MAX;
	if (cover == PICK_PART && o->from != INT64_MIN)
		ro.tmin = pick_perf(o->from, f->wall_off);
	if (cover == PICK_PART && o->to != INT64_MAX)
		ro.tmax = pick_perf(o->to, f->wall_off);
	ro.off_cpu = o->off_cpu;
	ro.names = opts_names(o);
	rd->host = f->host;
	rd->wall_off = f->wall_off;
	/* the last file's pointers are freed with it */
	memset(rd->maps, 0, sizeof(rd->maps));
	rd->comm_of = rd->event_of = NULL;
	if (rd->ops->file != NULL && rd->ops->file(rd->arg, f) == -1) {
		warnx("out of memory");
		return -1;
	}
	snprintf(what, sizeof(what), "reading for %s", rd->ops->what);
	progress_file(f->path, f->samples, what);
	errno = 0;
	if (fold_read(f->path, &ro, outread_sample, rd, o->verbose, &ps,
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

int
outread_files(const struct pick_list *l, const enum pick_cover *cover,
    const struct opts *o, const char *host, const struct outread_ops *ops,
    void *arg)
{
	struct outread	*rd;
	size_t		 i, n = 0;
	int		 rv = 0;

	if ((rd = calloc(1, sizeof(*rd))) == NULL ||
	    (rd->lc = calloc(OUTREAD_LOCS, sizeof(*rd->lc))) == NULL) {
		warnx("out of memory");
		free(rd);
		return -1;
	}
	rd->ops = ops;
	rd->arg = arg;
	rd->o = o;
	for (i = 0; i < l->n; i++)
		n += cover[i] != PICK_NONE && (host == NULL ||
		    strcmp(l->f[i].host, host) == 0);
	progress_init(o->progress, n);
	for (i = 0; i < l->n && rv == 0; i++) {
		if (cover[i] == PICK_NONE || (host != NULL &&
		    strcmp(l->f[i].host, host) != 0))
			continue;
		rd->file = i;
		if (outread_file(rd, &l->f[i], cover[i]) == -1)
			rv = -1;
	}
	progress_done();
	free(rd->lc);
	free(rd);
	return rv;
}

/*
 * otlpout: a run's trace files as an OTLP profiles request (see
 * otlpout.h).
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fold.h"
#include "otlp.h"
#include "otlpout.h"
#include "paths.h"
#include "perfread.h"
#include "progress.h"
#include "view.h"

#define OTLPOUT_NAME_MAX	1024
#define OTLPOUT_MAPS		4096	/* mappings remembered per file */
#define OTLPOUT_LOCS		65536	/* locations remembered, by place */
#define OTLPOUT_EVENTS		64	/* events remembered per file */
#define OTLPOUT_ID_LEN		64	/* a container id's hex digits */

struct otlpout {
	struct otlp		*ot;
	const struct opts	*o;
	const char		*host;		/* the file's */
	uint32_t		 resource;	/* its */
	uint64_t		 tmin, tmax;
	int64_t			 wall_off;
	uint32_t		 locs[PROFILE_MAX_FRAMES];
	/* the request's index of the file's mappings, by address (they
	 * live until the file is closed); a miss costs the interning */
	struct {
		const struct profile_mapping	*m;
		uint32_t			 id;
	}			 maps[OTLPOUT_MAPS];
	/* the locations of places seen (direct-mapped; a miss asks the
	 * request's table) */
	struct {
		uint64_t	 addr;
		uint32_t	 mid, loc;
	}			*lc;
	/* the profile of each event of the file, by its name's pointer */
	struct {
		const char	*event;
		uint32_t	 profile;
	}			 evs[OTLPOUT_EVENTS];
	size_t			 nevs;
	/* the last sample's attributes: a thread's run of samples */
	const char		*comm_of, *event_of, *cgroup_of;
	uint32_t		 pid, tid, a_pid, a_tid, a_comm, a_cg, a_cid;
	char			 comm[OTLPOUT_NAME_MAX], ev[OTLPOUT_NAME_MAX];
	char			 cg[OTLPOUT_NAME_MAX];
};

int
otlpout_container(const char *cgroup, char *buf, size_t len)
{
	const char	*p, *found = NULL;
	size_t		 run = 0;

	if (len < OTLPOUT_ID_LEN + 1)
		return -1;
	/* a run of exactly 64 hex digits, the last one in the path */
	for (p = cgroup; ; p++) {
		if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) {
			run++;
			continue;
		}
		if (run == OTLPOUT_ID_LEN)
			found = p - OTLPOUT_ID_LEN;
		run = 0;
		if (*p == '\0')
			break;
	}
	if (found == NULL)
		return -1;
	memcpy(buf, found, OTLPOUT_ID_LEN);
	buf[OTLPOUT_ID_LEN] = '\0';
	return 0;
}

/* Time that samples of this event stand for: the period of a clock. */
static int
otlpout_clock(const char *event)
{
	return strncmp(event, "cpu-clock", 9) == 0 ||
	    strncmp(event, "task-clock", 10) == 0;
}

/* The profile of the sample's event, in the file's resource. */
static int64_t
otlpout_profile(struct otlpout *po, const struct profile_sample *s,
    const char *name)
{
	static const struct otlp_type	 cpu = { "cpu", "nanoseconds", "cpu",
					     "nanoseconds", 0 };
	static const struct otlp_type	 off = { "off_cpu", "nanoseconds",
					     "context_switch", "count", 1 };
	static const struct otlp_type	 count = { "samples", "count", NULL,
					     NULL, 0 };
	size_t				 i;
	int64_t				 p;

	for (i = 0; i < po->nevs; i++)
		if (po->evs[i].event == s->event)
			return po->evs[i].profile;
	p = otlp_profile(po->ot, po->resource, name, po->o->off_cpu ? &off :
	    otlpout_clock(s->event) ? &cpu : &count);
	if (p >= 0 && po->nevs < OTLPOUT_EVENTS) {
		po->evs[po->nevs].event = s->event;
		po->evs[po->nevs++].profile = (uint32_t)p;
	}
	return p;
}

static uint32_t
otlpout_frame(struct otlpout *po, const struct profile_frame *fr)
{
	const struct profile_mapping	*m = fr->map;
	struct otlp_map			 om;
	char				 name[OTLPOUT_NAME_MAX];
	char				 bid[2 * PROFILE_BUILD_ID_MAX + 1];
	uint32_t			 mid = 0, loc;
	size_t				 i, h;

	h = ((uintptr_t)m >> 4) % OTLPOUT_MAPS;
	if (m != NULL && po->maps[h].m == m)
		mid = po->maps[h].id;
	else if (m != NULL) {
		for (i = 0; i < m->build_id_len && i < PROFILE_BUILD_ID_MAX;
		    i++)
			snprintf(bid + 2 * i, 3, "%02x", m->build_id[i]);
		bid[2 * i] = '\0';
		om.start = m->start;
		om.limit = m->end;
		om.offset = m->pgoff;
		om.file = m->file;
		om.build_id = bid;
		if ((mid = otlp_mapping(po->ot, &om)) == 0)
			return 0;
		po->maps[h].m = m;
		po->maps[h].id = mid;
	}
	h = (size_t)(((fr->addr ^ mid * 0x9e3779b97f4a7c15ULL) *
	    0xff51afd7ed558ccdULL) >> 48) % OTLPOUT_LOCS;
	if (po->lc[h].loc != 0 && po->lc[h].addr == fr->addr &&
	    po->lc[h].mid == mid)
		return po->lc[h].loc;
	/* named once: the first time its place is seen */
	if ((loc = otlp_location_find(po->ot, mid, fr->addr)) != 0)
		goto out;
	if (fr->sym != NULL)
		fold_name(name, sizeof(name), fr->sym, strlen(fr->sym));
	else
		fold_nosym_name(name, sizeof(name), fr);
	if ((loc = otlp_location(po->ot, mid, fr->addr, name, fr->kernel)) ==
	    0)
		return 0;
out:
	po->lc[h].mid = mid;
	po->lc[h].addr = fr->addr;
	po->lc[h].loc = loc;
	return loc;
}

/* The attribute key = a string, or = num (s NULL). */
static uint32_t
otlpout_attr(struct otlpout *po, const char *key, const char *s, int64_t num)
{
	struct otlp_attr	 a = { key, s, num };

	return otlp_attribute(po->ot, &a);
}

/* The sample's attributes into a[]; their number, 0 without memory. */
static size_t
otlpout_attrs(struct otlpout *po, const struct profile_sample *s,
    uint32_t *a)
{
	char	 cid[OTLPOUT_ID_LEN + 1];
	size_t	 n = 0;

	if (po->a_pid == 0 || s->pid != po->pid) {
		po->a_pid = otlpout_attr(po, "process.pid", NULL, s->pid);
		po->pid = s->pid;
	}
	if (po->a_tid == 0 || s->tid != po->tid) {
		po->a_tid = otlpout_attr(po, "thread.id", NULL, s->tid);
		po->tid = s->tid;
	}
	/* po->comm is the sample's, made safe by otlpout_sample */
	if (po->a_comm == 0)
		po->a_comm = otlpout_attr(po, "process.executable.name",
		    po->comm, 0);
	if (s->cgroup != NULL && (po->a_cg == 0 || s->cgroup !=
	    po->cgroup_of)) {
		po->a_cg = otlpout_attr(po, "process.linux.cgroup", s->cgroup,
		    0);
		po->a_cid = otlpout_container(s->cgroup, cid, sizeof(cid)) ==
		    0 ? otlpout_attr(po, "container.id", cid, 0) : 0;
		po->cgroup_of = s->cgroup;
	}
	if ((a[n++] = po->a_pid) == 0 || (a[n++] = po->a_tid) == 0 ||
	    (a[n++] = po->a_comm) == 0)
		return 0;
	if (s->cgroup != NULL) {
		if ((a[n++] = po->a_cg) == 0)
			return 0;
		if (po->a_cid != 0)
			a[n++] = po->a_cid;
	}
	return n;
}

static int
otlpout_sample(void *arg, const struct profile_sample *s)
{
	struct otlpout		*po = arg;
	const struct opts	*o = po->o;
	uint32_t		 a[OTLP_MAX_ATTRS], stack;
	uint32_t		 i, n = 0;
	size_t			 na;
	int64_t			 prof, value, wall;

	if (s->time < po->tmin || s->time >= po->tmax)
		return 0;
	if (s->event != po->event_of) {
		fold_name(po->ev, sizeof(po->ev), s->event, strlen(s->event));
		po->event_of = s->event;
	}
	/* the filters see the names as fold stores them */
	if (s->comm != po->comm_of) {
		fold_name(po->comm, sizeof(po->comm), s->comm,
		    strlen(s->comm));
		po->comm_of = s->comm;
		po->a_comm = 0;
	}
	if (s->cgroup != NULL)
		fold_name(po->cg, sizeof(po->cg), s->cgroup,
		    strlen(s->cgroup));
	if (!view_match(o, NULL, po->host, po->comm, po->ev, s->cgroup != NULL ?
	    po->cg : NULL, s->pid))
		return 0;
	for (i = 0; i < s->nframes && i < PROFILE_MAX_FRAMES; i++) {
		if ((o->kernel_only && !s->frames[i].kernel) ||
		    (o->user_only && s->frames[i].kernel))
			continue;
		if ((po->locs[n++] = otlpout_frame(po, &s->frames[i])) == 0)
			goto nomem;
	}
	/* kernel or user frames only: a sample with none of them ran
	 * elsewhere and is not counted, as in the folded output */
	if ((o->kernel_only || o->user_only) && n == 0)
		return 0;
	stack = otlp_stack(po->ot, po->locs, n);
	if ((prof = otlpout_profile(po, s, po->ev)) < 0 ||
	    (na = otlpout_attrs(po, s, a)) == 0 || (n > 0 && stack == 0))
		goto nomem;
	value = o->off_cpu || otlpout_clock(s->event) ? (int64_t)s->period : 1;
	wall = (int64_t)s->time + po->wall_off;
	if (otlp_sample(po->ot, (uint32_t)prof, stack, a, na, value,
	    wall > 0 ? (uint64_t)wall : 0) == -1)
		goto nomem;
	if (otlp_samples(po->ot) % 4096 == 0)
		progress_samples(NULL, otlp_samples(po->ot));
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* The host's resource: host.name, and what the file's manifest knows. */
static int64_t
otlpout_resource(struct otlpout *po, const struct pick_file *f)
{
	struct otlp_attr	 a[5];
	json_object		*m, *v, *k;
	char			 name[4096];
	const char		*arch;
	size_t			 n = 0;
	int64_t			 r;

	a[n++] = (struct otlp_attr){ "host.name", f->host, 0 };
	m = NULL;
	if (snprintf(name, sizeof(name), "%s.json", f->path) <
	    (int)sizeof(name))
		m = json_object_from_file(name);
	if (m != NULL && json_object_object_get_ex(m, "machine_id", &v) &&
	    json_object_is_type(v, json_type_string))
		a[n++] = (struct otlp_attr){ "host.id",
		    json_object_get_string(v), 0 };
	a[n++] = (struct otlp_attr){ "os.type", "linux", 0 };
	if (m != NULL && json_object_object_get_ex(m, "kernel", &k)) {
		if (json_object_object_get_ex(k, "release", &v) &&
		    json_object_is_type(v, json_type_string))
			a[n++] = (struct otlp_attr){ "os.version",
			    json_object_get_string(v), 0 };
		/* the semantic conventions' names of the uname machines */
		if (json_object_object_get_ex(k, "machine", &v) &&
		    json_object_is_type(v, json_type_string)) {
			arch = json_object_get_string(v);
			a[n++] = (struct otlp_attr){ "host.arch",
			    strcmp(arch, "x86_64") == 0 ? "amd64" :
			    strcmp(arch, "aarch64") == 0 ? "arm64" : arch, 0 };
		}
	}
	r = otlp_resource(po->ot, f->host, a, n);
	json_object_put(m);
	return r;
}

/* One file's samples into po; 0, 1 when it was skipped (named), -1. */
static int
otlpout_file(struct otlpout *po, const struct pick_file *f,
    enum pick_cover cover)
{
	struct perfread_opts	 ro;
	struct profile_stats	 ps;
	const struct opts	*o = po->o;
	char			 err[256];
	int64_t			 a, b, r;

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
	if ((r = otlpout_resource(po, f)) < 0) {
		warnx("out of memory");
		return -1;
	}
	po->resource = (uint32_t)r;
	po->host = f->host;
	po->wall_off = f->wall_off;
	/* the last file's pointers are freed with it */
	memset(po->maps, 0, sizeof(po->maps));
	po->nevs = 0;
	po->comm_of = po->event_of = po->cgroup_of = NULL;
	po->a_pid = po->a_tid = po->a_comm = po->a_cg = po->a_cid = 0;
	memset(&ro, 0, sizeof(ro));
	ro.tmin = po->tmin;
	ro.tmax = po->tmax;
	ro.off_cpu = o->off_cpu;
	progress_file(f->path, f->samples, "reading for OTLP");
	errno = 0;
	if (fold_read(f->path, &ro, otlpout_sample, po, o->verbose, &ps,
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
otlpout_write(const struct pick_list *l, const enum pick_cover *cover,
    const struct opts *o, const char *host, const char *path,
    struct otlpout_stats *st)
{
	struct otlpout		 po;
	uint8_t			*raw = NULL;
	size_t			 i, n = 0, len = 0;
	FILE			*f;
	int			 rv = -1;

	memset(st, 0, sizeof(*st));
	memset(&po, 0, sizeof(po));
	if ((po.ot = otlp_create("perfspill-flame", PERFSPILL_VERSION)) ==
	    NULL || (po.lc = calloc(OTLPOUT_LOCS, sizeof(*po.lc))) == NULL) {
		warnx("out of memory");
		otlp_free(po.ot);
		return -1;
	}
	po.o = o;
	for (i = 0; i < l->n; i++)
		n += cover[i] != PICK_NONE && (host == NULL ||
		    strcmp(l->f[i].host, host) == 0);
	progress_init(o->progress, n);
	for (i = 0; i < l->n; i++) {
		if (cover[i] == PICK_NONE || (host != NULL &&
		    strcmp(l->f[i].host, host) != 0))
			continue;
		if (otlpout_file(&po, &l->f[i], cover[i]) == -1) {
			progress_done();
			goto out;
		}
	}
	progress_done();
	if (otlp_encode(po.ot, &raw, &len) == -1) {
		warnx("out of memory");
		goto out;
	}
	if (strcmp(path, "-") == 0)
		f = stdout;
	else if ((f = fopen(path, "we")) == NULL) {
		warn("%s", path);
		goto out;
	}
	if (len > 0 && fwrite(raw, 1, len, f) != len) {
		warn("%s", path);
		if (f != stdout)
			fclose(f);
		goto out;
	}
	if ((f == stdout ? fflush(f) : fclose(f)) == EOF) {
		warn("%s", path);
		goto out;
	}
	st->samples = otlp_samples(po.ot);
	st->bytes = len;
	rv = 0;
out:
	free(raw);
	free(po.lc);
	otlp_free(po.ot);
	return rv;
}

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

#include "otlp.h"
#include "otlpout.h"
#include "outread.h"
#include "paths.h"

#define OTLPOUT_EVENTS		64	/* events remembered per file */
#define OTLPOUT_ID_LEN		64	/* a container id's hex digits */
#define OTLPOUT_COMM_MAX	1024	/* a comm as outread names it */

struct otlpout {
	struct otlp		*ot;
	const struct opts	*o;
	uint32_t		 resource;	/* the file's */
	/* the profile of each event of the file, by its name's pointer */
	struct {
		const char	*event;
		uint32_t	 profile;
	}			 evs[OTLPOUT_EVENTS];
	size_t			 nevs;
	/* the last sample's attributes: a thread's run of samples (its comm
	 * by text: a comm changes in place at an exec) */
	char			 comm[OTLPOUT_COMM_MAX];
	const char		*cgroup_of;
	uint32_t		 pid, tid, a_pid, a_tid, a_comm, a_cg, a_cid;
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
	    outread_clock(s->event) ? &cpu : &count);
	if (p >= 0 && po->nevs < OTLPOUT_EVENTS) {
		po->evs[po->nevs].event = s->event;
		po->evs[po->nevs++].profile = (uint32_t)p;
	}
	return p;
}

static uint64_t
otlpout_mapping(void *arg, uint64_t key, const struct profile_mapping *m,
    const char *build_id)
{
	struct otlpout	*po = arg;
	struct otlp_map	 om;

	om.start = m->start;
	om.limit = m->end;
	om.offset = m->pgoff;
	om.file = m->file;
	om.build_id = build_id;
	return otlp_mapping(po->ot, &om);
}

static uint64_t
otlpout_location_find(void *arg, uint64_t mapping, uint64_t addr)
{
	struct otlpout	*po = arg;

	return otlp_location_find(po->ot, (uint32_t)mapping, addr);
}

static uint64_t
otlpout_location(void *arg, uint64_t mapping, uint64_t addr,
    const char *const *names, size_t n, int kernel)
{
	struct otlpout	*po = arg;

	return otlp_location(po->ot, (uint32_t)mapping, addr, names, n,
	    kernel);
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
    const struct outread_names *nm, uint32_t *a)
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
	if (po->a_comm == 0 || strcmp(nm->comm, po->comm) != 0) {
		po->a_comm = otlpout_attr(po, "process.executable.name",
		    nm->comm, 0);
		snprintf(po->comm, sizeof(po->comm), "%s", nm->comm);
	}
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
otlpout_sample(void *arg, const struct profile_sample *s,
    const struct outread_names *nm, const uint64_t *locs, size_t n)
{
	struct otlpout		*po = arg;
	uint32_t		 a[OTLP_MAX_ATTRS], stack;
	size_t			 na;
	int64_t			 prof, value;

	stack = otlp_stack(po->ot, locs, n);
	if ((prof = otlpout_profile(po, s, nm->event)) < 0 ||
	    (na = otlpout_attrs(po, s, nm, a)) == 0 || (n > 0 && stack == 0))
		return -1;
	value = po->o->off_cpu || outread_clock(s->event) ?
	    (int64_t)s->period : 1;
	return otlp_sample(po->ot, (uint32_t)prof, stack, a, na, value,
	    nm->wall > 0 ? (uint64_t)nm->wall : 0);
}

/* A new file: its host's resource (host.name, and what the file's
 * manifest knows); its events' profiles and the last sample's attributes
 * are forgotten (their pointers went with the last file). */
static int
otlpout_file(void *arg, const struct pick_file *f)
{
	struct otlpout		*po = arg;
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
	if (r < 0)
		return -1;
	po->resource = (uint32_t)r;
	po->nevs = 0;
	po->comm[0] = '\0';
	po->a_comm = 0;
	po->cgroup_of = NULL;
	po->a_pid = po->a_tid = po->a_comm = po->a_cg = po->a_cid = 0;
	return 0;
}

static const struct outread_ops otlpout_ops = {
	.what = "OTLP",
	.file = otlpout_file,
	.sample = otlpout_sample,
	.mapping = otlpout_mapping,
	.location_find = otlpout_location_find,
	.location = otlpout_location,
};

int
otlpout_write(const struct pick_list *l, const enum pick_cover *cover,
    const struct opts *o, const char *host, const char *path,
    struct outread_stats *st)
{
	struct otlpout		*po;
	uint8_t			*raw = NULL;
	size_t			 len = 0;
	FILE			*f;
	int			 rv = -1;

	memset(st, 0, sizeof(*st));
	if ((po = calloc(1, sizeof(*po))) == NULL || (po->ot =
	    otlp_create("perfspill-flame", PERFSPILL_VERSION)) == NULL) {
		warnx("out of memory");
		free(po);
		return -1;
	}
	po->o = o;
	if (outread_files(l, cover, o, host, &otlpout_ops, po) == -1)
		goto out;
	if (otlp_encode(po->ot, &raw, &len) == -1) {
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
	st->samples = otlp_samples(po->ot);
	st->bytes = len;
	rv = 0;
out:
	free(raw);
	otlp_free(po->ot);
	free(po);
	return rv;
}

/*
 * offcpu: switch-outs timed by the switch-in after them (see offcpu.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offcpu.h"

#define OFFCPU_COMM_MAX		64
/* prev_state as the tracepoint reports it: S, D, and I (an idle kernel
 * thread's TASK_IDLE, which perf's task state counts as D); R and R+
 * (preempted) are not sleeps, nor are T, t, X, Z and P */
#define OFFCPU_SLEEPING		(0x1 | 0x2 | 0x80)

/* A thread off the CPU: its switch-out sample, copied (the frames' names
 * and mappings live as long as the file's reader). */
struct offcpu_task {
	uint32_t		 tid;
	int			 used;
	int			 off;		/* waiting for its switch-in */
	struct profile_sample	 s;
	char			 comm[OFFCPU_COMM_MAX];
	char			*cgroup;	/* a copy: a CGROUP record may
						 * rename the id meanwhile */
	struct profile_frame	*frames;
	uint32_t		 cap;
};

struct offcpu {
	struct offcpu_fields	 f;
	struct perfread_opts	 o;
	perfread_fn		 fn;
	void			*arg;
	struct offcpu_task	*tab;		/* open addressing by tid */
	size_t			 size, n;
	struct offcpu_stats	 st;
	char			 why[256];	/* what stopped the walk */
};

/* The value after "key" up to ';' in [p, end): a number. */
static int
offcpu_num(const char *p, const char *end, const char *key, uint32_t *v)
{
	size_t		 klen = strlen(key);
	unsigned long	 n = 0;

	for (; p + klen <= end; p++)
		if (memcmp(p, key, klen) == 0)
			break;
	if (p + klen > end)
		return -1;
	p += klen;
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9' && n < 1u << 20; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	*v = (uint32_t)n;
	return 0;
}

/* One "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;..." line into f. */
static void
offcpu_field(const char *p, const char *end, struct offcpu_fields *f)
{
	const char	*semi, *name, *b;
	uint32_t	 off, size;
	size_t		 n;

	if ((semi = memchr(p, ';', (size_t)(end - p))) == NULL)
		return;
	for (name = semi; name > p && name[-1] != ' ' && name[-1] != ':';
	    name--)
		;
	b = memchr(name, '[', (size_t)(semi - name));
	n = (size_t)((b != NULL ? b : semi) - name);
	if (offcpu_num(semi, end, "offset:", &off) == -1 ||
	    offcpu_num(semi, end, "size:", &size) == -1)
		return;
	if (n == 8 && memcmp(name, "prev_pid", 8) == 0) {
		f->prev_pid = off;
		f->prev_pid_size = size;
	} else if (n == 10 && memcmp(name, "prev_state", 10) == 0) {
		f->prev_state = off;
		f->prev_state_size = size;
	} else if (n == 8 && memcmp(name, "next_pid", 8) == 0) {
		f->next_pid = off;
		f->next_pid_size = size;
	}
}

/* An event format's text, if it is sched_switch's. */
static int
offcpu_event(const char *p, uint64_t len, struct offcpu_fields *f)
{
	static const char	 want[] = "name: sched_switch\n";
	const char		*end = p + len, *nl;

	if (len < sizeof(want) - 1 || memcmp(p, want, sizeof(want) - 1) != 0)
		return -1;
	memset(f, 0, sizeof(*f));
	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl - p > 7 && memcmp(p, "\tfield:", 7) == 0)
			offcpu_field(p + 7, nl, f);
	}
	return 0;
}

/* Whether the format's fields are those offcpu reads: 0, or -1 with the
 * field that is missing or of a size it cannot be in why. */
static int
offcpu_fields_ok(const struct offcpu_fields *f, char *why, size_t len)
{
	const char	*name = NULL;
	uint32_t	 size = 0;

	if (f->prev_pid_size != 4) {
		name = "prev_pid";
		size = f->prev_pid_size;
	} else if (f->next_pid_size != 4) {
		name = "next_pid";
		size = f->next_pid_size;
	} else if (f->prev_state_size != 4 && f->prev_state_size != 8) {
		name = "prev_state";
		size = f->prev_state_size;
	}
	if (name == NULL)
		return 0;
	if (size == 0)
		snprintf(why, len, "its sched_switch format has no field %s",
		    name);
	else
		snprintf(why, len, "its sched_switch format's %s has %" PRIu32
		    " bytes, not %s", name, size, strcmp(name, "prev_state") ==
		    0 ? "4 or 8" : "4");
	return -1;
}

/* A cursor over the tracing data: each step checks what is left. */
struct offcpu_cur {
	const uint8_t	*p, *end;
};

/* A NUL-ended string (skipped); 0 or -1. */
static int
offcpu_str(struct offcpu_cur *c)
{
	const uint8_t	*s = memchr(c->p, '\0', (size_t)(c->end - c->p));

	if (s == NULL)
		return -1;
	c->p = s + 1;
	return 0;
}

/* n bytes into v (NULL: skipped); 0 or -1. */
static int
offcpu_take(struct offcpu_cur *c, void *v, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -1;
	if (v != NULL)
		memcpy(v, c->p, (size_t)n);
	c->p += n;
	return 0;
}

/* A u64 size and that many bytes: *body is where they start. */
static int
offcpu_sized(struct offcpu_cur *c, const uint8_t **body, uint64_t *sz)
{
	if (offcpu_take(c, sz, 8) == -1)
		return -1;
	*body = c->p;
	return offcpu_take(c, NULL, *sz);
}

int
offcpu_format(const uint8_t *p, uint64_t len, struct offcpu_fields *f)
{
	static const uint8_t	 magic[] = { 23, 8, 68, 't', 'r', 'a', 'c',
				     'i', 'n', 'g' };
	struct offcpu_cur	 c = { p, p + len };
	const uint8_t		*body;
	uint8_t			 head[6];
	uint64_t		 sz;
	uint32_t		 nr, nsys, i, j;

	if (len < sizeof(magic) || memcmp(p, magic, sizeof(magic)) != 0)
		return -1;
	c.p += sizeof(magic);
	/* the version; big-endian (not this host's), long size, page size */
	if (offcpu_str(&c) == -1 || offcpu_take(&c, head, 6) == -1 ||
	    head[0] != 0)
		return -1;
	/* header_page and header_event: a name, a size, its bytes */
	for (i = 0; i < 2; i++)
		if (offcpu_str(&c) == -1 || offcpu_sized(&c, &body, &sz) == -1)
			return -1;
	if (offcpu_take(&c, &nr, 4) == -1)
		return -1;
	for (i = 0; i < nr; i++)	/* ftrace's own formats */
		if (offcpu_sized(&c, &body, &sz) == -1)
			return -1;
	if (offcpu_take(&c, &nsys, 4) == -1)
		return -1;
	for (i = 0; i < nsys; i++) {
		if (offcpu_str(&c) == -1 || offcpu_take(&c, &nr, 4) == -1)
			return -1;
		for (j = 0; j < nr; j++) {
			if (offcpu_sized(&c, &body, &sz) == -1)
				return -1;
			if (offcpu_event((const char *)body, sz, f) == 0)
				return 0;
		}
	}
	return -1;
}

struct offcpu *
offcpu_create(const struct profile_info *pi, const struct perfread_opts *o,
    perfread_fn fn, void *arg, char *err, size_t errlen)
{
	struct offcpu	*oc;
	size_t		 i;

	if ((oc = calloc(1, sizeof(*oc))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* a file without switches has no off-CPU time, and no format */
	for (i = 0; i < pi->nattrs; i++)
		if (strcmp(pi->events[i], OFFCPU_EVENT) == 0)
			break;
	if (i < pi->nattrs && (pi->tracing == NULL ||
	    offcpu_format(pi->tracing, pi->tracing_len, &oc->f) == -1)) {
		snprintf(err, errlen, "no sched_switch format in its tracing "
		    "data: off-CPU time cannot be read");
		free(oc);
		errno = EINVAL;
		return NULL;
	}
	if (i < pi->nattrs && offcpu_fields_ok(&oc->f, oc->why,
	    sizeof(oc->why)) == -1) {
		snprintf(err, errlen, "%s: off-CPU time cannot be read",
		    oc->why);
		free(oc);
		errno = EINVAL;
		return NULL;
	}
	oc->o = *o;
	oc->fn = fn;
	oc->arg = arg;
	return oc;
}

void
offcpu_free(struct offcpu *oc)
{
	size_t	 i;

	if (oc == NULL)
		return;
	for (i = 0; i < oc->size; i++) {
		free(oc->tab[i].frames);
		free(oc->tab[i].cgroup);
	}
	free(oc->tab);
	free(oc);
}

void
offcpu_end(const struct offcpu *oc, struct offcpu_stats *st)
{
	size_t	 i;

	*st = oc->st;
	st->open = 0;
	for (i = 0; i < oc->size; i++)
		st->open += oc->tab[i].used && oc->tab[i].off;
}

static size_t
offcpu_hash(uint32_t tid)
{
	return (size_t)(((uint64_t)tid * 0x9e3779b97f4a7c15ULL) >> 32);
}

static int
offcpu_grow(struct offcpu *oc)
{
	struct offcpu_task	*old = oc->tab, *t;
	size_t			 i, j, osize = oc->size;

	oc->size = osize ? osize * 2 : 256;
	if ((oc->tab = calloc(oc->size, sizeof(*t))) == NULL) {
		oc->tab = old;
		oc->size = osize;
		return -1;
	}
	for (i = 0; i < osize; i++) {
		if (!old[i].used)
			continue;
		j = offcpu_hash(old[i].tid) & (oc->size - 1);
		while (oc->tab[j].used)
			j = (j + 1) & (oc->size - 1);
		oc->tab[j] = old[i];
		/* its sample's comm is its own copy, which moved with it */
		oc->tab[j].s.comm = oc->tab[j].comm;
	}
	free(old);
	return 0;
}

/* The thread's entry; NULL when it has none (create 0) or without
 * memory. */
static struct offcpu_task *
offcpu_task(struct offcpu *oc, uint32_t tid, int create)
{
	size_t	 j;

	if (oc->size == 0 && (!create || offcpu_grow(oc) == -1))
		return NULL;
	for (j = offcpu_hash(tid) & (oc->size - 1); oc->tab[j].used;
	    j = (j + 1) & (oc->size - 1))
		if (oc->tab[j].tid == tid)
			return &oc->tab[j];
	if (!create)
		return NULL;
	if ((oc->n + 1) * 2 > oc->size) {
		if (offcpu_grow(oc) == -1)
			return NULL;
		return offcpu_task(oc, tid, create);
	}
	oc->n++;
	oc->tab[j].used = 1;
	oc->tab[j].tid = tid;
	return &oc->tab[j];
}

static uint64_t
offcpu_field_of(const struct profile_sample *s, uint32_t off, uint32_t size)
{
	uint64_t	 v = 0;
	uint32_t	 v32;

	if (off > s->raw_size || size > s->raw_size - off)
		return UINT64_MAX;
	if (size == 4) {
		memcpy(&v32, s->raw + off, 4);
		return v32;
	}
	memcpy(&v, s->raw + off, 8);
	return v;
}

static int
offcpu_wanted(const struct offcpu *oc, const struct profile_sample *s)
{
	size_t	 i;

	if (s->time < oc->o.tmin || s->time >= oc->o.tmax)
		return 0;
	if (oc->o.npids == 0)
		return 1;
	for (i = 0; i < oc->o.npids; i++)
		if (oc->o.pids[i] == s->pid)
			return 1;
	return 0;
}

/* The switch-out of task tid (s's prev_pid) kept until its switch-in. */
static int
offcpu_out(struct offcpu *oc, uint32_t tid, const struct profile_sample *s)
{
	struct offcpu_task	*t;
	struct profile_frame	*nf;
	size_t			 n;

	if ((t = offcpu_task(oc, tid, 1)) == NULL)
		return -1;
	if (s->nframes > t->cap) {
		if ((nf = reallocarray(t->frames, s->nframes,
		    sizeof(*nf))) == NULL)
			return -1;
		t->frames = nf;
		t->cap = s->nframes;
	}
	if (s->nframes > 0)
		memcpy(t->frames, s->frames, s->nframes * sizeof(*t->frames));
	t->s = *s;
	t->s.frames = t->frames;
	t->s.raw = NULL;
	t->s.raw_size = 0;
	snprintf(t->comm, sizeof(t->comm), "%s", s->comm);
	t->s.comm = t->comm;
	if (s->cgroup != NULL && (t->cgroup == NULL ||
	    strcmp(t->cgroup, s->cgroup) != 0)) {
		n = strlen(s->cgroup) + 1;
		free(t->cgroup);
		if ((t->cgroup = malloc(n)) == NULL)
			return -1;
		memcpy(t->cgroup, s->cgroup, n);
	}
	t->s.cgroup = s->cgroup != NULL ? t->cgroup : NULL;
	t->off = 1;
	return 0;
}

/* The walk stopped at a switch whose raw data does not hold the field
 * name where the file's format puts it (off, size). */
static int
offcpu_misfit(struct offcpu *oc, const struct profile_sample *s,
    const char *name, uint32_t off, uint32_t size)
{
	snprintf(oc->why, sizeof(oc->why), "a sched_switch sample at %"
	    PRIu64 " has %" PRIu32 " bytes of raw data, and its format puts "
	    "%s at offset %" PRIu32 " (size %" PRIu32 "): off-CPU time cannot "
	    "be read", s->time, s->raw_size, name, off, size);
	errno = EINVAL;
	return -1;
}

const char *
offcpu_error(const struct offcpu *oc)
{
	return oc->why[0] != '\0' ? oc->why : NULL;
}

int
offcpu_sample(void *arg, const struct profile_sample *s)
{
	struct offcpu		*oc = arg;
	struct offcpu_task	*t;
	uint64_t		 next, state, prev;

	if (oc->f.next_pid_size == 0 || s->raw == NULL ||
	    strcmp(s->event, OFFCPU_EVENT) != 0)
		return 0;
	oc->st.switches++;
	next = offcpu_field_of(s, oc->f.next_pid, oc->f.next_pid_size);
	state = offcpu_field_of(s, oc->f.prev_state, oc->f.prev_state_size);
	prev = offcpu_field_of(s, oc->f.prev_pid, oc->f.prev_pid_size);
	/* a format that does not fit its own samples is not guessed at */
	if (next == UINT64_MAX)
		return offcpu_misfit(oc, s, "next_pid", oc->f.next_pid,
		    oc->f.next_pid_size);
	if (state == UINT64_MAX)
		return offcpu_misfit(oc, s, "prev_state", oc->f.prev_state,
		    oc->f.prev_state_size);
	if (prev == UINT64_MAX)
		return offcpu_misfit(oc, s, "prev_pid", oc->f.prev_pid,
		    oc->f.prev_pid_size);
	/* the task coming on: its time off ends now */
	if (next != 0 && (t = offcpu_task(oc, (uint32_t)next, 0)) != NULL && t->off) {
		t->off = 0;
		if (s->time > t->s.time && offcpu_wanted(oc, &t->s)) {
			t->s.period = s->time - t->s.time;
			oc->st.paired++;
			if (oc->fn(oc->arg, &t->s) == -1)
				return -1;
		}
	}
	if (prev == 0)
		return 0;
	if ((state & OFFCPU_SLEEPING) == 0) {
		/* preempted: on the CPU until now, whatever was missed */
		if ((t = offcpu_task(oc, (uint32_t)prev, 0)) != NULL)
			t->off = 0;
		return 0;
	}
	if (offcpu_out(oc, (uint32_t)prev, s) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/*
 * session keeps the table of sessions, checks their starts against the
 * limits and ends them (see session.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "jemit.h"
#include "log.h"
#include "proto.h"
#include "session.h"
#include "size.h"

struct session {
	struct session_table	*t;
	char			 name[SESSION_NAME_MAX + 1];
	int			 on_demand;
	int			 ended;		/* stopped; freed soon (gc) */
	struct record		*rec;
	struct config		 cfg;		/* an on-demand one's settings */
	struct record_memory	 mem;		/* held while it records */
	int			 holds;		/* ...mem counts in the budget */
	uint64_t		 duration;	/* seconds, on-demand */
	time_t			 ends;		/* ...stopped then */
	struct event		*timer;
	TAILQ_ENTRY(session)	 entry;
};

struct session_table {
	struct event_base	*base;
	int			 dirfd;
	int			 lockfd;
	const struct config	*cfg;		/* the daemon's */
	struct session_hooks	 hooks;
	TAILQ_HEAD(, session)	 list;		/* the default one first */
	struct event		*gc;		/* frees the ended ones */
	struct metrics		 gone;		/* of the ended on-demand ones */
	struct metrics_session	*ms;		/* session_metrics' */
};

/* The budget: what a start's memory and the running sessions' must fit
 * in, and where it comes from, for status and for a refusal. */
struct session_budget {
	uint64_t	 budget;
	uint64_t	 limit;		/* the cgroup's or the machine's */
	char		 from[CONFIG_PATH_LEN + 160];
};

static void	session_record_stopped(struct record *, const char *, void *);

static struct session *
session_new(struct session_table *t, const char *name)
{
	struct session	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->t = t;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->on_demand = strcmp(name, SESSION_DEFAULT) != 0;
	if ((s->rec = record_create(t->base, t->dirfd, t->hooks.finish,
	    t->hooks.finish_ctx)) == NULL) {
		free(s);
		return NULL;
	}
	/* the default session's files keep the names they always had */
	record_set_name(s->rec, s->on_demand ? name : NULL);
	record_set_lock(s->rec, t->lockfd);
	return s;
}

static void
session_free(struct session *s)
{
	if (s == NULL)
		return;
	if (s->timer != NULL)
		event_free(s->timer);
	record_destroy(s->rec);
	free(s);
}

/* Sessions stopped in a record's callback are freed here, outside it:
 * the record still runs code after its stop callback returns. */
static void
session_gc_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session_table	*t = arg;
	struct session		*s, *next;

	for (s = TAILQ_FIRST(&t->list); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (!s->ended)
			continue;
		TAILQ_REMOVE(&t->list, s, entry);
		session_free(s);
	}
}

struct session_table *
session_table_create(struct event_base *base, int dirfd, int lockfd,
    const struct config *cfg, const struct session_hooks *hooks)
{
	struct session_table	*t;
	struct session		*s;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->base = base;
	t->dirfd = dirfd;
	t->lockfd = lockfd;
	t->cfg = cfg;
	t->hooks = *hooks;
	TAILQ_INIT(&t->list);
	if ((t->gc = event_new(base, -1, 0, session_gc_cb, t)) == NULL ||
	    (s = session_new(t, SESSION_DEFAULT)) == NULL) {
		if (t->gc != NULL)
			event_free(t->gc);
		free(t);
		return NULL;
	}
	TAILQ_INSERT_HEAD(&t->list, s, entry);
	return t;
}

void
session_table_destroy(struct session_table *t)
{
	struct session	*s;

	if (t == NULL)
		return;
	while ((s = TAILQ_FIRST(&t->list)) != NULL) {
		TAILQ_REMOVE(&t->list, s, entry);
		session_free(s);
	}
	event_free(t->gc);
	free(t->ms);
	free(t);
}

struct session *
session_default(struct session_table *t)
{
	return TAILQ_FIRST(&t->list);
}

struct session *
session_find(struct session_table *t, const char *name)
{
	struct session	*s;

	if (name == NULL)
		return session_default(t);
	TAILQ_FOREACH(s, &t->list, entry)
		if (!s->ended && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct session *
session_next(struct session_table *t, struct session *s)
{
	s = s == NULL ? TAILQ_FIRST(&t->list) : TAILQ_NEXT(s, entry);
	while (s != NULL && s->ended)
		s = TAILQ_NEXT(s, entry);
	return s;
}

const char *
session_name(const struct session *s)
{
	return s->name;
}

struct record *
session_record(const struct session *s)
{
	return s->rec;
}

int
session_on_demand(const struct session *s)
{
	return s->on_demand;
}

int
session_name_check(const char *name, struct config_error *err)
{
	size_t	 n = strlen(name), i;

	if (n == 0 || n > SESSION_NAME_MAX)
		return config_fail(err, PROTO_E_BAD_VALUE, "session", "a "
		    "session name has 1 to %d characters (got %zu)",
		    SESSION_NAME_MAX, n);
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
		    name[i] == '-'))
			return config_fail(err, PROTO_E_BAD_VALUE, "session",
			    "a session name is made of a-z, 0-9, '_' and '-' "
			    "(it goes into file names)");
	if (name[0] == '-')
		return config_fail(err, PROTO_E_BAD_VALUE, "session", "a "
		    "session name does not start with '-'");
	if (strcmp(name, SESSION_DEFAULT) == 0)
		return config_fail(err, PROTO_E_BAD_VALUE, "session", "'%s' "
		    "is the configured session: start it without --session",
		    SESSION_DEFAULT);
	/* perfspill-flame --session all reads every session's files */
	if (strcmp(name, SESSION_RESERVED) == 0)
		return config_fail(err, PROTO_E_BAD_VALUE, "session", "'%s' "
		    "is reserved: perfspill-flame --session %s means every "
		    "session", SESSION_RESERVED, SESSION_RESERVED);
	return 0;
}

/*
 * The budget: the lower of the daemon's cgroup limit and the machine's
 * memory, less the reserve for the daemon itself; max_memory, when set,
 * bounds it further. Read at every start: a cgroup's limit can change.
 */
static void
session_budget_of(uint64_t max_memory, struct session_budget *b)
{
	uint64_t	 cg;
	char		 where[CONFIG_PATH_LEN], lim[32], res[32];

	b->limit = (uint64_t)sysconf(_SC_PHYS_PAGES) *
	    (uint64_t)sysconf(_SC_PAGESIZE);
	snprintf(b->from, sizeof(b->from), "the machine's memory");
	if (cgroup_memory_limit(&cg, where, sizeof(where)) == 1 &&
	    cg < b->limit) {
		b->limit = cg;
		snprintf(b->from, sizeof(b->from), "%s", where);
	}
	b->budget = b->limit > SESSION_RESERVE ? b->limit - SESSION_RESERVE : 0;
	/* the limit to as many decimals as show the reserve taken off:
	 * "23.54 GiB less 64.0 MiB" beside a budget of 23.48 GiB */
	snprintf(b->from + strlen(b->from), sizeof(b->from) - strlen(b->from),
	    " %s less %s for the daemon itself", size_format_apart(b->limit,
	    b->budget, lim, sizeof(lim)), size_format(SESSION_RESERVE, res,
	    sizeof(res)));
	if (max_memory > 0 && max_memory < b->budget) {
		b->budget = max_memory;
		snprintf(b->from, sizeof(b->from), "max_memory");
	}
}

static void
session_budget(struct session_table *t, struct session_budget *b)
{
	session_budget_of(t->cfg->max_memory, b);
}

/* What the sessions but skip hold now. */
static uint64_t
session_held(struct session_table *t, const struct session *skip)
{
	struct session	*s;
	uint64_t	 n = 0;

	TAILQ_FOREACH(s, &t->list, entry)
		if (s != skip && s->holds)
			n += s->mem.total;
	return n;
}

/* Does m, for session name, fit beside what the others (all but skip)
 * hold? 0, or -1 with err naming the figures: this one's (and its
 * formula's parts), the others', the budget and where it comes from. */
static int
session_fits(struct session_table *t, const struct session *skip,
    const char *name, const struct record_memory *m, uint64_t max_memory,
    struct config_error *err)
{
	struct session_budget	 b;
	uint64_t		 held = session_held(t, skip);
	char			 a[32], c[32], pc[32], o[32], h[32], bu[32];

	session_budget_of(max_memory, &b);
	if (held <= b.budget && m->total <= b.budget - held)
		return 0;
	return config_fail(err, PROTO_E_LIMIT, NULL, "session %s would hold "
	    "%s of memory (%zu CPUs x %s of ring, %s of drain buffers, + %s), "
	    "the sessions recording hold %s, and the memory budget is %s (%s)",
	    name, size_format(m->total, a, sizeof(a)), m->ncpus,
	    size_format(m->ring, pc, sizeof(pc)),
	    size_format(m->buffers, bu, sizeof(bu)),
	    size_format(m->drain + m->compress + m->window, o, sizeof(o)),
	    size_format(held, h, sizeof(h)),
	    size_format_apart(b.budget, b.limit, c, sizeof(c)), b.from);
}

/* What the recording with cfg would hold on the CPUs online now. */
static int
session_memory(const struct config *cfg, struct record_memory *m,
    struct config_error *err)
{
	size_t	 n;

	if (record_cpus_online(&n) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "cannot read the "
		    "online CPUs");
	record_memory(cfg, n, m);
	return 0;
}

static size_t
session_nr_on_demand(struct session_table *t)
{
	struct session	*s;
	size_t		 n = 0;

	TAILQ_FOREACH(s, &t->list, entry)
		n += s->on_demand && !s->ended;
	return n;
}

static void
session_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session	*s = arg;

	log_info("session %s: its duration (%" PRIu64 " s) is over; "
	    "stopping it", s->name, s->duration);
	session_stop(s, 0);
}

/* An on-demand session's settings: the daemon's retention, and its
 * bound on snapshots that would flood it, always. */
static void
session_retention(struct config *cfg, const struct config *daemon)
{
	cfg->max_files = daemon->max_files;
	cfg->max_size = daemon->max_size;
	cfg->min_free = daemon->min_free;
	cfg->snapshot_interval = daemon->snapshot_interval;
}

int
session_start(struct session_table *t, const char *name,
    const struct config *cfg, uint64_t duration, struct config_error *err)
{
	struct session		*s;
	struct record_memory	 m;
	struct timeval		 tv;
	const char		*why;
	int			 fresh = 0;

	if (name == NULL)
		name = SESSION_DEFAULT;
	if ((s = session_find(t, name)) != NULL &&
	    (why = record_busy(s->rec, !s->on_demand)) != NULL) {
		/* the default's words (and hint) are those it always had */
		if (!s->on_demand)
			return config_fail(err, PROTO_E_STATE, NULL, "%s", why);
		return config_fail(err, PROTO_E_STATE, "session", "session "
		    "%s: %s", name, why);
	}
	if (s == NULL && session_nr_on_demand(t) >= t->cfg->max_sessions)
		return config_fail(err, PROTO_E_LIMIT, "session", "%zu "
		    "on-demand session(s) record already, and max_sessions is "
		    "%" PRIu64 ": stop one first", session_nr_on_demand(t),
		    t->cfg->max_sessions);
	if (session_memory(cfg, &m, err) == -1)
		return -1;
	/* before anything of it exists: a refusal allocates nothing */
	if (session_fits(t, s, name, &m, t->cfg->max_memory, err) == -1)
		return -1;
	if (s == NULL) {
		if ((s = session_new(t, name)) == NULL)
			return config_fail(err, PROTO_E_SYSTEM, NULL,
			    "out of memory");
		fresh = 1;
	}
	if (s->on_demand) {
		s->cfg = *cfg;
		session_retention(&s->cfg, t->cfg);
		cfg = &s->cfg;
		s->duration = duration ? duration : t->cfg->session_duration;
		if (s->timer == NULL && (s->timer = evtimer_new(t->base,
		    session_timer_cb, s)) == NULL) {
			config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
			goto error;
		}
	}
	if (record_start(s->rec, cfg, err) == -1)
		goto error;
	s->mem = m;
	s->holds = 1;
	if (s->on_demand) {
		s->ends = time(NULL) + (time_t)s->duration;
		tv.tv_sec = (time_t)s->duration;
		tv.tv_usec = 0;
		evtimer_add(s->timer, &tv);
		log_info("session %s: recording for %" PRIu64 " s", s->name,
		    s->duration);
	}
	if (fresh)
		TAILQ_INSERT_TAIL(&t->list, s, entry);
	return 0;
error:
	if (fresh)
		session_free(s);
	return -1;
}

int
session_stop(struct session *s, int discard)
{
	if (record_state(s->rec) != RECORD_RUNNING)
		return -1;
	if (s->timer != NULL)
		evtimer_del(s->timer);
	return record_stop(s->rec, discard, session_record_stopped, s);
}

size_t
session_switch_output(struct session_table *t, const char *why)
{
	struct config_error	 err;
	struct session		*s;
	const char		*name;
	size_t			 n = 0;

	TAILQ_FOREACH(s, &t->list, entry) {
		if (s->ended || record_state(s->rec) != RECORD_RUNNING)
			continue;
		n++;
		if (record_is_flight(s->rec)) {
			if (record_snapshot(s->rec, why, &name, &err) == 0)
				log_info("%s: session %s: snapshot, writing %s",
				    why, s->name, name);
			else
				log_warnx("%s: session %s: no snapshot: %s",
				    why, s->name, err.msg);
		} else if (record_rotate(s->rec, why, 1) == 0)
			log_info("%s: session %s: rotated, now writing %s",
			    why, s->name, record_file_name(s->rec) ?
			    record_file_name(s->rec) : "(the next file)");
		else
			log_warnx("%s: session %s: cannot rotate now (paused, "
			    "or no new file could be created)", why, s->name);
	}
	if (n == 0)
		log_info("%s: no session is recording: nothing to rotate or "
		    "snapshot", why);
	return n;
}

const char *
session_flight_name(struct session_table *t)
{
	struct session	*s;

	TAILQ_FOREACH(s, &t->list, entry)
		if (!s->ended && record_state(s->rec) == RECORD_RUNNING &&
		    record_is_flight(s->rec))
			return s->name;
	return NULL;
}

/* The recording of s has finished its last file. */
static void
session_record_stopped(struct record *rec, const char *file, void *arg)
{
	struct session		*s = arg;
	struct session_table	*t = s->t;
	struct metrics		 m;

	s->holds = 0;
	if (s->on_demand) {
		/* the daemon's counters outlive the session */
		record_metrics(rec, &m);
		metrics_add(&t->gone, &m);
		s->ended = 1;
		log_info("session %s ended", s->name);
	}
	if (t->hooks.stopped != NULL)
		t->hooks.stopped(s, file, t->hooks.stopped_arg);
	if (s->ended)
		event_active(t->gc, EV_TIMEOUT, 0);
}

size_t
session_stop_all(struct session_table *t)
{
	struct session	*s, *next;

	for (s = TAILQ_FIRST(&t->list); s != NULL; s = next) {
		/* a stop that finishes at once may mark s ended */
		next = TAILQ_NEXT(s, entry);
		if (record_state(s->rec) == RECORD_RUNNING)
			session_stop(s, 0);
	}
	return session_busy(t);
}

size_t
session_busy(struct session_table *t)
{
	struct session	*s;
	size_t		 n = 0;

	TAILQ_FOREACH(s, &t->list, entry)
		n += record_state(s->rec) != RECORD_IDLE;
	return n;
}

void
session_update(struct session_table *t, const struct config *cfg)
{
	struct session		*s;
	struct config_error	 err;

	TAILQ_FOREACH(s, &t->list, entry) {
		if (record_state(s->rec) != RECORD_RUNNING)
			continue;
		if (!s->on_demand) {
			record_update(s->rec, cfg);
			/* its cblocks may have changed: its figure with them
			 * (kept as it was when the CPUs cannot be read) */
			session_memory(cfg, &s->mem, &err);
			continue;
		}
		session_retention(&s->cfg, t->cfg);
		record_update(s->rec, &s->cfg);
	}
}

int
session_check_update(struct session_table *t, const struct config *cfg,
    struct config_error *err)
{
	struct session		*s = session_default(t);
	struct record_memory	 m;

	if (record_state(s->rec) != RECORD_RUNNING ||
	    session_memory(cfg, &m, err) == -1 || m.total <= s->mem.total)
		return 0;
	return session_fits(t, s, s->name, &m, cfg->max_memory, err);
}

/* What a session's recording holds, counted in the budget. */
static const struct jemit_field session_memory_rows[] = {
	JEMIT_U("total", struct record_memory, total),
	JEMIT_U("cpus", struct record_memory, ncpus),
	JEMIT_U("per_cpu", struct record_memory, per_cpu),
	JEMIT_U("ring", struct record_memory, ring),
	JEMIT_U("cblocks", struct record_memory, cblocks),
	JEMIT_U("pool", struct record_memory, pool),
	JEMIT_U("buffers", struct record_memory, buffers),
	JEMIT_U("drain", struct record_memory, drain),
	JEMIT_U("compress", struct record_memory, compress),
	JEMIT_ROWS_END
};

/* A session's entry in status, besides its recording's status. */
static const struct jemit_field session_rows[] = {
	JEMIT_S("name", struct session, name),
	JEMIT_B("on_demand", struct session, on_demand),
	/* its memory only while it counts in the budget */
	{ .key = "memory", .member = JEMIT_MEMBER(JEMIT_OBJECT,
	    struct session, mem), .sub = session_memory_rows,
	    .when = JEMIT_MEMBER(JEMIT_BOOL, struct session, holds) },
	JEMIT_ROWS_END
};

/* The budget in status, after what the sessions hold. */
static const struct jemit_field session_budget_rows[] = {
	JEMIT_U("budget", struct session_budget, budget),
	JEMIT_U("limit", struct session_budget, limit),
	JEMIT_S("budget_from", struct session_budget, from),
	JEMIT_ROWS_END
};

void
session_add_end(const struct session *s, json_object *o)
{
	if (!s->on_demand || record_state(s->rec) != RECORD_RUNNING)
		return;
	proto_add_u64(o, "duration", s->duration);
	json_object_object_add(o, "ends", json_object_new_int64(
	    (int64_t)s->ends));
}

void
session_status(struct session_table *t, json_object *o)
{
	struct session		*s;
	struct session_budget	 b;
	json_object		*a = json_object_new_array(), *e, *m;

	TAILQ_FOREACH(s, &t->list, entry) {
		if (s->ended)
			continue;
		e = record_status(s->rec);
		jemit_add(e, session_rows, s);
		session_add_end(s, e);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "sessions", a);
	session_budget(t, &b);
	m = json_object_new_object();
	proto_add_u64(m, "held", session_held(t, NULL));
	jemit_add(m, session_budget_rows, &b);
	proto_add_u64(m, "max_sessions", t->cfg->max_sessions);
	json_object_object_add(o, "memory", m);
}

void
session_metrics(struct session_table *t, struct metrics *out)
{
	struct session		*s;
	struct metrics		 m;
	struct metrics_session	*ms;
	struct session_budget	 b;
	size_t			 n = 0;

	*out = t->gone;
	out->paused = 0;
	TAILQ_FOREACH(s, &t->list, entry)
		n++;
	free(t->ms);
	t->ms = ms = calloc(n, sizeof(*ms));
	n = 0;
	TAILQ_FOREACH(s, &t->list, entry) {
		if (s->ended)
			continue;
		record_metrics(s->rec, &m);
		metrics_add(out, &m);
		out->aio_inflight += m.aio_inflight;
		out->recording |= m.recording;
		out->paused |= m.paused;
		if (s->holds)
			out->memory += s->mem.total;
		if (ms == NULL)
			continue;
		ms[n].name = s->name;
		ms[n].samples = m.samples;
		ms[n].lost = m.lost;
		ms[n].lost_samples = m.lost_samples;
		ms[n].bytes_written = m.bytes_written;
		ms[n].files_finished = m.files_finished;
		ms[n].recording = m.recording;
		ms[n].memory = s->holds ? s->mem.total : 0;
		ms[n].direct = (uint64_t)record_write_direct(s->rec);
		ms[n].data_on_disk = (uint64_t)m.data_on_disk;
		if (m.data_on_disk > out->data_on_disk)
			out->data_on_disk = m.data_on_disk;
		record_buffer_use(s->rec, &ms[n].buffers, &ms[n].spills);
		n++;
	}
	out->sessions = ms;
	out->nr_sessions = ms != NULL ? n : 0;
	/* one directory, one disk budget: any session's record sees it */
	record_disk_metrics(session_default(t)->rec, out);
	session_budget(t, &b);
	out->memory_budget = b.budget;
}

void
session_summary(struct session_table *t, char *buf, size_t len)
{
	struct session	*s;
	size_t		 n = 0, used;

	record_summary(session_default(t)->rec, buf, len);
	TAILQ_FOREACH(s, &t->list, entry)
		n += s->on_demand && record_state(s->rec) != RECORD_IDLE;
	used = strlen(buf);
	if (n > 0 && used < len)
		snprintf(buf + used, len - used, "; %zu on-demand session(s)",
		    n);
}

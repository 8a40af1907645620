/*
 * flight keeps the window and the task store of a flight recording
 * (see flight.h).
 */
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "flight.h"
#include "perfdata/perfdata.h"
#include "track.h"

/* What the task store keeps of the chunks that leave the window. */
#define FLIGHT_TASK_TYPES	(1u << PERF_RECORD_MMAP | \
	1u << PERF_RECORD_MMAP2 | 1u << PERF_RECORD_COMM | \
	1u << PERF_RECORD_FORK | 1u << PERF_RECORD_EXIT | \
	1u << PERF_RECORD_KSYMBOL | 1u << PERF_RECORD_CGROUP)

size_t
flight_store_cap(uint64_t window_bytes)
{
	uint64_t	 cap = window_bytes / 8;

	return (size_t)(cap < (1u << 20) ? 1u << 20 : cap);
}

uint64_t
flight_memory_max(uint64_t window_bytes)
{
	return 2 * window_bytes + flight_store_cap(window_bytes);
}

void
flight_init(struct flight *fl, uint64_t window_secs, uint64_t window_bytes,
    size_t time_off)
{
	memset(fl, 0, sizeof(*fl));
	TAILQ_INIT(&fl->chunks);
	fl->window_ns = window_secs * UINT64_C(1000000000);
	fl->window_bytes = window_bytes;
	fl->time_off = time_off;
	sbuf_init(&fl->store);
	fl->store_cap = flight_store_cap(window_bytes);
}

static void
flight_free_chunks(struct flight_chunks *l)
{
	struct flight_chunk	*c;

	while ((c = TAILQ_FIRST(l)) != NULL) {
		TAILQ_REMOVE(l, c, entry);
		free(c->buf);
		free(c);
	}
}

void
flight_finish(struct flight *fl)
{
	flight_free_chunks(&fl->chunks);
	sbuf_finish(&fl->store);
	fl->st.bytes = fl->st.chunks = 0;
}

void
flight_scan(const uint8_t *buf, size_t len, size_t time_off,
    uint64_t *samples, uint64_t *first, uint64_t *last)
{
	struct perf_event_header	 h;
	size_t				 pos;

	*samples = 0;
	for (pos = 0; len - pos >= sizeof(h); pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos)
			break;
		if (h.type == PERF_RECORD_SAMPLE)
			(*samples)++;
	}
	*first = *last = 0;
	perfdata_sample_times(buf, len, time_off, first, last);
}

int
flight_add(struct flight *fl, uint8_t *buf, size_t len)
{
	struct flight_chunk	*c, *prev;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		free(buf);
		fl->st.oom++;
		return -1;
	}
	c->buf = buf;
	c->len = len;
	flight_scan(buf, len, fl->time_off, &c->samples, &c->first, &c->last);
	prev = TAILQ_LAST(&fl->chunks, flight_chunks);
	c->newest = prev != NULL && prev->newest > c->last ? prev->newest :
	    c->last;
	if (c->newest > fl->newest)
		fl->newest = c->newest;
	TAILQ_INSERT_TAIL(&fl->chunks, c, entry);
	fl->st.bytes += len + FLIGHT_ROUND_LEN;
	fl->st.chunks++;
	return 0;
}

/* The task a record is of: COMM, FORK, EXIT by thread; MMAPs by
 * process, whose leader's tid is its pid. UINT32_MAX: of none. */
static uint32_t
flight_task(const uint8_t *r)
{
	struct perf_event_header	 h;

	memcpy(&h, r, sizeof(h));
	switch (h.type) {
	case PERF_RECORD_COMM:
		return track_u32(r, 4);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return track_u32(r, 8);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return track_u32(r, 0);
	}
	return UINT32_MAX;
}

struct flight_exit {
	uint32_t	 tid;
	size_t		 pos;	/* of its last EXIT in the store */
};

static int
flight_exit_cmp(const void *a, const void *b)
{
	const struct flight_exit *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The last EXIT of tid among ex[0..n), sorted by tid and position. */
static const struct flight_exit *
flight_last_exit(const struct flight_exit *ex, size_t n, uint32_t tid)
{
	size_t	 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ex[mid].tid <= tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && ex[lo - 1].tid == tid ? &ex[lo - 1] : NULL;
}

/* A set of tids (open addressing; 0 is a tid, so UINT32_MAX is empty). */
struct flight_set {
	uint32_t	*v;
	size_t		 mask;
};

static int
flight_set_init(struct flight_set *s, size_t n)
{
	size_t	 cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	if ((s->v = malloc(cap * sizeof(*s->v))) == NULL)
		return -1;
	memset(s->v, 0xff, cap * sizeof(*s->v));
	s->mask = cap - 1;
	return 0;
}

static int
flight_set_has(const struct flight_set *s, uint32_t tid)
{
	size_t	 i;

	for (i = (tid * 2654435761u) & s->mask; s->v[i] != UINT32_MAX;
	    i = (i + 1) & s->mask)
		if (s->v[i] == tid)
			return 1;
	return 0;
}

static void
flight_set_add(struct flight_set *s, uint32_t tid)
{
	size_t	 i;

	for (i = (tid * 2654435761u) & s->mask; s->v[i] != UINT32_MAX;
	    i = (i + 1) & s->mask)
		if (s->v[i] == tid)
			return;
	s->v[i] = tid;
}

/* Whether the task of the record at pos exited later in the store. */
static int
flight_dead(const struct flight_exit *ex, size_t n, uint32_t tid, size_t pos)
{
	const struct flight_exit	*e;

	return tid != UINT32_MAX && (e = flight_last_exit(ex, n, tid)) !=
	    NULL && e->pos > pos;
}

/*
 * The store without the tasks that exited (their EXIT is in the store:
 * it left the window, so none of their samples is in it): a record goes
 * when an EXIT of its task follows it, and the EXITs go. A tid used
 * again after the EXIT keeps its later records. Not a parent whose
 * child is kept, though: perf gives a child its parent's name and maps
 * at its FORK, so an exited shell stays while the child it forked runs.
 * Then, past the cap, the oldest records go until a quarter of the cap
 * is free.
 */
void
flight_compact(struct flight *fl)
{
	struct perf_event_header	 h;
	struct flight_exit		*ex = NULL, *tmp;
	struct flight_set		 keep;
	uint8_t				*buf = fl->store.data;
	size_t				 len = fl->store.len, pos, kept = 0;
	size_t				*forks = NULL, *ftmp;
	size_t				 n = 0, cap = 0, nf = 0, fcap = 0, i;
	uint32_t			 tid, child;

	for (pos = 0; len - pos >= sizeof(h); pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos)
			break;
		if (h.type == PERF_RECORD_FORK) {
			if (nf == fcap) {
				fcap = fcap ? 2 * fcap : 256;
				if ((ftmp = realloc(forks, fcap *
				    sizeof(*forks))) == NULL)
					goto out;	/* nothing pruned */
				forks = ftmp;
			}
			forks[nf++] = pos;
		}
		if (h.type != PERF_RECORD_EXIT)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			if ((tmp = realloc(ex, cap * sizeof(*ex))) == NULL)
				goto out;
			ex = tmp;
		}
		ex[n].tid = flight_task(buf + pos);
		ex[n++].pos = pos;
	}
	if (n > 0)
		qsort(ex, n, sizeof(*ex), flight_exit_cmp);
	if (flight_set_init(&keep, 2 * nf) == -1)
		goto out;
	/* the parents a kept child needs, children first (they come later
	 * in the store), so that a grandparent follows its parent */
	for (i = nf; i-- > 0;) {
		pos = forks[i];
		child = track_u32(buf + pos, 8);
		if (flight_dead(ex, n, child, pos) &&
		    !flight_set_has(&keep, child))
			continue;
		flight_set_add(&keep, track_u32(buf + pos, 4));	/* ppid */
		flight_set_add(&keep, track_u32(buf + pos, 12));	/* ptid */
	}
	for (pos = 0; len - pos >= sizeof(h); pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos)
			break;
		tid = flight_task(buf + pos);
		if ((h.type == PERF_RECORD_EXIT && !flight_set_has(&keep, tid)) ||
		    (flight_dead(ex, n, tid, pos) &&
		    !flight_set_has(&keep, tid))) {
			fl->st.store_pruned++;
			continue;
		}
		memmove(buf + kept, buf + pos, h.size);
		kept += h.size;
	}
	free(keep.v);
	fl->store.len = len = kept;
out:
	free(ex);
	free(forks);
	if (len > fl->store_cap) {
		for (pos = 0, kept = len - fl->store_cap * 3 / 4;
		    pos < kept; pos += h.size) {
			memcpy(&h, buf + pos, sizeof(h));
			fl->st.store_dropped++;
		}
		memmove(buf, buf + pos, len - pos);
		len -= pos;
	}
	fl->store.len = len;
	fl->store_compact = len;
}

/* Keep c's task records: c leaves the window. */
static void
flight_keep(struct flight *fl, const struct flight_chunk *c)
{
	if (track_copy_types(&fl->store, c->buf, c->len, 0, c->len,
	    FLIGHT_TASK_TYPES) == -1)
		fl->st.oom++;
	/* compacting costs a walk of the store: only once it doubled */
	if (fl->store.len > fl->store_cap ||
	    fl->store.len > 2 * fl->store_compact + 65536)
		flight_compact(fl);
}

int
flight_seed(struct flight *fl, const uint8_t *buf, size_t len)
{
	if (len > 0 && sbuf_append(&fl->store, buf, len) == NULL)
		return -1;
	fl->store_compact = fl->store.len;
	return 0;
}

/* Let go of the head chunks up to the first round end. */
static void
flight_evict_round(struct flight *fl)
{
	struct flight_chunk	*c;
	int			 end = 0;

	while (!end && (c = TAILQ_FIRST(&fl->chunks)) != NULL) {
		end = c->round_end;
		TAILQ_REMOVE(&fl->chunks, c, entry);
		flight_keep(fl, c);
		fl->st.bytes -= c->len + FLIGHT_ROUND_LEN;
		fl->st.chunks--;
		fl->st.evicted += c->len;
		free(c->buf);
		free(c);
	}
}

void
flight_round(struct flight *fl)
{
	struct perf_event_header round = { PERF_RECORD_FINISHED_ROUND, 0,
	    FLIGHT_ROUND_LEN };
	struct flight_chunk	*c, *last;
	uint64_t		 bytes;

	if ((last = TAILQ_LAST(&fl->chunks, flight_chunks)) == NULL ||
	    last->round_end)
		return;
	memcpy(last->buf + last->len, &round, FLIGHT_ROUND_LEN);
	last->len += FLIGHT_ROUND_LEN;
	last->round_end = 1;
	/* the oldest round goes while it is older than the window, or the
	 * window is past its bytes; never the round just closed */
	for (;;) {
		bytes = 0;
		TAILQ_FOREACH(c, &fl->chunks, entry) {
			bytes += c->len + FLIGHT_ROUND_LEN;
			if (c->round_end)
				break;
		}
		if (c == last || c == NULL)
			return;
		if (fl->st.bytes <= fl->window_bytes &&
		    (fl->window_ns == 0 || c->newest == 0 ||
		    c->newest + fl->window_ns >= fl->newest))
			return;
		flight_evict_round(fl);
	}
}

/* Squeeze the samples older than cutoff out of c (whole records). */
static void
flight_cut(struct flight_chunk *c, uint64_t cutoff, size_t time_off)
{
	struct perf_event_header	 h;
	size_t				 pos, kept = 0;
	uint64_t			 t;

	for (pos = 0; c->len - pos >= sizeof(h); pos += h.size) {
		memcpy(&h, c->buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > c->len - pos)
			break;
		if (h.type == PERF_RECORD_SAMPLE &&
		    h.size >= time_off + sizeof(t)) {
			memcpy(&t, c->buf + pos + time_off, sizeof(t));
			if (t < cutoff)
				continue;
		}
		memmove(c->buf + kept, c->buf + pos, h.size);
		kept += h.size;
	}
	c->len = kept;
	flight_scan(c->buf, c->len, time_off, &c->samples, &c->first,
	    &c->last);
}

int
flight_take(struct flight *fl, struct flight_snap *snap)
{
	struct flight_chunk	*c;
	int			 rc = 0;

	memset(snap, 0, sizeof(*snap));
	TAILQ_INIT(&snap->chunks);
	snap->cutoff = fl->window_ns != 0 && fl->newest > fl->window_ns ?
	    fl->newest - fl->window_ns : 0;
	/* the store as the window's tasks found it, before they join it */
	if (fl->store.len > 0) {
		if ((snap->store = malloc(fl->store.len)) == NULL) {
			fl->st.oom++;
			rc = -1;
		} else {
			memcpy(snap->store, fl->store.data, fl->store.len);
			snap->store_len = fl->store.len;
		}
	}
	while ((c = TAILQ_FIRST(&fl->chunks)) != NULL) {
		TAILQ_REMOVE(&fl->chunks, c, entry);
		flight_keep(fl, c);
		/* whole rounds may begin before the window's time */
		if (fl->time_off != 0 && c->first != 0 && c->first < snap->cutoff)
			flight_cut(c, snap->cutoff, fl->time_off);
		snap->samples += c->samples;
		snap->bytes += c->len;
		TAILQ_INSERT_TAIL(&snap->chunks, c, entry);
	}
	fl->st.bytes = fl->st.chunks = 0;
	return rc;
}

void
flight_snap_free(struct flight_snap *snap)
{
	flight_free_chunks(&snap->chunks);
	free(snap->store);
	snap->store = NULL;
	snap->store_len = 0;
}

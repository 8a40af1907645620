/*
 * record: the recording session (see record.h): start and stop, the
 * rings of every CPU and CPU hotplug, the loop's events. The rest of the
 * session lives in the record-*.c files (record-int.h).
 *
 * Every fd of the session lives in the one event loop: a read event per
 * ring (the kernel wakes it at the watermark) and a periodic tick that
 * drains even when no watermark is reached. AIO completions raise no
 * signal (SIGEV_NONE): every drain pass polls the in-flight set first,
 * and a short reaper timer runs only while a finished file still waits
 * for its last writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "cgroup.h"
#include "log.h"
#include "outdir.h"
#include "perfdata.h"
#include "record-int.h"
#include "synth.h"

static int	record_sched(struct record *, uint64_t);
static void	record_hotplug(struct record *);

struct record *
record_create(struct event_base *base, int dirfd)
{
	struct record	*rec;
	char		*p;

	if ((rec = calloc(1, sizeof(*rec))) == NULL)
		return NULL;
	if ((rec->bids = buildid_create()) == NULL) {
		free(rec);
		return NULL;
	}
	rec->base = base;
	rec->dirfd = dirfd;
	rec->lockfd = -1;
	TAILQ_INIT(&rec->closing);
	sbuf_init(&rec->kept);
	/* SIGEV_NONE: completions are polled at every drain and by the
	 * reaper; a signal per write would cost the syscalls we record */
	cblock_queue_init(&rec->q);
	if (gethostname(rec->host, sizeof(rec->host)) == -1)
		snprintf(rec->host, sizeof(rec->host), "localhost");
	rec->host[sizeof(rec->host) - 1] = '\0';
	/* the host goes into file names: keep it to safe characters */
	for (p = rec->host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			*p = '_';
	return rec;
}

void
record_set_lock(struct record *rec, int lockfd)
{
	rec->lockfd = lockfd;
}

const char *
record_problem(const struct record *rec)
{
	return rec->problem[0] ? rec->problem : NULL;
}

enum record_state
record_state(const struct record *rec)
{
	return rec->state;
}

/*
 * The online CPUs ("0-3,6,8-9": never assume 0..N-1). Read at start and
 * at every tick for CPU hotplug. PERFSPILL_CPU_ONLINE_FILE replaces the
 * sysfs file: a test hook that simulates hotplug on any machine.
 */
static const char *
record_online_path(void)
{
	const char	*p = getenv("PERFSPILL_CPU_ONLINE_FILE");

	return p != NULL && *p != '\0' ? p : "/sys/devices/system/cpu/online";
}

static int
record_online_cpus(int **out, size_t *nr)
{
	return cpuring_read_list(record_online_path(), out, nr);
}

static void
record_close_cpu(struct record *rec, struct record_cpu *c)
{
	if (c->ev != NULL)
		event_free(c->ev);
	c->ev = NULL;
	if (c->fds != NULL)
		cpuring_close(c->fds, rec->nr_fds, &c->ring);
}

static void
record_close_cgroups(struct record *rec)
{
	size_t	 i;

	for (i = 0; i < rec->spec.nr_cg; i++)
		if (rec->cgfds[i] != -1)
			close(rec->cgfds[i]);
	rec->spec.nr_cg = 0;
}

static void
record_close_cpus(struct record *rec)
{
	size_t	 i;

	for (i = 0; i < rec->nr_cpus; i++) {
		record_close_cpu(rec, &rec->cpus[i]);
		free(rec->cpus[i].fds);
		rec->cpus[i].fds = NULL;
		free(rec->cpus[i].ids);
		rec->cpus[i].ids = NULL;
	}
	record_close_cgroups(rec);
}

/* Only once nothing is in flight: the buffers belong to AIO until then. */
static void
record_free_cpus(struct record *rec)
{
	size_t	 i, j;

	record_close_cpus(rec);
	for (i = 0; i < rec->nr_cpus; i++)
		for (j = 0; j < rec->cpus[i].nr_cbs; j++)
			cblock_finish(&rec->cpus[i].cbs[j]);
	free(rec->cpus);
	rec->cpus = NULL;
	rec->nr_cpus = 0;
}

/*
 * A watermark wakeup: rings below the minimum chunk wait, and the round
 * stays open until a pass reads them all (record_drain_all). perf holds
 * an open round in memory to sort it: once it has grown to the size of
 * all the rings, this pass reads every ring.
 */
static void
record_wakeup(struct record *rec)
{
	record_drain_all(rec, rec->round_bytes >= rec->round_max ? 0 :
	    rec->min_chunk);
}

static void
record_ring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record_cpu	*c = arg;

	record_wakeup(c->rec);
}

/* A pass found every cblock of a ring in flight: the ring's data is
 * still there, and a completion may have freed one since. */
static void
record_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record	*rec = arg;

	if (rec->state == RECORD_RUNNING)
		record_wakeup(rec);
}

static void
record_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record	*rec = arg;

	if (rec->state == RECORD_RUNNING)
		record_drain_all(rec, 0);
	record_reap(rec);
	record_check(rec);
	record_hotplug(rec);
}

static void
record_reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	record_reap(arg);
}

int
record_start(struct record *rec, const struct config *cfg,
    struct config_error *err)
{
	struct record_cpu	*c;
	unsigned long		 maxrate;
	uint64_t		 wake;
	int			*cpus = NULL;
	size_t			 i, j, pages = cfg->mmap_pages, first = 0;
	size_t			 ring_bytes;
	struct timeval		 tv;
	char			 msg[256];

	if (rec->state != RECORD_IDLE)
		return config_fail(err, PROTO_E_STATE, NULL,
		    rec->state == RECORD_RUNNING ? "already recording: "
		    "'perfspillctl stop' ends this recording (a start after it "
		    "takes new options), 'perfspillctl configure KEY=VALUE' "
		    "changes settings now" :
		    "still finishing the previous recording");
	/* a cgroup filter keeps a system-wide tracking event first */
	if (cfg->nr_cgroups > 0) {
		if (cfg->nr_events + 1 > CONFIG_MAX_EVENTS)
			return config_fail(err, PROTO_E_BAD_VALUE, "events",
			    "with cgroups at most %d events may be recorded",
			    CONFIG_MAX_EVENTS - 1);
		evsel_parse(&rec->evs[0], "dummy", msg, sizeof(msg));
		first = 1;
	}
	for (i = 0; i < cfg->nr_events; i++)
		if (evsel_parse(&rec->evs[first + i], cfg->events[i], msg,
		    sizeof(msg)) == -1)
			return config_fail(err, PROTO_E_EVENT, "events", "%s",
			    msg);
	if ((cfg->all_cgroups || cfg->nr_cgroups > 0) &&
	    cgroup_mount(rec->cgroupfs, sizeof(rec->cgroupfs)) == -1)
		return config_fail(err, PROTO_E_SYSTEM, cfg->nr_cgroups ?
		    "cgroups" : "all_cgroups", "cannot find the cgroup2 "
		    "mount: %s (perf's cgroup sampling needs the unified "
		    "hierarchy)", strerror(errno));
	if (cfg->compression > 0 && !compress_available())
		return config_fail(err, PROTO_E_BAD_VALUE, "compression",
		    "this perfspilld was built without libzstd; compression "
		    "must be 0");
	maxrate = evsel_max_sample_rate();
	if (cfg->freq && maxrate && cfg->freq > maxrate)
		return config_fail(err, PROTO_E_BAD_VALUE, "freq",
		    "freq %" PRIu64 " Hz is above the kernel's limit "
		    "kernel.perf_event_max_sample_rate=%lu", cfg->freq, maxrate);
	ring_bytes = pages * (size_t)sysconf(_SC_PAGESIZE);
	wake = evsel_wakeup_bytes(cfg, ring_bytes);
	if (cfg->mmap_flush > wake)
		return config_fail(err, PROTO_E_BAD_VALUE, "mmap_flush",
		    "mmap_flush %" PRIu64 " is above the wakeup watermark, "
		    "%" PRIu64 " bytes (wakeup_pct %" PRIu64 " %% of the ring): "
		    "a woken ring would be left to overflow", cfg->mmap_flush,
		    wake, cfg->wakeup_pct);
	rec->cfg = *cfg;
	cblock_queue_writeback(&rec->q, cfg->writeback);
	/*
	 * perf's --mmap-flush: a watermark wakeup drains the rings that hold
	 * at least this much and leaves the others to fill (the tick and the
	 * stop take everything). Fewer, larger writes: on the syscall storm
	 * a quarter of the ring cut the daemon's CPU by a fifth and its own
	 * system calls by a third, with no more loss.
	 */
	rec->min_chunk = cfg->mmap_flush;
	if (rec->min_chunk == 0) {
		rec->min_chunk = ring_bytes / 4;
		if (rec->min_chunk > wake)
			rec->min_chunk = wake;
	}
	rec->round_bytes = 0;
	rec->nr_evs = first + cfg->nr_events;
	rec->paused[0] = '\0';
	rec->bytes_cut = 0;
	rec->files_done = 0;
	rec->files_lost = 0;
	rec->dir_gone = 0;
	rec->problem[0] = '\0';
	if (outdir_gone(rec->dirfd, cfg->output_dir) &&
	    outdir_reopen(rec->dirfd, rec->lockfd, cfg->output_dir) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "the output "
		    "directory %s was removed and is not back: %s (perfspilld "
		    "does not create it while running)", cfg->output_dir,
		    strerror(errno));
	record_retry_unfinished(rec);
	evsel_config(rec->evs, rec->nr_evs, cfg, ring_bytes);

	if (record_online_cpus(&cpus, &rec->nr_cpus) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL,
		    "cannot read the online CPUs (%s): %s",
		    record_online_path(), strerror(errno));
	rec->round_max = (uint64_t)ring_bytes * rec->nr_cpus;
	/* room for every CPU that may come online: cpus never moves */
	rec->cap_cpus = cpuring_possible();
	if (rec->cap_cpus < rec->nr_cpus)
		rec->cap_cpus = rec->nr_cpus;
	rec->cpus_added = rec->cpus_removed = 0;
	for (i = 0; i < CONFIG_MAX_CGROUPS; i++)
		rec->cgfds[i] = -1;
	rec->spec.evs = rec->evs;
	rec->spec.nr_evs = rec->nr_evs;
	rec->spec.cgfds = rec->cgfds;
	rec->spec.nr_cg = 0;
	rec->spec.pages = pages;
	for (i = 0; i < cfg->nr_cgroups; i++) {
		if ((rec->cgfds[i] = cgroup_open(rec->cgroupfs, cfg->cgroups[i],
		    msg, sizeof(msg))) == -1) {
			free(cpus);
			rec->nr_cpus = 0;
			record_close_cgroups(rec);
			return config_fail(err, PROTO_E_BAD_VALUE, "cgroups",
			    "%s", msg);
		}
		rec->spec.nr_cg = i + 1;
	}
	rec->nr_fds = cpuring_nr_fds(&rec->spec);
	free(rec->staged);
	rec->staged = calloc(rec->cap_cpus, sizeof(*rec->staged));
	if (rec->staged == NULL ||
	    (rec->cpus = calloc(rec->cap_cpus, sizeof(*rec->cpus))) == NULL) {
		free(cpus);
		rec->nr_cpus = 0;
		record_close_cgroups(rec);
		return config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
	}
	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		c->rec = rec;
		c->cpu = cpus[i];
		if ((c->fds = malloc(rec->nr_fds * sizeof(int))) == NULL ||
		    (c->ids = calloc(rec->nr_fds, sizeof(uint64_t))) == NULL)
			goto nomem;
		for (j = 0; j < rec->nr_fds; j++)
			c->fds[j] = -1;
	}
	free(cpus);
	cpus = NULL;
	/* from here every failure goes through error:, which undoes it */
	if (record_sched(rec, cfg->realtime) == -1) {
		config_fail(err, PROTO_E_SYSTEM, "realtime",
		    "cannot run the drain at SCHED_FIFO priority %" PRIu64
		    ": %s (needs CAP_SYS_NICE; under systemd also "
		    "RestrictRealtime=no)", cfg->realtime, strerror(errno));
		goto error;
	}
	if (synth_kernel_range("/proc", &rec->ktext, &rec->ketext) == -1)
		goto nomem;
	/* our own samples (the writes of the drain, the AIO threads) stay
	 * out of the trace: the pid of a sample follows its id and ip */
	rec->self_pid = (uint32_t)getpid();
	rec->pid_off = 0;
	if (cfg->exclude_self &&
	    (rec->evs[0].attr.sample_type & PERF_SAMPLE_TID))
		rec->pid_off = sizeof(struct perf_event_header) +
		    ((rec->evs[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER) ?
		    8 : 0) + ((rec->evs[0].attr.sample_type & PERF_SAMPLE_IP) ?
		    8 : 0);
	rec->time_off = perfdata_time_off(rec->evs[0].attr.sample_type);
	free(rec->xbuf);
	rec->xbuf = cblock_buffer(ring_bytes);
	if (rec->xbuf == NULL)
		goto nomem;
	if (cfg->compression > 0) {
		rec->zcap = compress_bound(ring_bytes);
		if ((rec->zc = compress_create(cfg->compression)) == NULL ||
		    (rec->zbuf = cblock_buffer(rec->zcap)) == NULL)
			goto nomem;
	}

	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		if (cpuring_open(&rec->spec, c->cpu, c->fds, c->ids, &c->ring,
		    err) == -1)
			goto error;
		c->ev = event_new(rec->base, c->fds[0], EV_READ | EV_PERSIST,
		    record_ring_cb, c);
		if (c->ev == NULL || event_add(c->ev, NULL) == -1)
			goto nomem;
	}

	/*
	 * The buffers exist before the first drain: making one faults its
	 * pages in (cblock_buffer), too slow while the rings fill. A cblocks
	 * count raised while recording gets its buffers in the drain.
	 */
	for (i = 0; i < rec->nr_cpus; i++)
		if (record_ensure_cblocks(rec, &rec->cpus[i]) == -1)
			goto nomem;
	/*
	 * Task tracking first, then the /proc walk: a task born between the
	 * two is in the rings, and one born before is in /proc. Both is
	 * harmless; perf takes the later name. The rings hold what comes
	 * meanwhile until the loop drains them into the file. Slot 0 of a
	 * CPU is events[0], the one that tracks tasks (cpuring.h).
	 */
	for (i = 0; i < rec->nr_cpus; i++)
		cpuring_enable(rec->cpus[i].fds, 1, 1);
	if (record_open_file(rec) == -1) {
		config_fail(err, PROTO_E_SYSTEM, NULL, "cannot start a trace "
		    "file in the output directory: %s", strerror(errno));
		goto error;
	}
	if (rec->reaper == NULL)
		rec->reaper = evtimer_new(rec->base, record_reaper_cb, rec);
	if (rec->retry == NULL)
		rec->retry = evtimer_new(rec->base, record_retry_cb, rec);
	if (rec->tick == NULL)
		rec->tick = event_new(rec->base, -1, EV_PERSIST, record_tick_cb,
		    rec);
	if (rec->reaper == NULL || rec->retry == NULL || rec->tick == NULL)
		goto nomem;
	tv.tv_sec = (time_t)(cfg->drain_ms / 1000);
	tv.tv_usec = (suseconds_t)(cfg->drain_ms % 1000) * 1000;
	event_add(rec->tick, &tv);

	for (i = 0; i < rec->nr_cpus; i++)
		cpuring_enable(rec->cpus[i].fds + 1, rec->nr_fds - 1, 1);
	rec->state = RECORD_RUNNING;
	rec->life.recordings++;
	rec->started = time(NULL);
	log_info("recording %zu event(s) on %zu cpu(s) into %s", rec->nr_evs,
	    rec->nr_cpus, rec->cur->partial);
	return 0;

nomem:
	config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
error:
	free(cpus);
	record_sched(rec, 0);
	record_close_cpus(rec);
	if (rec->cur == NULL && TAILQ_EMPTY(&rec->closing)) {
		/* nothing in flight: the cblocks may go too */
		record_free_cpus(rec);
	}
	return -1;
}

/*
 * The loop's scheduling while recording. At a high event rate a ring
 * fills in milliseconds; the kernel wakes the loop at the watermark, but
 * under CFS the woken loop may wait behind the very threads that fill the
 * ring, and the ring overflows. SCHED_FIFO runs it at once (perf record
 * -r does the same). glibc's AIO threads, created by this thread, inherit
 * it. Priority 0: back to SCHED_OTHER.
 */
static int
record_sched(struct record *rec, uint64_t prio)
{
	struct sched_param	 sp;

	if (prio == rec->sched_prio)
		return 0;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = (int)prio;
	if (sched_setscheduler(0, prio ? SCHED_FIFO : SCHED_OTHER, &sp) == -1)
		return -1;
	rec->sched_prio = prio;
	return 0;
}

void
record_finish_stop(struct record *rec)
{
	record_stop_cb	 cb = rec->stop_cb;
	void		*arg = rec->stop_arg;

	json_object_put(rec->last_totals);
	rec->last_totals = record_totals(rec);
	/* the daemon's life counters outlive the recording's */
	record_metrics(rec, &rec->life);
	record_free_cpus(rec);
	record_sched(rec, 0);
	record_retry_unfinished(rec);
	if (rec->nr_unfinished > 0 && rec->problem[0] == '\0')
		snprintf(rec->problem, sizeof(rec->problem), "%zu file(s) "
		    "could not be finished for lack of space; they stay "
		    ".partial and are finished when space returns or at the "
		    "next start", rec->nr_unfinished);
	compress_destroy(rec->zc);
	rec->zc = NULL;
	free(rec->zbuf);
	rec->zbuf = NULL;
	if (rec->reaper != NULL)
		event_del(rec->reaper);
	if (rec->retry != NULL)
		event_del(rec->retry);
	if (rec->tick != NULL)
		event_del(rec->tick);
	rec->state = RECORD_IDLE;
	rec->stop_cb = NULL;
	rec->stop_arg = NULL;
	log_info("recording stopped%s%s", rec->last_file[0] ? "; last file " :
	    "", rec->last_file);
	if (cb != NULL)
		cb(rec, rec->last_file[0] ? rec->last_file : NULL, arg);
}

int
record_stop(struct record *rec, record_stop_cb cb, void *arg)
{
	size_t	 i;

	if (rec->state != RECORD_RUNNING)
		return -1;
	record_prep_cancel(rec);
	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].fds != NULL)
			cpuring_enable(rec->cpus[i].fds, rec->nr_fds, 0);
	/* what the kernel wrote before the disable is still in the rings */
	record_drain_last(rec);
	record_close_cpus(rec);
	rec->state = RECORD_STOPPING;
	rec->stop_cb = cb;
	rec->stop_arg = arg;
	rec->last_file[0] = '\0';
	record_retire_file(rec);
	record_reap(rec);
	return 0;
}

void
record_on_file_done(struct record *rec, manifest_file_cb cb, void *arg)
{
	rec->file_cb = cb;
	rec->file_arg = arg;
}

void
record_set_retain_hold(struct record *rec, retain_hold_cb cb, void *arg)
{
	rec->hold_cb = cb;
	rec->hold_arg = arg;
}

const char *
record_file_name(const struct record *rec)
{
	return rec->cur != NULL ? rec->cur->name : NULL;
}

void
record_update(struct record *rec, const struct config *cfg)
{
	/* live keys only; the others wait for the next start */
	config_copy_live(&rec->cfg, cfg);
}

void
record_destroy(struct record *rec)
{
	struct tracefile	*tf;

	if (rec == NULL)
		return;
	record_prep_cancel(rec);
	/* wait out everything in flight: its buffers are about to go */
	cblock_wait_all(&rec->q);
	record_free_cpus(rec);
	free(rec->staged);
	while ((tf = TAILQ_FIRST(&rec->closing)) != NULL) {
		TAILQ_REMOVE(&rec->closing, tf, entry);
		tracefile_free(tf);
	}
	tracefile_free(rec->cur);
	if (rec->reaper != NULL)
		event_free(rec->reaper);
	if (rec->retry != NULL)
		event_free(rec->retry);
	if (rec->tick != NULL)
		event_free(rec->tick);
	json_object_put(rec->last_totals);
	compress_destroy(rec->zc);
	sbuf_finish(&rec->kept);
	free(rec->zbuf);
	free(rec->xbuf);
	buildid_destroy(rec->bids);
	free(rec);
}

/*
 * CPU hotplug. The online list is read at every tick (netlink uevents
 * would need an address family the unit does not allow, and a tick is
 * soon enough: a CPU's first second is worth less than the daemon's
 * confinement).
 *
 * A CPU that went offline is disabled, drained with every ring (its data
 * goes to the current file, in order) and closed; its cblocks are freed
 * only once none of them is in flight. The file keeps its ids: they
 * still name the records already written.
 *
 * A CPU that came online gets a ring with every event, the same settings
 * and cblocks, opened disabled. Its ids must be in the attrs of the file
 * its samples go to, and a pipe-format file names its ids once, in its
 * preamble: so the recording rotates to a new file, whose preamble has
 * them, and only then enables the new CPU. Nothing of the new CPU is in
 * the old file.
 */
static struct record_cpu *
record_cpu_slot(struct record *rec, int cpu)
{
	struct record_cpu	*c;
	size_t			 i;

	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].cpu == cpu)
			return &rec->cpus[i];
	if (rec->nr_cpus == rec->cap_cpus)
		return NULL;
	c = &rec->cpus[rec->nr_cpus];
	memset(c, 0, sizeof(*c));
	c->rec = rec;
	c->cpu = cpu;
	c->offline = 1;
	if ((c->fds = malloc(rec->nr_fds * sizeof(int))) == NULL ||
	    (c->ids = calloc(rec->nr_fds, sizeof(uint64_t))) == NULL) {
		free(c->fds);
		c->fds = NULL;
		return NULL;
	}
	for (i = 0; i < rec->nr_fds; i++)
		c->fds[i] = -1;
	rec->nr_cpus++;
	return c;
}

static void
record_cpu_offline(struct record *rec, struct record_cpu *c)
{
	cpuring_enable(c->fds, rec->nr_fds, 0);
	/* what the kernel wrote before the disable is still in the ring,
	 * which is unmapped next */
	record_drain_last(rec);
	record_close_cpu(rec, c);
	c->offline = 1;
	rec->cpus_removed++;
	log_info("cpu %d went offline: its ring was drained and closed "
	    "(%" PRIu64 " bytes, %" PRIu64 " samples recorded from it)",
	    c->cpu, c->bytes, c->counts.samples);
}

/* Open c, disabled. 0, or -1 (logged; not tried again while online). */
static int
record_cpu_online(struct record *rec, struct record_cpu *c)
{
	struct config_error	 err;

	memset(&err, 0, sizeof(err));
	if (cpuring_open(&rec->spec, c->cpu, c->fds, c->ids, &c->ring,
	    &err) == -1) {
		log_warnx("cpu %d came online, but it cannot be recorded: %s",
		    c->cpu, err.msg);
		goto error;
	}
	c->ev = event_new(rec->base, c->fds[0], EV_READ | EV_PERSIST,
	    record_ring_cb, c);
	if (c->ev == NULL || event_add(c->ev, NULL) == -1 ||
	    record_ensure_cblocks(rec, c) == -1) {
		log_warnx("cpu %d came online, but it cannot be recorded: "
		    "out of memory", c->cpu);
		goto error;
	}
	c->offline = 0;
	return 0;
error:
	record_close_cpu(rec, c);
	c->open_failed = 1;
	return -1;
}

/* The cblocks of closed CPUs, once nothing of theirs is in flight. */
static void
record_free_offline(struct record *rec)
{
	struct record_cpu	*c;
	size_t			 i, j;

	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		if (!c->offline || c->nr_cbs == 0 || c->aio.inflight > 0)
			continue;
		for (j = 0; j < c->nr_cbs; j++)
			cblock_finish(&c->cbs[j]);
		c->nr_cbs = 0;
	}
}

static void
record_hotplug(struct record *rec)
{
	/* at most this many a tick; the others at the next */
	struct record_cpu	*c, *added[64];
	int			*cpus;
	size_t			 n, i, j, nr_added = 0;
	int			 on;

	if (rec->state != RECORD_RUNNING)
		return;
	record_free_offline(rec);
	if (record_online_cpus(&cpus, &n) == -1)
		return;	/* mid-write or unreadable: the next tick sees it */
	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		for (on = 0, j = 0; j < n && !on; j++)
			on = cpus[j] == c->cpu;
		if (!on)
			c->open_failed = 0;	/* try again when it is back */
		if (!on && !c->offline)
			record_cpu_offline(rec, c);
	}
	for (j = 0; j < n && nr_added < sizeof(added) / sizeof(added[0]);
	    j++) {
		for (c = NULL, i = 0; i < rec->nr_cpus && c == NULL; i++)
			if (rec->cpus[i].cpu == cpus[j])
				c = &rec->cpus[i];
		if (c != NULL && (!c->offline || c->open_failed))
			continue;
		if (c == NULL && (c = record_cpu_slot(rec, cpus[j])) == NULL) {
			log_warnx("cpu %d came online, but there is no room "
			    "for it (%zu possible CPUs)", cpus[j],
			    rec->cap_cpus);
			continue;
		}
		if (record_cpu_online(rec, c) == 0)
			added[nr_added++] = c;
	}
	free(cpus);
	if (nr_added == 0)
		return;
	/* a rotation being built has the old ids: build one with the new */
	record_prep_cancel(rec);
	if (rec->cur != NULL && record_rotate(rec, "cpu online") == -1) {
		/* no file would know its ids: close and try again later */
		for (i = 0; i < nr_added; i++) {
			record_close_cpu(rec, added[i]);
			added[i]->offline = 1;
		}
		log_warnx("cannot rotate to a file with the new CPU's ids; "
		    "trying again at the next tick");
		return;
	}
	for (i = 0; i < nr_added; i++) {
		cpuring_enable(added[i]->fds, rec->nr_fds, 1);
		rec->cpus_added++;
		log_info("cpu %d came online: recording it (%zu event fds, "
		    "%" PRIu64 " cblocks)", added[i]->cpu, rec->nr_fds,
		    rec->cfg.cblocks);
	}
}

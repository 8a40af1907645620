/*
 * record is the recording session (see record.h), and the one place
 * that decides for it: start and stop, when to rotate (every trigger
 * ends in record_rotate), when to pause and resume, when a stop is
 * finished, and what CPU hotplug changes. The record-*.c files do the
 * work and report what happened (record-int.h); none of them calls back
 * in here.
 *
 * The rings do not live in the event loop: the drain thread
 * (record-thread.c) watches each ring's fd in an epoll set of its own
 * (the kernel wakes it at the watermark) and drains them, and reads
 * every ring every drain_ms even when no watermark is reached, timed by
 * that same wait (with the direct stream's tail padded on the way,
 * when drain_ms is not longer than direct_tail_ms). The loop owns the
 * session's timers: its tick, which looks at the loop's own duties (CPU
 * hotplug, the pool, the output directory, free space, age rotation,
 * resuming) every RECORD_LOOK_MS and drains itself when no thread runs;
 * the padder of the direct stream's tail when drain_ms is longer; the
 * retry after a pass that found every cblock in flight, and the reaper;
 * and it reads the eventfd on which the drain thread reports a pass that
 * failed a write or filled the file. AIO completions raise no signal
 * (SIGEV_NONE): every drain pass polls the in-flight set first, and the
 * short reaper timer runs only while a finished file still waits for
 * its last writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "perfdata/perfdata.h"
#include "record-int.h"
#include "target.h"
#include "size.h"
#include "synth.h"
#include "trigger.h"
#include "flight.h"
#include "worker.h"

/* CPUs come online that a tick opens, at most (the others at the next). */
#define RECORD_HOTPLUG_MAX	64
/* The loop looks at its own duties this often while it records steadily
 * (record_tick_arm): the periodic drain is the drain thread's. */
#define RECORD_LOOK_MS		5000

static void	record_passed(struct record *, const struct record_pass *);
static size_t	record_hotplug(struct record *, int *, size_t,
		    struct record_cpu **);
static void	record_hotplug_added(struct record *, struct record_cpu **,
		    size_t);
static void	record_reap(struct record *);
static void	record_pause(struct record *, const char *);
static void	record_pause_err(struct record *, int);
static void	record_trigger_fired(const char *, void *);
static void	record_tick_arm(struct record *);

struct record *
record_create(struct event_base *base, int dirfd,
    const struct record_finish_ops *finish, void *finish_ctx)
{
	struct record	*rec;
	char		*p;

	if ((rec = calloc(1, sizeof(*rec))) == NULL)
		return NULL;
	if ((rec->bids = buildid_create()) == NULL) {
		free(rec);
		return NULL;
	}
	if (record_lock_init(rec) != 0) {
		buildid_destroy(rec->bids);
		free(rec);
		return NULL;
	}
	record_thread_init(rec);
	rec->base = base;
	rec->dirfd = dirfd;
	rec->files.finish = finish;
	rec->files.finish_ctx = finish_ctx;
	rec->lockfd = -1;
	TAILQ_INIT(&rec->files.closing);
	TAILQ_INIT(&rec->files.finishing);
	sbuf_init(&rec->kept);
	writer_init(&rec->w);
	record_sink_choose(rec);
	if (gethostname(rec->host, sizeof(rec->host)) == -1)
		snprintf(rec->host, sizeof(rec->host), "localhost");
	rec->host[sizeof(rec->host) - 1] = '\0';
	/* the host goes into file names: keep it to safe characters */
	for (p = rec->host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			*p = '_';
	snprintf(rec->stem, sizeof(rec->stem), "%s", rec->host);
	return rec;
}

void
record_set_name(struct record *rec, const char *name)
{
	snprintf(rec->name, sizeof(rec->name), "%s", name ? name : "");
	snprintf(rec->stem, sizeof(rec->stem), "%s%s%s", rec->host,
	    rec->name[0] ? "-" : "", rec->name);
}

void
record_set_lock(struct record *rec, int lockfd)
{
	rec->lockfd = lockfd;
}

const char *
record_problem(const struct record *rec)
{
	return rec->files.problem[0] ? rec->files.problem : NULL;
}

enum record_state
record_state(const struct record *rec)
{
	return rec->state;
}

const char *
record_busy(const struct record *rec, int hint)
{
	if (rec->state == RECORD_IDLE)
		return NULL;
	if (rec->state != RECORD_RUNNING)
		return "still finishing the previous recording";
	return hint ? "already recording: 'perfspillctl stop' ends this "
	    "recording (a start after it takes new options), 'perfspillctl "
	    "configure KEY=VALUE' changes settings now" : "already recording";
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

/*
 * PERFSPILL_TEST_RINGS_PER_CPU=N lists each online CPU N times: N rings
 * on each, every one of which receives every event of its CPU (a
 * tracepoint's sample goes to each event open on the CPU). A test hook
 * to measure the drain's cost per ring and what one drain thread carries
 * with as many rings as a large machine has (2 CPUs x 96 = 192), on a
 * small one. The memory budget counts them as CPUs.
 */
static int
record_online_cpus(int **out, size_t *nr)
{
	const char	*e = getenv("PERFSPILL_TEST_RINGS_PER_CPU");
	long		 k;
	size_t		 i, j;
	int		*m;

	if (cpuring_read_list(record_online_path(), out, nr) == -1)
		return -1;
	if (e == NULL || (k = strtol(e, NULL, 10)) <= 1 || k > 1024)
		return 0;
	if ((m = reallocarray(NULL, *nr, (size_t)k * sizeof(int))) == NULL) {
		free(*out);
		return -1;
	}
	for (i = 0; i < *nr; i++)
		for (j = 0; j < (size_t)k; j++)
			m[i * (size_t)k + j] = (*out)[i];
	free(*out);
	*out = m;
	*nr *= (size_t)k;
	return 0;
}

int
record_cpus_online(size_t *n)
{
	int	*cpus;

	if (record_online_cpus(&cpus, n) == -1)
		return -1;
	free(cpus);
	return 0;
}

/*
 * Keep of cpus[0..*n) those of the cpus setting (perf record -C), in
 * place: what is left, 0 when none is.
 */
static size_t
record_only_cpus(const struct record *rec, int *cpus, size_t *n)
{
	int	*only;
	size_t	 nonly, i, j, k = 0;

	if (rec->cfg.cpus[0] == '\0' ||
	    cpuring_parse_list(rec->cfg.cpus, &only, &nonly) == -1)
		return *n;
	for (i = 0; i < *n; i++)
		for (j = 0; j < nonly; j++)
			if (cpus[i] == only[j]) {
				cpus[k++] = cpus[i];
				break;
			}
	free(only);
	return *n = k;
}

static void
record_close_cgroups(struct record *rec)
{
	size_t	 i;

	/* thread targets are ids, not fds */
	for (i = 0; i < rec->spec.nr_cg && !rec->spec.tids; i++)
		if (rec->cgfds[i] != -1)
			close(rec->cgfds[i]);
	rec->spec.nr_cg = 0;
	rec->spec.tids = 0;
	free(rec->tids);
	rec->tids = NULL;
}

/* The cblocks of closed CPUs, once nothing of theirs is in flight. */
static void
record_free_offline(struct record *rec)
{
	struct record_cpu	*c;
	size_t			 i;

	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		if (c->offline && c->lane.stats.inflight == 0)
			record_cpu_free_buffers(c);
	}
}

/*
 * The write mode for n cblocks, the buffers the current file's writes
 * need made first (record_cpus_buffers), so that a drain never meets a
 * ring without them. -1, with nothing changed, when memory runs out.
 */
static int
record_set_mode(struct record *rec, uint64_t n)
{
	uint64_t	 was = rec->w.cblocks;

	writer_set_mode(&rec->w, n);
	if (rec->cur != NULL && record_cpus_buffers(rec, rec->cur, n) == -1) {
		writer_set_mode(&rec->w, was);
		return -1;
	}
	record_sink_choose(rec);
	return 0;
}

/*
 * Rotation: the one function every trigger ends in (size and age from
 * here, the rotate command, SIGUSR2, a CPU that came online). wait: the
 * preamble is built in the loop and the new file is current when this
 * returns (a command answers with it; a new CPU is enabled only once a
 * file names its ids); else it is built on a thread while the loop
 * drains on into the old file, and the switch happens when it is ready.
 * 0, or -1 when not recording or the switch failed.
 */
static void	record_prep_ready(evutil_socket_t, short, void *);

/*
 * The switch to p's file, in two parts. Its data part (record_take_over:
 * the old file's last drain, the new file current, the tasks the walk
 * kept) is the drain's: the loop asks a drain thread for it, whose next
 * pass makes it under the lock it takes anyway, and waits for the answer
 * without the lock (record_thread_switch), so that a loop preempted at
 * the normal scheduler holds no drain back. Where no drain thread runs,
 * or where the caller holds the lock (a CPU that came online, in the
 * tick: it counts on the lock across the rotation), the loop makes it
 * itself under the lock, as the tick drains then. The rest is the
 * loop's, unlocked: the old file's close and the log; then, under the
 * lock for a moment, the reaper, or the pause of a file that failed.
 */
static int
record_rotate_switch(struct record *rec, struct record_prep *p)
{
	struct record_switch	 sw;
	int			 gone = 0;

	memset(&sw, 0, sizeof(sw));
	sw.make = record_take_over;
	sw.p = p;
	if (rec->held > 0 || record_thread_switch(rec, &sw) == -1) {
		record_lock(rec);
		record_take_over(rec, &sw);
		record_unlock(rec);
	}
	if (sw.failed != NULL)
		record_closed(rec, sw.failed);
	if (sw.rc == 0) {
		record_test_hold("PERFSPILL_TEST_SWITCH_HOLD",
		    "the old file's close");
		record_closed(rec, sw.old);
		log_info("rotated (%s): now writing %s", record_prep_why(p),
		    tracefile_partial(rec->cur));
		/* the new file's age is the next look's */
		record_tick_arm(rec);
	} else if (sw.pass.err == 0)
		gone = outdir_gone(rec->dirfd, rec->cfg.output_dir);
	record_lock(rec);
	if (sw.rc == 0)
		record_reap(rec);
	else if (sw.pass.err != 0)
		record_pause_err(rec, sw.pass.err);
	else if (gone)
		/* the old file stays open, but has nowhere to be finished */
		record_pause(rec, NULL);
	record_unlock(rec);
	return sw.rc;
}

/*
 * The rotation's first half: what the preamble needs is copied (p), and
 * the drain keeps the task records it reads from now. The copy is made
 * without the drain's lock: what it reads (the events, their ids, the
 * CPUs, the settings) only the loop changes. Only keeping begins under
 * it, before the walk's thread starts (thread creation took 0.1-2.5 ms
 * here under a storm, under the lock before). 1: p is to be run (and
 * switched to); 0: nothing to do (one is being built already, or a
 * thread builds this one); -1: no rotation.
 */
static int
record_rotate_begin(struct record *rec, const char *why, int wait,
    struct record_prep **pp)
{
	struct record_prep	*p;

	if (rec->state != RECORD_RUNNING || rec->cur == NULL)
		return -1;
	if (rec->prep != NULL)
		return 0;	/* one is already being built: it will do */
	if ((p = record_prep_create(rec, why)) == NULL)
		return -1;
	record_lock(rec);
	record_keep_begin(rec);
	/* the switch flushes the old file's build-ids: what waits for the
	 * reader is read meanwhile */
	buildid_hurry(rec->bids);
	record_unlock(rec);
	if (!wait) {
		if (record_prep_spawn(rec, p, record_prep_ready) == 0)
			return 0;
		log_warn("cannot start a rotation thread; rotating in the loop");
	}
	*pp = p;
	return 1;
}

/* Its second half: the switch to p's file. The loop's: it alone
 * changes the state and the current file (or a drain thread it waits
 * for, record_rotate_switch). */
static int
record_rotate_end(struct record *rec, struct record_prep *p)
{
	int	 rc = -1;

	/* paused or stopped meanwhile: the preamble is not wanted now */
	if (rec->state == RECORD_RUNNING && rec->cur != NULL)
		rc = record_rotate_switch(rec, p);
	else {
		record_lock(rec);
		record_keep_end(rec);
		record_unlock(rec);
	}
	record_prep_free(p);
	return rc;
}

/*
 * A rotation that waits (a command's, a live change's) walks /proc in
 * the loop, without the drain's lock: the walk takes tens of
 * milliseconds, and the rings fill meanwhile. Called with the lock held
 * already (a CPU that came online, in the tick; a live change of
 * cblocks), the walk and the switch hold it; the rotations of a timer
 * or a pass (age, size) are asked without it and do not wait: their
 * walk runs on the rotation thread.
 */
int
record_rotate(struct record *rec, const char *why, int wait)
{
	struct record_prep	*p = NULL;
	int			 rc;

	rc = record_rotate_begin(rec, why, wait, &p);
	if (rc != 1)
		return rc;
	record_prep_run(p);
	record_prep_open(rec, p);
	return record_rotate_end(rec, p);
}

static void
record_prep_ready(evutil_socket_t fd, short what, void *arg)
{
	struct record		*rec = arg;
	struct record_prep	*p = record_prep_join(rec);

	record_prep_open(rec, p);
	(void)record_rotate_end(rec, p);
}

/*
 * Snapshots of a flight recording: the command, SIGUSR2 and the triggers
 * all end here. The window is taken and the file created in the loop,
 * the preamble (/proc walk) is built on the rotation thread, and the
 * writes are queued once it is ready (record-flight.c). One snapshot at
 * a time: another asked meanwhile is refused (its window would be the
 * few milliseconds since). A snapshot checks the directory and the space
 * itself (a flight recording has no file to pause): the window stays in
 * memory when it is refused.
 */
static void
record_snapshot_ready(evutil_socket_t fd, short what, void *arg)
{
	struct record		*rec = arg;
	struct record_prep	*p = record_prep_join(rec);

	record_lock(rec);
	if (p == NULL) {
		/* no thread: build it here */
		if ((p = record_prep_create(rec, "snapshot")) != NULL)
			record_prep_run(p);
	}
	if (record_flight_write(rec, p) == -1)
		log_warnx("snapshot failed: its file is given up");
	record_prep_free(p);
	record_reap(rec);
	record_unlock(rec);
}

static int
record_snapshot_take(struct record *rec, const char *why, const char **name,
    struct config_error *err)
{
	struct record_prep	*p;
	uint64_t		 avail;
	const char		*n;

	if (rec->state != RECORD_RUNNING)
		return config_fail(err, PROTO_E_STATE, NULL, "not recording");
	if (rec->flight == NULL)
		return config_fail(err, PROTO_E_STATE, NULL, "not a flight "
		    "recording (mode continuous): rotate finishes its file");
	if (record_window_busy(rec) || rec->prep != NULL)
		return config_fail(err, PROTO_E_STATE, NULL, "a snapshot is "
		    "being written; ask again when it is finished");
	if (outdir_gone(rec->dirfd, rec->cfg.output_dir) &&
	    outdir_reopen(rec->dirfd, rec->lockfd, rec->cfg.output_dir) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "the output "
		    "directory %s is gone: %s; the window stays in memory",
		    rec->cfg.output_dir, strerror(errno));
	if (rec->cfg.min_free && record_free_bytes(rec, &avail) == 0 &&
	    avail < rec->cfg.min_free + record_window_bytes(rec)) {
		record_retain(rec);
		if (record_free_bytes(rec, &avail) == 0 &&
		    avail < rec->cfg.min_free + record_window_bytes(rec))
			return config_fail(err, PROTO_E_SYSTEM, NULL, "no room "
			    "for the window: %" PRIu64 " bytes free, min_free "
			    "%" PRIu64 ", window %" PRIu64 " bytes; it stays "
			    "in memory", avail, rec->cfg.min_free,
			    record_window_bytes(rec));
	}
	if (record_flight_begin(rec, why, &n) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "cannot create "
		    "the snapshot's file in %s: %s", rec->cfg.output_dir,
		    strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &rec->snap_at);
	if (name != NULL)
		*name = n;
	if ((p = record_prep_create(rec, why)) != NULL &&
	    record_prep_spawn(rec, p, record_snapshot_ready) == 0)
		return 0;
	log_warn("cannot start the snapshot's thread; building it in the "
	    "loop");
	record_prep_free(p);
	record_snapshot_ready(-1, 0, rec);
	return 0;
}

/*
 * One asked for (the command, SIGUSR2): not sooner than
 * snapshot_interval after the last, so that a burst of them (a script's
 * loop) cannot fill the disk budget with windows and make retention
 * remove the older files, the always-on history among them. The
 * triggers keep their own trigger_interval; a stop's last window is the
 * recording's end, not a burst.
 */
static int
record_snapshot_locked(struct record *rec, const char *why, const char **name,
    struct config_error *err)
{
	struct timespec	 now;
	uint64_t	 ms, bound = rec->cfg.snapshot_interval * 1000;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (uint64_t)((int64_t)(now.tv_sec - rec->snap_at.tv_sec) * 1000 +
	    (now.tv_nsec - rec->snap_at.tv_nsec) / 1000000);
	if (rec->state == RECORD_RUNNING && rec->flight != NULL &&
	    rec->snap_at.tv_sec != 0 && ms < bound)
		return config_fail(err, PROTO_E_LIMIT, "snapshot_interval",
		    "the last snapshot was %" PRIu64 ".%" PRIu64 " s ago and "
		    "snapshot_interval is %" PRIu64 " s: ask again in %" PRIu64
		    ".%" PRIu64 " s (snapshots in a burst would push the older "
		    "files out of the disk budget)", ms / 1000, ms % 1000 / 100,
		    rec->cfg.snapshot_interval, (bound - ms) / 1000,
		    (bound - ms) % 1000 / 100);
	return record_snapshot_take(rec, why, name, err);
}

int
record_snapshot(struct record *rec, const char *why, const char **name,
    struct config_error *err)
{
	int	 rc;

	record_lock(rec);
	rc = record_snapshot_locked(rec, why, name, err);
	record_unlock(rec);
	return rc;
}

/* A trigger fired: a snapshot, unless one was taken less than
 * trigger_interval ago (the kernel may signal once a window for as long
 * as the pressure lasts). */
static void
record_trigger_fired_locked(const char *why, struct record *rec)
{
	struct config_error	 err;
	struct timespec		 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (rec->snap_at.tv_sec != 0 && now.tv_sec - rec->snap_at.tv_sec <
	    (time_t)rec->cfg.trigger_interval) {
		rec->snap_suppressed++;
		log_debug("%s: within trigger_interval of the last snapshot; "
		    "not taken", why);
		return;
	}
	if (record_snapshot_take(rec, why, NULL, &err) == -1)
		log_warnx("%s fired, but no snapshot: %s", why, err.msg);
	else
		log_info("%s fired: snapshot", why);
}

static void
record_trigger_fired(const char *why, void *arg)
{
	struct record	*rec = arg;

	record_lock(rec);
	record_trigger_fired_locked(why, rec);
	record_unlock(rec);
}

/*
 * A stop's window, once the rings are drained into it and before they
 * close (record_stop): written as a last snapshot, as perf record
 * --overwrite writes its buffer at exit, unless discard; what became of
 * it is kept for the stop's answer.
 */
static void
record_stop_window(struct record *rec, int discard)
{
	struct config_error	 err;
	const char		*name;

	rec->window_end = RECORD_WINDOW_NONE;
	rec->window_why[0] = '\0';
	if (rec->flight == NULL)
		return;
	if (discard) {
		rec->window_end = RECORD_WINDOW_DISCARDED;
		log_info("stop: the flight recording's window (%" PRIu64
		    " bytes) is discarded, as asked", rec->flight->fl.st.bytes);
		return;
	}
	if (rec->flight->fl.st.bytes == 0) {
		rec->window_end = RECORD_WINDOW_EMPTY;
		log_info("stop: the flight recording's window is empty; no "
		    "file");
		return;
	}
	if (record_snapshot_take(rec, "stop", &name, &err) == -1) {
		rec->window_end = RECORD_WINDOW_FAILED;
		snprintf(rec->window_why, sizeof(rec->window_why), "%s",
		    err.msg);
		log_warnx("stop: the flight recording's window is lost: %s",
		    err.msg);
		return;
	}
	rec->window_end = RECORD_WINDOW_WRITTEN;
	log_info("stop: the flight recording's window goes to %s", name);
}

enum record_window_end
record_window_end(const struct record *rec, const char **why)
{
	if (why != NULL)
		*why = rec->window_why;
	return rec->window_end;
}

int
record_is_flight(const struct record *rec)
{
	return rec->flight != NULL;
}

/*
 * The file system refused direct I/O for the current file (at open, or
 * at its first write): said once, and the recording's next files are
 * written through the page cache without asking again.
 */
static void
record_note_direct(struct record *rec)
{
	int	 e;

	if (rec->cur == NULL || rec->direct_refused != 0 ||
	    (e = tracefile_direct_refused(rec->cur)) == 0)
		return;
	rec->direct_refused = e;
	log_warnx("%s: the file system takes no direct I/O (%s); writing "
	    "through the page cache", rec->cfg.output_dir, strerror(e));
}

/*
 * Is the current file at its rotation size? A pass of the drain thread
 * reports on the file it wrote to, and the loop may take its report after
 * a rotation already switched files (the preamble was ready first): that
 * report is about the old file, and rotating the new one for it finished
 * files of a few MB between full ones (issue 40). The size that counts is
 * the current file's own.
 */
static int
record_at_size(const struct record *rec)
{
	return rec->cur != NULL && rec->cfg.rotate_size != 0 &&
	    tracefile_reserved(rec->cur) >= rec->cfg.rotate_size;
}

/*
 * After a pass: a failed write pauses, a file at its size rotates, and
 * rings left for want of a cblock are looked at again after 1 ms, then
 * 2, 4, 8 while their cblocks stay busy.
 */
static void
record_passed(struct record *rec, const struct record_pass *pass)
{
	struct timeval	 tv = { 0, 0 };
	int		 rotate;

	record_lock(rec);
	record_note_direct(rec);
	if (pass->busy > 0 && rec->retry != NULL) {
		if (rec->retry_us < RECORD_RETRY_MIN_US)
			rec->retry_us = RECORD_RETRY_MIN_US;
		tv.tv_usec = rec->retry_us;
		event_add(rec->retry, &tv);
		if (rec->retry_us < RECORD_RETRY_MAX_US)
			rec->retry_us *= 2;
	} else if (pass->busy == 0)
		rec->retry_us = RECORD_RETRY_MIN_US;
	if (pass->err != 0)
		record_pause_err(rec, pass->err);
	rotate = pass->err == 0 && pass->full && record_at_size(rec);
	record_unlock(rec);
	/* its begin takes the lock only where it must (record_rotate_begin) */
	if (rotate)
		record_rotate(rec, "size", 0);
}

static void
record_pass(struct record *rec, uint64_t min)
{
	struct record_pass	 pass;

	record_drain(rec, min, 0, &pass);
	record_passed(rec, &pass);
}

/*
 * A pass of the loop's own (the retry's; the drain thread's passes at a
 * watermark follow the same rule): rings below the minimum chunk wait,
 * and the round stays open until a pass reads them all (record_drain).
 * perf holds an open round in memory to sort it: once it has grown to the
 * size of all the rings, this pass reads every ring.
 */
static void
record_wakeup(struct record *rec)
{
	record_pass(rec, rec->round_bytes >= rec->round_max ? 0 :
	    rec->min_chunk);
}

/* A pass found every cblock of a ring in flight: the ring's data is
 * still there, and a completion may have freed a cblock since. */
static void
record_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record	*rec = arg;

	record_lock(rec);
	if (rec->state == RECORD_RUNNING)
		record_wakeup(rec);
	record_unlock(rec);
}

/*
 * Pause: the current file is cut at its first failed write and finished
 * whole; the rings are still drained and what they hold is counted as
 * dropped until recording resumes. why NULL: the output directory was
 * removed (or renamed away): writes into the open files would still
 * succeed, into inodes no one can reach; look for the directory again
 * with a back-off (it is not created: see outdir.c).
 */
static void
record_pause(struct record *rec, const char *why)
{
	if (why == NULL) {
		if (rec->files.dir_gone)
			return;
		rec->files.dir_gone = 1;
		rec->files.retry_wait = 1;
		rec->files.retry_at = time(NULL) + 1;
		snprintf(rec->files.problem, sizeof(rec->files.problem),
		    "the output directory %s was removed while recording",
		    rec->cfg.output_dir);
		/* a pause for another reason retired the file already */
		rec->paused[0] = '\0';
		why = "output directory removed";
	}
	if (rec->paused[0])
		return;
	snprintf(rec->paused, sizeof(rec->paused), "%s", why);
	log_warnx("paused: %s in %s; the rings are still drained and what "
	    "they hold is counted as dropped until recording resumes",
	    rec->paused, rec->cfg.output_dir[0] ? rec->cfg.output_dir :
	    "the output directory");
	record_retire_file(rec);
	if (!rec->files.dir_gone && record_retain(rec) > 0)
		log_info("retention made room while paused");
	/* a resume is looked for every drain_ms */
	record_tick_arm(rec);
}

/* The current file's writes failed with err. */
static void
record_pause_err(struct record *rec, int err)
{
	record_pause(rec, err == ENOSPC || err == EDQUOT ? "disk full" :
	    strerror(err));
}

/* Space back? Start a fresh file. The margin is one full drain of every
 * ring and a slice of the direct pool, so that the first pass, and the
 * first request, do not fail again at once (a slice of 4 MiB refused
 * whole on a disk with 2.3 MB free: the fresh file got nothing, and its
 * removal let the next resume repeat it). */
static void
record_try_resume(struct record *rec)
{
	uint64_t	 avail, need = rec->cfg.min_free + writer_slice(&rec->w);
	size_t		 i;

	if (rec->files.dir_gone && record_find_dir(rec) == -1)
		return;
	for (i = 0; i < rec->nr_cpus; i++)
		need += rec->spec.pages * (size_t)sysconf(_SC_PAGESIZE);
	if (record_free_bytes(rec, &avail) == -1 || avail < need)
		return;
	record_retry_unfinished(rec);
	if (record_open_file(rec) == -1)
		return;
	log_info("resumed: %" PRIu64 " bytes free; writing %s", avail,
	    tracefile_partial(rec->cur));
	rec->paused[0] = '\0';
}

/*
 * Each tick: the output directory, free space, age rotation, resuming.
 * The loop's, without the drain's lock (a look at the directory, its
 * free space, retention's unlinks take their time on a busy disk); only
 * a pause, a resume and a rotation take it, to change the current file.
 */
static void
record_housekeeping(struct record *rec)
{
	uint64_t	 avail;
	char		 why[96], a[32], m[32];

	if (rec->state != RECORD_RUNNING)
		return;
	/* a flight recording writes nothing until a snapshot, which looks
	 * at the directory and its space itself: nothing to pause */
	if (rec->flight != NULL)
		return;
	if (!rec->files.dir_gone &&
	    outdir_gone(rec->dirfd, rec->cfg.output_dir)) {
		record_lock(rec);
		record_pause(rec, NULL);
		record_unlock(rec);
		return;
	}
	if (rec->paused[0]) {
		record_lock(rec);
		record_try_resume(rec);
		record_unlock(rec);
		return;
	}
	if (rec->cfg.rotate_interval && rec->cur != NULL &&
	    time(NULL) - tracefile_opened(rec->cur) >=
	    (time_t)rec->cfg.rotate_interval)
		record_rotate(rec, "age", 0);
	if (rec->cfg.min_free && record_free_bytes(rec, &avail) == 0 &&
	    avail < rec->cfg.min_free) {
		record_retain(rec);
		if (record_free_bytes(rec, &avail) == 0 &&
		    avail < rec->cfg.min_free) {
			/* retention removed what it could and may remove */
			snprintf(why, sizeof(why), "below min_free: %s free, "
			    "min_free %s", size_format(avail, a, sizeof(a)),
			    size_format(rec->cfg.min_free, m, sizeof(m)));
			record_lock(rec);
			record_pause(rec, why);
			record_unlock(rec);
		}
	}
}

/*
 * The periodic drain of every ring is the drain thread's, timed by its
 * own wait (record-thread.c), with the direct tail's pad every
 * thread.pad_ticks-th time: no wakeup of the loop for it. Where no drain
 * thread runs the loop drains at its tick, every drain_ms, as the
 * thread would.
 */
static void
record_tick_drain(struct record *rec)
{
	int	 pad;

	if (rec->thread.running)
		return;
	pad = record_thread_pad_due(rec, &rec->ticks);
	record_lock(rec);
	record_pass(rec, 0);
	if (pad)
		record_pad_tail(rec);
	record_unlock(rec);
}

/*
 * When the loop looks at its own duties next (record_tick_cb): the CPUs
 * online, the pool's blocks after a burst, the output directory, free
 * space, a file's age, resuming. Recording steadily with its drain
 * thread, every RECORD_LOOK_MS (drain_ms when that is longer): the
 * thread drains by itself, and none of them needs a look a second. A
 * file's age rotation is due at a time known in advance, and the tick
 * comes then, to the second as before. Paused, stopping, or with no
 * drain thread, every drain_ms as before: a resume is looked for as
 * often, a stop's end and the loop's own drain too. later: ms more for
 * the look (the start's, half a drain_ms: the look, which takes the
 * lock, then comes between two of the drain thread's timed passes,
 * which the loop's tick woke after it let go before).
 */
static void
record_tick_arm_later(struct record *rec, uint64_t later)
{
	struct timeval	 tv;
	uint64_t	 ms = rec->cfg.drain_ms, now, at;
	time_t		 s;

	if (rec->tick == NULL || rec->state == RECORD_IDLE)
		return;
	if (rec->state == RECORD_RUNNING && rec->paused[0] == '\0' &&
	    rec->thread.running) {
		if (ms < RECORD_LOOK_MS)
			ms = RECORD_LOOK_MS;
		ms += later;
		/* a rotation being built: its file's age is the next */
		if (rec->cfg.rotate_interval && rec->cur != NULL &&
		    rec->prep == NULL && rec->flight == NULL) {
			s = tracefile_opened(rec->cur) +
			    (time_t)rec->cfg.rotate_interval - time(NULL);
			/* due and not rotated (it failed): again in 1 s */
			if (s < 1)
				s = 1;
			if ((uint64_t)s * 1000 < ms)
				ms = (uint64_t)s * 1000;
		}
	}
	/* armed sooner already: kept (a rotation or a configure every few
	 * seconds must not put the look off for ever) */
	now = worker_now_ns(CLOCK_MONOTONIC);
	at = now + ms * 1000000u;
	if (rec->tick_at != 0 && rec->tick_at <= at)
		return;
	rec->tick_at = at;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	event_add(rec->tick, &tv);
}

static void
record_tick_arm(struct record *rec)
{
	record_tick_arm_later(rec, 0);
}

/*
 * finished/'s look rides on the tick, told how far off the next one is
 * (ms): a look that needs to come more often than the tick (a JIT map's
 * process alive, looked at each second) keeps a timer of its own for
 * the time between, and no other timer wakes the loop or its worker.
 */
static void
record_tick_finish(struct record *rec)
{
	uint64_t	 now, next = rec->cfg.drain_ms;

	if (rec->files.finish->tick == NULL)
		return;
	now = worker_now_ns(CLOCK_MONOTONIC);
	if (rec->tick_at > now)
		next = (rec->tick_at - now + 999999) / 1000000;
	rec->files.finish->tick(rec->files.finish_ctx, next);
}

/*
 * The tick holds the drain's lock once, for what changes the drain's
 * state (the queue reaped, the pool shrunk, CPUs gone or opened), and
 * only for that: the online list is read before (a file in /sys, 30-80
 * us here under a storm), a new CPU's rotation comes after. It arms
 * itself again at its end (record_tick_arm).
 */
static void
record_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record		*rec = arg;
	struct record_cpu	*added[RECORD_HOTPLUG_MAX];
	int			*cpus = NULL;
	size_t			 n = 0, nr_added = 0;

	rec->tick_at = 0;
	/* unreadable (mid-write): the next tick sees it */
	if (rec->state == RECORD_RUNNING &&
	    record_online_cpus(&cpus, &n) == -1)
		cpus = NULL;
	record_lock(rec);
	record_reap(rec);
	/* a burst that is over gives its blocks back */
	writer_shrink(&rec->w);
	if (rec->state == RECORD_RUNNING)
		nr_added = record_hotplug(rec, cpus, n, added);
	record_unlock(rec);
	free(cpus);
	if (nr_added > 0)
		record_hotplug_added(rec, added, nr_added);
	if (rec->state == RECORD_RUNNING)
		record_tick_drain(rec);
	record_housekeeping(rec);
	record_tick_arm(rec);
	record_tick_finish(rec);
}

int
record_flush(struct record *rec, record_flushed_cb cb, void *arg)
{
	uint64_t	 ticket;
	int		 rc = 0;

	record_lock(rec);
	if (rec->state != RECORD_RUNNING || rec->cur == NULL ||
	    rec->paused[0] != '\0' || rec->flight != NULL)
		rc = 1;
	else if ((ticket = record_flush_add(rec, cb, arg)) == 0)
		rc = -1;
	else if (record_thread_flush(rec, ticket) == -1) {
		/* no drain thread: not recording after all */
		record_flush_forget(rec, arg);
		rc = 1;
	}
	record_unlock(rec);
	return rc;
}

void
record_flush_cancel(struct record *rec, void *arg)
{
	record_lock(rec);
	record_flush_forget(rec, arg);
	record_unlock(rec);
}

/* The landed files are finished first, without the drain's lock
 * (record-file.c); then the queue is reaped under it. */
static void
record_reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record	*rec = arg;

	(void)record_finish_files(rec);
	record_lock(rec);
	record_reap(rec);
	record_unlock(rec);
}

static void
record_padder_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record	*rec = arg;

	/* on the drain thread, after a pass over every ring, woken without
	 * the lock (the tick's reason); only a direct file has a tail to
	 * pad (a flight recording has no file) */
	if (rec->state != RECORD_RUNNING || rec->cur == NULL ||
	    !tracefile_direct_on(rec->cur) || record_thread_pad(rec) == 0)
		return;
	record_lock(rec);
	record_pad_tail(rec);
	record_unlock(rec);
}

/* Why call_graph compact cannot record with cfg, or NULL. */
static const char *
record_compact_refused(const struct record *rec, const struct config *cfg)
{
	size_t	 i;

	if (cfg->flight)
		return "writes files: a flight recording's window keeps the "
		    "raw stacks (use call_graph fp or dwarf)";
	if (cfg->compression > 0)
		return "writes its samples uncompressed; compression must be 0";
	if (cfg->cblocks == 0)
		return "needs cblocks (1 or more): serial writes make no copy "
		    "for the worker";
	if (cfg->mmap_flush > 0)
		return "reads every ring at each pass (a process's maps may be "
		    "on any CPU's ring); mmap_flush must be 0";
	if (evsel_user_regs() != UNWIND_X86_64_REGS_MASK)
		return "unwinds x86-64 stacks only";
	for (i = 1; i < rec->nr_evs; i++)
		if (rec->evs[i].attr.type == PERF_TYPE_TRACEPOINT)
			return "samples software and hardware events; a "
			    "tracepoint (here one of the events) carries raw "
			    "data the worker does not rewrite";
	return NULL;
}

/* The events, the settings that only a start checks, the tracking. */
static int
record_check_start(struct record *rec, const struct config *cfg,
    struct config_error *err)
{
	unsigned long	 maxrate;
	uint64_t	 wake;
	size_t		 i, n, ring_bytes;
	char		 msg[256];
	const char	*why;

	if ((why = record_busy(rec, 1)) != NULL)
		return config_fail(err, PROTO_E_STATE, NULL, "%s", why);
	/*
	 * Tasks are tracked by an event of their own (perf record's dummy),
	 * slot 0 of every CPU: it is enabled before the /proc walk and the
	 * sampling events only once the walk's records are queued, so that
	 * no sample comes from a task the file cannot name (one that exits
	 * between the two is in neither, and has no samples either). With a
	 * cgroup filter it is the one event opened system-wide (cpuring.h).
	 */
	evsel_parse(&rec->evs[0], "dummy", msg, sizeof(msg));
	rec->nr_evs = 1;
	for (i = 0; i < cfg->nr_events; i++) {
		if (evsel_parse_list(&rec->evs[rec->nr_evs],
		    RECORD_MAX_EVSELS - rec->nr_evs, &n, cfg->events[i], msg,
		    sizeof(msg)) == -1)
			return config_fail(err, PROTO_E_EVENT, "events", "%s",
			    msg);
		rec->nr_evs += n;
	}
	/* the default recording is the machine's, always on: a deep dive
	 * into some tasks is a session of its own */
	if (config_task_target(cfg) && rec->name[0] == '\0')
		return config_fail(err, PROTO_E_BAD_VALUE, cfg->pids[0] ?
		    "pids" : cfg->tids[0] ? "tids" : "user", "pids, tids and "
		    "user are for a session (start --session NAME -p PID): "
		    "the default recording is system-wide");
	if ((cfg->all_cgroups || cfg->nr_cgroups > 0) &&
	    cgroup_mount(rec->cgroupfs, sizeof(rec->cgroupfs)) == -1)
		return config_fail(err, PROTO_E_SYSTEM, cfg->nr_cgroups ?
		    "cgroups" : "all_cgroups", "cannot find the cgroup2 "
		    "mount: %s (perf's cgroup sampling needs the unified "
		    "hierarchy)", strerror(errno));
	if (cfg->flight && cfg->compression > 0)
		return config_fail(err, PROTO_E_BAD_VALUE, "compression",
		    "a flight recording (mode flight) keeps its window "
		    "uncompressed; compression must be 0");
	if (!cfg->flight && cfg->nr_triggers > 0)
		return config_fail(err, PROTO_E_BAD_VALUE, "triggers",
		    "triggers take snapshots of a flight recording: they need "
		    "mode flight");
	if (cfg->callgraph == CONFIG_CG_COMPACT &&
	    (why = record_compact_refused(rec, cfg)) != NULL)
		return config_fail(err, PROTO_E_BAD_VALUE, "call_graph",
		    "call_graph compact %s", why);
	if (cfg->compression > 0 && !compress_available())
		return config_fail(err, PROTO_E_BAD_VALUE, "compression",
		    "this perfspilld was built without libzstd; compression "
		    "must be 0");
	maxrate = evsel_max_sample_rate();
	if (cfg->freq && maxrate && cfg->freq > maxrate)
		return config_fail(err, PROTO_E_BAD_VALUE, "freq",
		    "freq %" PRIu64 " Hz is above the kernel's limit "
		    "kernel.perf_event_max_sample_rate=%lu", cfg->freq, maxrate);
	ring_bytes = cfg->mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
	wake = evsel_wakeup_bytes(cfg, ring_bytes);
	if (cfg->mmap_flush > wake)
		return config_fail(err, PROTO_E_BAD_VALUE, "mmap_flush",
		    "mmap_flush %" PRIu64 " is above the wakeup watermark, "
		    "%" PRIu64 " bytes (wakeup_pct %" PRIu64 " %% of the ring): "
		    "a woken ring would be left to overflow", cfg->mmap_flush,
		    wake, cfg->wakeup_pct);
	if (outdir_gone(rec->dirfd, cfg->output_dir) &&
	    outdir_reopen(rec->dirfd, rec->lockfd, cfg->output_dir) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "the output "
		    "directory %s was removed and is not back: %s (perfspilld "
		    "does not create it while running)", cfg->output_dir,
		    strerror(errno));
	return 0;
}

/* The recording's own state, from cfg, before anything is opened. */
static void
record_reset(struct record *rec, const struct config *cfg)
{
	size_t	 ring_bytes = cfg->mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
	uint64_t wake = evsel_wakeup_bytes(cfg, ring_bytes);

	rec->cfg = *cfg;
	writer_set_mode(&rec->w, cfg->cblocks);
	record_sink_choose(rec);
	writer_writeback(&rec->w, cfg->writeback);
	/*
	 * perf's --mmap-flush: a watermark wakeup drains the rings that hold
	 * at least this much and leaves the others to fill (the tick and the
	 * stop take everything). Fewer, larger writes: on the syscall storm
	 * a quarter of the ring cut the daemon's CPU by a fifth and its own
	 * system calls by a third, with no more loss.
	 */
	rec->min_chunk = cfg->mmap_flush;
	/*
	 * call_graph compact reads every ring at each pass: the worker
	 * unwinds a pass's samples with the maps of its task records, and
	 * a program that exec'd on one CPU and runs on another has its maps
	 * on a ring that holds too little to be read until the timed pass
	 * (a third to three fifths of a 1.5 s program's stacks stopped at
	 * "no mapping": test_dwarf.py, test_compact_after_a_migration).
	 */
	if (cfg->callgraph == CONFIG_CG_COMPACT)
		rec->min_chunk = 0;
	else if (rec->min_chunk == 0) {
		rec->min_chunk = ring_bytes / 4;
		if (rec->min_chunk > wake)
			rec->min_chunk = wake;
	}
	rec->round_bytes = 0;
	rec->direct_refused = 0;
	rec->paused[0] = '\0';
	rec->files.bytes_cut = 0;
	rec->files.done = 0;
	rec->files.lost = 0;
	rec->files.dir_gone = 0;
	rec->files.problem[0] = '\0';
	rec->cpus_added = rec->cpus_removed = 0;
	evsel_config(rec->evs, rec->nr_evs, cfg, ring_bytes);
	/* our own samples (the writes of the drain, the AIO threads) stay
	 * out of the trace: the pid of a sample follows its id and ip */
	rec->self_pid = (uint32_t)getpid();
	rec->pid_off = cfg->exclude_self ?
	    perfdata_pid_off(rec->evs[0].attr.sample_type) : 0;
	rec->time_off = perfdata_time_off(rec->evs[0].attr.sample_type);
}

/* The drain's own buffers: the copy without our samples, and the
 * compression stream with its serial-mode output. */
static int
record_buffers(struct record *rec)
{
	size_t	 ring_bytes = rec->cfg.mmap_pages * (size_t)sysconf(_SC_PAGESIZE);

	free(rec->xbuf);
	if ((rec->xbuf = cblock_buffer(ring_bytes)) == NULL)
		return -1;
	if (rec->cfg.compression > 0) {
		rec->zcap = compress_bound(ring_bytes);
		if ((rec->zc = compress_create(rec->cfg.compression)) == NULL ||
		    (rec->zbuf = cblock_buffer(rec->zcap)) == NULL)
			return -1;
	}
	return 0;
}

/* The cgroup filter, then every online CPU: events, ring, cblocks. */
static int
record_open_cpus(struct record *rec, struct config_error *err)
{
	int	*cpus = NULL;
	size_t	 i, n;
	char	 msg[256];

	for (i = 0; i < CONFIG_MAX_CGROUPS; i++)
		rec->cgfds[i] = -1;
	rec->spec.evs = rec->evs;
	rec->spec.nr_evs = rec->nr_evs;
	rec->spec.cgfds = rec->cgfds;
	rec->spec.nr_cg = 0;
	rec->spec.tids = 0;
	rec->spec.pages = rec->cfg.mmap_pages;
	for (i = 0; i < rec->cfg.nr_cgroups; i++) {
		if ((rec->cgfds[i] = cgroup_open(rec->cgroupfs,
		    rec->cfg.cgroups[i], msg, sizeof(msg))) == -1)
			return config_fail(err, PROTO_E_BAD_VALUE, "cgroups",
			    "%s", msg);
		rec->spec.nr_cg = i + 1;
	}
	if (config_task_target(&rec->cfg)) {
		if (target_tids(&rec->cfg, "/proc", &rec->tids, &n, msg,
		    sizeof(msg)) == -1)
			return config_fail(err, PROTO_E_BAD_VALUE,
			    rec->cfg.pids[0] ? "pids" : rec->cfg.tids[0] ?
			    "tids" : "user", "%s", msg);
		rec->spec.cgfds = rec->tids;
		rec->spec.nr_cg = n;
		rec->spec.tids = 1;
	}
	rec->nr_fds = cpuring_nr_fds(&rec->spec);
	if (record_online_cpus(&cpus, &n) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL,
		    "cannot read the online CPUs (%s): %s",
		    record_online_path(), strerror(errno));
	if (record_only_cpus(rec, cpus, &n) == 0) {
		free(cpus);
		return config_fail(err, PROTO_E_BAD_VALUE, "cpus", "cpus: "
		    "none of %s is online", rec->cfg.cpus);
	}
	if (record_cpus_alloc(rec, cpus, n) == -1) {
		free(cpus);
		return config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
	}
	free(cpus);
	rec->round_max = (uint64_t)rec->cfg.mmap_pages *
	    (uint64_t)sysconf(_SC_PAGESIZE) * rec->nr_cpus;
	for (i = 0; i < rec->nr_cpus; i++)
		if (record_cpu_open(rec, &rec->cpus[i],
		    err) == -1)
			return -1;
	return 0;
}

/* A flight recording's window and triggers (before any ring is on). */
static int
record_begin_flight(struct record *rec, struct config_error *err)
{
	char	 mnt[CONFIG_PATH_LEN];
	size_t	 i;

	if (!rec->cfg.flight)
		return 0;
	if (record_window_create(rec) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
	record_sink_choose(rec);
	memset(&rec->snap_at, 0, sizeof(rec->snap_at));
	rec->snap_suppressed = 0;
	mnt[0] = '\0';
	for (i = 0; i < rec->cfg.nr_triggers; i++)
		if (rec->cfg.triggers[i].cgroup[0] && mnt[0] == '\0' &&
		    cgroup_mount(mnt, sizeof(mnt)) == -1)
			mnt[0] = '\0';
	if ((rec->triggers = trigger_open(rec->base, &rec->cfg, mnt,
	    record_trigger_fired, rec, err)) == NULL)
		return -1;
	return 0;
}

/* A flight recording's parts, at a stop's end or a failed start. */
static void
record_end_flight(struct record *rec)
{
	trigger_close(rec->triggers);
	rec->triggers = NULL;
	record_window_free(rec);
	record_sink_choose(rec);
}

/*
 * The timers, task tracking, the first file, then the sampling events:
 * tracking first, then the /proc walk, so that a task born between the
 * two is in the rings and one born before is in /proc (both is harmless;
 * perf takes the later name); the rings hold what comes meanwhile until
 * the drain thread drains them into the file.
 */
static int
record_begin(struct record *rec, struct config_error *err)
{
	struct timeval	 tv;
	size_t		 i;

	if (rec->reaper == NULL)
		rec->reaper = evtimer_new(rec->base, record_reaper_cb, rec);
	if (rec->retry == NULL)
		rec->retry = evtimer_new(rec->base, record_retry_cb, rec);
	if (rec->tick == NULL)
		rec->tick = evtimer_new(rec->base, record_tick_cb, rec);
	if (rec->padder == NULL)
		rec->padder = event_new(rec->base, -1, EV_PERSIST,
		    record_padder_cb, rec);
	if (rec->reaper == NULL || rec->retry == NULL || rec->tick == NULL ||
	    rec->padder == NULL)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
	if (record_begin_flight(rec, err) == -1)
		return -1;
	for (i = 0; i < rec->nr_cpus; i++)
		cpuring_enable(rec->cpus[i].fds, 1, 1);
	/* a flight recording has no file until a snapshot: its walk of
	 * /proc goes to the task store */
	if (rec->flight != NULL) {
		if (record_flight_seed(rec) == -1)
			return config_fail(err, PROTO_E_SYSTEM, NULL, "cannot "
			    "walk /proc for the tasks: %s", strerror(errno));
	} else if (record_open_file(rec) == -1)
		return config_fail(err, PROTO_E_SYSTEM, NULL, "cannot start a "
		    "trace file in the output directory: %s", strerror(errno));
	/* the tail is padded every pad_ticks timed passes of the drain
	 * thread, at most direct_tail_ms apart; a drain_ms longer than that
	 * leaves the padder its own timer */
	rec->ticks = 0;
	tv.tv_sec = (time_t)(rec->cfg.direct_tail_ms / 1000);
	tv.tv_usec = (suseconds_t)(rec->cfg.direct_tail_ms % 1000) * 1000;
	if (rec->thread.pad_ticks == 0)
		event_add(rec->padder, &tv);
	for (i = 0; i < rec->nr_cpus; i++)
		cpuring_enable(rec->cpus[i].fds + 1, rec->nr_fds - 1, 1);
	return 0;
}

/*
 * The drain's own buffers, once no recording runs: a ring's worth each,
 * 256 MiB apiece at -m 65536, not to be kept by an idle daemon. glibc
 * keeps freed memory below its mmap threshold in the heap: give it back.
 */
static void
record_free_buffers(struct record *rec)
{
	compress_destroy(rec->zc);
	rec->zc = NULL;
	free(rec->zbuf);
	rec->zbuf = NULL;
	free(rec->xbuf);
	rec->xbuf = NULL;
	malloc_trim(0);
}

/* Undo a start that failed part way: nothing of it stays allocated. */
static void
record_unstart(struct record *rec)
{
	record_thread_stop(rec);
	record_compact_destroy(rec->compact);
	rec->compact = NULL;
	record_sink_choose(rec);
	record_end_flight(rec);
	/* no drain ran: nothing of the CPUs' cblocks is in flight */
	record_cpus_free(rec);
	writer_finish(&rec->w);
	record_close_cgroups(rec);
	record_free_buffers(rec);
}

static int
record_start_locked(struct record *rec, const struct config *cfg,
    struct config_error *err)
{
	if (record_check_start(rec, cfg, err) == -1)
		return -1;
	record_reset(rec, cfg);
	record_retry_unfinished(rec);
	/* before the rings open: they are the thread's to watch. The
	 * default priority is a wish: without CAP_SYS_NICE the drain runs
	 * on the normal scheduler, and status says why */
	rec->thread.refused = 0;
	if (record_thread_start(rec, record_passed) == -1 &&
	    cfg->realtime == CONFIG_REALTIME_DEFAULT &&
	    (errno == EPERM || errno == EINVAL)) {
		rec->thread.refused = errno;
		log_warnx("cannot run the drain thread at SCHED_FIFO %" PRIu64
		    ": %s (needs CAP_SYS_NICE or LimitRTPRIO); it drains "
		    "on the normal "
		    "scheduler, and a saturated machine may then lose events",
		    cfg->realtime, strerror(errno));
		rec->cfg.realtime = 0;
	}
	if (!rec->thread.running &&
	    record_thread_start(rec, record_passed) == -1) {
		if (cfg->realtime)
			config_fail(err, PROTO_E_SYSTEM, "realtime",
			    "cannot run the drain thread at SCHED_FIFO "
			    "priority %" PRIu64 ": %s (needs CAP_SYS_NICE or "
			    "an RLIMIT_RTPRIO that high; under systemd "
			    "LimitRTPRIO= and RestrictRealtime=no)",
			    cfg->realtime, strerror(errno));
		else
			config_fail(err, PROTO_E_SYSTEM, NULL, "cannot start "
			    "the drain thread: %s", strerror(errno));
		goto error;
	}
	if (synth_kernel_range("/proc", &rec->ktext, &rec->ketext) == -1 ||
	    record_buffers(rec) == -1) {
		config_fail(err, PROTO_E_SYSTEM, NULL, "out of memory");
		goto error;
	}
	if (record_open_cpus(rec, err) == -1)
		goto error;
	/* before the first file: its preamble's maps are the worker's */
	if (cfg->callgraph == CONFIG_CG_COMPACT &&
	    (rec->compact = record_compact_create(rec)) == NULL) {
		config_fail(err, PROTO_E_SYSTEM, "call_graph", "cannot start "
		    "the unwinding worker: %s", strerror(errno));
		goto error;
	}
	record_sink_choose(rec);
	if (record_begin(rec, err) == -1)
		goto error;
	rec->state = RECORD_RUNNING;
	record_tick_arm_later(rec, rec->cfg.drain_ms / 2);
	/* finished/'s first look, now: the processes alive as the file
	 * begins are seen before a tick's time passes */
	record_tick_finish(rec);
	rec->life.recordings++;
	rec->started = time(NULL);
	if (rec->flight != NULL)
		log_info("flight recording %zu event(s) on %zu cpu(s): the "
		    "last %" PRIu64 " s (at most %" PRIu64 " bytes) in memory, "
		    "%zu trigger(s)", rec->nr_evs - 1, rec->nr_cpus,
		    rec->cfg.window, rec->cfg.window_bytes,
		    rec->cfg.nr_triggers);
	else
		log_info("recording %zu event(s) on %zu cpu(s) into %s",
		    rec->nr_evs - 1, rec->nr_cpus,
		    tracefile_partial(rec->cur));
	return 0;
error:
	record_unstart(rec);
	return -1;
}

int
record_start(struct record *rec, const struct config *cfg,
    struct config_error *err)
{
	int	 rc;

	record_lock(rec);
	rc = record_start_locked(rec, cfg, err);
	record_unlock(rec);
	return rc;
}

/* Every file of a stop is finished: the recording is over. */
static void
record_finish_stop(struct record *rec)
{
	record_stop_cb	 cb = rec->stop_cb;
	void		*arg = rec->stop_arg;

	/* the counters as the recording ends: the reaper's last
	 * completions, under the lock still */
	record_publish(rec);
	json_object_put(rec->last_totals);
	rec->last_totals = record_totals(rec);
	/* the daemon's life counters outlive the recording's */
	record_metrics(rec, &rec->life);
	record_cpus_free(rec);
	/* nothing is in flight (record_reap) */
	writer_finish(&rec->w);
	record_close_cgroups(rec);
	record_end_flight(rec);
	record_retry_unfinished(rec);
	/* (with a salvage hook they are being finished on its worker, which
	 * logs what fails) */
	if (rec->files.nr_unfinished > 0 &&
	    rec->files.finish->salvage == NULL &&
	    rec->files.problem[0] == '\0')
		snprintf(rec->files.problem, sizeof(rec->files.problem),
		    "%zu file(s) could not be finished for lack of space; "
		    "they stay .partial and are finished when space returns "
		    "or at the next start", rec->files.nr_unfinished);
	record_free_buffers(rec);
	if (rec->reaper != NULL)
		event_del(rec->reaper);
	if (rec->retry != NULL)
		event_del(rec->retry);
	if (rec->tick != NULL)
		event_del(rec->tick);
	rec->tick_at = 0;
	if (rec->padder != NULL)
		event_del(rec->padder);
	rec->state = RECORD_IDLE;
	rec->stop_cb = NULL;
	rec->stop_arg = NULL;
	log_info("recording stopped%s%s", rec->files.last[0] ? "; last file " :
	    "", rec->files.last);
	if (cb != NULL)
		cb(rec, rec->files.last[0] ? rec->files.last : NULL, arg);
}

/*
 * Move closing files on, the drain's lock held; a stop is over once none
 * is left and nothing is in flight. A file whose requests have all
 * landed is finished by the reaper at once, without the lock; the
 * others, and those whose fsync is in flight, are looked at again soon,
 * not at the tick.
 */
static void
record_reap(struct record *rec)
{
	struct timeval	 soon = { 0, 0 }, now = { 0, 0 };
	size_t		 landed, closing = record_reap_files(rec, &landed);
	int		 pending = !TAILQ_EMPTY(&rec->files.finishing);

	record_flush_poll(rec);
	/* a stop's snapshot being built on its thread: its file comes */
	if (rec->state == RECORD_STOPPING && closing == 0 && !pending &&
	    writer_busy(&rec->w) == 0 && rec->prep == NULL &&
	    !record_window_busy(rec))
		record_finish_stop(rec);
	else if (rec->reaper != NULL && (closing > 0 || pending)) {
		/* sooner again after something landed (RECORD_REAP_*) */
		if (landed > 0 || rec->reap_us < RECORD_REAP_MIN_US)
			rec->reap_us = RECORD_REAP_MIN_US;
		soon.tv_usec = rec->reap_us;
		if (rec->reap_us < RECORD_REAP_MAX_US)
			rec->reap_us *= 2;
		event_add(rec->reaper, landed > 0 ? &now : &soon);
	}
}

static int
record_stop_locked(struct record *rec, int discard, record_stop_cb cb,
    void *arg)
{
	struct record_pass	 pass;
	size_t			 i;

	if (rec->state != RECORD_RUNNING)
		return -1;
	/* the stop finishes the file: what a flush waits for is in it */
	record_flush_answer_all(rec);
	/* a snapshot being built is written: its window is taken already */
	if (record_window_busy(rec))
		record_snapshot_ready(-1, 0, rec);
	trigger_close(rec->triggers);
	rec->triggers = NULL;
	record_prep_cancel(rec);
	/* while the events still write: a ring that overflowed says so */
	record_drain_lost(rec, &pass);
	/* the sampling events of every CPU, then the task tracking: a task
	 * born on one CPU may run on another */
	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].fds != NULL)
			cpuring_enable(rec->cpus[i].fds + 1, rec->nr_fds - 1, 0);
	for (i = 0; i < rec->nr_cpus; i++)
		if (rec->cpus[i].fds != NULL)
			cpuring_enable(rec->cpus[i].fds, 1, 0);
	/* what the kernel wrote before the disable is still in the rings;
	 * a failure is in the file (cut there), and the file ends anyway */
	record_drain(rec, 0, 1, &pass);
	rec->files.last[0] = '\0';
	/* its preamble takes the CPUs' ids before they close, and is built
	 * on the thread; the stop ends once the file is whole */
	record_stop_window(rec, discard);
	/* the rings are drained for the last time: their thread ends, and
	 * the unwinding worker, which the last drain waited for */
	record_thread_stop(rec);
	/* its counts stay with the daemon's life */
	if (rec->compact != NULL)
		record_compact_metrics(rec->compact, &rec->life);
	record_compact_destroy(rec->compact);
	rec->compact = NULL;
	record_sink_choose(rec);
	record_cpus_close(rec);
	rec->state = RECORD_STOPPING;
	rec->stop_cb = cb;
	rec->stop_arg = arg;
	/* the stop's end is looked at every drain_ms */
	record_tick_arm(rec);
	record_retire_file(rec);
	record_reap(rec);
	return 0;
}

int
record_stop(struct record *rec, int discard, record_stop_cb cb, void *arg)
{
	int	 rc;

	record_lock(rec);
	rc = record_stop_locked(rec, discard, cb, arg);
	record_unlock(rec);
	return rc;
}

const char *
record_file_name(const struct record *rec)
{
	return rec->cur != NULL ? tracefile_name(rec->cur) : NULL;
}

static void
record_update_locked(struct record *rec, const struct config *cfg)
{
	uint64_t	 was = rec->cfg.cblocks;

	/* live keys only; the others wait for the next start */
	config_copy_live(&rec->cfg, cfg);
	/* rotate_interval is one: the tick comes at the file's new age */
	record_tick_arm(rec);
	if (rec->state != RECORD_RUNNING || rec->cfg.cblocks == was)
		return;
	/* the compact worker takes copies, which serial writes do not make */
	if (rec->cfg.cblocks == 0 && rec->compact != NULL) {
		log_warnx("cblocks 0: call_graph compact needs cblocks; keeping "
		    "%" PRIu64, was);
		rec->cfg.cblocks = was;
		return;
	}
	/* serial writes go from the ring, through the page cache: a direct
	 * file's stream ends first (the next file opens buffered) */
	if (rec->cfg.cblocks == 0 && rec->cur != NULL &&
	    tracefile_direct_on(rec->cur) && (record_prep_cancel(rec),
	    record_rotate(rec, "cblocks 0: serial writes", 1) == -1)) {
		log_warnx("cblocks 0: cannot leave the direct file; keeping "
		    "%" PRIu64, was);
		rec->cfg.cblocks = was;
		return;
	}
	if (record_set_mode(rec, rec->cfg.cblocks) == -1) {
		log_warnx("cblocks %" PRIu64 ": out of memory for the buffers; "
		    "keeping %" PRIu64, rec->cfg.cblocks, was);
		rec->cfg.cblocks = was;
	}
}

void
record_update(struct record *rec, const struct config *cfg)
{
	record_lock(rec);
	record_update_locked(rec, cfg);
	record_unlock(rec);
}

void
record_destroy(struct record *rec)
{
	struct tracefile	*tf;

	if (rec == NULL)
		return;
	record_thread_free(rec);
	record_prep_cancel(rec);
	record_end_flight(rec);
	/* wait out everything in flight: its buffers are about to go */
	writer_wait_all(&rec->w);
	record_cpus_free(rec);
	writer_finish(&rec->w);
	record_close_cgroups(rec);
	while ((tf = TAILQ_FIRST(&rec->files.closing)) != NULL) {
		tracefile_list_remove(&rec->files.closing, tf);
		tracefile_free(tf);
	}
	while ((tf = TAILQ_FIRST(&rec->files.finishing)) != NULL) {
		tracefile_list_remove(&rec->files.finishing, tf);
		tracefile_free(tf);
	}
	tracefile_free(rec->cur);
	if (rec->reaper != NULL)
		event_free(rec->reaper);
	if (rec->retry != NULL)
		event_free(rec->retry);
	if (rec->tick != NULL)
		event_free(rec->tick);
	if (rec->padder != NULL)
		event_free(rec->padder);
	json_object_put(rec->last_totals);
	compress_destroy(rec->zc);
	sbuf_finish(&rec->kept);
	free(rec->zbuf);
	free(rec->xbuf);
	buildid_destroy(rec->bids);
	pthread_mutex_destroy(&rec->lock);
	free(rec);
}

/*
 * CPU hotplug. The online list is read at every tick, every
 * RECORD_LOOK_MS while recording steadily (netlink uevents would need an
 * address family the unit does not allow, and that is soon enough: a
 * CPU's first seconds are worth less than the daemon's confinement and
 * a wakeup of the loop a second).
 *
 * A CPU that went offline is disabled, drained with every ring (its data
 * goes to the current file, in order) and closed; its cblocks are freed
 * only once none of them is in flight. The file keeps its ids: they
 * still name the records already written.
 *
 * A CPU that came online gets a ring with every event, the same settings
 * and cblocks, opened disabled. Its ids must be in the attrs of the file
 * its samples go to, which names its ids once, in its head: so the
 * recording rotates to a new file, whose head has them, and only then
 * enables the new CPU. Nothing of the new CPU is in the old file.
 */
static void
record_cpu_offline(struct record *rec, struct record_cpu *c)
{
	struct record_pass	 pass;

	cpuring_enable(c->fds, rec->nr_fds, 0);
	/* what the kernel wrote before the disable is still in the ring,
	 * which is unmapped next */
	record_drain(rec, 0, 1, &pass);
	record_cpu_close(rec, c);
	c->offline = 1;
	rec->cpus_removed++;
	log_info("cpu %d went offline: its ring was drained and closed "
	    "(%" PRIu64 " bytes, %" PRIu64 " samples recorded from it)",
	    c->cpu, c->bytes, c->counts.samples);
	record_passed(rec, &pass);
}

/*
 * The tick's look at the online CPUs (cpus, n: NULL when unreadable),
 * under the lock: the closed CPUs' cblocks freed, the CPUs gone offline
 * closed, those come online opened, disabled, into added (at most
 * RECORD_HOTPLUG_MAX a tick; the others at the next). Their number.
 */
static size_t
record_hotplug(struct record *rec, int *cpus, size_t n,
    struct record_cpu **added)
{
	struct record_cpu	*c;
	struct config_error	 err;
	size_t			 i, j, nr_added = 0;
	int			 on;

	record_free_offline(rec);
	if (cpus == NULL)
		return 0;
	record_only_cpus(rec, cpus, &n);
	for (i = 0; i < rec->nr_cpus && rec->state == RECORD_RUNNING; i++) {
		c = &rec->cpus[i];
		for (on = 0, j = 0; j < n && !on; j++)
			on = cpus[j] == c->cpu;
		if (!on)
			c->open_failed = 0;	/* try again when it is back */
		if (!on && !c->offline)
			record_cpu_offline(rec, c);
	}
	for (j = 0; j < n && nr_added < RECORD_HOTPLUG_MAX &&
	    rec->state == RECORD_RUNNING; j++) {
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
		memset(&err, 0, sizeof(err));
		if (record_cpu_open(rec, c, &err) == -1) {
			log_warnx("cpu %d came online, but it cannot be "
			    "recorded: %s", c->cpu, err.msg);
			c->open_failed = 1;
			continue;
		}
		added[nr_added++] = c;
	}
	return nr_added;
}

/*
 * The CPUs the tick opened, after it let go of the lock: the rotation to
 * a file whose head names their ids walks /proc and switches as any
 * command's does, without the lock (the drain threads drain on into the
 * old file meanwhile, and the new CPUs' rings, disabled, hold nothing);
 * then they are enabled, under it.
 */
static void
record_hotplug_added(struct record *rec, struct record_cpu **added,
    size_t nr_added)
{
	size_t	 i;
	int	 rc = 0;

	/* a rotation being built has the old ids: build one with the new */
	record_prep_cancel(rec);
	if (rec->cur != NULL)
		rc = record_rotate(rec, "cpu online", 1);
	record_lock(rec);
	if (rc == -1) {
		/* no file would know its ids: close and try again later */
		for (i = 0; i < nr_added; i++) {
			record_cpu_close(rec, added[i]);
			added[i]->offline = 1;
		}
		log_warnx("cannot rotate to a file with the new CPU's ids; "
		    "trying again at the next tick");
		record_unlock(rec);
		return;
	}
	for (i = 0; i < nr_added; i++) {
		cpuring_enable(added[i]->fds, rec->nr_fds, 1);
		rec->cpus_added++;
		log_info("cpu %d came online: recording it (%zu event fds, "
		    "%" PRIu64 " cblocks)", added[i]->cpu, rec->nr_fds,
		    rec->cfg.cblocks);
	}
	record_unlock(rec);
}

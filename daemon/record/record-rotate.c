/*
 * record-rotate makes the next file. Its preamble is built on a worker
 * thread while the drain threads keep draining into the old file (or in
 * the loop, for a start or a command), and the file is created by the
 * loop, without the drain's lock. Then the switch takes it over: the old
 * file gets what the rings hold, the new one the tasks born meanwhile.
 * The switch is the drain's work (record_take_over): a drain thread's
 * pass makes it at the loop's request, under the lock the pass takes
 * anyway, while the loop waits without it (record.c,
 * record_rotate_switch); the loop closes the old file after.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "record-int.h"
#include "synth.h"
#include "track.h"
#include "worker.h"

/* How long a rotation waits, at most, for a full ring's LOST record. */
#define RECORD_LOST_WAIT_US	5000
#define RECORD_LOST_STEP_US	250

/*
 * A preamble in the making. Everything synth reads from the daemon is
 * copied in here, so that a rotation can build it on a thread while the
 * loop keeps draining the rings into the old file: reading /proc takes
 * tens of milliseconds, longer than a small ring lasts at a high rate.
 */
struct record_prep {
	struct record		*rec;
	/* each event's attr; with call_graph compact its unwound twin */
	struct synth_event	 sev[2 * RECORD_MAX_EVSELS];
	struct synth_ctx	 ctx;
	uint64_t		*ids;
	int			*cpus;
	char			 cmdline[512];
	struct sbuf		 sb;
	struct sbuf		 bids;		/* the build-ids sb's MMAP2s carry */
	struct compress		*zc;		/* the stream the tasks began */
	struct synth_span	 tasks;		/* their records, in sb */
	uint32_t		*tids;		/* the tasks it names, sorted */
	size_t			 nr_tids;
	int			 rc;
	int			 err;
	const char		*why;
	pthread_t		 th;
	int			 pipe[2];
	struct event		*ev;
	struct tracefile	*tf;		/* the new file, made unlocked */
};

void
record_prep_free(struct record_prep *p)
{
	if (p == NULL)
		return;
	if (p->ev != NULL)
		event_free(p->ev);
	if (p->pipe[0] != -1)
		close(p->pipe[0]);
	if (p->pipe[1] != -1)
		close(p->pipe[1]);
	sbuf_finish(&p->sb);
	sbuf_finish(&p->bids);
	compress_destroy(p->zc);
	/* made, but never switched to (paused or stopped meanwhile) */
	tracefile_discard(p->tf);
	free(p->tids);
	free(p->ids);
	free(p->cpus);
	free(p);
}

/*
 * call_graph compact: beside each of the nr events, the attr of its
 * unwound samples (record-compact.c): no registers or stack, the user
 * callchain its own, the kernel's ids with RECORD_COMPACT_ID_BIT, put
 * in p->ids after the n there. The number of attrs added.
 */
static size_t
record_prep_unwound(struct record_prep *p, size_t nr, size_t n)
{
	struct synth_event	*u;
	size_t			 i, j;

	for (i = 0; i < nr; i++) {
		u = &p->sev[nr + i];
		*u = p->sev[i];
		u->attr.sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER |
		    PERF_SAMPLE_STACK_USER);
		u->attr.sample_regs_user = 0;
		u->attr.sample_stack_user = 0;
		u->attr.exclude_callchain_user = 0;
		u->ids = &p->ids[n];
		for (j = 0; j < p->sev[i].nr_ids; j++)
			p->ids[n++] = p->sev[i].ids[j] | RECORD_COMPACT_ID_BIT;
	}
	return nr;
}

struct record_prep *
record_prep_create(struct record *rec, const char *why)
{
	struct record_prep	*p;
	struct synth_event	*sev;
	size_t			 i, j, k, n = 0, nr_cpus = 0;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->rec = rec;
	p->why = why;
	p->pipe[0] = p->pipe[1] = -1;
	sbuf_init(&p->sb);
	sbuf_init(&p->bids);
	p->ids = calloc(2 * rec->nr_fds * rec->nr_cpus, sizeof(*p->ids));
	p->cpus = calloc(rec->nr_cpus, sizeof(*p->cpus));
	if (p->ids == NULL || p->cpus == NULL) {
		record_prep_free(p);
		return NULL;
	}
	for (i = 0; i < rec->nr_evs; i++) {
		p->sev[i].attr = rec->evs[i].attr;
		p->sev[i].name = rec->evs[i].name;
		p->sev[i].tp_system = rec->evs[i].tp_system[0] ?
		    rec->evs[i].tp_system : NULL;
		p->sev[i].tp_name = rec->evs[i].tp_name[0] ?
		    rec->evs[i].tp_name : NULL;
		p->sev[i].leader_off = rec->evs[i].leader_off;
	}
	/* the ids of the CPUs open now; slots of an event are consecutive */
	for (k = 0; k < rec->nr_fds; k++) {
		sev = &p->sev[cpuring_slot_event(&rec->spec, k)];
		if (sev->ids == NULL)
			sev->ids = &p->ids[n];
		for (j = 0; j < rec->nr_cpus; j++)
			/* an fd of a target thread gone at the start is
			 * -1, and has no id */
			if (rec->cpus[j].fds != NULL && !rec->cpus[j].offline &&
			    rec->cpus[j].fds[k] != -1) {
				p->ids[n++] = rec->cpus[j].ids[k];
				sev->nr_ids++;
			}
	}
	for (j = 0; j < rec->nr_cpus; j++)
		if (rec->cpus[j].fds != NULL && !rec->cpus[j].offline)
			p->cpus[nr_cpus++] = rec->cpus[j].cpu;
	config_cmdline(&rec->cfg, p->cmdline, sizeof(p->cmdline));
	p->ctx.events = p->sev;
	p->ctx.nr_events = rec->nr_evs;
	if (rec->compact != NULL)
		p->ctx.nr_events += record_prep_unwound(p, rec->nr_evs, n);
	p->ctx.cpus = p->cpus;
	p->ctx.nr_cpus = nr_cpus;
	p->ctx.cgroupfs = rec->cfg.all_cgroups ? rec->cgroupfs : NULL;
	p->ctx.cmdline = p->cmdline;
	p->ctx.tracefs = evsel_tracefs();
	p->ctx.procfs = "/proc";
	p->ctx.kernel_text = rec->ktext;
	p->ctx.kernel_etext = rec->ketext;
	if (rec->zc != NULL) {
		p->ctx.comp_level = rec->cfg.compression;
		/* perf decompresses each record into a buffer of this size */
		p->ctx.comp_mmap_len = (uint32_t)(rec->spec.pages *
		    (size_t)sysconf(_SC_PAGESIZE));
	}
	return p;
}

/*
 * With compression the tasks' records, most of a preamble, go compressed
 * too, into a stream of the preamble's own that the new file's ring data
 * then continues (record_install adopts it): one file, one zstd stream,
 * as perf reads it. perf decompresses each record into a buffer of the
 * file's mmap_len, so the input goes in pieces no larger. Any failure
 * leaves the records plain, and the file starts a fresh stream.
 */
static void
record_prep_compress(struct record_prep *p, const struct synth_span *tasks)
{
	struct sbuf	 out;
	uint8_t		*buf;
	size_t		 cap, n, off, piece, used = 0;

	if (p->ctx.comp_level <= 0 || tasks->len == 0 ||
	    (p->zc = compress_create(p->ctx.comp_level)) == NULL)
		return;
	cap = compress_bound(tasks->len) + tasks->len / p->ctx.comp_mmap_len *
	    compress_bound(0);
	sbuf_init(&out);
	if ((buf = malloc(cap)) == NULL)
		goto fail;
	for (off = 0; off < tasks->len; off += piece) {
		piece = tasks->len - off;
		if (piece > p->ctx.comp_mmap_len)
			piece = p->ctx.comp_mmap_len;
		if ((n = compress_records(p->zc, buf + used, cap - used,
		    p->sb.data + tasks->off + off, piece, NULL, 0)) == 0)
			goto fail;
		used += n;
	}
	if (sbuf_append(&out, p->sb.data, tasks->off) == NULL ||
	    sbuf_append(&out, buf, used) == NULL ||
	    sbuf_append(&out, p->sb.data + tasks->off + tasks->len,
	    p->sb.len - tasks->off - tasks->len) == NULL)
		goto fail;
	sbuf_finish(&p->sb);
	p->sb = out;
	free(buf);
	return;
fail:
	sbuf_finish(&out);
	free(buf);
	compress_destroy(p->zc);
	p->zc = NULL;
}

/* Touches nothing but p: runs on the rotation thread. */
void
record_prep_run(struct record_prep *p)
{
	struct synth_span	 tasks;

	p->rc = synth_preamble(&p->sb, &p->ctx, &tasks);
	p->tasks = tasks;
	p->err = errno;
	if (p->rc != 0)
		return;
	/* before the tasks may go compressed; no build-ids is no failure */
	if (buildid_preamble(&p->bids, p->sb.data + tasks.off, tasks.len) ==
	    -1)
		sbuf_finish(&p->bids);
	/* without the list a rotation repeats every FORK it kept */
	if (track_tids(p->sb.data + tasks.off, tasks.len, &p->tids,
	    &p->nr_tids) == -1)
		p->nr_tids = 0;
	record_prep_compress(p, &tasks);
}

uint8_t *
record_prep_head(struct record_prep *p, struct tracefile *tf, size_t *len)
{
	uint8_t	*buf;

	if (p->rc == -1) {
		errno = p->err;
		return NULL;
	}
	buf = sbuf_take(&p->sb, len);
	if (tracefile_set_head(tf, buf, *len) == -1) {
		free(buf);
		return NULL;
	}
	/* the build_id feature: the kernel's (set_head took it from the
	 * head), then those of the files the preamble's tasks map; the
	 * drain adds the rest until the file closes */
	if (tracefile_add_buildids(tf, p->bids.data, p->bids.len) == -1)
		log_warnx("%s: out of memory for build-ids",
		    tracefile_partial(tf));
	return buf;
}

const uint8_t *
record_prep_tasks(const struct record_prep *p, size_t *len)
{
	if (p->rc == -1 || p->zc != NULL) {
		*len = 0;
		return NULL;
	}
	*len = p->tasks.len;
	return p->sb.data + p->tasks.off;
}

size_t
record_prep_drop_forks(const struct record_prep *p, uint8_t *buf, size_t len)
{
	return track_drop_forks(buf, len, p->tids, p->nr_tids);
}

/* A new trace file, past the page cache where the file system allows
 * it, only with cblocks: the serial mode writes from the ring. */
static struct tracefile *
record_prep_file(struct record *rec)
{
	record_test_hold("PERFSPILL_TEST_CREATE_HOLD", "a new file's creation");
	return tracefile_open(rec->dirfd, rec->stem, &rec->seq,
	    rec->cfg.direct_io && rec->cfg.cblocks > 0 &&
	    rec->direct_refused == 0);
}

/*
 * The new file of a rotation is made before the switch takes the drain's
 * lock: creating it (openat with O_CREAT, then its direct descriptor)
 * waits for the file system's journal, 0.15 to 1 ms here on an idle disk
 * and more on a busy one, and every millisecond the switch holds the
 * lock the rings fill without a drain (a storm's 512 KiB ring in 4 ms).
 * What fails here is tried once more under the lock, which says why.
 */
void
record_prep_open(struct record *rec, struct record_prep *p)
{
	if (p != NULL && p->rc != -1 && p->tf == NULL)
		p->tf = record_prep_file(rec);
}

/*
 * Make p's preamble the start of a new current file. A file made but
 * failed (no memory for its buffers, its preamble not written) is left
 * in *failed for the loop to close (record_closed): the caller may be a
 * drain thread's switch.
 */
static int
record_install_file(struct record *rec, struct record_prep *p,
    struct tracefile **failed)
{
	struct tracefile	*tf;
	uint8_t	*buf;
	size_t	 len;
	int	 rc;

	*failed = NULL;
	if (p->rc == -1) {
		errno = p->err;
		log_warn("cannot build the trace file preamble");
		return -1;
	}
	tf = p->tf;
	p->tf = NULL;
	if (tf == NULL && (tf = record_prep_file(rec)) == NULL) {
		log_warn("cannot create a trace file in the output directory");
		return -1;
	}
	record_set_file(rec, tf);
	/* its buffers (record_cpus_buffers): a direct file's pool, or the
	 * rings' own cblocks for a buffered one */
	if (writer_copies(&rec->w) && record_cpus_buffers(rec, rec->cur,
	    rec->cfg.cblocks) == -1) {
		log_warnx("%s: out of memory for the drain's buffers",
		    tracefile_partial(rec->cur));
		tracefile_failed(rec->cur, 0, ENOMEM);
		*failed = rec->cur;
		record_set_file(rec, NULL);
		errno = ENOMEM;
		return -1;
	}
	/* a new file is a new zstd stream: it must decode alone; the
	 * preamble's compressed tasks are its beginning */
	if (p->zc != NULL) {
		compress_destroy(rec->zc);
		rec->zc = p->zc;
		p->zc = NULL;
	} else if (rec->zc != NULL)
		compress_reset(rec->zc);
	if ((buf = record_prep_head(p, rec->cur, &len)) == NULL)
		rc = -1;
	else
		rc = record_write_extra(rec, rec->cur, buf, len, NULL);
	if (rc == -1) {
		log_warn("%s: writing the preamble",
		    tracefile_partial(rec->cur));
		/* a file without its preamble is useless: finish it empty */
		tracefile_failed(rec->cur, 0, errno ? errno : EIO);
		*failed = rec->cur;
		record_set_file(rec, NULL);
	}
	return rc;
}

int
record_install(struct record *rec, struct record_prep *p)
{
	struct tracefile	*failed;
	int			 rc;

	rc = record_install_file(rec, p, &failed);
	if (failed != NULL)
		record_closed(rec, failed);
	return rc;
}

/* Build and install a file here, in the loop (start, resume, command). */
int
record_open_file(struct record *rec)
{
	struct record_prep	*p;
	int			 rc;

	if ((p = record_prep_create(rec, NULL)) == NULL)
		return -1;
	record_prep_run(p);
	rc = record_install(rec, p);
	record_prep_free(p);
	return rc;
}

/*
 * A file's last drain, and the loss it may hide. A ring that the drain
 * found full may have dropped records since. The kernel says so with a
 * LOST record, but only when it next writes to the ring: at a rotation,
 * in the new file, while the damage (samples of a thread whose FORK was
 * dropped) is in the old one, which would not say so; at a stop, never,
 * once the events are disabled. Wait a little for the kernel to write
 * again to such a ring, and drain it into the file once more (and, kept
 * at a rotation, into the new one: a task born in the loss lives on
 * there, unnamed too).
 *
 * The wait is bounded (RECORD_LOST_WAIT_US, and only while a ring the
 * last pass found full stays quiet), and made where the switch is made:
 * on the drain thread that takes a rotation's switch, or in the loop (a
 * stop, or a switch where no drain thread runs). Either lets go of the
 * lock while it sleeps (record_sleep), so that the other drain threads
 * drain on meanwhile. A timer instead would make the switch
 * asynchronous, and a rotation's callers count on it being done when it
 * returns (the rotate command answers with the new file; a CPU that came
 * online is enabled only once a file names its ids).
 */
void
record_drain_lost(struct record *rec, struct record_pass *pass)
{
	struct timespec		 step = { 0, RECORD_LOST_STEP_US * 1000L };
	struct record_cpu	*c;
	size_t			 i, full, quiet;
	unsigned int		 us;

	record_drain(rec, 0, 1, pass);
	/* a storm may fill a small ring again meanwhile: drain again */
	for (us = 0; us < RECORD_LOST_WAIT_US && pass->err == 0;
	    us += RECORD_LOST_STEP_US) {
		for (i = full = quiet = 0; i < rec->nr_cpus; i++) {
			c = &rec->cpus[i];
			if (c->ring.base == NULL || !c->full)
				continue;
			full++;
			if (ring_head(&c->ring) == ring_tail(&c->ring))
				quiet++;
		}
		if (full == 0)
			return;
		if (quiet == 0)
			record_drain(rec, 0, 1, pass);
		else
			record_sleep(rec, &step);
	}
	if (pass->err == 0)
		record_drain(rec, 0, 1, pass);
}

/*
 * The switch's data part, to a new file whose preamble sw->p holds. What
 * the rings hold now goes to the old file first: it happened before the
 * new preamble's walk of /proc ended, and a task that has exited since
 * is named only in the old file. The new file is whole-ready (preamble
 * queued) before the old one stops taking data: every record goes to
 * one file, none to both. All of it is the drain's state, under the
 * lock; the old file's close (record_closed), its log and its finish
 * are the loop's, after.
 */
void
record_take_over(struct record *rec, struct record_switch *sw)
{
	struct record_prep	*p = sw->p;
	struct tracefile	*old = rec->cur;
	uint8_t			*buf;
	size_t			 len;

	sw->rc = -1;
	sw->old = NULL;
	sw->failed = NULL;
	record_drain_lost(rec, &sw->pass);
	rec->keeping = 0;
	if (sw->pass.err != 0 || old == NULL) {
		record_keep_end(rec);
		return;		/* the old file failed: no file to leave */
	}
	record_set_file(rec, NULL);
	if (record_install_file(rec, p, &sw->failed) == -1) {
		record_keep_end(rec);
		record_set_file(rec, old);
		return;
	}
	/* the tasks born during the walk, right after the preamble; their
	 * times sort them among the samples. Not the FORK of a task the
	 * preamble names: perf would replace it by a copy of its parent */
	rec->kept.len = track_drop_forks(rec->kept.data, rec->kept.len,
	    p->tids, p->nr_tids);
	if (rec->kept.len > 0 && rec->cur != NULL) {
		buf = sbuf_take(&rec->kept, &len);
		if (record_write_extra(rec, rec->cur, buf, len, NULL) == -1)
			log_warn("%s: writing the tasks born during its /proc "
			    "walk", tracefile_partial(rec->cur));
	}
	record_keep_end(rec);
	record_detach_file(rec, old);
	sw->old = old;
	sw->rc = 0;
}

static void *
record_prep_thread(void *arg)
{
	struct record_prep	*p = arg;
	char			 c = 1;

	record_prep_run(p);
	/* wake the loop; it joins us */
	if (write(p->pipe[1], &c, 1) != 1)
		p->rc = -1;
	return NULL;
}

/*
 * Build p off the loop: the preamble's /proc walk takes tens of
 * milliseconds, and never at the loop's real-time priority, which would
 * hold off everything else (worker.h). cb (arg: rec) runs in the loop
 * once it is built; record_prep_join then hands it over. 0 or -1.
 */
int
record_prep_spawn(struct record *rec, struct record_prep *p,
    event_callback_fn cb)
{
	if (pipe2(p->pipe, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (p->ev = event_new(rec->base, p->pipe[0], EV_READ, cb, rec)) ==
	    NULL || event_add(p->ev, NULL) == -1 ||
	    worker_spawn(&p->th, record_prep_thread, p) != 0)
		return -1;
	rec->prep = p;
	return 0;
}

struct record_prep *
record_prep_join(struct record *rec)
{
	struct record_prep	*p = rec->prep;

	if (p != NULL)
		pthread_join(p->th, NULL);
	rec->prep = NULL;
	return p;
}

const char *
record_prep_why(const struct record_prep *p)
{
	return p->why;
}

/* A pending rotation's thread is joined and its work dropped; keeping
 * ends under the lock (the caller's, or its own). */
void
record_prep_cancel(struct record *rec)
{
	record_prep_free(record_prep_join(rec));
	record_lock(rec);
	record_keep_end(rec);
	record_unlock(rec);
}

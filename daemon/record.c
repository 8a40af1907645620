/*
 * record: the recording session (see record.h).
 *
 * Every fd of the session lives in the one event loop: a read event per
 * ring (the kernel wakes it at the watermark) and a periodic tick that
 * drains even when no watermark is reached. AIO completions raise no
 * signal (SIGEV_NONE): every drain pass polls the in-flight set first,
 * and a short reaper timer runs only while a finished file still waits
 * for its last writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "buildid.h"
#include "cblock.h"
#include "cgroup.h"
#include "compress.h"
#include "cpuring.h"
#include "evsel.h"
#include "log.h"
#include "manifest.h"
#include "metrics.h"
#include "outdir.h"
#include "record.h"
#include "retain.h"
#include "ring.h"
#include "salvage.h"
#include "sbuf.h"
#include "size.h"
#include "synth.h"
#include "tracefile.h"
#include "worker.h"
#include "track.h"

/* perf's user-space record types (tools/perf/util/event.h) */
#define REC_FINISHED_ROUND	68

/* A pass's FINISHED_ROUND rides at the end of its last chunk. */
#define ROUND_LEN	sizeof(struct perf_event_header)
/* Seconds between looks for a removed output directory, at most. */
#define RECORD_RETRY_MAX	16
/* How long a rotation waits, at most, for a full ring's LOST record. */
#define RECORD_LOST_WAIT_US	5000
#define RECORD_LOST_STEP_US	250

struct record_cpu {
	struct record		*rec;
	int			 cpu;
	int			*fds;		/* one per slot; fds[0] owns the ring */
	uint64_t		*ids;		/* their kernel ids */
	int			 offline;	/* closed: the CPU went offline */
	int			 open_failed;	/* ...or could not be opened */
	struct ring		 ring;
	struct event		*ev;
	struct cblock		 cbs[CONFIG_CBLOCKS_MAX];
	size_t			 nr_cbs;	/* allocated; only cfg.cblocks are used */
	struct cblock_stats	 aio;
	struct ring_counts	 counts;
	uint64_t		 bytes;		/* drained from the ring */
	int			 full;		/* ...last time: it may have lost */
};

#define RECORD_UNFINISHED_MAX	8

struct record {
	struct event_base	*base;
	int			 dirfd;
	char			 host[64];
	unsigned int		 seq;
	enum record_state	 state;
	struct config		 cfg;
	struct evsel		 evs[CONFIG_MAX_EVENTS];
	size_t			 nr_evs;
	struct record_cpu	*cpus;		/* never moves: AIO points in */
	size_t			 nr_cpus;	/* ever opened this recording */
	size_t			 cap_cpus;	/* the possible CPUs */
	struct cblock		**staged;	/* one pass's chunks, cap_cpus */
	struct cpuring_spec	 spec;		/* what each CPU opens */
	size_t			 nr_fds;	/* ...fds per CPU */
	int			 cgfds[CONFIG_MAX_CGROUPS]; /* -G filter */
	char			 cgroupfs[CONFIG_PATH_LEN]; /* cgroup2 mount */
	uint64_t		 cpus_added;	/* CPU hotplug, this recording */
	uint64_t		 cpus_removed;
	struct record_prep	*prep;		/* a rotation being prepared */
	struct sbuf		 kept;		/* its walk's task records */
	int			 keeping;	/* ...drained since it began */
	struct cblock_queue	 q;
	struct cblock_stats	 heap_stats;	/* preambles */
	struct tracefile	*cur;
	struct tracefile_list	 closing;
	struct buildid		*bids;		/* the daemon's life, not a start's */
	uint64_t		 ktext, ketext;	/* kernel text, read once a start */
	uint32_t		 self_pid;	/* our samples are not written... */
	size_t			 pid_off;	/* ...found here; 0: keep them */
	size_t			 time_off;	/* of a sample's time; 0: none */
	uint8_t			*xbuf;		/* a drain without our samples */
	uint64_t		 sched_prio;	/* the loop's SCHED_FIFO, or 0 */
	uint64_t		 min_chunk;	/* bytes a wakeup drains at least */
	uint64_t		 round_bytes;	/* written since the last round */
	uint64_t		 round_max;	/* ...before a wakeup takes all */
	int			 switching;	/* record_take_over's last drain */
	struct event		*reaper;	/* polls completions while closing */
	struct compress		*zc;		/* NULL: files are not compressed */
	uint8_t			*zbuf;		/* serial mode's compression output */
	size_t			 zcap;
	struct event		*tick;
	time_t			 started;
	uint64_t		 files_done;
	uint64_t		 bytes_cut;	/* written, then cut off a failed file */
	char			 paused[128];	/* why recording is paused, or "" */
	int			 lockfd;	/* the output directory's lock */
	int			 dir_gone;	/* paused: the directory was removed */
	time_t			 retry_at;	/* ...look for it again then */
	unsigned int		 retry_wait;	/* ...seconds, doubling */
	uint64_t		 files_lost;	/* finished where no one sees them */
	/* .partial files a full disk left without header and features:
	 * finished when space returns, or by salvage at the next start */
	char			 unfinished[RECORD_UNFINISHED_MAX][NAME_MAX + 1];
	size_t			 nr_unfinished;
	char			 problem[CONFIG_PATH_LEN + 128]; /* for stop, or "" */
	json_object		*last_totals;	/* of the previous recording */
	struct metrics		 life;	/* recordings before this one */
	char			 last_file[NAME_MAX + 1];
	record_stop_cb		 stop_cb;
	void			*stop_arg;
	record_file_cb		 file_cb;	/* each file finished */
	void			*file_arg;
	record_finished_cb	 fin_cb;	/* ...with its facts */
	void			*fin_arg;
	retain_hold_cb		 hold_cb;	/* files retention must keep */
	void			*hold_arg;
};

static void	record_drain_all(struct record *, uint64_t);
static void	record_retry_unfinished(struct record *);
static void	record_count_file(struct tracefile *,
		    const struct ring_counts *, const struct ring_counts *);
static void	record_reap(struct record *);
static void	record_pause(struct record *, int err);
static void	record_pause_why(struct record *, const char *);
static void	record_dir_gone(struct record *);
static void	record_check(struct record *);
static void	record_rotate_async(struct record *, const char *);
static int	record_ensure_cblocks(struct record *, struct record_cpu *);
static int	record_sched(struct record *, uint64_t);
static int	record_take_over(struct record *, struct record_prep *,
		    const char *);
static json_object *record_totals(struct record *);
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
	cblock_queue_init(&rec->q, 0);
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

static void
record_ring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct record_cpu	*c = arg;

	struct record		*rec = c->rec;

	/*
	 * A watermark wakeup: rings below the minimum chunk wait, and the
	 * round stays open until a pass reads them all (record_drain_all).
	 * perf holds an open round in memory to sort it: once it has grown
	 * to the size of all the rings, this pass reads every ring.
	 */
	record_drain_all(rec, rec->round_bytes >= rec->round_max ? 0 :
	    rec->min_chunk);
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

/* The sample times of ring data in two pieces (a wrap may cut a record
 * in two: its time is not looked for). */
static void
record_mark(struct record *rec, struct tracefile_mark *m,
    const uint8_t *const src[2], const size_t l[2])
{
	struct perf_event_header	 h;
	size_t				 pos, have;

	pos = perfdata_sample_times(src[0], l[0], rec->time_off, &m->first,
	    &m->last);
	if (l[1] == 0)
		return;
	if ((have = l[0] - pos) == 0) {
		perfdata_sample_times(src[1], l[1], rec->time_off, &m->first,
		    &m->last);
		return;
	}
	if (have < sizeof(h)) {
		memcpy(&h, src[0] + pos, have);
		memcpy((uint8_t *)&h + have, src[1], sizeof(h) - have);
	} else
		memcpy(&h, src[0] + pos, sizeof(h));
	if (h.size >= have && h.size - have <= l[1])
		perfdata_sample_times(src[1] + (h.size - have),
		    l[1] - (h.size - have), rec->time_off, &m->first,
		    &m->last);
}

/* Write bytes that are not ring data (the preamble) to tf; takes buf. */
static int
record_write_extra(struct record *rec, struct tracefile *tf, uint8_t *buf,
    size_t len)
{
	struct cblock	*cb;
	uint64_t	 off = tracefile_reserve(tf, len, NULL);
	int		 rc;

	if (rec->cfg.cblocks == 0) {
		rc = tracefile_pwrite(tf, off, buf, len);
		free(buf);
		return rc;
	}
	if ((cb = cblock_create_heap(buf, len, &rec->heap_stats)) == NULL) {
		free(buf);
		return -1;
	}
	return cblock_submit(&rec->q, cb, tf, off);
}

/*
 * A preamble in the making. Everything synth reads from the daemon is
 * copied in here, so that a rotation can build it on a thread while the
 * loop keeps draining the rings into the old file: reading /proc takes
 * tens of milliseconds, longer than a small ring lasts at a high rate.
 */
struct record_prep {
	struct record		*rec;
	struct synth_event	 sev[CONFIG_MAX_EVENTS];
	struct synth_ctx	 ctx;
	uint64_t		*ids;
	int			*cpus;
	char			 cmdline[512];
	struct sbuf		 sb;
	struct sbuf		 bids;		/* the build-ids sb's MMAP2s carry */
	struct compress		*zc;		/* the stream the tasks began */
	uint32_t		*tids;		/* the tasks it names, sorted */
	size_t			 nr_tids;
	int			 rc;
	int			 err;
	const char		*why;
	pthread_t		 th;
	int			 pipe[2];
	struct event		*ev;
};

static void
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
	free(p->tids);
	free(p->ids);
	free(p->cpus);
	free(p);
}

static struct record_prep *
record_prep_create(struct record *rec)
{
	struct record_prep	*p;
	struct synth_event	*sev;
	size_t			 i, j, k, n = 0, nr_cpus = 0;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->rec = rec;
	p->pipe[0] = p->pipe[1] = -1;
	sbuf_init(&p->sb);
	sbuf_init(&p->bids);
	p->ids = calloc(rec->nr_fds * rec->nr_cpus, sizeof(*p->ids));
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
	}
	/* the ids of the CPUs open now; slots of an event are consecutive */
	for (k = 0; k < rec->nr_fds; k++) {
		sev = &p->sev[cpuring_slot_event(&rec->spec, k)];
		if (sev->ids == NULL)
			sev->ids = &p->ids[n];
		for (j = 0; j < rec->nr_cpus; j++)
			if (rec->cpus[j].fds != NULL && !rec->cpus[j].offline) {
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
static void
record_prep_run(struct record_prep *p)
{
	struct synth_span	 tasks;

	p->rc = synth_preamble(&p->sb, &p->ctx, &tasks);
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

/* Make p's preamble the start of a new current file. */
static int
record_install(struct record *rec, struct record_prep *p)
{
	uint8_t	*buf;
	size_t	 len;
	int	 rc;

	if (p->rc == -1) {
		errno = p->err;
		log_warn("cannot build the trace file preamble");
		return -1;
	}
	if ((rec->cur = tracefile_open(rec->dirfd, rec->host, &rec->seq)) ==
	    NULL) {
		log_warn("cannot create a trace file in the output directory");
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
	buf = sbuf_take(&p->sb, &len);
	/* a file cut inside its preamble holds nothing worth keeping */
	rec->cur->header_len = len;
	if (tracefile_set_head(rec->cur, buf, len) == -1) {
		free(buf);
		rc = -1;
	} else {
		/* the build_id feature: the kernel's (set_head took it from
		 * the head), then those of the files the preamble's tasks
		 * map; the drain adds the rest until the file closes */
		if (p->bids.len > 0 && sbuf_append(&rec->cur->buildids,
		    p->bids.data, p->bids.len) == NULL)
			log_warnx("%s: out of memory for build-ids",
			    rec->cur->partial);
		rc = record_write_extra(rec, rec->cur, buf, len);
	}
	if (rc == -1) {
		log_warn("%s: writing the preamble", rec->cur->partial);
		/* a file without its preamble is useless: finish it empty */
		tracefile_failed(rec->cur, 0, errno ? errno : EIO);
		tracefile_close(rec->cur, NULL, NULL);
		TAILQ_INSERT_TAIL(&rec->closing, rec->cur, entry);
		rec->cur = NULL;
	}
	return rc;
}

/* Build and install a file here, in the loop (start, resume, command). */
static int
record_open_file(struct record *rec)
{
	struct record_prep	*p;
	int			 rc;

	if ((p = record_prep_create(rec)) == NULL)
		return -1;
	record_prep_run(p);
	rc = record_install(rec, p);
	record_prep_free(p);
	return rc;
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
		    rec->state == RECORD_RUNNING ? "already recording" :
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
	wake = (uint64_t)ring_bytes * cfg->wakeup_pct / 100;
	if (cfg->mmap_flush > wake)
		return config_fail(err, PROTO_E_BAD_VALUE, "mmap_flush",
		    "mmap_flush %" PRIu64 " is above the wakeup watermark, "
		    "%" PRIu64 " bytes (wakeup_pct %" PRIu64 " %% of the ring): "
		    "a woken ring would be left to overflow", cfg->mmap_flush,
		    wake, cfg->wakeup_pct);
	rec->cfg = *cfg;
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

	/* the buffers exist before the first drain, not during it */
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
	if (rec->tick == NULL)
		rec->tick = event_new(rec->base, -1, EV_PERSIST, record_tick_cb,
		    rec);
	if (rec->reaper == NULL || rec->tick == NULL)
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

static int
record_ensure_cblocks(struct record *rec, struct record_cpu *c)
{
	size_t	 want = rec->cfg.cblocks;

	while (c->nr_cbs < want) {
		if (cblock_init(&c->cbs[c->nr_cbs], (rec->zc ? rec->zcap :
		    c->ring.size) + ROUND_LEN,
		    (int)c->nr_cbs) == -1)
			return -1;
		c->cbs[c->nr_cbs].stats = &c->aio;
		c->nr_cbs++;
	}
	return 0;
}

/*
 * While a rotation's preamble walks /proc, the task records drained into
 * the old file are kept for the new one too (track.h): a task born after
 * the walk passed it is named there and nowhere else.
 */
static void
record_keep_begin(struct record *rec)
{
	rec->kept.len = 0;
	rec->keeping = 1;
}

static void
record_keep_end(struct record *rec)
{
	rec->keeping = 0;
	rec->kept.len = 0;
}

static void
record_keep(struct record *rec, const uint8_t *data, size_t size,
    uint64_t from, uint64_t to)
{
	if (!rec->keeping)
		return;
	if (track_copy(&rec->kept, data, size, from, to) == -1) {
		log_warnx("out of memory keeping task records for the next "
		    "file; tasks born during its /proc walk may go unnamed");
		record_keep_end(rec);
	}
}

/*
 * One pass over every ring. perf's ordering rule: at a FINISHED_ROUND it
 * sorts and flushes everything up to the newest time it had seen at the
 * previous one. So a round may only close after a pass that read every
 * ring up to the head it saw: an event left behind in a ring (below min,
 * or all its cblocks busy) would arrive after perf had flushed newer ones,
 * a FORK or COMM after the samples that need it. Such a pass writes no
 * FINISHED_ROUND; its data belongs to the round the next full pass closes.
 */
static void
record_drain_all(struct record *rec, uint64_t min)
{
	struct cblock		**staged = rec->staged;
	struct record_cpu	*c;
	struct ring_span	 sp;
	struct ring_counts	 before;
	struct perf_event_header round = { REC_FINISHED_ROUND, 0,
	    ROUND_LEN };
	struct cblock		*cb;
	struct tracefile_mark	 mark;
	struct iovec		 iov[2];
	uint64_t		 head, tail, off;
	int64_t			 n;
	size_t			 i, nstaged = 0, nserial = 0, ncb, len, l[2];
	size_t			 bogus;
	size_t			 left = 0;	/* non-empty rings not read */
	uint64_t		 drained = 0;
	const uint8_t		*src[2];
	int			 k;
	struct tracefile	*tf = rec->cur;

	if (rec->state != RECORD_RUNNING)
		return;
	/* completions are polled: aio_error reads memory, no system call */
	cblock_reap(&rec->q);
	for (i = 0; i < rec->nr_cpus; i++) {
		c = &rec->cpus[i];
		if (c->ring.base == NULL)
			continue;
		head = ring_head(&c->ring);
		tail = ring_tail(&c->ring);
		c->full = track_ring_full(c->ring.size, head - tail);
		if (head == tail)
			continue;
		if (head - tail < min) {
			left++;
			continue;
		}
		if ((n = ring_span(head, tail, c->ring.size, &sp)) < 0) {
			log_warnx("cpu %d: ring head %" PRIu64 " and tail %"
			    PRIu64 " are inconsistent; skipping its data",
			    c->cpu, head, tail);
			ring_release(&c->ring, head);
			continue;
		}
		before = c->counts;
		c->bytes += (uint64_t)n;
		bogus = buildid_note_ring(rec->bids, c->ring.data, c->ring.size,
		    tail, head, rec->cfg.kernel_build_id);
		ncb = rec->cfg.cblocks;
		if (tf == NULL || ncb == 0 ||
		    record_ensure_cblocks(rec, c) == -1) {
			/* paused or serial: read the records in the ring */
			ring_count_excl(c->ring.data, c->ring.size, tail, head,
			    &c->counts, rec->self_pid, rec->pid_off);
		}
		if (tf == NULL) {
			/* paused: keep the ring moving, count what is dropped */
			c->aio.bytes_dropped += (uint64_t)n;
			ring_release(&c->ring, head);
			continue;
		}
		if (ncb == 0 || c->nr_cbs < ncb) {
			/* serial: write from the ring (or a copy without our
			 * own samples), then release it */
			src[0] = c->ring.data + sp.off[0];
			l[0] = sp.len[0];
			src[1] = c->ring.data + sp.off[1];
			l[1] = sp.len[1];
			if (c->counts.self != before.self || bogus) {
				l[0] = ring_copy_excl(&c->ring, tail, head,
				    rec->xbuf, rec->self_pid, rec->pid_off);
				src[0] = rec->xbuf;
				l[1] = 0;
				if (bogus)
					buildid_repair(rec->xbuf, l[0],
					    rec->cfg.kernel_build_id);
			}
			/* a rotation's tracking records: from the copy where
			 * there is one, whose build-id flags are repaired */
			if (src[0] == rec->xbuf)
				record_keep(rec, rec->xbuf, l[0], 0, l[0]);
			else
				record_keep(rec, c->ring.data, c->ring.size,
				    tail, head);
			mark.samples = c->counts.samples - before.samples;
			mark.first = mark.last = 0;
			record_mark(rec, &mark, src, l);
			if (rec->zc != NULL && l[0] + l[1] > 0 &&
			    (len = compress_records(rec->zc, rec->zbuf,
			    rec->zcap, src[0], l[0], src[1], l[1])) > 0) {
				src[0] = rec->zbuf;
				l[0] = len;
				l[1] = 0;
			}
			len = l[0] + l[1];
			off = tracefile_reserve(tf, len, &mark);
			iov[0].iov_base = (void *)(uintptr_t)src[0];
			iov[0].iov_len = l[0];
			iov[1].iov_base = (void *)(uintptr_t)src[1];
			iov[1].iov_len = l[1];
			if (tracefile_pwritev(tf, off, iov, 2) == -1)
				c->aio.bytes_dropped += len;
			else
				c->aio.bytes_written += len;
			ring_release(&c->ring, head);
			record_count_file(tf, &c->counts, &before);
			drained += len;
			nserial++;
			continue;
		}
		/* take a free cblock; wait only when all are in flight */
		if ((k = cblock_pick(c->cbs, ncb)) == -1) {
			cblock_wait(&rec->q, c->cbs, ncb);
			if ((k = cblock_pick(c->cbs, ncb)) == -1) {
				/* the data stays in the ring for next time */
				c->bytes -= (uint64_t)n;
				left++;
				continue;
			}
		}
		cb = &c->cbs[k];
		/*
		 * Copy first, then count and drop our own samples in the copy
		 * while it is in the cache; compression happens here too, into
		 * the cblock: the AIO path stays the same, with fewer bytes.
		 */
		ring_copy(&c->ring, &sp, rec->zc ? rec->xbuf : cb->buf);
		if (bogus)
			buildid_repair(rec->zc ? rec->xbuf : cb->buf, (size_t)n,
			    rec->cfg.kernel_build_id);
		/* the copy is ours: give the space back to the kernel now */
		ring_release(&c->ring, head);
		len = ring_filter_buf(rec->zc ? rec->xbuf : cb->buf, (size_t)n,
		    &c->counts, rec->self_pid, rec->pid_off);
		record_count_file(tf, &c->counts, &before);
		if (len == 0)
			continue;	/* only our own samples */
		record_keep(rec, rec->zc ? rec->xbuf : cb->buf, len, 0, len);
		cb->len = len;
		cb->mark.samples = c->counts.samples - before.samples;
		cb->mark.first = cb->mark.last = 0;
		perfdata_sample_times(rec->zc ? rec->xbuf : cb->buf, len,
		    rec->time_off, &cb->mark.first, &cb->mark.last);
		if (rec->zc != NULL && (cb->len = compress_records(rec->zc,
		    cb->buf, cb->cap - ROUND_LEN, rec->xbuf, len, NULL,
		    0)) == 0) {
			memcpy(cb->buf, rec->xbuf, len);
			cb->len = len;
		}
		cb->busy = 1;	/* staged: not pickable until submitted */
		staged[nstaged++] = cb;
		drained += cb->len;
	}
	if (nstaged == 0 && nserial == 0)
		return;
	if (left > 0)
		rec->round_bytes += drained;
	else if (nstaged > 0) {
		cb = staged[nstaged - 1];
		memcpy(cb->buf + cb->len, &round, ROUND_LEN);
		cb->len += ROUND_LEN;
		rec->round_bytes = 0;
	} else {
		off = tracefile_reserve(tf, ROUND_LEN, NULL);
		tracefile_pwrite(tf, off, &round, ROUND_LEN);
		rec->round_bytes = 0;
	}
	for (i = 0; i < nstaged; i++) {
		cb = staged[i];
		cb->busy = 0;
		off = tracefile_reserve(tf, cb->len, &cb->mark);
		if (cblock_submit(&rec->q, cb, tf, off) == -1)
			log_warn("%s: aio_write", tf->partial);
	}
	if (tf->bad_off != UINT64_MAX)
		record_pause(rec, tf->err);
	else if (rec->cfg.rotate_size && tf->reserved >= rec->cfg.rotate_size)
		record_rotate_async(rec, "size");
}

/* What a drain of one ring (counts, was before) put into tf. */
static void
record_count_file(struct tracefile *tf, const struct ring_counts *now,
    const struct ring_counts *before)
{
	tf->samples += now->samples - before->samples;
	tf->lost += now->lost - before->lost;
	tf->lost_samples += now->lost_samples - before->lost_samples;
}

/*
 * The files a full disk left unfinished, finished now that there may be
 * room for their header and features (salvage's way: the build-ids
 * learnt while recording are not in them). Those that still fail stay
 * listed; past the list's end, salvage at the next start takes them.
 */
static void
record_retry_unfinished(struct record *rec)
{
	size_t	 i, kept = 0;

	for (i = 0; i < rec->nr_unfinished; i++) {
		if (salvage_file(rec->dirfd, rec->unfinished[i]) == 0) {
			rec->files_done++;
			continue;
		}
		if (kept != i)
			memcpy(rec->unfinished[kept], rec->unfinished[i],
			    sizeof(rec->unfinished[i]));
		kept++;
	}
	rec->nr_unfinished = kept;
}

static void
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

/* Hand a finished file's facts on (the manifest, the hand-off): before
 * retention, which must know its hand-off holds it. */
static void
record_file_facts(struct record *rec, const struct tracefile *tf)
{
	struct manifest_facts	 f;

	if (rec->fin_cb == NULL)
		return;
	memset(&f, 0, sizeof(f));
	f.name = tf->name;
	f.host = rec->host;
	f.seq = tf->seq;
	/* what the finished file holds: a cut drops what followed it */
	f.bytes = tf->size;
	f.samples = tf->kept.samples;
	f.lost = tf->lost;
	f.lost_samples = tf->lost_samples;
	f.time_first = tf->kept.first;
	f.time_last = tf->kept.last;
	f.opened = tf->opened;
	f.finished = time(NULL);
	f.cfg = &rec->cfg;
	f.buildids = tf->buildids.data;
	f.buildids_len = tf->buildids.len;
	rec->fin_cb(&f, rec->fin_arg);
}

/* Retention, with what it removed counted for the daemon's metrics. */
static int
record_retain(struct record *rec)
{
	int	 n;

	n = retain_enforce(rec->dirfd, rec->cfg.max_files, rec->cfg.max_size,
	    rec->cfg.min_free, rec->hold_cb, rec->hold_arg);
	if (n > 0)
		rec->life.files_removed += (uint64_t)n;
	return n;
}

static void
record_file_done(struct tracefile *tf, void *arg)
{
	struct record	*rec = arg;

	if (tf->bad_off != UINT64_MAX)
		rec->bytes_cut += tf->reserved - tf->bad_off;
	if (tf->removed) {
		log_warnx("%s: nothing recorded could be written (%s at "
		    "offset %" PRIu64 "); removed", tf->partial,
		    strerror(tf->err), tf->bad_off);
		if (rec->file_cb != NULL)
			rec->file_cb(tf->name, 0, rec->file_arg);
		return;
	}
	if (tf->unfinished) {
		if (rec->nr_unfinished < RECORD_UNFINISHED_MAX)
			snprintf(rec->unfinished[rec->nr_unfinished++],
			    NAME_MAX + 1, "%s", tf->partial);
		if (rec->file_cb != NULL)
			rec->file_cb(tf->name, 0, rec->file_arg);
		return;
	}
	if (faccessat(rec->dirfd, tf->name, F_OK, AT_SYMLINK_NOFOLLOW) == -1) {
		/* renamed into a directory no one can reach, or not at all */
		rec->bytes_cut += tf->bad_off != UINT64_MAX ? tf->bad_off :
		    tf->reserved;
		rec->files_lost++;
		snprintf(rec->problem, sizeof(rec->problem), "the output "
		    "directory %s was removed while recording: %" PRIu64
		    " file(s) lost, their bytes counted as dropped",
		    rec->cfg.output_dir, rec->files_lost);
		log_warnx("%s is lost with the output directory (%" PRIu64
		    " bytes, %" PRIu64 " samples)", tf->name, tf->reserved,
		    tf->samples);
		return;
	}
	snprintf(rec->last_file, sizeof(rec->last_file), "%s", tf->name);
	rec->files_done++;
	/* what the file holds: a cut drops the samples after it */
	log_info("finished %s (%" PRIu64 " bytes, %" PRIu64 " samples)",
	    tf->name, tf->size, tf->kept.samples);
	record_file_facts(rec, tf);
	if (record_retain(rec) == -1)
		log_warn("retention: cannot scan the output directory");
	if (rec->file_cb != NULL)
		rec->file_cb(tf->name, 1, rec->file_arg);
}

/*
 * The build-ids of the files tf's tasks mapped, for its build_id feature,
 * written when the file is finished. Only the last file of a recording
 * waits (a bounded time, rings already closed) for ids still being read;
 * at a rotation they go to the next file.
 */
static void
record_add_buildids(struct record *rec, struct tracefile *tf)
{
	if (buildid_flush(rec->bids, &tf->buildids, rec->state ==
	    RECORD_STOPPING ? BUILDID_STOP_WAIT_MS : 0) == -1)
		log_warnx("%s: out of memory for build-ids", tf->partial);
}

/* Put the current file on the closing list; its writes finish there. */
static void
record_retire_file(struct record *rec)
{
	if (rec->cur == NULL)
		return;
	record_add_buildids(rec, rec->cur);
	tracefile_close(rec->cur, record_file_done, rec);
	TAILQ_INSERT_TAIL(&rec->closing, rec->cur, entry);
	rec->cur = NULL;
}

/* The new file is ready: switch to it, then finish the old one. */
static void
record_switch(struct record *rec, struct tracefile *old, const char *why)
{
	record_add_buildids(rec, old);
	tracefile_close(old, record_file_done, rec);
	TAILQ_INSERT_TAIL(&rec->closing, old, entry);
	log_info("rotated (%s): now writing %s", why, rec->cur->partial);
	record_reap(rec);
}

int
record_rotate(struct record *rec, const char *why)
{
	struct tracefile	*old = rec->cur;
	struct record_prep	*p;
	int			 rc;

	if (rec->state != RECORD_RUNNING || old == NULL)
		return -1;
	if (rec->prep != NULL)
		return 0;	/* one is already being built: it will do */
	if ((p = record_prep_create(rec)) == NULL)
		return -1;
	record_keep_begin(rec);
	record_prep_run(p);
	rc = record_take_over(rec, p, why);
	record_prep_free(p);
	return rc;
}

/*
 * A ring that the last drain found full may have dropped records since.
 * The kernel says so with a LOST record, but only when it next writes to
 * the ring: at a rotation, in the new file, while the damage (samples of
 * a thread whose FORK was dropped) is in the old one, which would not
 * say so. Wait a little for the kernel to write again to such a ring,
 * and drain it into the old file once more (and, kept, into the new one:
 * a task born in the loss lives on there, unnamed too).
 */
static void
record_take_lost(struct record *rec)
{
	struct timespec		 step = { 0, RECORD_LOST_STEP_US * 1000L };
	struct record_cpu	*c;
	size_t			 i, full, quiet;
	unsigned int		 us;

	/* a storm may fill a small ring again meanwhile: drain again */
	for (us = 0; us < RECORD_LOST_WAIT_US; us += RECORD_LOST_STEP_US) {
		for (i = full = quiet = 0; i < rec->nr_cpus; i++) {
			c = &rec->cpus[i];
			if (c->ring.base == NULL || !c->full)
				continue;
			full++;
			if (ring_head(&c->ring) == ring_tail(&c->ring))
				quiet++;
		}
		if (full == 0 || rec->state != RECORD_RUNNING)
			return;
		if (quiet == 0)
			record_drain_all(rec, 0);
		else
			nanosleep(&step, NULL);
	}
	record_drain_all(rec, 0);
}

/*
 * Switch to a new file whose preamble p holds. What the rings hold now
 * goes to the old file first: it happened before the new preamble's walk
 * of /proc ended, and a task that has exited since is named only in the
 * old file. The new file is whole-ready (preamble queued) before the old
 * one stops taking data: every record goes to one file, none to both.
 */
static int
record_take_over(struct record *rec, struct record_prep *p, const char *why)
{
	struct tracefile	*old = rec->cur;
	uint8_t			*buf;
	size_t			 len;

	rec->switching = 1;	/* no size rotation from these drains */
	record_drain_all(rec, 0);
	record_take_lost(rec);
	rec->switching = 0;
	rec->keeping = 0;
	if (rec->state != RECORD_RUNNING || rec->cur != old || old == NULL) {
		record_keep_end(rec);
		return -1;	/* paused by that drain: no file to leave */
	}
	rec->cur = NULL;
	if (record_install(rec, p) == -1) {
		record_keep_end(rec);
		rec->cur = old;
		/* the old file stays open, but has nowhere to be finished */
		if (outdir_gone(rec->dirfd, rec->cfg.output_dir))
			record_dir_gone(rec);
		return -1;
	}
	/* the tasks born during the walk, right after the preamble; their
	 * times sort them among the samples. Not the FORK of a task the
	 * preamble names: perf would replace it by a copy of its parent */
	rec->kept.len = track_drop_forks(rec->kept.data, rec->kept.len,
	    p->tids, p->nr_tids);
	if (rec->kept.len > 0 && rec->cur != NULL) {
		buf = sbuf_take(&rec->kept, &len);
		if (record_write_extra(rec, rec->cur, buf, len) == -1)
			log_warn("%s: writing the tasks born during its /proc "
			    "walk", rec->cur->partial);
	}
	record_keep_end(rec);
	record_switch(rec, old, why);
	return 0;
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

static void
record_prep_done(evutil_socket_t fd, short what, void *arg)
{
	struct record_prep	*p = arg;
	struct record		*rec = p->rec;

	pthread_join(p->th, NULL);
	rec->prep = NULL;
	/* paused or stopped meanwhile: the preamble is not wanted now */
	if (rec->state == RECORD_RUNNING && rec->cur != NULL)
		record_take_over(rec, p, p->why);
	record_keep_end(rec);
	record_prep_free(p);
}

/* The preamble's /proc walk takes tens of milliseconds: never at the
 * loop's real-time priority, which would hold off everything else. */
static int
record_prep_spawn(struct record_prep *p)
{
	return worker_spawn(&p->th, record_prep_thread, p);
}

/* Rotation by size or age: the preamble is built off the loop. */
static void
record_rotate_async(struct record *rec, const char *why)
{
	struct record_prep	*p;

	if (rec->prep != NULL || rec->cur == NULL || rec->switching)
		return;
	if ((p = record_prep_create(rec)) == NULL)
		return;
	p->why = why;
	record_keep_begin(rec);
	if (pipe2(p->pipe, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (p->ev = event_new(rec->base, p->pipe[0], EV_READ, record_prep_done,
	    p)) == NULL || event_add(p->ev, NULL) == -1 ||
	    record_prep_spawn(p) != 0) {
		log_warn("cannot start a rotation thread; rotating in the loop");
		record_keep_end(rec);
		record_prep_free(p);
		record_rotate(rec, why);
		return;
	}
	rec->prep = p;
}

/* A pending rotation's thread is joined and its work dropped. */
static void
record_prep_cancel(struct record *rec)
{
	if (rec->prep == NULL)
		return;
	pthread_join(rec->prep->th, NULL);
	record_prep_free(rec->prep);
	rec->prep = NULL;
	record_keep_end(rec);
}

static void
record_pause(struct record *rec, int err)
{
	record_pause_why(rec, err == ENOSPC || err == EDQUOT ? "disk full" :
	    strerror(err));
}

static void
record_pause_why(struct record *rec, const char *why)
{
	if (rec->paused[0])
		return;
	snprintf(rec->paused, sizeof(rec->paused), "%s", why);
	log_warnx("paused: %s in %s; the rings are still drained and what "
	    "they hold is counted as dropped until recording resumes",
	    rec->paused, rec->cfg.output_dir[0] ? rec->cfg.output_dir :
	    "the output directory");
	/* the file is cut at its first failed write and finished whole */
	record_retire_file(rec);
	if (!rec->dir_gone && record_retain(rec) > 0)
		log_info("retention made room while paused");
}

/*
 * The output directory was removed (or renamed away). Writes into the
 * open files still succeed, into inodes no one can reach: pause, so that
 * what the rings hold is counted as dropped instead, and look for the
 * directory again with a back-off (it is not created: see outdir.c).
 */
static void
record_dir_gone(struct record *rec)
{
	if (rec->dir_gone)
		return;
	rec->dir_gone = 1;
	rec->retry_wait = 1;
	rec->retry_at = time(NULL) + 1;
	snprintf(rec->problem, sizeof(rec->problem), "the output directory "
	    "%s was removed while recording", rec->cfg.output_dir);
	/* a pause for another reason retired the file already */
	rec->paused[0] = '\0';
	record_pause_why(rec, "output directory removed");
}

/* The output directory is back (0), or not yet: try again later. */
static int
record_find_dir(struct record *rec)
{
	time_t	 now = time(NULL);

	if (now < rec->retry_at)
		return -1;
	/* renamed back: the same directory, still ours, still locked */
	if (!outdir_gone(rec->dirfd, rec->cfg.output_dir) ||
	    outdir_reopen(rec->dirfd, rec->lockfd, rec->cfg.output_dir) == 0) {
		rec->dir_gone = 0;
		log_info("output directory %s is back", rec->cfg.output_dir);
		return 0;
	}
	if (errno == EWOULDBLOCK)
		/* made again, and another daemon took it meanwhile */
		snprintf(rec->paused, sizeof(rec->paused), "output directory "
		    "removed; made again, but another perfspilld holds it");
	else if (errno != ENOENT)
		log_warn("output directory %s", rec->cfg.output_dir);
	if (rec->retry_wait < RECORD_RETRY_MAX)
		rec->retry_wait *= 2;
	rec->retry_at = now + (time_t)rec->retry_wait;
	return -1;
}

/* Space back? Start a fresh file. The margin is one full drain of every
 * ring, so that the first pass does not fail again at once. */
static void
record_try_resume(struct record *rec)
{
	uint64_t	 avail, need = rec->cfg.min_free;
	size_t		 i;

	if (rec->dir_gone && record_find_dir(rec) == -1)
		return;
	for (i = 0; i < rec->nr_cpus; i++)
		need += rec->spec.pages * (size_t)sysconf(_SC_PAGESIZE);
	if (retain_free_bytes(rec->dirfd, &avail) == -1 || avail < need)
		return;
	record_retry_unfinished(rec);
	if (record_open_file(rec) == -1)
		return;
	log_info("resumed: %" PRIu64 " bytes free; writing %s", avail,
	    rec->cur->partial);
	rec->paused[0] = '\0';
}

/* Housekeeping of every tick: age rotation, free space, resuming. */
static void
record_check(struct record *rec)
{
	uint64_t	 avail;
	char		 why[96], a[32], m[32];

	if (rec->state != RECORD_RUNNING)
		return;
	if (!rec->dir_gone && outdir_gone(rec->dirfd, rec->cfg.output_dir)) {
		record_dir_gone(rec);
		return;
	}
	if (rec->paused[0]) {
		record_try_resume(rec);
		return;
	}
	if (rec->cfg.rotate_interval && rec->cur != NULL &&
	    time(NULL) - rec->cur->opened >= (time_t)rec->cfg.rotate_interval)
		record_rotate_async(rec, "age");
	if (rec->cfg.min_free && retain_free_bytes(rec->dirfd, &avail) == 0 &&
	    avail < rec->cfg.min_free) {
		record_retain(rec);
		if (retain_free_bytes(rec->dirfd, &avail) == 0 &&
		    avail < rec->cfg.min_free) {
			/* retention removed what it could and may remove */
			snprintf(why, sizeof(why), "below min_free: %s free, "
			    "min_free %s", size_format(avail, a, sizeof(a)),
			    size_format(rec->cfg.min_free, m, sizeof(m)));
			record_pause_why(rec, why);
		}
	}
}

static void
record_reap(struct record *rec)
{
	struct tracefile	*tf, *next;

	cblock_reap(&rec->q);
	for (tf = TAILQ_FIRST(&rec->closing); tf != NULL; tf = next) {
		next = TAILQ_NEXT(tf, entry);
		if (tracefile_poll(tf, &rec->q.sigev)) {
			TAILQ_REMOVE(&rec->closing, tf, entry);
			tracefile_free(tf);
		}
	}
	if (rec->state == RECORD_STOPPING && TAILQ_EMPTY(&rec->closing) &&
	    rec->q.nr_busy == 0)
		record_finish_stop(rec);
	else if (rec->reaper != NULL && !TAILQ_EMPTY(&rec->closing)) {
		/* a file is being finished: look again soon, not at the tick */
		struct timeval	 tv = { 0, 5000 };

		event_add(rec->reaper, &tv);
	}
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
	record_drain_all(rec, 0);
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
record_on_file_done(struct record *rec, record_file_cb cb, void *arg)
{
	rec->file_cb = cb;
	rec->file_arg = arg;
}

void
record_on_finished(struct record *rec, record_finished_cb cb, void *arg)
{
	rec->fin_cb = cb;
	rec->fin_arg = arg;
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
	rec->cfg.cblocks = cfg->cblocks;
	rec->cfg.rotate_size = cfg->rotate_size;
	rec->cfg.rotate_interval = cfg->rotate_interval;
	rec->cfg.max_files = cfg->max_files;
	rec->cfg.max_size = cfg->max_size;
	rec->cfg.min_free = cfg->min_free;
}

static void
record_add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static json_object *
record_totals(struct record *rec)
{
	json_object		*t = json_object_new_object();
	struct record_cpu	*rc;
	uint64_t		 v[9] = { 0 };
	size_t			 i;

	for (i = 0; i < rec->nr_cpus; i++) {
		rc = &rec->cpus[i];
		v[0] += rc->bytes;
		v[1] += rc->counts.records;
		v[2] += rc->counts.samples;
		v[3] += rc->counts.lost;
		v[4] += rc->counts.lost_samples;
		v[5] += rc->aio.bytes_dropped;
		v[6] += rc->aio.inflight;
		v[7] += rc->aio.bytes_written;
		v[8] += rc->counts.self;
	}
	record_add_u64(t, "bytes", v[0]);
	record_add_u64(t, "records", v[1]);
	record_add_u64(t, "samples", v[2]);
	record_add_u64(t, "lost", v[3]);
	record_add_u64(t, "lost_samples", v[4]);
	record_add_u64(t, "bytes_written", v[7]);
	/* dropped: never written (paused, failed) or cut off a failed file */
	record_add_u64(t, "bytes_dropped", v[5] + rec->bytes_cut);
	record_add_u64(t, "self_excluded", v[8]);
	record_add_u64(t, "aio_inflight", v[6] + rec->heap_stats.inflight);
	record_add_u64(t, "files_finished", rec->files_done);
	return t;
}

void
record_metrics(struct record *rec, struct metrics *m)
{
	struct record_cpu	*rc;
	size_t			 i;

	/* m may be rec->life itself (at the end of a recording) */
	*m = rec->life;
	m->aio_inflight = 0;
	m->recording = rec->state != RECORD_IDLE;
	m->paused = rec->state == RECORD_RUNNING ? rec->paused : "";
	/* idle: the last recording is in life already (record_finish_stop) */
	if (rec->state == RECORD_IDLE)
		return;
	for (i = 0; i < rec->nr_cpus; i++) {
		rc = &rec->cpus[i];
		m->samples += rc->counts.samples;
		m->lost += rc->counts.lost;
		m->lost_samples += rc->counts.lost_samples;
		m->bytes_written += rc->aio.bytes_written;
		m->bytes_dropped += rc->aio.bytes_dropped;
		m->self_excluded += rc->counts.self;
		m->aio_inflight += rc->aio.inflight;
	}
	m->bytes_dropped += rec->bytes_cut;
	m->files_finished += rec->files_done;
	m->aio_inflight += rec->heap_stats.inflight;
}

static void
record_add_disk(struct record *rec, json_object *o)
{
	struct retain_list	 l;
	json_object		*f;
	uint64_t		 avail;

	f = json_object_new_object();
	if (retain_scan(rec->dirfd, &l) == 0) {
		record_add_u64(f, "count", l.nr);
		record_add_u64(f, "bytes", l.bytes);
		if (l.nr > 0) {
			json_object_object_add(f, "oldest",
			    json_object_new_string(l.files[0].name));
			json_object_object_add(f, "newest",
			    json_object_new_string(l.files[l.nr - 1].name));
		}
		retain_list_free(&l);
	}
	json_object_object_add(o, "files", f);
	if (retain_free_bytes(rec->dirfd, &avail) == 0) {
		f = json_object_new_object();
		record_add_u64(f, "free", avail);
		json_object_object_add(o, "disk", f);
	}
}

json_object *
record_status(struct record *rec)
{
	static const char	*names[] = { "idle", "recording", "stopping" };
	json_object		*o = json_object_new_object(), *cpus, *c, *f;
	struct record_cpu	*rc;
	uint64_t		 files, cleared;
	size_t			 i;

	json_object_object_add(o, "state",
	    json_object_new_string(names[rec->state]));
	record_add_disk(rec, o);
	/* the daemon's life, not the recording's: also when idle */
	buildid_stats(rec->bids, &files, &cleared);
	f = json_object_new_object();
	record_add_u64(f, "files", files);
	record_add_u64(f, "stray_flags_cleared", cleared);
	json_object_object_add(o, "build_ids", f);
	if (rec->state == RECORD_IDLE) {
		if (rec->last_file[0])
			json_object_object_add(o, "last_file",
			    json_object_new_string(rec->last_file));
		if (rec->last_totals != NULL)
			json_object_object_add(o, "last_totals",
			    json_object_get(rec->last_totals));
		return o;
	}
	if (rec->paused[0])
		json_object_object_add(o, "paused",
		    json_object_new_string(rec->paused));
	json_object_object_add(o, "settings", config_to_json(&rec->cfg, 0));
	json_object_object_add(o, "started", json_object_new_int64(
	    (int64_t)rec->started));
	json_object_object_add(o, "uptime", json_object_new_int64(
	    (int64_t)(time(NULL) - rec->started)));
	cpus = json_object_new_array();
	for (i = 0; i < rec->nr_cpus; i++) {
		rc = &rec->cpus[i];
		c = json_object_new_object();
		json_object_object_add(c, "cpu", json_object_new_int(rc->cpu));
		json_object_object_add(c, "online", json_object_new_boolean(
		    !rc->offline));
		record_add_u64(c, "bytes", rc->bytes);
		record_add_u64(c, "records", rc->counts.records);
		record_add_u64(c, "samples", rc->counts.samples);
		record_add_u64(c, "lost", rc->counts.lost);
		record_add_u64(c, "lost_samples", rc->counts.lost_samples);
		record_add_u64(c, "cblocks", rc->nr_cbs);
		record_add_u64(c, "aio_inflight", rc->aio.inflight);
		record_add_u64(c, "aio_submitted", rc->aio.submitted);
		record_add_u64(c, "aio_completed", rc->aio.completed);
		record_add_u64(c, "aio_resubmitted", rc->aio.resubmitted);
		record_add_u64(c, "aio_failed", rc->aio.failed);
		record_add_u64(c, "bytes_written", rc->aio.bytes_written);
		record_add_u64(c, "bytes_dropped", rc->aio.bytes_dropped);
		json_object_array_add(cpus, c);
	}
	json_object_object_add(o, "totals", record_totals(rec));
	record_add_u64(o, "cpus_added", rec->cpus_added);
	record_add_u64(o, "cpus_removed", rec->cpus_removed);
	json_object_object_add(o, "cpus", cpus);
	if (rec->cur != NULL) {
		f = json_object_new_object();
		json_object_object_add(f, "name",
		    json_object_new_string(rec->cur->partial));
		record_add_u64(f, "bytes", rec->cur->reserved);
		record_add_u64(f, "samples", rec->cur->samples);
		json_object_object_add(o, "file", f);
	}
	return o;
}

json_object *
record_last_totals(struct record *rec)
{
	return rec->last_totals ? json_object_get(rec->last_totals) : NULL;
}

void
record_destroy(struct record *rec)
{
	struct tracefile	*tf;

	if (rec == NULL)
		return;
	record_prep_cancel(rec);
	/* wait out everything in flight: its buffers are about to go */
	while (rec->q.nr_busy > 0) {
		cblock_reap(&rec->q);
		if (rec->q.nr_busy > 0)
			usleep(1000);
	}
	record_free_cpus(rec);
	free(rec->staged);
	while ((tf = TAILQ_FIRST(&rec->closing)) != NULL) {
		TAILQ_REMOVE(&rec->closing, tf, entry);
		tracefile_free(tf);
	}
	tracefile_free(rec->cur);
	if (rec->reaper != NULL)
		event_free(rec->reaper);
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

void
record_summary(struct record *rec, char *buf, size_t len)
{
	uint64_t	 samples = 0, lost = 0, bytes = 0, dropped = 0;
	size_t		 i;
	time_t		 up;

	if (rec->state == RECORD_IDLE) {
		snprintf(buf, len, "idle");
		return;
	}
	for (i = 0; i < rec->nr_cpus; i++) {
		samples += rec->cpus[i].counts.samples;
		lost += rec->cpus[i].counts.lost +
		    rec->cpus[i].counts.lost_samples;
		bytes += rec->cpus[i].bytes;
		dropped += rec->cpus[i].aio.bytes_dropped;
	}
	up = time(NULL) - rec->started;
	snprintf(buf, len, "%s%s: %" PRIu64 " samples (%.0f/s), %" PRIu64
	    " lost, %.1f MiB%s", rec->state == RECORD_RUNNING ? (rec->paused[0] ?
	    "paused, " : "recording") : "stopping", rec->paused, samples,
	    up > 0 ? (double)samples / (double)up : 0.0, lost,
	    (double)bytes / 1048576.0, dropped ? ", dropping" : "");
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
	/* what the kernel wrote before the disable is still in the ring */
	record_drain_all(rec, 0);
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

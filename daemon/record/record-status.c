/*
 * record-status says what the recording reports: the status JSON, the
 * totals of a recording, the daemon's metrics, systemd's STATUS= line.
 * It runs in the loop.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "jemit.h"
#include "record-int.h"
#include "proto.h"

/* The counters of every CPU of the recording, summed once for the
 * totals, the metrics and the summary line. */
struct record_sums {
	uint64_t	 bytes, records, samples, lost, lost_samples;
	uint64_t	 written, dropped, inflight, self;
	uint64_t	 files;		/* finished */
};

static void
record_sum(const struct record *rec, struct record_sums *s)
{
	const struct record_cpu	*rc;
	size_t			 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < rec->nr_cpus; i++) {
		rc = &rec->cpus[i];
		s->bytes += rc->bytes;
		s->records += rc->counts.records;
		s->samples += rc->counts.samples;
		s->lost += rc->counts.lost;
		s->lost_samples += rc->counts.lost_samples;
		s->written += rc->lane.stats.bytes_written;
		s->dropped += rc->lane.stats.bytes_dropped;
		s->inflight += rc->lane.stats.inflight;
		s->self += rc->counts.self;
	}
	/* a direct file's slices, of every ring */
	s->written += rec->w.pool.stats.bytes_written;
	s->dropped += rec->w.pool.stats.bytes_dropped;
	s->inflight += rec->w.pool.stats.inflight;
	/* dropped: never written (paused, failed) or cut off a failed file */
	s->dropped += rec->files.bytes_cut;
	s->inflight += rec->w.heap_stats.inflight;
	s->files = rec->files.done;
}

/* A recording's totals: in status, and in stop's reply. */
static const struct jemit_field record_totals_rows[] = {
	JEMIT_U("bytes", struct record_sums, bytes),
	JEMIT_U("records", struct record_sums, records),
	JEMIT_U("samples", struct record_sums, samples),
	JEMIT_U("lost", struct record_sums, lost),
	JEMIT_U("lost_samples", struct record_sums, lost_samples),
	JEMIT_U("bytes_written", struct record_sums, written),
	JEMIT_U("bytes_dropped", struct record_sums, dropped),
	JEMIT_U("self_excluded", struct record_sums, self),
	JEMIT_U("aio_inflight", struct record_sums, inflight),
	JEMIT_U("files_finished", struct record_sums, files),
	JEMIT_ROWS_END
};

json_object *
record_totals(struct record *rec)
{
	struct record_sums	 s;

	record_sum(rec, &s);
	return jemit_object(record_totals_rows, &s);
}

/* Why the recording is paused, as the metrics name it (record_pause's
 * words: "disk full", "below min_free: ...", an errno's). */
static unsigned int
record_pause_bits(const struct record *rec)
{
	enum metrics_pause	 why;

	if (rec->state != RECORD_RUNNING || rec->paused[0] == '\0')
		return 0;
	if (rec->files.dir_gone)
		why = METRICS_PAUSE_DIR_REMOVED;
	else if (strcmp(rec->paused, "disk full") == 0)
		why = METRICS_PAUSE_DISK_FULL;
	else if (strncmp(rec->paused, "below min_free", 14) == 0)
		why = METRICS_PAUSE_MIN_FREE;
	else
		why = METRICS_PAUSE_WRITE_ERROR;
	return 1u << why;
}

static void
record_metrics_locked(struct record *rec, struct metrics *m)
{
	struct record_sums	 s;
	struct stat		 st;

	/* m may be rec->life itself (at the end of a recording) */
	*m = rec->life;
	m->aio_inflight = 0;
	m->recording = rec->state != RECORD_IDLE;
	m->paused = record_pause_bits(rec);
	/* idle: the last recording is in life already (record_finish_stop) */
	if (rec->state == RECORD_IDLE)
		return;
	record_sum(rec, &s);
	m->samples += s.samples;
	m->lost += s.lost;
	m->lost_samples += s.lost_samples;
	m->bytes_written += s.written;
	m->bytes_dropped += s.dropped;
	m->self_excluded += s.self;
	m->aio_inflight = s.inflight;
	m->files_finished += rec->files.done;
	/* the file system's own word for when a write last landed */
	if (rec->cur != NULL && tracefile_stat(rec->cur, &st) == 0)
		m->data_on_disk = st.st_mtime;
	if (rec->compact != NULL)
		record_compact_metrics(rec->compact, m);
}

void
record_metrics(struct record *rec, struct metrics *m)
{
	record_lock(rec);
	record_metrics_locked(rec, m);
	record_unlock(rec);
}

/* The output directory's finished files (every session's) and its free
 * space, for status and the metrics. */
struct record_disk {
	struct record_kept	 k;
	uint64_t		 free;
	int			 scanned, have_free;
};

static void
record_disk(struct record *rec, struct record_disk *dk)
{
	memset(dk, 0, sizeof(*dk));
	dk->scanned = rec->files.finish->kept(rec->files.finish_ctx, rec->dirfd,
	    &dk->k) == 0;
	dk->have_free = outdir_free_bytes(rec->dirfd, &dk->free) == 0;
}

static const struct jemit_field record_disk_names_rows[] = {
	JEMIT_S("oldest", struct record_disk, k.oldest),
	JEMIT_S("newest", struct record_disk, k.newest),
	JEMIT_I("last_finished", struct record_disk, k.last_finished),
	JEMIT_ROWS_END
};

static const struct jemit_field record_disk_rows[] = {
	JEMIT_U("count", struct record_disk, k.nr),
	JEMIT_U("bytes", struct record_disk, k.bytes),
	/* the oldest and newest name only of a directory with a file */
	JEMIT_IF(JEMIT_UINT, struct record_disk, k.nr,
	    record_disk_names_rows),
	JEMIT_ROWS_END
};

static const struct jemit_field record_free_rows[] = {
	JEMIT_U("free", struct record_disk, free),
	JEMIT_ROWS_END
};

static void
record_add_disk(struct record *rec, json_object *o)
{
	struct record_disk	 dk;

	record_disk(rec, &dk);
	/* an unreadable directory: an empty object */
	json_object_object_add(o, "files", dk.scanned ?
	    jemit_object(record_disk_rows, &dk) : json_object_new_object());
	if (dk.have_free)
		json_object_object_add(o, "disk",
		    jemit_object(record_free_rows, &dk));
}

void
record_disk_metrics(struct record *rec, struct metrics *m)
{
	struct record_disk	 dk;

	record_disk(rec, &dk);
	m->retained_files = dk.k.nr;
	m->retained_bytes = dk.k.bytes;
	m->disk_free = dk.free;
	m->last_finished = (time_t)dk.k.last_finished;
}

int
record_write_direct(const struct record *rec)
{
	return rec->cur != NULL && tracefile_direct_on(rec->cur) &&
	    tracefile_direct_refused(rec->cur) == 0;
}

void
record_buffer_use(struct record *rec, uint64_t *bytes, uint64_t *spills)
{
	record_lock(rec);
	*bytes = rec->state == RECORD_IDLE ? 0 : record_buffer_bytes(rec);
	*spills = rec->w.pool.spills;
	record_unlock(rec);
}

/*
 * How the current file's data reaches the disk: "direct" (past the page
 * cache) or "buffered", and why not direct.
 */
static void
record_add_write_path(struct record *rec, json_object *o)
{
	const char	*why = NULL;
	char		 buf[160];
	int		 e;

	if (record_write_direct(rec)) {
		json_object_object_add(o, "write_path",
		    json_object_new_string("direct"));
		return;
	}
	if (!rec->cfg.direct_io)
		why = "direct_io is off";
	else if (!writer_copies(&rec->w))
		why = "cblocks 0: serial writes from the ring";
	else if ((e = rec->direct_refused) != 0 || (rec->cur != NULL &&
	    (e = tracefile_direct_refused(rec->cur)) != 0)) {
		snprintf(buf, sizeof(buf), "the file system takes no direct "
		    "I/O: %s", strerror(e));
		why = buf;
	} else if (rec->cur != NULL)
		why = "the current file began with cblocks 0";
	json_object_object_add(o, "write_path",
	    json_object_new_string("buffered"));
	if (why != NULL)
		json_object_object_add(o, "write_path_why",
		    json_object_new_string(why));
}

/* What requests of one set (a CPU's cblocks, the pool, the one-off
 * requests) did. */
static const struct jemit_field record_aio_rows[] = {
	JEMIT_U("aio_inflight", struct cblock_stats, inflight),
	JEMIT_U("aio_submitted", struct cblock_stats, submitted),
	JEMIT_U("aio_completed", struct cblock_stats, completed),
	JEMIT_U("aio_resubmitted", struct cblock_stats, resubmitted),
	JEMIT_U("aio_failed", struct cblock_stats, failed),
	JEMIT_U("bytes_written", struct cblock_stats, bytes_written),
	JEMIT_U("bytes_dropped", struct cblock_stats, bytes_dropped),
	JEMIT_ROWS_END
};

/* The direct path's pool: its blocks and the requests written from them
 * (every ring's). */
static const struct jemit_field record_pool_rows[] = {
	JEMIT_U("blocks", struct record_pool, nr),
	JEMIT_U("block_bytes", struct record_pool, cap),
	JEMIT_U("write_bytes", struct record_pool, write),
	JEMIT_U("blocks_filled", struct record_pool, finished),
	JEMIT_U("busy", struct record_pool, busy),
	/* elastic: the base it keeps, the bound a burst grows it to (what
	 * the start's memory budget counted), the most it held */
	JEMIT_U("base_blocks", struct record_pool, want),
	JEMIT_U("max_blocks", struct record_pool, max),
	JEMIT_U("peak_blocks", struct record_pool, peak),
	JEMIT_U("grown", struct record_pool, grown),
	JEMIT_U("shrunk", struct record_pool, shrunk),
	JEMIT_U("spills", struct record_pool, spills),
	JEMIT_U("spill_bytes", struct record_pool, spill_bytes),
	JEMIT_SUB(struct record_pool, stats, record_aio_rows),
	JEMIT_ROWS_END
};

static void
record_cpu_online(json_object *o, const char *key, const void *rc)
{
	json_object_object_add(o, key, json_object_new_boolean(
	    !((const struct record_cpu *)rc)->offline));
}

/* One CPU of status's "cpus": its ring's counts and its cblocks. */
static const struct jemit_field record_cpu_rows[] = {
	JEMIT_I("cpu", struct record_cpu, cpu),
	JEMIT_FN_ROW("online", record_cpu_online),
	JEMIT_U("bytes", struct record_cpu, bytes),
	JEMIT_U("records", struct record_cpu, counts.records),
	JEMIT_U("samples", struct record_cpu, counts.samples),
	JEMIT_U("lost", struct record_cpu, counts.lost),
	JEMIT_U("lost_samples", struct record_cpu, counts.lost_samples),
	JEMIT_U("cblocks", struct record_cpu, lane.nr),
	JEMIT_SUB(struct record_cpu, lane.stats, record_aio_rows),
	JEMIT_ROWS_END
};

/* The file being written. */
static const struct jemit_field record_file_rows[] = {
	JEMIT_SP("name", struct tracefile_info, partial),
	JEMIT_U("bytes", struct tracefile_info, reserved),
	JEMIT_U("samples", struct tracefile_info, samples),
	JEMIT_ROWS_END
};

/* The drain thread: how it runs and what it did. */
static void
record_add_drain(struct record *rec, json_object *o)
{
	const struct record_thread	*t = &rec->thread;
	json_object			*p;

	if (!t->running)
		return;
	p = json_object_new_object();
	json_object_object_add(p, "policy", json_object_new_string(t->prio ?
	    "fifo" : "other"));
	proto_add_u64(p, "priority", t->prio);
	if (t->refused != 0)
		json_object_object_add(p, "realtime_refused",
		    json_object_new_string(strerror(t->refused)));
	proto_add_u64(p, "passes", t->passes);
	proto_add_u64(p, "passes_left_rings", t->busy);
	proto_add_u64(p, "lock_waits", atomic_load(&t->contended));
	proto_add_u64(p, "lock_wait_us", atomic_load(&t->waited_ns) / 1000);
	json_object_object_add(o, "drain", p);
}

static json_object *
record_status_locked(struct record *rec, json_object *o)
{
	json_object		*cpus, *f;
	struct tracefile_info	 info;
	uint64_t		 files, cleared, reading;
	size_t			 i;

	/* the daemon's life, not the recording's: also when idle */
	buildid_stats(rec->bids, &files, &cleared, &reading);
	f = json_object_new_object();
	proto_add_u64(f, "files", files);
	proto_add_u64(f, "reading", reading);
	proto_add_u64(f, "stray_flags_cleared", cleared);
	json_object_object_add(o, "build_ids", f);
	if (rec->state == RECORD_IDLE) {
		if (rec->files.last[0])
			json_object_object_add(o, "last_file",
			    json_object_new_string(rec->files.last));
		if (rec->last_totals != NULL)
			json_object_object_add(o, "last_totals",
			    json_object_get(rec->last_totals));
		return o;
	}
	if (rec->paused[0])
		json_object_object_add(o, "paused",
		    json_object_new_string(rec->paused));
	record_add_write_path(rec, o);
	/* the drain's buffers: cblocks, the pool, the copies (not the
	 * kernel's rings): docs/file-format.md has the formula */
	proto_add_u64(o, "buffers", record_buffer_bytes(rec));
	if (record_pool_made(&rec->w.pool))
		json_object_object_add(o, "pool",
		    jemit_object(record_pool_rows, &rec->w.pool));
	/* the one-off requests: preambles, padded tails, last drains */
	json_object_object_add(o, "other_requests",
	    jemit_object(record_aio_rows, &rec->w.heap_stats));
	record_add_drain(rec, o);
	if (rec->compact != NULL)
		json_object_object_add(o, "compact",
		    record_compact_status(rec->compact));
	json_object_object_add(o, "settings", config_to_json(&rec->cfg, 0));
	json_object_object_add(o, "started", json_object_new_int64(
	    (int64_t)rec->started));
	json_object_object_add(o, "uptime", json_object_new_int64(
	    (int64_t)(time(NULL) - rec->started)));
	cpus = json_object_new_array();
	for (i = 0; i < rec->nr_cpus; i++)
		json_object_array_add(cpus,
		    jemit_object(record_cpu_rows, &rec->cpus[i]));
	json_object_object_add(o, "totals", record_totals(rec));
	proto_add_u64(o, "cpus_added", rec->cpus_added);
	proto_add_u64(o, "cpus_removed", rec->cpus_removed);
	json_object_object_add(o, "cpus", cpus);
	if (rec->flight != NULL) {
		f = record_window_status(rec);
		proto_add_u64(f, "triggers_suppressed", rec->snap_suppressed);
		json_object_object_add(o, "flight", f);
	}
	if (rec->cur != NULL) {
		tracefile_info(rec->cur, &info);
		json_object_object_add(o, "file",
		    jemit_object(record_file_rows, &info));
	}
	return o;
}

/*
 * The output directory's files and free space are read first, without
 * the drain's lock: a scan of a directory of a few thousand files takes
 * milliseconds, which the drain thread would wait out.
 */
json_object *
record_status(struct record *rec)
{
	static const char	*names[] = { "idle", "recording", "stopping" };
	json_object		*o = json_object_new_object();

	json_object_object_add(o, "state",
	    json_object_new_string(names[rec->state]));
	record_add_disk(rec, o);
	record_lock(rec);
	o = record_status_locked(rec, o);
	record_unlock(rec);
	return o;
}

json_object *
record_last_totals(struct record *rec)
{
	return rec->last_totals ? json_object_get(rec->last_totals) : NULL;
}

static void
record_summary_locked(struct record *rec, char *buf, size_t len)
{
	struct record_sums	 s;
	time_t			 up;

	if (rec->state == RECORD_IDLE) {
		snprintf(buf, len, "idle");
		return;
	}
	record_sum(rec, &s);
	up = time(NULL) - rec->started;
	snprintf(buf, len, "%s%s: %" PRIu64 " samples (%.0f/s), %" PRIu64
	    " lost, %.1f MiB%s", rec->state == RECORD_RUNNING ? (rec->paused[0] ?
	    "paused, " : "recording") : "stopping", rec->paused, s.samples,
	    up > 0 ? (double)s.samples / (double)up : 0.0,
	    s.lost + s.lost_samples, (double)s.bytes / 1048576.0,
	    s.dropped > rec->files.bytes_cut ? ", dropping" : "");
}

void
record_summary(struct record *rec, char *buf, size_t len)
{
	record_lock(rec);
	record_summary_locked(rec, buf, len);
	record_unlock(rec);
}

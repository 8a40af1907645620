/*
 * record-status says what the recording reports: the status JSON, the
 * totals of a recording, the daemon's metrics, systemd's STATUS= line.
 * It runs in the loop, and never takes the recording's lock: what the
 * drain changes it reads as the lock's holder last published it
 * (record-publish.c), what the loop alone changes (the state, the
 * settings, the files no longer written, the pause) directly. So it
 * answers while a pass holds the lock, and never makes the drain thread
 * wait for it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "jemit.h"
#include "record-int.h"
#include "proto.h"

/* The drain's counters, as published, and those of each CPU. */
struct record_seen {
	struct record_counters	 c;
	struct record_cpu_counters *cpus;
	size_t			 nr;
};

static void
record_see(const struct record *rec, struct record_seen *seen)
{
	/* the loop's: CPUs are added (hotplug) under the lock, by it */
	seen->nr = rec->nr_cpus;
	seen->cpus = seen->nr > 0 ? calloc(seen->nr, sizeof(*seen->cpus)) :
	    NULL;
	if (seen->cpus == NULL)
		seen->nr = 0;	/* out of memory: no CPU's counters */
	record_published(rec, &seen->c, seen->cpus, seen->nr);
}

static void
record_unsee(struct record_seen *seen)
{
	free(seen->cpus);
}

/* The counters of every CPU of the recording, summed once for the
 * totals, the metrics and the summary line. */
struct record_sums {
	uint64_t	 bytes, records, samples, lost, lost_samples;
	uint64_t	 written, dropped, inflight, self;
	uint64_t	 files;		/* finished */
};

static void
record_sum(const struct record *rec, const struct record_seen *seen,
    struct record_sums *s)
{
	const struct record_cpu_counters *rc;
	size_t			 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < seen->nr; i++) {
		rc = &seen->cpus[i];
		s->bytes += rc->bytes;
		s->records += rc->counts.records;
		s->samples += rc->counts.samples;
		s->lost += rc->counts.lost;
		s->lost_samples += rc->counts.lost_samples;
		s->written += rc->stats.bytes_written;
		s->dropped += rc->stats.bytes_dropped;
		s->inflight += rc->stats.inflight;
		s->self += rc->counts.self;
	}
	/* a direct file's slices, of every ring */
	s->written += seen->c.pool.stats.bytes_written;
	s->dropped += seen->c.pool.stats.bytes_dropped;
	s->inflight += seen->c.pool.stats.inflight;
	/* dropped: never written (paused, failed) or cut off a failed file
	 * (the loop's, as are the files finished) */
	s->dropped += rec->files.bytes_cut;
	s->inflight += seen->c.heap.inflight;
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

static json_object *
record_totals_seen(const struct record *rec, const struct record_seen *seen)
{
	struct record_sums	 s;

	record_sum(rec, seen, &s);
	return jemit_object(record_totals_rows, &s);
}

json_object *
record_totals(struct record *rec)
{
	struct record_seen	 seen;
	json_object		*o;

	record_see(rec, &seen);
	o = record_totals_seen(rec, &seen);
	record_unsee(&seen);
	return o;
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

void
record_metrics(struct record *rec, struct metrics *m)
{
	struct record_seen	 seen;
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
	record_see(rec, &seen);
	record_sum(rec, &seen, &s);
	record_unsee(&seen);
	m->samples += s.samples;
	m->lost += s.lost;
	m->lost_samples += s.lost_samples;
	m->bytes_written += s.written;
	m->bytes_dropped += s.dropped;
	m->self_excluded += s.self;
	m->aio_inflight = s.inflight;
	m->files_finished += rec->files.done;
	/* the file system's own word for when a write last landed (the
	 * loop sets the current file, and its descriptor stays) */
	if (rec->cur != NULL && tracefile_stat(rec->cur, &st) == 0)
		m->data_on_disk = st.st_mtime;
	if (rec->compact != NULL)
		record_compact_metrics(rec->compact, m);
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

static int
record_direct_seen(const struct record_counters *c)
{
	return c->file && c->direct && c->direct_refused == 0;
}

int
record_write_direct(const struct record *rec)
{
	struct record_counters	 c;

	record_published(rec, &c, NULL, 0);
	return record_direct_seen(&c);
}

void
record_buffer_use(struct record *rec, uint64_t *bytes, uint64_t *spills)
{
	struct record_counters	 c;

	record_published(rec, &c, NULL, 0);
	*bytes = rec->state == RECORD_IDLE ? 0 : c.buffers;
	*spills = c.pool.spills;
}

/*
 * How the current file's data reaches the disk: "direct" (past the page
 * cache) or "buffered", and why not direct.
 */
static void
record_add_write_path(struct record *rec, const struct record_counters *c,
    json_object *o)
{
	const char	*why = NULL;
	char		 buf[160];
	int		 e;

	if (record_direct_seen(c)) {
		json_object_object_add(o, "write_path",
		    json_object_new_string("direct"));
		return;
	}
	if (!rec->cfg.direct_io)
		why = "direct_io is off";
	else if (!c->copies)
		why = "cblocks 0: serial writes from the ring";
	else if ((e = rec->direct_refused) != 0 || (c->file &&
	    (e = (int)c->direct_refused) != 0)) {
		snprintf(buf, sizeof(buf), "the file system takes no direct "
		    "I/O: %s", strerror(e));
		why = buf;
	} else if (c->file)
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
	JEMIT_U("blocks", struct record_pool_counters, nr),
	JEMIT_U("block_bytes", struct record_pool_counters, cap),
	JEMIT_U("write_bytes", struct record_pool_counters, write),
	JEMIT_U("blocks_filled", struct record_pool_counters, finished),
	JEMIT_U("busy", struct record_pool_counters, busy),
	/* elastic: the base it keeps, the bound a burst grows it to (what
	 * the start's memory budget counted), the most it held */
	JEMIT_U("base_blocks", struct record_pool_counters, want),
	JEMIT_U("max_blocks", struct record_pool_counters, max),
	JEMIT_U("peak_blocks", struct record_pool_counters, peak),
	JEMIT_U("grown", struct record_pool_counters, grown),
	JEMIT_U("shrunk", struct record_pool_counters, shrunk),
	JEMIT_U("spills", struct record_pool_counters, spills),
	JEMIT_U("spill_bytes", struct record_pool_counters, spill_bytes),
	/* the direct tail's pads that wrote: the open block's unsent
	 * bytes into the page cache, or by one request with the padded
	 * tail where that cannot be had */
	JEMIT_U("pads", struct record_pool_counters, pads),
	JEMIT_SUB(struct record_pool_counters, stats, record_aio_rows),
	JEMIT_ROWS_END
};

/* One CPU of status's "cpus": the loop's word on it (its number, online)
 * and its ring's counts and cblocks as published. */
struct record_cpu_row {
	int				 cpu;
	int				 online;
	struct record_cpu_counters	 c;
};

static const struct jemit_field record_cpu_rows[] = {
	JEMIT_I("cpu", struct record_cpu_row, cpu),
	JEMIT_B("online", struct record_cpu_row, online),
	JEMIT_U("bytes", struct record_cpu_row, c.bytes),
	JEMIT_U("records", struct record_cpu_row, c.counts.records),
	JEMIT_U("samples", struct record_cpu_row, c.counts.samples),
	JEMIT_U("lost", struct record_cpu_row, c.counts.lost),
	JEMIT_U("lost_samples", struct record_cpu_row, c.counts.lost_samples),
	JEMIT_U("cblocks", struct record_cpu_row, c.cblocks),
	JEMIT_SUB(struct record_cpu_row, c.stats, record_aio_rows),
	JEMIT_ROWS_END
};

/* The file being written. */
static const struct jemit_field record_file_rows[] = {
	JEMIT_S("name", struct record_counters, file_name),
	JEMIT_U("bytes", struct record_counters, file_bytes),
	JEMIT_U("samples", struct record_counters, file_samples),
	JEMIT_ROWS_END
};

/* The drain thread: how it runs and what it did. */
static void
record_add_drain(struct record *rec, const struct record_counters *c,
    json_object *o)
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
	proto_add_u64(p, "threads", t->nr_dr);
	proto_add_u64(p, "passes", c->passes);
	proto_add_u64(p, "passes_left_rings", c->busy);
	proto_add_u64(p, "lock_waits", atomic_load(&t->contended));
	proto_add_u64(p, "lock_wait_us", atomic_load(&t->waited_ns) / 1000);
	json_object_object_add(o, "drain", p);
}

static json_object *
record_status_seen(struct record *rec, const struct record_seen *seen,
    json_object *o)
{
	const struct record_counters *c = &seen->c;
	struct record_cpu_row	 row;
	json_object		*cpus, *f;
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
	record_add_write_path(rec, c, o);
	/* the drain's buffers: cblocks, the pool, the copies (not the
	 * kernel's rings): docs/file-format.md has the formula */
	proto_add_u64(o, "buffers", c->buffers);
	if (c->pool_made)
		json_object_object_add(o, "pool",
		    jemit_object(record_pool_rows, &c->pool));
	/* the one-off requests: preambles, padded tails, last drains */
	json_object_object_add(o, "other_requests",
	    jemit_object(record_aio_rows, &c->heap));
	record_add_drain(rec, c, o);
	if (rec->compact != NULL)
		json_object_object_add(o, "compact",
		    record_compact_status(rec->compact));
	json_object_object_add(o, "settings", config_to_json(&rec->cfg, 0));
	json_object_object_add(o, "started", json_object_new_int64(
	    (int64_t)rec->started));
	json_object_object_add(o, "uptime", json_object_new_int64(
	    (int64_t)(time(NULL) - rec->started)));
	cpus = json_object_new_array();
	for (i = 0; i < seen->nr; i++) {
		row.cpu = rec->cpus[i].cpu;
		row.online = !rec->cpus[i].offline;
		row.c = seen->cpus[i];
		json_object_array_add(cpus,
		    jemit_object(record_cpu_rows, &row));
	}
	json_object_object_add(o, "totals", record_totals_seen(rec, seen));
	proto_add_u64(o, "cpus_added", rec->cpus_added);
	proto_add_u64(o, "cpus_removed", rec->cpus_removed);
	json_object_object_add(o, "cpus", cpus);
	if (rec->flight != NULL) {
		f = record_window_status(rec, c);
		proto_add_u64(f, "triggers_suppressed", rec->snap_suppressed);
		json_object_object_add(o, "flight", f);
	}
	if (c->file)
		json_object_object_add(o, "file",
		    jemit_object(record_file_rows, c));
	return o;
}

/*
 * Without the drain's lock: the output directory's scan takes
 * milliseconds for a few thousand files, and a pass may hold the lock
 * meanwhile. The build-id store and the unwinding worker have locks of
 * their own, which no one holds long.
 */
json_object *
record_status(struct record *rec)
{
	static const char	*names[] = { "idle", "recording", "stopping" };
	json_object		*o = json_object_new_object();
	struct record_seen	 seen;

	json_object_object_add(o, "state",
	    json_object_new_string(names[rec->state]));
	record_add_disk(rec, o);
	record_see(rec, &seen);
	o = record_status_seen(rec, &seen, o);
	record_unsee(&seen);
	return o;
}

json_object *
record_last_totals(struct record *rec)
{
	return rec->last_totals ? json_object_get(rec->last_totals) : NULL;
}

void
record_summary(struct record *rec, char *buf, size_t len)
{
	struct record_seen	 seen;
	struct record_sums	 s;
	time_t			 up;

	if (rec->state == RECORD_IDLE) {
		snprintf(buf, len, "idle");
		return;
	}
	record_see(rec, &seen);
	record_sum(rec, &seen, &s);
	record_unsee(&seen);
	up = time(NULL) - rec->started;
	snprintf(buf, len, "%s%s: %" PRIu64 " samples (%.0f/s), %" PRIu64
	    " lost, %.1f MiB%s", rec->state == RECORD_RUNNING ? (rec->paused[0] ?
	    "paused, " : "recording") : "stopping", rec->paused, s.samples,
	    up > 0 ? (double)s.samples / (double)up : 0.0,
	    s.lost + s.lost_samples, (double)s.bytes / 1048576.0,
	    s.dropped > rec->files.bytes_cut ? ", dropping" : "");
}


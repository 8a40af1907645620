/*
 * record-status: what the recording reports: the status JSON, the
 * totals of a recording, the daemon's metrics, systemd's STATUS= line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "record-int.h"

static void
record_add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

json_object *
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
	uint64_t		 files, cleared, reading;
	size_t			 i;

	json_object_object_add(o, "state",
	    json_object_new_string(names[rec->state]));
	record_add_disk(rec, o);
	/* the daemon's life, not the recording's: also when idle */
	buildid_stats(rec->bids, &files, &cleared, &reading);
	f = json_object_new_object();
	record_add_u64(f, "files", files);
	record_add_u64(f, "reading", reading);
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

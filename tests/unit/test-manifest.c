/*
 * manifest: the build-ids of HEADER_BUILD_ID records, once per (id,
 * path), and the JSON of a file's facts.
 */
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

#include "perfdata/buildid.h"
#include "check.h"
#include "manifest.h"
#include "perfdata/sbuf.h"

static const char *
bid_at(json_object *a, size_t i, const char *k)
{
	json_object	*v;

	if (!json_object_object_get_ex(json_object_array_get_idx(a, i), k, &v))
		return "";
	return json_object_get_string(v);
}

int
main(void)
{
	struct sbuf			 b;
	struct record_file_facts		 f;
	struct config			 cfg;
	json_object			*a, *o, *v;
	uint8_t				 id[20];
	size_t				 i;
	struct perf_event_header	 junk = { 0, 0, 3 };

	for (i = 0; i < sizeof(id); i++)
		id[i] = (uint8_t)(0xa0 + i);
	sbuf_init(&b);
	CHECK_EQ(buildid_record(&b, -1, PERF_RECORD_MISC_USER, id, 20,
	    "/usr/lib/libc.so.6"), 0);
	/* the same again (preamble, then a flush): one entry */
	CHECK_EQ(buildid_record(&b, -1, PERF_RECORD_MISC_USER, id, 20,
	    "/usr/lib/libc.so.6"), 0);
	/* a short id (md5-sized, 16 bytes) */
	CHECK_EQ(buildid_record(&b, 7, PERF_RECORD_MISC_USER, id, 16,
	    "/bin/x"), 0);
	a = manifest_buildids(b.data, b.len);
	CHECK_EQ(json_object_array_length(a), 2);
	CHECK(strcmp(bid_at(a, 0, "build_id"),
	    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3") == 0);
	CHECK(strcmp(bid_at(a, 0, "path"), "/usr/lib/libc.so.6") == 0);
	CHECK(strcmp(bid_at(a, 1, "build_id"),
	    "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf") == 0);
	CHECK(strcmp(bid_at(a, 1, "path"), "/bin/x") == 0);
	json_object_put(a);
	/* a malformed record ends the walk; what came before stays */
	sbuf_append(&b, &junk, sizeof(junk));
	a = manifest_buildids(b.data, b.len);
	CHECK_EQ(json_object_array_length(a), 2);
	json_object_put(a);
	a = manifest_buildids(NULL, 0);
	CHECK_EQ(json_object_array_length(a), 0);
	json_object_put(a);

	/* the facts as JSON: times only with samples */
	config_defaults(&cfg);
	memset(&f, 0, sizeof(f));
	f.name = "perfspill-h-20260101T000000Z-000003.data";
	f.host = "h";
	f.seq = 3;
	f.bytes = 4096;
	f.opened = 1767225600;	/* 2026-01-01T00:00:00Z */
	f.finished = 1767225660;
	f.cfg = &cfg;
	f.buildids = b.data;
	f.buildids_len = b.len;
	o = manifest_build(&f);
	CHECK(json_object_object_get_ex(o, "first_sample_time", &v) &&
	    v == NULL);
	CHECK(json_object_object_get_ex(o, "opened", &v) &&
	    strcmp(json_object_get_string(v), "2026-01-01T00:00:00Z") == 0);
	CHECK(json_object_object_get_ex(o, "seq", &v) &&
	    json_object_get_int(v) == 3);
	CHECK(json_object_object_get_ex(o, "settings", &v) &&
	    json_object_object_get_ex(v, "freq", NULL));
	/* no daemon keys: the manifest does not name the hand-off program */
	CHECK(!json_object_object_get_ex(v, "on_finish", NULL));
	json_object_put(o);
	f.samples = 2;
	f.time_first = 1000;
	f.time_last = 2000;
	o = manifest_build(&f);
	CHECK(json_object_object_get_ex(o, "last_sample_time", &v) &&
	    json_object_get_int64(v) == 2000);
	json_object_put(o);

	/* a salvaged file: no session, no opening known; no trigger, no
	 * compact counts unless asked */
	CHECK(!json_object_object_get_ex(o = manifest_build(&f),
	    "snapshot_trigger", NULL));
	CHECK(!json_object_object_get_ex(o, "unwound_samples", NULL));
	CHECK(json_object_object_get_ex(o, "session", &v) && v == NULL);
	CHECK(json_object_object_get_ex(o, "salvaged", &v) &&
	    json_object_get_type(v) == json_type_boolean &&
	    !json_object_get_boolean(v));
	CHECK(json_object_object_get_ex(o, "kernel", &v) &&
	    json_object_object_get_ex(v, "release", NULL));
	json_object_put(o);
	f.salvaged = 1;
	f.opened = 0;
	f.trigger = "psi:cpu";
	f.session = "burst";
	f.compact = 1;
	f.unwound = 5;
	o = manifest_build(&f);
	CHECK(json_object_object_get_ex(o, "opened", &v) && v == NULL);
	CHECK(json_object_object_get_ex(o, "salvaged", &v) &&
	    json_object_get_boolean(v));
	CHECK(json_object_object_get_ex(o, "snapshot_trigger", &v) &&
	    strcmp(json_object_get_string(v), "psi:cpu") == 0);
	CHECK(json_object_object_get_ex(o, "session", &v) &&
	    strcmp(json_object_get_string(v), "burst") == 0);
	CHECK(json_object_object_get_ex(o, "unwound_samples", &v) &&
	    json_object_get_int(v) == 5);
	CHECK(json_object_object_get_ex(o, "raw_samples", &v) &&
	    json_object_get_int(v) == 0);
	json_object_put(o);
	sbuf_finish(&b);

	return check_exit();
}

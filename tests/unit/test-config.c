/*
 * test-config: the one validator of settings, whether they come from the
 * config file, `start` or `configure`. Every refusal is also checked to
 * leave the settings exactly as they were: applying is all or nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "paths.h"

static struct config_error	 err;

/* When key takes effect, from the schema's rows; unknown: CONFIG_DAEMON. */
static enum config_when
key_when(const char *key)
{
	struct config_keyinfo	 info;

	return config_key_info(key, &info) == 0 ? info.when : CONFIG_DAEMON;
}

/* Apply the JSON text s on top of *cfg; on failure also check that *cfg
 * did not move by a byte. Returns 0 or the error code. */
static int
apply_changed(struct config *cfg, const char *s, enum config_origin origin,
    json_object **changed)
{
	struct config	 before = *cfg;
	json_object	*o;
	int		 rc;

	if ((o = json_tokener_parse(s)) == NULL) {
		printf("test bug: cannot parse %s\n", s);
		CHECK(o != NULL);
		return -1;
	}
	memset(&err, 0, sizeof(err));
	rc = config_apply(cfg, o, origin, &err, changed);
	json_object_put(o);
	if (rc == 0)
		return 0;
	CHECK(rc == -1);
	if (memcmp(&before, cfg, sizeof(before)) != 0) {
		printf("config changed by a refused apply of %s\n", s);
		CHECK(memcmp(&before, cfg, sizeof(before)) == 0);
	}
	if (changed != NULL)
		CHECK(*changed == NULL);
	CHECK(err.code != PROTO_OK);
	CHECK(err.msg[0] != '\0');
	return (int)err.code;
}

static int
apply(struct config *cfg, const char *s, enum config_origin origin)
{
	return apply_changed(cfg, s, origin, NULL);
}

/* Apply to fresh defaults: the usual single-key case. */
static int
apply1(struct config *cfg, const char *s)
{
	config_defaults(cfg);
	return apply(cfg, s, CONFIG_FILE);
}

static void
test_defaults(void)
{
	struct config	 c;

	config_defaults(&c);
	CHECK_EQ(c.nr_events, 1);
	CHECK_STR(c.events[0], "cpu-clock");
	CHECK_U64(c.freq, 99);
	CHECK_U64(c.period, 0);
	CHECK_EQ(c.callgraph, 1);
	CHECK_U64(c.mmap_pages, 128);
	CHECK_U64(c.cblocks, 2);
	CHECK_U64(c.rotate_size, UINT64_C(256) << 20);
	CHECK_U64(c.rotate_interval, 3600);
	CHECK_EQ(c.socket_mode, 0660);
	CHECK_STR(c.socket_group, "perfspill");
	CHECK_EQ(c.nr_control_groups, 0);
	CHECK_STR(c.output_dir, PERFSPILL_OUTPUT_DIR);
	CHECK_STR(c.socket_path, PERFSPILL_SOCKET);
	/* the rest of what the rows give, as they were written by hand */
	CHECK_U64(c.wakeup_pct, 0);
	CHECK_U64(c.drain_ms, 1000);
	CHECK_U64(c.mmap_flush, 0);
	CHECK_EQ(c.compression, 0);
	CHECK_EQ(c.exclude_self, 1);
	CHECK_EQ(c.kernel_build_id, 0);
	CHECK_EQ(c.all_cgroups, 0);
	CHECK_EQ(c.nr_cgroups, 0);
	CHECK_U64(c.realtime, CONFIG_REALTIME_DEFAULT);
	CHECK_EQ(c.writeback, 0);
	CHECK_U64(c.max_files, 168);
	CHECK_U64(c.max_size, UINT64_C(4) << 30);
	CHECK_U64(c.min_free, UINT64_C(1) << 30);
	CHECK_EQ(c.record_on_start, 0);
	CHECK_U64(c.max_clients, 128);
	CHECK_U64(c.client_timeout, 30);
	CHECK_STR(c.metrics_file, "");
	CHECK_U64(c.metrics_interval, 5);
	CHECK_STR(c.on_finish, "");
	CHECK_U64(c.on_finish_jobs, 2);
	CHECK_U64(c.on_finish_timeout, 600);
	CHECK_U64(c.on_finish_tries, 5);
	CHECK_U64(c.on_finish_retry, 30);
	CHECK_EQ(c.remove_after_handoff, 0);

	/* the defaults pass their own validator */
	CHECK_EQ(apply1(&c, "{}"), 0);
}

/* key=text as a command line gives it: the key's type decides. */
static void
test_text_value(void)
{
	static const struct {
		const char	*key, *text, *json;
	} t[] = {
		{ "events", "cpu-clock,sched:sched_switch",
		    "[ \"cpu-clock\", \"sched:sched_switch\" ]" },
		{ "events", "{cs,cpu-clock}:u,msr/event=1,umask=2/,cs",
		    "[ \"{cs,cpu-clock}:u\", \"msr\\/event=1,umask=2\\/\", \"cs\" ]" },
		{ "events", "", "[ ]" },
		{ "cpus", "0-3", "\"0-3\"" },
		{ "pids", "12", "\"12\"" },
		{ "cgroups", "", "[ ]" },
		{ "freq", "99", "99" },
		{ "freq", "-5", "-5" },
		{ "rotate_size", "256M", "\"256M\"" },
		{ "callgraph", "false", "false" },
		{ "callgraph", "1", "1" },
		{ "socket_mode", "0660", "\"0660\"" },
		{ "socket_group", "123", "\"123\"" },
		{ "nosuchkey", "true", "true" },
		{ "nosuchkey", "x", "\"x\"" },
	};
	json_object	*v;
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = config_text_value(t[i].key, t[i].text);
		CHECK(v != NULL);
		if (v == NULL)
			continue;
		CHECK_STR(json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_SPACED), t[i].json);
		json_object_put(v);
	}
}

/* {"events":[...]} with n names of namelen letters each. */
static void
events(char *buf, size_t len, int n, size_t namelen)
{
	size_t	 off;
	int	 i;

	off = (size_t)snprintf(buf, len, "{\"events\":[");
	for (i = 0; i < n && off + namelen + 8 < len; i++) {
		off += (size_t)snprintf(buf + off, len - off, "%s\"",
		    i ? "," : "");
		/* "e:eee", a tracepoint's syntax; "cs" when shorter */
		if (namelen < 3)
			off += (size_t)snprintf(buf + off, len - off, "cs");
		else {
			memset(buf + off, 'e', namelen);
			buf[off + 1] = ':';
			off += namelen;
		}
		off += (size_t)snprintf(buf + off, len - off, "\"");
	}
	snprintf(buf + off, len - off, "]}");
}

static void
test_recording_keys(void)
{
	/* call_graph's values: the stack size they give, 0 refused */
	static const struct {
		const char	*text;
		uint64_t	 size;
	} cg[] = {
		{ "dwarf", 8192 }, { "dwarf,4096", 4096 }, { "dwarf,1001", 1008 },
		{ "dwarf,0x1000", 4096 }, { "dwarf,65528", 65528 },
		{ "dwarf,65529", 0 }, { "dwarf,0", 0 }, { "dwarf,", 0 },
		{ "dwarf,-8", 0 }, { "dwarf,8k", 0 }, { "fp,8192", 0 },
		{ "lbr", 0 }, { "dwarfx", 0 }, { "", 0 },
	};
	struct config	 c;
	char		 buf[512];
	size_t		 i;

	/* events */
	CHECK_EQ(apply1(&c, "{\"events\":[\"cycles\",\"instructions\"]}"), 0);
	CHECK_EQ(c.nr_events, 2);
	CHECK_STR(c.events[0], "cycles");
	CHECK_STR(c.events[1], "instructions");
	CHECK_EQ(apply1(&c, "{\"events\":[\"sched:sched_switch\"]}"), 0);
	CHECK_STR(c.events[0], "sched:sched_switch");
	CHECK_EQ(apply1(&c, "{\"events\":[]}"), PROTO_E_BAD_VALUE);
	CHECK_STR(err.key, "events");
	CHECK_EQ(apply1(&c, "{\"events\":\"cycles\"}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"events\":[1]}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"events\":[\"cycles\",\"cyc les\"]}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"events\":[\"a/b\"]}"), PROTO_E_EVENT);
	/* perf's syntax: modifiers, groups, PMU terms; one entry may hold
	 * several events, and all of them count against the bound */
	CHECK_EQ(apply1(&c, "{\"events\":[\"cpu-clock:u\",\"{cs,"
	    "task-clock}:k\",\"msr/event=0,umask=1/\"]}"), 0);
	CHECK_EQ(c.nr_events, 3);
	CHECK_STR(c.events[1], "{cs,task-clock}:k");
	CHECK_EQ(apply1(&c, "{\"events\":[\"cpu-clock:z\"]}"), PROTO_E_EVENT);
	CHECK(strstr(err.msg, "bad modifier 'z'") != NULL);
	CHECK_EQ(apply1(&c, "{\"events\":[\"cs,cs,cs,cs,cs,cs,cs,cs,cs\","
	    "\"cs,cs,cs,cs,cs,cs,cs,cs\"]}"), PROTO_E_BAD_VALUE);
	CHECK(strstr(err.msg, "more than 16 events") != NULL);
	CHECK_EQ(apply1(&c, "{\"events\":[\"\"]}"), PROTO_E_BAD_VALUE);
	events(buf, sizeof(buf), CONFIG_MAX_EVENTS + 1, 1);
	CHECK_EQ(apply1(&c, buf), PROTO_E_BAD_VALUE);
	events(buf, sizeof(buf), CONFIG_MAX_EVENTS, 1);
	CHECK_EQ(apply1(&c, buf), 0);
	CHECK_EQ(c.nr_events, CONFIG_MAX_EVENTS);
	/* a name must fit with its NUL */
	events(buf, sizeof(buf), 1, CONFIG_EVENT_LEN);
	CHECK_EQ(apply1(&c, buf), PROTO_E_BAD_VALUE);
	events(buf, sizeof(buf), 1, CONFIG_EVENT_LEN - 1);
	CHECK_EQ(apply1(&c, buf), 0);
	CHECK_EQ(strlen(c.events[0]), CONFIG_EVENT_LEN - 1);

	/* freq and period: one or the other */
	CHECK_EQ(apply1(&c, "{\"freq\":4000}"), 0);
	CHECK_U64(c.freq, 4000);
	CHECK_U64(c.period, 0);
	CHECK_EQ(apply1(&c, "{\"period\":100000}"), 0);
	CHECK_U64(c.period, 100000);
	CHECK_U64(c.freq, 0);
	/* and a later freq replaces a stored period */
	CHECK_EQ(apply(&c, "{\"freq\":10}", CONFIG_REQUEST), 0);
	CHECK_U64(c.freq, 10);
	CHECK_U64(c.period, 0);
	CHECK_EQ(apply1(&c, "{\"freq\":99,\"period\":1000}"),
	    PROTO_E_BAD_VALUE);
	CHECK(strstr(err.msg, "freq") != NULL &&
	    strstr(err.msg, "period") != NULL);
	CHECK_EQ(apply1(&c, "{\"freq\":0}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"freq\":1000001}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"freq\":\"99\"}"), PROTO_E_BAD_TYPE);
	CHECK_STR(err.key, "freq");
	CHECK_EQ(apply1(&c, "{\"freq\":9.5}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"freq\":null}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"period\":0}"), PROTO_E_BAD_VALUE);

	/* callgraph */
	CHECK_EQ(apply1(&c, "{\"callgraph\":false}"), 0);
	CHECK_EQ(c.callgraph, 0);
	CHECK_EQ(apply1(&c, "{\"callgraph\":1}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"callgraph\":\"yes\"}"), PROTO_E_BAD_TYPE);

	/* call_graph: perf record's --call-graph values and limits; SIZE
	 * rounded up to a multiple of 8 as perf does, in any base strtoul
	 * reads */
	config_defaults(&c);
	CHECK_EQ(c.callgraph, CONFIG_CG_FP);
	CHECK_EQ(c.stack_size, CONFIG_STACK_DEFAULT);
	for (i = 0; i < sizeof(cg) / sizeof(cg[0]); i++) {
		snprintf(buf, sizeof(buf), "{\"call_graph\":\"%s\"}", cg[i].text);
		CHECK_EQ(apply1(&c, buf), cg[i].size ? 0 : PROTO_E_BAD_VALUE);
		if (cg[i].size == 0)
			CHECK(strstr(err.msg, "call_graph") != NULL);
		else {
			CHECK_EQ(c.callgraph, CONFIG_CG_DWARF);
			CHECK_U64(c.stack_size, cg[i].size);
		}
	}
	CHECK_EQ(apply1(&c, "{\"call_graph\":\"dwarf,65529\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK(strstr(err.msg, "incorrect stack dump size (max 65528)") != NULL);
	CHECK_EQ(apply1(&c, "{\"call_graph\":true}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"call_graph\":\"none\"}"), 0);
	CHECK_EQ(c.callgraph, CONFIG_CG_NONE);
	/* callgraph true is fp, as -g; call_graph wins in one object */
	CHECK_EQ(apply(&c, "{\"callgraph\":true}", CONFIG_FILE), 0);
	CHECK_EQ(c.callgraph, CONFIG_CG_FP);
	CHECK_EQ(apply1(&c, "{\"call_graph\":\"dwarf\",\"callgraph\":true}"),
	    0);
	CHECK_EQ(c.callgraph, CONFIG_CG_DWARF);
	CHECK_EQ(apply1(&c, "{\"callgraph\":true,\"call_graph\":\"fp\"}"), 0);
	CHECK_EQ(c.callgraph, CONFIG_CG_FP);
	CHECK_EQ(apply1(&c, "{\"callgraph\":false,\"call_graph\":\"dwarf\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(c.callgraph, CONFIG_CG_FP);
	CHECK_EQ(apply1(&c, "{\"callgraph\":false,\"call_graph\":\"none\"}"),
	    0);
	CHECK_EQ(c.callgraph, CONFIG_CG_NONE);

	/* kernel_build_id: off unless asked for (it breaks other recorders) */
	config_defaults(&c);
	CHECK_EQ(c.kernel_build_id, 0);
	CHECK_EQ(apply1(&c, "{\"kernel_build_id\":true}"), 0);
	CHECK_EQ(c.kernel_build_id, 1);
	CHECK_EQ(apply1(&c, "{\"kernel_build_id\":1}"), PROTO_E_BAD_TYPE);

	/* mmap_pages: a power of two in [1, 65536] */
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":1}"), 0);
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":65536}"), 0);
	CHECK_U64(c.mmap_pages, 65536);
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":3}"), PROTO_E_BAD_VALUE);
	CHECK_STR(err.key, "mmap_pages");
	CHECK(strstr(err.msg, "power of two") != NULL);
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":96}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":0}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":131072}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"wakeup_pct\":75}"), 0);
	CHECK_U64(c.wakeup_pct, 75);
	CHECK_EQ(apply1(&c, "{\"wakeup_pct\":0}"), 0);
	CHECK_U64(c.wakeup_pct, 0);
	CHECK_EQ(apply1(&c, "{\"wakeup_pct\":91}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"drain_ms\":10}"), 0);
	CHECK_EQ(apply1(&c, "{\"drain_ms\":10000}"), 0);
	CHECK_EQ(apply1(&c, "{\"drain_ms\":9}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"drain_ms\":10001}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"compression\":3}"), 0);
	CHECK_EQ(c.compression, 3);
	CHECK_EQ(apply1(&c, "{\"compression\":0}"), 0);
	CHECK_EQ(apply1(&c, "{\"compression\":22}"), 0);
	CHECK_EQ(apply1(&c, "{\"compression\":23}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"compression\":-1}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"realtime\":1}"), 0);
	CHECK_EQ(c.realtime, 1);
	CHECK_EQ(apply1(&c, "{\"realtime\":99}"), 0);
	CHECK_EQ(apply1(&c, "{\"realtime\":100}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"realtime\":true}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"realtime\":0}"), 0);
	CHECK_EQ(c.writeback, 0);	/* off unless asked for */
	CHECK_EQ(apply1(&c, "{\"writeback\":true}"), 0);
	CHECK_EQ(c.writeback, 1);
	CHECK_EQ(apply1(&c, "{\"writeback\":1}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"mmap_flush\":\"64K\"}"), 0);
	CHECK_EQ(c.mmap_flush, 65536);
	CHECK_EQ(apply1(&c, "{\"mmap_flush\":1}"), 0);
	CHECK_EQ(c.mmap_flush, 1);
	CHECK_EQ(apply1(&c, "{\"mmap_flush\":\"8G\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"mmap_flush\":-1}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"mmap_flush\":0}"), 0);
}

static void
test_live_keys(void)
{
	struct config	 c;

	/* cblocks: 0 (serial) to CONFIG_CBLOCKS_MAX */
	CHECK_EQ(apply1(&c, "{\"cblocks\":0}"), 0);
	CHECK_U64(c.cblocks, 0);
	CHECK_EQ(apply1(&c, "{\"cblocks\":8}"), 0);
	CHECK_U64(c.cblocks, 8);
	CHECK_EQ(apply1(&c, "{\"cblocks\":9}"), PROTO_E_BAD_VALUE);
	CHECK_STR(err.key, "cblocks");
	CHECK_EQ(apply1(&c, "{\"cblocks\":-1}"), PROTO_E_BAD_VALUE);
	CHECK_STR(err.key, "cblocks");
	CHECK_EQ(apply1(&c, "{\"cblocks\":18446744073709551615}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cblocks\":\"2\"}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"cblocks\":true}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"cblocks\":2.0}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"cblocks\":[2]}"), PROTO_E_BAD_TYPE);

	/* rotate_size: bytes or a size string, at least 1M, 0 for off */
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"512M\"}"), 0);
	CHECK_U64(c.rotate_size, UINT64_C(512) << 20);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"512MiB\"}"), 0);
	CHECK_U64(c.rotate_size, UINT64_C(512) << 20);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":536870912}"), 0);
	CHECK_U64(c.rotate_size, UINT64_C(512) << 20);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":0}"), 0);
	CHECK_U64(c.rotate_size, 0);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"0\"}"), 0);
	CHECK_U64(c.rotate_size, 0);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":1048576}"), 0);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":1048575}"), PROTO_E_BAD_VALUE);
	CHECK(strstr(err.msg, "0 for off") != NULL);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"512K\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"2048T\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"1X\"}"), PROTO_E_BAD_VALUE);
	CHECK_STR(err.key, "rotate_size");
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"-1M\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":-1}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":true}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"rotate_size\":1.5}"), PROTO_E_BAD_TYPE);

	/* rotate_interval: seconds or a duration string, 0 for off */
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":\"1h\"}"), 0);
	CHECK_U64(c.rotate_interval, 3600);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":\"15m\"}"), 0);
	CHECK_U64(c.rotate_interval, 900);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":600}"), 0);
	CHECK_U64(c.rotate_interval, 600);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":0}"), 0);
	CHECK_U64(c.rotate_interval, 0);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":\"365d\"}"), 0);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":\"366d\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":\"1w\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"rotate_interval\":\"1G\"}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"max_files\":0}"), 0);
	CHECK_U64(c.max_files, 0);
	CHECK_EQ(apply1(&c, "{\"max_files\":1000000}"), 0);
	CHECK_EQ(apply1(&c, "{\"max_files\":1000001}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"max_files\":\"10\"}"), PROTO_E_BAD_TYPE);

	CHECK_EQ(apply1(&c, "{\"max_size\":\"4G\"}"), 0);
	CHECK_U64(c.max_size, UINT64_C(4) << 30);
	CHECK_EQ(apply1(&c, "{\"max_size\":0}"), 0);
	CHECK_U64(c.max_size, 0);
	CHECK_EQ(apply1(&c, "{\"max_size\":\"512K\"}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"min_free\":0}"), 0);
	CHECK_U64(c.min_free, 0);
	CHECK_EQ(apply1(&c, "{\"min_free\":\"10G\"}"), 0);
	CHECK_U64(c.min_free, UINT64_C(10) << 30);
	CHECK_EQ(apply1(&c, "{\"min_free\":\"10GB\"}"), 0);
	CHECK_EQ(apply1(&c, "{\"min_free\":\"10 G\"}"), PROTO_E_BAD_VALUE);
}

static void
test_daemon_keys(void)
{
	struct config	 c;
	char		 buf[1024];
	static const char *daemon_keys[] = {
		"{\"record_on_start\":true}",
		"{\"output_dir\":\"/var/tmp/spill\"}",
		"{\"socket\":\"/run/x.sock\"}",
		"{\"socket_mode\":\"0600\"}",
		"{\"socket_group\":\"wheel\"}",
		"{\"control_groups\":[\"wheel\"]}",
		"{\"max_clients\":4}",
		"{\"client_timeout\":10}",
		"{\"on_finish\":\"/usr/local/sbin/ship\"}",
		"{\"on_finish_jobs\":4}",
		"{\"on_finish_timeout\":\"5m\"}",
		"{\"on_finish_tries\":3}",
		"{\"on_finish_retry\":\"10s\"}",
		"{\"remove_after_handoff\":true}",
		"{\"on_finish_user\":\"nobody\"}",
		"{\"on_finish_unit\":false}",
	};
	size_t		 i;
	int		 n;

	/* each is fine in the file and refused over the socket, naming the
	 * key, whether or not the value itself is valid */
	for (i = 0; i < sizeof(daemon_keys) / sizeof(daemon_keys[0]); i++) {
		CHECK_EQ(apply1(&c, daemon_keys[i]), 0);
		config_defaults(&c);
		CHECK_EQ(apply(&c, daemon_keys[i], CONFIG_REQUEST),
		    PROTO_E_NOT_SETTABLE);
		CHECK(err.key[0] != '\0' &&
		    strstr(daemon_keys[i], err.key) != NULL);
	}
	config_defaults(&c);
	CHECK_EQ(apply(&c, "{\"output_dir\":\"relative\"}", CONFIG_REQUEST),
	    PROTO_E_NOT_SETTABLE);
	CHECK_STR(err.key, "output_dir");

	/* on_finish: "" is off (the default), else an absolute path */
	CHECK_STR(c.on_finish, "");
	CHECK_EQ(apply1(&c, "{\"on_finish\":\"/bin/true\"}"), 0);
	CHECK_STR(c.on_finish, "/bin/true");
	CHECK_EQ(apply1(&c, "{\"on_finish\":\"\"}"), 0);
	CHECK_STR(c.on_finish, "");
	CHECK_EQ(apply1(&c, "{\"on_finish\":\"ship.sh\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"on_finish_jobs\":0}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"on_finish_tries\":0}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"on_finish_timeout\":\"2d\"}"),
	    PROTO_E_BAD_VALUE);
	/* "" stays refused where a path is required */
	CHECK_EQ(apply1(&c, "{\"socket\":\"\"}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"record_on_start\":true}"), 0);
	CHECK_EQ(c.record_on_start, 1);
	CHECK_EQ(apply1(&c, "{\"record_on_start\":\"true\"}"),
	    PROTO_E_BAD_TYPE);

	/* paths: absolute, no "..", and a socket path that fits sun_path */
	CHECK_EQ(apply1(&c, "{\"output_dir\":\"/var/tmp/spill\"}"), 0);
	CHECK_STR(c.output_dir, "/var/tmp/spill");
	CHECK_EQ(apply1(&c, "{\"output_dir\":\"var/tmp\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"output_dir\":\"\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"output_dir\":\"/a/../b\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"output_dir\":\"/a/..\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"output_dir\":\"/a/..b\"}"), 0);
	CHECK_EQ(apply1(&c, "{\"output_dir\":5}"), PROTO_E_BAD_TYPE);
	n = snprintf(buf, sizeof(buf), "{\"socket\":\"/");
	memset(buf + n, 's', 106);
	snprintf(buf + n + 106, sizeof(buf) - (size_t)n - 106, "\"}");
	CHECK_EQ(apply1(&c, buf), 0);			/* 107 bytes */
	CHECK_EQ(strlen(c.socket_path), 107);
	memset(buf + n, 's', 107);
	snprintf(buf + n + 107, sizeof(buf) - (size_t)n - 107, "\"}");
	CHECK_EQ(apply1(&c, buf), PROTO_E_BAD_VALUE);	/* 108 bytes */
	CHECK_STR(err.key, "socket");

	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"0600\"}"), 0);
	CHECK_EQ(c.socket_mode, 0600);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"660\"}"), 0);
	CHECK_EQ(c.socket_mode, 0660);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"0999\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"01777\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":432}"), PROTO_E_BAD_TYPE);
	/* octal digits only: strtoul would read these as 0 or 0660 */
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"-0\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"+0660\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\" 0660\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_mode\":\"-0660\"}"),
	    PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"socket_group\":\"wheel\"}"), 0);
	CHECK_STR(c.socket_group, "wheel");
	CHECK_EQ(apply1(&c, "{\"socket_group\":\"bad name\"}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_group\":\"\"}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"socket_group\":[]}"), PROTO_E_BAD_TYPE);

	CHECK_EQ(apply1(&c, "{\"control_groups\":[\"wheel\",\"adm\"]}"), 0);
	CHECK_EQ(c.nr_control_groups, 2);
	CHECK_STR(c.control_groups[1], "adm");
	CHECK_EQ(apply1(&c, "{\"control_groups\":[]}"), 0);
	CHECK_EQ(c.nr_control_groups, 0);
	CHECK_EQ(apply1(&c, "{\"control_groups\":[\"a\",\"b\",\"c\",\"d\","
	    "\"e\",\"f\",\"g\",\"h\",\"i\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"control_groups\":[\"a:b\"]}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"control_groups\":\"wheel\"}"),
	    PROTO_E_BAD_TYPE);

	CHECK_EQ(apply1(&c, "{\"max_clients\":4096}"), 0);
	CHECK_EQ(apply1(&c, "{\"max_clients\":0}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"max_clients\":4097}"), PROTO_E_BAD_VALUE);

	CHECK_EQ(apply1(&c, "{\"client_timeout\":\"1m\"}"), 0);
	CHECK_U64(c.client_timeout, 60);
	CHECK_EQ(apply1(&c, "{\"client_timeout\":0}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"client_timeout\":\"2h\"}"), PROTO_E_BAD_VALUE);
}

static void
test_unknown(void)
{
	struct config	 c;

	CHECK_EQ(apply1(&c, "{\"cblock\":2}"), PROTO_E_UNKNOWN_KEY);
	CHECK_STR(err.key, "cblock");
	CHECK(strstr(err.msg, "cblock") != NULL);
	config_defaults(&c);
	CHECK_EQ(apply(&c, "{\"bogus\":1}", CONFIG_REQUEST),
	    PROTO_E_UNKNOWN_KEY);
	CHECK_STR(err.key, "bogus");
	CHECK(strstr(err.msg, "did you mean") == NULL);
	/* the nearest key is named */
	CHECK_EQ(apply1(&c, "{\"evnets\":[\"cs\"]}"), PROTO_E_UNKNOWN_KEY);
	CHECK_STR(err.msg, "unknown setting 'evnets' (did you mean 'events'?)");
	/* keys are case sensitive */
	CHECK_EQ(apply1(&c, "{\"CBLOCKS\":2}"), PROTO_E_UNKNOWN_KEY);

	/* not an object at all */
	CHECK_EQ(apply1(&c, "[1]"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "7"), PROTO_E_BAD_TYPE);
}

static void
test_all_or_nothing(void)
{
	struct config	 c;
	json_object	*changed;

	/* a good key, then a bad one, and the other way round */
	CHECK_EQ(apply1(&c, "{\"cblocks\":4,\"mmap_pages\":3}"),
	    PROTO_E_BAD_VALUE);
	CHECK_U64(c.cblocks, 2);
	CHECK_EQ(apply1(&c, "{\"mmap_pages\":3,\"cblocks\":4}"),
	    PROTO_E_BAD_VALUE);
	CHECK_U64(c.cblocks, 2);
	CHECK_EQ(apply1(&c, "{\"events\":[\"cycles\"],\"freq\":0}"),
	    PROTO_E_BAD_VALUE);
	CHECK_STR(c.events[0], "cpu-clock");
	CHECK_EQ(apply1(&c, "{\"rotate_size\":\"1G\",\"bogus\":1}"),
	    PROTO_E_UNKNOWN_KEY);
	CHECK_U64(c.rotate_size, UINT64_C(256) << 20);
	config_defaults(&c);
	CHECK_EQ(apply(&c, "{\"cblocks\":4,\"output_dir\":\"/x\"}",
	    CONFIG_REQUEST), PROTO_E_NOT_SETTABLE);
	CHECK_U64(c.cblocks, 2);
	/* refused after everything else was applied to the copy */
	CHECK_EQ(apply1(&c, "{\"cblocks\":4,\"freq\":50,\"period\":5}"),
	    PROTO_E_BAD_VALUE);
	CHECK_U64(c.freq, 99);

	/* a refusal also leaves a non-default config alone */
	CHECK_EQ(apply1(&c, "{\"period\":5000,\"cblocks\":0,\"events\":"
	    "[\"cs\",\"cpu-clock\",\"a:b\"],\"control_groups\":[\"adm\"]}"),
	    0);
	changed = (json_object *)(uintptr_t)1;
	CHECK_EQ(apply_changed(&c, "{\"events\":[\"cs\"],\"cblocks\":99}",
	    CONFIG_REQUEST, &changed), PROTO_E_BAD_VALUE);
	CHECK(changed == NULL);
	CHECK_EQ(c.nr_events, 3);
	CHECK_U64(c.period, 5000);
}

/* The strings of array a, joined by commas. */
static const char *
joined(json_object *o, const char *key)
{
	static char	 buf[256];
	json_object	*a;
	size_t		 i, n = 0;

	buf[0] = '\0';
	if (!json_object_object_get_ex(o, key, &a) ||
	    !json_object_is_type(a, json_type_array))
		return "(missing)";
	for (i = 0; i < json_object_array_length(a) && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
		    i ? "," : "", json_object_get_string(
		    json_object_array_get_idx(a, i)));
	return buf;
}

static void
test_changed(void)
{
	struct config	 c;
	json_object	*changed = NULL;

	config_defaults(&c);
	CHECK_EQ(apply_changed(&c, "{\"cblocks\":4,\"freq\":200,"
	    "\"rotate_size\":\"1G\",\"events\":[\"cycles\"]}", CONFIG_REQUEST,
	    &changed), 0);
	CHECK(changed != NULL);
	if (changed != NULL) {
		CHECK_EQ(json_object_object_length(changed), 2);
		CHECK_STR(joined(changed, "live"), "cblocks,rotate_size");
		CHECK_STR(joined(changed, "next_start"), "freq,events");
		json_object_put(changed);
	}

	/* nothing set: both lists there, and empty */
	changed = NULL;
	CHECK_EQ(apply_changed(&c, "{}", CONFIG_REQUEST, &changed), 0);
	CHECK(changed != NULL);
	if (changed != NULL) {
		CHECK_STR(joined(changed, "live"), "");
		CHECK_STR(joined(changed, "next_start"), "");
		json_object_put(changed);
	}

	/* from the file, daemon keys are in neither list */
	changed = NULL;
	CHECK_EQ(apply_changed(&c, "{\"socket_mode\":\"0600\",\"max_files\":1}",
	    CONFIG_FILE, &changed), 0);
	if (changed != NULL) {
		CHECK_STR(joined(changed, "live"), "max_files");
		CHECK_STR(joined(changed, "next_start"), "");
		json_object_put(changed);
	}

	CHECK_EQ(key_when("cblocks"), CONFIG_LIVE);
	CHECK_EQ(key_when("rotate_interval"), CONFIG_LIVE);
	CHECK_EQ(key_when("freq"), CONFIG_NEXT_START);
	CHECK_EQ(key_when("events"), CONFIG_NEXT_START);
	CHECK_EQ(key_when("output_dir"), CONFIG_DAEMON);
	CHECK_EQ(key_when("socket"), CONFIG_DAEMON);
	CHECK_EQ(key_when("bogus"), CONFIG_DAEMON);
}

/*
 * What a configure changes in a recording in progress: the live keys,
 * each of them, and nothing else (record_update).
 */
static void
test_copy_live(void)
{
	struct config		 rec, cfg, want;
	struct config_keyinfo	 info;
	char			 live[256] = "";
	size_t			 i;

	for (i = 0; config_key_at(i, &info) == 0; i++)
		if (info.when == CONFIG_LIVE) {
			strcat(live, " ");
			strcat(live, info.name);
		}
	CHECK_STR(live, " cblocks rotate_size rotate_interval max_files "
	    "max_size min_free trigger_interval snapshot_interval");

	config_defaults(&rec);
	config_defaults(&cfg);
	CHECK_EQ(apply1(&cfg, "{\"cblocks\":5,\"rotate_size\":\"3G\","
	    "\"rotate_interval\":\"2h\",\"max_files\":7,\"max_size\":\"9G\","
	    "\"min_free\":\"1G\",\"freq\":777,\"events\":[\"task-clock\"],"
	    "\"mmap_pages\":64,\"compression\":3,\"exclude_self\":false,"
	    "\"cgroups\":[\"a\"]}"), 0);
	want = rec;
	want.cblocks = 5;
	want.rotate_size = UINT64_C(3) << 30;
	want.rotate_interval = 7200;
	want.max_files = 7;
	want.max_size = UINT64_C(9) << 30;
	want.min_free = UINT64_C(1) << 30;
	config_copy_live(&rec, &cfg);
	CHECK(memcmp(&rec, &want, sizeof(rec)) == 0);
	CHECK_U64(rec.freq, want.freq);
	CHECK_STR(rec.events[0], "cpu-clock");
}

/* to_json, as text and back, then apply to fresh defaults: the same. */
static void
round_trip(const struct config *c, int with_daemon, enum config_origin o,
    int line)
{
	struct config	 back;
	json_object	*j, *parsed;
	const char	*s;

	j = config_to_json(c, with_daemon);
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_SPACED);
	parsed = json_tokener_parse(s);
	CHECK(parsed != NULL);
	config_defaults(&back);
	memset(&err, 0, sizeof(err));
	if (parsed == NULL || config_apply(&back, parsed, o, &err, NULL) != 0)
		printf("line %d: round trip refused: %s\n", line, err.msg);
	else if (memcmp(&back, c, sizeof(back)) != 0)
		printf("line %d: round trip differs:\n%s\n", line, s);
	CHECK(memcmp(&back, c, sizeof(back)) == 0);
	json_object_put(parsed);
	json_object_put(j);
}

static void
test_to_json(void)
{
	struct config	 c;
	json_object	*j, *v;
	json_object_iter it;
	char		 order[1024];
	size_t		 n = 0;

	config_defaults(&c);
	round_trip(&c, 1, CONFIG_FILE, __LINE__);
	round_trip(&c, 0, CONFIG_REQUEST, __LINE__);

	CHECK_EQ(apply(&c, "{\"events\":[\"cycles\",\"sched:sched_switch\"],"
	    "\"period\":100000,\"callgraph\":false,\"mmap_pages\":512,"
	    "\"wakeup_pct\":25,\"drain_ms\":250,\"compression\":3,"
	    "\"cblocks\":8,\"rotate_size\":0,\"rotate_interval\":\"1d\","
	    "\"max_files\":0,\"max_size\":\"1T\",\"min_free\":0,"
	    "\"record_on_start\":true,\"output_dir\":\"/srv/spill\","
	    "\"socket\":\"/run/spill.sock\",\"socket_mode\":\"0600\","
	    "\"socket_group\":\"adm\",\"control_groups\":[\"adm\",\"wheel\"],"
	    "\"max_clients\":16,\"client_timeout\":\"5m\"}", CONFIG_FILE), 0);
	round_trip(&c, 1, CONFIG_FILE, __LINE__);

	/* every key, in schema order; the unused one of freq/period left out */
	j = config_to_json(&c, 1);
	json_object_object_foreachC(j, it)
		n += (size_t)snprintf(order + n, sizeof(order) - n, "%s ",
		    it.key);
	CHECK_STR(order, "events period callgraph call_graph mmap_pages wakeup_pct "
	    "drain_ms mmap_flush compression exclude_self kernel_build_id "
	    "all_cgroups cgroups cpus all_user all_kernel pids tids user "
	    "mode window window_bytes triggers "
	    "realtime writeback direct_io direct_tail_ms cblocks "
	    "rotate_size "
	    "rotate_interval "
	    "max_files max_size min_free trigger_interval snapshot_interval "
	    "record_on_start "
	    "max_sessions max_memory session_duration output_dir socket "
	    "socket_mode socket_group control_groups max_clients "
	    "client_timeout metrics_file metrics_interval on_finish "
	    "on_finish_jobs on_finish_timeout on_finish_tries on_finish_retry "
	    "remove_after_handoff on_finish_user on_finish_unit ");
	CHECK(json_object_object_get_ex(j, "socket_mode", &v) &&
	    strcmp(json_object_get_string(v), "0600") == 0);
	CHECK(json_object_object_get_ex(j, "rotate_size", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) == 0);
	CHECK(json_object_object_get_ex(j, "max_size", &v) &&
	    json_object_get_uint64(v) == UINT64_C(1) << 40);
	json_object_put(j);

	/* without the daemon keys: what start and configure may send back */
	j = config_to_json(&c, 0);
	CHECK(!json_object_object_get_ex(j, "output_dir", NULL));
	CHECK(!json_object_object_get_ex(j, "socket", NULL));
	CHECK(!json_object_object_get_ex(j, "control_groups", NULL));
	CHECK(json_object_object_get_ex(j, "cblocks", NULL));
	json_object_put(j);
	{
		struct config	 req;
		json_object	*o;

		/* applied over the socket onto a config with the same daemon
		 * keys, it changes nothing */
		req = c;
		o = config_to_json(&c, 0);
		CHECK_EQ(config_apply(&req, o, CONFIG_REQUEST, &err, NULL), 0);
		CHECK(memcmp(&req, &c, sizeof(req)) == 0);
		json_object_put(o);
	}

	/* back to freq: period is then the one left out */
	CHECK_EQ(apply(&c, "{\"freq\":1}", CONFIG_REQUEST), 0);
	j = config_to_json(&c, 1);
	CHECK(json_object_object_get_ex(j, "freq", NULL));
	CHECK(!json_object_object_get_ex(j, "period", NULL));
	json_object_put(j);
	round_trip(&c, 1, CONFIG_FILE, __LINE__);
}

static void
test_cmdline(void)
{
	struct config	 c;
	char		 buf[256];

	config_defaults(&c);
	config_cmdline(&c, buf, sizeof(buf));
	CHECK_STR(buf, "perfspilld record -a -e cpu-clock -F 99 -g -m 128 "
	    "--aio=2");
	CHECK_EQ(apply(&c, "{\"events\":[\"cycles\",\"instructions\"],"
	    "\"period\":4000,\"callgraph\":false,\"compression\":1,"
	    "\"cblocks\":0}", CONFIG_REQUEST), 0);
	config_cmdline(&c, buf, sizeof(buf));
	CHECK_STR(buf, "perfspilld record -a -e cycles -e instructions -c 4000 "
	    "-m 128 --aio=0 -z 1");
	/* a short buffer is cut, not overrun */
	memset(buf, 'x', sizeof(buf));
	config_cmdline(&c, buf, 16);
	CHECK(strlen(buf) == 15 && buf[16] == 'x');
}

/* Write text to a new file in dir; returns its path (static). */
static const char *
write_file(const char *dir, const char *name, const char *text)
{
	static char	 path[512];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		return path;
	}
	fputs(text, f);
	fclose(f);
	return path;
}

static int
load(struct config *c, const char *path)
{
	struct config	 before = *c;

	memset(&err, 0, sizeof(err));
	if (config_load(c, path, &err) == 0)
		return 0;
	CHECK(memcmp(&before, c, sizeof(before)) == 0);
	/* an operator reads this: it must say which file */
	if (strncmp(err.msg, path, strlen(path)) != 0)
		printf("message does not start with the path: %s\n", err.msg);
	CHECK(strncmp(err.msg, path, strlen(path)) == 0 &&
	    err.msg[strlen(path)] == ':');
	/* and fits on one line of the journal */
	if (strchr(err.msg, '\n') != NULL)
		printf("message holds a newline: \"%s\"\n", err.msg);
	CHECK(strchr(err.msg, '\n') == NULL);
	return (int)err.code;
}

/* Write text to dir/name, load it on top of *c, remove it. */
static int
load_text(struct config *c, const char *dir, const char *name,
    const char *text)
{
	char	 path[512];
	int	 rc;

	snprintf(path, sizeof(path), "%s", write_file(dir, name, text));
	rc = load(c, path);
	unlink(path);
	return rc;
}

/* The message after "DIR/NAME:" starts with want ("LINE:COL: ..."). */
static int
located(const char *dir, const char *name, const char *want)
{
	char	 path[512];
	size_t	 n;

	n = (size_t)snprintf(path, sizeof(path), "%s/%s:", dir, name);
	if (strncmp(err.msg, path, n) == 0 &&
	    strncmp(err.msg + n, want, strlen(want)) == 0)
		return 1;
	printf("expected %s%s..., got %s\n", path, want, err.msg);
	return 0;
}

static void
test_load_strict(const char *dir)
{
	static const struct {
		const char	*text;
		int		 code;
		const char	*where;	/* "LINE:COL: message" starts so */
	} cases[] = {
		/* syntax errors: where json-c stopped */
		{ "{\n\t\"cblocks\": 4,\n\t\"freq\" 9\n}\n", PROTO_E_BAD_JSON,
		    "3:9: malformed JSON" },
		/* a bad value: at its key, comments counted */
		{ "// c\n{\n  \"freq\": 9,\n  /* \"cblocks\": 1 */ \"cblocks\": 99"
		    "\n}\n", PROTO_E_BAD_VALUE, "4:22: cblocks must" },
		/* duplicate keys: json-c would keep the last one silently */
		{ "{\n\"cblocks\": 1,\n\"cblocks\": 8\n}\n", PROTO_E_BAD_JSON,
		    "3:1: duplicate key 'cblocks'" },
		/* the same key spelt with an escape is the same key */
		{ "{\"freq\": 9, \"fr\\u0065q\": 8}", PROTO_E_BAD_JSON,
		    "1:13: duplicate key 'freq'" },
		/* each object has keys of its own: equal keys in two objects
		 * are fine, two in one are not, wherever it is */
		{ "{\"freq\": 9, \"events\": [{\"freq\": 1}, {\"freq\": 1, "
		    "\"freq\": 2}]}", PROTO_E_BAD_JSON, "1:49: duplicate key" },
		/* \u0000 in a string or key: json-c would cut the C string */
		{ "{\"output_dir\": \"/var/tmp\\u0000/etc\"}", PROTO_E_BAD_JSON,
		    "1:16: a string holds \\u0000" },
		{ "{\"cblocks\\u0000x\": 3}", PROTO_E_BAD_JSON,
		    "1:2: a string holds \\u0000" },
	};
	struct config	 c;
	char		 path[512];
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		config_defaults(&c);
		CHECK_EQ(load_text(&c, dir, "case.json", cases[i].text),
		    cases[i].code);
		CHECK(located(dir, "case.json", cases[i].where));
		CHECK_U64(c.cblocks, 2);
	}
	/* other escapes are fine */
	CHECK_EQ(load_text(&c, dir, "esc.json",
	    "{\"socket_group\": \"wh\\u0065el\"}"), 0);
	CHECK_STR(c.socket_group, "wheel");

	/* a directory or a FIFO is refused at once, not read (a FIFO
	 * without a writer would block start-up for ever) */
	CHECK_EQ(load(&c, dir), PROTO_E_BAD_JSON);
	CHECK(strstr(err.msg, "not a regular file (a directory)") != NULL);
	snprintf(path, sizeof(path), "%s/fifo.json", dir);
	if (mkfifo(path, 0600) == 0) {
		CHECK_EQ(load(&c, path), PROTO_E_BAD_JSON);
		CHECK(strstr(err.msg, "not a regular file (a FIFO)") != NULL);
		unlink(path);
	} else
		CHECK(!"mkfifo");
}

static void
test_load(void)
{
	struct config	 c;
	char		 dir[256];
	const char	*tmp, *p;
	char		 path[512];

	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/perfspill-config.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		CHECK(!"mkdtemp");
		return;
	}

	p = write_file(dir, "good.json",
	    "/*\n"
	    " * perfspilld.json: comments are allowed, so that a deployed\n"
	    " * file can say why it differs from the defaults.\n"
	    " */\n"
	    "{\n"
	    "\t\"cblocks\": 4,\t\t/* more in flight for slow disks */\n"
	    "\t\"rotate_size\": \"512M\",\n"
	    "\t/* \"freq\": 1, */\n"
	    "\t\"output_dir\": \"/srv/spill\"\n"
	    "}\n");
	config_defaults(&c);
	CHECK_EQ(load(&c, p), 0);
	CHECK_U64(c.cblocks, 4);
	CHECK_U64(c.rotate_size, UINT64_C(512) << 20);
	CHECK_U64(c.freq, 99);
	CHECK_STR(c.output_dir, "/srv/spill");
	unlink(p);

	/* not JSON: the file is named, the config untouched */
	p = write_file(dir, "broken.json", "{\n\t\"cblocks\": 4,\n");
	snprintf(path, sizeof(path), "%s", p);
	config_defaults(&c);
	CHECK_EQ(load(&c, path), PROTO_E_BAD_JSON);
	unlink(path);

	p = write_file(dir, "empty.json", "");
	snprintf(path, sizeof(path), "%s", p);
	CHECK_EQ(load(&c, path), PROTO_E_BAD_JSON);
	unlink(path);

	/* valid JSON, invalid setting: named file, then the key's message */
	p = write_file(dir, "value.json", "{ \"cblocks\": 9 }\n");
	snprintf(path, sizeof(path), "%s", p);
	CHECK_EQ(load(&c, path), PROTO_E_BAD_VALUE);
	CHECK_STR(err.key, "cblocks");
	CHECK(strstr(err.msg, "cblocks must be between") != NULL);
	unlink(path);

	p = write_file(dir, "array.json", "[ { \"cblocks\": 2 } ]\n");
	snprintf(path, sizeof(path), "%s", p);
	CHECK(load(&c, path) != 0);
	unlink(path);

	/* trailing bytes after the object: what follows is not silently
	 * dropped (as the protocol refuses two objects on a line) */
	p = write_file(dir, "trailing.json",
	    "{ \"cblocks\": 3 }\n{ \"cblocks\": 9 }\n");
	snprintf(path, sizeof(path), "%s", p);
	config_defaults(&c);
	CHECK_EQ(load(&c, path), PROTO_E_BAD_JSON);
	unlink(path);

	/* missing */
	snprintf(path, sizeof(path), "%s/missing.json", dir);
	CHECK(load(&c, path) != 0);

	test_load_strict(dir);

	if (rmdir(dir) == -1)
		perror(dir);
}

static void
test_cgroups_keys(void)
{
	struct config	 c;
	char		 buf[512];

	config_defaults(&c);
	CHECK_EQ(c.all_cgroups, 0);
	CHECK_EQ(c.nr_cgroups, 0);
	CHECK_EQ(apply1(&c, "{\"all_cgroups\": true}"), 0);
	CHECK_EQ(c.all_cgroups, 1);
	CHECK_EQ(apply1(&c, "{\"all_cgroups\": 1}"), PROTO_E_BAD_TYPE);
	/* leading and trailing slashes go: "/a/b/" is "a/b" */
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"/system.slice/x.service/\", "
	    "\"user.slice\"]}"), 0);
	CHECK_EQ(c.nr_cgroups, 2);
	CHECK_STR(c.cgroups[0], "system.slice/x.service");
	CHECK_STR(c.cgroups[1], "user.slice");
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"a\\\\x2db\"]}"), 0);
	CHECK_STR(c.cgroups[0], "a\\x2db");
	CHECK_EQ(apply1(&c, "{\"cgroups\": []}"), 0);
	CHECK_EQ(c.nr_cgroups, 0);
	/* never outside the hierarchy, never empty */
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"..\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"../x\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"a/../../x\"]}"),
	    PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"a/..\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"./a\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"a//b\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"/\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"a b\"]}"), PROTO_E_BAD_VALUE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": \"a\"}"), PROTO_E_BAD_TYPE);
	CHECK_EQ(apply1(&c, "{\"cgroups\": [\"a\",\"b\",\"c\",\"d\",\"e\","
	    "\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\","
	    "\"p\",\"q\"]}"), PROTO_E_BAD_VALUE);
	/* a start option, and in the file's command line as perf writes it */
	CHECK(key_when("cgroups") == CONFIG_NEXT_START);
	CHECK(key_when("all_cgroups") == CONFIG_NEXT_START);
	CHECK_EQ(apply1(&c, "{\"all_cgroups\": true, \"cgroups\": "
	    "[\"a\", \"b/c\"]}"), 0);
	config_cmdline(&c, buf, sizeof(buf));
	CHECK(strstr(buf, " --all-cgroups -G a -G b/c") != NULL);
}

/* freq against the kernel's limit, which only the caller can read */
static void
test_check_freq(void)
{
	struct config		 cfg;
	struct config_error	 cerr;

	config_defaults(&cfg);
	cfg.freq = 200000;
	CHECK_EQ(config_check_freq(&cfg, 100000, &cerr), -1);
	CHECK_EQ(cerr.code, PROTO_E_BAD_VALUE);
	CHECK_STR(cerr.key, "freq");
	CHECK(strstr(cerr.msg, "perf_event_max_sample_rate=100000") != NULL);
	CHECK_EQ(config_check_freq(&cfg, 200000, &cerr), 0);
	/* unreadable limit; a period instead of a frequency */
	CHECK_EQ(config_check_freq(&cfg, 0, &cerr), 0);
	cfg.freq = 0;
	cfg.period = 1000000;
	CHECK_EQ(config_check_freq(&cfg, 1, &cerr), 0);
}

int
main(void)
{
	test_defaults();
	test_text_value();
	test_cgroups_keys();
	test_recording_keys();
	test_live_keys();
	test_copy_live();
	test_daemon_keys();
	test_unknown();
	test_all_or_nothing();
	test_changed();
	test_to_json();
	test_cmdline();
	test_load();
	test_check_freq();
	return check_exit();
}

/*
 * evsel resolves event names and sets up their attrs (see evsel.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evparse.h"
#include "evsel.h"

const char *
evsel_tracefs(void)
{
	static const char	*dirs[] = { "/sys/kernel/tracing",
	    "/sys/kernel/debug/tracing" };
	char			 p[64];
	size_t			 i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/events", dirs[i]);
		if (access(p, R_OK) == 0)
			return dirs[i];
	}
	return NULL;
}

static int
evsel_read_u64(const char *path, unsigned long long *v)
{
	FILE	*f;
	int	 ok;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* The tracepoint system:name of ev->name into ev. */
static int
evsel_tracepoint(struct evsel *ev, const char *name, char *err, size_t len)
{
	const char		*colon = strchr(name, ':'), *tfs;
	char			 path[512];
	unsigned long long	 id;
	size_t			 n = (size_t)(colon - name);

	if (n == 0 || n >= sizeof(ev->tp_system) || colon[1] == '\0' ||
	    strlen(colon + 1) >= sizeof(ev->tp_name) || strchr(colon + 1, ':') ||
	    strchr(name, '/') || strstr(name, "..")) {
		snprintf(err, len, "event '%s': a tracepoint is written "
		    "subsystem:name", name);
		return -1;
	}
	memcpy(ev->tp_system, name, n);
	ev->tp_system[n] = '\0';
	snprintf(ev->tp_name, sizeof(ev->tp_name), "%s", colon + 1);
	if ((tfs = evsel_tracefs()) == NULL) {
		snprintf(err, len, "event '%s': tracefs is not mounted "
		    "(mount -t tracefs nodev /sys/kernel/tracing)", name);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tfs, ev->tp_system,
	    ev->tp_name);
	if (evsel_read_u64(path, &id) == -1) {
		snprintf(err, len, "event '%s': no such tracepoint (%s: %s)",
		    name, path, strerror(errno ? errno : EINVAL));
		return -1;
	}
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = id;
	return 0;
}

static int
evsel_no_pmu(void)
{
	return access(EVSEL_PMU_ROOT "/cpu", F_OK) == -1 &&
	    access(EVSEL_PMU_ROOT "/cpu_core", F_OK) == -1;
}

/* perf's modifiers into the attr (parse-events.c's order of meaning). */
static void
evsel_mods(struct evsel *ev, const struct evparse_mods *m)
{
	struct perf_event_attr	*a = &ev->attr;

	if (m->user || m->kernel || m->hv) {
		/* any of u, k, h given: the levels not given are left out */
		a->exclude_user = !m->user;
		a->exclude_kernel = !m->kernel;
		a->exclude_hv = !m->hv;
		ev->excl_fixed = 1;
	}
	if (m->guest || m->host) {
		a->exclude_guest = !m->guest;
		a->exclude_host = !m->host;
	}
	a->exclude_idle = m->no_idle ? 1 : 0;
	a->pinned = m->pinned ? 1 : 0;
	if (m->precise) {
		a->precise_ip = (unsigned int)m->precise;
		ev->precise_fixed = 1;
	} else if (m->max_precise)
		a->precise_ip = 3;
}

/* One parsed event into ev. */
static int
evsel_resolve(struct evsel *ev, const struct evparse_event *pe, char *err,
    size_t len)
{
	uint32_t	 type;
	uint64_t	 config;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", pe->name);
	ev->leader_off = pe->leader_off;
	switch (pe->kind) {
	case EVPARSE_SYMBOL:
		evparse_symbol(pe->base, &type, &config);
		ev->attr.type = type;
		ev->attr.config = config;
		if (type == PERF_TYPE_HARDWARE && evsel_no_pmu()) {
			snprintf(err, len, "event '%s': this machine has no "
			    "hardware PMU (no %s/cpu); use a software event "
			    "such as cpu-clock", pe->name, EVSEL_PMU_ROOT);
			return -1;
		}
		break;
	case EVPARSE_RAW:
		if (evsel_no_pmu()) {
			snprintf(err, len, "event '%s': a raw event is the "
			    "hardware PMU's code, and this machine has none "
			    "(no %s/cpu)", pe->name, EVSEL_PMU_ROOT);
			return -1;
		}
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = pe->raw;
		break;
	case EVPARSE_TRACEPOINT:
		if (evsel_tracepoint(ev, pe->base, err, len) == -1)
			return -1;
		break;
	case EVPARSE_PMU:
		if (evsel_pmu(ev, EVSEL_PMU_ROOT, pe, err, len) == -1)
			return -1;
		break;
	}
	evsel_mods(ev, &pe->mods);
	return 0;
}

int
evsel_parse_list(struct evsel *evs, size_t max, size_t *n, const char *text,
    char *err, size_t len)
{
	struct evparse_event	 pe[EVPARSE_MAX_EVENTS];
	size_t			 i, np;

	if (evparse_list(text, pe, EVPARSE_MAX_EVENTS, &np, err, len) == -1)
		return -1;
	if (np > max) {
		snprintf(err, len, "more than %zu events in all", max);
		return -1;
	}
	for (i = 0; i < np; i++)
		if (evsel_resolve(&evs[i], &pe[i], err, len) == -1)
			return -1;
	*n = np;
	return 0;
}

int
evsel_parse(struct evsel *ev, const char *name, char *err, size_t len)
{
	struct evparse_event	 pe[2];
	size_t			 np;

	if (evparse_list(name, pe, 2, &np, err, len) == -1)
		return -1;
	if (np != 1) {
		snprintf(err, len, "'%s' is more than one event", name);
		return -1;
	}
	return evsel_resolve(ev, &pe[0], err, len);
}

uint64_t
evsel_user_regs(void)
{
#if defined(__x86_64__)
	/* perf's PERF_REGS_MASK for x86_64: AX..R15 (24 registers) but the
	 * segment registers DS, ES, FS, GS (12..15), which it never samples */
	return ((UINT64_C(1) << 24) - 1) & ~(UINT64_C(0xf) << 12);
#elif defined(__aarch64__)
	/* X0..X30, SP, PC: perf's PERF_REGS_MASK for arm64 */
	return (UINT64_C(1) << 33) - 1;
#else
	return 0;
#endif
}

/*
 * As perf record --call-graph dwarf: the user registers and SIZE bytes
 * of the user stack with each sample, and the kernel's callchain cut at
 * the user part, which a reader unwinds from the two instead.
 */
static void
evsel_config_dwarf(struct perf_event_attr *a, uint64_t stack_size)
{
	a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = evsel_user_regs();
	a->sample_stack_user = (__u32)stack_size;
	a->exclude_callchain_user = 1;
}

/*
 * wakeup_pct 0 sets the watermark by the events' rate. A tracepoint or
 * an event sampled by period has no bound (a syscall storm fills a ring
 * in milliseconds): it keeps perf's half of the ring. Events all sampled
 * at a frequency fill a ring at most at freq x their largest sample a
 * CPU: the watermark leaves EVSEL_HEADROOM_MS of that, up to 90 % of the
 * ring. That is about the time half a 128-page ring leaves 99 Hz of
 * compact stacks (9.5 KiB a sample, 0.94 MB/s: 280 ms): at 82 % of it
 * (100 ms) that lost 7 and 14 % of its events in 2 of 3 runs of
 * bench/headline's always-on load beside other recorders' storms. The
 * shipped config's 256 pages keep the same 300 ms at 73 %, and wake
 * the drain half as often (conf/perfspilld.json). 99 Hz with frame
 * pointers (1.1 KiB a sample) is woken at 90 %, about half as often as
 * at half the ring.
 */
#define EVSEL_HEADROOM_MS	300
#define EVSEL_WAKEUP_PCT	50
#define EVSEL_WAKEUP_PCT_MAX	90

/* The most a sample of a takes in the ring. */
static uint64_t
evsel_sample_max(const struct perf_event_attr *a)
{
	unsigned long long	 stack = 127, ctx = 8;
	uint64_t		 b = 8 + 8 * 7;	/* header, the fixed fields */

	if (a->sample_type & PERF_SAMPLE_CALLCHAIN) {
		(void)evsel_read_u64("/proc/sys/kernel/perf_event_max_stack",
		    &stack);
		(void)evsel_read_u64(
		    "/proc/sys/kernel/perf_event_max_contexts_per_stack", &ctx);
		b += 8 * (1 + stack + ctx);
	}
	if (a->sample_type & PERF_SAMPLE_REGS_USER)
		b += 8 + 8 * (uint64_t)__builtin_popcountll(
		    a->sample_regs_user);
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		b += 16 + a->sample_stack_user;
	if (a->sample_type & PERF_SAMPLE_CGROUP)
		b += 8;
	return b;
}

/* The watermark in bytes for evs: wakeup_pct of the ring, or with 0 by
 * the events' rate (above). */
static uint64_t
evsel_wakeup_for(const struct evsel *evs, size_t n, const struct config *cfg,
    size_t ring_bytes)
{
	uint64_t	 rate = 0, keep, pct;
	size_t		 i;

	if (cfg->wakeup_pct != 0)
		return evsel_wakeup_bytes(cfg, ring_bytes);
	for (i = 0; i < n; i++) {
		/* the tracking event samples nothing */
		if (evs[i].attr.type == PERF_TYPE_SOFTWARE &&
		    evs[i].attr.config == PERF_COUNT_SW_DUMMY)
			continue;
		if (!evs[i].attr.freq || evs[i].attr.type ==
		    PERF_TYPE_TRACEPOINT)
			return evsel_wakeup_bytes(cfg, ring_bytes);
		rate += evs[i].attr.sample_freq *
		    evsel_sample_max(&evs[i].attr);
	}
	keep = rate * EVSEL_HEADROOM_MS / 1000;
	pct = keep >= ring_bytes ? 0 : 100 - (keep * 100 + ring_bytes - 1) /
	    ring_bytes;
	if (pct < EVSEL_WAKEUP_PCT)
		pct = EVSEL_WAKEUP_PCT;
	if (pct > EVSEL_WAKEUP_PCT_MAX)
		pct = EVSEL_WAKEUP_PCT_MAX;
	return (uint64_t)ring_bytes * pct / 100;
}

void
evsel_config(struct evsel *evs, size_t n, const struct config *cfg,
    size_t ring_bytes)
{
	size_t			 i;
	struct perf_event_attr	*a;
	uint64_t		 wake;

	for (i = 0; i < n; i++) {
		a = &evs[i].attr;
		a->size = sizeof(*a);
		/* a member runs when its leader does, as perf opens it:
		 * one enabled after its leader would wait for the group to
		 * be scheduled again, which a CPU's context never is */
		a->disabled = evs[i].leader_off == 0;
		a->sample_id_all = 1;
		/* IDENTIFIER first: perf finds the event of any record from a
		 * fixed position, whatever the other sample fields are. */
		a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
		    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		    PERF_SAMPLE_PERIOD;
		if (cfg->callgraph != CONFIG_CG_NONE)
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (cfg->callgraph >= CONFIG_CG_DWARF)
			evsel_config_dwarf(a, cfg->stack_size);
		/* every event alike: perf reads one sample layout per attr,
		 * and the cgroup of a sample is what --sort cgroup shows */
		if (cfg->all_cgroups)
			a->sample_type |= PERF_SAMPLE_CGROUP;
		if (a->type == PERF_TYPE_TRACEPOINT) {
			/* a tracepoint samples each hit; raw gives its fields */
			a->sample_type |= PERF_SAMPLE_RAW;
			if (!evs[i].own_period) {
				a->sample_period = 1;
				a->freq = 0;
			}
		} else if (evs[i].own_period) {
			/* a PMU event's period= or freq= term wins, as in perf */
		} else if (cfg->freq) {
			a->freq = 1;
			a->sample_freq = cfg->freq;
		} else
			a->sample_period = cfg->period;
		/* like perf, ask for the most precise IP the event gives;
		 * cpuring_open lowers it where the kernel refuses, unless a
		 * p modifier asked for this much */
		if ((a->type == PERF_TYPE_SOFTWARE ||
		    a->type == PERF_TYPE_HARDWARE) && !evs[i].precise_fixed)
			a->precise_ip = 3;
		/* perf record --all-user, --all-kernel: events without
		 * their own u, k or h; the tracking event sees every level */
		if (i > 0 && !evs[i].excl_fixed && cfg->all_user) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
		if (i > 0 && !evs[i].excl_fixed && cfg->all_kernel) {
			a->exclude_user = 1;
			a->exclude_hv = 1;
		}
		/* perf record -p, -t, -u: children and new threads are
		 * followed; the system-wide tracking event needs not */
		if (i > 0 && config_task_target(cfg))
			a->inherit = 1;
		a->watermark = 1;
		if (i == 0) {
			/* one event per ring tracks tasks and maps for all */
			a->mmap = 1;
			a->mmap2 = 1;
			a->comm = 1;
			a->comm_exec = 1;
			a->task = 1;
			/* the maps of data too with DWARF stacks, as perf
			 * record --call-graph dwarf asks: perf's libunwind
			 * reads a binary's .eh_frame_hdr through them.
			 * compact: not, the daemon's unwinder reads the
			 * binaries (a sample written raw then unwinds in
			 * perfspill-flame, not in a libunwind perf) */
			a->mmap_data = cfg->callgraph == CONFIG_CG_DWARF;
			/* off by default: on kernels up to at least 6.1 it
			 * makes every other recorder's MMAP2 records claim a
			 * build-id they lack, and perf record then aborts;
			 * buildid.c reads the ids in user space instead */
			a->build_id = cfg->kernel_build_id ? 1 : 0;
			/* PERF_RECORD_CGROUP for cgroups made while recording;
			 * the preamble names those that exist (synth-cgroup.c) */
			a->cgroup = cfg->all_cgroups ? 1 : 0;
		}
	}
	/* once every attr's sampling is known: the rate bounds it */
	wake = evsel_wakeup_for(evs, n, cfg, ring_bytes);
	for (i = 0; i < n; i++)
		evs[i].attr.wakeup_watermark = (__u32)wake;
}

uint64_t
evsel_wakeup_bytes(const struct config *cfg, size_t ring_bytes)
{
	/* 0 (by the events' rate) is never below half the ring */
	return (uint64_t)ring_bytes * (cfg->wakeup_pct != 0 ?
	    cfg->wakeup_pct : EVSEL_WAKEUP_PCT) / 100;
}

unsigned long
evsel_max_sample_rate(void)
{
	unsigned long long	 v;

	if (evsel_read_u64("/proc/sys/kernel/perf_event_max_sample_rate",
	    &v) == -1)
		return 0;
	return (unsigned long)v;
}

/*
 * evsel: event name resolution and attr setup (see evsel.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evsel.h"

struct evsel_sym {
	const char	*name;
	__u32		 type;
	__u64		 config;
};

static const struct evsel_sym evsel_syms[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	    PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	    PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	    PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
};

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

int
evsel_parse(struct evsel *ev, const char *name, char *err, size_t len)
{
	size_t	 i;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	if (strchr(name, ':') != NULL)
		return evsel_tracepoint(ev, name, err, len);
	for (i = 0; i < sizeof(evsel_syms) / sizeof(evsel_syms[0]); i++) {
		if (strcmp(evsel_syms[i].name, name) != 0)
			continue;
		ev->attr.type = evsel_syms[i].type;
		ev->attr.config = evsel_syms[i].config;
		if (ev->attr.type == PERF_TYPE_HARDWARE &&
		    access("/sys/bus/event_source/devices/cpu", F_OK) == -1 &&
		    access("/sys/bus/event_source/devices/cpu_core", F_OK) == -1) {
			snprintf(err, len, "event '%s': this machine has no "
			    "hardware PMU (no /sys/bus/event_source/devices/cpu); "
			    "use a software event such as cpu-clock", name);
			return -1;
		}
		return 0;
	}
	snprintf(err, len, "event '%s': unknown event (software: cpu-clock, "
	    "task-clock, page-faults, context-switches, cpu-migrations, ...; "
	    "tracepoints: subsystem:name)", name);
	return -1;
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

void
evsel_config(struct evsel *evs, size_t n, const struct config *cfg,
    size_t ring_bytes)
{
	size_t			 i;
	struct perf_event_attr	*a;

	for (i = 0; i < n; i++) {
		a = &evs[i].attr;
		a->size = sizeof(*a);
		a->disabled = 1;
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
			a->sample_period = 1;
			a->freq = 0;
		} else if (cfg->freq) {
			a->freq = 1;
			a->sample_freq = cfg->freq;
		} else
			a->sample_period = cfg->period;
		/* like perf, ask for the most precise IP the event gives;
		 * record_start lowers it where the kernel refuses */
		if (a->type == PERF_TYPE_SOFTWARE || a->type == PERF_TYPE_HARDWARE)
			a->precise_ip = 3;
		a->watermark = 1;
		a->wakeup_watermark = (__u32)evsel_wakeup_bytes(cfg, ring_bytes);
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
}

uint64_t
evsel_wakeup_bytes(const struct config *cfg, size_t ring_bytes)
{
	return (uint64_t)ring_bytes * cfg->wakeup_pct / 100;
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

/*
 * synth-feature: the feature sections of a file's head, what `perf
 * report --header` shows about the machine and the recording, each
 * payload as perf's header.c write_* lays it out, then the head's
 * table of them (see perfdata.h). A feature we cannot fill is left
 * out, as perf does.
 */
#include <sys/utsname.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "synth-int.h"

#ifndef PERFSPILL_VERSION
#define PERFSPILL_VERSION	"perfspill"
#endif

/* A fill function returns 0 when it wrote the payload, 1 to skip. */
struct synth_feature {
	uint64_t	 id;
	int		(*fill)(struct synth_rec *,
			    const struct synth_ctx *);
};

static int	synth_feature_tracing_data(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_build_id(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_hostname(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_osrelease(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_version(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_arch(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_nrcpus(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_cpudesc(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_cpuid(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_total_mem(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_cmdline(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_event_desc(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_group_desc(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_clockid(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_compressed(struct synth_rec *,
		    const struct synth_ctx *);
static int	synth_feature_clock_data(struct synth_rec *,
		    const struct synth_ctx *);

/* In id order, the order perf writes them. */
static const struct synth_feature synth_feature_table[] = {
	{ PERFDATA_FEAT_TRACING_DATA,	synth_feature_tracing_data },
	{ PERFDATA_FEAT_BUILD_ID,	synth_feature_build_id },
	{ PERFDATA_FEAT_HOSTNAME,	synth_feature_hostname },
	{ PERFDATA_FEAT_OSRELEASE,	synth_feature_osrelease },
	{ PERFDATA_FEAT_VERSION,	synth_feature_version },
	{ PERFDATA_FEAT_ARCH,	synth_feature_arch },
	{ PERFDATA_FEAT_NRCPUS,	synth_feature_nrcpus },
	{ PERFDATA_FEAT_CPUDESC,	synth_feature_cpudesc },
	{ PERFDATA_FEAT_CPUID,	synth_feature_cpuid },
	{ PERFDATA_FEAT_TOTAL_MEM,	synth_feature_total_mem },
	{ PERFDATA_FEAT_CMDLINE,	synth_feature_cmdline },
	{ PERFDATA_FEAT_EVENT_DESC,	synth_feature_event_desc },
	{ PERFDATA_FEAT_CPU_TOPOLOGY,	synth_topology_cpus },
	{ PERFDATA_FEAT_NUMA_TOPOLOGY,	synth_topology_numa },
	{ PERFDATA_FEAT_PMU_MAPPINGS,	synth_topology_pmus },
	{ PERFDATA_FEAT_GROUP_DESC,	synth_feature_group_desc },
	{ PERFDATA_FEAT_CLOCKID,	synth_feature_clockid },
	{ PERFDATA_FEAT_COMPRESSED,	synth_feature_compressed },
	{ PERFDATA_FEAT_CLOCK_DATA,	synth_feature_clock_data },
};

int
synth_feature_all(struct sbuf *out, const struct synth_ctx *ctx,
    struct perfdata_header *hdr)
{
	const struct synth_feature	*f;
	struct perfdata_section		 sec[PERFDATA_FEAT_MAX];
	struct synth_rec		 r;
	size_t				 i;
	int				 rv;

	for (i = 0; i < sizeof synth_feature_table /
	    sizeof synth_feature_table[0]; i++) {
		f = &synth_feature_table[i];

		/* payloads need no alignment; ours start at 8 for the eye */
		if (sbuf_zero(out, SYNTH_ALIGN(out->len, 8) - out->len) ==
		    NULL)
			goto nomem;
		synth_rec_begin_raw(&r, out);
		rv = f->fill(&r, ctx);
		if (rv == 0 && r.failed)
			errno = ENOMEM;
		if (rv == -1 || r.failed) {
			synth_rec_cancel(&r);
			return -1;
		}
		if (rv == 1) {
			synth_rec_cancel(&r);
			continue;
		}
		sec[f->id].offset = r.start;
		sec[f->id].size = synth_rec_len(&r);
		perfdata_feat_set(hdr, f->id);
	}

	/* the table in id order, ending where the data section starts */
	if (sbuf_zero(out, SYNTH_ALIGN(out->len, 8) - out->len) == NULL)
		goto nomem;
	for (i = 0; i < PERFDATA_FEAT_MAX; i++) {
		if (perfdata_feat_isset(hdr, i) &&
		    sbuf_append(out, &sec[i], sizeof sec[i]) == NULL)
			goto nomem;
	}
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

static int
synth_feature_tracing_data(struct synth_rec *r, const struct synth_ctx *ctx)
{
	return synth_tracing_data(r, ctx);
}

/*
 * The kernel's build-id; the daemon adds those of the DSOs it sees
 * when it finishes the file (tracefile.h).
 */
static int
synth_feature_build_id(struct synth_rec *r, const struct synth_ctx *ctx)
{
	if (synth_proc_kernel_bid(r->out, ctx) == -1)
		return -1;
	return synth_rec_len(r) == 0 ? 1 : 0;
}

/*
 * The value after "key<blanks>:" on the first line of a /proc file
 * that starts with key, with runs of blanks squashed as perf does for
 * the CPU brand string. 0 and a string the caller frees, 1 if absent,
 * -1 when memory ran out.
 */
static int
synth_feature_procline(const struct synth_ctx *ctx, const char *file,
    const char *key, char **value)
{
	char	 path[4096], *buf, *line, *next, *p, *q;
	size_t	 len, klen = strlen(key);

	snprintf(path, sizeof path, "%s/%s", synth_procfs(ctx), file);
	if (synth_slurp(path, &buf, &len) == -1)
		return errno == ENOMEM ? -1 : 1;

	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strncmp(line, key, klen) != 0)
			continue;
		p = line + klen;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p++ != ':')
			continue;
		while (isspace((unsigned char)*p))
			p++;
		for (q = line; *p != '\0'; p++) {
			if (isspace((unsigned char)*p)) {
				if (q == line || q[-1] == ' ')
					continue;
				*q++ = ' ';
			} else
				*q++ = *p;
		}
		if (q != line && q[-1] == ' ')
			q--;
		*q = '\0';
		*value = strdup(line);
		free(buf);
		return *value == NULL ? -1 : 0;
	}
	free(buf);
	return 1;
}

static int
synth_feature_hostname(struct synth_rec *r, const struct synth_ctx *ctx)
{
	struct utsname	u;

	(void)ctx;
	if (uname(&u) == -1)
		return 1;
	synth_rec_lenstr(r, u.nodename);
	return 0;
}

static int
synth_feature_osrelease(struct synth_rec *r, const struct synth_ctx *ctx)
{
	struct utsname	u;

	(void)ctx;
	if (uname(&u) == -1)
		return 1;
	synth_rec_lenstr(r, u.release);
	return 0;
}

static int
synth_feature_version(struct synth_rec *r, const struct synth_ctx *ctx)
{
	(void)ctx;
	synth_rec_lenstr(r, PERFSPILL_VERSION);
	return 0;
}

static int
synth_feature_arch(struct synth_rec *r, const struct synth_ctx *ctx)
{
	struct utsname	u;

	(void)ctx;
	if (uname(&u) == -1)
		return 1;
	synth_rec_lenstr(r, u.machine);
	return 0;
}

static int
synth_feature_nrcpus(struct synth_rec *r, const struct synth_ctx *ctx)
{
	long		 online;
	uint32_t	 avail;

	(void)ctx;
	if ((online = sysconf(_SC_NPROCESSORS_ONLN)) < 1)
		return 1;
	if ((avail = synth_cpus_avail()) == 0)
		avail = online;
	synth_rec_u32(r, avail);
	synth_rec_u32(r, online);
	return 0;
}

static int
synth_feature_cpudesc(struct synth_rec *r, const struct synth_ctx *ctx)
{
	static const char	*keys[] = { "model name", "Processor", "cpu" };
	char			*s;
	size_t			 i;
	int			 rv = 1;

	for (i = 0; i < sizeof keys / sizeof keys[0] && rv == 1; i++)
		rv = synth_feature_procline(ctx, "cpuinfo", keys[i], &s);
	if (rv != 0)
		return rv;
	synth_rec_lenstr(r, s);
	free(s);
	return 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* perf's x86 cpuid string, vendor,family,model,stepping, matches the
 * decoded numbers /proc/cpuinfo shows. Other architectures use other
 * formats, which we do not write. */
static int
synth_feature_cpuid(struct synth_rec *r, const struct synth_ctx *ctx)
{
	static const char	*keys[] = {
		"vendor_id", "cpu family", "model", "stepping"
	};
	char			*v[4] = { NULL }, buf[256];
	size_t			 i;
	int			 rv = 0;

	for (i = 0; i < 4 && rv == 0; i++)
		rv = synth_feature_procline(ctx, "cpuinfo", keys[i], &v[i]);
	if (rv == 0) {
		snprintf(buf, sizeof buf, "%s,%s,%s,%s", v[0], v[1], v[2],
		    v[3]);
		synth_rec_lenstr(r, buf);
	}
	for (i = 0; i < 4; i++)
		free(v[i]);
	return rv;
}
#else
static int
synth_feature_cpuid(struct synth_rec *r, const struct synth_ctx *ctx)
{
	(void)r;
	(void)ctx;
	return 1;
}
#endif

static int
synth_feature_total_mem(struct synth_rec *r, const struct synth_ctx *ctx)
{
	char		*s;
	uint64_t	 kb;
	int		 rv;

	if ((rv = synth_feature_procline(ctx, "meminfo", "MemTotal", &s)) != 0)
		return rv;
	kb = strtoull(s, NULL, 10);
	free(s);
	synth_rec_u64(r, kb);
	return 0;
}

/* perf keeps argv; ours is one settings string, split back on blanks. */
static int
synth_feature_cmdline(struct synth_rec *r, const struct synth_ctx *ctx)
{
	const char	*p, *end;
	char		*word;
	uint32_t	 n = 0;

	if (ctx->cmdline == NULL)
		return 1;
	for (p = ctx->cmdline; *p != '\0'; p = end) {
		p += strspn(p, " \t\n");
		if (*p == '\0')
			break;
		end = p + strcspn(p, " \t\n");
		n++;
	}
	if (n == 0)
		return 1;
	synth_rec_u32(r, n);
	for (p = ctx->cmdline; *p != '\0'; p = end) {
		p += strspn(p, " \t\n");
		if (*p == '\0')
			break;
		end = p + strcspn(p, " \t\n");
		if ((word = strndup(p, end - p)) == NULL)
			return -1;
		synth_rec_lenstr(r, word);
		free(word);
	}
	return 0;
}

static int
synth_feature_event_desc(struct synth_rec *r, const struct synth_ctx *ctx)
{
	const struct synth_event	*ev;
	struct perf_event_attr		 attr;
	char				 buf[256];
	size_t				 i;

	synth_rec_u32(r, ctx->nr_events);
	synth_rec_u32(r, sizeof attr);
	for (i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		attr = ev->attr;
		attr.size = sizeof attr;
		synth_rec_put(r, &attr, sizeof attr);
		synth_rec_u32(r, ev->nr_ids);
		synth_rec_lenstr(r, synth_event_name(ev, buf, sizeof buf));
		synth_rec_put(r, ev->ids, ev->nr_ids * sizeof ev->ids[0]);
	}
	return 0;
}

/*
 * The groups of -e {a,b}, as perf's write_group_desc: their number, then
 * each one's name ("{anon_group}": perf gives a group none unless
 * named), its leader's index among the events and its members, leader
 * included. Only when there is a group, as perf record writes it.
 */
static int
synth_feature_group_desc(struct synth_rec *r, const struct synth_ctx *ctx)
{
	size_t		 i, j, n, groups = 0;

	for (i = 0; i < ctx->nr_events; i++)
		groups += ctx->events[i].leader_off == 0 &&
		    i + 1 < ctx->nr_events && ctx->events[i + 1].leader_off == 1;
	if (groups == 0)
		return 1;
	synth_rec_u32(r, (uint32_t)groups);
	for (i = 0; i < ctx->nr_events; i++) {
		if (ctx->events[i].leader_off != 0)
			continue;
		for (n = 1, j = i + 1; j < ctx->nr_events &&
		    ctx->events[j].leader_off == j - i; j++)
			n++;
		if (n < 2)
			continue;
		synth_rec_lenstr(r, "{anon_group}");
		synth_rec_u32(r, (uint32_t)i);
		synth_rec_u32(r, (uint32_t)n);
	}
	return 0;
}

/*
 * The clock features only mean something when the events use a
 * clockid; perf record writes them only with -k, and so do we.
 */
static int
synth_feature_clockid(struct synth_rec *r, const struct synth_ctx *ctx)
{
	const struct perf_event_attr	*attr = &ctx->events[0].attr;
	struct timespec			 res;

	if (!attr->use_clockid || clock_getres(attr->clockid, &res) == -1)
		return 1;
	synth_rec_u64(r, (uint64_t)res.tv_sec * 1000000000 + res.tv_nsec);
	return 0;
}

static int
synth_feature_clock_data(struct synth_rec *r, const struct synth_ctx *ctx)
{
	const struct perf_event_attr	*attr = &ctx->events[0].attr;
	struct timespec			 tod, ref;

	if (!attr->use_clockid)
		return 1;
	/* Back to back, so the pair maps event time to wall time. */
	if (clock_gettime(CLOCK_REALTIME, &tod) == -1 ||
	    clock_gettime(attr->clockid, &ref) == -1)
		return 1;
	synth_rec_u32(r, 1);		/* version */
	synth_rec_u32(r, attr->clockid);
	synth_rec_u64(r, (uint64_t)tod.tv_sec * 1000000000 + tod.tv_nsec);
	synth_rec_u64(r, (uint64_t)ref.tv_sec * 1000000000 + ref.tv_nsec);
	return 0;
}

/*
 * perf decompresses each PERF_RECORD_COMPRESSED into a buffer of
 * comp_mmap_len bytes (plus what was left of a record cut by the
 * previous one), so the writer must never put more than that in one.
 * The ratio is only shown; the head is written before it is known, so
 * perfdata_finish fills it in.
 */
static int
synth_feature_compressed(struct synth_rec *r, const struct synth_ctx *ctx)
{
	if (ctx->comp_level <= 0)
		return 1;
	synth_rec_u32(r, 0);			/* comp_ver */
	synth_rec_u32(r, PERF_COMP_ZSTD);
	synth_rec_u32(r, ctx->comp_level);
	synth_rec_u32(r, 0);			/* comp_ratio: at close */
	synth_rec_u32(r, ctx->comp_mmap_len);
	return 0;
}

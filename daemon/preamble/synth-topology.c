/*
 * synth-topology: the features that describe the machine's shape from
 * sysfs: cpu_topology (which CPUs share a package, a die, a core),
 * numa_topology (nodes, their memory and CPUs) and pmu_mappings (the
 * PMU type numbers events name). Each payload is laid out as perf's
 * header.c write_* does; what sysfs does not show is left out, as perf
 * leaves it out.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth-int.h"

#define TOPO_CPU	"/sys/devices/system/cpu"
#define TOPO_NODE	"/sys/devices/system/node"
#define TOPO_PMU	"/sys/bus/event_source/devices"

/* A list of distinct strings, in the order first seen. */
struct synth_topology_set {
	char	**v;
	size_t	  nr;
};

/* A sysfs file's first line, without its newline: 0, 1 absent, -1. */
static int
synth_topology_read(const char *path, char **value)
{
	size_t	 len;

	if (synth_slurp(path, value, &len) == -1)
		return errno == ENOMEM ? -1 : 1;
	(*value)[strcspn(*value, "\n")] = '\0';
	return 0;
}

/* A number in cpu's topology directory, or -1 when there is none
 * (perf's value too). */
static int32_t
synth_topology_num(int cpu, const char *name)
{
	char	 path[256], *s;
	int32_t	 n;

	snprintf(path, sizeof path, TOPO_CPU "/cpu%d/topology/%s", cpu, name);
	if (synth_topology_read(path, &s) != 0)
		return -1;
	n = (int32_t)strtol(s, NULL, 10);
	free(s);
	return n;
}

static int
synth_topology_add(struct synth_topology_set *set, char *s)
{
	char	**v;
	size_t	  i;

	for (i = 0; i < set->nr; i++) {
		if (strcmp(set->v[i], s) == 0) {
			free(s);
			return 0;
		}
	}
	if ((v = reallocarray(set->v, set->nr + 1, sizeof *v)) == NULL) {
		free(s);
		return -1;
	}
	set->v = v;
	set->v[set->nr++] = s;
	return 0;
}

static void
synth_topology_put(struct synth_rec *r, const struct synth_topology_set *set)
{
	size_t	 i;

	synth_rec_u32(r, (uint32_t)set->nr);
	for (i = 0; i < set->nr; i++)
		synth_rec_lenstr(r, set->v[i]);
}

static void
synth_topology_free(struct synth_topology_set *set)
{
	size_t	 i;

	for (i = 0; i < set->nr; i++)
		free(set->v[i]);
	free(set->v);
	set->v = NULL;
	set->nr = 0;
}

/* The first of names (NULL-ended) that cpu's topology directory has. */
static int
synth_topology_list(int cpu, const char *const *names, char **value)
{
	char	 path[256];
	int	 rv = 1;

	for (; *names != NULL && rv == 1; names++) {
		snprintf(path, sizeof path, TOPO_CPU "/cpu%d/topology/%s", cpu,
		    *names);
		rv = synth_topology_read(path, value);
	}
	return rv;
}

int
synth_topology_cpus(struct synth_rec *r, const struct synth_ctx *ctx)
{
	static const char *const package[] = { "package_cpus_list",
	    "core_siblings_list", NULL };
	static const char *const die[] = { "die_cpus_list", NULL };
	static const char *const core[] = { "core_cpus_list",
	    "thread_siblings_list", NULL };
	struct synth_topology_set sets[3] = { { NULL, 0 } };
	const char *const	*names[3] = { package, die, core };
	uint32_t		 avail;
	size_t			 i, k;
	char			*s;
	int			 rv = 0, dies = 1;

	if ((avail = synth_cpus_avail()) == 0)
		return 1;
	/* perf names the CPUs it records: the online ones */
	for (i = 0; i < ctx->nr_cpus && rv != -1; i++) {
		for (k = 0; k < 3; k++) {
			if ((rv = synth_topology_list(ctx->cpus[i], names[k],
			    &s)) == -1)
				break;
			if (rv == 1) {
				if (k != 1)
					goto out;	/* no topology at all */
				dies = 0;
				continue;
			}
			if ((rv = synth_topology_add(&sets[k], s)) == -1)
				break;
		}
	}
	if (rv == -1)
		goto out;
	synth_topology_put(r, &sets[0]);
	synth_topology_put(r, &sets[2]);
	/* per possible CPU, -1 for those that are not there */
	for (i = 0; i < avail; i++) {
		synth_rec_u32(r, (uint32_t)synth_topology_num((int)i,
		    "core_id"));
		synth_rec_u32(r, (uint32_t)synth_topology_num((int)i,
		    "physical_package_id"));
	}
	if (dies && sets[1].nr > 0) {
		synth_topology_put(r, &sets[1]);
		for (i = 0; i < avail; i++)
			synth_rec_u32(r, (uint32_t)synth_topology_num((int)i,
			    "die_id"));
	}
	rv = 0;
out:
	for (k = 0; k < 3; k++)
		synth_topology_free(&sets[k]);
	return rv == 1 ? 1 : rv;
}

/* "Node 0 MemTotal:  123 kB": the kB of key in a node's meminfo. */
static uint64_t
synth_topology_meminfo(const char *buf, const char *key)
{
	const char	*p;

	if ((p = strstr(buf, key)) == NULL)
		return 0;
	p += strlen(key);
	while (*p == ' ' || *p == ':')
		p++;
	return strtoull(p, NULL, 10);
}

int
synth_topology_numa(struct synth_rec *r, const struct synth_ctx *ctx)
{
	char		 path[256], *online, *p, *info, *cpus;
	long		 lo, hi, n;
	uint32_t	 nr = 0;
	size_t		 at, len;
	int		 rv;

	(void)ctx;
	if ((rv = synth_topology_read(TOPO_NODE "/online", &online)) != 0)
		return rv;
	at = synth_rec_len(r);
	synth_rec_u32(r, 0);		/* nodes, set below */
	for (p = online; *p != '\0' && !r->failed; ) {
		lo = hi = strtol(p, &p, 10);
		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		if (*p == ',')
			p++;
		else if (*p != '\0')
			break;
		for (n = lo; n <= hi; n++) {
			snprintf(path, sizeof path, TOPO_NODE "/node%ld/meminfo",
			    n);
			if (synth_slurp(path, &info, &len) == -1)
				continue;
			snprintf(path, sizeof path, TOPO_NODE "/node%ld/cpulist",
			    n);
			if (synth_topology_read(path, &cpus) != 0) {
				free(info);
				continue;
			}
			synth_rec_u32(r, (uint32_t)n);
			synth_rec_u64(r, synth_topology_meminfo(info,
			    "MemTotal"));
			synth_rec_u64(r, synth_topology_meminfo(info,
			    "MemFree"));
			synth_rec_lenstr(r, cpus);
			free(info);
			free(cpus);
			nr++;
		}
	}
	free(online);
	if (nr == 0)
		return 1;
	synth_rec_patch(r, at, &nr, sizeof nr);
	return 0;
}

int
synth_topology_pmus(struct synth_rec *r, const struct synth_ctx *ctx)
{
	DIR		*dir;
	struct dirent	*de;
	char		 path[512], *type;
	uint32_t	 nr = 0;
	size_t		 at;

	(void)ctx;
	if ((dir = opendir(TOPO_PMU)) == NULL)
		return 1;
	at = synth_rec_len(r);
	synth_rec_u32(r, 0);		/* pmus, set below */
	while ((de = readdir(dir)) != NULL && !r->failed) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, TOPO_PMU "/%s/type", de->d_name);
		if (synth_topology_read(path, &type) != 0)
			continue;
		synth_rec_u32(r, (uint32_t)strtoul(type, NULL, 10));
		synth_rec_lenstr(r, de->d_name);
		free(type);
		nr++;
	}
	closedir(dir);
	if (nr == 0)
		return 1;
	synth_rec_patch(r, at, &nr, sizeof nr);
	return 0;
}

/*
 * cpuring opens and closes the events of one CPU (see cpuring.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "cpuring.h"

size_t
cpuring_nr_fds(const struct cpuring_spec *s)
{
	if (s->nr_cg == 0)
		return s->nr_evs;
	return 1 + (s->nr_evs - 1) * s->nr_cg;
}

size_t
cpuring_slot_event(const struct cpuring_spec *s, size_t slot)
{
	if (s->nr_cg == 0 || slot == 0)
		return slot;
	return 1 + (slot - 1) / s->nr_cg;
}

size_t
cpuring_slot(const struct cpuring_spec *s, size_t ev, size_t t)
{
	if (s->nr_cg == 0 || ev == 0)
		return ev;
	return 1 + (ev - 1) * s->nr_cg + t;
}

static int
cpuring_fail(struct config_error *err, const struct evsel *ev, int cpu,
    int e)
{
	FILE	*f;
	int	 paranoid = -9;

	if (e == EACCES || e == EPERM) {
		if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "re"))) {
			if (fscanf(f, "%d", &paranoid) != 1)
				paranoid = -9;
			fclose(f);
		}
		return config_fail(err, PROTO_E_SYSTEM, "events",
		    "event '%s' on cpu %d: permission denied (perfspilld needs "
		    "root or CAP_PERFMON; kernel.perf_event_paranoid=%d)",
		    ev->name, cpu, paranoid);
	}
	if (ev->precise_fixed && (e == EINVAL || e == EOPNOTSUPP))
		return config_fail(err, PROTO_E_EVENT, "events",
		    "event '%s': the kernel refuses precise_ip %u (the p "
		    "modifiers; %s): ask for fewer p, or P for the most it "
		    "gives", ev->name, (unsigned int)ev->attr.precise_ip,
		    strerror(e));
	if ((ev->attr.type == PERF_TYPE_HARDWARE ||
	    ev->attr.type == PERF_TYPE_RAW) &&
	    (e == ENOENT || e == EOPNOTSUPP || e == ENODEV))
		return config_fail(err, PROTO_E_EVENT, "events",
		    "event '%s': not supported by this machine's PMU (%s)",
		    ev->name, strerror(e));
	if (e == EMFILE || e == ENFILE)
		return config_fail(err, PROTO_E_SYSTEM, "events",
		    "event '%s' on cpu %d: out of file descriptors (%s)",
		    ev->name, cpu, strerror(e));
	/* PERF_SAMPLE_CGROUP and attr.cgroup came with Linux 5.7 */
	if (e == EINVAL && (ev->attr.sample_type & PERF_SAMPLE_CGROUP))
		return config_fail(err, PROTO_E_EVENT, "all_cgroups",
		    "event '%s' on cpu %d: the kernel refuses cgroup "
		    "sampling (PERF_SAMPLE_CGROUP needs Linux 5.7 or later); "
		    "set all_cgroups to false", ev->name, cpu);
	if (e == EBADF || e == ENOTDIR)
		return config_fail(err, PROTO_E_EVENT, "cgroups",
		    "event '%s' on cpu %d: the kernel refuses the cgroup "
		    "filter (%s; it needs cgroup2 and the perf_event "
		    "controller)", ev->name, cpu, strerror(e));
	if (ev->attr.type > PERF_TYPE_BREAKPOINT && (e == EINVAL ||
	    e == ENOENT || e == EOPNOTSUPP))
		return config_fail(err, PROTO_E_EVENT, "events",
		    "event '%s' on cpu %d: the kernel refuses it (%s): its "
		    "PMU may not sample, or not with these terms", ev->name,
		    cpu, strerror(e));
	return config_fail(err, PROTO_E_EVENT, "events",
	    "event '%s' on cpu %d: perf_event_open: %s", ev->name, cpu,
	    strerror(e));
}

int
cpuring_open(const struct cpuring_spec *s, int cpu, int *fds, uint64_t *ids,
    struct ring *ring, struct config_error *err)
{
	struct evsel	*ev;
	size_t		 k, n = cpuring_nr_fds(s);
	unsigned long	 flags;
	int		 fd, pid, group, opened = 0;
	size_t		 e, t;

	for (k = 0; k < n; k++) {
		fds[k] = -1;
		ids[k] = 0;
	}
	for (k = 0; k < n; k++) {
		e = cpuring_slot_event(s, k);
		ev = &s->evs[e];
		t = s->nr_cg > 0 && k > 0 ? (k - 1) % s->nr_cg : 0;
		pid = -1;
		flags = PERF_FLAG_FD_CLOEXEC;
		if (s->nr_cg > 0 && k > 0) {
			pid = s->cgfds[t];
			if (!s->tids)
				flags |= PERF_FLAG_PID_CGROUP;
		}
		group = -1;
		if (ev->leader_off > 0) {
			group = fds[cpuring_slot(s, e - ev->leader_off, t)];
			/* its thread was gone when the leader was opened */
			if (group == -1)
				continue;
		}
		for (;;) {
			fd = (int)syscall(SYS_perf_event_open, &ev->attr, pid,
			    cpu, group, flags);
			if (fd != -1 || ev->attr.precise_ip == 0 ||
			    ev->precise_fixed ||
			    (errno != EINVAL && errno != EOPNOTSUPP))
				break;
			ev->attr.precise_ip--;
		}
		/* a target thread that exited since the /proc walk */
		if (fd == -1 && errno == ESRCH && s->tids)
			continue;
		if (fd == -1) {
			cpuring_fail(err, ev, cpu, errno);
			goto error;
		}
		fds[k] = fd;
		opened += k > 0;
		if (k == 0) {
			if (ring_map(ring, fd, s->pages) == -1) {
				config_fail(err, PROTO_E_SYSTEM, "mmap_pages",
				    "cannot map a ring of %zu pages on cpu %d: "
				    "%s (raise LimitMEMLOCK or "
				    "kernel.perf_event_mlock_kb)", s->pages,
				    cpu, strerror(errno));
				goto error;
			}
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, fds[0]) == -1) {
			config_fail(err, PROTO_E_SYSTEM, "events",
			    "cannot redirect event '%s' into the ring of cpu "
			    "%d: %s", ev->name, cpu, strerror(errno));
			goto error;
		}
		/* the kernel's ids tie samples to events in every file */
		if (ioctl(fd, PERF_EVENT_IOC_ID, &ids[k]) == -1) {
			config_fail(err, PROTO_E_SYSTEM, NULL,
			    "PERF_EVENT_IOC_ID: %s", strerror(errno));
			goto error;
		}
	}
	if (s->tids && opened == 0) {
		config_fail(err, PROTO_E_BAD_VALUE, "pids", "every task to "
		    "record has exited");
		goto error;
	}
	return 0;
error:
	cpuring_close(fds, n, ring);
	return -1;
}

void
cpuring_enable(const int *fds, size_t n, int on)
{
	size_t	 k, i;

	/* off: the last slot first, so that slot 0's task tracking is the
	 * last to stop and no sample comes from a task it did not see */
	for (i = 0; i < n; i++) {
		k = on ? i : n - 1 - i;
		if (fds[k] != -1)
			ioctl(fds[k], on ? PERF_EVENT_IOC_ENABLE :
			    PERF_EVENT_IOC_DISABLE, 0);
	}
}

void
cpuring_close(int *fds, size_t n, struct ring *ring)
{
	size_t	 k;

	ring_unmap(ring);
	for (k = 0; k < n; k++) {
		if (fds[k] != -1)
			close(fds[k]);
		fds[k] = -1;
	}
}

int
cpuring_parse_list(const char *line, int **out, size_t *nr)
{
	const char	*p;
	char		*end;
	long		 a, b, i;
	int		*cpus = NULL, *tmp;
	size_t		 n = 0;

	for (p = line; *p && *p != '\n';) {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || a < 0 || a > CPURING_CPU_MAX || errno)
			goto bad;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b > CPURING_CPU_MAX || errno)
				goto bad;
		}
		if (*end != ',' && *end != '\n' && *end != '\0')
			goto bad;
		for (i = a; i <= b; i++) {
			if ((tmp = realloc(cpus, (n + 1) * sizeof(*cpus))) ==
			    NULL) {
				free(cpus);
				return -1;
			}
			cpus = tmp;
			cpus[n++] = (int)i;
		}
		p = *end == ',' ? end + 1 : end;
	}
	if (n == 0)
		goto bad;
	*out = cpus;
	*nr = n;
	return 0;
bad:
	free(cpus);
	errno = EINVAL;
	return -1;
}

int
cpuring_read_list(const char *path, int **out, size_t *nr)
{
	FILE	*f;
	char	 line[4096];

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL) {
		fclose(f);
		errno = EINVAL;
		return -1;
	}
	fclose(f);
	return cpuring_parse_list(line, out, nr);
}

size_t
cpuring_possible(void)
{
	int	*cpus;
	size_t	 n;

	if (cpuring_read_list("/sys/devices/system/cpu/possible", &cpus,
	    &n) == -1)
		return 0;
	free(cpus);
	return n;
}

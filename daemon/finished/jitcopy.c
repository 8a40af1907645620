/*
 * jitcopy: JIT maps of /tmp copied beside a finished file (see jitcopy.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <event2/event.h>

#include "fileworker.h"
#include "jitcopy.h"
#include "jitnames.h"
#include "log.h"
#include "perfdata/perfcheck.h"
#include "perfdata/perfdata.h"

#define JITCOPY_SCAN_EVERY	1	/* seconds */
/* a tick that comes this much early still looks (a timer's jitter) */
#define JITCOPY_LOOK_EARLY_MS	100
#define JITCOPY_MAX_SEEN		1024
#define JITCOPY_SHORT_EVERY	60	/* seconds between "stopped short" */

/* A process with a map in the directory: who it is (its pid and start
 * time) and the user it ran as. */
struct jitcopy_proc {
	uint32_t	 pid;
	uid_t		 uid;
	uint64_t	 start;		/* /proc/PID/stat field 22, ticks */
	int		 known;		/* uid seen (alive, or remembered) */
	int		 sampled;	/* has samples in the file */
	uint64_t	 first;		/* ...the first one's time; 0: none */
};

/* A finished file queued for its copy. */
struct jitcopy_job {
	struct jitcopy		*jm;
	char			 name[NAME_MAX + 1];
	int			 dirfd;
	jitcopy_done_fn		 done;
	void			*arg;
	struct jitcopy_result	 res;
	int			 rc;
};

struct jitcopy {
	struct fileworker	*fw;		/* the thread that copies */
	struct jitnames		*names;		/* the map names, shared */
	int			 scanning;	/* a scan is queued (atomic) */
	/* the worker's alone */
	int			 dirfd;
	struct jitcopy_proc	 seen[JITCOPY_MAX_SEEN];	/* by pid */
	size_t			 nseen;
	time_t			 short_logged;
	char			*hold;		/* PERFSPILL_TEST_JITCOPY_HOLD */
	/* the loop's */
	struct timespec		 looked;	/* the last look, monotonic */
	struct event		*between;	/* looks between slow ticks */
	unsigned int		 more;		/* ...that many still */
	int			 due;		/* the last look's answer */
};

static int
jitcopy_proc_cmp(const void *a, const void *b)
{
	const struct jitcopy_proc	*x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The user pid runs as now (its /proc directory's owner) and its start
 * time, both of one process (read through one directory descriptor);
 * -1 when gone. */
static int
jitcopy_live(uint32_t pid, uid_t *uid, uint64_t *start)
{
	struct stat	 st;
	char		 path[32], buf[1024];
	ssize_t		 n;
	int		 dfd, fd;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(dfd, &st) == -1 || (fd = openat(dfd, "stat", O_RDONLY |
	    O_CLOEXEC)) == -1) {
		close(dfd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	close(dfd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (jitcopy_stat_start(buf, start) == -1)
		return -1;
	*uid = st.st_uid;
	return 0;
}

int
jitcopy_stat_start(const char *stat, uint64_t *start)
{
	const char	*p;
	char		*end;
	int		 i;

	/* the comm may hold anything but ends at the last parenthesis;
	 * field 3 follows it, 22 is 19 fields later */
	if ((p = strrchr(stat, ')')) == NULL)
		return -1;
	for (i = 0; i < 20 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || p[1] < '0' || p[1] > '9')
		return -1;
	*start = strtoull(p + 1, &end, 10);
	return *end == ' ' || *end == '\n' || *end == '\0' ? 0 : -1;
}

/* The largest pid the kernel gives now; INT32_MAX when unreadable. */
static uint32_t
jitcopy_pid_max(void)
{
	unsigned long	 v = 0;
	FILE		*f;

	if ((f = fopen("/proc/sys/kernel/pid_max", "re")) == NULL)
		return INT32_MAX;
	if (fscanf(f, "%lu", &v) != 1 || v == 0 || v > INT32_MAX)
		v = INT32_MAX;
	fclose(f);
	return (uint32_t)v;
}

/* Adds pid's process to out[*n] when it is alive or was seen alive: 0,
 * or -1 when out is full (max). */
static int
jitcopy_add(struct jitcopy *jm, uint32_t pid, struct jitcopy_proc *out,
    size_t *n, size_t max)
{
	struct jitcopy_proc	 key, *old, *p = &out[*n];

	if (*n == max)
		return -1;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	key.pid = pid;
	if (jitcopy_live(pid, &p->uid, &p->start) == 0)
		p->known = 1;
	else if ((old = bsearch(&key, jm->seen, jm->nseen, sizeof(*jm->seen),
	    jitcopy_proc_cmp)) != NULL) {
		p->uid = old->uid;
		p->start = old->start;
		p->known = 1;
	} else
		return 0;	/* dead, never seen: not counted */
	(*n)++;
	return 0;
}

/*
 * The processes with a map in the directory now, sorted by pid, each
 * with who it is and the user it runs as, or ran as when an earlier scan
 * saw it alive. A name that cannot be a process's map (above pid_max,
 * or of a pid neither alive nor seen alive) is skipped before it counts:
 * names anyone can make do not push real maps out. Up to max of them;
 * how many, *stopped set when more were there.
 */
static size_t
jitcopy_scan(struct jitcopy *jm, struct jitcopy_proc *out, size_t max,
    int *stopped)
{
	uint32_t	*pids, pid_max = jitcopy_pid_max();
	ssize_t		 np;
	size_t		 i, n = 0;

	*stopped = 0;
	if ((np = jitnames_list(jm->names, &pids)) <= 0)
		return 0;
	for (i = 0; i < (size_t)np && !*stopped; i++)
		if (pids[i] <= pid_max)
			*stopped = jitcopy_add(jm, pids[i], out, &n, max) ==
			    -1;
	free(pids);
	return n;	/* ascending already */
}

/* A scan that stopped short, in the log at most once a minute. */
static void
jitcopy_short(struct jitcopy *jm)
{
	time_t	 now = time(NULL);

	if (jm->short_logged != 0 && now - jm->short_logged <
	    JITCOPY_SHORT_EVERY)
		return;
	jm->short_logged = now;
	log_warnx("jit maps: more than %d live processes have a map in /tmp; "
	    "the scan stopped there, and the maps of the others are not "
	    "copied", JITCOPY_MAX_SEEN);
}

/* Remembers who runs each process with a map, for after it exits: a
 * job the loop's look queues, on the worker. */
static void
jitcopy_remember(void *arg)
{
	struct jitcopy		*jm = arg;
	struct jitcopy_proc	*now;
	size_t			 n;
	int			 stopped;

	/* a look after this may queue the next scan */
	__atomic_store_n(&jm->scanning, 0, __ATOMIC_RELEASE);
	if ((now = calloc(JITCOPY_MAX_SEEN, sizeof(*now))) == NULL)
		return;
	n = jitcopy_scan(jm, now, JITCOPY_MAX_SEEN, &stopped);
	if (stopped)
		jitcopy_short(jm);
	/* a map gone takes its process with it: the table stays bounded */
	memcpy(jm->seen, now, n * sizeof(*now));
	jm->nseen = n;
	free(now);
}

/*
 * The perf clock (sample times: the kernel's local clock) minus the boot
 * clock (process start times), in ns, measured now: a COMM record of our
 * own thread, made by renaming it to its own name, stamped between two
 * readings of CLOCK_BOOTTIME. The two clocks differ by more than a tick
 * on some machines and drift apart over days, so it is measured for each
 * file. Falls back to CLOCK_MONOTONIC's offset (which the perf clock
 * follows closely) when the event cannot be had.
 */
static int64_t
jitcopy_clock_offset(void)
{
	struct perf_event_attr		 attr;
	struct perf_event_mmap_page	*pg;
	struct perf_event_header	 h;
	struct timespec			 a, b, m;
	uint8_t				*map, *rec;
	uint64_t			 t, head;
	size_t				 psz = (size_t)sysconf(_SC_PAGESIZE);
	char				 comm[16];
	int				 fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.comm = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	memset(comm, 0, sizeof(comm));
	if ((fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
	    PERF_FLAG_FD_CLOEXEC)) == -1)
		goto fallback;
	if ((map = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    0)) == MAP_FAILED) {
		close(fd);
		goto fallback;
	}
	pg = (struct perf_event_mmap_page *)(void *)map;
	prctl(PR_GET_NAME, comm);
	clock_gettime(CLOCK_BOOTTIME, &a);
	prctl(PR_SET_NAME, comm);
	clock_gettime(CLOCK_BOOTTIME, &b);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	rec = map + psz;
	if (head >= sizeof(h)) {
		memcpy(&h, rec, sizeof(h));
		if (h.type == PERF_RECORD_COMM && h.size >= sizeof(h) + 8 &&
		    h.size <= head && h.size <= psz) {
			/* sample_id_all: the time is the record's last u64 */
			memcpy(&t, rec + h.size - 8, 8);
			munmap(map, 2 * psz);
			close(fd);
			return (int64_t)t - ((int64_t)a.tv_sec * 1000000000 +
			    a.tv_nsec + ((int64_t)b.tv_sec - a.tv_sec) *
			    500000000 + (b.tv_nsec - a.tv_nsec) / 2);
		}
	}
	munmap(map, 2 * psz);
	close(fd);
fallback:
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_BOOTTIME, &b);
	return ((int64_t)m.tv_sec - b.tv_sec) * 1000000000 +
	    (m.tv_nsec - b.tv_nsec);
}

int
jitcopy_started_before(uint64_t start, long hz, int64_t off, uint64_t first)
{
	int64_t	 t;

	if (first == 0 || hz <= 0 || start > (uint64_t)INT64_MAX /
	    (1000000000 / (uint64_t)hz) || first > INT64_MAX -
	    JITCOPY_CLOCK_SLACK)
		return 0;
	t = (int64_t)(start * (1000000000 / (uint64_t)hz));
	if ((off > 0 && t > INT64_MAX - off) || (off < 0 && t < INT64_MIN -
	    off))
		return 0;
	return t + off <= (int64_t)first + JITCOPY_CLOCK_SLACK;
}

/* Did p start before its pid's first sample in the file, that is, is it
 * the process that was sampled? off: jitcopy_clock_offset. */
static int
jitcopy_same(const struct jitcopy_proc *p, int64_t off)
{
	return jitcopy_started_before(p->start, sysconf(_SC_CLK_TCK), off,
	    p->first);
}

static int	jitcopy_file(struct jitcopy *, int dirfd, const char *name,
		    struct jitcopy_result *);

/* On the worker. */
static void
jitcopy_work(void *arg)
{
	struct jitcopy_job	*j = arg;

	j->rc = jitcopy_file(j->jm, j->dirfd, j->name, &j->res);
}

/* In the loop. */
static void
jitcopy_done(void *arg)
{
	struct jitcopy_job	*j = arg;

	j->done(j->arg, j->name, &j->res, j->rc);
	free(j);
}

static void	jitcopy_between_cb(evutil_socket_t, short, void *);

struct jitcopy *
jitcopy_create(struct event_base *base, struct fileworker *fw,
    const char *dir)
{
	struct jitcopy		*jm;
	const char		*hold = getenv("PERFSPILL_TEST_JITCOPY_HOLD");

	/* the test hook's directory stands for /tmp, which other programs
	 * of the host fill with maps */
	if (dir == NULL && ((dir = getenv("PERFSPILL_TEST_JITMAP_DIR")) ==
	    NULL || dir[0] == '\0'))
		dir = "/tmp";
	if (fw == NULL)
		return NULL;
	if ((jm = calloc(1, sizeof(*jm))) == NULL) {
		log_warn("jit maps");
		return NULL;
	}
	jm->fw = fw;
	if ((jm->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		log_warn("jit maps: %s", dir);
		free(jm);
		return NULL;
	}
	/* without it, a tick slower than a second is a scan's pace */
	jm->between = evtimer_new(base, jitcopy_between_cb, jm);
	/* jitcopy_free undoes what was made so far */
	if ((jm->names = jitnames_create(jm->dirfd, dir)) == NULL ||
	    (hold != NULL && hold[0] != '\0' &&
	    (jm->hold = strdup(hold)) == NULL)) {
		jitcopy_free(jm);
		return NULL;
	}
	return jm;
}

/*
 * A look: a scan queued on the worker when one is due (a map's process
 * alive, or the names unknown). In the loop. 1 when one was due: the
 * looks then come each second, else at the recording's ticks.
 */
static int
jitcopy_look_now(struct jitcopy *jm)
{
	struct timespec	 now;

	/* a recording's tick, or several recordings': a look a second */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (jm->looked.tv_sec != 0 && (now.tv_sec - jm->looked.tv_sec) *
	    1000 + (now.tv_nsec - jm->looked.tv_nsec) / 1000000 <
	    JITCOPY_SCAN_EVERY * 1000 - JITCOPY_LOOK_EARLY_MS)
		return jm->due;
	jm->looked = now;
	if (__atomic_load_n(&jm->scanning, __ATOMIC_ACQUIRE))
		return jm->due = 1;
	if (!(jm->due = jitnames_due(jm->names)))
		return 0;
	/* nothing to call back: the scan is the worker's alone, and the
	 * loop is not woken for it */
	__atomic_store_n(&jm->scanning, 1, __ATOMIC_RELEASE);
	if (fileworker_submit(jm->fw, "", jitcopy_remember, NULL, jm) == -1)
		__atomic_store_n(&jm->scanning, 0, __ATOMIC_RELEASE);
	return 1;
}

static void
jitcopy_between_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jitcopy	*jm = arg;
	struct timeval	 tv = { JITCOPY_SCAN_EVERY, 0 };

	(void)fd;
	(void)what;
	/* no map's process left: the next look is the tick's */
	if (!jitcopy_look_now(jm))
		jm->more = 0;
	if (jm->more > 0 && --jm->more > 0)
		evtimer_add(jm->between, &tv);
}

void
jitcopy_look(struct jitcopy *jm, uint64_t next_ms)
{
	struct timeval	 tv = { JITCOPY_SCAN_EVERY, 0 };
	int		 due;

	if (jm == NULL)
		return;
	due = jitcopy_look_now(jm);
	/* a tick slower than a second (the loop's look every 5 s, or
	 * drain_ms): while a map's process lives, the looks of the
	 * seconds before the next tick come from a timer of our own, so
	 * that its process is seen each second as it was; with none, a
	 * new map waits for the next tick (the loop is not woken each
	 * second for a machine that runs no JIT) */
	jm->more = due && next_ms > JITCOPY_SCAN_EVERY * 1000 ?
	    (unsigned int)((next_ms - 1) / (JITCOPY_SCAN_EVERY * 1000)) : 0;
	if (jm->more > 0 && jm->between != NULL)
		evtimer_add(jm->between, &tv);
	else if (jm->between != NULL)
		evtimer_del(jm->between);
}

void
jitcopy_free(struct jitcopy *jm)
{
	if (jm == NULL)
		return;
	jitnames_free(jm->names);
	if (jm->between != NULL)
		event_free(jm->between);
	close(jm->dirfd);
	free(jm->hold);
	free(jm);
}

int
jitcopy_submit(struct jitcopy *jm, int dirfd, const char *name,
    jitcopy_done_fn done, void *arg)
{
	struct jitcopy_job	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->jm = jm;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->dirfd = dirfd;
	j->done = done;
	j->arg = arg;
	if (fileworker_submit(jm->fw, name, jitcopy_work, jitcopy_done, j) ==
	    -1) {
		free(j);
		return -1;
	}
	return 0;
}

/* v in width - 1 octal digits and a NUL (the high ones cut: every
 * value here fits) */
static void
jitcopy_octal(uint8_t *at, size_t width, uint64_t v)
{
	size_t	 i;

	at[width - 1] = '\0';
	for (i = width - 1; i > 0; i--, v >>= 3)
		at[i - 1] = (uint8_t)('0' + (v & 7));
}

void
jitcopy_tar_header(uint8_t *h, const char *name, uint64_t size,
    unsigned int uid, unsigned int gid, int64_t mtime)
{
	unsigned int	 sum = 0;
	size_t		 i;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	jitcopy_octal(h + 100, 8, 0644);
	jitcopy_octal(h + 108, 8, uid);
	jitcopy_octal(h + 116, 8, gid);
	jitcopy_octal(h + 124, 12, size);
	jitcopy_octal(h + 136, 12, mtime < 0 ? 0 : (uint64_t)mtime);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	jitcopy_octal(h + 148, 7, sum);		/* six digits, NUL, blank */
	h[155] = ' ';
}

struct jitcopy_marks {
	struct perfcheck	*pc;
	struct jitcopy_proc	*procs;
	size_t			 n;
};

/* A record perf reads: a sample's pid marks its process, and the first
 * sample's time is kept (the file is in time order but for what one
 * round mixes: the least is kept). */
static int
jitcopy_visit(void *arg, const uint8_t *rec, size_t size, size_t attr)
{
	const struct perfcheck_sample	*s;
	struct jitcopy_marks		*m = arg;
	struct perf_event_header	 h;
	struct jitcopy_proc		*p, key;

	(void)size;
	(void)attr;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE ||
	    (s = perfcheck_sample_fields(m->pc)) == NULL)
		return 0;
	key.pid = s->pid;
	if ((p = bsearch(&key, m->procs, m->n, sizeof(*p),
	    jitcopy_proc_cmp)) == NULL)
		return 0;
	p->sampled = 1;
	if (s->time != 0 && (p->first == 0 || s->time < p->first))
		p->first = s->time;
	return 0;
}

/* Marks the processes of procs[0..n) with samples in the finished file
 * map[0..size) (inside compressed records too, as perf reads them). */
static int
jitcopy_walk(const uint8_t *map, uint64_t size, const char *name,
    struct jitcopy_proc *procs, size_t n)
{
	struct perfdata_section	 feat[PERFDATA_FEAT_MAX];
	struct perfcheck_stats	 st;
	struct perfdata_header	 h;
	struct jitcopy_marks	 m = { NULL, procs, n };
	uint64_t		 end;
	unsigned int		 id;

	if (size < sizeof(h)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&h, map, sizeof(h));
	if (h.magic != PERFDATA_MAGIC || h.size != sizeof(h) ||
	    h.data.offset > size || h.data.size > size - h.data.offset) {
		errno = EINVAL;
		return -1;
	}
	end = h.data.offset + h.data.size;
	memset(feat, 0, sizeof(feat));
	for (id = 0; id < PERFDATA_FEAT_MAX; id++)
		if (perfdata_feat_find(map, size, &h, id, &feat[id]) == -1)
			memset(&feat[id], 0, sizeof(feat[id]));
	if ((m.pc = perfcheck_create(map, size, &h, feat)) == NULL)
		return -1;
	perfcheck_visit(m.pc, jitcopy_visit, &m);
	memset(&st, 0, sizeof(st));
	if (perfcheck_walk(m.pc, map, end, h.data.offset, &st) < end)
		log_warnx("%s: jit maps: read up to %s", name,
		    perfcheck_why(m.pc));
	perfcheck_destroy(m.pc);
	return 0;
}

/*
 * The pages of fd's map[0..len) that the walk brought into the page
 * cache go again: a file written past it (direct I/O) so as not to take
 * the traced programs' memory stays so; one cached before (buffered)
 * keeps what it had. was: mincore's vector before the walk, or NULL.
 */
static void
jitcopy_uncache(int fd, const uint8_t *was, size_t len)
{
	size_t	 psz = (size_t)sysconf(_SC_PAGESIZE), np = (len + psz - 1) /
	    psz, i, from;

	if (was == NULL)
		return;
	for (i = 0; i < np; i++) {
		if (was[i] & 1)
			continue;
		for (from = i; i < np && !(was[i] & 1); i++)
			;
		(void)posix_fadvise(fd, (off_t)(from * psz),
		    (off_t)((i - from) * psz), POSIX_FADV_DONTNEED);
	}
}

/* Marks the processes of procs[0..n) that have samples in the file. */
static int
jitcopy_mark(int dirfd, const char *name, struct jitcopy_proc *procs,
    size_t n)
{
	struct stat		 sb;
	uint8_t			*map, *was;
	size_t			 psz = (size_t)sysconf(_SC_PAGESIZE);
	int			 fd, rv;

	if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_size == 0 ||
	    (map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd,
	    0)) == MAP_FAILED) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	(void)madvise(map, (size_t)sb.st_size, MADV_SEQUENTIAL);
	if ((was = malloc(((size_t)sb.st_size + psz - 1) / psz)) != NULL &&
	    mincore(map, (size_t)sb.st_size, was) == -1) {
		free(was);
		was = NULL;
	}
	rv = jitcopy_walk(map, (uint64_t)sb.st_size, name, procs, n);
	munmap(map, (size_t)sb.st_size);
	jitcopy_uncache(fd, was, (size_t)sb.st_size);
	free(was);
	close(fd);
	return rv;
}

/*
 * The map of p, read whole into *buf, when it is one to trust: beneath
 * the directory by name (no link followed: O_NOFOLLOW on the last part,
 * and the name has no other), not blocking on a FIFO, a regular file of
 * one link (a hard link of another file would be a second), owned by
 * the process's user, no larger than max. 0, or -1 with a reason.
 */
static int
jitcopy_read(struct jitcopy *jm, const struct jitcopy_proc *p, size_t max,
    uint8_t **buf, struct stat *sb, const char **why)
{
	char		 name[32];
	size_t		 done = 0;
	ssize_t		 r;
	int		 fd;

	*buf = NULL;
	snprintf(name, sizeof(name), "perf-%u.map", p->pid);
	if ((fd = openat(jm->dirfd, name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) == -1) {
		*why = errno == ELOOP ? "a symbolic link" : strerror(errno);
		return -1;
	}
	if (fstat(fd, sb) == -1) {
		*why = strerror(errno);
		goto error;
	}
	if (!S_ISREG(sb->st_mode)) {
		*why = "not a regular file";
		goto error;
	}
	if (sb->st_nlink != 1) {
		*why = "a file of several links";
		goto error;
	}
	if (!p->known) {
		*why = "its process was never seen alive";
		goto error;
	}
	if (sb->st_uid != p->uid) {
		*why = "owned by another user than its process's";
		goto error;
	}
	if ((uint64_t)sb->st_size > max) {
		*why = "larger than the bound";
		goto error;
	}
	if ((*buf = malloc((size_t)sb->st_size + 1)) == NULL) {
		*why = strerror(errno);
		goto error;
	}
	/* a JIT appends while we read: what was there at the fstat */
	while (done < (size_t)sb->st_size) {
		if ((r = read(fd, *buf + done, (size_t)sb->st_size - done)) ==
		    -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	sb->st_size = (off_t)done;
	close(fd);
	return 0;
error:
	free(*buf);
	*buf = NULL;
	close(fd);
	return -1;
}

static int
jitcopy_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One member: header, data, padding to a block. */
static int
jitcopy_member(int fd, const struct jitcopy_proc *p, const uint8_t *buf,
    const struct stat *sb)
{
	static const uint8_t	 zero[512];
	uint8_t			 hdr[512];
	char			 name[32];
	size_t			 len = (size_t)sb->st_size;

	snprintf(name, sizeof(name), "perf-%u.map", p->pid);
	jitcopy_tar_header(hdr, name, len, (unsigned int)sb->st_uid,
	    (unsigned int)sb->st_gid, (int64_t)sb->st_mtime);
	if (jitcopy_write_all(fd, hdr, sizeof(hdr)) == -1 ||
	    jitcopy_write_all(fd, buf, len) == -1 ||
	    (len % 512 != 0 && jitcopy_write_all(fd, zero, 512 - len % 512) ==
	    -1))
		return -1;
	return 0;
}

/*
 * Copies the maps of the processes sampled in the finished file name of
 * dirfd into name's companion (written whole, then renamed); nothing
 * when no map is there. On the worker. 0, or -1 with errno (logged).
 */
static int
jitcopy_file(struct jitcopy *jm, int dirfd, const char *name,
    struct jitcopy_result *res)
{
	static const uint8_t	 end[1024];
	struct jitcopy_proc	*procs;
	struct stat		 sb;
	uint8_t			*buf;
	const char		*why;
	char			 comp[NAME_MAX + 1], tmp[NAME_MAX + 1];
	size_t			 n, i;
	int64_t			 off = 0;
	int			 fd = -1, saved, stopped, clocked = 0;

	memset(res, 0, sizeof(*res));
	if ((procs = calloc(JITCOPY_MAX_SEEN, sizeof(*procs))) == NULL)
		goto error;
	/* no map in /tmp, the common case: the file is not read */
	if ((n = jitcopy_scan(jm, procs, JITCOPY_MAX_SEEN, &stopped)) == 0) {
		free(procs);
		return 0;
	}
	if (stopped)
		log_warnx("%s: jit maps: more than %d live processes have a "
		    "map in /tmp; only the first %d were looked at", name,
		    JITCOPY_MAX_SEEN, JITCOPY_MAX_SEEN);
	fileworker_hold(jm->hold, "jit maps");
	if (jitcopy_mark(dirfd, name, procs, n) == -1)
		goto error;
	if (snprintf(comp, sizeof(comp), "%s%s", name, JITCOPY_SUFFIX) >=
	    (int)sizeof(comp) || snprintf(tmp, sizeof(tmp), ".%s.tmp",
	    comp) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		goto error;
	}
	for (i = 0; i < n; i++) {
		if (!procs[i].sampled)
			continue;
		if (res->n == JITCOPY_MAX_MAPS) {
			log_warnx("%s: jit maps of more than %d processes; "
			    "perf-%u.map and later ones not copied", name,
			    JITCOPY_MAX_MAPS, procs[i].pid);
			break;
		}
		if (!clocked) {
			off = jitcopy_clock_offset();
			clocked = 1;
		}
		if (procs[i].known && !jitcopy_same(&procs[i], off)) {
			log_warnx("%s: jit map perf-%u.map not copied: its "
			    "process started after the pid's first sample "
			    "(another process has the pid now)", name,
			    procs[i].pid);
			continue;
		}
		if (jitcopy_read(jm, &procs[i], JITCOPY_MAX_TOTAL - res->bytes <
		    JITCOPY_MAX_BYTES ? JITCOPY_MAX_TOTAL - res->bytes :
		    JITCOPY_MAX_BYTES, &buf, &sb, &why) == -1) {
			log_warnx("%s: jit map perf-%u.map not copied: %s",
			    name, procs[i].pid, why);
			continue;
		}
		if (fd == -1) {
			/* a leftover of a crash is ours to replace */
			unlinkat(dirfd, tmp, 0);
			if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT |
			    O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640)) == -1) {
				free(buf);
				goto error;
			}
			/* as the manifest: for the on_finish program's group */
			fchmod(fd, 0640);
		}
		if (jitcopy_member(fd, &procs[i], buf, &sb) == -1) {
			free(buf);
			goto error;
		}
		free(buf);
		res->pids[res->n++] = procs[i].pid;
		res->bytes += (uint64_t)sb.st_size;
	}
	free(procs);
	procs = NULL;
	if (fd == -1)
		return 0;
	if (jitcopy_write_all(fd, end, sizeof(end)) == -1 || fsync(fd) == -1)
		goto error;
	if (close(fd) == -1) {
		fd = -1;
		goto error;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, comp) == -1)
		goto error;
	log_info("%s: jit maps of %zu processes copied (%llu bytes)", name,
	    res->n, (unsigned long long)res->bytes);
	return 0;
error:
	saved = errno;
	log_warn("%s: copying jit maps", name);
	free(procs);
	if (fd != -1) {
		close(fd);
		unlinkat(dirfd, tmp, 0);
	}
	memset(res, 0, sizeof(*res));
	errno = saved;
	return -1;
}

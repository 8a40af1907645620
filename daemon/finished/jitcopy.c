/*
 * jitcopy: JIT maps of /tmp copied beside a finished file (see jitcopy.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "jitcopy.h"
#include "log.h"
#include "perfcheck.h"
#include "perfdata.h"

#define JITCOPY_SCAN_EVERY	1	/* seconds */
#define JITCOPY_MAX_SEEN		1024

/* A process with a map in the directory, and the user it ran as. */
struct jitcopy_proc {
	uint32_t	 pid;
	uid_t		 uid;
	int		 known;		/* uid seen (alive, or remembered) */
	int		 sampled;	/* has samples in the file */
};

struct jitcopy {
	struct event		*ev;
	int			 dirfd;
	struct jitcopy_proc	 seen[JITCOPY_MAX_SEEN];	/* by pid */
	size_t			 nseen;
};

uint32_t
jitcopy_pid_of(const char *name)
{
	unsigned long	 pid = 0;
	const char	*p;

	if (strncmp(name, "perf-", 5) != 0 || name[5] < '1' || name[5] > '9')
		return 0;
	for (p = name + 5; *p >= '0' && *p <= '9'; p++)
		if ((pid = pid * 10 + (unsigned long)(*p - '0')) > INT32_MAX)
			return 0;
	return strcmp(p, ".map") == 0 ? (uint32_t)pid : 0;
}

static int
jitcopy_proc_cmp(const void *a, const void *b)
{
	const struct jitcopy_proc	*x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The user pid runs as now (its /proc directory's owner); -1 when gone. */
static int
jitcopy_live_uid(uint32_t pid, uid_t *uid)
{
	struct stat	 st;
	char		 path[32];

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st) == -1)
		return -1;
	*uid = st.st_uid;
	return 0;
}

/*
 * The processes with a map in the directory now, sorted by pid, each
 * with the user it runs as, or ran as when an earlier scan saw it alive.
 * Up to max of them; how many.
 */
static size_t
jitcopy_scan(struct jitcopy *jm, struct jitcopy_proc *out, size_t max)
{
	struct jitcopy_proc	 key, *old;
	struct dirent		*e;
	DIR			*dir;
	size_t			 n = 0;
	uint32_t		 pid;
	int			 fd;

	if ((fd = openat(jm->dirfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (dir = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	while (n < max && (e = readdir(dir)) != NULL) {
		if ((pid = jitcopy_pid_of(e->d_name)) == 0)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].pid = pid;
		key.pid = pid;
		if (jitcopy_live_uid(pid, &out[n].uid) == 0)
			out[n].known = 1;
		else if ((old = bsearch(&key, jm->seen, jm->nseen,
		    sizeof(*jm->seen), jitcopy_proc_cmp)) != NULL) {
			out[n].uid = old->uid;
			out[n].known = 1;
		}
		n++;
	}
	closedir(dir);
	qsort(out, n, sizeof(*out), jitcopy_proc_cmp);
	return n;
}

/* Remembers who runs each process with a map, for after it exits. */
static void
jitcopy_tick(evutil_socket_t fd, short what, void *arg)
{
	struct jitcopy		*jm = arg;
	struct jitcopy_proc	*now;
	size_t			 n, i, k = 0;

	(void)fd;
	(void)what;
	if ((now = calloc(JITCOPY_MAX_SEEN, sizeof(*now))) == NULL)
		return;
	n = jitcopy_scan(jm, now, JITCOPY_MAX_SEEN);
	/* a map gone takes its process with it: the table stays bounded */
	for (i = 0; i < n; i++)
		if (now[i].known)
			jm->seen[k++] = now[i];
	jm->nseen = k;
	free(now);
}

struct jitcopy *
jitcopy_create(struct event_base *base, const char *dir)
{
	struct jitcopy	*jm;
	struct timeval	 tv = { JITCOPY_SCAN_EVERY, 0 };

	if (dir == NULL)
		dir = "/tmp";
	if ((jm = calloc(1, sizeof(*jm))) == NULL) {
		log_warn("jit maps");
		return NULL;
	}
	if ((jm->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		log_warn("jit maps: %s", dir);
		free(jm);
		return NULL;
	}
	if ((jm->ev = event_new(base, -1, EV_PERSIST, jitcopy_tick, jm)) ==
	    NULL || event_add(jm->ev, &tv) == -1) {
		log_warnx("jit maps: no timer");
		jitcopy_free(jm);
		return NULL;
	}
	return jm;
}

void
jitcopy_free(struct jitcopy *jm)
{
	if (jm == NULL)
		return;
	if (jm->ev != NULL)
		event_free(jm->ev);
	close(jm->dirfd);
	free(jm);
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

/* A record perf reads: a sample's pid marks its process. */
static int
jitcopy_visit(void *arg, const uint8_t *rec, size_t size, size_t attr)
{
	struct jitcopy_marks	*m = arg;
	struct perf_event_header h;
	struct jitcopy_proc	*p, key;
	size_t			 off;

	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE || (off = perfdata_pid_off(
	    perfcheck_sample_type(m->pc, attr))) == 0 || off + 4 > size)
		return 0;
	memcpy(&key.pid, rec + off, sizeof(key.pid));
	if ((p = bsearch(&key, m->procs, m->n, sizeof(*p),
	    jitcopy_proc_cmp)) != NULL)
		p->sampled = 1;
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

/* Marks the processes of procs[0..n) that have samples in the file. */
static int
jitcopy_mark(int dirfd, const char *name, struct jitcopy_proc *procs,
    size_t n)
{
	struct stat		 sb;
	uint8_t			*map;
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
	close(fd);
	rv = jitcopy_walk(map, (uint64_t)sb.st_size, name, procs, n);
	munmap(map, (size_t)sb.st_size);
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

int
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
	int			 fd = -1, saved;

	memset(res, 0, sizeof(*res));
	if (jm == NULL)
		return 0;
	if ((procs = calloc(JITCOPY_MAX_SEEN, sizeof(*procs))) == NULL)
		goto error;
	/* no map in /tmp, the common case: the file is not read */
	if ((n = jitcopy_scan(jm, procs, JITCOPY_MAX_SEEN)) == 0) {
		free(procs);
		return 0;
	}
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

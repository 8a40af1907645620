/*
 * buildid reads the build-ids of mapped files in user space (see
 * buildid.h).
 *
 * A file's build-id follows the file: each mapping of a file already
 * read has the worker look at it again (a stat), and read it again when
 * it changed (an in-place rewrite keeps device and inode; size, mtime or
 * ctime moves). Each content read is a version; a trace file lists every
 * version that one of its mappings found: a file rewritten between two
 * runs within one trace file names both ids, and each file of a series
 * the ids of the runs it holds.
 *
 * Who touches what: the table (hash chains, the current file's list)
 * belongs to the recording's side, which holds the recording's lock: the
 * drain thread notes the mappings of what it drains, and the loop
 * flushes a finished file's ids; the worker never touches the table. An
 * entry's key (device, inode, generation, name) never changes; where it
 * was last mapped (pid, start, end) is set by the recording's side only
 * while the entry is idle; its versions, state, the mapping to
 * look at next and tries are under the mutex. Entries live as long as
 * the daemon, so neither side ever holds a pointer that goes away; a
 * version goes only under the mutex, once no trace file can list it any
 * more.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "buildid.h"
#include "log.h"
#include "perfdata/perf-abi.h"
#include "worker.h"

/* MMAP2: header, pid, tid, addr, len, pgoff, then at 40 either maj, min,
 * ino, ino_generation or size, 3 bytes, id[20]; prot, flags, filename */
#define BUILDID_MMAP2_DEV	40
#define BUILDID_MMAP2_NAME	72
/* A file we could not open through a task that exited (or in a namespace
 * we could not enter) is tried again through another task that maps it,
 * this often */
#define BUILDID_TRIES		3
/*
 * A file's times tick at the kernel's clock granularity (a few ms) and
 * at the file system's (up to 2 s: FAT, ext4 with small inodes): two
 * writes of the same size inside one tick look alike. A read this close
 * after the file's last change is not trusted to stand for the file
 * until it is read again later (git's "racily clean" entries).
 */
#define BUILDID_RACY_NS		INT64_C(2000000000)
/* Versions one trace file lists for one file; past it the newest is
 * replaced, so a file rewritten in a loop costs bounded memory. */
#define BUILDID_VERSIONS_MAX	8
/*
 * The worker is woken by a drain pass (buildid_kick), after the pass
 * noted all it drained: a look not yet started serves every mapping
 * noted before it, so an exec storm mapping libc a thousand times a
 * second costs a look a pass, not one per mapping (it was woken at the
 * first mapping and then slept 2 ms for the rest of the pass: two
 * wakeups a pass, 4.4 a second always-on, bench/history/2026-12-06-
 * quiet). And a pass wakes it only once BUILDID_BATCH files wait, or
 * the first of them has waited BUILDID_BATCH_NS: a compile load maps a
 * few files a second, and woke it each pass, once a second for a look
 * or two. Before a file's build-ids are written (buildid_flush: a stop,
 * a rotation) it is woken for all that waits, and a rotation wakes it
 * when it begins (buildid_hurry), tens of milliseconds before its
 * switch, so that a file finished then names what it did when the
 * reader was woken each pass.
 *
 * The wait loses no id of a file that stays: a look finds the file by
 * its name first (the stamp says whether it changed) and through
 * /proc/PID/map_files only when that fails, and the name of an
 * installed library or program names the mapped inode long after its
 * process exited (buildid_find compares the inode). What the wait puts
 * at risk is a file that only its process could reach, and only when
 * the process exits before the look: one deleted or replaced by a new
 * inode (a build's short-lived test program), or seen only through a
 * mount namespace that died with it. Those were at risk already while
 * a pass was coming (up to drain_ms), most of them exit within it, and
 * their ids are still read through another task that maps the file
 * (BUILDID_TRIES); perf reads the rest at report time, as for any file
 * without an id in the table.
 */
#define BUILDID_BATCH		64
#define BUILDID_BATCH_NS	UINT64_C(5000000000)

enum buildid_state {
	BUILDID_IDLE,
	BUILDID_QUEUED,		/* for the worker: it looks later */
	BUILDID_LOOKING,	/* the worker looks now */
};

/* What the file was when its id was read. */
struct buildid_stamp {
	uint64_t	 ino;
	int64_t		 size;
	struct timespec	 mtime, ctime;
	int		 settled;	/* read well after its last change */
};

/* One content of a file, as read at one time. */
struct buildid_ver {
	struct buildid_ver	*older;
	uint64_t		 seq;		/* the file's versions count up */
	uint64_t		 mark;		/* the trace file that last used it */
	struct buildid_stamp	 st;
	uint8_t			 size;		/* 0: the file has no build-id */
	uint8_t			 id[BUILDID_MAX];
};

struct buildid_file {
	uint32_t		 maj;
	uint32_t		 min;
	uint64_t		 ino;		/* 0: the kernel gave the id */
	uint64_t		 gen;		/* the inode's generation */
	pid_t			 pid;		/* a task that mapped it... */
	uint64_t		 start, end;	/* ...there */
	uint64_t		 mark;		/* last listed for this file */
	uint64_t		 since;		/* versions up to this one the last
						 * trace file named already */
	uint64_t		 nseq;		/* versions made */
	enum buildid_state	 state;
	int			 again;		/* mapped while looked at: look */
	pid_t			 apid;		/* ...again there */
	uint64_t		 astart, aend;
	uint8_t			 tries;		/* reads that could not open it */
	struct buildid_ver	*vers;		/* newest first */
	struct buildid_file	*hnext;
	struct buildid_file	*qnext;
	char			 name[];
};

struct buildid {
	struct buildid_file	**tab;
	size_t			  nbuckets;	/* a power of two */
	size_t			  nfiles;
	int			  full;		/* BUILDID_MAX_FILES reached */
	uint64_t		  cleared;	/* stray flags found */
	/* the files of the trace file being written */
	struct buildid_file	**set;
	size_t			  nset, capset;
	uint64_t		  epoch;

	pthread_mutex_t		  mtx;
	pthread_cond_t		  work;		/* the queue has an entry */
	pthread_cond_t		  done;		/* the queue was read */
	struct buildid_file	 *qhead, **qtail;
	size_t			  nqueued;	/* not idle */
	int			  kick;		/* the recording's side queued
						 * since its last kick: */
	size_t			  nkick;	/* ...files */
	uint64_t		  kick_since;	/* ...the first one, mono ns */
	int			  quit;
	int			  running;	/* 1 started, -1 could not be */
	pthread_t		  th;
};

/* The worker */

static void
buildid_stamp(struct buildid_stamp *t, const struct stat *st)
{
	struct timespec	 now;
	int64_t		 age;

	t->ino = st->st_ino;
	t->size = st->st_size;
	t->mtime = st->st_mtim;
	t->ctime = st->st_ctim;
	clock_gettime(CLOCK_REALTIME, &now);
	age = ((int64_t)now.tv_sec - (int64_t)st->st_ctim.tv_sec) *
	    1000000000 + (now.tv_nsec - st->st_ctim.tv_nsec);
	t->settled = age >= BUILDID_RACY_NS;
}

static int
buildid_stamp_same(const struct buildid_stamp *a,
    const struct buildid_stamp *b)
{
	return a->ino == b->ino && a->size == b->size &&
	    a->mtime.tv_sec == b->mtime.tv_sec &&
	    a->mtime.tv_nsec == b->mtime.tv_nsec &&
	    a->ctime.tv_sec == b->ctime.tv_sec &&
	    a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/*
 * The very file mapped, through map_files/, while the task lives; then
 * the name as the task sees it (its root: another mount namespace), then
 * as we see it. The inode must match, and it must be a regular file
 * (never a device or a FIFO that took the name meanwhile); the device is
 * not compared, as overlayfs reports its own where the mapping names the
 * layer's. 0 with path and st, or -1.
 */
static int
buildid_find(const struct buildid_file *f, char *path, size_t len,
    struct stat *st)
{
	int	 i;

	for (i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(path, len, "/proc/%d/map_files/%" PRIx64 "-%"
			    PRIx64, (int)f->pid, f->start, f->end);
		else if (i == 1)
			snprintf(path, len, "/proc/%d/root%s", (int)f->pid,
			    f->name);
		else
			snprintf(path, len, "%s", f->name);
		if (stat(path, st) == 0 && S_ISREG(st->st_mode) &&
		    st->st_ino == f->ino)
			return 0;
	}
	return -1;
}

enum buildid_look {
	BUILDID_GONE,		/* no way to the file found */
	BUILDID_SAME,		/* as it was when last read */
	BUILDID_READ,		/* read (again): id and stamp */
};

/*
 * Look at f's file: unchanged since was (NULL: never read), or its id
 * and what the file was when the id was read. A file that changes while
 * it is read is read again.
 */
static enum buildid_look
buildid_look(const struct buildid_file *f, const struct buildid_stamp *was,
    struct buildid_stamp *now, uint8_t *id, size_t *len)
{
	char		 path[PATH_MAX + 64];
	struct stat	 st;
	struct buildid_stamp after;
	int		 fd, i;

	*len = 0;
	/*
	 * A file read before and mapped again is most often the same: its
	 * name, as we see it, gives the inode and the stamp that say so
	 * for a walk of the name, where map_files/ costs a /proc lookup
	 * and the task's mm (the build-id reader's CPU on a compile load
	 * was mostly those). Any other answer looks the long way.
	 */
	if (was != NULL && was->settled && stat(f->name, &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_ino == f->ino) {
		buildid_stamp(now, &st);
		if (buildid_stamp_same(was, now))
			return BUILDID_SAME;
	}
	if (buildid_find(f, path, sizeof path, &st) == -1)
		return BUILDID_GONE;
	buildid_stamp(now, &st);
	if (was != NULL && was->settled && buildid_stamp_same(was, now))
		return BUILDID_SAME;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return BUILDID_GONE;
	for (i = 0; i < 3; i++) {
		if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
		    st.st_ino != f->ino) {
			close(fd);
			return BUILDID_GONE;
		}
		buildid_stamp(now, &st);
		if (buildid_elf(fd, id, len) == -1)
			*len = 0;
		if (fstat(fd, &st) == -1)
			break;
		buildid_stamp(&after, &st);
		if (buildid_stamp_same(now, &after))
			break;
	}
	close(fd);
	return BUILDID_READ;
}

/* Drop f's versions that no trace file can list any more: all but the
 * newest, once the file they were used in is finished. Under the mutex. */
static void
buildid_prune(struct buildid_file *f, uint64_t epoch)
{
	struct buildid_ver	**pp, *v;

	if (f->vers == NULL)
		return;
	for (pp = &f->vers->older; (v = *pp) != NULL; )
		if (v->mark != epoch) {
			*pp = v->older;
			free(v);
		} else
			pp = &v->older;
}

/*
 * The worker found f's file as look says: record it. 1 when that is a
 * new id for the file (2: it changed), else 0. Under the mutex.
 */
static int
buildid_found(struct buildid *b, struct buildid_file *f,
    enum buildid_look look, const struct buildid_stamp *st,
    const uint8_t *id, size_t len, struct buildid_ver **spare)
{
	struct buildid_ver	*v = f->vers, *o;
	size_t			 n;
	int			 rc = 0;

	if (look == BUILDID_GONE) {
		/* with a version: the task and the name are gone, the file
		 * is as it was as far as anyone can tell */
		if (v != NULL)
			v->mark = b->epoch;
		else
			f->tries++;
		return 0;
	}
	if (look == BUILDID_READ && (v == NULL || v->size != len ||
	    memcmp(v->id, id, len) != 0)) {
		for (n = 0, o = v; o != NULL && o->mark == b->epoch;
		    o = o->older)
			n++;
		if (v == NULL || n < BUILDID_VERSIONS_MAX) {
			if ((v = *spare) == NULL)
				return 0;	/* out of memory: as unread */
			*spare = NULL;
			v->older = f->vers;
			f->vers = v;
		}
		v->seq = ++f->nseq;
		memcpy(v->id, id, len);
		v->size = (uint8_t)len;
		rc = v->older != NULL ? 2 : 1;
	}
	if (look == BUILDID_READ)
		v->st = *st;
	v->mark = b->epoch;
	buildid_prune(f, b->epoch);
	return rc;
}

/* Queue f for the worker (counted in nqueued by the caller); the
 * worker is woken by the next kick, or looks at it before it sleeps.
 * Under the mutex. */
static void
buildid_enqueue(struct buildid *b, struct buildid_file *f)
{
	f->state = BUILDID_QUEUED;
	f->qnext = NULL;
	*b->qtail = f;
	b->qtail = &f->qnext;
}

/* With -v, each id read and each change: what a file was taken for. */
static void
buildid_log(const struct buildid_file *f, const uint8_t *id, size_t len,
    int found)
{
	char	 hex[2 * BUILDID_MAX + 1] = "none";
	size_t	 i;

	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	log_debug("build-id of %s: %s%s", f->name, hex,
	    found == 2 ? " (the file changed)" : "");
}

static void *
buildid_worker(void *arg)
{
	struct buildid		*b = arg;
	struct buildid_file	*f;
	struct buildid_stamp	 was, now;
	struct buildid_ver	*spare = NULL;
	enum buildid_look	 look;
	uint8_t			 id[BUILDID_MAX];
	size_t			 len;
	int			 have, found;

	/* named: it alone of ours stays at SCHED_OTHER while recording */
	pthread_setname_np(pthread_self(), "buildid");
	pthread_mutex_lock(&b->mtx);
	for (;;) {
		while (!b->quit && b->qhead == NULL)
			pthread_cond_wait(&b->work, &b->mtx);
		if (b->quit)
			break;
		f = b->qhead;
		if ((b->qhead = f->qnext) == NULL)
			b->qtail = &b->qhead;
		f->state = BUILDID_LOOKING;
		if ((have = f->vers != NULL))
			was = f->vers->st;
		pthread_mutex_unlock(&b->mtx);
		look = buildid_look(f, have ? &was : NULL, &now, id, &len);
		if (look == BUILDID_READ && spare == NULL)
			spare = calloc(1, sizeof *spare);
		pthread_mutex_lock(&b->mtx);
		found = buildid_found(b, f, look, &now, id, len, &spare);
		if (f->again) {
			/* this look may have begun before that mapping */
			f->again = 0;
			f->pid = f->apid;
			f->start = f->astart;
			f->end = f->aend;
			buildid_enqueue(b, f);
		} else {
			f->state = BUILDID_IDLE;
			b->nqueued--;
		}
		/* a flush waits for every queued look (buildid_flush): it is
		 * woken once the queue is empty, not after each file, which
		 * woke the loop some 15 times a stop on a compile load */
		if (b->qhead == NULL)
			pthread_cond_broadcast(&b->done);
		if (found) {
			/* the log is written without the mutex: the
			 * recording's side may be waiting for it */
			pthread_mutex_unlock(&b->mtx);
			buildid_log(f, id, len, found);
			pthread_mutex_lock(&b->mtx);
		}
	}
	pthread_mutex_unlock(&b->mtx);
	free(spare);
	return NULL;
}

struct buildid *
buildid_create(void)
{
	struct buildid		*b;
	pthread_condattr_t	 ca;

	if ((b = calloc(1, sizeof *b)) == NULL)
		return NULL;
	b->nbuckets = 1024;
	if ((b->tab = calloc(b->nbuckets, sizeof *b->tab)) == NULL) {
		free(b);
		return NULL;
	}
	b->qtail = &b->qhead;
	b->epoch = 1;
	pthread_mutex_init(&b->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->done, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&b->work, NULL);
	return b;
}

void
buildid_destroy(struct buildid *b)
{
	struct buildid_file	*f, *next;
	struct buildid_ver	*v;
	struct timespec		 until;
	size_t			 i;

	if (b == NULL)
		return;
	if (b->running == 1) {
		pthread_mutex_lock(&b->mtx);
		b->quit = 1;
		pthread_cond_signal(&b->work);
		pthread_mutex_unlock(&b->mtx);
		/* a read may hang (a dead NFS server): exit anyway, and
		 * leave the worker what it may still touch */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 2;
		if (pthread_timedjoin_np(b->th, NULL, &until) != 0) {
			log_warnx("build-ids: a file read does not return; "
			    "leaving it behind");
			return;
		}
	}
	for (i = 0; i < b->nbuckets; i++)
		for (f = b->tab[i]; f != NULL; f = next) {
			next = f->hnext;
			while ((v = f->vers) != NULL) {
				f->vers = v->older;
				free(v);
			}
			free(f);
		}
	free(b->tab);
	free(b->set);
	pthread_cond_destroy(&b->work);
	pthread_cond_destroy(&b->done);
	pthread_mutex_destroy(&b->mtx);
	free(b);
}

/* The recording's side: the drain thread, or the loop, under the
 * recording's lock */

static size_t
buildid_hash(uint32_t maj, uint32_t min, uint64_t ino, uint64_t gen,
    const char *name)
{
	uint64_t	 h = 0xcbf29ce484222325ULL ^ ino ^ ((uint64_t)maj << 40) ^
	    ((uint64_t)min << 20) ^ (gen << 7);

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29));
}

static void
buildid_grow(struct buildid *b)
{
	struct buildid_file	**tab, *f, *next;
	size_t			  i, n = b->nbuckets * 2, h;

	if ((tab = calloc(n, sizeof *tab)) == NULL)
		return;		/* longer chains, still correct */
	for (i = 0; i < b->nbuckets; i++)
		for (f = b->tab[i]; f != NULL; f = next) {
			next = f->hnext;
			h = buildid_hash(f->maj, f->min, f->ino, f->gen,
			    f->name) & (n - 1);
			f->hnext = tab[h];
			tab[h] = f;
		}
	free(b->tab);
	b->tab = tab;
	b->nbuckets = n;
}

/* List f for the current trace file, once. */
static void
buildid_list(struct buildid *b, struct buildid_file *f)
{
	struct buildid_file	**set;
	size_t			  cap;

	if (f->mark == b->epoch) {
		f->since = 0;	/* carried over, and mapped here too */
		return;
	}
	f->since = 0;
	if (b->nset == b->capset) {
		cap = b->capset ? b->capset * 2 : 64;
		if ((set = reallocarray(b->set, cap, sizeof *set)) == NULL)
			return;
		b->set = set;
		b->capset = cap;
	}
	b->set[b->nset++] = f;
	f->mark = b->epoch;
}

/*
 * f was mapped again (or for the first time) by pid at start-end: have
 * the worker look at the file, unless a look is queued already (it
 * begins after this mapping, which is what counts) or f could not be
 * opened through this task or BUILDID_TRIES others.
 */
static void
buildid_want(struct buildid *b, struct buildid_file *f, pid_t pid,
    uint64_t start, uint64_t end)
{
	pthread_mutex_lock(&b->mtx);
	if (f->state == BUILDID_QUEUED || (f->vers == NULL && f->tries > 0 &&
	    (f->tries >= BUILDID_TRIES || f->pid == pid))) {
		pthread_mutex_unlock(&b->mtx);
		return;
	}
	if (f->state == BUILDID_LOOKING) {
		f->again = 1;
		f->apid = pid;
		f->astart = start;
		f->aend = end;
		pthread_mutex_unlock(&b->mtx);
		return;
	}
	if (b->running == 0) {
		b->running = worker_spawn(&b->th, buildid_worker, b) == 0 ?
		    1 : -1;
		if (b->running == -1)
			log_warnx("build-ids: cannot start a thread to read "
			    "them; perf reads them at report time");
	}
	if (b->running == 1) {
		/* the worker touches these only while f is busy: not now */
		f->pid = pid;
		f->start = start;
		f->end = end;
		b->nqueued++;
		buildid_enqueue(b, f);
		if (!b->kick)
			b->kick_since = worker_now_ns(CLOCK_MONOTONIC);
		b->kick = 1;
		b->nkick++;
	}
	pthread_mutex_unlock(&b->mtx);
}

void
buildid_hurry(struct buildid *b)
{
	int	 queued;

	/* kick is the recording's side's own: no mutex for a pass that
	 * noted no new look */
	if (!b->kick)
		return;
	b->kick = 0;
	b->nkick = 0;
	/* a worker awake for an earlier batch looked at these before it
	 * slept: no wakeup for an empty queue */
	pthread_mutex_lock(&b->mtx);
	queued = b->qhead != NULL;
	pthread_mutex_unlock(&b->mtx);
	/* signalled without the mutex: the looks were queued under it (a
	 * worker about to wait sees them), and a worker woken under it met
	 * it held and slept again on it */
	if (queued)
		pthread_cond_signal(&b->work);
}

void
buildid_kick(struct buildid *b)
{
	if (b->kick && (b->nkick >= BUILDID_BATCH ||
	    worker_now_ns(CLOCK_MONOTONIC) - b->kick_since >= BUILDID_BATCH_NS))
		buildid_hurry(b);
}

/* The kernel gave f's only id (attr.build_id): used in this trace file. */
static void
buildid_given(struct buildid *b, struct buildid_file *f)
{
	pthread_mutex_lock(&b->mtx);
	if (f->vers != NULL)
		f->vers->mark = b->epoch;
	pthread_mutex_unlock(&b->mtx);
}

static void
buildid_note(struct buildid *b, const uint8_t *rec, size_t size)
{
	struct perf_event_header	 h;
	struct buildid_file		*f;
	const char			*name;
	uint32_t			 maj = 0, min = 0, pid;
	uint64_t			 ino = 0, gen = 0, start, len;
	size_t				 n, slot;
	uint8_t				 id[BUILDID_MAX], idlen = 0;
	int				 given;

	if (size <= BUILDID_MMAP2_NAME)
		return;
	memcpy(&h, rec, sizeof h);
	name = (const char *)rec + BUILDID_MMAP2_NAME;
	if (name[0] != '/' || memchr(name, '\0', size -
	    BUILDID_MMAP2_NAME) == NULL)
		return;		/* anonymous, [vdso], or not ours to read */
	memcpy(&pid, rec + 8, 4);
	memcpy(&start, rec + 16, 8);
	memcpy(&len, rec + 24, 8);
	/* with attr.build_id the kernel gives the id in place of the inode */
	if ((given = (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0)) {
		idlen = rec[BUILDID_MMAP2_DEV];
		if (idlen == 0 || idlen > BUILDID_MAX)
			return;
		memcpy(id, rec + BUILDID_MMAP2_DEV + 4, idlen);
	} else {
		memcpy(&maj, rec + BUILDID_MMAP2_DEV, 4);
		memcpy(&min, rec + BUILDID_MMAP2_DEV + 4, 4);
		memcpy(&ino, rec + BUILDID_MMAP2_DEV + 8, 8);
		memcpy(&gen, rec + BUILDID_MMAP2_DEV + 16, 8);
		if (ino == 0)
			return;
	}
	slot = buildid_hash(maj, min, ino, gen, name) & (b->nbuckets - 1);
	for (f = b->tab[slot]; f != NULL; f = f->hnext)
		if (f->ino == ino && f->gen == gen && f->maj == maj &&
		    f->min == min && strcmp(f->name, name) == 0 && (!given ||
		    (f->vers->size == idlen &&
		    memcmp(f->vers->id, id, idlen) == 0))) {
			buildid_list(b, f);
			if (given)
				buildid_given(b, f);
			else
				buildid_want(b, f, (pid_t)pid, start,
				    start + len);
			return;
		}
	if (b->nfiles >= BUILDID_MAX_FILES) {
		if (!b->full)
			log_warnx("build-ids: %d files seen; the build-ids of "
			    "files mapped from now on are left to perf",
			    BUILDID_MAX_FILES);
		b->full = 1;
		return;
	}
	n = strlen(name) + 1;
	if ((f = calloc(1, sizeof *f + n)) == NULL)
		return;
	if (given && (f->vers = calloc(1, sizeof *f->vers)) == NULL) {
		free(f);
		return;
	}
	memcpy(f->name, name, n);
	f->maj = maj;
	f->min = min;
	f->ino = ino;
	f->gen = gen;
	f->hnext = b->tab[slot];
	b->tab[slot] = f;
	if (++b->nfiles > b->nbuckets)
		buildid_grow(b);
	buildid_list(b, f);
	if (given) {
		memcpy(f->vers->id, id, idlen);
		f->vers->size = idlen;
		f->vers->seq = ++f->nseq;
		buildid_given(b, f);
	} else
		buildid_want(b, f, (pid_t)pid, start, start + len);
}

/* Copy len bytes at ring position pos out of a data area that wraps. */
static void
buildid_copy(uint8_t *dst, const uint8_t *data, size_t size, uint64_t pos,
    size_t len)
{
	size_t	 off = (size_t)(pos & (size - 1)), first = size - off;

	if (first > len)
		first = len;
	memcpy(dst, data + off, first);
	memcpy(dst + first, data, len - first);
}

/*
 * The kernels we target (6.1 at least) leave PERF_RECORD_MISC_MMAP_BUILD_ID
 * set in an mmap event's header once any event that asked for build-ids
 * has seen it: every recorder after it in the kernel's list gets the flag
 * on a record that holds device and inode, and perf reads the major
 * number as a build-id size (it aborts on one above 20). Another tool's
 * attr.build_id must not damage our files: where we did not ask, the
 * flag is false, and where we did, a size the kernel cannot give is.
 */
static int
buildid_bogus_flag(const uint8_t *rec, size_t size, int kernel)
{
	struct perf_event_header	 h;

	memcpy(&h, rec, sizeof h);
	if (!(h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    size <= BUILDID_MMAP2_DEV)
		return 0;
	return !kernel || rec[BUILDID_MMAP2_DEV] == 0 ||
	    rec[BUILDID_MMAP2_DEV] > BUILDID_MAX;
}

/* A whole MMAP2 record we may write: its stray flag cleared (1), noted. */
static size_t
buildid_note_rec(struct buildid *b, uint8_t *rec, size_t size, int kernel)
{
	uint16_t	 misc;
	size_t		 bogus = 0;

	if (buildid_bogus_flag(rec, size, kernel)) {
		memcpy(&misc, rec + offsetof(struct perf_event_header, misc),
		    sizeof misc);
		misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
		memcpy(rec + offsetof(struct perf_event_header, misc), &misc,
		    sizeof misc);
		bogus = 1;
	}
	buildid_note(b, rec, size);
	return bogus;
}

void
buildid_note_copy(struct buildid *b, uint8_t *rec, size_t size, int kernel)
{
	b->cleared += buildid_note_rec(b, rec, size, kernel);
}

size_t
buildid_note_ring(struct buildid *b, const uint8_t *data, size_t size,
    uint64_t tail, uint64_t head, int kernel)
{
	struct perf_event_header	 h;
	uint8_t				 rec[PATH_MAX + 256];
	size_t				 bogus = 0;

	while (head - tail >= sizeof h) {
		/* the drain's hot path: most headers do not wrap */
		if ((tail & (size - 1)) + sizeof h <= size)
			memcpy(&h, data + (tail & (size - 1)), sizeof h);
		else
			buildid_copy((uint8_t *)&h, data, size, tail, sizeof h);
		if (h.size < sizeof h || h.size > head - tail)
			break;		/* the drain counts the bad record */
		if (h.type == PERF_RECORD_MMAP2 && h.size <= sizeof rec) {
			buildid_copy(rec, data, size, tail, h.size);
			bogus += buildid_note_rec(b, rec, h.size, kernel);
		}
		tail += h.size;
	}
	b->cleared += bogus;
	return bogus;
}

void
buildid_stats(struct buildid *b, uint64_t *files, uint64_t *cleared,
    uint64_t *reading)
{
	*files = b->nfiles;
	*cleared = b->cleared;
	pthread_mutex_lock(&b->mtx);
	*reading = b->nqueued;
	pthread_mutex_unlock(&b->mtx);
}

void
buildid_repair(uint8_t *buf, size_t len, int kernel)
{
	struct perf_event_header	 h;
	size_t				 off = 0;

	while (len - off >= sizeof h) {
		memcpy(&h, buf + off, sizeof h);
		if (h.size < sizeof h || h.size > len - off)
			break;
		if (h.type == PERF_RECORD_MMAP2 &&
		    buildid_bogus_flag(buf + off, h.size, kernel)) {
			h.misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
			memcpy(buf + off, &h, sizeof h);
		}
		off += h.size;
	}
}

/* One build-id a preamble's MMAP2 carries, pointing into the records. */
struct buildid_seen {
	const char	*name;
	const uint8_t	*id;
	uint8_t		 size;
};

static int
buildid_seen_cmp(const void *a, const void *b)
{
	const struct buildid_seen	*x = a, *y = b;
	int				 c;

	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return memcmp(x->id, y->id, x->size);
}

int
buildid_preamble(struct sbuf *out, const uint8_t *buf, size_t len)
{
	struct perf_event_header	 h;
	struct buildid_seen		*seen = NULL, *p;
	size_t				 off, n = 0, cap = 0, i;
	int				 rc = 0;

	for (off = 0; len - off >= sizeof h; off += h.size) {
		memcpy(&h, buf + off, sizeof h);
		if (h.size < sizeof h || h.size > len - off)
			break;
		if (h.type != PERF_RECORD_MMAP2 ||
		    !(h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
		    h.size <= BUILDID_MMAP2_NAME ||
		    buf[off + BUILDID_MMAP2_DEV] == 0 ||
		    buf[off + BUILDID_MMAP2_DEV] > BUILDID_MAX ||
		    memchr(buf + off + BUILDID_MMAP2_NAME, '\0',
		    h.size - BUILDID_MMAP2_NAME) == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((p = reallocarray(seen, cap, sizeof *p)) == NULL) {
				free(seen);
				return -1;
			}
			seen = p;
		}
		seen[n].name = (const char *)buf + off + BUILDID_MMAP2_NAME;
		seen[n].id = buf + off + BUILDID_MMAP2_DEV + 4;
		seen[n].size = buf[off + BUILDID_MMAP2_DEV];
		n++;
	}
	/* every process maps libc: one record per name and id */
	if (n > 1)	/* seen is NULL when nothing was mapped */
		qsort(seen, n, sizeof *seen, buildid_seen_cmp);
	for (i = 0; i < n && rc == 0; i++)
		if (i == 0 || buildid_seen_cmp(&seen[i - 1], &seen[i]) != 0)
			rc = buildid_record(out, -1, PERF_RECORD_MISC_USER,
			    seen[i].id, seen[i].size, seen[i].name);
	free(seen);
	return rc;
}

/* Append a HEADER_BUILD_ID for each version of f used in trace file
 * epoch (after f->since), oldest first: a reader that keeps one id per
 * name keeps the newest. Under the mutex. */
static int
buildid_emit(struct sbuf *out, const struct buildid_file *f,
    const struct buildid_ver *v, uint64_t epoch)
{
	if (v == NULL)
		return 0;
	if (buildid_emit(out, f, v->older, epoch) == -1)
		return -1;
	if (v->mark != epoch || v->size == 0 || v->seq <= f->since)
		return 0;
	return buildid_record(out, -1, PERF_RECORD_MISC_USER, v->id, v->size,
	    f->name);
}

int
buildid_flush(struct buildid *b, struct sbuf *out, unsigned int wait_ms)
{
	struct buildid_file	*f;
	struct timespec		 until;
	size_t			 i, kept = 0;
	int			 rc = 0, pending;

	/* a look queued since the last wakeup is started now */
	buildid_hurry(b);
	worker_deadline(CLOCK_MONOTONIC, (uint64_t)wait_ms * 1000000u, &until);
	pthread_mutex_lock(&b->mtx);
	for (;;) {
		for (pending = 0, i = 0; i < b->nset && !pending; i++)
			pending = b->set[i]->state != BUILDID_IDLE;
		if (!pending || wait_ms == 0 || pthread_cond_timedwait(&b->done,
		    &b->mtx, &until) == ETIMEDOUT)
			break;
	}
	for (i = 0; i < b->nset; i++) {
		f = b->set[i];
		/*
		 * Not looked at yet (a rotation does not wait): the file is
		 * taken to be as it was last read, which it is unless it
		 * was rewritten in the last moments. The look goes on for
		 * the next file, which names a change it finds.
		 */
		if (f->state != BUILDID_IDLE && f->vers != NULL)
			f->vers->mark = b->epoch;
		if (buildid_emit(out, f, f->vers, b->epoch) == -1)
			rc = -1;
	}
	b->epoch++;
	for (i = 0; i < b->nset; i++) {
		f = b->set[i];
		buildid_prune(f, b->epoch);
		/* still being looked at: the next file names what it finds
		 * that this one did not */
		if (f->state != BUILDID_IDLE) {
			b->set[kept++] = f;
			f->mark = b->epoch;
			f->since = f->vers != NULL ? f->vers->seq : 0;
		}
	}
	pthread_mutex_unlock(&b->mtx);
	b->nset = kept;
	return rc;
}

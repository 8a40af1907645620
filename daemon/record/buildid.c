/*
 * buildid: build-ids of mapped files, read in user space (see buildid.h).
 *
 * Who touches what: the table (hash chains, the current file's list) is
 * the loop's alone. An entry's key (device, inode, name) never changes;
 * where it was mapped (pid, start, end) is set by the loop only while the
 * entry is not queued; its state, id and tries are written by the worker
 * and read by the loop under the mutex. Entries live as long as the
 * daemon, so neither side ever holds a pointer that goes away.
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
#include "perf-abi.h"
#include "worker.h"

/* MMAP2: header, pid, tid, addr, len, pgoff, then at 40 either maj, min,
 * ino, ino_generation or size, 3 bytes, id[20]; prot, flags, filename */
#define BUILDID_MMAP2_DEV	40
#define BUILDID_MMAP2_NAME	72
/* a note run or section larger than this is not a build-id's */
#define BUILDID_NOTES_MAX	65536
#define BUILDID_HEADERS_MAX	4096
/* A file read from a task that exited (or in a namespace we could not
 * enter) is tried again through another task that maps it, this often */
#define BUILDID_TRIES		3

enum buildid_state {
	BUILDID_PENDING,	/* queued or being read */
	BUILDID_DONE,		/* read: size 0 when the file has none */
};

struct buildid_file {
	uint32_t		 maj;
	uint32_t		 min;
	uint64_t		 ino;		/* 0: the kernel gave the id */
	pid_t			 pid;		/* a task that mapped it... */
	uint64_t		 start, end;	/* ...there */
	uint64_t		 mark;		/* last listed for this file */
	enum buildid_state	 state;
	uint8_t			 tries;		/* reads that found no id */
	uint8_t			 size;
	uint8_t			 id[BUILDID_MAX];
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
	pthread_cond_t		  done;		/* an entry was read */
	struct buildid_file	 *qhead, **qtail;
	int			  quit;
	int			  running;	/* 1 started, -1 could not be */
	pthread_t		  th;
};

static int	buildid_table(int, int, int, uint64_t, unsigned, unsigned,
		    uint8_t *, size_t *);
static int	buildid_note_at(int, uint64_t, uint64_t, uint64_t,
		    uint8_t *, size_t *);

/* ELF */

int
buildid_notes(const uint8_t *notes, size_t size, size_t align, uint8_t *id,
    size_t *len)
{
	Elf64_Nhdr	nh;		/* same layout as Elf32_Nhdr */
	size_t		off = 0, desc;

	while (off + sizeof nh <= size) {
		memcpy(&nh, notes + off, sizeof nh);
		if (nh.n_namesz > size)
			break;
		desc = off + (sizeof nh + nh.n_namesz + align - 1) / align *
		    align;
		if (desc > size || nh.n_descsz > size - desc)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(notes + off + sizeof nh, "GNU", 4) == 0) {
			if (nh.n_descsz == 0 || nh.n_descsz > BUILDID_MAX)
				return -1;
			memcpy(id, notes + desc, nh.n_descsz);
			*len = nh.n_descsz;
			return 0;
		}
		off = (desc + nh.n_descsz + align - 1) / align * align;
	}
	return -1;
}

int
buildid_elf(int fd, uint8_t *id, size_t *len)
{
	union {
		unsigned char	ident[EI_NIDENT];
		Elf32_Ehdr	e32;
		Elf64_Ehdr	e64;
	}	 eh;
	int	 is64, one = 1;

	memset(&eh, 0, sizeof eh);
	if (pread(fd, &eh, sizeof eh, 0) < (ssize_t)sizeof eh.e32)
		return -1;
	if (memcmp(eh.ident, ELFMAG, SELFMAG) != 0)
		return -1;
	/* only our own byte order: that is all a task here can map */
	if (eh.ident[EI_DATA] != (*(char *)&one ? ELFDATA2LSB : ELFDATA2MSB))
		return -1;
	if (eh.ident[EI_CLASS] != ELFCLASS64 &&
	    eh.ident[EI_CLASS] != ELFCLASS32)
		return -1;
	is64 = eh.ident[EI_CLASS] == ELFCLASS64;
	/* the loader's view first: a stripped file may have no sections */
	if (is64 ? buildid_table(fd, 1, 0, eh.e64.e_phoff, eh.e64.e_phnum,
	    eh.e64.e_phentsize, id, len) == 0 : buildid_table(fd, 0, 0,
	    eh.e32.e_phoff, eh.e32.e_phnum, eh.e32.e_phentsize, id, len) == 0)
		return 0;
	return is64 ? buildid_table(fd, 1, 1, eh.e64.e_shoff, eh.e64.e_shnum,
	    eh.e64.e_shentsize, id, len) : buildid_table(fd, 0, 1,
	    eh.e32.e_shoff, eh.e32.e_shnum, eh.e32.e_shentsize, id, len);
}

/*
 * The notes behind the program headers (PT_NOTE) or the section headers
 * (SHT_NOTE) of a table of num entries at off.
 */
static int
buildid_table(int fd, int is64, int sections, uint64_t off, unsigned num,
    unsigned entsize, uint8_t *id, size_t *len)
{
	union {
		Elf32_Phdr	p32;
		Elf64_Phdr	p64;
		Elf32_Shdr	s32;
		Elf64_Shdr	s64;
	}		 h;
	size_t		 want;
	uint64_t	 noff, size, align;
	unsigned	 i, type;

	want = sections ? (is64 ? sizeof h.s64 : sizeof h.s32) :
	    (is64 ? sizeof h.p64 : sizeof h.p32);
	if (off == 0 || entsize < want)
		return -1;
	for (i = 0; i < num && i < BUILDID_HEADERS_MAX; i++) {
		if (pread(fd, &h, want, (off_t)(off + (uint64_t)i * entsize)) !=
		    (ssize_t)want)
			return -1;
		if (sections && is64) {
			type = h.s64.sh_type == SHT_NOTE;
			noff = h.s64.sh_offset;
			size = h.s64.sh_size;
			align = h.s64.sh_addralign;
		} else if (sections) {
			type = h.s32.sh_type == SHT_NOTE;
			noff = h.s32.sh_offset;
			size = h.s32.sh_size;
			align = h.s32.sh_addralign;
		} else if (is64) {
			type = h.p64.p_type == PT_NOTE;
			noff = h.p64.p_offset;
			size = h.p64.p_filesz;
			align = h.p64.p_align;
		} else {
			type = h.p32.p_type == PT_NOTE;
			noff = h.p32.p_offset;
			size = h.p32.p_filesz;
			align = h.p32.p_align;
		}
		if (type && buildid_note_at(fd, noff, size, align, id,
		    len) == 0)
			return 0;
	}
	return -1;
}

static int
buildid_note_at(int fd, uint64_t off, uint64_t size, uint64_t align,
    uint8_t *id, size_t *len)
{
	uint8_t	*notes;
	int	 rc = -1;

	if (size == 0 || size > BUILDID_NOTES_MAX || off > INT64_MAX)
		return -1;
	if ((notes = malloc(size)) == NULL)
		return -1;
	if (pread(fd, notes, size, (off_t)off) == (ssize_t)size)
		rc = buildid_notes(notes, size, align == 8 ? 8 : 4, id, len);
	free(notes);
	return rc;
}

int
buildid_record(struct sbuf *out, int32_t pid, uint16_t misc,
    const uint8_t *id, size_t len, const char *name)
{
	struct perf_event_header	 h;
	size_t				 n = strlen(name) + 1;
	uint8_t				*p;

	n = (n + PERFDATA_NAME_ALIGN - 1) / PERFDATA_NAME_ALIGN *
	    PERFDATA_NAME_ALIGN;
	if (len > BUILDID_MAX)
		len = BUILDID_MAX;
	h.type = PERF_RECORD_HEADER_BUILD_ID;
	h.misc = misc | PERF_RECORD_MISC_BUILD_ID_SIZE;
	/* perf-abi.h's layout; then to 8 bytes, as every record of our
	 * files (salvage relies on it) */
	h.size = (uint16_t)((sizeof(struct perf_record_header_build_id) + n +
	    7) / 8 * 8);
	if ((p = sbuf_zero(out, h.size)) == NULL)
		return -1;
	memcpy(p, &h, sizeof h);
	memcpy(p + offsetof(struct perf_record_header_build_id, pid), &pid, 4);
	memcpy(p + offsetof(struct perf_record_header_build_id, build_id), id,
	    len);
	p[offsetof(struct perf_record_header_build_id, size)] = (uint8_t)len;
	memcpy(p + offsetof(struct perf_record_header_build_id, filename), name,
	    strlen(name));
	return 0;
}

/* The worker */

static int
buildid_open(const char *path, uint64_t ino)
{
	struct stat	 st;
	int		 fd;

	/* never open a device or a FIFO that took the name meanwhile */
	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode) || st.st_ino != ino)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_ino != ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The very file mapped, through map_files/, while the task lives; then
 * the name as the task sees it (its root: another mount namespace), then
 * as we see it. The inode must match; the device is not compared, as
 * overlayfs reports its own where the mapping names the layer's.
 */
static void
buildid_read(struct buildid_file *f, uint8_t *id, size_t *len)
{
	char	 path[PATH_MAX + 64];
	int	 fd;

	*len = 0;
	snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
	    (int)f->pid, f->start, f->end);
	if ((fd = buildid_open(path, f->ino)) == -1) {
		snprintf(path, sizeof path, "/proc/%d/root%s", (int)f->pid,
		    f->name);
		fd = buildid_open(path, f->ino);
	}
	if (fd == -1)
		fd = buildid_open(f->name, f->ino);
	if (fd == -1)
		return;
	if (buildid_elf(fd, id, len) == -1)
		*len = 0;
	close(fd);
}

static void *
buildid_worker(void *arg)
{
	struct buildid		*b = arg;
	struct buildid_file	*f;
	uint8_t			 id[BUILDID_MAX];
	size_t			 len;

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
		pthread_mutex_unlock(&b->mtx);
		buildid_read(f, id, &len);
		pthread_mutex_lock(&b->mtx);
		memcpy(f->id, id, len);
		f->size = (uint8_t)len;
		f->tries += len == 0;
		f->state = BUILDID_DONE;
		pthread_cond_broadcast(&b->done);
	}
	pthread_mutex_unlock(&b->mtx);
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
			free(f);
		}
	free(b->tab);
	free(b->set);
	pthread_cond_destroy(&b->work);
	pthread_cond_destroy(&b->done);
	pthread_mutex_destroy(&b->mtx);
	free(b);
}

/* The loop's side */

static size_t
buildid_hash(uint32_t maj, uint32_t min, uint64_t ino, const char *name)
{
	uint64_t	 h = 0xcbf29ce484222325ULL ^ ino ^ ((uint64_t)maj << 40) ^
	    ((uint64_t)min << 20);

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
			h = buildid_hash(f->maj, f->min, f->ino, f->name) &
			    (n - 1);
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

	if (f->mark == b->epoch)
		return;
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

/* Hand f to the worker; without one, f stays without an id. */
static void
buildid_queue(struct buildid *b, struct buildid_file *f)
{
	pthread_mutex_lock(&b->mtx);
	if (b->running == 0) {
		b->running = worker_spawn(&b->th, buildid_worker, b) == 0 ?
		    1 : -1;
		if (b->running == -1)
			log_warnx("build-ids: cannot start a thread to read "
			    "them; perf reads them at report time");
	}
	f->state = b->running == 1 ? BUILDID_PENDING : BUILDID_DONE;
	if (b->running == 1) {
		f->qnext = NULL;
		*b->qtail = f;
		b->qtail = &f->qnext;
		pthread_cond_signal(&b->work);
	}
	pthread_mutex_unlock(&b->mtx);
}

/* f was read and had no id: read it again through this task? */
static void
buildid_retry(struct buildid *b, struct buildid_file *f, pid_t pid,
    uint64_t start, uint64_t end)
{
	int	 again;

	if (f->ino == 0 || f->pid == pid)
		return;
	pthread_mutex_lock(&b->mtx);
	again = f->state == BUILDID_DONE && f->size == 0 &&
	    f->tries < BUILDID_TRIES;
	pthread_mutex_unlock(&b->mtx);
	if (!again)
		return;
	/* the worker touches f only while it is queued: not now */
	f->pid = pid;
	f->start = start;
	f->end = end;
	buildid_queue(b, f);
}

static void
buildid_note(struct buildid *b, const uint8_t *rec, size_t size)
{
	struct perf_event_header	 h;
	struct buildid_file		*f;
	const char			*name;
	uint32_t			 maj = 0, min = 0, pid;
	uint64_t			 ino = 0, start, len;
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
		if (ino == 0)
			return;
	}
	slot = buildid_hash(maj, min, ino, name) & (b->nbuckets - 1);
	for (f = b->tab[slot]; f != NULL; f = f->hnext)
		if (f->ino == ino && f->maj == maj && f->min == min &&
		    strcmp(f->name, name) == 0 && (!given ||
		    (f->size == idlen && memcmp(f->id, id, idlen) == 0))) {
			buildid_retry(b, f, (pid_t)pid, start, start + len);
			buildid_list(b, f);
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
	memcpy(f->name, name, n);
	f->maj = maj;
	f->min = min;
	f->ino = ino;
	f->pid = (pid_t)pid;
	f->start = start;
	f->end = start + len;
	f->hnext = b->tab[slot];
	b->tab[slot] = f;
	if (++b->nfiles > b->nbuckets)
		buildid_grow(b);
	if (given) {
		memcpy(f->id, id, idlen);
		f->size = idlen;
		f->state = BUILDID_DONE;
		buildid_list(b, f);
		return;
	}
	buildid_queue(b, f);
	buildid_list(b, f);
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
buildid_stats(const struct buildid *b, uint64_t *files, uint64_t *cleared)
{
	*files = b->nfiles;
	*cleared = b->cleared;
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

int
buildid_flush(struct buildid *b, struct sbuf *out, unsigned int wait_ms)
{
	struct buildid_file	*f;
	struct timespec		 until;
	size_t			 i, kept = 0;
	int			 rc = 0, pending;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&b->mtx);
	for (;;) {
		for (pending = 0, i = 0; i < b->nset && !pending; i++)
			pending = b->set[i]->state == BUILDID_PENDING;
		if (!pending || wait_ms == 0 || pthread_cond_timedwait(&b->done,
		    &b->mtx, &until) == ETIMEDOUT)
			break;
	}
	b->epoch++;
	for (i = 0; i < b->nset; i++) {
		f = b->set[i];
		if (f->state == BUILDID_PENDING) {
			/* still being read: the next file names it */
			b->set[kept++] = f;
			f->mark = b->epoch;
		} else if (f->size > 0 && buildid_record(out, -1,
		    PERF_RECORD_MISC_USER, f->id, f->size, f->name) == -1)
			rc = -1;
	}
	pthread_mutex_unlock(&b->mtx);
	b->nset = kept;
	return rc;
}

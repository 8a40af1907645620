/*
 * synth-proc: what already runs when recording starts, read from
 * /proc. The kernel reports only tasks and mappings created after the
 * events were opened; without these records perf would name no task
 * that existed before and resolve none of its addresses. We write
 * the kernel text map (and modules), then for every thread FORK and
 * COMM and for each process MMAP2 of its executable mappings, with
 * the build-id of the mapped file when it has one.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/buildid.h"
#include "synth-int.h"

#define SYNTH_PROC_KERNEL	"[kernel.kallsyms]_text"
#define SYNTH_PROC_BID_MAX	BUILDID_MAX	/* room in MMAP2 */
#define SYNTH_PROC_COMM_MAX	15	/* TASK_COMM_LEN - 1 */

/* The build-id of a file, by device and inode; size 0 if none. */
struct synth_proc_bid {
	uint32_t	maj;
	uint32_t	min;
	uint64_t	ino;
	uint8_t		size;
	uint8_t		id[SYNTH_PROC_BID_MAX];
};

/* One pass over /proc; the cache lives as long as the pass. */
struct synth_proc {
	struct sbuf		*out;
	const char		*procfs;
	size_t			 trailer;
	struct synth_proc_bid	*bids;
	size_t			 nr_bids;
	size_t			 cap_bids;
	int			 data;	/* file mappings that are not code too */
};

static int	synth_proc_modules(struct sbuf *, const struct synth_ctx *);
static int	synth_proc_kmap(struct sbuf *, size_t, const char *,
		    uint64_t, uint64_t, uint64_t);
static int	synth_proc_process(struct synth_proc *, pid_t);
static int	synth_proc_thread(struct synth_proc *, pid_t, pid_t);
static int	synth_proc_maps(struct synth_proc *, pid_t);
static int	synth_proc_buildid(struct synth_proc *, pid_t, uint64_t,
		    uint64_t, uint32_t, uint32_t, uint64_t, const char *,
		    const struct synth_proc_bid **);
static pid_t	synth_proc_number(const char *);

/*
 * The size of the kernel's text from /proc/iomem, 0 if it does not say.
 * On x86 its "Kernel code" resource runs from _text to _etext - 1 (in
 * physical memory, which has the same size): two hundred bytes to read
 * where _etext is 115,000 lines into /proc/kallsyms, 55 ms of system
 * time a start here. Other architectures bound it otherwise (arm64 from
 * _stext to __init_begin), and an unprivileged reader sees zeros.
 */
static uint64_t
synth_kernel_size(const char *procfs)
{
#if defined(__x86_64__) || defined(__i386__)
	FILE		*f;
	char		 path[4096], line[256];
	uint64_t	 lo, hi, size = 0;

	snprintf(path, sizeof path, "%s/iomem", procfs);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, " : Kernel code\n") != NULL &&
		    sscanf(line, " %" SCNx64 "-%" SCNx64, &lo, &hi) == 2 &&
		    hi > lo) {
			size = hi - lo + 1;
			break;
		}
	fclose(f);
	return size;
#else
	(void)procfs;
	return 0;
#endif
}

/*
 * perf takes "_text" as the reference symbol: pgoff holds its address
 * so that perf can relocate vmlinux symbols, and the map runs to
 * _etext, as perf's own kernel map does. _text is among the first lines
 * of /proc/kallsyms; the rest of it is read only when /proc/iomem does
 * not give the text's size.
 */
int
synth_kernel_range(const char *procfs, uint64_t *textp, uint64_t *etextp)
{
	FILE		*f;
	char		 path[4096], *line = NULL, *p, *name;
	size_t		 cap = 0;
	uint64_t	 addr, size, text = 0, etext = 0;
	int		 saved;

	*textp = *etextp = 0;
	procfs = procfs ? procfs : "/proc";
	size = synth_kernel_size(procfs);
	snprintf(path, sizeof path, "%s/kallsyms", procfs);
	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOMEM ? -1 : 0;
	/* getline() fails with ENOMEM or ends with errno untouched. */
	errno = 0;
	while (getline(&line, &cap, f) != -1) {
		addr = strtoull(line, &p, 16);
		/* "ffffffff81000000 T _text": skip the type letter. */
		if (p[0] != ' ' || p[1] == '\0' || p[2] != ' ')
			continue;
		name = p + 3;
		name[strcspn(name, " \t\n")] = '\0';
		if (strcmp(name, "_text") == 0) {
			text = addr;
			if (text != 0 && size != 0)
				etext = text + size;
		} else if (strcmp(name, "_etext") == 0)
			etext = addr;
		if (text != 0 && etext != 0)
			break;
	}
	saved = errno;
	free(line);
	fclose(f);
	if (saved == ENOMEM) {
		errno = saved;
		return -1;
	}
	*textp = text;
	*etextp = etext;
	return 0;
}

int
synth_proc_kernel(struct sbuf *out, const struct synth_ctx *ctx)
{
	uint64_t	 text = ctx->kernel_text, etext = ctx->kernel_etext;

	/* the whole of kallsyms is read only when the caller has no cache */
	if (text == 0 && synth_kernel_range(synth_procfs(ctx), &text,
	    &etext) == -1)
		return -1;
	/* Zero addresses: kptr_restrict hides them; a map would be wrong. */
	if (text != 0) {
		if (synth_proc_kmap(out, synth_trailer(ctx), SYNTH_PROC_KERNEL,
		    text, etext > text ? etext - text : 0 - text, text) == -1)
			return -1;
	}
	return synth_proc_modules(out, ctx);
}

/*
 * The running kernel's build-id, from /sys/kernel/notes, as a
 * PERF_RECORD_HEADER_BUILD_ID for "[kernel.kallsyms]" (pid -1, the host
 * kernel): with it, a file read on another machine is symbolized against
 * the right vmlinux. It opens the build_id feature (synth-feature.c).
 */
int
synth_proc_kernel_bid(struct sbuf *out, const struct synth_ctx *ctx)
{
	char		*notes;
	size_t		 len, idlen;
	uint8_t		 id[BUILDID_MAX];
	int		 rc;

	(void)ctx;
	if (synth_slurp("/sys/kernel/notes", &notes, &len) == -1)
		return errno == ENOMEM ? -1 : 0;
	rc = buildid_notes((const uint8_t *)notes, len, 4, id, &idlen);
	free(notes);
	if (rc == -1)
		return 0;
	/* pid -1: the host's kernel */
	return buildid_record(out, -1, PERF_RECORD_MISC_KERNEL, id, idlen,
	    "[kernel.kallsyms]");
}

/*
 * Modules, named "[name]" as perf names them when it finds no .ko
 * file. A kernel without modules has no /proc/modules.
 */
static int
synth_proc_modules(struct sbuf *out, const struct synth_ctx *ctx)
{
	char		 path[4096], *buf, *line, *next, name[128];
	char		 state[32];
	size_t		 len;
	uint64_t	 size, addr;

	snprintf(path, sizeof path, "%s/modules", synth_procfs(ctx));
	if (synth_slurp(path, &buf, &len) == -1)
		return errno == ENOMEM ? -1 : 0;
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		/* "name size refcnt deps state addr" */
		if (sscanf(line, "%120s %" SCNu64 " %*s %*s %31s %" SCNx64,
		    name + 1, &size, state, &addr) != 4)
			continue;
		if (strcmp(state, "Live") != 0 || addr == 0)
			continue;
		name[0] = '[';
		strcat(name, "]");
		if (synth_proc_kmap(out, synth_trailer(ctx), name, addr, size,
		    0) == -1) {
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

static int
synth_proc_kmap(struct sbuf *out, size_t trailer, const char *name,
    uint64_t start, uint64_t len, uint64_t pgoff)
{
	struct synth_rec	r;

	synth_rec_begin(&r, out, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	synth_rec_u32(&r, (uint32_t)-1);	/* perf's kernel "pid" */
	synth_rec_u32(&r, 0);
	synth_rec_u64(&r, start);
	synth_rec_u64(&r, len);
	synth_rec_u64(&r, pgoff);
	synth_rec_str(&r, name, 8);
	return synth_rec_end(&r, trailer);
}

int
synth_proc_tasks(struct sbuf *out, const struct synth_ctx *ctx)
{
	struct synth_proc	 p;
	DIR			*d;
	struct dirent		*de;
	pid_t			 pid;
	int			 saved;

	memset(&p, 0, sizeof p);
	p.out = out;
	p.procfs = synth_procfs(ctx);
	p.trailer = synth_trailer(ctx);
	p.data = ctx->nr_events > 0 && ctx->events[0].attr.mmap_data;

	if ((d = opendir(p.procfs)) == NULL)
		return errno == ENOMEM ? -1 : 0;
	while ((de = readdir(d)) != NULL) {
		if ((pid = synth_proc_number(de->d_name)) == -1)
			continue;
		if (synth_proc_process(&p, pid) == -1)
			goto error;
	}
	closedir(d);
	free(p.bids);
	return 0;

error:
	saved = errno;
	closedir(d);
	free(p.bids);
	errno = saved;
	return -1;
}

/* How often a process's task directory is read, at most; and in a row
 * without a new thread, to be done. */
#define SYNTH_PROC_TASK_PASSES	6
#define SYNTH_PROC_TASK_QUIET	2

static int
synth_proc_tid_cmp(const void *a, const void *b)
{
	pid_t	 x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A process and its threads; one that exits meanwhile is skipped. The
 * kernel's listing of a task directory ends early, or skips threads,
 * when the thread it stands at exits while it is read: a thread alive
 * all along may be missing (born before tracking began, it would have no
 * name in the file). So the directory is read again until passes in a
 * row find no thread that an earlier one did not.
 */
static int
synth_proc_process(struct synth_proc *p, pid_t pid)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[4096];
	pid_t		 tid, *seen = NULL, *tmp;
	size_t		 nr = 0, cap = 0, before;
	int		 pass, quiet = 0, saved;

	snprintf(path, sizeof path, "%s/%d/task", p->procfs, (int)pid);
	if ((d = opendir(path)) == NULL)
		return errno == ENOMEM ? -1 : 0;
	for (pass = 0; pass < SYNTH_PROC_TASK_PASSES; pass++) {
		if (pass > 0)
			rewinddir(d);
		before = nr;
		while ((de = readdir(d)) != NULL) {
			if ((tid = synth_proc_number(de->d_name)) == -1)
				continue;
			if (nr > 0 && bsearch(&tid, seen, before, sizeof(*seen),
			    synth_proc_tid_cmp) != NULL)
				continue;
			if (nr == cap) {
				cap = cap ? cap * 2 : 64;
				if ((tmp = reallocarray(seen, cap,
				    sizeof(*seen))) == NULL)
					goto error;
				seen = tmp;
			}
			seen[nr++] = tid;
			if (synth_proc_thread(p, pid, tid) == -1)
				goto error;
		}
		/* only the leader: a listing cut short after it means the
		 * leader exited, the process mostly with it; a single-threaded
		 * process, most of them, costs one pass */
		if (pass == 0 && nr == 1 && seen[0] == pid)
			break;
		if (nr == before && ++quiet == SYNTH_PROC_TASK_QUIET)
			break;
		if (nr > before)
			quiet = 0;
		/* nothing listed (the process is gone): seen is NULL, which
		 * qsort must not get even for 0 elements */
		if (nr > 1)
			qsort(seen, nr, sizeof(*seen), synth_proc_tid_cmp);
	}
	free(seen);
	closedir(d);
	return 0;

error:
	saved = errno;
	free(seen);
	closedir(d);
	errno = saved;
	return -1;
}

/*
 * FORK then COMM, as perf writes them. The FORK puts each thread under
 * its process (and each process under its parent); its FORK_EXEC bit
 * tells perf not to copy the parent's maps into the child, whose own
 * MMAP2s follow. Kernel threads and zombies have no VmPeak: no maps.
 */
static int
synth_proc_thread(struct synth_proc *p, pid_t pid, pid_t tid)
{
	struct synth_rec	 r;
	char			 path[4096], *buf, *s;
	char			 comm[SYNTH_PROC_COMM_MAX + 1];
	size_t			 len;
	long			 tgid = -1, ppid = 0;
	int			 user;

	snprintf(path, sizeof path, "%s/%d/task/%d/status", p->procfs,
	    (int)pid, (int)tid);
	if (synth_slurp(path, &buf, &len) == -1)
		return errno == ENOMEM ? -1 : 0;
	comm[0] = '\0';
	if ((s = strstr(buf, "Name:\t")) != NULL) {
		s += strlen("Name:\t");
		len = strcspn(s, "\n");
		if (len > SYNTH_PROC_COMM_MAX)
			len = SYNTH_PROC_COMM_MAX;
		memcpy(comm, s, len);
		comm[len] = '\0';
	}
	if ((s = strstr(buf, "\nTgid:")) != NULL)
		tgid = strtol(s + strlen("\nTgid:"), NULL, 10);
	if ((s = strstr(buf, "\nPPid:")) != NULL)
		ppid = strtol(s + strlen("\nPPid:"), NULL, 10);
	user = strstr(buf, "\nVmPeak:") != NULL;
	free(buf);
	if (tgid <= 0)
		return 0;

	synth_rec_begin(&r, p->out, PERF_RECORD_FORK,
	    PERF_RECORD_MISC_FORK_EXEC);
	synth_rec_u32(&r, tgid);
	synth_rec_u32(&r, tgid == tid ? ppid : tgid);
	synth_rec_u32(&r, tid);
	synth_rec_u32(&r, tgid == tid ? ppid : tgid);
	synth_rec_u64(&r, 0);			/* time */
	if (synth_rec_end(&r, p->trailer) == -1)
		return -1;

	synth_rec_begin(&r, p->out, PERF_RECORD_COMM, 0);
	synth_rec_u32(&r, tgid);
	synth_rec_u32(&r, tid);
	synth_rec_str(&r, comm, 8);
	if (synth_rec_end(&r, p->trailer) == -1)
		return -1;

	if (tgid == tid && user)
		return synth_proc_maps(p, tgid);
	return 0;
}

/*
 * MMAP2 of each executable mapping, like perf without --data; with
 * attr.mmap_data (DWARF call graphs) of the file mappings that hold no
 * code too, flagged as data as perf flags them: an unwinder reads a
 * binary's .eh_frame_hdr through them, which lies outside its code.
 */
static int
synth_proc_maps(struct synth_proc *p, pid_t pid)
{
	const struct synth_proc_bid	*bid;
	struct synth_rec		 r;
	const char			*name;
	char				 path[4096], *buf, *line, *next;
	char				 perms[8];
	size_t				 len;
	uint64_t			 start, end, pgoff, ino;
	uint32_t			 maj, min, prot;
	int				 n;

	snprintf(path, sizeof path, "%s/%d/maps", p->procfs, (int)pid);
	if (synth_slurp(path, &buf, &len) == -1)
		return errno == ENOMEM ? -1 : 0;
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		/* 00400000-0040c000 r-xp 00000000 fd:01 41038    /bin/cat */
		n = -1;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
		    " %x:%x %" SCNu64 " %n", &start, &end, perms, &pgoff, &maj,
		    &min, &ino, &n) != 7 || strlen(perms) != 4)
			continue;
		name = n == -1 ? line + strlen(line) : line + n;
		if (perms[2] != 'x' && (!p->data || *name != '/'))
			continue;
		if (*name == '\0')
			name = "//anon";
		prot = (perms[0] == 'r' ? PROT_READ : 0) |
		    (perms[1] == 'w' ? PROT_WRITE : 0) |
		    (perms[2] == 'x' ? PROT_EXEC : 0);

		bid = NULL;
		if (ino != 0 && *name == '/' && synth_proc_buildid(p, pid,
		    start, end, maj, min, ino, name, &bid) == -1)
			goto error;
		if (bid != NULL && bid->size == 0)
			bid = NULL;

		synth_rec_begin(&r, p->out, PERF_RECORD_MMAP2,
		    PERF_RECORD_MISC_USER |
		    (perms[2] != 'x' ? PERF_RECORD_MISC_MMAP_DATA : 0) |
		    (bid != NULL ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
		synth_rec_u32(&r, pid);
		synth_rec_u32(&r, pid);
		synth_rec_u64(&r, start);
		synth_rec_u64(&r, end - start);
		synth_rec_u64(&r, pgoff);
		if (bid != NULL) {
			/* Replaces maj, min, ino, ino_generation. */
			synth_rec_put(&r, &bid->size, 1);
			synth_rec_zero(&r, 3);
			synth_rec_put(&r, bid->id, sizeof bid->id);
		} else {
			synth_rec_u32(&r, maj);
			synth_rec_u32(&r, min);
			synth_rec_u64(&r, ino);
			synth_rec_u64(&r, 0);
		}
		synth_rec_u32(&r, prot);
		synth_rec_u32(&r, perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE);
		synth_rec_str(&r, name, 8);
		if (synth_rec_end(&r, p->trailer) == -1)
			goto error;
	}
	free(buf);
	return 0;

error:
	free(buf);
	return -1;
}

/*
 * The build-id of the file mapped at start-end, cached by device and
 * inode. map_files/ opens the very file the process maps, also when it
 * was deleted or lives in another mount namespace; without the
 * privilege it needs, the path is used if it still names the same
 * inode. No build-id is not an error: perf then reads it itself.
 */
static int
synth_proc_buildid(struct synth_proc *p, pid_t pid, uint64_t start,
    uint64_t end, uint32_t maj, uint32_t min, uint64_t ino, const char *name,
    const struct synth_proc_bid **bidp)
{
	struct synth_proc_bid	*b;
	struct stat		 st;
	char			 path[4096];
	size_t			 i, cap, len;
	int			 fd;

	for (i = 0; i < p->nr_bids; i++) {
		b = &p->bids[i];
		if (b->ino == ino && b->maj == maj && b->min == min) {
			*bidp = b;
			return 0;
		}
	}
	if (p->nr_bids == p->cap_bids) {
		cap = p->cap_bids ? p->cap_bids * 2 : 64;
		if ((b = reallocarray(p->bids, cap, sizeof *b)) == NULL)
			return -1;
		p->bids = b;
		p->cap_bids = cap;
	}
	b = &p->bids[p->nr_bids++];
	memset(b, 0, sizeof *b);
	b->maj = maj;
	b->min = min;
	b->ino = ino;
	*bidp = b;

	snprintf(path, sizeof path, "%s/%d/map_files/%" PRIx64 "-%" PRIx64,
	    p->procfs, (int)pid, start, end);
	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1) {
		if ((fd = open(name, O_RDONLY|O_CLOEXEC)) == -1)
			return 0;
		if (fstat(fd, &st) == -1 || st.st_ino != ino ||
		    major(st.st_dev) != maj || minor(st.st_dev) != min) {
			close(fd);
			return 0;
		}
	}
	if (buildid_elf(fd, b->id, &len) == 0)
		b->size = (uint8_t)len;
	close(fd);
	return 0;
}

static pid_t
synth_proc_number(const char *s)
{
	char	*end;
	long	 n;

	if (!isdigit((unsigned char)*s))
		return -1;
	n = strtol(s, &end, 10);
	if (*end != '\0' || n <= 0 || n > INT32_MAX)
		return -1;
	return n;
}

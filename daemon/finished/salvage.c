/*
 * salvage: recover the .partial files of a crashed daemon (see salvage.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "fileworker.h"
#include "log.h"
#include "manifest.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfcheck.h"
#include "perfdata/perfdata.h"
#include "retain.h"
#include "salvage.h"

/*
 * Say what a cut removes, from the end of what is kept (end) to the end
 * of what the crash left (size): the records there whose headers are
 * whole (the first of them is what failed, why), and the bytes after
 * them that hold no whole record (a torn tail, zeros, garbage).
 */
static void
salvage_log_cut(const char *partial, const uint8_t *map, uint64_t size,
    uint64_t end, const char *why)
{
	uint64_t	 nr = 0, whole;

	whole = perfdata_valid_end(map, size, end, &nr);
	log_warnx("salvage: %s: cut at byte %llu of %llu: %llu bytes removed "
	    "(%llu records and %llu bytes that hold no whole record); first "
	    "removed: %s", partial, (unsigned long long)end,
	    (unsigned long long)size, (unsigned long long)(size - end),
	    (unsigned long long)nr, (unsigned long long)(size - whole), why);
}

/*
 * Where the file's records stop being ones perf reads, and make it a
 * finished file ending there. 0: done, 1: nothing to keep, -1: failed.
 */
static int
salvage_finish(int fd, const char *partial, const uint8_t *map,
    uint64_t size, uint64_t *valid)
{
	struct perfdata_layout	 l;
	struct perfdata_extra	 x;
	struct perfcheck	*pc;
	struct perfcheck_stats	 st;
	uint64_t		 magic, hsize, end;
	char			 why[256];

	if (size < PERFDATA_PIPE_HEADER_LEN)
		return 1;
	memcpy(&magic, map, 8);
	memcpy(&hsize, map + 8, 8);
	if (magic == PERFDATA_MAGIC && hsize == PERFDATA_PIPE_HEADER_LEN) {
		/* a pipe-format file of an older perfspilld: cut it only */
		*valid = perfdata_valid_end(map, size,
		    PERFDATA_PIPE_HEADER_LEN, NULL);
		if (*valid <= PERFDATA_PIPE_HEADER_LEN)
			return 1;
		if (*valid < size)
			salvage_log_cut(partial, map, size, *valid,
			    "a record cut by the end of the data");
		return *valid < size && ftruncate(fd, (off_t)*valid) == -1 ?
		    -1 : 0;
	}
	if (perfdata_parse(map, size, &l) == -1)
		return 1;
	if (l.hdr.data.size != 0) {
		/* finished, but not renamed: the header is the last write */
		*valid = size;
		return 0;
	}
	if ((pc = perfcheck_create(map, size, &l.hdr, l.feat)) == NULL) {
		if (errno == ENOMEM)
			return -1;
		log_warnx("salvage: %s: its attrs cannot be read", partial);
		return 1;
	}
	perfcheck_only_ours(pc);
	memset(&st, 0, sizeof(st));
	end = perfcheck_walk(pc, map, size, l.hdr.data.offset, &st);
	snprintf(why, sizeof(why), "%s", perfcheck_why(pc));
	perfcheck_destroy(pc);
	if (end <= l.hdr.data.offset) {
		log_warnx("salvage: %s: no record perf would read; the first: "
		    "%s", partial, why);
		return 1;
	}
	if (end < size)
		salvage_log_cut(partial, map, size, end, why);
	/*
	 * The head's features, the sample times of what is kept (inside
	 * zstd records too) and the compression ratio; the build-ids
	 * learnt while recording are lost with the daemon's memory: the
	 * kernel's stays.
	 */
	memset(&x, 0, sizeof(x));
	x.first_sample = st.first;
	x.last_sample = st.last;
	if (st.compressed > 0)
		x.comp_ratio = (uint32_t)((st.raw + st.compressed / 2) /
		    st.compressed);
	return perfdata_finish(fd, &l, end, &x, valid);
}

/*
 * The counts of a finished file's data section for its manifest, as
 * perf reads them (inside zstd records too): its samples, loss records
 * and sample times.
 */
static void
salvage_count(const uint8_t *map, uint64_t size,
    const struct perfdata_header *hdr, struct record_file_facts *f)
{
	struct perfdata_section	 feat[PERFDATA_FEAT_MAX];
	struct perfcheck	*pc;
	struct perfcheck_stats	 st;
	uint64_t		 end = hdr->data.offset + hdr->data.size;
	unsigned int		 id;

	memset(feat, 0, sizeof(feat));
	for (id = 0; id < PERFDATA_FEAT_MAX; id++)
		if (perfdata_feat_find(map, size, hdr, id, &feat[id]) == -1)
			memset(&feat[id], 0, sizeof(feat[id]));
	if ((pc = perfcheck_create(map, size, hdr, feat)) == NULL) {
		log_warn("salvage: %s: counting its samples", f->name);
		return;
	}
	perfcheck_only_ours(pc);
	memset(&st, 0, sizeof(st));
	if (perfcheck_walk(pc, map, end, hdr->data.offset, &st) < end)
		log_warnx("salvage: %s: counted up to %s", f->name,
		    perfcheck_why(pc));
	perfcheck_destroy(pc);
	f->samples = st.samples;
	f->lost = st.lost;
	f->lost_samples = st.lost_samples;
	f->time_first = st.first;
	f->time_last = st.last;
}

/* A leftover queued for the worker, and what became of it. */
struct salvage_job {
	int			 dirfd;
	char			 name[NAME_MAX + 1];	/* as found */
	char			 final[NAME_MAX + 1];	/* what it becomes */
	char			 host[64];
	const char		*hold;	/* PERFSPILL_TEST_SALVAGE_HOLD */
	salvage_done_fn		 done;
	void			*arg;
	struct record_file_facts	 f;
	uint8_t			*buildids;	/* f's, copied */
	int			 saved;		/* f holds a file's facts */
};

/* The facts of a salvaged file, from the finished file itself (named
 * j->final), for its manifest and hand-off. On the worker. */
static void
salvage_manifest(int fd, struct salvage_job *j)
{
	struct record_file_facts	*f = &j->f;
	struct perfdata_header	 h;
	struct perfdata_section	 b;
	struct stat		 st;
	uint8_t			*map;
	const char		*p;

	if (fstat(fd, &st) == -1 || st.st_size == 0 ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd,
	    0)) == MAP_FAILED) {
		log_warn("salvage: reading %s for its manifest", j->final);
		return;
	}
	memset(f, 0, sizeof(*f));
	if (gethostname(j->host, sizeof(j->host)) == -1)
		j->host[0] = '\0';
	j->host[sizeof(j->host) - 1] = '\0';
	f->name = j->final;
	f->host = j->host;
	/* perfspill-HOST-STAMP-SEQ.data */
	if ((p = strrchr(j->final, '-')) != NULL)
		f->seq = (unsigned int)strtoul(p + 1, NULL, 10);
	f->bytes = (uint64_t)st.st_size;
	f->finished = st.st_mtime;
	f->salvaged = 1;
	/* finished by salvage_finish: the header names its data section */
	if ((uint64_t)st.st_size >= sizeof(h))
		memcpy(&h, map, sizeof(h));
	if ((uint64_t)st.st_size >= sizeof(h) && h.magic == PERFDATA_MAGIC &&
	    h.size == sizeof(h) && h.data.offset <= (uint64_t)st.st_size &&
	    h.data.size <= (uint64_t)st.st_size - h.data.offset &&
	    h.attrs.offset + h.attrs.size <= h.data.offset) {
		salvage_count(map, (uint64_t)st.st_size, &h, f);
		if (perfdata_feat_find(map, (uint64_t)st.st_size, &h,
		    PERFDATA_FEAT_BUILD_ID, &b) == 0 && b.size > 0 &&
		    (j->buildids = malloc((size_t)b.size)) != NULL) {
			memcpy(j->buildids, map + b.offset, (size_t)b.size);
			f->buildids = j->buildids;
			f->buildids_len = (size_t)b.size;
		}
	}
	j->saved = 1;
	munmap(map, (size_t)st.st_size);
}

/*
 * Open a candidate only if it is a regular file: a FIFO or a device
 * under a trace file's name would block the open (and start-up with it)
 * or do worse; without blocking, and checked again on the descriptor
 * in case the name changed between the two. The fd, or -1 (logged).
 */
static int
salvage_open(int dirfd, const char *name, int flags, struct stat *st)
{
	struct stat	 lst;
	int		 fd;

	if (fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == -1) {
		log_warn("salvage: %s", name);
		return -1;
	}
	if (!S_ISREG(lst.st_mode))
		goto notreg;
	if ((fd = openat(dirfd, name, flags | O_NONBLOCK | O_CLOEXEC |
	    O_NOFOLLOW | O_NOCTTY)) == -1) {
		log_warn("salvage: cannot open %s", name);
		return -1;
	}
	if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode) ||
	    st->st_ino != lst.st_ino || st->st_dev != lst.st_dev) {
		close(fd);
		goto notreg;
	}
	return fd;
notreg:
	log_warnx("salvage: %s is not a regular file; left alone", name);
	return -1;
}

/* Salvage one .partial (no writer may hold it) into j->final; 0: saved
 * (its facts in j), -1: not (logged; it stays for the next try). */
static int
salvage_file(int dirfd, const char *partial, struct salvage_job *j)
{
	const char	*final = j->final;
	char		 damaged[NAME_MAX + 16];
	struct stat	 st;
	uint8_t		*map;
	uint64_t	 valid = 0;
	int		 fd, rc = -1, r = 1;

	snprintf(damaged, sizeof(damaged), "%s.damaged", final);
	if ((fd = salvage_open(dirfd, partial, O_RDWR, &st)) == -1)
		return -1;
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd,
		    0);
		if (map != MAP_FAILED) {
			r = salvage_finish(fd, partial, map,
			    (uint64_t)st.st_size, &valid);
			munmap(map, (size_t)st.st_size);
		}
	}
	if (r == 1) {
		log_warnx("salvage: %s holds no whole record (%lld bytes); "
		    "kept as %s", partial, (long long)st.st_size, damaged);
		if (renameat(dirfd, partial, dirfd, damaged) == -1)
			log_warn("salvage: rename %s", partial);
		goto out;
	}
	if (r == -1) {
		log_warn("salvage: cutting %s", partial);
		goto out;
	}
	if (fsync(fd) == -1 || renameat(dirfd, partial, dirfd, final) == -1 ||
	    fsync(dirfd) == -1) {
		log_warn("salvage: finishing %s", partial);
		goto out;
	}
	log_info("salvage: recovered %s (%llu bytes)", final,
	    (unsigned long long)valid);
	salvage_manifest(fd, j);
	rc = 0;
out:
	close(fd);
	return rc;
}

/* A finished file without its manifest: the daemon died between the
 * rename of the data file and the manifest's, so no hand-off ran either. */
static void
salvage_unmanifested(int dirfd, const char *name, struct salvage_job *j)
{
	struct stat	 st;
	char		 mname[NAME_MAX + 8];
	int		 fd;

	if (manifest_name(name, mname, sizeof(mname)) == -1 ||
	    fstatat(dirfd, mname, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    errno != ENOENT)
		return;
	if ((fd = salvage_open(dirfd, name, O_RDONLY, &st)) == -1)
		return;
	log_warnx("salvage: %s has no manifest; writing it from the file",
	    name);
	salvage_manifest(fd, j);
	close(fd);
}

/* Is name a leftover: a .partial of ours, or a finished file (whose
 * manifest may be missing)? */
static int
salvage_is_leftover(const char *name)
{
	size_t	 len = strlen(name);

	return retain_is_trace(name) || (strncmp(name, "perfspill-", 10) ==
	    0 && len >= 14 && strcmp(name + len - 13, ".data.partial") == 0);
}

int
salvage_list(int dirfd, salvage_found_fn found, void *arg)
{
	DIR		*dir;
	struct dirent	*de;
	char		**names = NULL, **tmp;
	size_t		 nr = 0, i;
	char		 mname[NAME_MAX + 8];
	struct stat	 st;

	if ((dir = retain_opendir(dirfd)) == NULL)
		return -1;
	/* collect first: renaming while readdir runs may show names twice */
	while ((de = readdir(dir)) != NULL) {
		if (!salvage_is_leftover(de->d_name))
			continue;
		/* a finished file with its manifest is no leftover */
		if (retain_is_trace(de->d_name) && (manifest_name(de->d_name,
		    mname, sizeof(mname)) == -1 || fstatat(dirfd, mname, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT))
			continue;
		if ((tmp = realloc(names, (nr + 1) * sizeof(*names))) == NULL)
			break;
		names = tmp;
		if ((names[nr] = strdup(de->d_name)) == NULL)
			break;
		nr++;
	}
	closedir(dir);
	for (i = 0; i < nr; i++) {
		found(arg, names[i]);
		free(names[i]);
	}
	free(names);
	return (int)nr;
}

/* On the worker: the file read, cut, finished and renamed. */
static void
salvage_work(void *arg)
{
	struct salvage_job	*j = arg;

	fileworker_hold(j->hold, "salvage");
	if (retain_is_trace(j->name))
		salvage_unmanifested(j->dirfd, j->name, j);
	else
		(void)salvage_file(j->dirfd, j->name, j);
}

/* In the loop: the facts to the caller's callback. */
static void
salvage_done(void *arg)
{
	struct salvage_job	*j = arg;

	j->done(j->arg, j->name, j->saved ? &j->f : NULL);
	free(j->buildids);
	free(j);
}

/* name without its .partial, into buf. */
static int
salvage_final_name(const char *name, char *buf, size_t len)
{
	size_t	 n = strlen(name);

	if (n > 8 && strcmp(name + n - 8, ".partial") == 0)
		n -= 8;
	if (n >= len)
		return -1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return 0;
}

int
salvage_submit(struct fileworker *fw, int dirfd, const char *name,
    salvage_done_fn done, void *arg)
{
	struct salvage_job	*j;
	const char		*hold = getenv("PERFSPILL_TEST_SALVAGE_HOLD");

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->dirfd = dirfd;
	snprintf(j->name, sizeof(j->name), "%s", name);
	if (salvage_final_name(name, j->final, sizeof(j->final)) == -1) {
		free(j);
		errno = ENAMETOOLONG;
		return -1;
	}
	j->hold = hold != NULL && hold[0] != '\0' ? hold : NULL;
	j->done = done;
	j->arg = arg;
	/* held under the name it gets: retention keeps it until its
	 * manifest and hand-off are done */
	if (fileworker_submit(fw, j->final, salvage_work, salvage_done, j) ==
	    -1) {
		free(j);
		return -1;
	}
	return 0;
}

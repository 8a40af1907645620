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
    const struct perfdata_header *hdr, struct manifest_facts *f)
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

/* The facts of a salvaged file, from the finished file itself, to done
 * (its manifest and hand-off). */
static void
salvage_manifest(int fd, const char *final, manifest_file_cb done, void *arg)
{
	struct manifest_facts	 f;
	struct perfdata_header	 h;
	struct perfdata_section	 b;
	struct stat		 st;
	uint8_t			*map;
	char			 host[64];
	const char		*p;

	if (done == NULL)
		return;
	if (fstat(fd, &st) == -1 || st.st_size == 0 ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd,
	    0)) == MAP_FAILED) {
		log_warn("salvage: reading %s for its manifest", final);
		return;
	}
	memset(&f, 0, sizeof(f));
	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	f.name = final;
	f.host = host;
	/* perfspill-HOST-STAMP-SEQ.data */
	if ((p = strrchr(final, '-')) != NULL)
		f.seq = (unsigned int)strtoul(p + 1, NULL, 10);
	f.bytes = (uint64_t)st.st_size;
	f.finished = st.st_mtime;
	f.salvaged = 1;
	/* finished by salvage_finish: the header names its data section */
	if ((uint64_t)st.st_size >= sizeof(h))
		memcpy(&h, map, sizeof(h));
	if ((uint64_t)st.st_size >= sizeof(h) && h.magic == PERFDATA_MAGIC &&
	    h.size == sizeof(h) && h.data.offset <= (uint64_t)st.st_size &&
	    h.data.size <= (uint64_t)st.st_size - h.data.offset &&
	    h.attrs.offset + h.attrs.size <= h.data.offset) {
		salvage_count(map, (uint64_t)st.st_size, &h, &f);
		if (perfdata_feat_find(map, (uint64_t)st.st_size, &h,
		    PERFDATA_FEAT_BUILD_ID, &b) == 0) {
			f.buildids = map + b.offset;
			f.buildids_len = (size_t)b.size;
		}
	}
	done(&f, 1, arg);
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

int
salvage_file(int dirfd, const char *partial, manifest_file_cb done, void *arg)
{
	char		 final[256], damaged[272];
	struct stat	 st;
	uint8_t		*map;
	uint64_t	 valid = 0;
	size_t		 n = strlen(partial) - strlen(".partial");
	int		 fd, rc = -1, r = 1;

	if (n >= sizeof(final))
		return -1;
	memcpy(final, partial, n);
	final[n] = '\0';
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
	salvage_manifest(fd, final, done, arg);
	rc = 0;
out:
	close(fd);
	return rc;
}

/* A finished file without its manifest: the daemon died between the
 * rename of the data file and the manifest's, so no hand-off ran either. */
static void
salvage_unmanifested(int dirfd, const char *name, manifest_file_cb done,
    void *arg)
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
	salvage_manifest(fd, name, done, arg);
	close(fd);
}

int
salvage_dir(int dirfd, manifest_file_cb done, void *arg)
{
	DIR		*dir;
	struct dirent	*de;
	char		**names = NULL, **tmp;
	size_t		 nr = 0, i, len;
	int		 saved = 0;

	if ((dir = retain_opendir(dirfd)) == NULL)
		return -1;
	/* collect first: renaming while readdir runs may show names twice */
	while ((de = readdir(dir)) != NULL) {
		len = strlen(de->d_name);
		if (!retain_is_trace(de->d_name) &&
		    (strncmp(de->d_name, "perfspill-", 10) != 0 || len < 14 ||
		    strcmp(de->d_name + len - 13, ".data.partial") != 0))
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
		if (retain_is_trace(names[i]))
			salvage_unmanifested(dirfd, names[i], done, arg);
		else if (salvage_file(dirfd, names[i], done, arg) == 0)
			saved++;
		free(names[i]);
	}
	free(names);
	return saved;
}

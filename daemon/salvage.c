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

#include "buildid.h"
#include "log.h"
#include "manifest.h"
#include "retain.h"
#include "salvage.h"
#include "sbuf.h"

#define PIPE_HEADER_LEN		16
#define REC_HEADER_ATTR		64
#define REC_HEADER_TRACING_DATA	66
#define REC_HEADER_BUILD_ID	67
#define REC_COMPRESSED		81	/* perf's -z records are not 8-aligned */
/* record types end well below this; a larger one is garbage */
#define REC_TYPE_MAX		128

uint64_t
salvage_valid_len(const uint8_t *buf, uint64_t len)
{
	struct perf_event_header	 h;
	uint64_t			 off = PIPE_HEADER_LEN, magic, hsize;
	uint32_t			 tsize;

	if (len < PIPE_HEADER_LEN)
		return 0;
	memcpy(&magic, buf, 8);
	memcpy(&hsize, buf + 8, 8);
	if (memcmp(&magic, "PERFILE2", 8) != 0 || hsize != PIPE_HEADER_LEN)
		return 0;
	while (off + sizeof(h) <= len) {
		memcpy(&h, buf + off, sizeof(h));
		/* zeros: space reserved for a write that never landed */
		if (h.size < sizeof(h) || h.type == 0 ||
		    ((h.size & 7) != 0 && h.type != REC_COMPRESSED) ||
		    h.type >= REC_TYPE_MAX || off + h.size > len)
			break;
		if (h.type == REC_HEADER_TRACING_DATA) {
			/* the tracing data follows the record, 8-aligned */
			if (h.size < sizeof(h) + 4)
				break;
			memcpy(&tsize, buf + off + sizeof(h), 4);
			if (off + h.size + (((uint64_t)tsize + 7) & ~7ULL) > len)
				break;
			off += ((uint64_t)tsize + 7) & ~7ULL;
		}
		off += h.size;
	}
	return off;
}

/*
 * What a salvaged file tells of itself, for its manifest: the samples,
 * their times (the first attr's sample_type places the time), the loss
 * records and the build-id records of buf's valid len bytes. Samples
 * inside compressed records are not counted.
 */
static void
salvage_facts(const uint8_t *buf, uint64_t len, struct manifest_facts *f,
    struct sbuf *bids)
{
	struct perf_event_header	 h;
	uint64_t			 off = PIPE_HEADER_LEN, st = 0, t, v;
	size_t				 toff = 0;
	uint32_t			 tsize;

	f->time_first = UINT64_MAX;
	for (; off + sizeof(h) <= len; off += h.size) {
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > len)
			break;
		switch (h.type) {
		case REC_HEADER_ATTR:	/* header, attr: type, size, config,
					 * period, sample_type */
			if (toff == 0 && h.size >= sizeof(h) + 32) {
				memcpy(&st, buf + off + sizeof(h) + 24, 8);
				if (st & PERF_SAMPLE_TIME)
					toff = sizeof(h) +
					    (st & PERF_SAMPLE_IDENTIFIER ? 8 : 0) +
					    (st & PERF_SAMPLE_IP ? 8 : 0) +
					    (st & PERF_SAMPLE_TID ? 8 : 0);
			}
			break;
		case REC_HEADER_TRACING_DATA:
			memcpy(&tsize, buf + off + sizeof(h), 4);
			off += ((uint64_t)tsize + 7) & ~7ULL;
			break;
		case REC_HEADER_BUILD_ID:
			if (sbuf_append(bids, buf + off, h.size) == NULL)
				log_warnx("salvage: out of memory for "
				    "build-ids");
			break;
		case PERF_RECORD_MMAP2:
			/* the preamble's build-ids ride in its MMAP2 records */
			if (buildid_preamble(bids, buf + off, h.size) == -1)
				log_warnx("salvage: out of memory for "
				    "build-ids");
			break;
		case PERF_RECORD_LOST:	/* header, id, lost */
			if (h.size >= sizeof(h) + 16) {
				memcpy(&v, buf + off + sizeof(h) + 8, 8);
				f->lost += v;
			}
			break;
		case PERF_RECORD_LOST_SAMPLES:	/* header, lost */
			if (h.size >= sizeof(h) + 8) {
				memcpy(&v, buf + off + sizeof(h), 8);
				f->lost_samples += v;
			}
			break;
		case PERF_RECORD_SAMPLE:
			f->samples++;
			if (toff == 0 || h.size < toff + 8)
				break;
			memcpy(&t, buf + off + toff, 8);
			if (t < f->time_first)
				f->time_first = t;
			if (t > f->time_last)
				f->time_last = t;
			break;
		}
	}
	if (f->time_first > f->time_last)
		f->time_first = f->time_last = 0;
	f->buildids = bids->data;
	f->buildids_len = bids->len;
}

/* The manifest of a salvaged file: what its records tell. */
static void
salvage_manifest(int dirfd, const char *final, const uint8_t *buf,
    uint64_t len, const struct stat *st)
{
	struct manifest_facts	 f;
	struct sbuf		 bids;
	char			 host[64];
	const char		*p;

	memset(&f, 0, sizeof(f));
	sbuf_init(&bids);
	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	f.name = final;
	f.host = host;
	/* perfspill-HOST-STAMP-SEQ.data */
	if ((p = strrchr(final, '-')) != NULL)
		f.seq = (unsigned int)strtoul(p + 1, NULL, 10);
	f.bytes = len;
	f.finished = st->st_mtime;
	f.salvaged = 1;
	salvage_facts(buf, len, &f, &bids);
	if (manifest_write(dirfd, &f) == -1)
		log_warn("salvage: writing the manifest of %s", final);
	sbuf_finish(&bids);
}

static int
salvage_one(int dirfd, const char *partial)
{
	char		 final[256], damaged[272];
	struct stat	 st;
	uint8_t		*map = MAP_FAILED;
	uint64_t	 valid;
	size_t		 n = strlen(partial) - strlen(".partial");
	int		 fd, rc = -1;

	if (n >= sizeof(final))
		return -1;
	memcpy(final, partial, n);
	final[n] = '\0';
	snprintf(damaged, sizeof(damaged), "%s.damaged", final);
	if ((fd = openat(dirfd, partial, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) ==
	    -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		log_warn("salvage: cannot open %s", partial);
		if (fd != -1)
			close(fd);
		return -1;
	}
	valid = 0;
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
		    0);
		if (map != MAP_FAILED)
			valid = salvage_valid_len(map, (uint64_t)st.st_size);
	}
	if (valid <= PIPE_HEADER_LEN) {
		log_warnx("salvage: %s holds no whole record (%lld bytes); "
		    "kept as %s", partial, (long long)st.st_size, damaged);
		if (renameat(dirfd, partial, dirfd, damaged) == -1)
			log_warn("salvage: rename %s", partial);
		goto out;
	}
	if (valid < (uint64_t)st.st_size) {
		log_warnx("salvage: %s: %lld bytes after offset %llu are not "
		    "whole records and are cut", partial,
		    (long long)((uint64_t)st.st_size - valid),
		    (unsigned long long)valid);
		if (ftruncate(fd, (off_t)valid) == -1) {
			log_warn("salvage: truncate %s", partial);
			goto out;
		}
	}
	if (fsync(fd) == -1 || renameat(dirfd, partial, dirfd, final) == -1 ||
	    fsync(dirfd) == -1) {
		log_warn("salvage: finishing %s", partial);
		goto out;
	}
	log_info("salvage: recovered %s (%llu bytes)", final,
	    (unsigned long long)valid);
	salvage_manifest(dirfd, final, map, valid, &st);
	rc = 0;
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	close(fd);
	return rc;
}

int
salvage_dir(int dirfd)
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
		if (strncmp(de->d_name, "perfspill-", 10) != 0 || len < 14 ||
		    strcmp(de->d_name + len - 13, ".data.partial") != 0)
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
		if (salvage_one(dirfd, names[i]) == 0)
			saved++;
		free(names[i]);
	}
	free(names);
	return saved;
}

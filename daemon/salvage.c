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

#include "log.h"
#include "perfdata.h"
#include "retain.h"
#include "salvage.h"

#define PIPE_HEADER_LEN		16

/*
 * Where the file's records stop being whole, and make it a finished
 * file ending there. 0: done, 1: nothing whole to keep, -1: failed.
 */
static int
salvage_finish(int fd, const uint8_t *map, uint64_t size, uint64_t *valid)
{
	struct perfdata_layout	 l;
	struct perfdata_extra	 x;
	uint64_t		 magic, hsize, end, type;

	if (size < PIPE_HEADER_LEN)
		return 1;
	memcpy(&magic, map, 8);
	memcpy(&hsize, map + 8, 8);
	if (magic == PERFDATA_MAGIC && hsize == PIPE_HEADER_LEN) {
		/* a pipe-format file of an older perfspilld: cut it only */
		*valid = perfdata_valid_end(map, size, PIPE_HEADER_LEN);
		if (*valid <= PIPE_HEADER_LEN)
			return 1;
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
	end = perfdata_valid_end(map, size, l.hdr.data.offset);
	if (end <= l.hdr.data.offset)
		return 1;
	/*
	 * The head's features, and the sample times where the samples can
	 * be read (not inside zstd); the build-ids learnt while recording
	 * are lost with the daemon's memory: the kernel's stays.
	 */
	memset(&x, 0, sizeof(x));
	if (!perfdata_feat_isset(&l.hdr, PERFDATA_FEAT_COMPRESSED) &&
	    l.hdr.attrs.size >= 32) {
		/* sample_type follows type, size, config, sample_period */
		memcpy(&type, map + l.hdr.attrs.offset + 24, sizeof(type));
		perfdata_sample_times(map + l.hdr.data.offset,
		    end - l.hdr.data.offset, perfdata_time_off(type),
		    &x.first_sample, &x.last_sample);
	}
	return perfdata_finish(fd, &l, end, &x, valid);
}

static int
salvage_one(int dirfd, const char *partial)
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
	if ((fd = openat(dirfd, partial, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) ==
	    -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		log_warn("salvage: cannot open %s", partial);
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd,
		    0);
		if (map != MAP_FAILED) {
			r = salvage_finish(fd, map, (uint64_t)st.st_size,
			    &valid);
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
	if (valid < (uint64_t)st.st_size)
		log_warnx("salvage: %s: cut to %llu of %lld bytes at its last "
		    "whole record", partial, (unsigned long long)valid,
		    (long long)st.st_size);
	if (fsync(fd) == -1 || renameat(dirfd, partial, dirfd, final) == -1 ||
	    fsync(dirfd) == -1) {
		log_warn("salvage: finishing %s", partial);
		goto out;
	}
	log_info("salvage: recovered %s (%llu bytes)", final,
	    (unsigned long long)valid);
	rc = 0;
out:
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

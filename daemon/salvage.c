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
#include "retain.h"
#include "salvage.h"

#define PIPE_HEADER_LEN		16
#define REC_HEADER_TRACING_DATA	66
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

static int
salvage_one(int dirfd, const char *partial)
{
	char		 final[256], damaged[272];
	struct stat	 st;
	uint8_t		*map;
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
		if (map != MAP_FAILED) {
			valid = salvage_valid_len(map, (uint64_t)st.st_size);
			munmap(map, (size_t)st.st_size);
		}
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

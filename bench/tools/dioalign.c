/*
 * dioalign: what direct I/O asks of a file's buffers and offsets, as the
 * kernel says it (statx STATX_DIOALIGN, Linux 6.1+) and as the block
 * device says it (logical block size), for the design of a direct write
 * path. Prints one JSON object.
 *
 *   dioalign FILE
 *
 * FILE must exist (a regular file: STATX_DIOALIGN is only answered for
 * those). The logical block size comes from /sys/dev/block/MAJ:MIN of the
 * file system's device (its queue/ directory, or its parent disk's for a
 * partition); -1 where there is none (tmpfs, FUSE, NFS).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long
read_long(const char *path)
{
	FILE	*f;
	long	 v = -1;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* the device's queue/ attribute, or its parent disk's for a partition */
static long
queue_attr(unsigned maj, unsigned min, const char *name)
{
	char	 path[256];
	long	 v;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s", maj,
	    min, name);
	if ((v = read_long(path)) != -1)
		return v;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/%s", maj,
	    min, name);
	return read_long(path);
}

int
main(int argc, char **argv)
{
	struct statx	 stx;
	int		 dio;

	if (argc != 2) {
		fprintf(stderr, "usage: dioalign FILE\n");
		return 2;
	}
	memset(&stx, 0, sizeof(stx));
	if (syscall(SYS_statx, AT_FDCWD, argv[1], 0,
	    STATX_BASIC_STATS | STATX_DIOALIGN, &stx) == -1) {
		perror(argv[1]);
		return 1;
	}
	dio = (stx.stx_mask & STATX_DIOALIGN) != 0;
	printf("{\"file\": \"%s\", \"statx_dioalign\": %s, "
	    "\"dio_mem_align\": %u, \"dio_offset_align\": %u, "
	    "\"st_blksize\": %u, \"dev\": \"%u:%u\", "
	    "\"logical_block_size\": %ld, \"physical_block_size\": %ld, "
	    "\"dma_alignment\": %ld, \"max_sectors_kb\": %ld}\n",
	    argv[1], dio ? "true" : "false",
	    dio ? stx.stx_dio_mem_align : 0,
	    dio ? stx.stx_dio_offset_align : 0, stx.stx_blksize,
	    stx.stx_dev_major, stx.stx_dev_minor,
	    queue_attr(stx.stx_dev_major, stx.stx_dev_minor,
	    "logical_block_size"),
	    queue_attr(stx.stx_dev_major, stx.stx_dev_minor,
	    "physical_block_size"),
	    queue_attr(stx.stx_dev_major, stx.stx_dev_minor, "dma_alignment"),
	    queue_attr(stx.stx_dev_major, stx.stx_dev_minor,
	    "max_sectors_kb"));
	return 0;
}

/*
 * test-tracefile-direct: the direct stream (tracefile-direct.c) against a
 * real file with real O_DIRECT AIO, in a private directory: blocks of any
 * length become aligned requests whose leads carry the stream's tail,
 * requests on several descriptors complete in any order, a padded tail
 * is rewritten by the block after it, and a reservation counts as landed
 * only once every byte of it is on disk. The file's bytes must be the
 * stream's, in order. Skips (exit 77) where the directory's file system
 * takes no O_DIRECT.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cblock.h"
#include "check.h"
#include "tracefile.h"

#define NBLOCKS		40
#define CAP		(64 * 1024)

static unsigned char	 want[NBLOCKS * CAP];
static size_t		 want_len;

static void
reap_all(struct cblock_queue *q)
{
	const struct aiocb	*list[16];
	struct timespec		 ts = { 0, 20 * 1000 * 1000 };
	struct cblock		*cb;
	time_t			 end = time(NULL) + 10;
	size_t			 n;

	while (cblock_reap(q) > 0 && time(NULL) < end) {
		n = 0;
		TAILQ_FOREACH(cb, &q->busy, entry)
			if (n < 16)
				list[n++] = &cb->aio;
		aio_suspend(list, (int)n, &ts);
	}
}

/* A block's records: their bytes follow the stream's offset, so that a
 * byte out of place shows. Lengths are multiples of 8, as records are. */
static size_t
fill(uint8_t *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		p[i] = (uint8_t)((want_len + i) * 7 + 3);
		want[want_len + i] = p[i];
	}
	want_len += len;
	return len;
}

static void
test_stream(const char *dir)
{
	struct cblock_queue	 q;
	struct cblock_stats	 stats, heap;
	struct cblock		 cbs[4], *pad;
	struct tracefile_mark	 mark = { 1, 0, 0 };
	struct tracefile	*tf;
	struct stat		 st;
	unsigned int		 seq = 0;
	uint64_t		 off;
	uint8_t			*got, *b;
	size_t			 i, k, len, w, lead;
	int			 dirfd, fd, pads = 0;

	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY)) == -1) {
		perror(dir);
		exit(1);
	}
	tf = tracefile_open(dirfd, "unit", &seq, 1);
	CHECK(tf != NULL);
	if (tf == NULL)
		return;
	if (!tracefile_direct_on(tf) || tf->direct.nr_fds == 0) {
		printf("SKIP: %s takes no O_DIRECT (%s)\n", dir,
		    strerror(tracefile_direct_refused(tf)));
		exit(77);
	}
	CHECK(tf->direct.align >= 512 && tf->direct.align <= 4096);
	memset(&stats, 0, sizeof(stats));
	memset(&heap, 0, sizeof(heap));
	cblock_queue_init(&q);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(cblock_init(&cbs[i], CAP + TRACEFILE_ALIGN_MAX), 0);
		cbs[i].stats = &stats;
	}
	srand(42);
	for (k = 0; k < NBLOCKS; k++) {
		struct cblock	*cb = &cbs[k % 4];

		/* all sizes: below one unit (all tail), about one, many */
		len = k % 5 == 0 ? 8 * (size_t)(1 + rand() % 40) :
		    8 * (size_t)(1 + rand() % (CAP / 8 - 1));
		if (cb->busy)
			reap_all(&q);
		lead = tracefile_direct_lead(tf, cb->buf);
		CHECK_EQ(lead, tf->direct.tail_len);
		fill(cb->buf + lead, len);
		w = tracefile_direct_block(tf, cb->buf, lead, len, &mark,
		    &off, &fd);
		CHECK_EQ(w % tf->direct.align, 0);
		CHECK_EQ(off % tf->direct.align, 0);
		CHECK_EQ(off + w + tf->direct.tail_len, tf->reserved);
		if (w > 0) {
			cb->len = w;
			CHECK_EQ(cblock_submit(&q, cb, tf, off, fd), 0);
		}
		/* a padded tail now and then, rewritten by what follows */
		if (k % 7 == 3 && (b = cblock_buffer(TRACEFILE_ALIGN_MAX))) {
			if ((w = tracefile_direct_pad(tf, b, &off, &fd)) > 0 &&
			    (pad = cblock_create_heap(b, w, &heap)) != NULL) {
				pad->pad = 1;
				CHECK_EQ(cblock_submit(&q, pad, tf, off, fd), 0);
				pads++;
			} else
				free(b);
		}
	}
	reap_all(&q);
	CHECK(pads > 0);
	CHECK_EQ(tf->inflight, 0);
	CHECK_EQ(tf->bad_off, UINT64_MAX);
	/* everything but the tail is on disk, and counted as landed once
	 * whole: the reservations wholly below the frontier */
	CHECK_EQ(tf->frontier, tf->reserved - tf->direct.tail_len);
	CHECK(tf->kept.samples < NBLOCKS);
	CHECK_EQ(tracefile_direct_end(tf), 0);
	CHECK_EQ(tf->frontier, tf->reserved);
	CHECK_EQ(tf->kept.samples, NBLOCKS);
	CHECK_EQ(tf->reserved, want_len);

	/* the file is the stream, byte for byte (a pad may have left
	 * zeros past its end: they are past want_len) */
	fd = openat(dirfd, tf->partial, O_RDONLY);
	CHECK(fd != -1);
	CHECK(fstat(fd, &st) == 0 && (uint64_t)st.st_size >= want_len);
	got = malloc(want_len);
	CHECK(got != NULL && pread(fd, got, want_len, 0) == (ssize_t)want_len);
	CHECK(got != NULL && memcmp(got, want, want_len) == 0);
	free(got);
	close(fd);
	unlinkat(dirfd, tf->partial, 0);
	for (i = 0; i < 4; i++)
		cblock_finish(&cbs[i]);
	tracefile_free(tf);
	close(dirfd);
}

/* A failed request (here: one on a descriptor that cannot write) cuts
 * the file at the start of the reservation holding its first byte. */
static void
test_cut_at_a_record_boundary(const char *dir)
{
	struct tracefile	*tf;
	struct tracefile_mark	 mark = { 1, 0, 0 };
	uint8_t			 buf[8192];
	unsigned int		 seq = 0;
	uint64_t		 off, o1;
	int			 dirfd, fd;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	tf = tracefile_open(dirfd, "cut", &seq, 1);
	CHECK(tf != NULL && tracefile_direct_on(tf));
	if (tf == NULL || !tracefile_direct_on(tf))
		return;
	/* two reservations: 1000 bytes, then 3000 */
	tracefile_direct_block(tf, buf, 0, 1000, &mark, &off, &fd);
	o1 = tf->reserved;
	CHECK_EQ(o1, 1000);
	tracefile_direct_block(tf, buf, tracefile_direct_lead(tf, buf), 3000,
	    &mark, &off, &fd);
	/* the second request starts at an aligned offset inside the first
	 * reservation: its failure cuts at that reservation's start, 0 */
	CHECK(off < o1);
	tracefile_queued(tf, off, 4000 - tf->direct.tail_len - off);
	tracefile_completed(tf, off, 0, EIO);
	CHECK_EQ(tf->bad_off, 0);
	CHECK_EQ(tf->kept.samples, 0);
	unlinkat(dirfd, tf->partial, 0);
	tracefile_free(tf);
	close(dirfd);
}

int
main(void)
{
	char	 dir[] = "./test-tracefile-direct-XXXXXX";

	/* in the build tree: /tmp may be a file system without O_DIRECT
	 * where the build directory has it */
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_stream(dir);
	test_cut_at_a_record_boundary(dir);
	rmdir(dir);
	return check_exit();
}

/*
 * test-cblock-aio: real POSIX AIO through cblocks into a tracefile in a
 * private directory. Requests complete in any order, so what is checked
 * is where the bytes land (the reserved offsets), the counters, and that
 * the file only appears under its final name once closed and complete.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cblock.h"
#include "check.h"
#include "tracefile.h"

#define DEADLINE	10	/* seconds: a bound on a hang, not a claim */

static time_t	 started;

static int
expired(void)
{
	return time(NULL) - started > DEADLINE;
}

/* Reap until nothing is busy, sleeping in aio_suspend between scans as
 * the daemon sleeps in its event loop. */
static size_t
reap_all(struct cblock_queue *q)
{
	const struct aiocb	*list[16];
	struct timespec		 ts = { 0, 50 * 1000 * 1000 };
	struct cblock		*cb;
	size_t			 n, busy;

	while ((busy = cblock_reap(q)) > 0 && !expired()) {
		n = 0;
		TAILQ_FOREACH(cb, &q->busy, entry) {
			if (n < sizeof(list) / sizeof(list[0]))
				list[n++] = &cb->aio;
		}
		aio_suspend(list, (int)n, &ts);
	}
	return busy;
}

static void
done_cb(struct tracefile *tf, void *arg)
{
	int	*calls = arg;

	(*calls)++;
}

static int
close_all(struct tracefile *tf, struct cblock_queue *q, int *calls)
{
	struct timespec	 ts = { 0, 1000 * 1000 };
	int		 rc;

	tracefile_close(tf, done_cb, calls);
	while ((rc = tracefile_poll(tf)) == 0 && !expired())
		nanosleep(&ts, NULL);
	return rc;
}

#define HEAD	((uint64_t)sizeof(struct perfdata_header))

/* The smallest head a file can have: a header, no attrs, no features;
 * the data starts after it. */
static int
put_head(struct tracefile *tf)
{
	struct perfdata_header	 h;
	uint64_t		 off;

	memset(&h, 0, sizeof(h));
	h.magic = PERFDATA_MAGIC;
	h.size = sizeof(h);
	h.attr_size = 144;
	h.attrs.offset = sizeof(h);
	h.data.offset = sizeof(h);
	if (tracefile_set_head(tf, (const uint8_t *)&h, sizeof(h)) == -1)
		return -1;
	off = tracefile_reserve(tf, sizeof(h), NULL);
	tf->header_len = sizeof(h);
	return tracefile_pwrite(tf, off, &h, sizeof(h));
}

static void
fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7 + i / 251);
}

/* The whole file named name in dirfd, or NULL. */
static uint8_t *
slurp(int dirfd, const char *name, size_t *len)
{
	struct stat	 st;
	uint8_t		*buf;
	int		 fd;
	ssize_t		 n;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || (buf = malloc((size_t)st.st_size + 1)) ==
	    NULL) {
		close(fd);
		return NULL;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

static int
exists(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static void
test_two_cblocks(int dirfd)
{
	struct cblock_queue	 q;
	struct cblock		 cbs[2], *heap;
	struct cblock_stats	 stats, heap_stats;
	struct tracefile	*tf;
	unsigned int		 seq = 0;
	uint64_t		 off0, off1, off2;
	uint8_t			*file, *hbuf;
	size_t			 len = 0;
	int			 calls = 0, i;

	memset(&stats, 0, sizeof(stats));
	memset(&heap_stats, 0, sizeof(heap_stats));
	cblock_queue_init(&q);
	CHECK_EQ(q.nr_busy, 0);
	CHECK(TAILQ_EMPTY(&q.busy));

	tf = tracefile_open(dirfd, "unit", &seq, 0);
	CHECK(tf != NULL);
	if (tf == NULL)
		return;
	CHECK_EQ(seq, 1);
	CHECK_EQ(tf->state, TRACEFILE_OPEN);
	CHECK(strncmp(tf->name, "perfspill-unit-", 15) == 0);
	CHECK(strlen(tf->name) > 5 &&
	    strcmp(tf->name + strlen(tf->name) - 5, ".data") == 0);
	CHECK(strlen(tf->partial) == strlen(tf->name) + 8 &&
	    strncmp(tf->partial, tf->name, strlen(tf->name)) == 0 &&
	    strcmp(tf->partial + strlen(tf->name), ".partial") == 0);
	CHECK(exists(dirfd, tf->partial));
	CHECK(!exists(dirfd, tf->name));
	CHECK_EQ(put_head(tf), 0);

	for (i = 0; i < 2; i++) {
		CHECK_EQ(cblock_init(&cbs[i], 8192), 0);
		cbs[i].stats = &stats;
	}
	cbs[0].len = 5000;
	fill(cbs[0].buf, cbs[0].len, 1);
	cbs[1].len = 3000;
	fill(cbs[1].buf, cbs[1].len, 2);
	off0 = tracefile_reserve(tf, cbs[0].len, NULL);
	off1 = tracefile_reserve(tf, cbs[1].len, NULL);
	CHECK_U64(off0, HEAD);
	CHECK_U64(off1, HEAD + 5000);

	/* submitted out of order: the offsets, not the order, place them */
	CHECK_EQ(cblock_submit(&q, &cbs[1], tf, off1, tf->fd), 0);
	CHECK_EQ(cblock_submit(&q, &cbs[0], tf, off0, tf->fd), 0);
	CHECK_EQ(cbs[0].busy, 1);
	CHECK_EQ(cbs[1].busy, 1);
	CHECK_EQ(cblock_pick(cbs, 2), -1);
	CHECK_EQ(q.nr_busy, 2);
	CHECK_EQ(tf->inflight, 2);
	CHECK_U64(stats.inflight, 2);
	CHECK_U64(stats.submitted, 2);

	/* a one-shot heap block (a preamble), freed when it completes */
	hbuf = malloc(100);
	CHECK(hbuf != NULL);
	fill(hbuf, 100, 3);
	heap = cblock_create_heap(hbuf, 100, &heap_stats);
	CHECK(heap != NULL);
	off2 = tracefile_reserve(tf, 100, NULL);
	CHECK_U64(off2, HEAD + 8000);
	CHECK_EQ(cblock_submit(&q, heap, tf, off2, tf->fd), 0);
	CHECK_EQ(tf->inflight, 3);

	CHECK_EQ(reap_all(&q), 0);
	CHECK_EQ(cbs[0].busy, 0);
	CHECK_EQ(cbs[1].busy, 0);
	CHECK_EQ(cblock_pick(cbs, 2), 0);
	CHECK_EQ(q.nr_busy, 0);
	CHECK(TAILQ_EMPTY(&q.busy));
	CHECK_EQ(tf->inflight, 0);
	CHECK_U64(tf->written, HEAD + 8100);
	CHECK_U64(tf->bad_off, UINT64_MAX);
	CHECK_U64(stats.inflight, 0);
	CHECK_U64(stats.completed, 2);
	CHECK_U64(stats.failed, 0);
	CHECK_U64(stats.bytes_written, 8000);
	CHECK_U64(stats.bytes_dropped, 0);
	CHECK_U64(heap_stats.completed, 1);
	CHECK_U64(heap_stats.bytes_written, 100);
	CHECK_U64(heap_stats.inflight, 0);

	file = slurp(dirfd, tf->partial, &len);
	CHECK(file != NULL);
	CHECK_EQ(len, HEAD + 8100);
	if (file != NULL && len == HEAD + 8100) {
		CHECK(memcmp(file + HEAD, cbs[0].buf, 5000) == 0);
		CHECK(memcmp(file + HEAD + 5000, cbs[1].buf, 3000) == 0);
		fill(cbs[0].buf, 100, 3);
		CHECK(memcmp(file + HEAD + 8000, cbs[0].buf, 100) == 0);
	}
	free(file);

	/* close: fsync through AIO, then the rename */
	CHECK_EQ(close_all(tf, &q, &calls), 1);
	CHECK_EQ(calls, 1);
	CHECK_EQ(tf->state, TRACEFILE_DONE);
	CHECK_EQ(tf->fd, -1);
	CHECK(!exists(dirfd, tf->partial));
	CHECK(exists(dirfd, tf->name));
	/* finished: the header at 0 now names the whole data section */
	file = slurp(dirfd, tf->name, &len);
	CHECK(file != NULL && len == HEAD + 8100);
	if (file != NULL && len == HEAD + 8100) {
		struct perfdata_header	 h;

		memcpy(&h, file, sizeof(h));
		CHECK_U64(h.magic, PERFDATA_MAGIC);
		CHECK_U64(h.data.offset, HEAD);
		CHECK_U64(h.data.size, 8100);
	}
	free(file);
	/* polling a done file again neither fails nor calls back twice */
	CHECK_EQ(tracefile_poll(tf), 1);
	CHECK_EQ(calls, 1);

	unlinkat(dirfd, tf->name, 0);
	tracefile_free(tf);
	for (i = 0; i < 2; i++)
		cblock_finish(&cbs[i]);
}

/*
 * A failed write in the middle: the file is cut at the failed offset, so
 * that the later request that did succeed does not leave a hole that would
 * end perf's reading early. A read-only descriptor makes the write fail.
 */
static void
test_failed_write(int dirfd)
{
	struct cblock_queue	 q;
	struct cblock		 cbs[3];
	struct cblock_stats	 stats;
	struct tracefile	*tf;
	unsigned int		 seq = 100;
	struct tracefile_mark	 mark[3];
	uint64_t		 off[3];
	uint8_t			*file;
	size_t			 len = 0;
	int			 calls = 0, i, rwfd, rofd;

	memset(&stats, 0, sizeof(stats));
	cblock_queue_init(&q);
	if ((tf = tracefile_open(dirfd, "unit", &seq, 0)) == NULL) {
		CHECK(tf != NULL);
		return;
	}
	CHECK_EQ(put_head(tf), 0);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(cblock_init(&cbs[i], 4096), 0);
		cbs[i].stats = &stats;
		cbs[i].len = 1000;
		fill(cbs[i].buf, cbs[i].len, (unsigned int)i);
		mark[i].samples = (i + 1) * 10;
		mark[i].first = 100 + i;
		mark[i].last = 200 + i;
		off[i] = tracefile_reserve(tf, cbs[i].len, &mark[i]);
	}

	CHECK_EQ(cblock_submit(&q, &cbs[0], tf, off[0], tf->fd), 0);
	CHECK_EQ(reap_all(&q), 0);

	rwfd = tf->fd;
	rofd = openat(dirfd, tf->partial, O_RDONLY | O_CLOEXEC);
	CHECK(rofd != -1);
	tf->fd = rofd;
	/* glibc may refuse at once or fail the request later: either way
	 * the bytes are dropped and the offset recorded */
	if (cblock_submit(&q, &cbs[1], tf, off[1], tf->fd) == -1)
		CHECK_EQ(errno, EBADF);
	CHECK_EQ(reap_all(&q), 0);
	tf->fd = rwfd;
	close(rofd);
	CHECK_EQ(cbs[1].busy, 0);
	CHECK_U64(tf->bad_off, off[1]);
	CHECK_EQ(tf->err, EBADF);
	CHECK_U64(stats.failed, 1);
	CHECK_U64(stats.bytes_dropped, 1000);

	CHECK_EQ(cblock_submit(&q, &cbs[2], tf, off[2], tf->fd), 0);
	CHECK_EQ(reap_all(&q), 0);
	CHECK_U64(stats.completed, 2);
	CHECK_U64(stats.bytes_written, 2000);
	CHECK_EQ(tf->inflight, 0);

	CHECK_EQ(close_all(tf, &q, &calls), 1);
	CHECK_EQ(calls, 1);
	CHECK(exists(dirfd, tf->name));
	file = slurp(dirfd, tf->name, &len);
	CHECK(file != NULL);
	/* after the data: the feature table, its one entry sample_time,
	 * and that feature's two times */
	CHECK_EQ(len, off[1] + 16 + 16);
	if (file != NULL && len == off[1] + 32) {
		struct perfdata_header	 h;
		uint64_t		 t[4];

		CHECK(memcmp(file + HEAD, cbs[0].buf, 1000) == 0);
		memcpy(&h, file, sizeof(h));
		CHECK_U64(h.data.size, 1000);
		CHECK(perfdata_feat_isset(&h, PERFDATA_FEAT_SAMPLE_TIME));
		memcpy(t, file + off[1], sizeof(t));
		CHECK_U64(t[0], off[1] + 16);
		CHECK_U64(t[1], 16);
		CHECK_U64(t[2], 100);
		CHECK_U64(t[3], 200);
	}
	/* the samples of the third write landed but were cut away */
	CHECK_U64(tf->kept.samples, 10);
	CHECK_U64(tf->kept.first, 100);
	CHECK_U64(tf->kept.last, 200);
	free(file);

	unlinkat(dirfd, tf->name, 0);
	tracefile_free(tf);
	for (i = 0; i < 3; i++)
		cblock_finish(&cbs[i]);
}

/*
 * A serial write in two pieces (a ring's data around its wrap) whose
 * second piece fails after part of it landed: the file is cut where the
 * request began, and its samples are not counted.
 */
static void
test_serial_pieces(int dirfd)
{
	struct tracefile	*tf;
	struct tracefile_mark	 mark = { 5, 300, 400 };
	struct rlimit		 old, lim;
	struct iovec		 iov[2];
	uint8_t			 a[100], b[100], *file;
	unsigned int		 seq = 200;
	uint64_t		 off0, off1;
	size_t			 len = 0;
	int			 calls = 0, rc;
	struct cblock_queue	 q;

	cblock_queue_init(&q);
	if ((tf = tracefile_open(dirfd, "unit", &seq, 0)) == NULL) {
		CHECK(tf != NULL);
		return;
	}
	CHECK_EQ(put_head(tf), 0);
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	iov[0].iov_base = a;
	iov[0].iov_len = sizeof(a);
	iov[1].iov_base = b;
	iov[1].iov_len = sizeof(b);
	off0 = tracefile_reserve(tf, 200, &mark);
	CHECK_EQ(tracefile_pwritev(tf, off0, iov, 2), 0);
	CHECK_U64(tf->kept.samples, 5);

	/* the file may grow only 10 bytes into the second piece */
	off1 = tracefile_reserve(tf, 200, &mark);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = off1 + sizeof(a) + 10;
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = tracefile_pwritev(tf, off1, iov, 2);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK_EQ(rc, -1);
	CHECK_U64(tf->bad_off, off1);
	CHECK_EQ(tf->err, EFBIG);
	CHECK_U64(tf->kept.samples, 5);

	CHECK_EQ(close_all(tf, &q, &calls), 1);
	file = slurp(dirfd, tf->name, &len);
	CHECK(file != NULL);
	if (file != NULL) {
		struct perfdata_header	 h;

		memcpy(&h, file, sizeof(h));
		CHECK_U64(h.data.size, 200);
	}
	free(file);
	unlinkat(dirfd, tf->name, 0);
	tracefile_free(tf);
}

/*
 * No room at all after the data (the file may not grow): the file is
 * cut back by its last write to make room for the feature table, and
 * counts only what it keeps.
 */
static void
test_no_room_for_features(int dirfd)
{
	struct tracefile	*tf;
	struct tracefile_mark	 m1 = { 3, 10, 20 }, m2 = { 4, 30, 40 };
	struct rlimit		 old, lim;
	struct cblock_queue	 q;
	uint8_t			 a[4096], *file;
	unsigned int		 seq = 300;
	uint64_t		 off1, off2;
	size_t			 len = 0;
	int			 calls = 0;

	cblock_queue_init(&q);
	if ((tf = tracefile_open(dirfd, "unit", &seq, 0)) == NULL) {
		CHECK(tf != NULL);
		return;
	}
	CHECK_EQ(put_head(tf), 0);
	fill(a, sizeof(a), 3);
	off1 = tracefile_reserve(tf, sizeof(a), &m1);
	CHECK_EQ(tracefile_pwrite(tf, off1, a, sizeof(a)), 0);
	off2 = tracefile_reserve(tf, sizeof(a), &m2);
	CHECK_EQ(tracefile_pwrite(tf, off2, a, sizeof(a)), 0);
	CHECK_U64(tf->kept.samples, 7);

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = tf->reserved;
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	CHECK_EQ(close_all(tf, &q, &calls), 1);
	setrlimit(RLIMIT_FSIZE, &old);

	CHECK_U64(tf->kept.samples, 3);
	CHECK(exists(dirfd, tf->name));
	file = slurp(dirfd, tf->name, &len);
	CHECK(file != NULL);
	if (file != NULL) {
		struct perfdata_header	 h;

		memcpy(&h, file, sizeof(h));
		CHECK_U64(h.data.size, sizeof(a));
		CHECK_EQ(len, off2 + 32);
	}
	free(file);
	unlinkat(dirfd, tf->name, 0);
	tracefile_free(tf);
}

/* Descriptors open in this process. */
static int
open_fds(void)
{
	int	 fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			n++;
	return n;
}

/*
 * With writeback hints on (sync_file_range, then DONTNEED of the cblock's
 * request before) every byte still lands where it was reserved, and no
 * descriptor is left behind.
 */
static void
test_write_modes(int dirfd, int writeback)
{
	struct cblock_queue	 q;
	struct cblock		 cbs[2];
	struct cblock_stats	 stats;
	struct tracefile	*tf;
	struct tracefile_mark	 mark = { 1, 10, 20 };
	unsigned int		 seq = 400;
	uint64_t		 off[8];
	uint8_t			*file;
	size_t			 len = 0, sz = 65536;
	int			 calls = 0, i, r, fds;

	memset(&stats, 0, sizeof(stats));
	cblock_queue_init(&q);
	CHECK_EQ(q.writeback, 0);
	cblock_queue_writeback(&q, writeback);
	if ((tf = tracefile_open(dirfd, "unit", &seq, 0)) == NULL) {
		CHECK(tf != NULL);
		return;
	}
	CHECK_EQ(put_head(tf), 0);
	fds = open_fds();
	for (i = 0; i < 2; i++) {
		CHECK_EQ(cblock_init(&cbs[i], sz), 0);
		cbs[i].stats = &stats;
		cbs[i].len = sz;
	}
	for (r = 0; r < 4; r++) {
		for (i = 0; i < 2; i++) {
			fill(cbs[i].buf, sz, (unsigned int)(r * 2 + i));
			off[r * 2 + i] = tracefile_reserve(tf, sz, &mark);
			CHECK_EQ(cblock_submit(&q, &cbs[i], tf, off[r * 2 + i], tf->fd), 0);
		}
		CHECK_EQ(reap_all(&q), 0);
		CHECK_EQ(open_fds(), fds);
		/* each cblock remembers its last request for the next hint */
		for (i = 0; writeback && i < 2; i++) {
			CHECK(cbs[i].wb_tf == tf);
			CHECK_U64(cbs[i].wb_off, off[r * 2 + i]);
			CHECK_EQ(cbs[i].wb_len, sz);
		}
	}
	CHECK_U64(stats.completed, 8);
	CHECK_U64(stats.bytes_written, 8 * sz);

	CHECK_EQ(close_all(tf, &q, &calls), 1);
	file = slurp(dirfd, tf->name, &len);
	CHECK(file != NULL);
	CHECK(len >= off[7] + sz);
	if (file != NULL && len >= off[7] + sz) {
		uint8_t	*want = malloc(sz);

		CHECK(want != NULL);
		for (i = 0; want != NULL && i < 8; i++) {
			fill(want, sz, (unsigned int)i);
			CHECK(memcmp(file + off[i], want, sz) == 0);
		}
		free(want);
	}
	free(file);
	unlinkat(dirfd, tf->name, 0);
	tracefile_free(tf);
	for (i = 0; i < 2; i++)
		cblock_finish(&cbs[i]);
}

int
main(void)
{
	char		 dir[256];
	const char	*tmp;
	int		 dirfd, rc;

	started = time(NULL);
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/perfspill-unit.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return 1;
	}
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		perror(dir);
		rmdir(dir);
		return 1;
	}

	test_two_cblocks(dirfd);
	test_failed_write(dirfd);
	test_serial_pieces(dirfd);
	test_no_room_for_features(dirfd);
	test_write_modes(dirfd, 0);
	test_write_modes(dirfd, 1);

	close(dirfd);
	/* anything left means a file was not renamed or not removed */
	if ((rc = rmdir(dir)) == -1)
		printf("%s: %s\n", dir, strerror(errno));
	CHECK(rc == 0);
	return check_exit();
}

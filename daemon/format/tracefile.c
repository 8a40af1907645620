/*
 * tracefile: creation, reserved writes and the whole-file close of one
 * trace file (see tracefile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "tracefile.h"

struct tracefile *
tracefile_open(int dirfd, const char *host, unsigned int *seq, int direct)
{
	struct tracefile	*tf;
	struct tm		 tm;
	char			 stamp[32];
	int			 tries;

	if ((tf = calloc(1, sizeof(*tf))) == NULL)
		return NULL;
	tf->dirfd = dirfd;
	tf->fd = -1;
	tf->bad_off = UINT64_MAX;
	tf->opened = time(NULL);
	sbuf_init(&tf->buildids);
	tracefile_direct_init(tf);
	gmtime_r(&tf->opened, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	/* The time first so that names sort by age; seq breaks ties within a
	 * second and across a restart that lands in the same second. */
	for (tries = 0; tries < 1000; tries++, (*seq)++) {
		snprintf(tf->name, sizeof(tf->name), "perfspill-%s-%s-%06u.data",
		    host, stamp, *seq % 1000000);
		snprintf(tf->partial, sizeof(tf->partial), "%s.partial",
		    tf->name);
		if (faccessat(dirfd, tf->name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		tf->fd = openat(dirfd, tf->partial, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC | O_NOFOLLOW, 0640);
		if (tf->fd != -1 || errno != EEXIST)
			break;
	}
	tf->seq = *seq % 1000000;
	(*seq)++;
	if (tf->fd == -1) {
		free(tf);
		return NULL;
	}
	/* 0640 whatever the umask (the unit's is 0077): the on_finish
	 * program reads the file through its group */
	fchmod(tf->fd, 0640);
	/* refused: the file is written through the page cache, and
	 * tracefile_direct_refused says why */
	if (direct)
		(void)tracefile_direct_open(tf);
	return tf;
}

int
tracefile_direct_refused(const struct tracefile *tf)
{
	return tf->direct.refused;
}

int
tracefile_set_head(struct tracefile *tf, const uint8_t *buf, size_t len)
{
	const struct perfdata_section	*bid;

	tf->header_len = len;
	if (perfdata_parse(buf, len, &tf->layout) == -1)
		return -1;
	bid = &tf->layout.feat[PERFDATA_FEAT_BUILD_ID];
	tf->buildids.len = 0;
	if (bid->size != 0 && sbuf_append(&tf->buildids, buf + bid->offset,
	    bid->size) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
tracefile_add_buildids(struct tracefile *tf, const void *buf, size_t len)
{
	if (len > 0 && sbuf_append(&tf->buildids, buf, len) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Sum up b into a. */
static void
tracefile_mark_merge(struct tracefile_mark *a, const struct tracefile_mark *b)
{
	a->samples += b->samples;
	if (b->first != 0 && (a->first == 0 || b->first < a->first))
		a->first = b->first;
	if (b->last > a->last)
		a->last = b->last;
}

/*
 * A slot at the end of a queue (chunks, writes) of *arr: entries before
 * *first are done with; the live ones are moved down before it grows,
 * and *arr may move. NULL when memory runs out.
 */
static void *
tracefile_queue_slot(void **arr, size_t *first, size_t *nr, size_t *cap,
    size_t size)
{
	uint8_t	*p = *arr;
	size_t	 n;

	if (*nr == *cap && *first > 0) {
		*nr -= *first;
		memmove(p, p + *first * size, *nr * size);
		*first = 0;
	}
	if (*nr == *cap) {
		n = *cap ? *cap * 2 : 64;
		if ((p = reallocarray(p, n, size)) == NULL)
			return NULL;
		*arr = p;
		*cap = n;
	}
	return p + (*nr)++ * size;
}

static void
tracefile_chunk_push(struct tracefile *tf, uint64_t off, uint64_t len,
    const struct tracefile_mark *mark)
{
	static const struct tracefile_mark	 none;
	struct tracefile_chunk	*p;
	void			*arr = tf->chunks;

	p = tracefile_queue_slot(&arr, &tf->chunk_first, &tf->nr_chunks,
	    &tf->chunk_cap, sizeof(*p));
	tf->chunks = arr;
	if (p == NULL) {
		/* untracked: counted as if it lands */
		tracefile_mark_merge(&tf->kept, mark ? mark : &none);
		return;
	}
	p->off = off;
	p->len = len;
	p->mark = mark ? *mark : none;
}

uint64_t
tracefile_reserve(struct tracefile *tf, size_t len,
    const struct tracefile_mark *mark)
{
	uint64_t	 off = tf->reserved;

	tf->reserved += len;
	tracefile_chunk_push(tf, off, len, mark);
	return off;
}

/*
 * The reservations wholly below the frontier have landed, in order: kept
 * sums them up, and the last few are remembered for a cut-back.
 */
static void
tracefile_land(struct tracefile *tf)
{
	struct tracefile_chunk	*c;

	while (tf->chunk_first < tf->nr_chunks) {
		c = &tf->chunks[tf->chunk_first];
		if (c->off + c->len > tf->frontier)
			break;
		memmove(tf->landed + 1, tf->landed,
		    (TRACEFILE_LANDED - 1) * sizeof(tf->landed[0]));
		tf->landed[0].off = c->off;
		tf->landed[0].before = tf->kept;
		if (tf->nr_landed < TRACEFILE_LANDED)
			tf->nr_landed++;
		tracefile_mark_merge(&tf->kept, &c->mark);
		tf->chunk_first++;
	}
}

/* The start of the reservation holding byte off: a record boundary. */
static uint64_t
tracefile_chunk_start(const struct tracefile *tf, uint64_t off)
{
	size_t	 lo = tf->chunk_first, hi = tf->nr_chunks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (tf->chunks[mid].off + tf->chunks[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < tf->nr_chunks && tf->chunks[lo].off <= off)
		return tf->chunks[lo].off;
	return off;
}

/* A request [off, end) against the file, queued in offset order. */
static void
tracefile_write_push(struct tracefile *tf, uint64_t off, uint64_t end)
{
	struct tracefile_write	*p;
	void			*arr = tf->writes;

	p = tracefile_queue_slot(&arr, &tf->write_first, &tf->nr_writes,
	    &tf->write_cap, sizeof(*p));
	tf->writes = arr;
	if (p == NULL) {
		/* untracked: the frontier stops short of it, and the samples
		 * after it go uncounted, not unwritten */
		log_warnx("%s: out of memory tracking a write", tf->partial);
		return;
	}
	p->off = off;
	p->end = end;
	p->done = 0;
}

/* The request from off is on disk: move the frontier over every request
 * done in a row, and land what it passed. A failed request is never done:
 * nothing after it is counted. */
static void
tracefile_write_done(struct tracefile *tf, uint64_t off)
{
	struct tracefile_write	*w;
	size_t			 i;

	for (i = tf->write_first; i < tf->nr_writes; i++)
		if (tf->writes[i].off == off && !tf->writes[i].done) {
			tf->writes[i].done = 1;
			break;
		}
	while (tf->write_first < tf->nr_writes) {
		w = &tf->writes[tf->write_first];
		if (!w->done || w->off != tf->frontier)
			break;
		tf->frontier = w->end;
		tf->write_first++;
	}
	tracefile_land(tf);
}

void
tracefile_count(struct tracefile *tf, uint64_t samples, uint64_t lost,
    uint64_t lost_samples)
{
	tf->samples += samples;
	tf->lost += lost;
	tf->lost_samples += lost_samples;
}

void
tracefile_compressed(struct tracefile *tf, size_t raw, size_t compressed)
{
	tf->raw += raw;
	tf->compressed += compressed;
}

void
tracefile_queued(struct tracefile *tf, uint64_t off, size_t len)
{
	tf->inflight++;
	if (len > 0)
		tracefile_write_push(tf, off, off + len);
}

void
tracefile_completed(struct tracefile *tf, uint64_t off, size_t written,
    int err)
{
	tf->inflight--;
	tf->written += written;
	if (err != 0)
		tracefile_failed(tf, off, err);
	else
		tracefile_write_done(tf, off);
}

int
tracefile_pwrite(struct tracefile *tf, uint64_t off, const void *buf,
    size_t len)
{
	struct iovec	 iov = { (void *)(uintptr_t)buf, len };

	return tracefile_pwritev(tf, off, &iov, 1);
}

int
tracefile_pwritev(struct tracefile *tf, uint64_t off, const struct iovec *iov,
    int n)
{
	const uint8_t	*p;
	uint64_t	 start = off, total = 0;
	size_t		 len;
	ssize_t		 w;
	int		 i;

	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	tracefile_write_push(tf, start, start + total);
	for (i = 0; i < n; i++) {
		p = iov[i].iov_base;
		len = iov[i].iov_len;
		while (len > 0) {
			w = pwrite(tf->fd, p, len, (off_t)off);
			if (w == -1 && errno == EINTR)
				continue;
			if (w <= 0) {
				if (w == 0)
					errno = ENOSPC;
				/* the cut goes where the request began: a
				 * record boundary, not inside what was half
				 * written */
				tracefile_failed(tf, start, errno);
				return -1;
			}
			p += w;
			off += (uint64_t)w;
			len -= (size_t)w;
			tf->written += (uint64_t)w;
		}
	}
	tracefile_write_done(tf, start);
	return 0;
}

void
tracefile_failed(struct tracefile *tf, uint64_t off, int err)
{
	/* a request of the direct stream may begin inside a record */
	off = tracefile_chunk_start(tf, off);
	if (off < tf->bad_off) {
		tf->bad_off = off;
		tf->err = err;
	}
}

void
tracefile_close(struct tracefile *tf, tracefile_done_cb done, void *arg)
{
	tf->done = done;
	tf->done_arg = arg;
	if (tf->state == TRACEFILE_OPEN)
		tf->state = TRACEFILE_CLOSING;
}

/*
 * Every request has completed: cut at the first failed write and make
 * the rest a finished perf.data file, or drop it when not one recorded
 * byte made it. 0: fsync and rename next; -1: nothing more to do.
 */
static int
tracefile_finish(struct tracefile *tf)
{
	struct perfdata_extra	 x;
	uint64_t		 end;
	size_t			 i;

	/* the direct stream's last bytes: a failure is a cut like any */
	if (tracefile_direct_on(tf) && tf->bad_off == UINT64_MAX)
		(void)tracefile_direct_end(tf);
	end = tf->reserved;

	if (tf->bad_off != UINT64_MAX && tf->bad_off <= tf->header_len) {
		if (unlinkat(tf->dirfd, tf->partial, 0) == -1)
			log_warn("%s: unlink", tf->partial);
		tf->removed = 1;
		return -1;
	}
	if (tf->bad_off != UINT64_MAX) {
		/* Requests are whole records and failures are recorded at
		 * their start: what precedes it is whole records. */
		log_warnx("%s: writes failed from offset %llu (%s); the file "
		    "is cut there", tf->name, (unsigned long long)tf->bad_off,
		    strerror(tf->err));
		end = tf->bad_off;
	}
	for (i = 0;; i++) {
		memset(&x, 0, sizeof(x));
		x.build_ids = tf->buildids.data;
		x.build_ids_len = tf->buildids.len;
		x.first_sample = tf->kept.first;
		x.last_sample = tf->kept.last;
		/* as perf record rounds it: of every write, landed or not */
		if (tf->compressed > 0)
			x.comp_ratio = (uint32_t)((tf->raw + tf->compressed / 2) /
			    tf->compressed);
		if (perfdata_finish(tf->fd, &tf->layout, end, &x, &tf->size) ==
		    0)
			return 0;
		/*
		 * No room after the data for the feature table: give it the
		 * space of the last writes kept, cut off one by one (record
		 * boundaries, all of them), rather than leave no file.
		 */
		if ((errno != ENOSPC && errno != EDQUOT && errno != EFBIG) ||
		    i == tf->nr_landed || tf->landed[i].off <= tf->header_len)
			break;
		end = tf->landed[i].off;
		tf->kept = tf->landed[i].before;
		log_warnx("%s: no room for the header and features; the file "
		    "is cut at offset %llu", tf->name, (unsigned long long)end);
	}
	/* finished when space returns (record-file.c), or by salvage at the next
	 * start */
	log_warn("%s: cannot write the header and features; kept as .partial "
	    "until space returns",
	    tf->partial);
	tf->unfinished = 1;
	return -1;
}

/* Header, features and data are on disk: name it, durably. */
static void
tracefile_rename(struct tracefile *tf)
{
	if (renameat(tf->dirfd, tf->partial, tf->dirfd, tf->name) == -1)
		log_warn("%s: rename to %s", tf->partial, tf->name);
	else if (fsync(tf->dirfd) == -1)
		log_warn("fsync of the output directory");
}

static void
tracefile_done(struct tracefile *tf)
{
	/* synced: a direct file leaves nothing in the page cache (its head,
	 * tail and features went through it), as its data never entered */
	if (tracefile_direct_on(tf))
		(void)posix_fadvise(tf->fd, 0, 0, POSIX_FADV_DONTNEED);
	tracefile_direct_close(tf);
	close(tf->fd);
	tf->fd = -1;
	tf->state = TRACEFILE_DONE;
}

int
tracefile_poll(struct tracefile *tf)
{
	int	 e;

	switch (tf->state) {
	case TRACEFILE_OPEN:
		return 0;
	case TRACEFILE_CLOSING:
		if (tf->inflight > 0)
			return 0;
		if (tracefile_finish(tf) == -1) {
			tracefile_done(tf);
			break;
		}
		memset(&tf->sync, 0, sizeof(tf->sync));
		tf->sync.aio_fildes = tf->fd;
		/* polled, as every request of ours: no signal */
		tf->sync.aio_sigevent.sigev_notify = SIGEV_NONE;
		if (aio_fsync(O_SYNC, &tf->sync) == -1) {
			/* no queue slot: do it here, once, rather than never */
			if (fsync(tf->fd) == -1)
				log_warn("%s: fsync", tf->partial);
			tracefile_rename(tf);
			tracefile_done(tf);
			break;
		}
		tf->state = TRACEFILE_SYNCING;
		return 0;
	case TRACEFILE_SYNCING:
		if ((e = aio_error(&tf->sync)) == EINPROGRESS)
			return 0;
		if (aio_return(&tf->sync) == -1)
			log_warnx("%s: fsync: %s", tf->partial, strerror(e));
		tracefile_rename(tf);
		tracefile_done(tf);
		break;
	case TRACEFILE_DONE:
		return 1;
	}
	if (tf->done != NULL)
		tf->done(tf, tf->done_arg);
	return 1;
}

void
tracefile_free(struct tracefile *tf)
{
	if (tf == NULL)
		return;
	if (tf->fd != -1)
		close(tf->fd);
	sbuf_finish(&tf->buildids);
	tracefile_direct_free(tf);
	free(tf->chunks);
	free(tf->writes);
	free(tf);
}

size_t
tracefile_direct_block(struct tracefile *tf, uint8_t *buf, size_t lead,
    size_t len, const struct tracefile_mark *mark, uint64_t *off, int *fd)
{
	*off = tracefile_reserve(tf, len, mark) - lead;
	return tracefile_direct_cut(tf, buf, lead + len, *off, fd);
}

/* The direct stream's tail, through the buffered descriptor: the last
 * bytes of a file whose requests have all completed. 0 or -1 (errno). */
int
tracefile_direct_end(struct tracefile *tf)
{
	struct tracefile_direct	*d = &tf->direct;

	if (d->tail_len == 0)
		return 0;
	return tracefile_pwrite(tf, tf->reserved - d->tail_len, d->tail,
	    d->tail_len);
}

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
tracefile_landed(const struct tracefile *tf)
{
	return tf->state != TRACEFILE_OPEN &&
	    (tf->state != TRACEFILE_CLOSING || tf->inflight == 0);
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

/* A file made and never written to: gone, .partial and all. */
void
tracefile_discard(struct tracefile *tf)
{
	if (tf == NULL)
		return;
	if (unlinkat(tf->dirfd, tf->partial, 0) == -1)
		log_warn("%s: unlink", tf->partial);
	tracefile_free(tf);
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

void
tracefile_info(const struct tracefile *tf, struct tracefile_info *info)
{
	info->name = tf->name;
	info->partial = tf->partial;
	info->seq = tf->seq;
	info->opened = tf->opened;
	info->reserved = tf->reserved;
	info->frontier = tf->frontier;
	info->readable = tracefile_direct_readable(tf);
	info->tail = tracefile_direct_on(tf) ? tf->direct.tail_len : 0;
	info->cut = tf->bad_off;
	info->err = tf->err;
	info->removed = tf->removed;
	info->unfinished = tf->unfinished;
	info->size = tf->size;
	info->samples = tf->samples;
	info->lost = tf->lost;
	info->lost_samples = tf->lost_samples;
	info->compact_unwound = tf->compact_unwound;
	info->compact_raw = tf->compact_raw;
	info->kept = tf->kept;
	info->buildids = tf->buildids.data;
	info->buildids_len = tf->buildids.len;
}

const char *
tracefile_name(const struct tracefile *tf)
{
	return tf->name;
}

const char *
tracefile_partial(const struct tracefile *tf)
{
	return tf->partial;
}

uint64_t
tracefile_reserved(const struct tracefile *tf)
{
	return tf->reserved;
}

time_t
tracefile_opened(const struct tracefile *tf)
{
	return tf->opened;
}

int
tracefile_error(const struct tracefile *tf)
{
	return tf->bad_off != UINT64_MAX ? tf->err : 0;
}

int
tracefile_stat(const struct tracefile *tf, struct stat *st)
{
	return fstat(tf->fd, st);
}

void
tracefile_list_add(struct tracefile_list *list, struct tracefile *tf)
{
	TAILQ_INSERT_TAIL(list, tf, entry);
}

void
tracefile_list_remove(struct tracefile_list *list, struct tracefile *tf)
{
	TAILQ_REMOVE(list, tf, entry);
}

struct tracefile *
tracefile_list_next(const struct tracefile *tf)
{
	return TAILQ_NEXT(tf, entry);
}

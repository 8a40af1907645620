/*
 * tracefile: creation, reserved writes and the whole-file close of one
 * trace file (see tracefile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tracefile.h"

struct tracefile *
tracefile_open(int dirfd, const char *host, unsigned int *seq)
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
	sbuf_init(&tf->buildids);
	tf->opened = time(NULL);
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
	tf->time_first = UINT64_MAX;
	(*seq)++;
	if (tf->fd == -1) {
		free(tf);
		return NULL;
	}
	return tf;
}

uint64_t
tracefile_reserve(struct tracefile *tf, size_t len)
{
	uint64_t	 off = tf->reserved;

	tf->reserved += len;
	return off;
}

int
tracefile_pwrite(struct tracefile *tf, uint64_t off, const void *buf,
    size_t len)
{
	const uint8_t	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = pwrite(tf->fd, p, len, (off_t)off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;
			tracefile_failed(tf, off, errno);
			return -1;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
		tf->written += (uint64_t)n;
	}
	return 0;
}

void
tracefile_failed(struct tracefile *tf, uint64_t off, int err)
{
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

/* Every byte is on disk: cut at the first failed write, name it, and make
 * the name durable. */
static void
tracefile_finalize(struct tracefile *tf)
{
	if (tf->bad_off != UINT64_MAX && tf->bad_off <= tf->header_len) {
		/* not one recorded byte made it: nothing to keep */
		if (unlinkat(tf->dirfd, tf->partial, 0) == -1)
			log_warn("%s: unlink", tf->partial);
		tf->removed = 1;
		close(tf->fd);
		tf->fd = -1;
		tf->state = TRACEFILE_DONE;
		return;
	}
	if (tf->bad_off != UINT64_MAX) {
		/* Chunks are whole records, so the first failed chunk's offset
		 * is a record boundary: what precedes it is a valid stream. */
		log_warnx("%s: writes failed from offset %llu (%s); the file "
		    "is cut there", tf->name, (unsigned long long)tf->bad_off,
		    strerror(tf->err));
		if (ftruncate(tf->fd, (off_t)tf->bad_off) == -1)
			log_warn("%s: truncate", tf->partial);
		else if (fsync(tf->fd) == -1)
			log_warn("%s: fsync", tf->partial);
	}
	if (renameat(tf->dirfd, tf->partial, tf->dirfd, tf->name) == -1)
		log_warn("%s: rename to %s", tf->partial, tf->name);
	else if (fsync(tf->dirfd) == -1)
		log_warn("fsync of the output directory");
	close(tf->fd);
	tf->fd = -1;
	tf->state = TRACEFILE_DONE;
}

int
tracefile_poll(struct tracefile *tf, const struct sigevent *sigev)
{
	int	 e;

	switch (tf->state) {
	case TRACEFILE_OPEN:
		return 0;
	case TRACEFILE_CLOSING:
		if (tf->inflight > 0)
			return 0;
		memset(&tf->sync, 0, sizeof(tf->sync));
		tf->sync.aio_fildes = tf->fd;
		tf->sync.aio_sigevent = *sigev;
		if (aio_fsync(O_SYNC, &tf->sync) == -1) {
			/* no queue slot: do it here, once, rather than never */
			if (fsync(tf->fd) == -1)
				log_warn("%s: fsync", tf->partial);
			tracefile_finalize(tf);
			break;
		}
		tf->state = TRACEFILE_SYNCING;
		return 0;
	case TRACEFILE_SYNCING:
		if ((e = aio_error(&tf->sync)) == EINPROGRESS)
			return 0;
		if (aio_return(&tf->sync) == -1)
			log_warnx("%s: fsync: %s", tf->partial, strerror(e));
		tracefile_finalize(tf);
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
	free(tf);
}

/*
 * synth: what the synth-*.c files share (synth-int.h): the record
 * builder and perf's strings, the sample_id trailer of synthesized
 * records, event names, the CPU count perf calls avail, and reading proc
 * and tracefs files. It calls none of them: the preamble
 * that puts their parts in order is synth-preamble.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth-int.h"

/* Size of the sample_id trailer that non-sample records carry for this
 * sample_type when sample_id_all is set (perf's id_hdr_size). */
static size_t
synth_id_hdr_size(uint64_t sample_type)
{
	static const uint64_t	 bits[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER
	};
	size_t			 i, size = 0;

	/* Each is one u64 (TID and CPU pack two u32s). */
	for (i = 0; i < sizeof bits / sizeof bits[0]; i++) {
		if (sample_type & bits[i])
			size += sizeof(uint64_t);
	}
	return size;
}

const char *
synth_event_name(const struct synth_event *ev, char *buf, size_t len)
{
	if (ev->name != NULL)
		return ev->name;
	if (ev->tp_system != NULL && ev->tp_name != NULL) {
		snprintf(buf, len, "%s:%s", ev->tp_system, ev->tp_name);
		return buf;
	}
	return "";
}

size_t
synth_trailer(const struct synth_ctx *ctx)
{
	const struct perf_event_attr	*attr = &ctx->events[0].attr;

	/*
	 * perf takes the sample_id layout of non-sample records from the
	 * first event and leaves a synthesized one zeroed: id 0 maps to
	 * that first event, time 0 sorts before all ring data.
	 */
	if (!attr->sample_id_all)
		return 0;
	return synth_id_hdr_size(attr->sample_type);
}

const char *
synth_procfs(const struct synth_ctx *ctx)
{
	return ctx->procfs != NULL ? ctx->procfs : "/proc";
}

int
synth_slurp(const char *path, char **bufp, size_t *lenp)
{
	char	*buf = NULL, *p;
	size_t	 len = 0, cap = 0;
	ssize_t	 n;
	int	 fd, saved;

	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return -1;
	for (;;) {
		if (cap - len < 4096 + 1) {
			cap = cap ? cap * 2 : 8192;
			if ((p = realloc(buf, cap)) == NULL)
				goto error;
			buf = p;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			goto error;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;

error:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return -1;
}

/* perf's "avail": the highest present CPU + 1, e.g. of "0-3,8-11"; 0 when
 * sysfs does not say. */
uint32_t
synth_cpus_avail(void)
{
	char		*buf, *p;
	size_t		 len;
	long		 n;
	uint32_t	 avail = 0;

	if (synth_slurp("/sys/devices/system/cpu/present", &buf, &len) == -1)
		return 0;
	for (p = buf; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p))
			continue;
		n = strtol(p, &p, 10);
		if (n + 1 > (long)avail)
			avail = n + 1;
		p--;
	}
	free(buf);
	return avail;
}

void
synth_rec_begin(struct synth_rec *r, struct sbuf *out, uint32_t type,
    uint16_t misc)
{
	struct perf_event_header	h;

	memset(&h, 0, sizeof h);
	h.type = type;
	h.misc = misc;

	r->out = out;
	r->start = out->len;
	r->failed = 0;
	synth_rec_put(r, &h, sizeof h);
}

/* A feature payload: built like a record, without a record header. */
void
synth_rec_begin_raw(struct synth_rec *r, struct sbuf *out)
{
	r->out = out;
	r->start = out->len;
	r->failed = 0;
}

void
synth_rec_put(struct synth_rec *r, const void *p, size_t n)
{
	if (!r->failed && n != 0 && sbuf_append(r->out, p, n) == NULL)
		r->failed = 1;
}

void
synth_rec_zero(struct synth_rec *r, size_t n)
{
	if (!r->failed && n != 0 && sbuf_zero(r->out, n) == NULL)
		r->failed = 1;
}

void
synth_rec_u32(struct synth_rec *r, uint32_t v)
{
	synth_rec_put(r, &v, sizeof v);
}

void
synth_rec_u64(struct synth_rec *r, uint64_t v)
{
	synth_rec_put(r, &v, sizeof v);
}

/* A string with its NUL, zero-padded to a multiple of align. */
void
synth_rec_str(struct synth_rec *r, const char *s, size_t align)
{
	size_t	n = strlen(s) + 1;

	synth_rec_put(r, s, n);
	synth_rec_zero(r, SYNTH_ALIGN(n, align) - n);
}

/* Zero-pad the record so far to a multiple of align. */
static void
synth_rec_pad(struct synth_rec *r, size_t align)
{
	size_t	n = synth_rec_len(r);

	synth_rec_zero(r, SYNTH_ALIGN(n, align) - n);
}

/* perf's do_write_string: u32 padded length, then the padded string. */
void
synth_rec_lenstr(struct synth_rec *r, const char *s)
{
	synth_rec_u32(r, SYNTH_ALIGN(strlen(s) + 1, PERFDATA_NAME_ALIGN));
	synth_rec_str(r, s, PERFDATA_NAME_ALIGN);
}

size_t
synth_rec_len(const struct synth_rec *r)
{
	return r->out->len - r->start;
}

/* Overwrite bytes already appended, at an offset from the record. */
void
synth_rec_patch(struct synth_rec *r, size_t off, const void *p, size_t n)
{
	if (!r->failed)
		memcpy(r->out->data + r->start + off, p, n);
}

/*
 * Pad to 8 bytes, add a zeroed sample_id of trailer bytes and set the
 * size. -1 with errno ENOMEM, or E2BIG when the record does not fit
 * perf's u16 size; either way the record is gone from the sbuf.
 */
int
synth_rec_end(struct synth_rec *r, size_t trailer)
{
	uint16_t	size;

	synth_rec_pad(r, 8);
	synth_rec_zero(r, trailer);
	if (r->failed) {
		synth_rec_cancel(r);
		errno = ENOMEM;
		return -1;
	}
	if (synth_rec_len(r) > UINT16_MAX) {
		synth_rec_cancel(r);
		errno = E2BIG;
		return -1;
	}
	size = synth_rec_len(r);
	synth_rec_patch(r, offsetof(struct perf_event_header, size), &size,
	    sizeof size);
	return 0;
}

void
synth_rec_cancel(struct synth_rec *r)
{
	r->out->len = r->start;
}

/*
 * synth: the preamble of a trace file (see synth.h and
 * docs/file-format.md). This file owns the order of the parts, the
 * attrs that describe the events themselves, FINISHED_INIT/ROUND and
 * the record builder the other
 * synth-*.c files use. The machine description is in synth-feature.c,
 * the tracefs formats in synth-tracing.c, kernel and tasks in
 * synth-proc.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth-int.h"

static int	synth_attrs(struct sbuf *, const struct synth_ctx *,
		    struct perfdata_header *);
static int	synth_empty(struct sbuf *, uint32_t);

int
synth_preamble(struct sbuf *out, const struct synth_ctx *ctx,
    struct synth_span *tasks)
{
	struct perfdata_header	 hdr;
	size_t			 len = out->len, off;
	int			 saved;

	/* the head's offsets are file offsets: out is the file's start */
	if (ctx->nr_events == 0 || len != 0) {
		errno = EINVAL;
		return -1;
	}

	/*
	 * The head first (header, attrs, features and their table, see
	 * perfdata.h), then the data section's own start: the kernel and
	 * the tasks come before the ring data written after them.
	 */
	memset(&hdr, 0, sizeof hdr);
	hdr.magic = PERFDATA_MAGIC;
	hdr.size = sizeof hdr;
	if (sbuf_zero(out, sizeof hdr) == NULL)
		goto nomem;
	if (synth_attrs(out, ctx, &hdr) == -1)
		goto error;
	if (synth_feature_all(out, ctx, &hdr) == -1)
		goto error;
	hdr.data.offset = out->len;
	memcpy(out->data, &hdr, sizeof hdr);

	if (synth_proc_kernel(out, ctx) == -1)
		goto error;
	/* before any sample that names one of them */
	if (synth_cgroups(out, ctx) == -1)
		goto error;
	off = out->len;
	if (synth_proc_tasks(out, ctx) == -1)
		goto error;
	if (tasks != NULL) {
		tasks->off = off;
		tasks->len = out->len - off;
	}
	if (synth_empty(out, PERF_RECORD_FINISHED_INIT) == -1)
		goto error;
	return 0;

nomem:
	errno = ENOMEM;
error:
	/* Leave the caller's buffer as it was, not with half a preamble. */
	saved = errno;
	out->len = len;
	errno = saved;
	return -1;
}

size_t
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

static int
synth_empty(struct sbuf *out, uint32_t type)
{
	struct synth_rec	r;

	synth_rec_begin(&r, out, type, 0);
	return synth_rec_end(&r, 0);
}

/*
 * Every event's kernel ids, then the attrs, each naming its ids: perf
 * reads attr_size bytes per attr, and perf 6.1 reads the ids section
 * after its own sizeof(attr) whatever attr.size says, so each copy is
 * our full struct with size to match.
 */
static int
synth_attrs(struct sbuf *out, const struct synth_ctx *ctx,
    struct perfdata_header *hdr)
{
	const struct synth_event	*ev;
	struct perfdata_section		 ids;
	struct perf_event_attr		 attr;
	size_t				 i;

	ids.offset = out->len;
	for (i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (ev->nr_ids != 0 && sbuf_append(out, ev->ids,
		    ev->nr_ids * sizeof ev->ids[0]) == NULL)
			goto nomem;
	}
	hdr->attr_size = sizeof attr + sizeof ids;
	hdr->attrs.offset = out->len;
	hdr->attrs.size = ctx->nr_events * hdr->attr_size;
	for (i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		attr = ev->attr;
		attr.size = sizeof attr;
		ids.size = ev->nr_ids * sizeof ev->ids[0];
		if (sbuf_append(out, &attr, sizeof attr) == NULL ||
		    sbuf_append(out, &ids, sizeof ids) == NULL)
			goto nomem;
		ids.offset += ids.size;
	}
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
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
void
synth_rec_pad(struct synth_rec *r, size_t align)
{
	size_t	n = synth_rec_len(r);

	synth_rec_zero(r, SYNTH_ALIGN(n, align) - n);
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

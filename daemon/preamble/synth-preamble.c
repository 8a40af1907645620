/*
 * synth-preamble: the preamble of a trace file (see synth.h and
 * docs/file-format.md): the order of its parts, the attrs that describe
 * the events themselves and FINISHED_INIT. The machine description is
 * synth-feature.c, the tracefs formats synth-tracing.c, kernel and tasks
 * synth-proc.c, cgroups synth-cgroup.c; all of them build their records
 * with synth.c's helpers.
 */
#include <errno.h>
#include <string.h>

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

/*
 * synth-tracing: the tracing_data feature, which carries the tracefs
 * formats perf needs to print the fields of tracepoint samples
 * (PERF_SAMPLE_RAW). Only the tracepoints we record are included.
 *
 * perf's trace_report() reads it field by field straight from the
 * file, so its layout must be exact (trace-event-read.c):
 *
 *	"\027\010\104tracing" "0.6\0" u8 bigendian u8 sizeof(long)
 *	u32 page size
 *	"header_page\0" u64 size, events/header_page
 *	"header_event\0" u64 size, events/header_event
 *	u32 nr ftrace formats, each u64 size + format
 *	u32 nr systems, each "sys\0" u32 nr, each u64 size + format
 *	u32 kallsyms size (0), u32 printk formats size (0)
 *	u64 size, saved_cmdlines
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth-int.h"

static int	synth_tracing_file(struct synth_rec *, const char *,
		    const char *, int);
static int	synth_tracing_system(struct synth_rec *,
		    const struct synth_ctx *, size_t);
static int	synth_tracing_seen(const struct synth_ctx *, size_t, int);
static int	synth_tracing_is_tp(const struct synth_event *);
static int	synth_tracing_is_ftrace(const struct synth_event *);

int
synth_tracing_data(struct synth_rec *r, const struct synth_ctx *ctx)
{
	static const char	 magic[] = { 23, 8, 68, 't', 'r', 'a', 'c',
				     'i', 'n', 'g' };
	const struct synth_event *ev;
	size_t			 i;
	uint32_t		 nr;
	uint8_t			 u8;
	int			 one = 1;

	for (nr = 0, i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (!synth_tracing_is_tp(ev))
			continue;
		/* Without system and name there is no format to read. */
		if (ev->tp_system == NULL || ev->tp_name == NULL) {
			errno = EINVAL;
			return -1;
		}
		nr++;
	}
	if (nr == 0)
		return 1;
	if (ctx->tracefs == NULL) {
		errno = EINVAL;
		return -1;
	}

	synth_rec_put(r, magic, sizeof magic);
	synth_rec_str(r, "0.6", 1);
	u8 = *(char *)&one == 0;
	synth_rec_put(r, &u8, 1);
	u8 = sizeof(long);
	synth_rec_put(r, &u8, 1);
	synth_rec_u32(r, sysconf(_SC_PAGESIZE));

	synth_rec_put(r, "header_page", 12);
	if (synth_tracing_file(r, ctx->tracefs, "events/header_page", 1) == -1)
		return -1;
	synth_rec_put(r, "header_event", 13);
	if (synth_tracing_file(r, ctx->tracefs, "events/header_event", 1) ==
	    -1)
		return -1;

	/* ftrace's own events go in a list of their own, without a name. */
	for (nr = 0, i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (synth_tracing_is_tp(ev) && synth_tracing_is_ftrace(ev) &&
		    !synth_tracing_seen(ctx, i, 0))
			nr++;
	}
	synth_rec_u32(r, nr);
	if (nr != 0 && synth_tracing_system(r, ctx, SIZE_MAX) == -1)
		return -1;

	/* One entry per system, in the order the events first use them. */
	for (nr = 0, i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (synth_tracing_is_tp(ev) && !synth_tracing_is_ftrace(ev) &&
		    !synth_tracing_seen(ctx, i, 1))
			nr++;
	}
	synth_rec_u32(r, nr);
	for (i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (!synth_tracing_is_tp(ev) || synth_tracing_is_ftrace(ev) ||
		    synth_tracing_seen(ctx, i, 1))
			continue;
		synth_rec_str(r, ev->tp_system, 1);
		if (synth_tracing_system(r, ctx, i) == -1)
			return -1;
	}

	/*
	 * perf no longer uses kallsyms here, and printk formats only
	 * decode trace_printk(); saved_cmdlines names pids in fields.
	 */
	synth_rec_u32(r, 0);
	synth_rec_u32(r, 0);
	if (synth_tracing_file(r, ctx->tracefs, "saved_cmdlines", 0) == -1)
		return -1;

	if (r->failed) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int
synth_tracing_is_tp(const struct synth_event *ev)
{
	return ev->attr.type == PERF_TYPE_TRACEPOINT || ev->tp_system != NULL;
}

static int
synth_tracing_is_ftrace(const struct synth_event *ev)
{
	return strcmp(ev->tp_system, "ftrace") == 0;
}

/*
 * Whether an earlier event already covered events[i]: the same system
 * (by_system) or the same tracepoint.
 */
static int
synth_tracing_seen(const struct synth_ctx *ctx, size_t i, int by_system)
{
	const struct synth_event	*ev = &ctx->events[i], *e;
	size_t				 j;

	for (j = 0; j < i; j++) {
		e = &ctx->events[j];
		if (!synth_tracing_is_tp(e))
			continue;
		if (strcmp(e->tp_system, ev->tp_system) != 0)
			continue;
		if (by_system || strcmp(e->tp_name, ev->tp_name) == 0)
			return 1;
	}
	return 0;
}

/*
 * The formats of the distinct tracepoints of the system of events[first]
 * (SIZE_MAX: of "ftrace"), counted, then each as u64 size + text.
 */
static int
synth_tracing_system(struct synth_rec *r, const struct synth_ctx *ctx,
    size_t first)
{
	const struct synth_event	*ev;
	const char			*sys;
	char				 path[4096];
	size_t				 i;
	uint32_t			 nr = 0;

	sys = first == SIZE_MAX ? "ftrace" : ctx->events[first].tp_system;
	for (i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (synth_tracing_is_tp(ev) &&
		    strcmp(ev->tp_system, sys) == 0 &&
		    !synth_tracing_seen(ctx, i, 0))
			nr++;
	}
	/* The ftrace list has its count written by the caller. */
	if (first != SIZE_MAX)
		synth_rec_u32(r, nr);
	for (i = 0; i < ctx->nr_events; i++) {
		ev = &ctx->events[i];
		if (!synth_tracing_is_tp(ev) ||
		    strcmp(ev->tp_system, sys) != 0 ||
		    synth_tracing_seen(ctx, i, 0))
			continue;
		snprintf(path, sizeof path, "events/%s/%s/format",
		    ev->tp_system, ev->tp_name);
		if (synth_tracing_file(r, ctx->tracefs, path, 1) == -1)
			return -1;
	}
	return 0;
}

/*
 * A tracefs file as u64 size + contents. A file that is not required
 * and cannot be read goes in as size 0.
 */
static int
synth_tracing_file(struct synth_rec *r, const char *tracefs,
    const char *name, int required)
{
	char	 path[4096], *buf;
	size_t	 len;

	snprintf(path, sizeof path, "%s/%s", tracefs, name);
	if (synth_slurp(path, &buf, &len) == -1) {
		if (required || errno == ENOMEM)
			return -1;
		synth_rec_u64(r, 0);
		return 0;
	}
	synth_rec_u64(r, len);
	synth_rec_put(r, buf, len);
	free(buf);
	return 0;
}

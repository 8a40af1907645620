/*
 * view: filters, roots and order of the stacks shown (see view.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

/* A view's stacks are counted under no key: the roots are frames. */
static const struct stack_key	 view_nokey = { STACKSET_NONE, STACKSET_NONE,
    STACKSET_NONE, STACKSET_NONE, 0 };

static int
view_in(const char *const *list, size_t n, const char *s)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

/* The cgroup or one below it; "/x" and "x" name the same. */
static int
view_cgroup(const struct opts *o, const char *cg)
{
	const char	*want;
	size_t		 i, n;

	while (*cg == '/')
		cg++;
	for (i = 0; i < o->ncgroups; i++) {
		for (want = o->cgroups[i]; *want == '/'; want++)
			;
		n = strlen(want);
		while (n > 0 && want[n - 1] == '/')
			n--;
		if (n == 0 || (strncmp(cg, want, n) == 0 &&
		    (cg[n] == '\0' || cg[n] == '/')))
			return 1;
	}
	return 0;
}

int
view_match(const struct opts *o, const char *only_host, const char *host,
    const char *comm, const char *event, const char *cgroup, uint32_t pid)
{
	size_t	 i;

	if (only_host != NULL && strcmp(host, only_host) != 0)
		return 0;
	if (o->nhosts > 0 && !view_in(o->hosts, o->nhosts, host))
		return 0;
	if (o->ncomms > 0 && !view_in(o->comms, o->ncomms, comm))
		return 0;
	if (o->nevents > 0 && !view_in(o->events, o->nevents, event))
		return 0;
	if (o->ncgroups > 0 && (cgroup == NULL || !view_cgroup(o, cgroup)))
		return 0;
	if (o->npids > 0) {
		for (i = 0; i < o->npids; i++)
			if (o->pids[i] == pid)
				break;
		if (i == o->npids)
			return 0;
	}
	return 1;
}

static int
view_keep(const struct stackset *all, const struct stack *st,
    const struct opts *o, const char *host)
{
	return view_match(o, host, st->key.host == STACKSET_NONE ? "" :
	    stackset_str(all, st->key.host), stackset_str(all, st->key.comm),
	    stackset_str(all, st->key.event), st->key.cgroup == STACKSET_NONE ?
	    NULL : stackset_str(all, st->key.cgroup), st->key.pid);
}

void
view_note(const char **names, size_t *n, const char *s)
{
	size_t	 i;

	for (i = 0; i < *n && i < VIEW_MAX_NAMES; i++)
		if (strcmp(names[i], s) == 0)
			return;
	if (*n >= VIEW_MAX_NAMES) {
		(*n)++;		/* counted, not named */
		return;
	}
	names[(*n)++] = s;
}

static uint32_t
view_label(struct stackset *v, const struct stackset *all,
    const struct stack *st, enum opts_root r)
{
	char		 buf[512];
	const char	*s;

	switch (r) {
	case OPTS_ROOT_HOST:
		s = st->key.host == STACKSET_NONE ? "[unknown host]" :
		    stackset_str(all, st->key.host);
		break;
	case OPTS_ROOT_CGROUP:
		s = st->key.cgroup == STACKSET_NONE ? "[no cgroup]" :
		    stackset_str(all, st->key.cgroup);
		break;
	case OPTS_ROOT_PID:
		snprintf(buf, sizeof(buf), "%s [%" PRIu32 "]",
		    stackset_str(all, st->key.comm), st->key.pid);
		s = buf;
		break;
	case OPTS_ROOT_EVENT:
		s = stackset_str(all, st->key.event);
		break;
	case OPTS_ROOT_COMM:
	default:
		s = stackset_str(all, st->key.comm);
		break;
	}
	return stackset_intern(v, s, strlen(s), STACK_LABEL);
}

struct stackset *
view_build(const struct stackset *all, const struct opts *o,
    const char *host, struct view_info *info)
{
	struct stackset			*v;
	const struct stack		*st;
	uint32_t			 fr[STACKSET_MAX_FRAMES + OPTS_MAX_ROOTS];
	uint32_t			 n, k, id;
	enum stack_kind			 kind;
	size_t				 i, r;

	memset(info, 0, sizeof(*info));
	if ((v = stackset_create()) == NULL)
		return NULL;
	for (i = 0; i < stackset_nstacks(all); i++) {
		st = stackset_stack(all, i);
		if (!view_keep(all, st, o, host))
			continue;
		n = 0;
		for (r = 0; r < o->nroots; r++) {
			if ((fr[n++] = view_label(v, all, st, o->roots[r])) ==
			    STACKSET_NONE)
				goto error;
		}
		for (k = 0; k < st->nframes; k++) {
			id = st->frames[o->reverse ? st->nframes - 1 - k : k];
			kind = stackset_kind(all, id);
			if ((o->kernel_only && kind != STACK_KERNEL) ||
			    (o->user_only && kind == STACK_KERNEL))
				continue;
			if ((fr[n++] = stackset_intern(v, stackset_str(all, id),
			    strlen(stackset_str(all, id)), kind)) ==
			    STACKSET_NONE)
				goto error;
		}
		/* kernel or user frames only: a sample with none of them
		 * ran elsewhere and is not counted */
		if ((o->kernel_only || o->user_only) && n == o->nroots)
			continue;
		if (stackset_add(v, &view_nokey, fr, n, st->count) == -1)
			goto error;
		view_note(info->hosts, &info->nhosts,
		    st->key.host == STACKSET_NONE ? "?" :
		    stackset_str(all, st->key.host));
		view_note(info->events, &info->nevents,
		    stackset_str(all, st->key.event));
	}
	info->samples = stackset_samples(v);
	return v;
error:
	stackset_free(v);
	return NULL;
}

struct stackset *
view_bound(const struct stackset *v, unsigned int max, uint64_t *cut)
{
	struct stackset			*b;
	const struct stack		*st;
	uint32_t			 fr[STACKSET_MAX_FRAMES + OPTS_MAX_ROOTS];
	uint32_t			 k, n, elide;
	size_t				 i;

	*cut = 0;
	if ((b = stackset_create()) == NULL ||
	    (elide = stackset_intern(b, VIEW_CUT, strlen(VIEW_CUT),
	    STACK_LABEL)) == STACKSET_NONE)
		goto error;
	for (i = 0; i < stackset_nstacks(v); i++) {
		st = stackset_stack(v, i);
		n = 0;
		for (k = 0; k < st->nframes; k++) {
			/* the leaf, and those nearest the root */
			if (max != 0 && st->nframes > max &&
			    k + 1 < st->nframes && k >= max - 2) {
				if (k == max - 2)
					fr[n++] = elide;
				continue;
			}
			if ((fr[n++] = stackset_intern(b, stackset_str(v,
			    st->frames[k]), strlen(stackset_str(v,
			    st->frames[k])), stackset_kind(v, st->frames[k])))
			    == STACKSET_NONE)
				goto error;
		}
		if (n < st->nframes)
			*cut += st->count;
		if (stackset_add(b, &view_nokey, fr, n, st->count) == -1)
			goto error;
	}
	return b;
error:
	stackset_free(b);
	return NULL;
}

static const struct stackset	*view_sort_ss;	/* qsort has no argument */

static int
view_cmp(const void *x, const void *y)
{
	const struct stack	*a = *(const struct stack *const *)x;
	const struct stack	*b = *(const struct stack *const *)y;
	uint32_t		 i;
	int			 c;

	for (i = 0; i < a->nframes && i < b->nframes; i++) {
		if (a->frames[i] == b->frames[i])
			continue;
		if ((c = strcmp(stackset_str(view_sort_ss, a->frames[i]),
		    stackset_str(view_sort_ss, b->frames[i]))) != 0)
			return c;
		/* one name, a kernel and a user frame */
		return a->frames[i] < b->frames[i] ? -1 : 1;
	}
	return a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
}

const struct stack **
view_sort(const struct stackset *v)
{
	const struct stack	**s;
	size_t			  i, n = stackset_nstacks(v);

	if ((s = malloc((n ? n : 1) * sizeof(*s))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		s[i] = stackset_stack(v, i);
	view_sort_ss = v;
	qsort(s, n, sizeof(*s), view_cmp);
	return s;
}

void
view_write_frames(const struct stackset *v, const struct stack *st, FILE *f)
{
	uint32_t	 k;

	if (st->nframes == 0)
		fputs("[no stack]", f);
	for (k = 0; k < st->nframes; k++) {
		if (k > 0)
			fputc(';', f);
		fputs(stackset_str(v, st->frames[k]), f);
	}
}

int
view_write_folded(const struct stackset *v, FILE *f)
{
	const struct stack	**s;
	size_t			  i, n = stackset_nstacks(v);

	if ((s = view_sort(v)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		view_write_frames(v, s[i], f);
		fprintf(f, " %" PRIu64 "\n", s[i]->count);
	}
	free(s);
	return ferror(f) ? -1 : 0;
}

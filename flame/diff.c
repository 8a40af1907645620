/*
 * diff: two views as one differential profile (see diff.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "view.h"

/* Every stack of v into d under side, its frames interned in d. */
static int
diff_add(struct stackset *d, const struct stackset *v, uint32_t side)
{
	const struct stack	*st;
	struct stack_key	 key;
	uint32_t		 frames[STACKSET_MAX_FRAMES], k, id;
	const char		*name;
	size_t			 i;

	memset(&key, 0, sizeof(key));
	key.cgroup = STACKSET_NONE;
	key.pid = side;
	for (i = 0; i < stackset_nstacks(v); i++) {
		st = stackset_stack(v, i);
		for (k = 0; k < st->nframes && k < STACKSET_MAX_FRAMES; k++) {
			name = stackset_str(v, st->frames[k]);
			if ((id = stackset_intern(d, name, strlen(name),
			    stackset_kind(v, st->frames[k]))) == STACKSET_NONE)
				return -1;
			frames[k] = id;
		}
		if (stackset_add(d, &key, frames, k, st->count) == -1)
			return -1;
	}
	return 0;
}

struct stackset *
diff_build(const struct stackset *a, const struct stackset *b)
{
	struct stackset	*d;

	if ((d = stackset_create()) == NULL)
		return NULL;
	if (diff_add(d, a, DIFF_A) == -1 || diff_add(d, b, DIFF_B) == -1) {
		stackset_free(d);
		return NULL;
	}
	return d;
}

/* Do s and t have the same frames? */
static int
diff_same(const struct stack *s, const struct stack *t)
{
	return s->nframes == t->nframes && memcmp(s->frames, t->frames,
	    s->nframes * sizeof(s->frames[0])) == 0;
}

int
diff_write_folded(const struct stackset *d, FILE *f)
{
	const struct stack	**s;
	uint64_t		  c[2];
	size_t			  i, j, n = stackset_nstacks(d);

	if ((s = view_sort(d)) == NULL)
		return -1;
	for (i = 0; i < n; i = j) {
		c[0] = c[1] = 0;
		for (j = i; j < n && diff_same(s[i], s[j]); j++)
			c[s[j]->key.pid == DIFF_B] += s[j]->count;
		view_write_frames(d, s[i], f);
		fprintf(f, " %" PRIu64 " %" PRIu64 "\n", c[0], c[1]);
	}
	free(s);
	return ferror(f) ? -1 : 0;
}

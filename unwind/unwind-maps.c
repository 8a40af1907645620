/*
 * unwind-maps: the address spaces an unwinder models (unwind-int.h):
 * per process a sorted array of mappings, each pointing at its binary,
 * one struct uw_bin per build-id (or per path without one) for all the
 * processes that map it. A mapping replaces what it overlaps, as mmap
 * does; a forked process copies its parent's; exec and exit drop them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

int
uw_space_init(struct uw_space *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->size = 64;
	sp->binsize = 256;
	if ((sp->procs = calloc(sp->size, sizeof(*sp->procs))) == NULL ||
	    (sp->bins = calloc(sp->binsize, sizeof(*sp->bins))) == NULL) {
		free(sp->procs);
		return -1;
	}
	return 0;
}

static void
uw_proc_clear(struct uw_space *sp, struct uw_proc *p)
{
	if (sp->proc_free != NULL && p->priv != NULL)
		sp->proc_free(sp->arg, p);
	p->priv = NULL;
	free(p->maps);
	p->maps = NULL;
	p->nmaps = p->cap = 0;
}

void
uw_space_finish(struct uw_space *sp, void (*bin_free)(void *,
    struct uw_bin *), void *arg)
{
	struct uw_bin	*b, *next;
	size_t		 i;

	for (i = 0; sp->procs != NULL && i < sp->size; i++)
		if (sp->procs[i].used)
			uw_proc_clear(sp, &sp->procs[i]);
	free(sp->procs);
	for (i = 0; sp->bins != NULL && i < sp->binsize; i++)
		for (b = sp->bins[i]; b != NULL; b = next) {
			next = b->next;
			if (bin_free != NULL)
				bin_free(arg, b);
			free(b->path);
			free(b);
		}
	free(sp->bins);
	memset(sp, 0, sizeof(*sp));
}

static size_t
uw_pid_hash(uint32_t pid, size_t size)
{
	return (size_t)(pid * 2654435761u) & (size - 1);
}

static int
uw_procs_grow(struct uw_space *sp)
{
	struct uw_proc	*old = sp->procs, *p;
	size_t		 i, j, oldsize = sp->size;

	if ((p = calloc(oldsize * 2, sizeof(*p))) == NULL)
		return -1;
	sp->procs = p;
	sp->size = oldsize * 2;
	for (i = 0; i < oldsize; i++) {
		if (!old[i].used)
			continue;
		j = uw_pid_hash(old[i].pid, sp->size);
		while (sp->procs[j].used)
			j = (j + 1) & (sp->size - 1);
		sp->procs[j] = old[i];
	}
	free(old);
	return 0;
}

struct uw_proc *
uw_proc_get(struct uw_space *sp, uint32_t pid, int create)
{
	size_t	 j;

	if (create && (sp->nprocs + 1) * 2 > sp->size &&
	    uw_procs_grow(sp) == -1)
		return NULL;
	j = uw_pid_hash(pid, sp->size);
	while (sp->procs[j].used) {
		if (sp->procs[j].pid == pid)
			return &sp->procs[j];
		j = (j + 1) & (sp->size - 1);
	}
	if (!create)
		return NULL;
	memset(&sp->procs[j], 0, sizeof(sp->procs[j]));
	sp->procs[j].used = 1;
	sp->procs[j].pid = pid;
	sp->nprocs++;
	return &sp->procs[j];
}

/* Removes slot p, moving later entries of its cluster back so that
 * every lookup still finds them (linear probing's deletion). */
static void
uw_proc_remove(struct uw_space *sp, struct uw_proc *p)
{
	size_t	 i = (size_t)(p - sp->procs), j = i, k;

	uw_proc_clear(sp, p);
	sp->procs[i].used = 0;
	sp->nprocs--;
	for (;;) {
		j = (j + 1) & (sp->size - 1);
		if (!sp->procs[j].used)
			return;
		k = uw_pid_hash(sp->procs[j].pid, sp->size);
		/* j stays when its home k lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		sp->procs[i] = sp->procs[j];
		sp->procs[j].used = 0;
		sp->procs[j].maps = NULL;
		sp->procs[j].priv = NULL;
		i = j;
	}
}

static uint64_t
uw_bin_hash(const uint8_t *id, size_t len, const char *path)
{
	uint64_t	 h = 1469598103934665603ULL;
	size_t		 i;

	if (len > 0)
		for (i = 0; i < len; i++)
			h = (h ^ id[i]) * 1099511628211ULL;
	else
		for (; *path != '\0'; path++)
			h = (h ^ (uint8_t)*path) * 1099511628211ULL;
	return h;
}

static struct uw_bin *
uw_bin_get(struct uw_space *sp, const struct unwind_map *m)
{
	struct uw_bin	*b;
	size_t		 len = m->build_id != NULL ? m->build_id_len : 0;
	uint64_t	 h;

	if (len > UNWIND_BUILD_ID_MAX)
		len = UNWIND_BUILD_ID_MAX;
	h = uw_bin_hash(m->build_id, len, m->path) & (sp->binsize - 1);
	for (b = sp->bins[h]; b != NULL; b = b->next)
		if (len > 0 ? b->idlen == len && memcmp(b->id, m->build_id,
		    len) == 0 : b->idlen == 0 && strcmp(b->path, m->path) == 0)
			return b;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if ((b->path = strdup(m->path)) == NULL) {
		free(b);
		return NULL;
	}
	if (len > 0)
		memcpy(b->id, m->build_id, len);
	b->idlen = (uint8_t)len;
	b->next = sp->bins[h];
	sp->bins[h] = b;
	sp->nbins++;
	return b;
}

/* Room for n more mappings. */
static int
uw_proc_reserve(struct uw_proc *p, size_t n)
{
	struct uw_map	*tmp;
	size_t		 cap;

	if (p->nmaps + n <= p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 16;
	while (cap < p->nmaps + n)
		cap *= 2;
	if ((tmp = realloc(p->maps, cap * sizeof(*tmp))) == NULL)
		return -1;
	p->maps = tmp;
	p->cap = cap;
	return 0;
}

/* Whether nm replaces one of the n mappings it overlaps by another
 * file, or by the same file at another place. */
static int
uw_maps_replace(const struct uw_map *maps, size_t n, const struct uw_map *nm)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (maps[i].bin != nm->bin || maps[i].start - maps[i].pgoff !=
		    nm->start - nm->pgoff)
			return 1;
	return 0;
}

int
uw_space_map(struct uw_space *sp, const struct unwind_map *m)
{
	struct uw_proc	*p;
	struct uw_bin	*b;
	struct uw_map	 nm, *cut;
	uint64_t	 end;
	size_t		 lo, hi;

	if (m->len == 0 || m->start + m->len < m->start || m->path == NULL)
		return 0;
	end = m->start + m->len;
	if ((p = uw_proc_get(sp, m->pid, 1)) == NULL)
		return -1;
	/* a mapping of the program before its last exec, read after it */
	if (m->time != 0 && m->time < p->exec_time)
		return 0;
	if ((b = uw_bin_get(sp, m)) == NULL || uw_proc_reserve(p, 2) == -1)
		return -1;
	/* the first mapping that ends after start, the first that starts
	 * at or after end: [lo, hi) overlap the new one */
	for (lo = 0; lo < p->nmaps && p->maps[lo].end <= m->start; lo++)
		;
	for (hi = lo; hi < p->nmaps && p->maps[hi].start < end; hi++)
		;
	nm.start = m->start;
	nm.end = end;
	nm.pgoff = m->pgoff;
	nm.time = m->time;
	nm.bin = b;
	/* a mapping into free space, or over the same file at the same
	 * place (ld.so maps a library whole, then its segments over it),
	 * leaves what the unwinder built on the maps valid */
	if (uw_maps_replace(p->maps + lo, hi - lo, &nm))
		p->gen++;
	if (lo < hi && p->maps[lo].start < m->start && p->maps[lo].end > end) {
		/* inside one mapping: it splits in two around the new one */
		memmove(&p->maps[lo + 3], &p->maps[lo + 1],
		    (p->nmaps - lo - 1) * sizeof(*p->maps));
		p->maps[lo + 2] = p->maps[lo];
		p->maps[lo + 2].pgoff += end - p->maps[lo].start;
		p->maps[lo + 2].start = end;
		p->maps[lo].end = m->start;
		p->maps[lo + 1] = nm;
		p->nmaps += 2;
		return 0;
	}
	if (lo < hi && p->maps[lo].start < m->start) {
		p->maps[lo].end = m->start;	/* its head stays */
		lo++;
	}
	if (lo < hi && p->maps[hi - 1].end > end) {
		cut = &p->maps[hi - 1];		/* its tail stays */
		cut->pgoff += end - cut->start;
		cut->start = end;
		hi--;
	}
	/* [lo, hi) are covered whole: the new one takes their place */
	if (hi == lo) {
		memmove(&p->maps[lo + 1], &p->maps[lo],
		    (p->nmaps - lo) * sizeof(*p->maps));
		p->nmaps++;
	} else if (hi > lo + 1) {
		memmove(&p->maps[lo + 1], &p->maps[hi],
		    (p->nmaps - hi) * sizeof(*p->maps));
		p->nmaps -= hi - lo - 1;
	}
	p->maps[lo] = nm;
	return 0;
}

int
uw_space_fork(struct uw_space *sp, uint32_t ppid, uint32_t pid)
{
	struct uw_proc	*parent, *child;
	size_t		 n;

	if (ppid == pid)
		return 0;	/* a thread: the same address space */
	if ((child = uw_proc_get(sp, pid, 1)) == NULL)
		return -1;
	/* the table may have grown: the parent is found after */
	if ((parent = uw_proc_get(sp, ppid, 0)) == NULL)
		return 0;
	uw_proc_clear(sp, child);
	child->gen++;
	if ((n = parent->nmaps) == 0)
		return 0;
	if (uw_proc_reserve(child, n) == -1)
		return -1;
	memcpy(child->maps, parent->maps, n * sizeof(*child->maps));
	child->nmaps = n;
	return 0;
}

void
uw_space_exec(struct uw_space *sp, uint32_t pid, uint64_t time)
{
	struct uw_proc	*p;
	size_t		 i, n = 0;

	if ((p = uw_proc_get(sp, pid, time != 0)) == NULL)
		return;
	/* an exec before the last one, read after it (a program that
	 * execs itself again, as ASan's runtime does): its maps are gone */
	if (time != 0 && time < p->exec_time)
		return;
	p->exec_time = time;
	p->gen++;
	/* the new program's mappings read before its exec stay */
	for (i = 0; time != 0 && i < p->nmaps; i++)
		if (p->maps[i].time > time)
			p->maps[n++] = p->maps[i];
	if (n == 0) {
		uw_proc_clear(sp, p);
		return;
	}
	if (sp->proc_free != NULL && p->priv != NULL)
		sp->proc_free(sp->arg, p);
	p->priv = NULL;
	p->nmaps = n;
}

void
uw_space_exit(struct uw_space *sp, uint32_t pid)
{
	struct uw_proc	*p;

	if ((p = uw_proc_get(sp, pid, 0)) != NULL)
		uw_proc_remove(sp, p);
}

const struct uw_map *
uw_proc_lookup(const struct uw_proc *p, uint64_t addr)
{
	size_t	 lo = 0, hi = p->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nmaps && p->maps[lo].start <= addr ? &p->maps[lo] :
	    NULL;
}

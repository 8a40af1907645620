/*
 * perfread: a trace file's samples into the profile model (see
 * perfread.h). The file is mapped whole; perfcheck walks its data and
 * calls back with each record it finds right. COMM, FORK, MMAP, MMAP2
 * and CGROUP records build the threads, address spaces and cgroups that
 * samples are then read against.
 *
 * In time order, as perf reads them: the CPUs' rings are drained one
 * after another, so a thread's COMM may lie in the file after samples of
 * it that came later. Records wait until a FINISHED_ROUND says that none
 * older than the round before it can follow (perf's ordered events): a
 * record of the mapped file by its place there, one decoded from a
 * COMPRESSED record copied. A round is what the file says it is: past
 * PR_WAIT_MAX records or PR_ARENA_MAX bytes waiting, the older half is
 * read as if a round had finished there (perf's ordered events do the
 * same at their max_size), so that what waits is bounded whatever the
 * file says. docs/flame.md states every bound of a reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata/perf-abi.h"
#include "perfdata/perfcheck.h"
#include "perfdata/perfdata.h"
#include "perfread.h"
#include "rawstack.h"
#include "symbolize.h"

#define PR_PROT_EXEC		4	/* PROT_EXEC of an MMAP2 record */
#define PR_EVENT_NAME_MAX	256
/* a raw DWARF sample: registers and a stack dump to unwind */
#define PR_RAW_DWARF		(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
/* Records waiting for their round (112 bytes each), and the bytes of
 * those decoded from COMPRESSED records: past either, the older half is
 * read without waiting for a FINISHED_ROUND. */
#define PR_WAIT_MAX		(1U << 19)
#define PR_ARENA_MAX		(64U << 20)
/* Frames placed and named (48 bytes each, the table twice that): past
 * it the cache starts again empty. */
#define PR_FRAMES_MAX		(1U << 20)
/* The kernel's mappings are searched whole for the narrowest (nested
 * modules): a kernel has a few hundred; those past this are left out. */
#define PR_KMAPS_MAX		4096
#define PR_NODES_SLAB		4096

/* A record waiting for its turn: its bytes in the round's arena. */
struct pr_ev {
	uint64_t		 time;
	uint64_t		 seq;		/* file order among equal times */
	const uint8_t		*in_map;	/* the record in the file's
						 * map, or NULL: */
	size_t			 off;		/* copied here in the arena
						 * (decoded from COMPRESSED) */
	uint32_t		 size;
	uint32_t		 attr;
	size_t			 cc_off;	/* the callchain's, in the record */
	size_t			 raw_off;	/* the raw data's */
	size_t			 regs_off, stack_off;	/* REGS_USER's and
						 * STACK_USER's */
	struct perfcheck_sample	 smp;		/* a sample's fields */
};

/* A thread: its comm now. */
struct pr_thread {
	uint32_t	 tid;		/* these two first: struct pr_slot */
	int		 used;
	char		*comm;
};

/*
 * Executable mappings, by start: a treap (a search tree balanced by
 * random priorities). A forked child shares its parent's tree by its
 * root (a fork costs one pointer); from then on neither changes a node
 * made before the fork: a change makes new nodes on the paths it
 * touches, O(log n) of them, and leaves the other's tree whole, never a
 * copy of the other's maps. Each node bears the token of the process
 * that made it, which a fork renews for both: a process changes its own
 * nodes in place (a mapping of a process that never forked costs one
 * node). The nodes live until the reading closes.
 */
struct pr_node {
	struct pr_node			*l, *r;
	const struct profile_mapping	*m;
	uint32_t			 prio;
	uint32_t			 tok;
};

struct pr_nodes {
	struct pr_nodes		*next;
	size_t			 n;
	struct pr_node		 node[PR_NODES_SLAB];
};

struct pr_proc {
	uint32_t		 pid;	/* these two first: struct pr_slot */
	int			 used;
	uint32_t		 gen;	/* changes with every change of maps */
	uint32_t		 tok;	/* its nodes': 0 none yet */
	struct pr_node		*maps;	/* NULL: none */
};

struct pr_cgroup {
	uint64_t	 id;
	char		*path;
};

/* A hash index of an array's elements: slot idx - 1, 0 when empty. */
struct pr_hslot {
	uint64_t	 hash;
	size_t		 idx;
};

struct pr_index {
	struct pr_hslot	*s;
	size_t		 size, n;
};

/* A frame already placed and named: (pid, the maps' gen, addr). */
struct pr_frame_ent {
	uint64_t			 addr;
	uint32_t			 pid, gen;
	const struct profile_mapping	*map;
	const char			*sym;
	const char *const		*inl;	/* the frames it stands for */
	size_t				 ninl;	/* (symbolize_inlines); 0: one */
	int				 used;
};

struct pr_bid {
	char		*file;
	uint8_t		 id[PROFILE_BUILD_ID_MAX];
	uint8_t		 len;
};

struct perfread {
	const char		*path;
	uint8_t			*map;
	uint64_t		 size;
	struct perfdata_header	 hdr;
	struct perfdata_section	 feat[PERFDATA_FEAT_MAX];
	struct profile_info	 info;
	char			**events;
	struct pr_bid		*bids;		/* the file's build-id table */
	size_t			 nbids, bids_cap;
	struct pr_index		 bids_ix;	/* by file name */

	struct pr_thread	*threads;	/* open addressing by tid */
	size_t			 threads_size, nthreads;
	struct pr_proc		*procs;		/* by pid */
	size_t			 procs_size, nprocs;
	struct pr_proc		 kernel;	/* pid PROFILE_NONE */
	struct profile_mapping	**all;		/* every mapping, to free */
	size_t			 nall, all_cap, nkmaps;
	struct pr_nodes		*nodes;		/* the maps' trees' */
	uint64_t		 rand;		/* their priorities' */
	uint32_t		 ntok;		/* the last token given */
	struct pr_cgroup	*cgroups;
	size_t			 ncgroups, cgroups_cap;
	struct pr_index		 cgroups_ix;	/* by id */
	struct pr_frame_ent	*frames;	/* the frame cache */
	size_t			 frames_size, nframes;

	/* the walk */
	struct perfcheck	*pc;
	const struct perfread_opts *o;
	struct symbolize	*sy;
	struct rawstack		*rs;		/* NULL: no raw DWARF samples */
	perfread_fn		 fn;
	void			*arg;
	struct profile_stats	*st;
	int			 nomem;
	int			 stop;		/* fn said stop */
	struct pr_ev		*evs;
	size_t			 nevs, evs_cap;
	uint8_t			*arena;
	size_t			 alen, acap;
	uint64_t		 seq, round_max, prev_max;
	/* a file being written: the records before its last FINISHED_ROUND
	 * (seq below round_seq) are those read; its newest time */
	uint64_t		 round_seq, round_end;
	uint64_t		 released;	/* the map's pages let go */
	struct profile_frame	 fbuf[PROFILE_MAX_FRAMES];
};

static uint64_t
pr_hash64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

typedef int	(*pr_index_eq)(const struct perfread *, size_t idx,
		    const void *key);

/*
 * The slot of key (its hash: hash) in x: the one whose element eq says
 * is key, or the empty one where it goes. grow makes room for one more
 * first (NULL when there is no memory for it). Doubled at half full.
 */
static struct pr_hslot *
pr_index_slot(const struct perfread *r, struct pr_index *x, uint64_t hash,
    pr_index_eq eq, const void *key, int grow)
{
	struct pr_hslot	*old = x->s;
	size_t		 i, j, osize = x->size;

	if (grow && (x->n + 1) * 2 > x->size) {
		x->size = osize ? osize * 2 : 64;
		if ((x->s = calloc(x->size, sizeof(*x->s))) == NULL) {
			x->s = old;
			x->size = osize;
			return NULL;
		}
		for (i = 0; i < osize; i++) {
			if (old[i].idx == 0)
				continue;
			j = old[i].hash & (x->size - 1);
			while (x->s[j].idx != 0)
				j = (j + 1) & (x->size - 1);
			x->s[j] = old[i];
		}
		free(old);
	}
	if (x->size == 0)
		return NULL;
	j = hash & (x->size - 1);
	while (x->s[j].idx != 0 && (x->s[j].hash != hash ||
	    !eq(r, x->s[j].idx - 1, key)))
		j = (j + 1) & (x->size - 1);
	return &x->s[j];
}

/* FNV-1a, 64 bits: the head's hash, for companions. */
static uint64_t
pr_fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t	*s = p;

	while (len-- > 0)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h;
}

/* A string of a feature: u32 len, then len bytes NUL-padded. */
static int
pr_lenstr(const uint8_t *p, uint64_t avail, char *buf, size_t blen,
    uint64_t *used)
{
	uint32_t	 len;
	size_t		 n;

	if (avail < 4)
		return -1;
	memcpy(&len, p, 4);
	if (len > avail - 4)
		return -1;
	n = strnlen((const char *)p + 4, len);
	if (n >= blen)
		n = blen - 1;
	memcpy(buf, p + 4, n);
	buf[n] = '\0';
	*used = 4 + (uint64_t)len;
	return 0;
}

static const uint8_t *
pr_feat(const struct perfread *r, unsigned int id, uint64_t *len)
{
	const struct perfdata_section	*s = &r->feat[id];

	if (s->size == 0)
		return NULL;
	*len = s->size;
	return r->map + s->offset;
}

/* The event's name as perf gives it when EVENT_DESC has none. */
static void
pr_event_fallback(uint64_t type, uint64_t config, char *buf, size_t len)
{
	static const char *const sw[] = { "cpu-clock", "task-clock",
	    "page-faults", "context-switches", "cpu-migrations",
	    "minor-faults", "major-faults", "alignment-faults",
	    "emulation-faults", "dummy" };

	if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw) / sizeof(sw[0]))
		snprintf(buf, len, "%s", sw[config]);
	else
		snprintf(buf, len, "event-%llu-%llu", (unsigned long long)type,
		    (unsigned long long)config);
}

static int
pr_events(struct perfread *r)
{
	struct perf_event_attr	 attr;
	const uint8_t		*p;
	uint64_t		 len, off = 8, used, asize, k;
	uint32_t		 nr = 0, sz = 0, nids;
	char			 name[PR_EVENT_NAME_MAX];
	size_t			 i, n = perfcheck_nattrs(r->pc);

	if ((r->events = calloc(n, sizeof(*r->events))) == NULL)
		return -1;
	if ((p = pr_feat(r, PERFDATA_FEAT_EVENT_DESC, &len)) != NULL &&
	    len >= 8) {
		memcpy(&nr, p, 4);
		memcpy(&sz, p + 4, 4);
	}
	for (i = 0; i < nr && i < n && sz >= 8; i++) {
		if (len - off < (uint64_t)sz + 4)
			break;
		off += sz;
		memcpy(&nids, p + off, 4);
		off += 4;
		if (pr_lenstr(p + off, len - off, name, sizeof(name), &used) ==
		    -1)
			break;
		off += used;
		if ((uint64_t)nids * 8 > len - off)
			break;
		off += (uint64_t)nids * 8;
		if ((r->events[i] = strdup(name)) == NULL)
			return -1;
	}
	asize = r->hdr.attr_size - sizeof(struct perfdata_section);
	for (i = 0; i < n; i++) {
		if (r->events[i] != NULL)
			continue;
		memset(&attr, 0, sizeof(attr));
		k = r->hdr.attrs.offset + i * r->hdr.attr_size;
		memcpy(&attr, r->map + k, asize < sizeof(attr) ? asize :
		    sizeof(attr));
		pr_event_fallback(attr.type, attr.config, name, sizeof(name));
		if ((r->events[i] = strdup(name)) == NULL)
			return -1;
	}
	r->info.nattrs = (uint32_t)n;
	r->info.events = (const char *const *)r->events;
	return 0;
}

static int
pr_bid_eq(const struct perfread *r, size_t idx, const void *key)
{
	return strcmp(r->bids[idx].file, key) == 0;
}

/* The build-id table (HEADER_BUILD_ID): each file's id, and the
 * kernel's. */
static int
pr_build_ids(struct perfread *r)
{
	struct perf_record_header_build_id	 b;
	const uint8_t				*p;
	struct pr_bid				*tmp;
	struct pr_hslot				*x;
	uint64_t				 len, off = 0, h;
	size_t					 nl;
	const char				*name;

	if ((p = pr_feat(r, PERFDATA_FEAT_BUILD_ID, &len)) == NULL)
		return 0;
	while (len - off > sizeof(b)) {
		memcpy(&b, p + off, sizeof(b));
		if (b.header.size <= sizeof(b) || b.header.size > len - off)
			break;
		name = (const char *)p + off + sizeof(b);
		nl = strnlen(name, b.header.size - sizeof(b));
		if (nl == b.header.size - sizeof(b))
			break;
		if (!(b.header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE))
			b.size = PROFILE_BUILD_ID_MAX;
		if (b.size > PROFILE_BUILD_ID_MAX)
			b.size = PROFILE_BUILD_ID_MAX;
		if (strcmp(name, "[kernel.kallsyms]") == 0) {
			memcpy(r->info.kernel_build_id, b.build_id, b.size);
			r->info.kernel_build_id_len = b.size;
		}
		if (r->nbids == r->bids_cap) {
			if ((tmp = realloc(r->bids, (r->bids_cap ? r->bids_cap *
			    2 : 64) * sizeof(*tmp))) == NULL)
				return -1;
			r->bids = tmp;
			r->bids_cap = r->bids_cap ? r->bids_cap * 2 : 64;
		}
		tmp = &r->bids[r->nbids];
		if ((tmp->file = strdup(name)) == NULL)
			return -1;
		memcpy(tmp->id, b.build_id, b.size);
		tmp->len = b.size;
		/* the first of a name is the one found, as perf's list */
		h = pr_fnv(0xcbf29ce484222325ULL, name, nl);
		if ((x = pr_index_slot(r, &r->bids_ix, h, pr_bid_eq, name,
		    1)) == NULL)
			return -1;
		if (x->idx == 0) {
			x->hash = h;
			x->idx = r->nbids + 1;
			r->bids_ix.n++;
		}
		r->nbids++;
		off += b.header.size;
	}
	return 0;
}

static const struct pr_bid *
pr_bid_of(struct perfread *r, const char *file)
{
	const struct pr_hslot	*x;

	x = pr_index_slot(r, &r->bids_ix, pr_fnv(0xcbf29ce484222325ULL, file,
	    strlen(file)), pr_bid_eq, file, 0);
	return x != NULL && x->idx != 0 ? &r->bids[x->idx - 1] : NULL;
}

/*
 * A file being written (a .partial: its header still says data size 0,
 * perfdata.h) is read as salvage reads one: its head names the features
 * written with it (host, events, CPUs, compression), and its data runs
 * to the end of what the file holds now. The walk ends at the first
 * record that is not whole yet; what it passes on ends at the last
 * FINISHED_ROUND before that (perfread_walk). The file only grows while
 * it is written, until its finish cuts what follows the data: the walk
 * never reads past the data, so the map stays valid.
 */
static int
perfread_open_live(struct perfread *r)
{
	struct perfdata_layout	 l;

	if (perfdata_parse(r->map, r->size, &l) == -1)
		return -1;
	memcpy(r->feat, l.feat, sizeof(r->feat));
	r->hdr.data.size = r->size - r->hdr.data.offset;
	r->info.live = 1;
	return 0;
}

struct perfread *
perfread_open(const char *path, char *err, size_t errlen)
{
	struct perfread	*r;
	struct stat	 st;
	const uint8_t	*p;
	uint64_t	 len, used, h, t[2];
	unsigned int	 id;
	size_t		 i;
	int		 fd;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->path = path;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1 ||
	    fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto error;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		goto error;
	}
	r->size = (uint64_t)st.st_size;
	if (r->size < sizeof(r->hdr)) {
		snprintf(err, errlen, "too short for a perf.data header");
		goto error;
	}
	if ((r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0)) ==
	    MAP_FAILED) {
		r->map = NULL;
		snprintf(err, errlen, "%s", strerror(errno));
		goto error;
	}
	close(fd);
	fd = -1;
	memcpy(&r->hdr, r->map, sizeof(r->hdr));
	if (r->hdr.magic != PERFDATA_MAGIC || r->hdr.size != sizeof(r->hdr)) {
		snprintf(err, errlen, "not a perf.data file (its magic)");
		goto error;
	}
	if (r->hdr.data.size == 0 && perfread_open_live(r) == 0)
		;	/* being written: its head's features */
	else if (r->hdr.data.size == 0 || r->hdr.data.offset > r->size ||
	    r->hdr.data.size > r->size - r->hdr.data.offset) {
		snprintf(err, errlen, "not a finished trace file (its data "
		    "section)");
		goto error;
	} else
		for (id = 0; id < PERFDATA_FEAT_MAX; id++)
			if (perfdata_feat_find(r->map, r->size, &r->hdr, id,
			    &r->feat[id]) == -1)
				memset(&r->feat[id], 0, sizeof(r->feat[id]));
	if ((r->pc = perfcheck_create(r->map, r->size, &r->hdr, r->feat)) ==
	    NULL) {
		snprintf(err, errlen, "%s", errno == ENOMEM ? "out of memory" :
		    "its attrs cannot be read");
		goto error;
	}
	if (pr_events(r) == -1 || pr_build_ids(r) == -1) {
		snprintf(err, errlen, "out of memory");
		goto error;
	}
	if ((p = pr_feat(r, PERFDATA_FEAT_HOSTNAME, &len)) != NULL)
		pr_lenstr(p, len, r->info.host, sizeof(r->info.host), &used);
	r->info.tracing = pr_feat(r, PERFDATA_FEAT_TRACING_DATA,
	    &r->info.tracing_len);
	if ((p = pr_feat(r, PERFDATA_FEAT_SAMPLE_TIME, &len)) != NULL &&
	    len >= sizeof(t)) {
		memcpy(t, p, sizeof(t));
		r->info.first = t[0];
		r->info.last = t[1];
	}
	for (i = 0; i < r->info.nattrs; i++) {
		h = perfcheck_sample_type(r->pc, i);
		r->info.cgroups |= (h & PERF_SAMPLE_CGROUP) != 0;
		r->info.callchains |= (h & PERF_SAMPLE_CALLCHAIN) != 0;
	}
	/* what identifies the file's content beside its size: its header,
	 * attrs and every feature's bytes */
	h = pr_fnv(0xcbf29ce484222325ULL, &r->hdr, sizeof(r->hdr));
	h = pr_fnv(h, r->map + r->hdr.attrs.offset, r->hdr.attrs.offset <=
	    r->size && r->hdr.attrs.size <= r->size - r->hdr.attrs.offset ?
	    r->hdr.attrs.size : 0);
	for (id = 0; id < PERFDATA_FEAT_MAX; id++)
		if (r->feat[id].size > 0)
			h = pr_fnv(h, r->map + r->feat[id].offset,
			    r->feat[id].size);
	r->info.head_hash = h;
	r->kernel.pid = PROFILE_NONE;
	r->kernel.used = 1;
	/* priorities the file cannot foresee, so that no order of its
	 * mappings unbalances the trees */
	if (getrandom(&r->rand, sizeof(r->rand), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(r->rand))
		r->rand = (uint64_t)(uintptr_t)r ^ (uint64_t)st.st_ino;
	r->rand |= 1;
	return r;
error:
	if (fd != -1)
		close(fd);
	perfread_close(r);
	return NULL;
}

const struct profile_info *
perfread_info(const struct perfread *r)
{
	return &r->info;
}

void
perfread_close(struct perfread *r)
{
	struct pr_nodes	*nodes;
	size_t		 i;

	if (r == NULL)
		return;
	rawstack_destroy(r->rs);
	for (i = 0; i < r->threads_size; i++)
		free(r->threads[i].comm);
	free(r->threads);
	free(r->procs);
	while ((nodes = r->nodes) != NULL) {
		r->nodes = nodes->next;
		free(nodes);
	}
	for (i = 0; i < r->nall; i++) {
		free((char *)r->all[i]->file);
		free(r->all[i]);
	}
	free(r->all);
	for (i = 0; i < r->ncgroups; i++)
		free(r->cgroups[i].path);
	free(r->cgroups);
	free(r->cgroups_ix.s);
	free(r->frames);
	free(r->evs);
	free(r->arena);
	for (i = 0; i < r->nbids; i++)
		free(r->bids[i].file);
	free(r->bids);
	free(r->bids_ix.s);
	for (i = 0; r->events != NULL && i < r->info.nattrs; i++)
		free(r->events[i]);
	free(r->events);
	perfcheck_destroy(r->pc);
	if (r->map != NULL)
		munmap(r->map, r->size);
	free(r);
}

/*
 * Open-addressing tables of threads and processes, doubled at half: one
 * search for both, whose elements begin with the same two members (a
 * u32 key, a used flag: struct pr_slot), read and written by memcpy.
 */
struct pr_slot {
	uint32_t	 key;
	int		 used;
};
_Static_assert(offsetof(struct pr_thread, tid) == offsetof(struct pr_slot,
    key) && offsetof(struct pr_thread, used) == offsetof(struct pr_slot,
    used), "pr_thread begins as pr_slot");
_Static_assert(offsetof(struct pr_proc, pid) == offsetof(struct pr_slot,
    key) && offsetof(struct pr_proc, used) == offsetof(struct pr_slot,
    used), "pr_proc begins as pr_slot");

static void *
pr_slot(void *tabp, size_t *size, size_t *n, size_t stride, size_t first,
    uint32_t key, int create)
{
	unsigned char	**tab = tabp, *old, *e;
	struct pr_slot	 h;
	size_t		 i, j, osize;

	if (create && (*n + 1) * 2 > *size) {
		old = *tab;
		osize = *size;
		if ((*tab = calloc(osize ? osize * 2 : first, stride)) ==
		    NULL) {
			*tab = old;
			return NULL;
		}
		*size = osize ? osize * 2 : first;
		for (i = 0; i < osize; i++) {
			memcpy(&h, old + i * stride, sizeof(h));
			if (!h.used)
				continue;
			j = pr_hash64(h.key) & (*size - 1);
			for (;;) {
				memcpy(&h, *tab + j * stride, sizeof(h));
				if (!h.used)
					break;
				j = (j + 1) & (*size - 1);
			}
			memcpy(*tab + j * stride, old + i * stride, stride);
		}
		free(old);
	}
	if (*size == 0)
		return NULL;
	j = pr_hash64(key) & (*size - 1);
	for (;;) {
		e = *tab + j * stride;
		memcpy(&h, e, sizeof(h));
		if (!h.used || h.key == key)
			break;
		j = (j + 1) & (*size - 1);
	}
	if (!h.used) {
		if (!create)
			return NULL;
		h.key = key;
		h.used = 1;
		memcpy(e, &h, sizeof(h));
		(*n)++;
	}
	return e;
}

static struct pr_thread *
pr_thread(struct perfread *r, uint32_t tid, int create)
{
	return pr_slot(&r->threads, &r->threads_size, &r->nthreads,
	    sizeof(struct pr_thread), 256, tid, create);
}

static struct pr_proc *
pr_proc(struct perfread *r, uint32_t pid, int create)
{
	if (pid == PROFILE_NONE)
		return &r->kernel;
	return pr_slot(&r->procs, &r->procs_size, &r->nprocs,
	    sizeof(struct pr_proc), 64, pid, create);
}

static int
pr_set_comm(struct pr_thread *t, const char *comm)
{
	char	*c;

	if (t->comm != NULL && strcmp(t->comm, comm) == 0)
		return 0;
	if ((c = strdup(comm)) == NULL)
		return -1;
	free(t->comm);
	t->comm = c;
	return 0;
}

/* A node of m over l and r, with prio, of token tok. */
static struct pr_node *
pr_node(struct perfread *r, struct pr_node *l, struct pr_node *rt,
    const struct profile_mapping *m, uint32_t prio, uint32_t tok)
{
	struct pr_nodes	*ns = r->nodes;
	struct pr_node	*n;

	if (ns == NULL || ns->n == PR_NODES_SLAB) {
		if ((ns = malloc(sizeof(*ns))) == NULL)
			return NULL;
		ns->next = r->nodes;
		ns->n = 0;
		r->nodes = ns;
	}
	n = &ns->node[ns->n++];
	n->l = l;
	n->r = rt;
	n->m = m;
	n->prio = prio;
	n->tok = tok;
	return n;
}

/* t, to change: itself when token tok's, else a copy of it that is. */
static struct pr_node *
pr_own(struct perfread *r, struct pr_node *t, uint32_t tok)
{
	return t->tok == tok ? t : pr_node(r, t->l, t->r, t->m, t->prio, tok);
}

/*
 * t split by start: *lo those that start before key, *hi the others;
 * the nodes on the way are tok's (see struct pr_node). -1: out of
 * memory.
 */
static int
pr_split(struct perfread *r, struct pr_node *t, uint64_t key, uint32_t tok,
    struct pr_node **lo, struct pr_node **hi)
{
	struct pr_node	*a, *b;

	if (t == NULL) {
		*lo = *hi = NULL;
		return 0;
	}
	if (t->m->start < key) {
		if (pr_split(r, t->r, key, tok, &a, &b) == -1 ||
		    (t = pr_own(r, t, tok)) == NULL)
			return -1;
		t->r = a;
		*lo = t;
		*hi = b;
	} else {
		if (pr_split(r, t->l, key, tok, &a, &b) == -1 ||
		    (t = pr_own(r, t, tok)) == NULL)
			return -1;
		t->l = b;
		*lo = a;
		*hi = t;
	}
	return 0;
}

/* a then b (every start in a before b's), as one tree. */
static int
pr_merge(struct perfread *r, struct pr_node *a, struct pr_node *b,
    uint32_t tok, struct pr_node **out)
{
	struct pr_node	*c;

	if (a == NULL || b == NULL) {
		*out = a != NULL ? a : b;
		return 0;
	}
	if (a->prio >= b->prio) {
		if (pr_merge(r, a->r, b, tok, &c) == -1 ||
		    (a = pr_own(r, a, tok)) == NULL)
			return -1;
		a->r = c;
		*out = a;
	} else {
		if (pr_merge(r, a, b->l, tok, &c) == -1 ||
		    (b = pr_own(r, b, tok)) == NULL)
			return -1;
		b->l = c;
		*out = b;
	}
	return 0;
}

/* t without its last node (the latest start). */
static int
pr_drop_last(struct perfread *r, struct pr_node *t, uint32_t tok,
    struct pr_node **out)
{
	struct pr_node	*c;

	if (t->r == NULL) {
		*out = t->l;
		return 0;
	}
	if (pr_drop_last(r, t->r, tok, &c) == -1 ||
	    (t = pr_own(r, t, tok)) == NULL)
		return -1;
	t->r = c;
	*out = t;
	return 0;
}

/*
 * m into p: a process's newer mapping replaces what it overlaps (perf
 * splits the older ones; a region mapped anew is the rare case). The
 * kernel's are nested (modules inside the text's wide range): kept all,
 * the narrowest found first, a new one before those of its start.
 */
static int
pr_maps_add(struct perfread *r, struct pr_proc *p,
    const struct profile_mapping *m)
{
	struct pr_node	*lo, *hi, *mid, *last, *n, *t;

	r->rand ^= r->rand << 13;
	r->rand ^= r->rand >> 7;
	r->rand ^= r->rand << 17;
	if (p->tok == 0)
		p->tok = ++r->ntok;
	if (pr_split(r, p->maps, m->start, p->tok, &lo, &hi) == -1)
		return -1;
	if (p->pid != PROFILE_NONE) {
		/* of those before, only the last may reach into m */
		for (last = lo; last != NULL && last->r != NULL; last = last->r)
			;
		if (last != NULL && last->m->end > m->start &&
		    pr_drop_last(r, lo, p->tok, &lo) == -1)
			return -1;
		/* and those that start inside it go */
		if (pr_split(r, hi, m->end, p->tok, &mid, &hi) == -1)
			return -1;
	}
	if ((n = pr_node(r, NULL, NULL, m, (uint32_t)(r->rand >> 32),
	    p->tok)) == NULL || pr_merge(r, lo, n, p->tok, &t) == -1 ||
	    pr_merge(r, t, hi, p->tok, &t) == -1)
		return -1;
	p->maps = t;
	p->gen++;
	return 0;
}

/* The narrowest of t's mappings holding addr, or best: those of the
 * kernel, nested. */
static const struct profile_mapping *
pr_maps_nested(const struct pr_node *t, uint64_t addr,
    const struct profile_mapping *best)
{
	for (; t != NULL; t = t->r) {
		best = pr_maps_nested(t->l, addr, best);
		if (t->m->start > addr)
			break;
		if (addr < t->m->end && (best == NULL || t->m->end -
		    t->m->start < best->end - best->start))
			best = t->m;
	}
	return best;
}

static const struct profile_mapping *
pr_maps_lookup(const struct pr_proc *p, uint64_t addr)
{
	const struct profile_mapping	*best = NULL;
	const struct pr_node		*t;

	if (p->pid == PROFILE_NONE)
		return pr_maps_nested(p->maps, addr, NULL);
	/* the mapping of the latest start not after addr */
	for (t = p->maps; t != NULL; )
		if (t->m->start <= addr) {
			best = t->m;
			t = t->r;
		} else
			t = t->l;
	return best != NULL && addr < best->end ? best : NULL;
}

static int
pr_mmap(struct perfread *r, const uint8_t *rec, size_t size, int v2)
{
	struct perf_event_header	 h;
	struct profile_mapping		*m, **tmp;
	const struct pr_bid		*b;
	struct pr_proc			*p;
	uint32_t			 pid, prot = PR_PROT_EXEC;
	uint64_t			 v[3];
	const char			*name;
	size_t				 fixed = v2 ? 8 + 64 : 8 + 32;
	int				 kernel;

	memcpy(&h, rec, sizeof(h));
	memcpy(&pid, rec + 8, 4);
	memcpy(v, rec + 16, sizeof(v));
	if (v2)
		memcpy(&prot, rec + 8 + 56, 4);
	/* perfcheck: the name is NUL-ended inside the record */
	name = (const char *)rec + fixed;
	(void)size;
	kernel = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
	    PERF_RECORD_MISC_KERNEL;
	if (!(prot & PR_PROT_EXEC) || (!v2 && (h.misc &
	    PERF_RECORD_MISC_MMAP_DATA)) || v[1] == 0 || v[0] + v[1] < v[0])
		return 0;	/* data, not code */
	if (kernel)
		pid = PROFILE_NONE;
	if (kernel && r->nkmaps == PR_KMAPS_MAX)
		return 0;
	if ((p = pr_proc(r, pid, 1)) == NULL)
		return -1;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -1;
	if ((m->file = strdup(name)) == NULL) {
		free(m);
		return -1;
	}
	if (r->nall == r->all_cap) {
		r->all_cap = r->all_cap ? r->all_cap * 2 : 256;
		if ((tmp = realloc(r->all, r->all_cap * sizeof(*tmp))) ==
		    NULL) {
			free((char *)m->file);
			free(m);
			return -1;
		}
		r->all = tmp;
	}
	r->all[r->nall++] = m;
	m->id = (uint32_t)r->nall;
	m->pid = pid;
	m->start = v[0];
	m->end = v[0] + v[1];
	m->pgoff = v[2];
	m->kernel = (uint8_t)kernel;
	if (v2 && (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
	    rec[8 + 32] <= PROFILE_BUILD_ID_MAX) {
		m->build_id_len = rec[8 + 32];
		memcpy(m->build_id, rec + 8 + 36, m->build_id_len);
	} else if ((b = pr_bid_of(r, kernel && strncmp(name,
	    "[kernel.kallsyms]", 17) == 0 ? "[kernel.kallsyms]" : name)) !=
	    NULL) {
		m->build_id_len = b->len;
		memcpy(m->build_id, b->id, b->len);
	}
	if (kernel)
		r->nkmaps++;
	if (pr_maps_add(r, p, m) == -1)
		return -1;
	return r->rs != NULL && !kernel ? rawstack_mmap(r->rs, m) : 0;
}

static int
pr_comm(struct perfread *r, const uint8_t *rec)
{
	struct perf_event_header	 h;
	struct pr_thread		*t;
	struct pr_proc			*p;
	uint32_t			 pid, tid;

	memcpy(&h, rec, sizeof(h));
	memcpy(&pid, rec + 8, 4);
	memcpy(&tid, rec + 12, 4);
	if ((t = pr_thread(r, tid, 1)) == NULL ||
	    pr_set_comm(t, (const char *)rec + 16) == -1)
		return -1;
	/* an exec: the process's old code is gone */
	if ((h.misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    (p = pr_proc(r, pid, 0)) != NULL && p->maps != NULL) {
		p->maps = NULL;
		p->gen++;
	}
	if ((h.misc & PERF_RECORD_MISC_COMM_EXEC) && r->rs != NULL)
		rawstack_exec(r->rs, pid);
	return 0;
}

/* A child has its parent's comm, and a new process its address space. */
static int
pr_fork(struct perfread *r, const uint8_t *rec)
{
	struct pr_thread	*t, *pt;
	struct pr_proc		*p, *pp;
	uint32_t		 v[4];	/* pid, ppid, tid, ptid */
	char			*c;

	memcpy(v, rec + 8, sizeof(v));
	if (r->rs != NULL && rawstack_fork(r->rs, v[1], v[0]) == -1)
		return -1;
	if ((pt = pr_thread(r, v[3], 0)) != NULL && pt->comm != NULL) {
		if ((c = strdup(pt->comm)) == NULL ||
		    (t = pr_thread(r, v[2], 1)) == NULL) {
			free(c);
			return -1;
		}
		free(t->comm);
		t->comm = c;
	}
	/* the kernel's maps are nested, a process's never */
	if (v[0] == v[1] || v[0] == PROFILE_NONE || v[1] == PROFILE_NONE ||
	    (pp = pr_proc(r, v[1], 0)) == NULL || pp->maps == NULL)
		return 0;
	if ((p = pr_proc(r, v[0], 1)) == NULL)
		return -1;
	pp = pr_proc(r, v[1], 0);	/* the table may have moved */
	/* shared: new tokens, so that neither changes the other's nodes */
	p->maps = pp->maps;
	p->tok = ++r->ntok;
	pp->tok = ++r->ntok;
	p->gen++;
	return 0;
}

static int
pr_cgroup_eq(const struct perfread *r, size_t idx, const void *key)
{
	return r->cgroups[idx].id == *(const uint64_t *)key;
}

static int
pr_cgroup(struct perfread *r, const uint8_t *rec)
{
	struct pr_cgroup	*tmp;
	struct pr_hslot		*x;
	uint64_t		 id;
	size_t			 i;

	memcpy(&id, rec + 8, 8);
	if ((x = pr_index_slot(r, &r->cgroups_ix, pr_hash64(id), pr_cgroup_eq,
	    &id, 1)) == NULL)
		return -1;
	i = x->idx != 0 ? x->idx - 1 : r->ncgroups;
	if (i == r->ncgroups) {
		if (r->ncgroups == r->cgroups_cap) {
			r->cgroups_cap = r->cgroups_cap ? r->cgroups_cap * 2 :
			    64;
			if ((tmp = realloc(r->cgroups, r->cgroups_cap *
			    sizeof(*tmp))) == NULL)
				return -1;
			r->cgroups = tmp;
		}
		r->cgroups[i].id = id;
		r->cgroups[i].path = NULL;
		r->ncgroups++;
		x->hash = pr_hash64(id);
		x->idx = i + 1;
		r->cgroups_ix.n++;
	}
	free(r->cgroups[i].path);
	return (r->cgroups[i].path = strdup((const char *)rec + 16)) == NULL ?
	    -1 : 0;
}

static const char *
pr_cgroup_path(struct perfread *r, uint64_t id)
{
	const struct pr_hslot	*x;

	x = pr_index_slot(r, &r->cgroups_ix, pr_hash64(id), pr_cgroup_eq, &id,
	    0);
	return x != NULL && x->idx != 0 ? r->cgroups[x->idx - 1].path : NULL;
}

/* The frame cache: where an address lies and its name, found once. */
static struct pr_frame_ent *
pr_frame_slot(struct perfread *r, uint32_t pid, uint32_t gen, uint64_t addr)
{
	struct pr_frame_ent	*old, *e;
	size_t			 i, j, osize;

	if (r->nframes == PR_FRAMES_MAX) {
		/* a cache: what it forgets is found again */
		memset(r->frames, 0, r->frames_size * sizeof(*r->frames));
		r->nframes = 0;
	}
	if ((r->nframes + 1) * 2 > r->frames_size) {
		old = r->frames;
		osize = r->frames_size;
		r->frames_size = osize ? osize * 2 : 4096;
		if ((r->frames = calloc(r->frames_size, sizeof(*e))) == NULL) {
			r->frames = old;
			r->frames_size = osize;
			return NULL;
		}
		for (i = 0; i < osize; i++) {
			if (!old[i].used)
				continue;
			j = pr_hash64(old[i].addr ^ ((uint64_t)old[i].pid <<
			    32 | old[i].gen)) & (r->frames_size - 1);
			while (r->frames[j].used)
				j = (j + 1) & (r->frames_size - 1);
			r->frames[j] = old[i];
		}
		free(old);
	}
	j = pr_hash64(addr ^ ((uint64_t)pid << 32 | gen)) &
	    (r->frames_size - 1);
	while (r->frames[j].used && (r->frames[j].addr != addr ||
	    r->frames[j].pid != pid || r->frames[j].gen != gen))
		j = (j + 1) & (r->frames_size - 1);
	return &r->frames[j];
}

static int
pr_frame(struct perfread *r, uint32_t pid, uint64_t addr, int kernel,
    uint32_t *n)
{
	struct profile_frame	*f = &r->fbuf[*n];
	size_t			 i;
	const struct pr_proc	*p = pr_proc(r, kernel ? PROFILE_NONE : pid,
	    0);
	struct pr_frame_ent	*e;
	uint32_t		 kpid = kernel ? PROFILE_NONE : pid;

	f->addr = addr;
	f->kernel = (uint8_t)kernel;
	if ((e = pr_frame_slot(r, kpid, p != NULL ? p->gen : 0, addr)) ==
	    NULL)
		return -1;
	if (!e->used) {
		e->used = 1;
		e->addr = addr;
		e->pid = kpid;
		e->gen = p != NULL ? p->gen : 0;
		e->map = p != NULL ? pr_maps_lookup(p, addr) : NULL;
		f->map = e->map;
		f->offset = e->map != NULL ? addr - e->map->start +
		    e->map->pgoff : 0;
		f->sym = NULL;
		e->sym = r->sy != NULL && !r->o->no_symbols ?
		    symbolize_frame(r->sy, pid, f) : NULL;
		e->ninl = e->sym != NULL ? symbolize_inlines(r->sy, f,
		    &e->inl) : 0;
		r->nframes++;
	}
	f->map = e->map;
	f->offset = e->map != NULL ? addr - e->map->start + e->map->pgoff : 0;
	f->sym = e->sym;
	f->inlined = 0;
	(*n)++;
	/* a frame with functions inlined at its address: one each, leaf
	 * first, at the same address */
	if (e->ninl > 0) {
		f->sym = e->inl[0];
		f->inlined = e->ninl > 1;
	}
	for (i = 1; i < e->ninl && *n < PROFILE_MAX_FRAMES; i++) {
		r->fbuf[*n] = *f;
		r->fbuf[*n].sym = e->inl[i];
		r->fbuf[(*n)++].inlined = i + 1 < e->ninl;
	}
	return 0;
}

static int
pr_wanted_pid(const struct perfread_opts *o, uint32_t pid)
{
	size_t	 i;

	if (o->npids == 0)
		return 1;
	for (i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return 1;
	return 0;
}

static int
pr_sample(struct perfread *r, const uint8_t *rec, size_t attr,
    const struct perfcheck_sample *s)
{
	struct profile_sample		 ps;
	struct perf_event_header	 h;
	const struct pr_thread		*t;
	char				 unknown[16];
	const uint8_t			*cc = s->callchain;
	uint64_t			 a, i, nr = s->nr;
	uint32_t			 n = 0;
	int				 kernel;

	r->st->read++;
	if (s->time < r->o->tmin || s->time >= r->o->tmax ||
	    !pr_wanted_pid(r->o, s->pid))
		return 0;
	memcpy(&h, rec, sizeof(h));
	memset(&ps, 0, sizeof(ps));
	ps.time = s->time;
	ps.period = s->period;
	ps.pid = s->pid;
	ps.tid = s->tid;
	ps.cpu = s->cpu;
	ps.attr = (uint32_t)attr;
	ps.event = attr < r->info.nattrs ? r->events[attr] : "";
	if ((t = pr_thread(r, s->tid, 0)) != NULL && t->comm != NULL)
		ps.comm = t->comm;
	else if (s->tid == 0)
		ps.comm = "swapper";	/* the idle task, as perf names it */
	else {
		/* perf's name of a thread it saw no COMM of */
		snprintf(unknown, sizeof(unknown), ":%u", s->tid);
		ps.comm = unknown;
	}
	ps.cgroup_id = s->cgroup;
	ps.cgroup = s->cgroup != 0 ? pr_cgroup_path(r, s->cgroup) : NULL;
	ps.raw = s->raw;
	ps.raw_size = s->raw_size;
	kernel = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
	    PERF_RECORD_MISC_KERNEL;
	if (r->rs != NULL && rawstack_has(s))
		cc = (const uint8_t *)rawstack_join(r->rs, s, kernel, &nr);
	if (cc == NULL) {
		if (pr_frame(r, s->pid, s->ip, kernel, &n) == -1)
			return -1;
	}
	for (i = 0; cc != NULL && i < nr; i++) {
		memcpy(&a, cc + i * 8, 8);
		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			/* a context marker: whose frames follow */
			kernel = a == (uint64_t)PERF_CONTEXT_KERNEL ||
			    a == (uint64_t)PERF_CONTEXT_GUEST_KERNEL;
			continue;
		}
		if (n == PROFILE_MAX_FRAMES)
			break;	/* deeper than we keep: the leaf side stays */
		if (pr_frame(r, s->pid, a, kernel, &n) == -1)
			return -1;
	}
	ps.nframes = n;
	ps.frames = r->fbuf;
	r->st->samples++;
	if (s->time != 0 && (r->st->first == 0 || s->time < r->st->first))
		r->st->first = s->time;
	if (s->time > r->st->last)
		r->st->last = s->time;
	return r->fn(r->arg, &ps);
}

/* One record, in its turn. */
static int
pr_record(struct perfread *r, const uint8_t *rec, size_t size, size_t attr,
    const struct perfcheck_sample *smp)
{
	struct perf_event_header	 h;
	uint64_t			 lost;

	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		return pr_sample(r, rec, attr, smp);
	case PERF_RECORD_MMAP:
		return pr_mmap(r, rec, size, 0);
	case PERF_RECORD_MMAP2:
		return pr_mmap(r, rec, size, 1);
	case PERF_RECORD_COMM:
		return pr_comm(r, rec);
	case PERF_RECORD_FORK:
		return pr_fork(r, rec);
	case PERF_RECORD_CGROUP:
		return pr_cgroup(r, rec);
	case PERF_RECORD_LOST:
		if (size >= 24) {
			memcpy(&lost, rec + 16, sizeof(lost));
			r->st->lost += lost;
		}
		return 0;
	}
	return 0;
}

static int
pr_ev_cmp(const void *a, const void *b)
{
	const struct pr_ev	*x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
pr_ev_off_cmp(const void *a, const void *b)
{
	const struct pr_ev	*x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The waiting records up to limit, in time order; the rest wait on. */
static int
pr_flush(struct perfread *r, uint64_t limit)
{
	struct perfcheck_sample	 smp;
	struct pr_ev		*e;
	const uint8_t		*rec;
	size_t			 i, keep = 0, alen = 0;

	if (r->nevs == 0)
		return 0;
	qsort(r->evs, r->nevs, sizeof(*r->evs), pr_ev_cmp);
	for (i = 0; i < r->nevs && r->evs[i].time <= limit; i++) {
		e = &r->evs[i];
		rec = e->in_map != NULL ? e->in_map : r->arena + e->off;
		smp = e->smp;
		if (e->cc_off != SIZE_MAX)
			smp.callchain = rec + e->cc_off;
		if (e->raw_off != SIZE_MAX)
			smp.raw = rec + e->raw_off;
		if (e->regs_off != SIZE_MAX)
			smp.regs = rec + e->regs_off;
		if (e->stack_off != SIZE_MAX)
			smp.stack = rec + e->stack_off;
		if (pr_record(r, rec, e->size, e->attr, &smp) == -1)
			return -1;
	}
	/* the later ones move to the front of the arena: in the order
	 * they lie there, so that none overwrites one still to move */
	memmove(r->evs, r->evs + i, (r->nevs - i) * sizeof(*r->evs));
	keep = r->nevs - i;
	qsort(r->evs, keep, sizeof(*r->evs), pr_ev_off_cmp);
	for (i = 0; i < keep; i++) {
		e = &r->evs[i];
		if (e->in_map != NULL)
			continue;
		memmove(r->arena + alen, r->arena + e->off, e->size);
		e->off = alen;
		alen += e->size;
	}
	r->nevs = keep;
	r->alen = alen;
	return 0;
}

/*
 * The pages of the map before rec (where the walk is) and before every
 * record still waiting are read for good: let go of them, so that what
 * stays resident of the file is a round's, not all read so far (the page
 * cache keeps them as the kernel likes).
 */
static void
pr_release(struct perfread *r, const uint8_t *rec)
{
	uint64_t	 pg = (uint64_t)sysconf(_SC_PAGESIZE), upto;
	size_t		 i;

	if (rec < r->map || rec >= r->map + r->size)
		return;	/* decoded from a COMPRESSED record */
	for (i = 0; i < r->nevs; i++)
		if (r->evs[i].in_map != NULL && r->evs[i].in_map < rec)
			rec = r->evs[i].in_map;
	upto = (uint64_t)(rec - r->map) & ~(pg - 1);
	if (upto > r->released && madvise(r->map + r->released, upto -
	    r->released, MADV_DONTNEED) == 0)
		r->released = upto;
}

/* The time that splits the waiting records in two halves. */
static uint64_t
pr_half(struct perfread *r)
{
	qsort(r->evs, r->nevs, sizeof(*r->evs), pr_ev_cmp);
	return r->evs[r->nevs / 2].time;
}

static int
pr_visit(void *arg, const uint8_t *rec, size_t size, size_t attr)
{
	struct perfread			*r = arg;
	const struct perfcheck_sample	*smp;
	struct perf_event_header	 h;
	struct pr_ev			*e;
	const uint8_t			*in_map;
	void				*tmp;
	size_t				 cap;

	memcpy(&h, rec, sizeof(h));
	r->st->records++;
	if (h.type == PERF_RECORD_FINISHED_ROUND) {
		/* nothing older than the last round's newest is to come */
		if (pr_flush(r, r->prev_max) == -1)
			goto fail;
		r->prev_max = r->round_max;
		r->round_seq = r->seq;
		r->round_end = r->round_max;
		pr_release(r, rec);
		return 0;
	}
	if (h.type != PERF_RECORD_SAMPLE && h.type != PERF_RECORD_MMAP &&
	    h.type != PERF_RECORD_MMAP2 && h.type != PERF_RECORD_COMM &&
	    h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_CGROUP &&
	    h.type != PERF_RECORD_LOST)
		return 0;
	in_map = rec >= r->map && rec < r->map + r->size ? rec : NULL;
	/* too many waiting: the older half goes as if a round ended */
	while (r->nevs > 0 && (r->nevs == PR_WAIT_MAX || (in_map == NULL &&
	    r->alen + size > PR_ARENA_MAX))) {
		if (pr_flush(r, pr_half(r)) == -1)
			goto fail;
		pr_release(r, rec);
	}
	if (r->nevs == r->evs_cap) {
		cap = r->evs_cap ? r->evs_cap * 2 : 4096;
		if ((tmp = realloc(r->evs, cap * sizeof(*r->evs))) == NULL)
			goto nomem;
		r->evs = tmp;
		r->evs_cap = cap;
	}
	/* a record of the file stays where it is, mapped; one decoded
	 * from a COMPRESSED record is copied (perfcheck reuses its buffer) */
	if (in_map == NULL && r->alen + size > r->acap) {
		cap = r->acap ? r->acap * 2 : 1 << 20;
		while (cap < r->alen + size)
			cap *= 2;
		if ((tmp = realloc(r->arena, cap)) == NULL)
			goto nomem;
		r->arena = tmp;
		r->acap = cap;
	}
	e = &r->evs[r->nevs++];
	memset(e, 0, sizeof(*e));
	e->time = perfcheck_record_time(r->pc);
	e->seq = r->seq++;
	e->in_map = in_map;
	e->off = r->alen;
	e->size = (uint32_t)size;
	e->attr = (uint32_t)attr;
	e->cc_off = e->raw_off = e->regs_off = e->stack_off = SIZE_MAX;
	if (h.type == PERF_RECORD_SAMPLE) {
		smp = perfcheck_sample_fields(r->pc);
		e->smp = *smp;
		if (smp->callchain != NULL)
			e->cc_off = (size_t)(smp->callchain - rec);
		if (smp->raw != NULL)
			e->raw_off = (size_t)(smp->raw - rec);
		if (smp->regs != NULL)
			e->regs_off = (size_t)(smp->regs - rec);
		if (smp->stack != NULL)
			e->stack_off = (size_t)(smp->stack - rec);
	}
	if (in_map == NULL) {
		memcpy(r->arena + r->alen, rec, size);
		r->alen += size;
	}
	if (e->time > r->round_max)
		r->round_max = e->time;
	return 0;
nomem:
	errno = ENOMEM;
fail:
	if (errno == ENOMEM)
		r->nomem = 1;
	else
		r->stop = 1;
	return -1;
}

/* A file being written: the records of its open round are left out. */
static void
pr_drop_open_round(struct perfread *r)
{
	size_t	 i, n = 0;

	for (i = 0; i < r->nevs; i++)
		if (r->evs[i].seq < r->round_seq)
			r->evs[n++] = r->evs[i];
	r->nevs = n;
}

int
perfread_walk(struct perfread *r, const struct perfread_opts *o,
    struct symbolize *sy, perfread_fn fn, void *arg,
    struct profile_stats *st, char *err, size_t errlen)
{
	struct perfcheck_stats	 cs;
	uint64_t		 end = r->hdr.data.offset + r->hdr.data.size;
	uint64_t		 stop;
	size_t			 i;

	memset(st, 0, sizeof(*st));
	memset(&cs, 0, sizeof(cs));
	/* raw DWARF samples: their user stacks are unwound as they come */
	rawstack_destroy(r->rs);
	r->rs = NULL;
	for (i = 0; i < r->info.nattrs && r->rs == NULL; i++)
		if ((perfcheck_sample_type(r->pc, i) & PR_RAW_DWARF) ==
		    PR_RAW_DWARF && (r->rs = rawstack_create(o->verbose)) ==
		    NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	r->o = o;
	r->sy = sy;
	r->fn = fn;
	r->arg = arg;
	r->st = st;
	r->nomem = r->stop = 0;
	r->nevs = r->alen = 0;
	r->seq = r->round_max = r->prev_max = r->released = 0;
	r->round_seq = r->round_end = 0;
	perfcheck_visit(r->pc, pr_visit, r);
	stop = perfcheck_walk(r->pc, r->map, end, r->hdr.data.offset, &cs);
	perfcheck_visit(r->pc, NULL, NULL);
	if (r->info.live && !r->nomem && !r->stop) {
		/* the rounds that are whole: a record after the last
		 * FINISHED_ROUND may be one the writer has not finished */
		pr_drop_open_round(r);
		stop = end;
		st->end = r->round_end;
	} else
		st->end = st->last;
	/* the rest, when the whole data was read */
	if (stop == end && !r->nomem && !r->stop &&
	    pr_flush(r, UINT64_MAX) == -1) {
		if (errno == ENOMEM)
			r->nomem = 1;
		else
			r->stop = 1;
	}
	if (r->nomem) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (r->stop) {
		snprintf(err, errlen, "stopped by its reader");
		return -1;
	}
	if (stop < end) {
		snprintf(err, errlen, "%s", perfcheck_why(r->pc));
		return -1;
	}
	return 0;
}

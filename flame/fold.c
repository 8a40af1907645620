/*
 * fold: samples into a stackset (see fold.h).
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "jitsym.h"
#include "offcpu.h"
#include "perfread.h"
#include "symbolize.h"

#define FOLD_PROGRESS_EVERY	4096
#define FOLD_NAME_MAX		1024

/* A frame's name by what it points at: the symbol's string, or (no
 * symbol) the mapping; both live as long as the file's reader. */
struct fold_ptr {
	const void	*p;
	uint32_t	 id;
	uint8_t		 kind;		/* 0 sym, 1 mapping, 2 none */
	uint8_t		 kernel;
	uint8_t		 used;
};

struct fold {
	struct stackset		*ss;
	struct fold_opts	 o;
	struct fold_stats	 st;
	struct fold_ptr		*tab;
	size_t			 tab_size, ntab;
	uint32_t		*events;	/* string id by attr */
	size_t			 nevents;
	uint32_t		 frames[STACKSET_MAX_FRAMES];
};

size_t
fold_name(char *buf, size_t len, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i, o = 0;
	unsigned char		 c;

	for (i = 0; i < n && o + 5 < len; i++) {
		c = (unsigned char)s[i];
		if (c == ';')
			buf[o++] = ':';
		else if (c < 0x20 || c == 0x7f) {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		} else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return o;
}

/* s interned as a name: escaped only when it has to be. */
static uint32_t
fold_intern(struct stackset *ss, const char *s, enum stack_kind kind)
{
	char		 buf[FOLD_NAME_MAX];
	size_t		 n = strlen(s), i;

	for (i = 0; i < n; i++)
		if (s[i] == ';' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			break;
	if (i == n)
		return stackset_intern(ss, s, n, kind);
	n = fold_name(buf, sizeof(buf), s, n);
	return stackset_intern(ss, buf, n, kind);
}

struct fold *
fold_create(struct stackset *ss, const struct fold_opts *o)
{
	struct fold	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->ss = ss;
	f->o = *o;
	return f;
}

void
fold_free(struct fold *f)
{
	if (f == NULL)
		return;
	free(f->tab);
	free(f->events);
	free(f);
}

void
fold_end(struct fold *f, struct fold_stats *st)
{
	if (st != NULL)
		*st = f->st;
}

static size_t
fold_ptr_hash(const void *p, int kind, int kernel)
{
	uint64_t	 h = (uint64_t)(uintptr_t)p ^ (uint64_t)kind << 1 ^
	    (uint64_t)kernel;

	h *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20);
}

static int
fold_ptr_grow(struct fold *f)
{
	struct fold_ptr	*old = f->tab, *t;
	size_t		 i, j, osize = f->tab_size;

	f->tab_size = osize ? osize * 2 : 1024;
	if ((f->tab = calloc(f->tab_size, sizeof(*t))) == NULL) {
		f->tab = old;
		f->tab_size = osize;
		return -1;
	}
	for (i = 0; i < osize; i++) {
		if (!old[i].used)
			continue;
		j = fold_ptr_hash(old[i].p, old[i].kind, old[i].kernel) &
		    (f->tab_size - 1);
		while (f->tab[j].used)
			j = (j + 1) & (f->tab_size - 1);
		f->tab[j] = old[i];
	}
	free(old);
	return 0;
}

size_t
fold_nosym_name(char *buf, size_t len, const struct profile_frame *fr)
{
	const char	*file, *base;

	if (fr->map == NULL)
		return fold_name(buf, len, "[unknown]", 9);
	file = fr->map->file;
	if (fr->kernel && (strncmp(file, "[kernel.kallsyms]", 17) == 0 ||
	    file[0] != '['))
		return fold_name(buf, len, "[kernel.kallsyms]", 17);
	base = strrchr(file, '/');
	base = base != NULL && base[1] != '\0' ? base + 1 : file;
	if (base[0] == '[')
		return fold_name(buf, len, base, strlen(base));
	if (len < 3) {
		buf[0] = '\0';
		return 0;
	}
	buf[0] = '[';
	len = fold_name(buf + 1, len - 2, base, strlen(base)) + 1;
	buf[len++] = ']';
	buf[len] = '\0';
	return len;
}

/* What perf shows for a frame without a symbol: its file, bracketed. */
static uint32_t
fold_nosym(struct fold *f, const struct profile_frame *fr)
{
	char		 buf[FOLD_NAME_MAX];
	size_t		 n = fold_nosym_name(buf, sizeof(buf), fr);

	return stackset_intern(f->ss, buf, n, fr->kernel ? STACK_KERNEL :
	    STACK_USER);
}

static uint32_t
fold_frame(struct fold *f, const struct profile_frame *fr)
{
	struct fold_ptr	*e;
	const void	*p;
	size_t		 j;
	int		 kind;

	p = fr->sym != NULL ? (const void *)fr->sym : (const void *)fr->map;
	kind = fr->sym != NULL ? 0 : fr->map != NULL ? 1 : 2;
	if ((f->ntab + 1) * 2 > f->tab_size && fold_ptr_grow(f) == -1)
		return STACKSET_NONE;
	j = fold_ptr_hash(p, kind, fr->kernel) & (f->tab_size - 1);
	for (; f->tab[j].used; j = (j + 1) & (f->tab_size - 1)) {
		e = &f->tab[j];
		if (e->p == p && e->kind == kind && e->kernel == fr->kernel)
			return e->id;
	}
	e = &f->tab[j];
	e->id = fr->sym != NULL ? fold_intern(f->ss, fr->sym, fr->kernel ?
	    STACK_KERNEL : STACK_USER) : fold_nosym(f, fr);
	if (e->id == STACKSET_NONE)
		return STACKSET_NONE;
	e->p = p;
	e->kind = (uint8_t)kind;
	e->kernel = fr->kernel;
	e->used = 1;
	f->ntab++;
	return e->id;
}

static uint32_t
fold_event(struct fold *f, const struct profile_sample *s)
{
	uint32_t	*tmp;
	size_t		 i;

	if (s->attr >= f->nevents) {
		if (s->attr >= 4096)
			return fold_intern(f->ss, s->event, STACK_LABEL);
		if ((tmp = realloc(f->events, (s->attr + 1) * sizeof(*tmp))) ==
		    NULL)
			return STACKSET_NONE;
		for (i = f->nevents; i <= s->attr; i++)
			tmp[i] = STACKSET_NONE;
		f->events = tmp;
		f->nevents = s->attr + 1;
	}
	if (f->events[s->attr] == STACKSET_NONE)
		f->events[s->attr] = fold_intern(f->ss, s->event, STACK_LABEL);
	return f->events[s->attr];
}

int
fold_sample(void *arg, const struct profile_sample *s)
{
	struct fold		*f = arg;
	struct stack_key	 key;
	uint32_t		 i, n = s->nframes;

	f->st.read++;
	if (s->time < f->o.tmin || s->time >= f->o.tmax)
		return 0;
	f->st.kept++;
	if (f->o.progress != NULL && f->st.kept % FOLD_PROGRESS_EVERY == 0)
		f->o.progress(f->o.progress_arg, f->st.kept);
	if (s->time != 0 && (f->st.first == 0 || s->time < f->st.first))
		f->st.first = s->time;
	if (s->time > f->st.last)
		f->st.last = s->time;
	if (n > STACKSET_MAX_FRAMES)
		n = STACKSET_MAX_FRAMES;
	key.host = f->o.host;
	key.pid = s->pid;
	key.cgroup = STACKSET_NONE;
	if ((key.event = fold_event(f, s)) == STACKSET_NONE ||
	    (key.comm = fold_intern(f->ss, s->comm, STACK_LABEL)) ==
	    STACKSET_NONE ||
	    (s->cgroup != NULL && (key.cgroup = fold_intern(f->ss, s->cgroup,
	    STACK_LABEL)) == STACKSET_NONE))
		goto nomem;
	/* root first */
	for (i = 0; i < n; i++)
		if ((f->frames[n - 1 - i] = fold_frame(f, &s->frames[i])) ==
		    STACKSET_NONE)
			goto nomem;
	if (stackset_add(f->ss, &key, f->frames, n, f->o.off_cpu ? s->period :
	    1) == -1)
		goto nomem;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

int
fold_read(const char *path, const struct perfread_opts *ro, perfread_fn fn,
    void *arg, int verbose, struct profile_stats *ps, uint64_t *head_hash,
    char *err, size_t errlen)
{
	const struct profile_info	*pi;
	struct perfread_opts		 o = *ro;
	struct perfread			*r;
	struct symbolize		*sy = NULL;
	struct jitsym			*jit = NULL;
	struct offcpu			*oc = NULL;
	int				 rv = -1;

	if ((r = perfread_open(path, err, errlen)) == NULL)
		return -1;
	pi = perfread_info(r);
	if ((sy = symbolize_create(pi->kernel_build_id,
	    pi->kernel_build_id_len, verbose, ro->names)) == NULL) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		goto out;
	}
	/* the JIT maps the daemon copied beside the file */
	if ((jit = jitsym_load(path)) == NULL && errno != ENOENT)
		warn("%s%s: not used", path, JITSYM_SUFFIX);
	symbolize_use_copies(sy, jit);
	o.verbose = verbose;
	if (ro->off_cpu) {
		/* a switch-in is another task's sample, maybe outside the
		 * range: offcpu filters the timed switch-outs itself */
		if ((oc = offcpu_create(pi, ro, fn, arg, err, errlen)) == NULL)
			goto out;
		memset(&o, 0, sizeof(o));
		o.tmax = UINT64_MAX;
		o.no_symbols = ro->no_symbols;
		o.names = ro->names;
		o.verbose = verbose;
		fn = offcpu_sample;
		arg = oc;
	}
	if (perfread_walk(r, &o, sy, fn, arg, ps, err, errlen) == -1) {
		if (oc != NULL && offcpu_error(oc) != NULL)
			snprintf(err, errlen, "%s", offcpu_error(oc));
		goto out;
	}
	if (head_hash != NULL)
		*head_hash = pi->head_hash;
	rv = 0;
out:
	offcpu_free(oc);
	symbolize_destroy(sy);
	jitsym_free(jit);
	perfread_close(r);
	return rv;
}

int
fold_file(struct stackset *ss, const char *path, const struct fold_opts *o,
    int verbose, struct fold_stats *st, char *err, size_t errlen)
{
	struct perfread_opts		 ro;
	struct profile_stats		 ps;
	struct fold			*f;
	uint64_t			 head;

	memset(st, 0, sizeof(*st));
	if ((f = fold_create(ss, o)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(&ro, 0, sizeof(ro));
	ro.tmin = o->tmin;
	ro.tmax = o->tmax;
	ro.pids = o->pids;
	ro.npids = o->npids;
	ro.off_cpu = o->off_cpu;
	ro.names = o->names;
	if (fold_read(path, &ro, fold_sample, f, verbose, &ps, &head, err,
	    errlen) == -1) {
		fold_free(f);
		return -1;
	}
	fold_end(f, st);
	st->read = ps.read;
	st->lost = ps.lost;
	st->end = ps.end;
	st->head_hash = head;
	fold_free(f);
	return 0;
}

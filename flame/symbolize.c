/*
 * symbolize: which source names a frame (see symbolize.h): the kernel's
 * from ksyms, code outside any file's mapping from the process's JIT
 * map, the rest from its ELF file (symelf).
 */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap.h"
#include "jitsym.h"
#include "ksyms.h"
#include "symbolize.h"
#include "symelf.h"

struct symbolize_jit {
	uint32_t	 pid;
	struct jitmap	*map;		/* NULL: none */
};

struct symbolize {
	struct ksyms		*ksyms;
	struct symelf		*elf;
	struct symbolize_jit	*jits;
	size_t			 njits, jits_cap;
	const struct jitsym	*copies;	/* beside the file; NULL: none */
	int			 verbose;
};

struct symbolize *
symbolize_create(const uint8_t *kid, size_t kidlen, int verbose, int flags)
{
	struct symbolize	*sy;
	char			 why[256];

	if ((sy = calloc(1, sizeof(*sy))) == NULL)
		return NULL;
	sy->verbose = verbose;
	if ((sy->elf = symelf_create(verbose, flags)) == NULL) {
		free(sy);
		return NULL;
	}
	/* a kernel that is not this one: perf too leaves it unnamed */
	if ((sy->ksyms = ksyms_load(kid, kidlen, why, sizeof(why))) == NULL &&
	    verbose)
		warnx("kernel frames stay [unknown]: %s", why);
	return sy;
}

void
symbolize_destroy(struct symbolize *sy)
{
	size_t	 i;

	if (sy == NULL)
		return;
	ksyms_free(sy->ksyms);
	symelf_destroy(sy->elf);
	for (i = 0; i < sy->njits; i++)
		jitmap_free(sy->jits[i].map);
	free(sy->jits);
	free(sy);
}

/* Code in no file: perf's names for anonymous executable memory. */
static int
symbolize_anon(const struct profile_mapping *m)
{
	return m == NULL || strcmp(m->file, "//anon") == 0 ||
	    strncmp(m->file, "[anon", 5) == 0 ||
	    strncmp(m->file, "/memfd:", 7) == 0 ||
	    strcmp(m->file, "/dev/zero") == 0 ||
	    strncmp(m->file, "/anon_hugepage", 14) == 0;
}

void
symbolize_use_copies(struct symbolize *sy, const struct jitsym *js)
{
	sy->copies = js;
}

static const struct jitmap *
symbolize_jit(struct symbolize *sy, uint32_t pid)
{
	const struct jitmap	*copy;
	struct symbolize_jit	*tmp;
	char			 why[256];
	size_t			 i;

	/* the map of the process the file recorded, copied when it ended */
	if ((copy = jitsym_map(sy->copies, pid)) != NULL)
		return copy;
	for (i = 0; i < sy->njits; i++)
		if (sy->jits[i].pid == pid)
			return sy->jits[i].map;
	if (sy->njits == sy->jits_cap) {
		sy->jits_cap = sy->jits_cap ? sy->jits_cap * 2 : 16;
		if ((tmp = realloc(sy->jits, sy->jits_cap * sizeof(*tmp))) ==
		    NULL)
			return NULL;
		sy->jits = tmp;
	}
	sy->jits[sy->njits].pid = pid;
	sy->jits[sy->njits].map = jitmap_load(pid, why, sizeof(why));
	if (why[0] != '\0')
		warnx("%s", why);
	return sy->jits[sy->njits++].map;
}

const char *
symbolize_frame(struct symbolize *sy, uint32_t pid,
    const struct profile_frame *f)
{
	const struct jitmap	*jm;

	if (f->kernel)
		return sy->ksyms != NULL ? ksyms_lookup(sy->ksyms, f->addr) :
		    NULL;
	if (symbolize_anon(f->map))
		return (jm = symbolize_jit(sy, pid)) != NULL ?
		    jitmap_lookup(jm, f->addr) : NULL;
	return symelf_lookup(sy->elf, f->map, f->offset);
}

size_t
symbolize_inlines(struct symbolize *sy, const struct profile_frame *f,
    const char *const **names)
{
	if (f->kernel || symbolize_anon(f->map))
		return 0;
	return symelf_inlines(sy->elf, f->map, f->offset, names);
}

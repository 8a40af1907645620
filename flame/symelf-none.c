/*
 * symelf: built without elfutils (libdw): user code stays unnamed, as
 * perf shows a binary it has no symbols of (see symelf.h).
 */
#include <stdlib.h>

#include "symelf.h"

struct symelf {
	int	 unused;
};

struct symelf *
symelf_create(int verbose, int flags)
{
	(void)verbose;
	(void)flags;
	return calloc(1, sizeof(struct symelf));
}

void
symelf_destroy(struct symelf *se)
{
	free(se);
}

const char *
symelf_lookup(struct symelf *se, const struct profile_mapping *m,
    uint64_t off)
{
	(void)se;
	(void)m;
	(void)off;
	return NULL;
}

size_t
symelf_inlines(struct symelf *se, const struct profile_mapping *m,
    uint64_t off, const char *const **names)
{
	(void)se;
	(void)m;
	(void)off;
	(void)names;
	return 0;
}

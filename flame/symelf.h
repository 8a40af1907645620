/*
 * symelf: names from ELF files for user code, found by build-id (see
 * symbolize.h for where). symelf-dwfl.c implements it with elfutils'
 * libdwfl; symelf-none.c, chosen by meson without libdw, names nothing.
 */
#ifndef PERFSPILL_SYMELF_H
#define PERFSPILL_SYMELF_H

#include "profile.h"

struct symelf;

/* flags: SYMBOLIZE_* (symbolize.h). */
struct symelf	*symelf_create(int verbose, int flags);
void		 symelf_destroy(struct symelf *);
/* The function at file offset off of the mapping's file, or NULL. */
const char	*symelf_lookup(struct symelf *, const struct profile_mapping *,
		    uint64_t off);
/* With SYMBOLIZE_INLINE, the names of the frames at file offset off,
 * leaf first, where DWARF has functions inlined there: the inlined ones
 * ("name (inlined)"), then the one they are in; *names lives as long as
 * se. 0: the one frame symelf_lookup names. */
size_t		 symelf_inlines(struct symelf *, const struct profile_mapping *,
		    uint64_t off, const char *const **names);

#endif

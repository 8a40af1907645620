/*
 * symelf: names from ELF files for user code, found by build-id (see
 * symbolize.h for where). symelf-dwfl.c implements it with elfutils'
 * libdwfl; symelf-none.c, chosen by meson without libdw, names nothing.
 */
#ifndef PERFSPILL_SYMELF_H
#define PERFSPILL_SYMELF_H

#include "profile.h"

struct symelf;

struct symelf	*symelf_create(int verbose);
void		 symelf_destroy(struct symelf *);
/* The function at file offset off of the mapping's file, or NULL. */
const char	*symelf_lookup(struct symelf *, const struct profile_mapping *,
		    uint64_t off);

#endif

/*
 * demangle: with libiberty (see demangle.h). cplus_demangle in its
 * automatic style tries Rust's manglings first, then the C++ ABI's, as
 * perf's demangle_sym calls it; a name it declines may be OCaml's.
 */
#include <stdlib.h>
#include <libiberty/demangle.h>

#include "demangle.h"

char *
demangle(const char *name)
{
	char	*s;

	if ((s = cplus_demangle(name, DMGL_NO_OPTS)) != NULL)
		return s;
	return demangle_ocaml(name);
}

/*
 * demangle: built without libiberty: C++ and Rust names stay mangled,
 * as perf built without a demangler shows them; OCaml's are still
 * demangled (see demangle.h).
 */
#include "demangle.h"

char *
demangle(const char *name)
{
	return demangle_ocaml(name);
}

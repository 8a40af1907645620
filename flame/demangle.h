/*
 * demangle: a symbol's name as perf report shows it. C++ and Rust (its
 * legacy and v0 manglings) through libiberty's cplus_demangle, the
 * demangler Debian's perf links, without parameters as perf report shows
 * them (work::do_map: only perf's -v adds them, work::do_map(std::vector
 * <long, std::allocator<long> > const&)); OCaml's names as perf's own
 * demangler writes them. demangle-iberty.c where meson finds libiberty;
 * demangle-none.c leaves C++ and Rust names as they are elsewhere.
 */
#ifndef PERFSPILL_DEMANGLE_H
#define PERFSPILL_DEMANGLE_H

/* The demangled name (malloc'd: the caller frees it), or NULL when name
 * is not a mangled one (a C name) or without memory. */
char	*demangle(const char *name);
/* An OCaml name (camlStdlib__array__map_154: Stdlib.array.map_154), as
 * perf's demangle-ocaml.c; NULL when it is not one. */
char	*demangle_ocaml(const char *name);

#endif

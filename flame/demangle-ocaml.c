/*
 * demangle: OCaml's names (see demangle.h), what perf tries when its
 * C++ demangler declines: "caml" and a capital, "__" for a module's
 * dot, "$xx" for a byte in hex.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

static int
demangle_hex(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

char *
demangle_ocaml(const char *name)
{
	size_t	 len, i, j = 0;
	char	*out;

	if (strncmp(name, "caml", 4) != 0 || !isupper((unsigned char)name[4]))
		return NULL;
	len = strlen(name);
	if ((out = malloc(len + 1)) == NULL)
		return NULL;
	for (i = 4; i < len; i++) {
		if (name[i] == '_' && name[i + 1] == '_') {
			out[j++] = '.';
			i++;
		} else if (name[i] == '$' &&
		    isxdigit((unsigned char)name[i + 1]) &&
		    isxdigit((unsigned char)name[i + 2])) {
			out[j++] = (char)(demangle_hex((unsigned char)
			    name[i + 1]) << 4 | demangle_hex((unsigned char)
			    name[i + 2]));
			i += 2;
		} else
			out[j++] = name[i];
	}
	out[j] = '\0';
	return out;
}

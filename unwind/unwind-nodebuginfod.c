/*
 * unwind-nodebuginfod: without libdebuginfod (meson's choice) no binary
 * comes from a server (see unwind-int.h).
 */
#include <stdlib.h>

#include "unwind-int.h"

struct uw_debuginfod *
uw_debuginfod_create(void)
{
	return NULL;
}

void
uw_debuginfod_destroy(struct uw_debuginfod *d)
{
}

int
uw_debuginfod_find(struct uw_debuginfod *d, const uint8_t *id, size_t len,
    int kind, char **path)
{
	*path = NULL;
	return -1;
}

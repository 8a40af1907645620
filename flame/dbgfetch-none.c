/*
 * dbgfetch: built without libdebuginfod: nothing is fetched (see
 * dbgfetch.h).
 */
#include "dbgfetch.h"

int
dbgfetch(const uint8_t *id, size_t len, int debug, char **path)
{
	(void)id;
	(void)len;
	(void)debug;
	*path = NULL;
	return -1;
}

void
dbgfetch_end(void)
{
}

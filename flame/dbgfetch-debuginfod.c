/*
 * dbgfetch: from the servers of DEBUGINFOD_URLS with libdebuginfod (see
 * dbgfetch.h). One client for the run, begun at the first need.
 */
#include <stdlib.h>
#include <elfutils/debuginfod.h>

#include "dbgfetch.h"

static debuginfod_client	*dbgfetch_client;

int
dbgfetch(const uint8_t *id, size_t len, int debug, char **path)
{
	const char	*urls = getenv("DEBUGINFOD_URLS");
	int		 fd;

	*path = NULL;
	if (urls == NULL || urls[0] == '\0')
		return -1;
	if (dbgfetch_client == NULL &&
	    (dbgfetch_client = debuginfod_begin()) == NULL)
		return -1;
	fd = debug ? debuginfod_find_debuginfo(dbgfetch_client, id, (int)len,
	    path) : debuginfod_find_executable(dbgfetch_client, id, (int)len,
	    path);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return fd;
}

void
dbgfetch_end(void)
{
	if (dbgfetch_client != NULL)
		debuginfod_end(dbgfetch_client);
	dbgfetch_client = NULL;
}

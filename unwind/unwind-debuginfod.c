/*
 * unwind-debuginfod: binaries by build-id from the servers of
 * DEBUGINFOD_URLS (libdebuginfod), one client per unwinder, begun at
 * its first need (see unwind-int.h).
 */
#include <stdlib.h>
#include <elfutils/debuginfod.h>

#include "unwind-int.h"

struct uw_debuginfod {
	debuginfod_client	*client;
	int			 failed;
};

struct uw_debuginfod *
uw_debuginfod_create(void)
{
	return calloc(1, sizeof(struct uw_debuginfod));
}

void
uw_debuginfod_destroy(struct uw_debuginfod *d)
{
	if (d == NULL)
		return;
	if (d->client != NULL)
		debuginfod_end(d->client);
	free(d);
}

int
uw_debuginfod_find(struct uw_debuginfod *d, const uint8_t *id, size_t len,
    int kind, char **path)
{
	const char	*urls = getenv("DEBUGINFOD_URLS");
	int		 fd;

	*path = NULL;
	if (urls == NULL || urls[0] == '\0' || d->failed)
		return -1;
	if (d->client == NULL && (d->client = debuginfod_begin()) == NULL) {
		d->failed = 1;
		return -1;
	}
	fd = kind ? debuginfod_find_debuginfo(d->client, id, (int)len, path) :
	    debuginfod_find_executable(d->client, id, (int)len, path);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return fd;
}

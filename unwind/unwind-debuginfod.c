/*
 * unwind-debuginfod: binaries by build-id from the servers of
 * DEBUGINFOD_URLS (libdebuginfod), one client per unwinder, begun at
 * its first need (see unwind-int.h).
 *
 * libdebuginfod is opened at that first need, not linked: it brings
 * libcurl, GnuTLS, Kerberos and LDAP (27 libraries on Debian 12) into
 * every process that links it, and perfspilld, which never asks a
 * server, paid for them at each launch: the pages of each read from
 * disk on a cold cache, and all of them in a root daemon's address
 * space. elfutils' own libdwfl opens it the same way.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <elfutils/debuginfod.h>

#include "unwind-int.h"

/* The library's calls that the client makes; NULL begin: not there. */
static struct {
	debuginfod_client	*(*begin)(void);
	void			 (*end)(debuginfod_client *);
	int			 (*find_debuginfo)(debuginfod_client *,
				    const unsigned char *, int, char **);
	int			 (*find_executable)(debuginfod_client *,
				    const unsigned char *, int, char **);
} uw_dbg;
static pthread_once_t	 uw_dbg_once = PTHREAD_ONCE_INIT;

struct uw_debuginfod {
	debuginfod_client	*client;
	int			 failed;
};

/* Once a process: the library and its four calls, or none. Kept open
 * for the process's life, as a linked library would be. */
static void
uw_debuginfod_open(void)
{
	void	*h;

	if ((h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL)) ==
	    NULL)
		return;
	*(void **)&uw_dbg.end = dlsym(h, "debuginfod_end");
	*(void **)&uw_dbg.find_debuginfo = dlsym(h,
	    "debuginfod_find_debuginfo");
	*(void **)&uw_dbg.find_executable = dlsym(h,
	    "debuginfod_find_executable");
	/* begin last: it says the others are there */
	if (uw_dbg.end != NULL && uw_dbg.find_debuginfo != NULL &&
	    uw_dbg.find_executable != NULL)
		*(void **)&uw_dbg.begin = dlsym(h, "debuginfod_begin");
	if (uw_dbg.begin == NULL)
		dlclose(h);
}

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
	/* a client was begun only through the opened library */
	if (d->client != NULL)
		uw_dbg.end(d->client);
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
	if (d->client == NULL) {
		pthread_once(&uw_dbg_once, uw_debuginfod_open);
		if (uw_dbg.begin == NULL ||
		    (d->client = uw_dbg.begin()) == NULL) {
			d->failed = 1;
			return -1;
		}
	}
	fd = kind ? uw_dbg.find_debuginfo(d->client, id, (int)len, path) :
	    uw_dbg.find_executable(d->client, id, (int)len, path);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return fd;
}

/*
 * live: before a graph reads the files perfspilld is writing, ask the
 * daemon to put on disk what it holds and has not written yet (its
 * rings, its buffers, the direct stream's tail): the control command
 * flush, which cuts no file and renames nothing. Without a daemon to
 * ask, the graph goes on with what the files hold, and says where that
 * data ends.
 */
#ifndef PERFSPILL_LIVE_H
#define PERFSPILL_LIVE_H

#include <stddef.h>

/* How long a flush may take before the graph goes on without it. */
#define LIVE_FLUSH_WAIT_MS	10000

/*
 * Send flush to the daemon at socket (NULL: $PERFSPILL_SOCKET, else the
 * default) and wait for its answer. 0 when the daemon says its data is
 * on disk; -1 with why (a sentence, len bytes) when it could not be
 * asked or refused.
 */
int	live_flush(const char *socket, char *why, size_t len);

#endif

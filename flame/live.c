/*
 * live: the flush request to perfspilld (see live.h), one JSON line out
 * and one back (common/proto.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>

#include "live.h"
#include "paths.h"
#include "proto.h"

/* The reply line, at most PROTO_MAX_MSG bytes; 0, or -1 with why. */
static int
live_read(int fd, char *buf, size_t cap, char *why, size_t len)
{
	struct pollfd	 p = { fd, POLLIN, 0 };
	size_t		 have = 0;
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = poll(&p, 1, LIVE_FLUSH_WAIT_MS)) == -1 &&
		    errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(why, len, "no answer within %d s",
			    LIVE_FLUSH_WAIT_MS / 1000);
			return -1;
		}
		if ((n = read(fd, buf + have, cap - have - 1)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, len, "the daemon closed the connection");
			return -1;
		}
		have += (size_t)n;
		buf[have] = '\0';
		if (memchr(buf, '\n', have) != NULL)
			return 0;
		if (have + 1 >= cap) {
			snprintf(why, len, "an answer too long");
			return -1;
		}
	}
}

int
live_flush(const char *path, char *why, size_t len)
{
	struct sockaddr_un	 sun;
	json_object		*req, *rep = NULL, *v, *e;
	char			*msg, *buf = NULL;
	size_t			 mlen;
	int			 fd, rv = -1;

	if (path == NULL && (path = getenv("PERFSPILL_SOCKET")) == NULL)
		path = PERFSPILL_SOCKET;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(why, len, "%s: socket path too long", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(why, len, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		snprintf(why, len, "cannot reach perfspilld at %s: %s", path,
		    strerror(errno));
		goto out;
	}
	req = proto_request("flush", json_object_new_object());
	msg = proto_serialize(req, &mlen);
	json_object_put(req);
	if (msg == NULL || send(fd, msg, mlen, MSG_NOSIGNAL) !=
	    (ssize_t)mlen) {
		snprintf(why, len, "sending to %s: %s", path, msg == NULL ?
		    "out of memory" : strerror(errno));
		free(msg);
		goto out;
	}
	free(msg);
	if ((buf = malloc(PROTO_MAX_MSG + 1)) == NULL) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	if (live_read(fd, buf, PROTO_MAX_MSG + 1, why, len) == -1)
		goto out;
	if ((rep = json_tokener_parse(buf)) == NULL ||
	    !json_object_object_get_ex(rep, "ok", &v)) {
		snprintf(why, len, "perfspilld answered no JSON reply");
		goto out;
	}
	if (!json_object_get_boolean(v)) {
		/* an older daemon without flush, or a refusal */
		if (json_object_object_get_ex(rep, "error", &e) &&
		    json_object_object_get_ex(e, "message", &v))
			snprintf(why, len, "perfspilld: %s",
			    json_object_get_string(v));
		else
			snprintf(why, len, "perfspilld refused the flush");
		goto out;
	}
	rv = 0;
out:
	json_object_put(rep);
	free(buf);
	close(fd);
	return rv;
}

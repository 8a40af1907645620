/*
 * control serves the UNIX stream socket and its clients. A client is
 * identified by SO_PEERCRED (and SO_PEERGROUPS) at accept; every line it
 * sends is size-checked before parsing and handed to the creator's
 * dispatch callback (daemon.c gives cmd_dispatch). Any read error, EOF,
 * oversize message or idle timeout goes through one "peer lost" path.
 * Every function here runs in the loop.
 */
#ifndef PERFSPILL_CONTROL_H
#define PERFSPILL_CONTROL_H

#include <sys/types.h>
#include <json-c/json.h>

struct config;
struct daemon;
struct control;
struct control_client;

/* What the creator does with a request of client c, and with a client
 * that goes away (anything that would answer it later is dropped). */
typedef void	(*control_dispatch_fn)(struct daemon *,
		    struct control_client *c, const char *cmd,
		    json_object *args);
typedef void	(*control_gone_fn)(struct daemon *, struct control_client *c);

/* Listen on the systemd-passed socket if there is one, else create the
 * configured path with its mode and group. NULL on error (logged). */
struct control	*control_create(struct daemon *, control_dispatch_fn,
		    control_gone_fn);
void		 control_destroy(struct control *);
/* Whether another daemon answers on cfg's socket path: checked before
 * the output directory is made, so that a start refused for it leaves
 * nothing behind. Never for a socket systemd passes (that one is ours). */
int		 control_taken(const struct config *);
/* A reload changed the settings: control groups (for connected peers
 * too), client_timeout, and the socket file's group and mode apply now. */
void		 control_update(struct control *, const struct config *);
int		 control_nclients(const struct control *);

/* What cmd needs of a client. */
uid_t	control_client_uid(const struct control_client *);
int	control_client_privileged(const struct control_client *);
/* Send one reply (takes the reference). */
void	control_client_reply(struct control_client *, json_object *);
/* A reply will come later (stop): keep the client past idle timeouts. */
void	control_client_defer(struct control_client *);

#endif

/*
 * proto: the control protocol shared by perfspilld and perfspillctl
 * (docs/protocol.md). One JSON object per line, at most PROTO_MAX_MSG
 * bytes including the newline; the size is checked before any parsing.
 *
 *   request: {"v":1,"cmd":"start","args":{"cblocks":3}}
 *   reply:   {"v":1,"ok":true,"data":{...}}
 *            {"v":1,"ok":false,"error":{"code":"bad-value","key":"cblocks",
 *             "message":"..."}}
 */
#ifndef PERFSPILL_PROTO_H
#define PERFSPILL_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define PROTO_VERSION	1
#define PROTO_MAX_MSG	65536

/* Stable error codes: scripts match on the string, never on the message. */
enum proto_err {
	PROTO_OK = 0,
	PROTO_E_BAD_JSON,	/* "bad-json": not JSON, or not one object */
	PROTO_E_TOO_BIG,	/* "too-big": longer than PROTO_MAX_MSG */
	PROTO_E_BAD_REQUEST,	/* "bad-request": missing or mistyped v/cmd/args */
	PROTO_E_BAD_VERSION,	/* "bad-version": v is not PROTO_VERSION */
	PROTO_E_UNKNOWN_COMMAND,/* "unknown-command" */
	PROTO_E_UNKNOWN_KEY,	/* "unknown-key": args has a key we do not know */
	PROTO_E_BAD_TYPE,	/* "bad-type": a value of the wrong JSON type */
	PROTO_E_BAD_VALUE,	/* "bad-value": out of range or malformed */
	PROTO_E_NOT_SETTABLE,	/* "not-settable": a key only the config file sets */
	PROTO_E_PERMISSION,	/* "permission-denied": peer may not do this */
	PROTO_E_STATE,		/* "wrong-state": e.g. stop while idle */
	PROTO_E_EVENT,		/* "bad-event": unknown or unsupported event */
	PROTO_E_SYSTEM,		/* "system-error": the kernel or disk refused */
	PROTO_E_BUSY,		/* "busy": too many clients */
	PROTO_E_LIMIT,		/* "limit": over max_sessions or the memory
				 * budget; the message names the figures */
	PROTO_E__COUNT
};

const char	*proto_err_name(enum proto_err);

/*
 * Parse and validate one request line. On success returns PROTO_OK, *cmd
 * points into *req and *args is the args object (never NULL: an empty
 * object when the request had none). On failure returns the code and
 * writes a message to err; *req is NULL.
 */
enum proto_err	proto_parse_request(const char *line, size_t len,
		    json_object **req, const char **cmd, json_object **args,
		    char *err, size_t errlen);

/* Build requests and replies; the caller owns the result. */
json_object	*proto_request(const char *cmd, json_object *args);
json_object	*proto_reply_ok(json_object *data);
json_object	*proto_reply_error(enum proto_err, const char *key,
		    const char *msg);
/* o[k] = v, an unsigned count (status, manifests, session figures). */
void		 proto_add_u64(json_object *o, const char *k, uint64_t v);
/* Serialize as one line with its newline; caller frees. */
char		*proto_serialize(json_object *, size_t *len);

#endif

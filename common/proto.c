/*
 * proto: validation and construction of control messages
 * (see proto.h). Everything a peer sends goes through
 * proto_parse_request before any handler sees it; control.c cuts the
 * lines, none longer than PROTO_MAX_MSG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcheck.h"
#include "proto.h"
#include "utf8.h"

static const char *proto_err_names[PROTO_E__COUNT] = {
	[PROTO_OK] = "ok",
	[PROTO_E_BAD_JSON] = "bad-json",
	[PROTO_E_TOO_BIG] = "too-big",
	[PROTO_E_BAD_REQUEST] = "bad-request",
	[PROTO_E_BAD_VERSION] = "bad-version",
	[PROTO_E_UNKNOWN_COMMAND] = "unknown-command",
	[PROTO_E_UNKNOWN_KEY] = "unknown-key",
	[PROTO_E_BAD_TYPE] = "bad-type",
	[PROTO_E_BAD_VALUE] = "bad-value",
	[PROTO_E_NOT_SETTABLE] = "not-settable",
	[PROTO_E_PERMISSION] = "permission-denied",
	[PROTO_E_STATE] = "wrong-state",
	[PROTO_E_EVENT] = "bad-event",
	[PROTO_E_SYSTEM] = "system-error",
	[PROTO_E_BUSY] = "busy",
	[PROTO_E_LIMIT] = "limit",
};

const char *
proto_err_name(enum proto_err e)
{
	if ((int)e < 0 || e >= PROTO_E__COUNT)
		return "internal";
	return proto_err_names[e];
}

enum proto_err
proto_parse_request(const char *line, size_t len, json_object **req,
    const char **cmd, json_object **args, char *err, size_t errlen)
{
	json_tokener		*tok;
	json_object		*obj, *v, *c, *a;
	enum json_tokener_error	 jerr;
	enum proto_err		 rc;
	json_object_iter	 it;
	size_t			 off;
	char			 msg[128];

	*req = NULL;
	if (len >= PROTO_MAX_MSG) {
		snprintf(err, errlen, "message of %zu bytes exceeds the limit of "
		    "%d", len, PROTO_MAX_MSG);
		return PROTO_E_TOO_BIG;
	}
	if ((tok = json_tokener_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		return PROTO_E_SYSTEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	if (obj != NULL && jerr == json_tokener_success &&
	    json_tokener_get_parse_end(tok) != len) {
		/* trailing bytes after the object: two objects on one line */
		json_object_put(obj);
		obj = NULL;
		jerr = json_tokener_error_parse_unexpected;
	}
	json_tokener_free(tok);
	if (obj == NULL || jerr != json_tokener_success) {
		snprintf(err, errlen, "malformed JSON: %s",
		    jerr == json_tokener_continue ? "incomplete object" :
		    json_tokener_error_desc(jerr));
		json_object_put(obj);
		return PROTO_E_BAD_JSON;
	}
	/* what json-c would silently reinterpret: a second "cmd" winning
	 * over the first, "status\u0000junk" read as "status" */
	if (jcheck_text(line, len, &off, msg, sizeof(msg)) == -1) {
		snprintf(err, errlen, "refused JSON at byte %zu: %s", off, msg);
		rc = PROTO_E_BAD_JSON;
		goto error;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		snprintf(err, errlen, "a request must be a JSON object");
		rc = PROTO_E_BAD_REQUEST;
		goto error;
	}
	json_object_object_foreachC(obj, it) {
		if (strcmp(it.key, "v") != 0 && strcmp(it.key, "cmd") != 0 &&
		    strcmp(it.key, "args") != 0) {
			snprintf(err, errlen, "unknown request field '%.64s'",
			    it.key);
			rc = PROTO_E_BAD_REQUEST;
			goto error;
		}
	}
	if (!json_object_object_get_ex(obj, "v", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "request has no protocol version "
		    "(\"v\": %d)", PROTO_VERSION);
		rc = PROTO_E_BAD_REQUEST;
		goto error;
	}
	if (json_object_get_int64(v) != PROTO_VERSION) {
		snprintf(err, errlen, "protocol version %lld not supported "
		    "(this daemon speaks %d)", (long long)json_object_get_int64(v),
		    PROTO_VERSION);
		rc = PROTO_E_BAD_VERSION;
		goto error;
	}
	if (!json_object_object_get_ex(obj, "cmd", &c) ||
	    !json_object_is_type(c, json_type_string)) {
		snprintf(err, errlen, "request has no command (\"cmd\")");
		rc = PROTO_E_BAD_REQUEST;
		goto error;
	}
	if (json_object_object_get_ex(obj, "args", &a)) {
		if (!json_object_is_type(a, json_type_object)) {
			snprintf(err, errlen, "\"args\" must be an object");
			rc = PROTO_E_BAD_REQUEST;
			goto error;
		}
	} else {
		a = json_object_new_object();
		json_object_object_add(obj, "args", a);
	}
	*req = obj;
	*cmd = json_object_get_string(c);
	*args = a;
	return PROTO_OK;
error:
	json_object_put(obj);
	return rc;
}

json_object *
proto_request(const char *cmd, json_object *args)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "cmd", json_object_new_string(cmd));
	json_object_object_add(o, "args", args ? args : json_object_new_object());
	return o;
}

json_object *
proto_reply_ok(json_object *data)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "data", data ? data : json_object_new_object());
	return o;
}

void
proto_add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

json_object *
proto_reply_error(enum proto_err code, const char *key, const char *msg)
{
	json_object	*o = json_object_new_object(), *e;

	e = json_object_new_object();
	json_object_object_add(e, "code",
	    json_object_new_string(proto_err_name(code)));
	if (key != NULL)
		json_object_object_add(e, "key", json_object_new_string(key));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", e);
	return o;
}

char *
proto_serialize(json_object *o, size_t *len)
{
	const char	*s;
	size_t		 n;
	char		*out;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	n = strlen(s);
	if ((out = malloc(n + 2)) == NULL)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	/* json-c passes on any byte above 0x7f: a command name echoed back
	 * (a peer's bytes), a path, must not make the reply invalid text */
	utf8_scrub(out);
	out[n] = '\n';
	out[n + 1] = '\0';
	*len = n + 1;
	return out;
}

/*
 * test-proto: validation of control requests. Everything here
 * is what a peer on the socket controls, so the refusals are the point:
 * each must be refused with its own stable code, before a handler runs.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proto.h"
#include "utf8.h"

/* Parse s and return the code; the request is freed at once. */
static enum proto_err
parse(const char *s, const char **cmdp, char *err, size_t errlen)
{
	json_object	*req = (json_object *)(uintptr_t)1, *args = NULL;
	const char	*cmd = NULL;
	enum proto_err	 rc;

	err[0] = '\0';
	rc = proto_parse_request(s, strlen(s), &req, &cmd, &args, err, errlen);
	if (rc == PROTO_OK) {
		CHECK(req != NULL);
		CHECK(args != NULL && json_object_is_type(args,
		    json_type_object));
		CHECK(cmd != NULL);
		if (cmdp != NULL && cmd != NULL) {
			/* cmd points into req: copy before the put */
			static char	 cmdbuf[64];

			strncpy(cmdbuf, cmd, sizeof(cmdbuf) - 1);
			*cmdp = cmdbuf;
		}
		json_object_put(req);
	} else {
		CHECK(req == NULL);
		/* every refusal says why */
		CHECK(err[0] != '\0');
	}
	return rc;
}

static void
test_parse_valid(void)
{
	char		 err[256];
	const char	*cmd;
	json_object	*req, *args, *v;
	enum proto_err	 rc;
	const char	*line = "{\"v\":1,\"cmd\":\"start\",\"args\":{\"cblocks\":3}}";

	rc = proto_parse_request(line, strlen(line), &req, &cmd, &args, err,
	    sizeof(err));
	CHECK_EQ(rc, PROTO_OK);
	if (rc == PROTO_OK) {
		CHECK_STR(cmd, "start");
		CHECK(json_object_object_get_ex(args, "cblocks", &v) &&
		    json_object_get_int(v) == 3);
		json_object_put(req);
	}

	/* args may be left out: an empty object stands in */
	line = "{\"v\":1,\"cmd\":\"status\"}";
	rc = proto_parse_request(line, strlen(line), &req, &cmd, &args, err,
	    sizeof(err));
	CHECK_EQ(rc, PROTO_OK);
	if (rc == PROTO_OK) {
		CHECK_STR(cmd, "status");
		CHECK(args != NULL && json_object_is_type(args,
		    json_type_object) && json_object_object_length(args) == 0);
		json_object_put(req);
	}

	/* field order and whitespace inside do not matter */
	CHECK_EQ(parse("{ \"args\" : {} , \"cmd\" : \"stop\" , \"v\" : 1 }",
	    &cmd, err, sizeof(err)), PROTO_OK);
	CHECK_STR(cmd, "stop");

	/* the length is what counts, not a NUL: only the first len bytes */
	line = "{\"v\":1,\"cmd\":\"stop\"}{\"v\":1}";
	rc = proto_parse_request(line, 20, &req, &cmd, &args, err,
	    sizeof(err));
	CHECK_EQ(rc, PROTO_OK);
	if (rc == PROTO_OK)
		json_object_put(req);
}

static void
test_parse_invalid(void)
{
	char		 err[256];
	char		*big;
	json_object	*req, *args;
	const char	*cmd;

	/* v: missing, a string, another version, not an integer */
	CHECK_EQ(parse("{\"cmd\":\"start\"}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":\"1\",\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":2,\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_VERSION);
	CHECK(strstr(err, "2") != NULL);
	CHECK_EQ(parse("{\"v\":0,\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_VERSION);
	CHECK_EQ(parse("{\"v\":-1,\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_VERSION);
	CHECK_EQ(parse("{\"v\":1.0,\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":true,\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":null,\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);

	/* cmd: missing, not a string */
	CHECK_EQ(parse("{\"v\":1}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":7}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":[\"start\"]}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);

	/* args: not an object */
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",\"args\":[]}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",\"args\":\"x\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",\"args\":null}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);

	/* an unknown top-level field is refused, not ignored */
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",\"force\":true}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK(strstr(err, "force") != NULL);

	/* not one object */
	CHECK_EQ(parse("[1,2]", NULL, err, sizeof(err)), PROTO_E_BAD_REQUEST);
	CHECK_EQ(parse("\"start\"", NULL, err, sizeof(err)),
	    PROTO_E_BAD_REQUEST);

	/* malformed: truncated, garbage, empty, lax JSON */
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\"", NULL, err, sizeof(err)),
	    PROTO_E_BAD_JSON);
	CHECK_EQ(parse("hello", NULL, err, sizeof(err)), PROTO_E_BAD_JSON);
	CHECK_EQ(parse("", NULL, err, sizeof(err)), PROTO_E_BAD_JSON);
	CHECK_EQ(parse("{'v':1,'cmd':'start'}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_JSON);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_JSON);
	CHECK_EQ(parse("{\"v\":1,/* c */\"cmd\":\"start\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_JSON);

	/* trailing bytes: a second object on the same line, or garbage */
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\"}{\"v\":1,\"cmd\":\"stop\"}",
	    NULL, err, sizeof(err)), PROTO_E_BAD_JSON);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\"}x", NULL, err, sizeof(err)),
	    PROTO_E_BAD_JSON);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\"}}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_JSON);

	/* json-c would cut "status\u0000junk" to "status" and keep the last
	 * of two equal keys: the text must mean what it says */
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"status\\u0000junk\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_JSON);
	CHECK(strstr(err, "\\u0000") != NULL);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",\"args\":{\"events\":"
	    "[\"cpu-clock\\u0000x\"]}}", NULL, err, sizeof(err)),
	    PROTO_E_BAD_JSON);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"ping\",\"cmd\":\"stop\"}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_JSON);
	CHECK(strstr(err, "duplicate key 'cmd'") != NULL);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"start\",\"args\":{\"freq\":1,"
	    "\"fr\\u0065q\":2}}", NULL, err, sizeof(err)), PROTO_E_BAD_JSON);
	CHECK(strstr(err, "duplicate key 'freq'") != NULL);
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"ping\",\"v\\u0000\":2}", NULL, err,
	    sizeof(err)), PROTO_E_BAD_JSON);
	/* other escapes still work */
	CHECK_EQ(parse("{\"v\":1,\"cmd\":\"st\\u0061tus\"}", &cmd, err,
	    sizeof(err)), PROTO_OK);
	CHECK_STR(cmd, "status");

	/* too big is refused on the length alone, before parsing */
	if ((big = malloc(PROTO_MAX_MSG + 1)) != NULL) {
		memset(big, ' ', PROTO_MAX_MSG);
		big[PROTO_MAX_MSG] = '\0';
		req = NULL;
		CHECK_EQ(proto_parse_request(big, PROTO_MAX_MSG, &req, &cmd,
		    &args, err, sizeof(err)), PROTO_E_TOO_BIG);
		CHECK(req == NULL);
		CHECK(err[0] != '\0');
		/* one byte less is a line that fits with its newline; blank,
		 * so it is bad JSON, not too big */
		CHECK_EQ(proto_parse_request(big, PROTO_MAX_MSG - 1, &req,
		    &cmd, &args, err, sizeof(err)), PROTO_E_BAD_JSON);
		free(big);
	}

	/* a short err buffer is cut, not overrun */
	memset(err, 'z', sizeof(err));
	CHECK_EQ(parse("{\"v\":2,\"cmd\":\"start\"}", NULL, err, 8),
	    PROTO_E_BAD_VERSION);
	CHECK(strlen(err) == 7 && err[8] == 'z');
}

static void
test_err_names(void)
{
	static const char *want[PROTO_E__COUNT] = {
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
	int	 i;

	/* scripts match on these strings: a new code must be added here on
	 * purpose, and an old one never renamed */
	CHECK_EQ(PROTO_E__COUNT, 16);
	for (i = 0; i < PROTO_E__COUNT; i++) {
		CHECK(want[i] != NULL);
		if (want[i] != NULL)
			CHECK_STR(proto_err_name((enum proto_err)i), want[i]);
	}
	CHECK_STR(proto_err_name(PROTO_E__COUNT), "internal");
	CHECK_STR(proto_err_name((enum proto_err)-1), "internal");
	CHECK_STR(proto_err_name((enum proto_err)1000), "internal");
}

/* s is one line: a single newline, at the end, and len counts it. */
static int
one_line(const char *s, size_t len)
{
	return s != NULL && strlen(s) == len && len > 0 &&
	    s[len - 1] == '\n' && memchr(s, '\n', len - 1) == NULL;
}

static void
test_build(void)
{
	json_object	*o, *back, *e, *v;
	char		*s, err[256];
	size_t		 len;
	const char	*cmd;
	json_object	*req, *args;

	/* an error reply, with a message holding a newline of its own */
	o = proto_reply_error(PROTO_E_BAD_VALUE, "cblocks",
	    "cblocks must be between 0 and 8\n(got 9)");
	s = proto_serialize(o, &len);
	CHECK(one_line(s, len));
	back = s ? json_tokener_parse(s) : NULL;
	CHECK(back != NULL);
	if (back != NULL) {
		CHECK(json_object_object_get_ex(back, "v", &v) &&
		    json_object_get_int(v) == PROTO_VERSION);
		CHECK(json_object_object_get_ex(back, "ok", &v) &&
		    json_object_is_type(v, json_type_boolean) &&
		    !json_object_get_boolean(v));
		CHECK(json_object_object_get_ex(back, "error", &e));
		CHECK(json_object_object_get_ex(e, "code", &v) &&
		    strcmp(json_object_get_string(v), "bad-value") == 0);
		CHECK(json_object_object_get_ex(e, "key", &v) &&
		    strcmp(json_object_get_string(v), "cblocks") == 0);
		CHECK(json_object_object_get_ex(e, "message", &v) &&
		    strstr(json_object_get_string(v), "(got 9)") != NULL);
		json_object_put(back);
	}
	free(s);
	json_object_put(o);

	/* without a key there is no key field */
	o = proto_reply_error(PROTO_E_STATE, NULL, "not recording");
	s = proto_serialize(o, &len);
	CHECK(one_line(s, len));
	back = s ? json_tokener_parse(s) : NULL;
	CHECK(back != NULL && json_object_object_get_ex(back, "error", &e) &&
	    !json_object_object_get_ex(e, "key", NULL));
	json_object_put(back);
	free(s);
	json_object_put(o);

	/* an ok reply carries data, an empty object when there is none */
	o = proto_reply_ok(NULL);
	s = proto_serialize(o, &len);
	CHECK(one_line(s, len));
	back = s ? json_tokener_parse(s) : NULL;
	CHECK(back != NULL && json_object_object_get_ex(back, "ok", &v) &&
	    json_object_get_boolean(v));
	CHECK(back != NULL && json_object_object_get_ex(back, "data", &v) &&
	    json_object_is_type(v, json_type_object));
	json_object_put(back);
	free(s);
	json_object_put(o);

	/* what the client builds, the daemon accepts */
	args = json_object_new_object();
	json_object_object_add(args, "cblocks", json_object_new_int(3));
	o = proto_request("configure", args);
	s = proto_serialize(o, &len);
	CHECK(one_line(s, len));
	CHECK(len <= PROTO_MAX_MSG);
	if (s != NULL) {
		CHECK_EQ(proto_parse_request(s, len - 1, &req, &cmd, &args,
		    err, sizeof(err)), PROTO_OK);
		if (req != NULL) {
			CHECK_STR(cmd, "configure");
			json_object_put(req);
		}
	}
	free(s);
	json_object_put(o);
}

/* Replies stay UTF-8 whatever bytes went into them (issue 25.5). */
static void
test_utf8(void)
{
	json_object	*o;
	char		*s;
	size_t		 len, i;

	CHECK_EQ(utf8_len("a"), 1);
	CHECK_EQ(utf8_len("\xc3\xa9"), 2);
	CHECK_EQ(utf8_len("\xe2\x82\xac"), 3);
	CHECK_EQ(utf8_len("\xf0\x9f\x98\x80"), 4);
	/* overlong, surrogate, past U+10FFFF, a lone continuation, cut */
	CHECK_EQ(utf8_len("\xc0\x80"), 0);
	CHECK_EQ(utf8_len("\xe0\x80\x80"), 0);
	CHECK_EQ(utf8_len("\xed\xa0\x80"), 0);
	CHECK_EQ(utf8_len("\xf4\x90\x80\x80"), 0);
	CHECK_EQ(utf8_len("\x80"), 0);
	CHECK_EQ(utf8_len("\xe2\x82"), 0);

	o = proto_reply_error(PROTO_E_UNKNOWN_COMMAND, NULL,
	    "unknown command '\xff\xfe\xc3\xa9\xe2\x82'");
	s = proto_serialize(o, &len);
	json_object_put(o);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "'?" "?\xc3\xa9?" "?'") != NULL);
	for (i = 0; i < len; i += utf8_len(s + i))
		if (utf8_len(s + i) == 0)
			break;
	CHECK_EQ(i, len);
	free(s);
}

int
main(void)
{
	test_parse_valid();
	test_parse_invalid();
	test_err_names();
	test_build();
	test_utf8();
	return check_exit();
}

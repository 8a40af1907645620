/*
 * jemit: a table of named fields over a struct of every kind the rows
 * read, checked against the JSON text it makes (keys, their order, the
 * values' types and values), the empty rules and the conditions.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "jemit.h"

struct inner {
	uint64_t	 a;
	uint32_t	 b;
};

struct outer {
	uint8_t		 u8;
	uint16_t	 u16;
	unsigned int	 u32;
	uint64_t	 u64;
	int		 neg;
	time_t		 when;
	int8_t		 small;
	int		 flag;
	char		 name[8];
	char		 empty[8];
	const char	*ptr;
	const char	*none;
	struct inner	 in;
	int		 show;
};

static const struct jemit_field inner_rows[] = {
	JEMIT_U("a", struct inner, a),
	JEMIT_U("b", struct inner, b),
	JEMIT_ROWS_END
};

static void
add_twice(json_object *o, const char *key, const void *base)
{
	const struct outer	*x = base;

	json_object_object_add(o, key, json_object_new_uint64(x->u64 * 2));
}

static const struct jemit_field shown_rows[] = {
	JEMIT_U("group_u16", struct outer, u16),
	JEMIT_B("group_flag", struct outer, flag),
	JEMIT_ROWS_END
};

static const struct jemit_field outer_rows[] = {
	JEMIT_U("u8", struct outer, u8),
	JEMIT_U("u16", struct outer, u16),
	JEMIT_U("u32", struct outer, u32),
	JEMIT_U("u64", struct outer, u64),
	JEMIT_I("neg", struct outer, neg),
	JEMIT_I("when", struct outer, when),
	JEMIT_I("small", struct outer, small),
	JEMIT_B("flag", struct outer, flag),
	JEMIT_S("name", struct outer, name),
	JEMIT_S("empty", struct outer, empty),
	{ .key = "empty_omitted", .empty = JEMIT_OMIT,
	    .member = JEMIT_MEMBER(JEMIT_STR, struct outer, empty) },
	{ .key = "empty_null", .empty = JEMIT_NULL,
	    .member = JEMIT_MEMBER(JEMIT_STR, struct outer, empty) },
	JEMIT_SP("ptr", struct outer, ptr),
	JEMIT_SP("none", struct outer, none),
	{ .key = "none_omitted", .empty = JEMIT_OMIT,
	    .member = JEMIT_MEMBER(JEMIT_STRP, struct outer, none) },
	{ .key = "zero_null", .empty = JEMIT_NULL,
	    .member = JEMIT_MEMBER(JEMIT_UINT, struct outer, in.b) },
	JEMIT_U("nested_a", struct outer, in.a),
	JEMIT_OBJ("in", struct outer, in, inner_rows),
	JEMIT_SUB(struct outer, in, inner_rows),
	JEMIT_FN_ROW("twice", add_twice),
	{ .key = "only_shown",
	    .member = JEMIT_MEMBER(JEMIT_UINT, struct outer, u8),
	    .when = JEMIT_MEMBER(JEMIT_UINT, struct outer, show) },
	JEMIT_IF(JEMIT_UINT, struct outer, show, shown_rows),
	/* conditions on strings: "" and NULL are empty */
	{ .key = "if_text",
	    .member = JEMIT_MEMBER(JEMIT_UINT, struct outer, u8),
	    .when = JEMIT_MEMBER(JEMIT_STR, struct outer, empty) },
	{ .key = "if_ptr",
	    .member = JEMIT_MEMBER(JEMIT_UINT, struct outer, u8),
	    .when = JEMIT_MEMBER(JEMIT_STRP, struct outer, none) },
	JEMIT_ROWS_END
};

static const char *
text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

int
main(void)
{
	struct outer	 x;
	json_object	*o, *v;
	const char	*want;

	memset(&x, 0, sizeof(x));
	x.u8 = 200;
	x.u16 = 65535;
	x.u32 = 4000000000u;
	x.u64 = UINT64_MAX;
	x.neg = -5;
	x.when = (time_t)1767225600;
	x.small = -128;
	x.flag = 7;
	/* a full array without its NUL: the row stops at the array's end */
	memcpy(x.name, "abcdefgh", 8);
	x.ptr = "p\"q";
	x.in.a = 3;

	o = jemit_object(outer_rows, &x);
	want = "{\"u8\":200,\"u16\":65535,\"u32\":4000000000,"
	    "\"u64\":18446744073709551615,\"neg\":-5,\"when\":1767225600,"
	    "\"small\":-128,\"flag\":true,\"name\":\"abcdefgh\",\"empty\":\"\","
	    "\"empty_null\":null,\"ptr\":\"p\\\"q\",\"none\":null,"
	    "\"zero_null\":null,\"nested_a\":3,\"in\":{\"a\":3,\"b\":0},"
	    "\"a\":3,\"b\":0,\"twice\":18446744073709551614}";
	CHECK(strcmp(text(o), want) == 0);
	if (strcmp(text(o), want) != 0)
		printf("got  %s\nwant %s\n", text(o), want);
	/* the types json-c hands a reader back */
	CHECK(json_object_object_get_ex(o, "u64", &v) &&
	    json_object_get_type(v) == json_type_int &&
	    json_object_get_uint64(v) == UINT64_MAX);
	CHECK(json_object_object_get_ex(o, "neg", &v) &&
	    json_object_get_int64(v) == -5);
	CHECK(json_object_object_get_ex(o, "flag", &v) &&
	    json_object_get_type(v) == json_type_boolean);
	CHECK(json_object_object_get_ex(o, "none", &v) && v == NULL);
	CHECK(!json_object_object_get_ex(o, "none_omitted", NULL));
	CHECK(!json_object_object_get_ex(o, "empty_omitted", NULL));
	CHECK(!json_object_object_get_ex(o, "only_shown", NULL));
	CHECK(!json_object_object_get_ex(o, "group_u16", NULL));
	CHECK(!json_object_object_get_ex(o, "if_text", NULL));
	CHECK(!json_object_object_get_ex(o, "if_ptr", NULL));
	json_object_put(o);

	/* the other side of each empty rule and of the condition */
	x.show = 1;
	x.flag = 0;
	x.in.b = 9;
	x.none = "";
	snprintf(x.empty, sizeof(x.empty), "e");
	o = jemit_object(outer_rows, &x);
	CHECK(json_object_object_get_ex(o, "only_shown", &v) &&
	    json_object_get_int(v) == 200);
	/* a group: its rows in the table's order, at the group's place */
	CHECK(strstr(text(o), "\"only_shown\":200,\"group_u16\":65535,"
	    "\"group_flag\":false,\"if_text\":200}") != NULL);
	CHECK(!json_object_object_get_ex(o, "if_ptr", NULL));
	CHECK(json_object_object_get_ex(o, "flag", &v) &&
	    json_object_get_type(v) == json_type_boolean &&
	    !json_object_get_boolean(v));
	CHECK(json_object_object_get_ex(o, "zero_null", &v) &&
	    json_object_get_int(v) == 9);
	CHECK(json_object_object_get_ex(o, "empty_omitted", &v) &&
	    strcmp(json_object_get_string(v), "e") == 0);
	CHECK(json_object_object_get_ex(o, "empty_null", &v) &&
	    strcmp(json_object_get_string(v), "e") == 0);
	/* "" of a pointer is kept as it is, and empty to the rules */
	CHECK(json_object_object_get_ex(o, "none", &v) &&
	    strcmp(json_object_get_string(v), "") == 0);
	CHECK(!json_object_object_get_ex(o, "none_omitted", NULL));
	json_object_put(o);

	/* an empty table adds nothing; jemit_add adds to what is there */
	o = json_object_new_object();
	json_object_object_add(o, "before", json_object_new_int(1));
	jemit_add(o, inner_rows, &x.in);
	CHECK(strcmp(text(o), "{\"before\":1,\"a\":3,\"b\":9}") == 0);
	json_object_put(o);
	return check_exit();
}

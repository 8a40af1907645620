/*
 * jemit: JSON objects from tables of named fields (see jemit.h).
 */
#include <string.h>

#include "jemit.h"

/* An integer member of 1, 2, 4 or 8 bytes, sign-extended when signed,
 * read without assuming its alignment. */
static uint64_t
jemit_integer(const unsigned char *p, size_t size, int sign)
{
	uint8_t		 u8;
	uint16_t	 u16;
	uint32_t	 u32;
	uint64_t	 u64 = 0;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return sign ? (uint64_t)(int64_t)(int8_t)u8 : u8;
	case 2:
		memcpy(&u16, p, 2);
		return sign ? (uint64_t)(int64_t)(int16_t)u16 : u16;
	case 4:
		memcpy(&u32, p, 4);
		return sign ? (uint64_t)(int64_t)(int32_t)u32 : u32;
	case 8:
		memcpy(&u64, p, 8);
		break;
	}
	return u64;
}

/* A string member as text (*len bytes), or NULL for a NULL pointer. */
static const char *
jemit_str(const struct jemit_member *m, const unsigned char *p, size_t *len)
{
	const char	*s;

	if (m->type == JEMIT_STR) {
		s = (const char *)p;
		*len = strnlen(s, m->size);
		return s;
	}
	memcpy(&s, p, sizeof(s));
	*len = s != NULL ? strlen(s) : 0;
	return s;
}

/* Whether member m of the struct at base is empty: 0, "" or NULL. */
static int
jemit_empty(const struct jemit_member *m, const unsigned char *base)
{
	size_t	 len;

	switch (m->type) {
	case JEMIT_STR:
	case JEMIT_STRP:
		return jemit_str(m, base + m->off, &len) == NULL || len == 0;
	default:
		return jemit_integer(base + m->off, m->size, 0) == 0;
	}
}

/* The value of a scalar member. */
static json_object *
jemit_value(const struct jemit_member *m, const unsigned char *base)
{
	const unsigned char	*p = base + m->off;
	const char		*s;
	size_t			 len;

	switch (m->type) {
	case JEMIT_UINT:
		return json_object_new_uint64(jemit_integer(p, m->size, 0));
	case JEMIT_INT:
		return json_object_new_int64(
		    (int64_t)jemit_integer(p, m->size, 1));
	case JEMIT_BOOL:
		return json_object_new_boolean(jemit_integer(p, m->size,
		    0) != 0);
	case JEMIT_STR:
	case JEMIT_STRP:
		/* a NULL pointer is null whatever the row says */
		s = jemit_str(m, p, &len);
		return s != NULL ? json_object_new_string_len(s, (int)len) :
		    NULL;
	default:
		return NULL;
	}
}

void
jemit_add(json_object *o, const struct jemit_field *t, const void *base)
{
	const unsigned char		*b = base;
	const struct jemit_field	*f;
	int				 keep;

	for (f = t; f->member.type != JEMIT_END; f++) {
		if (f->when.type != JEMIT_END && jemit_empty(&f->when, b))
			continue;
		switch (f->member.type) {
		case JEMIT_FIELDS:
			jemit_add(o, f->sub, b + f->member.off);
			break;
		case JEMIT_OBJECT:
			json_object_object_add(o, f->key,
			    jemit_object(f->sub, b + f->member.off));
			break;
		case JEMIT_FN:
			f->add(o, f->key, base);
			break;
		default:
			keep = f->empty == JEMIT_KEEP ||
			    !jemit_empty(&f->member, b);
			if (keep || f->empty == JEMIT_NULL)
				json_object_object_add(o, f->key, keep ?
				    jemit_value(&f->member, b) : NULL);
			break;
		}
	}
}

json_object *
jemit_object(const struct jemit_field *t, const void *base)
{
	json_object	*o;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	jemit_add(o, t, base);
	return o;
}

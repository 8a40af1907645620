/*
 * jemit: JSON objects from tables of named fields. A row names a key, the
 * kind of C member it reads and where the member is in its struct
 * (offsetof, sizeof); jemit_add walks a table over one struct and adds
 * the keys in the table's order. Status, the manifest, the sessions and
 * the hand-off are each a table plus what is really special about them:
 * a row whose function adds the key, rows that stand only when a member
 * is set.
 *
 * A table ends with a row of type JEMIT_END ({ 0 }). Every function here
 * is pure: it runs on whichever thread owns the struct it reads.
 */
#ifndef PERFSPILL_JEMIT_H
#define PERFSPILL_JEMIT_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

enum jemit_type {
	JEMIT_END = 0,	/* the row that ends a table */
	JEMIT_UINT,	/* an unsigned integer of 1, 2, 4 or 8 bytes */
	JEMIT_INT,	/* a signed one (int, time_t) */
	JEMIT_BOOL,	/* an integer: true when it is not 0 */
	JEMIT_STR,	/* a char array, up to its NUL or its size */
	JEMIT_STRP,	/* a const char * (NULL: empty) */
	JEMIT_FIELDS,	/* a member struct walked with sub, its keys added
			 * to this object (no key of its own) */
	JEMIT_OBJECT,	/* ...in an object of its own under key */
	JEMIT_FN,	/* add(o, key, base) adds the key, or nothing */
};

/* How a row writes an empty value (0, "", a NULL string). */
enum jemit_empty {
	JEMIT_KEEP = 0,	/* as any other: 0, "" (a NULL string: null) */
	JEMIT_OMIT,	/* not at all: the key is absent */
	JEMIT_NULL,	/* as null */
};

/* A row's own way to add key to o from the struct at base. */
typedef void	(*jemit_add_fn)(json_object *o, const char *key,
		    const void *base);

/* A scalar member of a struct: its kind, where it is, its sizeof. */
struct jemit_member {
	enum jemit_type		 type;
	size_t			 off;
	size_t			 size;
};

struct jemit_field {
	const char			*key;
	struct jemit_member		 member;	/* what it reads */
	enum jemit_empty		 empty;
	/* JEMIT_FIELDS, JEMIT_OBJECT: the member's own table */
	const struct jemit_field	*sub;
	jemit_add_fn			 add;	/* JEMIT_FN */
	/* The row stands only when this member is not empty (type
	 * JEMIT_END: always). */
	struct jemit_member		 when;
};

/* Member m of struct type T, of kind ty. */
#define JEMIT_MEMBER(ty, T, m)	\
	{ (ty), offsetof(T, m), sizeof(((T *)0)->m) }

/* The common rows: key k from member m of T. */
#define JEMIT_ROW(k, ty, T, m)	\
	{ .key = (k), .member = JEMIT_MEMBER(ty, T, m) }
#define JEMIT_U(k, T, m)	JEMIT_ROW(k, JEMIT_UINT, T, m)
#define JEMIT_I(k, T, m)	JEMIT_ROW(k, JEMIT_INT, T, m)
#define JEMIT_B(k, T, m)	JEMIT_ROW(k, JEMIT_BOOL, T, m)
#define JEMIT_S(k, T, m)	JEMIT_ROW(k, JEMIT_STR, T, m)
#define JEMIT_SP(k, T, m)	JEMIT_ROW(k, JEMIT_STRP, T, m)
/* Member m of T, itself a struct, walked with table t. */
#define JEMIT_SUB(T, m, t)	\
	{ .member = JEMIT_MEMBER(JEMIT_FIELDS, T, m), .sub = (t) }
#define JEMIT_OBJ(k, T, m, t)	\
	{ .key = (k), .member = JEMIT_MEMBER(JEMIT_OBJECT, T, m), \
	    .sub = (t) }
/* The rows of table t over the same struct, when member m of T, of kind
 * ty, is not empty. */
#define JEMIT_IF(ty, T, m, t)	\
	{ .member = { JEMIT_FIELDS, 0, 0 }, .sub = (t), \
	    .when = JEMIT_MEMBER(ty, T, m) }
/* Key k as function f adds it. */
#define JEMIT_FN_ROW(k, f)	\
	{ .key = (k), .member = { JEMIT_FN, 0, 0 }, .add = (f) }
#define JEMIT_ROWS_END		{ .member = { JEMIT_END, 0, 0 } }

/* Adds the keys of table t, read from the struct at base, to o. */
void		 jemit_add(json_object *o, const struct jemit_field *t,
		    const void *base);
/* A new object of them, or NULL without memory. */
json_object	*jemit_object(const struct jemit_field *t, const void *base);

#endif

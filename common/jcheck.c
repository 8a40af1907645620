/*
 * jcheck: duplicate keys and \u0000 in JSON text json-c accepted, and the
 * place of a key (see jcheck.h). The walk trusts the structure, since
 * json-c has checked it: it only needs to tell strings, keys, comments and
 * container brackets apart.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jcheck.h"

/* json-c refuses nesting deeper than 32 by default; anything deeper here
 * is not text json-c accepted. */
#define JCHECK_MAX_DEPTH	64

struct jcheck {
	const char	*buf;
	size_t		 len;
	size_t		 pos;
	/* per open container: the keys seen so far, NULL for an array */
	json_object	*keys[JCHECK_MAX_DEPTH];
	int		 depth;
	const char	*want;		/* jcheck_key_offset's key */
	size_t		 off;		/* where the walk stopped */
	char		*msg;
	size_t		 msglen;
};

static int __attribute__((format(printf, 3, 4)))
jcheck_fail(struct jcheck *j, size_t off, const char *fmt, ...)
{
	va_list	 ap;

	j->off = off;
	if (j->msg != NULL) {
		va_start(ap, fmt);
		vsnprintf(j->msg, j->msglen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Past whitespace and the comments json-c allows outside strict mode. */
static void
jcheck_skip(struct jcheck *j)
{
	const char	*e;

	while (j->pos < j->len) {
		switch (j->buf[j->pos]) {
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			j->pos++;
			continue;
		case '/':
			if (j->pos + 1 >= j->len)
				return;
			if (j->buf[j->pos + 1] == '*') {
				e = memmem(j->buf + j->pos + 2,
				    j->len - j->pos - 2, "*/", 2);
				j->pos = e ? (size_t)(e - j->buf) + 2 : j->len;
				continue;
			}
			if (j->buf[j->pos + 1] == '/') {
				e = memchr(j->buf + j->pos, '\n',
				    j->len - j->pos);
				j->pos = e ? (size_t)(e - j->buf) + 1 : j->len;
				continue;
			}
			return;
		default:
			return;
		}
	}
}

static int
jcheck_hex4(const char *s, size_t n, unsigned int *out)
{
	unsigned int	 v = 0;
	size_t		 i;

	if (n < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		v <<= 4;
		if (s[i] >= '0' && s[i] <= '9')
			v |= (unsigned int)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			v |= (unsigned int)(s[i] - 'a' + 10);
		else if (s[i] >= 'A' && s[i] <= 'F')
			v |= (unsigned int)(s[i] - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t
jcheck_utf8(unsigned int cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The string at pos (either quote, as json-c takes both), decoded so that
 * "a" and "\u0061" are the same key. NULL when it holds a NUL (or on
 * out of memory, with *nul left 0); pos ends past the closing quote.
 */
static char *
jcheck_string(struct jcheck *j, int *nul)
{
	const char	*b = j->buf;
	char		 q = b[j->pos++], *out, *o;
	unsigned int	 cp, lo;

	*nul = 0;
	/* a decoded string is never longer than its text */
	if ((out = malloc(j->len - j->pos + 1)) == NULL)
		return NULL;
	o = out;
	while (j->pos < j->len && b[j->pos] != q) {
		if (b[j->pos] == '\0')
			*nul = 1;
		if (b[j->pos] != '\\' || j->pos + 1 >= j->len) {
			*o++ = b[j->pos++];
			continue;
		}
		j->pos += 2;
		switch (b[j->pos - 1]) {
		case 'b':	*o++ = '\b'; break;
		case 'f':	*o++ = '\f'; break;
		case 'n':	*o++ = '\n'; break;
		case 'r':	*o++ = '\r'; break;
		case 't':	*o++ = '\t'; break;
		case 'u':
			if (jcheck_hex4(b + j->pos, j->len - j->pos, &cp) == -1)
				break;
			j->pos += 4;
			if (cp == 0)
				*nul = 1;
			if (cp >= 0xd800 && cp < 0xdc00 &&
			    j->pos + 1 < j->len && b[j->pos] == '\\' &&
			    b[j->pos + 1] == 'u' &&
			    jcheck_hex4(b + j->pos + 2, j->len - j->pos - 2,
			    &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				j->pos += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
			}
			o += jcheck_utf8(cp, o);
			break;
		default:
			*o++ = b[j->pos - 1];
			break;
		}
	}
	j->pos++;
	*o = '\0';
	if (*nul) {
		free(out);
		return NULL;
	}
	return out;
}

/* A string: refuse a NUL; if it is a key, refuse a second one of its
 * object and stop at the wanted top-level key. 1 when found. */
static int
jcheck_token(struct jcheck *j)
{
	size_t		 start = j->pos;
	char		*s;
	int		 nul, key, rc = 0;
	json_object	*seen;

	if ((s = jcheck_string(j, &nul)) == NULL)
		return nul ? jcheck_fail(j, start, "a string holds %s",
		    "\\u0000 (a NUL byte)") : jcheck_fail(j, start, "%s",
		    "out of memory");
	jcheck_skip(j);
	key = j->depth > 0 && (seen = j->keys[j->depth - 1]) != NULL &&
	    j->pos < j->len && j->buf[j->pos] == ':';
	if (!key)
		goto out;
	if (j->want != NULL && j->depth == 1 && strcmp(s, j->want) == 0) {
		j->off = start;
		rc = 1;
		goto out;
	}
	if (json_object_object_get_ex(seen, s, NULL)) {
		rc = jcheck_fail(j, start, "duplicate key '%.64s'", s);
		goto out;
	}
	if (json_object_object_add(seen, s, NULL) != 0)
		rc = jcheck_fail(j, start, "%s", "out of memory");
out:
	free(s);
	return rc;
}

static int
jcheck_walk(struct jcheck *j)
{
	int	 rc = 0;
	char	 c;

	while (rc == 0) {
		jcheck_skip(j);
		if (j->pos >= j->len)
			break;
		c = j->buf[j->pos];
		if (c == '{' || c == '[') {
			if (j->depth == JCHECK_MAX_DEPTH) {
				rc = jcheck_fail(j, j->pos, "%s",
				    "nested too deep");
				break;
			}
			j->keys[j->depth++] = c == '{' ?
			    json_object_new_object() : NULL;
			j->pos++;
		} else if (c == '}' || c == ']') {
			if (j->depth > 0)
				json_object_put(j->keys[--j->depth]);
			j->pos++;
		} else if (c == '"' || c == '\'')
			rc = jcheck_token(j);
		else
			j->pos++;
	}
	while (j->depth > 0)
		json_object_put(j->keys[--j->depth]);
	return rc;
}

int
jcheck_text(const char *buf, size_t len, size_t *off, char *msg,
    size_t msglen)
{
	struct jcheck	 j;

	memset(&j, 0, sizeof(j));
	j.buf = buf;
	j.len = len;
	j.msg = msg;
	j.msglen = msglen;
	if (jcheck_walk(&j) == 0)
		return 0;
	*off = j.off;
	return -1;
}

int
jcheck_key_offset(const char *buf, size_t len, const char *key, size_t *off)
{
	struct jcheck	 j;

	memset(&j, 0, sizeof(j));
	j.buf = buf;
	j.len = len;
	j.want = key;
	if (jcheck_walk(&j) != 1)
		return -1;
	*off = j.off;
	return 0;
}

void
jcheck_line_col(const char *buf, size_t off, size_t *line, size_t *col)
{
	size_t	 i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && buf[i] != '\0'; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else
			(*col)++;
	}
}

/*
 * jcheck: what json-c lets through and we refuse. json-c keeps the last of
 * two equal keys, cuts a key at \u0000 and hands out a string's C view
 * cut at its first NUL, so a peer could make the text say one thing and
 * the parsed object another ("status\u0000junk" runs status). jcheck walks
 * text that json-c has already accepted and finds those, by byte offset.
 * It also finds where a top-level key stands, so that an error about a
 * setting can name its line and column.
 */
#ifndef PERFSPILL_JCHECK_H
#define PERFSPILL_JCHECK_H

#include <stddef.h>

/*
 * 0 when buf[0..len), JSON that json-c accepted (comments allowed), has no
 * duplicate key in any object and no \u0000 in any string or key; -1 with
 * *off (where the offending string starts) and msg filled otherwise.
 */
int	jcheck_text(const char *buf, size_t len, size_t *off, char *msg,
	    size_t msglen);

/* Offset of the top-level key name in buf's object; -1 when absent. */
int	jcheck_key_offset(const char *buf, size_t len, const char *key,
	    size_t *off);

/* The 1-based line and column of byte off of buf. */
void	jcheck_line_col(const char *buf, size_t off, size_t *line,
	    size_t *col);

#endif

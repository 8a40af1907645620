/*
 * utf8: keeping text UTF-8. The protocol's replies and the metrics page
 * are UTF-8 (a reader refuses the whole text for one bad byte), while
 * what goes into them may come from elsewhere: a command name a peer
 * sent, a path of the file system in another encoding.
 */
#ifndef PERFSPILL_UTF8_H
#define PERFSPILL_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the UTF-8 character at s, or 0 when the bytes
 * there are none (overlong forms and surrogates included); s[0] != 0. */
size_t	utf8_len(const char *s);
/* In place: every byte that starts no UTF-8 character becomes '?'. */
void	utf8_scrub(char *s);

#endif

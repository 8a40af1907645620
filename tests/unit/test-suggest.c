/*
 * suggest: "did you mean" picks a typo's word or the longer name a word
 * begins, and nothing for a word far from every one.
 */
#include "check.h"
#include "suggest.h"

int
main(void)
{
	static const char *const keys[] = { "events", "freq", "period",
	    "mmap_pages", "cblocks", "rotate_size", "rotate_interval" };
	static const char *const comms[] = { "bash", "python3", "pythonista",
	    "sshd" };
	const char	*s;

	s = suggest_among("evnets", keys, 7);
	CHECK(s != NULL && strcmp(s, "events") == 0);
	s = suggest_among("frq", keys, 7);
	CHECK(s != NULL && strcmp(s, "freq") == 0);
	s = suggest_among("rotate_sise", keys, 7);
	CHECK(s != NULL && strcmp(s, "rotate_size") == 0);
	s = suggest_among("mmap-pages", keys, 7);
	CHECK(s != NULL && strcmp(s, "mmap_pages") == 0);
	CHECK(suggest_among("xyzzy", keys, 7) == NULL);
	CHECK(suggest_among("events", keys, 7) == NULL);	/* exact */
	CHECK(suggest_among("", keys, 7) == NULL);
	/* python is python3 two edits away, and the start of pythonista */
	s = suggest_among("python", comms, 4);
	CHECK(s != NULL && strcmp(s, "python3") == 0);
	s = suggest_among("pythonis", comms, 4);
	CHECK(s != NULL && strcmp(s, "pythonista") == 0);
	/* one letter is no typo of another */
	CHECK(suggest_among("a", comms, 4) == NULL);
	return check_exit();
}

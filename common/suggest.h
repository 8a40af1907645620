/*
 * suggest: "did you mean" for a word a user typed (a setting, an option,
 * a command name) among the words that exist: one it begins (python for
 * python3) or one at most two edits away (evnets for events). Pure; any
 * thread.
 */
#ifndef PERFSPILL_SUGGEST_H
#define PERFSPILL_SUGGEST_H

#include <stddef.h>

struct suggest {
	const char	*want;
	const char	*best;
	size_t		 score;		/* of best: lower is nearer */
};

void		 suggest_init(struct suggest *, const char *want);
/* Offer one existing word; the nearest offered is kept. */
void		 suggest_offer(struct suggest *, const char *word);
/* The nearest word offered, or NULL when none is near enough. */
const char	*suggest_best(const struct suggest *);

/* The same over an array. */
const char	*suggest_among(const char *want, const char *const *words,
		    size_t n);

#endif

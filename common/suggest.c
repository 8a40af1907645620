/*
 * suggest: the nearest word (see suggest.h), by Levenshtein distance.
 */
#include <string.h>

#include "suggest.h"

/* Words longer than this are compared by their first bytes only. */
#define SUGGEST_LEN	64

static size_t
suggest_distance(const char *a, const char *b)
{
	size_t	 row[SUGGEST_LEN + 1], i, j, la, lb, diag, up;

	la = strlen(a) < SUGGEST_LEN ? strlen(a) : SUGGEST_LEN;
	lb = strlen(b) < SUGGEST_LEN ? strlen(b) : SUGGEST_LEN;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

void
suggest_init(struct suggest *s, const char *want)
{
	s->want = want;
	s->best = NULL;
	s->score = (size_t)-1;
}

void
suggest_offer(struct suggest *s, const char *word)
{
	size_t	 lw = strlen(s->want), d, score;
	int	 prefix;

	if (strcmp(word, s->want) == 0 || lw == 0)
		return;
	d = suggest_distance(s->want, word);
	/* the start of a longer name (python for python3), or a typo: two
	 * edits at most, and fewer than the word is long */
	prefix = lw >= 3 && strncmp(word, s->want, lw) == 0;
	if (!prefix && !(d <= 2 && d < lw))
		return;
	/* of two as near, the one the word begins */
	score = 2 * d - (size_t)prefix;
	if (score < s->score) {
		s->best = word;
		s->score = score;
	}
}

const char *
suggest_best(const struct suggest *s)
{
	return s->best;
}

const char *
suggest_among(const char *want, const char *const *words, size_t n)
{
	struct suggest	 s;
	size_t		 i;

	suggest_init(&s, want);
	for (i = 0; i < n; i++)
		suggest_offer(&s, words[i]);
	return suggest_best(&s);
}

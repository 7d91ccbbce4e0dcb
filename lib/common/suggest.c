/* suggest.c - "did you mean": the edit distance between two words, and the
 * closest of a set of candidates when it is close enough to name. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"

/* Words longer than this are never compared (no one misspells a paragraph). */
#define SUGGEST_MAX_LEN 64

static int lower(char c)
{
	return tolower((unsigned char)c);
}

size_t common_edit_distance(const char *a, const char *b)
{
	/* three rows of the optimal string alignment table (Damerau-Levenshtein
	 * with adjacent transpositions, each substring edited at most once) */
	size_t rows[3][SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return la > lb ? la : lb;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = lower(a[i - 1]) != lower(b[j - 1]);
			size_t d = prev[j] + 1; /* deletion */

			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1; /* insertion */
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost; /* substitution */
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1; /* transposition */
			cur[j] = d;
		}
		size_t *t = prev2;

		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

void suggest_init(struct suggest *s, const char *word)
{
	s->word = word;
	s->best = NULL;
	s->dist = 0;
}

void suggest_add(struct suggest *s, const char *candidate)
{
	size_t lw = strlen(s->word), lc = strlen(candidate), longer = lw > lc ? lw : lc;
	size_t limit = (longer + 2) / 4, d;

	/* about one edit in four letters, as git's "did you mean" allows,
	 * and never more than 3: a word with nothing in common is no typo */
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	if (strcmp(s->word, candidate) == 0 || lw == 0)
		return;
	/* the start of a longer name ("first" for "first-fastest") is as
	 * close as one edit */
	if (lw >= 3 && lw < lc && strncasecmp(candidate, s->word, lw) == 0)
		d = 1;
	else
		d = common_edit_distance(s->word, candidate);
	/* and it must keep something of both: every letter of 'q' differs
	 * from 's', yet 'q' is no typo of it */
	if (d > limit || d >= (lw < lc ? lw : lc) || (s->best && d >= s->dist))
		return;
	s->best = candidate;
	s->dist = d;
}

void suggest_add_words(struct suggest *s, const char *list)
{
	char word[SUGGEST_MAX_LEN + 1];

	while (list && *list) {
		size_t n = strcspn(list, " ");

		if (n <= SUGGEST_MAX_LEN) {
			memcpy(word, list, n);
			word[n] = '\0';
			suggest_add(s, word);
			/* the best must outlive `word`: point into the list */
			if (s->best == word)
				s->best = list;
		}
		list += n;
		list += strspn(list, " ");
	}
}

int suggest_len(const struct suggest *s)
{
	return s->best ? (int)strcspn(s->best, " ") : 0;
}

const char *suggest_hint(const struct suggest *s, char *buf, size_t len)
{
	if (!s->best)
		return "";
	snprintf(buf, len, "; did you mean '%.*s'?", suggest_len(s), s->best);
	return buf;
}

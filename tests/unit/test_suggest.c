/* test_suggest.c - the edit distance behind "did you mean", and which
 * candidates are close enough to suggest. */
#include <string.h>

#include "check.h"
#include "common/common.h"

static const char *best_of(const char *word, const char *const *cands)
{
	struct suggest sg;

	suggest_init(&sg, word);
	for (int k = 0; cands[k]; k++)
		suggest_add(&sg, cands[k]);
	return sg.best;
}

int main(void)
{
	static const char *const commands[] = {"parse",	   "sizes", "devices",	  "plan",
					       "validate", "run",   "bench",	  "tune",
					       "results",  "logic", "export-lib", NULL};
	static const char *const formats[] = {"table", "csv", "json", NULL};
	static const char *const phases[] = {"BenchmarkCommonParameters", "ForkParameters",
					     "BenchmarkForkParameters", "JoinParameters", NULL};
	struct suggest sg;
	char buf[64];

	/* the distance: each edit costs 1, a swap of neighbours too, case is free */
	CHECK(common_edit_distance("", "") == 0);
	CHECK(common_edit_distance("abc", "") == 3);
	CHECK(common_edit_distance("", "abc") == 3);
	CHECK(common_edit_distance("kitten", "sitting") == 3);
	CHECK(common_edit_distance("bnech", "bench") == 1);
	CHECK(common_edit_distance("ca", "abc") == 3); /* OSA, not full Damerau (2) */
	CHECK(common_edit_distance("ThreadTyle", "ThreadTile") == 1);
	CHECK(common_edit_distance("JSON", "json") == 0);
	CHECK(common_edit_distance("MinTim", "MinTime") == 1);
	CHECK(common_edit_distance("flaw", "lawn") == 2);
	CHECK(common_edit_distance("abcd", "badc") == 2);
	/* symmetric */
	CHECK(common_edit_distance("sizes", "exact") == common_edit_distance("exact", "sizes"));

	/* what is suggested */
	CHECK(best_of("bnech", commands) && strcmp(best_of("bnech", commands), "bench") == 0);
	CHECK(best_of("valdiate", commands) &&
	      strcmp(best_of("valdiate", commands), "validate") == 0);
	CHECK(best_of("jsn", formats) && strcmp(best_of("jsn", formats), "json") == 0);
	CHECK(best_of("JSON", formats) && strcmp(best_of("JSON", formats), "json") == 0);
	CHECK(best_of("ForkParameter", phases) &&
	      strcmp(best_of("ForkParameter", phases), "ForkParameters") == 0);
	/* too far from everything: nothing */
	CHECK(best_of("frobnicate", commands) == NULL);
	CHECK(best_of("xml", formats) == NULL);
	CHECK(best_of("", formats) == NULL);
	/* the start of a longer name */
	{
		static const char *const layouts[] = {"first-fastest", "last-fastest", NULL};

		CHECK(best_of("last", layouts) &&
		      strcmp(best_of("last", layouts), "last-fastest") == 0);
		CHECK(best_of("la", layouts) == NULL);
	}
	/* one letter for another is no typo */
	{
		static const char *const types[] = {"s", "d", "c", "z", "h", "b", NULL};

		CHECK(best_of("q", types) == NULL);
		CHECK(best_of("sx", types) == NULL);
	}
	/* the word itself is no suggestion */
	CHECK(best_of("json", formats) == NULL);
	/* the closest wins, the first among equals */
	{
		static const char *const c[] = {"tune", "tone", "tine", NULL};

		CHECK(strcmp(best_of("tane", c), "tune") == 0);
		CHECK(strcmp(best_of("tona", c), "tone") == 0);
	}

	/* a space-separated list, and the hint's wording */
	suggest_init(&sg, "yml");
	suggest_add_words(&sg, "table json yaml");
	CHECK(sg.best && suggest_len(&sg) == 4 && strncmp(sg.best, "yaml", 4) == 0);
	CHECK(strcmp(suggest_hint(&sg, buf, sizeof(buf)), "; did you mean 'yaml'?") == 0);
	suggest_init(&sg, "xml");
	suggest_add_words(&sg, "table csv");
	CHECK(sg.best == NULL && strcmp(suggest_hint(&sg, buf, sizeof(buf)), "") == 0);
	return check_done();
}

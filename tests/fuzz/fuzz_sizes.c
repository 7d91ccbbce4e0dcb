/* fuzz_sizes.c - fuzz target: the size-spec parsers (size_range_parse and
 * size_range_expand, size_exact_parse, sizes_parse_assign) and the stride
 * parser (problem_parse_strides), with problem_init on what they give.
 *
 * The input is lines: the first a contraction (an expression that fails to
 * parse selects "C[ijk]=A[ilk]*B[jlk]"), then any number of
 *   r:<Range spec>   e:<Exact spec>   a:<assignment, i=64,j=32>   s:<strides>
 * The parser of each line runs on its text. */
#include "fuzz.h"
#include "notation/notation.h"

/* Expansion is capped, as tcx bench and tcx sizes cap it. */
#define EXPAND_LIMIT 4096

static void check_sizes(const struct tcx_contraction *c, const int64_t *sizes, const char *what)
{
	for (int id = 0; id < c->nidx; id++)
		if (sizes[id] < 1)
			fuzz_fail("%s gave size %lld for index %d", what, (long long)sizes[id], id);
}

static void try_problem(const struct tcx_contraction *c, const int64_t *sizes, const char *strides)
{
	struct problem p;
	struct tcx_error err;
	enum tcx_status st = problem_init(&p, c, sizes, &err);

	fuzz_check_error(st, &err, "problem_init");
	if (st)
		return;
	for (int t = 0; t < 3; t++)
		if (p.extent[t] < 1 || problem_count(&p, (enum tensor_role)t) < 1)
			fuzz_fail("tensor %d of %lld elements", t, (long long)p.extent[t]);
	(void)problem_flops(&p);
	(void)problem_min_bytes(&p, true);
	(void)problem_bound_volume(&p);
	if (strides) {
		st = problem_parse_strides(&p, strides, &err);
		fuzz_check_error(st, &err, "problem_parse_strides");
		if (st == TCX_OK) {
			struct classification cls;

			st = problem_check_alias(&p, &err);
			fuzz_check_error(st, &err, "problem_check_alias");
			model_classify(c, &p, &cls);
		}
	}
}

static void one_line(const struct tcx_contraction *c, char kind, const char *text, int64_t *last)
{
	struct tcx_error err;
	enum tcx_status st;
	int64_t sizes[TCX_MAX_INDICES];

	memset(&err, 0, sizeof(err));
	switch (kind) {
	case 'r': {
		struct size_range r;
		struct size_list l;

		st = size_range_parse(text, c->nidx, &r, &err);
		fuzz_check_error(st, &err, "size_range_parse");
		if (st)
			return;
		size_list_init(&l, c->nidx);
		st = size_range_expand(&r, c->nidx, &l, EXPAND_LIMIT, &err);
		fuzz_check_error(st, &err, "size_range_expand");
		if (st == TCX_OK && l.count > EXPAND_LIMIT)
			fuzz_fail("expanded to %zu sizes, over the limit", l.count);
		if (st == TCX_OK) {
			size_list_sort_unique(&l);
			for (size_t k = 0; k < l.count; k++)
				check_sizes(c, l.v + k * (size_t)c->nidx, "size_range_expand");
			if (l.count)
				try_problem(c, l.v + (l.count - 1) * (size_t)c->nidx, NULL);
		}
		size_list_release(&l);
		return;
	}
	case 'e':
		st = size_exact_parse(text, c->nidx, sizes, &err);
		fuzz_check_error(st, &err, "size_exact_parse");
		break;
	case 'a':
		st = sizes_parse_assign(c, text, sizes, &err);
		fuzz_check_error(st, &err, "sizes_parse_assign");
		break;
	case 's':
		try_problem(c, last, text);
		return;
	default:
		return;
	}
	if (st)
		return;
	check_sizes(c, sizes, kind == 'e' ? "size_exact_parse" : "sizes_parse_assign");
	memcpy(last, sizes, sizeof(sizes));
	try_problem(c, sizes, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *line, *next;
	struct tcx_contraction *c = NULL;
	struct tcx_error err;
	int64_t last[TCX_MAX_INDICES];

	next = strchr(text, '\n');
	if (next)
		*next++ = '\0';
	if (notation_parse(text, TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) != TCX_OK &&
	    notation_parse("C[ijk]=A[ilk]*B[jlk]", TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) !=
		TCX_OK)
		fuzz_fail("the default contraction does not parse: %s", err.msg);
	for (int id = 0; id < TCX_MAX_INDICES; id++)
		last[id] = 3;
	for (line = next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] && line[1] == ':')
			one_line(c, line[0], line + 2, last);
	}
	contraction_free(c);
	free(text);
	return 0;
}

/* sizes.c - Tensile's ProblemSizes: Range and Exact specs, expanded the way
 * Tensile v3's code does (docs: tcx-sizes(1)). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

void size_list_init(struct size_list *l, int nidx)
{
	memset(l, 0, sizeof(*l));
	l->nidx = nidx;
}

void size_list_release(struct size_list *l)
{
	free(l->v);
	l->v = NULL;
	l->count = l->alloc = 0;
}

enum tcx_status size_list_add(struct size_list *l, const int64_t *sizes, struct tcx_error *err)
{
	if (l->count == l->alloc) {
		size_t n = l->alloc ? l->alloc * 2 : 64;
		int64_t *v = realloc(l->v, n * (size_t)l->nidx * sizeof(*v));

		if (!v)
			return tcx_fail(err, TCX_ENOMEM, "out of memory listing problem sizes");
		l->v = v;
		l->alloc = n;
	}
	memcpy(l->v + l->count * (size_t)l->nidx, sizes, (size_t)l->nidx * sizeof(*sizes));
	l->count++;
	return TCX_OK;
}

static int sort_width;

static int cmp_tuple(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	for (int k = 0; k < sort_width; k++)
		if (x[k] != y[k])
			return x[k] < y[k] ? -1 : 1;
	return 0;
}

void size_list_sort_unique(struct size_list *l)
{
	size_t w = (size_t)l->nidx, out = 0;

	if (l->count < 2)
		return;
	sort_width = l->nidx; /* qsort has no context argument in C17 */
	qsort(l->v, l->count, w * sizeof(int64_t), cmp_tuple);
	for (size_t k = 0; k < l->count; k++) {
		if (out && memcmp(l->v + (out - 1) * w, l->v + k * w, w * sizeof(int64_t)) == 0)
			continue;
		if (out != k)
			memmove(l->v + out * w, l->v + k * w, w * sizeof(int64_t));
		out++;
	}
	l->count = out;
}

/* A tiny reader for the flow lists of size specs: integers, [ ] and commas. */
struct lexer {
	const char *s;
	size_t i;
	const char *spec;
	struct tcx_error *err;
};

static void lx_ws(struct lexer *lx)
{
	while (isspace((unsigned char)lx->s[lx->i]))
		lx->i++;
}

static enum tcx_status lx_error(struct lexer *lx, const char *what)
{
	char c = lx->s[lx->i];

	if (!c)
		return tcx_fail_at(lx->err, TCX_EPARSE, 1, (unsigned)lx->i + 1,
				   "cannot parse sizes '%s': %s at the end", lx->spec, what);
	return tcx_fail_at(lx->err, TCX_EPARSE, 1, (unsigned)lx->i + 1,
			   "cannot parse sizes '%s': %s at '%c' (col %u)", lx->spec, what, c,
			   (unsigned)lx->i + 1);
}

static enum tcx_status lx_int(struct lexer *lx, int64_t *v)
{
	char buf[32];
	size_t n = 0;

	lx_ws(lx);
	if (lx->s[lx->i] == '-' || lx->s[lx->i] == '+')
		buf[n++] = lx->s[lx->i++];
	while (isdigit((unsigned char)lx->s[lx->i])) {
		if (n + 1 >= sizeof(buf))
			return tcx_fail(lx->err, TCX_ERANGE, "size in '%s' is too large", lx->spec);
		buf[n++] = lx->s[lx->i++];
	}
	buf[n] = '\0';
	if (n == 0 || !common_parse_i64(buf, v)) {
		if (n > 0)
			return tcx_fail(lx->err, TCX_ERANGE, "size '%s' in '%s' is too large", buf,
					lx->spec);
		return lx_error(lx, "expected a whole number");
	}
	if (isalpha((unsigned char)lx->s[lx->i]) || lx->s[lx->i] == '.')
		return lx_error(lx, "expected a whole number");
	return TCX_OK;
}

/* One item: a bare integer, or [ints...] (1 to 4 of them).  `nested` is
 * set when the item is itself a list of lists. */
struct item {
	bool list;
	int n;
	int64_t v[4];
};

static enum tcx_status lx_item(struct lexer *lx, struct item *it)
{
	enum tcx_status st;

	memset(it, 0, sizeof(*it));
	lx_ws(lx);
	if (lx->s[lx->i] != '[') {
		it->n = 1;
		return lx_int(lx, &it->v[0]);
	}
	lx->i++;
	it->list = true;
	for (;;) {
		lx_ws(lx);
		if (lx->s[lx->i] == ']' && it->n == 0)
			return lx_error(lx, "empty size list");
		if (it->n == 4)
			return lx_error(lx, "more than 4 numbers in one range ([min, step, incr, max])");
		st = lx_int(lx, &it->v[it->n]);
		if (st)
			return st;
		it->n++;
		lx_ws(lx);
		if (lx->s[lx->i] == ',') {
			lx->i++;
			continue;
		}
		if (lx->s[lx->i] == ']') {
			lx->i++;
			return TCX_OK;
		}
		return lx_error(lx, "expected ',' or ']'");
	}
}

static enum tcx_status check_entry(const struct size_entry *e, int id, const char *spec,
				   struct tcx_error *err)
{
	if (e->is_map)
		return TCX_OK;
	if (e->min < 1)
		return tcx_fail(err, TCX_ERANGE,
				"size range for index %d in '%s' starts at %lld: sizes must be at least 1",
				id, spec, (long long)e->min);
	if (e->max < e->min)
		return tcx_fail(err, TCX_ERANGE,
				"size range for index %d in '%s' ends (%lld) before it starts (%lld)",
				id, spec, (long long)e->max, (long long)e->min);
	if (e->step < 1 && e->max > e->min)
		return tcx_fail(err, TCX_ERANGE,
				"size range for index %d in '%s' has step %lld: it must be at least 1",
				id, spec, (long long)e->step);
	return TCX_OK;
}

enum tcx_status size_range_parse(const char *spec, int nidx, struct size_range *r,
				 struct tcx_error *err)
{
	struct lexer lx = { spec, 0, spec, err };
	struct item items[TCX_MAX_INDICES + 16];
	int n = 0;
	enum tcx_status st;
	size_t save;

	memset(r, 0, sizeof(*r));
	lx_ws(&lx);
	if (!spec[lx.i])
		return tcx_fail(err, TCX_EPARSE, "empty size range");
	/* An outer list of items: "[[16,1968],0,0]" (or "[ [16], 0 ]"). */
	save = lx.i;
	if (spec[lx.i] == '[') {
		size_t j = lx.i + 1;

		while (isspace((unsigned char)spec[j]))
			j++;
		if (spec[j] == '[') {
			lx.i = j;
			for (;;) {
				if (n >= (int)ARRAY_SIZE(items))
					return tcx_fail(err, TCX_EPARSE, "too many entries in '%s'",
							spec);
				st = lx_item(&lx, &items[n++]);
				if (st)
					return st;
				lx_ws(&lx);
				if (spec[lx.i] == ',') {
					lx.i++;
					continue;
				}
				if (spec[lx.i] == ']') {
					lx.i++;
					break;
				}
				return lx_error(&lx, "expected ',' or ']'");
			}
			lx_ws(&lx);
			if (spec[lx.i])
				return lx_error(&lx, "unexpected text after the list");
			goto normalise;
		}
	}
	lx.i = save;
	for (;;) {
		if (n >= (int)ARRAY_SIZE(items))
			return tcx_fail(err, TCX_EPARSE, "too many entries in '%s'", spec);
		st = lx_item(&lx, &items[n++]);
		if (st)
			return st;
		lx_ws(&lx);
		if (!spec[lx.i])
			break;
		if (spec[lx.i] != ',')
			return lx_error(&lx, "expected ','");
		lx.i++;
	}
normalise:
	if (n > nidx)
		tcx_log(TCX_LOG_WARN,
			"size range '%s' has %d entries but the problem has %d indices: the extra "
			"ones are ignored, as Tensile does",
			spec, n, nidx);
	r->n = nidx;
	for (int id = 0; id < nidx; id++) {
		struct size_entry *e = &r->e[id];
		const struct item *it = id < n ? &items[id] : NULL;

		if (!it || !it->list) {
			int64_t k = it ? it->v[0] : 0;

			if (k < 0 || k >= nidx)
				return tcx_fail(err, TCX_EINVAL,
						"entry %d of '%s' copies index %lld, which does not "
						"exist",
						id, spec, (long long)k);
			if (k == id)
				return tcx_fail(err, TCX_EINVAL,
						"entry %d of '%s' copies its own size: give it a list "
						"such as [64]",
						id, spec);
			e->is_map = true;
			e->map = (int)k;
			continue;
		}
		switch (it->n) {
		case 1:
			e->min = e->max = it->v[0];
			e->step = 1;
			e->incr = 0;
			break;
		case 2:
			e->min = it->v[0];
			e->step = it->v[0];
			e->incr = 0;
			e->max = it->v[1];
			break;
		case 3:
			e->min = it->v[0];
			e->step = it->v[1];
			e->incr = 0;
			e->max = it->v[2];
			break;
		default:
			e->min = it->v[0];
			e->step = it->v[1];
			e->incr = it->v[2];
			e->max = it->v[3];
			break;
		}
		st = check_entry(e, id, spec, err);
		if (st)
			return st;
	}
	/* mapped entries must reach a real one (no cycles) */
	for (int id = 0; id < nidx; id++) {
		int k = id, hops = 0;

		while (r->e[k].is_map && hops <= nidx) {
			k = r->e[k].map;
			hops++;
		}
		if (hops > nidx)
			return tcx_fail(err, TCX_EINVAL,
					"entries of '%s' copy each other in a cycle: one of them "
					"needs a list such as [64]",
					spec);
	}
	return TCX_OK;
}

enum tcx_status size_exact_parse(const char *spec, int nidx, int64_t *sizes,
				 struct tcx_error *err)
{
	struct lexer lx = { spec, 0, spec, err };
	bool bracket;
	int n = 0;
	enum tcx_status st;

	lx_ws(&lx);
	bracket = spec[lx.i] == '[';
	if (bracket)
		lx.i++;
	for (;;) {
		int64_t v;

		st = lx_int(&lx, &v);
		if (st)
			return st;
		if (n < nidx)
			sizes[n] = v;
		n++;
		if (v < 1)
			return tcx_fail(err, TCX_ERANGE,
					"exact size %lld in '%s' is not allowed: sizes must be at "
					"least 1%s",
					(long long)v, spec,
					v == 0 ? " (an empty problem has nothing to time or tune)" : "");
		lx_ws(&lx);
		if (spec[lx.i] == ',') {
			lx.i++;
			continue;
		}
		if (bracket && spec[lx.i] == ']') {
			lx.i++;
			lx_ws(&lx);
		}
		if (spec[lx.i])
			return lx_error(&lx, "expected ','");
		break;
	}
	if (n != nidx)
		return tcx_fail(err, TCX_EINVAL,
				"exact size '%s' has %d numbers but the problem has %d indices", spec,
				n, nidx);
	return TCX_OK;
}

enum tcx_status size_range_parse_for(const struct tcx_contraction *c, const char *spec,
				     struct size_range *r, struct tcx_error *err)
{
	int order[TCX_MAX_INDICES];
	struct size_range given;
	enum tcx_status st = size_range_parse(spec, c->nidx, &given, err);

	if (st)
		return st;
	contraction_positional_order(c, order);
	*r = given;
	for (int k = 0; k < given.n; k++) {
		r->e[order[k]] = given.e[k];
		if (given.e[k].is_map)
			r->e[order[k]].map = order[given.e[k].map];
	}
	return TCX_OK;
}

enum tcx_status size_exact_parse_for(const struct tcx_contraction *c, const char *spec,
				     int64_t *sizes, struct tcx_error *err)
{
	int order[TCX_MAX_INDICES];
	int64_t given[TCX_MAX_INDICES];
	enum tcx_status st;

	/* by name, as --sizes takes them: i=1024,j=1024,... */
	if (strchr(spec, '='))
		return sizes_parse_assign(c, spec, sizes, err);
	st = size_exact_parse(spec, c->nidx, given, err);
	if (st)
		return st;
	contraction_positional_order(c, order);
	for (int k = 0; k < c->nidx; k++)
		sizes[order[k]] = given[k];
	return TCX_OK;
}

/* The step after cur: cur + incr, saturated (a step past INT64_MAX ends
 * the range anyway). */
static int64_t step_after(int64_t cur, int64_t incr)
{
	int64_t next;

	if (common_add_overflows_i64(cur, incr, &next))
		return incr > 0 ? INT64_MAX : INT64_MIN;
	return next;
}

/* The number of values of e, counted no further than cap: a range such as
 * [1, 10^15] must not be walked value by value. */
static size_t entry_count_upto(const struct size_entry *e, size_t cap)
{
	size_t n = 0;
	int64_t size = e->min, cur = e->step;

	if (e->is_map)
		return 1;
	if (e->max < e->min)
		return 0;
	if (e->incr == 0 && cur >= 1) {
		/* an arithmetic progression: its length in closed form */
		uint64_t k = ((uint64_t)e->max - (uint64_t)e->min) / (uint64_t)cur + 1;

		return k < (uint64_t)cap ? (size_t)k : cap;
	}
	while (n < cap && size <= e->max) {
		n++;
		if (cur < 1 || common_add_overflows_i64(size, cur, &size))
			break;
		cur = step_after(cur, e->incr);
	}
	return n;
}

size_t size_entry_count(const struct size_entry *e)
{
	return entry_count_upto(e, SIZE_MAX);
}

/* The next size of an entry, or false past its max. */
static bool entry_next(const struct size_entry *e, int64_t *size, int64_t *cur)
{
	int64_t next;

	if (*cur < 1 || common_add_overflows_i64(*size, *cur, &next) || next > e->max)
		return false;
	*size = next;
	*cur = step_after(*cur, e->incr);
	return true;
}

enum tcx_status size_range_expand(const struct size_range *r, int nidx, struct size_list *l,
				  size_t limit, struct tcx_error *err)
{
	int64_t size[TCX_MAX_INDICES], cur[TCX_MAX_INDICES], out[TCX_MAX_INDICES];
	double total = 1;
	bool capped = false;
	enum tcx_status st;

	for (int id = 0; id < nidx; id++) {
		const struct size_entry *e = &r->e[id];

		if (!e->is_map) {
			size_t n = entry_count_upto(e, limit < SIZE_MAX ? limit + 1 : limit);

			capped |= n > limit;
			total *= (double)n;
			size[id] = e->min;
			cur[id] = e->step;
			/* walks the values: only for a range within the limit */
			if (e->max != e->min && n > 1 && n <= limit) {
				int64_t s = e->min, c = e->step, last = s;

				while (entry_next(e, &s, &c))
					last = s;
				if (last != e->max)
					tcx_log(TCX_LOG_INFO,
						"range for index %d stops at %lld: max %lld is not "
						"hit exactly",
						id, (long long)last, (long long)e->max);
			}
		}
	}
	if (capped)
		return tcx_fail(err, TCX_ERANGE,
				"size range expands to more problems than the limit of %zu", limit);
	if (total > (double)limit)
		return tcx_fail(err, TCX_ERANGE,
				"size range expands to %.0f problems, more than the limit of %zu",
				total, limit);
	for (;;) {
		int id;

		for (id = 0; id < nidx; id++) {
			int k = id;

			while (r->e[k].is_map)
				k = r->e[k].map;
			out[id] = size[k];
		}
		st = size_list_add(l, out, err);
		if (st)
			return st;
		/* odometer: the first list-valued index moves fastest */
		for (id = 0; id < nidx; id++) {
			const struct size_entry *e = &r->e[id];

			if (e->is_map)
				continue;
			if (entry_next(e, &size[id], &cur[id]))
				break;
			size[id] = e->min;
			cur[id] = e->step;
		}
		if (id == nidx)
			break;
	}
	return TCX_OK;
}

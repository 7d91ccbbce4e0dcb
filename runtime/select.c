/* select.c - choosing a solution for problem sizes: Tensile's logic (exact
 * sizes, then range rules), the nearest tuned size in log-size space, and a
 * performance model over problem and solution features.
 *
 * One source for two users: tcx compiles it into lib/logic/selector.c (which
 * includes this file), and `tcx export-lib` copies it into every library it
 * writes, so that `tcx logic eval` measures exactly the choices the exported
 * library makes.  Everything is static: include this file (it is not a
 * translation unit of its own); the includer supplies <math.h>, <stdint.h>,
 * <stdio.h> and <string.h>.  The types are in select.h.  C99, no other
 * dependency.
 *
 * Sizes are in index-id order (C's indices fastest first, then the bound
 * ones), one int64_t per index.
 */

#include "select.h"

static const char *sel_kind_name(int kind)
{
	static const char *const names[SEL_KINDS] = {"logic", "nearest", "model"};

	return kind >= 0 && kind < SEL_KINDS ? names[kind] : "?";
}

static int64_t sel_size(const int64_t *sizes, int id)
{
	return id < 0 ? 1 : sizes[id];
}

static int64_t sel_ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* Whether solution k can run these sizes (EdgeType None, LoopTail,
 * PackFreeIndices), as plan_accepts says for tcx. */
static int sel_accepts(const struct sel_table *t, int k, const int64_t *sizes)
{
	const struct sel_solution *s;

	if (k < 0 || k >= t->nsol)
		return 0;
	s = &t->sols[k];
	if (s->edge_none && (sel_size(sizes, t->d0) % s->mt0 || sel_size(sizes, t->d1) % s->mt1))
		return 0;
	if (!s->loop_tail && sel_size(sizes, t->du) % s->depth_u)
		return 0;
	if (s->pack0 >= 0 && (sel_size(sizes, t->d0) % s->vw0 ||
			      sel_size(sizes, t->d0) * sizes[s->pack0] > INT32_MAX))
		return 0;
	if (s->pack1 >= 0 && (sel_size(sizes, t->d1) % s->vw1 ||
			      sel_size(sizes, t->d1) * sizes[s->pack1] > INT32_MAX))
		return 0;
	return 1;
}

static void sel_sizes_text(const struct sel_table *t, const int64_t *sizes, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < t->nidx && n + 1 < len; i++) {
		int w = snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)sizes[i]);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* Tensile's logic: an exact entry, else the range tree; -1 when neither
 * names a solution. */
static int sel_logic(const struct sel_table *t, const int64_t *sizes, char *why, size_t len)
{
	int e, node = 0, depth;

	for (e = 0; e < t->nexact; e++)
		if (memcmp(t->exact_sizes + (size_t)e * (size_t)t->nidx, sizes,
			   sizeof(int64_t) * (size_t)t->nidx) == 0) {
			char sz[256];

			sel_sizes_text(t, sizes, sz, sizeof(sz));
			snprintf(why, len, "logic: exact size %s", sz);
			return t->exact_sol[e];
		}
	if (t->nnodes <= 0) {
		snprintf(why, len, "logic: no exact entry and no range rules");
		return -1;
	}
	for (depth = 0; depth < t->nnodes; depth++) {
		const struct sel_node *n = &t->nodes[node];
		int r;

		for (r = 0; r < n->nrules; r++) {
			const struct sel_rule *rule = &t->rules[n->first + r];

			if (rule->threshold < 0 || sizes[n->index] <= rule->threshold)
				break;
		}
		if (r == n->nrules) {
			snprintf(why, len, "logic: no range rule matches");
			return -1;
		}
		if (t->rules[n->first + r].child < 0) {
			snprintf(why, len, "logic: range rules");
			return t->rules[n->first + r].sol;
		}
		node = t->rules[n->first + r].child;
	}
	snprintf(why, len, "logic: the range tree is deeper than its nodes");
	return -1;
}

/* Squared distance of two size tuples in log2 space. */
static double sel_dist(const struct sel_table *t, const int64_t *a, const int64_t *b)
{
	double d = 0;
	int i;

	for (i = 0; i < t->nidx; i++) {
		double x = log2((double)a[i]) - log2((double)b[i]);

		d += x * x;
	}
	return d;
}

/* The nearest tuned size's fastest solution among those that can run
 * `sizes`. */
static int sel_nearest(const struct sel_table *t, const int64_t *sizes, char *why, size_t len)
{
	int best = -1, p, k;
	double bd = 0;
	int at = -1;

	for (p = 0; p < t->npoints; p++) {
		const int64_t *ps = t->point_sizes + (size_t)p * (size_t)t->nidx;
		const double *g = t->point_gflops + (size_t)p * (size_t)t->nsol;
		double d = sel_dist(t, sizes, ps), bg = 0;
		int win = -1;

		if (best >= 0 && d >= bd)
			continue;
		for (k = 0; k < t->nsol; k++)
			if (g[k] > bg && sel_accepts(t, k, sizes)) {
				bg = g[k];
				win = k;
			}
		if (win < 0)
			continue;
		best = win;
		bd = d;
		at = p;
	}
	if (best >= 0) {
		char sz[256];

		sel_sizes_text(t, t->point_sizes + (size_t)at * (size_t)t->nidx, sz, sizeof(sz));
		snprintf(why, len, "nearest: fastest at tuned size %s (log2 distance %.3g)", sz,
			 sqrt(bd));
	} else {
		snprintf(why, len, "nearest: no tuned size with a measurement");
	}
	return best;
}

/* The multiply-adds a launch of solution k schedules for `sizes`: every
 * macro tile is computed whole (edges padded to the tile), DepthU pads the
 * unrolled loop, GlobalSplitU splits it, and work-groups run in waves of
 * compute_units, a partial last wave costing a whole one. */
static double sel_work(const struct sel_table *t, int k, const int64_t *sizes)
{
	const struct sel_solution *s = &t->sols[k];
	int64_t n0 = sel_ceil_div(sel_size(sizes, t->d0), s->mt0);
	int64_t n1 = sel_ceil_div(sel_size(sizes, t->d1), s->mt1);
	int64_t su = sel_ceil_div(sel_size(sizes, t->du), s->depth_u) * s->depth_u;
	double other_free = 1, other_bound = 1, groups, waves, cu;
	int id;

	for (id = 0; id < t->nidx; id++) {
		if (id == t->d0 || id == t->d1 || id == t->du)
			continue;
		if (t->bound[id])
			other_bound *= (double)sizes[id];
		else
			other_free *= (double)sizes[id];
	}
	cu = t->compute_units > 0 ? t->compute_units : 1;
	groups = (double)n0 * (double)n1 * other_free * (s->gsu > 0 ? s->gsu : 1);
	waves = ceil(groups / cu);
	return waves * cu * (double)s->mt0 * (double)s->mt1 * (double)su * other_bound /
	       (s->gsu > 0 ? s->gsu : 1);
}

/* The useful multiply-adds: the product of the sizes. */
static double sel_useful(const struct sel_table *t, const int64_t *sizes)
{
	double f = 1;
	int i;

	for (i = 0; i < t->nidx; i++)
		f *= (double)sizes[i];
	return f;
}

/* The model's cost of solution k at `sizes`: the useful work times the
 * padding overhead (scheduled over useful work) to the power pad_exp. */
static double sel_cost(const struct sel_table *t, int k, const int64_t *sizes)
{
	double u = sel_useful(t, sizes);

	return u * pow(sel_work(t, k, sizes) / u, t->pad_exp);
}

/* The model's predicted time of solution k (milliseconds): its cost at
 * these sizes over its rate there, the rate (cost per millisecond) a
 * geometric mean of the rates measured at the tuned sizes, each weighted
 * exp(-(d^2 - dn^2) / (2 h^2)), d its log2 distance, dn the nearest one's,
 * h the bandwidth (0: the nearest alone).  Neighbours smooth out the noise
 * of single measurements.  < 0 when k was measured nowhere; *at is the
 * nearest tuned size where it was measured.  Point `skip` is left out (-1:
 * none), for fitting. */
static double sel_predict(const struct sel_table *t, int k, const int64_t *sizes, int skip, int *at)
{
	double dn = 0, sw = 0, slr = 0, h = t->bandwidth;
	int p, best = -1;

	for (p = 0; p < t->npoints; p++) {
		const int64_t *ps = t->point_sizes + (size_t)p * (size_t)t->nidx;
		double d;

		if (p == skip || t->point_gflops[(size_t)p * (size_t)t->nsol + (size_t)k] <= 0)
			continue;
		d = sel_dist(t, sizes, ps);
		if (best < 0 || d < dn) {
			best = p;
			dn = d;
		}
	}
	if (at)
		*at = best;
	if (best < 0)
		return -1;
	for (p = 0; p < t->npoints; p++) {
		const int64_t *ps = t->point_sizes + (size_t)p * (size_t)t->nidx;
		double g = t->point_gflops[(size_t)p * (size_t)t->nsol + (size_t)k], w, ms;

		if (p == skip || g <= 0)
			continue;
		if (h > 0)
			w = exp(-(sel_dist(t, sizes, ps) - dn) / (2.0 * h * h));
		else
			w = p == best;
		if (w < 1e-9)
			continue;
		ms = 2.0 * sel_useful(t, ps) / (g * 1e6);
		sw += w;
		slr += w * log(sel_cost(t, k, ps) / ms);
	}
	return sel_cost(t, k, sizes) / exp(slr / sw);
}

/* The solution the model predicts fastest among those that can run
 * `sizes`, leaving point `skip` out; -1 if none was measured. */
static int sel_model_pick(const struct sel_table *t, const int64_t *sizes, int skip, double *ms,
			  int *at)
{
	int best = -1, k, p;
	double bms = 0, v;

	for (k = 0; k < t->nsol; k++) {
		if (!sel_accepts(t, k, sizes))
			continue;
		v = sel_predict(t, k, sizes, skip, &p);
		if (v < 0 || (best >= 0 && v >= bms))
			continue;
		best = k;
		bms = v;
		if (at)
			*at = p;
	}
	if (ms)
		*ms = bms;
	return best;
}

/* The solution the model predicts fastest among those that can run `sizes`. */
static int sel_model(const struct sel_table *t, const int64_t *sizes, char *why, size_t len)
{
	int at = -1;
	double ms = 0;
	int best = sel_model_pick(t, sizes, -1, &ms, &at);

	if (best >= 0) {
		char sz[256];

		sel_sizes_text(t, t->point_sizes + (size_t)at * (size_t)t->nidx, sz, sizeof(sz));
		snprintf(why, len,
			 "model: predicted %.4g ms (padding exponent %g, bandwidth %g octaves; "
			 "nearest tuned size %s)",
			 ms, t->pad_exp, t->bandwidth, sz);
	} else {
		snprintf(why, len, "model: no solution was measured");
	}
	return best;
}

/* The choice of selector `kind`, falling back when it has no answer or its
 * answer cannot run these sizes: logic -> model -> nearest -> the first
 * solution that can run them.  -1 when no solution can.  `why` says which
 * rule chose. */
static int sel_choose(const struct sel_table *t, enum sel_kind kind, const int64_t *sizes,
		      char *why, size_t len)
{
	static const enum sel_kind order[SEL_KINDS][SEL_KINDS] = {
	    {SEL_LOGIC, SEL_MODEL, SEL_NEAREST},
	    {SEL_NEAREST, SEL_MODEL, SEL_LOGIC},
	    {SEL_MODEL, SEL_NEAREST, SEL_LOGIC},
	};
	/* the selectors, by kind */
	static int (*const by_kind[SEL_KINDS])(const struct sel_table *, const int64_t *, char *,
						size_t) = {sel_logic, sel_nearest, sel_model};
	int j, k;

	if ((int)kind < 0 || kind >= SEL_KINDS)
		kind = SEL_MODEL;
	for (j = 0; j < SEL_KINDS; j++) {
		char w[384];
		int s = by_kind[order[kind][j]](t, sizes, w, sizeof(w));

		if (s >= 0 && sel_accepts(t, s, sizes)) {
			snprintf(why, len, "%s%s", w, j ? " (fallback)" : "");
			return s;
		}
	}
	for (k = 0; k < t->nsol; k++)
		if (sel_accepts(t, k, sizes)) {
			snprintf(why, len, "first solution that can run these sizes");
			return k;
		}
	snprintf(why, len, "no solution can run these sizes");
	return -1;
}

/* selector.c - the selectors' data from a logic file (its selector section,
 * exact entries and range tree) and a results store, the choice itself
 * (runtime/select.c, compiled in here), and what tcx tune and tcx
 * logic eval record in the selector section. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "logic/selector.h"

#include "runtime/select.c"

struct selector {
	struct sel_table t;
	int bound[TCX_MAX_INDICES];
	struct sel_solution *sols;
	int64_t *exact_sizes;
	int *exact_sol;
	struct sel_node *nodes;
	struct sel_rule *rules;
	int nrules;
	int64_t *point_sizes;
	double *point_gflops;
	int npoints, cap;
	enum sel_kind dflt;
	bool has_default;
	double fit_score; /* the model's leave-one-out efficiency; < 0: nothing to fit */
	int fit_points;
};

const char *selector_kind_name(enum sel_kind k)
{
	return sel_kind_name((int)k);
}

bool selector_kind_parse(const char *name, enum sel_kind *out)
{
	for (int k = 0; k < SEL_KINDS; k++)
		if (strcmp(name, sel_kind_name(k)) == 0) {
			*out = (enum sel_kind)k;
			return true;
		}
	return false;
}

/* The GPU a tensor-core solution is planned for when no device is at hand
 * (its tile, DepthU and edges do not depend on the rest): an H100-like
 * sm_90, which runs every shape tcx has (the warpgroup ones and fp64's
 * 16-row mma need it). */
static void nominal_gpu(struct device_info *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->lang, sizeof(d->lang), "cuda");
	snprintf(d->arch, sizeof(d->arch), "sm_90");
	d->type = DEV_GPU;
	d->global_mem = d->max_alloc = (int64_t)1 << 34;
	d->local_mem = 227 * 1024;
	d->local_mem_per_cu = 228 * 1024;
	d->compute_units = 132;
	d->max_wg_size = 1024;
	d->max_wg_dim[0] = d->max_wg_dim[1] = 1024;
	d->max_wg_dim[2] = 64;
	d->simd_width = 32;
	d->fp64 = d->fp16 = true;
}

enum tcx_status selector_solution_info(const struct tcx_contraction *c, const struct solution *s,
				       struct sel_solution *out, struct tcx_error *err)
{
	struct kernel_plan k;
	struct device_info gpu;
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	if (s->const_sizes)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"solution with ConstantSizes: its kernel runs one size only");
	if (s->mi[0])
		nominal_gpu(&gpu);
	st = plan_make(c, NULL, s, s->mi[0] ? &gpu : NULL, &k, err);
	if (st)
		return st;
	out->mt0 = k.mt0;
	out->mt1 = k.mt1;
	out->depth_u = k.sol.depth_u;
	out->gsu = k.sol.gsu;
	out->edge_none = k.sol.edge == EDGE_NONE;
	out->loop_tail = k.sol.loop_tail;
	out->pack0 = k.pack_slot[0] >= 0 ? k.slot[k.pack_slot[0]] : -1;
	out->pack1 = k.pack_slot[1] >= 0 ? k.slot[k.pack_slot[1]] : -1;
	out->vw0 = k.wgmma ? 1 : k.sol.vw;
	out->vw1 = k.wgmma ? 1 : k.vw1;
	return TCX_OK;
}

/* ---- points ---------------------------------------------------------- */

static int find_point(const struct selector *s, const int64_t *sizes)
{
	size_t n = (size_t)s->t.nidx;

	for (int p = 0; p < s->npoints; p++)
		if (memcmp(s->point_sizes + (size_t)p * n, sizes, n * sizeof(int64_t)) == 0)
			return p;
	return -1;
}

/* The point for sizes, added (unmeasured) when new; -1 when out of memory. */
static int add_point(struct selector *s, const int64_t *sizes)
{
	size_t n = (size_t)s->t.nidx, m = (size_t)(s->t.nsol ? s->t.nsol : 1);
	int p = find_point(s, sizes);

	if (p >= 0)
		return p;
	if (s->npoints == s->cap) {
		int cap = s->cap ? 2 * s->cap : 32;
		int64_t *ns = realloc(s->point_sizes, (size_t)cap * n * sizeof(*ns));
		double *ng;

		if (!ns)
			return -1;
		s->point_sizes = ns;
		ng = realloc(s->point_gflops, (size_t)cap * m * sizeof(*ng));
		if (!ng)
			return -1;
		s->point_gflops = ng;
		s->cap = cap;
	}
	p = s->npoints++;
	memcpy(s->point_sizes + (size_t)p * n, sizes, n * sizeof(int64_t));
	for (size_t k = 0; k < m; k++)
		s->point_gflops[(size_t)p * m + k] = 0;
	return p;
}

/* The model's parameters, tried in this order; on a tie the earlier wins:
 * the fewest assumptions (padding free) and the most smoothing first. */
static const double fit_pad[] = {0, 0.5, 1};
static const double fit_bandwidth[] = {2, 1, 0.5};
#define FIT_MAX_POINTS 300

/* Fits the model's padding exponent and bandwidth to the measurements by
 * leaving each tuned size out in turn (one with two or more solutions
 * measured), letting the model choose there from the others, and scoring
 * the choice's GFLOP/s over the fastest's; the pair with the best mean
 * wins.  Deterministic; at most FIT_MAX_POINTS sizes are left out (evenly
 * spaced). */
static void fit_model(struct selector *s)
{
	struct sel_table t = s->t;
	int step =
	    s->npoints > FIT_MAX_POINTS ? (s->npoints + FIT_MAX_POINTS - 1) / FIT_MAX_POINTS : 1;

	s->fit_score = -1;
	s->fit_points = 0;
	s->t.pad_exp = fit_pad[0];
	s->t.bandwidth = fit_bandwidth[0];
	for (size_t a = 0; a < ARRAY_SIZE(fit_pad); a++)
		for (size_t b = 0; b < ARRAY_SIZE(fit_bandwidth); b++) {
			double sum = 0;
			int n = 0;

			t.pad_exp = fit_pad[a];
			t.bandwidth = fit_bandwidth[b];
			for (int p = 0; p < t.npoints; p += step) {
				const double *g = t.point_gflops + (size_t)p * (size_t)t.nsol;
				double gmax = 0;
				int nm = 0, k;

				for (k = 0; k < t.nsol; k++)
					if (g[k] > 0) {
						nm++;
						gmax = g[k] > gmax ? g[k] : gmax;
					}
				if (nm < 2)
					continue;
				k = sel_model_pick(&t, t.point_sizes + (size_t)p * (size_t)t.nidx,
						   p, NULL, NULL);
				if (k < 0 || g[k] <= 0)
					continue;
				sum += g[k] / gmax;
				n++;
			}
			if (n > 0 && sum / n > s->fit_score + 1e-9) {
				s->fit_score = sum / n;
				s->fit_points = n;
				s->t.pad_exp = t.pad_exp;
				s->t.bandwidth = t.bandwidth;
			}
		}
}

static void sync_table(struct selector *s)
{
	s->t.npoints = s->npoints;
	s->t.point_sizes = s->point_sizes;
	s->t.point_gflops = s->point_gflops;
	fit_model(s);
}

/* The selector section's points: [{sizes: [...], gflops: [g or null, ...]}]. */
static enum tcx_status read_points(struct selector *s, json_t *pts, const char *name,
				   struct tcx_error *err)
{
	size_t i;
	json_t *pt;

	if (!json_is_array(pts))
		return tcx_fail(err, TCX_EPARSE, "%s: selector: 'points' is not a list", name);
	json_array_foreach(pts, i, pt)
	{
		json_t *sz = json_object_get(pt, "sizes"), *g = json_object_get(pt, "gflops"), *v;
		int64_t sizes[TCX_MAX_INDICES];
		size_t j;
		int p;

		if (!json_is_array(sz) || (int)json_array_size(sz) != s->t.nidx)
			return tcx_fail(
			    err, TCX_EPARSE,
			    "%s: selector: point %zu: 'sizes' is not a list of %d sizes", name,
			    i + 1, s->t.nidx);
		if (!json_is_array(g) || (int)json_array_size(g) != s->t.nsol)
			return tcx_fail(
			    err, TCX_EPARSE,
			    "%s: selector: point %zu: 'gflops' is not a list of %d values "
			    "(one per solution)",
			    name, i + 1, s->t.nsol);
		json_array_foreach(sz, j, v)
		{
			if (!json_is_integer(v) || json_integer_value(v) < 1)
				return tcx_fail(
				    err, TCX_EPARSE,
				    "%s: selector: point %zu: size %zu is not a positive "
				    "integer",
				    name, i + 1, j + 1);
			sizes[j] = json_integer_value(v);
		}
		p = add_point(s, sizes);
		if (p < 0)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		json_array_foreach(g, j, v)
		{
			if (json_is_null(v))
				continue;
			if (!json_is_number(v))
				return tcx_fail(
				    err, TCX_EPARSE,
				    "%s: selector: point %zu: GFLOP/s %zu is not a number "
				    "or null",
				    name, i + 1, j + 1);
			if (json_number_value(v) > 0)
				s->point_gflops[(size_t)p * (size_t)s->t.nsol + j] =
				    json_number_value(v);
		}
	}
	return TCX_OK;
}

/* ---- the range tree, flattened ------------------------------------------ */

static void count_tree(const struct range_node *n, int *nodes, int *rules)
{
	(*nodes)++;
	*rules += n->nrules;
	for (int r = 0; r < n->nrules; r++)
		if (n->rules[r].child)
			count_tree(n->rules[r].child, nodes, rules);
}

static int flatten(struct selector *s, const struct range_node *n)
{
	int me = s->t.nnodes++, first = s->nrules;

	s->nrules += n->nrules;
	s->nodes[me].index = n->index;
	s->nodes[me].nrules = n->nrules;
	s->nodes[me].first = first;
	for (int r = 0; r < n->nrules; r++) {
		s->rules[first + r].threshold = n->rules[r].threshold;
		s->rules[first + r].sol = n->rules[r].child ? -1 : n->rules[r].sol;
		s->rules[first + r].child = n->rules[r].child ? flatten(s, n->rules[r].child) : -1;
	}
	return me;
}

/* ---- create ----------------------------------------------------------------- */

enum tcx_status selector_create(const struct logic *l, const char *name, struct selector **out,
				struct tcx_error *err)
{
	struct selector *s = calloc(1, sizeof(*s));
	struct classification cls;
	enum tcx_status st = TCX_OK;
	const struct tcx_contraction *c = l->type;
	json_t *sec = json_is_object(l->selector) ? l->selector : NULL, *v;

	*out = NULL;
	if (!s)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	s->dflt = SEL_MODEL;
	model_classify(c, NULL, &cls);
	s->t.nidx = c->nidx;
	s->t.d0 = cls.d0;
	s->t.d1 = cls.d1;
	s->t.du = cls.du;
	for (int id = 0; id < c->nidx; id++)
		s->bound[id] = c->idx[id].cls == IDX_BOUND;
	s->t.bound = s->bound;
	s->t.compute_units = l->compute_units > 0 ? l->compute_units : 1;
	s->t.nsol = l->nsol;
	s->sols = calloc((size_t)(l->nsol ? l->nsol : 1), sizeof(*s->sols));
	s->exact_sizes =
	    calloc((size_t)(l->nexact ? l->nexact : 1) * (size_t)c->nidx, sizeof(*s->exact_sizes));
	s->exact_sol = calloc((size_t)(l->nexact ? l->nexact : 1), sizeof(*s->exact_sol));
	if (!s->sols || !s->exact_sizes || !s->exact_sol) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto fail;
	}
	for (int k = 0; k < l->nsol; k++) {
		st = selector_solution_info(c, &l->sols[k].sol, &s->sols[k], err);
		if (st) {
			tcx_error_prefix(err, "%s: solution %d (%s)", name, k, l->sols[k].name);
			goto fail;
		}
	}
	s->t.sols = s->sols;
	for (int e = 0; e < l->nexact; e++) {
		memcpy(s->exact_sizes + (size_t)e * (size_t)c->nidx, l->exact[e].sizes,
		       sizeof(int64_t) * (size_t)c->nidx);
		s->exact_sol[e] = l->exact[e].sol;
	}
	s->t.nexact = l->nexact;
	s->t.exact_sizes = s->exact_sizes;
	s->t.exact_sol = s->exact_sol;
	if (l->range) {
		int nn = 0, nr = 0;

		count_tree(l->range, &nn, &nr);
		s->nodes = calloc((size_t)nn, sizeof(*s->nodes));
		s->rules = calloc((size_t)nr, sizeof(*s->rules));
		if (!s->nodes || !s->rules) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto fail;
		}
		flatten(s, l->range);
	}
	s->t.nodes = s->nodes;
	s->t.rules = s->rules;

	/* measurements: the selector section's, then the exact winners' */
	if (sec) {
		v = json_object_get(sec, "version");
		if (json_is_integer(v) && json_integer_value(v) > SELECTOR_VERSION) {
			st =
			    tcx_fail(err, TCX_EUNSUPPORTED,
				     "%s: selector: version %lld is newer than this tcx reads (%d)",
				     name, (long long)json_integer_value(v), SELECTOR_VERSION);
			goto fail;
		}
		v = json_object_get(sec, "points");
		if (v && !json_is_null(v)) {
			st = read_points(s, v, name, err);
			if (st)
				goto fail;
		}
		v = json_object_get(sec, "default");
		if (json_is_string(v)) {
			if (!selector_kind_parse(json_string_value(v), &s->dflt)) {
				st = tcx_fail(err, TCX_EPARSE,
					      "%s: selector: unknown default '%s': expected logic, "
					      "nearest or model",
					      name, json_string_value(v));
				goto fail;
			}
			s->has_default = true;
		}
	}
	for (int e = 0; e < l->nexact; e++) {
		int p = add_point(s, l->exact[e].sizes);
		double *g;

		if (p < 0) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto fail;
		}
		g = &s->point_gflops[(size_t)p * (size_t)s->t.nsol + (size_t)l->exact[e].sol];
		if (*g <= 0 && l->exact[e].gflops > 0)
			*g = l->exact[e].gflops;
	}
	sync_table(s);
	*out = s;
	return TCX_OK;
fail:
	selector_destroy(s);
	return st;
}

void selector_destroy(struct selector *s)
{
	if (!s)
		return;
	free(s->sols);
	free(s->exact_sizes);
	free(s->exact_sol);
	free(s->nodes);
	free(s->rules);
	free(s->point_sizes);
	free(s->point_gflops);
	free(s);
}

/* ---- the results store ------------------------------------------------------- */

struct store_ctx {
	struct selector *s;
	const struct size_list *exclude;
	char **keys; /* solution keys of the logic's solutions */
	bool *known; /* per point at the start: values from the logic */
	int nknown;
	int added;
	bool oom;
};

static bool excluded(const struct size_list *l, const int64_t *sizes)
{
	for (size_t k = 0; l && k < l->count; k++)
		if (memcmp(l->v + k * (size_t)l->nidx, sizes, sizeof(int64_t) * (size_t)l->nidx) ==
		    0)
			return true;
	return false;
}

static int store_row(const struct measurement *m, void *vctx)
{
	struct store_ctx *x = vctx;
	struct selector *s = x->s;
	int k, p;
	double *g;

	if (m->nidx != s->t.nidx || m->status != MEAS_OK || !(m->gflops > 0) ||
	    excluded(x->exclude, m->sizes))
		return 0;
	for (k = 0; k < s->t.nsol; k++)
		if (strcmp(x->keys[k], m->solution) == 0)
			break;
	if (k == s->t.nsol)
		return 0;
	p = add_point(s, m->sizes);
	if (p < 0) {
		x->oom = true;
		return 1;
	}
	g = &s->point_gflops[(size_t)p * (size_t)s->t.nsol + (size_t)k];
	/* the logic's own values stay; among store rows the newest wins (rows
	 * come in a fixed order, one per device and driver) */
	if (p < x->nknown && x->known[p] && *g > 0)
		return 0;
	if (*g <= 0)
		x->added++;
	*g = m->gflops;
	return 0;
}

enum tcx_status selector_add_store(struct selector *s, const struct logic *l, struct store *db,
				   const struct size_list *exclude, int *added,
				   struct tcx_error *err)
{
	struct store_ctx x;
	struct store_filter f;
	char problem[256];
	enum tcx_status st = TCX_OK;

	memset(&x, 0, sizeof(x));
	x.s = s;
	x.exclude = exclude;
	if (added)
		*added = 0;
	if (!l->device_name)
		return tcx_fail(err, TCX_EINVAL,
				"the logic names no device: cannot match results-store rows");
	x.keys = calloc((size_t)(l->nsol ? l->nsol : 1), sizeof(*x.keys));
	x.nknown = s->npoints;
	x.known = calloc((size_t)(s->npoints ? s->npoints : 1), sizeof(*x.known));
	if (!x.keys || !x.known) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	for (int p = 0; p < s->npoints; p++)
		x.known[p] = true;
	for (int k = 0; k < l->nsol; k++) {
		x.keys[k] = malloc(2048);
		if (!x.keys[k]) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out;
		}
		solution_store_key(l->type, &l->sols[k].sol, x.keys[k], 2048);
	}
	contraction_tensile_name(l->type, problem, sizeof(problem));
	memset(&f, 0, sizeof(f));
	f.device = l->device_name;
	f.problem = problem;
	f.status = MEAS_OK;
	st = store_query(db, &f, store_row, &x, err);
	if (!st && x.oom)
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
	sync_table(s);
	if (added)
		*added = x.added;
out:
	for (int k = 0; x.keys && k < l->nsol; k++)
		free(x.keys[k]);
	free(x.keys);
	free(x.known);
	return st;
}

/* ---- queries ---------------------------------------------------------------- */

const struct sel_table *selector_table(const struct selector *s)
{
	return &s->t;
}

int selector_choose(const struct selector *s, enum sel_kind kind, const int64_t *sizes,
		    struct strbuf *why)
{
	char buf[512];
	int k = sel_choose(&s->t, kind, sizes, buf, sizeof(buf));

	if (why)
		strbuf_adds(why, buf);
	return k;
}

enum sel_kind selector_default(const struct selector *s)
{
	return s->dflt;
}

bool selector_has_default(const struct selector *s)
{
	return s->has_default;
}

json_t *selector_model_json(const struct selector *s)
{
	return json_pack("{s:f, s:f, s:o, s:i}", "padding_exponent", s->t.pad_exp,
			 "bandwidth_octaves", s->t.bandwidth, "fit_efficiency",
			 s->fit_score >= 0 ? json_real(s->fit_score) : json_null(), "fit_sizes",
			 s->fit_points);
}

/* ---- what tcx tune and tcx logic eval record ---------------------------------- */

/* GFLOP/s to 6 significant digits: enough for choices, short in YAML. */
static double round6(double g)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6g", g);
	return strtod(buf, NULL);
}

static json_t *sizes_json(const int64_t *sizes, int n)
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer(sizes[i]));
	return a;
}

enum tcx_status selector_build(struct logic *l, const struct logic_table *t, struct tcx_error *err)
{
	json_t *sec = json_object(), *pts = json_array();
	int *col = calloc((size_t)(l->nsol ? l->nsol : 1), sizeof(*col));
	enum tcx_status st = TCX_OK;

	if (!sec || !pts || !col) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	if (t->nidx != l->type->nidx) {
		st = tcx_fail(err, TCX_EINVAL, "the table has %d indices, the logic %d", t->nidx,
			      l->type->nidx);
		goto out;
	}
	for (int k = 0; k < l->nsol; k++) {
		col[k] = -1;
		for (int j = 0; j < t->nsol; j++)
			if (logic_table_is(t, j, &l->sols[k])) {
				col[k] = j;
				break;
			}
	}
	for (int z = 0; z < t->nsizes; z++) {
		json_t *g = json_array(), *pt;
		bool any = false;

		for (int k = 0; g && k < l->nsol; k++) {
			double v = col[k] < 0
				       ? 0
				       : t->gflops[(size_t)z * (size_t)t->nsol + (size_t)col[k]];

			any |= v > 0;
			json_array_append_new(g, v > 0 ? json_real(round6(v)) : json_null());
		}
		if (!any) {
			json_decref(g);
			continue;
		}
		pt = json_pack("{s:o, s:o}", "sizes",
			       sizes_json(t->sizes + (size_t)z * (size_t)t->nidx, t->nidx),
			       "gflops", g);
		if (!pt || json_array_append_new(pts, pt)) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out;
		}
	}
	json_object_set_new(sec, "version", json_integer(SELECTOR_VERSION));
	json_object_set_new(sec, "points", pts);
	pts = NULL;
	json_decref(l->selector);
	l->selector = sec;
	sec = NULL;
out:
	json_decref(sec);
	json_decref(pts);
	free(col);
	return st;
}

enum tcx_status selector_record(struct logic *l, enum sel_kind dflt, json_t *report,
				struct tcx_error *err)
{
	json_t *sec = json_is_object(l->selector) ? json_deep_copy(l->selector) : json_object();

	if (!sec)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (!json_object_get(sec, "version"))
		json_object_set_new(sec, "version", json_integer(SELECTOR_VERSION));
	json_object_set_new(sec, "default", json_string(sel_kind_name((int)dflt)));
	if (report)
		json_object_set_new(sec, "report", json_deep_copy(report));
	else
		json_object_del(sec, "report");
	json_decref(l->selector);
	l->selector = sec;
	return TCX_OK;
}

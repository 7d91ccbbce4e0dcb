/* space.c - tcx tune EXPR (space.h): the config made for an expression
 * and its sizes, and the search space around the planner's choices,
 * ranked by the planner's model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "logic/ptype.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "tune/protocol.h"
#include "tune/space.h"

/* The model ranks over at most this many of the sizes (spread over them),
 * and the planner lists its solutions for at most SPACE_LIST_SIZES. */
#define SPACE_RANK_SIZES 32
#define SPACE_LIST_SIZES 8

enum tcx_status config_from_expr(struct tcx_contraction *c, const char *name,
				 const struct size_range *ranges, int nranges, const int64_t *exact,
				 int nexact, struct config **out, struct tcx_error *err)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct config_problem *cp;
	struct config_step *step;
	json_t *derived;
	char tname[128];
	const char *key;
	json_t *v;

	*out = NULL;
	if (!cfg) {
		contraction_free(c);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	cfg->form = 3;
	cfg->path = strdup(name);
	cfg->problems = calloc(1, sizeof(*cfg->problems));
	if (!cfg->path || !cfg->problems) {
		contraction_free(c);
		goto out_nomem;
	}
	cfg->nproblems = 1;
	cp = &cfg->problems[0];
	cp->type = c;
	cp->form = 3;
	contraction_tensile_name(c, tname, sizeof(tname));
	cp->problem_type = json_pack("{s:s,s:s,s:s}", "Expression", c->expr, "DataType",
				     dtype_info(c->dtype)->name, "Name", tname);
	derived = ptype_derive(c);
	if (!cp->problem_type || !derived) {
		json_decref(derived);
		goto out_nomem;
	}
	json_object_foreach(derived, key, v)
	{
		if (!json_object_get(cp->problem_type, key))
			json_object_set(cp->problem_type, key, v);
	}
	json_decref(derived);
	cp->groups = calloc(1, sizeof(*cp->groups));
	if (!cp->groups)
		goto out_nomem;
	cp->ngroups = 1;
	cp->groups[0].phase[PH_FINAL].present = true;
	step = calloc(1, sizeof(*step));
	if (!step)
		goto out_nomem;
	cp->groups[0].phase[PH_FINAL].steps = step;
	cp->groups[0].phase[PH_FINAL].nsteps = 1;
	step->has_sizes = true;
	if (nranges > 0) {
		step->sizes.ranges = malloc((size_t)nranges * sizeof(*ranges));
		if (!step->sizes.ranges)
			goto out_nomem;
		memcpy(step->sizes.ranges, ranges, (size_t)nranges * sizeof(*ranges));
		step->sizes.nranges = nranges;
	}
	if (nexact > 0) {
		size_t bytes = (size_t)nexact * (size_t)c->nidx * sizeof(*exact);

		step->sizes.exact = malloc(bytes);
		if (!step->sizes.exact)
			goto out_nomem;
		memcpy(step->sizes.exact, exact, bytes);
		step->sizes.nexact = nexact;
	}
	*out = cfg;
	return TCX_OK;
out_nomem:
	config_free(cfg);
	return tcx_fail(err, TCX_ENOMEM, "out of memory");
}

/* The sizes the model ranks by: every one of `all`, or a spread sample of
 * at most `max`. */
static int spread(const struct size_list *all, int max, const int64_t **out)
{
	int n = all->count < (size_t)max ? (int)all->count : max;

	for (int k = 0; k < n; k++) {
		size_t z = n == 1 ? 0 : (size_t)k * (all->count - 1) / (size_t)(n - 1);

		out[k] = all->v + z * (size_t)all->nidx;
	}
	return n;
}

struct ranker {
	const struct tcx_contraction *c;
	const struct device_info *di;
	struct plan_device model; /* the device's, one for every size */
	struct problem p[SPACE_RANK_SIZES];
	int np;
	double accuracy;          /* tune_space_attach's */
};

/* Whether s's arithmetic may tune for the accuracy asked: the type's own
 * or better, or predicted within it at every ranked size (the operand
 * taken truncated to tf32: the larger error). */
static bool accuracy_ok(const struct ranker *r, const struct solution *s)
{
	const enum tcx_dtype t = r->c->dtype;
	const enum arith a = arith_of(t, s);

	if (arith_at_least(a, arith_default(t)))
		return true;
	if (!(r->accuracy > 0))
		return false;
	for (int k = 0; k < r->np; k++)
		if (arith_predict(t, a, true, problem_bound_volume(&r->p[k])) > r->accuracy)
			return false;
	return true;
}

/* The model's time for s summed over the ranked sizes; false when the
 * device (or a size) does not take it. */
static bool rank_one(const struct ranker *r, const struct solution *s, double *time_s)
{
	*time_s = 0;
	for (int k = 0; k < r->np; k++) {
		struct kernel_plan kp;
		struct plan_choice ch;

		if (plan_make(r->c, &r->p[k], s, r->di, &kp, NULL) != TCX_OK ||
		    plan_accepts(&kp, &r->p[k], NULL) != TCX_OK)
			return false;
		plan_predict(&r->model, &r->p[k], &kp, &ch);
		*time_s += ch.time_s;
	}
	return isfinite(*time_s);
}

static int find_entry(const struct tune_space *sp, const struct solution *s)
{
	for (int k = 0; k < sp->n; k++)
		if (solution_equal(&sp->v[k].sol, s))
			return k;
	return -1;
}

/* Appends s to sp as it is (not ranked). */
static enum tcx_status push(struct tune_space *sp, int *cap, const struct solution *s,
			    struct tcx_error *err)
{
	if (sp->n == *cap) {
		int ncap = *cap ? 2 * *cap : 64;
		struct space_entry *nv = realloc(sp->v, (size_t)ncap * sizeof(*nv));

		if (!nv)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		sp->v = nv;
		*cap = ncap;
	}
	memset(&sp->v[sp->n], 0, sizeof(sp->v[sp->n]));
	sp->v[sp->n++].sol = *s;
	return TCX_OK;
}

/* Adds s when it is new and the device takes it. */
static enum tcx_status add_entry(struct tune_space *sp, int *cap, const struct ranker *r,
				 const struct solution *s, int seed, const char *move,
				 struct tcx_error *err)
{
	double t;

	enum tcx_status st;

	if (find_entry(sp, s) >= 0 || !accuracy_ok(r, s) || !rank_one(r, s, &t))
		return TCX_OK;
	st = push(sp, cap, s, err);
	if (st)
		return st;
	sp->v[sp->n - 1].predicted_s = t;
	sp->v[sp->n - 1].seed = seed;
	sp->v[sp->n - 1].move = move;
	return TCX_OK;
}

/* The model's order; ties (the model often predicts the same time for
 * solutions that differ only where it does not look) by seed, then by the
 * solutions' keys, so that every process (shards, MPI ranks) orders a
 * space alike. */
/* The space holds kernels of the problem as written; the planner may also
 * merge indices or permute the operands first (TTGT).  Where that is
 * predicted much faster than the space's best (`best_s`, summed over the
 * ranked sizes), only the race (tune.c, race_table), where the planner's
 * plan runs beside the space's fastest, keeps tuning from making the
 * contraction slower than no tuning: say so. */
static void warn_outside(const struct ranker *r, const struct tcx_contraction *c,
			 struct tune_space *sp)
{
	const double best_s = sp->v[0].predicted_s;
	double planned = 0;
	bool outside = false;

	for (int k = 0; k < r->np; k++) {
		struct plan_result pl;
		struct tcx_error e;

		if (planner_plan(&r->p[k], r->di, PLAN_PERMUTE, &pl, &e) != TCX_OK)
			return;
		planned += pl.best.time_s;
		outside |= pl.merged != NULL || plan_permutes(&pl.best);
		plan_release(&pl);
	}
	sp->untuned_s = planned;
	sp->untuned_outside = outside && planned > 0 && planned < 0.8 * best_s;
	if (sp->untuned_outside)
		tcx_log(TCX_LOG_INFO,
			"'%s' is predicted %.1fx faster untuned: the planner merges its indices "
			"or permutes its operands, and the kernels tuned here take it as written; "
			"the race at each size runs the planner's plan too (not with --race 1)",
			c->expr, best_s / planned);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct space_entry *x = a, *y = b;
	char kx[2048], ky[2048];

	if (x->predicted_s != y->predicted_s)
		return x->predicted_s < y->predicted_s ? -1 : 1;
	if (x->seed != y->seed)
		return x->seed < y->seed ? -1 : 1;
	if (strcmp(x->move, "planner") != strcmp(y->move, "planner"))
		return strcmp(x->move, "planner") == 0 ? -1 : 1;
	solution_key(&x->sol, kx, sizeof(kx));
	solution_key(&y->sol, ky, sizeof(ky));
	return strcmp(kx, ky);
}

/* The widest VectorWidth up to `want` that divides ThreadTile[0] (as the
 * planner's shapes choose it). */
static int fit_vw(int want, const int *tt)
{
	int v = want < 1 ? 1 : want;

	while (v > 1 && (tt[0] % v || tt[1] % v))
		v /= 2;
	return v;
}

/* One parameter of s moved up or down: the neighbours of a planner's
 * choice.  Up to 16 into out; returns how many, each with the moved
 * parameter's name in what[]. */
static int neighbours(const struct solution *s, const struct device_info *di, bool fp32,
		      bool tf32, struct solution *out, const char **what)
{
	static const int wgms[] = { 1, 2, 4, 8, 16, 32 };
	const bool gpu = di->type == DEV_GPU || di->type == DEV_ACCEL;
	int n = 0;
	struct solution x;

#define PUSH(name)                  \
	do {                        \
		out[n] = x;         \
		what[n++] = (name); \
	} while (0)

	for (int dir = 0; dir < 2; dir++) {
		/* DepthU: twice or half as deep */
		x = *s;
		x.depth_u = dir ? s->depth_u * 2 : s->depth_u / 2;
		if (x.depth_u >= 2)
			PUSH("DepthU");
		if (s->mi[0] == 64) {
			/* the warpgroup family: the tile along D1 is the
			 * instruction's N (32 -- the planner's tile for short
			 * free extents --, 64, 128 or 256), along D0 one or two
			 * warpgroups of 64 rows */
			x = *s;
			x.mi[1] = dir ? s->mi[1] * 2 : s->mi[1] / 2;
			x.tt[1] = x.mi[1] / (s->wg[1] > 0 ? s->wg[1] : 1);
			if (x.mi[1] >= 32 && x.mi[1] <= 256 && x.tt[1] >= 1)
				PUSH("MatrixInstruction");
			x = *s;
			x.wg[0] = dir ? s->wg[0] * 2 : s->wg[0] / 2;
			if (x.wg[0] >= 16 && x.wg[0] <= 32)
				PUSH("WorkGroup");
		} else {
			/* SIMT and CPU tiles: a thread tile or a work-group
			 * twice or half as long along D0 or D1 */
			for (int d = 0; d < 2; d++) {
				x = *s;
				x.tt[d] = dir ? s->tt[d] * 2 : s->tt[d] / 2;
				x.vw = fit_vw(s->vw, x.tt);
				if (x.tt[d] >= 1 && x.tt[d] <= 16)
					PUSH("ThreadTile");
				if (!s->use_lds)
					continue; /* the CPU family: work-groups of one */
				x = *s;
				x.wg[d] = dir ? s->wg[d] * 2 : s->wg[d] / 2;
				if (x.wg[d] >= 4 && x.wg[d] <= 1024)
					PUSH("WorkGroup");
			}
			if (!s->use_lds) {
				x = *s;
				x.vw = dir ? s->vw * 2 : s->vw / 2;
				if (x.vw >= 1 && x.vw <= 16 && x.tt[0] % x.vw == 0)
					PUSH("VectorWidth");
			}
		}
		if (!gpu)
			continue;
		/* GlobalSplitU: the bound loop split over twice or half as
		 * many work-groups */
		x = *s;
		x.gsu = dir ? s->gsu * 2 : s->gsu / 2;
		if (x.gsu >= 1 && x.gsu <= 64)
			PUSH("GlobalSplitU");
		/* WorkGroupMapping: the next band width */
		for (size_t k = 0; k < ARRAY_SIZE(wgms); k++)
			if (wgms[k] == s->wgm) {
				size_t j = dir ? k + 1 : k - 1;

				x = *s;
				if (j < ARRAY_SIZE(wgms)) {
					x.wgm = wgms[j];
					PUSH("WorkGroupMapping");
				}
			}
	}
	/* PackFreeIndices, on the kernels that have it (it changes nothing
	 * where no operand has a free index to pack: one evaluation lost) */
	if (s->mi[0] == 64 || (gpu && !s->mi[0] && s->use_lds)) {
		x = *s;
		x.pack_free = !s->pack_free;
		PUSH("PackFreeIndices");
	}
	if (s->mi[0] == 64 && fp32) {
		/* fp32 keeps fp32's accuracy, TF32x3 on, unless an accuracy
		 * lets plain tf32 in (add_entry checks its predicted error) */
		x = *s;
		x.tf32x3 = !s->tf32x3;
		if (x.tf32x3 || tf32)
			PUSH("TF32x3");
	}
#undef PUSH
	return n;
}

/* A solution's kernel family: the warpgroup kernel, other tensor-core
 * kernels, the SIMT kernel staging tiles in local memory, the direct one
 * (CPUs). */
static int family(const struct solution *s)
{
	return s->mi[0] == 64 ? 0 : s->mi[0] > 0 ? 1 : s->use_lds ? 2 : 3;
}

static enum tcx_status space_of(const struct tcx_contraction *c, const struct size_list *sizes,
				const struct device_info *di, int seeds, double accuracy,
				struct tune_space *sp, struct tcx_error *err)
{
	struct ranker *r = calloc(1, sizeof(*r));
	struct solution *listed = malloc(PLAN_MAX_CANDIDATES * sizeof(*listed));
	struct tune_space ranked, refused; /* what the device takes, ranked; what not */
	const int64_t *pick[SPACE_RANK_SIZES];
	int cap = 0, rcap = 0, fcap = 0;
	enum tcx_status st = TCX_OK;

	memset(sp, 0, sizeof(*sp));
	memset(&ranked, 0, sizeof(ranked));
	memset(&refused, 0, sizeof(refused));
	if (!r || !listed) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	r->c = c;
	r->di = di;
	r->accuracy = accuracy;
	r->np = spread(sizes, SPACE_RANK_SIZES, pick);
	plan_device_model(di, c->dtype, &r->model, NULL);
	for (int k = 0; k < r->np && !st; k++)
		st = problem_init(&r->p[k], c, pick[k], err);
	if (st)
		goto out;
	sp->nsizes = r->np;
	/* every solution the planner lists at a spread of the sizes, ranked */
	for (int k = 0; k < r->np && k < SPACE_LIST_SIZES && !st; k++) {
		const struct problem *p = &r->p[r->np <= SPACE_LIST_SIZES
							 ? k
							 : k * (r->np - 1) / (SPACE_LIST_SIZES - 1)];
		int n = planner_list(p, di, r->accuracy, listed, PLAN_MAX_CANDIDATES);

		if (n < 0) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			break;
		}
		for (int j = 0; j < n && !st; j++) {
			const int before = ranked.n;

			if (find_entry(&ranked, &listed[j]) >= 0 || find_entry(&refused, &listed[j]) >= 0)
				continue;
			sp->listed++;
			/* ranked by the model, ties in the planner's order (as
			 * planner_plan takes the first of equals) */
			st = add_entry(&ranked, &rcap, r, &listed[j], ranked.n, "planner", err);
			if (!st && ranked.n == before)
				st = push(&refused, &fcap, &listed[j], err);
		}
	}
	if (st)
		goto out;
	sp->valid = ranked.n;
	if (ranked.n == 0) {
		st = tcx_fail(err, TCX_EREJECT,
			      "%s takes none of the %d solutions the planner lists for '%s' at "
			      "these sizes",
			      di->name, sp->listed, c->expr);
		goto out;
	}
	qsort(ranked.v, (size_t)ranked.n, sizeof(*ranked.v), cmp_entry);
	/* the first `seeds`, and the best of each kernel family that none of
	 * them is of (so that a family the model ranks a little lower is
	 * measured too), then their neighbours */
	for (int k = 0, fams = 0; k < ranked.n && !st; k++) {
		const int f = 1 << family(&ranked.v[k].sol);

		if (k >= seeds && (fams & f))
			continue;
		fams |= f;
		st = add_entry(sp, &cap, r, &ranked.v[k].sol, sp->nseeds, "planner", err);
		ranked.v[sp->nseeds++] = ranked.v[k];
	}
	for (int k = 0; k < sp->nseeds && !st; k++) {
		struct solution nb[16];
		const char *what[16];
		int n = neighbours(&ranked.v[k].sol, di, c->dtype == TCX_DTYPE_S, r->accuracy > 0,
				   nb, what);

		for (int j = 0; j < n && !st; j++)
			st = add_entry(sp, &cap, r, &nb[j], k, what[j], err);
	}
	if (!st)
		qsort(sp->v, (size_t)sp->n, sizeof(*sp->v), cmp_entry);
	if (!st && sp->n > 0)
		warn_outside(r, c, sp);
out:
	free(ranked.v);
	free(refused.v);
	free(listed);
	free(r);
	if (st)
		tune_space_release(sp);
	return st;
}

void tune_space_release(struct tune_space *s)
{
	if (!s)
		return;
	free(s->v);
	memset(s, 0, sizeof(*s));
}

enum tcx_status tune_space_attach(struct config *cfg, const struct device_info *di, int seeds,
				  double accuracy, struct tune_space *out, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;
	bool kept = false;

	if (out)
		memset(out, 0, sizeof(*out));
	for (int p = 0; p < cfg->nproblems && !st; p++) {
		const struct config_problem *cp = &cfg->problems[p];

		for (int g = 0; g < cp->ngroups && !st; g++) {
			const struct config_phase *fin = &cp->groups[g].phase[PH_FINAL];
			struct size_list sizes;
			struct tune_space sp;
			json_t *arr;

			if (fin->nsteps < 1 || !fin->steps[0].has_sizes)
				return tcx_fail(err, TCX_EINVAL, "%s: no sizes to tune", cfg->path);
			size_list_init(&sizes, cp->type->nidx);
			st = protocol_sizes_from_config(&fin->steps[0].sizes, cp->type->nidx,
							&sizes, err);
			if (!st && sizes.count == 0)
				st = tcx_fail(err, TCX_EINVAL, "%s: no sizes to tune", cfg->path);
			if (!st)
				st = space_of(cp->type, &sizes, di, seeds, accuracy, &sp, err);
			size_list_release(&sizes);
			if (st)
				break;
			arr = json_array();
			for (int k = 0; k < sp.n && arr; k++)
				if (json_array_append_new(arr, solution_to_json(&sp.v[k].sol))) {
					json_decref(arr);
					arr = NULL;
				}
			if (!arr) {
				tune_space_release(&sp);
				st = tcx_fail(err, TCX_ENOMEM, "out of memory");
				break;
			}
			json_decref(cp->groups[g].candidates);
			cp->groups[g].candidates = arr;
			if (out && !kept) {
				*out = sp;
				kept = true;
			} else {
				tune_space_release(&sp);
			}
		}
	}
	if (st && out)
		tune_space_release(out);
	return st;
}

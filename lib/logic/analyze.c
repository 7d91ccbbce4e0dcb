/* analyze.c - Tensile's library-logic analysis (LibraryLogic.py, v3.0-3.3):
 * from measured GFLOP/s per (size, solution) to exact winners, the removal
 * of invalid and unimportant solutions, and range rules over the index
 * order (docs/tensile-compat.md section 7; logic.h says where it differs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logic/logic.h"
#include "logic/ptype.h"

#define NOT_MEASURED (-2.0)

struct analysis {
	const struct logic_table *t;
	int nidx;
	int naxis[TCX_MAX_INDICES];
	int64_t *axis[TCX_MAX_INDICES]; /* per index: the sorted grid sizes */
	int64_t stride[TCX_MAX_INDICES];
	int64_t ncells;
	double *data;  /* ncells * t->nsol: GFLOP/s, 0 failed, NOT_MEASURED */
	double *flops; /* per cell */
	bool *alive;   /* per table solution */
	int nalive;
	int order[TCX_MAX_INDICES];
	bool nomem;
};

static enum tcx_status nomem(struct tcx_error *err)
{
	return tcx_fail(err, TCX_ENOMEM, "out of memory");
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether table row r is an exact size.  A contraction without indices has
 * one size, the empty one: an exact entry (a range tree needs a level). */
static bool row_exact(const struct analysis *a, int r)
{
	return a->nidx == 0 || (a->t->is_exact && a->t->is_exact[r]);
}

static int axis_pos(const struct analysis *a, int i, int64_t size)
{
	int lo = 0, hi = a->naxis[i] - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (a->axis[i][mid] == size)
			return mid;
		if (a->axis[i][mid] < size)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static enum tcx_status check_table(const struct logic *l, const struct logic_table *t,
				   struct tcx_error *err)
{
	if (!l->type)
		return tcx_fail(err, TCX_EINVAL, "logic analysis needs the problem type");
	if (t->nidx != l->type->nidx)
		return tcx_fail(err, TCX_EINVAL,
				"the table has sizes for %d indices where the problem type has %d",
				t->nidx, l->type->nidx);
	if (t->nsizes < 1 || t->nsol < 1 || !t->sizes || !t->gflops || !t->sols)
		return tcx_fail(
		    err, TCX_EINVAL,
		    "the table needs at least one size, one solution and their GFLOP/s");
	for (int r = 0; r < t->nsizes; r++)
		for (int i = 0; i < t->nidx; i++)
			if (t->sizes[(size_t)r * (size_t)t->nidx + (size_t)i] < 1)
				return tcx_fail(
				    err, TCX_EINVAL,
				    "table row %d: size %lld of index '%s' is not "
				    "positive",
				    r + 1,
				    (long long)t->sizes[(size_t)r * (size_t)t->nidx + (size_t)i],
				    l->type->idx[i].name);
	return TCX_OK;
}

/* Step 2: the grid of range sizes, cells NOT_MEASURED until a row fills them. */
static enum tcx_status build_grid(struct analysis *a, const struct tcx_contraction *c,
				  struct tcx_error *err)
{
	const struct logic_table *t = a->t;
	int nrange = 0;
	double per_mac = dtype_info(c->dtype)->complex ? 8 : 2;

	for (int r = 0; r < t->nsizes; r++)
		nrange += !row_exact(a, r);
	a->ncells = nrange ? 1 : 0;
	for (int i = 0; i < a->nidx && nrange; i++) {
		int n = 0;

		a->axis[i] = malloc(sizeof(int64_t) * (size_t)nrange);
		if (!a->axis[i])
			return nomem(err);
		for (int r = 0; r < t->nsizes; r++)
			if (!row_exact(a, r))
				a->axis[i][n++] = t->sizes[(size_t)r * (size_t)a->nidx + (size_t)i];
		qsort(a->axis[i], (size_t)n, sizeof(int64_t), cmp_i64);
		a->naxis[i] = 0;
		for (int k = 0; k < n; k++)
			if (k == 0 || a->axis[i][k] != a->axis[i][k - 1])
				a->axis[i][a->naxis[i]++] = a->axis[i][k];
		a->stride[i] = a->ncells;
		a->ncells *= a->naxis[i];
		if (a->ncells * t->nsol > LOGIC_MAX_CELLS)
			return tcx_fail(
			    err, TCX_ELIMIT,
			    "the grid of range sizes is too large for the analysis: more "
			    "than %lld cells x solutions",
			    (long long)LOGIC_MAX_CELLS);
	}
	if (!a->ncells)
		return TCX_OK;
	a->data = malloc(sizeof(double) * (size_t)(a->ncells * t->nsol));
	a->flops = malloc(sizeof(double) * (size_t)a->ncells);
	if (!a->data || !a->flops)
		return nomem(err);
	for (int64_t k = 0; k < a->ncells * t->nsol; k++)
		a->data[k] = NOT_MEASURED;
	for (int64_t cell = 0; cell < a->ncells; cell++) {
		double f = per_mac;

		for (int i = 0; i < a->nidx; i++)
			f *= (double)a->axis[i][(cell / a->stride[i]) % a->naxis[i]];
		a->flops[cell] = f;
	}
	for (int r = 0; r < t->nsizes; r++) {
		int64_t cell = 0;

		if (row_exact(a, r))
			continue;
		for (int i = 0; i < a->nidx; i++)
			cell += axis_pos(a, i, t->sizes[(size_t)r * (size_t)a->nidx + (size_t)i]) *
				a->stride[i];
		for (int s = 0; s < t->nsol; s++) {
			double g = t->gflops[(size_t)r * (size_t)t->nsol + (size_t)s];
			double *d = &a->data[cell * t->nsol + s];

			if (isnan(g) || g <= 0)
				g = 0; /* a failed or invalid run */
			if (g > *d)    /* a size measured twice: the better run */
				*d = g;
		}
	}
	return TCX_OK;
}

static void sizes_text(const struct analysis *a, int64_t cell, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < a->nidx && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "",
				      (long long)a->axis[i][(cell / a->stride[i]) % a->naxis[i]]);
}

/* Step 3: a solution with a failed run in some cell is invalid. */
static void remove_invalid(struct analysis *a)
{
	const struct logic_table *t = a->t;

	for (int s = 0; s < t->nsol; s++)
		for (int64_t cell = 0; cell < a->ncells && a->alive[s]; cell++)
			if (a->data[cell * t->nsol + s] == 0) {
				char name[LOGIC_NAME_MAX], at[256];

				solution_name(&t->sols[s], name, sizeof(name));
				sizes_text(a, cell, at, sizeof(at));
				tcx_log(TCX_LOG_INFO,
					"logic: solution %d (%s) removed as invalid: it failed at "
					"sizes %s",
					s, name, at);
				a->alive[s] = false;
				a->nalive--;
			}
}

/* Exact winners: the fastest valid solution per exact size (the best run
 * where a size appears twice), in the order of first appearance. */
static enum tcx_status exact_winners(struct analysis *a, struct logic_exact **out, int *nout,
				     struct tcx_error *err)
{
	const struct logic_table *t = a->t;
	struct logic_exact *ex = calloc((size_t)t->nsizes + 1, sizeof(*ex));
	int n = 0;

	if (!ex)
		return nomem(err);
	for (int r = 0; r < t->nsizes; r++) {
		const int64_t *sz = &t->sizes[(size_t)r * (size_t)a->nidx];
		int win = -1, k;
		double best = 0;

		if (!row_exact(a, r))
			continue;
		for (int s = 0; s < t->nsol; s++) {
			double g = t->gflops[(size_t)r * (size_t)t->nsol + (size_t)s];

			if (a->alive[s] && !isnan(g) && g > best) {
				best = g;
				win = s;
			}
		}
		if (win < 0) {
			tcx_log(TCX_LOG_INFO, "logic: no valid solution for exact size row %d",
				r + 1);
			continue;
		}
		for (k = 0; k < n && memcmp(ex[k].sizes, sz, sizeof(int64_t) * (size_t)a->nidx);
		     k++)
			;
		if (k == n) {
			memcpy(ex[n].sizes, sz, sizeof(int64_t) * (size_t)a->nidx);
			ex[n].nsizes = a->nidx;
			ex[n].sol = win;
			ex[n].gflops = best;
			n++;
		} else if (best > ex[k].gflops) {
			ex[k].sol = win;
			ex[k].gflops = best;
		}
	}
	*out = ex;
	*nout = n;
	return TCX_OK;
}

struct importance {
	int sol;
	double saved;
	int wins;
	bool singular; /* the only valid solution for some cell */
};

static int cmp_importance(const void *x, const void *y)
{
	const struct importance *a = x, *b = y;

	if (a->saved != b->saved)
		return a->saved < b->saved ? -1 : 1;
	return a->sol - b->sol; /* Python's sort is stable */
}

/* Step 4: drop the least important solution while it saves less than
 * importance_min of the time saved in all, or wins nowhere. */
static enum tcx_status remove_unimportant(struct analysis *a, const struct logic_exact *ex, int nex,
					  double importance_min, struct tcx_error *err)
{
	const struct logic_table *t = a->t;
	struct importance *imp = calloc((size_t)t->nsol, sizeof(*imp));
	int *slot = calloc((size_t)t->nsol, sizeof(int));

	if (!imp || !slot) {
		free(imp);
		free(slot);
		return nomem(err);
	}
	while (a->nalive > 1) {
		double total_saved = 0;
		int total_wins = 0, n = 0, pick = -1;

		for (int s = 0; s < t->nsol; s++)
			if (a->alive[s]) {
				slot[s] = n;
				imp[n++] = (struct importance){s, 0, 0, false};
			}
		for (int64_t cell = 0; cell < a->ncells; cell++) {
			const double *d = &a->data[cell * t->nsol];
			double wg = -1e6, sg = -1e9;
			int w = -1;

			for (int s = 0; s < t->nsol; s++) {
				if (!a->alive[s])
					continue;
				if (d[s] > wg) {
					sg = wg;
					wg = d[s];
					w = s;
				} else if (d[s] > sg) {
					sg = d[s];
				}
			}
			if (w < 0 || wg <= 0)
				continue;
			if (sg > 0) {
				double saved = a->flops[cell] / sg - a->flops[cell] / wg;

				imp[slot[w]].saved += saved;
				total_saved += saved;
			} else {
				imp[slot[w]].singular = true;
			}
			imp[slot[w]].wins++;
			total_wins++;
		}
		qsort(imp, (size_t)n, sizeof(*imp), cmp_importance);
		for (int k = 0; k < n && pick < 0; k++) {
			bool exact = false;

			for (int e = 0; e < nex && !exact; e++)
				exact = ex[e].sol == imp[k].sol;
			if (!exact && !imp[k].singular)
				pick = k;
		}
		if (pick < 0)
			break; /* every one left is needed */
		{
			double share = total_saved > 0 ? imp[pick].saved / total_saved : 0;
			char name[LOGIC_NAME_MAX];

			if (share >= importance_min && imp[pick].wins > 0)
				break;
			solution_name(&t->sols[imp[pick].sol], name, sizeof(name));
			tcx_log(
			    TCX_LOG_INFO,
			    "logic: solution %d (%s) removed as unimportant: %d wins, %.3g%% of "
			    "the time saved",
			    imp[pick].sol, name, imp[pick].wins, 100 * share);
			a->alive[imp[pick].sol] = false;
			a->nalive--;
		}
	}
	free(imp);
	free(slot);
	return TCX_OK;
}

/* The winner of one cell: the smallest time (failed or unmeasured runs
 * take forever); -1 when every solution ties. */
static int cell_winner(const struct analysis *a, int64_t cell)
{
	const struct logic_table *t = a->t;
	const double *d = &a->data[cell * t->nsol];
	double best = 0;
	int win = -1;
	bool has = false;

	for (int s = 0; s < t->nsol; s++) {
		double time;

		if (!a->alive[s])
			continue;
		time = d[s] > 0 ? a->flops[cell] / d[s] : INFINITY;
		if (win < 0) {
			win = s;
			best = time;
			if (a->nalive == 1)
				return win;
		} else if (time < best) {
			win = s;
			best = time;
			has = true;
		} else if (time > best) {
			has = true;
		}
	}
	return has ? win : -1;
}

static bool add_rule(struct range_node *n, int cap, int64_t threshold, int sol,
		     struct range_node *child)
{
	if (n->nrules >= cap)
		return false;
	n->rules[n->nrules++] = (struct range_rule){threshold, sol, child};
	return true;
}

/* Step 5 (Tensile's enRule): the rules of level `depth` with the positions
 * of the earlier levels fixed in pos; NULL when no position has a rule (or
 * on no memory, with a->nomem set). */
static struct range_node *en_rule(struct analysis *a, int depth, int64_t *pos)
{
	int id = a->order[depth], n = a->naxis[id];
	bool last = depth + 1 == a->nidx;
	struct range_node *node = calloc(1, sizeof(*node));

	if (!node || !(node->rules = calloc((size_t)n, sizeof(*node->rules)))) {
		free(node);
		a->nomem = true;
		return NULL;
	}
	node->index = id;
	for (int p = 0; p < n; p++) {
		struct range_rule *prior = node->nrules ? &node->rules[node->nrules - 1] : NULL;
		struct range_node *child = NULL;
		int sol = -1;

		pos[id] = p;
		if (last) {
			int64_t cell = 0;

			for (int i = 0; i < a->nidx; i++)
				cell += pos[i] * a->stride[i];
			sol = cell_winner(a, cell);
		} else {
			child = en_rule(a, depth + 1, pos);
			if (a->nomem) {
				range_free(node);
				return NULL;
			}
		}
		if (sol < 0 && !child) { /* nothing here: the prior rule extends */
			if (prior)
				prior->threshold = p;
			continue;
		}
		if (prior && (last ? prior->sol == sol : range_equal(prior->child, child))) {
			prior->threshold = p;
			range_free(child);
			continue;
		}
		add_rule(node, n, p, sol, child);
	}
	if (!node->nrules) {
		range_free(node);
		return NULL;
	}
	/* grid positions to sizes; the last rule covers everything larger */
	for (int k = 0; k < node->nrules; k++)
		node->rules[k].threshold =
		    k + 1 == node->nrules ? -1 : a->axis[id][node->rules[k].threshold];
	return node;
}

static void remap(struct range_node *n, const int *map)
{
	for (int k = 0; n && k < n->nrules; k++) {
		if (n->rules[k].child)
			remap(n->rules[k].child, map);
		else
			n->rules[k].sol = map[n->rules[k].sol];
	}
}

static void release(struct analysis *a)
{
	for (int i = 0; i < TCX_MAX_INDICES; i++)
		free(a->axis[i]);
	free(a->data);
	free(a->flops);
	free(a->alive);
}

enum tcx_status logic_analyze(struct logic *l, const struct logic_table *t, double importance_min,
			      struct tcx_error *err)
{
	struct analysis a = {0};
	struct logic_exact *ex = NULL;
	struct logic_solution *sols = NULL;
	struct range_node *range = NULL;
	int nex = 0, *map = NULL, nsol = 0;
	int64_t pos[TCX_MAX_INDICES] = {0};
	enum tcx_status st;

	if ((st = check_table(l, t, err)))
		return st;
	a.t = t;
	a.nidx = t->nidx;
	if (ptype_index_order(l->type, a.order) != a.nidx)
		return tcx_fail(err, TCX_EINVAL, "cannot order the indices of '%s'", l->type->expr);
	a.alive = malloc(sizeof(bool) * (size_t)t->nsol);
	if (!a.alive) {
		st = nomem(err);
		goto out;
	}
	for (int s = 0; s < t->nsol; s++)
		a.alive[s] = true;
	a.nalive = t->nsol;
	if ((st = build_grid(&a, l->type, err)))
		goto out;
	remove_invalid(&a);
	if (a.nalive == 0) {
		st = tcx_fail(err, TCX_EREJECT,
			      "no logic: every one of the %d solutions failed at some size of the "
			      "range",
			      t->nsol);
		goto out;
	}
	if ((st = exact_winners(&a, &ex, &nex, err)) ||
	    (st = remove_unimportant(&a, ex, nex, importance_min, err)))
		goto out;
	if (a.ncells) {
		range = en_rule(&a, 0, pos);
		if (a.nomem) {
			st = nomem(err);
			goto out;
		}
	}
	/* keep the solutions left, in table order, and renumber */
	map = malloc(sizeof(int) * (size_t)t->nsol);
	sols = calloc((size_t)a.nalive + 1, sizeof(*sols));
	if (!map || !sols) {
		st = nomem(err);
		goto out;
	}
	for (int s = 0; s < t->nsol; s++) {
		map[s] = a.alive[s] ? nsol : -1;
		if (a.alive[s]) {
			sols[nsol].sol = t->sols[s];
			solution_name(&t->sols[s], sols[nsol].name, sizeof(sols[nsol].name));
			sols[nsol].fallback = -1;
			if (t->forms && t->forms[s].on) {
				size_t n = strlen(sols[nsol].name);
				char form[128];

				/* the name says it is not the plain solution */
				sols[nsol].form = t->forms[s];
				plan_form_name(&t->forms[s], form, sizeof(form));
				snprintf(sols[nsol].name + n, sizeof(sols[nsol].name) - n, "_F%s",
					 form);
			}
			nsol++;
		}
	}
	for (int e = 0; e < nex; e++)
		ex[e].sol = map[ex[e].sol];
	remap(range, map);
	for (int k = 0; k < l->nsol; k++)
		json_decref(l->sols[k].tensile);
	free(l->sols);
	free(l->exact);
	range_free(l->range);
	l->sols = sols;
	l->nsol = nsol;
	l->exact = ex;
	l->nexact = nex;
	l->range = range;
	l->norder = a.nidx;
	memcpy(l->index_order, a.order, sizeof(a.order));
	sols = NULL;
	ex = NULL;
	range = NULL;
out:
	free(map);
	free(sols);
	free(ex);
	range_free(range);
	release(&a);
	return st;
}

bool logic_table_is(const struct logic_table *t, int col, const struct logic_solution *ls)
{
	const struct plan_form none = { 0 };

	return solution_equal(&t->sols[col], &ls->sol) &&
	       plan_form_equal(t->forms ? &t->forms[col] : &none, &ls->form);
}

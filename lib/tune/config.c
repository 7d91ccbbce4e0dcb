/* config.c - reads a Tensile v2.x/v3.x tuning config (or tcx's extension of
 * v3) into struct config (the grammar: config.h and docs/tensile-compat.md
 * sections 1-5).
 *
 * lib/yaml reads the text into a tree of nodes with their places, which is
 * checked here and turned into the model; lib/logic/ptype.c reads the
 * ProblemType.  Every error names the place as FILE:LINE:COL, 1-based.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench/bench.h"
#include "logic/ptype.h"
#include "notation/notation.h"
#include "tune/config.h"
#include "yaml/ydoc.h"

const char *const config_phase_key[PH_COUNT] = {
    [PH_INITIAL] = "InitialSolutionParameters",
    [PH_COMMON] = "BenchmarkCommonParameters",
    [PH_FORK] = "ForkParameters",
    [PH_BENCH_FORK] = "BenchmarkForkParameters",
    [PH_JOIN] = "JoinParameters",
    [PH_BENCH_JOIN] = "BenchmarkJoinParameters",
    [PH_FINAL] = "BenchmarkFinalParameters",
};

int config_phase_id(const char *key)
{
	for (int p = 0; p < PH_COUNT; p++)
		if (strcmp(key, config_phase_key[p]) == 0)
			return p;
	return -1;
}

const struct config_param *config_step_find(const struct config_step *s, const char *name)
{
	for (int k = 0; k < s->nparams; k++)
		if (strcmp(s->params[k].name, name) == 0)
			return &s->params[k];
	return NULL;
}

struct loader {
	const char *name;
	struct tcx_error *err;
	const struct tcx_contraction *type; /* of the problem being read */
};

/* ---- messages -------------------------------------------------------- */

static enum tcx_status fail_at(struct loader *ld, enum tcx_status code, unsigned line, unsigned col,
			       const char *fmt, ...) TCX_PRINTF(5, 6);
static enum tcx_status fail_at(struct loader *ld, enum tcx_status code, unsigned line, unsigned col,
			       const char *fmt, ...)
{
	va_list ap;
	enum tcx_status st;

	va_start(ap, fmt);
	st = ydoc_vfail(ld->err, code, ld->name, line, col, fmt, ap);
	va_end(ap);
	return st;
}

/* TCX_EPARSE at node n. */
static enum tcx_status fail_node(struct loader *ld, const struct ynode *n, const char *fmt, ...)
    TCX_PRINTF(3, 4);
static enum tcx_status fail_node(struct loader *ld, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	enum tcx_status st;

	va_start(ap, fmt);
	st = ydoc_vfail(ld->err, TCX_EPARSE, ld->name, n->line, n->col, fmt, ap);
	va_end(ap);
	return st;
}

static enum tcx_status nomem(struct loader *ld)
{
	return ydoc_nomem(ld->err, ld->name);
}

/* ---- values ----------------------------------------------------------- */

/* A node where a whole number belongs is not one: say why.  Digits past
 * int64_t are a size too large, not a value of the wrong kind. */
static enum tcx_status not_whole(struct loader *ld, const struct ynode *n, const char *what)
{
	const char *s = n->text;

	if (n->kind == YNODE_SCALAR && n->plain) {
		bool negative = *s == '-';

		s += *s == '-' || *s == '+';
		if (*s && strspn(s, "0123456789") == strlen(s))
			return negative ? fail_at(ld, TCX_ERANGE, n->line, n->col,
						  "size %s is not allowed: sizes must be at least "
						  "1",
						  n->text)
					: fail_at(ld, TCX_ERANGE, n->line, n->col,
						  "size %s is too large (the largest is %lld)",
						  n->text, (long long)INT64_MAX);
	}
	return fail_node(ld, n, "%s holds %s where a whole number belongs", what, ynode_what(n));
}

/* ---- ProblemType ------------------------------------------------------ */

/* The keys config.h promises in problem_type where the mapping lacks them,
 * beside Expression and Name: Tensile's derived values. */
static const char *const derived_keys[] = {
    "NumIndicesC", "TotalIndices", "IndexAssignmentsA", "IndexAssignmentsB",
    "IndicesFree", "IndicesBatch", "IndicesSummation",
};

static bool set_missing(json_t *o, const char *key, json_t *v)
{
	if (json_object_get(o, key)) {
		json_decref(v);
		return true;
	}
	return v && json_object_set_new(o, key, v) == 0;
}

static enum tcx_status load_problem_type(struct loader *ld, const struct ynode *pt,
					 struct config_problem *prob)
{
	char name[128];
	json_t *derived;
	bool ok;
	enum tcx_status st = ptype_read(pt, ld->name, PTYPE_WRITTEN, &prob->type, ld->err);

	if (st || (st = ynode_to_json(pt, ld->name, &prob->problem_type, ld->err)))
		return st;
	derived = ptype_derive(prob->type);
	contraction_tensile_name(prob->type, name, sizeof(name));
	ok = derived &&
	     set_missing(prob->problem_type, "Expression", json_string(prob->type->expr)) &&
	     set_missing(prob->problem_type, "Name", json_string(name));
	for (size_t k = 0; ok && k < ARRAY_SIZE(derived_keys); k++)
		ok = set_missing(prob->problem_type, derived_keys[k],
				 json_incref(json_object_get(derived, derived_keys[k])));
	json_decref(derived);
	return ok ? TCX_OK : nomem(ld);
}

/* ---- ProblemSizes ----------------------------------------------------- */

/* One Range: a list of per-index entries, each a bare integer (the index to
 * copy) or a list of 1 to 4 integers, written out as the text
 * size_range_parse reads. */
static enum tcx_status load_range(struct loader *ld, const struct ynode *v, int nidx,
				  struct size_range *r)
{
	struct strbuf sb = STRBUF_INIT;
	struct tcx_error serr;
	enum tcx_status st;
	int64_t x;

	if (v->kind != YNODE_SEQ || v->n == 0)
		return fail_node(ld, v,
				 "a Range must be a list of per-index sizes such as "
				 "[[16, 128], 0, [256]], found %s",
				 v->kind == YNODE_SEQ ? "an empty list" : ynode_what(v));
	if (v->n > (size_t)nidx)
		ynode_warn(ld->name, v,
			  "Range has %zu entries but the problem type has %d indices: the "
			  "extra ones are ignored, as Tensile does",
			  v->n, nidx);
	/* every entry is checked; only the first nidx are written out */
	strbuf_addc(&sb, '[');
	for (size_t k = 0; k < v->n; k++) {
		const struct ynode *e = v->kid[k];
		bool keep = k < (size_t)nidx;

		if (k && keep)
			strbuf_addc(&sb, ',');
		if (ynode_int(e, &x)) {
			if (keep)
				strbuf_addf(&sb, "%lld", (long long)x);
			continue;
		}
		if (e->kind != YNODE_SEQ || e->n < 1 || e->n > 4) {
			st = fail_node(
			    ld, e,
			    "the Range entry for index %zu must be [size], [min, max], [min, "
			    "step, max], [min, step, incr, max] or the number of an index to "
			    "copy, found %s",
			    k, e->kind == YNODE_SEQ ? "a list of the wrong length" : ynode_what(e));
			goto out_release_sb;
		}
		if (keep)
			strbuf_addc(&sb, '[');
		for (size_t j = 0; j < e->n; j++) {
			if (!ynode_int(e->kid[j], &x)) {
				st = not_whole(ld, e->kid[j], "a Range");
				goto out_release_sb;
			}
			if (keep)
				strbuf_addf(&sb, j ? ",%lld" : "%lld", (long long)x);
		}
		if (keep)
			strbuf_addc(&sb, ']');
	}
	strbuf_addc(&sb, ']');
	st = strbuf_status(&sb, ld->err);
	if (st)
		goto out_release_sb;
	st = size_range_parse(strbuf_str(&sb), nidx, r, &serr);
	if (st)
		st = fail_at(ld, st, v->line, v->col, "%s", serr.msg);
out_release_sb:
	strbuf_release(&sb);
	return st;
}

/* One Exact: exactly nidx sizes.  Returns TCX_OK with *stored false for the
 * later Tensile forms this tcx ignores. */
static enum tcx_status load_exact(struct loader *ld, const struct ynode *v, int nidx,
				  int64_t *sizes, bool *stored)
{
	*stored = false;
	if (v->kind == YNODE_MAP) {
		ynode_warn(ld->name, v, "Exact in mapping form (later Tensile) ignored");
		return TCX_OK;
	}
	if (v->kind != YNODE_SEQ)
		return fail_node(ld, v, "an Exact must be a list of %d sizes, found %s", nidx,
				 ynode_what(v));
	for (size_t k = 0; k < v->n; k++) {
		int64_t x;

		if (!ynode_int(v->kid[k], &x))
			return not_whole(ld, v->kid[k], "an Exact");
		if (x < 1)
			return fail_at(ld, TCX_ERANGE, v->kid[k]->line, v->kid[k]->col,
				       "exact size %lld is not allowed: sizes must be at least 1",
				       (long long)x);
		if (k < (size_t)nidx)
			sizes[k] = x;
	}
	if (v->n == (size_t)nidx + 4) {
		ynode_warn(ld->name, v,
			  "Exact with %d sizes and 4 leading dimensions (later Tensile) "
			  "ignored",
			  nidx);
		return TCX_OK;
	}
	if (v->n != (size_t)nidx)
		return fail_node(ld, v, "Exact has %zu sizes but the problem type has %d indices",
				 v->n, nidx);
	*stored = true;
	return TCX_OK;
}

/* Sizes whose tensors cannot be addressed (an element or byte count past 64
 * bits) are refused where they are written, not when the tuner reaches
 * them.  For a range the largest sizes of each index speak for all. */
static enum tcx_status check_fits(struct loader *ld, const struct ynode *v, const int64_t *sizes)
{
	struct problem p;
	struct tcx_error e = { 0 };
	enum tcx_status st;

	if (!ld->type)
		return TCX_OK;
	st = problem_init(&p, ld->type, sizes, &e);
	return st ? fail_at(ld, st, v->line, v->col, "%s", e.msg) : TCX_OK;
}

static enum tcx_status check_range_fits(struct loader *ld, const struct ynode *v,
					const struct size_range *r, int nidx)
{
	int64_t top[TCX_MAX_INDICES];

	for (int id = 0; id < nidx; id++) {
		int k = id, hops = 0;

		while (r->e[k].is_map && hops++ < nidx)
			k = r->e[k].map;
		top[id] = r->e[k].is_map ? 1 : r->e[k].max;
	}
	return check_fits(ld, v, top);
}

static enum tcx_status load_sizes(struct loader *ld, const struct ynode *key, const struct ynode *v,
				  int nidx, struct config_sizes *sz)
{
	size_t nr = 0, ne = 0;
	enum tcx_status st;

	sz->line = key->line;
	if (v->kind != YNODE_SEQ || v->n == 0)
		return fail_node(ld, v->kind == YNODE_SEQ ? v : key,
				 "'ProblemSizes' must be a list of '- Range: [...]' and '- Exact: "
				 "[...]' (or, as in v2.x, one list of per-index sizes), found %s",
				 v->kind == YNODE_SEQ ? "an empty list" : ynode_what(v));
	if (v->kid[0]->kind != YNODE_MAP) {
		/* v2.x: the whole list is one Range */
		sz->ranges = calloc(1, sizeof(*sz->ranges));
		if (!sz->ranges)
			return nomem(ld);
		sz->nranges = 1;
		st = load_range(ld, v, nidx, &sz->ranges[0]);
		return st ? st : check_range_fits(ld, v, &sz->ranges[0], nidx);
	}
	for (size_t k = 0; k < v->n; k++) {
		const struct ynode *item = v->kid[k];

		if (item->kind != YNODE_MAP)
			return fail_node(ld, item,
					 "an entry of 'ProblemSizes' must be '- Range: [...]' "
					 "or '- Exact: [...]', found %s",
					 ynode_what(item));
		for (size_t j = 0; j < ymap_size(item); j++) {
			const char *kind = ymap_key(item, j)->text;

			if (strcmp(kind, "Range") == 0)
				nr++;
			else if (strcmp(kind, "Exact") == 0)
				ne++;
			else
				return fail_node(ld, ymap_key(item, j),
						 "unknown kind of problem sizes "
						 "'%s': expected Range or Exact",
						 kind);
		}
	}
	sz->ranges = nr ? calloc(nr, sizeof(*sz->ranges)) : NULL;
	sz->exact = ne ? calloc(TCX_MAX(ne * (size_t)nidx, 1), sizeof(*sz->exact)) : NULL;
	if ((nr && !sz->ranges) || (ne && !sz->exact))
		return nomem(ld);
	for (size_t k = 0; k < v->n; k++) {
		const struct ynode *item = v->kid[k];

		for (size_t j = 0; j < ymap_size(item); j++) {
			bool stored;

			if (strcmp(ymap_key(item, j)->text, "Range") == 0) {
				st = load_range(ld, ymap_val(item, j), nidx,
						&sz->ranges[sz->nranges]);
				if (!st)
					st = check_range_fits(ld, ymap_val(item, j),
							      &sz->ranges[sz->nranges], nidx);
				if (st)
					return st;
				sz->nranges++;
				continue;
			}
			st = load_exact(ld, ymap_val(item, j), nidx,
					sz->exact + (size_t)sz->nexact * (size_t)nidx, &stored);
			if (!st && stored)
				st = check_fits(ld, ymap_val(item, j),
						sz->exact + (size_t)sz->nexact * (size_t)nidx);
			if (st)
				return st;
			sz->nexact += stored;
		}
	}
	return TCX_OK;
}

/* ---- phases and steps ------------------------------------------------- */

static bool sizes_allowed(enum phase_id ph)
{
	return ph == PH_COMMON || ph == PH_BENCH_FORK || ph == PH_BENCH_JOIN || ph == PH_FINAL;
}

static enum tcx_status load_param(struct loader *ld, enum phase_id ph, const struct ynode *key,
				  const struct ynode *v, struct config_param *p)
{
	enum tcx_status st;
	json_t *one;

	p->line = key->line;
	p->col = key->col;
	p->name = strdup(key->text);
	if (!p->name)
		return nomem(ld);
	if (v->kind == YNODE_SEQ) {
		if (v->n == 0)
			return fail_node(ld, v, "'%s' has an empty list of values", key->text);
		return ynode_to_json(v, ld->name, &p->values, ld->err);
	}
	if (v->kind == YNODE_MAP || ynode_is_null(v))
		return fail_node(ld, v->kind == YNODE_MAP ? v : key,
				 "'%s' takes a list of candidate values such as [1, 2], found %s",
				 key->text, ynode_what(v));
	/* a scalar: a one-value list (InitialSolutionParameters allows it) */
	if (ph != PH_INITIAL)
		ynode_warn(ld->name, v, "'%s' takes a list of values: read '%s' as [%s]", key->text,
			  v->text, v->text);
	st = ynode_to_json(v, ld->name, &one, ld->err);
	if (st)
		return st;
	p->values = json_array();
	if (!p->values || json_array_append_new(p->values, one))
		return nomem(ld);
	return TCX_OK;
}

static enum tcx_status load_step(struct loader *ld, enum phase_id ph, const struct ynode *m,
				 int nidx, struct config_step *s)
{
	enum tcx_status st;

	s->line = m->line;
	s->params = calloc(ymap_size(m) ? ymap_size(m) : 1, sizeof(*s->params));
	if (!s->params)
		return nomem(ld);
	for (size_t k = 0; k < ymap_size(m); k++) {
		const struct ynode *key = ymap_key(m, k), *v = ymap_val(m, k);

		if (strcmp(key->text, "ProblemSizes") == 0) {
			if (!sizes_allowed(ph))
				return fail_node(ld, key,
						 "'ProblemSizes' is not allowed in '%s': only "
						 "in %s, %s, %s and %s",
						 config_phase_key[ph], config_phase_key[PH_COMMON],
						 config_phase_key[PH_BENCH_FORK],
						 config_phase_key[PH_BENCH_JOIN],
						 config_phase_key[PH_FINAL]);
			s->has_sizes = true;
			st = load_sizes(ld, key, v, nidx, &s->sizes);
		} else {
			st = load_param(ld, ph, key, v, &s->params[s->nparams++]);
		}
		if (st)
			return st;
	}
	return TCX_OK;
}

static enum tcx_status load_join(struct loader *ld, const struct ynode *v, struct config_phase *ph)
{
	struct config_step *s;

	ph->steps = calloc(1, sizeof(*ph->steps));
	if (!ph->steps)
		return nomem(ld);
	ph->nsteps = 1;
	s = &ph->steps[0];
	s->line = v->line;
	s->params = calloc(v->n, sizeof(*s->params));
	if (!s->params)
		return nomem(ld);
	for (size_t k = 0; k < v->n; k++) {
		const struct ynode *x = v->kid[k];
		struct config_param *p;

		if (x->kind != YNODE_SCALAR || ynode_is_null(x))
			return fail_node(ld, x,
					 "'JoinParameters' is a list of parameter names such as "
					 "MacroTile, found %s",
					 ynode_what(x));
		for (int j = 0; j < s->nparams; j++)
			if (strcmp(s->params[j].name, x->text) == 0)
				return fail_node(ld, x, "'%s' appears twice in 'JoinParameters'",
						 x->text);
		p = &s->params[s->nparams++];
		p->line = x->line;
		p->col = x->col;
		p->name = strdup(x->text);
		if (!p->name)
			return nomem(ld);
	}
	return TCX_OK;
}

static enum tcx_status load_phase(struct loader *ld, enum phase_id id, const struct ynode *v,
				  int nidx, struct config_phase *ph)
{
	enum tcx_status st;

	ph->present = true;
	if (ynode_is_null(v) || (v->kind == YNODE_SEQ && v->n == 0)) {
		ph->empty = true;
		return TCX_OK;
	}
	if (v->kind != YNODE_SEQ)
		return fail_node(ld, v, "'%s' must be a list of %s, found %s", config_phase_key[id],
				 id == PH_JOIN ? "parameter names" : "steps (- Name: [values])",
				 ynode_what(v));
	if (id == PH_JOIN)
		return load_join(ld, v, ph);
	ph->steps = calloc(v->n, sizeof(*ph->steps));
	if (!ph->steps)
		return nomem(ld);
	for (size_t k = 0; k < v->n; k++) {
		const struct ynode *m = v->kid[k];

		if (m->kind != YNODE_MAP)
			return fail_node(ld, m,
					 "each step of '%s' must be a mapping of parameter "
					 "names to lists of values, found %s",
					 config_phase_key[id], ynode_what(m));
		ph->nsteps++;
		st = load_step(ld, id, m, nidx, &ph->steps[k]);
		if (st)
			return st;
	}
	return TCX_OK;
}

/* The phase keys of a v3.x group or a v2.x entry (whose ProblemType key is
 * skipped). */
static enum tcx_status load_group(struct loader *ld, const struct ynode *m, int nidx, bool v2,
				  struct config_group *g)
{
	enum tcx_status st;

	g->line = m->line;
	for (size_t k = 0; k < ymap_size(m); k++) {
		const struct ynode *key = ymap_key(m, k);
		int id = config_phase_id(key->text);

		if (id < 0) {
			struct suggest sg;
			char hint[96];

			if (v2 && strcmp(key->text, "ProblemType") == 0)
				continue;
			/* a misspelt phase would drop its steps without a word */
			suggest_init(&sg, key->text);
			for (int p = 0; p < PH_COUNT; p++)
				suggest_add(&sg, config_phase_key[p]);
			return fail_node(ld, key, "unknown key '%s' in a benchmark group%s",
					 key->text,
					 sg.best ? suggest_hint(&sg, hint, sizeof(hint))
						 : " (expected a phase such as ForkParameters)");
		}
		st = load_phase(ld, (enum phase_id)id, ymap_val(m, k), nidx, &g->phase[id]);
		if (st)
			return st;
	}
	return TCX_OK;
}

static enum tcx_status load_problem(struct loader *ld, const struct ynode *e,
				    struct config_problem *p)
{
	const struct ynode *pt;
	enum tcx_status st;

	p->line = e->line;
	if (e->kind == YNODE_MAP) {
		p->form = 2;
		pt = ymap_get(e, "ProblemType");
		if (!pt)
			return fail_node(ld, e,
					 "a v2.x entry of 'BenchmarkProblems' has no "
					 "'ProblemType'");
		st = load_problem_type(ld, pt, p);
		if (st)
			return st;
		ld->type = p->type;
		p->groups = calloc(1, sizeof(*p->groups));
		if (!p->groups)
			return nomem(ld);
		p->ngroups = 1;
		return load_group(ld, e, p->type->nidx, true, &p->groups[0]);
	}
	if (e->kind != YNODE_SEQ || e->n == 0)
		return fail_node(
		    ld, e,
		    "an entry of 'BenchmarkProblems' must be a list [ProblemType, "
		    "group, ...] (v3.x) or a mapping with ProblemType (v2.x), found %s",
		    e->kind == YNODE_SEQ ? "an empty list" : ynode_what(e));
	p->form = 3;
	st = load_problem_type(ld, e->kid[0], p);
	if (st)
		return st;
	ld->type = p->type;
	p->groups = calloc(e->n > 1 ? e->n - 1 : 1, sizeof(*p->groups));
	if (!p->groups)
		return nomem(ld);
	if (e->n == 1) {
		/* ProblemType alone: one group with every phase absent */
		p->ngroups = 1;
		p->groups[0].line = e->kid[0]->line;
		return TCX_OK;
	}
	for (size_t k = 1; k < e->n; k++) {
		const struct ynode *g = e->kid[k];

		if (g->kind != YNODE_MAP)
			return fail_node(
			    ld, g,
			    "a benchmark group must be a mapping of phases "
			    "(BenchmarkCommonParameters, ForkParameters ...), found %s",
			    ynode_what(g));
		p->ngroups++;
		st = load_group(ld, g, p->type->nidx, false, &p->groups[k - 1]);
		if (st)
			return st;
	}
	return TCX_OK;
}

static enum tcx_status load_problems(struct loader *ld, const struct ynode *v, struct config *c)
{
	enum tcx_status st;

	if (ynode_is_null(v))
		return TCX_OK;
	if (v->kind != YNODE_SEQ)
		return fail_node(ld, v, "'BenchmarkProblems' must be a list of problems, found %s",
				 ynode_what(v));
	if (v->n == 0)
		return TCX_OK;
	c->problems = calloc(v->n, sizeof(*c->problems));
	if (!c->problems)
		return nomem(ld);
	for (size_t k = 0; k < v->n; k++) {
		struct config_problem *p = &c->problems[k];

		c->nproblems++;
		st = load_problem(ld, v->kid[k], p);
		if (st)
			return st;
		if (k == 0)
			c->form = p->form;
		else if (p->form != c->form)
			ynode_warn(ld->name, v->kid[k],
				  "this entry is in the v%d.x form but the first is in "
				  "the v%d.x form: both are read",
				  p->form, c->form);
	}
	return TCX_OK;
}

/* GlobalParameters and LibraryLogic: a mapping ({} when null). */
static enum tcx_status load_mapping(struct loader *ld, const struct ynode *key,
				    const struct ynode *v, json_t **out)
{
	if (ynode_is_null(v)) {
		*out = json_object();
		return *out ? TCX_OK : nomem(ld);
	}
	if (v->kind != YNODE_MAP)
		return fail_node(ld, v, "'%s' must be a mapping of Name: value, found %s",
				 key->text, ynode_what(v));
	return ynode_to_json(v, ld->name, out, ld->err);
}

/* What node n is, for "found X": its text quoted when it is a value. */
static const char *found_word(const struct ynode *n, char *buf, size_t len)
{
	if (n->kind != YNODE_SCALAR || ynode_is_null(n))
		return ynode_what(n);
	snprintf(buf, len, n->plain ? "'%s'" : "the quoted text '%s'", n->text);
	return buf;
}

/* The GlobalParameters tcx reads (MinTime, MinReps), checked where they are
 * written as tcx tune checks --min-time and --min-reps; the others are
 * Tensile's and left to the tuner's note, except a near miss of a key tcx
 * reads ("MinTim"), which would silently leave its setting at the
 * default. */
static enum tcx_status check_globals(struct loader *ld, const struct ynode *m)
{
	static const char *const read[] = { "MinTime", "MinReps", "KernelTime" };
	const struct ynode *v;
	char buf[64];
	int64_t i;
	double d;

	if (m->kind != YNODE_MAP)
		return TCX_OK;
	for (size_t k = 0; k < ymap_size(m); k++) {
		const struct ynode *key = ymap_key(m, k);
		struct suggest sg;
		char hint[96];

		suggest_init(&sg, key->text);
		for (size_t r = 0; r < ARRAY_SIZE(read); r++)
			suggest_add(&sg, read[r]);
		if (sg.best && !strchr(key->text, ' '))
			return fail_node(ld, key, "unknown key '%s' in GlobalParameters%s", key->text,
					 suggest_hint(&sg, hint, sizeof(hint)));
	}
	v = ymap_get(m, "MinTime");
	if (v && !((ynode_int(v, &i) && i >= 0) || (ynode_float(v, &d) && d >= 0)))
		return fail_node(ld, v, "MinTime must be a number of seconds >= 0, found %s",
				 found_word(v, buf, sizeof(buf)));
	v = ymap_get(m, "MinReps");
	if (v && !(ynode_int(v, &i) && i >= 1 && i <= BENCH_MAX_REPS))
		return fail_node(ld, v, "MinReps must be a whole number from 1 to %d, found %s",
				 BENCH_MAX_REPS, found_word(v, buf, sizeof(buf)));
	return TCX_OK;
}

static enum tcx_status load_root(struct loader *ld, const struct ynode *root, struct config *c)
{
	enum tcx_status st;

	if (root->kind != YNODE_MAP)
		return fail_node(ld, root,
				 "a config must be a mapping with GlobalParameters, "
				 "BenchmarkProblems, LibraryLogic or LibraryClient, found %s",
				 ynode_what(root));
	c->form = 3;
	for (size_t k = 0; k < ymap_size(root); k++) {
		const struct ynode *key = ymap_key(root, k), *v = ymap_val(root, k);

		if (strcmp(key->text, "GlobalParameters") == 0) {
			st = load_mapping(ld, key, v, &c->global);
			if (!st)
				st = check_globals(ld, v);
		} else if (strcmp(key->text, "BenchmarkProblems") == 0) {
			st = load_problems(ld, v, c);
		} else if (strcmp(key->text, "LibraryLogic") == 0) {
			st = load_mapping(ld, key, v, &c->library_logic);
		} else if (strcmp(key->text, "LibraryClient") == 0) {
			c->library_client = true;
			if (!ynode_is_null(v))
				ynode_warn(ld->name, v,
					  "the value of 'LibraryClient' ignored: the key alone "
					  "asks for the library client");
			st = TCX_OK;
		} else {
			static const char *const top[] = { "GlobalParameters", "BenchmarkProblems",
							   "LibraryLogic", "LibraryClient" };
			struct suggest sg;
			char hint[96];

			suggest_init(&sg, key->text);
			for (size_t t = 0; t < ARRAY_SIZE(top); t++)
				suggest_add(&sg, top[t]);
			if (strcmp(key->text, "Parameters") == 0)
				snprintf(hint, sizeof(hint),
					 " (Tensile's wiki calls it so; its code reads "
					 "'GlobalParameters')");
			else if (!sg.best)
				snprintf(hint, sizeof(hint),
					 " (expected GlobalParameters, BenchmarkProblems, "
					 "LibraryLogic or LibraryClient)");
			else
				suggest_hint(&sg, hint, sizeof(hint));
			st = fail_node(ld, key, "unknown key '%s'%s", key->text, hint);
		}
		if (st)
			return st;
	}
	return TCX_OK;
}

/* ---- entry points ----------------------------------------------------- */

static void free_step(struct config_step *s)
{
	for (int k = 0; k < s->nparams; k++) {
		free(s->params[k].name);
		json_decref(s->params[k].values);
	}
	free(s->params);
	free(s->sizes.ranges);
	free(s->sizes.exact);
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nproblems; i++) {
		struct config_problem *p = &c->problems[i];

		for (int g = 0; g < p->ngroups; g++)
			for (int ph = 0; ph < PH_COUNT; ph++) {
				struct config_phase *x = &p->groups[g].phase[ph];

				for (int s = 0; s < x->nsteps; s++)
					free_step(&x->steps[s]);
				free(x->steps);
			}
		for (int g = 0; g < p->ngroups; g++)
			json_decref(p->groups[g].candidates);
		free(p->groups);
		contraction_free(p->type);
		json_decref(p->problem_type);
	}
	free(c->problems);
	json_decref(c->global);
	json_decref(c->library_logic);
	free(c->path);
	free(c);
}

enum tcx_status config_load_string(const char *text, size_t len, const char *name,
				   struct config **out, struct tcx_error *err)
{
	struct loader ld = { name ? name : "<string>", err, NULL };
	struct ynode *root = NULL;
	struct config *c;
	enum tcx_status st;

	*out = NULL;
	if (len > CONFIG_MAX_BYTES)
		return tcx_fail(err, TCX_EPARSE, "%s: config is larger than %u MiB", ld.name,
				CONFIG_MAX_BYTES >> 20);
	c = calloc(1, sizeof(*c));
	if (!c)
		return nomem(&ld);
	c->path = strdup(ld.name);
	if (!c->path) {
		st = nomem(&ld);
		goto out_free_config;
	}
	st = ydoc_parse(text ? text : "", text ? len : 0, ld.name, CONFIG_MAX_NODES, &root, err);
	if (st)
		goto out_free_config;
	if (!root || ynode_is_null(root))
		st = fail_at(&ld, TCX_EPARSE, 1, 1,
			     "empty config: expected a mapping with GlobalParameters, "
			     "BenchmarkProblems, LibraryLogic or LibraryClient");
	else
		st = load_root(&ld, root, c);
	ynode_free(root);
	if (st)
		goto out_free_config;
	*out = c;
	return TCX_OK;

out_free_config:
	config_free(c);
	return st;
}

/* Reads at most CONFIG_MAX_BYTES (+1 to notice a larger file). */
static enum tcx_status read_bounded(const char *path, char **out, size_t *len,
				    struct tcx_error *err)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t n = 0, cap = 0;
	char *buf = NULL;
	enum tcx_status st = TCX_OK;

	*out = NULL;
	*len = 0;
	if (!fp)
		return tcx_fail(err, TCX_EIO, "cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			char *p;

			if (nc > (size_t)CONFIG_MAX_BYTES + 1)
				nc = (size_t)CONFIG_MAX_BYTES + 1;
			if (nc == cap) {
				st = tcx_fail(err, TCX_EPARSE, "%s: config is larger than %u MiB",
					      path, CONFIG_MAX_BYTES >> 20);
				goto out_close;
			}
			p = realloc(buf, nc);
			if (!p) {
				st = tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", path);
				goto out_close;
			}
			buf = p;
			cap = nc;
		}
		got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(fp))
		st = tcx_fail(err, TCX_EIO, "cannot read '%s': %s", path, strerror(errno));
	else if (n > CONFIG_MAX_BYTES)
		st = tcx_fail(err, TCX_EPARSE, "%s: config is larger than %u MiB", path,
			      CONFIG_MAX_BYTES >> 20);
out_close:
	if (fp != stdin)
		fclose(fp);
	if (st) {
		free(buf);
		return st;
	}
	*out = buf;
	*len = n;
	return TCX_OK;
}

enum tcx_status config_load(const char *path, struct config **out, struct tcx_error *err)
{
	char *text;
	size_t len;
	enum tcx_status st;

	*out = NULL;
	st = read_bounded(path, &text, &len, err);
	if (st)
		return st;
	st = config_load_string(text, len, path, out, err);
	free(text);
	return st;
}

/* logic.c - library logic in memory: tcx's YAML format (docs/logic-format.md)
 * read and written, format detection, the checks lookups rely on, range
 * trees and lookups.  Tensile's list forms are in tensile.c, its
 * ProblemType mapping in ptype.c, the analysis in analyze.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "logic/logic.h"
#include "logic/ptype.h"
#include "notation/notation.h"
#include "yaml/ydoc.h"

static enum tcx_status nomem(struct tcx_error *err)
{
	return tcx_fail(err, TCX_ENOMEM, "out of memory");
}

/* Sets key to v (taking it); false when either failed to allocate. */
static bool set_new(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *ints_json(const int *v, int n)
{
	json_t *a = json_array();

	for (int k = 0; a && k < n; k++)
		if (json_array_append_new(a, json_integer(v[k]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* ---- the model -------------------------------------------------------- */

enum tcx_status logic_new(struct logic **out, struct tcx_error *err)
{
	struct logic *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return nomem(err);
	l->format = LOGIC_TCX;
	l->device_names = calloc(1, sizeof(char *));
	if (l->device_names)
		l->device_names[0] = strdup("default");
	if (!l->device_names || !l->device_names[0]) {
		logic_free(l);
		return nomem(err);
	}
	l->ndevice_names = 1;
	*out = l;
	return TCX_OK;
}

enum tcx_status logic_set_type(struct logic *l, const struct tcx_contraction *c,
			       struct tcx_error *err)
{
	struct tcx_contraction *copy;
	json_t *pt;
	enum tcx_status st = contraction_clone(c, &copy, err);

	if (st)
		return st;
	pt = ptype_derive(copy);
	if (!pt) {
		contraction_free(copy);
		return nomem(err);
	}
	contraction_free(l->type);
	json_decref(l->problem_type);
	l->type = copy;
	l->problem_type = pt;
	l->norder = ptype_index_order(copy, l->index_order);
	return TCX_OK;
}

void range_free(struct range_node *n)
{
	if (!n)
		return;
	for (int k = 0; k < n->nrules; k++)
		range_free(n->rules[k].child);
	free(n->rules);
	free(n);
}

void logic_free(struct logic *l)
{
	if (!l)
		return;
	free(l->min_version);
	json_decref(l->modern_items);
	free(l->schedule);
	for (int k = 0; k < l->ndevice_names; k++)
		free(l->device_names[k]);
	free(l->device_names);
	free(l->architecture);
	free(l->device_name);
	free(l->vendor);
	free(l->driver);
	free(l->backend);
	contraction_free(l->type);
	json_decref(l->problem_type);
	for (int k = 0; k < l->nsol; k++)
		json_decref(l->sols[k].tensile);
	free(l->sols);
	free(l->exact);
	range_free(l->range);
	json_decref(l->selector);
	free(l->created_version);
	free(l->created_date);
	free(l);
}

void logic_solution_name(const struct solution *s, json_t *tensile, char *buf, size_t len)
{
	json_t *n = tensile ? json_object_get(tensile, "SolutionNameMin") : NULL;

	if (json_is_string(n) && json_string_length(n) > 0)
		snprintf(buf, len, "%s", json_string_value(n));
	else
		solution_name(s, buf, len);
}

/* ---- range trees ------------------------------------------------------ */

bool range_equal(const struct range_node *a, const struct range_node *b)
{
	if (!a || !b)
		return a == b;
	if (a->index != b->index || a->nrules != b->nrules)
		return false;
	for (int k = 0; k < a->nrules; k++) {
		const struct range_rule *x = &a->rules[k], *y = &b->rules[k];

		if (x->threshold != y->threshold || x->sol != y->sol ||
		    !range_equal(x->child, y->child))
			return false;
	}
	return true;
}

json_t *range_to_json(const struct range_node *n)
{
	json_t *a = json_array();

	for (int k = 0; a && k < n->nrules; k++) {
		const struct range_rule *r = &n->rules[k];
		json_t *rule = json_array(), *child;

		child = r->child ? range_to_json(r->child) : json_integer(r->sol);
		if (!rule || !child || json_array_append_new(rule, json_integer(r->threshold)) ||
		    json_array_append_new(rule, child) || json_array_append_new(a, rule)) {
			json_decref(rule);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static const char *index_name(const struct logic *l, int id)
{
	if (l->type && id >= 0 && id < l->type->nidx)
		return l->type->idx[id].name;
	return "?";
}

static enum tcx_status range_read(json_t *v, const struct logic *l, int depth, const char *name,
				  struct range_node **out, struct tcx_error *err)
{
	struct range_node *n;
	json_t *rule;
	size_t k, count;
	int id = l->index_order[depth];
	enum tcx_status st = TCX_OK;

	*out = NULL;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return tcx_fail(err, TCX_EPARSE,
				"%s: range logic, level %d (index '%s'): expected a non-empty list "
				"of [threshold, rule]",
				name, depth + 1, index_name(l, id));
	count = json_array_size(v);
	if (count > 1000000)
		return tcx_fail(err, TCX_ERANGE, "%s: range logic, level %d: too many rules", name,
				depth + 1);
	n = calloc(1, sizeof(*n));
	if (!n || !(n->rules = calloc(count, sizeof(*n->rules)))) {
		free(n);
		return nomem(err);
	}
	n->index = id;
	json_array_foreach(v, k, rule)
	{
		struct range_rule *r = &n->rules[k];
		json_t *t = json_array_get(rule, 0), *c = json_array_get(rule, 1);

		n->nrules++;
		r->sol = -1;
		if (!json_is_array(rule) || json_array_size(rule) != 2 || !json_is_integer(t)) {
			st = tcx_fail(err, TCX_EPARSE,
				      "%s: range logic, level %d (index '%s'), rule %zu: expected "
				      "[threshold, rule]",
				      name, depth + 1, index_name(l, id), k + 1);
			break;
		}
		r->threshold = json_integer_value(t);
		if (k + 1 == count ? r->threshold != -1
				   : r->threshold < 0 ||
					 (k > 0 && r->threshold <= n->rules[k - 1].threshold)) {
			st = tcx_fail(
			    err, TCX_EPARSE,
			    "%s: range logic, level %d (index '%s'), rule %zu: threshold "
			    "%lld %s",
			    name, depth + 1, index_name(l, id), k + 1, (long long)r->threshold,
			    k + 1 == count ? "where the last rule must have -1"
					   : "out of order: thresholds are increasing sizes");
			break;
		}
		if (depth + 1 == l->norder) {
			if (!json_is_integer(c)) {
				st = tcx_fail(err, TCX_EPARSE,
					      "%s: range logic, level %d (index '%s'), rule %zu: "
					      "expected a solution index at the last level",
					      name, depth + 1, index_name(l, id), k + 1);
				break;
			}
			if (json_integer_value(c) < 0 || json_integer_value(c) >= l->nsol) {
				st = tcx_fail(
				    err, TCX_ERANGE,
				    "%s: range logic, level %d (index '%s'), rule %zu: "
				    "solution %lld out of range (the file has %d solutions)",
				    name, depth + 1, index_name(l, id), k + 1,
				    (long long)json_integer_value(c), l->nsol);
				break;
			}
			r->sol = (int)json_integer_value(c);
		} else {
			if (!json_is_array(c)) {
				st =
				    tcx_fail(err, TCX_EPARSE,
					     "%s: range logic, level %d (index '%s'), rule %zu: "
					     "expected the next level's rules: the tree must be %d "
					     "levels deep, one per index",
					     name, depth + 1, index_name(l, id), k + 1, l->norder);
				break;
			}
			st = range_read(c, l, depth + 1, name, &r->child, err);
			if (st)
				break;
		}
	}
	if (st) {
		range_free(n);
		return st;
	}
	*out = n;
	return TCX_OK;
}

enum tcx_status range_from_json(json_t *v, const struct logic *l, const char *name,
				struct range_node **out, struct tcx_error *err)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return TCX_OK;
	if (l->norder < 1)
		return tcx_fail(err, TCX_EPARSE, "%s: range logic without an index order", name);
	return range_read(v, l, 0, name, out, err);
}

/* ---- checks ----------------------------------------------------------- */

static enum tcx_status check_range(const struct range_node *n, const struct logic *l, int depth,
				   const char *name, struct tcx_error *err)
{
	if (depth >= l->norder || n->index != l->index_order[depth] || n->nrules < 1)
		return tcx_fail(err, TCX_EINVAL, "%s: range logic does not follow the index order",
				name);
	for (int k = 0; k < n->nrules; k++) {
		const struct range_rule *r = &n->rules[k];
		bool last = k + 1 == n->nrules;

		if (last ? r->threshold != -1
			 : r->threshold < 0 || (k > 0 && r->threshold <= n->rules[k - 1].threshold))
			return tcx_fail(
			    err, TCX_EINVAL,
			    "%s: range logic, level %d: thresholds must increase and end "
			    "with -1",
			    name, depth + 1);
		if (depth + 1 == l->norder) {
			if (r->child || r->sol < 0 || r->sol >= l->nsol)
				return tcx_fail(
				    err, TCX_ERANGE,
				    "%s: range logic, level %d: solution %d out of range "
				    "(%d solutions)",
				    name, depth + 1, r->sol, l->nsol);
		} else if (!r->child) {
			return tcx_fail(err, TCX_EINVAL,
					"%s: range logic is not as deep as the index order", name);
		} else {
			enum tcx_status st = check_range(r->child, l, depth + 1, name, err);

			if (st)
				return st;
		}
	}
	return TCX_OK;
}

const struct logic_solution *logic_fallback(const struct logic *l, int k)
{
	const int fb = l->sols[k].fallback;

	return fb >= 0 && fb < l->nsol && !l->sols[fb].form.on ? &l->sols[fb] : NULL;
}

enum tcx_status logic_drop_forms(struct logic *l, const char *name, bool *changed,
				 struct tcx_error *err)
{
	if (changed)
		*changed = false;
	for (int k = 0; k < l->nsol; k++) {
		struct logic_solution *ls = &l->sols[k];
		const struct logic_solution *fb = logic_fallback(l, k);

		if (!ls->form.on)
			continue;
		if (!fb) {
			char form[128];

			plan_form_name(&ls->form, form, sizeof(form));
			return tcx_fail(err, TCX_EUNSUPPORTED,
					"%s: solution %d (%s) runs the contraction %s, which only tcx "
					"itself runs, and names no fallback solution",
					name, k, ls->name, form);
		}
		json_decref(ls->tensile);
		ls->tensile = fb->tensile ? json_incref(fb->tensile) : NULL;
		ls->sol = fb->sol;
		memcpy(ls->name, fb->name, sizeof(ls->name));
		ls->measured = fb->measured;
		ls->arith = fb->arith;
		ls->measured_error = fb->measured_error;
		memset(&ls->form, 0, sizeof(ls->form));
		ls->fallback = -1;
		if (changed)
			*changed = true;
	}
	return TCX_OK;
}

enum tcx_status logic_check(const struct logic *l, const char *name, struct tcx_error *err)
{
	bool seen[TCX_MAX_INDICES] = {false};
	int nidx;

	if (!l->type)
		return tcx_fail(err, TCX_EINVAL, "%s: no problem type", name);
	nidx = l->type->nidx;
	if (l->norder != nidx)
		return tcx_fail(err, TCX_EINVAL,
				"%s: the index order has %d ids where the problem type has %d "
				"indices",
				name, l->norder, nidx);
	for (int k = 0; k < l->norder; k++) {
		int id = l->index_order[k];

		if (id < 0 || id >= nidx || seen[id])
			return tcx_fail(err, TCX_EINVAL,
					"%s: the index order must list each index id from 0 to %d "
					"once",
					name, nidx - 1);
		seen[id] = true;
	}
	for (int k = 0; k < l->nsol; k++) {
		const struct logic_solution *ls = &l->sols[k];

		if (!ls->form.on || ls->fallback < 0)
			continue;
		if (ls->fallback >= l->nsol)
			return tcx_fail(err, TCX_ERANGE,
					"%s: solution %d: fallback %d out of range (%d solutions)",
					name, k, ls->fallback, l->nsol);
		if (l->sols[ls->fallback].form.on)
			return tcx_fail(err, TCX_EINVAL,
					"%s: solution %d: its fallback, solution %d, has a form "
					"itself",
					name, k, ls->fallback);
	}
	for (int k = 0; k < l->nexact; k++) {
		const struct logic_exact *e = &l->exact[k];

		if (e->nsizes < nidx || e->nsizes > TCX_MAX_INDICES)
			return tcx_fail(err, TCX_EINVAL,
					"%s: exact entry %d has %d sizes for %d "
					"indices",
					name, k + 1, e->nsizes, nidx);
		if (e->sol < 0 || e->sol >= l->nsol)
			return tcx_fail(
			    err, TCX_ERANGE,
			    "%s: exact entry %d: solution %d out of range (%d solutions)", name,
			    k + 1, e->sol, l->nsol);
		for (int i = 0; i < nidx; i++)
			if (e->sizes[i] < 1)
				return tcx_fail(
				    err, TCX_ERANGE,
				    "%s: exact entry %d: size %lld of index '%s' is not "
				    "positive",
				    name, k + 1, (long long)e->sizes[i], index_name(l, i));
	}
	return l->range ? check_range(l->range, l, 0, name, err) : TCX_OK;
}

/* ---- lookup ----------------------------------------------------------- */

int logic_lookup(const struct logic *l, const int64_t *sizes, struct strbuf *why)
{
	const struct range_node *n;
	int nidx = l->type ? l->type->nidx : l->norder;

	for (int k = 0; k < l->nexact; k++) {
		const struct logic_exact *e = &l->exact[k];
		int i;

		for (i = 0; i < nidx && e->sizes[i] == sizes[i]; i++)
			;
		if (i == nidx) {
			if (why) {
				strbuf_adds(why, "exact size ");
				for (i = 0; i < nidx; i++)
					strbuf_addf(why, "%s%lld", i ? "," : "",
						    (long long)sizes[i]);
				strbuf_addf(why, " (entry %d)", k + 1);
			}
			return e->sol;
		}
	}
	n = l->range;
	if (!n) {
		if (why)
			strbuf_adds(why, l->nexact ? "no exact entry for these sizes, and no range "
						     "logic"
						   : "no exact entries and no range logic");
		return -1;
	}
	if (why)
		strbuf_adds(why, "range rules:");
	for (int depth = 0; n; depth++) {
		int id = n->index, k;
		int64_t s = id >= 0 && id < TCX_MAX_INDICES ? sizes[id] : 0;
		const struct range_rule *r = NULL;

		for (k = 0; k < n->nrules; k++)
			if (n->rules[k].threshold < 0 || s <= n->rules[k].threshold) {
				r = &n->rules[k];
				break;
			}
		if (!r) {
			if (why)
				strbuf_addf(why, " no rule for %s = %lld", index_name(l, id),
					    (long long)s);
			return -1;
		}
		if (why) {
			const char *nm = index_name(l, id);

			strbuf_adds(why, depth ? ", " : " ");
			if (r->threshold < 0 && k == 0)
				strbuf_addf(why, "any %s", nm);
			else if (r->threshold < 0)
				strbuf_addf(why, "%s > %lld", nm,
					    (long long)n->rules[k - 1].threshold);
			else if (k == 0)
				strbuf_addf(why, "%s <= %lld", nm, (long long)r->threshold);
			else
				strbuf_addf(why, "%lld < %s <= %lld",
					    (long long)n->rules[k - 1].threshold, nm,
					    (long long)r->threshold);
		}
		if (!r->child)
			return r->sol;
		n = r->child;
	}
	return -1;
}

/* ---- tcx's format: reading -------------------------------------------- */

static enum tcx_status get_string(json_t *obj, const char *key, const char *where, char **out,
				  struct tcx_error *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return TCX_OK;
	if (json_is_integer(v) || json_is_real(v)) {
		char buf[64];

		if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		else
			snprintf(buf, sizeof(buf), "%g", json_real_value(v));
		*out = strdup(buf);
	} else if (json_is_string(v)) {
		*out = strdup(json_string_value(v));
	} else {
		return tcx_fail(err, TCX_EPARSE, "%s: '%s' must be text", where, key);
	}
	return *out ? TCX_OK : nomem(err);
}

/* DeviceNames: a list of names, or one name (Tensile's `default`). */
enum tcx_status logic_read_device_names(json_t *v, const char *where, struct logic *l,
					struct tcx_error *err)
{
	size_t n = json_is_array(v) ? json_array_size(v) : 1;

	if (!v || json_is_null(v))
		return TCX_OK;
	if (!json_is_array(v) && !json_is_string(v))
		return tcx_fail(err, TCX_EPARSE,
				"%s: device names must be a list of names or one name", where);
	for (int k = 0; k < l->ndevice_names; k++)
		free(l->device_names[k]);
	free(l->device_names);
	l->ndevice_names = 0;
	l->device_names = calloc(n ? n : 1, sizeof(char *));
	if (!l->device_names)
		return nomem(err);
	for (size_t k = 0; k < n; k++) {
		json_t *x = json_is_array(v) ? json_array_get(v, k) : v;

		if (!json_is_string(x))
			return tcx_fail(err, TCX_EPARSE, "%s: device name %zu is not text", where,
					k + 1);
		l->device_names[k] = strdup(json_string_value(x));
		if (!l->device_names[k])
			return nomem(err);
		l->ndevice_names++;
	}
	return TCX_OK;
}

/* The problem: p, and its node pn for the ProblemType's places. */
static enum tcx_status read_problem(json_t *p, const struct ynode *pn, const char *name,
				    struct logic *l, struct tcx_error *err)
{
	json_t *ex = json_object_get(p, "expression"), *ty = json_object_get(p, "type");
	json_t *lay = json_object_get(p, "layout"), *pt = json_object_get(p, "ProblemType");
	json_t *names = json_object_get(p, "indices");
	const struct ynode *ptn = ymap_get(pn, "ProblemType");
	char where[512];
	enum tcx_status st;

	snprintf(where, sizeof(where), "%s: problem", name);
	if (!json_is_object(p))
		return tcx_fail(err, TCX_EPARSE, "%s: 'problem' must be a mapping", name);
	if (ptn && ptn->kind != YNODE_MAP)
		return ynode_fail(err, name, ptn, "ProblemType must be a mapping, found %s",
				  ynode_what(ptn));
	if (ex) {
		struct tcx_error perr = {0};
		enum tcx_dtype dt = TCX_DTYPE_S;
		int layout = LAYOUT_BY_STYLE;

		if (!json_is_string(ex))
			return tcx_fail(err, TCX_EPARSE, "%s: 'expression' must be text", where);
		if (ty && !(json_is_string(ty) && dtype_parse(json_string_value(ty), &dt)))
			return tcx_fail(err, TCX_EPARSE,
					"%s: 'type' must be an element type: s, d, c, z, h or b",
					where);
		if (!ty && ptn && (st = ptype_dtype(ptn, name, &dt, err)))
			return st;
		if (lay && json_is_string(lay) &&
		    strcmp(json_string_value(lay), "first-fastest") == 0)
			layout = LAYOUT_FIRST_FASTEST;
		else if (lay && json_is_string(lay) &&
			 strcmp(json_string_value(lay), "last-fastest") == 0)
			layout = LAYOUT_LAST_FASTEST;
		else if (lay && !json_is_null(lay))
			return tcx_fail(err, TCX_EPARSE,
					"%s: 'layout' must be first-fastest or last-fastest",
					where);
		st = notation_parse(json_string_value(ex), dt, layout, &l->type, &perr);
		if (st)
			return tcx_fail(err, st, "%s: cannot parse expression '%s': %s", where,
					json_string_value(ex), perr.msg);
		if (l->type->implicit_b)
			return tcx_fail(err, TCX_EUNSUPPORTED,
					"%s: expression '%s' has one input tensor: library logic "
					"takes two",
					where, json_string_value(ex));
		if (ptn) {
			bool hpa;

			if ((st = ptype_bool(ptn, "HighPrecisionAccumulate", false, name, &hpa,
					     err)))
				return st;
			l->type->hpa = hpa;
		}
	} else if (ptn) {
		if ((st = ptype_read(ptn, name, PTYPE_DERIVED, &l->type, err)))
			return st;
	} else {
		return tcx_fail(err, TCX_EPARSE, "%s: has neither 'expression' nor 'ProblemType'",
				where);
	}
	if (json_is_array(names)) {
		size_t k;
		json_t *x;

		if ((int)json_array_size(names) != l->type->nidx)
			return tcx_fail(err, TCX_EPARSE,
					"%s: 'indices' lists %zu names for %d indices", where,
					json_array_size(names), l->type->nidx);
		json_array_foreach(names, k,
				   x) if (!json_is_string(x) ||
					  strcmp(json_string_value(x), l->type->idx[k].name) != 0)
		{
			return tcx_fail(err, TCX_EPARSE,
					"%s: 'indices' does not match the expression: index %zu is "
					"'%s'",
					where, k, l->type->idx[k].name);
		}
	}
	l->problem_type = pt ? json_deep_copy(pt) : ptype_derive(l->type);
	return l->problem_type ? TCX_OK : nomem(err);
}

/* A solution's 'arithmetic' and 'measured_error' (tcx tune): both or
 * neither. */
static enum tcx_status read_measured(json_t *s, const char *name, size_t k,
				     struct logic_solution *ls, struct tcx_error *err)
{
	json_t *a = json_object_get(s, "arithmetic"), *e = json_object_get(s, "measured_error");

	if (!a && !e)
		return TCX_OK;
	if (!json_is_string(a) || !arith_parse(json_string_value(a), &ls->arith))
		return tcx_fail(err, TCX_EPARSE,
				"%s: solution %zu: 'arithmetic' must be one of tf32, tf32x3, "
				"fp32-simt, fp16, bf16, fp64",
				name, k);
	if (!json_is_number(e) || json_number_value(e) < 0)
		return tcx_fail(err, TCX_EPARSE,
				"%s: solution %zu: 'measured_error' must be a number >= 0", name, k);
	ls->measured = true;
	ls->measured_error = json_number_value(e);
	return TCX_OK;
}

/* A solution's 'form' and 'fallback' (tcx tune, where the planner's plan
 * won); the fallback's index is checked with the others (logic_check). */
static enum tcx_status read_form(json_t *s, const char *name, size_t k,
				 struct logic_solution *ls, struct tcx_error *err)
{
	json_t *f = json_object_get(s, "form"), *fb = json_object_get(s, "fallback");

	ls->fallback = -1;
	if (!f && !fb)
		return TCX_OK;
	if (!json_is_string(f) || !plan_form_parse(json_string_value(f), &ls->form))
		return tcx_fail(err, TCX_EPARSE,
				"%s: solution %zu: 'form' must be 'merged', then any of "
				"'+permute-A', '+permute-B', '+permute-C' (with '+c-b-first' or "
				"'+c-by-c'), '+ttm'",
				name, k);
	if (fb && !json_is_integer(fb))
		return tcx_fail(err, TCX_EPARSE,
				"%s: solution %zu: 'fallback' must be a solution's index", name, k);
	ls->fallback = fb ? (int)json_integer_value(fb) : -1;
	if (fb && (json_integer_value(fb) < 0 || json_integer_value(fb) > INT32_MAX))
		ls->fallback = INT32_MAX; /* out of range: logic_check says so */
	return TCX_OK;
}

static enum tcx_status read_solutions(json_t *v, const char *name, struct logic *l,
				      struct tcx_error *err)
{
	size_t k;
	json_t *s;

	if (!json_is_array(v))
		return tcx_fail(err, TCX_EPARSE, "%s: 'solutions' must be a list", name);
	l->sols = calloc(json_array_size(v) + 1, sizeof(*l->sols));
	if (!l->sols)
		return nomem(err);
	json_array_foreach(v, k, s)
	{
		struct logic_solution *ls = &l->sols[k];
		json_t *params = json_object_get(s, "parameters"), *nm = json_object_get(s, "name");
		json_t *tens = json_object_get(s, "tensile");
		struct tcx_error serr = {0};
		enum tcx_status st;

		l->nsol++;
		if (!json_is_object(s) || !json_is_object(params))
			return tcx_fail(err, TCX_EPARSE,
					"%s: solution %zu: expected a mapping with 'parameters'",
					name, k);
		st = solution_from_json(&ls->sol, params, &serr);
		if (st)
			return tcx_fail(err, st, "%s: solution %zu: %s", name, k, serr.msg);
		if (tens && json_is_object(tens))
			ls->tensile = json_incref(tens);
		st = read_measured(s, name, k, ls, err);
		if (!st)
			st = read_form(s, name, k, ls, err);
		if (st)
			return st;
		if (json_is_string(nm))
			snprintf(ls->name, sizeof(ls->name), "%s", json_string_value(nm));
		else
			logic_solution_name(&ls->sol, ls->tensile, ls->name, sizeof(ls->name));
	}
	return TCX_OK;
}

static enum tcx_status read_sizes(json_t *v, const char *what, int nidx, struct logic_exact *e,
				  struct tcx_error *err)
{
	size_t k;
	json_t *x;

	if (!json_is_array(v) || (int)json_array_size(v) < nidx ||
	    json_array_size(v) > TCX_MAX_INDICES)
		return tcx_fail(err, TCX_EPARSE, "%s: expected a list of %d sizes, one per index",
				what, nidx);
	json_array_foreach(v, k, x)
	{
		if (!json_is_integer(x))
			return tcx_fail(err, TCX_EPARSE, "%s: size %zu is not a whole number", what,
					k + 1);
		e->sizes[k] = json_integer_value(x);
		if ((int)k < nidx && e->sizes[k] < 1)
			return tcx_fail(err, TCX_ERANGE, "%s: size %lld is not positive", what,
					(long long)e->sizes[k]);
	}
	e->nsizes = (int)json_array_size(v);
	return TCX_OK;
}

/* One exact entry: tcx's {sizes, solution, gflops} or Tensile's
 * [[sizes...], [solution, gflops]]. */
static enum tcx_status read_exact_entry(json_t *v, const char *what, struct logic *l,
					struct logic_exact *e, struct tcx_error *err)
{
	json_t *sizes, *sol, *gf;
	enum tcx_status st;

	if (json_is_object(v)) {
		sizes = json_object_get(v, "sizes");
		sol = json_object_get(v, "solution");
		gf = json_object_get(v, "gflops");
	} else if (json_is_array(v) && json_array_size(v) == 2 &&
		   json_is_array(json_array_get(v, 1)) &&
		   json_array_size(json_array_get(v, 1)) >= 1) {
		sizes = json_array_get(v, 0);
		sol = json_array_get(json_array_get(v, 1), 0);
		gf = json_array_get(json_array_get(v, 1), 1);
	} else {
		return tcx_fail(err, TCX_EPARSE, "%s: expected %s", what,
				l->format == LOGIC_TCX ? "{sizes, solution, gflops}"
						       : "[[sizes...], [solution, gflops]]");
	}
	if ((st = read_sizes(sizes, what, l->type->nidx, e, err)))
		return st;
	if (!json_is_integer(sol))
		return tcx_fail(err, TCX_EPARSE, "%s: the solution index is not a whole number",
				what);
	if (json_integer_value(sol) < 0 || json_integer_value(sol) >= l->nsol)
		return tcx_fail(err, TCX_ERANGE,
				"%s: solution %lld out of range (the file has %d solutions)", what,
				(long long)json_integer_value(sol), l->nsol);
	e->sol = (int)json_integer_value(sol);
	if (gf && !json_is_null(gf) && !json_is_number(gf))
		return tcx_fail(err, TCX_EPARSE, "%s: GFLOP/s is not a number", what);
	e->gflops = gf && json_is_number(gf) ? json_number_value(gf) : 0;
	return TCX_OK;
}

enum tcx_status logic_read_exact(json_t *v, const char *name, struct logic *l,
				 struct tcx_error *err)
{
	size_t k;
	json_t *x;

	if (!v || json_is_null(v))
		return TCX_OK;
	if (!json_is_array(v))
		return tcx_fail(err, TCX_EPARSE, "%s: exact logic must be a list", name);
	l->exact = calloc(json_array_size(v) + 1, sizeof(*l->exact));
	if (!l->exact)
		return nomem(err);
	json_array_foreach(v, k, x)
	{
		char what[512];
		enum tcx_status st;

		snprintf(what, sizeof(what), "%s: exact logic, entry %zu", name, k + 1);
		st = read_exact_entry(x, what, l, &l->exact[k], err);
		if (st)
			return st;
		l->nexact++;
	}
	return TCX_OK;
}

enum tcx_status logic_read_index_order(json_t *v, const char *name, struct logic *l,
				       struct tcx_error *err)
{
	bool seen[TCX_MAX_INDICES] = {false};
	int nidx = l->type->nidx;
	size_t k;
	json_t *x;

	if (!json_is_array(v) || (int)json_array_size(v) != nidx)
		return tcx_fail(err, TCX_EPARSE,
				"%s: the index order must list the %d index ids, e.g. [2, 3, 0, 1]",
				name, nidx);
	json_array_foreach(v, k, x)
	{
		json_int_t id = json_is_integer(x) ? json_integer_value(x) : -1;

		if (id < 0 || id >= nidx || seen[id])
			return tcx_fail(err, TCX_EPARSE,
					"%s: the index order must list each id from 0 to %d once",
					name, nidx - 1);
		seen[id] = true;
		l->index_order[k] = (int)id;
	}
	l->norder = nidx;
	return TCX_OK;
}

static const char *const tcx_keys[] = {
    "tcx-logic",   "device", "schedule", "device_names", "problem", "solutions",
    "index_order", "exact",  "range",	 "selector",	 "tensile", "created",
    "accuracy",
};

static enum tcx_status from_tcx(json_t *doc, const struct ynode *tree, const char *name,
				struct logic *l, struct tcx_error *err)
{
	json_t *ver = json_object_get(doc, "tcx-logic"), *dev = json_object_get(doc, "device");
	json_t *v, *t;
	const char *key;
	enum tcx_status st;

	if (!json_is_integer(ver) || json_integer_value(ver) < 1)
		return tcx_fail(err, TCX_EPARSE, "%s: 'tcx-logic' must be the format version (1)",
				name);
	if (json_integer_value(ver) > LOGIC_TCX_VERSION)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"%s: logic format %lld is newer than this tcx reads (%d)", name,
				(long long)json_integer_value(ver), LOGIC_TCX_VERSION);
	json_object_foreach(doc, key, v)
	{
		size_t k;

		for (k = 0; k < ARRAY_SIZE(tcx_keys) && strcmp(key, tcx_keys[k]); k++)
			;
		if (k == ARRAY_SIZE(tcx_keys))
			tcx_log(TCX_LOG_WARN, "%s: unknown key '%s' ignored", name, key);
	}
	l->format = LOGIC_TCX;
	if (dev && !json_is_null(dev)) {
		json_t *cu = json_object_get(dev, "compute_units");
		char where[512];

		snprintf(where, sizeof(where), "%s: device", name);
		if (!json_is_object(dev))
			return tcx_fail(err, TCX_EPARSE, "%s: 'device' must be a mapping", name);
		if ((st = get_string(dev, "name", where, &l->device_name, err)) ||
		    (st = get_string(dev, "vendor", where, &l->vendor, err)) ||
		    (st = get_string(dev, "arch", where, &l->architecture, err)) ||
		    (st = get_string(dev, "backend", where, &l->backend, err)) ||
		    (st = get_string(dev, "driver", where, &l->driver, err)))
			return st;
		if (json_is_integer(cu) && json_integer_value(cu) > 0 &&
		    json_integer_value(cu) < 1 << 30)
			l->compute_units = (int)json_integer_value(cu);
	}
	if ((st = get_string(doc, "schedule", name, &l->schedule, err)) ||
	    (st = logic_read_device_names(json_object_get(doc, "device_names"), name, l, err)))
		return st;
	v = json_object_get(doc, "problem");
	if (!v)
		return tcx_fail(err, TCX_EPARSE, "%s: no 'problem'", name);
	if ((st = read_problem(v, ymap_get(tree, "problem"), name, l, err)))
		return st;
	v = json_object_get(doc, "solutions");
	if (!v)
		return tcx_fail(err, TCX_EPARSE, "%s: no 'solutions'", name);
	if ((st = read_solutions(v, name, l, err)))
		return st;
	v = json_object_get(doc, "index_order");
	if (v && !json_is_null(v)) {
		if ((st = logic_read_index_order(v, name, l, err)))
			return st;
	} else {
		l->norder = ptype_index_order(l->type, l->index_order);
	}
	if ((st = logic_read_exact(json_object_get(doc, "exact"), name, l, err)) ||
	    (st = range_from_json(json_object_get(doc, "range"), l, name, &l->range, err)))
		return st;
	v = json_object_get(doc, "selector");
	if (v && !json_is_null(v))
		l->selector = json_incref(v);
	v = json_object_get(doc, "accuracy");
	if (v && !json_is_null(v)) {
		if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1)
			return tcx_fail(err, TCX_EPARSE,
					"%s: 'accuracy' must be a relative error above 0 and at most 1",
					name);
		l->accuracy = json_number_value(v);
	}
	t = json_object_get(doc, "tensile");
	if (json_is_object(t)) {
		json_t *f = json_object_get(t, "format"),
		       *items = json_object_get(t, "modern_items");

		if (json_is_string(f) && strlen(json_string_value(f)) == 2 &&
		    json_string_value(f)[0] == 'v' && strchr("345", json_string_value(f)[1]))
			l->source_format = json_string_value(f)[1] - '0';
		if ((st = get_string(t, "minimum_required_version", name, &l->min_version, err)))
			return st;
		if (json_is_array(items))
			l->modern_items = json_incref(items);
	}
	t = json_object_get(doc, "created");
	if (json_is_object(t) &&
	    ((st = get_string(t, "tcx_version", name, &l->created_version, err)) ||
	     (st = get_string(t, "date", name, &l->created_date, err))))
		return st;
	return TCX_OK;
}

/* The logic of a document read into both a tree and JSON; takes both. */
static enum tcx_status load_doc(struct ynode *tree, json_t *doc, const char *name,
				struct logic **out, struct tcx_error *err)
{
	struct logic *l = NULL;
	enum tcx_status st = logic_new(&l, err);

	if (st)
		goto out_free_doc;
	if (json_is_object(doc) && json_object_get(doc, "tcx-logic"))
		st = from_tcx(doc, tree, name, l, err);
	else if (json_is_array(doc))
		st = logic_from_tensile(doc, tree, name, l, err);
	else
		st = tcx_fail(err, TCX_EPARSE,
			      "%s: not a logic file: expected tcx's mapping with 'tcx-logic' or "
			      "Tensile's list",
			      name);
	if (!st)
		st = logic_check(l, name, err);
	if (st) {
		logic_free(l);
		goto out_free_doc;
	}
	*out = l;
out_free_doc:
	json_decref(doc);
	ynode_free(tree);
	return st;
}

enum tcx_status logic_load_string(const char *text, size_t len, const char *name,
				  struct logic **out, struct tcx_error *err)
{
	struct ynode *tree;
	json_t *doc;
	enum tcx_status st;

	*out = NULL;
	if (!name)
		name = "<string>";
	st = ydoc_load(text, len, name, &tree, &doc, err);
	return st ? st : load_doc(tree, doc, name, out, err);
}

enum tcx_status logic_load(const char *path, struct logic **out, struct tcx_error *err)
{
	struct ynode *tree;
	json_t *doc;
	enum tcx_status st = ydoc_load_file(path, &tree, &doc, err);

	*out = NULL;
	return st ? st : load_doc(tree, doc, path, out, err);
}

/* ---- tcx's format: writing -------------------------------------------- */

static void now_iso(char *buf, size_t len)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH"); /* reproducible outputs */
	int64_t e;
	time_t t = sde && common_parse_i64(sde, &e) && e >= 0 ? (time_t)e : time(NULL);
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	else
		snprintf(buf, len, "unknown");
}

static json_t *device_json(const struct logic *l)
{
	json_t *d = json_object();

	if (d && set_new(d, "name", string_or_null(l->device_name)) &&
	    set_new(d, "vendor", string_or_null(l->vendor)) &&
	    set_new(d, "arch", string_or_null(l->architecture)) &&
	    set_new(d, "backend", string_or_null(l->backend)) &&
	    set_new(d, "driver", string_or_null(l->driver)) &&
	    set_new(d, "compute_units",
		    l->compute_units > 0 ? json_integer(l->compute_units) : json_null()))
		return d;
	json_decref(d);
	return NULL;
}

static json_t *names_json(const struct logic *l)
{
	json_t *a = json_array();

	for (int k = 0; a && k < l->ndevice_names; k++)
		if (json_array_append_new(a, json_string(l->device_names[k]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *problem_json(const struct logic *l)
{
	const struct tcx_contraction *c = l->type;
	json_t *p = json_object(), *names = json_array();
	char tname[256], letter[2] = {(char)(dtype_info(c->dtype)->letter | 0x20), 0};
	bool ok = p && names;

	contraction_tensile_name(c, tname, sizeof(tname));
	for (int id = 0; ok && id < c->nidx; id++)
		ok = json_array_append_new(names, json_string(c->idx[id].name)) == 0;
	if (!ok) {
		json_decref(names);
		json_decref(p);
		return NULL;
	}
	/* set_new takes each value, also when it fails */
	ok = set_new(p, "expression", json_string(c->expr)) &&
	     set_new(p, "type", json_string(letter)) &&
	     set_new(p, "layout",
		     json_string(c->layout == LAYOUT_FIRST_FASTEST ? "first-fastest"
								   : "last-fastest")) &&
	     set_new(p, "tensile_name", json_string(tname));
	if (ok)
		ok = set_new(p, "indices", names);
	else
		json_decref(names);
	ok = ok &&
	     set_new(p, "ProblemType",
		     l->problem_type ? json_deep_copy(l->problem_type) : ptype_derive(c));
	if (!ok) {
		json_decref(p);
		return NULL;
	}
	return p;
}

static bool form_json(json_t *s, const struct logic_solution *ls)
{
	char form[128];

	plan_form_name(&ls->form, form, sizeof(form));
	return set_new(s, "form", json_string(form)) &&
	       (ls->fallback < 0 || set_new(s, "fallback", json_integer(ls->fallback)));
}

static json_t *solutions_json(const struct logic *l)
{
	json_t *a = json_array();

	for (int k = 0; a && k < l->nsol; k++) {
		json_t *s = json_object();

		if (!s || !set_new(s, "name", json_string(l->sols[k].name)) ||
		    !set_new(s, "parameters", solution_to_json(&l->sols[k].sol)) ||
		    (l->sols[k].tensile &&
		     !set_new(s, "tensile", json_deep_copy(l->sols[k].tensile))) ||
		    (l->sols[k].measured &&
		     (!set_new(s, "arithmetic", json_string(arith_name(l->sols[k].arith))) ||
		      !set_new(s, "measured_error", json_real(l->sols[k].measured_error)))) ||
		    (l->sols[k].form.on && !form_json(s, &l->sols[k])) ||
		    json_array_append_new(a, s)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *sizes_json(const int64_t *v, int n)
{
	json_t *a = json_array();

	for (int k = 0; a && k < n; k++)
		if (json_array_append_new(a, json_integer(v[k]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *exact_json(const struct logic *l)
{
	json_t *a = json_array();

	for (int k = 0; a && k < l->nexact; k++) {
		const struct logic_exact *e = &l->exact[k];
		json_t *o = json_object();

		if (!o || !set_new(o, "sizes", sizes_json(e->sizes, e->nsizes)) ||
		    !set_new(o, "solution", json_integer(e->sol)) ||
		    !set_new(o, "gflops", json_real(e->gflops)) || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *created_json(const struct logic *l)
{
	json_t *c = json_object();
	char date[64];

	if (!l->created_date)
		now_iso(date, sizeof(date));
	if (c &&
	    set_new(c, "tcx_version",
		    json_string(l->created_version ? l->created_version : tcx_version())) &&
	    set_new(c, "date", json_string(l->created_date ? l->created_date : date)))
		return c;
	json_decref(c);
	return NULL;
}

static json_t *tcx_json(const struct logic *l)
{
	json_t *d = json_object();
	bool ok;

	if (!d)
		return NULL;
	ok = set_new(d, "tcx-logic", json_integer(LOGIC_TCX_VERSION)) &&
	     set_new(d, "device", device_json(l)) &&
	     set_new(d, "schedule", string_or_null(l->schedule)) &&
	     set_new(d, "device_names", names_json(l)) && set_new(d, "problem", problem_json(l)) &&
	     set_new(d, "solutions", solutions_json(l)) &&
	     set_new(d, "index_order", ints_json(l->index_order, l->norder)) &&
	     set_new(d, "exact", exact_json(l)) &&
	     set_new(d, "range", l->range ? range_to_json(l->range) : json_null()) &&
	     set_new(d, "selector", l->selector ? json_deep_copy(l->selector) : json_null());
	if (ok && l->accuracy > 0)
		ok = set_new(d, "accuracy", json_real(l->accuracy));
	if (ok && (l->source_format || l->min_version || l->modern_items)) {
		json_t *t = json_object();
		char f[4] = {'v', (char)('0' + l->source_format), 0, 0};

		ok = t && set_new(d, "tensile", t) &&
		     set_new(t, "format", l->source_format ? json_string(f) : json_null()) &&
		     set_new(t, "minimum_required_version", string_or_null(l->min_version)) &&
		     (!l->modern_items ||
		      set_new(t, "modern_items", json_deep_copy(l->modern_items)));
	}
	ok = ok && set_new(d, "created", created_json(l));
	if (!ok) {
		json_decref(d);
		return NULL;
	}
	return d;
}

enum tcx_status logic_to_json(const struct logic *l, int format, json_t **out,
			      struct tcx_error *err)
{
	enum tcx_status st;

	*out = NULL;
	if ((st = logic_check(l, "logic", err)))
		return st;
	if (format == LOGIC_TENSILE_V3 || format == LOGIC_TENSILE_V4)
		return logic_to_tensile(l, format, out, err);
	if (format != LOGIC_TCX)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"tcx writes logic as tcx's format or Tensile's v3 or v4 forms");
	*out = tcx_json(l);
	return *out ? TCX_OK : nomem(err);
}

enum tcx_status logic_write_format(const struct logic *l, const char *path, int format,
				   struct tcx_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct atomic_file af;
	json_t *doc;
	enum tcx_status st = logic_to_json(l, format, &doc, err);

	if (st)
		return st;
	st = yaml_from_json(doc, &sb, err);
	json_decref(doc);
	if (st)
		goto out;
	st = atomic_file_open(&af, path, err);
	if (st)
		goto out;
	if (fwrite(sb.buf, 1, sb.len, af.fp) != sb.len) {
		atomic_file_abort(&af);
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	st = atomic_file_commit(&af, err);
out:
	strbuf_release(&sb);
	return st;
}

enum tcx_status logic_write(const struct logic *l, const char *path, struct tcx_error *err)
{
	return logic_write_format(l, path, LOGIC_TCX, err);
}

/* tensile.c - Tensile's logic files: the list forms of v3.0-3.3 (8 items),
 * v4 (9 items) and modern Tensile (11 or more) read into struct logic, and
 * the v3 and v4 forms written (docs/tensile-compat.md section 7). */
#include <stdlib.h>
#include <string.h>

#include "logic/logic.h"
#include "logic/ptype.h"

static enum tcx_status nomem(struct tcx_error *err)
{
	return tcx_fail(err, TCX_ENOMEM, "out of memory");
}

static bool set_new(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

static bool append_new(json_t *a, json_t *v)
{
	return v && json_array_append_new(a, v) == 0;
}

/* A scalar item as text (ScheduleName, versions); NULL if not a scalar. */
static char *scalar_text(json_t *v)
{
	char buf[64];

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		return strdup(buf);
	}
	if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%g", json_real_value(v));
		return strdup(buf);
	}
	return NULL;
}

/* The parameters tcx reads from a Tensile solution state.  From v3 on,
 * NumThreads and LoopUnroll are derived keys, while tcx reads them as the
 * v2 parameters they once were; they are left out where WorkGroup is given. */
static enum tcx_status tensile_solution(json_t *state, struct solution *s, struct tcx_error *err)
{
	json_t *p = json_object_get(state, "WorkGroup") ? json_copy(state) : json_incref(state);
	enum tcx_status st;

	if (!p)
		return nomem(err);
	if (json_object_get(state, "WorkGroup")) {
		json_object_del(p, "NumThreads");
		json_object_del(p, "LoopUnroll");
	}
	st = solution_from_json(s, p, err);
	json_decref(p);
	return st;
}

static enum tcx_status read_solutions(json_t *v, const char *name, int item, struct logic *l,
				      struct tcx_error *err)
{
	size_t k;
	json_t *s;

	if (!json_is_array(v))
		return tcx_fail(err, TCX_EPARSE, "%s: item %d (solutions) must be a list", name,
				item);
	l->sols = calloc(json_array_size(v) + 1, sizeof(*l->sols));
	if (!l->sols)
		return nomem(err);
	json_array_foreach(v, k, s)
	{
		struct logic_solution *ls = &l->sols[k];
		struct tcx_error serr = {0};
		enum tcx_status st;

		l->nsol++;
		if (!json_is_object(s))
			return tcx_fail(
			    err, TCX_EPARSE,
			    "%s: item %d (solutions), solution %zu: expected a mapping of "
			    "parameters",
			    name, item, k);
		st = tensile_solution(s, &ls->sol, &serr);
		if (st)
			return tcx_fail(err, st, "%s: item %d (solutions), solution %zu: %s", name,
					item, k, serr.msg);
		ls->tensile = json_incref(s);
		logic_solution_name(&ls->sol, s, ls->name, sizeof(ls->name));
	}
	return TCX_OK;
}

enum tcx_status logic_from_tensile(json_t *doc, const struct ynode *tree, const char *name,
				   struct logic *l, struct tcx_error *err)
{
	size_t n = json_array_size(doc);
	json_t *v, *ver;
	char where[512];
	int pos;
	enum tcx_status st;

	if (n == 5 || n == 6)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"%s: a Tensile v2 logic file (%zu items): tcx reads v3.0 and later "
				"(8 items), v4 (9) and modern Tensile (11 or more)",
				name, n);
	if (n != 8 && n != 9 && n < 11)
		return tcx_fail(
		    err, TCX_EPARSE,
		    "%s: a Tensile logic file is a list of 8 items (v3), 9 (v4) or 11 or "
		    "more (modern); this one has %zu",
		    name, n);
	l->format = n == 8 ? LOGIC_TENSILE_V3 : n == 9 ? LOGIC_TENSILE_V4 : LOGIC_TENSILE_MODERN;
	l->source_format = l->format;
	v = json_array_get(doc, 0);
	ver = json_object_get(v, "MinimumRequiredVersion");
	if (!json_is_object(v) || !ver || !(l->min_version = scalar_text(ver)))
		return tcx_fail(err, TCX_EPARSE,
				"%s: item 1 must be {MinimumRequiredVersion: x.y.z}", name);
	l->schedule = scalar_text(json_array_get(doc, 1));
	if (!l->schedule)
		return tcx_fail(err, TCX_EPARSE, "%s: item 2 (ScheduleName) must be a name", name);
	pos = 2;
	if (l->format != LOGIC_TENSILE_V3) {
		v = json_array_get(doc, 2);
		if (json_is_object(v)) { /* modern: {Architecture, CUCount, IsAPU} */
			json_t *cu = json_object_get(v, "CUCount");

			l->architecture = scalar_text(json_object_get(v, "Architecture"));
			if (json_is_integer(cu) && json_integer_value(cu) > 0 &&
			    json_integer_value(cu) < 1 << 30)
				l->compute_units = (int)json_integer_value(cu);
		} else {
			l->architecture = scalar_text(v);
		}
		if (!l->architecture)
			return tcx_fail(
			    err, TCX_EPARSE,
			    "%s: item 3 (ArchitectureName) must be a name such as gfx900", name);
		pos = 3;
	}
	snprintf(where, sizeof(where), "%s: item %d (DeviceNames)", name, pos + 1);
	if ((st = logic_read_device_names(json_array_get(doc, (size_t)pos), where, l, err)))
		return st;
	pos++;
	v = json_array_get(doc, (size_t)pos);
	if ((st = ptype_read(tree->kid[pos], name, PTYPE_DERIVED, &l->type, err)))
		return st;
	l->problem_type = json_deep_copy(v);
	if (!l->problem_type)
		return nomem(err);
	pos++;
	if ((st = read_solutions(json_array_get(doc, (size_t)pos), name, pos + 1, l, err)))
		return st;
	pos++;
	snprintf(where, sizeof(where), "%s: item %d (index order)", name, pos + 1);
	if ((st = logic_read_index_order(json_array_get(doc, (size_t)pos), where, l, err)))
		return st;
	pos++;
	snprintf(where, sizeof(where), "%s: item %d", name, pos + 1);
	if ((st = logic_read_exact(json_array_get(doc, (size_t)pos), where, l, err)))
		return st;
	pos++;
	snprintf(where, sizeof(where), "%s: item %d", name, pos + 1);
	if ((st = range_from_json(json_array_get(doc, (size_t)pos), l, where, &l->range, err)))
		return st;
	pos++;
	if ((size_t)pos < n) {
		l->modern_items = json_array();
		for (size_t k = (size_t)pos; l->modern_items && k < n; k++)
			if (json_array_append(l->modern_items, json_array_get(doc, k))) {
				json_decref(l->modern_items);
				l->modern_items = NULL;
			}
		if (!l->modern_items)
			return nomem(err);
	}
	return TCX_OK;
}

/* ---- writing ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A copy of o with its keys in sorted order (Tensile writes them sorted). */
static json_t *sorted_copy(json_t *o)
{
	size_t n = json_object_size(o), k = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	json_t *out = json_object(), *v;
	const char *key;

	if (!keys || !out) {
		free(keys);
		json_decref(out);
		return NULL;
	}
	json_object_foreach(o, key, v) keys[k++] = key;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (k = 0; k < n; k++)
		if (json_object_set(out, keys[k], json_object_get(o, keys[k]))) {
			json_decref(out);
			out = NULL;
			break;
		}
	free(keys);
	return out;
}

/* Tensile's ProblemType for l: as read when it is Tensile's derived mapping,
 * else derived from the contraction. */
static json_t *problem_type(const struct logic *l)
{
	json_t *pt = l->problem_type;

	if (pt && json_object_get(pt, "IndexAssignmentsA") && json_object_get(pt, "Index0") &&
	    json_is_integer(json_object_get(pt, "DataType")))
		return json_deep_copy(pt);
	return ptype_derive(l->type);
}

/* A solution state as Tensile's logic files hold it: the file's own when
 * it still describes the solution, else tcx's parameters with the derived
 * keys Tensile's readers use. */
static json_t *solution_state(const struct logic_solution *ls, json_t *pt)
{
	const struct solution *s = &ls->sol;
	json_t *o, *out, *mi;
	int lsu = s->wg[2] > 0 ? s->wg[2] : 1;
	bool ok;

	if (ls->tensile) {
		struct solution again;

		if (tensile_solution(ls->tensile, &again, NULL) == TCX_OK &&
		    solution_equal(&again, s))
			return json_deep_copy(ls->tensile);
	}
	o = solution_to_json(s);
	if (!o)
		return NULL;
	mi = json_object_get(o, "MatrixInstruction");
	if (mi && !s->mi[0] && !s->mi[1] && !s->mi[2] && !s->mi[3])
		json_object_del(o, "MatrixInstruction");
	ok = set_new(o, "AssignedDerivedParameters", json_true()) &&
	     set_new(o, "KernelLanguage", json_string("Source")) &&
	     set_new(o, "LocalSplitU", json_integer(lsu)) &&
	     set_new(o, "LoopUnroll", json_integer(s->depth_u > 0 ? s->depth_u / lsu : 0)) &&
	     set_new(o, "MacroTile0", json_integer(s->wg[0] * s->tt[0])) &&
	     set_new(o, "MacroTile1", json_integer(s->wg[1] * s->tt[1])) &&
	     set_new(o, "NumThreads", json_integer(s->wg[0] * s->wg[1] * s->wg[2])) &&
	     set_new(o, "ProblemType", json_deep_copy(pt)) &&
	     set_new(o, "SubGroup0", json_integer(s->wg[0])) &&
	     set_new(o, "SubGroup1", json_integer(s->wg[1])) &&
	     set_new(o, "ThreadTile0", json_integer(s->tt[0])) &&
	     set_new(o, "ThreadTile1", json_integer(s->tt[1])) && set_new(o, "Valid", json_true());
	out = ok ? sorted_copy(o) : NULL;
	json_decref(o);
	return out;
}

/* MinimumRequiredVersion: the file's when it is of the same major version. */
static const char *min_version(const struct logic *l, int format)
{
	char major = format == LOGIC_TENSILE_V3 ? '3' : '4';

	if (l->min_version && l->min_version[0] == major && l->min_version[1] == '.')
		return l->min_version;
	return format == LOGIC_TENSILE_V3 ? "3.0.0" : "4.2.0";
}

enum tcx_status logic_to_tensile(const struct logic *l, int format, json_t **out,
				 struct tcx_error *err)
{
	json_t *doc, *head, *pt, *sols, *ex;
	int nidx = l->type->nidx;
	bool ok;

	*out = NULL;
	/* Tensile runs no form: a solution tuned in the planner's runs its
	 * fallback (logic_drop_forms), and one without cannot be written */
	for (int k = 0; k < l->nsol; k++)
		if (l->sols[k].form.on && !logic_fallback(l, k))
			return tcx_fail(err, TCX_EUNSUPPORTED,
					"solution %d (%s) runs the contraction in the planner's form, "
					"which Tensile cannot, and names no fallback solution",
					k, l->sols[k].name);
	doc = json_array();
	head = json_object();
	pt = problem_type(l);
	ok = doc && head && pt;
	if (ok) {
		ok = set_new(head, "MinimumRequiredVersion", json_string(min_version(l, format))) &&
		     json_array_append(doc, head) == 0 &&
		     append_new(doc, json_string(l->schedule ? l->schedule : "Tensile"));
	}
	if (ok && format == LOGIC_TENSILE_V4)
		ok = append_new(doc, json_string(l->architecture ? l->architecture : "gfx000"));
	if (ok && l->ndevice_names == 1 &&
	    (strcmp(l->device_names[0], "default") == 0 ||
	     strcmp(l->device_names[0], "fallback") == 0)) {
		ok = append_new(doc, json_string(l->device_names[0]));
	} else if (ok) {
		json_t *names = json_array();

		for (int k = 0; names && k < l->ndevice_names; k++)
			if (!append_new(names, json_string(l->device_names[k]))) {
				json_decref(names);
				names = NULL;
			}
		ok = append_new(doc, names);
	}
	ok = ok && json_array_append(doc, pt) == 0;
	sols = ok ? json_array() : NULL;
	for (int k = 0; sols && k < l->nsol; k++)
		if (!append_new(sols, solution_state(l->sols[k].form.on ? logic_fallback(l, k)
									: &l->sols[k],
						     pt))) {
			json_decref(sols);
			sols = NULL;
		}
	ok = ok && append_new(doc, sols) && append_new(doc, json_array());
	for (int k = 0; ok && k < l->norder; k++)
		ok = append_new(json_array_get(doc, json_array_size(doc) - 1),
				json_integer(l->index_order[k]));
	ex = ok ? json_array() : NULL;
	ok = ok && append_new(doc, ex);
	for (int k = 0; ok && k < l->nexact; k++) {
		const struct logic_exact *e = &l->exact[k];
		json_t *entry = json_array(), *sizes = json_array(), *win = json_array();

		ok = entry && sizes && win;
		for (int i = 0; ok && i < nidx; i++)
			ok = append_new(sizes, json_integer(e->sizes[i]));
		ok = ok && append_new(win, json_integer(e->sol)) &&
		     append_new(win, json_real(e->gflops));
		if (ok) {
			ok = append_new(entry, sizes) && append_new(entry, win) &&
			     append_new(ex, entry);
		} else {
			json_decref(entry);
			json_decref(sizes);
			json_decref(win);
		}
	}
	ok = ok && append_new(doc, l->range ? range_to_json(l->range) : json_null());
	json_decref(head);
	json_decref(pt);
	if (!ok) {
		json_decref(doc);
		return nomem(err);
	}
	*out = doc;
	return TCX_OK;
}

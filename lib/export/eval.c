/* eval.c - how well the selectors choose at sizes that were never tuned:
 * every solution of a logic measured at held-out sizes, the fastest taken
 * as the oracle, and each selector's efficiency and hit rates; the same
 * report as Markdown. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/export.h"
#include "run/run.h"

static json_t *sizes_json(const int64_t *sizes, int n)
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer(sizes[i]));
	return a;
}

/* UTC now (or SOURCE_DATE_EPOCH), ISO 8601. */
static void iso_date(char *buf, size_t len)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t now = time(NULL);
	int64_t v;
	struct tm tm;

	if (sde && common_parse_i64(sde, &v))
		now = (time_t)v;
	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The report's head: what was evaluated, on what. */
static json_t *report_head(const struct logic *l, const char *name, struct device *dev)
{
	json_t *r = json_object(), *sols = json_array(), *idx = json_array();
	char tname[256], date[64];

	contraction_tensile_name(l->type, tname, sizeof(tname));
	iso_date(date, sizeof(date));
	for (int k = 0; k < l->nsol; k++)
		json_array_append_new(sols, json_string(l->sols[k].name));
	for (int id = 0; id < l->type->nidx; id++)
		json_array_append_new(idx, json_string(l->type->idx[id].name));
	json_object_set_new(r, "tcx_version", json_string(tcx_version()));
	json_object_set_new(r, "date", json_string(date));
	json_object_set_new(r, "logic", json_string(name));
	json_object_set_new(r, "problem", json_string(tname));
	json_object_set_new(r, "expression", json_string(l->type->expr));
	json_object_set_new(r, "indices", idx);
	json_object_set_new(r, "logic_device",
			    l->device_name ? json_string(l->device_name) : json_null());
	if (dev) {
		const struct device_info *di = device_info_of(dev);

		json_object_set_new(r, "device",
				    json_pack("{s:s, s:s, s:s, s:s}", "id", di->id, "name",
					      di->name, "driver", di->driver, "backend",
					      di->backend));
	}
	json_object_set_new(r, "solutions", sols);
	return r;
}

static json_t *choice_json(int sol, const char *why)
{
	return json_pack("{s:o, s:s}", "solution", sol >= 0 ? json_integer(sol) : json_null(),
			 "why", why);
}

enum tcx_status export_choices(const struct logic *l, const char *name, const struct selector *sel,
			       const struct size_list *sizes, json_t **report,
			       struct tcx_error *err)
{
	json_t *r = report_head(l, name, NULL), *rows = json_array();

	*report = NULL;
	if (!r || !rows) {
		json_decref(r);
		json_decref(rows);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	for (size_t z = 0; z < sizes->count; z++) {
		const int64_t *sz = sizes->v + z * (size_t)sizes->nidx;
		json_t *row = json_object(), *ch = json_object();

		for (int k = 0; k < SEL_KINDS; k++) {
			struct strbuf why = STRBUF_INIT;
			int s = selector_choose(sel, (enum sel_kind)k, sz, &why);

			json_object_set_new(ch, selector_kind_name((enum sel_kind)k),
					    choice_json(s, strbuf_str(&why)));
			strbuf_release(&why);
		}
		json_object_set_new(row, "sizes", sizes_json(sz, sizes->nidx));
		json_object_set_new(row, "choices", ch);
		json_array_append_new(rows, row);
	}
	json_object_set_new(r, "default", json_string(selector_kind_name(selector_default(sel))));
	json_object_set_new(r, "model", selector_model_json(sel));
	json_object_set_new(r, "sizes", rows);
	*report = r;
	return TCX_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Statuses that describe a solution at a size rather than stop the run. */
static bool candidate_fault(enum tcx_status st)
{
	return st == TCX_EREJECT || st == TCX_ELIMIT || st == TCX_EBUILD || st == TCX_ELAUNCH ||
	       st == TCX_EUNSUPPORTED || st == TCX_ETIMEOUT || st == TCX_EDEVICE;
}

/* Progress reports: the callback and the report filled as it goes. */
struct eval_progress {
	export_progress_fn fn;
	void *ctx;
	struct export_progress p;
};

/* Times every solution at one size; g[k] = GFLOP/s (the best of the
 * rounds), 0 where it cannot run. */
static enum tcx_status measure_size(struct device *dev, const struct logic *l, const int64_t *sizes,
				    const struct bench_opts *o, double *g, json_t *reasons,
				    volatile int *stop, struct eval_progress *pg,
				    struct tcx_error *err)
{
	struct problem p;
	struct prepared *pr = calloc((size_t)l->nsol, sizeof(*pr));
	bool *ok = calloc((size_t)l->nsol, sizeof(*ok));
	enum tcx_status st = TCX_OK;

	if (!pr || !ok) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	st = problem_init(&p, l->type, sizes, err);
	for (int k = 0; k < l->nsol && !st; k++) {
		struct tcx_error e = {0};
		enum tcx_status s2;

		/* what the library runs: a solution in the planner's form runs
		 * its fallback there (logic_drop_forms) */
		const struct logic_solution *ls = &l->sols[k];

		g[k] = 0;
		if (ls->form.on && logic_fallback(l, k))
			ls = logic_fallback(l, k);
		if (ls->form.on)
			s2 = tcx_fail(&e, TCX_EUNSUPPORTED,
				      "it runs in the planner's form and names no fallback, which a "
				      "library cannot run");
		else
			s2 = contract_prepare(dev, l->type, &p, &ls->sol, &pr[k], NULL, &e);
		if (s2 && !candidate_fault(s2)) {
			*err = e;
			st = s2;
		} else if (s2) {
			json_array_append_new(
			    reasons, json_pack("{s:i, s:s}", "solution", k, "reason", e.msg));
		} else {
			ok[k] = true;
		}
	}
	for (int round = 0; round < EXPORT_EVAL_ROUNDS && !st; round++)
		for (int k = 0; k < l->nsol && !st; k++, pg->p.done++) {
			struct bench_result br;
			struct tcx_error e = {0};
			enum tcx_status s2;

			if (!ok[k])
				continue;
			if (stop && *stop) {
				st = tcx_fail(err, TCX_EINTR, "interrupted");
				break;
			}
			if (pg->fn) {
				pg->p.solution = k;
				pg->p.round = round + 1;
				pg->fn(&pg->p, pg->ctx);
			}
			s2 = bench_run(dev, &pr[k], &p, o, &br, &e);
			if (s2 && !candidate_fault(s2)) {
				*err = e;
				st = s2;
			} else if (s2) {
				json_array_append_new(reasons, json_pack("{s:i, s:s}", "solution",
									 k, "reason", e.msg));
				ok[k] = false;
				g[k] = 0;
			} else if (br.gflops > g[k]) {
				g[k] = br.gflops;
			}
		}
out:
	free(pr);
	free(ok);
	return st;
}

enum tcx_status export_eval(struct device *dev, const struct logic *l, const char *name,
			    const struct selector *sel, const struct size_list *holdout,
			    const struct bench_opts *o, volatile int *stop,
			    export_progress_fn progress, void *progress_ctx, json_t **report,
			    enum sel_kind *best, struct tcx_error *err)
{
	struct eval_progress pg = {progress, progress_ctx, {0}};
	json_t *r = NULL, *rows = NULL, *scores = NULL;
	double *g = NULL, *eff[SEL_KINDS] = {NULL};
	int top1[SEL_KINDS] = {0}, top3[SEL_KINDS] = {0}, nscored = 0;
	enum tcx_status st = TCX_OK;
	const struct device_info *di = device_info_of(dev);

	*report = NULL;
	if (!holdout || holdout->count == 0)
		return tcx_fail(err, TCX_EINVAL, "no held-out sizes to evaluate");
	if (l->nsol == 0)
		return tcx_fail(err, TCX_EINVAL, "'%s' has no solutions", name);
	if (l->device_name && strcmp(l->device_name, di->name) != 0)
		tcx_log(TCX_LOG_WARN, "'%s' was tuned on '%s'; evaluating on '%s'", name,
			l->device_name, di->name);
	r = report_head(l, name, dev);
	rows = json_array();
	scores = json_object();
	g = calloc((size_t)l->nsol, sizeof(*g));
	for (int k = 0; k < SEL_KINDS; k++)
		eff[k] = calloc(holdout->count, sizeof(double));
	if (!r || !rows || !scores || !g || !eff[0] || !eff[1] || !eff[2]) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	json_object_set_new(r, "timer", json_string(bench_timer_name(di, o->timer)));
	json_object_set_new(r, "model", selector_model_json(sel));
	pg.p.total = holdout->count * (size_t)l->nsol * EXPORT_EVAL_ROUNDS;
	pg.p.nsizes = holdout->count;
	pg.p.nidx = holdout->nidx;
	pg.p.nsol = l->nsol;
	for (size_t z = 0; z < holdout->count; z++) {
		const int64_t *sz = holdout->v + z * (size_t)holdout->nidx;
		json_t *row = json_object(), *gl = json_array(), *ch = json_object();
		json_t *reasons = json_array();
		int oracle = -1;

		pg.p.size = z + 1;
		pg.p.sizes = sz;
		pg.p.done = z * (size_t)l->nsol * EXPORT_EVAL_ROUNDS;
		st = measure_size(dev, l, sz, o, g, reasons, stop, &pg, err);
		if (st) {
			json_decref(row);
			json_decref(gl);
			json_decref(ch);
			json_decref(reasons);
			goto out;
		}
		for (int k = 0; k < l->nsol; k++) {
			json_array_append_new(gl, g[k] > 0 ? json_real(g[k]) : json_null());
			if (g[k] > 0 && (oracle < 0 || g[k] > g[oracle]))
				oracle = k;
		}
		for (int k = 0; k < SEL_KINDS; k++) {
			struct strbuf why = STRBUF_INIT;
			int s = selector_choose(sel, (enum sel_kind)k, sz, &why), rank = 0;
			double e = 0;
			json_t *c = choice_json(s, strbuf_str(&why));

			strbuf_release(&why);
			if (oracle >= 0) {
				e = s >= 0 && g[s] > 0 ? g[s] / g[oracle] : 0;
				if (s >= 0 && g[s] > 0) {
					rank = 1;
					for (int j = 0; j < l->nsol; j++)
						rank += g[j] > g[s];
				}
				eff[k][nscored] = e;
				top1[k] += rank == 1;
				top3[k] += rank >= 1 && rank <= 3;
				json_object_set_new(c, "efficiency", json_real(e));
				json_object_set_new(c, "rank",
						    rank ? json_integer(rank) : json_null());
			}
			json_object_set_new(ch, selector_kind_name((enum sel_kind)k), c);
		}
		nscored += oracle >= 0;
		json_object_set_new(row, "sizes", sizes_json(sz, holdout->nidx));
		json_object_set_new(row, "gflops", gl);
		json_object_set_new(row, "oracle",
				    oracle >= 0 ? json_integer(oracle) : json_null());
		json_object_set_new(row, "choices", ch);
		if (json_array_size(reasons))
			json_object_set_new(row, "not_run", reasons);
		else
			json_decref(reasons);
		json_array_append_new(rows, row);
		tcx_log(TCX_LOG_INFO, "held-out size %zu/%zu measured", z + 1, holdout->count);
	}
	*best = SEL_LOGIC;
	{
		double bm = -1, bp = -1, bmin = -1;

		for (int k = 0; k < SEL_KINDS; k++) {
			double mean = 0, p10 = 0, mn = 0;

			if (nscored > 0) {
				for (int i = 0; i < nscored; i++)
					mean += eff[k][i];
				mean /= nscored;
				qsort(eff[k], (size_t)nscored, sizeof(double), cmp_double);
				/* nearest rank: the ceil(0.1 n)-th smallest */
				p10 = eff[k][(int)ceil(0.1 * nscored) - 1];
				mn = eff[k][0];
			}
			json_object_set_new(
			    scores, selector_kind_name((enum sel_kind)k),
			    json_pack("{s:f, s:f, s:f, s:f, s:f, s:i}", "mean", mean, "p10", p10,
				      "min", mn, "top1", nscored ? (double)top1[k] / nscored : 0.0,
				      "top3", nscored ? (double)top3[k] / nscored : 0.0, "sizes",
				      nscored));
			if (mean > bm + 1e-12 || (fabs(mean - bm) <= 1e-12 &&
						  (p10 > bp + 1e-12 || (fabs(p10 - bp) <= 1e-12 &&
									mn > bmin + 1e-12)))) {
				bm = mean;
				bp = p10;
				bmin = mn;
				*best = (enum sel_kind)k;
			}
		}
	}
	if (nscored == 0) {
		st = tcx_fail(err, TCX_EREJECT, "no solution of '%s' runs at any held-out size",
			      name);
		goto out;
	}
	json_object_set_new(r, "sizes", rows);
	rows = NULL;
	json_object_set_new(r, "selectors", scores);
	scores = NULL;
	json_object_set_new(r, "best", json_string(selector_kind_name(*best)));
	*report = r;
	r = NULL;
out:
	json_decref(r);
	json_decref(rows);
	json_decref(scores);
	free(g);
	for (int k = 0; k < SEL_KINDS; k++)
		free(eff[k]);
	return st;
}

enum tcx_status export_holdout_sizes(const char *const *exact, int nexact,
				     const char *const *ranges, int nrange, int nidx,
				     struct size_list *out, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;

	for (int k = 0; k < nexact && !st; k++) {
		char *text = strdup(exact[k]), *save = NULL;

		if (!text)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (char *tok = strtok_r(text, ";", &save); tok && !st;
		     tok = strtok_r(NULL, ";", &save)) {
			int64_t sz[TCX_MAX_INDICES];

			st = size_exact_parse(tok, nidx, sz, err);
			if (st)
				tcx_error_prefix(err, "held-out sizes '%s'", tok);
			else
				st = size_list_add(out, sz, err);
		}
		free(text);
	}
	for (int k = 0; k < nrange && !st; k++) {
		struct size_range r;

		st = size_range_parse(ranges[k], nidx, &r, err);
		if (st)
			tcx_error_prefix(err, "held-out range '%s'", ranges[k]);
		else
			st = size_range_expand(&r, nidx, out, 100000, err);
	}
	if (!st)
		size_list_sort_unique(out);
	return st;
}

/* ---- Markdown ---------------------------------------------------------------- */

static const char *str_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : "?";
}

static void sizes_text(json_t *sz, struct strbuf *out)
{
	size_t i;
	json_t *v;

	json_array_foreach(sz, i, v)
	    strbuf_addf(out, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
}

enum tcx_status export_report_markdown(json_t *r, struct strbuf *out, struct tcx_error *err)
{
	json_t *sc = json_object_get(r, "selectors"), *rows = json_object_get(r, "sizes"), *row;
	json_t *dev = json_object_get(r, "device");
	size_t i;

	strbuf_addf(out, "# Selector evaluation: %s\n\n", str_of(r, "problem"));
	strbuf_addf(out, "- logic: `%s` (tuned on %s)\n", str_of(r, "logic"),
		    str_of(r, "logic_device"));
	strbuf_addf(out, "- expression: `%s`\n", str_of(r, "expression"));
	if (dev)
		strbuf_addf(out, "- measured on: %s (`%s`, %s), timer %s\n", str_of(dev, "name"),
			    str_of(dev, "id"), str_of(dev, "driver"), str_of(r, "timer"));
	strbuf_addf(out, "- date: %s, tcx %s\n", str_of(r, "date"), str_of(r, "tcx_version"));
	strbuf_addf(out, "- held-out sizes: %zu (%s)\n", json_array_size(rows),
		    "not used to build the logic");
	if (sc) {
		strbuf_adds(out, "\nEfficiency = GFLOP/s of the selected solution / GFLOP/s of the "
				 "fastest solution of the logic at that size.\n\n");
		strbuf_adds(out, "| selector | mean | P10 | min | top-1 | top-3 |\n");
		strbuf_adds(out, "|---|---:|---:|---:|---:|---:|\n");
		for (int k = 0; k < SEL_KINDS; k++) {
			json_t *s = json_object_get(sc, selector_kind_name((enum sel_kind)k));

			if (!s)
				continue;
			strbuf_addf(out, "| %s%s | %.1f%% | %.1f%% | %.1f%% | %.0f%% | %.0f%% |\n",
				    selector_kind_name((enum sel_kind)k),
				    strcmp(str_of(r, "best"), selector_kind_name((enum sel_kind)k))
					? ""
					: " (best)",
				    100 * json_number_value(json_object_get(s, "mean")),
				    100 * json_number_value(json_object_get(s, "p10")),
				    100 * json_number_value(json_object_get(s, "min")),
				    100 * json_number_value(json_object_get(s, "top1")),
				    100 * json_number_value(json_object_get(s, "top3")));
		}
	}
	strbuf_adds(out, "\n| sizes | fastest (GFLOP/s) |");
	for (int k = 0; k < SEL_KINDS; k++)
		strbuf_addf(out, " %s |", selector_kind_name((enum sel_kind)k));
	strbuf_adds(out, "\n|---|---|");
	for (int k = 0; k < SEL_KINDS; k++)
		strbuf_adds(out, "---|");
	strbuf_adds(out, "\n");
	json_array_foreach(rows, i, row)
	{
		json_t *g = json_object_get(row, "gflops"), *o = json_object_get(row, "oracle");
		json_t *ch = json_object_get(row, "choices");

		strbuf_adds(out, "| ");
		sizes_text(json_object_get(row, "sizes"), out);
		if (json_is_integer(o))
			strbuf_addf(
			    out, " | %lld (%.2f) |", (long long)json_integer_value(o),
			    json_number_value(json_array_get(g, (size_t)json_integer_value(o))));
		else
			strbuf_adds(out, " | - |");
		for (int k = 0; k < SEL_KINDS; k++) {
			json_t *c = json_object_get(ch, selector_kind_name((enum sel_kind)k));
			json_t *s = json_object_get(c, "solution"),
			       *e = json_object_get(c, "efficiency");

			if (!json_is_integer(s))
				strbuf_adds(out, " none |");
			else if (e)
				strbuf_addf(out, " %lld (%.1f%%) |",
					    (long long)json_integer_value(s),
					    100 * json_number_value(e));
			else
				strbuf_addf(out, " %lld |", (long long)json_integer_value(s));
		}
		strbuf_adds(out, "\n");
	}
	return strbuf_status(out, err);
}

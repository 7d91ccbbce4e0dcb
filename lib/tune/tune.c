/* tune.c - a tuning run over a config: checking its parameters, running
 * each group's protocol or strategy, the final benchmark, validation of
 * the winners, and one library-logic file per problem type. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "logic/logic.h"
#include "logic/selector.h"
#include "plan/planner.h"
#include "tune/exec.h"
#include "tune/protocol.h"

void tune_opts_default(struct tune_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->strategy = STRAT_PROTOCOL;
	o->budget = 32;
	o->seed = 1;
	o->validate = true;
	o->out_dir = ".";
	bench_opts_default(&o->bench);
	o->bench.min_reps = 5;
	o->bench.min_time = 0.05;
	o->bench.warmup = 1;
	o->race = 4;
}

/* Checks every parameter name and value of the config before anything
 * runs: unknown names and bad values stop with their place; Tensile
 * parameters tcx cannot honour are listed in one warning. */
static enum tcx_status check_params(const struct config *cfg, struct tcx_error *err)
{
	struct strbuf ignored = STRBUF_INIT;
	int nignored = 0;

	for (int p = 0; p < cfg->nproblems; p++)
		for (int g = 0; g < cfg->problems[p].ngroups; g++)
			for (int f = 0; f < PH_COUNT; f++) {
				const struct config_phase *ph = &cfg->problems[p].groups[g].phase[f];

				for (int s = 0; s < ph->nsteps; s++)
					for (int k = 0; k < ph->steps[s].nparams; k++) {
						const struct config_param *cp = &ph->steps[s].params[k];
						enum param_use use = param_lookup(cp->name);
						size_t i;
						json_t *v;

						if (f == PH_JOIN) {
							if (strcmp(cp->name, "MacroTile") != 0 &&
							    use != PARAM_HONOURED) {
								strbuf_release(&ignored);
								return tcx_fail_at(err, TCX_EINVAL, cp->line,
										   cp->col,
										   "%s:%u:%u: cannot join "
										   "on unknown parameter "
										   "'%s'",
										   cfg->path, cp->line,
										   cp->col, cp->name);
							}
							continue;
						}
						if (use == PARAM_UNKNOWN) {
							char hint[96];

							strbuf_release(&ignored);
							return tcx_fail_at(err, TCX_EINVAL, cp->line, cp->col,
									   "%s:%u:%u: unknown solution "
									   "parameter '%s'%s",
									   cfg->path, cp->line, cp->col,
									   cp->name,
									   param_hint(cp->name, hint,
										      sizeof(hint)));
						}
						if (use == PARAM_IGNORED) {
							if (!strstr(strbuf_str(&ignored), cp->name)) {
								strbuf_addf(&ignored, "%s%s (line %u)",
									    nignored ? ", " : "", cp->name,
									    cp->line);
								nignored++;
							}
							continue;
						}
						json_array_foreach(cp->values, i, v)
						{
							struct solution scratch;
							enum tcx_status st;

							solution_default(&scratch);
							st = solution_set(&scratch, cp->name, v, err);
							if (st) {
								char msg[TCX_ERROR_SIZE];

								snprintf(msg, sizeof(msg), "%s", err->msg);
								strbuf_release(&ignored);
								return tcx_fail_at(err, st, cp->line, cp->col,
										   "%s:%u:%u: %s", cfg->path,
										   cp->line, cp->col, msg);
							}
						}
					}
			}
	if (nignored)
		tcx_log(TCX_LOG_WARN, "%s: tcx cannot honour these Tensile parameters and ignores "
			"them: %s",
			cfg->path, strbuf_str(&ignored));
	strbuf_release(&ignored);
	return TCX_OK;
}

/* GlobalParameters: a few map onto tcx's options; the rest are Tensile's
 * own machinery, named once at INFO. */
static void apply_globals(const struct config *cfg, struct tune_opts *o)
{
	const char *key;
	json_t *v;
	struct strbuf other = STRBUF_INIT;

	if (!cfg->global)
		return;
	json_object_foreach(cfg->global, key, v)
	{
		if (strcmp(key, "KernelTime") == 0 && json_is_true(v)) {
			if (!o->cli_timer)
				o->bench.timer = TIMER_EVENT;
		} else if (strcmp(key, "MinTime") == 0 && json_is_number(v)) {
			if (!o->cli_min_time)
				o->bench.min_time = json_number_value(v);
		} else if (strcmp(key, "MinReps") == 0 && json_is_integer(v)) {
			if (!o->cli_min_reps)
				o->bench.min_reps = (int)json_integer_value(v);
		} else
			strbuf_addf(&other, "%s%s", other.len ? ", " : "", key);
	}
	if (other.len)
		tcx_log(TCX_LOG_INFO,
			"%s: GlobalParameters %s are Tensile's and have no effect here (tcx's "
			"timing: --min-reps, --min-time, --timer)",
			cfg->path, strbuf_str(&other));
	strbuf_release(&other);
}

/* The longest device part of a logic file's name: with the problem type's
 * name and a temporary suffix it stays well within a file name's 255 bytes. */
#define SLUG_MAX 128

/* "pthread-skylake-avx512-AMD EPYC" -> "pthread-skylake-avx512-AMD_EPYC":
 * what names a logic file, from a device or a config's ScheduleName, makes
 * an ordinary file name: no '/', no leading '.' (a hidden file, which
 * the shell's *.yaml does not match) or '-' (an option to the shell's
 * tools), never empty, at most SLUG_MAX bytes. */
static void slug(const char *in, char *out, size_t len)
{
	size_t n = 0;

	if (len > SLUG_MAX + 1)
		len = SLUG_MAX + 1;
	for (; *in && n + 1 < len; in++, n++)
		out[n] = isalnum((unsigned char)*in) || ((*in == '-' || *in == '.') && n > 0)
				 ? *in
				 : '_';
	if (n == 0 && len > 1)
		out[n++] = '_';
	out[n] = '\0';
}

static enum tcx_status mkdir_p(const char *dir, struct tcx_error *err)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return tcx_fail(err, TCX_EIO, "cannot create '%s': %s", buf,
						strerror(errno));
			*p = '/';
		}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return tcx_fail(err, TCX_EIO, "cannot create '%s': %s", buf, strerror(errno));
	return TCX_OK;
}

/* The final table of one problem type: every final solution of every group
 * against the union of the groups' final sizes. */
struct final_table {
	int nidx;
	struct size_list sizes;
	int nsol, cap;
	struct solution *sols;
	struct plan_form *forms; /* per solution: the planner's form it runs in, where
				  * the planner's plan won a race (race_table) */
	double *gflops;  /* nsizes x nsol, filled after the sizes are known */
	bool *is_exact;
	int *group_of;   /* per solution */
	double *err;     /* per solution: validate_winner's relative error, or -1 */
};

/* Whether column k of the table is solution s in form f (NULL: none). */
static bool table_is(const struct final_table *ft, int k, const struct solution *s,
		     const struct plan_form *f)
{
	const struct plan_form none = { 0 };

	return solution_equal(&ft->sols[k], s) && plan_form_equal(&ft->forms[k], f ? f : &none);
}

/* The column of solution s in form f (NULL: the problem as written), added
 * if new; -1 when out of memory. */
static int table_add_solution(struct final_table *ft, const struct solution *s, int group,
			      const struct plan_form *f)
{
	for (int k = 0; k < ft->nsol; k++)
		if (table_is(ft, k, s, f))
			return k;
	if (ft->nsol == ft->cap) {
		int cap = ft->cap ? 2 * ft->cap : 16;
		struct solution *ns = realloc(ft->sols, (size_t)cap * sizeof(*ns));
		struct plan_form *nf;
		double *ne;
		int *ng;

		if (!ns)
			return -1;
		ft->sols = ns;
		nf = realloc(ft->forms, (size_t)cap * sizeof(*nf));
		if (!nf)
			return -1;
		ft->forms = nf;
		ng = realloc(ft->group_of, (size_t)cap * sizeof(*ng));
		if (!ng)
			return -1;
		ft->group_of = ng;
		ne = realloc(ft->err, (size_t)cap * sizeof(*ne));
		if (!ne)
			return -1;
		ft->err = ne;
		ft->cap = cap;
	}
	ft->sols[ft->nsol] = *s;
	memset(&ft->forms[ft->nsol], 0, sizeof(ft->forms[ft->nsol]));
	if (f)
		ft->forms[ft->nsol] = *f;
	ft->group_of[ft->nsol] = group;
	ft->err[ft->nsol] = -1;
	return ft->nsol++;
}

static void table_release(struct final_table *ft)
{
	size_list_release(&ft->sizes);
	free(ft->sols);
	free(ft->forms);
	free(ft->gflops);
	free(ft->is_exact);
	free(ft->group_of);
	free(ft->err);
	memset(ft, 0, sizeof(*ft));
}

static int64_t find_size(const struct size_list *l, const int64_t *sz)
{
	for (size_t k = 0; k < l->count; k++)
		if (memcmp(l->v + k * (size_t)l->nidx, sz, sizeof(int64_t) * (size_t)l->nidx) == 0)
			return (int64_t)k;
	return -1;
}

/* Validates solution `k` at the smallest size where it wins (at < 0) or
 * at size `at`; on a mismatch the solution is dropped (its column set to
 * -1) with a loud warning. */
static enum tcx_status validate_winner(struct tune_ctx *t, const struct tcx_contraction *c,
				       struct final_table *ft, int k, int64_t at, bool *dropped,
				       struct tcx_error *err)
{
	int64_t where = at;
	double wflops = 0;
	struct problem p;
	struct prepared pr;
	struct validate_opts vo;
	struct validate_report r;
	struct plan_result pl;
	struct tcx_error e = { 0 };
	enum tcx_status st;
	bool prepared, planned = false;
	char name[384];

	*dropped = false;
	for (size_t z = 0; z < ft->sizes.count && at < 0; z++) {
		double best = 0, f = 1;
		int who = -1;

		for (int s = 0; s < ft->nsol; s++)
			if (ft->gflops[z * (size_t)ft->nsol + (size_t)s] > best) {
				best = ft->gflops[z * (size_t)ft->nsol + (size_t)s];
				who = s;
			}
		if (who != k)
			continue;
		for (int i = 0; i < ft->nidx; i++)
			f *= (double)ft->sizes.v[z * (size_t)ft->nidx + (size_t)i];
		if (where < 0 || f < wflops) {
			where = (int64_t)z;
			wflops = f;
		}
	}
	if (where < 0) {
		/* wins nowhere: the analysis drops it anyway, unless nothing
		 * is left that ran anywhere (every winner dropped): then it
		 * is one of those */
		*dropped = true;
		for (size_t z = 0; z < ft->sizes.count; z++)
			if (ft->gflops[z * (size_t)ft->nsol + (size_t)k] > 0)
				*dropped = false;
		return TCX_OK;
	}
	st = tune_problem_at(t, c, ft->sizes.v + (size_t)where * (size_t)ft->nidx, &p, err);
	if (st)
		return st;
	validate_opts_default(&vo);
	vo.seed = t->o->seed;
	vo.sample = 1 << 16;
	vo.max_work = (int64_t)1 << 28;
	vo.accuracy = t->o->accuracy;
	solution_name(&ft->sols[k], name, sizeof(name));
	if (ft->forms[k].on) {
		size_t n = strlen(name);
		char form[128];

		plan_form_name(&ft->forms[k], form, sizeof(form));
		snprintf(name + n, sizeof(name) - n, " (%s)", form);
		st = planner_plan_form(&p, t->di, &ft->forms[k], &ft->sols[k], &pl, &e);
		planned = !st;
		if (!st)
			st = contract_prepare_plan(t->dev, &p, &pl, &ft->sols[k], &pr, NULL, &e);
	} else {
		st = contract_prepare(t->dev, c, &p, &ft->sols[k], &pr, NULL, &e);
	}
	prepared = !st;
	if (!st)
		st = validate_run(t->dev, &pr, &p, &vo, &r, &e);
	if (prepared)
		contract_release(t->dev, &pr);
	if (planned)
		plan_release(&pl);
	if (st == TCX_OK || st == TCX_EMISMATCH)
		ft->err[k] = r.max_err_mag;
	if (st == TCX_OK && vo.accuracy > 0) {
		tcx_log(TCX_LOG_INFO,
			"winner %s validated (%lld elements, relative error %.3g in %s)", name,
			(long long)r.checked, r.max_err_mag,
			arith_name(arith_of(c->dtype, &ft->sols[k])));
		return TCX_OK;
	}
	if (st == TCX_OK) {
		tcx_log(TCX_LOG_INFO, "winner %s validated (%lld elements)", name,
			(long long)r.checked);
		return TCX_OK;
	}
	if (st == TCX_EMISMATCH && vo.accuracy > 0 && !r.gap_writes)
		snprintf(e.msg, sizeof(e.msg),
			 "its relative error %.3g in %s is above the accuracy %.3g asked",
			 r.max_err_mag, arith_name(arith_of(c->dtype, &ft->sols[k])), vo.accuracy);
	if (st != TCX_EMISMATCH && st != TCX_EBUILD && st != TCX_ELAUNCH && st != TCX_EREJECT &&
	    st != TCX_ELIMIT && st != TCX_EDEVICE) {
		*err = e;
		return st;
	}
	tcx_log(TCX_LOG_WARN,
		"WINNER DROPPED: solution %s fails validation (%s); it does not enter the library "
		"logic",
		name, e.msg);
	for (size_t z = 0; z < ft->sizes.count; z++)
		ft->gflops[z * (size_t)ft->nsol + (size_t)k] = -1;
	t->sum->winners_dropped++;
	*dropped = true;
	return TCX_OK;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* A new logic for the problem type and this device, named by the config's
 * LibraryLogic (ScheduleName, DeviceNames, ArchitectureName) when given. */
static enum tcx_status new_logic(struct tune_ctx *t, const struct config *cfg,
				 const struct config_problem *cp, struct logic **out,
				 struct tcx_error *err)
{
	struct logic *lg;
	enum tcx_status st = logic_new(&lg, err);
	json_t *ll = cfg->library_logic, *v;

	if (!st)
		st = logic_set_type(lg, cp->type, err);
	if (st) {
		logic_free(lg);
		return st;
	}
	lg->device_name = dup_or_null(t->di->name);
	lg->vendor = dup_or_null(t->di->vendor);
	lg->driver = dup_or_null(t->di->driver);
	lg->backend = dup_or_null(t->di->backend);
	lg->architecture = dup_or_null(t->di->arch);
	lg->compute_units = t->di->compute_units;
	v = ll ? json_object_get(ll, "ScheduleName") : NULL;
	if (json_is_string(v))
		lg->schedule = dup_or_null(json_string_value(v));
	v = ll ? json_object_get(ll, "ArchitectureName") : NULL;
	if (json_is_string(v)) {
		free(lg->architecture);
		lg->architecture = dup_or_null(json_string_value(v));
	}
	v = ll ? json_object_get(ll, "DeviceNames") : NULL;
	if (json_is_array(v) && json_array_size(v) > 0) {
		size_t i;
		json_t *x;
		char **names = calloc(json_array_size(v), sizeof(*names));

		if (names) {
			for (int k = 0; k < lg->ndevice_names; k++)
				free(lg->device_names[k]);
			free(lg->device_names);
			lg->device_names = names;
			lg->ndevice_names = 0;
			json_array_foreach(v, i, x) if (json_is_string(x))
				names[lg->ndevice_names++] = strdup(json_string_value(x));
		}
	}
	*out = lg;
	return TCX_OK;
}

/* The plain column (no form) fastest over the sizes where column `col`
 * wins, summed, that has run at all of them and is not in skip[]; -1 if
 * none.  *at is the first of those sizes. */
static int fallback_column(const struct final_table *ft, int col, const bool *skip, int64_t *at)
{
	int best = -1;
	double best_sum = 0;

	*at = -1;
	for (int s = 0; s < ft->nsol; s++) {
		double sum = 0;
		bool all = true;

		if (ft->forms[s].on || skip[s])
			continue;
		for (size_t z = 0; z < ft->sizes.count && all; z++) {
			const double *row = ft->gflops + z * (size_t)ft->nsol;
			bool wins = row[col] > 0;

			for (int o = 0; o < ft->nsol && wins; o++)
				wins = row[o] <= row[col];
			if (!wins)
				continue;
			if (*at < 0)
				*at = (int64_t)z;
			all = row[s] > 0;
			sum += row[s];
		}
		if (all && sum > best_sum) {
			best = s;
			best_sum = sum;
		}
	}
	return best;
}

/* Gives each solution of lg with a form (the planner's plan, which won a
 * race) its fallback: the fastest plain solution where it won, taken into
 * the logic if it is not there (validated first, as winners are).  One
 * with no plain solution that ran there keeps none. */
static enum tcx_status add_fallbacks(struct tune_ctx *t, const struct config_problem *cp,
				     struct final_table *ft, struct logic *lg, bool *validated,
				     struct tcx_error *err)
{
	bool *skip = calloc((size_t)ft->nsol + 1, sizeof(*skip));
	enum tcx_status st = TCX_OK;

	if (!skip)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int k = 0, n = lg->nsol; k < n && !st; k++) {
		struct logic_solution *ls = &lg->sols[k];
		int col = -1, fb;
		int64_t at;

		if (!ls->form.on)
			continue;
		for (int s = 0; s < ft->nsol; s++)
			if (table_is(ft, s, &ls->sol, &ls->form))
				col = s;
		memset(skip, 0, (size_t)(ft->nsol > 0 ? ft->nsol : 0) * sizeof(*skip));
		while (col >= 0 && (fb = fallback_column(ft, col, skip, &at)) >= 0) {
			struct logic_solution *ns;
			bool dropped = false;
			int j;

			for (j = 0; j < lg->nsol; j++)
				if (table_is(ft, fb, &lg->sols[j].sol, &lg->sols[j].form))
					break;
			if (j < lg->nsol) {
				lg->sols[k].fallback = j;
				break;
			}
			if (t->o->validate && !validated[fb]) {
				st = validate_winner(t, cp->type, ft, fb, at, &dropped, err);
				if (st)
					break;
				validated[fb] = !dropped;
			}
			if (dropped) {
				skip[fb] = true;
				continue;
			}
			ns = realloc(lg->sols, (size_t)(lg->nsol + 1) * sizeof(*ns));
			if (!ns) {
				st = tcx_fail(err, TCX_ENOMEM, "out of memory");
				break;
			}
			lg->sols = ns;
			memset(&ns[lg->nsol], 0, sizeof(ns[lg->nsol]));
			ns[lg->nsol].sol = ft->sols[fb];
			ns[lg->nsol].fallback = -1;
			solution_name(&ft->sols[fb], ns[lg->nsol].name, sizeof(ns[lg->nsol].name));
			ns[k].fallback = lg->nsol++;
			break;
		}
	}
	free(skip);
	return st;
}

static enum tcx_status write_logic(struct tune_ctx *t, const struct config *cfg,
				   const struct config_problem *cp, struct final_table *ft,
				   json_t *report, struct tcx_error *err)
{
	struct logic *lg = NULL;
	struct logic_table tab;
	double importance = LOGIC_IMPORTANCE_MIN;
	char name[256], dev[256], path[4096];
	enum tcx_status st;
	bool *validated, unvalidated = false;
	json_t *v;

	if (cfg->library_logic) {
		v = json_object_get(cfg->library_logic, "SolutionImportanceMin");
		if (json_is_number(v))
			importance = json_number_value(v);
	}
	validated = calloc((size_t)(ft->nsol ? ft->nsol : 1), sizeof(*validated));
	if (!validated)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	/* validate the winners; a failing one leaves, and the analysis runs
	 * again without it */
	for (int round = 0; round <= ft->nsol; round++) {
		bool any = false;

		logic_free(lg);
		lg = NULL;
		st = new_logic(t, cfg, cp, &lg, err);
		if (st)
			goto out;
		memset(&tab, 0, sizeof(tab));
		tab.nidx = ft->nidx;
		tab.nsizes = (int)ft->sizes.count;
		tab.sizes = ft->sizes.v;
		tab.is_exact = ft->is_exact;
		tab.nsol = ft->nsol;
		tab.sols = ft->sols;
		tab.gflops = ft->gflops;
		tab.forms = ft->forms;
		st = logic_analyze(lg, &tab, importance, err);
		if (st)
			goto out;
		if (!t->o->validate)
			break;
		for (int k = 0; k < lg->nsol; k++) {
			int col = -1;
			bool dropped;

			for (int s = 0; s < ft->nsol; s++)
				if (table_is(ft, s, &lg->sols[k].sol, &lg->sols[k].form))
					col = s;
			if (col < 0 || validated[col])
				continue;
			st = validate_winner(t, cp->type, ft, col, -1, &dropped, err);
			if (st)
				goto out;
			validated[col] = !dropped;
			any |= dropped;
		}
		if (!any)
			break;
	}
	/* every round dropped a winner: what the last analysis kept may have
	 * failed validation too, and must not enter the logic */
	for (int k = 0; k < lg->nsol && t->o->validate && !unvalidated; k++) {
		unvalidated = true;
		for (int col = 0; col < ft->nsol; col++)
			if (validated[col] && table_is(ft, col, &lg->sols[k].sol, &lg->sols[k].form))
				unvalidated = false;
	}
	if (unvalidated) {
		st = tcx_fail(err, TCX_EMISMATCH,
			      "no solution is left for %s: every winner failed validation%s",
			      cp->type->expr,
			      t->o->accuracy > 0 ? " or missed the accuracy asked" : "");
		goto out;
	}
	if (lg->nsol == 0) {
		st = tcx_fail(err, TCX_EREJECT, "no valid solution is left for %s", cp->type->expr);
		goto out;
	}
	st = add_fallbacks(t, cp, ft, lg, validated, err);
	if (st)
		goto out;
	/* what validation measured, and the accuracy asked */
	lg->accuracy = t->o->accuracy;
	for (int k = 0; k < lg->nsol; k++)
		for (int col = 0; col < ft->nsol; col++)
			if (ft->err[col] >= 0 &&
			    table_is(ft, col, &lg->sols[k].sol, &lg->sols[k].form)) {
				lg->sols[k].measured = true;
				lg->sols[k].arith = arith_of(cp->type->dtype, &lg->sols[k].sol);
				lg->sols[k].measured_error = ft->err[col];
			}
	/* every kept solution's measurements, for selecting at untuned sizes */
	st = selector_build(lg, &tab, err);
	if (st)
		goto out;
	contraction_tensile_name(cp->type, name, sizeof(name));
	slug(lg->schedule ? lg->schedule : t->di->name, dev, sizeof(dev));
	st = mkdir_p(t->o->out_dir, err);
	if (!st) {
		snprintf(path, sizeof(path), "%s/%s_%s.yaml", t->o->out_dir, dev, name);
		st = logic_write(lg, path, err);
	}
	if (!st) {
		json_object_set_new(report, "logic", json_string(path));
		/* the caller reports it, with the summary (cmd/tune.c) */
		json_object_set_new(report, "solutions", json_integer(lg->nsol));
		t->sum->logic_files++;
	}
out:
	free(validated);
	logic_free(lg);
	return st;
}

/* The final benchmark of one group's surviving sets over its sizes, as
 * one batch. */
static enum tcx_status final_group(struct protocol *pc, struct final_table *ft, int group,
				   struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;
	int64_t nsz = (int64_t)pc->final_sizes.count, n = 0;
	struct task *tasks;
	int live = 0;

	pc->step_label = "final";
	pc->done = 0;
	for (int s = 0; s < pc->nsets; s++)
		live += pc->sets[s].alive;
	pc->total = (int64_t)live * nsz;
	if (pc->dry_run) {
		tcx_log(TCX_LOG_INFO, "  final: %d solution%s x %lld size%s", live,
			live == 1 ? "" : "s", (long long)nsz, nsz == 1 ? "" : "s");
		return TCX_OK;
	}
	for (int64_t z = 0; z < nsz && !st; z++)
		if (find_size(&ft->sizes, pc->final_sizes.v + z * (size_t)ft->nidx) < 0)
			st = size_list_add(&ft->sizes, pc->final_sizes.v + z * (size_t)ft->nidx, err);
	if (st)
		return st;
	tasks = calloc((size_t)(pc->total ? pc->total : 1), sizeof(*tasks));
	if (!tasks)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int s = 0; s < pc->nsets && !st; s++) {
		struct solution sol;
		json_t *layers[2] = { pc->initial, pc->sets[s].params };

		if (!pc->sets[s].alive)
			continue;
		st = protocol_solution_from_layers(layers, 2, &sol, err);
		if (st == TCX_EREJECT) {
			st = TCX_OK;
			continue;
		}
		if (!st && table_add_solution(ft, &sol, group, NULL) < 0)
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (int64_t z = 0; z < nsz && !st; z++) {
			tasks[n].sol = sol;
			tasks[n].sizes = pc->final_sizes.v + z * (size_t)ft->nidx;
			tasks[n].valid = true;
			n++;
		}
	}
	if (!st)
		st = protocol_measure(pc, tasks, n, err);
	free(tasks);
	return st;
}

/* Fills the table's GFLOP/s from the store (everything was measured). */
static enum tcx_status fill_table(struct tune_ctx *t, const struct config_problem *cp,
				  struct final_table *ft, const bool *measured_cells,
				  struct tcx_error *err)
{
	size_t n = ft->sizes.count * (size_t)ft->nsol;

	ft->gflops = calloc(n ? n : 1, sizeof(double));
	ft->is_exact = calloc(ft->sizes.count ? ft->sizes.count : 1, sizeof(bool));
	if (!ft->gflops || !ft->is_exact)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (size_t z = 0; z < ft->sizes.count; z++)
		for (int s = 0; s < ft->nsol; s++) {
			struct measurement rec;
			char key[2048], problem[256];
			bool found = false;
			enum tcx_status st;
			double *cell = &ft->gflops[z * (size_t)ft->nsol + (size_t)s];

			solution_store_key(cp->type, &ft->sols[s], key, sizeof(key));
			tune_problem_key(cp->type, t->o->strides, problem, sizeof(problem));
			st = store_get(t->store, t->di->name, t->di->driver, problem, ft->nidx,
				       ft->sizes.v + z * (size_t)ft->nidx, key, &rec, &found, err);
			if (st)
				return st;
			/* -2: not measured (another group's size); 0: failed */
			*cell = !found ? -2 : rec.status == MEAS_OK ? rec.gflops : 0;
		}
	(void)measured_cells;
	return TCX_OK;
}

/* A win of the planner's own plan in a race (race_table): at size z, its
 * solution in its form, and the group of the solution it beat. */
struct form_win {
	size_t z;
	int group;
	struct solution sol;
	struct plan_form form;
	double gflops;
};

/* The planner's plan of c at sizes sz where it runs the problem other than
 * as written (merged, permuted, by the tensor-times-matrix kernel) and in
 * a form logic can record: true, with *pl to release. */
static bool race_planner(struct tune_ctx *t, const struct tcx_contraction *c, const int64_t *sz,
			 struct plan_result *pl)
{
	struct problem p;
	struct tcx_error e = { 0 };

	if (tune_problem_at(t, c, sz, &p, &e) != TCX_OK ||
	    planner_plan_accuracy(&p, t->di, planner_env_flags(), t->o->accuracy, ARITH_TF32, pl,
				  &e) != TCX_OK)
		return false;
	if (plan_is_plain(pl) || pl->direct.on) {
		plan_release(pl);
		return false;
	}
	return true;
}

/* Adds the planner's wins as columns of their own (a form each), measured
 * at the sizes they won and not measured (-2) at the others. */
static enum tcx_status table_add_wins(struct final_table *ft, const struct form_win *w, int nw,
				      struct tcx_error *err)
{
	const int old = ft->nsol;
	double *g;

	for (int k = 0; k < nw; k++)
		if (table_add_solution(ft, &w[k].sol, w[k].group, &w[k].form) < 0)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (ft->nsol == old)
		return TCX_OK;
	g = malloc(ft->sizes.count * (size_t)ft->nsol * sizeof(*g) + 1);
	if (!g)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (size_t z = 0; z < ft->sizes.count; z++)
		for (int s = 0; s < ft->nsol; s++)
			g[z * (size_t)ft->nsol + (size_t)s] =
			    s < old ? ft->gflops[z * (size_t)old + (size_t)s] : -2;
	for (int k = 0; k < nw; k++)
		for (int s = old; s < ft->nsol; s++)
			if (table_is(ft, s, &w[k].sol, &w[k].form))
				g[w[k].z * (size_t)ft->nsol + (size_t)s] = w[k].gflops;
	free(ft->gflops);
	ft->gflops = g;
	return TCX_OK;
}

/* A race at each size (tune_opts.race): the fastest few solutions the
 * store holds for it, within 2x of the best, timed again side by side, so
 * that the winner is not whichever ran while a shared machine was quiet,
 * and with them the planner's own plan where it merges the indices,
 * permutes the operands or runs another kernel (what the space, kernels
 * of the problem as written, cannot hold), so that tuning never keeps a
 * slower kernel than no tuning would run.  Their cells take the race's
 * figures; where the planner's plan wins, it becomes a solution of its own
 * with its form (logic.h).  The report's "races" lists them. */
static enum tcx_status race_table(struct tune_ctx *t, const struct config_problem *cp,
				  struct final_table *ft, json_t *report, struct tcx_error *err)
{
	struct form_win *wins = NULL;
	int nwins = 0;
	json_t *races;
	enum tcx_status st = TCX_OK;

	if (t->o->race < 2 || ft->nsol < 1 || t->o->from_store)
		return TCX_OK; /* --from-store measures nothing */
	races = json_array();
	wins = calloc(ft->sizes.count + 1, sizeof(*wins));
	if (!races || !wins) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t z = 0; z < ft->sizes.count && !st; z++) {
		double *row = ft->gflops + z * (size_t)ft->nsol;
		const int64_t *sz = ft->sizes.v + z * (size_t)ft->nidx;
		const struct solution *sols[BENCH_MAX_RACE];
		struct measured m[BENCH_MAX_RACE];
		struct plan_result pl;
		const bool planner = race_planner(t, cp->type, sz, &pl);
		const int cap = BENCH_MAX_RACE - planner;
		int want = t->o->race < cap ? t->o->race : cap;
		int pick[BENCH_MAX_RACE], n = 0, before = -1, after = -1;
		json_t *entry;
		char name[384];

		/* the `want` fastest, by insertion into pick[] */
		for (int s = 0; s < ft->nsol; s++) {
			int at;

			if (!(row[s] > 0))
				continue;
			for (at = n; at > 0 && row[pick[at - 1]] < row[s]; at--)
				if (at < want)
					pick[at] = pick[at - 1];
			if (at < want) {
				pick[at] = s;
				n += n < want;
			}
		}
		while (n > 1 && row[pick[n - 1]] < 0.5 * row[pick[0]])
			n--;
		if (n + planner < 2) {
			if (planner)
				plan_release(&pl);
			continue;
		}
		before = pick[0];
		for (int k = 0; k < n; k++)
			sols[k] = &ft->sols[pick[k]];
		st = tune_race(t, cp->type, sols, n, planner ? &pl : NULL, sz, m, err);
		entry = st ? NULL : json_pack("{s:{}, s:[]}", "sizes", "solutions");
		if (!st && (!entry || json_array_append_new(races, entry)))
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (int d = 0; !st && d < ft->nidx; d++)
			json_object_set_new(json_object_get(entry, "sizes"), cp->type->idx[d].name,
					    json_integer(sz[d]));
		for (int k = 0; !st && k < n; k++) {
			solution_name(&ft->sols[pick[k]], name, sizeof(name));
			json_array_append_new(json_object_get(entry, "solutions"),
					      json_pack("{s:s, s:f, s:o}", "solution", name,
							"solo_gflops", row[pick[k]], "race_gflops",
							m[k].status == MEAS_OK ? json_real(m[k].gflops)
									       : json_null()));
			if (m[k].status == MEAS_OK)
				row[pick[k]] = m[k].gflops;
		}
		for (int k = 0; !st && k < n; k++)
			if (after < 0 || row[pick[k]] > row[after])
				after = pick[k];
		if (!st && planner) {
			char form[128];
			const bool ok = m[n].status == MEAS_OK;

			plan_form_name(&pl.form, form, sizeof(form));
			solution_name(&pl.best.sol, name, sizeof(name));
			json_array_append_new(json_object_get(entry, "solutions"),
					      json_pack("{s:s, s:s, s:n, s:o}", "solution", name, "form",
							form, "solo_gflops", "race_gflops",
							ok ? json_real(m[n].gflops) : json_null()));
			if (ok && m[n].gflops > row[after]) {
				wins[nwins].z = z;
				wins[nwins].group = ft->group_of[after];
				wins[nwins].sol = pl.best.sol;
				wins[nwins].form = pl.form;
				wins[nwins].gflops = m[n].gflops;
				nwins++;
				tcx_log(TCX_LOG_INFO,
					"  race of %d at size %zu: the planner's plan, %s %s (%.3g "
					"GFLOP/s), over the fastest tuned (%.3g)",
					n + 1, z + 1, name, form, m[n].gflops, row[after]);
			}
		}
		if (planner)
			plan_release(&pl);
		if (st || (nwins && wins[nwins - 1].z == z))
			continue;
		if (after == before) {
			tcx_log(TCX_LOG_DEBUG, "  race of %d at size %zu: the winner stands",
				n + planner, z + 1);
		} else {
			char was[256];

			solution_name(&ft->sols[after], name, sizeof(name));
			solution_name(&ft->sols[before], was, sizeof(was));
			tcx_log(TCX_LOG_INFO, "  race of %d at size %zu: %s (%.3g GFLOP/s) over %s "
				"(%.3g)", n + planner, z + 1, name, row[after], was, row[before]);
		}
	}
	if (!st)
		st = table_add_wins(ft, wins, nwins, err);
	if (!st && json_array_size(races))
		json_object_set(report, "races", races);
out:
	json_decref(races);
	free(wins);
	return st;
}

/* Marks the sizes that came from Exact specs in any group's final sizes. */
static void mark_exact(const struct config_problem *cp, struct final_table *ft)
{
	for (int g = 0; g < cp->ngroups; g++) {
		const struct config_phase *ph = &cp->groups[g].phase[PH_FINAL];

		for (int s = 0; s < ph->nsteps; s++)
			for (int e = 0; ph->steps[s].has_sizes && e < ph->steps[s].sizes.nexact; e++) {
				int64_t z = find_size(&ft->sizes,
						      ph->steps[s].sizes.exact + (size_t)e * (size_t)ft->nidx);

				if (z >= 0)
					ft->is_exact[z] = true;
			}
	}
}

/* A shard's rounds: groups and problems do not depend on each other, so a
 * shard that finds one incomplete (TCX_EINCOMPLETE) goes on to its slice of
 * the next, and a round serves them all.  Keeps the first such error in
 * *first; returns the status to go on with. */
static enum tcx_status shard_go_on(const struct tune_ctx *t, enum tcx_status st, bool *incomplete,
				   struct tcx_error *first, const struct tcx_error *err)
{
	if (st != TCX_EINCOMPLETE || t->shard_n <= 1)
		return st;
	if (!*incomplete && err)
		*first = *err;
	*incomplete = true;
	return TCX_OK;
}

static enum tcx_status tune_problem(struct tune_ctx *t, const struct config *cfg, int pi,
				    json_t *report, struct tcx_error *err)
{
	const struct config_problem *cp = &cfg->problems[pi];
	struct final_table ft;
	char name[256];
	struct tcx_error first = { 0 };
	bool incomplete = false;
	enum tcx_status st = TCX_OK;

	memset(&ft, 0, sizeof(ft));
	ft.nidx = cp->type->nidx;
	size_list_init(&ft.sizes, ft.nidx);
	contraction_tensile_name(cp->type, name, sizeof(name));
	json_object_set_new(report, "problem_type", json_string(name));
	json_object_set_new(report, "expression", json_string(cp->type->expr));
	tcx_log(TCX_LOG_INFO, "problem %d: %s (%s), %d group%s", pi + 1, name, cp->type->expr,
		cp->ngroups, cp->ngroups == 1 ? "" : "s");
	for (int g = 0; g < cp->ngroups && !st; g++) {
		struct protocol pc;

		memset(&pc, 0, sizeof(pc));
		pc.t = t;
		pc.c = cp->type;
		pc.name = name;
		pc.group = g;
		pc.ngroups = cp->ngroups;
		pc.dry_run = t->o->dry_run;
		pc.stop = t->o->stop;
		if (cp->groups[g].line)
			tcx_log(TCX_LOG_INFO, " group %02d (line %u)", g, cp->groups[g].line);
		else /* made for an expression */
			tcx_log(TCX_LOG_INFO, " group %02d", g);
		/* a group's tasks are numbered from 0, so that the shards of a
		 * round, which all read the same store, slice each group alike
		 * whatever another group left them to do */
		t->task_seq = 0;
		st = strategy_run(&pc, &cp->groups[g], t->o->strategy, t->o->budget,
				  t->o->seed, err);
		if (!st)
			st = final_group(&pc, &ft, g, err);
		protocol_release(&pc);
		st = shard_go_on(t, st, &incomplete, &first, err);
	}
	if (!st && incomplete) {
		if (err)
			*err = first;
		st = TCX_EINCOMPLETE;
	}
	/* the analysis, validation and logic: in the process that keeps the
	 * store (rank 0 under MPI) */
	if (!st && !t->o->dry_run && t->store) {
		size_list_sort_unique(&ft.sizes);
		st = fill_table(t, cp, &ft, NULL, err);
		if (!st)
			st = race_table(t, cp, &ft, report, err);
		if (!st) {
			mark_exact(cp, &ft);
			st = write_logic(t, cfg, cp, &ft, report, err);
		}
	}
	table_release(&ft);
	return st;
}

enum tcx_status tune_config(struct tune_ctx *t, const struct config *cfg, struct tcx_error *err)
{
	enum tcx_status st;
	struct tune_opts *o = (struct tune_opts *)t->o;
	struct tcx_error first = { 0 };
	bool incomplete = false;

	t->t_start = common_now_seconds();
	memset(&t->seen, 0, sizeof(t->seen));
	if (!t->sum->report)
		t->sum->report = json_array();
	st = check_params(cfg, err);
	if (st)
		return st;
	apply_globals(cfg, o);
	if (cfg->nproblems == 0)
		return tcx_fail(err, TCX_EINVAL, "%s: no BenchmarkProblems to tune", cfg->path);
	for (int p = 0; p < cfg->nproblems && !st; p++) {
		json_t *r = json_object();

		st = tune_problem(t, cfg, p, r, err);
		json_array_append_new(t->sum->report, r);
		st = shard_go_on(t, st, &incomplete, &first, err);
	}
	if (!st && incomplete) {
		if (err)
			*err = first;
		st = TCX_EINCOMPLETE;
	}
	t->sum->seconds = common_now_seconds() - t->t_start;
	free(t->seen.v);
	memset(&t->seen, 0, sizeof(t->seen));
	return st;
}

/* plan.c - `tcx plan`: what tcx runs for a contraction when nobody tuned
 * it, and why: the merged problem, the solution the planner's model ranks
 * first, its predicted time and the bound that limits it, and the
 * runner-up. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "gen/solution.h"
#include "notation/notation.h"
#include "plan/fit.h"
#include "plan/planner.h"

static const char *const planner_synopsis[] = {
	"tcx plan --sizes <sizes> [--type <t>] [--device <id> | --for <gpu>] [--strides <strides>] "
	"[--layout <layout>] [--accuracy <e>] [--format <fmt>] <expr>",
	"tcx plan --fit [--db <file>] [--device <id> | --for <gpu>] [--type <t>] [-o <file>] "
	"[--format <fmt>]",
	NULL,
};

static const struct cmd_option planner_options[] = {
	{ "sizes", 's', required_argument, "<sizes>",
	  "index sizes, 'i=64,j=32,...' or '64,32,...' in the notation's order", OV_NONE, NULL },
	{ "type", 't', required_argument, "<t>", "element type: s d c z h b (default s)", OV_ENUM,
	  "s d c z h b" },
	{ "device", 'd', required_argument, "<id>", "device id from 'tcx devices'", OV_DEVICE,
	  NULL },
	{ "for", 0x100, required_argument, "<gpu>",
	  "plan for a GPU tcx knows without opening one: h100 or h200", OV_ENUM, "h100 h200" },
	{ "strides", 0x101, required_argument, "<strides>",
	  "explicit strides, 'A=[1,64],B=[..],C=[..]'", OV_NONE, NULL },
	{ "layout", 'l', required_argument, "<layout>", "first-fastest or last-fastest", OV_ENUM,
	  "first-fastest last-fastest" },
	{ "format", 'f', required_argument, "<fmt>", "table (default) or json", OV_ENUM,
	  "table json" },
	{ "accuracy", 0x104, required_argument, "<e>",
	  "the relative error the result may have (default: the type's own accuracy)", OV_NONE,
	  NULL },
	{ "fit", 0x102, no_argument, NULL,
	  "fit the planner's model to the measurements in the results store", OV_NONE, NULL },
	{ "db", 0x103, required_argument, "<file>",
	  "results store to fit from (default $XDG_CACHE_HOME/tcx/results.db)", OV_FILE, NULL },
	{ "output", 'o', required_argument, "<file>",
	  "write the fitted model here (default: beside the store, in models/)", OV_FILE, NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const planner_examples[] = {
	"tcx plan 'C[a,b,c,i,j,k]=A[i,j,m,a]*B[m,k,b,c]' --sizes a=24,b=20,c=20,i=24,j=20,k=20,m=24 "
	"--for h100",
	"tcx plan 'ik,kj->ij' --sizes i=4096,j=4096,k=4096 --format json",
	"tcx plan 'ik,kj->ij' --sizes i=4096,j=4096,k=4096 --for h200 --accuracy 1e-3",
	"tcx plan --fit",
	"tcx plan --fit --db h200.db --for h200 -o h200-s.json",
	NULL,
};

int cmd_plan(int argc, char **argv);
const struct cmd cmd_plan_def = {
	"plan", cmd_plan, planner_synopsis,
	"Show the kernel tcx picks for a contraction without tuning, and why",
	planner_options, planner_examples, "expr", 0,
	NULL,
};

/* A solution as --params text: the parameters that differ from the
 * defaults (solution_default), Tensile's spellings. */
static void params_text(const struct solution *s, struct strbuf *sb)
{
	struct solution d;
	json_t *o = solution_to_json(s), *def, *v;
	const char *key;

	solution_default(&d);
	def = solution_to_json(&d);
	json_object_foreach(o, key, v)
	{
		if (json_equal(v, json_object_get(def, key)))
			continue;
		strbuf_addf(sb, "%s%s=", sb->len ? "," : "", key);
		if (json_is_array(v)) {
			size_t i;
			json_t *x;

			strbuf_addc(sb, '[');
			json_array_foreach(v, i, x)
				strbuf_addf(sb, "%s%lld", i ? "," : "", (long long)json_integer_value(x));
			strbuf_addc(sb, ']');
		} else if (json_is_boolean(v)) {
			strbuf_adds(sb, json_is_true(v) ? "True" : "False");
		} else if (json_is_string(v)) {
			strbuf_adds(sb, json_string_value(v));
		} else {
			strbuf_addf(sb, "%lld", (long long)json_integer_value(v));
		}
	}
	json_decref(o);
	json_decref(def);
}

/* The tensors a choice permutes: tensor -> its indices in the copy's
 * order, fastest first; NULL when none. */
static json_t *permute_json(const struct tcx_contraction *c, const struct plan_choice *ch)
{
	static const char *const names[3] = { "A", "B", "C" };
	json_t *o = json_object();

	for (int x = 0; x < 3; x++) {
		const enum tensor_role t = x == 0 ? T_A : x == 1 ? T_B : T_C;
		int ids[TCX_MAX_INDICES], n = 0;
		json_t *arr;

		if (!ch->permute[x].on)
			continue;
		for (int id = 0; id < c->nidx; id++)
			if (c->idx[id].pos[t] >= 0) {
				int j = n++;

				for (; j > 0 && ch->permute[x].stride[ids[j - 1]] >
						    ch->permute[x].stride[id];
				     j--)
					ids[j] = ids[j - 1];
				ids[j] = id;
			}
		arr = json_array();
		for (int k = 0; k < n; k++)
			json_array_append_new(arr, json_string(c->idx[ids[k]].name));
		json_object_set_new(o, names[x], arr);
	}
	if (json_object_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* choice_json with --accuracy: the choice's arithmetic and its error */
static bool show_arith;

static json_t *choice_json(const struct tcx_contraction *c, const struct plan_choice *ch,
			   double flops)
{
	json_t *o = json_object(), *perm = permute_json(c, ch);
	struct strbuf params = STRBUF_INIT;
	char name[256];

	solution_name(&ch->sol, name, sizeof(name));
	params_text(&ch->sol, &params);
	json_object_set_new(o, "solution_name", json_string(name));
	json_object_set_new(o, "params", json_string(strbuf_str(&params)));
	json_object_set_new(o, "solution", solution_to_json(&ch->sol));
	json_object_set_new(o, "predicted_ms", json_num(ch->time_s * 1e3));
	json_object_set_new(o, "predicted_gflops", json_num(flops / ch->time_s / 1e9));
	json_object_set_new(o, "compute_ms", json_num(ch->compute_s * 1e3));
	json_object_set_new(o, "memory_ms", json_num(ch->memory_s * 1e3));
	json_object_set_new(o, "latency_ms", json_num(ch->latency_s * 1e3));
	json_object_set_new(o, "overhead_ms", json_num(ch->overhead_s * 1e3));
	json_object_set_new(o, "limit", json_string(ch->limit));
	json_object_set_new(o, "tile_utilization", json_num(ch->tile_util));
	if (show_arith) {
		json_object_set_new(o, "arithmetic", json_string(arith_name(ch->arith)));
		json_object_set_new(o, "predicted_error", json_num(ch->predicted_err));
	}
	if (perm)
		json_object_set_new(o, "permute", perm);
	strbuf_release(&params);
	return o;
}

/* The JSON's model_origin: where plan_model_find found the rates. */
static const char *model_origin(enum plan_model_origin o)
{
	switch (o) {
	case PLAN_MODEL_ENV:
		return "TCX_MODEL";
	case PLAN_MODEL_FITTED:
		return "fitted";
	case PLAN_MODEL_SHIPPED:
		return "shipped";
	case PLAN_MODEL_BUILTIN:
		break;
	}
	return "built-in";
}

/* The table's words for a model_origin of a model file. */
static const char *model_origin_text(const char *origin)
{
	if (strcmp(origin, "TCX_MODEL") == 0)
		return "from TCX_MODEL";
	if (strcmp(origin, "shipped") == 0)
		return "shipped with tcx";
	return "saved by tcx plan --fit";
}

static json_t *plan_json(const struct tcx_contraction *c, const struct problem *p,
			 const struct device_info *dev, const struct plan_result *pl,
			 double accuracy)
{
	json_t *o = json_object(), *sz = json_object();
	const double flops = problem_flops(p);
	int order[TCX_MAX_INDICES];

	json_object_set_new(o, "expression", json_string(c->expr));
	json_object_set_new(o, "device", json_string(dev->id));
	json_object_set_new(o, "device_name", json_string(dev->name));
	/* in the order positional sizes are given, as the table echoes them */
	contraction_positional_order(c, order);
	for (int k = 0; k < c->nidx; k++)
		json_object_set_new(sz, c->idx[order[k]].name, json_integer(p->size[order[k]]));
	json_object_set_new(o, "sizes", sz);
	json_object_set_new(o, "planned_as", json_string(pl->kp.c->expr));
	json_object_set_new(o, "flops", json_num(flops));
	json_object_set_new(o, "min_bytes", json_num(problem_min_bytes(p, c->use_beta)));
	if (accuracy > 0)
		json_object_set_new(o, "accuracy", json_real(accuracy));
	json_object_set_new(o, "choice", choice_json(c, &pl->best, flops));
	if (pl->direct.on) {
		json_t *d = json_object();
		char what[128];

		permute_plan_str(&pl->direct.plan, what, sizeof(what));
		json_object_set_new(d, "kernel", json_string(what));
		json_object_set_new(d, "predicted_ms", json_num(pl->direct.seconds * 1e3));
		json_object_set_new(d, "scalars", json_string("alpha 1, beta 0"));
		json_object_set_new(o, "direct_permute", d);
	}
	if (pl->ttm.applies) {
		json_t *d = json_object();
		char what[256];

		ttm_plan_str(&pl->ttm.plan, c, what, sizeof(what));
		json_object_set_new(d, "kernel", json_string(what));
		json_object_set_new(d, "family", json_string(ttm_kernel(&pl->ttm.plan)));
		json_object_set_new(d, "chosen", json_boolean(pl->ttm.on));
		json_object_set_new(d, "predicted_ms", json_num(pl->ttm.seconds * 1e3));
		json_object_set_new(d, "predicted_gflops",
				    json_num(pl->ttm.seconds > 0 ? flops / pl->ttm.seconds / 1e9 : 0));
		json_object_set_new(d, "limit", json_string(pl->ttm.limit));
		json_object_set_new(d, "compute_ms", json_num(pl->ttm.compute_s * 1e3));
		json_object_set_new(d, "memory_ms", json_num(pl->ttm.memory_s * 1e3));
		json_object_set_new(o, "tensor_times_matrix", d);
	}
	json_object_set_new(o, "runner_up",
			    pl->has_second ? choice_json(c, &pl->second, flops) : json_null());
	json_object_set_new(o, "considered", json_integer(pl->considered));
	json_object_set_new(o, "valid", json_integer(pl->valid));
	json_object_set_new(o, "plan_ms", json_num(pl->plan_s * 1e3));
	json_object_set_new(o, "model", pl->model.source[0] ? json_string(pl->model.source)
							  : json_string("built-in"));
	json_object_set_new(o, "model_origin", json_string(model_origin(pl->model.origin)));
	if (pl->model.source[0]) {
		json_object_set_new(o, "model_measurements", json_integer(pl->model.fit_rows));
		json_object_set_new(o, "model_problems", json_integer(pl->model.fit_problems));
	}
	return o;
}

static void print_choice(const char *label, json_t *ch)
{
	json_t *perm = json_object_get(ch, "permute"), *order;
	const char *op;

	printf("%-11s %s\n", label, json_string_value(json_object_get(ch, "solution_name")));
	json_object_foreach(perm, op, order)
	{
		json_t *v;
		size_t i;

		const bool c = strcmp(op, "C") == 0;

		if (c)
			printf("            writing C in the order ");
		else
			printf("            after permuting %s into the order ", op);
		json_array_foreach(order, i, v) printf("%s%s", i ? "," : "", json_string_value(v));
		printf(" (fastest first)%s\n", c ? ", then permuting it into place" : "");
	}
	printf("            predicted %.4g ms (%.4g GFLOP/s), %s-bound: compute %.3g ms, memory "
	       "%.3g ms, latency %.3g ms, overhead %.3g ms; %.0f%% of the tiles' work is useful\n",
	       json_real_value(json_object_get(ch, "predicted_ms")),
	       json_real_value(json_object_get(ch, "predicted_gflops")),
	       json_string_value(json_object_get(ch, "limit")),
	       json_real_value(json_object_get(ch, "compute_ms")),
	       json_real_value(json_object_get(ch, "memory_ms")),
	       json_real_value(json_object_get(ch, "latency_ms")),
	       json_real_value(json_object_get(ch, "overhead_ms")),
	       100 * json_real_value(json_object_get(ch, "tile_utilization")));
	if (json_object_get(ch, "arithmetic"))
		printf("            arithmetic %s, predicted error %.2g\n",
		       json_string_value(json_object_get(ch, "arithmetic")),
		       json_real_value(json_object_get(ch, "predicted_error")));
	printf("            --params '%s'\n", json_string_value(json_object_get(ch, "params")));
}

/* The tensor-times-matrix (or -vector) kernel's line: what it runs, what
 * it predicts. */
static void print_ttm(const char *label, json_t *t)
{
	printf("%-11s %s, no permutes: %s\n", label,
	       json_string_value(json_object_get(t, "family")),
	       json_string_value(json_object_get(t, "kernel")));
	printf("            predicted %.4g ms (%.4g GFLOP/s), %s-bound: compute %.3g ms, memory "
	       "%.3g ms\n",
	       json_real_value(json_object_get(t, "predicted_ms")),
	       json_real_value(json_object_get(t, "predicted_gflops")),
	       json_string_value(json_object_get(t, "limit")),
	       json_real_value(json_object_get(t, "compute_ms")),
	       json_real_value(json_object_get(t, "memory_ms")));
}

static void print_table(json_t *o)
{
	json_t *sz = json_object_get(o, "sizes"), *v, *direct = json_object_get(o, "direct_permute");
	json_t *ttm = json_object_get(o, "tensor_times_matrix");
	const char *key;
	bool first = true;

	printf("device      %s (%s)\n", json_string_value(json_object_get(o, "device_name")),
	       json_string_value(json_object_get(o, "device")));
	printf("problem     %s  sizes ", json_string_value(json_object_get(o, "expression")));
	json_object_foreach(sz, key, v)
	{
		printf("%s%s=%lld", first ? "" : ",", key, (long long)json_integer_value(v));
		first = false;
	}
	printf("\nplanned as  %s\n", json_string_value(json_object_get(o, "planned_as")));
	if (json_object_get(o, "accuracy"))
		printf("accuracy    %.3g relative error (|got - ref| / sum |a b|)\n",
		       json_real_value(json_object_get(o, "accuracy")));
	if (direct) {
		printf("choice      a permute of A into C, no contraction kernel: %s\n",
		       json_string_value(json_object_get(direct, "kernel")));
		printf("            nothing is summed: C is A with its indices permuted, which a "
		       "permute moves once at the speed of a copy\n");
		printf("            predicted %.4g ms, memory-bound; for %s (it moves elements, "
		       "it does not scale them)\n",
		       json_real_value(json_object_get(direct, "predicted_ms")),
		       json_string_value(json_object_get(direct, "scalars")));
	}
	if (ttm && json_is_true(json_object_get(ttm, "chosen")))
		print_ttm("choice", ttm);
	print_choice(direct ? "otherwise" : ttm && json_is_true(json_object_get(ttm, "chosen"))
						? "instead of"
						: "choice",
		     json_object_get(o, "choice"));
	if (ttm && !json_is_true(json_object_get(ttm, "chosen")))
		print_ttm("not chosen", ttm);
	if (!json_is_null(json_object_get(o, "runner_up")))
		print_choice("runner-up", json_object_get(o, "runner_up"));
	printf("considered  %lld solutions, %lld of them valid here, in %.3g ms\n",
	       (long long)json_integer_value(json_object_get(o, "considered")),
	       (long long)json_integer_value(json_object_get(o, "valid")),
	       json_real_value(json_object_get(o, "plan_ms")));
	if (json_object_get(o, "model_measurements"))
		printf("model       fitted to %lld measurements of %lld problems (%s, %s)\n",
		       (long long)json_integer_value(json_object_get(o, "model_measurements")),
		       (long long)json_integer_value(json_object_get(o, "model_problems")),
		       json_string_value(json_object_get(o, "model")),
		       model_origin_text(json_string_value(json_object_get(o, "model_origin"))));
	else
		printf("model       built-in\n");
}

/* "29,17,3" (a static buffer: one use a statement) */
static const char *sizes_text(const int64_t *sizes, int n)
{
	static char buf[256];
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < n && len < sizeof(buf); k++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lld", k ? "," : "",
					(long long)sizes[k]);
	return buf;
}

/* Per problem of the store, the fitted model's choice and the best. */
static json_t *details_json(const struct fit_report *rep)
{
	json_t *arr = json_array();

	for (int k = 0; k < rep->ndetails; k++) {
		const struct fit_detail *d = &rep->details[k];
		json_t *o = json_object();
		char name[256];

		json_object_set_new(o, "problem", json_string(d->problem));
		json_object_set_new(o, "sizes", json_string(sizes_text(d->sizes, d->nidx)));
		json_object_set_new(o, "candidates", json_integer(d->rows));
		json_object_set_new(o, "share", json_num(d->share));
		solution_name(&d->pick, name, sizeof(name));
		json_object_set_new(o, "chosen", json_string(name));
		json_object_set_new(o, "chosen_ms", json_num(d->pick_s * 1e3));
		json_object_set_new(o, "chosen_predicted_ms", json_num(d->pick_pred_s * 1e3));
		solution_name(&d->best, name, sizeof(name));
		json_object_set_new(o, "best", json_string(name));
		json_object_set_new(o, "best_ms", json_num(d->best_s * 1e3));
		json_object_set_new(o, "best_predicted_ms", json_num(d->best_pred_s * 1e3));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* tcx plan --fit: the model fitted to a store's measurements of one
 * device and type, written as a model file, and how good its choices are
 * against the built-in model's. */
static int run_fit(const struct device_info *di, enum tcx_dtype t, const char *db,
		   const char *out, enum out_format fmt)
{
	struct fit_report rep;
	struct plan_device m;
	struct tcx_error err = { 0 };
	char path[4096], name[160], dbbuf[4096];
	enum tcx_status st;
	json_t *o;

	if (!db) {
		default_store_path(dbbuf, sizeof(dbbuf));
		db = dbbuf;
	}
	st = plan_fit(db, di, t, &m, &rep, &err);
	if (st)
		return report(st, &err);
	if (out) {
		snprintf(path, sizeof(path), "%s", out);
	} else {
		const char *slash = strrchr(db, '/');
		int dl = slash ? (int)(slash - db) : 1;

		plan_model_name(di->name, t, name, sizeof(name));
		snprintf(path, sizeof(path), "%.*s/models", dl, slash ? db : ".");
		st = common_make_dirs(path, &err);
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", name);
	}
	if (!st)
		st = plan_model_write(path, &m, t, &rep, &err);
	if (st) {
		plan_fit_report_free(&rep);
		return report(st, &err);
	}
	o = json_object();
	json_object_set_new(o, "device_name", json_string(di->name));
	json_object_set_new(o, "type", json_string(dtype_info(t)->name));
	json_object_set_new(o, "store", json_string(db));
	json_object_set_new(o, "measurements", json_integer(rep.rows));
	json_object_set_new(o, "problems", json_integer(rep.problems));
	json_object_set_new(o, "skipped", json_integer(rep.skipped));
	json_object_set_new(o, "folds", json_integer(rep.folds));
	json_object_set_new(o, "held_out_builtin", plan_fit_quality_json(&rep.builtin_held));
	json_object_set_new(o, "held_out_fitted", plan_fit_quality_json(&rep.fitted_held));
	json_object_set_new(o, "all_builtin", plan_fit_quality_json(&rep.builtin_all));
	json_object_set_new(o, "all_fitted", plan_fit_quality_json(&rep.fitted_all));
	json_object_set_new(o, "model", json_string(path));
	json_object_set_new(o, "problems_detail", details_json(&rep));
	if (fmt == FMT_JSON) {
		print_json(stdout, o);
	} else {
		printf("fitted      %s, %s: %d measurements of %d problems in %s", di->name,
		       dtype_info(t)->name, rep.rows, rep.problems, db);
		if (rep.skipped)
			printf(" (%d rows unread)", rep.skipped);
		printf("\nchoices     the fastest measured time over the time of the model's first "
		       "choice, mean and 10th percentile:\n");
		if (rep.folds)
			printf("  held out  built-in %.3f / %.3f, fitted %.3f / %.3f (%d problems, "
			       "%d folds: each chosen by a model fitted on the others)\n",
			       rep.builtin_held.mean, rep.builtin_held.p10, rep.fitted_held.mean,
			       rep.fitted_held.p10, rep.builtin_held.problems, rep.folds);
		else
			printf("  held out  too few problems to hold some out (%d folds need %d)\n",
			       4, 8);
		printf("  fitted on built-in %.3f / %.3f, fitted %.3f / %.3f (%d problems)\n",
		       rep.builtin_all.mean, rep.builtin_all.p10, rep.fitted_all.mean,
		       rep.fitted_all.p10, rep.builtin_all.problems);
		for (int k = 0; k < rep.ndetails && k < 5 && rep.details[k].share < 0.95; k++) {
			const struct fit_detail *d = &rep.details[k];
			char pick[256], best[256];

			solution_name(&d->pick, pick, sizeof(pick));
			solution_name(&d->best, best, sizeof(best));
			printf("%-11s %s %s: %.3f of the best\n", k ? "" : "worst",
			       d->problem, sizes_text(d->sizes, d->nidx), d->share);
			printf("              chose %s: %.4g ms (predicted %.4g)\n", pick,
			       d->pick_s * 1e3, d->pick_pred_s * 1e3);
			printf("              best  %s: %.4g ms (predicted %.4g)\n", best,
			       d->best_s * 1e3, d->best_pred_s * 1e3);
		}
		printf("wrote       %s\n", path);
	}
	json_decref(o);
	plan_fit_report_free(&rep);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	const char *type = NULL, *layout = NULL, *sizes = NULL, *strides = NULL, *devid = NULL;
	const char *gpu = NULL, *db = NULL, *out = NULL;
	bool fit = false;
	double accuracy = 0;
	enum out_format fmt = FMT_TABLE;
	struct tcx_contraction *c = NULL;
	struct device *dev = NULL;
	struct device_info known;
	const struct device_info *di;
	struct tcx_error err = { 0 };
	struct plan_result pl;
	struct problem p;
	enum tcx_status st;
	json_t *o;
	int r, ret;

	while ((r = cmd_getopt(&cmd_plan_def, argc, argv)) != -1) {
		switch (r) {
		case 's':
			sizes = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case 'd':
			devid = optarg;
			break;
		case 0x100:
			gpu = optarg;
			break;
		case 0x101:
			strides = optarg;
			break;
		case 'l':
			layout = optarg;
			break;
		case 0x102:
			fit = true;
			break;
		case 0x103:
			db = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			if (!parse_format(optarg, &fmt, FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_JSON)))
				return option_value_error(&cmd_plan_def, 'f', "format", optarg);
			break;
		case 0x104:
			if ((ret = parse_accuracy(optarg, &accuracy)))
				return ret;
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (gpu && devid)
		return usage_error(&cmd_plan_def, "--device and --for cannot be used together");
	if (gpu && !plan_known_device(gpu, &known))
		return usage_error(&cmd_plan_def, "unknown GPU '%s' for --for: h100 or h200", gpu);
	if (fit) {
		enum tcx_dtype t = TCX_DTYPE_S;

		if (optind < argc)
			return usage_error(&cmd_plan_def, "--fit takes no expression: it fits to every "
							  "problem the store holds");
		if (sizes || strides || layout || accuracy > 0)
			return usage_error(&cmd_plan_def,
					   "--fit takes no --sizes, --strides, --layout or --accuracy");
		if (type && !dtype_parse(type, &t))
			return option_value_error(&cmd_plan_def, 't', "type", type);
		if (!gpu) {
			ret = open_device(devid, &dev);
			if (ret)
				return ret;
		}
		ret = run_fit(gpu ? &known : device_info_of(dev), t, db, out, fmt);
		device_close(dev);
		return ret;
	}
	if (db || out)
		return usage_error(&cmd_plan_def, "--db and --output go with --fit");
	if (optind + 1 != argc)
		return usage_error(&cmd_plan_def, optind >= argc ? "missing the expression"
								 : "too many arguments");
	if (!sizes)
		return usage_error(&cmd_plan_def, "give the sizes: --sizes i=..,j=..");
	ret = load_contraction(argv[optind], type, layout, &c);
	if (ret)
		return ret;
	ret = load_problem(c, sizes, strides, &p);
	if (ret)
		goto out;
	if (problem_empty_index(&p) >= 0) {
		ret = error("index '%s' has size 0: an empty problem runs no kernel, so there is "
			    "nothing to plan",
			    c->idx[problem_empty_index(&p)].name);
		ret = TCX_EXIT_USAGE;
		goto out;
	}
	if (gpu) {
		di = &known;
	} else {
		ret = open_device(devid, &dev);
		if (ret)
			goto out;
		di = device_info_of(dev);
	}
	st = planner_plan_accuracy(&p, di, CMD_PLAN_FLAGS, accuracy, ARITH_TF32, &pl, &err);
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	show_arith = accuracy > 0;
	o = plan_json(c, &p, di, &pl, accuracy);
	if (fmt == FMT_JSON)
		print_json(stdout, o);
	else
		print_table(o);
	json_decref(o);
	plan_release(&pl);
out:
	device_close(dev);
	contraction_free(c);
	return ret;
}

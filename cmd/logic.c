/* logic.c - `tcx logic`: show, import, export and look up library logic,
 * in tcx's format or Tensile's (lib/logic/logic.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "backend/backend.h"
#include "export/export.h"
#include "logic/logic.h"
#include "logic/selector.h"
#include "model/model.h"
#include "store/store.h"

static const char *const logic_synopsis[] = {
    "tcx logic show [--format <fmt>] <file>",
    "tcx logic import [-o <file>] <tensile-logic>",
    "tcx logic export [--tensile[=<version>]] [-o <file>] <file>",
    "tcx logic lookup [--format <fmt>] --sizes <sizes> <file>",
    "tcx logic eval (--holdout <sizes> | --holdout-range <spec>)... [--device <id>] [--db <file>] "
    "[--choices] [--min-time <s>] [--format <fmt>] [-o <file>] <file>",
    NULL,
};

enum {
	OPT_TENSILE = 256,
	OPT_HOLDOUT,
	OPT_HOLDOUT_RANGE,
	OPT_DB,
	OPT_CHOICES,
	OPT_MIN_TIME,
};

static const struct cmd_option logic_options[] = {
    {"format", 'f', required_argument, "<fmt>",
     "show, lookup, eval: output as table (default), json or yaml", OV_ENUM, "table json yaml"},
    {"output", 'o', required_argument, "<file>",
     "import, export: write to <file>, atomically (default: standard output); eval: write the "
     "logic with the best selector and the report recorded",
     OV_FILE, NULL},
    {"tensile", OPT_TENSILE, optional_argument, NULL,
     "export: Tensile's list form instead of tcx's: v3 (8 items; the default) or v4 (9 items)",
     OV_ENUM, "v3 v4"},
    {"sizes", 's', required_argument, "<sizes>",
     "lookup: index sizes, 'i=64,j=32,...' or '64,32,...' in the notation's order", OV_NONE, NULL},
    {"holdout", OPT_HOLDOUT, required_argument, "<sizes>",
     "eval: held-out sizes, one per index ('127,129,61'; several separated by ';'; repeatable)",
     OV_NONE, NULL},
    {"holdout-range", OPT_HOLDOUT_RANGE, required_argument, "<spec>",
     "eval: held-out sizes as a Tensile Range ('[64,32,256],0,0'; repeatable)", OV_NONE, NULL},
    {"device", 'd', required_argument, "<id>",
     "eval: the device to measure on (default: $TCX_DEVICE, else the first GPU, else PoCL)",
     OV_DEVICE, NULL},
    {"db", OPT_DB, required_argument, "<file>",
     "eval: also learn from this results store's measurements of the logic's solutions", OV_FILE,
     NULL},
    {"choices", OPT_CHOICES, no_argument, NULL,
     "eval: print each selector's choice and reason; measure nothing", OV_NONE, NULL},
    {"min-time", OPT_MIN_TIME, required_argument, "<s>",
     "eval: seconds of timed launches per measurement (default 0.1)", OV_NONE, NULL},
    {NULL, 0, 0, NULL, NULL, OV_NONE, NULL},
};

static const char *const logic_examples[] = {
    "tcx logic show vega10_Cijk_Ailk_Bljk_SB.yaml",
    "tcx logic import vega10_Cijk_Ailk_Bljk_SB.yaml -o vega10.yaml",
    "tcx logic lookup vega10.yaml --sizes i=1024,j=1024,k=1,l=512",
    "tcx logic export --tensile=v4 vega10.yaml -o vega10_Cijk_Ailk_Bljk_SB.yaml",
    "tcx logic eval logic/pthread_Cij_Aik_Bkj_S.yaml --holdout '96,96,96;200,100,300' "
    "--holdout-range '[80,160,400],[100],[48]'",
    NULL,
};

/* The actions, with the options each takes, in the order of enum action. */
static const struct cmd_action logic_actions[] = {
    {"show", "format"},
    {"import", "output"},
    {"export", "tensile output"},
    {"lookup", "sizes format"},
    {"eval", "holdout holdout-range device db choices min-time format output"},
    {NULL, NULL},
};

int cmd_logic(int argc, char **argv);
const struct cmd cmd_logic_def = {
    "logic",	    cmd_logic,
    logic_synopsis, "Show, convert, query and evaluate library logic (tcx's or Tensile's)",
    logic_options,  logic_examples,
    "file",	    0,
    logic_actions,
};

/* The position in logic_actions, as cmd_action() returns it. */
enum action { ACT_SHOW, ACT_IMPORT, ACT_EXPORT, ACT_LOOKUP, ACT_EVAL };

static int load(const char *path, struct logic **l)
{
	struct tcx_error err = {0};
	enum tcx_status st = logic_load(path, l, &err);

	return st ? report(st, &err) : 0;
}

static const char *format_name(int f)
{
	switch (f) {
	case LOGIC_TCX:
		return "tcx";
	case LOGIC_TENSILE_V3:
		return "Tensile v3 (8 items)";
	case LOGIC_TENSILE_V4:
		return "Tensile v4 (9 items)";
	case LOGIC_TENSILE_MODERN:
		return "Tensile, modern (11 or more items)";
	}
	return "?";
}

/* ---- show ------------------------------------------------------------- */

/* The solution a chain of catch-all rules ends in, else -1. */
static int only_solution(const struct range_node *n)
{
	while (n && n->nrules == 1 && n->rules[0].threshold < 0) {
		if (!n->rules[0].child)
			return n->rules[0].sol;
		n = n->rules[0].child;
	}
	return -1;
}

static void print_rules(const struct logic *l, const struct range_node *n, int indent)
{
	const char *name = l->type->idx[n->index].name;

	if (n->nrules == 1 && n->rules[0].threshold < 0) { /* any size: not a test */
		if (n->rules[0].child)
			print_rules(l, n->rules[0].child, indent);
		else
			printf("%*ssolution %d\n", indent, "", n->rules[0].sol);
		return;
	}
	for (int k = 0; k < n->nrules; k++) {
		const struct range_rule *r = &n->rules[k];
		char label[96];
		int sol = r->child ? only_solution(r->child) : r->sol;

		if (r->threshold >= 0)
			snprintf(label, sizeof(label), "%s <= %lld", name, (long long)r->threshold);
		else
			snprintf(label, sizeof(label), "%s > %lld", name,
				 (long long)n->rules[k - 1].threshold);
		if (sol >= 0) {
			printf("%*s%s: solution %d\n", indent, "", label, sol);
		} else {
			printf("%*s%s:\n", indent, "", label);
			print_rules(l, r->child, indent + 2);
		}
	}
}

static const char *kernel_language(const struct logic_solution *s)
{
	json_t *k = s->tensile ? json_object_get(s->tensile, "KernelLanguage") : NULL;

	return json_is_string(k) ? json_string_value(k) : "tcx";
}

static void show_table(const struct logic *l, const char *path)
{
	const struct tcx_contraction *c = l->type;
	char tname[256];

	contraction_tensile_name(c, tname, sizeof(tname));
	printf("%-13s%s\n", "file", path);
	printf("%-13s%s", "format", format_name(l->format));
	if (l->format == LOGIC_TCX && l->source_format)
		printf(", imported from %s", format_name(l->source_format));
	if (l->min_version)
		printf(", MinimumRequiredVersion %s", l->min_version);
	printf("\n");
	if (l->device_name || l->vendor || l->backend) {
		printf("%-13s%s", "device", l->device_name ? l->device_name : "-");
		if (l->vendor)
			printf(", %s", l->vendor);
		if (l->backend)
			printf(", backend %s", l->backend);
		printf("\n");
	}
	if (l->driver)
		printf("%-13s%s\n", "driver", l->driver);
	printf("%-13s%s\n", "schedule", l->schedule ? l->schedule : "-");
	printf("%-13s", "device names");
	for (int k = 0; k < l->ndevice_names; k++)
		printf("%s%s", k ? ", " : "", l->device_names[k]);
	printf("\n");
	printf("%-13s%s", "architecture", l->architecture ? l->architecture : "-");
	if (l->compute_units)
		printf(", %d compute units", l->compute_units);
	printf("\n");
	printf("%-13s%s: %s\n", "problem", tname, c->expr);
	printf("%-13s%s (%s)\n", "type", dtype_info(c->dtype)->name,
	       (char[]){(char)(dtype_info(c->dtype)->letter | 0x20), 0});
	printf("%-13s", "indices");
	for (int id = 0; id < c->nidx; id++)
		printf("%s%s (%s)", id ? ", " : "", c->idx[id].name,
		       index_class_name(c->idx[id].cls));
	printf("\n%-13s", "index order");
	for (int k = 0; k < l->norder; k++)
		printf("%s%s", k ? " " : "", c->idx[l->index_order[k]].name);
	printf("\n");
	if (l->modern_items) {
		size_t k;
		json_t *v;

		/* items 10 and 11 of modern Tensile: tile selection, PerfMetric */
		json_array_foreach(l->modern_items, k, v)
		{
			char *t = json_is_string(v) ? NULL
						    : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			char label[32];

			snprintf(label, sizeof(label), "item %zu", k + 10);
			printf("%-13s%s\n",
			       k == 0	? "tile logic"
			       : k == 1 ? "perf metric"
					: label,
			       json_is_string(v) ? json_string_value(v)
			       : t		 ? t
						 : "?");
			free(t);
		}
	}
	if (l->created_version || l->created_date)
		printf("%-13stcx %s, %s\n", "created",
		       l->created_version ? l->created_version : "?",
		       l->created_date ? l->created_date : "?");
	printf("\nsolutions: %d\n", l->nsol);
	if (l->nsol)
		printf("  %3s  %-9s %-9s %-5s %3s %3s %4s  %-9s %s\n", "#", "MT", "WG", "TT", "DU",
		       "VW", "GSU", "kernel", "name");
	for (int k = 0; k < l->nsol; k++) {
		const struct solution *s = &l->sols[k].sol;
		char mt[32], wg[32], tt[32];

		snprintf(mt, sizeof(mt), "%dx%d", s->wg[0] * s->tt[0], s->wg[1] * s->tt[1]);
		snprintf(wg, sizeof(wg), "%dx%dx%d", s->wg[0], s->wg[1], s->wg[2]);
		snprintf(tt, sizeof(tt), "%dx%d", s->tt[0], s->tt[1]);
		printf("  %3d  %-9s %-9s %-5s %3d %3d %4d  %-9s %s\n", k, mt, wg, tt, s->depth_u,
		       s->vw, s->gsu, kernel_language(&l->sols[k]), l->sols[k].name);
		if (l->sols[k].form.on) {
			char form[128];

			plan_form_name(&l->sols[k].form, form, sizeof(form));
			printf("       in the planner's form: %s; ", form);
			if (l->sols[k].fallback >= 0)
				printf("fallback %d\n", l->sols[k].fallback);
			else
				printf("no fallback\n");
		}
	}
	printf("\nexact sizes: %d\n", l->nexact);
	if (l->nexact) {
		char head[256];
		size_t n = 0;

		for (int id = 0; id < c->nidx && n < sizeof(head); id++)
			n += (size_t)snprintf(head + n, sizeof(head) - n, "%s%s", id ? "," : "",
					      c->idx[id].name);
		printf("  %-28s %8s %12s\n", head, "solution", "GFLOP/s");
	}
	for (int k = 0; k < l->nexact; k++) {
		const struct logic_exact *e = &l->exact[k];
		char sz[256];
		size_t n = 0;

		for (int i = 0; i < c->nidx && n < sizeof(sz); i++)
			n += (size_t)snprintf(sz + n, sizeof(sz) - n, "%s%lld", i ? "," : "",
					      (long long)e->sizes[i]);
		printf("  %-28s %8d %12.6g", sz, e->sol, e->gflops);
		for (int i = c->nidx; i < e->nsizes; i++) /* modern Tensile's leading dimensions */
			printf("%s%lld", i == c->nidx ? "  (+" : ",", (long long)e->sizes[i]);
		printf("%s\n", e->nsizes > c->nidx ? ")" : "");
	}
	if (!l->range) {
		printf("\nrange rules: none\n");
	} else {
		printf("\nrange rules (levels");
		for (int k = 0; k < l->norder; k++)
			printf(" %s", c->idx[l->index_order[k]].name);
		printf("; the first rule that matches applies):\n");
		print_rules(l, l->range, 2);
	}
	printf("\nselector: %s\n", l->selector ? "present" : "none");
}

static int show(struct logic *l, const char *path, enum out_format fmt)
{
	struct tcx_error err = {0};
	enum tcx_status st;
	json_t *doc;

	if (fmt == FMT_TABLE) {
		show_table(l, path);
		return 0;
	}
	st = logic_to_json(l, LOGIC_TCX, &doc, &err);
	if (st)
		return report(st, &err);
	if (fmt == FMT_JSON ? print_json(stdout, doc) : print_yaml(stdout, doc)) {
		json_decref(doc);
		return TCX_EXIT_RUNTIME;
	}
	json_decref(doc);
	return 0;
}

/* ---- lookup ----------------------------------------------------------- */

static int lookup(struct logic *l, const char *spec, enum out_format fmt)
{
	struct strbuf why = STRBUF_INIT;
	struct tcx_error err = {0};
	int64_t sizes[TCX_MAX_INDICES];
	enum tcx_status st = sizes_parse_assign(l->type, spec, sizes, &err);
	struct problem p;
	int sol, ret = 0;

	if (st)
		return report_at(st, &err, "sizes", spec);
	/* sizes whose tensors overflow 64 bits are refused, as every command
	 * that runs a problem refuses them */
	st = problem_init(&p, l->type, sizes, &err);
	if (st) {
		tcx_error_prefix(&err, "sizes %s", spec);
		return report(st, &err);
	}
	sol = logic_lookup(l, sizes, &why);
	if (strbuf_status(&why, &err))
		return report(TCX_ENOMEM, &err);
	if (fmt == FMT_TABLE) {
		printf("%-10s", "sizes");
		for (int id = 0; id < l->type->nidx; id++)
			printf("%s%s=%lld", id ? " " : "", l->type->idx[id].name,
			       (long long)sizes[id]);
		printf("\n");
		if (sol >= 0)
			printf("%-10s%d: %s\n", "solution", sol, l->sols[sol].name);
		else
			printf("%-10snone\n", "solution");
		printf("%-10s%s\n", "why", strbuf_str(&why));
	} else {
		json_t *o = json_object(), *sz = json_object();

		for (int id = 0; id < l->type->nidx; id++)
			json_object_set_new(sz, l->type->idx[id].name, json_integer(sizes[id]));
		json_object_set_new(o, "sizes", sz);
		json_object_set_new(o, "solution", sol >= 0 ? json_integer(sol) : json_null());
		json_object_set_new(o, "name",
				    sol >= 0 ? json_string(l->sols[sol].name) : json_null());
		json_object_set_new(o, "why", json_string(strbuf_str(&why)));
		if (fmt == FMT_JSON ? print_json(stdout, o) : print_yaml(stdout, o))
			ret = TCX_EXIT_RUNTIME;
		json_decref(o);
	}
	strbuf_release(&why);
	if (!ret && sol < 0)
		ret = TCX_EXIT_CHECK;
	return ret;
}

/* ---- eval --------------------------------------------------------------- */

#define EVAL_MAX_SPECS 64

struct eval_args {
	const char *exact[EVAL_MAX_SPECS], *ranges[EVAL_MAX_SPECS];
	int nexact, nrange;
	const char *device, *db, *out;
	bool choices;
	double min_time;
};

/* The held-out sizes: exact lists (';' between sizes) and Tensile ranges. */
static int holdout_sizes(const struct logic *l, const struct eval_args *a, struct size_list *list)
{
	struct tcx_error err = {0};
	enum tcx_status st = export_holdout_sizes(a->exact, a->nexact, a->ranges, a->nrange,
						  l->type->nidx, list, &err);

	if (st)
		return report(st, &err);
	if (list->count == 0)
		return error("no held-out sizes"), TCX_EXIT_USAGE;
	return 0;
}

static void print_eval_table(const struct logic *l, json_t *r)
{
	json_t *rows = json_object_get(r, "sizes"), *row, *sc = json_object_get(r, "selectors");
	size_t i;

	printf("%-24s %-17s", "sizes", "fastest");
	for (int k = 0; k < SEL_KINDS; k++)
		printf(" %-15s", selector_kind_name((enum sel_kind)k));
	printf("\n");
	json_array_foreach(rows, i, row)
	{
		json_t *sz = json_object_get(row, "sizes"), *o = json_object_get(row, "oracle");
		json_t *ch = json_object_get(row, "choices"), *g = json_object_get(row, "gflops");
		char text[128], cell[64];
		size_t n = 0, j;
		json_t *v;

		text[0] = '\0';
		json_array_foreach(sz, j, v) n +=
		    (size_t)snprintf(text + n, n < sizeof(text) ? sizeof(text) - n : 0, "%s%lld",
				     j ? "," : "", (long long)json_integer_value(v));
		if (json_is_integer(o))
			snprintf(
			    cell, sizeof(cell), "%lld (%.3g)", (long long)json_integer_value(o),
			    json_number_value(json_array_get(g, (size_t)json_integer_value(o))));
		else
			snprintf(cell, sizeof(cell), "%s", sc ? "none runs" : "-");
		printf("%-24s %-17s", text, cell);
		for (int k = 0; k < SEL_KINDS; k++) {
			json_t *c = json_object_get(ch, selector_kind_name((enum sel_kind)k));
			json_t *s = json_object_get(c, "solution"),
			       *e = json_object_get(c, "efficiency");

			if (!json_is_integer(s))
				snprintf(cell, sizeof(cell), "none");
			else if (e)
				snprintf(cell, sizeof(cell), "%lld (%.1f%%)",
					 (long long)json_integer_value(s),
					 100 * json_number_value(e));
			else
				snprintf(cell, sizeof(cell), "%lld",
					 (long long)json_integer_value(s));
			printf(" %-15s", cell);
		}
		printf("\n");
		if (!sc && verbosity > 0)
			for (int k = 0; k < SEL_KINDS; k++) {
				json_t *c =
				    json_object_get(ch, selector_kind_name((enum sel_kind)k));

				printf("  %-8s %s\n", selector_kind_name((enum sel_kind)k),
				       json_string_value(json_object_get(c, "why")));
			}
	}
	if (!sc)
		return;
	printf("\n%-10s %7s %7s %7s %6s %6s\n", "selector", "mean", "P10", "min", "top-1", "top-3");
	for (int k = 0; k < SEL_KINDS; k++) {
		const char *name = selector_kind_name((enum sel_kind)k);
		json_t *s = json_object_get(sc, name);

		printf("%-10s %6.1f%% %6.1f%% %6.1f%% %5.0f%% %5.0f%%%s\n", name,
		       100 * json_number_value(json_object_get(s, "mean")),
		       100 * json_number_value(json_object_get(s, "p10")),
		       100 * json_number_value(json_object_get(s, "min")),
		       100 * json_number_value(json_object_get(s, "top1")),
		       100 * json_number_value(json_object_get(s, "top3")),
		       strcmp(json_string_value(json_object_get(r, "best")), name) ? ""
										   : "  (best)");
	}
	(void)l;
}

static int eval(struct logic *l, const char *path, const struct eval_args *a, enum out_format fmt)
{
	struct size_list list;
	struct selector *sel = NULL;
	struct device *dev = NULL;
	struct tcx_error err = {0};
	json_t *rep = NULL;
	enum sel_kind best = SEL_MODEL;
	enum tcx_status st;
	int ret;

	size_list_init(&list, l->type->nidx);
	ret = holdout_sizes(l, a, &list);
	if (ret)
		goto out;
	st = selector_create(l, path, &sel, &err);
	if (!st && a->db) {
		struct store *db = NULL;
		int added = 0;

		st = store_open(a->db, false, &db, &err);
		if (!st)
			st = selector_add_store(sel, l, db, &list, &added, &err);
		store_close(db);
		if (!st)
			verbose("%d measurement%s of the logic's solutions from %s", added,
				added == 1 ? "" : "s", a->db);
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	if (a->choices) {
		st = export_choices(l, path, sel, &list, &rep, &err);
	} else {
		struct bench_opts bo;
		struct eval_display disp;

		ret = open_device(a->device, &dev);
		if (ret)
			goto out;
		bench_opts_default(&bo);
		bo.warmup = 1;
		bo.min_reps = 5;
		bo.min_time = a->min_time;
		info("measuring %d solution%s at %zu held-out size%s on %s", l->nsol,
		     l->nsol == 1 ? "" : "s", list.count, list.count == 1 ? "" : "s",
		     device_info_of(dev)->name);
		disp.type = l->type;
		progress_start(&disp.pg, list.count * (size_t)l->nsol * EXPORT_EVAL_ROUNDS);
		st = export_eval(dev, l, path, sel, &list, &bo, &interrupted, eval_progress, &disp,
				 &rep, &best, &err);
		progress_clear(&disp.pg);
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	if (fmt == FMT_TABLE)
		print_eval_table(l, rep);
	else if (fmt == FMT_JSON ? print_json(stdout, rep) : print_yaml(stdout, rep))
		ret = TCX_EXIT_RUNTIME;
	if (!ret && a->out && !a->choices) {
		st = selector_record(l, best, rep, &err);
		if (!st)
			st = logic_write(l, a->out, &err);
		if (st)
			ret = report(st, &err);
		else if (strcmp(a->out, "-") != 0)
			info("wrote %s: default selector '%s' and the held-out report recorded",
			     a->out, selector_kind_name(best));
	}
out:
	json_decref(rep);
	device_close(dev);
	selector_destroy(sel);
	size_list_release(&list);
	return ret;
}

/* ---- import, export --------------------------------------------------- */

static int write_out(struct logic *l, const char *out, int format)
{
	struct tcx_error err = {0};
	enum tcx_status st;

	if (format == LOGIC_TCX) {
		/* a new file: its own creation record */
		free(l->created_version);
		free(l->created_date);
		l->created_version = l->created_date = NULL;
	}
	st = logic_write_format(l, out, format, &err);
	if (st)
		return report(st, &err);
	if (strcmp(out, "-") != 0)
		info("wrote %s: %s, %d solutions, %d exact sizes, %s", out,
		     format == LOGIC_TCX ? "tcx's format" : format_name(format), l->nsol, l->nexact,
		     l->range ? "range rules" : "no range rules");
	return 0;
}

int cmd_logic(int argc, char **argv)
{
	enum out_format fmt = FMT_TABLE;
	const char *out = "-", *sizes = NULL;
	int tensile = LOGIC_TCX, r, ret = 0, act;
	struct logic *l = NULL;
	struct eval_args ea;

	memset(&ea, 0, sizeof(ea));
	ea.min_time = 0.1;
	/* tcx's global options before the action too (tcx logic -v show) */
	while (argc > 1 && cmd_global_option(argv[1])) {
		argc--;
		argv++;
	}
	cmd_log_setup();
	if (argc < 2)
		return usage_error(&cmd_logic_def,
				   "missing the action: show, import, export, lookup or eval");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		cmd_usage(&cmd_logic_def, stdout);
		return 0;
	}
	act = cmd_action(&cmd_logic_def, argv[1]);
	if (act < 0)
		return usage_error(
		    &cmd_logic_def,
		    "unknown action '%s': expected show, import, export, lookup or eval", argv[1]);
	argc--;
	argv++;
	while ((r = cmd_getopt(&cmd_logic_def, argc, argv)) != -1) {
		if (!cmd_option_applies(&cmd_logic_def, r, argv[0]))
			return usage_error(&cmd_logic_def,
					   "option '--%s' does not apply to 'tcx logic %s'",
					   cmd_option_name(&cmd_logic_def, r), argv[0]);
		switch (r) {
		case 'f':
			if (!parse_format(optarg, &fmt,
					  FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_JSON) |
					      FMT_ALLOW(FMT_YAML)))
				return option_value_error(&cmd_logic_def, 'f', "format", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_TENSILE:
			if (!optarg || strcmp(optarg, "v3") == 0 || strcmp(optarg, "3") == 0)
				tensile = LOGIC_TENSILE_V3;
			else if (strcmp(optarg, "v4") == 0 || strcmp(optarg, "4") == 0)
				tensile = LOGIC_TENSILE_V4;
			else
				return usage_error(&cmd_logic_def,
						   "unknown Tensile form '%s': expected v3 or v4",
						   optarg);
			break;
		case 's':
			sizes = optarg;
			break;
		case OPT_HOLDOUT:
		case OPT_HOLDOUT_RANGE:
			if (ea.nexact + ea.nrange >= EVAL_MAX_SPECS)
				return usage_error(&cmd_logic_def,
						   "more than %d held-out size options",
						   EVAL_MAX_SPECS);
			if (r == OPT_HOLDOUT)
				ea.exact[ea.nexact++] = optarg;
			else
				ea.ranges[ea.nrange++] = optarg;
			break;
		case 'd':
			ea.device = optarg;
			break;
		case OPT_DB:
			ea.db = optarg;
			break;
		case OPT_CHOICES:
			ea.choices = true;
			break;
		case OPT_MIN_TIME:
			if (!common_parse_double(optarg, &ea.min_time) || !isfinite(ea.min_time) ||
			    ea.min_time < 0)
				return usage_error(&cmd_logic_def, "bad --min-time '%s'", optarg);
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return usage_error(&cmd_logic_def, optind >= argc ? "missing the logic file"
								  : "too many arguments");
	if (act == ACT_LOOKUP && !sizes)
		return usage_error(&cmd_logic_def, "'tcx logic lookup' needs --sizes");
	if (act == ACT_EVAL && ea.nexact + ea.nrange == 0)
		return usage_error(&cmd_logic_def,
				   "'tcx logic eval' needs --holdout or --holdout-range");
	ret = load(argv[optind], &l);
	if (ret)
		return ret;
	switch (act) {
	case ACT_SHOW:
		ret = show(l, argv[optind], fmt);
		break;
	case ACT_IMPORT:
		ret = write_out(l, out, LOGIC_TCX);
		break;
	case ACT_EXPORT:
		ret = write_out(l, out, tensile);
		break;
	case ACT_LOOKUP:
		ret = lookup(l, sizes, fmt);
		break;
	case ACT_EVAL:
		ea.out = strcmp(out, "-") != 0 ? out : NULL;
		ret = eval(l, argv[optind], &ea, fmt);
		break;
	}
	logic_free(l);
	return ret;
}

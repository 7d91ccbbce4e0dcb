/* export-lib.c - `tcx export-lib`: a self-contained C library from library
 * logic (lib/export/export.h), with the held-out report of its selectors
 * when held-out sizes are given. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "backend/backend.h"
#include "export/export.h"
#include "logic/logic.h"
#include "logic/selector.h"
#include "store/store.h"

static const char *const export_synopsis[] = {
    "tcx export-lib -o <dir> [--force] [--name <prefix>] [--selector <kind>] [--db <file>] "
    "[(--holdout <sizes> | --holdout-range <spec>)... [--device <id>] [--min-time <s>]] "
    "[--accuracy <e>] <logic.yaml>...",
    NULL,
};

enum {
	OPT_NAME = 256,
	OPT_HOLDOUT,
	OPT_HOLDOUT_RANGE,
	OPT_SELECTOR,
	OPT_DB,
	OPT_MIN_TIME,
	OPT_FORCE,
	OPT_ACCURACY,
};

static const struct cmd_option export_options[] = {
    {"output", 'o', required_argument, "<dir>",
     "write the library's source tree into <dir> (created when missing; refused when it "
     "is not empty and tcx did not write it)",
     OV_DIR, NULL},
    {"force", OPT_FORCE, no_argument, NULL,
     "write into <dir> even when it holds files tcx did not write (those with the names of "
     "the library's files are replaced, the others kept)",
     OV_NONE, NULL},
    {"name", OPT_NAME, required_argument, "<prefix>",
     "the library's name and the prefix of its functions (default: tcxlib)", OV_NONE, NULL},
    {"selector", OPT_SELECTOR, required_argument, "<kind>",
     "the selector for untuned sizes: logic, nearest or model (default: the one the "
     "held-out sizes favour, else the logic's recorded one, else model)",
     OV_ENUM, "logic nearest model"},
    {"db", OPT_DB, required_argument, "<file>",
     "also learn from this results store's measurements of the logic's solutions", OV_FILE, NULL},
    {"holdout", OPT_HOLDOUT, required_argument, "<sizes>",
     "held-out sizes, one per index ('127,129,61'; several separated by ';'; repeatable): "
     "measure the selectors there and write the report next to the library",
     OV_NONE, NULL},
    {"holdout-range", OPT_HOLDOUT_RANGE, required_argument, "<spec>",
     "held-out sizes as a Tensile Range ('[64,32,256],0,0'; repeatable)", OV_NONE, NULL},
    {"device", 'd', required_argument, "<id>",
     "the device for held-out measurements (default: $TCX_DEVICE, else the first GPU, else "
     "PoCL)",
     OV_DEVICE, NULL},
    {"min-time", OPT_MIN_TIME, required_argument, "<s>",
     "seconds of timed launches per held-out measurement (default 0.1)", OV_NONE, NULL},
    {"accuracy", OPT_ACCURACY, required_argument, "<e>",
     "refuse logic not tuned within this relative error (tcx tune --accuracy); the library "
     "records it",
     OV_NONE, NULL},
    {NULL, 0, 0, NULL, NULL, OV_NONE, NULL},
};

static const char *const export_examples[] = {
    "tcx export-lib logic/*.yaml -o mylib --name mylib",
    "tcx export-lib logic/*_Cij_Aik_Bkj_S.yaml -o mylib --name mylib --holdout "
    "'96,96,96;200,100,300'",
    "cmake -S mylib -B mylib/build && cmake --build mylib/build && "
    "mylib/build/mylib-client --sizes 100,100,100",
    NULL,
};

int cmd_export_lib(int argc, char **argv);
const struct cmd cmd_export_lib_def = {
    "export-lib",    cmd_export_lib,
    export_synopsis, "Write a self-contained C library that runs the tuned kernels",
    export_options,  export_examples,
    "file",	     0,
	NULL,
};

#define MAX_SPECS 64

struct args {
	const char *out, *name, *db, *device;
	const char *exact[MAX_SPECS], *ranges[MAX_SPECS];
	int nexact, nrange;
	bool force_kind, force;
	enum sel_kind kind;
	double min_time;
	double accuracy; /* --accuracy; 0 when not given */
};

/* Loads each logic file with its selector data. */
static int load_inputs(char **paths, int n, const struct args *a, struct logic **logics,
		       struct selector **sels)
{
	struct store *db = NULL;
	struct tcx_error err = {0};
	enum tcx_status st = TCX_OK;

	if (a->db) {
		st = store_open(a->db, false, &db, &err);
		if (st)
			return report(st, &err);
	}
	for (int i = 0; i < n && !st; i++) {
		bool forms = false;

		st = logic_load(paths[i], &logics[i], &err);
		/* the library runs the problem as written: what was tuned in
		 * the planner's form runs its fallback there */
		if (!st)
			st = logic_drop_forms(logics[i], paths[i], &forms, &err);
		if (!st && forms)
			verbose("%s: solutions tuned in the planner's form (merged or permuted) run "
				"their fallbacks in the library",
				paths[i]);
		if (!st)
			st = selector_create(logics[i], paths[i], &sels[i], &err);
		if (!st && db) {
			struct size_list hold;
			int added = 0;

			size_list_init(&hold, logics[i]->type->nidx);
			/* the held-out sizes must stay out of what the selectors learn */
			st = export_holdout_sizes(a->exact, a->nexact, a->ranges, a->nrange,
						  logics[i]->type->nidx, &hold, &err);
			if (st) {
				/* specs for another problem type: nothing to leave out */
				st = TCX_OK;
				hold.count = 0;
			}
			st = selector_add_store(sels[i], logics[i], db, &hold, &added, &err);
			size_list_release(&hold);
			if (!st)
				verbose("%s: %d measurement%s from %s", paths[i], added,
					added == 1 ? "" : "s", a->db);
		}
	}
	store_close(db);
	return st ? report(st, &err) : 0;
}

/* Measures the selectors of each logic file at the held-out sizes that fit
 * its problem type; fills reports[] and kinds[]. */
static int measure(char **paths, int n, const struct args *a, struct logic **logics,
		   struct selector **sels, json_t **reports, enum sel_kind *kinds)
{
	struct device *dev = NULL;
	struct bench_opts bo;
	int ret = open_device(a->device, &dev), used = 0;

	if (ret)
		return ret;
	bench_opts_default(&bo);
	bo.warmup = 1;
	bo.min_reps = 5;
	bo.min_time = a->min_time;
	for (int i = 0; i < n && !ret; i++) {
		struct size_list hold;
		struct tcx_error err = {0};
		struct eval_display disp;
		enum tcx_status st;

		size_list_init(&hold, logics[i]->type->nidx);
		st = export_holdout_sizes(a->exact, a->nexact, a->ranges, a->nrange,
					  logics[i]->type->nidx, &hold, &err);
		if (st) {
			verbose("%s: the held-out sizes are not for this problem type (%s)",
				paths[i], err.msg);
			size_list_release(&hold);
			continue;
		}
		used++;
		info("%s: measuring %d solution%s at %zu held-out size%s on %s", paths[i],
		     logics[i]->nsol, logics[i]->nsol == 1 ? "" : "s", hold.count,
		     hold.count == 1 ? "" : "s", device_info_of(dev)->name);
		disp.type = logics[i]->type;
		progress_start(&disp.pg, hold.count * (size_t)logics[i]->nsol * EXPORT_EVAL_ROUNDS);
		st = export_eval(dev, logics[i], paths[i], sels[i], &hold, &bo, &interrupted,
				 eval_progress, &disp, &reports[i], &kinds[i], &err);
		progress_clear(&disp.pg);
		size_list_release(&hold);
		if (st)
			ret = report(st, &err);
		else
			info("%s: the %s selector does best at the held-out sizes", paths[i],
			     selector_kind_name(kinds[i]));
	}
	device_close(dev);
	if (!ret && used == 0) {
		error("the held-out sizes fit none of the logic files' problem types");
		ret = TCX_EXIT_USAGE;
	}
	return ret;
}

int cmd_export_lib(int argc, char **argv)
{
	struct args a;
	struct logic **logics = NULL;
	struct selector **sels = NULL;
	json_t **reports = NULL;
	enum sel_kind *kinds = NULL;
	struct export_input *in = NULL;
	struct export_opts o;
	struct tcx_error err = {0};
	int r, n, ret = 0;
	enum tcx_status st;
	char why[128];

	memset(&a, 0, sizeof(a));
	a.name = "tcxlib";
	a.min_time = 0.1;
	while ((r = cmd_getopt(&cmd_export_lib_def, argc, argv)) != -1) {
		switch (r) {
		case 'o':
			a.out = optarg;
			break;
		case OPT_NAME:
			a.name = optarg;
			break;
		case OPT_FORCE:
			a.force = true;
			break;
		case OPT_SELECTOR:
			if (!selector_kind_parse(optarg, &a.kind))
				return usage_error(
				    &cmd_export_lib_def,
				    "unknown selector '%s': expected logic, nearest or "
				    "model",
				    optarg);
			a.force_kind = true;
			break;
		case OPT_DB:
			a.db = optarg;
			break;
		case OPT_HOLDOUT:
		case OPT_HOLDOUT_RANGE:
			if (a.nexact + a.nrange >= MAX_SPECS)
				return usage_error(&cmd_export_lib_def,
						   "more than %d held-out size options", MAX_SPECS);
			if (r == OPT_HOLDOUT)
				a.exact[a.nexact++] = optarg;
			else
				a.ranges[a.nrange++] = optarg;
			break;
		case 'd':
			a.device = optarg;
			break;
		case OPT_ACCURACY:
			if ((ret = parse_accuracy(optarg, &a.accuracy)))
				return ret;
			break;
		case OPT_MIN_TIME:
			if (!common_parse_double(optarg, &a.min_time) || !(a.min_time >= 0))
				return usage_error(&cmd_export_lib_def, "bad --min-time '%s'",
						   optarg);
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (!a.out)
		return usage_error(&cmd_export_lib_def, "give the output directory with -o");
	if (optind >= argc)
		return usage_error(&cmd_export_lib_def, "give at least one logic file");
	if (!export_name_check(a.name, why, sizeof(why)))
		return usage_error(&cmd_export_lib_def, "bad --name '%s': %s", a.name, why);
	/* before any measurement: refused at the end, it would be wasted */
	if (!a.force && (st = export_dir_check(a.out, &err)))
		return report(st, &err);
	n = argc - optind;
	logics = calloc((size_t)n, sizeof(*logics));
	sels = calloc((size_t)n, sizeof(*sels));
	reports = calloc((size_t)n, sizeof(*reports));
	kinds = calloc((size_t)n, sizeof(*kinds));
	in = calloc((size_t)n, sizeof(*in));
	if (!logics || !sels || !reports || !kinds || !in) {
		ret = report(TCX_ENOMEM, NULL);
		goto out;
	}
	ret = load_inputs(argv + optind, n, &a, logics, sels);
	/* before any measurement: refused at the end, it would be wasted */
	for (int i = 0; i < n && !ret && a.accuracy > 0; i++) {
		st = export_accuracy_check(logics[i], argv[optind + i], a.accuracy, &err);
		if (st)
			ret = report(st, &err);
	}
	if (!ret && a.nexact + a.nrange > 0)
		ret = measure(argv + optind, n, &a, logics, sels, reports, kinds);
	if (ret)
		goto out;
	for (int i = 0; i < n; i++) {
		in[i].path = argv[optind + i];
		in[i].logic = logics[i];
		in[i].sel = sels[i];
		in[i].report = reports[i];
		in[i].kind = a.force_kind ? a.kind
			     : reports[i] ? kinds[i]
					  : selector_default(sels[i]);
	}
	memset(&o, 0, sizeof(o));
	o.out_dir = a.out;
	o.name = a.name;
	o.force = a.force;
	o.accuracy = a.accuracy;
	st = export_lib(in, n, &o, &err);
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	info("wrote %s: the library %s from %d logic file%s%s", a.out, a.name, n, n == 1 ? "" : "s",
	     a.nexact + a.nrange ? "; selector report in selector-report.md" : "");
out:
	for (int i = 0; i < n; i++) {
		if (logics)
			logic_free(logics[i]);
		if (sels)
			selector_destroy(sels[i]);
		if (reports)
			json_decref(reports[i]);
	}
	free(logics);
	free(sels);
	free(reports);
	free(kinds);
	free(in);
	return ret;
}

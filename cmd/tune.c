/* tune.c - `tcx tune`: find the fastest solutions for a config's problems on
 * a device (Tensile's protocol or a search strategy), keep every
 * measurement in the results store, and write library logic. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "backend/backend.h"
#include "tune/tune.h"

static const char *const tune_synopsis[] = {
	"tcx tune [--device <id>] [--db <file>] [-o <dir>] [--strategy <s>] [--budget <n>] "
	"[--seed <n>] [--force] [--dry-run | --explain] [--no-validate] [--min-reps <n>] "
	"[--min-time <s>] [--timer <timer>] <config.yaml>",
	NULL,
};

static const struct cmd_option tune_options[] = {
	{ "device", 'd', required_argument, "<id>", "device id from 'tcx devices'", OV_DEVICE,
	  NULL },
	{ "db", 0x100, required_argument, "<file>",
	  "results store (default $XDG_CACHE_HOME/tcx/results.db)", OV_FILE, NULL },
	{ "output", 'o', required_argument, "<dir>",
	  "write library logic into this directory (default ./logic)", OV_DIR, NULL },
	{ "strategy", 's', required_argument, "<s>",
	  "protocol (Tensile's, default), exhaustive, random, anneal or genetic", OV_ENUM,
	  "protocol exhaustive random anneal genetic" },
	{ "budget", 'b', required_argument, "<n>",
	  "candidates to evaluate for random, anneal and genetic (default 32)", OV_NONE, NULL },
	{ "seed", 0x101, required_argument, "<n>", "seed of the search and of the data (default 1)",
	  OV_NONE, NULL },
	{ "force", 'f', no_argument, NULL, "measure again what the store already holds", OV_NONE,
	  NULL },
	{ "dry-run", 'n', no_argument, NULL,
	  "print the planned steps and candidate counts; run nothing", OV_NONE, NULL },
	{ "explain", 0x102, no_argument, NULL,
	  "list the candidates this device skipped or failed, and why", OV_NONE, NULL },
	{ "no-validate", 0x103, no_argument, NULL,
	  "do not validate the winners (not recommended)", OV_NONE, NULL },
	{ "min-reps", 0x104, required_argument, "<n>", "timed launches per measurement (default 5)",
	  OV_NONE, NULL },
	{ "min-time", 0x105, required_argument, "<s>",
	  "seconds of timed launches per measurement (default 0.05)", OV_NONE, NULL },
	{ "timer", 0x106, required_argument, "<timer>", "event, wall or auto", OV_ENUM,
	  "auto event wall" },
	{ "format", 0x107, required_argument, "<fmt>", "summary (and --explain) as table or json",
	  OV_ENUM, "table json" },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const tune_examples[] = {
	"tcx tune share/examples/sgemm.yaml",
	"tcx tune --dry-run tensile_config.yaml",
	"tcx tune --strategy random --budget 64 --seed 7 config.yaml -o logic/",
	"tcx tune --explain config.yaml",
	NULL,
};

int cmd_tune(int argc, char **argv);
const struct cmd cmd_tune_def = {
	"tune", cmd_tune, tune_synopsis,
	"Tune solutions for a config's problems and write library logic", tune_options,
	tune_examples, "file", CMD_NEEDS_DEVICE,
};


static bool progress_shown;

static void show_progress(const struct tune_progress *p, void *ctx)
{
	char eta[32] = "";

	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), " ETA %d:%02d", (int)(p->eta_s / 60),
			 (int)p->eta_s % 60);
	fprintf(stderr, "\r\033[K%s g%02d %s: %lld/%lld, best %.1f GFLOP/s%s", p->problem, p->group,
		p->step, (long long)p->done, (long long)p->total, p->best_gflops, eta);
	progress_shown = true;
	(void)ctx;
}

static void clear_progress(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = false;
}

/* A log hook that first clears the progress line. */
static void log_line(enum tcx_log_level level, const char *msg, void *ctx)
{
	clear_progress();
	if (level == TCX_LOG_ERROR)
		error("%s", msg);
	else if (level == TCX_LOG_WARN)
		warning("%s", msg);
	else
		fprintf(stderr, "%s\n", msg);
	(void)ctx;
}

struct explain_ctx {
	json_t *rows;
	bool json;
	int64_t n;
};

static int explain_row(const struct measurement *m, void *ctx)
{
	struct explain_ctx *e = ctx;

	if (m->status == MEAS_OK)
		return 0;
	e->n++;
	if (e->json) {
		json_t *r = json_object(), *sz = json_array();

		for (int k = 0; k < m->nidx; k++)
			json_array_append_new(sz, json_integer(m->sizes[k]));
		json_object_set_new(r, "problem", json_string(m->problem));
		json_object_set_new(r, "sizes", sz);
		json_object_set_new(r, "status",
				    json_string(m->status == MEAS_SKIPPED ? "skipped" : "failed"));
		json_object_set_new(r, "reason", json_string(m->reason));
		json_object_set_new(r, "solution", json_string(m->solution));
		json_array_append_new(e->rows, r);
	} else {
		printf("%-7s %s [", m->status == MEAS_SKIPPED ? "skipped" : "failed", m->problem);
		for (int k = 0; k < m->nidx; k++)
			printf("%s%lld", k ? "," : "", (long long)m->sizes[k]);
		printf("]\n        %s\n        %s\n", m->reason, m->solution);
	}
	return 0;
}

static int explain(struct store *st, const struct config *cfg, const struct device_info *di,
		   bool json)
{
	struct explain_ctx e = { json_array(), json, 0 };
	struct tcx_error err = { 0 };

	for (int p = 0; p < cfg->nproblems; p++) {
		char key[256];
		struct store_filter f = { di->name, key, NULL, -1 };
		enum tcx_status s;

		tune_problem_key(cfg->problems[p].type, key, sizeof(key));
		s = store_query(st, &f, explain_row, &e, &err);
		if (s) {
			json_decref(e.rows);
			return report(s, &err);
		}
	}
	if (json) {
		json_t *o = json_pack("{s:s,s:I,s:o}", "device", di->name, "count", (json_int_t)e.n,
				      "skipped_or_failed", e.rows);

		print_json(stdout, o);
		json_decref(o);
	} else {
		if (e.n == 0)
			printf("no skipped or failed candidates for these problems on %s\n", di->name);
		json_decref(e.rows);
	}
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	const char *devid = NULL, *db = NULL;
	char dbbuf[4096];
	struct tune_opts o;
	struct tune_summary sum;
	struct tune_ctx t;
	struct config *cfg = NULL;
	struct device *dev = NULL;
	struct store *store = NULL;
	struct tcx_error err = { 0 };
	bool do_explain = false, json = false;
	enum tcx_status st;
	int ret = 0, opt;
	int64_t v;

	tune_opts_default(&o);
	o.out_dir = "logic";
	memset(&sum, 0, sizeof(sum));
	while ((opt = cmd_getopt(&cmd_tune_def, argc, argv)) != -1) {
		switch (opt) {
		case 'd':
			devid = optarg;
			break;
		case 0x100:
			db = optarg;
			break;
		case 'o':
			o.out_dir = optarg;
			break;
		case 's':
			if (!strategy_parse(optarg, &o.strategy))
				return usage_error(&cmd_tune_def, "unknown strategy '%s'", optarg);
			break;
		case 'b':
			if ((ret = parse_count(optarg, "budget", 1, &v)))
				return ret;
			o.budget = v > 1000000 ? 1000000 : (int)v;
			break;
		case 0x101:
			if ((ret = parse_count(optarg, "seed", 0, &v)))
				return ret;
			o.seed = (uint64_t)v;
			o.bench.seed = (uint64_t)v;
			break;
		case 'f':
			o.force = true;
			break;
		case 'n':
			o.dry_run = true;
			break;
		case 0x102:
			do_explain = true;
			break;
		case 0x103:
			o.validate = false;
			break;
		case 0x104:
			if ((ret = parse_count(optarg, "min-reps", 1, &v)))
				return ret;
			o.bench.min_reps = (int)v;
			break;
		case 0x105:
			if (!parse_double(optarg, &o.bench.min_time) || o.bench.min_time < 0)
				return error("min-time '%s' is not a number of seconds", optarg),
				       TCX_EXIT_USAGE;
			break;
		case 0x106:
			if (!bench_timer_parse(optarg, &o.bench.timer))
				return usage_error(&cmd_tune_def, "unknown timer '%s'", optarg);
			break;
		case 0x107:
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "table"))
				return usage_error(&cmd_tune_def, "unknown format '%s'", optarg);
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return usage_error(&cmd_tune_def,
				   optind >= argc ? "missing the config file" : "too many arguments");
	if (o.dry_run && do_explain)
		return usage_error(&cmd_tune_def, "--dry-run and --explain cannot be combined");
	/* tuning reports each step as it goes, unless --quiet */
	tcx_log_set(log_line, NULL, verbosity < 0 ? TCX_LOG_ERROR
				    : verbosity > 1 ? TCX_LOG_DEBUG
						    : TCX_LOG_INFO);
	st = config_load(argv[optind], &cfg, &err);
	if (st)
		return report(st, &err);
	if (o.dry_run) {
		/* no device and no store: plan and count */
		struct device_info none;

		memset(&none, 0, sizeof(none));
		snprintf(none.name, sizeof(none.name), "(dry run)");
		memset(&t, 0, sizeof(t));
		t.di = &none;
		t.o = &o;
		t.sum = &sum;
		st = tune_config(&t, cfg, &err);
		ret = st ? report(st, &err) : 0;
		json_decref(sum.report);
		config_free(cfg);
		return ret;
	}
	ret = open_device(devid, &dev);
	if (ret)
		goto out;
	if (!db) {
		default_store_path(dbbuf, sizeof(dbbuf));
		db = dbbuf;
	}
	st = store_open(db, true, &store, &err);
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	if (do_explain) {
		ret = explain(store, cfg, device_info_of(dev), json);
		goto out;
	}
	if (stderr_is_tty() && verbosity >= 0) {
		o.progress = show_progress;
	}
	o.stop = &interrupted;
	memset(&t, 0, sizeof(t));
	t.dev = dev;
	t.di = device_info_of(dev);
	t.store = store;
	t.o = &o;
	t.sum = &sum;
	info("tuning %s on %s (%s); results in %s", argv[optind], t.di->id, t.di->name, db);
	st = tune_config(&t, cfg, &err);
	clear_progress();
	if (st == TCX_EINTR) {
		error("interrupted: %lld measurements are saved in %s; run the same command again to "
		      "resume",
		      (long long)sum.measured, db);
		ret = TCX_EXIT_INTR;
		goto out;
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	if (json) {
		json_t *o2 = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:i,s:f,s:O}", "config",
				       argv[optind], "device", t.di->id, "store", db, "measured",
				       (json_int_t)sum.measured, "reused", (json_int_t)sum.reused,
				       "skipped", (json_int_t)sum.skipped, "failed",
				       (json_int_t)sum.failed, "evaluations",
				       (json_int_t)sum.evaluations, "winners_dropped",
				       sum.winners_dropped, "seconds", sum.seconds, "problems",
				       sum.report);

		print_json(stdout, o2);
		json_decref(o2);
	} else {
		size_t i;
		json_t *r;

		printf("measured %lld, reused %lld from the store, skipped %lld, failed %lld in "
		       "%.1f s\n",
		       (long long)sum.measured, (long long)sum.reused, (long long)sum.skipped,
		       (long long)sum.failed, sum.seconds);
		json_array_foreach(sum.report, i, r)
		{
			json_t *lg = json_object_get(r, "logic");

			if (lg)
				printf("%s: %lld solution%s -> %s\n",
				       json_string_value(json_object_get(r, "problem_type")),
				       (long long)json_integer_value(json_object_get(r, "solutions")),
				       json_integer_value(json_object_get(r, "solutions")) == 1 ? ""
												: "s",
				       json_string_value(lg));
		}
	}
out:
	json_decref(sum.report);
	store_close(store);
	device_close(dev);
	config_free(cfg);
	return ret;
}

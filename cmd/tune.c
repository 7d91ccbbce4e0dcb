/* tune.c - `tcx tune`: find the fastest solutions for a config's problems,
 * or for an expression at the sizes given, on a device (Tensile's protocol,
 * a search strategy, or for an expression the model-first search of the
 * space tcx builds around the planner's choices), keep every measurement
 * in the results store, and write library logic. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "backend/backend.h"
#include "notation/notation.h"
#include "tune/mpi.h"
#include "tune/space.h"
#include "tune/tune.h"

/* An expression's budget when --budget does not give one, in seconds. */
#define EXPR_BUDGET_S 60

static const char *const tune_synopsis[] = {
	"tcx tune [--device <id> | --devices <ids>] [-j <n>] [--db <file>] [-o <dir>] "
	"[--strategy <s>] [--budget <n>] [--seed <n>] [--force] [--shard <k>/<n>] "
	"[--dry-run | --explain | --from-store] [--no-validate] [--race <n>] [--min-reps <n>] "
	"[--min-time <s>] [--timer <timer>] [--kernel-timeout <s>] [--strides <strides>] "
	"[--accuracy <e>] <config.yaml>",
	"tcx tune (--sizes <sizes> | --range <spec> | --exact <spec>)... [--type <t>] "
	"[--budget <n> | --budget <s>s] [<options>] <expr>",
	"mpirun -n <ranks> tcx tune [<options>] <config.yaml>",
	NULL,
};

static const struct cmd_option tune_options[] = {
	{ "device", 'd', required_argument, "<id>", "device id from 'tcx devices'", OV_DEVICE,
	  NULL },
	{ "devices", 0x108, required_argument, "<ids>",
	  "tune on several devices of one model at once: 'opencl:0:0,opencl:0:1' or all-gpus",
	  OV_NONE, NULL },
	{ "jobs", 'j', required_argument, "<n>",
	  "compile kernels on n host threads ahead of the devices (default 1)", OV_NONE, NULL },
	{ "shard", 0x109, required_argument, "<k>/<n>",
	  "measure only slice k of n; exit 5 while more rounds are needed (then 'tcx results "
	  "merge' and --from-store)",
	  OV_NONE, NULL },
	{ "from-store", 0x10a, no_argument, NULL,
	  "measure nothing: select winners and write logic from the store", OV_NONE, NULL },
	{ "db", 0x100, required_argument, "<file>",
	  "results store (default $XDG_CACHE_HOME/tcx/results.db)", OV_FILE, NULL },
	{ "output", 'o', required_argument, "<dir>",
	  "write library logic into this directory (default ./logic)", OV_DIR, NULL },
	{ "sizes", 's', required_argument, "<sizes>",
	  "an expression's sizes, 'i=64,j=32,...' or '64,32,...' (repeatable)", OV_NONE, NULL },
	{ "range", 'r', required_argument, "<spec>",
	  "an expression's sizes as a Tensile Range (repeatable)", OV_NONE, NULL },
	{ "exact", 'e', required_argument, "<spec>",
	  "an expression's exact sizes, one per index (repeatable)", OV_NONE, NULL },
	{ "type", 't', required_argument, "<t>",
	  "an expression's element type: s d c z h b (default s)", OV_ENUM, "s d c z h b" },
	{ "strategy", 0x10d, required_argument, "<s>",
	  "protocol (Tensile's, a config's default), model (an expression's default), "
	  "exhaustive, random, anneal or genetic",
	  OV_ENUM, "protocol model exhaustive random anneal genetic" },
	{ "budget", 'b', required_argument, "<n>",
	  "candidates to evaluate (random, anneal, genetic, model; default 32), or seconds "
	  "as '60s' (model; an expression's default)",
	  OV_NONE, NULL },
	{ "seed", 0x101, required_argument, "<n>", "seed of the search and of the data (default 1)",
	  OV_NONE, NULL },
	{ "force", 0x10c, no_argument, NULL, "measure again what the store already holds", OV_NONE,
	  NULL },
	{ "dry-run", 'n', no_argument, NULL,
	  "print the planned steps and candidate counts; run nothing", OV_NONE, NULL },
	{ "explain", 0x102, no_argument, NULL,
	  "list the candidates this device skipped or failed, and why", OV_NONE, NULL },
	{ "no-validate", 0x103, no_argument, NULL,
	  "do not validate the winners (not recommended)", OV_NONE, NULL },
	{ "race", 0x111, required_argument, "<n>",
	  "time each size's n fastest again side by side before choosing (default 4; 1: off)",
	  OV_NONE, NULL },
	{ "accuracy", 0x110, required_argument, "<e>",
	  "the relative error solutions may have: winners that miss it are dropped", OV_NONE,
	  NULL },
	{ "min-reps", 0x104, required_argument, "<n>", "timed launches per measurement (default 5)",
	  OV_NONE, NULL },
	{ "min-time", 0x105, required_argument, "<s>",
	  "seconds of timed launches per measurement (default 0.05)", OV_NONE, NULL },
	{ "timer", 0x106, required_argument, "<timer>", "event, wall or auto", OV_ENUM,
	  "auto event wall" },
	{ "format", 'f', required_argument, "<fmt>", "summary (and --explain) as table or json",
	  OV_ENUM, "table json" },
	{ "kernel-timeout", 0x10b, required_argument, "<s>",
	  "record a kernel that runs longer than s seconds as failed and go on (default: no "
	  "limit)",
	  OV_NONE, NULL },
	{ "strides", 0x10e, required_argument, "<strides>",
	  "views: strides for every size, 'A=[1,1040],C=[..]'", OV_NONE, NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const tune_examples[] = {
	"tcx tune share/examples/sgemm.yaml",
	"tcx tune 'ilk,jlk->ijk' --sizes i=512,j=512,k=8,l=512 --budget 120s -o logic/",
	"tcx tune 'C[ij]=A[ik]*B[kj]' --range '[64,64,1024],0,0' --budget 40 --dry-run",
	"tcx tune --dry-run tensile_config.yaml",
	"tcx tune --strategy random --budget 64 --seed 7 config.yaml -o logic/",
	"tcx tune --explain config.yaml",
	"tcx tune --devices all-gpus -j 8 config.yaml",
	"tcx tune --shard 2/3 --db part2.db config.yaml",
	"tcx results merge part1.db part2.db part3.db -o all.db && tcx tune --from-store --db all.db config.yaml",
	"mpirun -n 4 tcx tune config.yaml",
	NULL,
};

int cmd_tune(int argc, char **argv);
const struct cmd cmd_tune_def = {
	"tune", cmd_tune, tune_synopsis,
	"Tune solutions for a config's problems, or an expression's, and write library logic",
	tune_options, tune_examples, "file", CMD_NEEDS_DEVICE | CMD_INTERRUPTIBLE,
	NULL,
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

/* --strides against every size of the config before anything runs: its
 * Exact sizes, and for a Range the largest size of each index, where C's
 * elements are the furthest apart (model.h's problem_check_alias). */
static int check_config_strides(const struct config *cfg, const char *strides)
{
	for (int p = 0; strides && p < cfg->nproblems; p++) {
		const struct config_problem *cp = &cfg->problems[p];
		const int nidx = cp->type->nidx;

		for (int g = 0; g < cp->ngroups; g++)
			for (int ph = 0; ph < PH_COUNT; ph++)
				for (int k = 0; k < cp->groups[g].phase[ph].nsteps; k++) {
					const struct config_sizes *cs =
					    &cp->groups[g].phase[ph].steps[k].sizes;
					int64_t top[TCX_MAX_INDICES];
					int ret = check_strides(cp->type, strides, cs->exact,
								(size_t)cs->nexact);

					for (int r = 0; r < cs->nranges && !ret; r++) {
						const struct size_range *sr = &cs->ranges[r];

						for (int id = 0; id < nidx; id++) {
							int m = id, hops = 0;

							while (sr->e[m].is_map && hops++ < nidx)
								m = sr->e[m].map;
							top[id] = sr->e[m].is_map ? 1 : sr->e[m].max;
						}
						ret = check_strides(cp->type, strides, top, 1);
					}
					if (ret)
						return ret;
				}
	}
	return 0;
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
		   const char *strides, bool json)
{
	struct explain_ctx e = { json_array(), json, 0 };
	struct tcx_error err = { 0 };

	for (int p = 0; p < cfg->nproblems; p++) {
		char key[256];
		struct store_filter f = { di->name, key, NULL, -1 };
		enum tcx_status s;

		tune_problem_key(cfg->problems[p].type, strides, key, sizeof(key));
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

/* Opens the devices of --devices: ids, or all-gpus (the GPUs of the
 * backend the default device uses, so that a GPU is not counted twice). */
static int open_devices(const char *list, struct device **devs, int *n)
{
	struct tcx_error err = { 0 };
	enum tcx_status st;
	char buf[4096], *tok, *save = NULL;

	*n = 0;
	if (strcmp(list, "all-gpus") == 0 || strcmp(list, "all") == 0) {
		struct device_info *all;
		struct device *first;
		int count;
		char backend[16];

		st = device_open(NULL, &first, &err);
		if (st)
			return report(st, &err);
		snprintf(backend, sizeof(backend), "%s", device_info_of(first)->backend);
		device_close(first);
		st = devices_list(&all, &count, NULL, &err);
		if (st)
			return report(st, &err);
		for (int k = 0; k < count && *n < TUNE_MAX_DEVICES; k++) {
			if (strcmp(all[k].backend, backend) ||
			    (strcmp(list, "all-gpus") == 0 && all[k].type != DEV_GPU) ||
			    all[k].type == DEV_HOST)
				continue;
			st = device_open(all[k].id, &devs[*n], &err);
			if (st) {
				free(all);
				return report(st, &err);
			}
			(*n)++;
		}
		free(all);
		if (*n == 0)
			return error("no %s device found", strcmp(list, "all") ? "GPU" : "usable"),
			       TCX_EXIT_NODEV;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == TUNE_MAX_DEVICES)
			return error("more than %d devices", TUNE_MAX_DEVICES), TCX_EXIT_USAGE;
		st = device_open(tok, &devs[*n], &err);
		if (st)
			return report(st, &err);
		(*n)++;
	}
	return *n ? 0 : (error("--devices lists no device"), TCX_EXIT_USAGE);
}

/* --budget: a count of candidates ("40"), or seconds ("90s", "2.5s"). */
static int parse_budget(const char *text, struct tune_opts *o)
{
	size_t n = strlen(text);
	char num[64];
	int64_t count;
	double secs;

	if (n > 1 && n < sizeof(num) && text[n - 1] == 's') {
		memcpy(num, text, n - 1);
		num[n - 1] = '\0';
		if (common_parse_double(num, &secs) && isfinite(secs) && secs > 0 && secs <= 1e9) {
			o->budget_s = secs;
			return 0;
		}
	} else if (common_parse_i64(text, &count) && count >= 1) {
		o->budget = count > 1000000 ? 1000000 : (int)count;
		o->budget_s = 0;
		return 0;
	}
	error("budget '%s' is neither a count of candidates >= 1 ('40') nor a number of seconds > "
	      "0 ('60s')",
	      text);
	return TCX_EXIT_USAGE;
}

/* The space tcx built for an expression, in the order it is measured. */
static void print_space(const struct tune_space *sp, const struct config *cfg,
			const struct device_info *di, const struct tune_opts *o, bool json)
{
	const struct tcx_contraction *c = cfg->problems[0].type;
	char name[256];

	if (json) {
		json_t *arr = json_array(), *doc;

		for (int k = 0; k < sp->n; k++) {
			const struct space_entry *e = &sp->v[k];

			solution_name(&e->sol, name, sizeof(name));
			json_array_append_new(
				arr, json_pack("{s:i,s:o,s:i,s:s,s:s,s:o}", "rank", k + 1,
					       "predicted_ms", json_num(e->predicted_s * 1e3), "seed",
					       e->seed + 1, "move", e->move, "solution", name,
					       "parameters", solution_to_json(&e->sol)));
		}
		doc = json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:o,s:o,s:o}", "expression", c->expr,
				"device", di->name, "listed", sp->listed, "valid", sp->valid,
				"seeds", sp->nseeds, "ranked_sizes", sp->nsizes, "budget_candidates",
				o->budget_s > 0 ? json_null() : json_integer(o->budget),
				"budget_seconds", o->budget_s > 0 ? json_real(o->budget_s) : json_null(),
				"candidates", arr);
		print_json(stdout, doc);
		json_decref(doc);
		return;
	}
	printf("%s on %s: %d candidate%s around the planner's first %d (the device takes %d of "
	       "the %d it lists), ranked by the model over %d size%s\n",
	       c->expr, di->name, sp->n, sp->n == 1 ? "" : "s", sp->nseeds, sp->valid,
	       sp->listed, sp->nsizes, sp->nsizes == 1 ? "" : "s");
	if (o->strategy != STRAT_MODEL)
		printf("searched by the %s strategy\n", strategy_name(o->strategy));
	else if (o->budget_s > 0)
		printf("measured in this order until %g s are spent\n", o->budget_s);
	else if (o->budget < sp->n)
		printf("measured in this order, the first %d\n", o->budget);
	else
		printf("measured in this order, all %d (the budget is %d)\n", sp->n, o->budget);
	printf("%5s %13s  %-22s %s\n", "rank", "predicted_ms", "from", "solution");
	for (int k = 0; k < sp->n; k++) {
		const struct space_entry *e = &sp->v[k];
		char from[64];

		solution_name(&e->sol, name, sizeof(name));
		if (strcmp(e->move, "planner") == 0)
			snprintf(from, sizeof(from), "planner #%d", e->seed + 1);
		else
			snprintf(from, sizeof(from), "#%d %s", e->seed + 1, e->move);
		printf("%5d %13.4f  %-22s %s\n", k + 1, e->predicted_s * 1e3, from, name);
	}
}

/* The positional argument as an expression, when no file of that name
 * exists: its contraction (two inputs, of --type), or an exit code with a
 * message that gives both readings. */
static int load_expression(const char *arg, const char *type, struct tcx_contraction **out)
{
	enum tcx_dtype dt = TCX_DTYPE_S;
	struct tcx_error perr = { 0 };

	*out = NULL;
	if (type && !dtype_parse(type, &dt))
		return option_value_error(&cmd_tune_def, 't', "element type", type);
	if (notation_parse(arg, dt, LAYOUT_BY_STYLE, out, &perr) != TCX_OK) {
		error("'%s' is neither a config file (cannot open '%s': %s) nor an expression (%s)",
		      arg, arg, strerror(ENOENT), perr.msg);
		return TCX_EXIT_USAGE;
	}
	if ((*out)->implicit_b) {
		error("expression '%s' has one input tensor: tuning and library logic take two "
		      "(tcx run, validate and bench compute it)",
		      arg);
		contraction_free(*out);
		*out = NULL;
		return TCX_EXIT_USAGE;
	}
	return 0;
}

/* An expression's config: its sizes from --sizes, --exact and --range. */
static int expression_config(struct tcx_contraction *c, const char *arg, const char **exacts,
			     int ne, const char **ranges, int nr, struct config **out)
{
	struct tcx_error err = { 0 };
	struct size_range *r = calloc((size_t)(nr ? nr : 1), sizeof(*r));
	int64_t *ex = calloc((size_t)(ne ? ne : 1) * (size_t)c->nidx, sizeof(*ex));
	enum tcx_status st = TCX_OK;

	if (!r || !ex) {
		st = tcx_fail(&err, TCX_ENOMEM, "out of memory");
		contraction_free(c);
		goto out;
	}
	for (int k = 0; k < nr && !st; k++)
		st = size_range_parse_for(c, ranges[k], &r[k], &err);
	for (int k = 0; k < ne && !st; k++)
		st = size_exact_parse_for(c, exacts[k], ex + (size_t)k * (size_t)c->nidx, &err);
	if (st)
		contraction_free(c);
	else
		st = config_from_expr(c, arg, r, nr, ex, ne, out, &err);
out:
	free(r);
	free(ex);
	return st ? report(st, &err) : 0;
}

/* complete: false when a shard stopped at a step other shards' measurements
 * are still missing from (another round is needed). */
static void print_summary(const struct tune_summary *sum, const char *cfg,
			  const struct device_info *di, const char *db, bool json, bool complete)
{
	if (json) {
		json_t *o2 = json_pack("{s:s,s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:i,s:f,s:O}",
				       "config", cfg, "device", di->id, "store", db, "complete",
				       complete, "measured",
				       (json_int_t)sum->measured, "reused", (json_int_t)sum->reused,
				       "skipped", (json_int_t)sum->skipped, "failed",
				       (json_int_t)sum->failed, "evaluations",
				       (json_int_t)sum->evaluations, "winners_dropped",
				       sum->winners_dropped, "seconds", sum->seconds, "problems",
				       sum->report);

		print_json(stdout, o2);
		json_decref(o2);
	} else {
		size_t i;
		json_t *r;

		printf("%s: measured %lld, reused %lld from the store, skipped %lld, failed %lld "
		       "in %.1f s\n",
		       di->name, (long long)sum->measured, (long long)sum->reused,
		       (long long)sum->skipped, (long long)sum->failed, sum->seconds);
		json_array_foreach(sum->report, i, r)
		{
			json_t *lg = json_object_get(r, "logic");
			json_int_t ns = json_integer_value(json_object_get(r, "solutions"));

			if (lg)
				printf("%s: %lld solution%s -> %s\n",
				       json_string_value(json_object_get(r, "problem_type")),
				       (long long)ns, ns == 1 ? "" : "s", json_string_value(lg));
		}
	}
}

int cmd_tune(int argc, char **argv)
{
	const char *devid = NULL, *devlist = NULL, *db = NULL;
	char dbbuf[4096];
	struct tune_opts o;
	struct tune_summary sum;
	struct tune_ctx t;
	struct config *cfg = NULL;
	struct device *devs[TUNE_MAX_DEVICES];
	int ndev = 0;
	struct store *store = NULL;
	struct tcx_error err = { 0 };
	struct tune_mpi *mpi = NULL;
	struct tcx_contraction *expr = NULL;
	struct tune_space space = { 0 };
	const char **exacts = NULL, **ranges = NULL, *type = NULL, *target;
	int ne = 0, nr = 0;
	struct stat sb;
	bool is_expr = false, budget_given = false, strategy_given = false;
	bool do_explain = false, json = false, rank0 = true;
	enum tcx_status st = TCX_OK;
	int ret = 0, opt;
	int64_t v;
	double kernel_timeout = 0;

	tune_opts_default(&o);
	o.out_dir = "logic";
	o.jobs = 1;
	memset(&sum, 0, sizeof(sum));
#ifdef TCX_WITH_MPI
	if (tune_mpi_requested()) {
		st = tune_mpi_start(&argc, &argv, &mpi, &err);
		if (st)
			return report(st, &err);
		rank0 = mpi->rank == 0;
		optind = 0;
	}
#else
	if (getenv("OMPI_COMM_WORLD_SIZE") && atoi(getenv("OMPI_COMM_WORLD_SIZE")) > 1)
		return error("this tcx was built without MPI (TCX_WITH_MPI): under mpirun every "
			     "rank would tune alone"),
		       TCX_EXIT_USAGE;
#endif
	exacts = calloc((size_t)argc + 1, sizeof(*exacts));
	ranges = calloc((size_t)argc + 1, sizeof(*ranges));
	if (!exacts || !ranges) {
		error("out of memory");
		ret = TCX_EXIT_RUNTIME;
		goto out;
	}
	while ((opt = cmd_getopt(&cmd_tune_def, argc, argv)) != -1) {
		switch (opt) {
		case 's':
		case 'e':
			exacts[ne++] = optarg;
			break;
		case 'r':
			ranges[nr++] = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case 'd':
			devid = optarg;
			break;
		case 0x108:
			devlist = optarg;
			break;
		case 'j':
			if ((ret = parse_count(optarg, "jobs", 1, &v)))
				goto out;
			o.jobs = v > TUNE_MAX_JOBS ? TUNE_MAX_JOBS : (int)v;
			break;
		case 0x109: {
			int k = 0, n = 0;
			char extra;

			if (sscanf(optarg, "%d/%d%c", &k, &n, &extra) != 2 || n < 1 || k < 1 || k > n) {
				ret = usage_error(&cmd_tune_def, "bad shard '%s': expected K/N with 1 <= K <= N",
						  optarg);
				goto out;
			}
			o.shard_k = k - 1;
			o.shard_n = n;
			break;
		}
		case 0x10a:
			o.from_store = true;
			break;
		case 0x111:
			if ((ret = parse_count(optarg, "race", 1, &v)))
				goto out;
			o.race = v > BENCH_MAX_RACE ? BENCH_MAX_RACE : (int)v;
			break;
		case 0x100:
			db = optarg;
			break;
		case 'o':
			o.out_dir = optarg;
			break;
		case 0x10d:
			if (!strategy_parse(optarg, &o.strategy)) {
				ret = option_value_error(&cmd_tune_def, 0x10d, "strategy", optarg);
				goto out;
			}
			strategy_given = true;
			break;
		case 'b':
			if ((ret = parse_budget(optarg, &o)))
				goto out;
			budget_given = true;
			break;
		case 0x101:
			if ((ret = parse_count(optarg, "seed", 0, &v)))
				goto out;
			o.seed = (uint64_t)v;
			o.bench.seed = (uint64_t)v;
			break;
		case 0x10c:
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
		case 0x110:
			if ((ret = parse_accuracy(optarg, &o.accuracy)))
				goto out;
			break;
		case 0x104:
			if ((ret = parse_count(optarg, "min-reps", 1, &v)))
				goto out;
			if (v > BENCH_MAX_REPS) {
				ret = error("min-reps '%s' is more than %d, the most launches a "
					    "measurement makes",
					    optarg, BENCH_MAX_REPS);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			o.bench.min_reps = (int)v;
			o.cli_min_reps = true;
			break;
		case 0x105:
			if (!common_parse_double(optarg, &o.bench.min_time) ||
			    !isfinite(o.bench.min_time) || o.bench.min_time < 0) {
				ret = error("min-time '%s' is not a number of seconds", optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			o.cli_min_time = true;
			break;
		case 0x106:
			if (!bench_timer_parse(optarg, &o.bench.timer)) {
				ret = option_value_error(&cmd_tune_def, 0x106, "timer", optarg);
				goto out;
			}
			o.cli_timer = true;
			break;
		case 0x10b:
			if (!common_parse_double(optarg, &kernel_timeout) ||
			    !(kernel_timeout > 0) || kernel_timeout > 1e9) {
				ret = error("kernel-timeout '%s' is not a positive number of seconds",
					    optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			break;
		case 0x10e:
			o.strides = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "json")) {
				json = true;
			} else if (strcmp(optarg, "table")) {
				ret = option_value_error(&cmd_tune_def, 'f', "format", optarg);
				goto out;
			}
			break;
		case 'h':
			goto out;
		default:
			ret = TCX_EXIT_USAGE;
			goto out;
		}
	}
	if (optind + 1 != argc) {
		ret = usage_error(&cmd_tune_def, optind >= argc
							 ? "missing the config file (or the expression)"
							 : "too many arguments");
		goto out;
	}
	/* a file of that name (or "-", standard input) is a config; anything
	 * else is read as an expression */
	target = argv[optind];
	is_expr = strcmp(target, "-") != 0 && stat(target, &sb) != 0 &&
		  (errno == ENOENT || errno == ENOTDIR);
	if (!is_expr && (ne || nr || type)) {
		ret = usage_error(&cmd_tune_def, "--sizes, --range, --exact and --type are for an "
				  "expression: config '%s' gives its own ProblemSizes and DataType",
				  target);
		goto out;
	}
	if (!is_expr && (o.strategy == STRAT_MODEL || o.budget_s > 0)) {
		ret = usage_error(&cmd_tune_def,
				  "%s is for an expression (tcx tune EXPR): a config's space has no "
				  "model order, and its strategies count candidates",
				  o.budget_s > 0 ? "a budget in seconds" : "--strategy model");
		goto out;
	}
	if (is_expr) {
		if ((ret = load_expression(target, type, &expr)))
			goto out;
		if (ne + nr == 0) {
			ret = usage_error(&cmd_tune_def,
					  "expression '%s' needs its sizes: --sizes, --range or --exact",
					  target);
			goto out;
		}
		if (!strategy_given)
			o.strategy = STRAT_MODEL;
		if (o.strategy == STRAT_PROTOCOL) {
			ret = usage_error(&cmd_tune_def,
					  "--strategy protocol needs a config's steps: an expression takes "
					  "model (the default), exhaustive, random, anneal or genetic");
			goto out;
		}
		if (o.budget_s > 0 && o.strategy != STRAT_MODEL) {
			ret = usage_error(&cmd_tune_def, "a budget in seconds is for the model "
					  "strategy; the %s strategy counts candidates",
					  strategy_name(o.strategy));
			goto out;
		}
		/* seconds, on this process's clock; where several processes
		 * must decide alike, the strategies' count */
		if (!budget_given && o.strategy == STRAT_MODEL && o.shard_n <= 1 && !o.from_store &&
		    !mpi)
			o.budget_s = EXPR_BUDGET_S;
		if (o.budget_s > 0 && (o.shard_n > 1 || o.from_store || mpi)) {
			ret = usage_error(&cmd_tune_def,
					  "a budget in seconds runs on this process's clock: with "
					  "--shard, --from-store or mpirun give a count (--budget 64)");
			goto out;
		}
	}
	if ((o.dry_run + do_explain + o.from_store) > 1) {
		ret = usage_error(&cmd_tune_def,
				  "--dry-run, --explain and --from-store cannot be combined");
		goto out;
	}
	if (devid && devlist) {
		ret = usage_error(&cmd_tune_def, "--device and --devices cannot be combined");
		goto out;
	}
	if (o.accuracy > 0 && !o.validate) {
		ret = usage_error(&cmd_tune_def, "--accuracy is checked by validating the winners: "
						 "no --no-validate");
		goto out;
	}
	if (o.from_store && (o.shard_n > 1 || o.force)) {
		ret = usage_error(&cmd_tune_def, "--from-store measures nothing: no --shard or --force");
		goto out;
	}
	if (o.shard_n > 1 && o.force) {
		/* a shard that ignored the store would measure its slice of the
		 * first step round after round */
		ret = usage_error(&cmd_tune_def,
				  "--shard builds on the rounds before it in the store: no --force");
		goto out;
	}
	/* tuning reports each step as it goes, unless --quiet (other MPI ranks:
	 * only with -v) */
	tcx_log_set(log_line, NULL,
		    verbosity < 0 || (!rank0 && verbosity < 1) ? TCX_LOG_ERROR
		    : verbosity > 1			       ? TCX_LOG_DEBUG
							       : TCX_LOG_INFO);
	if (is_expr) {
		ret = expression_config(expr, target, exacts, ne, ranges, nr, &cfg);
		expr = NULL; /* the config's, or freed */
		if (ret)
			goto out;
	} else {
		st = config_load(target, &cfg, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	ret = check_config_strides(cfg, o.strides);
	if (ret)
		goto out;
	if (o.dry_run && is_expr) {
		/* no store, but the device: the space is what it allows */
		ret = open_device(devid, &devs[0]);
		if (ret)
			goto out;
		ndev = 1;
		st = tune_space_attach(cfg, device_info_of(devs[0]), SPACE_SEEDS, o.accuracy, &space,
				       &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		print_space(&space, cfg, device_info_of(devs[0]), &o, json);
		memset(&t, 0, sizeof(t));
		t.di = device_info_of(devs[0]);
		t.o = &o;
		t.sum = &sum;
		st = tune_config(&t, cfg, &err);
		ret = st ? report(st, &err) : 0;
		goto out;
	}
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
		goto out;
	}
	if (devlist) {
		ret = open_devices(devlist, devs, &ndev);
	} else if (mpi && !devid) {
		/* one device per rank: the node-local rank picks among the GPUs */
		char id[64];
		struct device_info *all;
		int count, gpus = 0, pick = -1;

		st = devices_list(&all, &count, NULL, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		for (int k = 0; k < count; k++)
			gpus += all[k].type == DEV_GPU && !strcmp(all[k].backend, all[0].backend);
		for (int k = 0, g = 0; k < count && gpus; k++)
			if (all[k].type == DEV_GPU && !strcmp(all[k].backend, all[0].backend) &&
			    g++ == mpi->local_rank % gpus)
				pick = k;
		snprintf(id, sizeof(id), "%s", pick >= 0 ? all[pick].id : "");
		free(all);
		ret = open_device(id[0] ? id : NULL, &devs[0]);
		ndev = ret ? 0 : 1;
	} else {
		ret = open_device(devid, &devs[0]);
		ndev = ret ? 0 : 1;
	}
	if (ret)
		goto out;
	for (int k = 1; k < ndev; k++)
		if (strcmp(device_info_of(devs[k])->name, device_info_of(devs[0])->name)) {
			ret = error("--devices mixes models ('%s' and '%s'): results and logic are per "
				    "model; tune each model on its own",
				    device_info_of(devs[0])->name, device_info_of(devs[k])->name);
			ret = TCX_EXIT_USAGE;
			goto out;
		}
	for (int k = 0; k < ndev && kernel_timeout > 0; k++) {
		st = device_set_kernel_timeout(devs[k], kernel_timeout, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (!db) {
		default_store_path(dbbuf, sizeof(dbbuf));
		db = dbbuf;
	}
	if (rank0) {
		st = store_open(db, true, &store, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (do_explain) {
		ret = rank0 ? explain(store, cfg, device_info_of(devs[0]), o.strides, json) : 0;
		goto out;
	}
	if (is_expr) {
		st = tune_space_attach(cfg, device_info_of(devs[0]), SPACE_SEEDS, o.accuracy, &space,
				       &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		if (rank0)
			info("%d candidates around the planner's first %d, in the model's order",
			     space.n, space.nseeds);
	}
	if (stderr_is_tty() && verbosity >= 0 && rank0)
		o.progress = show_progress;
	o.stop = &interrupted;
	memset(&t, 0, sizeof(t));
	t.dev = devs[0];
	t.di = device_info_of(devs[0]);
	for (int k = 0; k < ndev; k++)
		t.devs[k] = devs[k];
	t.ndev = ndev;
	t.store = store;
	t.o = &o;
	t.sum = &sum;
	t.mpi = mpi;
	t.shard_k = o.shard_k;
	t.shard_n = o.shard_n;
	if (rank0)
		info("tuning %s on %s%s (%s)%s; results in %s", target, t.di->id,
		     ndev > 1 ? " and more" : "", t.di->name,
		     mpi ? " across MPI ranks" : "", db);
	st = tune_config(&t, cfg, &err);
	clear_progress();
	if (st == TCX_EINTR) {
		error("interrupted: %lld measurements are saved in %s; run the same command again to "
		      "resume",
		      (long long)sum.measured, db);
		ret = TCX_EXIT_INTR;
		goto out;
	}
	if (st == TCX_EINCOMPLETE && o.shard_n > 1) {
		/* a shard that has measured its slice: not a failure, but not
		 * the end either; its own exit code tells a script to merge the
		 * stores and run another round */
		if (rank0) {
			info("%s", err.msg);
			print_summary(&sum, target, t.di, db, json, false);
		}
		ret = TCX_EXIT_INCOMPLETE;
		goto out;
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	if (rank0)
		print_summary(&sum, target, t.di, db, json, true);
out:
	tune_space_release(&space);
	contraction_free(expr);
	free(exacts);
	free(ranges);
	json_decref(sum.report);
	store_close(store);
	for (int k = 0; k < ndev; k++)
		device_close(devs[k]);
	config_free(cfg);
#ifdef TCX_WITH_MPI
	/* a rank failing alone would leave the others waiting: abort the job
	 * (every rank of a shard reaches the same incomplete step) */
	if (mpi)
		tune_mpi_stop(ret != 0 && ret != TCX_EXIT_INTR && ret != TCX_EXIT_INCOMPLETE);
#endif
	return ret;
}

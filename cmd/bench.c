/* bench.c - `tcx bench`: time a solution (or two, interleaved) over problem
 * sizes and report time, GFLOP/s, GB/s and the fraction of peak as a table,
 * CSV or JSON, with an SVG plot, recording each measurement in the results
 * store as `tcx tune` does; gate the results against a baseline; or compare
 * two earlier results files side by side. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "backend/backend.h"
#include "backend/kcache.h"
#include "bench/bench.h"
#include "bench/peak.h"
#include "bench/results.h"
#include "bench/svg.h"
#include "logic/logic.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "run/run.h"
#include "store/store.h"
#include "tune/tune.h"

static const char *const bench_synopsis[] = {
	"tcx bench (--range <spec> | --exact <spec>)... [--type <t>] [--device <id>] "
	"[--params <params> | --solution <file> | --logic <file>] "
	"[--versus <params> | --versus-logic <file>] "
	"[--min-reps <n>] [--min-time <s>] [--timer <timer>] [--flush <flush>] [--seed <n>] "
	"[--peak-gflops <n>] [--baseline <file> [--max-regression <x>]] [--no-cache] "
	"[--kernel-timeout <s>] [--strides <strides>] [--db <file> | --no-store] "
	"[--accuracy <e>] [--format <fmt>] [-o <file>] [--plot <file>] <expr>",
	"tcx bench --compare [--max-regression <x>] [--format <fmt>] [-o <file>] [--plot <file>] "
	"<a.json> <b.json>",
	NULL,
};

enum {
	OPT_SOLUTION = 0x100,
	OPT_MIN_REPS,
	OPT_MIN_TIME,
	OPT_TIMER,
	OPT_FLUSH,
	OPT_SEED,
	OPT_VERSUS,
	OPT_VERSUS_LOGIC,
	OPT_COMPARE,
	OPT_BASELINE,
	OPT_MAX_REGRESSION,
	OPT_PEAK,
	OPT_PLOT,
	OPT_NO_CACHE,
	OPT_LOGIC,
	OPT_KERNEL_TIMEOUT,
	OPT_STRIDES,
	OPT_DB,
	OPT_NO_STORE,
	OPT_ACCURACY,
};

static const struct cmd_option bench_options[] = {
	{ "range", 'r', required_argument, "<spec>", "a Tensile Range of sizes (repeatable)",
	  OV_NONE, NULL },
	{ "exact", 'e', required_argument, "<spec>", "one exact size per index (repeatable)",
	  OV_NONE, NULL },
	{ "type", 't', required_argument, "<t>", "element type: s d c z h b (default s)", OV_ENUM,
	  "s d c z h b" },
	{ "device", 'd', required_argument, "<id>", "device id from 'tcx devices'", OV_DEVICE,
	  NULL },
	{ "params", 'p', required_argument, "<params>",
	  "solution parameters over the built-in default", OV_NONE, NULL },
	{ "solution", OPT_SOLUTION, required_argument, "<file>", "solution parameters from a file",
	  OV_FILE, NULL },
	{ "logic", OPT_LOGIC, required_argument, "<file>",
	  "per size, the solution a library logic file selects (none: rejected)", OV_FILE, NULL },
	{ "versus", OPT_VERSUS, required_argument, "<params>",
	  "also time these parameters, interleaved; report the paired ratio versus/first",
	  OV_NONE, NULL },
	{ "versus-logic", OPT_VERSUS_LOGIC, required_argument, "<file>",
	  "or the solution a logic file selects per size, in its form, as --versus times it",
	  OV_FILE, NULL },
	{ "min-reps", OPT_MIN_REPS, required_argument, "<n>",
	  "time at least n launches (default 10)", OV_NONE, NULL },
	{ "min-time", OPT_MIN_TIME, required_argument, "<s>",
	  "and at least s seconds of them (default 0.2)", OV_NONE, NULL },
	{ "timer", OPT_TIMER, required_argument, "<timer>",
	  "event, wall or auto (default: event on GPUs, wall on CPUs)", OV_ENUM,
	  "auto event wall" },
	{ "flush", OPT_FLUSH, required_argument, "<flush>",
	  "rotate inputs / flush the cache when they fit in it: auto, on, off", OV_ENUM,
	  "auto on off" },
	{ "seed", OPT_SEED, required_argument, "<n>", "random seed of the inputs (default 1)",
	  OV_NONE, NULL },
	{ "peak-gflops", OPT_PEAK, required_argument, "<n>",
	  "peak GFLOP/s for the fraction of peak (default: 'tcx devices --measure')", OV_NONE,
	  NULL },
	{ "baseline", OPT_BASELINE, required_argument, "<file>",
	  "earlier JSON results: exit 1 if a size got slower (see --max-regression)", OV_FILE,
	  NULL },
	{ "max-regression", OPT_MAX_REGRESSION, required_argument, "<x>",
	  "slowdown tolerated beyond the intervals: 5% or 0.05 (default 5%)", OV_NONE, NULL },
	{ "compare", OPT_COMPARE, no_argument, NULL,
	  "compare two results files <a.json> <b.json> instead of running", OV_NONE, NULL },
	{ "no-cache", OPT_NO_CACHE, no_argument, NULL,
	  "skip the on-disk kernel cache (also TCX_NO_KERNEL_CACHE=1)", OV_NONE, NULL },
	{ "kernel-timeout", OPT_KERNEL_TIMEOUT, required_argument, "<s>",
	  "give up on a kernel that runs longer than s seconds: its size fails, the run goes "
	  "on (default: no limit)",
	  OV_NONE, NULL },
	{ "db", OPT_DB, required_argument, "<file>",
	  "results store (default $XDG_CACHE_HOME/tcx/results.db)", OV_FILE, NULL },
	{ "no-store", OPT_NO_STORE, no_argument, NULL,
	  "record nothing in the results store", OV_NONE, NULL },
	{ "format", 'f', required_argument, "<fmt>",
	  "table, csv or json (default: table, or by -o's extension)", OV_ENUM,
	  "table csv json" },
	{ "output", 'o', required_argument, "<file>", "write the results to a file", OV_FILE,
	  NULL },
	{ "plot", OPT_PLOT, required_argument, "<file>",
	  "draw GFLOP/s against problem size into an SVG file", OV_FILE, NULL },
	{ "layout", 'l', required_argument, "<layout>", "first-fastest or last-fastest", OV_ENUM,
	  "first-fastest last-fastest" },
	{ "strides", OPT_STRIDES, required_argument, "<strides>",
	  "views: strides for every size, 'A=[1,1040],C=[..]'", OV_NONE, NULL },
	{ "accuracy", OPT_ACCURACY, required_argument, "<e>",
	  "the relative error results may have: each size's kernel is checked first", OV_NONE,
	  NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const bench_examples[] = {
	"tcx bench 'C[ij]=A[ik]*B[jk]' --range '[64,64,1024],0,0' --plot gemm.svg",
	"tcx bench 'C[ijk]=A[ilk]*B[jlk]' --exact 1024,1024,64,1024 --format json -o new.json",
	"tcx bench 'C[ij]=A[ik]*B[jk]' --exact 1024,1024,1024 --params 'ThreadTile=[32,8]' "
	"--versus 'ThreadTile=[16,8]'",
	"tcx bench 'C[ij]=A[ik]*B[jk]' --range '[256,256,1024],0,0' --baseline old.json "
	"--max-regression 5%",
	"tcx bench 'C[ijk]=A[ilk]*B[jlk]' --exact 512,512,64,512 --versus-logic tuned.yaml",
	"tcx bench --compare old.json new.json --plot old-vs-new.svg",
	NULL,
};

int cmd_bench(int argc, char **argv);
const struct cmd cmd_bench_def = {
	"bench", cmd_bench, bench_synopsis,
	"Time solutions over problem sizes, gate regressions, compare runs", bench_options,
	bench_examples, "expr",
	CMD_NEEDS_DEVICE | CMD_INTERRUPTIBLE,
	NULL,
};

#define BENCH_SIZES_LIMIT 1000000
#define DEFAULT_MAX_REGRESSION 0.05

/* Everything the options say. */
struct bench_cli {
	const char *type, *layout, *devid, *params, *solfile, *logic, *versus, *vlogic;
	const char *outpath, *plot, *baseline, *strides, *db;
	const char **ranges, **exacts;
	int nr, ne;
	enum out_format fmt;
	bool fmt_given, compare, no_cache, threshold_given, no_store;
	double threshold, peak, kernel_timeout;
	double accuracy;        /* --accuracy; 0 when not given */
	struct bench_opts o;
};

/* A JSON number, or null for NaN and infinities (which JSON lacks). */
static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A CSV field: a number, or empty when it is not finite. */
static void csv_num(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.6g", v);
}

/* A CSV field in double quotes when it needs them (RFC 4180). */
static void csv_str(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- one size's record ---------------------------------------------------- */

/* The figures of one timed solution into o. */
static void figures_json(json_t *o, const struct bench_result *r, double peak, bool ok)
{
	json_object_set_new(o, "median_ms", jnum(ok ? r->median_ms : NAN));
	json_object_set_new(o, "ci_lo_ms", jnum(ok ? r->ci_lo_ms : NAN));
	json_object_set_new(o, "ci_hi_ms", jnum(ok ? r->ci_hi_ms : NAN));
	json_object_set_new(o, "min_ms", jnum(ok ? r->min_ms : NAN));
	json_object_set_new(o, "max_ms", jnum(ok ? r->max_ms : NAN));
	json_object_set_new(o, "event_ms", jnum(ok ? r->event_median_ms : NAN));
	json_object_set_new(o, "wall_ms", jnum(ok ? r->wall_median_ms : NAN));
	json_object_set_new(o, "gflops", jnum(ok ? r->gflops : NAN));
	json_object_set_new(o, "gbs", jnum(ok ? r->gbs : NAN));
	if (peak > 0)
		json_object_set_new(o, "peak_fraction", jnum(ok ? r->gflops / peak : NAN));
	json_object_set_new(o, "reps", json_integer(ok ? r->reps : 0));
	json_object_set_new(o, "timer", json_string(ok && r->timer ? r->timer : ""));
	json_object_set_new(o, "compile_s", jnum(ok ? r->compile_s : NAN));
	json_object_set_new(o, "first_launch_ms", jnum(ok ? r->first_ms : NAN));
	json_object_set_new(o, "input_sets", json_integer(ok ? r->sets : 0));
	json_object_set_new(o, "flushed", json_boolean(ok && r->flushed));
}

/* How a size's program was obtained, from the device's counters. */
static const char *kernel_origin(const struct device_cache_stats *before,
				 const struct device_cache_stats *after)
{
	if (after->builds > before->builds)
		return "build";
	if (after->disk_hits > before->disk_hits)
		return "disk";
	if (after->memory_hits > before->memory_hits)
		return "memory";
	return "";
}

/* One timed solution of one size. */
struct timed {
	struct solution sol;     /* as given; the plan's resolved one when prepared */
	struct bench_result r;
	const char *status;      /* "ok", "rejected", "failed" */
	enum tcx_status code;    /* the status it comes from */
	char reason[TCX_ERROR_SIZE];
	char key[1024], name[256];
	const char *origin;
	char path[16];           /* planned: "direct", or "TTGT:" and the tensors permuted */
};

/* Statuses that mean "this size cannot run this solution": go on. */
static const char *size_status(enum tcx_status st)
{
	switch (st) {
	case TCX_OK:
		return "ok";
	case TCX_EREJECT:
	case TCX_ELIMIT:
	case TCX_EUNSUPPORTED:
		return "rejected";
	case TCX_EBUILD:
	case TCX_ELAUNCH:
	case TCX_EDEVICE:
	case TCX_ETIMEOUT:
		return "failed";
	default:
		return NULL;
	}
}

/* Sets t's status from st, one of size_status's, with its reason. */
static void timed_status(struct timed *t, enum tcx_status st, const char *reason)
{
	t->status = size_status(st);
	t->code = st;
	snprintf(t->reason, sizeof(t->reason), "%s", st ? reason : "");
}

static void timed_json(json_t *o, const struct timed *t, double peak)
{
	bool ok = strcmp(t->status, "ok") == 0;

	json_object_set_new(o, "status", json_string(t->status));
	if (!ok)
		json_object_set_new(o, "reason", json_string(t->reason));
	figures_json(o, &t->r, peak, ok);
	json_object_set_new(o, "kernel", json_string(t->origin));
	json_object_set_new(o, "solution_name", json_string(t->name));
	json_object_set_new(o, "solution", json_string(t->key));
}

/* ---- run mode --------------------------------------------------------------- */

struct run_ctx {
	struct bench_cli *cli;
	struct tcx_contraction *c;
	struct device *dev;
	struct solution sol, vsol;
	bool planning;           /* the planner picks each size's solution */
	struct logic *lg;        /* --logic, else NULL */
	struct logic *vlg;       /* --versus-logic, else NULL */
	double peak;             /* for this element type; 0 when unknown */
	FILE *fp;
	json_t *rows;
	struct progress pg;
	struct store *store;     /* where measurements go; NULL: nowhere */
	char db[4096];           /* its path */
	int stored;              /* rows written to it */
	bool store_used;         /* it was opened (rows may have gone there) */
	int store_ret;           /* the exit code of an explicit --db that failed */
};

/* Whether a second side is timed beside the first (--versus or
 * --versus-logic). */
static bool paired(const struct run_ctx *x)
{
	return x->cli->versus || x->cli->vlogic;
}

static void table_header(const struct run_ctx *x)
{
	const struct tcx_contraction *c = x->c;

	for (int id = 0; id < c->nidx; id++)
		fprintf(x->fp, "%7s ", c->idx[id].name);
	if (paired(x)) {
		fprintf(x->fp, "%11s %11s %7s %15s %9s %9s %5s\n", "first_ms", "versus_ms", "ratio",
			"ratio_95%_ci", "GFLOP/s", "vsGFLOP/s", "reps");
		return;
	}
	fprintf(x->fp, "%11s %11s %11s %9s %9s ", "median_ms", "ci_lo", "ci_hi", "GFLOP/s", "GB/s");
	if (x->peak > 0)
		fprintf(x->fp, "%6s ", "%peak");
	fprintf(x->fp, "%5s %6s%s\n", "reps", "timer", x->planning ? "  path" : "");
}

static void csv_header(const struct run_ctx *x)
{
	for (int id = 0; id < x->c->nidx; id++)
		fprintf(x->fp, "size_%s,", x->c->idx[id].name);
	fprintf(x->fp, "median_ms,ci_lo_ms,ci_hi_ms,min_ms,max_ms,event_ms,wall_ms,gflops,gbs,"
		       "reps,timer,compile_s,first_launch_ms,status,solution,peak_fraction,kernel,"
		       "solution_name,reason");
	if (paired(x))
		fprintf(x->fp, ",versus_median_ms,versus_ci_lo_ms,versus_ci_hi_ms,versus_gflops,"
			       "versus_status,versus_solution,ratio,ratio_ci_lo,ratio_ci_hi");
	fputc('\n', x->fp);
}

static void table_row(const struct run_ctx *x, const int64_t *sz, const struct timed *a,
		      const struct timed *b, const double ratio[3])
{
	bool ok = strcmp(a->status, "ok") == 0;

	for (int id = 0; id < x->c->nidx; id++)
		fprintf(x->fp, "%7lld ", (long long)sz[id]);
	if (!ok || (b && strcmp(b->status, "ok") != 0)) {
		const struct timed *bad = ok ? b : a;

		fprintf(x->fp, "%s%s: %s\n", bad == b ? "versus " : "", bad->status, bad->reason);
		return;
	}
	if (b) {
		char ci[40];

		snprintf(ci, sizeof(ci), "[%.3f,%.3f]", ratio[1], ratio[2]);
		fprintf(x->fp, "%11.4f %11.4f %7.3f %15s %9.2f %9.2f %5d\n", a->r.median_ms,
			b->r.median_ms, ratio[0], ci, a->r.gflops, b->r.gflops, a->r.reps);
		return;
	}
	fprintf(x->fp, "%11.4f %11.4f %11.4f %9.2f %9.2f ", a->r.median_ms, a->r.ci_lo_ms,
		a->r.ci_hi_ms, a->r.gflops, a->r.gbs);
	if (x->peak > 0)
		fprintf(x->fp, "%6.1f ", 100 * a->r.gflops / x->peak);
	fprintf(x->fp, "%5d %6s%s%s\n", a->r.reps, a->r.timer, a->path[0] ? "  " : "", a->path);
}

static void csv_row(const struct run_ctx *x, const int64_t *sz, const struct timed *a,
		    const struct timed *b, const double ratio[3])
{
	bool ok = strcmp(a->status, "ok") == 0;
	const struct bench_result *r = &a->r;
	double nan = NAN;

	for (int id = 0; id < x->c->nidx; id++)
		fprintf(x->fp, "%lld,", (long long)sz[id]);
#define F(v)                              \
	do {                              \
		csv_num(x->fp, ok ? (v) : nan); \
		fputc(',', x->fp);        \
	} while (0)
	F(r->median_ms);
	F(r->ci_lo_ms);
	F(r->ci_hi_ms);
	F(r->min_ms);
	F(r->max_ms);
	F(r->event_median_ms);
	F(r->wall_median_ms);
	F(r->gflops);
	F(r->gbs);
	fprintf(x->fp, "%d,%s,", ok ? r->reps : 0, ok && r->timer ? r->timer : "");
	F(r->compile_s);
	F(r->first_ms);
#undef F
	fprintf(x->fp, "%s,", a->status);
	csv_str(x->fp, a->key);
	fputc(',', x->fp);
	if (x->peak > 0 && ok)
		csv_num(x->fp, r->gflops / x->peak);
	fprintf(x->fp, ",%s,", a->origin);
	csv_str(x->fp, a->name);
	fputc(',', x->fp);
	csv_str(x->fp, ok ? "" : a->reason);
	if (b) {
		bool bok = strcmp(b->status, "ok") == 0;

		fputc(',', x->fp);
		csv_num(x->fp, bok ? b->r.median_ms : nan);
		fputc(',', x->fp);
		csv_num(x->fp, bok ? b->r.ci_lo_ms : nan);
		fputc(',', x->fp);
		csv_num(x->fp, bok ? b->r.ci_hi_ms : nan);
		fputc(',', x->fp);
		csv_num(x->fp, bok ? b->r.gflops : nan);
		fprintf(x->fp, ",%s,", b->status);
		csv_str(x->fp, b->key);
		for (int k = 0; k < 3; k++) {
			fputc(',', x->fp);
			csv_num(x->fp, ok && bok ? ratio[k] : nan);
		}
	}
	fputc('\n', x->fp);
}

/* A row could not be written: a store given with --db fails the run (its
 * exit code, after the results are out), the default store is a warning;
 * either way the run goes on and records nothing more. */
static void store_lost(struct run_ctx *x, enum tcx_status st, const struct tcx_error *err)
{
	progress_clear(&x->pg);
	if (x->cli->db)
		x->store_ret = report(st, err);
	else
		warning("%s; the rest of this run is not recorded", err->msg);
	store_close(x->store);
	x->store = NULL;
}

/* Records solution s's measurement t of problem p in the results store,
 * the row `tcx tune` writes for it, when `tcx plan --fit` can read it so:
 * when a contraction kernel ran the problem itself.  With a plan (pl),
 * that is the problem the plan ran, p merged (pl->kp, keyed as a tune of
 * the merged problem keys it, packed); a plan that permutes operands
 * (TTGT) or a kernel other than the contraction kernel that runs the
 * problem alone (`direct`: the permute, the tensor-times-matrix kernel)
 * is not recorded, since its time is not the kernel's, nor is a merged problem
 * with strides that are not packed, which no problem key describes, nor
 * a one-input expression, which tune does not take.  The host device
 * runs no kernel: it has no store. */
static void record(struct run_ctx *x, const struct problem *p, const struct plan_result *pl,
		   bool direct, const struct solution *s, const struct timed *t)
{
	const struct problem *kp = p;
	const char *strides = x->cli->strides;
	struct measurement row;
	struct measured m;
	struct tcx_error err = { 0 };
	enum tcx_status st;

	if (!x->store || !t->status || direct || p->c->implicit_b)
		return;
	if (pl) {
		if (plan_permutes(&pl->best))
			return;
		kp = &pl->kp;
		if (pl->merged) {
			struct problem packed;

			if (problem_init(&packed, kp->c, kp->size, NULL) != TCX_OK ||
			    memcmp(packed.stride, kp->stride, sizeof(packed.stride)) != 0)
				return;
			strides = NULL;
		}
	}
	tune_row_key(&row, device_info_of(x->dev), kp->c, strides, s, kp->size);
	tune_measured(&m, t->code, t->reason, &t->r, kp);
	tune_row_result(&row, &m);
	st = store_put(x->store, &row, &err);
	if (st)
		store_lost(x, st, &err);
	else
		x->stored++;
}

/* Which path a plan takes, for the report: "direct", or "TTGT:" and the
 * operands it permutes. */
static void plan_path(const struct plan_result *pl, char *buf, size_t len)
{
	if (plan_permutes(&pl->best))
		snprintf(buf, len, "TTGT:%s%s%s", pl->best.permute[0].on ? "A" : "",
			 pl->best.permute[1].on ? "B" : "", pl->best.permute[2].on ? "C" : "");
	else
		snprintf(buf, len, "direct");
}

/* Prepares one solution for p (t->status says how it went). */
static enum tcx_status prepare_one(struct run_ctx *x, const struct problem *p,
				   const struct plan_result *pl, const struct solution *s,
				   struct prepared *pr, struct timed *t, struct tcx_error *err)
{
	struct device_cache_stats before, after;
	enum tcx_status st;

	device_cache_stats(x->dev, &before);
	st = prepare_kernel(x->dev, p, pl, s, pr, NULL, err);
	device_cache_stats(x->dev, &after);
	t->origin = kernel_origin(&before, &after);
	if (size_status(st))
		timed_status(t, st, err->msg);
	solution_key(st ? s : &pr->plan.sol, t->key, sizeof(t->key));
	solution_name(st ? s : &pr->plan.sol, t->name, sizeof(t->name));
	return st;
}

/* --accuracy for one size (accuracy_search's try): the solution planned
 * for an arithmetic at least as accurate as floor (or the one given),
 * prepared, and its result on the benchmark's data checked against the
 * host reference (validate_run). */
struct bench_acc {
	struct run_ctx *x;
	const struct problem *p;
	struct plan_result *pl;
	bool *have_plan;
	struct solution *planned;
	const struct solution *given;
	struct prepared *pr;
	struct timed *t;
};

static enum tcx_status bench_acc_try(void *ctx, enum arith floor, struct accuracy_try *out,
				     struct tcx_error *err)
{
	struct bench_acc *b = ctx;
	struct run_ctx *x = b->x;
	const struct solution *s = b->given;
	struct validate_opts vo;
	enum tcx_status st;

	contract_release(x->dev, b->pr);
	if (x->planning) {
		if (*b->have_plan)
			plan_release(b->pl);
		*b->have_plan = false;
		st = planner_plan_accuracy(b->p, device_info_of(x->dev), CMD_PLAN_FLAGS,
					   x->cli->accuracy, floor, b->pl, err);
		if (st)
			return st;
		*b->have_plan = true;
		*b->planned = b->pl->best.sol;
		s = b->planned;
	}
	st = prepare_one(x, b->p, *b->have_plan ? b->pl : NULL, s, b->pr, b->t, err);
	if (st)
		return st;
	validate_opts_default(&vo);
	vo.seed = x->cli->o.seed;
	memcpy(vo.alpha, x->cli->o.alpha, sizeof(vo.alpha));
	memcpy(vo.beta, x->cli->o.beta, sizeof(vo.beta));
	st = validate_error(x->dev, b->pr, b->p, &vo, &out->error, err);
	out->arith = contract_arith(b->pr, b->p->c->dtype, s);
	if (!st)
		verbose("accuracy: %s, measured relative error %.3g %s the accuracy %.3g asked",
			arith_name(out->arith), out->error,
			out->error <= x->cli->accuracy ? "within" : "above", x->cli->accuracy);
	return st;
}

/* Marks t rejected: the logic file at path selects no solution for the
 * size. */
static void timed_no_solution(struct timed *t, const char *path)
{
	t->status = "rejected";
	t->origin = "";
	snprintf(t->reason, sizeof(t->reason),
		 "the logic file '%s' selects no solution for this size", path);
}

/* Warns when the logic file lg (read from path; NULL: none) was made on
 * another device than dev. */
static void warn_other_device(const struct logic *lg, const char *path,
			      const struct device *dev)
{
	const char *name = device_info_of(dev)->name;

	if (lg && lg->device_name && *lg->device_name && strcmp(lg->device_name, name) != 0)
		warning("logic file '%s' was made for '%s', not '%s'", path, lg->device_name,
			name);
}

/* The second side's solution for one size: --versus's parameters, or the
 * solution --versus-logic selects, in the planner's form where it was tuned
 * in one (*have_plan, pl).  A size the logic selects no solution for marks
 * b rejected, sets *s to NULL (nothing to record) and returns TCX_EREJECT;
 * any other error stops the run. */
static enum tcx_status versus_solution(struct run_ctx *x, const int64_t *sz,
				       const struct problem *p, struct plan_result *pl,
				       bool *have_plan, struct solution *planned,
				       const struct solution **s, struct timed *b,
				       struct tcx_error *err)
{
	int pick;

	*s = &x->vsol;
	if (!x->vlg)
		return TCX_OK;
	pick = logic_lookup(x->vlg, sz, NULL);
	if (pick < 0) {
		*s = NULL;
		timed_no_solution(b, x->cli->vlogic);
		return TCX_EREJECT;
	}
	enum tcx_status st = logic_plan(x->vlg, pick, p, device_info_of(x->dev), pl, have_plan,
					planned, err);

	if (!st)
		*s = planned;
	return st;
}

/* Benchmarks one size: appends its record to x->rows and prints its line.
 * Returns an error only for what stops the whole run. */
static enum tcx_status bench_size(struct run_ctx *x, const int64_t *sz, struct tcx_error *err)
{
	struct problem p;
	struct prepared pa = { 0 }, pb = { 0 };
	struct timed *a = calloc(1, sizeof(*a)), *b = NULL;
	const struct solution *sa = &x->sol, *sb = &x->vsol;
	struct solution planned, planned_b;
	struct plan_result pl, plb;
	bool have_plan = false, direct = false, ttm = false, joint = false, accuracy_checked = false;
	bool have_plan_b = false, direct_b = false;
	struct accuracy_outcome acc;
	double ratio[3] = { NAN, NAN, NAN };
	json_t *row, *sizes;
	int pick = 0;
	enum tcx_status st;

	if (!a)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (paired(x) && !(b = calloc(1, sizeof(*b)))) {
		free(a);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	if (x->lg) {
		pick = logic_lookup(x->lg, sz, NULL);
		if (pick >= 0)
			sa = &x->lg->sols[pick].sol;
	}
	st = problem_at(x->c, sz, x->cli->strides, &p, err);
	if (st)
		goto out_free;
	if (x->lg && pick >= 0) {
		/* the logic's solution, in the planner's form where it was
		 * tuned in one */
		st = logic_plan(x->lg, pick, &p, device_info_of(x->dev), &pl, &have_plan, &planned,
				err);
		if (st)
			goto out_free;
		sa = &planned;
		if (have_plan)
			plan_path(&pl, a->path, sizeof(a->path));
	}
	if (x->cli->accuracy > 0 && (x->planning || pick >= 0)) {
		struct bench_acc ba = { x, &p, &pl, &have_plan, &planned, sa, &pa, a };

		st = accuracy_search(x->c->dtype, x->cli->accuracy, x->planning, bench_acc_try, &ba,
				     &acc, err);
		if (st && !size_status(st))
			goto out_free; /* a missed accuracy stops the run: exit 1 */
		if (st && !a->status) {
			timed_status(a, st, err->msg);
			a->origin = "";
		}
		accuracy_checked = !st;
		if (have_plan) {
			sa = &planned;
			plan_path(&pl, a->path, sizeof(a->path));
		}
		if (st)
			pick = -1;
	} else if (x->planning) {
		st = planner_plan(&p, device_info_of(x->dev), CMD_PLAN_FLAGS, &pl, err);
		if (st == TCX_EREJECT) {
			a->status = "rejected";
			a->origin = "";
			snprintf(a->reason, sizeof(a->reason), "%s", err->msg);
			pick = -1;
		} else if (st) {
			goto out_free;
		} else {
			have_plan = true;
			planned = pl.best.sol;
			sa = &planned;
			plan_path(&pl, a->path, sizeof(a->path));
		}
	}
	if (pick >= 0) {
		if (!accuracy_checked)
			st = prepare_one(x, &p, have_plan ? &pl : NULL, sa, &pa, a, err);
		if (st && !a->status)
			goto out_free;
		direct = !st && contract_direct(&pa, x->cli->o.alpha, x->cli->o.beta);
		ttm = !st && pa.ttm.on;
		if (direct)
			snprintf(a->path, sizeof(a->path), "permute");
		if (ttm)
			snprintf(a->path, sizeof(a->path), "ttm");
	} else if (x->cli->accuracy > 0 && a->status) {
		/* its try was rejected or failed: a->status says how */
	} else if (!x->planning) {
		st = TCX_EREJECT;
		timed_no_solution(a, x->cli->logic);
	} else {
		st = TCX_EREJECT;
	}
	if (b) {
		enum tcx_status stb =
		    versus_solution(x, sz, &p, &plb, &have_plan_b, &planned_b, &sb, b, err);

		if (!stb)
			stb = prepare_one(x, &p, have_plan_b ? &plb : NULL, sb, &pb, b, err);
		direct_b = !stb && (contract_direct(&pb, x->cli->o.alpha, x->cli->o.beta) ||
				    pb.ttm.on);
		if (stb && !b->status) {
			st = stb;
			goto out_free;
		}
		if (!st && !stb) {
			st = bench_compare(x->dev, &pa, &pb, &p, &x->cli->o, &a->r, &b->r, ratio,
					   err);
			if (st && size_status(st)) {
				/* which of the two failed is not known: neither
				 * is recorded */
				timed_status(a, st, err->msg);
				timed_status(b, st, err->msg);
				joint = true;
			}
		} else if (!stb) {
			/* the first cannot run this size: time the other alone */
			st = bench_run(x->dev, &pb, &p, &x->cli->o, &b->r, err);
			if (st && size_status(st))
				timed_status(b, st, err->msg);
		} else if (!st) {
			st = bench_run(x->dev, &pa, &p, &x->cli->o, &a->r, err);
			if (st && size_status(st))
				timed_status(a, st, err->msg);
		}
	} else if (!st) {
		st = bench_run(x->dev, &pa, &p, &x->cli->o, &a->r, err);
		if (st && size_status(st))
			timed_status(a, st, err->msg);
	}
	if (st && !size_status(st))
		goto out_free;
	st = TCX_OK;
	tcx_error_clear(err);
	if (pick >= 0 && !joint)
		record(x, &p, have_plan ? &pl : NULL, direct || ttm, sa, a);
	if (b && !joint && sb)
		record(x, &p, have_plan_b ? &plb : NULL, direct_b, sb, b);

	row = json_object();
	sizes = json_object();
	for (int id = 0; id < x->c->nidx; id++)
		json_object_set_new(sizes, x->c->idx[id].name, json_integer(sz[id]));
	json_object_set_new(row, "sizes", sizes);
	timed_json(row, a, x->peak);
	if (accuracy_checked) {
		json_object_set_new(row, "accuracy", json_real(x->cli->accuracy));
		json_object_set_new(row, "arithmetic", json_string(arith_name(acc.arith)));
		json_object_set_new(row, "measured_error", jnum(acc.error));
	}
	if (have_plan) {
		json_t *pj = json_object();

		json_object_set_new(pj, "planned_as", json_string(pl.kp.c->expr));
		json_object_set_new(pj, "predicted_ms",
				    jnum((direct ? pl.direct.seconds
					  : ttm  ? pl.ttm.seconds
						 : pl.best.time_s) *
					 1e3));
		json_object_set_new(pj, "limit",
				    json_string(direct ? "memory" : ttm ? pl.ttm.limit : pl.best.limit));
		json_object_set_new(pj, "direct_permute", json_boolean(direct));
		json_object_set_new(pj, "tensor_times_matrix", json_boolean(ttm));
		json_object_set_new(pj, "permuted", json_array());
		for (int op = 0; op < 3 && !direct && !ttm; op++)
			if (pl.best.permute[op].on)
				json_array_append_new(json_object_get(pj, "permuted"),
						      json_string(op == 0 ? "A" : op == 1 ? "B" : "C"));
		json_object_set_new(row, "plan", pj);
	}
	if (b) {
		json_t *v = json_object(), *q = json_object();
		bool both = strcmp(a->status, "ok") == 0 && strcmp(b->status, "ok") == 0;

		timed_json(v, b, x->peak);
		if (have_plan_b)
			json_object_set_new(v, "planned_as", json_string(plb.kp.c->expr));
		json_object_set_new(row, "versus", v);
		json_object_set_new(q, "median", jnum(both ? ratio[0] : NAN));
		json_object_set_new(q, "ci_lo", jnum(both ? ratio[1] : NAN));
		json_object_set_new(q, "ci_hi", jnum(both ? ratio[2] : NAN));
		json_object_set_new(row, "ratio", q);
	}
	json_array_append_new(x->rows, row);

	if (x->cli->fmt == FMT_TABLE || x->cli->fmt == FMT_CSV) {
		progress_clear(&x->pg);
		if (x->cli->fmt == FMT_TABLE)
			table_row(x, sz, a, b, ratio);
		else
			csv_row(x, sz, a, b, ratio);
		fflush(x->fp);
	}
out_free:
	contract_release(x->dev, &pa);
	contract_release(x->dev, &pb);
	if (have_plan)
		plan_release(&pl);
	if (have_plan_b)
		plan_release(&plb);
	free(a);
	free(b);
	return st;
}

/* The regression gate over the run's JSON rows: adds a "baseline" record to
 * each row that has one, names each regression on stderr, and returns the
 * number of regressions (or -1 on an error, reported). */
static int gate(json_t *doc, const struct bench_doc *base, double t, const char *base_path)
{
	struct bench_doc cur;
	struct bench_gate g;
	struct tcx_error err = { 0 };
	json_t *rows = json_object_get(doc, "results"), *sum;
	enum tcx_status st = bench_doc_from_json(doc, "this run", &cur, &err);
	int n;

	if (!st)
		st = bench_gate_run(base, &cur, t, &g, &err);
	if (st) {
		bench_doc_release(&cur);
		report(st, &err);
		return -1;
	}
	for (int k = 0; k < cur.nrows; k++) {
		const struct bench_row *r = &cur.rows[k];
		char what[512];

		bench_row_sizes_text(r, what, sizeof(what));
		if (g.base_row[k] < 0) {
			info("size %s is not in the baseline '%s'", what, base_path);
			continue;
		}
		{
			const struct bench_row *o = &base->rows[g.base_row[k]];
			json_t *bj = json_object();

			json_object_set_new(bj, "status", json_string(o->ok ? "ok" : "failed"));
			json_object_set_new(bj, "median_ms", jnum(o->median_ms));
			json_object_set_new(bj, "ci_lo_ms", jnum(o->ci_lo_ms));
			json_object_set_new(bj, "ci_hi_ms", jnum(o->ci_hi_ms));
			json_object_set_new(bj, "change",
					    jnum(o->ok && r->ok ? r->median_ms / o->median_ms - 1
								: NAN));
			json_object_set_new(bj, "regression", json_boolean(g.verdict[k] == 1));
			json_object_set_new(json_array_get(rows, (size_t)k), "baseline", bj);
			if (g.verdict[k] < 0)
				info("size %s was not compared: %s", what,
				     r->ok ? "it failed in the baseline" : "it failed in this run");
			else if (g.verdict[k] == 1)
				error("regression at %s: median %.4g ms against %.4g ms in the "
				      "baseline (%+.1f%%), slower by more than %.3g%% beyond both "
				      "confidence intervals",
				      what, r->median_ms, o->median_ms,
				      100 * (r->median_ms / o->median_ms - 1), 100 * t);
		}
	}
	for (int k = 0; k < base->nrows; k++)
		if (bench_doc_find(&cur, &base->rows[k]) < 0) {
			char what[512];

			bench_row_sizes_text(&base->rows[k], what, sizeof(what));
			info("size %s of the baseline was not run", what);
		}
	sum = json_object();
	json_object_set_new(sum, "file", json_string(base_path));
	json_object_set_new(sum, "max_regression", json_real(t));
	json_object_set_new(sum, "compared", json_integer(g.compared));
	json_object_set_new(sum, "regressions", json_integer(g.regressions));
	json_object_set_new(sum, "not_in_baseline", json_integer(g.not_in_base));
	json_object_set_new(sum, "not_run", json_integer(g.not_in_cur));
	json_object_set_new(doc, "baseline", sum);
	if (g.regressions == 0)
		info("baseline '%s': %d size%s compared, no regression beyond %.3g%%", base_path,
		     g.compared, g.compared == 1 ? "" : "s", 100 * t);
	else
		error("baseline '%s': %d of %d size%s slower by more than %.3g%%", base_path,
		      g.regressions, g.compared, g.compared == 1 ? "" : "s", 100 * t);
	n = g.regressions;
	bench_gate_release(&g);
	bench_doc_release(&cur);
	return n;
}

/* The series a row's first (which 0) or versus (1) result belongs to: its
 * solution's name, or the planner's, whose choice may differ by size but
 * is one line: what tcx runs untuned. */
static const char *side_name(json_t *row, int which)
{
	json_t *side = which ? json_object_get(row, "versus") : row;
	const char *name = json_string_value(json_object_get(side, "solution_name"));

	if (!which && name && *name && json_object_get(row, "plan"))
		return "the planner's choice";
	return name ? name : "";
}

/* One plot series per solution (the first and, with --versus, the other),
 * x the product of the sizes. */
static enum tcx_status plot_run(const struct run_ctx *x, json_t *doc, struct atomic_file *af,
				struct tcx_error *err)
{
	json_t *rows = json_object_get(doc, "results");
	size_t n = json_array_size(rows), nser = 0, used = 0;
	int sides = paired(x) ? 2 : 1;
	struct svg_series *ser = calloc((size_t)sides * n + 1, sizeof(*ser));
	double *xs = calloc((size_t)sides * n + 1, sizeof(double));
	double *ys = calloc((size_t)sides * n + 1, sizeof(double));
	int *side = calloc((size_t)sides * n + 1, sizeof(int));
	char **labels = calloc((size_t)sides * n + 1, sizeof(char *));
	struct strbuf svg = STRBUF_INIT, title = STRBUF_INIT, sub = STRBUF_INIT;
	const struct device_info *di = device_info_of(x->dev);
	enum tcx_status st = TCX_OK;

	if (!ser || !xs || !ys || !side || !labels) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out_free;
	}
	for (int which = 0; which < sides; which++)
		for (size_t first = 0; first < n; first++) {
			const char *name = side_name(json_array_get(rows, first), which);
			struct strbuf label = STRBUF_INIT;
			struct svg_series *se;
			bool seen = false;

			for (size_t q = 0; q < first && !seen; q++)
				seen = strcmp(side_name(json_array_get(rows, q), which), name) == 0;
			if (seen || !*name)
				continue; /* a size no solution was chosen for has no line */
			if (sides == 2)
				strbuf_adds(&label, which ? "versus: " : "first: ");
			strbuf_adds(&label, name);
			st = strbuf_status(&label, err);
			if (st)
				goto out_free;
			side[nser] = which;
			labels[nser] = strbuf_detach(&label);
			se = &ser[nser++];
			se->name = labels[nser - 1];
			se->x = xs + used;
			se->y = ys + used;
			for (size_t k = first; k < n; k++) {
				json_t *row = json_array_get(rows, k), *v;
				json_t *g = json_object_get(
				    which ? json_object_get(row, "versus") : row, "gflops");
				const char *key;
				double w = 1;

				if (strcmp(side_name(row, which), name) != 0)
					continue;
				json_object_foreach(json_object_get(row, "sizes"), key, v)
					w *= (double)json_integer_value(v);
				xs[used] = w;
				ys[used] = json_is_number(g) ? json_number_value(g) : NAN;
				used++;
				se->n++;
			}
		}
	strbuf_addf(&title, "%s on %s", x->c->expr, di->name);
	strbuf_addf(&sub, "GFLOP/s by problem size, %s, %s timer, tcx %s",
		    dtype_info(x->c->dtype)->name, bench_timer_name(di, x->cli->o.timer),
		    tcx_version());
	{
		struct svg_plot plot = {
			.title = strbuf_str(&title),
			.subtitle = strbuf_str(&sub),
			.xlabel = "problem size: product of the index sizes",
			.ylabel = "GFLOP/s",
			.nseries = (int)nser,
			.series = ser,
		};

		st = svg_plot_write(&plot, &svg, NULL, err);
	}
	if (!st) {
		fputs(strbuf_str(&svg), af->fp);
		st = atomic_file_commit(af, err);
	}
out_free:
	for (size_t q = 0; labels && q < nser; q++)
		free(labels[q]);
	free(labels);
	free(side);
	free(ser);
	free(xs);
	free(ys);
	strbuf_release(&svg);
	strbuf_release(&title);
	strbuf_release(&sub);
	return st;
}

static json_t *run_document(const struct run_ctx *x, const struct bench_cli *cli)
{
	json_t *doc = json_object(), *cache = json_object();
	const struct device_info *di = device_info_of(x->dev);
	struct device_cache_stats b;
	char name[128], date[32];
	static const char *const flush_names[] = { "auto", "on", "off" };

	device_cache_stats(x->dev, &b);
	contraction_tensile_name(x->c, name, sizeof(name));
	utc_now(date, sizeof(date));
	json_object_set_new(doc, "tcx_version", json_string(tcx_version()));
	json_object_set_new(doc, "date", json_string(date));
	json_object_set_new(doc, "expression", json_string(x->c->expr));
	json_object_set_new(doc, "problem_type", json_string(name));
	json_object_set_new(doc, "device", json_string(di->id));
	json_object_set_new(doc, "device_name", json_string(di->name));
	json_object_set_new(doc, "driver", json_string(di->driver));
	json_object_set_new(doc, "timer", json_string(bench_timer_name(di, cli->o.timer)));
	json_object_set_new(doc, "seed", json_integer((json_int_t)cli->o.seed));
	json_object_set_new(doc, "min_reps", json_integer(cli->o.min_reps));
	json_object_set_new(doc, "min_time_s", json_real(cli->o.min_time));
	json_object_set_new(doc, "flush", json_string(flush_names[cli->o.flush]));
	if (cli->strides)
		json_object_set_new(doc, "strides", json_string(cli->strides));
	if (x->peak > 0)
		json_object_set_new(doc, "peak_gflops", json_real(x->peak));
	json_object_set_new(cache, "enabled",
			    json_boolean(!cli->no_cache && !kcache_disabled_by_env() &&
					 !b.platform_cache));
	json_object_set_new(cache, "platform_cache", json_boolean(b.platform_cache));
	json_object_set_new(cache, "builds", json_integer((json_int_t)b.builds));
	json_object_set_new(cache, "memory_hits", json_integer((json_int_t)b.memory_hits));
	json_object_set_new(cache, "disk_hits", json_integer((json_int_t)b.disk_hits));
	json_object_set_new(cache, "disk_stores", json_integer((json_int_t)b.disk_stores));
	json_object_set_new(cache, "disk_rebuilt", json_integer((json_int_t)b.disk_rebuilt));
	json_object_set_new(doc, "cache", cache);
	json_object_set_new(doc, "store", x->store_used ? json_string(x->db) : json_null());
	json_object_set_new(doc, "stored", json_integer(x->stored));
	json_object_set_new(doc, "results", json_incref(x->rows));
	return doc;
}

/* The peak that applies: --peak-gflops, else the cached measurement. */
static double find_peak(const struct bench_cli *cli, const struct run_ctx *x)
{
	struct peak pk;
	struct tcx_error err = { 0 };
	bool found = false;

	if (cli->peak > 0)
		return cli->peak;
	if (peak_cache_lookup(device_info_of(x->dev), &pk, &found, &err) != TCX_OK) {
		warning("%s", err.msg);
		return 0;
	}
	if (!found) {
		verbose("no peak known for '%s': 'tcx devices --measure' measures it",
			device_info_of(x->dev)->id);
		return 0;
	}
	return peak_for_dtype(&pk, x->c->dtype);
}

static int run_mode(struct bench_cli *cli, int argc, char **argv)
{
	struct run_ctx x = { 0 };
	struct size_list list = { 0 };
	struct bench_doc base = { 0 };
	struct tcx_error err = { 0 };
	struct atomic_file af = { 0 }, plot = { 0 };
	json_t *doc = NULL;
	int ret = 0;
	enum tcx_status st = TCX_OK;

	x.cli = cli;
	x.fp = stdout;
	if (argc != 1)
		return usage_error(&cmd_bench_def,
				   argc < 1 ? "missing the expression" : "too many arguments");
	if (cli->nr + cli->ne == 0)
		return usage_error(&cmd_bench_def, "give at least one --range or --exact");
	if (cli->threshold_given && !cli->baseline)
		return usage_error(&cmd_bench_def,
				   "--max-regression needs --baseline (or --compare)");
	if (!!cli->params + !!cli->solfile + !!cli->logic > 1) {
		error("--params, --solution and --logic cannot be used together");
		return TCX_EXIT_USAGE;
	}
	if (cli->versus && cli->vlogic)
		return usage_error(&cmd_bench_def,
				   "--versus and --versus-logic cannot be used together");
	if (cli->db && cli->no_store)
		return usage_error(&cmd_bench_def, "--db and --no-store cannot be used together");
	/* read the baseline first: a CI job should not time for an hour and
	 * then find its baseline missing */
	if (cli->baseline) {
		st = bench_doc_load(cli->baseline, &base, &err);
		if (st) {
			tcx_error_prefix(&err, "baseline");
			return report(st, &err);
		}
	}
	ret = load_contraction(argv[0], cli->type, cli->layout, &x.c);
	if (ret)
		goto out;
	if (base.problem_type[0]) {
		char name[128];

		contraction_tensile_name(x.c, name, sizeof(name));
		if (strcmp(name, base.problem_type) != 0) {
			error("baseline '%s' is for '%s', not '%s'", cli->baseline,
				    base.problem_type, name);
			ret = TCX_EXIT_USAGE;
			goto out;
		}
	}
	size_list_init(&list, x.c->nidx);
	for (int k = 0; k < cli->nr && !st; k++) {
		struct size_range r;

		st = size_range_parse_for(x.c, cli->ranges[k], &r, &err);
		if (!st)
			st = size_range_expand(&r, x.c->nidx, &list, BENCH_SIZES_LIMIT, &err);
	}
	for (int k = 0; k < cli->ne && !st; k++) {
		int64_t sz[TCX_MAX_INDICES];

		st = size_exact_parse_for(x.c, cli->exacts[k], sz, &err);
		if (!st)
			st = size_list_add(&list, sz, &err);
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	size_list_sort_unique(&list);
	ret = check_strides(x.c, cli->strides, list.v, list.count);
	if (ret)
		goto out;
	/* the output files now, so that a path that cannot be written is
	 * found before the timing, not after */
	if (cli->outpath) {
		st = atomic_file_open(&af, cli->outpath, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		x.fp = af.fp;
	}
	if (cli->plot) {
		st = atomic_file_open(&plot, cli->plot, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (cli->logic) {
		ret = load_logic(cli->logic, x.c, &x.lg);
		if (ret)
			goto out;
	}
	if (cli->vlogic) {
		ret = load_logic(cli->vlogic, x.c, &x.vlg);
		if (ret)
			goto out;
	}
	ret = open_device(cli->devid, &x.dev);
	if (ret)
		goto out;
	if (cli->no_cache)
		device_set_disk_cache(x.dev, false);
	if (cli->kernel_timeout > 0) {
		struct tcx_error kerr = { 0 };
		enum tcx_status kst = device_set_kernel_timeout(x.dev, cli->kernel_timeout, &kerr);

		if (kst) {
			ret = report(kst, &kerr);
			goto out;
		}
	}
	/* the store before the timing too: a --db that cannot be written is
	 * an error now, the default store a warning (the results are what a
	 * bench is for) */
	if (!cli->no_store && !device_is_host(x.dev)) {
		if (cli->db)
			snprintf(x.db, sizeof(x.db), "%s", cli->db);
		else
			default_store_path(x.db, sizeof(x.db));
		st = store_open(x.db, true, &x.store, &err);
		if (st && cli->db) {
			ret = report(st, &err);
			goto out;
		}
		if (st)
			warning("%s; this run's measurements are not recorded", err.msg);
		x.store_used = !st;
		st = TCX_OK;
		tcx_error_clear(&err);
	}
	warn_other_device(x.lg, cli->logic, x.dev);
	warn_other_device(x.vlg, cli->vlogic, x.dev);
	x.planning = planner_wanted(cli->params, cli->solfile, cli->logic) &&
		     !device_is_host(x.dev);
	ret = load_solution(cli->params, cli->solfile, x.c, device_info_of(x.dev), &x.sol);
	if (!ret && cli->versus)
		ret = load_solution(cli->versus, NULL, x.c, device_info_of(x.dev), &x.vsol);
	if (ret)
		goto out;
	x.peak = find_peak(cli, &x);
	x.rows = json_array();
	if (cli->fmt == FMT_TABLE)
		table_header(&x);
	else if (cli->fmt == FMT_CSV)
		csv_header(&x);
	progress_start(&x.pg, list.count);
	for (size_t k = 0; k < list.count && !interrupted; k++) {
		const int64_t *sz = list.v + k * (size_t)x.c->nidx;
		char label[256];
		size_t at = 0;

		for (int id = 0; id < x.c->nidx && at < sizeof(label); id++)
			at += (size_t)snprintf(label + at, sizeof(label) - at, "%s%s=%lld",
					       id ? "," : "", x.c->idx[id].name, (long long)sz[id]);
		progress_show(&x.pg, k, label);
		st = bench_size(&x, sz, &err);
		if (st == TCX_EINTR && interrupted)
			break; /* the size in progress is dropped; those done are written */
		if (st) {
			progress_clear(&x.pg);
			ret = report(st, &err);
			goto out;
		}
	}
	progress_clear(&x.pg);
	if (x.store_used)
		verbose("%d measurement%s recorded in %s", x.stored, x.stored == 1 ? "" : "s",
			x.db);
	doc = run_document(&x, cli);
	if (base.rows || cli->baseline) {
		int n = gate(doc, &base, cli->threshold, cli->baseline);

		if (n < 0) {
			ret = TCX_EXIT_USAGE;
			goto out;
		}
		if (n > 0)
			ret = TCX_EXIT_CHECK;
	}
	if (cli->fmt == FMT_JSON)
		print_json(x.fp, doc);
	if (cli->outpath) {
		st = atomic_file_commit(&af, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (cli->plot) {
		st = plot_run(&x, doc, &plot, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (interrupted && !ret)
		ret = TCX_EXIT_INTR;
	if (x.store_ret && (!ret || ret == TCX_EXIT_CHECK))
		ret = x.store_ret;
out:
	if (af.fp && af.fp != stdout)
		atomic_file_abort(&af);
	if (plot.fp && plot.fp != stdout)
		atomic_file_abort(&plot);
	store_close(x.store);
	json_decref(doc);
	json_decref(x.rows);
	bench_doc_release(&base);
	size_list_release(&list);
	logic_free(x.lg);
	logic_free(x.vlg);
	device_close(x.dev);
	contraction_free(x.c);
	return ret;
}

/* ---- compare mode ----------------------------------------------------------- */

/* The base name of a path, for legends. */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static json_t *side_json(const struct bench_row *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "status", json_string(r->ok ? "ok" : "failed"));
	json_object_set_new(o, "median_ms", jnum(r->median_ms));
	json_object_set_new(o, "ci_lo_ms", jnum(r->ci_lo_ms));
	json_object_set_new(o, "ci_hi_ms", jnum(r->ci_hi_ms));
	json_object_set_new(o, "gflops", jnum(r->gflops));
	return o;
}

static json_t *sizes_json(const struct bench_row *r)
{
	json_t *o = json_object();

	for (int i = 0; i < r->nidx; i++)
		json_object_set_new(o, r->name[i], json_integer(r->size[i]));
	return o;
}

static enum tcx_status plot_compare(const struct bench_doc *d, const char *path,
				    struct tcx_error *err)
{
	struct svg_series ser[2];
	double *v = calloc(4 * (size_t)(d[0].nrows + d[1].nrows) + 1, sizeof(double));
	struct strbuf svg = STRBUF_INIT, title = STRBUF_INIT;
	struct atomic_file af;
	enum tcx_status st;
	size_t used = 0;

	if (!v)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int s = 0; s < 2; s++) {
		ser[s].name = base_name(d[s].path);
		ser[s].n = d[s].nrows;
		ser[s].x = v + used;
		for (int k = 0; k < d[s].nrows; k++)
			v[used++] = d[s].rows[k].work;
		ser[s].y = v + used;
		for (int k = 0; k < d[s].nrows; k++)
			v[used++] = d[s].rows[k].ok ? d[s].rows[k].gflops : NAN;
	}
	strbuf_addf(&title, "%s on %s", d[0].expression[0] ? d[0].expression : d[1].expression,
		    d[0].device_name[0] ? d[0].device_name : "?");
	if (strcmp(d[0].device_name, d[1].device_name) != 0)
		strbuf_addf(&title, " vs %s", d[1].device_name);
	{
		struct svg_plot plot = {
			.title = strbuf_str(&title),
			.subtitle = "GFLOP/s by problem size: two runs compared",
			.xlabel = "problem size: product of the index sizes",
			.ylabel = "GFLOP/s",
			.nseries = 2,
			.series = ser,
		};

		st = svg_plot_write(&plot, &svg, NULL, err);
	}
	if (!st)
		st = atomic_file_open(&af, path, err);
	if (!st) {
		fputs(strbuf_str(&svg), af.fp);
		st = atomic_file_commit(&af, err);
	}
	free(v);
	strbuf_release(&svg);
	strbuf_release(&title);
	return st;
}

static int compare_mode(struct bench_cli *cli, int argc, char **argv)
{
	struct bench_doc d[2];
	struct tcx_error err = { 0 };
	struct atomic_file af = { 0 };
	json_t *doc = NULL, *rows = NULL, *only[2];
	FILE *fp = stdout;
	int ret = 0, regressions = 0, compared = 0;
	enum tcx_status st;

	memset(d, 0, sizeof(d));
	if (argc != 2)
		return usage_error(&cmd_bench_def, "--compare needs two results files, not %d",
				   argc);
	if (cli->nr || cli->ne || cli->params || cli->solfile || cli->logic || cli->versus ||
	    cli->vlogic ||
	    cli->baseline || cli->devid || cli->type || cli->no_cache || cli->db ||
	    cli->no_store || cli->accuracy > 0)
		return usage_error(&cmd_bench_def,
				   "--compare runs nothing: it takes only --max-regression, "
				   "--format, -o and --plot");
	for (int s = 0; s < 2; s++) {
		st = bench_doc_load(argv[s], &d[s], &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (d[0].problem_type[0] && d[1].problem_type[0] &&
	    strcmp(d[0].problem_type, d[1].problem_type) != 0)
		warning("'%s' is '%s' and '%s' is '%s': comparing the sizes they share", argv[0],
			d[0].problem_type, argv[1], d[1].problem_type);
	if (cli->outpath) {
		st = atomic_file_open(&af, cli->outpath, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		fp = af.fp;
	}
	rows = json_array();
	only[0] = json_array();
	only[1] = json_array();
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < d[s].nrows; k++)
			if (bench_doc_find(&d[1 - s], &d[s].rows[k]) < 0) {
				char what[512];

				bench_row_sizes_text(&d[s].rows[k], what, sizeof(what));
				info("size %s is only in '%s'", what, argv[s]);
				json_array_append_new(only[s], sizes_json(&d[s].rows[k]));
			}
	if (cli->fmt == FMT_TABLE && d[0].nrows) {
		fprintf(fp, "# a: %s (%s)\n# b: %s (%s)\n", argv[0], d[0].device_name, argv[1],
			d[1].device_name);
	}
	for (int k = 0; k < d[0].nrows; k++) {
		const struct bench_row *a = &d[0].rows[k], *b;
		int at = bench_doc_find(&d[1], a);
		double q[3] = { NAN, NAN, NAN };
		bool both, reg = false;
		json_t *row;

		if (at < 0)
			continue;
		b = &d[1].rows[at];
		both = a->ok && b->ok;
		if (both) {
			bench_ratio(a, b, q);
			compared++;
			if (cli->threshold_given && bench_is_regression(a, b, cli->threshold)) {
				char what[512];

				reg = true;
				regressions++;
				bench_row_sizes_text(a, what, sizeof(what));
				error("regression at %s: median %.4g ms in '%s' against %.4g ms in "
				      "'%s' (%+.1f%%), slower by more than %.3g%% beyond both "
				      "confidence intervals",
				      what, b->median_ms, argv[1], a->median_ms, argv[0],
				      100 * (q[0] - 1), 100 * cli->threshold);
			}
		}
		row = json_object();
		json_object_set_new(row, "sizes", sizes_json(a));
		json_object_set_new(row, "a", side_json(a));
		json_object_set_new(row, "b", side_json(b));
		json_object_set_new(row, "ratio", jnum(q[0]));
		json_object_set_new(row, "ratio_ci_lo", jnum(q[1]));
		json_object_set_new(row, "ratio_ci_hi", jnum(q[2]));
		if (cli->threshold_given)
			json_object_set_new(row, "regression", json_boolean(reg));
		json_array_append_new(rows, row);
		if (cli->fmt == FMT_TABLE) {
			if (json_array_size(rows) == 1) {
				for (int i = 0; i < a->nidx; i++)
					fprintf(fp, "%7s ", a->name[i]);
				fprintf(fp, "%11s %11s %7s %15s %9s %9s\n", "a_ms", "b_ms", "b/a",
					"ratio_95%_ci", "a_GFLOP/s", "b_GFLOP/s");
			}
			for (int i = 0; i < a->nidx; i++)
				fprintf(fp, "%7lld ", (long long)a->size[i]);
			if (!both) {
				fprintf(fp, "%s\n", !a->ok ? "failed in a" : "failed in b");
			} else {
				char ci[40];

				snprintf(ci, sizeof(ci), "[%.3f,%.3f]", q[1], q[2]);
				fprintf(fp, "%11.4f %11.4f %7.3f %15s %9.2f %9.2f%s\n",
					a->median_ms, b->median_ms, q[0], ci, a->gflops, b->gflops,
					reg ? "  REGRESSION" : "");
			}
		} else if (cli->fmt == FMT_CSV) {
			if (json_array_size(rows) == 1) {
				for (int i = 0; i < a->nidx; i++)
					fprintf(fp, "size_%s,", a->name[i]);
				fprintf(fp,
					"a_status,a_median_ms,a_ci_lo_ms,a_ci_hi_ms,a_gflops,"
					"b_status,b_median_ms,b_ci_lo_ms,b_ci_hi_ms,b_gflops,ratio,"
					"ratio_ci_lo,ratio_ci_hi,regression\n");
			}
			for (int i = 0; i < a->nidx; i++)
				fprintf(fp, "%lld,", (long long)a->size[i]);
			for (int s = 0; s < 2; s++) {
				const struct bench_row *r = s ? b : a;

				fprintf(fp, "%s,", r->ok ? "ok" : "failed");
				csv_num(fp, r->median_ms);
				fputc(',', fp);
				csv_num(fp, r->ci_lo_ms);
				fputc(',', fp);
				csv_num(fp, r->ci_hi_ms);
				fputc(',', fp);
				csv_num(fp, r->gflops);
				fputc(',', fp);
			}
			for (int i = 0; i < 3; i++) {
				csv_num(fp, q[i]);
				fputc(',', fp);
			}
			fprintf(fp, "%s\n", cli->threshold_given ? (reg ? "yes" : "no") : "");
		}
	}
	if (json_array_size(rows) == 0)
		warning("'%s' and '%s' have no size in common", argv[0], argv[1]);
	if (cli->fmt == FMT_JSON) {
		json_t *sa = json_object(), *sb = json_object();

		doc = json_object();
		for (int s = 0; s < 2; s++) {
			json_t *o = s ? sb : sa;

			json_object_set_new(o, "file", json_string(argv[s]));
			json_object_set_new(o, "expression", json_string(d[s].expression));
			json_object_set_new(o, "problem_type", json_string(d[s].problem_type));
			json_object_set_new(o, "device_name", json_string(d[s].device_name));
			json_object_set_new(o, "driver", json_string(d[s].driver));
		}
		json_object_set_new(doc, "tcx_version", json_string(tcx_version()));
		json_object_set_new(doc, "a", sa);
		json_object_set_new(doc, "b", sb);
		if (cli->threshold_given)
			json_object_set_new(doc, "max_regression", json_real(cli->threshold));
		json_object_set_new(doc, "results", json_incref(rows));
		json_object_set_new(doc, "only_in_a", json_incref(only[0]));
		json_object_set_new(doc, "only_in_b", json_incref(only[1]));
		print_json(fp, doc);
	}
	json_decref(only[0]);
	json_decref(only[1]);
	if (cli->plot) {
		st = plot_compare(d, cli->plot, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (cli->outpath) {
		st = atomic_file_commit(&af, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
	}
	if (cli->threshold_given) {
		if (regressions)
			error("%d of %d size%s slower in '%s' than in '%s' by more than %.3g%%",
			      regressions, compared, compared == 1 ? "" : "s", argv[1], argv[0],
			      100 * cli->threshold);
		ret = regressions ? TCX_EXIT_CHECK : 0;
	}
out:
	if (af.fp && af.fp != stdout)
		atomic_file_abort(&af);
	json_decref(doc);
	json_decref(rows);
	bench_doc_release(&d[0]);
	bench_doc_release(&d[1]);
	return ret;
}

/* ---- options ---------------------------------------------------------------- */

int cmd_bench(int argc, char **argv)
{
	struct bench_cli cli;
	int opt, ret = 0;
	int64_t v;

	memset(&cli, 0, sizeof(cli));
	bench_opts_default(&cli.o);
	cli.o.stop = &interrupted; /* a signal stops the measurement it falls in */
	cli.threshold = DEFAULT_MAX_REGRESSION;
	cli.ranges = calloc((size_t)argc + 1, sizeof(*cli.ranges));
	cli.exacts = calloc((size_t)argc + 1, sizeof(*cli.exacts));
	if (!cli.ranges || !cli.exacts) {
		error("out of memory");
		ret = TCX_EXIT_RUNTIME;
		goto out;
	}
	while ((opt = cmd_getopt(&cmd_bench_def, argc, argv)) != -1) {
		switch (opt) {
		case 'r':
			cli.ranges[cli.nr++] = optarg;
			break;
		case 'e':
			cli.exacts[cli.ne++] = optarg;
			break;
		case 't':
			cli.type = optarg;
			break;
		case 'd':
			cli.devid = optarg;
			break;
		case 'p':
			cli.params = optarg;
			break;
		case OPT_SOLUTION:
			cli.solfile = optarg;
			break;
		case OPT_LOGIC:
			cli.logic = optarg;
			break;
		case OPT_VERSUS:
			cli.versus = optarg;
			break;
		case OPT_VERSUS_LOGIC:
			cli.vlogic = optarg;
			break;
		case OPT_MIN_REPS:
			if ((ret = parse_count(optarg, "min-reps", 1, &v)))
				goto out;
			if (v > BENCH_MAX_REPS) {
				error("min-reps '%s' is more than %d, the most launches a measurement "
				      "makes",
				      optarg, BENCH_MAX_REPS);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			cli.o.min_reps = (int)v;
			break;
		case OPT_MIN_TIME:
			if (!common_parse_double(optarg, &cli.o.min_time) ||
			    !isfinite(cli.o.min_time) || cli.o.min_time < 0) {
				error("min-time '%s' is not a number of seconds", optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_TIMER:
			if (!bench_timer_parse(optarg, &cli.o.timer)) {
				ret = option_value_error(&cmd_bench_def, OPT_TIMER, "timer", optarg);
				goto out;
			}
			break;
		case OPT_FLUSH:
			if (!bench_flush_parse(optarg, &cli.o.flush)) {
				ret = option_value_error(&cmd_bench_def, OPT_FLUSH, "flush", optarg);
				goto out;
			}
			break;
		case OPT_SEED:
			if ((ret = parse_count(optarg, "seed", 0, &v)))
				goto out;
			cli.o.seed = (uint64_t)v;
			break;
		case OPT_PEAK:
			if (!common_parse_double(optarg, &cli.peak) || !isfinite(cli.peak) ||
			    cli.peak <= 0) {
				error("peak-gflops '%s' is not a positive number", optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_BASELINE:
			cli.baseline = optarg;
			break;
		case OPT_MAX_REGRESSION:
			if (!bench_threshold_parse(optarg, &cli.threshold)) {
				error("max-regression '%s' is neither a percentage (5%%) nor a "
					    "fraction below 1 (0.05)",
					    optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			cli.threshold_given = true;
			break;
		case OPT_COMPARE:
			cli.compare = true;
			break;
		case OPT_NO_CACHE:
			cli.no_cache = true;
			break;
		case OPT_KERNEL_TIMEOUT:
			if (!common_parse_double(optarg, &cli.kernel_timeout) ||
			    !isfinite(cli.kernel_timeout) || cli.kernel_timeout <= 0) {
				error("kernel-timeout '%s' is not a positive number of seconds",
				      optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_PLOT:
			cli.plot = optarg;
			break;
		case 'f':
			if (!parse_format(optarg, &cli.fmt,
					  FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_CSV) |
					      FMT_ALLOW(FMT_JSON))) {
				ret = option_value_error(&cmd_bench_def, 'f', "format", optarg);
				goto out;
			}
			cli.fmt_given = true;
			break;
		case 'o':
			cli.outpath = optarg;
			break;
		case 'l':
			cli.layout = optarg;
			break;
		case OPT_STRIDES:
			cli.strides = optarg;
			break;
		case OPT_DB:
			cli.db = optarg;
			break;
		case OPT_NO_STORE:
			cli.no_store = true;
			break;
		case OPT_ACCURACY:
			if ((ret = parse_accuracy(optarg, &cli.accuracy)))
				goto out;
			break;
		case 'h':
			goto out;
		default:
			ret = TCX_EXIT_USAGE;
			goto out;
		}
	}
	if (!cli.fmt_given && cli.outpath) {
		if (ends_with(cli.outpath, ".json"))
			cli.fmt = FMT_JSON;
		else if (ends_with(cli.outpath, ".csv"))
			cli.fmt = FMT_CSV;
	}
	if (cli.compare)
		ret = compare_mode(&cli, argc - optind, argv + optind);
	else
		ret = run_mode(&cli, argc - optind, argv + optind);
out:
	free(cli.ranges);
	free(cli.exacts);
	return ret;
}

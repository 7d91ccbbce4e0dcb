/* bench.c - `tcx bench`: time a solution over problem sizes and report
 * time, GFLOP/s and GB/s as a table, CSV or JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "backend/backend.h"
#include "bench/bench.h"
#include "notation/notation.h"

static const char *const bench_synopsis[] = {
	"tcx bench (--range <spec> | --exact <spec>)... [--type <t>] [--device <id>] "
	"[--params <params> | --solution <file>] [--min-reps <n>] [--min-time <s>] "
	"[--timer <timer>] [--flush <flush>] [--seed <n>] [--format <fmt>] [-o <file>] <expr>",
	NULL,
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
	{ "params", 'p', required_argument, "<params>", "solution parameters", OV_NONE, NULL },
	{ "solution", 0x100, required_argument, "<file>", "solution parameters from a file",
	  OV_FILE, NULL },
	{ "min-reps", 0x101, required_argument, "<n>", "time at least n launches (default 10)",
	  OV_NONE, NULL },
	{ "min-time", 0x102, required_argument, "<s>",
	  "and at least s seconds of them (default 0.2)", OV_NONE, NULL },
	{ "timer", 0x103, required_argument, "<timer>",
	  "event, wall or auto (default: event on GPUs, wall on CPUs)", OV_ENUM,
	  "auto event wall" },
	{ "flush", 0x104, required_argument, "<flush>",
	  "rotate inputs / flush the cache when they fit in it: auto, on, off", OV_ENUM,
	  "auto on off" },
	{ "seed", 0x105, required_argument, "<n>", "random seed of the inputs (default 1)",
	  OV_NONE, NULL },
	{ "format", 'f', required_argument, "<fmt>", "table (default), csv or json", OV_ENUM,
	  "table csv json" },
	{ "output", 'o', required_argument, "<file>", "write the results to a file", OV_FILE,
	  NULL },
	{ "layout", 'l', required_argument, "<layout>", "first-fastest or last-fastest", OV_ENUM,
	  "first-fastest last-fastest" },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const bench_examples[] = {
	"tcx bench 'C[ij]=A[ik]*B[jk]' --range '[64,64,1024],0,0'",
	"tcx bench 'C[ijk]=A[ilk]*B[jlk]' --exact 1024,1024,64,1024 --format json",
	NULL,
};

int cmd_bench(int argc, char **argv);
const struct cmd cmd_bench_def = {
	"bench", cmd_bench, bench_synopsis,
	"Time a solution over problem sizes", bench_options, bench_examples, "expr",
	CMD_NEEDS_DEVICE,
};

#define BENCH_SIZES_LIMIT 1000000

int cmd_bench(int argc, char **argv)
{
	const char *type = NULL, *layout = NULL, *devid = NULL, *params = NULL, *solfile = NULL;
	const char *outpath = NULL;
	const char **ranges, **exacts;
	int nr = 0, ne = 0, opt, ret = 0;
	enum out_format fmt = FMT_TABLE;
	struct bench_opts o;
	struct tcx_contraction *c = NULL;
	struct device *dev = NULL;
	struct size_list list = { 0 };
	struct solution s;
	struct tcx_error err = { 0 };
	struct atomic_file af = { 0 };
	json_t *rows = NULL;
	FILE *fp = stdout;
	int64_t v;
	enum tcx_status st = TCX_OK;

	bench_opts_default(&o);
	ranges = calloc((size_t)argc, sizeof(*ranges));
	exacts = calloc((size_t)argc, sizeof(*exacts));
	if (!ranges || !exacts) {
		free(ranges);
		free(exacts);
		return error("out of memory"), TCX_EXIT_RUNTIME;
	}
	while ((opt = cmd_getopt(&cmd_bench_def, argc, argv)) != -1) {
		switch (opt) {
		case 'r':
			ranges[nr++] = optarg;
			break;
		case 'e':
			exacts[ne++] = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case 'd':
			devid = optarg;
			break;
		case 'p':
			params = optarg;
			break;
		case 0x100:
			solfile = optarg;
			break;
		case 0x101:
			if ((ret = parse_count(optarg, "min-reps", 1, &v)))
				goto out;
			o.min_reps = (int)v;
			break;
		case 0x102:
			if (!parse_double(optarg, &o.min_time) || o.min_time < 0) {
				ret = error("min-time '%s' is not a number of seconds", optarg);
				ret = TCX_EXIT_USAGE;
				goto out;
			}
			break;
		case 0x103:
			if (!bench_timer_parse(optarg, &o.timer)) {
				ret = usage_error(&cmd_bench_def, "unknown timer '%s'", optarg);
				goto out;
			}
			break;
		case 0x104:
			if (!bench_flush_parse(optarg, &o.flush)) {
				ret = usage_error(&cmd_bench_def, "unknown flush '%s'", optarg);
				goto out;
			}
			break;
		case 0x105:
			if ((ret = parse_count(optarg, "seed", 0, &v)))
				goto out;
			o.seed = (uint64_t)v;
			break;
		case 'f':
			if (!parse_format(optarg, &fmt,
					  FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_CSV) | FMT_ALLOW(FMT_JSON))) {
				ret = usage_error(&cmd_bench_def, "unknown format '%s'", optarg);
				goto out;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'l':
			layout = optarg;
			break;
		case 'h':
			goto out;
		default:
			ret = TCX_EXIT_USAGE;
			goto out;
		}
	}
	if (optind + 1 != argc) {
		ret = usage_error(&cmd_bench_def,
				  optind >= argc ? "missing the expression" : "too many arguments");
		goto out;
	}
	if (nr + ne == 0) {
		ret = usage_error(&cmd_bench_def, "give at least one --range or --exact");
		goto out;
	}
	ret = load_contraction(argv[optind], type, layout, &c);
	if (ret)
		goto out;
	size_list_init(&list, c->nidx);
	for (int k = 0; k < nr && !st; k++) {
		struct size_range r;

		st = size_range_parse(ranges[k], c->nidx, &r, &err);
		if (!st)
			st = size_range_expand(&r, c->nidx, &list, BENCH_SIZES_LIMIT, &err);
	}
	for (int k = 0; k < ne && !st; k++) {
		int64_t sz[TCX_MAX_INDICES];

		st = size_exact_parse(exacts[k], c->nidx, sz, &err);
		if (!st)
			st = size_list_add(&list, sz, &err);
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	size_list_sort_unique(&list);
	ret = open_device(devid, &dev);
	if (ret)
		goto out;
	ret = load_solution(params, solfile, c, device_info_of(dev), &s);
	if (ret)
		goto out;
	if (outpath) {
		st = atomic_file_open(&af, outpath, &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		fp = af.fp;
	}
	rows = json_array();
	if (fmt == FMT_TABLE) {
		for (int id = 0; id < c->nidx; id++)
			fprintf(fp, "%7s ", c->idx[id].name);
		fprintf(fp, "%11s %11s %11s %9s %9s %5s %6s\n", "median_ms", "ci_lo", "ci_hi", "GFLOP/s",
			"GB/s", "reps", "timer");
	} else if (fmt == FMT_CSV) {
		for (int id = 0; id < c->nidx; id++)
			fprintf(fp, "size_%s,", c->idx[id].name);
		fprintf(fp, "median_ms,ci_lo_ms,ci_hi_ms,min_ms,max_ms,event_ms,wall_ms,gflops,gbs,"
			    "reps,timer,compile_s,first_launch_ms,status,solution\n");
	}
	for (size_t k = 0; k < list.count && !interrupted; k++) {
		const int64_t *sz = list.v + k * (size_t)c->nidx;
		struct problem p;
		struct prepared pr;
		struct bench_result r;
		char key[1024], reason[TCX_ERROR_SIZE] = "";
		json_t *row;

		st = problem_init(&p, c, sz, &err);
		if (!st)
			st = contract_prepare(dev, c, &p, &s, &pr, NULL, &err);
		if (!st)
			st = bench_run(dev, &pr, &p, &o, &r, &err);
		if (st == TCX_EREJECT || st == TCX_ELIMIT || st == TCX_EBUILD || st == TCX_ELAUNCH ||
		    st == TCX_EDEVICE) {
			/* this size cannot run: say so and go on */
			snprintf(reason, sizeof(reason), "%s", err.msg);
			memset(&r, 0, sizeof(r));
		} else if (st) {
			ret = report(st, &err);
			goto out;
		}
		solution_key(reason[0] ? &s : &pr.plan.sol, key, sizeof(key));
		row = json_object();
		{
			json_t *sizes = json_object();

			for (int id = 0; id < c->nidx; id++)
				json_object_set_new(sizes, c->idx[id].name, json_integer(sz[id]));
			json_object_set_new(row, "sizes", sizes);
		}
		json_object_set_new(row, "status", json_string(reason[0] ? "failed" : "ok"));
		if (reason[0])
			json_object_set_new(row, "reason", json_string(reason));
		json_object_set_new(row, "median_ms", json_real(r.median_ms));
		json_object_set_new(row, "ci_lo_ms", json_real(r.ci_lo_ms));
		json_object_set_new(row, "ci_hi_ms", json_real(r.ci_hi_ms));
		json_object_set_new(row, "min_ms", json_real(r.min_ms));
		json_object_set_new(row, "max_ms", json_real(r.max_ms));
		json_object_set_new(row, "event_ms", json_real(r.event_median_ms));
		json_object_set_new(row, "wall_ms", json_real(r.wall_median_ms));
		json_object_set_new(row, "gflops", json_real(r.gflops));
		json_object_set_new(row, "gbs", json_real(r.gbs));
		json_object_set_new(row, "reps", json_integer(r.reps));
		json_object_set_new(row, "timer", json_string(r.timer ? r.timer : ""));
		json_object_set_new(row, "compile_s", json_real(r.compile_s));
		json_object_set_new(row, "first_launch_ms", json_real(r.first_ms));
		json_object_set_new(row, "solution", json_string(key));
		json_array_append_new(rows, row);
		if (fmt == FMT_TABLE) {
			for (int id = 0; id < c->nidx; id++)
				fprintf(fp, "%7lld ", (long long)sz[id]);
			if (reason[0])
				fprintf(fp, "failed: %s\n", reason);
			else
				fprintf(fp, "%11.4f %11.4f %11.4f %9.2f %9.2f %5d %6s\n", r.median_ms,
					r.ci_lo_ms, r.ci_hi_ms, r.gflops, r.gbs, r.reps, r.timer);
		} else if (fmt == FMT_CSV) {
			for (int id = 0; id < c->nidx; id++)
				fprintf(fp, "%lld,", (long long)sz[id]);
			fprintf(fp, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%s,%.4f,%.4f,%s,\"",
				r.median_ms, r.ci_lo_ms, r.ci_hi_ms, r.min_ms, r.max_ms,
				r.event_median_ms, r.wall_median_ms, r.gflops, r.gbs, r.reps,
				r.timer ? r.timer : "", r.compile_s, r.first_ms,
				reason[0] ? "failed" : "ok");
			for (const char *q = key; *q; q++)
				fputs(*q == '"' ? "\"\"" : (char[]){ *q, 0 }, fp);
			fprintf(fp, "\"\n");
		}
		fflush(fp);
	}
	if (fmt == FMT_JSON) {
		json_t *doc = json_object();
		const struct device_info *di = device_info_of(dev);
		char name[128];

		contraction_tensile_name(c, name, sizeof(name));
		json_object_set_new(doc, "tcx_version", json_string(tcx_version()));
		json_object_set_new(doc, "expression", json_string(c->expr));
		json_object_set_new(doc, "problem_type", json_string(name));
		json_object_set_new(doc, "device", json_string(di->id));
		json_object_set_new(doc, "device_name", json_string(di->name));
		json_object_set_new(doc, "driver", json_string(di->driver));
		json_object_set_new(doc, "results", json_incref(rows));
		print_json(fp, doc);
		json_decref(doc);
	}
	if (outpath) {
		st = atomic_file_commit(&af, &err);
		if (st)
			ret = report(st, &err);
	}
	if (interrupted && !ret)
		ret = TCX_EXIT_INTR;
out:
	if (af.fp && ret)
		atomic_file_abort(&af);
	json_decref(rows);
	size_list_release(&list);
	device_close(dev);
	contraction_free(c);
	free(ranges);
	free(exacts);
	return ret;
}

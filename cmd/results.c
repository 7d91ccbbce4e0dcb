/* results.c - `tcx results`: query the results store, and merge stores
 * measured on several machines. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "store/store.h"

static const char *const results_synopsis[] = {
	"tcx results [--db <file>] [--device <name>] [--problem <key>] [--status <status>] "
	"[--format <fmt>]",
	"tcx results merge <store>... -o <file>",
	NULL,
};

static const struct cmd_option results_options[] = {
	{ "db", 0x100, required_argument, "<file>",
	  "results store (default $XDG_CACHE_HOME/tcx/results.db)", OV_FILE, NULL },
	{ "device", 'd', required_argument, "<name>", "only this device model (its name)",
	  OV_NONE, NULL },
	{ "problem", 0x102, required_argument, "<key>",
	  "only this problem type (Tensile's name, e.g. Cij_Aik_Bjk_S)", OV_NONE, NULL },
	{ "status", 0x101, required_argument, "<status>", "ok, skipped, failed or all (default)",
	  OV_ENUM, "all ok skipped failed" },
	{ "format", 'f', required_argument, "<fmt>", "table (default), csv or json", OV_ENUM,
	  "table csv json" },
	{ "output", 'o', required_argument, "<file>", "merge: the store to write", OV_FILE, NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const results_examples[] = {
	"tcx results --status ok --format csv > results.csv",
	"tcx results --problem Cij_Aik_Bjk_S",
	"tcx results merge host1.db host2.db -o all.db",
	NULL,
};

/* The options no action lists are the query's (tcx results given none). */
static const struct cmd_action results_actions[] = {
	{ "merge", "output" },
	{ NULL, NULL },
};

int cmd_results(int argc, char **argv);
const struct cmd cmd_results_def = {
	"results", cmd_results, results_synopsis,
	"Query and merge results stores", results_options, results_examples, "file", 0,
	results_actions,
};

static const char *status_text(enum meas_status s)
{
	return s == MEAS_OK ? "ok" : s == MEAS_SKIPPED ? "skipped" : "failed";
}

struct rows {
	enum out_format fmt;
	json_t *arr;
	int64_t n;
};

static void csv_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static int print_row(const struct measurement *m, void *ctx)
{
	struct rows *r = ctx;
	char sizes[256] = "";

	for (int k = 0; k < m->nidx; k++)
		snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%lld", k ? "x" : "",
			 (long long)m->sizes[k]);
	r->n++;
	switch (r->fmt) {
	case FMT_JSON: {
		json_t *o = json_object(), *sz = json_array();

		for (int k = 0; k < m->nidx; k++)
			json_array_append_new(sz, json_integer(m->sizes[k]));
		json_object_set_new(o, "device", json_string(m->device));
		json_object_set_new(o, "driver", json_string(m->driver));
		json_object_set_new(o, "backend", json_string(m->backend));
		json_object_set_new(o, "problem", json_string(m->problem));
		json_object_set_new(o, "sizes", sz);
		json_object_set_new(o, "solution", json_string(m->solution));
		json_object_set_new(o, "status", json_string(status_text(m->status)));
		if (m->reason[0])
			json_object_set_new(o, "reason", json_string(m->reason));
		json_object_set_new(o, "median_ms", isnan(m->median_ms) ? json_null()
								       : json_real(m->median_ms));
		json_object_set_new(o, "ci_lo_ms", isnan(m->ci_lo_ms) ? json_null()
								     : json_real(m->ci_lo_ms));
		json_object_set_new(o, "ci_hi_ms", isnan(m->ci_hi_ms) ? json_null()
								     : json_real(m->ci_hi_ms));
		json_object_set_new(o, "gflops", json_real(m->gflops));
		json_object_set_new(o, "reps", json_integer(m->reps));
		json_object_set_new(o, "timer", json_string(m->timer));
		json_object_set_new(o, "timestamp", json_real(m->timestamp));
		json_object_set_new(o, "version", json_string(m->version));
		json_array_append_new(r->arr, o);
		break;
	}
	case FMT_CSV:
		csv_str(m->device);
		printf(",");
		csv_str(m->problem);
		printf(",%s,%s,%.6g,%.6g,%.6g,%.6g,%d,%s,%.0f,", sizes, status_text(m->status),
		       m->median_ms, m->ci_lo_ms, m->ci_hi_ms, m->gflops, m->reps, m->timer,
		       m->timestamp);
		csv_str(m->reason);
		printf(",");
		csv_str(m->solution);
		printf("\n");
		break;
	default:
		if (m->status == MEAS_OK)
			printf("%-18s %-20s %9.4f %9.2f  %s\n", m->problem, sizes, m->median_ms,
			       m->gflops, m->solution);
		else
			printf("%-18s %-20s %9s %9s  %s: %s\n", m->problem, sizes,
			       status_text(m->status), "-", m->solution, m->reason);
		break;
	}
	return 0;
}


int cmd_results(int argc, char **argv)
{
	const char *db = NULL, *out = NULL;
	char dbbuf[4096];
	struct store_filter f = { NULL, NULL, NULL, -1 };
	struct rows r = { FMT_TABLE, NULL, 0 };
	struct store *st = NULL;
	struct tcx_error err = { 0 };
	enum tcx_status s;
	int opt, ret = 0, query_opt = 0;
	bool merge;

	while ((opt = cmd_getopt(&cmd_results_def, argc, argv)) != -1) {
		if (opt != 'h' && !cmd_option_applies(&cmd_results_def, opt, "merge"))
			query_opt = opt; /* refused below if the action is merge */
		switch (opt) {
		case 0x100:
			db = optarg;
			break;
		case 'd':
			f.device = optarg;
			break;
		case 0x102:
			f.problem = optarg;
			break;
		case 0x101:
			if (!strcmp(optarg, "ok"))
				f.status = MEAS_OK;
			else if (!strcmp(optarg, "skipped"))
				f.status = MEAS_SKIPPED;
			else if (!strcmp(optarg, "failed"))
				f.status = MEAS_FAILED;
			else if (!strcmp(optarg, "all"))
				f.status = -1;
			else
				return option_value_error(&cmd_results_def, 0x101, "status", optarg);
			break;
		case 'f':
			if (!parse_format(optarg, &r.fmt,
					  FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_CSV) | FMT_ALLOW(FMT_JSON)))
				return option_value_error(&cmd_results_def, 'f', "format", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	merge = optind < argc && strcmp(argv[optind], "merge") == 0;
	if (merge) {
		if (query_opt)
			return usage_error(&cmd_results_def,
					   "option '--%s' does not apply to 'tcx results merge'",
					   cmd_option_name(&cmd_results_def, query_opt));
		if (!out)
			return usage_error(&cmd_results_def, "merge needs -o <file>");
		if (argc - optind - 1 < 1)
			return usage_error(&cmd_results_def, "merge needs at least one store");
		s = store_merge((const char *const *)argv + optind + 1, argc - optind - 1, out, &err);
		if (s)
			return report(s, &err);
		info("merged %d store%s into %s", argc - optind - 1, argc - optind - 1 == 1 ? "" : "s",
		     out);
		return 0;
	}
	if (optind != argc)
		return usage_error(&cmd_results_def, "unknown argument '%s'", argv[optind]);
	if (out)
		return usage_error(&cmd_results_def, "-o is for 'tcx results merge'");
	if (!db) {
		default_store_path(dbbuf, sizeof(dbbuf));
		db = dbbuf;
	}
	s = store_open(db, false, &st, &err);
	if (s)
		return report(s, &err);
	if (r.fmt == FMT_JSON)
		r.arr = json_array();
	else if (r.fmt == FMT_CSV)
		printf("device,problem,sizes,status,median_ms,ci_lo_ms,ci_hi_ms,gflops,reps,timer,"
		       "timestamp,reason,solution\n");
	else
		printf("%-18s %-20s %9s %9s  %s\n", "problem", "sizes", "median_ms", "GFLOP/s",
		       "solution");
	s = store_query(st, &f, print_row, &r, &err);
	if (s)
		ret = report(s, &err);
	else if (r.fmt == FMT_JSON) {
		json_t *o = json_pack("{s:s,s:I,s:O}", "store", db, "count", (json_int_t)r.n,
				      "measurements", r.arr);

		print_json(stdout, o);
		json_decref(o);
	}
	json_decref(r.arr);
	store_close(st);
	return ret;
}

/* sizes.c - `tcx sizes`: expand Tensile ProblemSizes (Range and Exact) for a
 * contraction, exactly as Tensile v3's code does. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "model/model.h"
#include "notation/notation.h"

static const char *const sizes_synopsis[] = {
	"tcx sizes [--count] [--format <fmt>] (--range <spec> | --exact <spec>)... <expr>",
	NULL,
};

static const struct cmd_option sizes_options[] = {
	{ "range", 'r', required_argument, "<spec>",
	  "a Tensile Range, e.g. '[16,1968],0,0' (repeatable)", OV_NONE, NULL },
	{ "exact", 'e', required_argument, "<spec>",
	  "one exact size per index, e.g. '1024,1024,64' (repeatable)", OV_NONE, NULL },
	{ "count", 'c', no_argument, NULL, "print only the number of problems", OV_NONE, NULL },
	{ "format", 'f', required_argument, "<fmt>", "table (default), csv or json", OV_ENUM,
	  "table csv json" },
	{ "layout", 'l', required_argument, "<layout>", "first-fastest or last-fastest", OV_ENUM,
	  "first-fastest last-fastest" },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const sizes_examples[] = {
	"tcx sizes 'C[ij]=A[ik]*B[jk]' --range '[16,1968],0,0' --count",
	"tcx sizes 'C[ijk]=A[ilk]*B[jlk]' --range '[64,32,16,1968],0,[4],[256]'",
	"tcx sizes 'C[ij]=A[ik]*B[jk]' --exact 127,129,64 --exact 256,256,256",
	NULL,
};

int cmd_sizes(int argc, char **argv);
const struct cmd cmd_sizes_def = {
	"sizes", cmd_sizes, sizes_synopsis,
	"Expand problem-size ranges the way Tensile does",
	sizes_options, sizes_examples, "expr", 0,
	NULL,
};

/* The most problems one invocation expands (a guard against typos). */
#define SIZES_LIMIT 50000000

/* The sizes of a list that no command could run: a tensor whose element or
 * byte count overflows 64 bits (problem_init's check, as every other
 * command makes it).  When the largest size of each index fits, all do. */
static enum tcx_status check_fits(const struct tcx_contraction *c, const struct size_list *l,
				  struct tcx_error *err)
{
	int64_t top[TCX_MAX_INDICES] = { 0 };
	struct problem p;
	enum tcx_status st;

	for (size_t k = 0; k < l->count; k++)
		for (int id = 0; id < c->nidx; id++)
			top[id] = TCX_MAX(top[id], l->v[k * (size_t)c->nidx + (size_t)id]);
	if (l->count == 0 || problem_init(&p, c, top, NULL) == TCX_OK)
		return TCX_OK;
	for (size_t k = 0; k < l->count; k++) {
		const int64_t *sz = l->v + k * (size_t)c->nidx;

		st = problem_init(&p, c, sz, err);
		if (st) {
			char text[TCX_MAX_INDICES * 21] = "";
			size_t at = 0;

			for (int id = 0; id < c->nidx && at < sizeof(text); id++)
				at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%lld",
						       id ? "," : "", (long long)sz[id]);
			tcx_error_prefix(err, "sizes %s", text);
			return st;
		}
	}
	return TCX_OK;
}

int cmd_sizes(int argc, char **argv)
{
	enum out_format fmt = FMT_TABLE;
	const char *layout = NULL;
	const char **ranges = NULL, **exacts = NULL;
	int nr = 0, ne = 0, r, ret = 0;
	bool count_only = false;
	struct tcx_contraction *c = NULL;
	struct size_list list;
	struct tcx_error err = { 0 };
	enum tcx_status st = TCX_OK;

	ranges = calloc((size_t)argc, sizeof(*ranges));
	exacts = calloc((size_t)argc, sizeof(*exacts));
	if (!ranges || !exacts) {
		free(ranges);
		free(exacts);
		return error("out of memory"), TCX_EXIT_RUNTIME;
	}
	while ((r = cmd_getopt(&cmd_sizes_def, argc, argv)) != -1) {
		switch (r) {
		case 'r':
			ranges[nr++] = optarg;
			break;
		case 'e':
			exacts[ne++] = optarg;
			break;
		case 'c':
			count_only = true;
			break;
		case 'f':
			if (!parse_format(optarg, &fmt,
					  FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_CSV) | FMT_ALLOW(FMT_JSON))) {
				ret = option_value_error(&cmd_sizes_def, 'f', "format", optarg);
				goto out;
			}
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
		ret = usage_error(&cmd_sizes_def,
				  optind >= argc ? "missing the expression" : "too many arguments");
		goto out;
	}
	if (nr + ne == 0) {
		ret = usage_error(&cmd_sizes_def, "give at least one --range or --exact");
		goto out;
	}
	ret = load_contraction(argv[optind], NULL, layout, &c);
	if (ret)
		goto out;
	size_list_init(&list, c->nidx);
	for (int k = 0; k < nr && !st; k++) {
		struct size_range range;

		st = size_range_parse_for(c, ranges[k], &range, &err);
		if (!st)
			st = size_range_expand(&range, c->nidx, &list, SIZES_LIMIT, &err);
	}
	for (int k = 0; k < ne && !st; k++) {
		int64_t v[TCX_MAX_INDICES];

		st = size_exact_parse_for(c, exacts[k], v, &err);
		if (!st)
			st = size_list_add(&list, v, &err);
	}
	if (!st)
		st = check_fits(c, &list, &err);
	if (st) {
		ret = report(st, &err);
		goto out_list;
	}
	size_list_sort_unique(&list);
	if (count_only) {
		printf("%zu\n", list.count);
	} else if (fmt == FMT_JSON) {
		json_t *o = json_object(), *names = json_array(), *probs = json_array();

		for (int id = 0; id < c->nidx; id++)
			json_array_append_new(names, json_string(c->idx[id].name));
		for (size_t k = 0; k < list.count; k++) {
			json_t *row = json_array();

			for (int id = 0; id < c->nidx; id++)
				json_array_append_new(row, json_integer(list.v[k * (size_t)c->nidx + (size_t)id]));
			json_array_append_new(probs, row);
		}
		json_object_set_new(o, "indices", names);
		json_object_set_new(o, "count", json_integer((json_int_t)list.count));
		json_object_set_new(o, "sizes", probs);
		print_json(stdout, o);
		json_decref(o);
	} else {
		const char *sep = fmt == FMT_CSV ? "," : " ";

		for (int id = 0; id < c->nidx; id++)
			printf(fmt == FMT_CSV ? "%s%s" : "%s%8s", id ? sep : "", c->idx[id].name);
		printf("\n");
		for (size_t k = 0; k < list.count; k++) {
			for (int id = 0; id < c->nidx; id++)
				printf(fmt == FMT_CSV ? "%s%lld" : "%s%8lld", id ? sep : "",
				       (long long)list.v[k * (size_t)c->nidx + (size_t)id]);
			printf("\n");
		}
	}
out_list:
	size_list_release(&list);
out:
	contraction_free(c);
	free(ranges);
	free(exacts);
	return ret;
}

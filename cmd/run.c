/* run.c - `tcx run`: contract real data from NumPy .npy files on a device
 * and write the result as .npy, so that users can check tcx against their
 * own tools. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "backend/backend.h"
#include "io/npy.h"
#include "logic/logic.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "run/run.h"

static const char *const run_synopsis[] = {
	"tcx run -i A=<file> [-i B=<file>] [-i C=<file>] -o <file> [--alpha <a>] [--beta <b>] "
	"[--device <id>] [--params <params> | --solution <file> | --logic <file>] "
	"[--accuracy <e>] <expr>",
	NULL,
};

static const struct cmd_option run_options[] = {
	{ "input", 'i', required_argument, "<T>=<file>",
	  "input A, B (two-input expressions) or C (with beta) from a .npy file",
	  OV_FILE, NULL },
	{ "output", 'o', required_argument, "<file>", "write C to this .npy file ('-': stdout)",
	  OV_FILE, NULL },
	{ "alpha", 0x100, required_argument, "<a>", "alpha (default 1; complex 're,im')", OV_NONE,
	  NULL },
	{ "beta", 0x101, required_argument, "<b>", "beta (default 0; needs -i C=...)", OV_NONE,
	  NULL },
	{ "device", 'd', required_argument, "<id>",
	  "device id from 'tcx devices'; 'host' computes with the reference", OV_DEVICE, NULL },
	{ "params", 'p', required_argument, "<params>", "solution parameters", OV_NONE, NULL },
	{ "solution", 0x102, required_argument, "<file>", "solution parameters from a file",
	  OV_FILE, NULL },
	{ "logic", 0x103, required_argument, "<file>",
	  "the solution a library-logic file selects for the arrays' sizes", OV_FILE, NULL },
	{ "accuracy", 0x104, required_argument, "<e>",
	  "the relative error C may have, checked against the host reference", OV_NONE, NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const run_examples[] = {
	"tcx run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o c.npy",
	"tcx run 'ijk->ik' -i A=a.npy -o c.npy",
	"tcx run 'C[ijk]=A[ilk]*B[jlk] + beta*C[ijk]' -i A=a.npy -i B=b.npy -i C=c.npy "
	"--beta 0.5 -o out.npy",
	"tcx run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o c.npy --accuracy 1e-3",
	NULL,
};

int cmd_run(int argc, char **argv);
const struct cmd cmd_run_def = {
	"run", cmd_run, run_synopsis, "Contract tensors from .npy files on a device",
	run_options, run_examples, "expr", CMD_NEEDS_DEVICE,
	NULL,
};

static const char *const tname[3] = { "C", "A", "B" };

static void shape_text(const struct npy_array *a, char *buf, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addc(&sb, '(');
	for (int k = 0; k < a->ndim; k++)
		strbuf_addf(&sb, "%s%lld", k ? ", " : "", (long long)a->shape[k]);
	if (a->ndim == 1)
		strbuf_addc(&sb, ',');
	strbuf_addc(&sb, ')');
	snprintf(buf, len, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

/* Every file must hold one type.  Called once all are read, so that the
 * order they are read in does not matter; names the file that differs: the
 * first of B and C whose type is not A's, or A when B and C agree without
 * it. */
static int check_types(const struct npy_array *arr, const bool *have, const char *const *file)
{
	static const int others[2] = { T_B, T_C };
	int odd = -1, ref = T_A;

	if (have[T_B] && have[T_C] && arr[T_B].dtype == arr[T_C].dtype &&
	    arr[T_B].dtype != arr[T_A].dtype) {
		odd = T_A;
		ref = T_B;
	}
	for (int k = 0; k < 2 && odd < 0; k++)
		if (have[others[k]] && arr[others[k]].dtype != arr[T_A].dtype)
			odd = others[k];
	if (odd < 0)
		return 0;
	error("%s ('%s') holds %s but %s ('%s') holds %s: inputs must share one type",
	      tname[odd], file[odd], dtype_info(arr[odd].dtype)->name, tname[ref], file[ref],
	      dtype_info(arr[ref].dtype)->name);
	return TCX_EXIT_USAGE;
}

/* The sizes of the contraction's indices from the arrays' shapes. */
static int sizes_from_shapes(const struct tcx_contraction *c, const struct npy_array *arr,
			     const bool *have, const char *const *file, int64_t *sizes)
{
	bool known[TCX_MAX_INDICES] = { false };
	int from[TCX_MAX_INDICES];

	for (int t = 0; t < 3; t++) {
		char shape[256];

		if (!have[t])
			continue;
		shape_text(&arr[t], shape, sizeof(shape));
		if (arr[t].ndim != c->rank[t])
			return error("%s ('%s') has shape %s: the expression gives %s %d index%s",
				     tname[t], file[t], shape, tname[t], c->rank[t],
				     c->rank[t] == 1 ? "" : "es"),
			       TCX_EXIT_USAGE;
		for (int k = 0; k < c->rank[t]; k++) {
			int id = c->written[t][k];
			int64_t v = arr[t].shape[k];

			if (known[id] && sizes[id] != v)
				return error("%s ('%s') has shape %s: index '%s' has size %lld there "
					     "but %lld in %s",
					     tname[t], file[t], shape, c->idx[id].name, (long long)v,
					     (long long)sizes[id], tname[from[id]]),
				       TCX_EXIT_USAGE;
			known[id] = true;
			sizes[id] = v;
			from[id] = t;
		}
	}
	for (int id = 0; id < c->nidx; id++)
		if (!known[id])
			return error("no input gives the size of index '%s'", c->idx[id].name),
			       TCX_EXIT_USAGE;
	return 0;
}

/* The result array: C's shape, in the order of the input C (or of the
 * inputs), zeros.  Returns an exit code. */
static int make_result(const struct tcx_contraction *c, const struct problem *p,
		       const int64_t *sizes, const bool *have, const struct npy_array *arr,
		       int order_first, struct npy_array *result)
{
	result->dtype = c->dtype;
	result->ndim = c->rank[T_C];
	for (int k = 0; k < result->ndim; k++)
		result->shape[k] = sizes[c->written[T_C][k]];
	result->fortran_order = have[T_C] ? arr[T_C].fortran_order : order_first == 1;
	result->nbytes = (size_t)p->extent[T_C] * (size_t)dtype_info(c->dtype)->bytes;
	result->data = calloc(1, result->nbytes ? result->nbytes : 1);
	if (!result->data)
		return error("out of memory"), TCX_EXIT_RUNTIME;
	return 0;
}

/* One try of --accuracy (accuracy_search): the solution planned for an
 * arithmetic at least as accurate as floor (or the one given), run on the
 * arrays, its C measured against the host reference. */
struct acc_run {
	struct device *dev;
	const struct problem *p;
	const void *a, *b, *cin;
	void *cout;
	const double *alpha, *beta;
	double accuracy;
	bool plan;              /* plan each try; else run *s as given */
	struct solution *s;
	struct plan_result *pl;
	bool *planned;          /* *pl holds a plan to release */
	struct prepared *pr;
	struct validate_opts vo;
};

static enum tcx_status acc_run_try(void *ctx, enum arith floor, struct accuracy_try *out,
				   struct tcx_error *err)
{
	struct acc_run *x = ctx;
	enum tcx_status st = TCX_OK;

	contract_release(x->dev, x->pr);
	if (x->plan) {
		if (*x->planned)
			plan_release(x->pl);
		*x->planned = false;
		st = plan_solution_accuracy(x->p, device_info_of(x->dev), x->accuracy, floor, x->pl,
					    x->s, err);
		*x->planned = !st;
	}
	if (!st)
		st = prepare_kernel(x->dev, x->p, *x->planned ? x->pl : NULL, x->s, x->pr, NULL, err);
	if (!st)
		st = contract_host_arrays(x->dev, x->pr, x->p, x->a, x->b, x->cin, x->cout, x->alpha,
					  x->beta, false, NULL, err);
	if (!st)
		st = run_measure_error(x->p, x->a, x->b, x->cin, x->cout, x->alpha, x->beta, &x->vo,
				       &out->error, NULL, err);
	if (st)
		return st;
	out->arith = contract_arith(x->pr, x->p->c->dtype, x->s);
	verbose("accuracy: %s, measured relative error %.3g %s the accuracy %.3g asked",
		arith_name(out->arith), out->error, out->error <= x->accuracy ? "within" : "above",
		x->accuracy);
	return TCX_OK;
}

/* The last step of a run: C written to outpath when all went well (st),
 * else the error reported; the exit code. */
static int finish(enum tcx_status st, const char *outpath, const struct npy_array *result,
		  struct tcx_error *err)
{
	if (!st)
		st = npy_write(outpath, result, err);
	if (st)
		return report(st, err);
	if (strcmp(outpath, "-") != 0)
		verbose("wrote %s", outpath);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	const char *file[3] = { NULL, NULL, NULL }, *outpath = NULL, *devid = NULL;
	const char *params = NULL, *solfile = NULL, *logicfile = NULL;
	struct logic *lg = NULL;
	struct npy_array arr[3], result;
	bool have[3] = { false, false, false };
	double alpha[2] = { 1, 0 }, beta[2] = { 0, 0 };
	struct tcx_contraction *c = NULL;
	struct device *dev = NULL;
	struct tcx_error err = { 0 };
	struct problem p;
	struct solution s;
	struct prepared pr = { 0 };
	struct plan_result pl;
	bool planned = false;
	int pick = -1;
	int64_t sizes[TCX_MAX_INDICES];
	void *cin = NULL;
	enum tcx_status st;
	int ret = 0, opt, order_first = -1;
	bool beta_given = false, one;
	double accuracy = 0;

	memset(arr, 0, sizeof(arr));
	memset(&result, 0, sizeof(result));
	while ((opt = cmd_getopt(&cmd_run_def, argc, argv)) != -1) {
		switch (opt) {
		case 'i': {
			const char *eq = strchr(optarg, '=');
			int t = -1;

			if (eq && eq - optarg == 1)
				t = optarg[0] == 'A' ? T_A : optarg[0] == 'B' ? T_B
							  : optarg[0] == 'C' ? T_C : -1;
			if (t < 0)
				return usage_error(&cmd_run_def,
						   "bad input '%s': expected A=FILE, B=FILE or C=FILE",
						   optarg);
			if (file[t])
				return usage_error(&cmd_run_def, "input %s given twice", tname[t]);
			file[t] = eq + 1;
			break;
		}
		case 'o':
			outpath = optarg;
			break;
		case 0x100:
			if ((ret = parse_scalar(optarg, "alpha", alpha)))
				return ret;
			break;
		case 0x101:
			if ((ret = parse_scalar(optarg, "beta", beta)))
				return ret;
			beta_given = true;
			break;
		case 'd':
			devid = optarg;
			break;
		case 'p':
			params = optarg;
			break;
		case 0x102:
			solfile = optarg;
			break;
		case 0x103:
			logicfile = optarg;
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
	if (optind + 1 != argc)
		return usage_error(&cmd_run_def,
				   optind >= argc ? "missing the expression" : "too many arguments");
	/* The expression first, so that what is wrong with it (one input
	 * tensor, say) is what users see, not the -i it seems to lack.  It is
	 * parsed again once the files give the type and the layout. */
	st = notation_parse(argv[optind], TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err);
	if (st)
		return report_at(st, &err, "expression", argv[optind]);
	one = c->implicit_b;
	contraction_free(c);
	c = NULL;
	if (one && file[T_B])
		return usage_error(&cmd_run_def,
				   "'%s' has one input tensor: give -i A=FILE, not -i B=FILE",
				   argv[optind]);
	if (logicfile && (params || solfile))
		return usage_error(&cmd_run_def,
				   "--logic cannot be combined with --params or --solution");
	if (!file[T_A] || (!one && !file[T_B]) || !outpath)
		return usage_error(&cmd_run_def, one ? "give -i A=FILE and -o FILE"
						     : "give -i A=FILE, -i B=FILE and -o FILE");
	if ((beta[0] != 0 || beta[1] != 0) && !file[T_C])
		return usage_error(&cmd_run_def, "--beta needs the initial C: -i C=FILE");
	if (file[T_C] && !beta_given)
		beta[0] = 1; /* C given without --beta: accumulate into it */

	for (int t = 0; t < 3; t++) {
		if (!file[t])
			continue;
		st = npy_read(file[t], &arr[t], &err);
		if (st) {
			ret = report(st, &err);
			goto out;
		}
		have[t] = true;
	}
	ret = check_types(arr, have, file);
	if (ret)
		goto out;
	/* The layout follows the files: C order is last-fastest, Fortran order
	 * first-fastest; mixed orders become explicit strides. */
	for (int t = 0; t < 3; t++)
		if (have[t] && arr[t].ndim > 1) {
			int f = arr[t].fortran_order;

			order_first = order_first < 0 ? f : order_first == f ? f : 2;
		}
	{
		enum tcx_dtype dt = arr[T_A].dtype;
		int lay = order_first == 1 ? LAYOUT_FIRST_FASTEST : LAYOUT_LAST_FASTEST;

		st = notation_parse(argv[optind], dt, lay, &c, &err);
		if (st) {
			ret = report_at(st, &err, "expression", argv[optind]);
			goto out;
		}
	}
	if ((alpha[1] != 0 || beta[1] != 0) && !dtype_info(c->dtype)->complex) {
		ret = error("complex alpha or beta for real data");
		ret = TCX_EXIT_USAGE;
		goto out;
	}
	ret = sizes_from_shapes(c, arr, have, file, sizes);
	if (ret)
		goto out;
	st = problem_init(&p, c, sizes, &err);
	if (!st && order_first == 2) {
		for (int t = 0; t < 3 && !st; t++) {
			int64_t str[TCX_MAX_INDICES], acc = 1;
			int n = c->rank[t];
			bool f = have[t] ? arr[t].fortran_order : false;

			for (int k = 0; k < n; k++) {
				int pos = f ? k : n - 1 - k;

				str[pos] = acc;
				acc *= sizes[c->written[t][pos]] ? sizes[c->written[t][pos]] : 1;
			}
			st = problem_set_strides(&p, (enum tensor_role)t, str, n, &err);
		}
	}
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	if (logicfile) { /* before the device: a logic for another problem is bad input */
		ret = load_logic(logicfile, c, &lg);
		if (!ret)
			ret = logic_solution_for(lg, logicfile, p.size, &pick);
		if (ret)
			goto out;
	}
	ret = open_device(devid, &dev);
	if (ret)
		goto out;
	if (logicfile) {
		ret = logic_solution_plan(lg, pick, &p, device_info_of(dev), &pl, &planned, &s);
		if (ret)
			goto out;
	}
	if (!logicfile && !planner_wanted(params, solfile, logicfile)) {
		ret = load_solution(params, solfile, c, device_info_of(dev), &s);
		if (ret)
			goto out;
	}
	if (accuracy > 0 && !(ret = make_result(c, &p, sizes, have, arr, order_first, &result))) {
		struct acc_run x = {
			.dev = dev, .p = &p, .a = arr[T_A].data, .b = arr[T_B].data,
			.cin = have[T_C] ? arr[T_C].data : result.data, .cout = result.data,
			.alpha = alpha, .beta = beta, .accuracy = accuracy,
			.plan = planner_wanted(params, solfile, logicfile), .s = &s, .pl = &pl,
			.planned = &planned, .pr = &pr,
		};
		struct accuracy_outcome ao;

		validate_opts_default(&x.vo);
		st = accuracy_search(c->dtype, accuracy, x.plan, acc_run_try, &x, &ao, &err);
		ret = finish(st, outpath, &result, &err);
		goto out;
	}
	if (ret)
		goto out;
	if (planner_wanted(params, solfile, logicfile)) {
		ret = plan_solution(&p, device_info_of(dev), &pl, &s);
		planned = !ret;
	}
	if (ret)
		goto out;
	st = prepare_kernel(dev, &p, planned ? &pl : NULL, &s, &pr, NULL, &err);
	if (st) {
		ret = report(st, &err);
		goto out;
	}
	ret = make_result(c, &p, sizes, have, arr, order_first, &result);
	if (ret)
		goto out;
	cin = have[T_C] ? arr[T_C].data : result.data;
	/* a one-operand expression's B is made by contract_host_arrays */
	st = contract_host_arrays(dev, &pr, &p, arr[T_A].data, arr[T_B].data, cin, result.data,
				  alpha, beta, false, NULL, &err);
	ret = finish(st, outpath, &result, &err);
out:
	contract_release(dev, &pr);
	if (planned)
		plan_release(&pl);
	for (int t = 0; t < 3; t++)
		npy_release(&arr[t]);
	free(result.data);
	device_close(dev);
	logic_free(lg);
	contraction_free(c);
	return ret;
}

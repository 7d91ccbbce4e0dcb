/* validate.c - `tcx validate`: run a generated kernel on random data and
 * compare every (or a spread sample of) output element with the host
 * reference, within a type-aware error bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "backend/backend.h"
#include "gen/gen.h"
#include "logic/logic.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "run/run.h"

static const char *const validate_synopsis[] = {
	"tcx validate --sizes <sizes> [--type <t>] [--device <id>] [--params <params> | "
	"--solution <file> | --logic <file>] [--init <init>] [--seed <n>] [--alpha <a>] [--beta <b>] "
	"[--rtol <r>] [--atol <a>] [--accuracy <e>] [--sample <n>] [--show <n>] [--layout <layout>] "
	"[--strides <strides>] [--format <fmt>] <expr>",
	NULL,
};

static const struct cmd_option validate_options[] = {
	{ "sizes", 's', required_argument, "<sizes>",
	  "index sizes: 'i=64,j=32,...' or '64,32,...' in index-number order", OV_NONE, NULL },
	{ "type", 't', required_argument, "<t>", "element type: s d c z h b (default s)", OV_ENUM,
	  "s d c z h b" },
	{ "device", 'd', required_argument, "<id>", "device id from 'tcx devices' (default: $TCX_DEVICE, else the first GPU, else PoCL)", OV_DEVICE, NULL },
	{ "params", 'p', required_argument, "<params>",
	  "solution parameters, e.g. 'WorkGroup=[16,16,1],ThreadTile=[4,4],DepthU=8'", OV_NONE,
	  NULL },
	{ "solution", 0x100, required_argument, "<file>",
	  "solution parameters from a YAML or JSON file", OV_FILE, NULL },
	{ "logic", 0x109, required_argument, "<file>",
	  "the solution a library-logic file selects for these sizes", OV_FILE, NULL },
	{ "init", 0x10a, required_argument, "<init>",
	  "input data: random (default), serial, ones, zeros or nan", OV_ENUM,
	  "random serial ones zeros nan" },
	{ "seed", 0x101, required_argument, "<n>", "random seed (default 1; printed)", OV_NONE,
	  NULL },
	{ "alpha", 0x102, required_argument, "<a>", "alpha (default 1; complex 're,im')", OV_NONE,
	  NULL },
	{ "beta", 0x103, required_argument, "<b>", "beta (default 0: C is not read)", OV_NONE,
	  NULL },
	{ "rtol", 0x104, required_argument, "<r>",
	  "relative tolerance instead of the type-aware bound", OV_NONE, NULL },
	{ "atol", 0x105, required_argument, "<a>",
	  "absolute tolerance instead of the type-aware bound", OV_NONE, NULL },
	{ "accuracy", 0x10b, required_argument, "<e>",
	  "check a relative error of at most e (|err| / sum |a b|) instead of the type-aware bound",
	  OV_NONE, NULL },
	{ "sample", 0x106, required_argument, "<n>",
	  "compare at most n output elements, spread evenly (default 16777216)", OV_NONE, NULL },
	{ "show", 0x107, required_argument, "<n>", "list the first n mismatches (default 10)",
	  OV_NONE, NULL },
	{ "layout", 'l', required_argument, "<layout>", "first-fastest or last-fastest", OV_ENUM,
	  "first-fastest last-fastest" },
	{ "strides", 0x108, required_argument, "<strides>",
	  "explicit strides, 'A=[1,64],B=[..],C=[..]'", OV_NONE, NULL },
	{ "format", 'f', required_argument, "<fmt>", "table (default) or json", OV_ENUM,
	  "table json" },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const validate_examples[] = {
	"tcx validate 'C[ij]=A[ik]*B[kj]' --sizes i=127,j=129,k=64",
	"tcx validate 'C[ijk]=A[ilk]*B[jlk]' --sizes 64,64,8,31 --type h "
	"--params 'WorkGroup=[8,8,2],ThreadTile=[4,4],VectorWidth=4'",
	"tcx validate 'ik,kj->ij' --sizes i=1000,j=1000,k=1000 --beta 0.5 --format json",
	"tcx validate 'ik,kj->ij' --sizes i=1000,j=1000,k=1000 --accuracy 1e-3",
	NULL,
};

int cmd_validate(int argc, char **argv);
const struct cmd cmd_validate_def = {
	"validate", cmd_validate, validate_synopsis,
	"Check a generated kernel against the host reference",
	validate_options, validate_examples, "expr", CMD_NEEDS_DEVICE,
	NULL,
};

static void index_text(const struct tcx_contraction *c, const int64_t *idx, char *buf,
		       size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int ids[TCX_MAX_INDICES], n = contraction_dims(c, T_C, ids);

	strbuf_addc(&sb, '(');
	for (int k = n - 1; k >= 0; k--)
		strbuf_addf(&sb, "%s=%lld%s", c->idx[ids[k]].name, (long long)idx[ids[k]],
			    k ? ", " : "");
	strbuf_addc(&sb, ')');
	snprintf(buf, len, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

/* Why an empty problem runs no kernel, or "" for any other. */
static void empty_text(const struct problem *p, char *buf, size_t len)
{
	int id = problem_empty_index(p);

	if (id < 0)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "index '%s' has size 0, so %s", p->c->idx[id].name,
			 p->c->idx[id].cls == IDX_BOUND ? "C = beta * C" : "C has no elements");
}

/* The kernel that ran instead of a contraction kernel -- the permute, or
 * the tensor-times-matrix kernel --, or "" when the contraction kernel ran
 * (run/run.h's contract_direct, prepared.ttm); *ttm says which. */
static void other_kernel_text(const struct tcx_contraction *c, const struct prepared *pr,
			      const struct validate_opts *o, char *buf, size_t len, bool *ttm)
{
	char what[256];

	buf[0] = '\0';
	*ttm = pr->ttm.on;
	if (pr->ttm.on) {
		ttm_plan_str(&pr->ttm.plan, c, what, sizeof(what));
		snprintf(buf, len, "%s, %s", ttm_kernel(&pr->ttm.plan), what);
		return;
	}
	if (!contract_direct(pr, o->alpha, o->beta))
		return;
	permute_plan_str(&pr->perm[PERM_DIRECT].plan, what, sizeof(what));
	snprintf(buf, len, "a permute of A into C, %s", what);
}

static json_t *report_json(const struct tcx_contraction *c, const struct problem *p,
			   const struct device_info *dev, const struct solution *s,
			   const char *permute, bool ttm, enum arith ar,
			   const struct validate_report *r, enum tcx_status st)
{
	json_t *o = json_object(), *sizes = json_object(), *list = json_array(), *b;
	char name[128];

	contraction_tensile_name(c, name, sizeof(name));
	json_object_set_new(o, "result", json_string(st == TCX_OK ? "pass" : "fail"));
	json_object_set_new(o, "expression", json_string(c->expr));
	json_object_set_new(o, "problem_type", json_string(name));
	for (int id = 0; id < c->nidx; id++)
		json_object_set_new(sizes, c->idx[id].name, json_integer(p->size[id]));
	json_object_set_new(o, "sizes", sizes);
	json_object_set_new(o, "device", json_string(dev->id));
	json_object_set_new(o, "device_name", json_string(dev->name));
	json_object_set_new(o, "solution", solution_to_json(s));
	if (permute[0])
		json_object_set_new(o, ttm ? "kernel" : "permute", json_string(permute));
	if (problem_empty_index(p) >= 0) {
		char why[128];

		empty_text(p, why, sizeof(why));
		json_object_set_new(o, "no_kernel", json_string(why));
	}
	json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
	json_object_set_new(o, "elements", json_integer(r->total));
	json_object_set_new(o, "checked", json_integer(r->checked));
	json_object_set_new(o, "mismatches", json_integer(r->mismatches));
	json_object_set_new(o, "unwritten", json_integer(r->unwritten));
	json_object_set_new(o, "nan_results", json_integer(r->nan_results));
	json_object_set_new(o, "writes_outside_c", json_integer(r->gap_writes));
	json_object_set_new(o, "max_abs_error", json_num(r->max_abs));
	json_object_set_new(o, "max_rel_error", json_num(r->max_rel));
	if (r->accuracy > 0) {
		json_object_set_new(o, "accuracy", json_real(r->accuracy));
		json_object_set_new(o, "arithmetic", json_string(arith_name(ar)));
		json_object_set_new(o, "measured_error", json_num(r->max_err_mag));
	}
	b = json_object();
	if (r->accuracy > 0) {
		json_object_set_new(b, "kind", json_string("accuracy"));
		json_object_set_new(b, "accuracy", json_real(r->accuracy));
	} else if (r->custom_tol) {
		json_object_set_new(b, "kind", json_string("rtol/atol"));
		json_object_set_new(b, "rtol", json_real(r->rtol));
		json_object_set_new(b, "atol", json_real(r->atol));
	} else {
		json_object_set_new(b, "kind", json_string("type-aware"));
		json_object_set_new(b, "products", json_integer(r->products));
		json_object_set_new(b, "unit_roundoff_accumulate", json_real(r->u_acc));
		json_object_set_new(b, "unit_roundoff_output", json_real(r->u_out));
		if (r->u_in > 0)
			json_object_set_new(b, "unit_roundoff_input", json_real(r->u_in));
		json_object_set_new(b, "gamma", json_real(r->gamma));
	}
	json_object_set_new(o, "bound", b);
	for (int k = 0; k < r->nlist; k++) {
		json_t *m = json_object(), *ix = json_object();

		for (int id = 0; id < c->nidx; id++)
			if (c->idx[id].cls != IDX_BOUND)
				json_object_set_new(ix, c->idx[id].name, json_integer(r->list[k].idx[id]));
		json_object_set_new(m, "index", ix);
		json_object_set_new(m, "got", json_num(r->list[k].got[0]));
		json_object_set_new(m, "want", json_num(r->list[k].want[0]));
		if (dtype_info(c->dtype)->complex) {
			json_object_set_new(m, "got_im", json_num(r->list[k].got[1]));
			json_object_set_new(m, "want_im", json_num(r->list[k].want[1]));
		}
		json_object_set_new(m, "error", json_num(r->list[k].err));
		json_object_set_new(m, "bound", json_num(r->list[k].bound));
		json_object_set_new(m, "unwritten", json_boolean(r->list[k].unwritten));
		json_array_append_new(list, m);
	}
	json_object_set_new(o, "first_mismatches", list);
	json_object_set_new(o, "compile_seconds", json_real(r->compile_s));
	json_object_set_new(o, "kernel_ms", json_real(r->kernel_ms));
	json_object_set_new(o, "reference_seconds", json_real(r->reference_s));
	return o;
}

static void print_report(const struct tcx_contraction *c, const struct problem *p,
			 const char *planned_as, const struct device_info *dev,
			 const struct solution *s, const char *permute, enum arith ar,
			 const struct validate_report *r, enum tcx_status st)
{
	char name[128], sol[256], where[256], empty[128];
	bool cplx = dtype_info(c->dtype)->complex;
	int order[TCX_MAX_INDICES];

	contraction_tensile_name(c, name, sizeof(name));
	solution_name(s, sol, sizeof(sol));
	empty_text(p, empty, sizeof(empty));
	printf("device      %s (%s)\n", dev->id, dev->name);
	printf("problem     %s  %s  sizes", c->expr, name);
	/* in the order positional sizes are given: what each one became */
	contraction_positional_order(c, order);
	for (int k = 0; k < c->nidx; k++)
		printf("%s%s=%lld", k ? "," : " ", c->idx[order[k]].name,
		       (long long)p->size[order[k]]);
	if (empty[0])
		printf("\nsolution    none: %s (no kernel runs)\n", empty);
	else if (permute[0])
		printf("\nsolution    none: %s (no contraction kernel)\n", permute);
	else
		printf("\nsolution    %s\n", sol);
	if (planned_as)
		printf("planned as  %s\n", planned_as);
	printf("seed        %llu\n", (unsigned long long)r->seed);
	if (r->accuracy > 0)
		printf("bound       |err| <= %.3g * sum|alpha*a*b| + |beta*c| (--accuracy), "
		       "in %s\n",
		       r->accuracy, arith_name(ar));
	else if (r->custom_tol)
		printf("bound       |err| <= %g + %g * |ref|\n", r->atol, r->rtol);
	else
		printf("bound       |err| <= %.3g * sum|alpha*a*b| + |beta*c| (+ %.3g * |ref|): "
		       "%lld products, unit round-off %.3g\n",
		       r->gamma, 2 * r->u_out, (long long)r->products, r->u_acc);
	if (!r->custom_tol && !(r->accuracy > 0) && r->u_in > 0)
		printf("            the kernel rounds its inputs (tf32 tensor cores): "
		       "unit round-off %.3g\n",
		       r->u_in);
	printf("checked     %lld of %lld elements%s\n", (long long)r->checked, (long long)r->total,
	       r->checked < r->total ? " (spread sample)" : "");
	index_text(c, r->max_idx, where, sizeof(where));
	if (r->checked)
		printf("max error   %.3g at %s (relative %.3g)\n", r->max_abs, where, r->max_rel);
	if (r->checked && r->accuracy > 0)
		printf("relative    %.3g: the largest |err| / sum|alpha*a*b| + |beta*c|\n",
		       r->max_err_mag);
	printf("mismatches  %lld", (long long)r->mismatches);
	if (r->unwritten)
		printf(" (%lld never written)", (long long)r->unwritten);
	if (r->nan_results)
		printf(" (%lld NaN)", (long long)r->nan_results);
	printf("\n");
	if (r->gap_writes)
		printf("outside C   %lld offsets between C's elements were overwritten\n",
		       (long long)r->gap_writes);
	for (int k = 0; k < r->nlist; k++) {
		const struct mismatch *m = &r->list[k];

		index_text(c, m->idx, where, sizeof(where));
		if (m->unwritten)
			printf("  C%s: never written\n", where);
		else if (cplx)
			printf("  C%s: got %.9g%+.9gi, want %.9g%+.9gi, error %.3g > %.3g\n", where,
			       m->got[0], m->got[1], m->want[0], m->want[1], m->err, m->bound);
		else
			printf("  C%s: got %.9g, want %.9g, error %.3g > %.3g\n", where, m->got[0],
			       m->want[0], m->err, m->bound);
	}
	if (empty[0])
		printf("timing      no kernel, reference %.3f s\n", r->reference_s);
	else
		printf("timing      compile %.3f s, kernel %.3f ms, reference %.3f s\n",
		       r->compile_s, r->kernel_ms, r->reference_s);
	printf("result      %s\n", st == TCX_OK ? "PASS" : "FAIL");
}

int cmd_validate(int argc, char **argv)
{
	const char *type = NULL, *layout = NULL, *sizes = NULL, *strides = NULL, *params = NULL;
	const char *solfile = NULL, *devid = NULL, *logicfile = NULL;
	char permute[320] = "";
	bool ttm = false;
	enum arith ar;
	struct logic *lg = NULL;
	enum out_format fmt = FMT_TABLE;
	struct validate_opts o;
	struct validate_report r;
	struct tcx_contraction *c = NULL;
	struct device *dev = NULL;
	struct problem p;
	struct solution s;
	struct prepared pr = { 0 };
	struct plan_result pl;
	bool planned = false;
	int pick = -1;
	struct tcx_error err = { 0 };
	struct strbuf log = STRBUF_INIT;
	enum tcx_status st;
	int ret, opt;
	int64_t v;

	validate_opts_default(&o);
	while ((opt = cmd_getopt(&cmd_validate_def, argc, argv)) != -1) {
		switch (opt) {
		case 's':
			sizes = optarg;
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
		case 0x109:
			logicfile = optarg;
			break;
		case 0x10a:
			if (!init_parse(optarg, &o.init))
				return option_value_error(&cmd_validate_def, 0x10a, "init", optarg);
			break;
		case 0x101:
			if ((ret = parse_count(optarg, "seed", 0, &v)))
				return ret;
			o.seed = (uint64_t)v;
			break;
		case 0x102:
			if ((ret = parse_scalar(optarg, "alpha", o.alpha)))
				return ret;
			break;
		case 0x103:
			if ((ret = parse_scalar(optarg, "beta", o.beta)))
				return ret;
			break;
		case 0x104:
		case 0x105: {
			double tv;

			if (!common_parse_double(optarg, &tv) || tv < 0)
				return error("tolerance '%s' is not a number >= 0", optarg),
				       TCX_EXIT_USAGE;
			if (opt == 0x104)
				o.rtol = tv;
			else
				o.atol = tv;
			break;
		}
		case 0x106:
			if ((ret = parse_count(optarg, "sample", 1, &o.sample)))
				return ret;
			break;
		case 0x107:
			if ((ret = parse_count(optarg, "show", 0, &v)))
				return ret;
			o.max_report = v > 64 ? 64 : (int)v;
			break;
		case 'l':
			layout = optarg;
			break;
		case 0x108:
			strides = optarg;
			break;
		case 'f':
			if (!parse_format(optarg, &fmt, FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_JSON)))
				return option_value_error(&cmd_validate_def, 'f', "format", optarg);
			break;
		case 0x10b:
			if ((ret = parse_accuracy(optarg, &o.accuracy)))
				return ret;
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return usage_error(&cmd_validate_def,
				   optind >= argc ? "missing the expression" : "too many arguments");
	if (!sizes)
		return usage_error(&cmd_validate_def, "--sizes is required");
	if (o.accuracy > 0 && (o.rtol >= 0 || o.atol >= 0))
		return usage_error(&cmd_validate_def,
				   "--accuracy cannot be combined with --rtol or --atol");
	if (o.rtol >= 0 && o.atol < 0)
		o.atol = 0;
	if (o.atol >= 0 && o.rtol < 0)
		o.rtol = 0;
	ret = load_contraction(argv[optind], type, layout, &c);
	if (ret)
		return ret;
	ret = load_problem(c, sizes, strides, &p);
	if (ret)
		goto out;
	if (dtype_info(c->dtype)->complex == false && (o.alpha[1] != 0 || o.beta[1] != 0)) {
		ret = error("complex alpha or beta for a real type");
		ret = TCX_EXIT_USAGE;
		goto out;
	}
	ret = open_device(devid, &dev);
	if (ret)
		goto out;
	if (logicfile) {
		if (params || solfile) {
			ret = usage_error(&cmd_validate_def,
					  "--logic cannot be combined with --params or --solution");
			goto out;
		}
		ret = load_logic(logicfile, c, &lg);
		if (!ret)
			ret = logic_solution_for(lg, logicfile, p.size, &pick);
		if (!ret)
			ret = logic_solution_plan(lg, pick, &p, device_info_of(dev), &pl, &planned,
						  &s);
	} else if (planner_wanted(params, solfile, NULL)) {
		/* what run and bench try first for this accuracy */
		st = plan_solution_accuracy(&p, device_info_of(dev), o.accuracy, ARITH_TF32, &pl, &s,
					    &err);
		ret = st ? report(st, &err) : 0;
		planned = !ret;
	} else {
		ret = load_solution(params, solfile, c, device_info_of(dev), &s);
	}
	if (ret)
		goto out;
	st = prepare_kernel(dev, &p, planned ? &pl : NULL, &s, &pr, &log, &err);
	if (st) {
		if (st == TCX_EREJECT || st == TCX_ELIMIT)
			tcx_error_prefix(&err, "solution rejected");
		ret = report(st, &err);
		if (st == TCX_EBUILD && log.len && verbosity > 0)
			fprintf(stderr, "build log:\n%s\n", strbuf_str(&log));
		else if (st == TCX_EBUILD)
			fprintf(stderr, "(run with -v to see the build log)\n");
		goto out;
	}
	if (!pr.host)
		s = pr.plan.sol; /* with automatic values resolved */
	st = validate_run(dev, &pr, &p, &o, &r, &err);
	if (st && st != TCX_EMISMATCH) {
		ret = report(st, &err);
		goto out;
	}
	other_kernel_text(c, &pr, &o, permute, sizeof(permute), &ttm);
	ar = contract_arith(&pr, c->dtype, &s);
	if (fmt == FMT_JSON) {
		json_t *j = report_json(c, &p, device_info_of(dev), &s, permute, ttm, ar, &r, st);

		if (planned && pl.merged)
			json_object_set_new(j, "planned_as", json_string(pl.kp.c->expr));
		print_json(stdout, j);
		json_decref(j);
	} else {
		print_report(c, &p, planned && pl.merged ? pl.kp.c->expr : NULL,
			     device_info_of(dev), &s, permute, ar, &r, st);
	}
	if (st && r.accuracy > 0 && !r.gap_writes)
		error("validation failed: the result's relative error %.3g (%s) is above the "
		      "accuracy %.3g asked (seed %llu)",
		      r.max_err_mag, arith_name(ar), r.accuracy,
		      (unsigned long long)o.seed);
	else if (st)
		error("validation failed: %s (seed %llu)", err.msg, (unsigned long long)o.seed);
	ret = exit_code(st);
out:
	contract_release(dev, &pr);
	if (planned)
		plan_release(&pl);
	logic_free(lg);
	strbuf_release(&log);
	device_close(dev);
	contraction_free(c);
	return ret;
}

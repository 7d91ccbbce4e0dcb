/* test_tune_space.c - tcx tune EXPR's config and search space
 * (lib/tune/space.h), on a GPU described without opening one: the space
 * holds the planner's own choice, is in the model's order, holds only what
 * the device takes, moves the parameters of each kernel family of the
 * device, and keeps fp32 at fp32's accuracy. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gen/gen.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "tune/space.h"

static struct tcx_contraction *parse(const char *e, enum tcx_dtype t)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;

	if (notation_parse(e, t, LAYOUT_BY_STYLE, &c, &err) != TCX_OK)
		fprintf(stderr, "parse '%s': %s\n", e, err.msg);
	return c;
}

static bool has_move(const struct tune_space *sp, const char *move)
{
	for (int k = 0; k < sp->n; k++)
		if (strcmp(sp->v[k].move, move) == 0)
			return true;
	return false;
}

/* The config made for an expression: one problem, one group whose final
 * sizes are the exact sizes and ranges given. */
static void test_config(void)
{
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	const int64_t exact[] = { 64, 32, 16, 8, 8, 8 };
	struct size_range r;
	struct config *cfg = NULL;
	struct tcx_error err;
	const struct config_step *st;

	CHECK(c != NULL);
	CHECK(size_range_parse_for(c, "[16,16,32],0,0", &r, &err) == TCX_OK);
	CHECK(config_from_expr(c, "C[ij]=A[ik]*B[kj]", &r, 1, exact, 2, &cfg, &err) == TCX_OK);
	CHECK(cfg && cfg->nproblems == 1 && cfg->problems[0].ngroups == 1);
	if (!cfg)
		return;
	CHECK(strcmp(json_string_value(json_object_get(cfg->problems[0].problem_type, "Name")),
		     "Cij_Aik_Bkj_S") == 0);
	st = &cfg->problems[0].groups[0].phase[PH_FINAL].steps[0];
	CHECK(cfg->problems[0].groups[0].phase[PH_FINAL].nsteps == 1 && st->has_sizes);
	CHECK(st->sizes.nranges == 1 && st->sizes.nexact == 2);
	CHECK(st->sizes.exact[3] == 8);
	CHECK(cfg->problems[0].groups[0].candidates == NULL);
	config_free(cfg);
}

/* The space of one contraction on a described GPU. */
static void check_space(const char *expr, enum tcx_dtype t, const int64_t *sizes,
			const char *gpu)
{
	struct tcx_contraction *c = parse(expr, t);
	struct device_info di;
	struct config *cfg = NULL;
	struct tune_space sp;
	struct tcx_error err;
	struct problem p;
	struct plan_result pl;
	json_t *cands;
	int nexact = 1;

	CHECK(c != NULL && plan_known_device(gpu, &di));
	if (!c)
		return;
	CHECK(config_from_expr(c, expr, NULL, 0, sizes, nexact, &cfg, &err) == TCX_OK);
	if (!cfg)
		return;
	c = cfg->problems[0].type;
	CHECK_MSG(tune_space_attach(cfg, &di, SPACE_SEEDS, 0, &sp, &err) == TCX_OK, "%s: %s", expr,
		  err.msg);
	cands = cfg->problems[0].groups[0].candidates;
	CHECK(json_array_size(cands) == (size_t)sp.n);
	CHECK_MSG(sp.nseeds >= SPACE_SEEDS && sp.n > 2 * sp.nseeds, "%s: %d around %d", expr,
		  sp.n, sp.nseeds);
	CHECK(sp.valid > 0 && sp.valid <= sp.listed && sp.nsizes == 1);
	/* the planner's own choice is its first seed (a neighbour the model
	 * ranks higher may come before it) */
	CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
	CHECK(planner_plan(&p, &di, 0, &pl, &err) == TCX_OK);
	for (int k = 0; k < sp.n && !pl.merged; k++)
		if (strcmp(sp.v[k].move, "planner") == 0 && sp.v[k].seed == 0) {
			CHECK_MSG(solution_equal(&sp.v[k].sol, &pl.best.sol),
				  "%s: the planner's best is the first seed", expr);
			CHECK(sp.v[k].predicted_s <= pl.best.time_s * 1.000001);
			CHECK(k == 0 || sp.v[0].predicted_s <= sp.v[k].predicted_s);
		}
	plan_release(&pl);
	for (int k = 0; k < sp.n; k++) {
		struct kernel_plan kp;
		struct solution back;

		if (k > 0)
			CHECK(sp.v[k].predicted_s >= sp.v[k - 1].predicted_s);
		CHECK(sp.v[k].seed < sp.nseeds);
		/* only what the device takes, each once */
		CHECK_MSG(plan_make(c, &p, &sp.v[k].sol, &di, &kp, &err) == TCX_OK &&
				  plan_accepts(&kp, &p, &err) == TCX_OK,
			  "%s: entry %d: %s", expr, k, err.msg);
		for (int j = 0; j < k; j++)
			CHECK(!solution_equal(&sp.v[j].sol, &sp.v[k].sol));
		/* fp32 on tensor cores keeps fp32's accuracy */
		if (sp.v[k].sol.mi[0] && t == TCX_DTYPE_S)
			CHECK(sp.v[k].sol.tf32x3);
		if (t != TCX_DTYPE_S)
			CHECK(!sp.v[k].sol.tf32x3);
		/* the candidates the strategy reads are these solutions */
		solution_default(&back);
		CHECK(solution_from_json(&back, json_array_get(cands, (size_t)k), &err) == TCX_OK);
		CHECK(solution_equal(&back, &sp.v[k].sol));
	}
	CHECK(has_move(&sp, "DepthU") && has_move(&sp, "WorkGroupMapping"));
	/* the warpgroup family's instruction shapes and packing, both ways */
	{
		bool packed[2] = { false, false }, n[3] = { false, false, false };

		for (int k = 0; k < sp.n; k++)
			if (sp.v[k].sol.mi[0] == 64) {
				packed[sp.v[k].sol.pack_free] = true;
				n[sp.v[k].sol.mi[1] == 64 ? 0 : sp.v[k].sol.mi[1] == 128 ? 1 : 2] = true;
			}
		CHECK_MSG(packed[0] && packed[1] && n[0] + n[1] + n[2] >= 2,
			  "%s: warpgroup tiles moved", expr);
	}
	/* fp32 (TF32x3): down to tiles 32 wide, the planner's for short free
	 * extents */
	if (t == TCX_DTYPE_S) {
		bool n32 = false;

		for (int k = 0; k < sp.n; k++)
			n32 = n32 || (sp.v[k].sol.mi[0] == 64 && sp.v[k].sol.mi[1] == 32);
		CHECK_MSG(n32, "%s: a warpgroup tile 32 wide", expr);
	}
	tune_space_release(&sp);
	config_free(cfg);
}

static void test_spaces(void)
{
	const int64_t gemm[] = { 4096, 4096, 4096 };
	const int64_t batched[] = { 512, 512, 8, 512 };
	const int64_t skinny[] = { 256, 256, 65536 };

	check_space("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, gemm, "h100");
	check_space("ilk,jlk->ijk", TCX_DTYPE_S, batched, "h200");
	check_space("C[ij]=A[ik]*B[kj]", TCX_DTYPE_H, gemm, "h100");
	/* a short output over a long sum: GlobalSplitU moves */
	{
		struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
		struct device_info di;
		struct config *cfg = NULL;
		struct tune_space sp;
		struct tcx_error err;

		CHECK(plan_known_device("h100", &di));
		CHECK(config_from_expr(c, "skinny", NULL, 0, skinny, 1, &cfg, &err) == TCX_OK);
		CHECK(cfg && tune_space_attach(cfg, &di, SPACE_SEEDS, 0, &sp, &err) == TCX_OK);
		CHECK(has_move(&sp, "GlobalSplitU"));
		tune_space_release(&sp);
		config_free(cfg);
	}
}

/* A contraction the planner permutes (TTGT: its batch index moves fastest
 * in every tensor, so no tile reads along a unit stride): the space, which
 * takes it as written, is predicted much slower than no tuning, and says
 * so; a GEMM's is not. */
static void test_outside(void)
{
	static const struct {
		const char *expr;
		int64_t sizes[6];
		bool outside;
	} cases[] = {
		{ "C[b,i,j]=A[b,i,k]*B[b,k,j]", { 64, 512, 512, 512 }, true },
		{ "C[ij]=A[ik]*B[kj]", { 4096, 4096, 4096 }, false },
	};

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct tcx_contraction *c = parse(cases[k].expr, TCX_DTYPE_S);
		struct device_info di;
		struct config *cfg = NULL;
		struct tune_space sp;
		struct tcx_error err;

		CHECK(c && plan_known_device("h100", &di));
		CHECK(config_from_expr(c, cases[k].expr, NULL, 0, cases[k].sizes, 1, &cfg, &err) ==
		      TCX_OK);
		if (!cfg)
			continue;
		CHECK(tune_space_attach(cfg, &di, SPACE_SEEDS, 0, &sp, &err) == TCX_OK);
		CHECK_MSG(sp.untuned_outside == cases[k].outside && sp.untuned_s > 0,
			  "%s: untuned %g s against %g, outside %d", cases[k].expr, sp.untuned_s,
			  sp.n ? sp.v[0].predicted_s : 0, sp.untuned_outside);
		tune_space_release(&sp);
		config_free(cfg);
	}
}

/* On CUDA the SIMT 8 x 8 DepthU 8 tile comes with the launch bound the
 * planner gives it (Occupancy 2 in work-groups of 256, 4 in 128), in the
 * space as in planner_plan. */
static void test_launch_bound(void)
{
	const int64_t sizes[] = { 11520, 8000, 24 };
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	struct device_info di;
	struct config *cfg = NULL;
	struct tune_space sp;
	struct tcx_error err;
	int bounded = 0, unbounded = 0;

	CHECK(c && plan_known_device("h200", &di));
	CHECK(config_from_expr(c, "short sum", NULL, 0, sizes, 1, &cfg, &err) == TCX_OK);
	if (!cfg)
		return;
	CHECK(tune_space_attach(cfg, &di, SPACE_SEEDS, 0, &sp, &err) == TCX_OK);
	for (int k = 0; k < sp.n; k++) {
		const struct solution *s = &sp.v[k].sol;

		if (!s->mi[0] && s->tt[0] == 8 && s->tt[1] == 8 && s->depth_u == 8 &&
		    strcmp(sp.v[k].move, "planner") == 0) {
			const int nt = s->wg[0] * s->wg[1] * s->wg[2];

			bounded += s->occupancy == 512 / nt;
			unbounded += s->occupancy == 0;
		}
	}
	CHECK_MSG(bounded > 0 && unbounded == 0, "8x8 DepthU 8 seeds: %d bounded, %d not", bounded,
		  unbounded);
	tune_space_release(&sp);
	config_free(cfg);
}

/* An accuracy lets plain tf32 into an fp32 space where its predicted
 * error meets it (tcx tune --accuracy); without one, or with one it
 * cannot meet, every tensor-core candidate keeps TF32x3. */
static int plain_tf32(const char *expr, const int64_t *sizes, double accuracy)
{
	struct tcx_contraction *c = parse(expr, TCX_DTYPE_S);
	struct device_info di;
	struct config *cfg = NULL;
	struct tune_space sp;
	struct tcx_error err;
	int n = 0;

	CHECK(c && plan_known_device("h200", &di));
	CHECK(config_from_expr(c, expr, NULL, 0, sizes, 1, &cfg, &err) == TCX_OK);
	if (!cfg)
		return -1;
	CHECK(tune_space_attach(cfg, &di, SPACE_SEEDS, accuracy, &sp, &err) == TCX_OK);
	for (int k = 0; k < sp.n; k++)
		n += sp.v[k].sol.mi[0] > 0 && !sp.v[k].sol.tf32x3;
	tune_space_release(&sp);
	config_free(cfg);
	return n;
}

static void test_accuracy(void)
{
	const int64_t gemm[] = { 4096, 4096, 4096 };

	CHECK(plain_tf32("C[ij]=A[ik]*B[kj]", gemm, 0) == 0);
	CHECK(plain_tf32("C[ij]=A[ik]*B[kj]", gemm, 1e-6) == 0);
	CHECK_MSG(plain_tf32("C[ij]=A[ik]*B[kj]", gemm, 1e-3) > 0, "1e-3: no plain tf32");
}

int main(void)
{
	test_config();
	test_spaces();
	test_outside();
	test_launch_bound();
	test_accuracy();
	return check_done();
}

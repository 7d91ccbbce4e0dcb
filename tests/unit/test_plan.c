/* test_plan.c - the planner's steps (lib/plan): index merging, checked by
 * what merges and by the merged problem computing what the original does,
 * on the same memory, with the host reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "backend/host/host.h"
#include "notation/notation.h"
#include "gen/permute.h"
#include "gen/solution.h"
#include "gen/ttm.h"
#include "plan/fit.h"
#include "plan/arith.h"
#include "plan/merge.h"
#include "plan/planner.h"
#include "run/run.h"
#include "store/store.h"
#include "tune/tune.h"

static struct tcx_contraction *parse(const char *e, enum tcx_dtype t)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;

	if (notation_parse(e, t, LAYOUT_BY_STYLE, &c, &err) != TCX_OK)
		fprintf(stderr, "parse '%s': %s\n", e, err.msg);
	return c;
}

/* The original and the merged problem on one set of random tensors give
 * the same C (the same products, summed in the same order). */
static void same_result(const struct problem *p, const struct problem *mp)
{
	const double one[2] = { 1, 0 }, half[2] = { 0.5, 0.25 };
	size_t esz = (size_t)dtype_info(p->c->dtype)->bytes;
	void *a = run_make_tensor(p, T_A, INIT_RANDOM, 7, NULL);
	void *b = run_make_tensor(p, T_B, INIT_RANDOM, 7, NULL);
	void *c1 = run_make_tensor(p, T_C, INIT_RANDOM, 7, NULL);
	void *c2 = malloc((size_t)p->extent[T_C] * esz);

	CHECK(mp->extent[T_A] == p->extent[T_A] && mp->extent[T_B] == p->extent[T_B] &&
	      mp->extent[T_C] == p->extent[T_C]);
	if (a && b && c1 && c2) {
		memcpy(c2, c1, (size_t)p->extent[T_C] * esz);
		CHECK(host_contract(p, a, b, c1, one, half, 1, NULL) == TCX_OK);
		CHECK(host_contract(mp, a, b, c2, one, half, 1, NULL) == TCX_OK);
		CHECK_MSG(memcmp(c1, c2, (size_t)p->extent[T_C] * esz) == 0, "'%s' vs '%s'",
			  p->c->expr, mp->c->expr);
	}
	free(a);
	free(b);
	free(c1);
	free(c2);
}

/* Merges `expr` at `sizes` (by name); checks the merged expression and,
 * when it merged, the result. */
static void check_merge(const char *expr, enum tcx_dtype t, const char *sizes,
			const char *strides, const char *want)
{
	struct tcx_contraction *c = parse(expr, t), *m = NULL;
	struct problem p, mp;
	struct merge_map map;
	int64_t sz[TCX_MAX_INDICES];
	struct tcx_error err;

	if (!c) {
		CHECK(c != NULL);
		return;
	}
	CHECK(sizes_parse_assign_zero(c, sizes, sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	if (strides)
		CHECK(problem_parse_strides(&p, strides, &err) == TCX_OK);
	CHECK(problem_merge(&p, &m, &mp, &map, &err) == TCX_OK);
	if (!want) {
		CHECK_MSG(m == NULL, "'%s' merged into '%s'", expr, m ? m->expr : "");
	} else {
		CHECK_MSG(m && strcmp(m->expr, want) == 0, "'%s': got '%s', want '%s'", expr,
			  m ? m->expr : "(nothing merged)", want);
		if (m) {
			for (int k = 0; k < map.n; k++) {
				int64_t v = 1;

				for (int j = 0; j < map.count[k]; j++) {
					v *= p.size[map.from[k][j]];
					CHECK(map.to[map.from[k][j]] == k);
				}
				CHECK(mp.size[k] == v);
			}
			same_result(&p, &mp);
		}
	}
	contraction_free(m);
	contraction_free(c);
}

static void test_merge(void)
{
	/* TCCG's CCSD(T): b, c adjacent in C and B; i, j in C and A */
	check_merge("C[a,b,c,i,j,k]=A[i,j,m,a]*B[m,k,b,c]", TCX_DTYPE_S,
		    "a=4,b=3,c=2,i=5,j=2,k=3,m=4", NULL, "C[a,bc,ij,k] = A[ij,m,a] * B[m,k,bc]");
	/* nothing to merge: a GEMM, a batched GEMM, and i, k not adjacent */
	check_merge("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=3,j=4,k=5", NULL, NULL);
	check_merge("C[ijk]=A[ilk]*B[jlk]", TCX_DTYPE_S, "i=3,j=4,k=5,l=2", NULL, NULL);
	/* two bound indices in the same order in A and B */
	check_merge("C[ij]=A[ikl]*B[klj]", TCX_DTYPE_D, "i=3,j=4,k=5,l=2", NULL,
		    "C[i,j] = A[i,kl] * B[kl,j]");
	/* ... and in the other order in B: no */
	check_merge("C[ij]=A[ikl]*B[lkj]", TCX_DTYPE_S, "i=3,j=4,k=5,l=2", NULL, NULL);
	/* einsum: the last index fastest, names as written; complex with
	 * conjugation and beta */
	check_merge("ijkl,klm->ijm", TCX_DTYPE_C, "i=2,j=3,k=4,l=5,m=3", NULL,
		    "C[m,ij] = A[kl,ij] * B[m,kl]");
	check_merge("C[i,j,k]=alpha*conj(A[i,j,l])*B[l,k] + beta*C[i,j,k]", TCX_DTYPE_Z,
		    "i=2,j=3,k=4,l=5", NULL, "C[ij,k] = alpha*conj(A[ij,l]) * B[l,k] + beta*C[ij,k]");
	/* a size-1 index joins an index of its class wherever it is */
	check_merge("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=1,j=4,k=5", NULL, NULL);
	check_merge("C[ijk]=A[ik]*B[kj]", TCX_DTYPE_S, "i=3,j=1,k=5", NULL, NULL);
	check_merge("C[i,j,l]=A[i,k,l]*B[k,j]", TCX_DTYPE_S, "i=3,j=4,k=5,l=1", NULL,
		    "C[il,j] = A[il,k] * B[k,j]");
	/* explicit strides: padded rows keep i, j apart in A; packed ones
	 * merge; an empty problem is left alone */
	check_merge("C[i,j,k]=A[i,j,l]*B[l,k]", TCX_DTYPE_S, "i=3,j=4,k=2,l=5",
		    "A=[1,4,16],B=[1,5],C=[1,3,12]", NULL);
	check_merge("C[i,j,k]=A[i,j,l]*B[l,k]", TCX_DTYPE_S, "i=3,j=4,k=2,l=5",
		    "A=[1,3,12],B=[1,5],C=[1,3,12]", "C[ij,k] = A[ij,l] * B[l,k]");
	check_merge("C[i,j,k]=A[i,j,l]*B[l,k]", TCX_DTYPE_S, "i=3,j=0,k=2,l=5", NULL, NULL);
	/* fp16: rounding of the same sums in the same order */
	check_merge("C[a,b,c]=A[a,b,k]*B[k,c]", TCX_DTYPE_H, "a=3,b=5,c=4,k=6", NULL,
		    "C[ab,c] = A[ab,k] * B[k,c]");
}

/* Plans `expr` at `sizes` for a described GPU (or PoCL-like CPU when gpu
 * is NULL); the plan must be one the device takes, and with `want` its
 * solution name must contain that text. */
/* want: text the solution's name must hold; planned_as: the problem the
 * kernel must run; permute: which operands must be permuted first ("A",
 * "B", "AB" or "" for none; NULL: either).  planned_as and permute may list
 * alternatives the model may pick between, "X|Y". */
/* Whether `got` is one of the '|'-separated alternatives of `want`. */
static bool one_of(const char *want, const char *got)
{
	size_t n = strlen(got);

	for (const char *p = want; p; p = strchr(p, '|')) {
		p += *p == '|';
		if (!strncmp(p, got, n) && (p[n] == '|' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* A CPU as PoCL describes one (no cache size: the model's 4 MB). */
static void cpu_device(struct device_info *dev)
{
	memset(dev, 0, sizeof(*dev));
	snprintf(dev->name, sizeof(dev->name), "cpu");
	snprintf(dev->lang, sizeof(dev->lang), "opencl");
	dev->type = DEV_CPU;
	dev->compute_units = 2;
	dev->clock_mhz = 2000;
	dev->pref_vector_float = 16;
	dev->max_wg_size = 4096;
	dev->max_wg_dim[0] = dev->max_wg_dim[1] = dev->max_wg_dim[2] = 4096;
	dev->local_mem = 1 << 20;
	dev->fp64 = true;
}

/* Plans expr at sizes on GPU `gpu` (NULL: a CPU) and checks the choice:
 * its solution name holds `want` ("!X": does not hold X), it is planned as
 * one of `planned_as` and permutes the tensors in `permute`; NULL checks
 * nothing. */
static void check_plan_p(const char *expr, enum tcx_dtype t, const char *sizes, const char *gpu,
			 const char *want, const char *planned_as, const char *permute)
{
	struct tcx_contraction *c = parse(expr, t);
	struct device_info dev;
	struct problem p;
	struct plan_result pl;
	struct kernel_plan k;
	int64_t sz[TCX_MAX_INDICES];
	char name[256];
	struct tcx_error err;

	if (!c) {
		CHECK(c != NULL);
		return;
	}
	if (gpu)
		CHECK(plan_known_device(gpu, &dev));
	else
		cpu_device(&dev);
	CHECK(sizes_parse_assign(c, sizes, sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	CHECK_MSG(planner_plan(&p, &dev, PLAN_PERMUTE, &pl, &err) == TCX_OK, "%s: %s", expr, err.msg);
	CHECK(pl.valid > 0 && pl.valid <= pl.considered);
	CHECK(pl.best.time_s > 0 && pl.best.compute_s >= 0 && pl.best.memory_s >= 0);
	CHECK(!pl.has_second || pl.second.time_s >= pl.best.time_s);
	/* the choice is one the kernel generator takes for the planned problem */
	CHECK(plan_make(pl.kp.c, &pl.kp, &pl.best.sol, &dev, &k, &err) == TCX_OK);
	solution_name(&pl.best.sol, name, sizeof(name));
	if (want && want[0] == '!')
		CHECK_MSG(strstr(name, want + 1) == NULL, "%s: chose %s, want no %s", expr, name,
			  want + 1);
	else if (want)
		CHECK_MSG(strstr(name, want) != NULL, "%s: chose %s, want %s", expr, name, want);
	if (planned_as)
		CHECK_MSG(one_of(planned_as, pl.kp.c->expr), "%s: planned as %s", expr,
			  pl.kp.c->expr);
	if (permute) {
		char got[4] = "";

		if (pl.best.permute[0].on)
			strcat(got, "A");
		if (pl.best.permute[1].on)
			strcat(got, "B");
		if (pl.best.permute[2].on)
			strcat(got, "C");
		CHECK_MSG(one_of(permute, got), "%s: permutes '%s', want '%s'", expr, got,
			  permute);
	}
	plan_release(&pl);
	contraction_free(c);
}

static void check_plan(const char *expr, enum tcx_dtype t, const char *sizes, const char *gpu,
		       const char *want, const char *planned_as)
{
	check_plan_p(expr, t, sizes, gpu, want, planned_as, NULL);
}

static void test_planner(void)
{
	/* fp32 on Hopper: the tensor cores, through TF32x3 (fp32's accuracy) */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=4096,j=4096,k=4096", "h100", "_TF32X3",
		   NULL);
	/* CCSD(T): C's free indices alternate between A's and B's; the SIMT
	 * kernel with PackFreeIndices tiles D0 as a x ij (A's, a fastest in C)
	 * and stores C in place (measured on an H200: 13.2 TFLOP/s, against
	 * 8.6 with A, C permuted around one GEMM and 6.2 directly unpacked).
	 * A, 1 MB, is permuted first so that a comes first in it too: its tile
	 * loads along a were gathers (0.210 against 0.184 ms) */
	check_plan_p("C[a,b,c,i,j,k]=A[i,j,m,a]*B[m,k,b,c]", TCX_DTYPE_S,
		     "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "h200", "_PK",
		     "C[a,bc,ij,k] = A[a,ij,m] * B[m,k,bc]", "A");
	/* ... and nothing permuted where the packed operand's tile loads run
	 * along its fastest index already (ijmc-mkab: B packs ab, read along
	 * m) */
	check_plan_p("C[a,b,c,i,j,k]=A[i,j,m,c]*B[m,k,a,b]", TCX_DTYPE_S,
		     "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "h200", "_PK",
		     "C[ab,c,ij,k] = A[ij,m,c] * B[m,k,ab]", "");
	/* C's indices in the order of neither operand's: all three permuted,
	 * one GEMM (measured on an H200: 102 against 32 TFLOP/s) */
	check_plan_p("C[i,j,k,l]=A[i,m,k,n]*B[n,j,m,l]", TCX_DTYPE_S,
		     "i=96,j=84,k=84,l=84,m=84,n=96", "h200", "_TF32X3",
		     "C[ik,jl] = A[ik,mn] * B[mn,jl]", "ABC");
	/* B's fast index n is bound, m and n lie in opposite orders in A and
	 * B, and A's free i, j are apart: both are permuted into GEMM operands
	 * (TTGT; a few percent of the time), and the problem is the GEMM of the
	 * merged indices */
	check_plan_p("C[i,j,k,l]=A[i,m,j,n]*B[n,l,m,k]", TCX_DTYPE_S,
		     "i=96,j=84,k=84,l=84,m=84,n=96", "h100", "_TF32X3",
		     "C[ij,kl] = A[ij,mn] * B[mn,kl]", "AB");
	/* a short sum on a CUDA GPU: the SIMT 8 x 8 tile with the launch
	 * bound that gives it two work-groups an SM (H200: 0.241 to 0.193 ms),
	 * in work-groups of 128, four an SM, where every tile is full (27.9
	 * to 31.9 TFLOP/s) */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=11520,j=8000,k=24", "h200",
		   "MT128x64x8_WG16x8x1_TT8x8_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_OCC4", NULL);
	/* CCSD(T): the same where the packed tiles are full (ekbc-ijea, 23.7
	 * to 25.6), 128 x 128 in 256 where they overhang (ikmb-mjac, 21.1
	 * against 17.6) */
	check_plan("C[a,b,c,i,j,k]=A[e,k,b,c]*B[i,j,e,a]", TCX_DTYPE_S,
		   "a=24,b=20,c=20,e=24,i=24,j=20,k=20", "h200",
		   "MT128x64x8_WG16x8x1_TT8x8_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_OCC4_PK", NULL);
	check_plan("C[a,b,c,i,j,k]=A[i,k,m,b]*B[m,j,a,c]", TCX_DTYPE_S,
		   "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "h200",
		   "MT128x128x8_WG16x16x1_TT8x8_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_OCC2_PK", NULL);
	/* ... and 96 x 64 in 96, five an SM, where those tiles fit and are
	 * blocks of C: D0 over a x i (576), D1 over bc x j (8000; ikma-mjbc,
	 * 20.8 to 24.1 TFLOP/s); not where they fit but D1 runs along ij,
	 * far from a in C (ijmb-mkac: 0.91 of 128 x 128) */
	check_plan("C[a,b,c,i,j,k]=A[i,k,m,a]*B[m,j,b,c]", TCX_DTYPE_S,
		   "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "h200",
		   "MT96x64x12_WG12x8x1_TT8x8_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_OCC5_PK", NULL);
	check_plan("C[a,b,c,i,j,k]=A[i,j,m,b]*B[m,k,a,c]", TCX_DTYPE_S,
		   "a=24,b=20,c=20,i=24,j=20,k=20,m=24", "h200",
		   "MT128x128x8_WG16x16x1_TT8x8_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_OCC2_PK", NULL);
	/* B's free index 24 long, A read along its bound index: warpgroup
	 * tiles 32 wide along it, two work-groups an SM, and D0 along A's a,
	 * C's fastest (H200: 23.6 TFLOP/s against 16.7 for 64 x 128) */
	check_plan("C[a,j,b]=A[k,b,a]*B[j,k]", TCX_DTYPE_S, "a=384,b=376,j=24,k=384", "h200",
		   "MT64x32x32_WG16x8x1_TT4x4_VW1_GSU1_PGR1_PLR1_EB_WGM8_NLC1x1_LT1_OCC2_MI64x32x8x1_"
		   "TF32X3_Ia",
		   NULL);
	/* C's fastest index a and A's c apart, B's j 24 long: C written as
	 * c,bad,j by SIMT tiles 128 x 32, D0 packed over c and bad, then
	 * permuted into place (H200: 8.7 TFLOP/s against 7.1 for 64 x 32) */
	check_plan_p("C[a,j,b,d,c]=A[c,k,b,a,d]*B[j,k]", TCX_DTYPE_S,
		     "a=48,b=36,c=48,d=36,j=24,k=36", "h200",
		     "MT128x32x16_WG16x8x1_TT8x4_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_PK",
		     "C[c,bad,j] = A[c,k,bad] * B[j,k]", "C");
	/* a sum of 24 in chunks of 8, where chunks of 16 tie in the model's
	 * compute by their waves (H200: DepthU 16 ran 1.3 times as long) */
	check_plan("C[a,b,c,i,j,k]=A[i,k,m,c]*B[m,j,a,b]", TCX_DTYPE_S,
		   "a=24,b=16,c=16,i=24,j=16,k=16,m=24", "h200",
		   "MT128x64x8_WG16x8x1_TT8x8_VW4_GSU1_PGR1_PLR1_EB_WGM1_NLC1x1_LT1_OCC4_PK", NULL);
	/* on a CPU, work-items of 16 x 8 in vectors of 8 (PoCL on an AMD
	 * EPYC that prefers 16: a median 1.37 of each problem's best against
	 * 1.87 in vectors of 16, bench/results/2026-11-27-pocl-selection.md) */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=256,j=256,k=256", NULL,
		   "MT16x8x16_WG1x1x1_TT16x8_VW8_", NULL);
	/* on a CPU the permute's transpose through local memory is slow
	 * (PoCL: 4.0 ms with C written as b,a,j and permuted, 1.07 direct) */
	check_plan_p("C[a,b,j]=A[b,k,a]*B[k,j]", TCX_DTYPE_S, "a=96,b=96,j=24,k=96", NULL, NULL,
		     "C[a,b,j]=A[b,k,a]*B[k,j]", "");
	/* AO2MO's abrs-qb-aqrs: warpgroup tiles over a = 96 and b = 84, D0
	 * packed over a and rs to fill them (H200: 27.4 TFLOP/s against 21.6
	 * unpacked) */
	check_plan("C[a,b,r,s]=A[q,b]*B[a,q,r,s]", TCX_DTYPE_S, "a=96,b=84,q=96,r=84,s=84", "h200",
		   "MT128x128x32_WG32x8x1_TT4x16_VW1_GSU1_PGR1_PLR1_EB_WGM8_NLC1x1_LT1_MI64x128x8x1_"
		   "TF32X3_PK",
		   NULL);
	/* CCSD's ij-ikl-ljk: nine 128 x 128 tiles and a long sum, split to
	 * fill whole waves of 132 SMs (29 ways: two), not 32 (2.2 waves; H200:
	 * 97 TFLOP/s against 80) */
	check_plan("C[i,j]=A[i,k,l]*B[l,j,k]", TCX_DTYPE_S, "i=384,j=376,k=376,l=384", "h200",
		   "MT128x128x32_WG32x8x1_TT4x16_VW1_GSU29_", NULL);
	/* CCSD's ijk-ilmk-mjl: D1 = j = 84 in a 96-wide tile, D0 packed over
	 * i and k (H200: 69 TFLOP/s against 43 in unpacked 128 x 128 tiles) */
	check_plan("C[i,j,k]=A[i,l,m,k]*B[m,j,l]", TCX_DTYPE_S, "i=96,j=84,k=84,l=84,m=96", "h200",
		   "MT128x96x32_WG32x8x1_TT4x12_VW1_GSU2_PGR1_PLR1_EB_WGM8_NLC1x1_LT1_MI64x96x8x1_"
		   "TF32X3_PK",
		   NULL);
	/* a GEMM is never permuted */
	check_plan_p("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=2048,j=2048,k=2048", "h200", NULL, NULL,
		     "");
	/* fp16 on Hopper, fp64 (no warpgroup kernel for it) and complex types */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_H, "i=1024,j=1024,k=1024", "h200", "_MI64x", NULL);
	check_plan("C[ijk]=A[ilk]*B[jlk]", TCX_DTYPE_D, "i=77,j=61,k=3,l=129", "h100", NULL, NULL);
	/* fp64 and complex fp64 GEMMs on an H200: the fp64 tensor cores
	 * (mma.sync in sm_90's m16n8k8 shape) */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_D, "i=4096,j=4096,k=4096", "h200", "_MI16x8x8x1",
		   NULL);
	/* in 128 x 128 tiles of eight warps, one work-group an SM by their
	 * registers (46 TFLOP/s against 40.5 for 128 x 64, which the model
	 * took while it counted shared memory alone) */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_D, "i=4096,j=4096,k=4096", "h200",
		   "MT128x128x16_WG16x16x1_TT8x8", NULL);
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_Z, "i=4096,j=4096,k=4096", "h200", "_MI16x8x8x1",
		   NULL);
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_Z, "i=33,j=17,k=9", "h100", NULL, NULL);
	/* a long sum into a few outputs: GlobalSplitU */
	check_plan("C[ij]=A[ikl]*B[lkj]", TCX_DTYPE_S, "i=128,j=128,k=384,l=384", "h100", "_GSU",
		   NULL);
	/* CPUs: the direct kernel with wide vectors */
	check_plan("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, "i=512,j=512,k=512", NULL, "_DIRECT", NULL);
	check_plan("ijkl,klm->ijm", TCX_DTYPE_C, "i=6,j=5,k=4,l=3,m=7", NULL, "_DIRECT",
		   "C[m,ij] = A[kl,ij] * B[m,kl]");
}

/* The arithmetics (plan/arith.h): what a solution computes in, the order
 * a missed bound falls back in, and the predicted errors that decide what
 * an accuracy lets in. */
static void test_arith(void)
{
	struct solution s;
	enum arith a, next;

	solution_default(&s);
	CHECK(arith_of(TCX_DTYPE_S, &s) == ARITH_FP32);
	s.mi[0] = 64;
	s.tf32x3 = true;
	CHECK(arith_of(TCX_DTYPE_S, &s) == ARITH_TF32X3);
	s.tf32x3 = false;
	CHECK(arith_of(TCX_DTYPE_S, &s) == ARITH_TF32);
	CHECK(arith_of(TCX_DTYPE_H, &s) == ARITH_FP16 && arith_of(TCX_DTYPE_B, &s) == ARITH_BF16);
	CHECK(arith_of(TCX_DTYPE_D, &s) == ARITH_FP64 && arith_of(TCX_DTYPE_Z, &s) == ARITH_FP64);
	CHECK(arith_default(TCX_DTYPE_S) == ARITH_TF32X3 && arith_default(TCX_DTYPE_D) == ARITH_FP64);
	for (int k = 0; k < ARITH_COUNT; k++)
		CHECK(arith_parse(arith_name((enum arith)k), &a) && a == (enum arith)k);
	CHECK(!arith_parse("fp33", &a));
	/* tf32 -> TF32x3 -> fp32 SIMT, then nothing more accurate */
	CHECK(arith_next(TCX_DTYPE_S, ARITH_TF32, &next) && next == ARITH_TF32X3);
	CHECK(arith_next(TCX_DTYPE_S, ARITH_TF32X3, &next) && next == ARITH_FP32);
	CHECK(!arith_next(TCX_DTYPE_S, ARITH_FP32, &next));
	CHECK(!arith_next(TCX_DTYPE_D, ARITH_FP64, &next));
	/* 4096 products: tf32 about 3 * 2^-11 / 64, well inside 1e-3 and
	 * far outside 1e-6; the more accurate ones in order */
	CHECK(arith_predict(TCX_DTYPE_S, ARITH_TF32, false, 4096) < 1e-4);
	CHECK(arith_predict(TCX_DTYPE_S, ARITH_TF32, true, 4096) > 1e-5);
	CHECK(arith_predict(TCX_DTYPE_S, ARITH_TF32, false, 4096) >
	      arith_predict(TCX_DTYPE_S, ARITH_TF32X3, false, 4096));
	CHECK(arith_predict(TCX_DTYPE_S, ARITH_TF32X3, false, 4096) >
	      arith_predict(TCX_DTYPE_S, ARITH_FP32, false, 4096));
	CHECK(arith_predict(TCX_DTYPE_D, ARITH_FP64, false, 4096) < 1e-14);
}

/* planner_plan_accuracy: plain tf32 only when an accuracy lets it in,
 * nothing below the floor, and no accuracy is planner_plan's plan. */
static void test_planner_accuracy(void)
{
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	struct device_info dev;
	struct problem p;
	struct plan_result pl, base;
	int64_t sz[TCX_MAX_INDICES];
	struct tcx_error err;

	CHECK(c && plan_known_device("h200", &dev));
	if (!c)
		return;
	CHECK(sizes_parse_assign(c, "i=4096,j=4096,k=4096", sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	CHECK(planner_plan(&p, &dev, PLAN_PERMUTE, &base, &err) == TCX_OK);
	CHECK(base.best.arith == ARITH_TF32X3 && base.best.sol.tf32x3);
	plan_release(&base);
	CHECK(planner_plan_accuracy(&p, &dev, PLAN_PERMUTE, 1e-3, ARITH_TF32, &pl, &err) == TCX_OK);
	CHECK_MSG(pl.best.arith == ARITH_TF32 && pl.best.sol.mi[0] > 0 && !pl.best.sol.tf32x3,
		  "1e-3 chose %s", arith_name(pl.best.arith));
	CHECK(pl.best.predicted_err <= 1e-3);
	plan_release(&pl);
	CHECK(planner_plan_accuracy(&p, &dev, PLAN_PERMUTE, 1e-6, ARITH_TF32, &pl, &err) == TCX_OK);
	CHECK_MSG(pl.best.arith == ARITH_TF32X3, "1e-6 chose %s", arith_name(pl.best.arith));
	plan_release(&pl);
	/* a result that missed with TF32x3 is planned again in fp32 SIMT */
	CHECK(planner_plan_accuracy(&p, &dev, PLAN_PERMUTE, 1e-3, ARITH_FP32, &pl, &err) == TCX_OK);
	CHECK_MSG(pl.best.arith == ARITH_FP32 && pl.best.sol.mi[0] == 0, "floor fp32 chose %s",
		  arith_name(pl.best.arith));
	CHECK(!pl.has_second || pl.second.arith == ARITH_FP32);
	plan_release(&pl);
	contraction_free(c);
}

/* A device whose planner offers the arithmetics `have` and whose results
 * measure err[arith]: accuracy_search's try, without a GPU. */
struct fake_device {
	bool have[ARITH_COUNT];
	double err[ARITH_COUNT];
	int calls;
	enum arith floors[8];
};

static enum tcx_status fake_try(void *ctx, enum arith floor, struct accuracy_try *out,
				struct tcx_error *err)
{
	struct fake_device *d = ctx;
	int a = floor;

	if (d->calls < 8)
		d->floors[d->calls] = floor;
	d->calls++;
	while (a < ARITH_FP32 && !d->have[a])
		a++;
	if (!d->have[a])
		return tcx_fail(err, TCX_EREJECT, "nothing at least as accurate as %s",
				arith_name(floor));
	out->arith = (enum arith)a;
	out->error = d->err[a];
	return TCX_OK;
}

/* accuracy_search: a result that misses its bound falls back one
 * arithmetic at a time (tf32, TF32x3, fp32 SIMT) and is never the last
 * when a more accurate one meets the bound; when even the most accurate
 * misses, the error names the measured error and the bound. */
static void test_accuracy_search(void)
{
	struct fake_device d = {
		.have = { [ARITH_TF32] = true, [ARITH_TF32X3] = true, [ARITH_FP32] = true },
		.err = { [ARITH_TF32] = 2.4e-5, [ARITH_TF32X3] = 3e-7, [ARITH_FP32] = 2e-7 },
	};
	struct accuracy_outcome o;
	struct tcx_error err = { 0 };

	/* tf32 meets 1e-3: one try */
	CHECK(accuracy_search(TCX_DTYPE_S, 1e-3, true, fake_try, &d, &o, &err) == TCX_OK);
	CHECK(o.ntries == 1 && o.arith == ARITH_TF32 && o.error == 2.4e-5 && d.calls == 1);
	/* tf32 misses 1e-6: TF32x3 next, which meets it */
	d.calls = 0;
	CHECK(accuracy_search(TCX_DTYPE_S, 1e-6, true, fake_try, &d, &o, &err) == TCX_OK);
	CHECK_MSG(o.ntries == 2 && o.arith == ARITH_TF32X3 && o.error <= 1e-6,
		  "1e-6: %d tries, ended in %s", o.ntries, arith_name(o.arith));
	CHECK(d.floors[0] == ARITH_TF32 && d.floors[1] == ARITH_TF32X3);
	CHECK(o.tries[0].arith == ARITH_TF32 && o.tries[0].error == 2.4e-5);
	/* TF32x3 misses 2.5e-7 as well: fp32 SIMT */
	d.calls = 0;
	CHECK(accuracy_search(TCX_DTYPE_S, 2.5e-7, true, fake_try, &d, &o, &err) == TCX_OK);
	CHECK(o.ntries == 3 && o.arith == ARITH_FP32 && d.floors[2] == ARITH_FP32);
	/* nothing meets 1e-8: a mismatch naming the error and the bound */
	d.calls = 0;
	CHECK(accuracy_search(TCX_DTYPE_S, 1e-8, true, fake_try, &d, &o, &err) == TCX_EMISMATCH);
	CHECK(o.ntries == 3 && o.arith == ARITH_FP32);
	CHECK_MSG(strstr(err.msg, "2e-07") && strstr(err.msg, "1e-08") &&
			  strstr(err.msg, "fp32-simt"),
		  "%s", err.msg);
	/* a device without tf32 (a CPU): the first try is fp32 SIMT, and the
	 * last */
	d.have[ARITH_TF32] = d.have[ARITH_TF32X3] = false;
	d.calls = 0;
	CHECK(accuracy_search(TCX_DTYPE_S, 1e-8, true, fake_try, &d, &o, &err) == TCX_EMISMATCH);
	CHECK(o.ntries == 1 && d.calls == 1);
	/* a solution the user gave: checked, never replaced */
	d.have[ARITH_TF32] = true;
	d.calls = 0;
	CHECK(accuracy_search(TCX_DTYPE_S, 1e-6, false, fake_try, &d, &o, &err) == TCX_EMISMATCH);
	CHECK(o.ntries == 1 && o.arith == ARITH_TF32 && strstr(err.msg, "1e-06"));
}

/* The store's key of a solution names its indices by the problem key's
 * letters, whatever the expression called them. */
static void test_store_key(void)
{
	struct tcx_contraction *c1 = parse("C[a,b,j]=A[b,k,a]*B[k,j]", TCX_DTYPE_S);
	struct tcx_contraction *c2 = parse("C[x,y,z]=A[y,w,x]*B[w,z]", TCX_DTYPE_S);
	struct solution s1, s2;
	char k1[2048], k2[2048];

	if (!c1 || !c2)
		goto out;
	solution_default(&s1);
	s2 = s1;
	snprintf(s1.unroll_index, sizeof(s1.unroll_index), "k");
	snprintf(s1.tile_index[0], sizeof(s1.tile_index[0]), "a");
	snprintf(s2.unroll_index, sizeof(s2.unroll_index), "w");
	snprintf(s2.tile_index[0], sizeof(s2.tile_index[0]), "x");
	solution_store_key(c1, &s1, k1, sizeof(k1));
	solution_store_key(c2, &s2, k2, sizeof(k2));
	CHECK_MSG(strcmp(k1, k2) == 0, "%s against %s", k1, k2);
	/* k is the bound index, 'l' in Cijk_Ajli_Blk_S; a is C's first, 'i' */
	CHECK_MSG(strstr(k1, "\"UnrollIndex\":\"l\"") != NULL, "%s", k1);
	CHECK_MSG(strstr(k1, "\"TileIndexA\":\"i\"") != NULL ||
		  strstr(k1, ":\"i\"") != NULL, "%s", k1);
out:
	contraction_free(c1);
	contraction_free(c2);
}

/* Puts into st, as tcx tune records them, the times truth predicts for
 * the planner's candidates (the first max of them; 0: all) for expr at
 * sizes (with strides, when not NULL); returns how many. */
static int put_rows(struct store *st, const struct device_info *dev,
		    const struct plan_device *truth, const char *expr, const char *sizes,
		    const char *strides, struct solution *sols, int max)
{
	struct tcx_contraction *c = parse(expr, TCX_DTYPE_S);
	struct tcx_error err = { 0 };
	struct problem p;
	int64_t sz[TCX_MAX_INDICES];
	int n, rows = 0;

	if (!c || sizes_parse_assign_zero(c, sizes, sz, &err) != TCX_OK ||
	    problem_init(&p, c, sz, &err) != TCX_OK ||
	    (strides && problem_parse_strides(&p, strides, &err) != TCX_OK)) {
		CHECK_MSG(0, "%s %s: %s", expr, sizes, err.msg);
		contraction_free(c);
		return 0;
	}
	n = planner_list(&p, dev, 0, sols, PLAN_MAX_CANDIDATES);
	for (int j = 0; j < n && (max == 0 || rows < max); j++) {
		struct measurement r;
		struct kernel_plan kp;
		struct plan_choice ch;

		if (plan_make(c, &p, &sols[j], dev, &kp, NULL) != TCX_OK ||
		    plan_accepts(&kp, &p, NULL) != TCX_OK)
			continue;
		plan_predict(truth, &p, &kp, &ch);
		memset(&r, 0, sizeof(r));
		snprintf(r.device, sizeof(r.device), "%s", dev->name);
		snprintf(r.backend, sizeof(r.backend), "cuda");
		tune_problem_key(c, strides, r.problem, sizeof(r.problem));
		r.nidx = c->nidx;
		memcpy(r.sizes, p.size, sizeof(int64_t) * (size_t)c->nidx);
		solution_store_key(c, &sols[j], r.solution, sizeof(r.solution));
		r.median_ms = r.min_ms = r.max_ms = r.ci_lo_ms = r.ci_hi_ms = ch.time_s * 1e3;
		r.gflops = 1;
		r.reps = 1;
		snprintf(r.timer, sizeof(r.timer), "event");
		r.timestamp = 1;
		CHECK(store_put(st, &r, &err) == TCX_OK);
		rows++;
	}
	contraction_free(c);
	return rows;
}

/* A store of times a model with other rates predicts (the SIMT kernel's
 * small tiles three times as efficient, each work-group's latency and a
 * warpgroup chunk's four times as long, the memory half as efficient) for
 * every candidate the planner lists: the built-in model chooses worse
 * than the best, the fitted one nearly as well as the best, and the model
 * file it writes makes the planner use those rates. */
static void test_fit(void)
{
	static const char *const cases[][2] = {
		{ "C[i,j]=A[i,k]*B[k,j]", "i=2048,j=2048,k=64" },
		{ "C[i,j]=A[i,k]*B[k,j]", "i=96,j=4000,k=512" },
		{ "C[i,j]=A[i,k]*B[k,j]", "i=4000,j=40,k=2000" },
		{ "C[i,j,k]=A[i,l,k]*B[j,l,k]", "i=64,j=64,k=200,l=64" },
		{ "C[a,b,j]=A[b,k,a]*B[k,j]", "a=240,b=240,j=24,k=240" },
		{ "C[a,b]=A[k,a]*B[b,k]", "a=1000,b=1200,k=300" },
		{ "C[i,j]=A[k,i]*B[j,k]", "i=3000,j=24,k=3000" },
		{ "C[a,b,c]=A[a,k,c]*B[k,b]", "a=100,b=100,c=100,k=32" },
		{ "C[i,j]=A[i,k]*B[j,k]", "i=500,j=500,k=8000" },
		{ "C[a,b,c,d]=A[a,k,b]*B[c,k,d]", "a=24,b=40,c=24,d=40,k=96" },
	};
	char dir[] = "/tmp/tcx-test-fit-XXXXXX", db[64], model[64];
	struct device_info dev;
	struct plan_device truth, m;
	struct fit_report rep;
	struct store *st = NULL;
	struct tcx_error err = { 0 };
	struct solution *sols = malloc(PLAN_MAX_CANDIDATES * sizeof(*sols));
	int rows = 0;

	if (!sols || !mkdtemp(dir) || !plan_known_device("h200", &dev)) {
		CHECK(!"setup");
		free(sols);
		return;
	}
	snprintf(db, sizeof(db), "%s/s.db", dir);
	snprintf(model, sizeof(model), "%s/m.json", dir);
	plan_device_defaults(&dev, TCX_DTYPE_S, &truth);
	truth.eff_simt_small *= 3;
	truth.group_s *= 4;
	truth.wg_iter_s *= 4;
	truth.mem_eff /= 2;
	CHECK(store_open(db, true, &st, &err) == TCX_OK);
	for (size_t k = 0; st && k < ARRAY_SIZE(cases); k++)
		rows += put_rows(st, &dev, &truth, cases[k][0], cases[k][1], NULL, sols, 0);
	store_close(st);
	free(sols);
	CHECK(plan_fit(db, &dev, TCX_DTYPE_S, &m, &rep, &err) == TCX_OK);
	CHECK_MSG(rep.rows == rows && rep.problems == (int)ARRAY_SIZE(cases) && rep.skipped == 0,
		  "%d of %d rows, %d problems, %d skipped", rep.rows, rows, rep.problems,
		  rep.skipped);
	CHECK_MSG(rep.builtin_all.mean < 0.97, "built-in %.3f", rep.builtin_all.mean);
	CHECK_MSG(rep.fitted_all.mean > 0.99 && rep.fitted_all.mean > rep.builtin_all.mean,
		  "fitted %.3f, built-in %.3f", rep.fitted_all.mean, rep.builtin_all.mean);
	/* every problem held out once; the pull towards the built-in rates
	 * keeps a fold's fit from the whole correction (fit.c), but it never
	 * chooses worse */
	CHECK_MSG(rep.folds == 4 && rep.fitted_held.problems == (int)ARRAY_SIZE(cases) &&
			  rep.fitted_held.mean >= rep.builtin_held.mean - 1e-9,
		  "held out: %d problems, fitted %.3f, built-in %.3f", rep.fitted_held.problems,
		  rep.fitted_held.mean, rep.builtin_held.mean);
	/* the file makes the planner use the fitted rates; one of another
	 * type is refused by name */
	CHECK(plan_model_write(model, &m, TCX_DTYPE_S, &rep, &err) == TCX_OK);
	setenv("TCX_MODEL", model, 1);
	{
		struct plan_device got;

		CHECK(plan_device_model(&dev, TCX_DTYPE_S, &got, &err) == TCX_OK);
		CHECK(fabs(got.group_s / m.group_s - 1) < 1e-5 && got.fit_rows == rows && got.source[0]);
		CHECK(plan_device_model(&dev, TCX_DTYPE_D, &got, &err) == TCX_EINVAL);
		CHECK_MSG(strstr(err.msg, "m.json") != NULL, "%s", err.msg);
	}
	plan_fit_report_free(&rep);
	setenv("TCX_MODEL", "none", 1);
	CHECK(plan_fit(db, &dev, TCX_DTYPE_D, &m, &rep, &err) == TCX_EINVAL);
	plan_fit_report_free(&rep);
	unsetenv("TCX_MODEL");
	remove(model);
	remove(db);
	rmdir(dir);
}

/* The fit reads a row's sizes and strides in the order of its problem
 * key's letters, as tcx tune writes them, also where A names the summed
 * letters out of order: einsum expressions with two summed indices (A,
 * last index fastest, reads "Alkj" for 'iml,jml->ij'), and Sum[...]
 * listing them other than as A names them ("Ailk" for Sum[l,k]
 * A[i,k,l]); and an einsum expression's strides, given last index
 * fastest (C's, read first index fastest, would make rows share an
 * address).  Each problem comes back with its own key and sizes. */
static void test_fit_key_order(void)
{
	static const char *const cases[][3] = {
		{ "iml,jml->ij", "i=40,j=24,m=8,l=56", NULL },
		{ "iml,jml->ij", "i=24,j=56,m=40,l=8", NULL },
		{ "C[i,j]=Sum[l,k] A[i,k,l]*B[k,l,j]", "i=48,j=16,k=72,l=8", NULL },
		{ "ijk,jk->i", "i=64,j=8,k=24", NULL },
		{ "ik,kj->ij", "i=64,j=32,k=16", "A=[20,1],C=[40,1]" },
	};
	char dir[] = "/tmp/tcx-test-fitkey-XXXXXX", db[64];
	struct device_info dev;
	struct plan_device truth, m;
	struct fit_report rep;
	struct store *st = NULL;
	struct tcx_error err = { 0 };
	struct solution *sols = malloc(PLAN_MAX_CANDIDATES * sizeof(*sols));

	if (!sols || !mkdtemp(dir) || !plan_known_device("h200", &dev)) {
		CHECK(!"setup");
		free(sols);
		return;
	}
	snprintf(db, sizeof(db), "%s/s.db", dir);
	plan_device_defaults(&dev, TCX_DTYPE_S, &truth);
	CHECK(store_open(db, true, &st, &err) == TCX_OK);
	for (size_t k = 0; st && k < ARRAY_SIZE(cases); k++)
		CHECK_MSG(put_rows(st, &dev, &truth, cases[k][0], cases[k][1], cases[k][2], sols,
				   3) >= 2,
			  "%s", cases[k][0]);
	store_close(st);
	free(sols);
	CHECK_MSG(plan_fit(db, &dev, TCX_DTYPE_S, &m, &rep, &err) == TCX_OK, "%s", err.msg);
	CHECK_MSG(rep.problems == (int)ARRAY_SIZE(cases) && rep.skipped == 0 &&
			  rep.ndetails == (int)ARRAY_SIZE(cases),
		  "%d problems, %d details, %d skipped", rep.problems, rep.ndetails, rep.skipped);
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct tcx_contraction *c = parse(cases[k][0], TCX_DTYPE_S);
		int64_t sz[TCX_MAX_INDICES];
		char key[256];
		bool found = false;

		if (!c || sizes_parse_assign_zero(c, cases[k][1], sz, &err) != TCX_OK) {
			CHECK_MSG(0, "%s", cases[k][0]);
			contraction_free(c);
			continue;
		}
		/* what tcx tune relies on when it records sizes in id order */
		{
			int tid[TCX_MAX_INDICES];

			model_tensile_ids(c, NULL, tid);
			for (int id = 0; id < c->nidx; id++)
				CHECK_MSG(tid[id] == id, "%s: id %d is Tensile's %d", cases[k][0], id,
					  tid[id]);
		}
		tune_problem_key(c, NULL, key, sizeof(key));
		for (int d = 0; d < rep.ndetails; d++)
			found |= strcmp(rep.details[d].problem, key) == 0 &&
				 rep.details[d].nidx == c->nidx &&
				 memcmp(rep.details[d].sizes, sz, sizeof(int64_t) * (size_t)c->nidx) == 0;
		CHECK_MSG(found, "%s %s: not fitted as %s with its sizes", cases[k][0], cases[k][1],
			  key);
		contraction_free(c);
	}
	plan_fit_report_free(&rep);
	remove(db);
	rmdir(dir);
}

/* The key's strides: each tensor's in the order of the key's letters, A,
 * B, C, whatever the spec's form. */
static void test_strides_key(void)
{
	static const char *const cases[][3] = {
		{ "ik,kj->ij", "C=[40,1],A=20:1", "A=[1,20],C=[1,40]" },
		{ "C[i,j]=A[i,k]*B[k,j]", "A=[1,1040];C=[1, 1040]", "A=[1,1040],C=[1,1040]" },
		{ "X[i,j]=Y[i,k]*Z[k,j]", "Z=[1,70]", "B=[1,70]" },
	};

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct tcx_contraction *c = parse(cases[k][0], TCX_DTYPE_S);
		struct tcx_error err = { 0 };
		char key[256] = "";

		CHECK_MSG(c && problem_strides_key(c, cases[k][1], key, sizeof(key), &err) == TCX_OK &&
				  strcmp(key, cases[k][2]) == 0,
			  "%s %s: '%s' %s", cases[k][0], cases[k][1], key, err.msg);
		contraction_free(c);
	}
}

/* The kernel of the solution `params` (over the device's default) for
 * problem p of c on dev; false (a failed check) when there is none. */
static bool kernel_of(const struct tcx_contraction *c, const struct problem *p,
		      const struct device_info *dev, const char *params, struct kernel_plan *k)
{
	struct solution s;
	struct tcx_error err;

	solution_heuristic(c, dev, &s);
	if (solution_parse(&s, params, &err) != TCX_OK ||
	    plan_make(c, p, &s, dev, k, &err) != TCX_OK) {
		CHECK_MSG(0, "%s, %s: %s", c->expr, params, err.msg);
		return false;
	}
	return true;
}

/* How the warpgroup kernel of one solution copies its tiles on problem
 * `sizes` of expr (plan_wgmma_copy) */
static enum plan_copy copy_of(const char *expr, const char *sizes, const char *params)
{
	struct tcx_contraction *c = parse(expr, TCX_DTYPE_S);
	struct device_info dev;
	struct problem p;
	struct kernel_plan k;
	int64_t sz[TCX_MAX_INDICES];
	struct tcx_error err;
	enum plan_copy copy = PLAN_COPY_NONE;

	if (!c) {
		CHECK(c != NULL);
		return copy;
	}
	CHECK(plan_known_device("h200", &dev));
	CHECK(sizes_parse_assign(c, sizes, sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	if (kernel_of(c, &p, &dev, params, &k))
		copy = plan_wgmma_copy(&k, &p);
	contraction_free(c);
	return copy;
}

/* CPUs' direct kernel runs a sum's last chunk for the elements left: a
 * DepthU past the sum costs nothing (PoCL: DepthU 32 over sums of 8 and 13
 * ran 2.7 and 2.5 times as fast as a model charging the padding said) */
static void test_cpu_chunks(void)
{
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	struct device_info dev;
	struct plan_device m;
	struct problem p;
	int64_t sz[TCX_MAX_INDICES];
	struct tcx_error err;
	double compute[2] = { 0, 0 };

	if (!c) {
		CHECK(c != NULL);
		return;
	}
	cpu_device(&dev);
	plan_device_defaults(&dev, TCX_DTYPE_S, &m);
	CHECK(sizes_parse_assign(c, "i=512,j=512,k=8", sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	for (int n = 0; n < 2; n++) {
		struct kernel_plan k;
		struct plan_choice ch;
		char params[128];

		snprintf(params, sizeof(params),
			 "WorkGroup=[1,1,1],ThreadTile=[16,8],VectorWidth=8,UseLDS=False,DepthU=%d",
			 n ? 32 : 8);
		if (!kernel_of(c, &p, &dev, params, &k))
			break;
		plan_predict(&m, &p, &k, &ch);
		compute[n] = ch.compute_s;
		CHECK_MSG(ch.tile_util > 0.99, "DepthU %d: %.2f of the work useful", n ? 32 : 8,
			  ch.tile_util);
	}
	CHECK_MSG(compute[0] > 0 && fabs(compute[1] - compute[0]) < 1e-6 * compute[0],
		  "DepthU 32 over a sum of 8 predicted %g s, DepthU 8 %g s", compute[1], compute[0]);
	contraction_free(c);
}

/* The warpgroup kernel's producer copies by the copy engine where both
 * operands have tensor maps, else by cp.async in vectors or element by
 * element; the planner prices the last two (eff_wg_copy, eff_wg_copy1). */
static void test_tma(void)
{
	static const char wg[] = "WorkGroup=[32,8,1],ThreadTile=[4,16],DepthU=32,"
				 "WorkGroupMapping=8,MatrixInstruction=[64,128,8,1],TF32x3=True";
	static const char pk[] = "WorkGroup=[32,8,1],ThreadTile=[4,16],DepthU=32,"
				 "WorkGroupMapping=8,MatrixInstruction=[64,128,8,1],TF32x3=True,"
				 "PackFreeIndices=True";
	const char *ijk = "C[i,j,k]=A[i,l]*B[j,l,k]", *gemm = "C[ij]=A[ik]*B[kj]";

	/* B's jk packed, j moving fastest: boxes of 32 along j need j's
	 * extent a multiple of 32; vectors of 4 a multiple of 4 */
	CHECK(copy_of(ijk, "i=240,j=240,k=236,l=236", pk) == PLAN_COPY_VECTORS);
	CHECK(copy_of(ijk, "i=240,j=256,k=236,l=236", pk) == PLAN_COPY_TMA);
	CHECK(copy_of(ijk, "i=240,j=242,k=236,l=236", pk) == PLAN_COPY_ELEMENTS);
	CHECK(copy_of(ijk, "i=240,j=240,k=236,l=236", wg) == PLAN_COPY_TMA);
	/* strides in multiples of 16 bytes */
	CHECK(copy_of(gemm, "i=1023,j=1024,k=1024", wg) == PLAN_COPY_ELEMENTS);
	CHECK(copy_of(gemm, "i=1024,j=1024,k=1024", wg) == PLAN_COPY_TMA);
	setenv("TCX_NO_TMA", "1", 1);
	CHECK(copy_of(gemm, "i=1024,j=1024,k=1024", wg) == PLAN_COPY_VECTORS);
	unsetenv("TCX_NO_TMA");
	/* element by element the SIMT kernel is faster (H200: a GEMM of
	 * 3637 x 2803 x 3323 ran 19.5 TFLOP/s in 128 x 128 warpgroup tiles,
	 * 31.3 in SIMT 8 x 8 ones) */
	check_plan("C[g,x]=A[n,x]*B[n,g]", TCX_DTYPE_S, "g=3637,n=3323,x=2803", "h200",
		   "_TT8x8_", NULL);
	/* so CCSD's ijk-il-jlk at 240 x 240 x 236 x 236 is not packed (H200:
	 * 30.4 TFLOP/s packed, by cp.async, against 49.1 unpacked with the
	 * copy engine), while ijk-ilmk-mjl at TCCG's size, whose packed i is
	 * 96 long, still is (test_planner) */
	check_plan("C[i,j,k]=A[i,l]*B[j,l,k]", TCX_DTYPE_S, "i=240,j=240,k=236,l=236", "h200", "!_PK",
		   NULL);
}

/* On a CPU each work-group costs a core beyond its products, and where
 * PoCL compiles for AVX-512 (the device named after LLVM's CPU) a row of
 * two 64-byte lines runs as well as one: CCSD(T)'s ikmb-mjac, whose sum is
 * 24 and C's extents 24 and 8, in work-items of 32 x 8 (PoCL on an AVX-512
 * EPYC: 0.997 of the exhaustive optimum against 0.743 for 16 x 8), while
 * a CPU without AVX-512 keeps 16 x 8 for a GEMM (test_planner). */
static void test_cpu_groups(void)
{
	struct tcx_contraction *c = parse("C[a,b,c,i,j,k]=A[i,k,m,b]*B[m,j,a,c]", TCX_DTYPE_S);
	struct device_info dev;
	int64_t sz[TCX_MAX_INDICES];
	struct problem p;
	struct plan_result pl;
	struct tcx_error err;
	char name[256];

	cpu_device(&dev);
	snprintf(dev.name, sizeof(dev.name), "pthread-skylake-avx512-CPU");
	if (!c) {
		CHECK(c != NULL);
		return;
	}
	CHECK(sizes_parse_assign(c, "a=24,b=8,c=8,i=24,j=8,k=8,m=24", sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	CHECK(planner_plan(&p, &dev, PLAN_PERMUTE, &pl, &err) == TCX_OK);
	solution_name(&pl.best.sol, name, sizeof(name));
	CHECK_MSG(strstr(name, "_TT32x8_") != NULL, "ikmb-mjac on an AVX-512 CPU: %s", name);
	plan_release(&pl);
	contraction_free(c);
}

/* On a CPU, traffic whose operands fit in half the cache is not what
 * bounds the direct kernel (PoCL: 2-4 MiB operands in a 32 MiB cache ran
 * at the products' rate); traffic that does not fit still is. */
static void test_cpu_cache(void)
{
	static const struct {
		const char *sizes, *limit;
	} cases[] = {
	    {"i=512,j=512,k=16", "compute"}, /* 1.1 MB of operands */
	    /* 67 MB; a sum of 8, since at 16 the products and the work-
	     * groups' own cost come close to the traffic in the model */
	    {"i=4096,j=4096,k=8", "memory"},
	};
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	struct device_info dev;

	cpu_device(&dev);
	for (size_t n = 0; c && n < ARRAY_SIZE(cases); n++) {
		int64_t sz[TCX_MAX_INDICES];
		struct problem p;
		struct plan_result pl;
		struct tcx_error err;

		CHECK(sizes_parse_assign(c, cases[n].sizes, sz, &err) == TCX_OK);
		CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
		CHECK(planner_plan(&p, &dev, PLAN_PERMUTE, &pl, &err) == TCX_OK);
		CHECK_MSG(!strcmp(pl.best.limit, cases[n].limit), "%s: %s-bound, want %s",
			  cases[n].sizes, pl.best.limit, cases[n].limit);
		plan_release(&pl);
	}
	contraction_free(c);
}

/* The permute's transpose tile: a short extent whole, rounded up to 8
 * (TCCG's 24 x 48 in one tile, not four of 32 x 32 half empty), a long one
 * in tiles of 32, doubled where the other side is short. */
static void test_permute_tile(void)
{
	static const struct {
		int64_t size[3];
		int tile0, tile1, rows;
	} cases[] = {
	    {{24, 48, 7}, 24, 48, 8},	 /* both short: whole */
	    {{20, 36, 7}, 24, 40, 8},	 /* rounded up to 8 */
	    {{300, 257, 3}, 32, 32, 8}, /* both long: square */
	    {{24, 1000, 3}, 24, 64, 8}, /* a short side: the long one doubled */
	    {{1000, 40, 3}, 32, 40, 8}, /* 40 is not short of 32 */
	    {{1000, 20, 3}, 64, 24, 4},
	};

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		const int64_t *n = cases[k].size;
		/* slot 0 is the input's fastest index (0), slot 1 the output's (1) */
		const int64_t si[3] = {1, n[0], n[0] * n[1]}, so[3] = {n[1], 1, n[0] * n[1]};
		struct permute_plan pp;
		struct tcx_error err = {0};

		CHECK_MSG(permute_plan_make(TCX_DTYPE_S, 3, n, si, so, false, NULL, &pp, &err) ==
				  TCX_OK,
			  "%s", err.msg);
		CHECK_MSG(pp.path == PERMUTE_TILE && pp.tile[0] == cases[k].tile0 &&
			      pp.tile[1] == cases[k].tile1 && pp.rows == cases[k].rows,
			  "%lldx%lld: tile %dx%d, %d rows of work-items; want %dx%d, %d",
			  (long long)n[0], (long long)n[1], pp.tile[0], pp.tile[1], pp.rows,
			  cases[k].tile0, cases[k].tile1, cases[k].rows);
	}
}

/* Which problems the tensor-times-matrix kernel takes, and the slots,
 * direction and tile it plans for them. */
static void test_ttm(void)
{
	static const struct {
		const char *expr, *sizes;
		enum tcx_dtype t;
		const char *q, *r, *fast; /* NULL: rejected */
		int qb, rb, jb;
		bool vec;
	} cases[] = {
	    /* TCCG's abjcd-dkbac-jk: T read along d (r), C along a (q), b and
	     * c folded; 48 = 2 x 24 along q, r in whole 32-byte runs */
	    { "C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]", "a=48,b=36,j=24,c=36,d=48,k=36",
	      TCX_DTYPE_S, "a", "d", "d", 24, 16, 24, true },
	    /* T read along the summed index */
	    { "C[a,b,j,c]=A[k,b,a,c]*B[j,k]", "a=96,b=84,j=24,c=84,k=96", TCX_DTYPE_S, "a",
	      "b", "k", 32, 8, 24, true },
	    /* the matrix as A; fp64 vectors of two; C's other strides odd */
	    { "C[a,b,c,s]=A[r,c]*B[a,b,r,s]", "a=19,b=23,c=29,s=3,r=7", TCX_DTYPE_D, "a", "b",
	      "a", 24, 0, 30, false },
	    /* j of 70: blocks of 24 */
	    { "C[a,j,b]=A[b,k,a]*B[j,k]", "a=64,j=70,b=5,k=9", TCX_DTYPE_S, "a", "b", "b", 32,
	      0, 24, true },
	    /* rejected: C's fastest index is the matrix's, a batch index, two
	     * summed indices, complex, one operand */
	    { "C[j,a,b]=A[a,b,k]*B[j,k]", "a=64,b=3,j=24,k=9", TCX_DTYPE_S, NULL, NULL, NULL, 0,
	      0, 0, false },
	    { "C[a,j,b]=A[a,k,b]*B[j,k,b]", "a=64,j=24,k=9,b=3", TCX_DTYPE_S, NULL, NULL, NULL,
	      0, 0, 0, false },
	    { "C[a,j]=A[a,k,l]*B[j,k,l]", "a=64,j=24,k=9,l=2", TCX_DTYPE_S, NULL, NULL, NULL, 0,
	      0, 0, false },
	    { "C[a,b,j]=A[b,k,a]*B[k,j]", "a=64,b=5,j=24,k=9", TCX_DTYPE_C, NULL, NULL, NULL, 0,
	      0, 0, false },
	    { "C[a,b]=A[b,a]", "a=64,b=5", TCX_DTYPE_S, NULL, NULL, NULL, 0, 0, 0, false },
	};

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct tcx_contraction *c;
		struct problem p;
		struct ttm_plan t;
		int64_t sz[TCX_MAX_INDICES];
		struct tcx_error err = { 0 };
		enum tcx_status st;

		c = parse(cases[k].expr, cases[k].t);
		if (!c) {
			CHECK(c != NULL);
			continue;
		}
		CHECK(sizes_parse_assign_zero(c, cases[k].sizes, sz, &err) == TCX_OK);
		CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
		st = ttm_plan_make(&p, NULL, &t, &err);
		if (!cases[k].q) {
			CHECK_MSG(st == TCX_EREJECT && err.msg[0], "%s: status %d, '%s'",
				  cases[k].expr, (int)st, err.msg);
			contraction_free(c);
			continue;
		}
		CHECK_MSG(st == TCX_OK, "%s: %s", cases[k].expr, err.msg);
		if (st == TCX_OK) {
			const int fast = t.dim[t.fast];
			int64_t tiles = 1;

			CHECK_MSG(strcmp(c->idx[t.dim[TTM_Q]].name, cases[k].q) == 0 &&
					  strcmp(c->idx[t.dim[TTM_R]].name, cases[k].r) == 0 &&
					  strcmp(c->idx[fast].name, cases[k].fast) == 0,
				  "%s: q %s, r %s, along %s", cases[k].expr,
				  c->idx[t.dim[TTM_Q]].name, c->idx[t.dim[TTM_R]].name,
				  c->idx[fast].name);
			CHECK_MSG(t.qb == cases[k].qb && (!cases[k].rb || t.rb == cases[k].rb) &&
					  t.jb * t.jblocks >= t.size[TTM_J] &&
					  t.jb == cases[k].jb && t.vec == cases[k].vec,
				  "%s: tile %dx%dx%d (%lld blocks of j), vectors %d", cases[k].expr,
				  t.qb, t.rb, t.jb, (long long)t.jblocks, t.vec);
			/* every index of T of size > 1 but k and q is r or folded, once */
			for (int x = 0; x < c->rank[t.big]; x++) {
				const int id = c->written[t.big][x];
				int n = 0;

				for (int s = TTM_Q; s < t.nslots; s++)
					n += t.dim[s] == id && s != TTM_J;
				CHECK_MSG(n == 1 || (n == 0 && p.size[id] == 1), "%s: index %s in %d slots",
					  cases[k].expr, c->idx[id].name, n);
			}
			for (int s = 0; s < 3; s++)
				tiles *= t.groups[s];
			CHECK(tiles >= 1 && t.threads <= 256 && t.util > 0 && t.util <= 1);
		}
		contraction_free(c);
	}
}

/* The kernel's ring of stages: four under CUDA where local memory holds
 * them, fewer where it does not, one under HIP (no cp.async there). */
static void test_ttm_stages(void)
{
	struct tcx_contraction *c = parse("C[a,b,j,c]=A[c,b,k,a]*B[k,j]", TCX_DTYPE_D);
	struct device_info d;
	struct problem p;
	struct ttm_plan t;
	int64_t sz[TCX_MAX_INDICES];
	struct tcx_error err = { 0 };

	if (!c) {
		CHECK(c != NULL);
		return;
	}
	CHECK(sizes_parse_assign_zero(c, "a=96,b=84,j=24,c=96,k=96", sz, &err) == TCX_OK);
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	memset(&d, 0, sizeof(d));
	snprintf(d.backend, sizeof(d.backend), "cuda");
	snprintf(d.lang, sizeof(d.lang), "cuda");
	d.type = DEV_GPU;
	d.max_wg_size = 1024;
	d.local_mem = 227 * 1024;
	CHECK(ttm_plan_make(&p, &d, &t, &err) == TCX_OK && t.stages == 4);
	d.local_mem = 64 * 1024; /* 66 KB for four stages of fp64 */
	CHECK_MSG(ttm_plan_make(&p, &d, &t, &err) == TCX_OK && t.stages == 3 &&
			  t.lds_bytes <= d.local_mem,
		  "%d stages, %lld bytes: %s", t.stages, (long long)t.lds_bytes, err.msg);
	snprintf(d.backend, sizeof(d.backend), "hip");
	CHECK(ttm_plan_make(&p, &d, &t, &err) == TCX_OK && t.stages == 1);
	d.local_mem = 4 * 1024;
	CHECK(ttm_plan_make(&p, &d, &t, &err) == TCX_ELIMIT);
	contraction_free(c);
}

/* The tensor-times-vector kernel's slots and lanes (ttm_plan_any): the
 * indices that move together in T, V and C merged (p and w below; h not,
 * l lies between it and p in T), the lanes along the sum where T moves
 * fastest along it, else along C, the lanes' step as the summed slots'
 * digits, a GPU with few work-groups widened along the sum, and with
 * fewer still the sum split; a GEMM and complex types not taken. */
static void test_ttv(void)
{
	static const struct {
		const char *expr, *sizes;
		int no, ns, kfast, ql, kl; /* -1: rejected */
	} cases[] = {
		{ "C[l]=A[h,l,p,w]*B[p,w,h]", "l=71,h=47,p=13,w=7", 1, 2, 1, 1, 256 },
		{ "C[i]=A[i,k]*B[k]", "i=1000,k=37", 1, 1, 0, 64, 4 },
		{ "C[i,d]=A[v,d,i]*B[v,d]", "i=77,d=79,v=12", 2, 1, 1, 16, 16 },
		{ "C[i,b]=A[k,b]*B[i,k,b]", "i=33,k=17,b=5", 2, 1, 0, 64, 4 },
		{ "C[a,b]=A[a,k,b]*B[k]", "a=31,b=6,k=19", 2, 1, 0, 32, 8 },
		{ "C[a,b]=A[a,b,k]*B[k]", "a=31,b=6,k=19", 1, 1, 0, 64, 4 }, /* a, b merged */
		{ "C[]=A[k]*B[k]", "k=5", 1, 1, 1, 1, 8 },
		{ "C[i,j]=A[i,k]*B[k,j]", "i=9,j=5,k=7", -1, 0, 0, 0, 0 },
	};

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct tcx_contraction *c = parse(cases[k].expr, TCX_DTYPE_S);
		struct problem p;
		struct ttm_plan t;
		int64_t sz[TCX_MAX_INDICES];
		struct tcx_error err = { 0 };
		enum tcx_status st;

		if (!c) {
			CHECK(c != NULL);
			continue;
		}
		CHECK(sizes_parse_assign_zero(c, cases[k].sizes, sz, &err) == TCX_OK);
		CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
		st = ttm_plan_any(&p, NULL, &t, &err);
		if (cases[k].no < 0) {
			/* the matrix kernel's, or none */
			CHECK_MSG(st != TCX_OK || !t.vector, "%s: the vector kernel", cases[k].expr);
		} else {
			const struct ttv_plan *v = &t.v;
			int64_t step = 0, radix = 1;

			CHECK_MSG(st == TCX_OK && t.vector, "%s: %s", cases[k].expr, err.msg);
			CHECK_MSG(v->no == cases[k].no && v->ns == cases[k].ns &&
					  v->kfast == (cases[k].kfast != 0) && v->ql == cases[k].ql &&
					  v->kl == cases[k].kl,
				  "%s: %d outputs, %d summed, kfast %d, %d x %d lanes", cases[k].expr,
				  v->no, v->ns, (int)v->kfast, v->ql, v->kl);
			for (int i = 0; i < v->ns; i++) {
				step += v->args.kstep[i] * radix;
				radix *= v->args.size[v->no + i];
			}
			CHECK_MSG(step == v->kl % radix, "%s: kstep %lld for %d lanes", cases[k].expr,
				  (long long)step, v->kl);
		}
		contraction_free(c);
	}
	{
		/* an H200-like GPU: 71 work-groups widen to 1024 lanes; complex
		 * is not taken */
		struct tcx_contraction *c = parse("C[l]=A[h,l,p,w]*B[p,w,h]", TCX_DTYPE_S);
		struct device_info d;
		struct problem p;
		struct ttm_plan t;
		int64_t sz[TCX_MAX_INDICES];
		struct tcx_error err = { 0 };

		memset(&d, 0, sizeof(d));
		snprintf(d.lang, sizeof(d.lang), "cuda");
		d.type = DEV_GPU;
		d.max_wg_size = 1024;
		d.compute_units = 132;
		CHECK(c && sizes_parse_assign_zero(c, "l=71,h=47,p=66,w=67", sz, &err) == TCX_OK);
		CHECK(c && problem_init(&p, c, sz, &err) == TCX_OK);
		CHECK_MSG(c && ttm_plan_any(&p, &d, &t, &err) == TCX_OK && t.vector && t.v.kl == 1024,
			  "%d lanes: %s", t.v.kl, err.msg);
		contraction_free(c);
		/* 184 elements of C and a sum of 86,736: three work-groups of
		 * 1024, so the sum in parts, through a workspace of each part's
		 * sums; none on a CPU */
		c = parse("C[b]=A[b,r,z]*B[z,r]", TCX_DTYPE_S);
		CHECK(c && sizes_parse_assign_zero(c, "b=184,r=624,z=139", sz, &err) == TCX_OK);
		CHECK(c && problem_init(&p, c, sz, &err) == TCX_OK);
		CHECK_MSG(c && ttm_plan_any(&p, &d, &t, &err) == TCX_OK && t.vector && t.v.split > 1 &&
				  t.v.args.split * t.v.args.chunk >= t.v.args.total &&
				  ttm_workspace_bytes(&t) == (size_t)t.v.split * 184 * 4,
			  "split %d, %zu bytes: %s", t.v.split, ttm_workspace_bytes(&t), err.msg);
		CHECK(c && ttm_plan_any(&p, NULL, &t, &err) == TCX_OK && t.v.split == 1 &&
		      ttm_workspace_bytes(&t) == 0);
		contraction_free(c);
		c = parse("C[i]=A[i,k]*B[k]", TCX_DTYPE_C);
		CHECK(c && sizes_parse_assign_zero(c, "i=100,k=7", sz, &err) == TCX_OK);
		CHECK(c && problem_init(&p, c, sz, &err) == TCX_OK);
		CHECK(c && ttm_plan_any(&p, &d, &t, &err) == TCX_EREJECT);
		contraction_free(c);
	}
}

/* The arithmetic reported for a prepared contraction: the solution's,
 * unless the tensor-times-matrix kernel runs instead (fp32 on the SIMT
 * units, whatever the solution it replaced). */
static void test_contract_arith(void)
{
	struct prepared pr;
	struct solution s;
	struct tcx_error err = { 0 };

	memset(&pr, 0, sizeof(pr));
	solution_default(&s);
	CHECK(solution_parse(&s, "MatrixInstruction=[64,128,8,1],TF32x3=True", &err) == TCX_OK);
	CHECK(contract_arith(&pr, TCX_DTYPE_S, &s) == ARITH_TF32X3);
	pr.ttm.on = true;
	CHECK(contract_arith(&pr, TCX_DTYPE_S, &s) == ARITH_FP32);
	CHECK(contract_arith(&pr, TCX_DTYPE_D, &s) == ARITH_FP64);
}

int main(void)
{
	test_merge();
	test_planner();
	test_arith();
	test_planner_accuracy();
	test_accuracy_search();
	test_store_key();
	test_fit();
	test_fit_key_order();
	test_strides_key();
	test_permute_tile();
	test_cpu_cache();
	test_cpu_groups();
	test_cpu_chunks();
	test_tma();
	test_ttm();
	test_ttm_stages();
	test_ttv();
	test_contract_arith();
	return check_done();
}

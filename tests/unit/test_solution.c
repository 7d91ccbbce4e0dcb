/* test_solution.c - solution parameters (text, JSON, Tensile v2 names) and
 * the generator's validity rules, each shown to reject what it should. */
#include <string.h>

#include "check.h"
#include "gen/gen.h"
#include "notation/notation.h"

static struct device_info gpu(void)
{
	struct device_info d;

	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "test gpu");
	snprintf(d.lang, sizeof(d.lang), "opencl");
	d.type = DEV_GPU;
	d.max_wg_size = 1024;
	d.max_wg_dim[0] = d.max_wg_dim[1] = d.max_wg_dim[2] = 1024;
	d.local_mem = 65536;
	d.fp64 = false;
	return d;
}

/* plan_make with a parameter string on top of the defaults; returns the
 * status and leaves the reason in err. */
static enum tcx_status plan(const struct tcx_contraction *c, const char *params,
			    struct kernel_plan *k, struct tcx_error *err)
{
	struct solution s;
	struct device_info d = gpu();
	enum tcx_status st;

	solution_default(&s);
	st = solution_parse(&s, params, err);
	if (st)
		return st;
	return plan_make(c, NULL, &s, &d, k, err);
}

/* MatrixInstruction on a CUDA GPU of architecture `arch` (fp64 there):
 * plan_make's status for expression `expr` of type t. */
static enum tcx_status plan_mi(const char *expr, enum tcx_dtype t, const char *arch,
			       const char *params, struct kernel_plan *k, struct tcx_error *err)
{
	struct tcx_contraction *c = NULL;
	struct device_info d = gpu();
	struct solution s;
	enum tcx_status st;

	snprintf(d.lang, sizeof(d.lang), "cuda");
	snprintf(d.arch, sizeof(d.arch), "%s", arch);
	d.local_mem = 227 * 1024;
	d.fp64 = true;
	solution_default(&s);
	st = notation_parse(expr, t, LAYOUT_BY_STYLE, &c, err);
	if (!st)
		st = solution_parse(&s, params, err);
	if (!st)
		st = plan_make(c, NULL, &s, &d, k, err);
	contraction_free(c);
	return st;
}

/* fp64 on the fp64 tensor cores: [8, 8, 4, 1], for fp64 and complex128
 * only, on sm_80 and later, in warp blocks of whole 8 x 8 tiles */
static void test_mi_f64(void)
{
	static const char gemm[] = "C[ij]=A[ik]*B[kj]";
	struct tcx_error err;
	struct kernel_plan k;

	CHECK_MSG(plan_mi(gemm, TCX_DTYPE_D, "sm_80",
			  "WorkGroup=[16,8,1],ThreadTile=[4,8],DepthU=16,LdsPad=4,"
			  "MatrixInstruction=[8,8,4,1]",
			  &k, &err) == TCX_OK,
		  "%s", err.msg);
	/* four warps of 32 x 32 */
	CHECK(k.mi && !k.mi_raw && k.mi_warps0 == 2);
	CHECK(plan_mi(gemm, TCX_DTYPE_D, "sm_90", "MatrixInstruction=[8,8,8,1]", &k, &err) ==
	      TCX_EREJECT);
	CHECK(strstr(err.msg, "for fp64") && strstr(err.msg, "complex fp64: [8, 8, 4, 1]"));
	CHECK(plan_mi(gemm, TCX_DTYPE_S, "sm_90", "MatrixInstruction=[8,8,4,1]", &k, &err) ==
	      TCX_EREJECT);
	CHECK(strstr(err.msg, "not a tensor-core shape tcx has for fp32") != NULL);
	/* complex128 as four real products on them; complex64 has none */
	CHECK_MSG(plan_mi(gemm, TCX_DTYPE_Z, "sm_90",
			  "VectorWidth=1,WorkGroup=[16,8,1],ThreadTile=[4,8],DepthU=8,"
			  "MatrixInstruction=[8,8,4,1]",
			  &k, &err) == TCX_OK,
		  "%s", err.msg);
	CHECK(plan_mi(gemm, TCX_DTYPE_C, "sm_90", "VectorWidth=1,MatrixInstruction=[8,8,4,1]",
		      &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "not a tensor-core shape tcx has for complex") != NULL);
	CHECK(plan_mi(gemm, TCX_DTYPE_D, "sm_75", "MatrixInstruction=[8,8,4,1]", &k, &err) ==
	      TCX_EREJECT);
	CHECK(strstr(err.msg, "sm_80 or later") != NULL);
	/* Hopper's 16-row fp64 shapes: on sm_90, not on sm_80 */
	CHECK_MSG(plan_mi(gemm, TCX_DTYPE_D, "sm_90",
			  "WorkGroup=[16,8,1],ThreadTile=[4,8],DepthU=16,LdsPad=4,"
			  "MatrixInstruction=[16,8,16,1]",
			  &k, &err) == TCX_OK,
		  "%s", err.msg);
	CHECK(k.mi && k.mi_warps0 == 2);
	CHECK(plan_mi(gemm, TCX_DTYPE_D, "sm_80",
		      "WorkGroup=[16,8,1],ThreadTile=[4,8],DepthU=16,MatrixInstruction=[16,8,4,1]",
		      &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "[16, 8, 4, 1] for fp64") && strstr(err.msg, "sm_90 or later"));
	CHECK(plan_mi(gemm, TCX_DTYPE_D, "sm_90", "MatrixInstruction=[16,8,2,1]", &k, &err) ==
	      TCX_EREJECT);
	CHECK(strstr(err.msg, "not a tensor-core shape") != NULL);
	/* a 12-row macro tile is no whole number of 8-row tiles */
	CHECK(plan_mi(gemm, TCX_DTYPE_D, "sm_90",
		      "WorkGroup=[4,8,1],ThreadTile=[3,1],VectorWidth=1,MatrixInstruction=[8,8,4,1]",
		      &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "whole 8x8 tensor-core tiles") != NULL);
}

int main(void)
{
	struct solution s, t;
	struct tcx_error err;
	struct tcx_contraction *c = NULL, *cd = NULL;
	struct kernel_plan k;
	char key[1024], key2[1024];
	json_t *j;

	solution_default(&s);
	CHECK(s.wg[0] == 16 && s.wg[1] == 16 && s.wg[2] == 1 && s.tt[0] == 4 && s.depth_u == 16);
	CHECK(solution_parse(&s, "WorkGroup=[8,4,2],ThreadTile=[2,8],DepthU=32,VectorWidth=2,"
				 "EdgeType=ShiftPtr,PrefetchGlobalRead=False,GSU=4",
			     &err) == TCX_OK);
	CHECK(s.wg[0] == 8 && s.wg[1] == 4 && s.wg[2] == 2 && s.tt[1] == 8 && s.depth_u == 32);
	CHECK(s.vw == 2 && s.edge == EDGE_SHIFTPTR && !s.pgr && s.gsu == 4);
	/* the key round-trips through JSON */
	solution_key(&s, key, sizeof(key));
	j = solution_to_json(&s);
	CHECK(solution_from_json(&t, j, &err) == TCX_OK);
	json_decref(j);
	solution_key(&t, key2, sizeof(key2));
	CHECK(strcmp(key, key2) == 0);
	CHECK(solution_equal(&s, &t));
	CHECK(strstr(key, "\"WorkGroup\":[8,4,2]") != NULL);

	/* bad text and values */
	CHECK(solution_parse(&s, "WorkGroup=[8,4]", &err) == TCX_EINVAL);
	CHECK(strstr(err.msg, "WorkGroup") != NULL);
	CHECK(solution_parse(&s, "DepthU=abc", &err) == TCX_EINVAL);
	CHECK(solution_parse(&s, "EdgeType=Sideways", &err) == TCX_EINVAL);
	CHECK(solution_parse(&s, "Nonsense=1", &err) == TCX_EINVAL);
	CHECK(solution_parse(&s, "DepthU", &err) == TCX_EPARSE);
	CHECK(solution_parse(&s, "WorkGroup=[8,4,1", &err) == TCX_EPARSE);
	CHECK(solution_parse(&s, "GlobalSplitU=0", &err) == TCX_EINVAL);
	/* Tensile parameters tcx cannot honour are accepted */
	CHECK(param_lookup("KernelLanguage") == PARAM_IGNORED);
	CHECK(param_lookup("DepthU") == PARAM_HONOURED);
	CHECK(param_lookup("Frob") == PARAM_UNKNOWN);
	solution_default(&s);
	CHECK(solution_parse(&s, "KernelLanguage=Assembly", &err) == TCX_OK);

	/* Tensile v2.4: NumThreads 256, GroupShape 0 -> 16x16; SplitU 4 -> 8x8x4 */
	solution_default(&s);
	CHECK(solution_parse(&s, "NumThreads=256,GroupShape=0,ThreadTileNumElements=16,"
				 "ThreadTileShape=4",
			     &err) == TCX_OK);
	CHECK(s.wg[0] == 16 && s.wg[1] == 16 && s.wg[2] == 1);
	CHECK(s.tt[0] == 2 && s.tt[1] == 8);
	solution_default(&s);
	CHECK(solution_parse(&s, "NumThreads=256,SplitU=4,GroupShape=-4", &err) == TCX_OK);
	CHECK(s.wg[0] == 16 && s.wg[1] == 4 && s.wg[2] == 4);
	solution_default(&s);
	CHECK(solution_parse(&s, "NumThreads=96,GroupShape=0", &err) == TCX_EREJECT);
	/* v2.0: edges and LoopUnroll (DepthU = LoopUnroll x SplitU) */
	solution_default(&s);
	CHECK(solution_parse(&s, "WorkGroupEdge=8,ThreadTileEdge=4,LoopUnroll=8,SplitU=2",
			     &err) == TCX_OK);
	CHECK(s.wg[0] == 8 && s.wg[1] == 8 && s.wg[2] == 2 && s.tt[0] == 4 && s.depth_u == 16);

	/* validity rules */
	CHECK(notation_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) == 0);
	CHECK(notation_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_D, LAYOUT_BY_STYLE, &cd, &err) == 0);
	if (!c || !cd)
		return check_done();
	CHECK(plan(c, "", &k, &err) == TCX_OK);
	CHECK(k.mt0 == 64 && k.mt1 == 64 && k.nt == 256 && k.tlu_p && !k.tlu_q);
	CHECK(k.unit_p_d0 && k.unit_q_du && k.unit_c_d0 && k.p_is_a);
	CHECK(plan(c, "WorkGroup=[8,8,3]", &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "LocalSplitU 3") != NULL);
	CHECK(plan(c, "WorkGroup=[64,32,1]", &k, &err) == TCX_ELIMIT);
	CHECK(strstr(err.msg, "exceeds the device limit of 1024") != NULL);
	CHECK(plan(c, "ThreadTile=[6,4],VectorWidth=4", &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "VectorWidth 4") != NULL);
	CHECK(plan(c, "DepthU=12,WorkGroup=[8,8,8]", &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "not a multiple of LocalSplitU") != NULL);
	CHECK(plan(c, "WorkGroup=[16,16,1],ThreadTile=[8,1],MacroTileShapeMax=4", &k, &err) ==
	      TCX_EREJECT);
	CHECK(strstr(err.msg, "side ratio 8") != NULL);
	CHECK(plan(c, "ThreadTile=[8,8],DepthU=64", &k, &err) == TCX_ELIMIT);
	CHECK(strstr(err.msg, "local memory") != NULL);
	CHECK(plan(c, "NumLoadsCoalescedA=3", &k, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "NumLoadsCoalescedA 3") != NULL);
	CHECK(plan(c, "NumLoadsCoalescedA=-1", &k, &err) == TCX_OK);
	CHECK(k.nlc_p >= 1 && k.nlc_p * k.nlp_p == 64 * 16 / 256);
	CHECK(plan(c, "ThreadTile=[32,16]", &k, &err) == TCX_ELIMIT);
	CHECK(strstr(err.msg, "too many accumulators") != NULL);
	CHECK(plan(c, "MacroTile=[32,32]", &k, &err) == TCX_EREJECT);
	CHECK(plan(c, "VectorWidth=-1,ThreadTile=[4,4]", &k, &err) == TCX_OK && k.sol.vw == 4);
	CHECK(plan(c, "DepthU=-1", &k, &err) == TCX_OK && k.sol.depth_u >= 2);
	CHECK(plan(cd, "", &k, &err) == TCX_EUNSUPPORTED); /* no fp64 on this device */
	CHECK(plan(c, "WorkGroupMapping=0", &k, &err) == TCX_EREJECT);
	CHECK(plan(c, "MatrixInstruction=[16,8,8,1]", &k, &err) == TCX_EREJECT);
	/* PackFreeIndices on the SIMT kernel: D0 (a, B's tile index, C's
	 * fastest) takes B's other free index that moves fastest in C (c), D1
	 * (A's i) A's (b);
	 * not with ShiftPtr (it would move a tile across the packed index) nor
	 * without local memory */
	{
		struct tcx_contraction *c6 = NULL;
		int ida, idb, idc;

		CHECK(notation_parse("C[a,b,c,i,j,k]=A[i,j,m,b]*B[m,k,a,c]", TCX_DTYPE_S,
				     LAYOUT_BY_STYLE, &c6, &err) == TCX_OK);
		if (c6) {
			ida = contraction_find(c6, "a");
			idb = contraction_find(c6, "b");
			idc = contraction_find(c6, "c");
			CHECK(plan(c6, "UseLDS=True,PackFreeIndices=True,TileIndexB=a", &k, &err) ==
			      TCX_OK);
			CHECK(!k.p_is_a && k.slot[0] == ida);
			CHECK(k.pack_slot[0] >= 0 && k.slot[k.pack_slot[0]] == idc);
			CHECK(k.pack_slot[1] >= 0 && k.slot[k.pack_slot[1]] == idb);
			CHECK(plan(c6, "UseLDS=True,PackFreeIndices=True,EdgeType=ShiftPtr", &k, &err) ==
			      TCX_EREJECT);
			CHECK(strstr(err.msg, "PackFreeIndices") != NULL);
			CHECK(plan(c6, "UseLDS=False,PackFreeIndices=True", &k, &err) == TCX_EREJECT);
			CHECK(plan(c6, "UseLDS=True", &k, &err) == TCX_OK && k.pack_slot[0] < 0);
			/* packed, a vector must not cross into the packed index:
			 * D0's own extent a whole vectors, D1's whole runs */
			{
				struct problem p6;
				int64_t ok6[7] = { 8, 4, 3, 4, 2, 3, 7 }, odd6[7] = { 6, 4, 3, 4, 2, 3, 7 };

				CHECK(plan(c6, "UseLDS=True,PackFreeIndices=True,TileIndexB=a,"
					       "VectorWidth=4,ThreadTile=[4,4]",
					   &k, &err) == TCX_OK);
				CHECK(problem_init(&p6, c6, ok6, &err) == TCX_OK);
				CHECK_MSG(plan_accepts(&k, &p6, &err) == TCX_OK, "%s", err.msg);
				CHECK(problem_init(&p6, c6, odd6, &err) == TCX_OK);
				CHECK(plan_accepts(&k, &p6, &err) == TCX_EREJECT);
				CHECK(strstr(err.msg, "D0's extent 6") != NULL);
			}
			contraction_free(c6);
		}
	}

	/* size-dependent rules */
	{
		struct problem p;
		int64_t ok[3] = { 128, 64, 32 }, bad[3] = { 100, 64, 32 }, odd[3] = { 128, 64, 33 };

		CHECK(plan(c, "EdgeType=None", &k, &err) == TCX_OK);
		CHECK(problem_init(&p, c, ok, &err) == TCX_OK);
		CHECK(plan_accepts(&k, &p, &err) == TCX_OK);
		CHECK(problem_init(&p, c, bad, &err) == TCX_OK);
		CHECK(plan_accepts(&k, &p, &err) == TCX_EREJECT);
		CHECK(strstr(err.msg, "EdgeType None") != NULL);
		CHECK(plan(c, "LoopTail=False", &k, &err) == TCX_OK);
		CHECK(problem_init(&p, c, odd, &err) == TCX_OK);
		CHECK(plan_accepts(&k, &p, &err) == TCX_EREJECT);
		CHECK(strstr(err.msg, "LoopTail") != NULL);
	}
	/* 32-bit offsets (OFF32): for a problem whose tensors are below 2^30
	 * elements, and then for such problems only; none without a problem */
	{
		struct problem small, big;
		struct device_info d = gpu();
		struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
		int64_t sm[3] = { 128, 64, 32 }, bg[3] = { 32768, 32768, 2 };

		solution_default(&s);
		CHECK(problem_init(&small, c, sm, &err) == TCX_OK);
		CHECK(problem_init(&big, c, bg, &err) == TCX_OK);
		CHECK(plan_make(c, &small, &s, &d, &k, &err) == TCX_OK && k.off32);
		CHECK(plan_source(&k, &src, &opts, &err) == TCX_OK &&
		      strstr(strbuf_str(&src), "#define OFF32 1") != NULL);
		CHECK(plan_accepts(&k, &small, &err) == TCX_OK);
		CHECK(plan_accepts(&k, &big, &err) == TCX_EREJECT);
		CHECK(strstr(err.msg, "32-bit offsets") != NULL);
		CHECK(plan_make(c, &big, &s, &d, &k, &err) == TCX_OK && !k.off32);
		CHECK(plan_accepts(&k, &big, &err) == TCX_OK);
		CHECK(plan_make(c, NULL, &s, &d, &k, &err) == TCX_OK && !k.off32);
		strbuf_release(&src);
		strbuf_release(&opts);
	}
	/* the prelude names every tunable and is the same for two
	 * contractions with the same layout facts */
	{
		struct tcx_contraction *c2 = NULL;
		struct kernel_plan k2;
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		CHECK(notation_parse("C[ijk]=A[ilk]*B[ljk]", TCX_DTYPE_S, LAYOUT_BY_STYLE, &c2, &err) ==
		      TCX_OK);
		CHECK(plan(c, "", &k, &err) == TCX_OK && plan_source(&k, &a, NULL, &err) == TCX_OK);
		CHECK(c2 && plan(c2, "", &k2, &err) == TCX_OK &&
		      plan_source(&k2, &b, NULL, &err) == TCX_OK);
		CHECK(strstr(a.buf, "#define WG0 16") && strstr(a.buf, "#define DEPTHU 16"));
		CHECK(strstr(a.buf, "#define TLU_P 1") && strstr(a.buf, "#define UNIT_Q_DU 1"));
		CHECK(a.len > 1000 && strcmp(a.buf, b.buf) == 0);
		CHECK(k2.nf2 == 1 && k2.nb == 0);
		/* Occupancy reaches the source only when set, and names the solution */
		CHECK(!strstr(a.buf, "#define WG_OCC 2"));
		strbuf_release(&a);
		CHECK(plan(c, "Occupancy=2", &k, &err) == TCX_OK &&
		      plan_source(&k, &a, NULL, &err) == TCX_OK);
		CHECK(strstr(a.buf, "#define WG_OCC 2\n") != NULL);
		solution_name(&k.sol, key, sizeof(key));
		CHECK(strstr(key, "_OCC2") != NULL);
		CHECK(plan(c, "Occupancy=33", &k, &err) == TCX_EINVAL);
		CHECK(strstr(err.msg, "Occupancy") != NULL);
		strbuf_release(&a);
		strbuf_release(&b);
		contraction_free(c2);
	}
	contraction_free(c);
	contraction_free(cd);
	test_mi_f64();
	return check_done();
}

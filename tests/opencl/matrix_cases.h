/* matrix_cases.h - the cases of the validation matrix, shared by the
 * OpenCL run (tests/opencl/matrix.c) and the offline compile proofs
 * (tests/cuda/compile.c, tests/hip/compile.c), so that CI compiles for
 * CUDA and HIP exactly the kernels it validates on OpenCL: the
 * contractions, the parameter sets, and the size sets (by index position). */
#ifndef TCX_MATRIX_CASES_H
#define TCX_MATRIX_CASES_H

#include <stdint.h>
#include <string.h>

static const char *const exprs[] = {
	/* Tensile's documented examples */
	"C[i,j] = Sum[k] A[i,k] * B[k,j]",
	"C[i,j,k] = Sum[l] A[i,l,k] * B[l,j,k]",
	"C[i,j] = Sum[k,l] A[i,k,l] * B[j,l,k]",
	"C[i,j,k,l,m] = Sum[n] A[i,k,m,l,n] * B[j,k,l,n,m]",
	"C[i,j,k,l,m] = Sum[n,o] A[i,k,m,o,n] * B[j,m,l,n,o]",
	"C[i,j,k,l] = Sum[m,n] A[i,j,m,n,l] * B[m,n,k,j,l]",
	/* the problem types of Tensile's configs */
	"C[ij]=A[ik]*B[kj] + beta*C[ij]",
	"C[ij]=A[ik]*B[jk] + beta*C[ij]",
	"C[ij]=A[ki]*B[kj] + beta*C[ij]",
	"C[ij]=A[ki]*B[jk] + beta*C[ij]",
	"C[ijk]=A[ilk]*B[ljk] + beta*C[ijk]",
	"C[ijk]=A[ilk]*B[jlk] + beta*C[ijk]",
	"C[ijk]=A[lik]*B[ljk] + beta*C[ijk]",
	"C[ijk]=A[lik]*B[jlk] + beta*C[ijk]",
	"C[i,j,k,l] = Sum[m,n,o] A[o,n,i,j,m,l] * B[o,n,j,m,k,l]",
	"C[i,j] = Sum[k,l] A[k,i,l] * B[k,j,l]",
	"C[i,j] = Sum[k,l,m] A[m,l,i,k] * B[m,l,k,j]",
	"C[i,j,k] = Sum[l,m,n] A[n,m,i,j,l] * B[n,m,j,l,k]",
	/* einsum forms (last index fastest) */
	"ilk,jlk->ijk",
	"ikmon,jmlno->ijklm",
	"ik,kj->ij",
	"ij,jk",
	"bij,bjk->bik",
	/* degenerate contractions */
	"C[ij]=A[i]*B[j]",
	"C[]=A[k]*B[k]",
	"C[b]=A[bk]*B[bk]",
	"C[i]=A[ik]*B[k]",
	"C[j]=A[k]*B[kj]",
	"C[i]=A[i]*B[i]",
	"C[ij]=A[ij]*B[j]",
	/* D0 from B: C's fastest index is B's */
	"C[ji]=A[ik]*B[jk]",
	/* conjugation (complex types; plain product for real ones) */
	"C[ij]=conj(A[ik])*B[jk]",
};

struct paramset {
	const char *name;
	const char *params;
	const char *types; /* the element types it is for (NULL: all) */
	int cuda;          /* tensor cores, for CUDA devices only: 1 any, 2 Hopper (sm_90) */
};

static const struct paramset paramsets[] = {
	/* Four sets between them cover VectorWidth > 1, GlobalSplitU > 1,
	 * LocalSplitU > 1, every EdgeType, both load paths, LdsPad, both
	 * prefetches off, NumLoadsCoalesced and WorkGroupMapping.  Each set
	 * is a PoCL compile per contraction shape, and the kernels that
	 * stage through local memory are the slow ones (2.5-5 s each on one
	 * core), so features share sets rather than add them. */
	{ "lds-vw4-pad-wgm3", "UseLDS=True,WorkGroup=[4,4,1],ThreadTile=[4,4],VectorWidth=4,"
			      "DepthU=8,EdgeType=Branch,WorkGroupMapping=3,NumLoadsCoalescedB=2,"
			      "LdsPad=1", NULL, 0 },
	{ "lds-lsu2-shift", "UseLDS=True,WorkGroup=[4,4,2],ThreadTile=[2,2],VectorWidth=2,"
			    "DepthU=8,EdgeType=ShiftPtr,PrefetchGlobalRead=False,"
			    "PrefetchLocalRead=False,NumLoadsCoalescedA=-1", NULL, 0 },
	{ "direct-vw8-gsu3-shift", "UseLDS=False,WorkGroup=[2,2,1],ThreadTile=[8,4],VectorWidth=8,"
				   "DepthU=4,EdgeType=ShiftPtr,GlobalSplitU=3,WorkGroupMapping=2",
	  NULL, 0 },
	{ "lds-edge-none", "UseLDS=True,WorkGroup=[1,1,1],ThreadTile=[1,1],VectorWidth=1,"
			   "DepthU=1,EdgeType=None,LoopTail=False", NULL, 0 },
	/* PackFreeIndices on the SIMT kernel: D0 and D1 each across a second
	 * free index (the expressions with more than two), split GSU ways */
	{ "lds-pack-gsu2", "UseLDS=True,WorkGroup=[4,4,1],ThreadTile=[2,4],VectorWidth=2,"
			   "DepthU=4,GlobalSplitU=2,PackFreeIndices=True", "SC", 0 },
	/* the planner's 96 x 64 tile for short sums: 96 work-items, 12 along
	 * D0, DepthU 12, packed */
	{ "lds-wg96-du12", "WorkGroup=[12,8,1],ThreadTile=[8,8],VectorWidth=4,DepthU=12,"
			   "Occupancy=5,PackFreeIndices=True", "S", 0 },
	/* tensor cores (MatrixInstruction): fp16/bf16 by ldmatrix, fp32 as
	 * tf32 or TF32x3; two warp layouts, vector and element global reads,
	 * ShiftPtr with GlobalSplitU, one buffer */
	{ "mi16-2warps", "WorkGroup=[8,8,1],ThreadTile=[8,4],VectorWidth=4,DepthU=16,LdsPad=8,"
			 "MatrixInstruction=[16,8,16,1]", "HB", 1 },
	{ "mi16-4warps-gsu", "WorkGroup=[16,8,1],ThreadTile=[4,6],VectorWidth=2,DepthU=32,"
			     "LdsPad=8,EdgeType=ShiftPtr,GlobalSplitU=2,PrefetchGlobalRead=False,"
			     "MatrixInstruction=[16,8,16,1]", "HB", 1 },
	{ "mi8-tf32", "WorkGroup=[8,8,1],ThreadTile=[8,4],VectorWidth=4,DepthU=8,LdsPad=4,"
		      "MatrixInstruction=[16,8,8,1]", "S", 1 },
	{ "mi8-tf32-gsu", "WorkGroup=[16,8,1],ThreadTile=[4,6],VectorWidth=2,DepthU=16,"
			  "EdgeType=ShiftPtr,GlobalSplitU=2,MatrixInstruction=[16,8,8,1]", "S", 1 },
	/* TF32x3 on mma.sync, a DepthU that is no power of two (sums of 24),
	 * D0 and D1 packed across a second free index */
	{ "mi8-tf32x3-pack", "WorkGroup=[8,8,1],ThreadTile=[8,4],VectorWidth=1,DepthU=24,"
			     "LdsPad=8,TF32x3=True,PackFreeIndices=True,"
			     "MatrixInstruction=[16,8,8,1]", "S", 1 },
	/* fp64 on the fp64 tensor cores (8x8x4): two warps of 4 x 2 tiles
	 * with vector reads, and four warps of 2 x 3 tiles with element reads,
	 * ShiftPtr, GlobalSplitU, one buffer and a DepthU of 24; complex fp64
	 * as four real products on them, the first only (its emulation is
	 * the slowest) */
	{ "mi-f64", "WorkGroup=[8,8,1],ThreadTile=[4,4],VectorWidth=2,DepthU=8,LdsPad=4,"
		    "MatrixInstruction=[8,8,4,1]", "DZ", 1 },
	{ "mi-f64-gsu", "WorkGroup=[16,8,1],ThreadTile=[2,6],VectorWidth=1,DepthU=24,"
			"EdgeType=ShiftPtr,GlobalSplitU=2,PrefetchGlobalRead=False,"
			"MatrixInstruction=[8,8,4,1]", "D", 1 },
	/* and Hopper's 16-row fp64 shapes: k 16 in two warps with vector
	 * reads; k 4 with ShiftPtr and GlobalSplitU; k 8 in one warp, a
	 * DepthU of 24, complex fp64 too */
	{ "mi-f64-k16", "WorkGroup=[8,8,1],ThreadTile=[4,4],VectorWidth=2,DepthU=16,LdsPad=4,"
			"MatrixInstruction=[16,8,16,1]", "D", 2 },
	{ "mi-f64-k4-gsu", "WorkGroup=[16,8,1],ThreadTile=[2,6],VectorWidth=1,DepthU=8,"
			   "EdgeType=ShiftPtr,GlobalSplitU=2,MatrixInstruction=[16,8,4,1]", "D", 2 },
	{ "mi-f64-k8", "WorkGroup=[8,4,1],ThreadTile=[2,4],VectorWidth=1,DepthU=24,"
		       "MatrixInstruction=[16,8,8,1]", "DZ", 2 },
	/* Hopper's warpgroups (wgmma): one warpgroup with two 64-row tiles,
	 * two warpgroups side by side along D1 with GlobalSplitU and packed
	 * free indices; fp32 as tf32 in tiles 32 wide (two instructions of
	 * n 32 along D0), TF32x3 with two warpgroups along D0 and two tiles
	 * each, packed, and TF32x3 in tiles 24 wide (n 24: Q K-major only) */
	{ "wg-1grp", "WorkGroup=[16,8,1],ThreadTile=[8,16],DepthU=64,"
		     "MatrixInstruction=[64,128,16,1]", "HB", 2 },
	{ "wg-2grp-gsu", "WorkGroup=[32,8,1],ThreadTile=[2,16],DepthU=64,EdgeType=ShiftPtr,"
			 "GlobalSplitU=2,PackFreeIndices=True,MatrixInstruction=[64,64,16,1]", "HB", 2 },
	{ "wg-tf32-n32", "WorkGroup=[32,4,1],ThreadTile=[4,8],DepthU=32,"
			 "MatrixInstruction=[64,32,8,1]", "S", 2 },
	{ "wg-tf32x3-gsu", "WorkGroup=[32,8,1],ThreadTile=[4,16],DepthU=32,GlobalSplitU=2,"
			   "TF32x3=True,PackFreeIndices=True,MatrixInstruction=[64,64,8,1]", "S", 2 },
	{ "wg-tf32x3-n24", "WorkGroup=[16,8,1],ThreadTile=[4,3],DepthU=32,TF32x3=True,"
			   "MatrixInstruction=[64,24,8,1]", "S", 2 },
};

/* Whether a rejection is one of the size or layout rules (plan_accepts,
 * check_wgmma): a set that cannot run these sizes or this layout, not a
 * failure (EdgeType None wants multiples of the tile, PackFreeIndices
 * whole vectors along the packed tile, a warpgroup tile of an MN-major Q
 * whole 128-byte columns). */
static int size_rule(const char *msg)
{
	return strstr(msg, "EdgeType None") || strstr(msg, "PackFreeIndices needs D") ||
	       strstr(msg, "in 128-byte columns");
}

/* Whether a parameter set is a case for element type t on a device whose
 * kernel language is `lang` ("opencl", "cuda") and architecture `arch`. */
static int paramset_applies(const struct paramset *ps, char type, const char *lang,
			    const char *arch)
{
	if (ps->types && !strchr(ps->types, type))
		return 0;
	if (ps->cuda == 2 && strcmp(arch, "sm_90") != 0)
		return 0;
	return !ps->cuda || strcmp(lang, "cuda") == 0;
}

/* Size sets: by the index's position in the id order.  The last is for
 * the tensor-core sets only: sizes that keep 16-byte vectors aligned,
 * which the others do not, so that their vector loads are checked too. */
#define MATRIX_SIZE_SETS 5

static int size_set_applies(const struct paramset *ps, int set)
{
	return set < MATRIX_SIZE_SETS - 1 || ps->cuda;
}

static void make_sizes(int set, int n, int64_t *sz)
{
	static const int64_t pos31[] = { 31, 64, 3, 2, 2, 2, 2, 2 };
	double flops = 1;

	for (int k = 0; k < n; k++) {
		switch (set) {
		case 0:
			sz[k] = 1;
			break;
		case 1:
			sz[k] = 7;
			break;
		case 2:
			sz[k] = k < 8 ? pos31[k] : 1;
			break;
		case 4:
			/* multiples of 8, not of the tiles; a longer bound index */
			sz[k] = k == n - 1 ? 136 : 40;
			break;
		default:
			/* a prime above 100 on the last index (usually bound) */
			sz[k] = k == n - 1 ? 127 : k == 0 ? 5 : 3;
			break;
		}
		flops *= (double)sz[k];
	}
	/* keep every case small: shrink the later indices */
	for (int k = n - 2; k >= 1 && flops > (double)(1 << 22); k--) {
		flops /= (double)sz[k];
		sz[k] = 1;
	}
}

#endif /* TCX_MATRIX_CASES_H */

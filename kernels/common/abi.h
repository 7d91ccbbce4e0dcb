/* abi.h - the kernels' binary interface, the one text every side of a
 * launch compiles: the kernels (OpenCL C 1.2, and CUDA/HIP C++; the
 * generator puts this file in every kernel source, before
 * opencl/contract.cl), tcx's host code (lib/gen, C17) and the libraries
 * tcx export-lib writes (their src/abi.h, C99).  It holds the kernels'
 * parameters in order, struct tcx_args, which carries a problem's sizes
 * and strides by slot, struct tcx_tma, the warpgroup kernel's word on its
 * tensor maps, and struct tcx_permute_args, the permute kernel's
 * (opencl/permute.cl, planned by lib/gen/permute.c); and for the host the
 * types of a launch, which runtime/abi.c fills, for tcx and the libraries
 * alike.
 *
 * Every field is 64-bit, so that host and device agree on the layout
 * without padding: the kernels' long (OpenCL's is 64-bit; CUDA's and
 * HIP's are on LP64 hosts, which cuda/compat.h asserts), the host's
 * int64_t.
 */
/* A guard no library's names can clash with: theirs end in _H, not _H_ */
#ifndef TCX_ABI_H_
#define TCX_ABI_H_

/* Read by a kernel compiler (OpenCL C: clang defines only the language's
 * version without a device; the CUDA dialect: the generator's prelude
 * says so), or by the host's. */
#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__) || defined(TCX_LANG_CUDA)
#define TCX_ABI_KERNEL 1
#endif

#ifdef TCX_ABI_KERNEL
#define TCX_I64 long
#else
#include <stddef.h>
#include <stdint.h>
#define TCX_I64 int64_t
#endif

/* Slots: the kernels index sizes and strides by slot, not by index: 0 =
 * D0, 1 = D1, 2 = DU (each a size-1 stand-in when the contraction has no
 * such index), then the folded dimension-2 indices (free and batch), then
 * the outer bound indices.  Sixteen indices (tcx's TCX_MAX_INDICES) and the
 * three stand-ins take them all. */
#define TCX_MAX_SLOTS 19

/* What tcx_contract and tcx_gsu_reduce take besides buffers and scalars. */
struct tcx_args {
	TCX_I64 size[TCX_MAX_SLOTS];
	TCX_I64 sp[TCX_MAX_SLOTS]; /* strides in P */
	TCX_I64 sq[TCX_MAX_SLOTS]; /* strides in Q */
	TCX_I64 sc[TCX_MAX_SLOTS]; /* strides in C */
	TCX_I64 off_p, off_q, off_c;
	TCX_I64 ws_stride;	/* elements between GlobalSplitU parts of the workspace */
	TCX_I64 nf2;		/* folded dimension-2 indices (slots 3 ..) */
	TCX_I64 nb;		/* bound indices besides DU (slots 3 + nf2 ..) */
	TCX_I64 conj_p, conj_q; /* complex conjugation of P, Q */
	TCX_I64 groups[3];	/* work-groups along D0, D1 and dimension 2 (GROUP_DECODE) */
};

/* The warpgroup kernel's last parameter (kernels/cuda/wgmma.cuh): whether
 * P and Q have tensor maps for the copy engine (else its producer copies
 * with cp.async), and the slot each map dimension past the first two
 * stands for (-1: none).  The maps themselves are CUDA's CUtensorMap,
 * TCX_TMAP_BYTES each, passed before it. */
#define TCX_TMAP_BYTES 128
struct tcx_tma {
	TCX_I64 use;
	TCX_I64 xp[3], xq[3];
};

/* The tensor permute (opencl/permute.cl): out[perm(x)] = in[x], as
 * tcx_permute's last parameter.  Sizes and strides by slot, in words (the
 * unit the kernel moves: an element, or several the host fused): 0 = the
 * index moving fastest in the input, 1 = the one moving fastest in the
 * output when that is another (the transposing path), else the next one
 * the straight copy walks (a size-1 stand-in when there is none), then
 * nfold folded slots, numbered into dimension 2 of the grid.  Offsets are
 * in words.  Conjugation flips the top bit of 8-byte lanes of each word:
 * lane k's when bit k of conj is set (the imaginary parts of complex
 * elements). */
#define TCX_PERMUTE_SLOTS 16
/* The tensor-times-matrix kernel (opencl/ttm.cl, planned by lib/gen/ttm.c):
 * C[F, j] = alpha * T[F, k] M[j, k] + beta * C.  Slots 0 q (C's fastest
 * index), 1 r, 2 k, 3 j, then the folded ones; strides in elements. */
struct tcx_ttm_args {
	TCX_I64 size[TCX_MAX_SLOTS];
	TCX_I64 st[TCX_MAX_SLOTS]; /* strides in T */
	TCX_I64 sc[TCX_MAX_SLOTS]; /* strides in C */
	TCX_I64 sm_j, sm_k;	   /* M's strides */
	TCX_I64 off_t, off_m, off_c;
	TCX_I64 nfold;		   /* folded slots (4 ..) */
	TCX_I64 jblocks;	   /* work-groups along j, within dimension 0 */
	TCX_I64 groups[3];	   /* work-groups along j and q, r, the folded slots */
};
/* The tensor-times-vector kernel (opencl/ttv.cl, planned by lib/gen/ttv.c):
 * C[O] = alpha * sum_S T[O, S] V[S] + beta * C.  Slots 0 .. no - 1 the
 * outputs (0: q), then the summed ones; strides in elements. */
struct tcx_ttv_args {
	TCX_I64 size[TCX_MAX_SLOTS];
	TCX_I64 st[TCX_MAX_SLOTS];    /* strides in T */
	TCX_I64 sv[TCX_MAX_SLOTS];    /* strides in V (0 for a free index) */
	TCX_I64 sc[TCX_MAX_SLOTS];    /* strides in C (0 for a summed one) */
	TCX_I64 kstep[TCX_MAX_SLOTS]; /* the lanes along the sum as the summed
				       * slots' digits, first fastest */
	TCX_I64 off_t, off_v, off_c;
	TCX_I64 total;	 /* positions of the sum */
	TCX_I64 qblocks; /* work-groups along q */
	TCX_I64 groups;	 /* work-groups in all */
	TCX_I64 split;	 /* parts of the sum (1: none) */
	TCX_I64 chunk;	 /* positions of a part */
	TCX_I64 pgroups; /* work-groups of a part */
	TCX_I64 nout;	 /* elements of C */
};
struct tcx_permute_args {
	TCX_I64 size[TCX_PERMUTE_SLOTS];
	TCX_I64 si[TCX_PERMUTE_SLOTS]; /* strides in the input */
	TCX_I64 so[TCX_PERMUTE_SLOTS]; /* strides in the output */
	TCX_I64 off_in, off_out;
	TCX_I64 nfold;	   /* folded slots (2 ..) */
	TCX_I64 conj;	   /* the lanes conjugated */
	TCX_I64 groups[3]; /* work-groups along slots 0, 1 and the folded ones */
};

/* The kernels' parameters, by position.  tcx_contract: the buffers C, P
 * (the operand owning D0), Q and W (the GlobalSplitU workspace; C when
 * there is none), struct tcx_args, alpha and beta (SCALAR_T: complex for
 * C and Z, else the arithmetic type), and for the warpgroup kernel the
 * two tensor maps and struct tcx_tma.  tcx_gsu_reduce: C, W, struct
 * tcx_args, alpha, beta and the number of C's elements. */
enum tcx_param {
	TCX_PARAM_C,
	TCX_PARAM_P,
	TCX_PARAM_Q,
	TCX_PARAM_W,
	TCX_PARAM_ARGS,
	TCX_PARAM_ALPHA,
	TCX_PARAM_BETA,
	TCX_PARAMS, /* tcx_contract's, but for the warpgroup kernel's */
	TCX_PARAM_TMAP_P = TCX_PARAMS,
	TCX_PARAM_TMAP_Q,
	TCX_PARAM_TMA,
	TCX_PARAMS_WGMMA
};
enum tcx_reduce_param {
	TCX_REDUCE_C,
	TCX_REDUCE_W,
	TCX_REDUCE_ARGS,
	TCX_REDUCE_ALPHA,
	TCX_REDUCE_BETA,
	TCX_REDUCE_TOTAL,
	TCX_REDUCE_PARAMS
};
/* tcx_permute: the output, the input (words of opencl/permute.cl's PERM_T)
 * and struct tcx_permute_args. */
enum tcx_permute_param {
	TCX_PERMUTE_OUT,
	TCX_PERMUTE_IN,
	TCX_PERMUTE_ARGS,
	TCX_PERMUTE_PARAMS
};

/* tcx_ttm: C, T, M, struct tcx_ttm_args, alpha and beta (the element
 * type: real types only). */
enum tcx_ttm_param {
	TCX_TTM_C,
	TCX_TTM_T,
	TCX_TTM_M,
	TCX_TTM_ARGS,
	TCX_TTM_ALPHA,
	TCX_TTM_BETA,
	TCX_TTM_PARAMS
};

/* tcx_ttv: C, T, V, W (the parts' sums where the sum is split; C where
 * not), struct tcx_ttv_args, alpha and beta (the element type: real types
 * only).  tcx_ttv_reduce: C, W, struct tcx_ttv_args, alpha and beta. */
enum tcx_ttv_param {
	TCX_TTV_C,
	TCX_TTV_T,
	TCX_TTV_V,
	TCX_TTV_W,
	TCX_TTV_ARGS,
	TCX_TTV_ALPHA,
	TCX_TTV_BETA,
	TCX_TTV_PARAMS
};

#ifdef TCX_ABI_KERNEL
/* The same, as the kernels declare them (common/port.h's words; DATA_T,
 * VAL_T and SCALAR_T are opencl/contract.cl's). */
#define TCX_CONTRACT_PARAMS                                                                        \
	GLOBAL DATA_T *RESTRICT C, const GLOBAL DATA_T *RESTRICT P,                                \
	    const GLOBAL DATA_T *RESTRICT Q, GLOBAL VAL_T *RESTRICT W, const struct tcx_args args, \
	    const SCALAR_T alpha, const SCALAR_T beta
#define TCX_WGMMA_PARAMS                                                                           \
	TCX_CONTRACT_PARAMS, const __grid_constant__ tcx_tmap tm_p,                                \
	    const __grid_constant__ tcx_tmap tm_q, const struct tcx_tma tma
#define TCX_REDUCE_PARAMS                                                                          \
	GLOBAL DATA_T *RESTRICT C, const GLOBAL VAL_T *RESTRICT W, const struct tcx_args args,     \
	    const SCALAR_T alpha, const SCALAR_T beta, const long total
#define TCX_PERMUTE_KERNEL_PARAMS                                                                  \
	GLOBAL PERM_T *RESTRICT out, const GLOBAL PERM_T *RESTRICT in,                             \
	    const struct tcx_permute_args args
#define TCX_TTM_KERNEL_PARAMS                                                                      \
	GLOBAL DATA_T *RESTRICT C, const GLOBAL DATA_T *RESTRICT T,                                \
	    const GLOBAL DATA_T *RESTRICT M, const struct tcx_ttm_args args, const DATA_T alpha,   \
	    const DATA_T beta
#define TCX_TTV_KERNEL_PARAMS                                                                      \
	GLOBAL DATA_T *RESTRICT C, const GLOBAL DATA_T *RESTRICT T,                                \
	    const GLOBAL DATA_T *RESTRICT V, GLOBAL DATA_T *RESTRICT W,                            \
	    const struct tcx_ttv_args args, const DATA_T alpha, const DATA_T beta
#define TCX_TTV_REDUCE_PARAMS                                                                      \
	GLOBAL DATA_T *RESTRICT C, const GLOBAL DATA_T *RESTRICT W,                                \
	    const struct tcx_ttv_args args, const DATA_T alpha, const DATA_T beta
#else
/* ---- the host's side: runtime/abi.c fills these ---- */

/* The kernels by name, and the layout they read, without padding (C99 has
 * no static assertion; an array of size -1 fails). */
#define TCX_CONTRACT_NAME "tcx_contract"
#define TCX_REDUCE_NAME	  "tcx_gsu_reduce"
#define TCX_PERMUTE_NAME  "tcx_permute"
#define TCX_TTM_NAME	  "tcx_ttm"
#define TCX_TTV_NAME	  "tcx_ttv"
#define TCX_TTV_REDUCE_NAME "tcx_ttv_reduce"
typedef char tcx_args_unpadded[sizeof(struct tcx_args) == 8 * (4 * TCX_MAX_SLOTS + 11) ? 1 : -1];
typedef char tcx_permute_args_unpadded
    [sizeof(struct tcx_permute_args) == 8 * (3 * TCX_PERMUTE_SLOTS + 7) ? 1 : -1];
typedef char tcx_ttm_args_unpadded[sizeof(struct tcx_ttm_args) == 8 * (3 * TCX_MAX_SLOTS + 10) ? 1 : -1];
typedef char tcx_ttv_args_unpadded[sizeof(struct tcx_ttv_args) == 8 * (5 * TCX_MAX_SLOTS + 10) ? 1 : -1];
typedef char tcx_tma_unpadded[sizeof(struct tcx_tma) == 8 * 7 ? 1 : -1];

/* What a launch takes of a kernel plan (tcx's plan_abi; an exported
 * library keeps it in its tables). */
struct abi_plan {
	int nslots;
	const int *slot; /* index id per slot; negative for a size-1 stand-in */
	int nf2, nb;	 /* folded dimension-2 slots (3 ..), outer bound slots after them */
	int conj_p, conj_q;
	int wg[3];    /* WorkGroup: the work-group's shape */
	int threads;  /* the warpgroup kernel: its work-group in one dimension (0: wg) */
	int mt0, mt1; /* macro tile along D0 and D1 */
	int gsu;      /* GlobalSplitU */
	int pack[2];  /* PackFreeIndices: the folded slot D0 (D1) spans too; -1: none */
};

/* A problem's sizes and strides, by index id; P is the operand that owns
 * D0, Q the other. */
struct abi_sizes {
	const int64_t *size;
	const int64_t *stride_p, *stride_q, *stride_c;
	int64_t extent_c; /* elements C spans, between GlobalSplitU's parts */
};

/* alpha and beta as the kernels' SCALAR_T */
union abi_scalar {
	float f;
	double d;
	float f2[2];
	double d2[2];
};

/* The launches of one problem: tcx_contract's, its work-groups in
 * args.groups, and with GlobalSplitU tcx_gsu_reduce's.  The work sizes
 * (global, rglobal) are abi_grid's, within the limits of the caller's
 * device. */
struct abi_launch {
	struct tcx_args args;
	size_t local[3], global[3];
	union abi_scalar alpha, beta;
	size_t scalar_bytes;
	size_t ws_bytes;	      /* the GlobalSplitU workspace; 0 when none */
	int64_t total;		      /* elements of C: the reduction's work-items */
	int64_t rgroups[3];	      /* the reduction's work-groups */
	size_t rlocal[3], rglobal[3]; /* and its work sizes */
};
#endif

/* Work-groups a launch has at most along dimensions 1 and 2 on any device
 * (CUDA's and HIP's limit), and work-items along any dimension (HIP counts
 * them in 32 bits, as OpenCL devices with a 32-bit size_t do): a launch
 * that needs more folds its work-groups into the grid (runtime/abi.c), and
 * the kernels take their place from struct tcx_args' groups. */
#define TCX_GRID_MAX_YZ	   65535
#define TCX_GRID_MAX_ITEMS 2147483647

#endif /* TCX_ABI_H_ */

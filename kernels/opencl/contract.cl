/* contract.cl - the general tensor-contraction kernel, in Tensile's model.
 *
 * C[...] = alpha * sum over the bound indices of P[...] * Q[...] + beta * C[...]
 *
 * P is the operand that owns D0 (A, or B when C's fastest free index is
 * B's), Q the other.  Work-group dimension 0 walks D0 in macro tiles of
 * MT0 = WG0 * TT0 elements, dimension 1 walks D1 in tiles of MT1 = WG1 *
 * TT1, dimension 2 folds every other free and batch index (unfolded below)
 * and the GlobalSplitU parts; a launch may lay these work-groups out over
 * another grid, within the device's limits (GROUP_DECODE).  The bound
 * indices form one loop: DU, the innermost, in chunks of DEPTHU, nested in
 * the other bound indices.
 *
 * Every tunable is a macro with a default here; the generator (lib/gen)
 * writes a #define prelude and never edits this text.  Sizes and strides
 * arrive in `struct tcx_args` by "slot": 0 = D0, 1 = D1, 2 = DU,
 * 3 .. 3+NF2-1 = the folded dimension-2 indices, then NB outer bound
 * indices.  A contraction without a D0, D1 or DU gets a size-1 slot.  The
 * struct and the kernels' parameters are common/abi.h's, which the
 * generator puts before this file and the host compiles too.
 *
 * Index arithmetic on tensors is idx_t: 64-bit (long), since a tensor may
 * exceed 2^31 elements, or 32-bit where the generator defines OFF32 (every
 * tensor below 2^30 elements: offsets, and a tile's overshoot past an
 * edge, then stay below 2^31).  Arithmetic inside a tile is int.
 *
 * One text for every backend: OpenCL C 1.2, and CUDA/HIP C++ with
 * kernels/cuda/compat.h (the OpenCL built-ins in C++).  What the languages
 * spell differently (vector literals, lane access, local arrays, the ids)
 * goes through common/port.h's macros, so a solution means the same on
 * every backend.
 */

/* ---- tunables (Tensile's names in comments) ---------------------------- */
#ifndef WG0
#define WG0 16 /* WorkGroup[0] */
#endif
#ifndef WG1
#define WG1 16 /* WorkGroup[1] */
#endif
#ifndef LSU
#define LSU 1 /* WorkGroup[2] = LocalSplitU */
#endif
#ifndef TT0
#define TT0 4 /* ThreadTile[0] */
#endif
#ifndef TT1
#define TT1 4 /* ThreadTile[1] */
#endif
#ifndef DEPTHU
#define DEPTHU 16 /* DepthU: bound elements per loop iteration */
#endif
#ifndef VW
#define VW 1 /* VectorWidth */
#endif
#ifndef VW1
#define VW1 VW /* the vector width along D1: VW, or less when TT1 is smaller */
#endif
#ifndef GSU
#define GSU 1 /* GlobalSplitU */
#endif
#ifndef PGR
#define PGR 1 /* PrefetchGlobalRead */
#endif
#ifndef PLR
#define PLR 1 /* PrefetchLocalRead */
#endif
#ifndef EDGE
#define EDGE 0 /* EdgeType: 0 Branch, 1 ShiftPtr, 2 None */
#endif
#ifndef WGM
#define WGM 1 /* WorkGroupMapping */
#endif
#ifndef LOOP_TAIL
#define LOOP_TAIL 1 /* LoopTail */
#endif
#ifndef USE_LDS
#define USE_LDS 1 /* tcx: stage tiles in local memory (0: read global directly) */
#endif
#ifndef LDS_PAD
#define LDS_PAD 0 /* LdsPad */
#endif
#ifndef SPLIT_LOOP
#define SPLIT_LOOP 0 /* tcx: a second main loop for interior tiles (GPUs) */
#endif
#ifndef SPLIT_LOOP_P
#define SPLIT_LOOP_P 0 /* tcx: and a third, P unchecked, for tiles past D1's end */
#endif
#ifndef WG_OCC
#define WG_OCC 0 /* tcx Occupancy: work-groups per compute unit (CUDA; 0: any) */
#endif
#ifndef MI_M
#define MI_M 0 /* MatrixInstruction[0]: tensor-core tile rows (CUDA; 0: none) */
#endif
#ifndef PACK0_SLOT
#define PACK0_SLOT -1 /* tcx PackFreeIndices: the folded slot D0 spans too */
#endif
#ifndef PACK1_SLOT
#define PACK1_SLOT -1 /* and D1 */
#endif
#ifndef TF32X3
#define TF32X3 0 /* tcx TF32x3: fp32 as three tf32 products (MatrixInstruction) */
#endif
#ifndef MI_WGMMA
#define MI_WGMMA 0 /* tcx: MatrixInstruction on Hopper's warpgroups (kernels/cuda/wgmma.cuh) */
#endif
#ifndef NLC_P
#define NLC_P 1 /* NumLoadsCoalesced of P (resolved by the generator) */
#endif
#ifndef NLP_P
#define NLP_P ((MT0 * DEPTHU) / (GLVW * NT * NLC_P))
#endif
#ifndef NLC_Q
#define NLC_Q 1
#endif
#ifndef NLP_Q
#define NLP_Q ((MT1 * DEPTHU) / (GLVW * NT * NLC_Q))
#endif
#ifndef TLU_P
#define TLU_P 1 /* P's D0 moves faster than DU: loads coalesce along D0 */
#endif
#ifndef TLU_Q
#define TLU_Q 0
#endif
/* Known unit strides (packed layouts), which allow vector memory access. */
#ifndef UNIT_P_D0
#define UNIT_P_D0 0
#endif
#ifndef UNIT_P_DU
#define UNIT_P_DU 0
#endif
#ifndef UNIT_Q_D1
#define UNIT_Q_D1 0
#endif
#ifndef UNIT_Q_DU
#define UNIT_Q_DU 0
#endif
#ifndef UNIT_C_D0
#define UNIT_C_D0 0
#endif
/* Test only: drop the last DEPTHU chunk, so validation must fail. */
#ifndef TEST_SKIP_LAST_U
#define TEST_SKIP_LAST_U 0
#endif

#define MT0 (WG0 * TT0)
#define MT1 (WG1 * TT1)
#define NT (WG0 * WG1 * LSU)
#define GLVW VW /* global-read vector width */
#define DU_PER_LSU (DEPTHU / LSU)

/* MatrixInstruction (CUDA only; kernels/cuda/compat.h has the instructions):
 * the work-group's warps split the macro tile MI_WARPS0 x MI_WARPS1 ways
 * (the generator picks MI_WARPS0), each warp computing its MI_WT0 x MI_WT1
 * share as MI_FM x MI_FN tensor-core tiles of MI_M x MI_N, MI_K bound
 * elements at a time.  ThreadTile then only sizes the macro tile. */
#if MI_M
#if LSU > 1 || !USE_LDS || defined(TCX_LANG_CUDA) == 0
#error "MatrixInstruction needs CUDA, local memory and LocalSplitU 1"
#endif
#define MI_WARPS1 (NT / 32 / MI_WARPS0)
#define MI_WT0 (MT0 / MI_WARPS0)
#define MI_WT1 (MT1 / MI_WARPS1)
#define MI_FM (MI_WT0 / MI_M)
#define MI_FN (MI_WT1 / MI_N)
#endif

/* ---- element types ------------------------------------------------------ */
#if (defined(TCX_TYPE_D) || defined(TCX_TYPE_Z)) && !defined(TCX_LANG_CUDA)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if defined(TCX_TYPE_S)
#define DATA_T float
#define REAL_T float
#define TCX_COMPLEX 0
#elif defined(TCX_TYPE_D)
#define DATA_T double
#define REAL_T double
#define TCX_COMPLEX 0
#elif defined(TCX_TYPE_C)
#define DATA_T VECN(float, 2)
#define REAL_T float
#define TCX_COMPLEX 1
#elif defined(TCX_TYPE_Z)
#define DATA_T VECN(double, 2)
#define REAL_T double
#define TCX_COMPLEX 1
#elif defined(TCX_TYPE_H)
#define DATA_T HALF_T
#define REAL_T float
#define TCX_COMPLEX 0
#define TCX_STORE_HALF 1
#elif defined(TCX_TYPE_B)
#define DATA_T ushort
#define REAL_T float
#define TCX_COMPLEX 0
#define TCX_STORE_BF16 1
#else
#error "define one of TCX_TYPE_S D C Z H B"
#endif

#if TCX_COMPLEX
#define VAL_T VECN(REAL_T, 2)
#define ZERO MAKE2(VAL_T, 0, 0)
#else
#define VAL_T REAL_T
#define ZERO ((REAL_T)0)
#endif

/* What local memory holds: the values, or with MatrixInstruction on fp16
 * and bf16 the stored 16 bits, which the tensor cores take as they are. */
#if MI_M && (defined(TCX_TYPE_H) || defined(TCX_TYPE_B))
#define MI_RAW 1
#define LDS_T ushort
#else
#define MI_RAW 0
#define LDS_T VAL_T
#endif

/* Scalars alpha and beta: complex for C and Z, else the arithmetic type. */
#define SCALAR_T VAL_T

#if VW > 1 && !TCX_COMPLEX
#define VEC_T VECN(REAL_T, VW)
#else
#define VEC_T VAL_T
#endif

/* Sizes and strides arrive by slot (see the top of this file) in struct
 * tcx_args, which common/abi.h defines for the kernels and the host alike. */
/* Counts and flags arrive at run time, so that one compiled program serves
 * every contraction with the same layout facts. */
#define NF2 ((int)args.nf2)
#define NB ((int)args.nb)
#define CONJ_P (args.conj_p != 0)
#define CONJ_Q (args.conj_q != 0)
#define MAX_NB (TCX_MAX_SLOTS - 3) /* DU is a bound index too */

/* 32-bit offsets: the generator's promise (plan_make, plan_accepts) that
 * every tensor has fewer than 2^30 elements; on a GPU an offset then takes
 * one instruction where 64 bits take two or three, and the per-element
 * loads and stores of a short sum are mostly offsets */
#ifndef OFF32
#define OFF32 0
#endif
#if OFF32
typedef int idx_t;
#else
typedef long idx_t;
#endif

#ifndef SIZE_D0
#define SIZE_D0 ((idx_t)args.size[0])
#endif
#ifndef SIZE_D1
#define SIZE_D1 ((idx_t)args.size[1])
#endif
#ifndef SIZE_DU
#define SIZE_DU ((idx_t)args.size[2])
#endif
#ifndef STRIDE_P_D0
#define STRIDE_P_D0 (UNIT_P_D0 ? (idx_t)1 : (idx_t)args.sp[0])
#endif
#ifndef STRIDE_P_DU
#define STRIDE_P_DU (UNIT_P_DU ? (idx_t)1 : (idx_t)args.sp[2])
#endif
#ifndef STRIDE_Q_D1
#define STRIDE_Q_D1 (UNIT_Q_D1 ? (idx_t)1 : (idx_t)args.sq[1])
#endif
#ifndef STRIDE_Q_DU
#define STRIDE_Q_DU (UNIT_Q_DU ? (idx_t)1 : (idx_t)args.sq[2])
#endif
#ifndef STRIDE_C_D0
#define STRIDE_C_D0 (UNIT_C_D0 ? (idx_t)1 : (idx_t)args.sc[0])
#endif
#ifndef STRIDE_C_D1
#define STRIDE_C_D1 ((idx_t)args.sc[1])
#endif

/* ---- loads and stores ---------------------------------------------------- */
INLINE VAL_T ld1(const GLOBAL DATA_T *p, idx_t off)
{
#if defined(TCX_TYPE_H)
	return vload_half(0, p + off);
#elif defined(TCX_TYPE_B)
	return as_float((uint)p[off] << 16);
#else
	return p[off];
#endif
}

#if TCX_COMPLEX
#define CONJ_IF(v, c) ((c) ? MAKE2(VAL_T, (v).x, -(v).y) : (v))
#else
#define CONJ_IF(v, c) (v)
#endif

#if defined(TCX_TYPE_B)
INLINE ushort to_bf16(float f)
{
	uint x = as_uint(f);

	if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
		return (ushort)((x >> 16) | 0x40u);
	x += 0x7fffu + ((x >> 16) & 1u);
	return (ushort)(x >> 16);
}
#endif

INLINE void st1(GLOBAL DATA_T *p, idx_t off, VAL_T v)
{
#if defined(TCX_TYPE_H)
	vstore_half_rte(v, 0, p + off);
#elif defined(TCX_TYPE_B)
	p[off] = to_bf16(v);
#else
	p[off] = v;
#endif
}

/* VW contiguous elements (unit stride) as a vector. */
#if VW > 1 && !TCX_COMPLEX
INLINE VEC_T ldv(const GLOBAL DATA_T *p, idx_t off)
{
#if defined(TCX_TYPE_H)
	return TCX_CAT(vload_half, VW)(0, p + off);
#elif defined(TCX_TYPE_B)
	return TCX_CAT(as_float, VW)(TCX_CAT(convert_uint, VW)(TCX_CAT(vload, VW)(0, p + off)) << 16);
#else
	return TCX_CAT(vload, VW)(0, p + off);
#endif
}
#endif

/* multiply-accumulate */
#if TCX_COMPLEX
#define MAC(acc, a, b)                                          \
	do {                                                    \
		(acc).x = FMA((a).x, (b).x, (acc).x);           \
		(acc).x = FMA(-(a).y, (b).y, (acc).x);          \
		(acc).y = FMA((a).x, (b).y, (acc).y);           \
		(acc).y = FMA((a).y, (b).x, (acc).y);           \
	} while (0)
INLINE VAL_T cmul(VAL_T a, VAL_T b)
{
	return MAKE2(VAL_T, a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
#define SMUL(a, b) cmul(a, b)
#define IS_ZERO(s) ((s).x == 0 && (s).y == 0)
#else
#define MAC(acc, a, b) ((acc) = FMA((a), (b), (acc)))
#define SMUL(a, b) ((a) * (b))
#define IS_ZERO(s) ((s) == 0)
#endif

/* the element of a vector register: lane v of x */
#if VW > 1 && !TCX_COMPLEX
#define LANE(x, v) VLANE(REAL_T, x, v)
#define BCAST(s) ((VEC_T)(s))
#else
#define LANE(x, v) (x)
#define BCAST(s) (s)
#endif

/* Whole-vector writes of C: a work-item's VW lanes are consecutive along
 * D0, one aligned vector store when C has unit stride there (real s and d,
 * without GlobalSplitU's workspace).  Checked at run time per vector, with
 * element stores as the fallback. */
#if VW > 1 && GSU == 1 && UNIT_C_D0 && (defined(TCX_TYPE_S) || defined(TCX_TYPE_D))
#define VEC_WRITE_C 1
#else
#define VEC_WRITE_C 0
#endif

/* The thread tile holds, per D1 element j and D0 vector i, VW lanes:
 *   d0 = ((i * WG0) + t0) * VW + lane        i < TT0 / VW
 *   d1 = ((j / VW1) * WG1 + t1) * VW1 + j % VW1  j < TT1
 * so that neighbouring work-items touch neighbouring vectors. */
#if TCX_COMPLEX
#define NV0 TT0 /* complex: one element per "vector" */
#define D0_OF(i, t0) ((((i) / VW) * WG0 + (t0)) * VW + (i) % VW)
#else
#define NV0 (TT0 / VW)
#define D0_OF(i, t0) (((i) * WG0 + (t0)) * VW)
#endif
#define D1_OF(j, t1) ((((j) / VW1) * WG1 + (t1)) * VW1 + (j) % VW1)

/* ---- local-memory tiles --------------------------------------------------- */
#if USE_LDS
#if PGR
#define NBUF 2
#else
#define NBUF 1
#endif
#define LDS_P_ROW (MT0 + LDS_PAD)
#define LDS_Q_ROW (MT1 + LDS_PAD)
#endif
/* Byte offsets of the tiles in CUDA's dynamic shared memory (lds_p, lds_q,
 * then LocalSplitU's red); the launch passes their total, which the
 * generator computes the same way (plan->lds_bytes). */
#if USE_LDS
#define LDS_OFF_Q ((long)NBUF * DEPTHU * LDS_P_ROW * (long)sizeof(LDS_T))
#define LDS_OFF_RED (LDS_OFF_Q + (long)NBUF * DEPTHU * LDS_Q_ROW * (long)sizeof(LDS_T))
#else
#define LDS_OFF_RED 0L
#endif

/* A tile of one operand from global memory into registers, the pattern
 * Tensile's NumLoadsCoalesced describes: the coalesced extent EC is split
 * into LSC work-items reading GLVW elements NLC times, the perpendicular
 * extent EP into LSP work-items reading NLP times. */
#define EC_P (TLU_P ? MT0 : DEPTHU)
#define EP_P (TLU_P ? DEPTHU : MT0)
#define LSC_P (EC_P / (GLVW * NLC_P))
#define LSP_P (EP_P / NLP_P)
#define EC_Q (TLU_Q ? MT1 : DEPTHU)
#define EP_Q (TLU_Q ? DEPTHU : MT1)
#define LSC_Q (EC_Q / (GLVW * NLC_Q))
#define LSP_Q (EP_Q / NLP_Q)
#define UNIT_P_C (TLU_P ? UNIT_P_D0 : UNIT_P_DU)
#define UNIT_Q_C (TLU_Q ? UNIT_Q_D1 : UNIT_Q_DU)
/* strides along the coalesced (C) and perpendicular (Q) load directions */
#define SC_P (TLU_P ? STRIDE_P_D0 : STRIDE_P_DU)
#define SQ_P (TLU_P ? STRIDE_P_DU : STRIDE_P_D0)
#define SC_Q (TLU_Q ? STRIDE_Q_D1 : STRIDE_Q_DU)
#define SQ_Q (TLU_Q ? STRIDE_Q_DU : STRIDE_Q_D1)

/* Whole-vector global reads: the GLVW elements a work-item reads along the
 * coalesced direction are one aligned vector load when that direction has
 * unit stride, for the real types whose elements are what they store (s,
 * d).  The kernel checks alignment at run time and falls back to element
 * reads, so any layout and offset stays correct.  Packed operands too
 * (each vector from its row's offset, pko_p/pko_q), on the SIMT kernel. */
#if GLVW > 1 && (defined(TCX_TYPE_S) || defined(TCX_TYPE_D) || MI_RAW)
#define VEC_READ_P (UNIT_P_C && !(PK0 && MI_M))
#define VEC_READ_Q (UNIT_Q_C && !(PK1 && MI_M))
#else
#define VEC_READ_P 0
#define VEC_READ_Q 0
#endif

/* PackFreeIndices: D0 is its own index (N0 elements) and, as its outer
 * part, the folded slot PACK0_SLOT; D1 likewise.  A free coordinate d is
 * then inner d % n at stride s_in and outer d / n at stride s_out, by a
 * 32-bit division: the generator keeps packed extents below 2^31. */
#define PK0 (PACK0_SLOT >= 0)
#define PK1 (PACK1_SLOT >= 0)
#define PS0 (PK0 ? PACK0_SLOT : 0) /* a valid slot either way */
#define PS1 (PK1 ? PACK1_SLOT : 0)
INLINE idx_t pk_row(idx_t d, int pk, idx_t n, idx_t s_in, idx_t s_out)
{
	const uint q = pk ? (uint)d / (uint)n : 0;

	return pk ? (idx_t)((uint)d - q * (uint)n) * s_in + (idx_t)q * s_out : d * s_in;
}

/* The offset of element (d, u) of an operand tile whose origin is at
 * `base`: d along the free index (size S, stride sd), u along DU (stride
 * su); -1 when it reads as 0.  `chk_d`/`chk_u` ask for bounds checks; an
 * element outside reads as 0 (Branch), or is clamped inside (ShiftPtr,
 * never used for output). */
INLINE idx_t tile_off(idx_t base, idx_t d, idx_t u, idx_t S, idx_t SU, idx_t sd, idx_t su,
		      int chk_d,
		     int chk_u)
{
	if (chk_u && u >= SU)
		return -1;
	if (chk_d && d >= S) {
#if EDGE == 1
		d = S - 1;
#else
		return -1;
#endif
	}
	return base + d * sd + u * su;
}

/* that element's value */
INLINE VAL_T ld_tile(const GLOBAL DATA_T *p, idx_t base, idx_t d, idx_t u, idx_t S, idx_t SU,
		     idx_t sd, idx_t su, int chk_d, int chk_u)
{
	const idx_t o = tile_off(base, d, u, S, SU, sd, su, chk_d, chk_u);

	return o < 0 ? ZERO : ld1(p, o);
}

#if MI_RAW
/* that element's stored bits (zero bits are 0.0 in fp16 and bf16) */
INLINE LDS_T ld_tile_raw(const GLOBAL DATA_T *p, idx_t base, idx_t d, idx_t u, idx_t S,
			 idx_t SU, idx_t sd, idx_t su, int chk_d, int chk_u)
{
	const idx_t o = tile_off(base, d, u, S, SU, sd, su, chk_d, chk_u);

	return o < 0 ? (LDS_T)0 : (LDS_T)p[o];
}
#define LD_STAGE ld_tile_raw
#else
#define LD_STAGE ld_tile
#endif

/* The same share of a tile load by vectors: for each of its NLC * NLP
 * vectors, the offset of its first element from the work-item's first
 * (coalesced stride 1) and the index of its first register. */
#define TILE_VLOADS(OP, NLC, NLP, LSC, LSP, SQ)                                             \
	_Pragma("unroll") for (int a_ = 0; a_ < NLC; a_++)                                  \
		_Pragma("unroll") for (int b_ = 0; b_ < NLP; b_++)                          \
			OP((idx_t)a_ * LSC * GLVW + (idx_t)b_ * LSP * (SQ), (a_ * NLP + b_) * GLVW);

/* The loop over one operand's share of a tile load: for each of its
 * NLC * NLP * GLVW elements, (d, u) within the tile and the register. */
#define TILE_LOADS(OP, TLU, NLC, NLP, LSC, LSP)                                             \
	_Pragma("unroll") for (int a_ = 0; a_ < NLC; a_++)                                  \
		_Pragma("unroll") for (int b_ = 0; b_ < NLP; b_++)                          \
			_Pragma("unroll") for (int v_ = 0; v_ < GLVW; v_++) {               \
				int c_ = (int)(tid % LSC) * GLVW + a_ * LSC * GLVW + v_;    \
				int q_ = (int)(tid / LSC) + b_ * LSP;                       \
				int dd_ = TLU ? c_ : q_;                                    \
				int uu_ = TLU ? q_ : c_;                                    \
				int r_ = (a_ * NLP + b_) * GLVW + v_;                       \
				OP(dd_, uu_, r_);                                           \
			}

/* One result r for C's element at offset oc: C = alpha * r + beta * C, or
 * with GlobalSplitU r into this part's slice of the workspace W. */
INLINE void put_c(GLOBAL DATA_T *C, GLOBAL VAL_T *W, idx_t oc, VAL_T r, SCALAR_T alpha,
		  SCALAR_T beta, int beta0, int gsu_part, long ws_stride)
{
#if GSU > 1
	W[gsu_part * ws_stride + (long)oc] = r;
	(void)C;
	(void)alpha;
	(void)beta;
	(void)beta0;
#else
	r = SMUL(alpha, r);
	if (!beta0)
		r += SMUL(beta, ld1(C, oc));
	st1(C, oc, r);
	(void)W;
	(void)gsu_part;
	(void)ws_stride;
#endif
}

/* ---- the work-group's place, shared by the kernels ----------------------
 * GROUP_DECODE() sets g0, g1 and gz, the work-group's place along D0, D1
 * and dimension 2, from its number over the launch's grid (GROUP_LINEAR):
 * a launch takes the groups in whatever grid the device's limits allow
 * (plan_grid), numbered the same way, and args.groups has how many there
 * are along each; a spare group past the last leaves at once (all of its
 * work-items, before any barrier).  The common grid is those counts
 * themselves, read without a division; any other is decoded once per
 * work-group.  GROUP_PLACE() then
 * sets g0, g1 to the work-group's tile coordinates (after
 * WorkGroupMapping), gsu_part to its GlobalSplitU part, and moves baseP,
 * baseQ and baseC by the folded dimension-2 indices.  BOUND_START() gives
 * the work-group's chunks of the bound loop (the NB outer indices times
 * the chunks of DU, split GSU ways) as [it, it_end), with ch and the outer
 * position (ob_idx, ob_off_p, ob_off_q) at `it`; BOUND_NEXT() moves them
 * to the next chunk.  Statement macros over the kernel's own variables. */
#if WGM > 1
/* WorkGroupMapping: walk the groups in bands of WGM along dimension 1, so
 * that groups running together share rows of P and Q in cache. */
#define GROUP_MAP()                                                                         \
	do {                                                                                \
		const long n0_ = args.groups[0], n1_ = args.groups[1];                      \
		const long lin_ = g0 + g1 * n0_;                                            \
		const long first_ = lin_ / (WGM * n0_) * WGM;                               \
		const long rows_ = min((long)WGM, n1_ - first_);                            \
		const long in_band_ = lin_ % (WGM * n0_);                                   \
                                                                                            \
		g1 = first_ + in_band_ % rows_;                                             \
		g0 = in_band_ / rows_;                                                      \
	} while (0)
#else
#define GROUP_MAP() ((void)0)
#endif
#if GSU > 1
#define GSU_PART() (gsu_part = (int)(gz % GSU), gz /= GSU)
#else
#define GSU_PART() ((void)0)
#endif
#define GROUP_DECODE()                                                                      \
	do {                                                                                \
		if (NGROUPS(0) == args.groups[0] && NGROUPS(1) == args.groups[1]) {        \
			/* the common grid: the counts themselves, no division */           \
			g0 = GROUP(0);                                                      \
			g1 = GROUP(1);                                                      \
			gz = GROUP(2);                                                      \
			if (gz >= args.groups[2])                                           \
				return;                                                     \
		} else {                                                                    \
			long l_ = GROUP_LINEAR();                                           \
                                                                                            \
			if (l_ >= args.groups[0] * args.groups[1] * args.groups[2])         \
				return;                                                     \
			g0 = l_ % args.groups[0];                                           \
			l_ /= args.groups[0];                                               \
			g1 = l_ % args.groups[1];                                           \
			gz = l_ / args.groups[1];                                           \
		}                                                                           \
	} while (0)
#define GROUP_PLACE()                                                                       \
	do {                                                                                \
		GROUP_MAP();                                                                \
		GSU_PART();                                                                 \
		for (int f_ = 0; f_ < NF2; f_++) {                                          \
			const long s_ = args.size[3 + f_];                                  \
			long x_;                                                            \
                                                                                            \
			if (3 + f_ == PACK0_SLOT || 3 + f_ == PACK1_SLOT)                   \
				continue; /* part of D0 or D1 */                            \
			x_ = gz % s_;                                                       \
			gz /= s_;                                                           \
			baseP += (idx_t)(x_ * args.sp[3 + f_]);                             \
			baseQ += (idx_t)(x_ * args.sq[3 + f_]);                             \
			baseC += (idx_t)(x_ * args.sc[3 + f_]);                             \
		}                                                                           \
	} while (0)
#define BOUND_START()                                                                       \
	const long nch = (SU + DEPTHU - 1) / DEPTHU;                                        \
	long nouter = 1;                                                                    \
	for (int b_ = 0; b_ < NB; b_++)                                                     \
		nouter *= args.size[3 + NF2 + b_];                                          \
	const long niter = nouter * nch;                                                    \
	long it = (niter * gsu_part) / GSU;                                                 \
	const long it_end = (niter * (gsu_part + 1)) / GSU - (TEST_SKIP_LAST_U ? 1 : 0);   \
	long ch = it % nch;                                                                 \
	idx_t ob_off_p = 0, ob_off_q = 0;                                                   \
	long ob_idx[MAX_NB];                                                                \
	{                                                                                   \
		long o_ = it / nch;                                                         \
                                                                                            \
		for (int b_ = 0; b_ < NB; b_++) {                                           \
			const long s_ = args.size[3 + NF2 + b_];                            \
                                                                                            \
			ob_idx[b_] = o_ % s_;                                               \
			o_ /= s_;                                                           \
			ob_off_p += (idx_t)(ob_idx[b_] * args.sp[3 + NF2 + b_]);            \
			ob_off_q += (idx_t)(ob_idx[b_] * args.sq[3 + NF2 + b_]);            \
		}                                                                           \
	}
#define BOUND_NEXT()                                                                        \
	do {                                                                                \
		if (++ch == nch) {                                                          \
			ch = 0;                                                             \
			for (int b_ = 0; b_ < NB; b_++) {                                   \
				const long s_ = args.size[3 + NF2 + b_];                    \
				ob_off_p += (idx_t)args.sp[3 + NF2 + b_];                   \
				ob_off_q += (idx_t)args.sq[3 + NF2 + b_];                   \
				if (++ob_idx[b_] < s_)                                      \
					break;                                              \
				ob_off_p -= (idx_t)(s_ * args.sp[3 + NF2 + b_]);            \
				ob_off_q -= (idx_t)(s_ * args.sq[3 + NF2 + b_]);            \
				ob_idx[b_] = 0;                                             \
			}                                                                   \
		}                                                                           \
	} while (0)

#if !MI_WGMMA /* kernels/cuda/wgmma.cuh has the warpgroup kernel */
KERNEL void tcx_contract(TCX_CONTRACT_PARAMS) WG_SIZE_HINT(WG0, WG1, LSU);

KERNEL WG_SIZE_HINT(WG0, WG1, LSU) void tcx_contract(TCX_CONTRACT_PARAMS)
{
	const int t0 = (int)LID(0), t1 = (int)LID(1), ts = (int)LID(2);
	const int tid = t0 + WG0 * (t1 + WG1 * ts);
	/* D0 and D1 have S0 and S1 elements: N0 and N1, with PackFreeIndices
	 * times the packed slot's */
	const idx_t N0 = SIZE_D0, N1 = SIZE_D1, SU = SIZE_DU;
	const idx_t S0 = N0 * (PK0 ? (idx_t)args.size[PS0] : 1),
		    S1 = N1 * (PK1 ? (idx_t)args.size[PS1] : 1);
	long g0, g1, gz;
	idx_t baseP = (idx_t)args.off_p, baseQ = (idx_t)args.off_q, baseC = (idx_t)args.off_c;
	int gsu_part = 0;

	GROUP_DECODE();
	GROUP_PLACE();

	/* tile origins; ShiftPtr moves an edge tile back inside the tensor */
	const idx_t tile0_own = (idx_t)g0 * MT0, tile1_own = (idx_t)g1 * MT1;
	idx_t tile0 = tile0_own, tile1 = tile1_own;
#if EDGE == 1
	if (tile0 + MT0 > S0 && S0 >= MT0)
		tile0 = S0 - MT0;
	if (tile1 + MT1 > S1 && S1 >= MT1)
		tile1 = S1 - MT1;
#endif
	/* P at (tile0, u = 0); packed, each row's offset is its own (pko_p) */
	const idx_t pP = baseP + (PK0 ? 0 : tile0 * STRIDE_P_D0);
	const idx_t pQ = baseQ + (PK1 ? 0 : tile1 * STRIDE_Q_D1);
#if EDGE == 2
	const int chk0 = 0, chk1 = 0;
#else
	const int chk0 = tile0 + MT0 > S0, chk1 = tile1 + MT1 > S1;
#endif
	const idx_t rem0 = S0 - tile0, rem1 = S1 - tile1; /* elements left in each tile */
	const int left0 = (int)min(rem0, (idx_t)MT0), left1 = (int)min(rem1, (idx_t)MT1);

	/* the bound loop: NB outer indices x chunks of DU, split GSU ways */
	BOUND_START()

	LOCAL_POOL();
#if LSU > 1
	/* OpenCL wants local arrays at the kernel's outermost scope */
	LOCAL_ARRAY(VAL_T, red, [LSU - 1][TT1][TT0][WG0 * WG1], [TT1][TT0][WG0 * WG1],
		    LDS_OFF_RED);
#endif
#if MI_M
	/* the warp's tensor-core tiles; its origin in the macro tile */
	const int lane = tid % 32, warp = tid / 32;
	const int wm = (warp % MI_WARPS0) * MI_WT0, wn = (warp / MI_WARPS0) * MI_WT1;
	MI_ACC_T mi_acc[MI_FM][MI_FN][MI_CREGS];
#if TCX_COMPLEX
	MI_ACC_T mi_acc_im[MI_FM][MI_FN][MI_CREGS]; /* and the imaginary parts */
#endif

#pragma unroll
	for (int i = 0; i < MI_FM; i++)
#pragma unroll
		for (int j = 0; j < MI_FN; j++)
#pragma unroll
			for (int e = 0; e < MI_CREGS; e++) {
				mi_acc[i][j][e] = 0;
#if TCX_COMPLEX
				mi_acc_im[i][j][e] = 0;
#endif
			}
#else
	VEC_T acc[TT1][NV0];
#pragma unroll
	for (int j = 0; j < TT1; j++)
#pragma unroll
		for (int i = 0; i < NV0; i++)
			acc[j][i] = BCAST(ZERO);
#endif

#if USE_LDS
	LOCAL_ARRAY(LDS_T, lds_p, [NBUF][DEPTHU][LDS_P_ROW], [DEPTHU][LDS_P_ROW], 0);
	LOCAL_ARRAY(LDS_T, lds_q, [NBUF][DEPTHU][LDS_Q_ROW], [DEPTHU][LDS_Q_ROW], LDS_OFF_Q);
#if MI_M
	/* aligned, so that a vector's worth can move to local memory at once */
	alignas(16) LDS_T rp[NLC_P * NLP_P * GLVW];
	alignas(16) LDS_T rq[NLC_Q * NLP_Q * GLVW];
#else
	VAL_T rp[NLC_P * NLP_P * GLVW], rq[NLC_Q * NLP_Q * GLVW];
#endif
	int buf = 0;
	/* the work-item's first element of a tile load, and whether the
	 * operand's tile reads can be whole aligned vectors: the tile is
	 * inside the tensor along the free index, and every vector starts on a
	 * multiple of its size (the base, the perpendicular stride and the
	 * outer bound strides are multiples of GLVW; DEPTHU is too) */
	const idx_t tbP = pP + (tid % LSC_P) * GLVW * SC_P + (tid / LSC_P) * SQ_P;
	const idx_t tbQ = pQ + (tid % LSC_Q) * GLVW * SC_Q + (tid / LSC_Q) * SQ_Q;
	int vec_p = VEC_READ_P && !chk0 && SQ_P % GLVW == 0 &&
		    (size_t)(P + tbP) % (GLVW * sizeof(DATA_T)) == 0;
	int vec_q = VEC_READ_Q && !chk1 && SQ_Q % GLVW == 0 &&
		    (size_t)(Q + tbQ) % (GLVW * sizeof(DATA_T)) == 0;

	for (int b = 0; b < NB; b++) {
		vec_p = vec_p && args.sp[3 + NF2 + b] % GLVW == 0;
		vec_q = vec_q && args.sq[3 + NF2 + b] % GLVW == 0;
	}
#if PK0 || PK1
	/* PackFreeIndices: the offset of each row this work-item loads (the
	 * same in every chunk), worked out once; -1 past the tensor.  A
	 * vector's GLVW elements share a row (loads along DU), or are
	 * consecutive in one run of the packed index (along it: the run's
	 * length N and the vector's first row T0 + c_ multiples of GLVW), so
	 * one division a vector; otherwise one an element. */
	idx_t pko_p[NLC_P * NLP_P * GLVW], pko_q[NLC_Q * NLP_Q * GLVW];
#define PKO_ROWS(O, TLU, NLC, NLP, LSC, LSP, T0, S, N, SD, SOUT)                            \
	_Pragma("unroll") for (int a_ = 0; a_ < NLC; a_++)                                  \
		_Pragma("unroll") for (int b_ = 0; b_ < NLP; b_++) {                        \
			const int c_ = (int)(tid % LSC) * GLVW + a_ * LSC * GLVW;           \
			const idx_t d_ = (T0) + (TLU ? c_ : (int)(tid / LSC) + b_ * LSP);   \
			const int r_ = (a_ * NLP + b_) * GLVW;                              \
			const int run_ = !TLU || ((N) % GLVW == 0 && (T0) % GLVW == 0);     \
                                                                                            \
			_Pragma("unroll") for (int v_ = 0; v_ < GLVW; v_++) {               \
				const idx_t dv_ = d_ + (TLU ? v_ : 0);                      \
                                                                                            \
				if (v_ > 0 && run_)                                         \
					O[r_ + v_] = O[r_] < 0 ? -1                         \
							       : O[r_] + (TLU ? v_ * (SD) : 0); \
				else                                                        \
					O[r_ + v_] = dv_ < (S) ? pk_row(dv_, 1, N, SD, SOUT) : -1; \
			}                                                                   \
		}
	if (PK0)
		PKO_ROWS(pko_p, TLU_P, NLC_P, NLP_P, LSC_P, LSP_P, tile0, S0, N0, STRIDE_P_D0,
			 args.sp[PS0])
	if (PK1)
		PKO_ROWS(pko_q, TLU_Q, NLC_Q, NLP_Q, LSC_Q, LSP_Q, tile1, S1, N1, STRIDE_Q_D1,
			 args.sq[PS1])
	/* packed vector reads: every vector's row aligned too */
#define PKO_ALIGNED(V, O, NLC, NLP)                                                         \
	_Pragma("unroll") for (int r_ = 0; r_ < NLC * NLP * GLVW; r_ += GLVW) V =           \
		V && O[r_] % GLVW == 0;
	if (PK0 && VEC_READ_P)
		PKO_ALIGNED(vec_p, pko_p, NLC_P, NLP_P)
	if (PK1 && VEC_READ_Q)
		PKO_ALIGNED(vec_q, pko_q, NLC_Q, NLP_Q)
#endif

	/* global -> registers for the chunk at (ob offsets, ch) */
#if PK0
#define LOAD_P(dd, uu, r)                                                                   \
	rp[r] = CONJ_IF(LD_STAGE(P, cP + pko_p[r], 0, uu, pko_p[r] < 0 ? 0 : 1, left_u, 0,  \
				 STRIDE_P_DU, 1, chk_u),                                    \
			CONJ_P)
#else
#define LOAD_P(dd, uu, r)                                                                   \
	rp[r] = CONJ_IF(LD_STAGE(P, cP, dd, uu, left0, left_u, STRIDE_P_D0, STRIDE_P_DU, ck0,    \
				 chk_u),                                                    \
			CONJ_P)
#endif
#if PK1
#define LOAD_Q(dd, uu, r)                                                                   \
	rq[r] = CONJ_IF(LD_STAGE(Q, cQ + pko_q[r], 0, uu, pko_q[r] < 0 ? 0 : 1, left_u, 0,  \
				 STRIDE_Q_DU, 1, chk_u),                                    \
			CONJ_Q)
#else
#define LOAD_Q(dd, uu, r)                                                                   \
	rq[r] = CONJ_IF(LD_STAGE(Q, cQ, dd, uu, left1, left_u, STRIDE_Q_D1, STRIDE_Q_DU, ck1,    \
				 chk_u),                                                    \
			CONJ_Q)
#endif
#define STORE_P(dd, uu, r) (lds_p[buf][uu][dd] = rp[r])
#define STORE_Q(dd, uu, r) (lds_q[buf][uu][dd] = rq[r])
	/* An interior chunk (no bounds to check) of an aligned operand reads
	 * whole vectors from gP/gQ: the work-item's first element of the chunk. */
#if MI_M
/* CUDA: the vector of GLVW staged elements, straight into the registers */
#define STAGE_V tcx_vec<LDS_T, GLVW>
#define VLOAD(R, g, o, r) (*(STAGE_V *)&R[r] = *(const STAGE_V *)((g) + (o)))
#else
#define VLOAD(R, g, o, r)                                                                   \
	do {                                                                                \
		const VEC_T v_ = *(const GLOBAL VEC_T *)((g) + (o));                        \
		_Pragma("unroll") for (int k_ = 0; k_ < GLVW; k_++) R[(r) + k_] = LANE(v_, k_);  \
	} while (0)
#endif
/* a packed operand's vectors, each from its row's offset O[r] (the chunk's
 * offset BASE, the vector's place along DU at stride SU_) */
#define TILE_VLOADS_PK(R, G, BASE, O, TLU, NLC, NLP, LSC, LSP, SU_)                         \
	_Pragma("unroll") for (int a_ = 0; a_ < NLC; a_++)                                  \
		_Pragma("unroll") for (int b_ = 0; b_ < NLP; b_++) {                        \
			const int c_ = (int)(tid % LSC) * GLVW + a_ * LSC * GLVW;           \
			const int q_ = (int)(tid / LSC) + b_ * LSP;                         \
			const int r_ = (a_ * NLP + b_) * GLVW;                              \
                                                                                            \
			VLOAD(R, G, (BASE) + O[r_] + (idx_t)(TLU ? q_ : c_) * (SU_), r_);   \
		}
#if PK0
#define VLOADS_PK_P()                                                                       \
	TILE_VLOADS_PK(rp, P, cP, pko_p, TLU_P, NLC_P, NLP_P, LSC_P, LSP_P, STRIDE_P_DU)
#else
#define VLOADS_PK_P() ((void)0)
#endif
#if PK1
#define VLOADS_PK_Q()                                                                       \
	TILE_VLOADS_PK(rq, Q, cQ, pko_q, TLU_Q, NLC_Q, NLP_Q, LSC_Q, LSP_Q, STRIDE_Q_DU)
#else
#define VLOADS_PK_Q() ((void)0)
#endif
#define VLOAD_P(o, r) VLOAD(rp, gP, o, r)
#define VLOAD_Q(o, r) VLOAD(rq, gQ, o, r)
/* global -> registers for the chunk at (ob offsets, ch).  FP and FQ
 * (literals) say P's and Q's tiles lie inside their tensors, every chunk
 * whole and every vector aligned: no bounds to check, whole vectors. */
#define GLOBAL_READ(FP, FQ)                                                                 \
	do {                                                                                \
		const idx_t u0 = (idx_t)ch * DEPTHU;                                        \
		const int chk_u = !(FP) && !(FQ) && LOOP_TAIL && u0 + DEPTHU > SU;          \
		const int ck0 = !(FP) && chk0, ck1 = !(FQ) && chk1;                         \
		const idx_t cP = pP + ob_off_p + u0 * STRIDE_P_DU;                          \
		const idx_t cQ = pQ + ob_off_q + u0 * STRIDE_Q_DU;                          \
		const int left_u = (int)min((idx_t)DEPTHU, SU - u0);                        \
		if ((FP) && VEC_READ_P && PK0) {                                            \
			VLOADS_PK_P();                                                      \
		} else if ((FP) && VEC_READ_P) {                                            \
			const GLOBAL DATA_T *gP = P + (tbP + ob_off_p + u0 * STRIDE_P_DU);  \
			TILE_VLOADS(VLOAD_P, NLC_P, NLP_P, LSC_P, LSP_P, SQ_P)              \
		} else {                                                                    \
			TILE_LOADS(LOAD_P, TLU_P, NLC_P, NLP_P, LSC_P, LSP_P)               \
		}                                                                           \
		if ((FQ) && VEC_READ_Q && PK1) {                                            \
			VLOADS_PK_Q();                                                      \
		} else if ((FQ) && VEC_READ_Q) {                                            \
			const GLOBAL DATA_T *gQ = Q + (tbQ + ob_off_q + u0 * STRIDE_Q_DU);  \
			TILE_VLOADS(VLOAD_Q, NLC_Q, NLP_Q, LSC_Q, LSP_Q, SQ_Q)              \
		} else {                                                                    \
			TILE_LOADS(LOAD_Q, TLU_Q, NLC_Q, NLP_Q, LSC_Q, LSP_Q)               \
		}                                                                           \
		(void)chk_u;                                                                \
		(void)ck0;                                                                  \
		(void)ck1;                                                                  \
		(void)cP;                                                                   \
		(void)cQ;                                                                   \
		(void)left_u;                                                               \
	} while (0)
#if MI_M
	/* A share loaded along the free index is GLVW consecutive elements of
	 * a local-memory row too: one vector store when the rows keep vectors
	 * aligned (the generator pads them so). */
#define LW_VEC(OP, TLU, NLC, NLP, LSC, LSP, ROW)                                            \
	if (TLU && GLVW > 1 && (ROW) % GLVW == 0) {                                         \
		_Pragma("unroll") for (int a_ = 0; a_ < NLC; a_++)                          \
			_Pragma("unroll") for (int b_ = 0; b_ < NLP; b_++)                  \
				OP((int)(tid % LSC) * GLVW + a_ * LSC * GLVW,               \
				   (int)(tid / LSC) + b_ * LSP, (a_ * NLP + b_) * GLVW);    \
	} else {                                                                            \
		TILE_LOADS(OP##1, TLU, NLC, NLP, LSC, LSP)                                  \
	}
#define STORE_PV(dd, uu, r) (*(STAGE_V *)&lds_p[buf][uu][dd] = *(STAGE_V *)&rp[r])
#define STORE_QV(dd, uu, r) (*(STAGE_V *)&lds_q[buf][uu][dd] = *(STAGE_V *)&rq[r])
#define STORE_PV1 STORE_P
#define STORE_QV1 STORE_Q
#define LOCAL_WRITE()                                                                       \
	do {                                                                                \
		LW_VEC(STORE_PV, TLU_P, NLC_P, NLP_P, LSC_P, LSP_P, LDS_P_ROW)              \
		LW_VEC(STORE_QV, TLU_Q, NLC_Q, NLP_Q, LSC_Q, LSP_Q, LDS_Q_ROW)              \
	} while (0)
#else
#define LOCAL_WRITE()                                                                       \
	do {                                                                                \
		TILE_LOADS(STORE_P, TLU_P, NLC_P, NLP_P, LSC_P, LSP_P)                      \
		TILE_LOADS(STORE_Q, TLU_Q, NLC_Q, NLP_Q, LSC_Q, LSP_Q)                      \
	} while (0)
#endif
#define ADVANCE() BOUND_NEXT()

#if VW > 1 && !TCX_COMPLEX
#define READ_A(dst, uu)                                                                     \
	_Pragma("unroll") for (int i = 0; i < NV0; i++)                                     \
		dst[i] = TCX_CAT(vload, VW)(0, &lds_p[buf][uu][D0_OF(i, t0)]);
#else
#define READ_A(dst, uu)                                                                     \
	_Pragma("unroll") for (int i = 0; i < NV0; i++)                                     \
		dst[i] = lds_p[buf][uu][D0_OF(i, t0)];
#endif
#define READ_B(dst, uu)                                                                     \
	_Pragma("unroll") for (int j = 0; j < TT1; j++)                                     \
		dst[j] = lds_q[buf][uu][D1_OF(j, t1)];
#if TCX_COMPLEX
#define MAC_TILE(a, b)                                                                      \
	_Pragma("unroll") for (int j = 0; j < TT1; j++)                                     \
		_Pragma("unroll") for (int i = 0; i < NV0; i++) MAC(acc[j][i], a[i], b[j]);
#else
#define MAC_TILE(a, b)                                                                      \
	_Pragma("unroll") for (int j = 0; j < TT1; j++)                                     \
		_Pragma("unroll") for (int i = 0; i < NV0; i++)                             \
			acc[j][i] = FMA(a[i], BCAST(b[j]), acc[j][i]);
#endif
#if MI_M && !MI_RAW
	/* The tile element a lane reads into register r of an A fragment (of
	 * warp tile i) and of a B fragment (j), k-step kk, in mma.sync's
	 * layout of the tf32 and fp64 shapes: A's at (m = g + 8 (r % h), k =
	 * q + 4 (r / h)), h = MI_M / 8 the fragment's 8-row halves (one on
	 * m8n8k4), B's at (k = q + 4 r, n = g); g = lane / 4, q = lane % 4 (g_
	 * and q_ where it is used). */
#define MI_ROWS_A (MI_M / 8)
#define MI_A_EL(kk, i, r)                                                                   \
	lds_p[buf][(kk) + q_ + 4 * ((r) / MI_ROWS_A)][wm + (i) * MI_M + g_ + 8 * ((r) % MI_ROWS_A)]
#define MI_B_EL(kk, j, r) lds_q[buf][(kk) + q_ + 4 * (r)][wn + (j) * MI_N + g_]
#endif
#if MI_M && MI_RAW
	/* the chunk in lds[buf] on the tensor cores, MI_K bound elements a
	 * step: A fragments are 16 rows of D0 (two 8-wide tiles by 2 k-halves),
	 * B fragments 8 columns of D1, both read k-major by ldmatrix .trans;
	 * lane 8 i + r names row r of tile i. */
#define COMPUTE_CHUNK()                                                                     \
	do {                                                                                \
		const int ti_ = lane / 8, tr_ = lane % 8;                                   \
		_Pragma("unroll") for (int kk = 0; kk < DEPTHU; kk += MI_K) {               \
			uint fa[MI_FM][MI_AREGS], fb[MI_FN][MI_BREGS];                  \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				tcx_ldsm_x4_t(fa[i], &lds_p[buf][kk + tr_ + 8 * (ti_ / 2)]   \
							   [wm + i * MI_M + 8 * (ti_ % 2)]);  \
			_Pragma("unroll") for (int j = 0; j + 1 < MI_FN; j += 2)            \
				tcx_ldsm_x4_t(fb[j], &lds_q[buf][kk + tr_ + 8 * (ti_ % 2)]   \
							   [wn + (j + ti_ / 2) * MI_N]);      \
			if (MI_FN % 2)                                                      \
				tcx_ldsm_x2_t(fb[MI_FN - 1],                                \
					      &lds_q[buf][kk + tr_ + 8 * (ti_ % 2)]         \
						    [wn + (MI_FN - 1) * MI_N]);             \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int j = 0; j < MI_FN; j++)           \
					tcx_mma(mi_acc[i][j], fa[i], fb[j]);                \
		}                                                                           \
	} while (0)
#elif MI_M && defined(TCX_TYPE_D)
	/* fp64 on the fp64 tensor cores: fragments element by element from
	 * the tiles as they are */
#define COMPUTE_CHUNK()                                                                     \
	do {                                                                                \
		const int g_ = lane / 4, q_ = lane % 4;                                     \
		_Pragma("unroll") for (int kk = 0; kk < DEPTHU; kk += MI_K) {               \
			double fa[MI_FM][MI_AREGS], fb[MI_FN][MI_BREGS];                    \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int r = 0; r < MI_AREGS; r++) fa[i][r] = \
					MI_A_EL(kk, i, r);                                  \
			_Pragma("unroll") for (int j = 0; j < MI_FN; j++)                   \
				_Pragma("unroll") for (int r = 0; r < MI_BREGS; r++) fb[j][r] = \
					MI_B_EL(kk, j, r);                                  \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int j = 0; j < MI_FN; j++)           \
					tcx_mma(mi_acc[i][j], fa[i], fb[j]);                \
		}                                                                           \
	} while (0)
#elif MI_M && defined(TCX_TYPE_Z)
	/* complex fp64 on the fp64 tensor cores: (ar + i ai)(br + i bi) as four
	 * real products, the fragments as fp64's (conjugation happened when
	 * the tiles were loaded) */
#define COMPUTE_CHUNK()                                                                     \
	do {                                                                                \
		const int g_ = lane / 4, q_ = lane % 4;                                     \
		_Pragma("unroll") for (int kk = 0; kk < DEPTHU; kk += MI_K) {               \
			double ar[MI_FM][MI_AREGS], ai[MI_FM][MI_AREGS], an[MI_FM][MI_AREGS];   \
			double br[MI_FN][MI_BREGS], bi[MI_FN][MI_BREGS];                    \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int r = 0; r < MI_AREGS; r++) {      \
					const VAL_T v_ = MI_A_EL(kk, i, r);                 \
					ar[i][r] = v_.x;                                    \
					ai[i][r] = v_.y;                                    \
					an[i][r] = -v_.y;                                   \
				}                                                           \
			_Pragma("unroll") for (int j = 0; j < MI_FN; j++)                   \
				_Pragma("unroll") for (int r = 0; r < MI_BREGS; r++) {      \
					const VAL_T v_ = MI_B_EL(kk, j, r);                 \
					br[j][r] = v_.x;                                    \
					bi[j][r] = v_.y;                                    \
				}                                                           \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int j = 0; j < MI_FN; j++) {         \
					tcx_mma(mi_acc[i][j], ar[i], br[j]);                \
					tcx_mma(mi_acc[i][j], an[i], bi[j]);                \
					tcx_mma(mi_acc_im[i][j], ar[i], bi[j]);             \
					tcx_mma(mi_acc_im[i][j], ai[i], br[j]);             \
				}                                                           \
		}                                                                           \
	} while (0)
#elif MI_M && TF32X3
	/* TF32x3: each fp32 element x of the tiles is hi + lo, hi rounded to
	 * tf32 by two integer instructions and lo the rest, which the tensor
	 * cores truncate (|x - hi - lo| <= 2^-21 |x|); the product is
	 * lo_a hi_b + hi_a lo_b + hi_a hi_b, small terms first, lo_a lo_b
	 * dropped: fp32's accuracy on the tensor cores of GPUs without
	 * warpgroups (sm_80, sm_86, sm_89).  Reading the fragments element by
	 * element and splitting them costs about what the fp32 FMAs do: on an
	 * H200 it ran short sums no faster than the SIMT kernel
	 * (bench/results/2026-11-26-h200-short-sum-bound.md). */
#define MI_SPLIT(x, hi, lo)                                                                 \
	do {                                                                                \
		const float x_ = (x);                                                       \
		const uint h_ = (as_uint(x_) + 0x1000u) & 0xffffe000u;                      \
                                                                                            \
		(hi) = h_;                                                                  \
		(lo) = as_uint(x_ - as_float(h_));                                          \
	} while (0)
#define COMPUTE_CHUNK()                                                                     \
	do {                                                                                \
		const int g_ = lane / 4, q_ = lane % 4;                                     \
		_Pragma("unroll") for (int kk = 0; kk < DEPTHU; kk += MI_K) {               \
			uint fa[MI_FM][MI_AREGS], fb[MI_FN][MI_BREGS];                      \
			uint la[MI_FM][MI_AREGS], lb[MI_FN][MI_BREGS];                      \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int r = 0; r < 4; r++)               \
					MI_SPLIT(MI_A_EL(kk, i, r), fa[i][r], la[i][r]);    \
			_Pragma("unroll") for (int j = 0; j < MI_FN; j++)                   \
				_Pragma("unroll") for (int r = 0; r < 2; r++)               \
					MI_SPLIT(MI_B_EL(kk, j, r), fb[j][r], lb[j][r]);    \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int j = 0; j < MI_FN; j++) {         \
					tcx_mma(mi_acc[i][j], la[i], fb[j]);                \
					tcx_mma(mi_acc[i][j], fa[i], lb[j]);                \
					tcx_mma(mi_acc[i][j], fa[i], fb[j]);                \
				}                                                           \
		}                                                                           \
	} while (0)
#elif MI_M
	/* tf32: fragments element by element from the fp32 tiles, rounded */
#define COMPUTE_CHUNK()                                                                     \
	do {                                                                                \
		const int g_ = lane / 4, q_ = lane % 4;                                     \
		_Pragma("unroll") for (int kk = 0; kk < DEPTHU; kk += MI_K) {               \
			uint fa[MI_FM][MI_AREGS], fb[MI_FN][MI_BREGS];                      \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int r = 0; r < 4; r++) fa[i][r] =    \
					tcx_tf32(MI_A_EL(kk, i, r));                        \
			_Pragma("unroll") for (int j = 0; j < MI_FN; j++)                   \
				_Pragma("unroll") for (int r = 0; r < 2; r++) fb[j][r] =    \
					tcx_tf32(MI_B_EL(kk, j, r));                        \
			_Pragma("unroll") for (int i = 0; i < MI_FM; i++)                   \
				_Pragma("unroll") for (int j = 0; j < MI_FN; j++)           \
					tcx_mma(mi_acc[i][j], fa[i], fb[j]);                \
		}                                                                           \
	} while (0)
#else
	/* the chunk in lds[buf], this sub-group's share of it; with
	 * PrefetchLocalRead, step u + 1's operands are read during step u */
#define COMPUTE_CHUNK()                                                                     \
	do {                                                                                \
		VEC_T a[NV0], an[NV0];                                                      \
		VAL_T b[TT1], bn[TT1];                                                      \
		const int ub = ts * DU_PER_LSU;                                             \
                                                                                            \
		if (PLR) {                                                                  \
			READ_A(a, ub);                                                      \
			READ_B(b, ub);                                                      \
		}                                                                           \
		_Pragma("unroll") for (int u = 0; u < DU_PER_LSU; u++) {                    \
			if (!PLR) {                                                         \
				READ_A(a, ub + u);                                          \
				READ_B(b, ub + u);                                          \
			} else if (u + 1 < DU_PER_LSU) {                                    \
				READ_A(an, ub + u + 1);                                     \
				READ_B(bn, ub + u + 1);                                     \
			}                                                                   \
			MAC_TILE(a, b)                                                      \
			if (PLR) {                                                          \
				_Pragma("unroll") for (int i = 0; i < NV0; i++) a[i] = an[i];       \
				_Pragma("unroll") for (int j = 0; j < TT1; j++) b[j] = bn[j];       \
			}                                                                   \
		}                                                                           \
	} while (0)
#endif
	/* Every chunk: with PrefetchGlobalRead, the next chunk's global reads
	 * are in flight while this one computes, and go to the other buffer. */
#define CHUNK_LOOP(FP, FQ)                                                                  \
	do {                                                                                \
		if (it < it_end) {                                                          \
			GLOBAL_READ(FP, FQ);                                                \
			LOCAL_WRITE();                                                      \
			BARRIER();                                                          \
		}                                                                           \
		for (; it < it_end; it++) {                                                 \
			const int last = it + 1 >= it_end;                                  \
                                                                                            \
			if (!last) {                                                        \
				ADVANCE();                                                  \
				if (PGR)                                                    \
					GLOBAL_READ(FP, FQ);                                \
			}                                                                   \
			COMPUTE_CHUNK();                                                    \
			if (!last) {                                                        \
				if (PGR) {                                                  \
					buf ^= 1; /* nobody reads it since the last barrier */ \
				} else {                                                    \
					BARRIER(); /* all done with lds before it changes */ \
					GLOBAL_READ(FP, FQ);                                \
				}                                                           \
				LOCAL_WRITE();                                              \
				BARRIER();                                                  \
			}                                                                   \
		}                                                                           \
	} while (0)

#if (VEC_READ_P || VEC_READ_Q) && SPLIT_LOOP
	/* Two instances of the loop: every interior, aligned work-group runs
	 * the one without bounds checks, reading whole vectors.  One loop with
	 * both kinds of read holds the registers of both.  Measured for a
	 * 128x128 single-precision tile on sm_90 (ptxas -v): one loop 124
	 * registers; any branch around it, these two loops included, 150-160
	 * (one work-group per SM); the two loops with Occupancy=2 (launch
	 * bounds for two work-groups per SM) 128 registers, no spills. */
	{
		const int whole_u = !LOOP_TAIL || SU % DEPTHU == 0;
		const int fp = whole_u && !chk0 && (VEC_READ_P ? vec_p : 1);
		const int fq = whole_u && !chk1 && (VEC_READ_Q ? vec_q : 1);

		if (fp && fq)
			CHUNK_LOOP(1, 1);
#if SPLIT_LOOP_P && VEC_READ_P
		/* a third instance where the problem has tiles that cross D1's
		 * end (a short free index of Q): P still whole vectors */
		else if (fp)
			CHUNK_LOOP(1, 0);
#endif
		else
			CHUNK_LOOP(0, 0);
	}
#else
	CHUNK_LOOP(0, 0);
#endif
#else /* !USE_LDS: each work-item reads its operands straight from global memory */
	for (; it < it_end; it++) {
		const idx_t u0 = (idx_t)ch * DEPTHU;
		const int ulen = (int)min((idx_t)DEPTHU, SU - u0);
		const idx_t offp = pP + ob_off_p + u0 * STRIDE_P_DU;
		const idx_t offq = pQ + ob_off_q + u0 * STRIDE_Q_DU;

		for (int u = ts; u < ulen; u += LSU) {
			VEC_T a[NV0];
			VAL_T b[TT1];

#pragma unroll
			for (int i = 0; i < NV0; i++) {
				const int d = D0_OF(i, t0);
#if VW > 1 && !TCX_COMPLEX
				if (UNIT_P_D0 && (!chk0 || d + VW <= rem0)) {
					a[i] = ldv(P, offp + u * STRIDE_P_DU + d);
				} else {
#pragma unroll
					for (int v = 0; v < VW; v++)
						LANE(a[i], v) = ld_tile(P, offp, d + v, u, rem0, ulen,
									STRIDE_P_D0, STRIDE_P_DU, chk0, 0);
				}
#else
				a[i] = CONJ_IF(ld_tile(P, offp, d, u, rem0, ulen, STRIDE_P_D0,
						       STRIDE_P_DU, chk0, 0),
					       CONJ_P);
#endif
			}
#pragma unroll
			for (int j = 0; j < TT1; j++)
				b[j] = CONJ_IF(ld_tile(Q, offq, D1_OF(j, t1), u, rem1, ulen,
						       STRIDE_Q_D1, STRIDE_Q_DU, chk1, 0),
					       CONJ_Q);
#pragma unroll
			for (int j = 0; j < TT1; j++)
#pragma unroll
				for (int i = 0; i < NV0; i++) {
#if TCX_COMPLEX
					MAC(acc[j][i], a[i], b[j]);
#else
					acc[j][i] = FMA(a[i], BCAST(b[j]), acc[j][i]);
#endif
				}
		}
		BOUND_NEXT();
	}
#endif /* USE_LDS */

#if LSU > 1
	/* LocalSplitU: the sub-groups' partial sums meet in local memory */
	{
		const int w = t0 + WG0 * t1;

		BARRIER();
		if (ts > 0)
#pragma unroll
			for (int j = 0; j < TT1; j++)
#pragma unroll
				for (int i = 0; i < NV0; i++)
#pragma unroll
					for (int v = 0; v < (TCX_COMPLEX ? 1 : VW); v++)
						red[ts - 1][j][i * (TCX_COMPLEX ? 1 : VW) + v][w] =
							LANE(acc[j][i], v);
		BARRIER();
		if (ts > 0)
			return;
		for (int s = 0; s < LSU - 1; s++)
#pragma unroll
			for (int j = 0; j < TT1; j++)
#pragma unroll
				for (int i = 0; i < NV0; i++)
#pragma unroll
					for (int v = 0; v < (TCX_COMPLEX ? 1 : VW); v++)
						LANE(acc[j][i], v) +=
							red[s][j][i * (TCX_COMPLEX ? 1 : VW) + v][w];
	}
#endif

	/* write out: C = alpha * acc + beta * C, or the partial sum to W */
	const int beta0 = IS_ZERO(beta);

#if MI_M
	/* tensor-core tile element e sits at (g + 8 (e / 2), 2 q + e % 2),
	 * e < 4 on 16x8 tiles, e < 2 on 8x8.  The lane's MI_FM * MI_ROWS rows
	 * and MI_FN * 2 columns of C are worked out once (a division each when
	 * packed), -1 outside the tensor or the work-group's own tile, so that
	 * each element is an addition and a store. */
#define MI_ROWS (MI_CREGS / 2)
	idx_t mo0[MI_FM][MI_ROWS], mo1[MI_FN][2];

#pragma unroll
	for (int i = 0; i < MI_FM; i++)
#pragma unroll
		for (int h = 0; h < MI_ROWS; h++) {
			const idx_t d0 = tile0 + wm + i * MI_M + lane / 4 + 8 * h;

			mo0[i][h] = EDGE != 2 && (d0 >= S0 || d0 < tile0_own)
					    ? -1
					    : pk_row(d0, PK0, N0, STRIDE_C_D0, args.sc[PS0]);
		}
#pragma unroll
	for (int j = 0; j < MI_FN; j++)
#pragma unroll
		for (int c = 0; c < 2; c++) {
			const idx_t d1 = tile1 + wn + j * MI_N + 2 * (lane % 4) + c;

			mo1[j][c] = EDGE != 2 && (d1 >= S1 || d1 < tile1_own)
					    ? -1
					    : baseC + pk_row(d1, PK1, N1, STRIDE_C_D1, args.sc[PS1]);
		}
#pragma unroll
	for (int i = 0; i < MI_FM; i++)
#pragma unroll
		for (int j = 0; j < MI_FN; j++)
#pragma unroll
			for (int e = 0; e < MI_CREGS; e++) {
				const idx_t o0 = mo0[i][e / 2], o1 = mo1[j][e % 2];

				if (o0 < 0 || o1 < 0)
					continue;
				put_c(C, W, o0 + o1,
#if TCX_COMPLEX
				      MAKE2(VAL_T, mi_acc[i][j][e], mi_acc_im[i][j][e]),
#else
				      mi_acc[i][j][e],
#endif
				      alpha, beta, beta0, gsu_part, args.ws_stride);
			}
#else
	/* C's offsets along D0 of the work-item's vectors, worked out once (a
	 * division each when packed); along D1 one a run of VW1 rows.  A
	 * vector's lanes, and a run's rows, are consecutive along D0's (D1's)
	 * own index, never across the packed one: packed, the generator keeps
	 * N0 a multiple of VW and N1 of VW1. */
	idx_t oc0[NV0], oc1 = 0;

#pragma unroll
	for (int i = 0; i < NV0; i++)
		oc0[i] = pk_row(tile0 + D0_OF(i, t0), PK0, N0, STRIDE_C_D0, args.sc[PS0]);
#if VEC_WRITE_C
	/* A tile inside C and where it belongs, whose vectors all start on a
	 * multiple of VW (C's base; D1's stride and the packed outer strides
	 * multiples of VW: D0's own offsets are, by the tile's and the packing's
	 * size rules), stores them with nothing checked: an address, VW
	 * products and a store each, where the checked path below takes four
	 * times that.  beta0 is a literal in each instance, so that the one for
	 * beta = 0 reads nothing. */
#define STORE_C_FAST(B0)                                                                    \
	_Pragma("unroll") for (int j = 0; j < TT1; j++) {                                   \
		if (j % VW1 == 0)                                                           \
			oc1 = baseC + pk_row(tile1 + D1_OF(j, t1), PK1, N1, STRIDE_C_D1,    \
					     args.sc[PS1]);                                 \
		else                                                                        \
			oc1 += STRIDE_C_D1;                                                 \
		_Pragma("unroll") for (int i = 0; i < NV0; i++) {                           \
			GLOBAL VEC_T *cv_ = (GLOBAL VEC_T *)(C + (oc1 + oc0[i]));           \
			VEC_T r_;                                                           \
                                                                                            \
			_Pragma("unroll") for (int v = 0; v < VW; v++)                      \
				LANE(r_, v) = SMUL(alpha, LANE(acc[j][i], v));              \
			if (!(B0)) {                                                        \
				const VEC_T old_ = *cv_;                                    \
                                                                                            \
				_Pragma("unroll") for (int v = 0; v < VW; v++)              \
					LANE(r_, v) += SMUL(beta, LANE(old_, v));           \
			}                                                                   \
			*cv_ = r_;                                                          \
		}                                                                           \
	}
	if (!chk0 && !chk1 && tile0 == tile0_own && tile1 == tile1_own &&
	    (size_t)(C + baseC) % (VW * sizeof(DATA_T)) == 0 && (idx_t)STRIDE_C_D1 % VW == 0 &&
	    (!PK0 || args.sc[PS0] % VW == 0) && (!PK1 || args.sc[PS1] % VW == 0)) {
		if (beta0)
			STORE_C_FAST(1)
		else
			STORE_C_FAST(0)
		return;
	}
#endif
#pragma unroll
	for (int j = 0; j < TT1; j++) {
		const idx_t d1 = tile1 + D1_OF(j, t1);

		if (j % VW1 == 0)
			oc1 = baseC + pk_row(d1, PK1, N1, STRIDE_C_D1, args.sc[PS1]);
		else
			oc1 += STRIDE_C_D1;
#if EDGE != 2
		if (d1 >= S1 || d1 < tile1_own)
			continue;
#endif
#pragma unroll
		for (int i = 0; i < NV0; i++) {
#if VEC_WRITE_C
			/* the work-item's VW lanes as one aligned vector store when
			 * they are all inside C and in this work-group's own tile */
			{
				const idx_t d0v = tile0 + D0_OF(i, t0);
				const idx_t ocv = oc1 + oc0[i];

				if (d0v + VW <= S0 && d0v >= tile0_own &&
				    (size_t)(C + ocv) % (VW * sizeof(DATA_T)) == 0) {
					VEC_T r;

#pragma unroll
					for (int v = 0; v < VW; v++)
						LANE(r, v) = SMUL(alpha, LANE(acc[j][i], v));
					if (!beta0) {
						const VEC_T old = *(const GLOBAL VEC_T *)(C + ocv);

#pragma unroll
						for (int v = 0; v < VW; v++)
							LANE(r, v) += SMUL(beta, LANE(old, v));
					}
					*(GLOBAL VEC_T *)(C + ocv) = r;
					continue;
				}
			}
#endif
#pragma unroll
			for (int v = 0; v < (TCX_COMPLEX ? 1 : VW); v++) {
				const idx_t d0 = tile0 + D0_OF(i, t0) + v;
				idx_t oc;
				VAL_T r = LANE(acc[j][i], v);

#if EDGE != 2
				if (d0 >= S0 || d0 < tile0_own)
					continue;
#endif
				oc = oc1 + oc0[i] + v * STRIDE_C_D0;
				put_c(C, W, oc, r, alpha, beta, beta0, gsu_part, args.ws_stride);
			}
		}
	}
#endif /* MI_M */
}

#endif /* !MI_WGMMA */

/* GlobalSplitU: C = alpha * (sum of the GSU partial results) + beta * C,
 * one work-item per element of C (D0, D1 and the folded slots), in
 * work-groups of one dimension numbered as GROUP_LINEAR does, over any
 * grid. */
KERNEL void tcx_gsu_reduce(TCX_REDUCE_PARAMS)
{
	long e = LID(0) + LSIZE(0) * GROUP_LINEAR();
	long oc = args.off_c;
	VAL_T s = ZERO;

	if (e >= total)
		return;
	{
		long x = e % args.size[0];

		e /= args.size[0];
		oc += x * args.sc[0];
		x = e % args.size[1];
		e /= args.size[1];
		oc += x * args.sc[1];
	}
	for (int f = 0; f < NF2; f++) {
		const long n = args.size[3 + f], x = e % n;

		e /= n;
		oc += x * args.sc[3 + f];
	}
	for (int g = 0; g < GSU; g++)
		s += W[g * args.ws_stride + oc];
	s = SMUL(alpha, s);
	if (!IS_ZERO(beta))
		s += SMUL(beta, ld1(C, oc));
	st1(C, oc, s);
}

/* wgmma.cuh - the contraction kernel on Hopper's warpgroup tensor cores:
 * MatrixInstruction [64, N, 16, 1] for fp16 and bf16, [64, N, 8, 1] for
 * fp32 through tf32 (TF32x3: three tf32 products per fp32 product).  CUDA
 * only, sm_90a; the generator appends this text after contract.cl, whose
 * types, loads, put_c and work-group placement it uses, and defines
 * MI_WGMMA only for the plans it is meant for.
 *
 * A work-group is one producer warpgroup (threads 0-127) and NT / 128
 * consumer warpgroups, WG_WM of them along D0.  Each consumer owns a
 * (MT0 / WG_WM) x (MT1 / WG_WN) block of the macro tile, computed as WG_FM
 * x WG_FN wgmma tiles of 64 x MI_N with the accumulators in registers; P's
 * tile (MT0 x DEPTHU) is the instruction's A, Q's (MT1 x DEPTHU) its B,
 * both in shared memory with the 128-byte swizzle (compat.h).  The
 * producer hands the consumers one chunk of the bound loop at a time
 * through a ring of stages in shared memory, each with a "full" and an
 * "empty" mbarrier, so that neither side ever waits for the whole
 * work-group; setmaxnreg moves registers from the producer to the
 * consumers.
 *
 * The producer fills a stage one of two ways, chosen at launch:
 *   - the copy engine (TMA): one thread issues a box copy per 128-byte-wide
 *     column of each tile, from the tensor maps the host made, which also
 *     swizzle and fill the parts outside the tensor with zeros; the stage is
 *     full when its bytes have landed;
 *   - cp.async, when the tensors cannot have maps (a stride or address not
 *     a multiple of 16 bytes, more than five dimensions, a backend without
 *     them): 16-byte vectors where the rows allow, else single elements,
 *     by the producer's 128 threads, each of which waits for its copies
 *     and fences them for the tensor cores before it arrives.
 * Either way the tile keeps the operand's major-ness in global memory
 * (K-major when the bound index moves fastest, MN-major otherwise).
 *
 * fp16 and bf16 tiles go to the tensor cores as they are.  fp32 goes
 * through tf32, rounded (the tensor cores would truncate), and with TF32x3
 * as a = hi + lo, hi tf32, every product becoming hi(a) lo(b) +
 * lo(a) hi(b) + hi(a) hi(b): about fp32's accuracy (2^-20 a product) at
 * three tensor-core products, each DepthU chunk of them summed apart and
 * added to the accumulators in fp32.  The consumers read P's tile into registers
 * (the instruction's A may come from there, in either layout) and split
 * it themselves; the tensor cores read tf32's B K-major only, so the
 * producer turns each landed Q tile into a K-major stage of a second,
 * "math" ring, hi (and lo). */
#if MI_WGMMA

#if LSU > 1 || GSU < 1 || MI_M != 64
#error "the warpgroup kernel needs LocalSplitU 1 and MatrixInstruction [64, N, K, 1]"
#endif

#define WG_NC (NT / 128)              /* consumer warpgroups */
#define WG_THREADS (NT + 128)         /* and the producer */
#define WG_WN (WG_NC / WG_WM)         /* consumers along D1 */
#define WG_FM (MT0 / WG_WM / 64)      /* wgmma tiles per consumer along D0 */
#define WG_FN (MT1 / WG_WN / MI_N)    /* and along D1 */
#define WG_VEC (16 / WG_ES)           /* elements per 16-byte vector */
#define WG_E (128 / WG_ES)            /* elements per 128-byte row */
#if defined(TCX_TYPE_S)
#define WG_TF32 1
#else
#define WG_TF32 0
#endif
#ifndef TF32X3
#define TF32X3 0
#endif
#ifndef WG_MSTAGES
#define WG_MSTAGES 0 /* stages of the math ring (tf32) */
#endif
/* plain tf32 without a math ring: Q's landed tile, K-major, goes to the
 * tensor cores as it is (they truncate it to tf32) */
#define WG_QDIRECT (WG_TF32 && WG_MSTAGES == 0)
#define WG_MDIV (WG_MSTAGES > 0 ? WG_MSTAGES : 1) /* a divisor in branches QDIRECT skips */
#if WG_QDIRECT && (TF32X3 || TLU_Q)
#error "tf32 reads Q's landed tile only for plain tf32 with Q K-major"
#endif
/* tf32 with P MN-major: the bound elements of each group of 8 go to the
 * tensor cores in the order 0 2 4 6 1 3 5 7, in both operands (the sum
 * is the same).  A thread's fragment of P then holds elements 2q and
 * 2q + 1 of 8 instead of q and q + 4, so that the four threads of a row
 * read four different 16-byte columns of the swizzled tile: without it
 * every load of P's fragments is a two-way bank conflict.  Not where Q's
 * landed tile goes to the tensor cores as it is (WG_QDIRECT). */
#define WG_KPERM (WG_TF32 && TLU_P && !WG_QDIRECT)

/* Registers per thread (setmaxnreg).  The work-group starts with U each,
 * the most the launch bounds allow (ptxas gives kernels with setmaxnreg
 * exactly that); the producer gives back U - WG_REG_P, and the consumers
 * take no more than that between them: a setmaxnreg.inc that asks for
 * more than the work-group has free waits forever. */
#if WG_OCC > 0
#define WG_BLOCKS WG_OCC
#else
#define WG_BLOCKS 1
#endif
#define WG_REG_U0 (65536 / (WG_BLOCKS * WG_THREADS) / 8 * 8)
#define WG_REG_U (WG_REG_U0 > 256 ? 256 : WG_REG_U0)
#define WG_REG_P0 (WG_TF32 ? 104 : 80)
#define WG_REG_P (WG_REG_P0 < WG_REG_U ? WG_REG_P0 : WG_REG_U)
#define WG_REG_C0 (WG_REG_U + (WG_REG_U - WG_REG_P) * 128 / NT / 8 * 8)
#define WG_REG_C (WG_REG_C0 > 256 ? 256 : WG_REG_C0)
static_assert((WG_REG_C - WG_REG_U) * NT <= (WG_REG_U - WG_REG_P) * 128,
	      "the consumers would wait for registers nobody gives back");

/* Shared memory, from a 1 KiB-aligned base: WG_STAGES stages of [P tile,
 * Q tile] as they arrive, then (tf32) WG_MSTAGES stages of [Q hi] (TF32x3:
 * [Q hi, Q lo]) K-major, then the mbarriers, 16 bytes each (the host
 * emulation's size): full[WG_STAGES], empty[WG_STAGES], and (tf32)
 * mfull[WG_MSTAGES], mempty[WG_MSTAGES]. */
#define WG_P_BYTES (MT0 * DEPTHU * WG_ES)
#define WG_Q_BYTES (MT1 * DEPTHU * WG_ES)
#define WG_STAGE_BYTES (WG_P_BYTES + WG_Q_BYTES)
#define WG_MSTAGE_BYTES (WG_Q_BYTES * (TF32X3 ? 2 : 1))
#define WG_M_OFF (WG_STAGES * WG_STAGE_BYTES)
#define WG_BAR_OFF (WG_M_OFF + WG_MSTAGES * WG_MSTAGE_BYTES)

/* The byte offset of element (r, u) in a tile of R rows: K-major, in
 * DEPTHU / WG_E blocks of R rows of 128 bytes; MN-major, in R / WG_E
 * columns of DEPTHU rows of 128 bytes (WG_E elements of r each).  The
 * swizzle of compat.h on top (every tile starts on a 1 KiB boundary). */
INLINE uint wg_swz(uint a)
{
	return a ^ (((a >> 7) & 7) << 4);
}

INLINE uint wg_off(int mn_major, int R, int r, int u)
{
	if (mn_major)
		return wg_swz((uint)(r / WG_E) * (uint)(DEPTHU * 128) + (uint)u * 128 +
			      (uint)(r % WG_E) * WG_ES);
	return wg_swz((uint)(u / WG_E) * (uint)(R * 128) + (uint)r * 128 +
		      (uint)(u % WG_E) * WG_ES);
}

/* The descriptor of rows [r0, r0 + 64 or MI_N) and bound elements
 * [kk, kk + MI_K) of a tile of R rows at shared address t. */
INLINE tcx_u64 wg_desc(int mn_major, uint t, int R, int r0, int kk)
{
	uint a, lbo, sbo;

	if (mn_major) {
		lbo = DEPTHU * 128; /* to the next column of WG_E rows */
		sbo = 1024;         /* to the next 8 bound elements */
		a = t + (uint)(r0 / WG_E) * lbo + (uint)(kk / 8) * sbo;
	} else {
		lbo = 16; /* unused */
		sbo = 1024;
		a = t + (uint)(kk / WG_E) * (uint)(R * 128) + (uint)r0 * 128 +
		    (uint)(kk % WG_E) * WG_ES;
	}
	return (tcx_u64)((a & 0x3ffff) >> 4) | (tcx_u64)((lbo & 0x3ffff) >> 4) << 16 |
	       (tcx_u64)((sbo & 0x3ffff) >> 4) << 32 | (tcx_u64)1 << 62;
}

/* One operand's tile of a chunk into shared memory at `dst` by cp.async,
 * the work of the producer's thread `tid` of 128: R rows of the free index
 * from coordinate `tile` (offsets by pk_row with pk, n, sd, so), `left`
 * of them inside the tensor, by DEPTHU bound elements from `base` (stride
 * su, `ulen` inside).  TLU: the free index moves fastest in global memory
 * (and the tile is MN-major); VEC: 16-byte vectors may be used (unit
 * stride, aligned, not across the packed index). */
INLINE void wg_load(unsigned char *dst, const GLOBAL DATA_T *X, long base, long tile, int pk,
		    long n, long sd, long so, long su, int left, int ulen, int R, int tlu, int vec,
		    int tid)
{
	/* the extent along the direction of unit stride (C) and across it */
	const int ec = tlu ? R : DEPTHU;
	const int lc = tlu ? left : ulen, lq = tlu ? ulen : left;

	if (vec) {
		const int nv = R * DEPTHU / WG_VEC, per = ec / WG_VEC;

		for (int v = tid; v < nv; v += 128) {
			const int c = (v % per) * WG_VEC, q = v / per;
			const int r = tlu ? c : q, u = tlu ? q : c;
			const int m = q < lq ? (int)min((long)WG_VEC, (long)(lc - c)) : 0;
			const long o = base + pk_row(tile + r, pk, n, sd, so) + (long)u * su;

			tcx_cp16(dst + wg_off(tlu, R, r, u), m > 0 ? (const void *)(X + o) : X,
				 m > 0 ? m * WG_ES : 0);
		}
		return;
	}
	/* element by element: a warp takes 8 consecutive elements along C in
	 * each of 4 rows across it, keeping 32-byte runs of global memory
	 * together */
	for (int e = tid; e < R * DEPTHU; e += 128) {
		const int blk = e / 32, in = e % 32;
		const int c = (blk % (ec / 8)) * 8 + in / 4, q = (blk / (ec / 8)) * 4 + in % 4;
		const int r = tlu ? c : q, u = tlu ? q : c;
		const int ok = r < left && u < ulen;
		const long o = ok ? base + pk_row(tile + r, pk, n, sd, so) + (long)u * su : 0;
		unsigned char *d = dst + wg_off(tlu, R, r, u);

#if WG_TF32
		tcx_cp4(d, ok ? (const void *)(X + o) : X, ok ? 4 : 0);
#else
		*(ushort *)d = ok ? (ushort)X[o] : (ushort)0;
#endif
	}
}

/* The copy engine's boxes of one operand's tile of a chunk: R rows of the
 * free index from coordinate (in0, out0) (with PackFreeIndices, pk, the inner
 * index of extent n and the outer one, map dimension 2 + pd; else in0 is
 * the coordinate), DEPTHU bound elements from u0; x[] the coordinates of
 * the other extra dimensions.  The host saw to it that no box crosses the
 * inner index's end, so the columns step through it without a division. */
INLINE void wg_tma_tile(unsigned char *dst, const tcx_tmap *m, int rank, int tlu, int R,
			int in0, int out0, int pk, int n, int pd, int u0, const int *x,
			tcx_u64 *bar)
{
	int c[5], in = in0, out = out0;

	for (int d = 0; d < 3; d++)
		c[2 + d] = x[d];
	for (int a = 0; a < (tlu ? R : DEPTHU) / WG_E; a++) {
		c[0] = tlu ? in : u0 + a * WG_E;
		c[1] = tlu ? u0 : in;
		if (pk && pd >= 0)
			c[2 + pd] = out;
		tcx_tma_load(dst + a * (tlu ? DEPTHU : R) * 128, m, rank, c, bar);
		if (tlu) {
			in += WG_E;
			if (pk && in >= n) {
				in -= n;
				out++;
			}
		}
	}
}

#if WG_TF32
/* TF32x3's x = hi + lo: hi x rounded to tf32 (to nearest, ties away from
 * zero) by integer arithmetic, lo the exact rest, left for the tensor
 * cores to truncate to tf32: |x - hi - lo's tf32| <= 2^-21 |x|, of either
 * sign, for five instructions fewer an element than rounding lo too (the
 * producer's split is the kernel's critical path).  A NaN or an infinity
 * in x makes lo a NaN, which the products carry.  Plain tf32 takes hi
 * alone, rounded by cvt.rna, which keeps infinities and NaNs. */
INLINE void wg_tf32_split(float x, float *hi, float *lo)
{
#if TF32X3
	const float h = as_float((as_uint(x) + 0x1000u) & 0xffffe000u);

	*hi = h;
	*lo = x - h;
#else
	*hi = tcx_tf32_round(x);
	*lo = 0.0f;
#endif
}

/* The byte offset of bound elements k0 + 4 c .. k0 + 4 c + 3 of row r in a
 * K-major fp32 tile of R rows (k0 a multiple of 16): wg_off(0, ...) with
 * the swizzle worked out, as the 16-byte column ((k0 % 32) / 4 + c) is
 * XORed with r % 8 (R and every tile start are multiples of 8 rows). */
INLINE uint wg_kq(int R, int r, int k0, int c)
{
	return (uint)(k0 / WG_E) * (uint)(R * 128) + (uint)r * 128 +
	       ((uint)(((k0 % WG_E) / 4 + c) ^ (r % 8)) << 4);
}

/* Q's tile of the raw ring (layout `mn`) into the math ring, K-major:
 * rounded to tf32 in `hi`, and with TF32x3 the remainders in `lo`
 * (wg_tf32_split).  Thread tid of nth takes 16 bound elements of a row at
 * a time, all loads first; consecutive threads take consecutive rows, which
 * keeps both the reads (either layout) and the 16-byte writes free of bank
 * conflicts.  The addresses are worked out rather than taken from wg_off
 * element by element: this loop is the producer's critical path. */
INLINE void wg_split(const unsigned char *raw, unsigned char *hi, unsigned char *lo, int R,
		     int mn, int tid, int nth)
{
	for (uint e = (uint)tid; e < (uint)(R * (DEPTHU / 16)); e += (uint)nth) {
		const int r = (int)(e % (uint)R), k0 = (int)(e / (uint)R * 16);
		tcx_float4 x[4], h[4], l[4];

		if (mn) {
			/* element (r, k0 + t) is in row k0 + t (128 bytes) of r's
			 * column of WG_E rows; the swizzle XORs its bytes 16-112 with
			 * t % 8 (k0 and DEPTHU are multiples of 8) */
			const unsigned char *b = raw + (uint)(r / WG_E) * (DEPTHU * 128) +
						 (uint)k0 * 128;
			const uint o = (uint)(r % WG_E) * 4;

#pragma unroll
			for (int t = 0; t < 16; t++)
				x[t / 4][t % 4] = *(const float *)(b + (o ^ ((uint)(t % 8) << 4)) +
								  t * 128);
		} else {
#pragma unroll
			for (int c = 0; c < 4; c++)
				x[c] = *(const tcx_float4 *)(raw + wg_kq(R, r, k0, c));
		}
#pragma unroll
		for (int c = 0; c < 4; c++)
#pragma unroll
			for (int j = 0; j < 4; j++) {
				/* the order of WG_KPERM: positions 0-3 of 8 take
				 * elements 0 2 4 6, positions 4-7 elements 1 3 5 7 */
				const int e8 = WG_KPERM ? 8 * (c / 2) + 2 * j + c % 2 : 4 * c + j;

				wg_tf32_split(x[e8 / 4][e8 % 4], &h[c][j], &l[c][j]);
			}
#pragma unroll
		for (int c = 0; c < 4; c++) {
			const uint o = wg_kq(R, r, k0, c);

			*(tcx_float4 *)(hi + o) = h[c];
#if TF32X3
			*(tcx_float4 *)(lo + o) = l[c];
#endif
		}
	}
#if !TF32X3
	(void)lo;
#endif
}
#endif

/* The kernel: common/abi.h's parameters, with the tensor maps of P and Q
 * and what the host says of them (struct tcx_tma). */
KERNEL __launch_bounds__(WG_THREADS, WG_BLOCKS) void tcx_contract(TCX_WGMMA_PARAMS)
{
	const int tid = (int)LID(0);
	/* D0 and D1: their inner indices, with PackFreeIndices times the outer */
	const long N0 = SIZE_D0, N1 = SIZE_D1, SU = SIZE_DU;
	const long S0 = N0 * (PK0 ? args.size[PS0] : 1);
	const long S1 = N1 * (PK1 ? args.size[PS1] : 1);
	long g0, g1, gz;
	long baseP = args.off_p, baseQ = args.off_q, baseC = args.off_c;
	int gsu_part = 0;

	GROUP_DECODE();
	const long gz0 = gz / GSU; /* the folded indices, for the maps */
	GROUP_PLACE();
	(void)gz;

	const long tile0 = g0 * MT0, tile1 = g1 * MT1;

	BOUND_START()
	const long nk = it_end - it; /* the chunks of this work-group */

	LOCAL_POOL();
	unsigned char *const sm = tcx_smem + ((1024 - tcx_smem_u32(tcx_smem) % 1024) % 1024);
	tcx_u64 *const full = (tcx_u64 *)(sm + WG_BAR_OFF), *const empty = full + 2 * WG_STAGES;
#if WG_TF32
	tcx_u64 *const mfull = empty + 2 * WG_STAGES, *const mempty = mfull + 2 * WG_MSTAGES;
#endif

	if (tid == 0) {
		for (int s = 0; s < WG_STAGES; s++) {
			/* TMA: the one thread that announces the bytes; else every
			 * producer thread (with tf32 the producer itself waits) */
			tcx_mbar_init(full + 2 * s, tma.use ? 1 : 128);
			/* the consumers; with tf32 and the copy engine also the
			 * producer's three warps that read Q's part to split it */
			tcx_mbar_init(empty + 2 * s,
				      NT + (WG_TF32 && !WG_QDIRECT && tma.use ? 96 : 0));
		}
#if WG_TF32
		for (int s = 0; s < WG_MSTAGES; s++) {
			/* the producer's threads that split: all but the TMA warp */
			tcx_mbar_init(mfull + 2 * s, tma.use ? 96 : 128);
			tcx_mbar_init(mempty + 2 * s, NT);
		}
#endif
		tcx_mbar_fence_init();
	}
	BARRIER();

	if (tid < 128) {
		/* ---- the producer ---- */
		const long sp0 = args.sp[PS0], sq1 = args.sq[PS1];
		const long pP = baseP + pk_row(tile0, PK0, N0, STRIDE_P_D0, sp0);
		const long pQ = baseQ + pk_row(tile1, PK1, N1, STRIDE_Q_D1, sq1);
		const int left0 = (int)min(S0 - tile0, (long)MT0);
		const int left1 = (int)min(S1 - tile1, (long)MT1);
		/* 16-byte vectors: unit stride along them, every one aligned, and
		 * none across the packed index */
		int vec_p = (TLU_P ? STRIDE_P_D0 : STRIDE_P_DU) == 1 &&
			    (TLU_P ? STRIDE_P_DU : STRIDE_P_D0) % WG_VEC == 0 &&
			    (size_t)(P + pP) % 16 == 0 &&
			    (!PK0 || (N0 % WG_VEC == 0 && sp0 % WG_VEC == 0));
		int vec_q = (TLU_Q ? STRIDE_Q_D1 : STRIDE_Q_DU) == 1 &&
			    (TLU_Q ? STRIDE_Q_DU : STRIDE_Q_D1) % WG_VEC == 0 &&
			    (size_t)(Q + pQ) % 16 == 0 &&
			    (!PK1 || (N1 % WG_VEC == 0 && sq1 % WG_VEC == 0));
		/* the copy engine: the coordinates of the maps' dimensions past
		 * the first two that stand for folded indices, and which one
		 * (pdp, pdq) is the packed index */
		int xp[3], xq[3], pdp = -1, pdq = -1;
		/* the tiles' first rows as (inner, outer) coordinates */
		const int in_p = (int)(PK0 ? tile0 % N0 : tile0), out_p = (int)(PK0 ? tile0 / N0 : 0);
		const int in_q = (int)(PK1 ? tile1 % N1 : tile1), out_q = (int)(PK1 ? tile1 / N1 : 0);

		tcx_reg_dealloc<WG_REG_P>();
		for (int b = 0; b < NB; b++) {
			vec_p = vec_p && args.sp[3 + NF2 + b] % WG_VEC == 0;
			vec_q = vec_q && args.sq[3 + NF2 + b] % WG_VEC == 0;
		}
		for (int d = 0; d < 3; d++) {
			long div = 1;

			xp[d] = xq[d] = 0;
			pdp = tma.xp[d] == PACK0_SLOT ? d : pdp;
			pdq = tma.xq[d] == PACK1_SLOT ? d : pdq;
			for (int f = 0; f < NF2; f++) {
				if (3 + f == PACK0_SLOT || 3 + f == PACK1_SLOT)
					continue; /* not in gz */
				if (tma.xp[d] == 3 + f)
					xp[d] = (int)(gz0 / div % args.size[3 + f]);
				if (tma.xq[d] == 3 + f)
					xq[d] = (int)(gz0 / div % args.size[3 + f]);
				div *= args.size[3 + f];
			}
		}

		/* one chunk (ch, outer position) into raw stage s */
#define WG_TMA_CHUNK(s)                                                                     \
	do {                                                                                \
		unsigned char *st_ = sm + (s) * WG_STAGE_BYTES;                             \
		int x_[3];                                                                  \
                                                                                            \
		tcx_mbar_expect_tx(full + 2 * (s), WG_STAGE_BYTES);                         \
		for (int d_ = 0; d_ < 3; d_++)                                              \
			x_[d_] = tma.xp[d_] >= 3 + NF2 ? (int)ob_idx[tma.xp[d_] - 3 - NF2]  \
						       : xp[d_];                            \
		wg_tma_tile(st_, &tm_p,                                                     \
			    2 + (tma.xp[0] >= 0) + (tma.xp[1] >= 0) + (tma.xp[2] >= 0),     \
			    TLU_P, MT0, in_p, out_p, PK0, (int)N0, pdp, (int)(ch * DEPTHU), \
			    x_,                                                             \
			    full + 2 * (s));                                                \
		for (int d_ = 0; d_ < 3; d_++)                                              \
			x_[d_] = tma.xq[d_] >= 3 + NF2 ? (int)ob_idx[tma.xq[d_] - 3 - NF2]  \
						       : xq[d_];                            \
		wg_tma_tile(st_ + WG_P_BYTES, &tm_q,                                        \
			    2 + (tma.xq[0] >= 0) + (tma.xq[1] >= 0) + (tma.xq[2] >= 0),     \
			    TLU_Q, MT1, in_q, out_q, PK1, (int)N1, pdq, (int)(ch * DEPTHU), \
			    x_,                                                             \
			    full + 2 * (s));                                                \
		BOUND_NEXT();                                                               \
	} while (0)
#define WG_COPY_CHUNK(s)                                                                    \
	do {                                                                                \
		const long u0_ = ch * DEPTHU;                                               \
		const int ulen_ = (int)min((long)DEPTHU, SU - u0_);                         \
		unsigned char *st_ = sm + (s) * WG_STAGE_BYTES;                             \
                                                                                            \
		wg_load(st_, P, baseP + ob_off_p + u0_ * STRIDE_P_DU, tile0, PK0, N0,       \
			STRIDE_P_D0, sp0, STRIDE_P_DU, left0, ulen_, MT0, TLU_P, vec_p, tid); \
		wg_load(st_ + WG_P_BYTES, Q, baseQ + ob_off_q + u0_ * STRIDE_Q_DU, tile1,   \
			PK1, N1, STRIDE_Q_D1, sq1, STRIDE_Q_DU, left1, ulen_, MT1, TLU_Q,   \
			vec_q, tid);                                                        \
		tcx_cp_commit();                                                            \
		tcx_cp_wait<0>();                                                           \
		BOUND_NEXT();                                                               \
	} while (0)

#if !WG_TF32 || WG_QDIRECT
		for (long k = 0; k < nk; k++) {
			const int s = (int)((uint)k % WG_STAGES);

			if (k >= WG_STAGES)
				tcx_mbar_wait(empty + 2 * s, (int)(((uint)k / WG_STAGES - 1) & 1));
			if (tma.use) {
				if (tid == 0)
					WG_TMA_CHUNK(s);
			} else {
				WG_COPY_CHUNK(s);
				tcx_fence_async();
				tcx_mbar_arrive(full + 2 * s);
			}
		}
#else
		/* tf32: the raw ring as above, its stages emptied by the
		 * consumers once they hold P's part in registers; Q's part split
		 * into the math ring.  With the copy engine, warp 0 only issues
		 * copies and the other three split, so that neither waits for the
		 * other; with cp.async all four copy, then split. */
		if (tma.use) {
			if (tid == 0)
				for (long k = 0; k < nk; k++) {
					const int s = (int)((uint)k % WG_STAGES);

					if (k >= WG_STAGES)
						tcx_mbar_wait(empty + 2 * s,
							      (int)(((uint)k / WG_STAGES - 1) & 1));
					WG_TMA_CHUNK(s);
				}
			else if (tid >= 32)
				for (long k = 0; k < nk; k++) {
					const int s = (int)((uint)k % WG_STAGES);
					const int m = (int)((uint)k % WG_MSTAGES);
					unsigned char *mst = sm + WG_M_OFF + m * WG_MSTAGE_BYTES;

					tcx_mbar_wait(full + 2 * s, (int)(((uint)k / WG_STAGES) & 1));
					if (k >= WG_MSTAGES)
						tcx_mbar_wait(mempty + 2 * m,
							      (int)(((uint)k / WG_MSTAGES - 1) & 1));
					wg_split(sm + s * WG_STAGE_BYTES + WG_P_BYTES, mst,
						 mst + WG_Q_BYTES, MT1, TLU_Q, tid - 32, 96);
					tcx_fence_async();
					tcx_mbar_arrive(mfull + 2 * m);
					/* done reading the raw stage: it may be refilled */
					tcx_mbar_arrive(empty + 2 * s);
				}
		} else {
			for (long k = 0; k < nk; k++) {
				const int s = (int)((uint)k % WG_STAGES), m = (int)((uint)k % WG_MSTAGES);
				unsigned char *mst = sm + WG_M_OFF + m * WG_MSTAGE_BYTES;

				if (k >= WG_STAGES)
					tcx_mbar_wait(empty + 2 * s, (int)(((uint)k / WG_STAGES - 1) & 1));
				WG_COPY_CHUNK(s);
				tcx_bar_sync(1, 128);
				/* landed: the consumers may read P's part */
				tcx_mbar_arrive(full + 2 * s);
				if (k >= WG_MSTAGES)
					tcx_mbar_wait(mempty + 2 * m, (int)(((uint)k / WG_MSTAGES - 1) & 1));
				wg_split(sm + s * WG_STAGE_BYTES + WG_P_BYTES, mst, mst + WG_Q_BYTES,
					 MT1, TLU_Q, tid, 128);
				tcx_fence_async();
				tcx_mbar_arrive(mfull + 2 * m);
				/* every thread is done with stage s before any refills it */
				tcx_bar_sync(1, 128);
			}
		}
#endif
#undef WG_TMA_CHUNK
#undef WG_COPY_CHUNK
	} else {
		/* ---- the consumers ---- */
		const int ct = tid - 128, cw = ct / 128;

		tcx_reg_alloc<WG_REG_C>();
		const int wm = (cw % WG_WM) * (MT0 / WG_WM), wn = (cw / WG_WM) * (MT1 / WG_WN);
		float acc[WG_FM][WG_FN][MI_N / 2];

#pragma unroll
		for (int i = 0; i < WG_FM; i++)
#pragma unroll
			for (int j = 0; j < WG_FN; j++)
#pragma unroll
				for (int x = 0; x < MI_N / 2; x++)
					acc[i][j][x] = 0;
		/* the accumulators belong to the tensor cores between a wgmma
		 * and its wait: no instruction may move across either */
#define WG_FENCE_ACC()                                                                      \
	_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                                \
		_Pragma("unroll") for (int j_ = 0; j_ < WG_FN; j_++)                        \
			_Pragma("unroll") for (int x_ = 0; x_ < MI_N / 2; x_++)             \
				tcx_wg_reg(acc[i_][j_][x_])

#if !WG_TF32
		for (long k = 0; k < nk; k++) {
			const int s = (int)((uint)k % WG_STAGES);
			const uint tp = tcx_smem_u32(sm) + (uint)s * WG_STAGE_BYTES;
			const uint tq = tp + WG_P_BYTES;

			tcx_mbar_wait(full + 2 * s, (int)(((uint)k / WG_STAGES) & 1));
			WG_FENCE_ACC();
			tcx_wg_fence();
#pragma unroll
			for (int kk = 0; kk < DEPTHU; kk += MI_K)
#pragma unroll
				for (int i = 0; i < WG_FM; i++)
#pragma unroll
					for (int j = 0; j < WG_FN; j++)
						tcx_wgmma(acc[i][j],
							  wg_desc(WG_TNSP_P, tp, MT0, wm + 64 * i, kk),
							  wg_desc(WG_TNSP_Q, tq, MT1, wn + MI_N * j, kk));
			tcx_wg_commit();
			/* the chunk before is done: its stage may be refilled */
			tcx_wg_wait<1>();
			WG_FENCE_ACC();
			if (k > 0)
				tcx_mbar_arrive(empty + 2 * (int)((uint)(k - 1) % WG_STAGES));
		}
#else
		/* P's fragments, tf32 hi and lo, two sets: a chunk's stay
		 * untouched until its wgmma is done, while the next chunk's are
		 * made.  The raw values of the next chunk are loaded while the
		 * tensor cores work on this one. */
		uint fa[2 - TF32X3][WG_FM][DEPTHU / 8][1 + TF32X3][4];
		float xa[WG_FM][DEPTHU / 8][4];
#if TF32X3
		/* TF32x3: the tensor cores add into their accumulators with less
		 * precision than fp32 (measured on an H100: at K = 8192 the error
		 * of one running accumulator was 12 times cuBLAS's fp32), so each
		 * chunk's products go to fresh ones, which fp32 adds then fold
		 * into acc; one set of fragments, as each chunk is waited for */
		float tmp[WG_FM][WG_FN][MI_N / 2];
#endif
		const int g = (ct % 32) / 4, q = ct % 4, w16 = 16 * ((ct % 128) / 32);

#define WG_FENCE_FA()                                                                       \
	_Pragma("unroll") for (int b_ = 0; b_ < 2 - TF32X3; b_++)                           \
		_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                        \
			_Pragma("unroll") for (int k_ = 0; k_ < DEPTHU / 8; k_++)           \
				_Pragma("unroll") for (int h_ = 0; h_ < 1 + TF32X3; h_++)   \
					_Pragma("unroll") for (int e_ = 0; e_ < 4; e_++)    \
						tcx_wg_ureg(fa[b_][i_][k_][h_][e_])
		/* register e of a fragment: bound element q (+ 4) of 8, or
		 * where WG_KPERM put it */
#define WG_KCOL(q, hi) (WG_KPERM ? 2 * (q) + (hi) : (q) + 4 * (hi))
		/* P's part of chunk k into xa, once it has landed */
#define WG_LOAD_XA(k)                                                                       \
	do {                                                                                \
		const int s_ = (int)((uint)(k) % WG_STAGES);                                \
		const unsigned char *rp_ = sm + s_ * WG_STAGE_BYTES;                        \
                                                                                            \
		tcx_mbar_wait(full + 2 * s_, (int)(((uint)(k) / WG_STAGES) & 1));           \
		_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                        \
			_Pragma("unroll") for (int k_ = 0; k_ < DEPTHU / 8; k_++)           \
				_Pragma("unroll") for (int e_ = 0; e_ < 4; e_++)            \
					xa[i_][k_][e_] = *(const float *)(                  \
					    rp_ + wg_off(TLU_P, MT0,                        \
							 wm + 64 * i_ + w16 + g + 8 * (e_ % 2), \
							 8 * k_ + WG_KCOL(q, e_ / 2)));     \
		/* the loads are done once xa is used: then the stage may go */             \
	} while (0)
		/* chunk k with fragment set B (a literal), its raw P in xa */
#if WG_QDIRECT
#define WG_TQ(k) (tcx_smem_u32(sm) + (uint)((uint)(k) % WG_STAGES) * WG_STAGE_BYTES + WG_P_BYTES)
#else
#define WG_TQ(k) (tcx_smem_u32(sm) + WG_M_OFF + (uint)((uint)(k) % WG_MSTAGES) * WG_MSTAGE_BYTES)
#endif
#define WG_TF32_CHUNK(k, B)                                                                 \
	do {                                                                                \
		const uint tq_ = WG_TQ(k);                                                  \
                                                                                            \
		_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                        \
			_Pragma("unroll") for (int k_ = 0; k_ < DEPTHU / 8; k_++)           \
				_Pragma("unroll") for (int e_ = 0; e_ < 4; e_++) {          \
					float h_, l_;                                       \
                                                                                            \
					wg_tf32_split(xa[i_][k_][e_], &h_, &l_);            \
					fa[B][i_][k_][0][e_] = as_uint(h_);                 \
					if (TF32X3)                                         \
						fa[B][i_][k_][TF32X3][e_] = as_uint(l_);    \
				}                                                           \
		if (!WG_QDIRECT) {                                                          \
			/* P's part of the stage is in registers: it may be refilled */     \
			tcx_mbar_arrive(empty + 2 * (int)((uint)(k) % WG_STAGES));          \
			tcx_mbar_wait(mfull + 2 * (int)((uint)(k) % WG_MDIV),               \
				      (int)(((uint)(k) / WG_MDIV) & 1));                    \
		}                                                                           \
		WG_ISSUE(B, tq_);                                                           \
		if ((k) + 1 < nk)                                                           \
			WG_LOAD_XA((k) + 1);                                                \
		WG_RETIRE(k);                                                               \
	} while (0)
#if !TF32X3
		/* one running accumulator; the chunk before is waited for */
#define WG_ISSUE(B, tq)                                                                     \
	do {                                                                                \
		WG_FENCE_ACC();                                                             \
		WG_FENCE_FA();                                                              \
		tcx_wg_fence();                                                             \
		_Pragma("unroll") for (int k_ = 0; k_ < DEPTHU / 8; k_++)                   \
			_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                \
				_Pragma("unroll") for (int j_ = 0; j_ < WG_FN; j_++)        \
					tcx_wgmma_rs(acc[i_][j_], fa[B][i_][k_][0],         \
						     wg_desc(0, tq, MT1, wn + MI_N * j_, 8 * k_)); \
		tcx_wg_commit();                                                            \
	} while (0)
#define WG_RETIRE(k)                                                                        \
	do {                                                                                \
		/* the chunk before is done: its fragments and Q stage are free */          \
		tcx_wg_wait<1>();                                                           \
		WG_FENCE_ACC();                                                             \
		WG_FENCE_FA();                                                              \
		if ((k) > 0 && WG_QDIRECT)                                                  \
			tcx_mbar_arrive(empty + 2 * (int)((uint)((k) - 1) % WG_STAGES));    \
		else if ((k) > 0)                                                           \
			tcx_mbar_arrive(mempty + 2 * (int)((uint)((k) - 1) % WG_MDIV));     \
	} while (0)
#else
		/* the chunk into tmp, from zero: hi lo + lo hi + hi hi */
#define WG_ISSUE(B, tq)                                                                     \
	do {                                                                                \
		WG_FENCE_TMP();                                                             \
		WG_FENCE_FA();                                                              \
		tcx_wg_fence();                                                             \
		_Pragma("unroll") for (int k_ = 0; k_ < DEPTHU / 8; k_++)                   \
			_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                \
				_Pragma("unroll") for (int j_ = 0; j_ < WG_FN; j_++) {      \
					const tcx_u64 db_ =                                 \
					    wg_desc(0, tq, MT1, wn + MI_N * j_, 8 * k_);    \
                                                                                            \
					if (k_ == 0)                                        \
						tcx_wgmma_rs0(tmp[i_][j_], fa[B][i_][k_][0], \
							      db_ + (WG_Q_BYTES >> 4));     \
					else                                                \
						tcx_wgmma_rs(tmp[i_][j_], fa[B][i_][k_][0], \
							     db_ + (WG_Q_BYTES >> 4));      \
					tcx_wgmma_rs(tmp[i_][j_], fa[B][i_][k_][1], db_);   \
					tcx_wgmma_rs(tmp[i_][j_], fa[B][i_][k_][0], db_);   \
				}                                                           \
		tcx_wg_commit();                                                            \
	} while (0)
		/* the chunk is done: fold it into acc in fp32; its Q stage is free */
#define WG_RETIRE(k)                                                                        \
	do {                                                                                \
		tcx_wg_wait<0>();                                                           \
		WG_FENCE_TMP();                                                             \
		WG_FENCE_FA();                                                              \
		_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                        \
			_Pragma("unroll") for (int j_ = 0; j_ < WG_FN; j_++)                \
				_Pragma("unroll") for (int x_ = 0; x_ < MI_N / 2; x_++)     \
					acc[i_][j_][x_] += tmp[i_][j_][x_];                 \
		tcx_mbar_arrive(mempty + 2 * (int)((uint)(k) % WG_MSTAGES));                \
	} while (0)
#define WG_FENCE_TMP()                                                                      \
	_Pragma("unroll") for (int i_ = 0; i_ < WG_FM; i_++)                                \
		_Pragma("unroll") for (int j_ = 0; j_ < WG_FN; j_++)                        \
			_Pragma("unroll") for (int x_ = 0; x_ < MI_N / 2; x_++)             \
				tcx_wg_reg(tmp[i_][j_][x_])
#endif

		if (nk > 0)
			WG_LOAD_XA(0);
		for (long k = 0; k < nk; k += 2) {
			WG_TF32_CHUNK(k, 0);
			if (k + 1 < nk)
				WG_TF32_CHUNK(k + 1, 1 - TF32X3);
		}
#undef WG_LOAD_XA
#undef WG_KCOL
#undef WG_ISSUE
#undef WG_RETIRE
#undef WG_TF32_CHUNK
#undef WG_TQ
#undef WG_FENCE_FA
#endif
		tcx_wg_wait<0>();
		WG_FENCE_ACC();
#undef WG_FENCE_ACC

		/* write out: C = alpha * acc + beta * C, or the partial sum to W.
		 * Register x of a tile is row (x % 4) / 2 and column x / 4, x % 2
		 * of the thread's: the offsets of its rows, once, then of each
		 * pair of columns (with PackFreeIndices they take divisions). */
		{
			const int beta0 = IS_ZERO(beta);
			const int t = ct % 128;
			long ro[WG_FM][2];

#pragma unroll
			for (int i = 0; i < WG_FM; i++)
#pragma unroll
				for (int h = 0; h < 2; h++) {
					const long d0 = tile0 + wm + 64 * i + 16 * (t / 32) +
							(t % 32) / 4 + 8 * h;

					ro[i][h] = d0 < S0 ? baseC + pk_row(d0, PK0, N0, STRIDE_C_D0,
									  args.sc[PS0])
							   : -1;
				}
#pragma unroll
			for (int j = 0; j < WG_FN; j++)
#pragma unroll
				for (int c = 0; c < MI_N / 8; c++)
#pragma unroll
					for (int e = 0; e < 2; e++) {
						const long d1 = tile1 + wn + MI_N * j + 8 * c + 2 * (t % 4) + e;
						const long co = pk_row(d1, PK1, N1, STRIDE_C_D1,
								       args.sc[PS1]);

#if EDGE != 2
						if (d1 >= S1)
							continue;
#endif
#pragma unroll
						for (int i = 0; i < WG_FM; i++)
#pragma unroll
							for (int h = 0; h < 2; h++) {
#if EDGE != 2
								if (ro[i][h] < 0)
									continue;
#endif
								put_c(C, W, ro[i][h] + co,
								      acc[i][j][4 * c + 2 * h + e], alpha,
								      beta, beta0, gsu_part,
								      args.ws_stride);
							}
					}
		}
	}
}
#endif /* MI_WGMMA */

/* ttm.cl - tensor times matrix: C[F, j] = alpha * sum_k T[F, k] M[j, k]
 * + beta * C[F, j], for a tensor T of any number of free indices F and
 * one summed index k, and a matrix M of one free index j and k, real
 * types.  Bound by memory when k and j are short (T read once, C written
 * once), where the contraction kernel's tiles either read T or write C
 * across its fastest index.
 *
 * Slots (struct tcx_ttm_args, common/abi.h): 0 = q, C's fastest index (a
 * free index of T); 1 = r, a second free index of T, the one moving
 * fastest in T where T's fastest is neither q nor k (a size-1 stand-in
 * when T has no other); 2 = k; 3 = j; 4 .. = the other free indices of T,
 * folded into dimension 2 of the grid and decoded once per work-group.
 *
 * A work-group computes a TTM_QB x TTM_RB block of (q, r) for TTM_JB
 * values of j at one point of the folded indices.  Each chunk of TTM_KC
 * values of k, its T box (q x r x k) is read with consecutive work-items
 * along T's fastest index (TTM_FAST: 0 q, 1 r, 2 k) into local memory,
 * laid out [k][r][q] with rows padded by 4 elements so that those writes
 * and the reads of the products fall in different banks; M's chunk goes
 * beside it.  Under CUDA (sm_80 on) the chunks arrive by cp.async through
 * a ring of TTM_STAGES stages, the next ones loading while one is
 * multiplied; elsewhere one stage, loaded through registers.  A work-item
 * holds TTM_TR x TTM_TJ runs of TTM_TQ consecutive q, so that its stores
 * of C are vectors along C's fastest index and a warp's cover whole
 * 128-byte lines (TTM_VEC: C's q has unit stride and every row is
 * aligned; else element by element).
 *
 * One text for OpenCL C 1.2 and CUDA/HIP C++ (common/port.h,
 * cuda/compat.h); planned by lib/gen/ttm.c. */

#ifndef TTM_DOUBLE
#define TTM_DOUBLE 0
#endif
#if TTM_DOUBLE
#ifndef TCX_LANG_CUDA
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define DATA_T double
#else
#define DATA_T float
#endif
#ifndef TTM_QB
#define TTM_QB 32 /* q per work-group */
#endif
#ifndef TTM_TQ
#define TTM_TQ 4 /* consecutive q per work-item (a vector of C) */
#endif
#ifndef TTM_RB
#define TTM_RB 8 /* r per work-group */
#endif
#ifndef TTM_TR
#define TTM_TR 1 /* r per work-item */
#endif
#ifndef TTM_JB
#define TTM_JB 24 /* j per work-group */
#endif
#ifndef TTM_TJ
#define TTM_TJ 6 /* j per work-item */
#endif
#ifndef TTM_KC
#define TTM_KC 8 /* k per chunk */
#endif
#ifndef TTM_FAST
#define TTM_FAST 0 /* T's fastest of q (0), r (1), k (2) */
#endif
#ifndef TTM_VEC
#define TTM_VEC 0 /* vector stores of C */
#endif
#ifndef TTM_KFULL
#define TTM_KFULL 0 /* TTM_KC divides k's extent: no chunk runs past it */
#endif

#define TTM_NQ (TTM_QB / TTM_TQ)
#define TTM_NR (TTM_RB / TTM_TR)
#define TTM_NJ (TTM_JB / TTM_TJ)
#define TTM_NT (TTM_NQ * TTM_NR * TTM_NJ)
#define TTM_QS (TTM_QB + 4)		 /* a row of the T box in local memory */
#define TTM_KS (TTM_RB * TTM_QS + 4)	 /* one k of it */
#define TTM_TE (TTM_KC * TTM_RB * TTM_QB) /* elements of the T box */
#define TTM_TPER ((TTM_TE + TTM_NT - 1) / TTM_NT)
#define TTM_ME (TTM_KC * TTM_JB)
#define TTM_MPER ((TTM_ME + TTM_NT - 1) / TTM_NT)

/* element e of the T box as (q, r, k) within it, T's fastest index first,
 * so that consecutive work-items read consecutive addresses */
#if TTM_FAST == 0
#define TTM_PLACE(e, qq, rr, kk)                                                            \
	do {                                                                                \
		qq = (e) % TTM_QB;                                                          \
		rr = (e) / TTM_QB % TTM_RB;                                                 \
		kk = (e) / (TTM_QB * TTM_RB);                                               \
	} while (0)
#elif TTM_FAST == 1
#define TTM_PLACE(e, qq, rr, kk)                                                            \
	do {                                                                                \
		rr = (e) % TTM_RB;                                                          \
		qq = (e) / TTM_RB % TTM_QB;                                                 \
		kk = (e) / (TTM_RB * TTM_QB);                                               \
	} while (0)
#else
#define TTM_PLACE(e, qq, rr, kk)                                                            \
	do {                                                                                \
		kk = (e) % TTM_KC;                                                          \
		qq = (e) / TTM_KC % TTM_QB;                                                 \
		rr = (e) / (TTM_KC * TTM_QB);                                               \
	} while (0)
#endif

/* CUDA on sm_80 and later: the chunks go from global to local memory by
 * cp.async, which holds no registers while they fly, through a ring of
 * TTM_STAGES stages, so that TTM_STAGES - 1 chunks load while one is
 * multiplied; elsewhere one stage, loaded through registers. */
#if defined(TCX_LANG_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__HIP__)
#define TTM_ASYNC 1
#ifndef TTM_STAGES
#define TTM_STAGES 3
#endif
/* an element from global to local memory; a zero where `ok` is false */
INLINE void ttm_cp(DATA_T *dst, const DATA_T *src, int ok)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(
			 (unsigned)__cvta_generic_to_shared(dst)),
		     "l"(src), "n"(sizeof(DATA_T)), "r"(ok ? (int)sizeof(DATA_T) : 0)
		     : "memory");
}
#else
#define TTM_ASYNC 0
#undef TTM_STAGES
#define TTM_STAGES 1
#endif
#define TTM_STAGE (TTM_KC * TTM_KS + TTM_KC * TTM_JB) /* elements of a stage */

KERNEL WG_SIZE_HINT(TTM_NT, 1, 1) void tcx_ttm(TCX_TTM_KERNEL_PARAMS)
{
	const int t = (int)LID(0);
	const int tq = t % TTM_NQ, tr = t / TTM_NQ % TTM_NR, tj = t / (TTM_NQ * TTM_NR);
	/* sizes and the grid in 32 bits (the host saw to it that they fit):
	 * a 64-bit division is some eighty instructions, and this prologue
	 * runs once for every few hundred products of a work-item */
	const int Q = (int)args.size[0], R = (int)args.size[1], K = (int)args.size[2];
	const int J = (int)args.size[3];
	uint g0, g1, gz;
	long bt = args.off_t, bc = args.off_c;

	/* the work-group's place: j's block fastest, so that the work-groups
	 * that read the same T box run together */
	if (NGROUPS(0) == args.groups[0] && NGROUPS(1) == args.groups[1]) {
		g0 = (uint)GROUP(0);
		g1 = (uint)GROUP(1);
		gz = (uint)GROUP(2);
		if (gz >= (uint)args.groups[2])
			return;
	} else {
		uint l = (uint)GROUP_LINEAR();

		if ((long)l >= args.groups[0] * args.groups[1] * args.groups[2])
			return;
		g0 = l % (uint)args.groups[0];
		l /= (uint)args.groups[0];
		g1 = l % (uint)args.groups[1];
		gz = l / (uint)args.groups[1];
	}
	for (int f = 0; f < (int)args.nfold; f++) {
		const uint n = (uint)args.size[4 + f], x = gz % n;

		gz /= n;
		bt += (long)x * args.st[4 + f];
		bc += (long)x * args.sc[4 + f];
	}
	const int j0 = (int)(g0 % (uint)args.jblocks) * TTM_JB;
	const int q0 = (int)(g0 / (uint)args.jblocks) * TTM_QB;
	const int r0 = (int)g1 * TTM_RB;

	bt += (long)q0 * args.st[0] + (long)r0 * args.st[1];

	LOCAL_POOL();
	LOCAL_ARRAY(DATA_T, lds, [TTM_STAGES * TTM_STAGE], [TTM_STAGES * TTM_STAGE], 0);
#ifdef TCX_LANG_CUDA
#define LDS(i) (*lds)[i]
#else
#define LDS(i) lds[i]
#endif
	/* stage s: the T box [k][r][q], then M's chunk [k][j] */
#define TS(s, i) LDS((s) * TTM_STAGE + (i))
#define MS(s, i) LDS((s) * TTM_STAGE + TTM_KC * TTM_KS + (i))

	DATA_T acc[TTM_TR][TTM_TJ][TTM_TQ];

#pragma unroll
	for (int i = 0; i < TTM_TR; i++)
#pragma unroll
		for (int y = 0; y < TTM_TJ; y++)
#pragma unroll
			for (int x = 0; x < TTM_TQ; x++)
				acc[i][y][x] = 0;

	/* the products of the chunk in stage s */
#define TTM_PRODUCTS(s)                                                                     \
	_Pragma("unroll") for (int kk = 0; kk < TTM_KC; kk++)                               \
	{                                                                                   \
		DATA_T a[TTM_TR][TTM_TQ], b[TTM_TJ];                                        \
                                                                                            \
		_Pragma("unroll") for (int i = 0; i < TTM_TR; i++)                          \
			_Pragma("unroll") for (int x = 0; x < TTM_TQ; x++) a[i][x] =        \
			    TS(s, kk * TTM_KS + (tr * TTM_TR + i) * TTM_QS + tq * TTM_TQ + x); \
		_Pragma("unroll") for (int y = 0; y < TTM_TJ; y++) b[y] =                   \
		    MS(s, kk * TTM_JB + tj * TTM_TJ + y);                                   \
		_Pragma("unroll") for (int i = 0; i < TTM_TR; i++)                          \
			_Pragma("unroll") for (int y = 0; y < TTM_TJ; y++)                  \
				_Pragma("unroll") for (int x = 0; x < TTM_TQ; x++)          \
					acc[i][y][x] = FMA(a[i][x], b[y], acc[i][y][x]);    \
	}
	/* This work-item's elements of every chunk, worked out once: element
	 * i of the T box (e = t + i TTM_NT) at offset to[i] from the box's
	 * origin at k = 0 (-1 where it lies outside T's q and r or past the
	 * box; the host saw to it that a box's offsets fit in an int), and at
	 * tl[i] in a stage, with its k above bit 24 for the chunk that runs
	 * past K; the same for M's elements (m = t + i TTM_NT of the chunk's
	 * TTM_KC x TTM_JB, consecutive work-items along M's unit stride). */
	int to[TTM_TPER], tl[TTM_TPER], mo[TTM_MPER], ml[TTM_MPER];

#pragma unroll
	for (int i = 0; i < TTM_TPER; i++) {
		const int e = t + i * TTM_NT;
		int qq, rr, kk;

		TTM_PLACE(e, qq, rr, kk);
		tl[i] = (kk << 24) | (kk * TTM_KS + rr * TTM_QS + qq);
		to[i] = (TTM_TE % TTM_NT == 0 || e < TTM_TE) && q0 + qq < Q && r0 + rr < R
				? qq * (int)args.st[0] + rr * (int)args.st[1] + kk * (int)args.st[2]
				: -1;
	}
#pragma unroll
	for (int i = 0; i < TTM_MPER; i++) {
		const int m = t + i * TTM_NT;
		const int kk = args.sm_k == 1 ? m % TTM_KC : m / TTM_JB;
		const int jj = args.sm_k == 1 ? m / TTM_KC : m % TTM_JB;

		ml[i] = (kk << 24) | (kk * TTM_JB + jj);
		mo[i] = m < TTM_ME && j0 + jj < J ? jj * (int)args.sm_j + kk * (int)args.sm_k : -1;
	}
#define TTM_OK(o, l, k0) ((o) >= 0 && (TTM_KFULL || (k0) + ((l) >> 24) < K))
#define TTM_AT(l) ((l) & 0xffffff)

	const int nch = (K + TTM_KC - 1) / TTM_KC;
	const GLOBAL DATA_T *const Mj = M + args.off_m + j0 * args.sm_j;

#if TTM_ASYNC
	/* chunk c into stage c % TTM_STAGES, as one group of copies (an empty
	 * one past the last chunk, so that the waits count alike) */
#define TTM_ISSUE(c)                                                                        \
	do {                                                                                \
		const int s_ = (int)((c) % TTM_STAGES);                                     \
		const int k0_ = (c) * TTM_KC;                                               \
                                                                                            \
		if ((c) < nch) {                                                            \
			const GLOBAL DATA_T *Tk_ = T + bt + (long)k0_ * args.st[2];         \
			const GLOBAL DATA_T *Mk_ = Mj + (long)k0_ * args.sm_k;              \
                                                                                            \
			_Pragma("unroll") for (int i_ = 0; i_ < TTM_TPER; i_++)             \
			{                                                                   \
				const int ok_ = TTM_OK(to[i_], tl[i_], k0_);                \
                                                                                            \
				if (TTM_TE % TTM_NT == 0 || t + i_ * TTM_NT < TTM_TE)       \
					ttm_cp(&TS(s_, TTM_AT(tl[i_])), ok_ ? Tk_ + to[i_] : T, \
					       ok_);                                        \
			}                                                                   \
			_Pragma("unroll") for (int i_ = 0; i_ < TTM_MPER; i_++)             \
			{                                                                   \
				const int ok_ = TTM_OK(mo[i_], ml[i_], k0_);                \
                                                                                            \
				if (TTM_ME % TTM_NT == 0 || t + i_ * TTM_NT < TTM_ME)       \
					ttm_cp(&MS(s_, TTM_AT(ml[i_])), ok_ ? Mk_ + mo[i_] : M, \
					       ok_);                                        \
			}                                                                   \
		}                                                                           \
		asm volatile("cp.async.commit_group;" ::: "memory");                        \
	} while (0)

	for (int c = 0; c < TTM_STAGES - 1; c++)
		TTM_ISSUE(c);
	for (int c = 0; c < nch; c++) {
		const int s = (int)(c % TTM_STAGES);

		/* chunk c has landed (this work-item's copies; the barrier makes
		 * it everyone's), and every work-item is done with chunk c - 1,
		 * whose stage the next issue refills */
		asm volatile("cp.async.wait_group %0;" ::"n"(TTM_STAGES - 2) : "memory");
		BARRIER();
		TTM_ISSUE(c + TTM_STAGES - 1);
		TTM_PRODUCTS(s)
	}
#undef TTM_ISSUE
#else
	for (int c = 0; c < nch; c++) {
		const int k0 = c * TTM_KC;
		const GLOBAL DATA_T *Tk = T + bt + k0 * args.st[2];
		const GLOBAL DATA_T *Mk = Mj + k0 * args.sm_k;
		DATA_T tv[TTM_TPER], mv[TTM_MPER];

		/* all of this work-item's loads first, then its stores */
#pragma unroll
		for (int i = 0; i < TTM_TPER; i++)
			tv[i] = TTM_OK(to[i], tl[i], k0) ? Tk[to[i]] : (DATA_T)0;
#pragma unroll
		for (int i = 0; i < TTM_MPER; i++)
			mv[i] = TTM_OK(mo[i], ml[i], k0) ? Mk[mo[i]] : (DATA_T)0;
		BARRIER(); /* the chunk before is multiplied */
#pragma unroll
		for (int i = 0; i < TTM_TPER; i++)
			if (TTM_TE % TTM_NT == 0 || t + i * TTM_NT < TTM_TE)
				TS(0, TTM_AT(tl[i])) = tv[i];
#pragma unroll
		for (int i = 0; i < TTM_MPER; i++)
			if (TTM_ME % TTM_NT == 0 || t + i * TTM_NT < TTM_ME)
				MS(0, TTM_AT(ml[i])) = mv[i];
		BARRIER();
		TTM_PRODUCTS(0)
	}
#endif
#undef TTM_OK
#undef TTM_AT
#undef TTM_PRODUCTS

	/* C = alpha * acc + beta * C; C is not read when beta is 0 */
	const int qw = q0 + tq * TTM_TQ;
#if TTM_VEC
	/* the host saw to the strides; the base is the caller's */
	const int cvec = (size_t)(C + args.off_c) % (TTM_TQ * sizeof(DATA_T)) == 0 &&
			 args.off_c % TTM_TQ == 0;
#endif

#pragma unroll
	for (int i = 0; i < TTM_TR; i++) {
		const int r = r0 + tr * TTM_TR + i;

		if (r >= R)
			continue;
#pragma unroll
		for (int y = 0; y < TTM_TJ; y++) {
			const int j = j0 + tj * TTM_TJ + y;
			const long o = bc + (long)qw * args.sc[0] + (long)r * args.sc[1] +
				       (long)j * args.sc[3];

			if (j >= J)
				continue;
#if TTM_VEC
			if (cvec && qw + TTM_TQ <= Q) {
				VECN(DATA_T, TTM_TQ) v;

#pragma unroll
				for (int x = 0; x < TTM_TQ; x++)
					VLANE(DATA_T, v, x) = alpha * acc[i][y][x];
				if (beta != (DATA_T)0) {
					const VECN(DATA_T, TTM_TQ) c =
					    *(const GLOBAL VECN(DATA_T, TTM_TQ) *)(C + o);

#pragma unroll
					for (int x = 0; x < TTM_TQ; x++)
						VLANE(DATA_T, v, x) += beta * VLANE(DATA_T, c, x);
				}
				*(GLOBAL VECN(DATA_T, TTM_TQ) *)(C + o) = v;
				continue;
			}
#endif
#pragma unroll
			for (int x = 0; x < TTM_TQ; x++) {
				const long oc = o + x * args.sc[0];

				if (qw + x >= Q)
					break;
				C[oc] = beta != (DATA_T)0 ? alpha * acc[i][y][x] + beta * C[oc]
							  : alpha * acc[i][y][x];
			}
		}
	}
#undef TS
#undef MS
#undef LDS
}

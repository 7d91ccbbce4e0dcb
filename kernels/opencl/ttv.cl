/* ttv.cl - tensor times vector: C[O] = alpha * sum_S T[O, S] V[S, batch]
 * + beta * C[O], where one operand (V) has no free index: its indices are
 * summed (S) or batch indices, which are also C's and T's.  A matrix-vector
 * product, a batch of them, a dot product, in any layout, real types.
 * Bound by memory: T is read once and C written once, where a contraction
 * kernel's tile would waste all but one of its columns.
 *
 * Slots (struct tcx_ttv_args, common/abi.h): 0 .. TTV_NO - 1 the outputs
 * (C's indices; slot 0 is q, the one T moves fastest along), then
 * TTV_NS summed slots, T's fastest first; the host merged the slots that
 * move together everywhere.  A work-group is TTV_QL lanes along q times
 * TTV_KL lanes along the sum, the sum's lanes fastest where T moves
 * fastest along a summed index (TTV_KFAST), so that consecutive work-items
 * read consecutive addresses of T either way.  Each lane sums every
 * TTV_KL-th position of the sum, walking the summed slots' indices as an
 * odometer advanced by TTV_KL (its digits in args.kstep), TTV_UNROLL
 * positions at a time so that their loads are in flight together; the
 * lanes of one q then add their sums in local memory.  Where C has too few
 * elements to fill a GPU, TTV_SPLIT: the sum is cut into args.split parts
 * of args.chunk positions, a work-group for each part, which write their
 * sums to the workspace W; tcx_ttv_reduce then adds each element's parts
 * in order (deterministic) and writes C.
 *
 * One text for OpenCL C 1.2 and CUDA/HIP C++ (common/port.h,
 * cuda/compat.h); planned by lib/gen/ttv.c. */

#ifndef TTV_DOUBLE
#define TTV_DOUBLE 0
#endif
#if TTV_DOUBLE
#ifndef TCX_LANG_CUDA
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define DATA_T double
#else
#define DATA_T float
#endif
#ifndef TTV_NO
#define TTV_NO 1 /* output slots */
#endif
#ifndef TTV_NS
#define TTV_NS 1 /* summed slots */
#endif
#ifndef TTV_QL
#define TTV_QL 1 /* lanes along q */
#endif
#ifndef TTV_KL
#define TTV_KL 256 /* lanes along the sum */
#endif
#ifndef TTV_KFAST
#define TTV_KFAST 1 /* the sum's lanes fastest */
#endif
#ifndef TTV_UNROLL
#define TTV_UNROLL 4 /* positions of the sum a lane loads at once */
#endif
#ifndef TTV_SPLIT
#define TTV_SPLIT 0 /* the sum in parts, through W and tcx_ttv_reduce */
#endif
#ifndef TTV_REDUCE_WG
#define TTV_REDUCE_WG 256 /* work-items of tcx_ttv_reduce's work-groups */
#endif
#define TTV_WG (TTV_QL * TTV_KL)

/* the odometer one step of TTV_KL on: digit s of the summed indices and
 * the offsets in T and V move by kstep's digits, carrying where a digit
 * passes its slot's extent (one subtraction: digit and step are below it) */
#if TTV_NS == 1
#define TTV_ADVANCE(dg, ot, ov)                                                             \
	do {                                                                                \
		ot += (long)TTV_KL * args.st[TTV_NO];                                       \
		ov += (long)TTV_KL * args.sv[TTV_NO];                                       \
	} while (0)
#else
#define TTV_ADVANCE(dg, ot, ov)                                                             \
	do {                                                                                \
		int cy_ = 0;                                                                \
                                                                                            \
		_Pragma("unroll") for (int s_ = 0; s_ < TTV_NS; s_++)                       \
		{                                                                           \
			const int n_ = (int)args.size[TTV_NO + s_];                         \
			const int d_ = (int)args.kstep[s_] + cy_;                           \
                                                                                            \
			dg[s_] += d_;                                                       \
			ot += (long)d_ * args.st[TTV_NO + s_];                              \
			ov += (long)d_ * args.sv[TTV_NO + s_];                              \
			cy_ = dg[s_] >= n_;                                                 \
			if (cy_) {                                                          \
				dg[s_] -= n_;                                               \
				ot -= (long)n_ * args.st[TTV_NO + s_];                      \
				ov -= (long)n_ * args.sv[TTV_NO + s_];                      \
			}                                                                   \
		}                                                                           \
	} while (0)
#endif

KERNEL WG_SIZE_HINT(TTV_WG, 1, 1) void tcx_ttv(TCX_TTV_KERNEL_PARAMS)
{
	const int t = (int)LID(0);
#if TTV_KFAST
	const int kl = t % TTV_KL, ql = t / TTV_KL;
#else
	const int ql = t % TTV_QL, kl = t / TTV_QL;
#endif
	LOCAL_MEM DATA_T red[TTV_WG];
	long g = (long)GROUP_LINEAR();

	if (g >= args.groups)
		return; /* the whole work-group: no barrier below is skipped by some */

	/* its part of the sum: [lo, hi) */
#if TTV_SPLIT
	const long part = g / args.pgroups;
	const long lo = part * args.chunk;
	const long hi = lo + args.chunk < args.total ? lo + args.chunk : args.total;

	g -= part * args.pgroups;
#else
	const long lo = 0, hi = args.total;
#endif
	/* the work-group's outputs: q's block fastest, then the other output
	 * slots, decoded once (as tcx_ttv_reduce decodes them) */
	const long q = (g % args.qblocks) * TTV_QL + ql;
	long bt = args.off_t, bv = args.off_v, bc = args.off_c;

	g /= args.qblocks;
#if TTV_SPLIT
	const long oidx = g * args.size[0] + q; /* its element of C, counted */
#endif
#pragma unroll
	for (int s = 1; s < TTV_NO; s++) {
		const long n = args.size[s], x = g % n;

		g /= n;
		bt += x * args.st[s];
		bv += x * args.sv[s];
		bc += x * args.sc[s];
	}
	const int live = q < args.size[0];

	bt += q * args.st[0];
	bv += q * args.sv[0];
	bc += q * args.sc[0];

	/* this lane's first position of the sum, lo + kl, as the summed
	 * slots' digits (the host saw to it that the extents fit in an int) */
	const long total = hi;
	long ot = bt, ov = bv, pos = lo + kl;
#if TTV_NS > 1
	int dg[TTV_NS];
	{
		long e = pos;

#pragma unroll
		for (int s = 0; s < TTV_NS; s++) {
			const long n = args.size[TTV_NO + s];

			dg[s] = (int)(e % n);
			e /= n;
			ot += (long)dg[s] * args.st[TTV_NO + s];
			ov += (long)dg[s] * args.sv[TTV_NO + s];
		}
	}
#else
	ot += pos * args.st[TTV_NO];
	ov += pos * args.sv[TTV_NO];
#endif
	DATA_T acc[TTV_UNROLL];

#pragma unroll
	for (int u = 0; u < TTV_UNROLL; u++)
		acc[u] = 0;
	if (live) {
		/* TTV_UNROLL positions a round: their offsets first, then the
		 * loads, then the products */
		for (; pos + (long)(TTV_UNROLL - 1) * TTV_KL < total;
		     pos += (long)TTV_UNROLL * TTV_KL) {
			long o[TTV_UNROLL], w[TTV_UNROLL];
			DATA_T x[TTV_UNROLL], y[TTV_UNROLL];

#pragma unroll
			for (int u = 0; u < TTV_UNROLL; u++) {
				o[u] = ot;
				w[u] = ov;
				TTV_ADVANCE(dg, ot, ov);
			}
#pragma unroll
			for (int u = 0; u < TTV_UNROLL; u++) {
				x[u] = T[o[u]];
				y[u] = V[w[u]];
			}
#pragma unroll
			for (int u = 0; u < TTV_UNROLL; u++)
				acc[u] = FMA(x[u], y[u], acc[u]);
		}
		for (; pos < total; pos += TTV_KL) {
			acc[0] = FMA(T[ot], V[ov], acc[0]);
			TTV_ADVANCE(dg, ot, ov);
		}
	}
#pragma unroll
	for (int u = 1; u < TTV_UNROLL; u++)
		acc[0] += acc[u];

	/* the lanes of one q add their sums, halving */
#if TTV_KL > 1
#if TTV_KFAST
#define TTV_RED(k) red[ql * TTV_KL + (k)]
#else
#define TTV_RED(k) red[(k) * TTV_QL + ql]
#endif
	TTV_RED(kl) = acc[0];
	BARRIER();
#pragma unroll
	for (int h = TTV_KL / 2; h > 0; h /= 2) {
		if (kl < h)
			TTV_RED(kl) += TTV_RED(kl + h);
		BARRIER();
	}
	acc[0] = TTV_RED(0);
#undef TTV_RED
#endif
	(void)red;

#if TTV_SPLIT
	(void)bc;
	if (live && kl == 0)
		W[part * args.nout + oidx] = acc[0];
#else
	/* C = alpha * sum + beta * C; C is not read when beta is 0 */
	(void)W;
	if (live && kl == 0)
		C[bc] = beta == (DATA_T)0 ? alpha * acc[0] : alpha * acc[0] + beta * C[bc];
#endif
}

/* TTV_SPLIT: C = alpha * (the parts' sums, in order) + beta * C, a
 * work-item an element of C, counted as tcx_ttv counts them. */
KERNEL WG_SIZE_HINT(TTV_REDUCE_WG, 1, 1) void tcx_ttv_reduce(TCX_TTV_REDUCE_PARAMS)
{
	const long o = (long)GROUP_LINEAR() * TTV_REDUCE_WG + LID(0);

	if (o >= args.nout)
		return;
	long r = o / args.size[0], bc = args.off_c + (o % args.size[0]) * args.sc[0];

#pragma unroll
	for (int s = 1; s < TTV_NO; s++) {
		const long n = args.size[s];

		bc += (r % n) * args.sc[s];
		r /= n;
	}
	DATA_T sum = 0;

	for (long p = 0; p < args.split; p++)
		sum += W[p * args.nout + o];
	C[bc] = beta == (DATA_T)0 ? alpha * sum : alpha * sum + beta * C[bc];
}

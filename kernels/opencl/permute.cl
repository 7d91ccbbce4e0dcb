/* permute.cl - the tensor permute: out[perm(x)] = in[x], for any rank,
 * sizes and strides, bound by memory bandwidth.
 *
 * The kernel moves bits, never values: its unit is a word of PERM_WORD
 * bytes (2, 4, 8 or 16), an element or several elements the host fused
 * into one along an index that is contiguous in both tensors (its vector
 * width).  Conjugation, for complex types, flips the top bit of the
 * 8-byte lanes that hold imaginary parts (args.conj says which), so one
 * program serves every type of its word size, conjugated or not.
 *
 * Sizes and strides (in words) arrive in struct tcx_permute_args by slot
 * (common/abi.h): slot 0 is the index moving fastest in the input, slot 1
 * the one moving fastest in the output when that is another index, and
 * the other slots are folded into dimension 2 of the work-group grid and
 * decoded once per work-group.  Two paths, chosen by the host (lib/gen/
 * permute.c):
 *   - PERM_TILE 0, the straight copy: the same index moves fastest in both
 *     tensors; work-items walk it (dimension 0) and slot 1 (dimension 1),
 *     PERM_REP0 x PERM_REP1 words each, all loads before all stores.
 *   - PERM_TILE > 0, the transpose: a work-group of PERM_NT work-items
 *     reads a PERM_TILE x PERM_TILE1 tile along slot 0 (coalesced in the
 *     input) into local memory, padded by PERM_PAD words a row against
 *     bank conflicts, and writes it along slot 1 (coalesced in the output).
 * A launch may lay the work-groups out over another grid within the
 * device's limits (PERM_DECODE, as the contraction kernels do); a spare
 * group past the last leaves at once.
 *
 * Offsets are 64-bit (long); so is the arithmetic on them.  One text for
 * OpenCL C 1.2 and CUDA/HIP C++ (common/port.h, cuda/compat.h).
 */

/* ---- tunables ----------------------------------------------------------- */
#ifndef PERM_WORD
#define PERM_WORD 4 /* bytes the kernel moves at once */
#endif
#ifndef PERM_TILE
#define PERM_TILE 0 /* the transpose's tile, words along slot 0; 0: the straight copy */
#endif
#ifndef PERM_PAD
#define PERM_PAD 1 /* the transpose: words past each tile row in local memory */
#endif
#ifndef PERM_WG0
#define PERM_WG0 64 /* the copy: work-items along slot 0 */
#endif
#ifndef PERM_WG1
#define PERM_WG1 4 /* and along slot 1 */
#endif
#ifndef PERM_REP0
#define PERM_REP0 1 /* the copy: words per work-item along slot 0 */
#endif
#ifndef PERM_REP1
#define PERM_REP1 1 /* and along slot 1 */
#endif
#ifndef PERM_UNIT0
#define PERM_UNIT0 0 /* slot 0's stride is 1 in the input (and, copying, in the output) */
#endif
#ifndef PERM_UNIT1
#define PERM_UNIT1 0 /* the transpose: slot 1's stride is 1 in the output */
#endif
/* ---- the word ----------------------------------------------------------- */
#if PERM_WORD == 2
#define PERM_T ushort
#elif PERM_WORD == 4
#define PERM_T uint
#elif PERM_WORD == 8
#define PERM_T unsigned long
#elif PERM_WORD == 16
#ifdef TCX_LANG_CUDA
struct alignas(16) tcx_perm_w16 {
	unsigned long x, y;
};
#define PERM_T struct tcx_perm_w16
#else
#define PERM_T ulong2
#endif
#else
#error "PERM_WORD must be 2, 4, 8 or 16"
#endif

/* a word as stored, its 8-byte lanes' top bits flipped as args.conj says
 * (bit k: lane k, for the imaginary parts of complex elements) */
#if PERM_WORD < 8
#define PERM_CONJ(w) (w)
#define PERM_FLIPS() ((void)0)
#elif PERM_WORD == 8
#define PERM_CONJ(w) ((w) ^ flip0)
#define PERM_FLIPS() const unsigned long flip0 = (unsigned long)(args.conj & 1) << 63
#else
INLINE PERM_T perm_conj(PERM_T w, unsigned long flip0, unsigned long flip1)
{
	w.x ^= flip0;
	w.y ^= flip1;
	return w;
}
#define PERM_CONJ(w) perm_conj((w), flip0, flip1)
#define PERM_FLIPS()                                                                        \
	const unsigned long flip0 = (unsigned long)(args.conj & 1) << 63;                  \
	const unsigned long flip1 = (unsigned long)((args.conj >> 1) & 1) << 63
#endif

/* ---- the work-group's place --------------------------------------------- */

/* g0, g1 and gz: the work-group's place along slots 0 and 1 and the folded
 * ones, from its number over the launch's grid (GROUP_LINEAR); a spare
 * group past the last leaves, all of its work-items, before any barrier. */
#define PERM_DECODE()                                                                       \
	do {                                                                                \
		if (NGROUPS(0) == args.groups[0] && NGROUPS(1) == args.groups[1]) {        \
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

/* bi, bo: the offsets of the work-group's origin in the folded slots */
#define PERM_FOLD()                                                                         \
	do {                                                                                \
		for (int f_ = 0; f_ < (int)args.nfold; f_++) {                              \
			const long n_ = args.size[2 + f_], x_ = gz % n_;                    \
                                                                                            \
			gz /= n_;                                                           \
			bi += x_ * args.si[2 + f_];                                         \
			bo += x_ * args.so[2 + f_];                                         \
		}                                                                           \
	} while (0)

#if PERM_TILE == 0
/* ---- the straight copy -------------------------------------------------- */
#define PERM_NT (PERM_WG0 * PERM_WG1)
KERNEL void tcx_permute(TCX_PERMUTE_KERNEL_PARAMS) WG_SIZE_HINT(PERM_WG0, PERM_WG1, 1);

KERNEL WG_SIZE_HINT(PERM_WG0, PERM_WG1, 1) void tcx_permute(TCX_PERMUTE_KERNEL_PARAMS)
{
	long g0, g1, gz, bi = args.off_in, bo = args.off_out;
	const long n0 = args.size[0], n1 = args.size[1];
	PERM_T v[PERM_REP1][PERM_REP0];
	PERM_FLIPS();

	PERM_DECODE();
	PERM_FOLD();
	{
		const long x0 = g0 * (PERM_WG0 * PERM_REP0) + LID(0);
		const long y0 = g1 * (PERM_WG1 * PERM_REP1) + LID(1);

#pragma unroll
		for (int r1 = 0; r1 < PERM_REP1; r1++)
#pragma unroll
			for (int r0 = 0; r0 < PERM_REP0; r0++) {
				const long x = x0 + r0 * PERM_WG0, y = y0 + r1 * PERM_WG1;

				if (x < n0 && y < n1)
#if PERM_UNIT0
					v[r1][r0] = in[bi + x + y * args.si[1]];
#else
					v[r1][r0] = in[bi + x * args.si[0] + y * args.si[1]];
#endif
			}
#pragma unroll
		for (int r1 = 0; r1 < PERM_REP1; r1++)
#pragma unroll
			for (int r0 = 0; r0 < PERM_REP0; r0++) {
				const long x = x0 + r0 * PERM_WG0, y = y0 + r1 * PERM_WG1;

				if (x < n0 && y < n1)
#if PERM_UNIT0
					out[bo + x + y * args.so[1]] = PERM_CONJ(v[r1][r0]);
#else
					out[bo + x * args.so[0] + y * args.so[1]] =
					    PERM_CONJ(v[r1][r0]);
#endif
			}
	}
}

#else
/* ---- the transpose through local memory --------------------------------- */
/* A tile of PERM_TILE words along slot 0 by PERM_TILE1 along slot 1, moved
 * by a work-group of PERM_TILE x PERM_RROWS work-items: PERM_RROWS rows of
 * the tile a pass to read (a warp reads along the input's fastest index),
 * PERM_NT / PERM_TILE1 columns a pass to write (along the output's).  The
 * host sizes the tile to a short extent whole (24 x 48 for a 24-long and a
 * 48-long index) rather than square, so that no tile is mostly past the
 * edge.  Each work-item's place in the tile is worked out once: the passes
 * add a constant (where its words are 4 bytes, the permute is bound by
 * issue as much as by memory). */
#ifndef PERM_TILE1
#define PERM_TILE1 PERM_TILE
#endif
#ifndef PERM_RROWS
#define PERM_RROWS 8 /* the transpose: work-items along dimension 1, rows read a pass */
#endif
#define PERM_NT (PERM_TILE * PERM_RROWS)
#define PERM_WCOLS (PERM_NT / PERM_TILE1) /* columns written a pass */
#if PERM_WCOLS < 1
#error "PERM_TILE * PERM_RROWS must be at least PERM_TILE1"
#endif
KERNEL void tcx_permute(TCX_PERMUTE_KERNEL_PARAMS) WG_SIZE_HINT(PERM_TILE, PERM_RROWS, 1);

KERNEL WG_SIZE_HINT(PERM_TILE, PERM_RROWS, 1) void tcx_permute(TCX_PERMUTE_KERNEL_PARAMS)
{
	long g0, g1, gz, bi = args.off_in, bo = args.off_out;
	const long na = args.size[0], nb = args.size[1];
#if PERM_TILE1 != PERM_TILE
	const int t = (int)(LID(0) + LID(1) * PERM_TILE);
#endif
	PERM_FLIPS();

	PERM_DECODE();
	PERM_FOLD();

	LOCAL_POOL();
	/* tile[b][a]: a row per element of slot 1, read along slot 0 */
	LOCAL_ARRAY(PERM_T, tile, [PERM_TILE1][PERM_TILE + PERM_PAD], [PERM_TILE + PERM_PAD], 0);
	const long a0 = g0 * PERM_TILE, b0 = g1 * PERM_TILE1;

	/* the reads: work-item (tx, ty) reads word tx of rows ty, ty + RROWS, .. */
	{
		const int tx = (int)LID(0), ty = (int)LID(1);
		const long a = a0 + tx;
#if PERM_UNIT0
		const long pa = bi + a;
#else
		const long pa = bi + a * args.si[0];
#endif

#pragma unroll
		for (int r = 0; r < PERM_TILE1; r += PERM_RROWS) {
			const long b = b0 + ty + r;

			if ((PERM_TILE1 % PERM_RROWS == 0 || ty + r < PERM_TILE1) && a < na &&
			    b < nb)
				tile[ty + r][tx] = in[pa + b * args.si[1]];
		}
	}
	BARRIER();
	/* the writes: work-item (tx, ty) writes word tx of columns ty, ty +
	 * WCOLS, .., the tile read down a column (a row's length in banks is
	 * odd: the host's pad) */
#if PERM_TILE1 == PERM_TILE
	{ /* square: the work-items' places as they read */
		const int tx = (int)LID(0), ty = (int)LID(1);
#else
	if (t < PERM_WCOLS * PERM_TILE1) {
		const int tx = t % PERM_TILE1, ty = t / PERM_TILE1;
#endif
		const long b = b0 + tx;
#if PERM_UNIT1
		const long pb = bo + b;
#else
		const long pb = bo + b * args.so[1];
#endif

#pragma unroll
		for (int r = 0; r < PERM_TILE; r += PERM_WCOLS) {
			const long a = a0 + ty + r;

			if ((PERM_TILE % PERM_WCOLS == 0 || ty + r < PERM_TILE) && a < na &&
			    b < nb)
				out[pb + a * args.so[0]] = PERM_CONJ(tile[tx][ty + r]);
		}
	}
}
#endif /* PERM_TILE */

/* peak.cl - chains of fused multiply-adds, for a device's arithmetic peak
 * (tcx devices --measure).  Each work-item runs CHAINS independent chains
 * (enough to hide the FMA latency) on vectors of VW elements of REAL, ITERS
 * times (8 FMAs per chain per iteration): 2 * 8 * CHAINS * VW * iters flops.
 * v = v * a + b with 0 < a < 1 stays near b / (1 - a): no overflow, no
 * subnormals.  The sum is stored so that nothing is optimised away. */
#ifndef REAL
#define REAL float
#endif
#ifndef VW
#define VW 8
#endif

#if VW == 1
#define VEC REAL
#else
#define VEC TCX_CAT(REAL, VW)
#endif

#define CHAINS 8
#define STEP(v) v = FMA(v, va, vb)
#define STEP_ALL()   \
	do {         \
		STEP(v0); \
		STEP(v1); \
		STEP(v2); \
		STEP(v3); \
		STEP(v4); \
		STEP(v5); \
		STEP(v6); \
		STEP(v7); \
	} while (0)

KERNEL void tcx_peak(GLOBAL REAL *out, REAL a, REAL b, int iters)
{
	long gid = (long)get_global_id(0);
	VEC va = (VEC)(a), vb = (VEC)(b);
	VEC v0 = (VEC)((REAL)(gid & 7)), v1 = v0 + (VEC)(1), v2 = v0 + (VEC)(2);
	VEC v3 = v0 + (VEC)(3), v4 = v0 + (VEC)(4), v5 = v0 + (VEC)(5);
	VEC v6 = v0 + (VEC)(6), v7 = v0 + (VEC)(7);
	VEC s;

	for (int i = 0; i < iters; i++) {
		STEP_ALL();
		STEP_ALL();
		STEP_ALL();
		STEP_ALL();
		STEP_ALL();
		STEP_ALL();
		STEP_ALL();
		STEP_ALL();
	}
	s = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;
#if VW == 1
	out[gid] = s;
#else
	out[gid] = s.s0 + s.s1;
#endif
}

/* arith.c - the arithmetic of a solution and its predicted error
 * (arith.h). */
#include <math.h>
#include <string.h>

#include "common/common.h"
#include "plan/arith.h"

static const char *const arith_names[ARITH_COUNT] = {
	"tf32", "tf32x3", "fp32-simt", "fp16", "bf16", "fp64",
};

const char *arith_name(enum arith a)
{
	return a >= 0 && a < ARITH_COUNT ? arith_names[a] : "unknown";
}

bool arith_parse(const char *s, enum arith *out)
{
	for (int k = 0; k < ARITH_COUNT; k++)
		if (strcmp(s, arith_names[k]) == 0) {
			*out = (enum arith)k;
			return true;
		}
	return false;
}

enum arith arith_of(enum tcx_dtype t, const struct solution *s)
{
	switch (t) {
	case TCX_DTYPE_H:
		return ARITH_FP16;
	case TCX_DTYPE_B:
		return ARITH_BF16;
	case TCX_DTYPE_D:
	case TCX_DTYPE_Z:
		return ARITH_FP64;
	case TCX_DTYPE_S:
		if (s->mi[0] > 0)
			return s->tf32x3 ? ARITH_TF32X3 : ARITH_TF32;
		return ARITH_FP32;
	default:
		return ARITH_FP32;
	}
}

enum arith arith_default(enum tcx_dtype t)
{
	struct solution s;

	if (t != TCX_DTYPE_S) {
		solution_default(&s);
		return arith_of(t, &s);
	}
	return ARITH_TF32X3;
}

bool arith_next(enum tcx_dtype t, enum arith a, enum arith *out)
{
	if (t != TCX_DTYPE_S || a >= ARITH_FP32)
		return false;
	*out = (enum arith)(a + 1);
	return true;
}

/* Two sources of error, each relative to mag = sum |a b| of the n products:
 *
 *  - the inputs' rounding inside the kernel (tf32: 10 fraction bits,
 *    u_in = 2^-11 rounded, 2^-10 truncated; TF32x3 keeps about 21 bits,
 *    u_in = 1.25 * 2^-21; none for the other arithmetics, whose inputs
 *    are the data as given).  Each product a b carries an error of up to
 *    2 u_in |a b| with a sign that is a coin toss, so n of them add up to
 *    about sqrt(n) u_in |a b| against mag's n |a b|: u_in / sqrt(n), and
 *    the largest over many elements some 3 times that (NumPy, 65536
 *    elements of random uniform [-1, 1) data: 3.1 u_in / sqrt(n) for n
 *    from 64 to 16384, rounded tf32);
 *  - the accumulation in the sum's type (u_acc: 2^-24 for fp32 sums, fp16
 *    and bf16 included, 2^-53 for fp64): on data of one sign the partial
 *    sums grow with the sum and their roundings add up to about
 *    u_acc sqrt(n) of mag (data of random sign keeps it near 4 u_acc).
 *    TF32x3 sums three products for each, complex types two real ones.
 *
 * The prediction is their sum: about 2^-11 * 3 / sqrt(n) for tf32 (2.3e-5
 * at n = 4096), 2^-24 sqrt(n) for fp32 (3.8e-6 at n = 4096). */
double arith_predict(enum tcx_dtype t, enum arith a, bool trunc_q, int64_t products)
{
	const bool wide = t == TCX_DTYPE_D || t == TCX_DTYPE_Z;
	const bool cplx = t == TCX_DTYPE_C || t == TCX_DTYPE_Z;
	const double u_acc = wide ? ldexp(1.0, -53) : ldexp(1.0, -24);
	double n = (double)(products > 0 ? products : 1) * (cplx ? 2 : 1), u_in = 0, sums = n;

	if (a == ARITH_TF32)
		u_in = trunc_q ? ldexp(1.0, -10) : ldexp(1.0, -11);
	else if (a == ARITH_TF32X3)
		u_in = 1.25 * ldexp(1.0, -21);
	if (a == ARITH_TF32X3)
		sums *= 3;
	return 3 * u_in / sqrt(n) + u_acc * sqrt(sums);
}

/* arith.h - the arithmetic a solution computes in (fp32 on the SIMT FMA
 * units, TF32x3 or plain tf32 on the tensor cores, or the one arithmetic
 * the other types have), the typical error each is predicted to leave in
 * a result, and the order in which a result that misses an accuracy falls
 * back to a more accurate one.
 *
 * The error of a result (tcx's "relative error", what --accuracy bounds)
 * is the largest, over the elements checked, of |got - ref| / mag: ref the
 * fp64 host reference and mag the sum of |a b| over the products summed
 * into the element (alpha and beta's terms included, as validate_run
 * computes it).  Dividing by the products' magnitude rather than by |ref|
 * keeps the measure meaningful where the sum cancels to near 0. */
#ifndef TCX_PLAN_ARITH_H
#define TCX_PLAN_ARITH_H

#include <stdbool.h>
#include <stdint.h>

#include "gen/solution.h"

/* From the least accurate to the most; never renumbered (a logic file
 * records the names, arith_name). */
enum arith {
	ARITH_TF32,   /* fp32 data on the tensor cores, inputs rounded to tf32 */
	ARITH_TF32X3, /* fp32 data on the tensor cores as hi + lo in tf32 (TF32x3) */
	ARITH_FP32,   /* fp32 FMAs on the SIMT units (fp32 and complex fp32) */
	ARITH_FP16,   /* fp16 data, fp32 sums */
	ARITH_BF16,   /* bf16 data, fp32 sums */
	ARITH_FP64,   /* fp64 and complex fp64, on FMA units or fp64 tensor cores */
	ARITH_COUNT
};

/* "tf32", "tf32x3", "fp32-simt", "fp16", "bf16", "fp64". */
const char *arith_name(enum arith a);
/* The arithmetic named by arith_name's text; false for any other. */
bool arith_parse(const char *s, enum arith *out);

/* The arithmetic solution s computes type t in. */
enum arith arith_of(enum tcx_dtype t, const struct solution *s);

/* The type's own accuracy: the least accurate arithmetic tcx uses for t
 * when no accuracy is asked (fp32: TF32x3, never plain tf32). */
enum arith arith_default(enum tcx_dtype t);

/* The next more accurate arithmetic t has after a, for a result that
 * missed its bound with a (tf32 -> TF32x3 -> fp32 SIMT); false when a is
 * the most accurate t has. */
bool arith_next(enum tcx_dtype t, enum arith a, enum arith *out);

/* Whether a is at least as accurate as floor (both of one type). */
static inline bool arith_at_least(enum arith a, enum arith floor)
{
	return a >= floor;
}

/* The typical error (the measure above) predicted for a result of type t
 * computed in arithmetic a from sums of `products` products each, on data
 * of random sign; trunc_q: the tensor cores read one operand truncated to
 * tf32, not rounded (gen.h's kernel_plan.tf32_trunc_q).  A model for
 * ranking and skipping before anything is measured, never a bound. */
double arith_predict(enum tcx_dtype t, enum arith a, bool trunc_q, int64_t products);

#endif /* TCX_PLAN_ARITH_H */

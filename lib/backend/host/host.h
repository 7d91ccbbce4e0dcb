/* host.h - the host reference: contractions computed directly in double
 * (complex double) precision on the CPU, the oracle tcx validates against. */
#ifndef TCX_HOST_H
#define TCX_HOST_H

#include "model/model.h"

/* Reads element `off` of an array of type t as (re, im) doubles. */
void host_elem_get(enum tcx_dtype t, const void *base, int64_t off, double *re, double *im);
/* Stores (re, im) into element `off`, rounding to the storage type. */
void host_elem_set(enum tcx_dtype t, void *base, int64_t off, double re, double im);

/* C = alpha * sum(op(A) * op(B)) + beta * C over problem p, data laid out by
 * p's strides.  alpha and beta are (re, im).  beta == 0 never reads C.
 * Sizes of 0 are computed as NumPy does: a bound one makes every sum empty
 * (C = beta * C), a free or batch one leaves C without elements.
 * `threads` <= 0 uses every online CPU. */
enum tcx_status host_contract(const struct problem *p, const void *a, const void *b, void *c,
			      const double alpha[2], const double beta[2], int threads,
			      struct tcx_error *err);

/* The exact (double) results at n elements of C, chosen by their linear
 * index in C's index space (C's indices in memory order, fastest first).
 * `c_in` is C before the operation (read only when beta != 0).  out gets
 * 3 doubles per element: re, im, and the magnitude |alpha| * sum |a b| +
 * |beta| |c| that bounds the rounding error. */
enum tcx_status host_reference_at(const struct problem *p, const void *a, const void *b,
				  const void *c_in, const int64_t *lin, size_t n,
				  const double alpha[2], const double beta[2], double *out,
				  int threads, struct tcx_error *err);

/* The offset in C (by p's strides) of the element with linear index lin. */
int64_t host_c_offset_of(const struct problem *p, int64_t lin, int64_t *idx);

int host_cpu_count(void);

#endif /* TCX_HOST_H */

/* notation.h - the parser for index notation: Tensile style
 * ("C[ijk]=A[ilk]*B[jlk]", "C[i,j] = Sum[k] A[i,k] * B[k,j]") and einsum
 * style ("ilk,jlk->ijk", "ij,jk"), with two inputs or one ("ij->ji",
 * "C[ik]=A[ijk]": B is then implicit, struct tcx_contraction's implicit_b). */
#ifndef TCX_NOTATION_H
#define TCX_NOTATION_H

#include "model/model.h"

#define LAYOUT_BY_STYLE (-1)

/* Parses `expr`.  `layout` is LAYOUT_BY_STYLE (Tensile: first index
 * fastest; einsum: last index fastest) or an enum layout.  On failure *out
 * is NULL and err->col is the 1-based column of the problem. */
enum tcx_status notation_parse(const char *expr, enum tcx_dtype dtype, int layout,
			       struct tcx_contraction **out, struct tcx_error *err);
void contraction_free(struct tcx_contraction *c);

#endif /* TCX_NOTATION_H */

/* ptype.h - Tensile's ProblemType mapping and tcx's contraction, both ways:
 * the one reader of the mappings that tuning configs (lib/tune/config.c)
 * and logic files (tcx's and Tensile's, lib/logic/) hold, and the one
 * writer of Tensile's derived mapping (docs/tensile-compat.md sections 2
 * and 6).
 *
 * A mapping reads as Tensile reads it: tcx's Expression
 * ("C[ijk]=A[ilk]*B[jlk]"), or OperationType GEMM (the default) from
 * TransposeA/B and Batched, or OperationType TensorContraction from
 * NumIndicesC (NumDimensionsC, its older name) and IndexAssignmentsA/B;
 * DataType a letter or Tensile's number; UseBeta (default True),
 * ComplexConjugateA/B and HighPrecisionAccumulate booleans (True/False, or
 * 0/1).  In a derived mapping (a logic file's), IndexAssignmentsA/B, which
 * Tensile derives for every OperationType, define the contraction whenever
 * they are given.  Tensile's index ids are kept: the expression built from
 * them names id 0 i, id 1 j, ..., C's ids first ("C[ijk] = Sum[l] A[ilk] *
 * B[jlk] + beta*C[ijk]").
 */
#ifndef TCX_PTYPE_H
#define TCX_PTYPE_H

#include <stdbool.h>

#include <jansson.h>

#include "common/common.h"
#include "model/model.h"
#include "yaml/ydoc.h"

/* Who wrote a mapping. */
enum ptype_origin {
	PTYPE_WRITTEN, /* a person (a tuning config): keys that do not apply, or that tcx
			  ignores, are warned about */
	PTYPE_DERIVED, /* Tensile or tcx (a logic file): the derived keys are expected, and
			  nothing is warned about */
};

/* Reads the ProblemType mapping pt of file `name` into a contraction (the
 * caller's, contraction_free).  Errors are TCX_EPARSE (or the notation's
 * status) with "NAME:LINE:COL: ..." at the key at fault. */
enum tcx_status ptype_read(const struct ynode *pt, const char *name, enum ptype_origin origin,
			   struct tcx_contraction **out, struct tcx_error *err);
/* The parts ptype_read reads, for a mapping beside tcx's own expression:
 * DataType, and a boolean key (def when absent). */
enum tcx_status ptype_dtype(const struct ynode *pt, const char *name, enum tcx_dtype *out,
			    struct tcx_error *err);
enum tcx_status ptype_bool(const struct ynode *pt, const char *key, bool def, const char *name,
			   bool *out, struct tcx_error *err);

/* Tensile's derived ProblemType mapping for c, as Tensile's logic files
 * hold it (the caller's; NULL on no memory): OperationType
 * TensorContraction, DataType as Tensile's number, NumIndicesC,
 * IndexAssignmentsA/B, UseBeta, Index0/Index1/IndexUnroll (Tensile v3.2+
 * rules), TLUA/TLUB, IndicesFree/Batch/Summation, ... in sorted order. */
json_t *ptype_derive(const struct tcx_contraction *c);

/* Tensile's index order for range rules: the ids other than DU, D0 and D1
 * ascending, then DU, D0, D1 (Index0/Index1/IndexUnroll by Tensile's rules;
 * ids a degenerate contraction lacks are left out).  Returns the count,
 * which is c's number of indices. */
int ptype_index_order(const struct tcx_contraction *c, int *order);

#endif /* TCX_PTYPE_H */

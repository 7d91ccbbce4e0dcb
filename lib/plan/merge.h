/* merge.h - index merging, the planner's first step: indices that lie next
 * to each other in every tensor they appear in, the faster one's whole
 * extent one step of the slower one's stride, are one index (TBLIS and
 * cuTENSOR do the same).  The merged problem computes exactly what the
 * original does, on the same memory, with fewer indices: `abcijk-ijma-mkbc`
 * is a four-index problem once b, c (adjacent in C and in B) and i, j
 * (adjacent in C and in A) are one index each. */
#ifndef TCX_PLAN_MERGE_H
#define TCX_PLAN_MERGE_H

#include "model/model.h"

/* Which original indices each index of a merged problem stands for. */
struct merge_map {
	int n;                                  /* indices of the merged problem */
	int count[TCX_MAX_INDICES];             /* originals behind merged index m */
	int from[TCX_MAX_INDICES][TCX_MAX_INDICES]; /* their ids, fastest first */
	int to[TCX_MAX_INDICES];                /* merged id of original id */
};

/* Merges p's indices where it can.  Indices of size 1 join any index of
 * their class.  An empty problem (an index of size 0) is left as it is.
 * When something merged, *out is a new contraction (caller frees with
 * contraction_free) whose expression names each merged index by its
 * originals ("b,c" -> "bc"), `mp` the problem on it, with the original's
 * memory (packed strides where they are packed) and `map` the
 * correspondence; when nothing merged, *out is NULL and mp, map are left
 * alone.  TCX_ENOMEM, or TCX_EINVAL for a problem it cannot describe. */
enum tcx_status problem_merge(const struct problem *p, struct tcx_contraction **out,
			      struct problem *mp, struct merge_map *map, struct tcx_error *err);

#endif /* TCX_PLAN_MERGE_H */

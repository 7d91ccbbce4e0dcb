/* ttm.h - the tensor-times-matrix kernel (kernels/opencl/ttm.cl): C[F, j]
 * = alpha * sum_k T[F, k] M[j, k] + beta * C, for real types, where one
 * operand (M) has exactly one free index j and the one summed index k,
 * and the other (T) has k and the free indices F, one of which (q) moves
 * fastest in C.  It reads T along T's own fastest index and writes C along
 * C's, whatever they are, which a contraction kernel's tile does for one
 * of the two only: the memory-bound tensor-times-matrix contractions
 * (short j and k, T and C of hundreds of MB) run at the copy rate instead
 * of through a permute of C.  The planner (plan/planner.h) predicts its
 * time beside the contraction kernel's and runs it where it is faster. */
#ifndef TCX_GEN_TTM_H
#define TCX_GEN_TTM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "common/common.h"
#include "model/model.h"
#include "gen/ttv.h"

/* struct tcx_ttm_args and tcx_ttm's parameters */
#include "kernels/common/abi.h"

/* Slots of the kernel (common/abi.h): q, r, k, j, then the folded ones. */
enum { TTM_Q, TTM_R, TTM_K, TTM_J, TTM_FOLD };

/* What ttm_plan_make decided for one problem on one device. */
struct ttm_plan {
	enum tcx_dtype dtype;
	enum tensor_role big, mat;	/* T's operand and M's */
	int nslots, nfold;		/* slots in use; the folded ones (4 ..) */
	int dim[TCX_MAX_SLOTS];		/* the problem's index per slot; -1 a stand-in */
	int64_t size[TCX_MAX_SLOTS];
	int64_t st[TCX_MAX_SLOTS], sc[TCX_MAX_SLOTS]; /* strides in T and C */
	int64_t sm_j, sm_k;		/* strides in M */
	/* the tile: q x r x j a work-group (qb x rb x jb), tq x tr x tj a
	 * work-item, kc values of k a chunk; T's fastest of q, r, k (0-2) */
	int qb, tq, rb, tr, jb, tj, kc, fast;
	bool vec;			/* C's stores by vectors of tq */
	int threads;			/* work-items of a work-group */
	int stages;			/* CUDA: chunks in local memory at once (cp.async) */
	int64_t jblocks, groups[3];	/* tcx_ttm_args' */
	size_t local[3], global[3];	/* the launch on the plan's device */
	int64_t lds_bytes;		/* local memory of a work-group */
	double util;			/* useful share of the tiles' products */
	double flops;			/* the products' floating-point operations, tiles whole */
	double bytes;			/* T, M and C moved once each (C written) */
	char lang[16];			/* "opencl" or "cuda" */
	/* ttm_plan_any's: the tensor-times-vector kernel (gen/ttv.h) runs
	 * instead, as v plans it; of the fields above only dtype, big, mat
	 * (the vector's operand), lang, util, flops and bytes are set then
	 * (jblocks 1) */
	bool vector;
	struct ttv_plan v;
};

/* Plans problem p for the kernel on device dev (NULL: an OpenCL device of
 * common limits).  TCX_EREJECT with the reason when the kernel does not
 * apply: a complex or half type, a batch index, other than one summed
 * index, an operand that is not a matrix of one free index and the summed
 * one, C's fastest index not a free index of the other operand or not of
 * unit stride, a one-operand expression; TCX_ELIMIT when the device cannot
 * take its work-group or grid. */
enum tcx_status ttm_plan_make(const struct problem *p, const struct device_info *dev,
			      struct ttm_plan *out, struct tcx_error *err);

/* ttm_plan_make's plan where it applies, else the tensor-times-vector
 * kernel's (out->vector) where that does (ttv_plan_make), else the
 * matrix kernel's reason.  ttm_source, ttm_build, ttm_ready, ttm_launch,
 * ttm_workspace_bytes, ttm_kernel and ttm_plan_str take either. */
enum tcx_status ttm_plan_any(const struct problem *p, const struct device_info *dev,
			     struct ttm_plan *out, struct tcx_error *err);

/* The plan's kernel in words: "the tensor-times-matrix kernel" (or
 * -vector). */
const char *ttm_kernel(const struct ttm_plan *t);

/* Bytes of the workspace the plan's launches need (0: none; the vector
 * kernel's split sum has one). */
size_t ttm_workspace_bytes(const struct ttm_plan *t);

/* Makes the program's kernels ready to launch (device_kernel_ready). */
enum tcx_status ttm_ready(const struct ttm_plan *t, struct device *dev, struct program *prog,
			  struct tcx_error *err);

/* The kernel's source for plan t (and the compiler's options). */
enum tcx_status ttm_source(const struct ttm_plan *t, struct strbuf *src, struct strbuf *opts,
			   struct tcx_error *err);

/* Generates and builds it (the device's program cache may hold it; then
 * *compile_s, when given, is 0). */
enum tcx_status ttm_build(const struct ttm_plan *t, struct device *dev, struct program **prog,
			  double *compile_s, struct strbuf *log, struct tcx_error *err);

/* Runs C = alpha * A B + beta * C on the problem's buffers (a, b, c as the
 * caller's A, B and C, ws a workspace of ttm_workspace_bytes or NULL where
 * that is 0; real scalars: alpha[0], beta[0]).  With event_ms non-NULL,
 * waits and gives the kernels' time. */
enum tcx_status ttm_launch(const struct ttm_plan *t, struct device *dev, struct program *prog,
			   struct buffer *a, struct buffer *b, struct buffer *c, struct buffer *ws,
			   const double alpha[2], const double beta[2], double *event_ms,
			   struct tcx_error *err);

/* "C along a, T along d, summing k against j; tile 32x8x24 (4x1x6 a
 * work-item), 8 of k a chunk, 192 work-items" */
void ttm_plan_str(const struct ttm_plan *t, const struct tcx_contraction *c, char *buf,
		  size_t len);

#endif /* TCX_GEN_TTM_H */

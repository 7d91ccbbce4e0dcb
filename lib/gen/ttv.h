/* ttv.h - the tensor-times-vector kernel (kernels/opencl/ttv.cl):
 * C[O] = alpha * sum_S T[O, S] V[S] + beta * C, for real types, where one
 * operand (V) has no free index: only summed indices and batch ones (which
 * C and T have too).  Matrix-vector products, batches of them and dot
 * products, in any layout.  A contraction kernel's tile spends all but one
 * of its columns on such a problem; this one reads T once at the rate of
 * a copy.  It runs as the tensor-times-matrix kernel does (gen/ttm.h's
 * struct ttm_plan carries it), instead of the contraction kernel, where
 * the planner predicts it faster. */
#ifndef TCX_GEN_TTV_H
#define TCX_GEN_TTV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "common/common.h"
#include "model/model.h"
/* struct tcx_ttv_args and tcx_ttv's parameters */
#include "kernels/common/abi.h"

/* What ttv_plan_make decided for one problem on one device. */
struct ttv_plan {
	enum tcx_dtype dtype;
	enum tensor_role big, vec;	/* T's operand and V's */
	int no, ns;			/* output slots (0: q), then summed ones */
	int dim[TCX_MAX_SLOTS];		/* the problem's index per slot (the first
					 * of those merged into it); -1 a stand-in */
	struct tcx_ttv_args args;	/* sizes, strides, kstep, the grid */
	int ql, kl;			/* lanes along q and along the sum */
	bool kfast;			/* T moves fastest along a summed index */
	int split;			/* parts of the sum (1: none), added by
					 * tcx_ttv_reduce through a workspace */
	size_t local[3], global[3];	/* the launch on the plan's device */
	size_t global_reduce[3];	/* tcx_ttv_reduce's, where split */
	double util;			/* busy lanes' share */
	double fill;			/* on a GPU, the share of half its SMs'
					 * work-item slots the work-groups fill
					 * (at most 1); 1 elsewhere */
	double flops;			/* the products' floating-point operations */
	double bytes;			/* T, V and C moved once each */
	char lang[16];			/* "opencl" or "cuda" */
};

/* Plans problem p for the kernel on device dev (NULL: an OpenCL device of
 * common limits).  TCX_EREJECT with the reason when the kernel does not
 * apply: a complex or half type, a one-operand expression, no summed
 * index, both operands with free indices, an empty problem; TCX_ELIMIT
 * when an extent or the grid exceeds the kernel's 32-bit counts. */
enum tcx_status ttv_plan_make(const struct problem *p, const struct device_info *dev,
			      struct ttv_plan *out, struct tcx_error *err);

/* The kernel's source for plan v (and the compiler's options). */
enum tcx_status ttv_source(const struct ttv_plan *v, struct strbuf *src, struct strbuf *opts,
			   struct tcx_error *err);

/* Bytes of the workspace a split sum needs (0: none). */
size_t ttv_workspace_bytes(const struct ttv_plan *v);

/* Makes the program's kernels ready to launch (device_kernel_ready). */
enum tcx_status ttv_ready(const struct ttv_plan *v, struct device *dev, struct program *prog,
			  struct tcx_error *err);

/* Runs C = alpha * A B + beta * C on the problem's buffers (a, b, c as the
 * caller's A, B and C, ws a workspace of ttv_workspace_bytes; real
 * scalars: alpha[0], beta[0]).  With event_ms non-NULL, waits and gives
 * the kernels' time. */
enum tcx_status ttv_launch(const struct ttv_plan *v, struct device *dev, struct program *prog,
			   struct buffer *a, struct buffer *b, struct buffer *c, struct buffer *ws,
			   const double alpha[2], const double beta[2], double *event_ms,
			   struct tcx_error *err);

/* "B the vector, C along l, T read along h; 1 x 1024 lanes (C x sum), 1 output
 * and 2 summed slots" */
void ttv_plan_str(const struct ttv_plan *v, const struct tcx_contraction *c, char *buf,
		  size_t len);

#endif /* TCX_GEN_TTV_H */

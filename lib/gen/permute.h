/* permute.h - the tensor permute: out[perm(x)] = in[x] for any rank (up to
 * TCX_MAX_INDICES), sizes and input and output strides, every element type,
 * optionally conjugated; planned here, run by kernels/opencl/permute.cl.
 * What a TTGT plan (transpose, transpose, GEMM, transpose) moves operands
 * with, at the speed of a copy.
 *
 * Dimensions are numbered as the caller numbers them: size[k],
 * stride_in[k] and stride_out[k] describe the same index k in both tensors
 * (strides in elements).  A plan merges indices that are contiguous in
 * both tensors, fuses elements into words of up to 16 bytes along an index
 * of unit stride in both (the vector width), and then either copies along
 * the index moving fastest in both, or, when the tensors' fastest indices
 * differ, transposes the two through a tile in local memory, so that reads
 * and writes both coalesce.  Every other index is folded into the grid. */
#ifndef TCX_GEN_PERMUTE_H
#define TCX_GEN_PERMUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "model/model.h"

/* struct tcx_permute_args and tcx_permute's parameters */
#include "kernels/common/abi.h"

_Static_assert(TCX_PERMUTE_SLOTS == TCX_MAX_INDICES, "a slot for every index of a tensor");

enum permute_path {
	PERMUTE_EMPTY, /* no elements: nothing to launch */
	PERMUTE_COPY,  /* one index moves fastest in both tensors: a straight copy */
	PERMUTE_TILE   /* different ones: a transpose through local memory */
};

/* What permute_plan_make decided for one permute on one device. */
struct permute_plan {
	enum tcx_dtype dtype;
	bool conj;		/* conjugated (complex types; false for the others) */
	enum permute_path path;
	int word;		/* bytes the kernel moves at once (PERM_WORD) */
	int fuse;		/* elements per word: the vector width; the offsets'
				 * alignment in elements (permute_launch) */
	int nslots, nfold;	/* slots in use; the folded ones (2 ..) */
	int dim[TCX_PERMUTE_SLOTS];	 /* the caller's index each slot stands for (its
					  * fastest, when merged); -1 for a stand-in */
	int64_t size[TCX_PERMUTE_SLOTS]; /* by slot, in words */
	int64_t si[TCX_PERMUTE_SLOTS], so[TCX_PERMUTE_SLOTS];
	int tile[2], rows, pad;	/* PERMUTE_TILE: tile[0] x tile[1] words (along slots 0
				 * and 1), moved by tile[0] x rows work-items, its
				 * rows padded by `pad` words */
	int wg[2], rep[2];	/* PERMUTE_COPY: work-items and words each along slots 0, 1 */
	bool unit0, unit1;	/* slot 0 (and 1, transposing) of unit stride */
	int conj_lanes;		/* 8-byte lanes of a word that hold imaginary parts (bits) */
	int64_t groups[3];	/* work-groups along slot 0, slot 1 and the folded slots */
	size_t local[3], global[3]; /* the launch's work sizes on the plan's device */
	int64_t lds_bytes;	/* local memory of a work-group */
	int64_t elements;	/* elements moved; each is read and written once */
	char lang[16];		/* "opencl" or "cuda" */
};

/* Plans out[perm(x)] = in[x] for a tensor of `rank` indices (0 to
 * TCX_MAX_INDICES) of sizes size[] (0 allowed: nothing to do), read with
 * strides stride_in[] (0 repeats an element) and written with stride_out[]
 * (elements; an output element must have one index, which the caller
 * ensures: tcx's problems are checked by problem_check_alias), of type t,
 * conjugated when `conj` (for complex types; real ones ignore it), for
 * device `dev`.  TCX_EINVAL for a rank, stride or type out of range,
 * TCX_ERANGE for sizes whose offsets overflow, TCX_ELIMIT when the device
 * cannot take the launch. */
enum tcx_status permute_plan_make(enum tcx_dtype t, int rank, const int64_t *size,
				  const int64_t *stride_in, const int64_t *stride_out, bool conj,
				  const struct device_info *dev, struct permute_plan *out,
				  struct tcx_error *err);

/* permute_plan_make for tensor t of problem p (not conjugated): from its
 * layout in p into strides `to` (by index id of p). */
enum tcx_status permute_plan_tensor(const struct problem *p, enum tensor_role t,
				    const int64_t *to, const struct device_info *dev,
				    struct permute_plan *out, struct tcx_error *err);

/* The plan's kernel source and compiler options: a #define prelude, then
 * common/port.h (with cuda/compat.h for the CUDA dialect), common/abi.h
 * and opencl/permute.cl (kernel_source: embedded, or $TCX_KERNEL_DIR).
 * Written to $TCX_DUMP_KERNELS/ when that is set.  Sources depend on the
 * path, the word and the tile, not on sizes or strides: plans of one shape
 * class share a program. */
enum tcx_status permute_source(const struct permute_plan *p, struct strbuf *src,
			       struct strbuf *opts, struct tcx_error *err);

/* permute_source, built through device_build (the process's and the
 * on-disk caches): *prog is the cache's, freed by device_close.  On
 * TCX_EBUILD the compiler's log is appended to `log` (NULL allowed). */
enum tcx_status permute_build(const struct permute_plan *p, struct device *dev,
			      struct program **prog, struct strbuf *log, struct tcx_error *err);

/* Runs the permute: reads `in` from element in_off, writes `out` from
 * element out_off (both multiples of p->fuse, else TCX_EINVAL), on the
 * device the plan was made for, with `prog` from permute_build.  With
 * event_ms non-NULL, waits and reports the kernel's device time (0 for an
 * empty plan, which launches nothing). */
enum tcx_status permute_launch(const struct permute_plan *p, struct device *dev,
			       struct program *prog, struct buffer *in, int64_t in_off,
			       struct buffer *out, int64_t out_off, double *event_ms,
			       struct tcx_error *err);

/* The strides of a packed tensor of `rank` indices of sizes size[] whose
 * memory order, fastest first, is order[0], order[1], ...: stride[order[0]]
 * = 1, stride[order[k + 1]] = stride[order[k]] * size[order[k]] (a size of
 * 0 counts as 1, as in problem_init).  *count (NULL allowed) gets the
 * elements.  TCX_EINVAL when order is not a permutation of 0 .. rank - 1,
 * TCX_ERANGE when the count overflows. */
enum tcx_status permute_packed_strides(int rank, const int64_t *size, const int *order,
				       int64_t *stride, int64_t *count, struct tcx_error *err);

/* One line for reports: "tile 24x64 of 4-byte words" or "copy of 16-byte
 * words (4 elements)", "empty". */
void permute_plan_str(const struct permute_plan *p, char *buf, size_t len);

#endif /* TCX_GEN_PERMUTE_H */

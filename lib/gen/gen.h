/* gen.h - the kernel generator: from a contraction and a solution to a
 * kernel plan (roles, slots, resolved parameters, validity), its source
 * (a #define prelude over the template in kernels/), and its launch. */
#ifndef TCX_GEN_H
#define TCX_GEN_H

#include "backend/backend.h"
#include "gen/solution.h"
#include "model/model.h"

/* The kernels' ABI: struct tcx_args, which holds a plan's slots (D0, D1
 * and DU, each a size-1 stand-in when the contraction has no such index,
 * then the other indices: TCX_MAX_SLOTS, all of them for sixteen batch
 * indices), the kernels' parameters and the grid's limits. */
#include "kernels/common/abi.h"

_Static_assert(TCX_MAX_SLOTS == TCX_MAX_INDICES + 3, "a slot for every index and 3 stand-ins");

/* Everything the generator decided for one (contraction, solution, device). */
struct kernel_plan {
	const struct tcx_contraction *c;
	struct solution sol;       /* with automatic values resolved */
	struct classification cls;
	bool p_is_a;               /* P (the operand owning D0) is A */
	int nf2, nb;               /* folded dimension-2 indices, outer bound indices */
	int nslots;
	int slot[TCX_MAX_SLOTS];   /* index id per slot; IDX_VIRTUAL for size-1 stand-ins */
	bool packed;               /* assumes the packed layout of the contraction */
	bool unit_p_d0, unit_p_du, unit_q_d1, unit_q_du, unit_c_d0;
	bool tlu_p, tlu_q;
	int nlc_p, nlp_p, nlc_q, nlp_q;
	int mt0, mt1, nt;
	int vw1;                   /* vector width along D1 (VW, narrowed to divide TT1) */
	int64_t lds_bytes;
	bool const_sizes;
	int64_t sizes[TCX_MAX_INDICES]; /* the baked sizes, when const_sizes */
	char lang[16];             /* "opencl" or "cuda" */
	bool split_loop;           /* a second main loop for interior tiles (GPUs) */
	bool split_loop_p;         /* and a third, P unchecked, where the problem
				    * has tiles past D1's end (SPLIT_LOOP_P) */
	bool mi;                   /* MatrixInstruction: tensor cores (CUDA) */
	bool mi_raw;               /* ... on 16-bit operands, staged as stored */
	int mi_warps0;             /* warps along D0 (the rest along D1) */
	bool wgmma;                /* ... on Hopper's warpgroups (kernels/cuda/wgmma.cuh) */
	int wg_wm;                 /* warpgroups along D0 (the rest along D1) */
	int wg_stages;             /* shared-memory stages the copies land in */
	int wg_mstages;            /* tf32: stages the tensor cores read (rounded, K-major) */
	bool tf32_trunc_q;         /* tf32 without a math ring: Q truncated, not rounded */
	bool wg_mn_p, wg_mn_q;     /* P's, Q's tile is MN-major in shared memory */
	int pack_slot[2];          /* PackFreeIndices: the folded slot D0 (D1) spans too; -1 none */
	bool off32;                /* 32-bit offsets: every tensor below PLAN_OFF32_ELEMS */
};

/* The elements below which every tensor of a problem lets plan_make build
 * a kernel with 32-bit offsets (contract.cl's idx_t, OFF32): 2^30, so that
 * a tile's overshoot past an edge stays below 2^31 too. */
#define PLAN_OFF32_ELEMS ((int64_t)1 << 30)

/* Resolves and checks a solution.  `p` gives explicit strides or the sizes
 * to bake (may be NULL for a packed, size-generic kernel).  A solution that
 * breaks a validity rule or a device limit returns TCX_EREJECT with the
 * reason in err. */
enum tcx_status plan_make(const struct tcx_contraction *c, const struct problem *p,
			  const struct solution *s, const struct device_info *dev,
			  struct kernel_plan *out, struct tcx_error *err);

/* The size in problem p of the index in slot `slot` of k (1 for an unused
 * slot). */
int64_t plan_slot_size(const struct kernel_plan *k, const struct problem *p, int slot);

/* D0's (x = 0) or D1's (x = 1) extent in problem p: its index's size,
 * with PackFreeIndices times that of the index packed outside it. */
int64_t plan_tile_extent(const struct kernel_plan *k, const struct problem *p, int x);

/* Whether a plan can run this problem (sizes a multiple of the tile for
 * EdgeType None, of DepthU without LoopTail, the baked sizes, the assumed
 * layout).  TCX_EREJECT with the reason if not. */
enum tcx_status plan_accepts(const struct kernel_plan *k, const struct problem *p,
			     struct tcx_error *err);

/* The kernel source and the compiler options for the device: the plan's
 * prelude, then the text of each of plan_templates(k->lang), then
 * plan_options(k->lang).  Writes the source to $TCX_DUMP_KERNELS/ when that
 * is set. */
enum tcx_status plan_source(const struct kernel_plan *k, struct strbuf *src, struct strbuf *opts,
			    struct tcx_error *err);

/* The plan's #define prelude (appended to src): the part of its source
 * that depends on the plan, before the templates. */
enum tcx_status plan_prelude(const struct kernel_plan *k, struct strbuf *src,
			     struct tcx_error *err);

/* The templates a kernel source in language `lang` ("opencl", "cuda")
 * holds after the prelude, in order: paths under kernels/ for
 * kernel_source, NULL-terminated.  Static. */
const char *const *plan_templates(const char *lang);

/* The compiler options of a kernel source in language `lang` ("" for
 * none).  Static. */
const char *plan_options(const char *lang);

/* Bytes of workspace a launch needs (GlobalSplitU partial sums); 0 if none. */
size_t plan_workspace_bytes(const struct kernel_plan *k, const struct problem *p);

/* What a launch takes of plan k (runtime/abi.c's abi_launch_make, which
 * plan_launch runs and the libraries export-lib writes keep): out->slot
 * is k's, borrowed while k lives. */
void plan_abi(const struct kernel_plan *k, struct abi_plan *out);

/* How the warpgroup kernel of plan k copies its operands' tiles on
 * problem p: by the copy engine where both have tensor maps (16-byte
 * strides, boxes that do not cross a packed index; plan_launch makes them)
 * and TCX_NO_TMA is unset; else by cp.async, in 16-byte vectors where both
 * operands' layouts allow, else element by element.  The planner prices
 * the last two.  PLAN_COPY_NONE for the other kernels. */
enum plan_copy { PLAN_COPY_NONE, PLAN_COPY_TMA, PLAN_COPY_VECTORS, PLAN_COPY_ELEMENTS };
enum plan_copy plan_wgmma_copy(const struct kernel_plan *k, const struct problem *p);

/* Launches the contraction (and the GlobalSplitU reduction).  Buffers hold
 * A, B and C laid out by p's strides; `ws` the workspace (NULL when none is
 * needed).  alpha and beta are (re, im).  With event_ms non-NULL, waits and
 * reports the device time of all kernels. */
enum tcx_status plan_launch(const struct kernel_plan *k, struct device *dev, struct program *prog,
			    const struct problem *p, struct buffer *a, struct buffer *b,
			    struct buffer *c, struct buffer *ws, const double alpha[2],
			    const double beta[2], double *event_ms, struct tcx_error *err);

/* The work sizes of a launch that needs n[d] work-groups of local[d]
 * work-items along dimension d, within the device's limits
 * (dev->max_groups, abi.h's TCX_GRID_MAX_*, and for tests $TCX_MAX_GROUPS,
 * "X,Y,Z"), as runtime/abi.c lays them out for tcx and the exported
 * libraries alike: n itself when it fits; else the n[0] * n[1] * n[2] groups,
 * numbered dimension 0 fastest, laid out over as few dimensions as hold
 * them, with fewer than global[0] / local[0] * global[1] / local[1] spare
 * groups past the last.  The kernels number their group the same way and
 * take its place from n (struct tcx_args' groups), so every grid is theirs
 * and spare groups leave at once.  TCX_ELIMIT when the groups exceed what
 * the three dimensions can hold together.  Writes global[] (work-items). */
enum tcx_status plan_grid(const int64_t n[3], const size_t local[3], const struct device_info *dev,
			  size_t global[3], struct tcx_error *err);

/* A template's text by path under kernels/ ("opencl/contract.cl"): the
 * embedded copy, or $TCX_KERNEL_DIR/path when that is set.  Caller frees. */
enum tcx_status kernel_source(const char *path, char **text, size_t *len, struct tcx_error *err);

/* Finishes a generated kernel whose prelude is in src: appends the
 * template files `templates` (a NULL-terminated list, kernel_source's
 * paths), adds plan_options(lang) to opts (NULL allowed), and writes the
 * source to $TCX_DUMP_KERNELS/tcx-<hash>.cl when that is set.  Every
 * kernel family assembles its source so. */
enum tcx_status kernel_assemble(const char *const *templates, const char *lang,
				struct strbuf *src, struct strbuf *opts, struct tcx_error *err);

/* a / b rounded up, for positive b: tiles, blocks and work-groups over an
 * extent (the permute, tensor-times-matrix and -vector plans). */
static inline int64_t gen_ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* kernel_assemble for a kernel family of one template (`file`, a path
 * under kernels/: "opencl/ttm.cl") after common/port.h, cuda/compat.h
 * for CUDA, and common/abi.h: the permute, tensor-times-matrix and
 * tensor-times-vector kernels. */
enum tcx_status kernel_assemble_family(const char *file, const char *lang, struct strbuf *src,
				       struct strbuf *opts, struct tcx_error *err);

/* A built-in default solution for a device and contraction (used when no
 * parameters, solution or logic is given). */
void solution_heuristic(const struct tcx_contraction *c, const struct device_info *dev,
			struct solution *s);

#endif /* TCX_GEN_H */

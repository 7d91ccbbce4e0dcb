/* planner.h - a kernel for any contraction, with no tuning: the planner
 * merges the problem's indices (merge.h), lists the solutions the device
 * and the kernel families allow for it (tile shapes, tensor-core shapes,
 * which index each tile and the unrolled loop run along, GlobalSplitU for
 * short outputs), ranks them by a model of the device -- tiles and waves
 * over its compute units, the compute and memory roofline, how well each
 * operand's loads and C's stores coalesce -- and picks the fastest.  It is
 * what `tcx run`, `bench` and `validate` use when no --params, --solution
 * or --logic is given, and what `tcx plan` explains. */
#ifndef TCX_PLAN_PLANNER_H
#define TCX_PLAN_PLANNER_H

#include "backend/backend.h"
#include "gen/gen.h"
#include "gen/permute.h"
#include "gen/ttm.h"
#include "plan/arith.h"
#include "plan/form.h"
#include "plan/merge.h"

/* Where a device model's rates came from (plan_model_find, in the order
 * it looks). */
enum plan_model_origin {
	PLAN_MODEL_BUILTIN, /* the built-in rates */
	PLAN_MODEL_ENV,	    /* the file $TCX_MODEL names */
	PLAN_MODEL_FITTED,  /* the one `tcx plan --fit` saved in the cache */
	PLAN_MODEL_SHIPPED, /* one shipped with tcx (share/tcx/models) */
};

/* The model's view of a device: what its kernels sustain, per family.
 * Defaults come from the device's description (plan_device_defaults);
 * the rates are the model's parameters. */
struct plan_device {
	char name[128];
	enum device_type type;
	int units;            /* compute units (SMs, CUs, cores) */
	double simt_flops;    /* FLOP/s of the SIMT kernels on full tiles, this type */
	double mma_flops;     /* mma.sync tensor cores; 0 where the device has none */
	double wgmma_flops;   /* Hopper's warpgroup kernel (fp32: TF32x3); 0 where none */
	double bw;            /* bytes/s of device memory */
	double cache;         /* bytes of the last-level cache */
	double uncoalesced;   /* traffic factor of loads or stores that do not coalesce */
	double reread;        /* fraction of a re-read panel that misses the cache */
	double mem_eff;       /* share of bw the kernels' loads and stores reach */
	double launch_s;      /* a launch's fixed cost */
	/* A work-group's latency, which the work-groups a unit holds at once
	 * overlap: its start and end (index decoding, storing C), and each
	 * pass of its loop over the bound indices (a chunk's loads, the
	 * barrier, the products), per kernel family */
	double group_s, simt_iter_s, wg_group_s, wg_iter_s;
	double simt_iters;    /* passes before the SIMT and mma.sync loops overlap them */
	double regs;          /* 32-bit registers a compute unit holds; 0 if unknown */
	/* The share of its family's rate a solution sustains (family_eff):
	 * the warpgroup kernel's tiles of 128 x 256 and wider, 128 x 128,
	 * 128 x 96 (against 128 x 128), 128 along one side, smaller;
	 * PackFreeIndices; an operand it must gather element by element;
	 * mma.sync; SIMT work-items of 16 to 31 outputs and of fewer (32 and
	 * more sustain the rate); the SIMT kernel with PackFreeIndices on an
	 * operand the cache cannot hold (it reads the packed operand element
	 * by element), with a packed operand whose tile it reads across its
	 * fastest index (a gather from the cache), 8 x 8 tiles of 128 or 96
	 * work-items where tiles overhang C; and the store rate of 96 x 64
	 * tiles where C's tile is not a few whole blocks of it */
	double eff_wg_wide, eff_wg_square, eff_wg_near, eff_wg_one, eff_wg_small, eff_pack, eff_gather;
	double eff_mma, eff_simt_mid, eff_simt_small, eff_pack_simt, eff_simt_gather, eff_simt_ragged;
	double eff_simt96_c;
	/* the warpgroup kernel whose producer copies by cp.async, the copy
	 * engine having no map of an operand's layout: in 16-byte vectors,
	 * and element by element (plan_wgmma_copy) */
	double eff_wg_copy, eff_wg_copy1;
	/* the tensor-times-matrix kernel (plan_ttm): its products' share of
	 * simt_flops, and its traffic's share of the rate mem_eff gives */
	double eff_ttm, eff_ttm_mem;
	/* the tensor-times-vector kernel (the same plan_ttm, gen/ttv.h): its
	 * traffic's share of the rate mem_eff gives, on a GPU scaled down
	 * where its work-items fill less than half the SMs' slots */
	double eff_ttv_mem;
	/* CPUs: the rate of vectors wider than 32 bytes (PoCL's 16-wide
	 * floats) as a share of 32-byte ones, of a work-item's tile whose
	 * rows are not one 64-byte line along D0, and of one with fewer than
	 * 8 columns (squared below 4), all in family_eff; and how many times
	 * bw their traffic moves at where A, B and C fit in half the cache
	 * (plan_predict) */
	double eff_cpu_wide, eff_cpu_line, eff_cpu_cols, cpu_cache_bw;
	/* CPUs: the time a core spends on each work-group beyond its
	 * products (PoCL's dispatch of it, its loops' setup), added to the
	 * contraction's compute_s in plan_predict and to a permute's time;
	 * and the bytes of a work-item's row along D0 that eff_cpu_line
	 * spares besides 64 (128 where the compiler targets AVX-512) */
	double cpu_group_s;
	double cpu_line_bytes;
	/* the permute kernel's rate through local memory (a transpose), as a
	 * share of bw (permute_seconds) */
	double eff_perm_tile;
	/* GlobalSplitU: a factor on the traffic of its partial sums, and the
	 * reduction's launch */
	double gsu_bytes, gsu_launch_s;
	/* plain tf32's rate in the warpgroup kernel over TF32x3's (fp32) */
	double tf32_speedup;
	bool wgmma, mma;      /* the kernel families this device runs */
	bool mma_f64_16;      /* (complex) fp64's mma.sync in sm_90's 16 x 8 x 8 shape */
	/* where the rates came from: "" built in, else the fitted model's
	 * file (plan_model_find) and which one it is, fitted from fit_rows
	 * measurements of fit_problems problems */
	char source[512];
	enum plan_model_origin origin;
	int fit_rows, fit_problems;
	bool launch_bounds;   /* Occupancy caps a work-item's registers (the CUDA dialect) */
};

/* The device model for a device and element type, from what the backend
 * says of it (and, for the GPUs tcx knows, measured rates). */
void plan_device_defaults(const struct device_info *dev, enum tcx_dtype t,
			  struct plan_device *out);

/* The model the planner uses: the defaults, with the rates of a fitted
 * model where one is found for the device and type (plan/fit.h,
 * plan_model_find).  A model file that cannot be read fails with its
 * name (out keeps the defaults). */
enum tcx_status plan_device_model(const struct device_info *dev, enum tcx_dtype t,
				  struct plan_device *out, struct tcx_error *err);

/* A tensor the plan permutes (TTGT: transpose, transpose, GEMM,
 * transpose): a packed copy of it in device memory, its indices in the
 * order of a GEMM's (A: its free indices, then the bound ones; B: the
 * bound ones, then its free ones; C: A's free ones, then B's; the batch
 * ones last), so that they merge and the kernel reads and writes unit
 * strides.  A and B are copied before the kernel runs; the kernel writes C's
 * copy, which is then copied into C (and, when beta is not 0, made from C
 * before). */
struct plan_permute {
	bool on;
	int64_t stride[TCX_MAX_INDICES]; /* the copy's strides, by index id of p */
	double seconds;                  /* predicted: reading and writing it */
};

/* One ranked solution. */
struct plan_choice {
	struct solution sol;
	double time_s;        /* predicted */
	double compute_s, memory_s, overhead_s;
	double latency_s;     /* the work-groups' latency, waves of them in turn */
	const char *limit;    /* "compute", "memory", "latency" or "overhead" */
	double tile_util;     /* useful share of the tiles' work (edges, padding) */
	struct plan_permute permute[3]; /* of A, B and C; time_s counts them */
	enum arith arith;     /* the arithmetic it computes in (plan/arith.h) */
	double predicted_err; /* arith_predict's typical error for it */
};

/* A one-operand expression that sums nothing -- a transpose or a copy,
 * C = A permuted (model.h's implicit_b with B a single 1) -- runs as one
 * permute of A into C (gen/permute.h), which moves each element once at
 * the speed of a copy, with no contraction kernel.  The permute moves
 * bits: it computes C = alpha * A + beta * C only for alpha 1 and beta 0
 * (conjugated as the expression says), the scalars a launch is given;
 * with any others the plan's contraction kernel (plan_result.best) runs
 * instead (run/run.h's contract_launch decides). */
struct plan_direct {
	bool on;
	struct permute_plan plan; /* A's strides into C's, on the plan's device */
	double seconds;           /* predicted: reading A and writing C */
};

/* The tensor-times-matrix kernel (gen/ttm.h) for a problem it applies to,
 * with its predicted time; on when that is below the best choice's (or
 * $TCX_TTM says so).  It runs instead of the contraction kernel, for any
 * alpha and beta. */
struct plan_ttm {
	bool applies;			/* the kernel takes the problem: plan, times set */
	bool on;
	struct ttm_plan plan;		/* on the caller's problem, as laid out */
	double seconds;			/* predicted */
	double compute_s, memory_s;
	const char *limit;		/* "compute" or "memory" */
};

/* $TCX_TTM: "0" never runs the tensor-times-matrix kernel, "1" runs it
 * wherever it applies, whatever the model predicts; unset (or anything
 * else), the model decides.  For tests and comparisons. */
int planner_env_ttm(void);

/* Whether choice ch permutes any operand around its kernel (TTGT). */
bool plan_permutes(const struct plan_choice *ch);

/* The problem p computes C as A with its indices permuted (a one-operand
 * expression with no summed index), so that a plan_direct can run it. */
bool plan_is_permutation(const struct problem *p);

/* A plan: the problem the kernel runs (the caller's, with its permuted
 * operands' strides when the best choice permutes, merged where it
 * merges), and the solutions the model ranked first and second. */
struct plan_result {
	struct tcx_contraction *merged; /* owned; NULL when nothing merged */
	struct merge_map map;
	struct problem kp;              /* the problem the kernel runs (best's) */
	struct problem tp;              /* the caller's, with best's permuted strides */
	struct plan_device model;
	int considered, valid;          /* solutions listed, and those the device takes */
	struct plan_choice best, second;
	bool has_second;
	struct plan_direct direct;      /* on: the permute runs it, best only
					 * for other alpha and beta */
	struct plan_ttm ttm;            /* on: the tensor-times-matrix kernel
					 * runs it instead of best */
	double plan_s;                  /* seconds the planner took */
	struct plan_form form;          /* best's form (on) */
};

/* Whether plan pl runs its problem as written: nothing merged, permuted,
 * or run by another kernel than its best solution. */
bool plan_is_plain(const struct plan_result *pl);

/* What planner_plan may choose beyond running the problem directly. */
enum {
	PLAN_PERMUTE = 1 << 0, /* permuting A and/or B first (TTGT), for a
				* caller that carries out plan_choice.permute */
	PLAN_PERMUTE_ONLY = 1 << 1, /* only that, where it changes the problem
				     * (to compare TTGT with the direct plan) */
	PLAN_SIMT = 1 << 2, /* fp32 on the SIMT units only: no solution less
			     * accurate than ARITH_FP32 (no tensor cores for
			     * fp32 data; other types are not affected) */
};

/* $TCX_PLANNER, for every user of the planner (the commands, the device
 * API): "0" keeps the built-in default solution instead of the planner's
 * (planner_env_off); "ttgt" plans with PLAN_PERMUTE_ONLY, which compares
 * TTGT with the direct plan and tests the permutes on devices where they
 * never win; "simt" with PLAN_PERMUTE | PLAN_SIMT, the planner's best
 * without the tensor cores for fp32 (what --accuracy is measured
 * against); anything else, PLAN_PERMUTE (planner_env_flags). */
bool planner_env_off(void);
unsigned planner_env_flags(void);

/* Plans p for dev.  The plan refers to p's contraction when nothing
 * merged (keep it alive); release with plan_release.  TCX_EREJECT when no
 * solution of any family can run it (err says why: the last reason). */
enum tcx_status planner_plan(const struct problem *p, const struct device_info *dev,
			     unsigned flags, struct plan_result *out, struct tcx_error *err);

/* planner_plan for a result within a relative error (plan/arith.h):
 * accuracy 0 asks for the type's own accuracy (arith_default: fp32 through
 * TF32x3 or SIMT, never plain tf32), which is planner_plan's plan; a
 * positive accuracy also lets in the arithmetics less accurate than that
 * (plain tf32 on the tensor cores) whose predicted error (arith_predict)
 * is within it.  Only arithmetics at least as accurate as floor are
 * considered (ARITH_TF32: all), so that a result that missed its bound
 * can be planned again one arithmetic up (arith_next).  The fastest
 * predicted of the rest wins, as in planner_plan; TCX_EREJECT when none
 * is left. */
enum tcx_status planner_plan_accuracy(const struct problem *p, const struct device_info *dev,
				      unsigned flags, double accuracy, enum arith floor,
				      struct plan_result *out, struct tcx_error *err);
void plan_release(struct plan_result *pl);

/* A plan of p that runs solution s in form f (as planner_plan's choice
 * had it, f->on): s is a solution of p's merged form, permuted as f says.
 * TCX_EREJECT when the form does not apply to p (an operand is in a GEMM's
 * order already at these sizes, the kernel the form names does not take
 * p) or s does not run the form's problem, with the reason in err.  The
 * prediction is the model's (best.time_s).  Release with plan_release. */
enum tcx_status planner_plan_form(const struct problem *p, const struct device_info *dev,
				  const struct plan_form *f, const struct solution *s,
				  struct plan_result *out, struct tcx_error *err);

/* A GPU described without opening it, for planning what tcx would run
 * there: "H100" (NVIDIA H100 80GB HBM3) or "H200" (case does not matter).
 * False for a name it does not know. */
bool plan_known_device(const char *name, struct device_info *out);

/* The most solutions planner_list lists for one problem. */
#define PLAN_MAX_CANDIDATES 4096

/* The solutions the planner considers for p itself (not merged, nothing
 * permuted): the shapes of the device's kernel families with the role
 * choices and GlobalSplitU options worth a try, unranked and not yet
 * checked against the device (plan_make, plan_accepts), at most max into
 * out; with an accuracy (planner_plan_accuracy), the plain-tf32 twins
 * of the TF32x3 ones too, whatever their predicted error.  Returns how
 * many, or -1 when out of memory.  For tuning around the planner's
 * choices (tcx tune EXPR). */
int planner_list(const struct problem *p, const struct device_info *dev, double accuracy,
		 struct solution *out, int max);

/* The model's prediction for one solution on problem kp (already made
 * into kernel plan k). */
void plan_predict(const struct plan_device *m, const struct problem *kp,
		  const struct kernel_plan *k, struct plan_choice *out);

#endif /* TCX_PLAN_PLANNER_H */

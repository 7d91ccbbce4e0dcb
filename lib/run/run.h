/* run.h - running a contraction: preparing a kernel for a device (plan,
 * source, build), running it on host arrays, generating test data, and
 * validating results against the host reference. */
#ifndef TCX_RUN_H
#define TCX_RUN_H

#include "backend/backend.h"
#include "gen/gen.h"
#include "gen/permute.h"
#include "gen/ttm.h"
#include "plan/arith.h"

/* A tensor a TTGT plan (plan/planner.h) permutes: the permute, its
 * program (the device's cache's) and the device buffer that holds the
 * permuted copy (owned; C's two permutes share one). */
struct prepared_permute {
	bool on;
	struct permute_plan plan;
	struct program *prog;
	struct buffer *copy;
};

/* prepared.perm: A and B into their copies before the kernel; C's copy
 * into C after it, and C into its copy before it when beta is not 0;
 * PERM_DIRECT, A into C instead of the kernel, for a plan that permutes
 * only (plan/planner.h's plan_direct) */
enum { PERM_A, PERM_B, PERM_C_OUT, PERM_C_IN, PERM_DIRECT, PERM_COUNT };

/* The tensor-times-matrix kernel of a plan (plan/planner.h's plan_ttm),
 * which runs instead of the contraction kernel: its program (the
 * device's cache's). */
struct prepared_ttm {
	bool on;
	struct ttm_plan plan;
	struct program *prog;
};

/* A kernel ready to launch on one device. */
struct prepared {
	struct kernel_plan plan;
	struct program *prog;   /* owned by the device's program cache */
	double compile_s;       /* 0 when the program came from a cache */
	bool host;              /* the host reference device: no kernel */
	bool empty;             /* an index of size 0: no kernel either */
	/* the problem the kernel runs, as given to contract_prepare (borrowed):
	 * the caller's, or the planner's merged form of it (plan/planner.h),
	 * which describes the same memory with fewer indices */
	const struct problem *kp;
	/* the permutes that run around the kernel (contract_prepare_permutes) */
	struct prepared_permute perm[PERM_COUNT];
	struct prepared_ttm ttm;
};

/* Plans, generates and builds.  TCX_EREJECT when the solution cannot run
 * this problem (the reason in err); TCX_EBUILD with the compiler's log
 * appended to `log` (may be NULL).  An empty problem (problem_empty_index)
 * gets no kernel: there is nothing to sum, and contract_host_arrays does
 * what remains, C = beta * C, on the host.  p must outlive the prepared
 * kernel: launches run it (out->kp), whatever problem they are then given
 * for the buffers (one with the same memory: the original of a merged
 * problem). */
enum tcx_status contract_prepare(struct device *dev, const struct tcx_contraction *c,
				 const struct problem *p, const struct solution *s,
				 struct prepared *out, struct strbuf *log, struct tcx_error *err);

/* Adds the permutes of a TTGT plan to a prepared kernel: operand A
 * (which[0]) and B (which[1]) are copied from p's layout into tp's, the
 * layout the kernel reads (tp: p with those tensors' strides replaced,
 * plan/planner.h's plan_result.tp), and C (which[2]) is written by the kernel
 * in tp's layout and copied into p's after, in device buffers allocated
 * here, once, so that launches allocate nothing.  Release with
 * contract_release. */
enum tcx_status contract_prepare_permutes(struct device *dev, struct prepared *pr,
					  const struct problem *p, const struct problem *tp,
					  const bool which[3], struct strbuf *log,
					  struct tcx_error *err);

/* contract_prepare of solution s for problem p, or, with pl (non-NULL
 * when the planner chose s: planner_plan's plan of p), of the problem the
 * plan runs (pl->kp: p's merged form, the same memory) with the permutes
 * of its choice (contract_prepare_permutes), and, when the plan runs a
 * permutation as one permute of A into C (pl->direct), that permute too:
 * contract_launch runs it for alpha 1 and beta 0 and the kernel for the
 * others; and when it runs the tensor-times-matrix kernel (pl->ttm), that
 * kernel, which contract_launch then runs for any scalars (and no
 * permutes).  Release with contract_release. */
struct plan_result;
enum tcx_status contract_prepare_plan(struct device *dev, const struct problem *p,
				      const struct plan_result *pl, const struct solution *s,
				      struct prepared *pr, struct strbuf *log,
				      struct tcx_error *err);

/* Makes every kernel of a prepared contraction ready to launch
 * (device_kernel_ready): the contraction, its GlobalSplitU reduction and
 * the permutes, so that contract_launch allocates nothing on the host. */
enum tcx_status contract_ready(struct device *dev, const struct prepared *pr,
			       struct tcx_error *err);

/* Launches a prepared contraction on buffers laid out by p's strides: its
 * permutes, then the kernel (plan_launch) on the permuted copies; or, when
 * it has a direct permute (PERM_DIRECT) and alpha is 1 and beta 0, that
 * permute alone (contract_direct); or its tensor-times-matrix kernel
 * (prepared.ttm) alone.  With event_ms non-NULL, waits and
 * reports the device time of them all. */
enum tcx_status contract_launch(struct device *dev, const struct prepared *pr,
				const struct problem *p, struct buffer *a, struct buffer *b,
				struct buffer *c, struct buffer *ws, const double alpha[2],
				const double beta[2], double *event_ms, struct tcx_error *err);

/* The arithmetic a prepared contraction computes in: solution s's
 * (plan/arith.h's arith_of), or, where its tensor-times-matrix kernel runs
 * instead, that kernel's (the type's own, on the SIMT units). */
enum arith contract_arith(const struct prepared *pr, enum tcx_dtype t, const struct solution *s);

/* Whether contract_launch with these scalars runs the direct permute of
 * A into C and no contraction kernel. */
bool contract_direct(const struct prepared *pr, const double alpha[2], const double beta[2]);

/* Bytes of the workspace contract_launch's ws must have for pr (0: none,
 * ws may be NULL): GlobalSplitU's, or the tensor-times-vector kernel's
 * split sum's where that runs instead. */
size_t contract_workspace_bytes(const struct prepared *pr, const struct problem *p);

/* Frees what contract_prepare_permutes allocated; the rest of a prepared
 * kernel belongs to the device's cache.  Safe on a zeroed one, and twice. */
void contract_release(struct device *dev, struct prepared *pr);

/* Runs a prepared contraction on host arrays laid out by p's strides (each
 * p->extent[t] elements): uploads A, B and C, launches, reads C back.  b
 * is NULL for a one-operand contraction (model.h's implicit_b): its B of
 * ones is made here.  With
 * `poison`, the device's C is filled with NaN before the launch instead of
 * receiving c_in (meaningful only when beta is 0).  c_out may equal c_in. */
enum tcx_status contract_host_arrays(struct device *dev, const struct prepared *pr,
				     const struct problem *p, const void *a, const void *b,
				     const void *c_in, void *c_out, const double alpha[2],
				     const double beta[2], bool poison, double *event_ms,
				     struct tcx_error *err);

enum init_kind { INIT_RANDOM, INIT_SERIAL, INIT_ONES, INIT_ZEROS, INIT_NAN };
bool init_parse(const char *s, enum init_kind *out);
const char *init_name(enum init_kind k);

/* Fills n elements of type t: random uniform in [-1, 1) from PCG32 (seed,
 * stream), or serial, ones, zeros or NaN. */
void run_fill_data(enum tcx_dtype t, void *data, int64_t n, enum init_kind k, uint64_t seed,
		   uint64_t stream);
/* Allocates and fills a tensor of p (p->extent[t] elements); caller frees.
 * The B of a one-operand contraction (implicit_b) is ones whatever k is. */
void *run_make_tensor(const struct problem *p, enum tensor_role t, enum init_kind k, uint64_t seed,
		      struct tcx_error *err);

struct validate_opts {
	enum init_kind init;  /* of A and B (and C when beta != 0) */
	uint64_t seed;
	double alpha[2], beta[2];
	double rtol, atol;    /* both < 0: the type-aware bound */
	double accuracy;      /* > 0 (rtol, atol < 0): the bound is accuracy * mag
			       * (plan/arith.h's relative error), not the type's */
	int64_t sample;       /* compare at most this many elements (spread) */
	int64_t max_work;     /* cap on reference multiply-adds (sample shrinks) */
	int max_report;       /* mismatches to list */
	int threads;          /* host reference threads; <= 0 all */
};
void validate_opts_default(struct validate_opts *o);

struct mismatch {
	int64_t lin;          /* linear index in C's index space */
	int64_t idx[TCX_MAX_INDICES];
	double got[2], want[2], err, bound;
	bool unwritten;       /* still the poison pattern */
};

struct validate_report {
	int64_t total, checked, mismatches, unwritten, nan_results, gap_writes;
	double max_abs, max_rel;
	/* the relative error of the result (plan/arith.h): the largest
	 * |got - ref| / mag over the elements checked, mag the sum of |a b|
	 * over the element's products */
	double max_err_mag;
	int64_t max_lin;
	int64_t max_idx[TCX_MAX_INDICES];
	int nlist;
	struct mismatch list[64];
	/* the bound used: |err| <= gamma * magnitude + u_out * |ref| */
	double u_acc, u_out, gamma;
	double u_in;          /* rounding of the inputs inside the kernel (tf32), or 0 */
	int64_t products;     /* accumulated products per element */
	bool custom_tol;
	double rtol, atol;
	double accuracy;      /* validate_opts.accuracy: the bound used, when > 0 */
	double kernel_ms, compile_s, reference_s;
	uint64_t seed;
};

/* Runs the kernel on random data and compares with the host reference.
 * Returns TCX_OK when every compared element is within the bound,
 * TCX_EMISMATCH otherwise (r says where), or the error that stopped it. */
enum tcx_status validate_run(struct device *dev, const struct prepared *pr,
			     const struct problem *p, const struct validate_opts *o,
			     struct validate_report *r, struct tcx_error *err);

/* validate_run of a prepared kernel on o's random data for its relative
 * error alone (plan/arith.h) into *out: elements past the type's bound are
 * not a failure here, an accuracy asked decides (accuracy_search's tries). */
enum tcx_status validate_error(struct device *dev, const struct prepared *pr,
			       const struct problem *p, const struct validate_opts *o, double *out,
			       struct tcx_error *err);

/* The relative error (plan/arith.h) of c_out, p's result on a, b (NULL
 * for a one-operand p: ones) and c_in with alpha and beta, against the host
 * reference at the elements validate_run would compare (o's sample,
 * max_work and threads): into *out (infinity where an element is NaN),
 * and how many were compared into *checked (may be NULL). */
enum tcx_status run_measure_error(const struct problem *p, const void *a, const void *b,
				  const void *c_in, const void *c_out, const double alpha[2],
				  const double beta[2], const struct validate_opts *o,
				  double *out, int64_t *checked, struct tcx_error *err);

/* One run of accuracy_search's: the arithmetic it ran in and the relative
 * error measured of its result. */
struct accuracy_try {
	enum arith arith;
	double error;
};

/* Plans and runs the problem in the least accurate arithmetic, at least as
 * accurate as floor, that the accuracy asked lets in
 * (planner_plan_accuracy), and measures its result's error into *out. */
typedef enum tcx_status (*accuracy_try_fn)(void *ctx, enum arith floor, struct accuracy_try *out,
					   struct tcx_error *err);

struct accuracy_outcome {
	enum arith arith;      /* of the last try: the result's */
	double error;          /* its measured relative error */
	int ntries;
	struct accuracy_try tries[ARITH_COUNT];
};

/* Accuracy as a contract: runs try_fn with floor ARITH_TF32 (whatever the
 * accuracy lets in) and, while the measured error is above `accuracy`,
 * again one arithmetic more accurate than the last ran in (arith_next:
 * tf32, then TF32x3, then fp32 SIMT), so that a result outside the bound
 * is never the last.  Without `fallback` (a solution the user gave) the
 * first try is the only one.  TCX_EMISMATCH, naming the measured error and
 * the bound, when the most accurate arithmetic the type has (or the one
 * try) misses it; out says what ran. */
enum tcx_status accuracy_search(enum tcx_dtype t, double accuracy, bool fallback,
				accuracy_try_fn try_fn, void *ctx, struct accuracy_outcome *out,
				struct tcx_error *err);

#endif /* TCX_RUN_H */

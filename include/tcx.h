/* tcx.h - the public interface of libtcx, the tensor-contraction toolkit.
 *
 * This is the only installed header.  It names no vendor type: devices,
 * buffers and programs are reached through opaque handles.  Every action
 * returns an enum tcx_status and, when the caller passes one, fills a
 * caller-owned struct tcx_error with the detail (libyaml's marks, git's
 * messages).  Status values are never renumbered.
 */
#ifndef TCX_H
#define TCX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TCX_API __declspec(dllexport)
#elif defined(__GNUC__)
#define TCX_API __attribute__((visibility("default")))
#else
#define TCX_API
#endif

#define TCX_VERSION_MAJOR 0
#define TCX_VERSION_MINOR 1
#define TCX_VERSION_PATCH 0
#define TCX_VERSION_STRING "0.1.0"

/* Status codes.  Append only: a value, once released, keeps its number. */
enum tcx_status {
	TCX_OK = 0,
	TCX_ENOMEM = 1,     /* out of host memory */
	TCX_EINVAL = 2,     /* invalid argument or option */
	TCX_EPARSE = 3,     /* text that does not parse (expression, size, YAML) */
	TCX_ENODEV = 4,     /* no usable device */
	TCX_EBUILD = 5,     /* a kernel failed to compile */
	TCX_ELAUNCH = 6,    /* a kernel failed to launch or run */
	TCX_EMISMATCH = 7,  /* a result differs from the reference */
	TCX_EIO = 8,        /* a file could not be read or written */
	TCX_EDEVICE = 9,    /* any other device or runtime error */
	TCX_EUNSUPPORTED = 10, /* valid, but not something tcx (or this device) does */
	TCX_ERANGE = 11,    /* a number out of range or an overflow */
	TCX_EREJECT = 12,   /* a solution rejected by a validity rule */
	TCX_EREGRESS = 13,  /* a benchmark slower than its baseline */
	TCX_EINTR = 14,     /* interrupted (a signal asked tcx to stop) */
	TCX_EBUSY = 15,     /* a resource is locked by another process */
	TCX_ETIMEOUT = 16,  /* a kernel ran past its time limit */
	TCX_ECORRUPT = 17,  /* a file is damaged (store, cache entry) */
	TCX_ELIMIT = 18,    /* beyond a device limit (work-group, local memory, registers) */
	TCX_EINCOMPLETE = 19, /* done with what it could: other shards' data is needed */
	TCX_STATUS_COUNT
};

#define TCX_ERROR_SIZE 512

/* Detail of a failure.  Owned by the caller; pass NULL where detail is not
 * wanted.  `native` is the raw runtime code (cl_int, CUresult, hipError_t)
 * when one caused the failure, else 0.  `line` and `col` are 1-based parse
 * positions, 0 when not applicable. */
struct tcx_error {
	enum tcx_status code;
	int native;
	unsigned line, col;
	char msg[TCX_ERROR_SIZE];
};

/* The text of a status code; never NULL, also for unknown values. */
TCX_API const char *tcx_status_str(enum tcx_status s);

/* The library's version, "MAJOR.MINOR.PATCH". */
TCX_API const char *tcx_version(void);

/* Element types, with Tensile's letters. */
enum tcx_dtype {
	TCX_DTYPE_S = 0, /* fp32 */
	TCX_DTYPE_D = 1, /* fp64 */
	TCX_DTYPE_C = 2, /* complex fp32 */
	TCX_DTYPE_Z = 3, /* complex fp64 */
	TCX_DTYPE_H = 4, /* fp16 storage */
	TCX_DTYPE_B = 7  /* bf16 storage (Tensile's number) */
};

/* A parsed contraction (opaque).  Created from index notation, e.g.
 * "C[ijk]=A[ilk]*B[jlk]" or "ilk,jlk->ijk". */
struct tcx_contraction;

/* Parses `expr` into a new contraction of element type `dtype`.  On
 * failure *out is NULL and err->col points at the offending character.
 * An expression with one input ("ij->ji", "ijk->ik", "C[ji]=A[ij]") is a
 * transpose or a reduction: its B is implicit (ones over the summed
 * indices, made by tcx), and tcx_contraction_reference takes NULL for it. */
TCX_API enum tcx_status tcx_contraction_parse(const char *expr, enum tcx_dtype dtype,
					      struct tcx_contraction **out,
					      struct tcx_error *err);

/* Frees a contraction; NULL is allowed. */
TCX_API void tcx_contraction_destroy(struct tcx_contraction *c);

/* The number of distinct indices, and the name of index `id` (borrowed until
 * the contraction is destroyed), in tcx's numbering: C's indices fastest
 * first, then the bound ones. */
TCX_API int tcx_contraction_num_indices(const struct tcx_contraction *c);
TCX_API const char *tcx_contraction_index_name(const struct tcx_contraction *c, int id);

/* Tensile's name of the problem type, e.g. "Cijk_Ailk_Bjlk_SB".  Written to
 * buf (NUL-terminated, truncated to len). */
TCX_API void tcx_contraction_name(const struct tcx_contraction *c, char *buf, size_t len);

/* Computes C = alpha * contraction(A, B) + beta * C on the host reference
 * (accumulating in double), for host arrays in the contraction's natural
 * packed layout.  `sizes` has one entry per index id.  For complex types
 * alpha and beta point to two doubles (re, im), else to one. */
TCX_API enum tcx_status tcx_contraction_reference(const struct tcx_contraction *c,
						  const int64_t *sizes, const void *a,
						  const void *b, void *cc, const double *alpha,
						  const double *beta, struct tcx_error *err);

/* --- The device API: describe, plan, execute --------------------------
 *
 * In the shape of cuTENSOR's: a contraction (above) with its sizes and
 * strides is planned once for a device -- the planner's choice of kernel,
 * or a logic file's -- which compiles everything it needs and allocates
 * the scratch memory it uses; the plan is then executed any number of
 * times on the caller's queue or stream with the caller's buffers, with
 * no allocation, no compilation and no waiting on the host.
 *
 *	struct tcx_device *dev;
 *	struct tcx_plan *plan;
 *	tcx_device_open("opencl:0:0", &dev, &err);
 *	tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, NULL, &plan, &err);
 *	tcx_plan_execute(plan, queue, a_mem, b_mem, c_mem, NULL, NULL, &err);
 *
 * share/examples/api/api.c is a complete program; libtcx(3) says more. */

/* A device, shared within the process: opening one id twice gives the
 * same handle (counted), so that plans of one device share its context,
 * its compiled kernels and its queue. */
struct tcx_device;

/* Opens a device by the id `tcx devices` lists ("opencl:0:0",
 * "cuda:0", "hip:0", "host"), or, with id NULL or "", the device tcx's
 * commands use by default: $TCX_DEVICE, else the first GPU, else the first
 * OpenCL CPU device.  TCX_ENODEV when there is no such device.  Close
 * with tcx_device_close. */
TCX_API enum tcx_status tcx_device_open(const char *id, struct tcx_device **out,
					struct tcx_error *err);
/* Drops one reference to the device; the last closes it.  Close its plans
 * first.  NULL is allowed. */
TCX_API void tcx_device_close(struct tcx_device *dev);
/* The device's full id ("opencl:0:0"); borrowed from the device. */
TCX_API const char *tcx_device_id(const struct tcx_device *dev);

/* The runtime's own handles of a device, for creating buffers and queues
 * the plans can use: OpenCL's cl_context, cl_device_id and the device's
 * own cl_command_queue; CUDA's CUcontext (its primary context), CUdevice
 * (cast to a pointer) and the device's own stream; HIP's device ordinal
 * for both of the first two and its stream.  NULL for the host device. */
enum tcx_native {
	TCX_NATIVE_CONTEXT = 0,
	TCX_NATIVE_DEVICE = 1,
	TCX_NATIVE_QUEUE = 2
};
TCX_API void *tcx_device_native(const struct tcx_device *dev, enum tcx_native what);

/* A contraction planned and compiled for one device, sizes and strides. */
struct tcx_plan;

/* Plans contraction c (its element type included) for sizes (one per
 * index id, as tcx_contraction_num_indices counts them) on dev.  The
 * strides of A, B and C are in elements, one per index of that tensor in
 * the order the expression writes them; NULL means packed in the
 * contraction's natural layout (that of tcx_contraction_reference).  A
 * stride may be any positive value; C's may not make two elements share
 * an address.
 *
 * `logic` names a logic file (tcx-logic(5), or Tensile's) whose selection
 * for these sizes is used; NULL lets the planner choose, as `tcx run`
 * does without --params.  The plan compiles its kernels here -- the
 * contraction and, where the planner permutes operands first (TTGT), the
 * permutes -- and allocates the device memory such a plan or a
 * GlobalSplitU solution needs, so that tcx_plan_execute neither compiles
 * nor allocates.  Compiled kernels are kept per device for the process:
 * a second plan of the same contraction, sizes, strides and type on the
 * same device compiles nothing.  c may be destroyed once the plan exists.
 * TCX_EREJECT when no kernel can run the problem, TCX_EBUILD when one does
 * not compile, TCX_EINVAL for a logic file of another contraction or that
 * selects nothing for these sizes. */
TCX_API enum tcx_status tcx_plan_create(struct tcx_device *dev, const struct tcx_contraction *c,
					const int64_t *sizes, const int64_t *strides_a,
					const int64_t *strides_b, const int64_t *strides_c,
					const char *logic, struct tcx_plan **out,
					struct tcx_error *err);
/* tcx_plan_create for a result within a relative error: `accuracy`, the
 * largest |got - ref| / sum |a b| allowed against tcx's fp64 host
 * reference (tcx-plan(1)).  0 is tcx_plan_create: the type's own accuracy
 * (fp32 through TF32x3 or fp32 FMAs, never plain tf32).  Above 0 (at most
 * 1), the planner may choose a faster, less accurate arithmetic whose
 * predicted error is within it (plain tf32 on tensor cores), and the plan
 * runs once here on random data and is measured against the reference
 * (up to 65536 elements): when the error is above `accuracy`, the next
 * more accurate arithmetic is planned and measured instead (tf32, TF32x3,
 * fp32 FMAs), so that the plan returned met it; tcx_plan_describe says
 * which arithmetic and the error measured.  With `logic` the solution it
 * selects is measured, not replaced.  TCX_EMISMATCH, naming the error
 * measured and the bound, when even the most accurate arithmetic of the
 * type (or the logic's solution) misses it; TCX_EINVAL for an accuracy
 * below 0, above 1 or NaN. */
TCX_API enum tcx_status tcx_plan_create_accuracy(struct tcx_device *dev,
						 const struct tcx_contraction *c,
						 const int64_t *sizes, const int64_t *strides_a,
						 const int64_t *strides_b, const int64_t *strides_c,
						 const char *logic, double accuracy,
						 struct tcx_plan **out, struct tcx_error *err);
/* Frees a plan and the device memory it allocated; NULL is allowed.  Work
 * the plan enqueued must have finished. */
TCX_API void tcx_plan_destroy(struct tcx_plan *plan);

/* The bytes of tensor 'A', 'B' or 'C' a plan reads or writes: the size
 * the buffers given to tcx_plan_execute must have at least (0 for another
 * letter). */
TCX_API size_t tcx_plan_bytes(const struct tcx_plan *plan, char tensor);

/* What the plan runs, for messages: the solution's name, with "planner"
 * or "logic" and the permuted operands, e.g. "planner: MT32x8x16_...".
 * Written to buf (NUL-terminated, truncated to len). */
TCX_API void tcx_plan_describe(const struct tcx_plan *plan, char *buf, size_t len);

/* Computes C = alpha * contraction(A, B) + beta * C on device buffers the
 * caller owns: a, b and c are cl_mem objects of the device's context
 * (tcx_device_native) for OpenCL, device pointers (CUdeviceptr, or a
 * hipDeviceptr_t, cast to void *) for CUDA and HIP, each at least
 * tcx_plan_bytes long; host pointers for the host device.  alpha and beta
 * point to one double each, two (re, im) for complex types; NULL means 1
 * and 0.
 *
 * `queue` is the caller's cl_command_queue of the device's context (an
 * in-order one: a plan's permutes and kernel follow one another), or CUDA
 * or HIP stream of its context: the kernels are enqueued there and
 * execute returns without waiting for them, as cuTENSOR's does; order
 * later work on the queue, or wait for it.  With queue NULL the device's
 * own queue is used and execute waits until the work has finished, since
 * the caller then has nothing to wait on.
 *
 * The execute path allocates no host or device memory and compiles
 * nothing; on CUDA it makes only the driver calls a stream capture allows
 * (cuCtxSetCurrent and cuLaunchKernel on the given stream), so that it can
 * be captured into a CUDA graph.  For OpenCL it checks that each cl_mem
 * belongs to the device's context and is large enough (TCX_EINVAL); for
 * CUDA and HIP the caller vouches for the pointers.  One plan must not be
 * executed from two threads at once; different plans may.  A problem with
 * an index of size 0 launches nothing: C has no elements, or (a summed
 * index of size 0) C = beta * C, which only tcx_plan_execute_host does
 * for beta other than 1 (TCX_EUNSUPPORTED here).  A contraction of one
 * input takes NULL for `b` (its B of ones is the plan's, made when it was
 * created); anything else is TCX_EINVAL. */
TCX_API enum tcx_status tcx_plan_execute(struct tcx_plan *plan, void *queue, void *a, void *b,
					 void *c, const double *alpha, const double *beta,
					 struct tcx_error *err);

/* The same on host arrays laid out by the plan's strides: copies A, B and
 * C to the device, executes, waits and copies C back.  Not the fast path:
 * it allocates device buffers on every call.  For tests, scripts and the
 * Python module.  `b` is NULL for a contraction of one input. */
TCX_API enum tcx_status tcx_plan_execute_host(struct tcx_plan *plan, const void *a,
					      const void *b, void *c, const double *alpha,
					      const double *beta, struct tcx_error *err);

#ifdef __cplusplus
}
#endif
#endif /* TCX_H */

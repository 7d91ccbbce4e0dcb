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

#ifdef __cplusplus
}
#endif
#endif /* TCX_H */

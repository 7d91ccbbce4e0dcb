/* hip.h - the hip backend's entry points besides its ops: hiprtc's compile
 * path without a device, which the offline compile proofs
 * (tests/hip/compile.c) use to compile kernels for AMD architectures no
 * GPU of this machine has. */
#ifndef TCX_BACKEND_HIP_H
#define TCX_BACKEND_HIP_H

#include <stddef.h>

#include "common/common.h"

/* hiprtc's version.  hiprtc is loaded with dlopen on first use (its own
 * library, or the HIP runtime's, which carried it until ROCm 5.3);
 * TCX_ENODEV when it is absent. */
enum tcx_status hip_hiprtc_version(int *major, int *minor, struct tcx_error *err);

/* Compiles `src` (len bytes) as the backend compiles for a device of
 * architecture `arch` ("gfx90a", or a full target id such as
 * "gfx90a:sramecc+:xnack-"), with the backend's options plus `opts`
 * (space-separated, may be NULL).  *bin receives the code object and
 * *bin_len its size, *log the compiler's log; both the caller's to free,
 * either pointer may be NULL.  TCX_EBUILD when the source does not
 * compile, TCX_ENODEV without hiprtc, TCX_EUNSUPPORTED when hiprtc's code
 * object manager does not know the architecture (asked before compiling:
 * comgr 2.4 of ROCm 5.2 aborts the process on an unknown one). */
enum tcx_status hip_compile_offline(const char *src, size_t len, const char *arch, const char *opts,
				    unsigned char **bin, size_t *bin_len, char **log,
				    struct tcx_error *err);

#endif /* TCX_BACKEND_HIP_H */

/* cuda.h - the cuda backend's entry points besides its ops: NVRTC's
 * compile path without a device, which the offline compile proofs
 * (tests/cuda/compile.c) use to compile kernels for an architecture no
 * GPU of this machine has. */
#ifndef TCX_BACKEND_CUDA_H
#define TCX_BACKEND_CUDA_H

#include <stddef.h>

#include "common/common.h"

/* NVRTC's version.  NVRTC is loaded with dlopen on first use; TCX_ENODEV
 * when it is absent, with the library names tried in err. */
enum tcx_status cuda_nvrtc_version(int *major, int *minor, struct tcx_error *err);

/* Compiles `src` (len bytes) as the backend compiles for a device of
 * architecture `arch` ("sm_90"), with the backend's options plus `opts`
 * (space-separated, may be NULL).  *bin receives the cubin (or PTX when
 * NVRTC does not know the architecture) and *bin_len its size; *log the
 * compiler's log.  Both are the caller's to free; either pointer may be
 * NULL.  TCX_EBUILD when the source does not compile (the first error in
 * err, all of it in *log), TCX_ENODEV without NVRTC. */
enum tcx_status cuda_compile_offline(const char *src, size_t len, const char *arch,
				     const char *opts, unsigned char **bin, size_t *bin_len,
				     char **log, struct tcx_error *err);

#endif /* TCX_BACKEND_CUDA_H */

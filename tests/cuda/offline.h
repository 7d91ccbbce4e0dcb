/* offline.h - the shared driver of the offline compile proofs: generate
 * every kernel of the validation matrix for a made-up device of the CUDA
 * dialect and compile each distinct source with a backend's own compile
 * path, for an architecture this machine need not have.
 * tests/cuda/compile.c (NVRTC, sm_90) and tests/hip/compile.c (hiprtc,
 * gfx90a, gfx942) are thin mains over it. */
#ifndef TCX_TEST_OFFLINE_H
#define TCX_TEST_OFFLINE_H

#include <stddef.h>

#include "backend/backend.h"

/* A compiler: src -> binary for `arch`, as cuda_compile_offline. */
typedef enum tcx_status (*offline_compile_fn)(const char *src, size_t len, const char *arch,
					      const char *opts, unsigned char **bin,
					      size_t *bin_len, char **log, struct tcx_error *err);

/* Runs the proof: argv[1] is the element type (s d c z h b), --list lists
 * the distinct kernels without compiling them.  `dev` describes the target
 * (its arch is what is compiled for).  Returns the exit code: 0 every
 * kernel compiled, 1 one did not (its log on stderr), 77 the compiler is
 * absent or cannot target `arch` (the reason on stderr), 2 usage. */
int offline_main(int argc, char **argv, const struct device_info *dev, offline_compile_fn fn,
		 const char *compiler);

#endif /* TCX_TEST_OFFLINE_H */

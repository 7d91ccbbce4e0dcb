/* gpu.h - the cuda and hip backends' shared part, gpu.c.  CUDA and HIP
 * themselves -- the typedefs, the libraries, the entry points (tl_gpu,
 * tl_rtc), loading them, the compiler's options and target, compiling a
 * kernel -- are runtime/gpu.h's, which the libraries tcx export-lib writes
 * compile too, so that they load and compile kernels as tcx does; it names
 * types through tl_gpu_* typedefs and entry points and constants through
 * TL_GPU(cuda, hip).  Only the headers' types are used at build time: the
 * libraries are loaded with dlopen on first use, so that one tcx binary
 * runs with or without CUDA and ROCm.
 *
 * Each backend is one translation unit: lib/backend/cuda/cuda.c defines
 * TCX_GPU_CUDA, lib/backend/hip/hip.c TCX_GPU_HIP; each includes gpu.c,
 * which holds the libraries' loading, the compiler, programs and their
 * kernels, devices, memory and launches, then defines what is its own: the
 * hooks declared at the end of this header (what it says when its
 * libraries are missing, the entry points only it uses, how its devices
 * are counted, described and opened, the compiler's target) and its ops
 * function.
 */
#ifndef TCX_BACKEND_GPU_H
#define TCX_BACKEND_GPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/check.h"

#if TCX_GPU_CUDA + TCX_GPU_HIP != 1
#error "gpu.h: define one of TCX_GPU_CUDA and TCX_GPU_HIP"
#endif
#if TCX_GPU_CUDA
#define TL_WITH_CUDA 1
#else
#define TL_WITH_HIP 1
#endif
#define TL_GPU_USER TL_GPU_TCX
#include "runtime/gpu.h"

#define GPU_BACKEND TL_GPU("cuda", "hip")
/* device and function attributes, by their names in both APIs */
#define GPU_ATTR(cu, hip)   TL_GPU(CU_DEVICE_ATTRIBUTE_##cu, hipDeviceAttribute##hip)
#define GPU_FUNC_ATTR(name) TL_GPU(CU_FUNC_ATTRIBUTE_##name, HIP_FUNC_ATTRIBUTE_##name)
/* the device address `off` bytes into p */
#define GPU_AT(p, off) TL_GPU((p) + (off), (void *)((char *)(p) + (off)))

/* What a backend adds to loading its libraries (runtime/gpu.h's
 * tl_gpu_load), and says when they are too old. */
struct gpu_libraries {
	const char *gpu_too_old;      /* after "LIBRARY has no SYMBOL" */
	const struct tl_gpu_sym *own; /* the runtime's entry points only this backend uses */
	size_t nown;
	const char *rtc_env; /* an environment variable naming the compiler's library */
	const char *rtc_too_old;
	/* Optional: called once the compiler has loaded from `lib`. */
	void (*rtc_loaded)(void *lib);
};

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	tl_gpu_dev handle;
	tl_gpu_ctx ctx; /* CUDA: its primary context, retained; HIP: its ordinal */
	tl_gpu_stream stream;
	char target[256];     /* what the compiler is given: info.arch, or HIP's
			       * full target id, "gfx90a:sramecc+:xnack-" */
	int64_t smem_default; /* shared memory per block without opting in */
};

/* A function of a program, looked up on its first launch. */
struct kernel_entry {
	struct kernel_head head; /* first: its name, the program's list */
	tl_gpu_function fn;
	int max_threads;  /* per block, as compiled (registers, launch bounds) */
	int static_smem;  /* bytes */
	int dyn_smem_set; /* MAX_DYNAMIC_SHARED_SIZE_BYTES set so far */
	int nparams;	  /* -1 when the runtime cannot tell */
	size_t psize[LAUNCH_MAX_ARGS];
};

struct program {
	struct program_head head; /* first: device, log, kernels (check.h) */
	tl_gpu_module mod;
	unsigned char *bin; /* the cubin, PTX or code object loaded, for the disk cache */
	size_t bin_len;
};

struct buffer {
	size_t size; /* first: the backend layer checks transfers against it */
	tl_gpu_ptr ptr;
	tl_gpu_ctx ctx; /* free needs it current */
	bool borrowed;  /* the caller's (gpu_wrap): never freed here */
};

/* --- what each backend's own file defines, after it includes gpu.c ----- */

/* Its libraries, and what it says without them. */
static const struct gpu_libraries gpu_libraries;
/* Initialises the runtime; the number of devices, or TCX_ENODEV and why. */
static enum tcx_status gpu_start(int *count, struct tcx_error *err);
/* The handle of device `ordinal`. */
static enum tcx_status gpu_device_get(int ordinal, tl_gpu_dev *out, struct tcx_error *err);
/* What gpu_describe leaves to the backend: info->driver, from the target
 * the compiler is given. */
static void gpu_describe_own(tl_gpu_dev d, int ordinal, struct device_info *info, char *target,
			     size_t tsize);
/* Sets dev->ctx, which gpu_release gives back, for dev->handle. */
static enum tcx_status gpu_retain(struct device *dev, struct tcx_error *err);
static void gpu_release(struct device *dev);
/* The compiler's target for `arch` (size bytes), *ptx when its output
 * will be PTX; TCX_EUNSUPPORTED when the compiler cannot target arch. */
static enum tcx_status rtc_target(const char *arch, char *target, size_t size, int *ptx,
				  struct tcx_error *err);

#endif /* TCX_BACKEND_GPU_H */

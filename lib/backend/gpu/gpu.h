/* gpu.h - the cuda and hip backends' shared part, gpu.c, in the pattern of
 * the exported library's gpu.h.  The CUDA driver API and the HIP runtime's
 * module API mirror each other (cuModuleLoadData and hipModuleLoadData,
 * cuLaunchKernel and hipModuleLaunchKernel, nvrtc* and hiprtc*), so one
 * source serves both: it names types through the typedefs below, entry
 * points and constants through TCX_GPU(cuda, hip), and loads the libraries
 * with dlopen on first use, so that one tcx binary runs with or without
 * CUDA and ROCm.  Only the headers' types are used at build time.
 *
 * Each backend is one translation unit: lib/backend/cuda/cuda.c defines
 * TCX_GPU_CUDA, lib/backend/hip/hip.c TCX_GPU_HIP; each includes gpu.c,
 * which holds the libraries' loading, the compiler, programs and their
 * kernels, devices, memory and launches, then defines what is its own: the
 * hooks declared at the end of this header (its libraries and the entry
 * points only it uses, how its devices are counted, described and opened,
 * the compiler's target) and its ops function.
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
#include <cuda.h>
#include <nvrtc.h>

/* TCX_GPU(cuda, hip): the one of the two this backend uses */
#define TCX_GPU(cuda, hip) cuda
typedef CUresult gpu_rc;
typedef CUdevice gpu_device;
typedef CUcontext gpu_ctx; /* what must be current to use a device: its context */
typedef CUdeviceptr gpu_ptr;
typedef CUstream gpu_stream;
typedef CUmodule gpu_module;
typedef CUfunction gpu_function;
typedef CUevent gpu_event;
typedef CUdevice_attribute gpu_device_attr;
typedef CUfunction_attribute gpu_function_attr;
typedef nvrtcProgram rtc_program;
typedef nvrtcResult rtc_rc;
#define GPU_OK CUDA_SUCCESS
#define RTC_OK NVRTC_SUCCESS
#else
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#define TCX_GPU(cuda, hip) hip
typedef hipError_t gpu_rc;
typedef hipDevice_t gpu_device;
typedef int gpu_ctx; /* what must be current to use a device: its ordinal */
typedef hipDeviceptr_t gpu_ptr;
typedef hipStream_t gpu_stream;
typedef hipModule_t gpu_module;
typedef hipFunction_t gpu_function;
typedef hipEvent_t gpu_event;
typedef hipDeviceAttribute_t gpu_device_attr;
typedef hipFunction_attribute gpu_function_attr;
typedef hiprtcProgram rtc_program;
typedef hiprtcResult rtc_rc;
#define GPU_OK hipSuccess
#define RTC_OK HIPRTC_SUCCESS
#endif

#define GPU_BACKEND TCX_GPU("cuda", "hip")
#define GPU_NAME    TCX_GPU("CUDA", "HIP")
#define RTC_NAME    TCX_GPU("NVRTC", "hiprtc")
/* device and function attributes, by their names in both APIs */
#define GPU_ATTR(cu, hip)   TCX_GPU(CU_DEVICE_ATTRIBUTE_##cu, hipDeviceAttribute##hip)
#define GPU_FUNC_ATTR(name) TCX_GPU(CU_FUNC_ATTRIBUTE_##name, HIP_FUNC_ATTRIBUTE_##name)
/* the device address `off` bytes into p */
#define GPU_AT(p, off) TCX_GPU((p) + (off), (void *)((char *)(p) + (off)))

/* The runtime's entry points both backends use (gpu.c resolves them). */
struct gpu_api {
	gpu_rc (*Init)(unsigned flags);
	gpu_rc (*DeviceGetCount)(int *count);
	gpu_rc (*DeviceGetName)(char *name, int len, gpu_device dev);
	gpu_rc (*DeviceGetAttribute)(int *v, gpu_device_attr a, gpu_device dev);
	gpu_rc (*DeviceTotalMem)(size_t *bytes, gpu_device dev);
	gpu_rc (*SetCurrent)(gpu_ctx ctx); /* cuCtxSetCurrent, hipSetDevice */
	gpu_rc (*StreamCreate)(gpu_stream *s, unsigned flags);
	gpu_rc (*StreamDestroy)(gpu_stream s);
	gpu_rc (*StreamSynchronize)(gpu_stream s);
	gpu_rc (*MemAlloc)(gpu_ptr *p, size_t bytes);
	gpu_rc (*MemFree)(gpu_ptr p);
	/* HIP's prototype has a non-const source, which it does not write */
	gpu_rc (*MemcpyHtoDAsync)(gpu_ptr dst, TCX_GPU(const void, void) *src, size_t n,
				  gpu_stream s);
	gpu_rc (*MemcpyDtoHAsync)(void *dst, gpu_ptr src, size_t n, gpu_stream s);
	gpu_rc (*MemsetD8Async)(gpu_ptr p, unsigned char v, size_t n, gpu_stream s);
	gpu_rc (*MemsetD16Async)(gpu_ptr p, unsigned short v, size_t n, gpu_stream s);
	gpu_rc (*MemsetD32Async)(gpu_ptr p, TCX_GPU(unsigned, int) v, size_t n, gpu_stream s);
	gpu_rc (*ModuleLoadData)(gpu_module *m, const void *image);
	gpu_rc (*ModuleUnload)(gpu_module m);
	gpu_rc (*ModuleGetFunction)(gpu_function *f, gpu_module m, const char *name);
	gpu_rc (*FuncGetAttribute)(int *v, gpu_function_attr a, gpu_function f);
	gpu_rc (*LaunchKernel)(gpu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			       unsigned by, unsigned bz, unsigned shared, gpu_stream s,
			       void **params, void **extra);
	gpu_rc (*EventCreate)(gpu_event *e, unsigned flags);
	gpu_rc (*EventDestroy)(gpu_event e);
	gpu_rc (*EventRecord)(gpu_event e, gpu_stream s);
	gpu_rc (*EventSynchronize)(gpu_event e);
	gpu_rc (*EventElapsedTime)(float *ms, gpu_event start, gpu_event end);
	/* CUDA's alone (NULL on HIP): a kernel's opt-in to more shared memory
	 * than the default 48 KiB, and (12.4, optional) its parameters, so
	 * that launches can check their arguments */
	gpu_rc (*FuncSetAttribute)(gpu_function f, gpu_function_attr a, int v);
	gpu_rc (*FuncGetParamInfo)(gpu_function f, size_t index, size_t *offset, size_t *size);
};

/* The compiler's entry points. */
struct rtc_api {
	rtc_rc (*Version)(int *major, int *minor);
	const char *(*GetErrorString)(rtc_rc rc);
	rtc_rc (*CreateProgram)(rtc_program *p, const char *src, const char *name, int nheaders,
				TCX_GPU(const char *const *, const char **) headers,
				TCX_GPU(const char *const *, const char **) include_names);
	rtc_rc (*DestroyProgram)(rtc_program *p);
	rtc_rc (*CompileProgram)(rtc_program p, int nopts,
				 TCX_GPU(const char *const *, const char **) opts);
	rtc_rc (*GetProgramLogSize)(rtc_program p, size_t *n);
	rtc_rc (*GetProgramLog)(rtc_program p, char *log);
	/* the binary: a cubin (optional: NVRTC 11.1), a code object */
	rtc_rc (*GetCodeSize)(rtc_program p, size_t *n);
	rtc_rc (*GetCode)(rtc_program p, char *code);
	/* NVRTC's alone (NULL on HIP): PTX, and (11.2, optional) the list of
	 * the architectures it knows */
	rtc_rc (*GetPTXSize)(rtc_program p, size_t *n);
	rtc_rc (*GetPTX)(rtc_program p, char *ptx);
	rtc_rc (*GetNumSupportedArchs)(int *n);
	rtc_rc (*GetSupportedArchs)(int *archs);
};

/* An entry point to resolve: its name (NULL: none on this backend), its
 * slot, and whether it may be missing. */
struct gpu_sym {
	const char *name;
	void **slot;
	bool optional;
};

#define GPU_SLOT(api, field) ((void **)&(api).field)

/* The libraries a backend loads and what it says without them. */
struct gpu_libraries {
	const char *const *gpu;	 /* the runtime, first found first used (NULL-ended) */
	const char *gpu_missing; /* the reason when none loads */
	const char *gpu_too_old; /* after "LIBRARY has no SYMBOL" */
	const struct gpu_sym *own; /* the runtime's entry points only this backend uses */
	size_t nown;
	/* Optional: false, with the reason in gpu_why, when the runtime that
	 * loaded is one tcx cannot use. */
	bool (*gpu_usable)(const char *which);
	const char *const *rtc; /* the compiler */
	const char *rtc_env;	/* an environment variable naming it instead */
	const char *rtc_missing;
	const char *rtc_too_old;
	/* Optional: called once the compiler has loaded from `lib`. */
	void (*rtc_loaded)(void *lib);
};

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	gpu_device handle;
	gpu_ctx ctx; /* CUDA: its primary context, retained; HIP: its ordinal */
	gpu_stream stream;
	char target[256];     /* what the compiler targets when not info.arch: HIP's
			       * full target id, "gfx90a:sramecc+:xnack-" */
	int64_t smem_default; /* shared memory per block without opting in */
};

/* A function of a program, looked up on its first launch. */
struct kernel_entry {
	char *name;
	gpu_function fn;
	int max_threads;  /* per block, as compiled (registers, launch bounds) */
	int static_smem;  /* bytes */
	int dyn_smem_set; /* MAX_DYNAMIC_SHARED_SIZE_BYTES set so far */
	int nparams;	  /* -1 when the runtime cannot tell */
	size_t psize[LAUNCH_MAX_ARGS];
	struct kernel_entry *next;
};

struct program {
	struct device *dev;
	gpu_module mod;
	char *log;	    /* never NULL once built */
	unsigned char *bin; /* the cubin, PTX or code object loaded, for the disk cache */
	size_t bin_len;
	pthread_mutex_t lock; /* guards `kernels` */
	struct kernel_entry *kernels;
};

struct buffer {
	gpu_ptr ptr;
	size_t size;
	gpu_ctx ctx; /* free needs it current */
};

/* --- what each backend's own file defines, after it includes gpu.c ----- */

/* Its libraries, and what it says without them. */
static const struct gpu_libraries gpu_libraries;
static const char *gpu_error_name(gpu_rc rc);
/* Initialises the runtime; the number of devices, or TCX_ENODEV and why. */
static enum tcx_status gpu_start(int *count, struct tcx_error *err);
/* The handle of device `ordinal`. */
static enum tcx_status gpu_device_get(int ordinal, gpu_device *out, struct tcx_error *err);
/* What gpu_describe leaves to the backend: arch, driver, target. */
static void gpu_describe_own(gpu_device d, int ordinal, struct device_info *info, char *target,
			     size_t tsize);
/* Sets dev->ctx, which gpu_release gives back, for dev->handle. */
static enum tcx_status gpu_retain(struct device *dev, struct tcx_error *err);
static void gpu_release(struct device *dev);
/* The compiler's options for `arch` appended to argv (the target's option
 * written into opt), *ptx when the output will be PTX; TCX_EUNSUPPORTED
 * when the compiler cannot target arch. */
static enum tcx_status rtc_target(const char *arch, char *opt, size_t size, const char **argv,
				  int *argc, bool *ptx, struct tcx_error *err);
/* A fill with a pattern of 8 to 128 bytes (buffer_check_fill's sizes). */
static enum tcx_status gpu_fill_wide(struct device *dev, struct buffer *buf,
				     const unsigned char *pat, size_t pattern_size, size_t bytes,
				     struct tcx_error *err);

#endif /* TCX_BACKEND_GPU_H */

/* gpu.h - the GPU backends of a library tcx export-lib wrote, for its run
 * time (runtime_gpu.c) and its client (client_gpu.c): TL_WITH_CUDA, the
 * CUDA driver API and NVRTC, or TL_WITH_HIP, the HIP runtime's module API
 * and hiprtc.  The two mirror each other (cuModuleLoadData and
 * hipModuleLoadData, cuLaunchKernel and hipModuleLaunchKernel, nvrtc* and
 * hiprtc*), so one source serves both: it names types through the
 * typedefs below and entry points through TL_GPU("cuX", "hipX"), and
 * loads them with dlopen at first use (never linked), so that the library
 * loads where the runtime is not installed and says so when called.
 *
 * A template: tcx export-lib copies it unchanged.  C99.
 */
#ifndef TL_GPU_H
#define TL_GPU_H

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#if TL_WITH_CUDA && TL_WITH_HIP
#error "TL_WITH_CUDA and TL_WITH_HIP: a library runs on one GPU backend"
#endif

#define TL_STR_(x) #x
#define TL_STR(x)  TL_STR_(x)

#if TL_WITH_CUDA
#include <cuda.h>
#include <nvrtc.h>

/* TL_GPU(cuda, hip): the one of the two this build uses */
#define TL_GPU(cuda, hip) cuda
typedef CUresult tl_gpu_rc;
typedef CUdevice tl_gpu_dev;
typedef CUdeviceptr tl_gpu_ptr;
typedef CUstream tl_gpu_stream;
typedef CUmodule tl_gpu_module;
typedef CUfunction tl_gpu_function;
typedef nvrtcProgram tl_rtc_prog;
typedef nvrtcResult tl_rtc_rc;
#define TL_GPU_OK CUDA_SUCCESS
#define TL_RTC_OK NVRTC_SUCCESS
/* the libraries, first found first used */
#define TL_GPU_LIBS {"libcuda.so.1", "libcuda.so", NULL}
#define TL_RTC_LIBS {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so", NULL}
#else /* TL_WITH_HIP */
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#define TL_GPU(cuda, hip) hip
typedef hipError_t tl_gpu_rc;
typedef hipDevice_t tl_gpu_dev;
typedef hipDeviceptr_t tl_gpu_ptr;
typedef hipStream_t tl_gpu_stream;
typedef hipModule_t tl_gpu_module;
typedef hipFunction_t tl_gpu_function;
typedef hiprtcProgram tl_rtc_prog;
typedef hiprtcResult tl_rtc_rc;
#define TL_GPU_OK hipSuccess
#define TL_RTC_OK HIPRTC_SUCCESS
/* the runtime of the headers' major release (hipDeviceProp_t changes
 * between them); hiprtc has its own library since ROCm 5.3, before it was
 * the runtime's */
#define TL_HIP_SO "libamdhip64.so." TL_STR(HIP_VERSION_MAJOR)
#define TL_GPU_LIBS {TL_HIP_SO, "libamdhip64.so", NULL}
#define TL_RTC_LIBS                                                                      \
	{"libhiprtc.so." TL_STR(HIP_VERSION_MAJOR), "libhiprtc.so", TL_HIP_SO, "libamdhip64.so", \
	 NULL}
#endif

#define TL_GPU_NAME   TL_GPU("CUDA", "HIP")
#define TL_RTC_NAME   TL_GPU("NVRTC", "hiprtc")
#define TL_GPU_VENDOR TL_GPU("NVIDIA", "AMD")

/* An entry point to resolve: its name (NULL: none on this backend), where
 * its pointer goes, and whether it may be missing. */
struct tl_gpu_sym {
	const char *name;
	void *fn;
	int optional;
};

/* The first of names that dlopen loads (its name in *which), or NULL. */
static void *tl_gpu_open(const char *const *names, const char **which)
{
	int k;

	for (k = 0; names[k]; k++) {
		void *h = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);

		if (h) {
			*which = names[k];
			return h;
		}
	}
	return NULL;
}

/* Resolves syms in lib (through memcpy: ISO C has no cast from void * to a
 * function pointer); the name of the first required one missing, or NULL. */
static const char *tl_gpu_bind(void *lib, const struct tl_gpu_sym *syms, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		void *p;

		if (!syms[k].name)
			continue;
		p = dlsym(lib, syms[k].name);
		if (!p && !syms[k].optional)
			return syms[k].name;
		if (p)
			memcpy(syms[k].fn, &p, sizeof(p));
	}
	return NULL;
}

#endif /* TL_GPU_H */

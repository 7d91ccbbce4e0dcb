/* gpu.h - CUDA and HIP as tcx's cuda and hip backends (lib/backend/gpu/)
 * and the libraries tcx export-lib writes (runtime_gpu.c, client_gpu.c)
 * reach them, one file for all three users: TL_WITH_CUDA, the CUDA driver
 * API and NVRTC, or TL_WITH_HIP, the HIP runtime's module API and hiprtc.
 * The two mirror each other (cuModuleLoadData and hipModuleLoadData,
 * cuLaunchKernel and hipModuleLaunchKernel, nvrtc* and hiprtc*), so one
 * source serves both: it names types through the typedefs below and entry
 * points through TL_GPU("cuX", "hipX"), and loads them with dlopen at first
 * use (never linked), so that a program or library loads where the runtime
 * is not installed and says so when called.  Here are the libraries, every
 * entry point any user calls (one table, each marked with the users that
 * need it), loading them, the compiler's options and target, and compiling
 * a kernel, so that a library compiles what tcx bench timed as tcx does.
 *
 * The includer defines TL_GPU_USER as TL_GPU_TCX, TL_GPU_LIB or
 * TL_GPU_CLIENT (which has no compiler).  Everything is static.  A
 * template: tcx export-lib copies it unchanged, and tcx compiles it as it
 * is (lib/backend/gpu/gpu.h).  C99.
 */
#ifndef TL_GPU_H
#define TL_GPU_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if TL_WITH_CUDA && TL_WITH_HIP
#error "TL_WITH_CUDA and TL_WITH_HIP: a library runs on one GPU backend"
#endif

/* Who includes this file (TL_GPU_USER), for the entry points it needs. */
#define TL_GPU_TCX    1 /* tcx's cuda and hip backends */
#define TL_GPU_LIB    2 /* a library's run time, runtime_gpu.c */
#define TL_GPU_CLIENT 4 /* its client, client_gpu.c: no compiler */
#define TL_GPU_ALL    (TL_GPU_TCX | TL_GPU_LIB | TL_GPU_CLIENT)
#ifndef TL_GPU_USER
#error "gpu.h: define TL_GPU_USER as TL_GPU_TCX, TL_GPU_LIB or TL_GPU_CLIENT"
#endif
#define TL_GPU_RTC (TL_GPU_USER != TL_GPU_CLIENT)

#define TL_STR_(x) #x
#define TL_STR(x)  TL_STR_(x)

#if TL_WITH_CUDA
#include <cuda.h>
#include <nvrtc.h>

/* TL_GPU(cuda, hip): the one of the two this build uses */
#define TL_GPU(cuda, hip) cuda
typedef CUresult tl_gpu_rc;
typedef CUdevice tl_gpu_dev;
typedef CUcontext tl_gpu_ctx; /* what must be current to use a device: a context */
typedef CUdeviceptr tl_gpu_ptr;
typedef CUstream tl_gpu_stream;
typedef CUmodule tl_gpu_module;
typedef CUfunction tl_gpu_function;
typedef CUevent tl_gpu_event;
typedef CUdevice_attribute tl_gpu_dev_attr;
typedef CUfunction_attribute tl_gpu_func_attr;
typedef nvrtcProgram tl_rtc_prog;
typedef nvrtcResult tl_rtc_rc;
#define TL_GPU_OK CUDA_SUCCESS
#define TL_RTC_OK NVRTC_SUCCESS
/* the libraries, first found first used */
#define TL_GPU_LIBS {"libcuda.so.1", "libcuda.so", NULL}
#define TL_RTC_LIBS {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so", NULL}
/* what the kernels are compiled with besides the target: every function
 * a device function */
#define TL_RTC_OPTIONS {"-default-device", "--std=c++17"}
/* what tl_gpu_load says when the libraries are not found */
#define TL_GPU_MISSING "libcuda.so.1 not found (no NVIDIA driver)"
#define TL_RTC_MISSING                                                                       \
	"NVRTC not found (tried libnvrtc.so.13, .so.12, .so.11.2 and libnvrtc.so; install the " \
	"CUDA toolkit's NVRTC)"
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
typedef int tl_gpu_ctx; /* what must be current to use a device: its ordinal */
typedef hipDeviceptr_t tl_gpu_ptr;
typedef hipStream_t tl_gpu_stream;
typedef hipModule_t tl_gpu_module;
typedef hipFunction_t tl_gpu_function;
typedef hipEvent_t tl_gpu_event;
typedef hipDeviceAttribute_t tl_gpu_dev_attr;
typedef hipFunction_attribute tl_gpu_func_attr;
typedef hiprtcProgram tl_rtc_prog;
typedef hiprtcResult tl_rtc_rc;
#define TL_GPU_OK hipSuccess
#define TL_RTC_OK HIPRTC_SUCCESS
/* the runtime of the headers' major release (hipDeviceProp_t changes
 * between them); hiprtc has its own library since ROCm 5.3, before it was
 * the runtime's */
#define TL_HIP_SO   "libamdhip64.so." TL_STR(HIP_VERSION_MAJOR)
#define TL_GPU_LIBS {TL_HIP_SO, "libamdhip64.so", NULL}
#define TL_RTC_LIBS                                                                      \
	{"libhiprtc.so." TL_STR(HIP_VERSION_MAJOR), "libhiprtc.so", TL_HIP_SO, "libamdhip64.so", \
	 NULL}
#define TL_RTC_OPTIONS {"-std=c++17"}
#define TL_GPU_MISSING                                                                        \
	TL_HIP_SO " not found (no HIP runtime; Debian's libamdhip64-" TL_STR(HIP_VERSION_MAJOR) \
		  ")"
#define TL_RTC_MISSING                                                                        \
	"hiprtc not found (tried libhiprtc.so." TL_STR(HIP_VERSION_MAJOR) ", libhiprtc.so and " \
	"libamdhip64; install libamdhip64-dev and libhiprtc-builtins" TL_STR(HIP_VERSION_MAJOR) ")"
#endif

#define TL_GPU_NAME   TL_GPU("CUDA", "HIP")
#define TL_RTC_NAME   TL_GPU("NVRTC", "hiprtc")
#define TL_GPU_VENDOR TL_GPU("NVIDIA", "AMD")
/* the compiler's option that names the target */
#define TL_RTC_ARCH_OPTION TL_GPU("--gpu-architecture=%s", "--offload-arch=%s")
/* HIP's prototypes take strings and sources it does not write as non-const */
#define TL_GPU_CSTRS TL_GPU(const char *const *, const char **)
#define TL_GPU_CSRC  TL_GPU(const void, void)

/* The runtime's entry points, NULL until loaded; those of one backend
 * alone are NULL on the other. */
struct tl_gpu_api {
	tl_gpu_rc (*Init)(unsigned flags);
	tl_gpu_rc (*Version)(int *v); /* the driver's (CUDA), the runtime's (HIP) */
#if TL_WITH_CUDA
	CUresult (*GetErrorName)(CUresult rc, const char **name);
#else
	const char *(*GetErrorName)(hipError_t rc);
#endif
	tl_gpu_rc (*DeviceGetCount)(int *count);
	tl_gpu_rc (*DeviceGet)(tl_gpu_dev *dev, int ordinal);
	tl_gpu_rc (*DeviceGetName)(char *name, int len, tl_gpu_dev dev);
	tl_gpu_rc (*DeviceGetAttribute)(int *v, tl_gpu_dev_attr a, tl_gpu_dev dev);
	tl_gpu_rc (*DeviceTotalMem)(size_t *bytes, tl_gpu_dev dev);
	tl_gpu_rc (*GetDeviceProperties)(TL_GPU(void, hipDeviceProp_t) *p, int ordinal); /* HIP */
	/* what is current: CUDA a context (the primary one of a device), HIP
	 * the device */
	tl_gpu_rc (*PrimaryCtxRetain)(tl_gpu_ctx *ctx, tl_gpu_dev dev); /* CUDA */
	tl_gpu_rc (*PrimaryCtxRelease)(tl_gpu_dev dev);			/* CUDA */
	tl_gpu_rc (*SetCurrent)(tl_gpu_ctx ctx);
	tl_gpu_rc (*GetCurrent)(tl_gpu_ctx *ctx);
	tl_gpu_rc (*CtxGetDevice)(tl_gpu_dev *dev); /* CUDA */
	tl_gpu_rc (*Synchronize)(void);
	tl_gpu_rc (*StreamCreate)(tl_gpu_stream *s, unsigned flags);
	tl_gpu_rc (*StreamDestroy)(tl_gpu_stream s);
	tl_gpu_rc (*StreamSynchronize)(tl_gpu_stream s);
	tl_gpu_rc (*MemAlloc)(tl_gpu_ptr *p, size_t bytes);
	tl_gpu_rc (*MemFree)(tl_gpu_ptr p);
	tl_gpu_rc (*MemAllocAsync)(tl_gpu_ptr *p, size_t bytes, tl_gpu_stream s);
	tl_gpu_rc (*MemFreeAsync)(tl_gpu_ptr p, tl_gpu_stream s);
	tl_gpu_rc (*MemcpyHtoD)(tl_gpu_ptr dst, TL_GPU_CSRC *src, size_t n);
	tl_gpu_rc (*MemcpyDtoH)(void *dst, tl_gpu_ptr src, size_t n);
	tl_gpu_rc (*MemcpyHtoDAsync)(tl_gpu_ptr dst, TL_GPU_CSRC *src, size_t n, tl_gpu_stream s);
	tl_gpu_rc (*MemcpyDtoHAsync)(void *dst, tl_gpu_ptr src, size_t n, tl_gpu_stream s);
	tl_gpu_rc (*ModuleLoadData)(tl_gpu_module *m, const void *image);
	tl_gpu_rc (*ModuleUnload)(tl_gpu_module m);
	tl_gpu_rc (*ModuleGetFunction)(tl_gpu_function *f, tl_gpu_module m, const char *name);
	tl_gpu_rc (*FuncGetAttribute)(int *v, tl_gpu_func_attr a, tl_gpu_function f);
	/* CUDA: a kernel's opt-in to more shared memory than the default 48
	 * KiB, and (12.4) its parameters, so that launches can check them */
	tl_gpu_rc (*FuncSetAttribute)(tl_gpu_function f, tl_gpu_func_attr a, int v);
	tl_gpu_rc (*FuncGetParamInfo)(tl_gpu_function f, size_t index, size_t *offset,
				      size_t *size);
	tl_gpu_rc (*LaunchKernel)(tl_gpu_function f, unsigned gx, unsigned gy, unsigned gz,
				  unsigned bx, unsigned by, unsigned bz, unsigned shared,
				  tl_gpu_stream s, void **params, void **extra);
	tl_gpu_rc (*EventCreate)(tl_gpu_event *e, unsigned flags);
	tl_gpu_rc (*EventDestroy)(tl_gpu_event e);
	tl_gpu_rc (*EventRecord)(tl_gpu_event e, tl_gpu_stream s);
	tl_gpu_rc (*EventSynchronize)(tl_gpu_event e);
	tl_gpu_rc (*EventElapsedTime)(float *ms, tl_gpu_event start, tl_gpu_event end);
};

static struct tl_gpu_api tl_gpu;

/* An entry point to resolve: its name (NULL: none on this backend), where
 * its pointer goes, and the users that need it (the others take it where
 * it is). */
struct tl_gpu_sym {
	const char *name;
	void *fn;
	int need;
};

#define TL_GPU_SYM(field, cuda, hip, need) {TL_GPU(cuda, hip), &tl_gpu.field, need}

/* The runtime's, by their versioned symbol names (cuda.h maps cuMemAlloc
 * to cuMemAlloc_v2). */
static const struct tl_gpu_sym tl_gpu_syms[] = {
    TL_GPU_SYM(Init, "cuInit", "hipInit", TL_GPU_ALL),
    TL_GPU_SYM(Version, "cuDriverGetVersion", "hipRuntimeGetVersion",
	       TL_GPU(TL_GPU_TCX, TL_GPU_TCX | TL_GPU_LIB)),
    TL_GPU_SYM(GetErrorName, "cuGetErrorName", "hipGetErrorName", TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(DeviceGetCount, "cuDeviceGetCount", "hipGetDeviceCount", TL_GPU_TCX),
    TL_GPU_SYM(DeviceGet, "cuDeviceGet", "hipDeviceGet",
	       TL_GPU(TL_GPU_TCX | TL_GPU_CLIENT, TL_GPU_CLIENT)),
    TL_GPU_SYM(DeviceGetName, "cuDeviceGetName", "hipDeviceGetName", TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(DeviceGetAttribute, "cuDeviceGetAttribute", "hipDeviceGetAttribute",
	       TL_GPU(TL_GPU_TCX | TL_GPU_LIB, TL_GPU_TCX)),
    TL_GPU_SYM(DeviceTotalMem, "cuDeviceTotalMem_v2", "hipDeviceTotalMem", TL_GPU_TCX),
    TL_GPU_SYM(GetDeviceProperties, NULL, "hipGetDeviceProperties", TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, TL_GPU_TCX | TL_GPU_CLIENT),
    TL_GPU_SYM(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL,
	       TL_GPU_TCX | TL_GPU_CLIENT),
    TL_GPU_SYM(SetCurrent, "cuCtxSetCurrent", "hipSetDevice", TL_GPU_TCX | TL_GPU_CLIENT),
    TL_GPU_SYM(GetCurrent, "cuCtxGetCurrent", "hipGetDevice", TL_GPU_LIB),
    TL_GPU_SYM(CtxGetDevice, "cuCtxGetDevice", NULL, TL_GPU_LIB),
    TL_GPU_SYM(Synchronize, "cuCtxSynchronize", "hipDeviceSynchronize", TL_GPU_CLIENT),
    TL_GPU_SYM(StreamCreate, "cuStreamCreate", "hipStreamCreateWithFlags", TL_GPU_TCX),
    TL_GPU_SYM(StreamDestroy, "cuStreamDestroy_v2", "hipStreamDestroy", TL_GPU_TCX),
    TL_GPU_SYM(StreamSynchronize, "cuStreamSynchronize", "hipStreamSynchronize",
	       TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(MemAlloc, "cuMemAlloc_v2", "hipMalloc", TL_GPU_TCX | TL_GPU_CLIENT),
    TL_GPU_SYM(MemFree, "cuMemFree_v2", "hipFree", TL_GPU_TCX | TL_GPU_CLIENT),
    TL_GPU_SYM(MemAllocAsync, "cuMemAllocAsync", "hipMallocAsync", TL_GPU_LIB),
    TL_GPU_SYM(MemFreeAsync, "cuMemFreeAsync", "hipFreeAsync", TL_GPU_LIB),
    TL_GPU_SYM(MemcpyHtoD, "cuMemcpyHtoD_v2", "hipMemcpyHtoD", TL_GPU_CLIENT),
    TL_GPU_SYM(MemcpyDtoH, "cuMemcpyDtoH_v2", "hipMemcpyDtoH", TL_GPU_CLIENT),
    TL_GPU_SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "hipMemcpyHtoDAsync",
	       TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "hipMemcpyDtoHAsync",
	       TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(ModuleLoadData, "cuModuleLoadData", "hipModuleLoadData", TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(ModuleUnload, "cuModuleUnload", "hipModuleUnload", TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(ModuleGetFunction, "cuModuleGetFunction", "hipModuleGetFunction",
	       TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(FuncGetAttribute, "cuFuncGetAttribute", "hipFuncGetAttribute", TL_GPU_TCX),
    TL_GPU_SYM(FuncSetAttribute, "cuFuncSetAttribute", NULL, TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(FuncGetParamInfo, "cuFuncGetParamInfo", NULL, 0),
    TL_GPU_SYM(LaunchKernel, "cuLaunchKernel", "hipModuleLaunchKernel", TL_GPU_TCX | TL_GPU_LIB),
    TL_GPU_SYM(EventCreate, "cuEventCreate", "hipEventCreateWithFlags", TL_GPU_TCX),
    TL_GPU_SYM(EventDestroy, "cuEventDestroy_v2", "hipEventDestroy", TL_GPU_TCX),
    TL_GPU_SYM(EventRecord, "cuEventRecord", "hipEventRecord", TL_GPU_TCX),
    TL_GPU_SYM(EventSynchronize, "cuEventSynchronize", "hipEventSynchronize", TL_GPU_TCX),
    TL_GPU_SYM(EventElapsedTime, "cuEventElapsedTime", "hipEventElapsedTime", TL_GPU_TCX),
};

/* The first of names (NULL-ended) that dlopen loads (its name in *which),
 * or NULL. */
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

/* Resolves syms[0..n) in lib (through memcpy: ISO C has no cast from void *
 * to a function pointer); the name of the first that this includer needs
 * and lib lacks, or NULL. */
static const char *tl_gpu_bind(void *lib, const struct tl_gpu_sym *syms, size_t n)
{
	const char *missing = NULL;
	size_t k;

	for (k = 0; k < n; k++) {
		void *p = syms[k].name ? dlsym(lib, syms[k].name) : NULL;

		if (!p && syms[k].name && (syms[k].need & TL_GPU_USER) && !missing)
			missing = syms[k].name;
		memcpy(syms[k].fn, &p, sizeof(p));
	}
	return missing;
}

#if TL_GPU_RTC
/* The runtime's name of an error code ("CUDA_ERROR_INVALID_VALUE"). */
static const char *tl_gpu_error(tl_gpu_rc rc)
{
	const char *s = NULL;

#if TL_WITH_CUDA
	if (!tl_gpu.GetErrorName || tl_gpu.GetErrorName(rc, &s) != CUDA_SUCCESS)
		s = NULL;
#else
	if (tl_gpu.GetErrorName)
		s = tl_gpu.GetErrorName(rc);
#endif
	return s ? s : "unknown " TL_GPU_NAME " error";
}

/* The compiler's entry points. */
struct tl_rtc_api {
	tl_rtc_rc (*Version)(int *major, int *minor);
	const char *(*GetErrorString)(tl_rtc_rc rc);
	tl_rtc_rc (*CreateProgram)(tl_rtc_prog *p, const char *src, const char *name, int nheaders,
				   TL_GPU_CSTRS headers, TL_GPU_CSTRS include_names);
	tl_rtc_rc (*DestroyProgram)(tl_rtc_prog *p);
	tl_rtc_rc (*CompileProgram)(tl_rtc_prog p, int nopts, TL_GPU_CSTRS opts);
	tl_rtc_rc (*GetProgramLogSize)(tl_rtc_prog p, size_t *n);
	tl_rtc_rc (*GetProgramLog)(tl_rtc_prog p, char *log);
	/* the binary: a cubin (NVRTC 11.1), a code object */
	tl_rtc_rc (*GetCodeSize)(tl_rtc_prog p, size_t *n);
	tl_rtc_rc (*GetCode)(tl_rtc_prog p, char *code);
	/* NVRTC's alone: PTX, and (11.2) the architectures it knows */
	tl_rtc_rc (*GetPTXSize)(tl_rtc_prog p, size_t *n);
	tl_rtc_rc (*GetPTX)(tl_rtc_prog p, char *ptx);
	tl_rtc_rc (*GetNumSupportedArchs)(int *n);
	tl_rtc_rc (*GetSupportedArchs)(int *archs);
};

static struct tl_rtc_api tl_rtc;

#define TL_RTC_SYM(field, cuda, hip, need) {TL_GPU(cuda, hip), &tl_rtc.field, need}

static const struct tl_gpu_sym tl_rtc_syms[] = {
    TL_RTC_SYM(Version, "nvrtcVersion", "hiprtcVersion", TL_GPU_TCX),
    TL_RTC_SYM(GetErrorString, "nvrtcGetErrorString", "hiprtcGetErrorString", TL_GPU_TCX),
    TL_RTC_SYM(CreateProgram, "nvrtcCreateProgram", "hiprtcCreateProgram", TL_GPU_ALL),
    TL_RTC_SYM(DestroyProgram, "nvrtcDestroyProgram", "hiprtcDestroyProgram", TL_GPU_ALL),
    TL_RTC_SYM(CompileProgram, "nvrtcCompileProgram", "hiprtcCompileProgram", TL_GPU_ALL),
    TL_RTC_SYM(GetProgramLogSize, "nvrtcGetProgramLogSize", "hiprtcGetProgramLogSize",
	       TL_GPU_ALL),
    TL_RTC_SYM(GetProgramLog, "nvrtcGetProgramLog", "hiprtcGetProgramLog", TL_GPU_ALL),
    TL_RTC_SYM(GetCodeSize, "nvrtcGetCUBINSize", "hiprtcGetCodeSize", TL_GPU(0, TL_GPU_ALL)),
    TL_RTC_SYM(GetCode, "nvrtcGetCUBIN", "hiprtcGetCode", TL_GPU(0, TL_GPU_ALL)),
    TL_RTC_SYM(GetPTXSize, "nvrtcGetPTXSize", NULL, TL_GPU_ALL),
    TL_RTC_SYM(GetPTX, "nvrtcGetPTX", NULL, TL_GPU_ALL),
    TL_RTC_SYM(GetNumSupportedArchs, "nvrtcGetNumSupportedArchs", NULL, 0),
    TL_RTC_SYM(GetSupportedArchs, "nvrtcGetSupportedArchs", NULL, 0),
};

/* What tl_rtc_build did not get past. */
enum tl_rtc_step { TL_RTC_BUILT, TL_RTC_CREATE, TL_RTC_COMPILE, TL_RTC_OUTPUT, TL_RTC_NOMEM };

/* Compiles the C string src with options opts[0..nopt) into *code, *len
 * bytes the caller frees: PTX when ptx, else the cubin (PTX where this
 * NVRTC gives none) or code object.  With log, *log is the compiler's log
 * (NUL-terminated, the caller's to free; NULL when it could not be read)
 * once the program was created.  TL_RTC_BUILT, or the step that failed,
 * the compiler's status of it in *rc. */
static enum tl_rtc_step tl_rtc_build(const char *src, const char *const *opts, int nopt, int ptx,
				     char **code, size_t *len, char **log, tl_rtc_rc *rc)
{
	int cubin = !ptx && tl_rtc.GetCodeSize && tl_rtc.GetCode;
	enum tl_rtc_step step = TL_RTC_COMPILE;
	tl_rtc_prog prog = NULL;
	size_t n = 0;

	*code = NULL;
	*len = 0;
	if (log)
		*log = NULL;
	*rc = tl_rtc.CreateProgram(&prog, src, "tcx_kernel.cu", 0, NULL, NULL);
	if (*rc != TL_RTC_OK)
		return TL_RTC_CREATE;
	*rc = tl_rtc.CompileProgram(prog, nopt, (TL_GPU_CSTRS)opts);
	if (log && tl_rtc.GetProgramLogSize(prog, &n) == TL_RTC_OK &&
	    (*log = calloc(n + 1, 1)) != NULL && n && tl_rtc.GetProgramLog(prog, *log) != TL_RTC_OK)
		(*log)[0] = '\0';
	if (*rc != TL_RTC_OK)
		goto out;
	step = TL_RTC_OUTPUT;
	*rc = cubin ? tl_rtc.GetCodeSize(prog, &n) : tl_rtc.GetPTXSize(prog, &n);
	if (*rc != TL_RTC_OK)
		goto out;
	*code = malloc(n ? n : 1);
	if (!*code) {
		step = TL_RTC_NOMEM;
		goto out;
	}
	*rc = cubin ? tl_rtc.GetCode(prog, *code) : tl_rtc.GetPTX(prog, *code);
	if (*rc != TL_RTC_OK) {
		free(*code);
		*code = NULL;
		goto out;
	}
	*len = n;
	step = TL_RTC_BUILT;
out:
	tl_rtc.DestroyProgram(&prog);
	return step;
}

#if TL_WITH_CUDA
/* The target NVRTC compiles a device of architecture `arch` ("sm_90")
 * for, into target (size bytes), *ptx set when it is a virtual one: the
 * device's own architecture when NVRTC knows it (a cubin; on Hopper
 * sm_90a, whose wgmma instructions NVRTC has from CUDA 12 and whose code
 * runs on sm_90 devices only, which is all the device at hand is), else
 * the newest virtual architecture NVRTC has (PTX, which the driver
 * compiles).  An architecture that is not "sm_N", or one NVRTC cannot be
 * asked about, is its own target.  0, or -1 when NVRTC knows only newer
 * architectures than arch (target is arch then). */
static int tl_rtc_target(const char *arch, char *target, size_t size, int *ptx)
{
	int want, n = 0, best = 0, known = 0, major = 0, minor = 0, k, *list = NULL;

	*ptx = 0;
	snprintf(target, size, "%s", arch);
	if (sscanf(arch, "sm_%d", &want) != 1 || !tl_rtc.GetNumSupportedArchs ||
	    !tl_rtc.GetSupportedArchs || tl_rtc.GetNumSupportedArchs(&n) != TL_RTC_OK || n <= 0 ||
	    !(list = malloc((size_t)n * sizeof(*list))) || tl_rtc.GetSupportedArchs(list) != TL_RTC_OK)
		n = 0;
	for (k = 0; k < n; k++) {
		known |= list[k] == want;
		best = list[k] > best ? list[k] : best;
	}
	free(list);
	if (n <= 0)
		return 0;
	if (known) {
		if (want == 90 && tl_rtc.Version && tl_rtc.Version(&major, &minor) == TL_RTC_OK &&
		    major >= 12)
			snprintf(target, size, "sm_90a");
		return 0;
	}
	if (want > best) {
		snprintf(target, size, "compute_%d", best);
		*ptx = 1;
		return 0;
	}
	return -1;
}
#endif

/* Device d's architecture as tcx names it ("sm_90", "gfx90a"), and the
 * target the compiler is given for it ("sm_90", HIP's target id
 * "gfx90a:sramecc+:xnack-"; "" when HIP does not say). */
static void tl_gpu_arch(tl_gpu_dev d, char *arch, size_t asize, char *target, size_t tsize)
{
#if TL_WITH_CUDA
	int ma = 0, mi = 0;

	tl_gpu.DeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
	tl_gpu.DeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
	snprintf(arch, asize, "sm_%d%d", ma, mi);
	snprintf(target, tsize, "%s", arch);
#else
	hipDeviceProp_t *props = calloc(1, sizeof(*props));

	target[0] = '\0';
	if (props && tl_gpu.GetDeviceProperties(props, d) == hipSuccess)
		snprintf(target, tsize, "%s", props->gcnArchName);
	free(props);
	/* the processor, without the target features */
	snprintf(arch, asize, "%.*s", (int)strcspn(target, ":"), target);
#endif
}

#if TL_WITH_HIP
/* Whether the HIP runtime loaded from lib is of the headers' major release
 * (hipDeviceProp_t and the attribute numbers change between them); else
 * why, for `who` ("tcx", "the library") built with these headers. */
static int tl_hip_release_ok(const char *lib, const char *who, char *why, size_t len)
{
	int v = 0;

	if (tl_gpu.Version(&v) != hipSuccess || v / 10000000 == HIP_VERSION_MAJOR)
		return 1;
	snprintf(why, len, "%s is HIP %d.%d, but %s was built with the HIP %d headers", lib,
		 v / 10000000, v / 100000 % 100, who, HIP_VERSION_MAJOR);
	return 0;
}
#endif

/* Loads the runtime's library (rtc 0) or the compiler's (rtc 1: the one
 * the environment variable `env` names, when set) and resolves its entry
 * points (tl_gpu, tl_rtc) and own[0..nown); on HIP, checks the runtime's
 * release for `who` ("tcx", "the library").  The library, kept open for
 * the life of the process (its name in *which), or NULL with the entry
 * points NULL again and why (len bytes) saying why; `too_old` follows
 * "LIBRARY has no SYMBOL". */
static void *tl_gpu_load(int rtc, const char *env, const struct tl_gpu_sym *own, size_t nown,
			 const char *who, const char *too_old, char *why, size_t len,
			 const char **which)
{
	static const char *const gpu_names[] = TL_GPU_LIBS, *const rtc_names[] = TL_RTC_LIBS;
	const char *path = env ? getenv(env) : NULL, *missing;
	const char *const paths[] = {path, NULL};
	const struct tl_gpu_sym *syms = rtc ? tl_rtc_syms : tl_gpu_syms;
	size_t n = rtc ? sizeof(tl_rtc_syms) / sizeof(tl_rtc_syms[0])
		       : sizeof(tl_gpu_syms) / sizeof(tl_gpu_syms[0]), k;
	void *none = NULL, *h;

	/* the environment names the library to use instead (a path, or one
	 * outside the loader's search path, as pip's wheels install NVRTC) */
	h = tl_gpu_open(path && *path ? paths : rtc ? rtc_names : gpu_names, which);
	if (!h) {
		if (path && *path)
			snprintf(why, len, "%s not found: cannot load %s '%s'", TL_RTC_NAME, env, path);
		else
			snprintf(why, len, "%s", rtc ? TL_RTC_MISSING : TL_GPU_MISSING);
		return NULL;
	}
	missing = tl_gpu_bind(h, syms, n);
	if (!missing)
		missing = tl_gpu_bind(h, own, nown);
	if (missing)
		snprintf(why, len, "%s has no %s%s", *which, missing, too_old);
#if TL_WITH_HIP
	else if (!rtc && !tl_hip_release_ok(*which, who, why, len))
		missing = *which;
#else
	(void)who;
#endif
	if (!missing)
		return h;
	for (k = 0; k < n + nown; k++)
		memcpy(k < n ? syms[k].fn : own[k - n].fn, &none, sizeof(none));
	dlclose(h);
	return NULL;
}
#endif /* TL_GPU_RTC */

#endif /* TL_GPU_H */

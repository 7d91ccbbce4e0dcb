/* cuda.c - the "cuda" backend: NVIDIA GPUs through the CUDA driver API,
 * with kernels compiled by NVRTC for the device's own architecture.  Both
 * libraries are loaded with dlopen on first use, so one tcx binary runs
 * with or without CUDA; when they are absent, probe says why and `tcx
 * devices` shows it.  Only cuda.h's and nvrtc.h's types are used at build
 * time: nothing links libcuda, libnvrtc or the CUDA runtime. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <nvrtc.h>

#include "backend/backend.h"
#include "backend/cuda/cuda.h"

/* --- the libraries ---------------------------------------------------- */

/* The driver API entry points tcx uses, by their versioned symbol names
 * (cuda.h's macros map e.g. cuMemAlloc to cuMemAlloc_v2). */
struct cu_api {
	CUresult (*Init)(unsigned flags);
	CUresult (*DriverGetVersion)(int *version);
	CUresult (*GetErrorName)(CUresult rc, const char **name);
	CUresult (*DeviceGetCount)(int *count);
	CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
	CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
	CUresult (*DeviceGetAttribute)(int *v, CUdevice_attribute a, CUdevice dev);
	CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice dev);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
	CUresult (*CtxSetCurrent)(CUcontext ctx);
	CUresult (*StreamCreate)(CUstream *s, unsigned flags);
	CUresult (*StreamDestroy)(CUstream s);
	CUresult (*StreamSynchronize)(CUstream s);
	CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);
	CUresult (*MemFree)(CUdeviceptr p);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t n, CUstream s);
	CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t n, CUstream s);
	CUresult (*MemsetD8Async)(CUdeviceptr p, unsigned char v, size_t n, CUstream s);
	CUresult (*MemsetD16Async)(CUdeviceptr p, unsigned short v, size_t n, CUstream s);
	CUresult (*MemsetD32Async)(CUdeviceptr p, unsigned int v, size_t n, CUstream s);
	CUresult (*MemsetD2D32Async)(CUdeviceptr p, size_t pitch, unsigned int v, size_t w,
				     size_t h, CUstream s);
	CUresult (*ModuleLoadData)(CUmodule *m, const void *image);
	CUresult (*ModuleUnload)(CUmodule m);
	CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
	CUresult (*FuncGetAttribute)(int *v, CUfunction_attribute a, CUfunction f);
	CUresult (*FuncSetAttribute)(CUfunction f, CUfunction_attribute a, int v);
	/* optional (CUDA 12.4): lets launches check their arguments */
	CUresult (*FuncGetParamInfo)(CUfunction f, size_t index, size_t *offset, size_t *size);
	CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				 unsigned by, unsigned bz, unsigned shared, CUstream s,
				 void **params, void **extra);
	CUresult (*EventCreate)(CUevent *e, unsigned flags);
	CUresult (*EventDestroy)(CUevent e);
	CUresult (*EventRecord)(CUevent e, CUstream s);
	CUresult (*EventSynchronize)(CUevent e);
	CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
	/* optional (12.0): tensor maps for the copy engine */
	CUresult (*TensorMapEncodeTiled)(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank,
					 void *addr, const cuuint64_t *dim,
					 const cuuint64_t *stride, const cuuint32_t *box,
					 const cuuint32_t *estride, CUtensorMapInterleave il,
					 CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
					 CUtensorMapFloatOOBfill fill);
};

struct nvrtc_api {
	nvrtcResult (*Version)(int *major, int *minor);
	const char *(*GetErrorString)(nvrtcResult rc);
	nvrtcResult (*CreateProgram)(nvrtcProgram *p, const char *src, const char *name,
				     int nheaders, const char *const *headers,
				     const char *const *include_names);
	nvrtcResult (*DestroyProgram)(nvrtcProgram *p);
	nvrtcResult (*CompileProgram)(nvrtcProgram p, int nopts, const char *const *opts);
	nvrtcResult (*GetProgramLogSize)(nvrtcProgram p, size_t *n);
	nvrtcResult (*GetProgramLog)(nvrtcProgram p, char *log);
	nvrtcResult (*GetPTXSize)(nvrtcProgram p, size_t *n);
	nvrtcResult (*GetPTX)(nvrtcProgram p, char *ptx);
	/* optional (11.1, 11.2): cubins and the list of architectures */
	nvrtcResult (*GetCUBINSize)(nvrtcProgram p, size_t *n);
	nvrtcResult (*GetCUBIN)(nvrtcProgram p, char *cubin);
	nvrtcResult (*GetNumSupportedArchs)(int *n);
	nvrtcResult (*GetSupportedArchs)(int *archs);
};

struct sym {
	const char *name;
	void **slot;
	bool optional;
};

static struct cu_api cu;
static struct nvrtc_api rtc;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT, rtc_once = PTHREAD_ONCE_INIT;
static char cu_why[256], rtc_why[512]; /* why a library is unusable; "" when it is */
static char rtc_name[64];

#define SLOT(api, field) ((void **)&(api).field)

/* Opens the first library of `names` (NULL-terminated) that loads; its
 * name in *which. */
static void *open_first(const char *const *names, const char **which)
{
	for (int k = 0; names[k]; k++) {
		void *h = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);

		if (h) {
			*which = names[k];
			return h;
		}
	}
	return NULL;
}

/* Fills every slot from h; the name of the first required symbol that is
 * missing, or NULL. */
static const char *resolve(void *h, const struct sym *syms, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		*syms[k].slot = dlsym(h, syms[k].name);
		if (!*syms[k].slot && !syms[k].optional)
			return syms[k].name;
	}
	return NULL;
}

static void load_cuda(void)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
	const struct sym syms[] = {
	    {"cuInit", SLOT(cu, Init), false},
	    {"cuDriverGetVersion", SLOT(cu, DriverGetVersion), false},
	    {"cuGetErrorName", SLOT(cu, GetErrorName), false},
	    {"cuDeviceGetCount", SLOT(cu, DeviceGetCount), false},
	    {"cuDeviceGet", SLOT(cu, DeviceGet), false},
	    {"cuDeviceGetName", SLOT(cu, DeviceGetName), false},
	    {"cuDeviceGetAttribute", SLOT(cu, DeviceGetAttribute), false},
	    {"cuDeviceTotalMem_v2", SLOT(cu, DeviceTotalMem), false},
	    {"cuDevicePrimaryCtxRetain", SLOT(cu, DevicePrimaryCtxRetain), false},
	    {"cuDevicePrimaryCtxRelease_v2", SLOT(cu, DevicePrimaryCtxRelease), false},
	    {"cuCtxSetCurrent", SLOT(cu, CtxSetCurrent), false},
	    {"cuStreamCreate", SLOT(cu, StreamCreate), false},
	    {"cuStreamDestroy_v2", SLOT(cu, StreamDestroy), false},
	    {"cuStreamSynchronize", SLOT(cu, StreamSynchronize), false},
	    {"cuMemAlloc_v2", SLOT(cu, MemAlloc), false},
	    {"cuMemFree_v2", SLOT(cu, MemFree), false},
	    {"cuMemcpyHtoDAsync_v2", SLOT(cu, MemcpyHtoDAsync), false},
	    {"cuMemcpyDtoHAsync_v2", SLOT(cu, MemcpyDtoHAsync), false},
	    {"cuMemsetD8Async", SLOT(cu, MemsetD8Async), false},
	    {"cuMemsetD16Async", SLOT(cu, MemsetD16Async), false},
	    {"cuMemsetD32Async", SLOT(cu, MemsetD32Async), false},
	    {"cuMemsetD2D32Async", SLOT(cu, MemsetD2D32Async), false},
	    {"cuModuleLoadData", SLOT(cu, ModuleLoadData), false},
	    {"cuModuleUnload", SLOT(cu, ModuleUnload), false},
	    {"cuModuleGetFunction", SLOT(cu, ModuleGetFunction), false},
	    {"cuFuncGetAttribute", SLOT(cu, FuncGetAttribute), false},
	    {"cuFuncSetAttribute", SLOT(cu, FuncSetAttribute), false},
	    {"cuFuncGetParamInfo", SLOT(cu, FuncGetParamInfo), true},
	    {"cuLaunchKernel", SLOT(cu, LaunchKernel), false},
	    {"cuEventCreate", SLOT(cu, EventCreate), false},
	    {"cuEventDestroy_v2", SLOT(cu, EventDestroy), false},
	    {"cuEventRecord", SLOT(cu, EventRecord), false},
	    {"cuEventSynchronize", SLOT(cu, EventSynchronize), false},
	    {"cuEventElapsedTime", SLOT(cu, EventElapsedTime), false},
	    {"cuTensorMapEncodeTiled", SLOT(cu, TensorMapEncodeTiled), true},
	};
	const char *which = NULL, *missing;
	void *h = open_first(names, &which);

	if (!h) {
		snprintf(cu_why, sizeof(cu_why), "libcuda.so.1 not found (no NVIDIA driver)");
		return;
	}
	missing = resolve(h, syms, ARRAY_SIZE(syms));
	if (missing) {
		snprintf(cu_why, sizeof(cu_why), "%s has no %s (an NVIDIA driver too old for tcx)",
			 which, missing);
		memset(&cu, 0, sizeof(cu));
		dlclose(h);
	}
	/* else kept open for the life of the process */
}

static void load_nvrtc(void)
{
	static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
					    "libnvrtc.so", NULL};
	const char *env = getenv("TCX_NVRTC_LIBRARY");
	const char *const env_names[] = {env, NULL};
	const struct sym syms[] = {
	    {"nvrtcVersion", SLOT(rtc, Version), false},
	    {"nvrtcGetErrorString", SLOT(rtc, GetErrorString), false},
	    {"nvrtcCreateProgram", SLOT(rtc, CreateProgram), false},
	    {"nvrtcDestroyProgram", SLOT(rtc, DestroyProgram), false},
	    {"nvrtcCompileProgram", SLOT(rtc, CompileProgram), false},
	    {"nvrtcGetProgramLogSize", SLOT(rtc, GetProgramLogSize), false},
	    {"nvrtcGetProgramLog", SLOT(rtc, GetProgramLog), false},
	    {"nvrtcGetPTXSize", SLOT(rtc, GetPTXSize), false},
	    {"nvrtcGetPTX", SLOT(rtc, GetPTX), false},
	    {"nvrtcGetCUBINSize", SLOT(rtc, GetCUBINSize), true},
	    {"nvrtcGetCUBIN", SLOT(rtc, GetCUBIN), true},
	    {"nvrtcGetNumSupportedArchs", SLOT(rtc, GetNumSupportedArchs), true},
	    {"nvrtcGetSupportedArchs", SLOT(rtc, GetSupportedArchs), true},
	};
	const char *which = NULL, *missing;
	void *h;

	/* TCX_NVRTC_LIBRARY names the library to use instead (a path, or an
	 * NVRTC outside the loader's search path, as pip's wheels install) */
	h = open_first(env && *env ? env_names : names, &which);
	if (!h) {
		if (env && *env)
			snprintf(rtc_why, sizeof(rtc_why),
				 "NVRTC not found: cannot load TCX_NVRTC_LIBRARY '%s'", env);
		else
			snprintf(rtc_why, sizeof(rtc_why),
				 "NVRTC not found (tried libnvrtc.so.13, .so.12, .so.11.2 and "
				 "libnvrtc.so; install the CUDA toolkit's NVRTC)");
		return;
	}
	missing = resolve(h, syms, ARRAY_SIZE(syms));
	if (missing) {
		snprintf(rtc_why, sizeof(rtc_why), "%s has no %s (NVRTC too old for tcx)", which,
			 missing);
		memset(&rtc, 0, sizeof(rtc));
		dlclose(h);
		return;
	}
	snprintf(rtc_name, sizeof(rtc_name), "%s", which);
}

static enum tcx_status need_cuda(struct tcx_error *err)
{
	pthread_once(&cu_once, load_cuda);
	return cu_why[0] ? tcx_fail(err, TCX_ENODEV, "%s", cu_why) : TCX_OK;
}

static enum tcx_status need_nvrtc(struct tcx_error *err)
{
	pthread_once(&rtc_once, load_nvrtc);
	return rtc_why[0] ? tcx_fail(err, TCX_ENODEV, "%s", rtc_why) : TCX_OK;
}

static const char *cu_err_name(CUresult rc)
{
	const char *s = NULL;

	if (cu.GetErrorName && cu.GetErrorName(rc, &s) == CUDA_SUCCESS && s)
		return s;
	return "unknown CUDA error";
}

/* As tcx_fail, with ": CUDA_ERROR_NAME (code)" appended and err->native = rc. */
static enum tcx_status cu_fail(struct tcx_error *err, enum tcx_status code, CUresult rc,
			       const char *fmt, ...) TCX_PRINTF(4, 5);
static enum tcx_status cu_fail(struct tcx_error *err, enum tcx_status code, CUresult rc,
			       const char *fmt, ...)
{
	char what[TCX_ERROR_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tcx_fail(err, code, "%s: %s (%d)", what, cu_err_name(rc), (int)rc);
	if (err)
		err->native = (int)rc;
	return code;
}

/* --- NVRTC ------------------------------------------------------------- */

/* The first line of a compiler log that reports an error (else its first
 * line), for an error message. */
static void log_head(const char *log, char *buf, size_t size)
{
	const char *start = log, *e;
	size_t n;

	if (!log || !*log) {
		snprintf(buf, size, "(the compiler gave no log)");
		return;
	}
	e = strstr(log, "error");
	if (e) {
		while (e > log && e[-1] != '\n')
			e--;
		start = e;
	}
	start += strspn(start, "\n ");
	n = strcspn(start, "\n");
	snprintf(buf, size, "%.*s", (int)n, start);
}

/* NVRTC's target for an architecture: the real one when NVRTC knows it
 * (a cubin), else the newest virtual one it has (PTX the driver compiles). */
static enum tcx_status pick_target(const char *arch, char *target, size_t size, bool *ptx,
				   struct tcx_error *err)
{
	int want, n = 0, *list = NULL, best = 0;
	bool known = false;

	*ptx = false;
	snprintf(target, size, "%s", arch);
	if (sscanf(arch, "sm_%d", &want) != 1 || !rtc.GetNumSupportedArchs ||
	    !rtc.GetSupportedArchs || rtc.GetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0)
		return TCX_OK; /* let NVRTC judge the name */
	list = calloc((size_t)n, sizeof(*list));
	if (!list)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (rtc.GetSupportedArchs(list) != NVRTC_SUCCESS) {
		free(list);
		return TCX_OK;
	}
	for (int k = 0; k < n; k++) {
		known |= list[k] == want;
		best = list[k] > best ? list[k] : best;
	}
	free(list);
	if (known) {
		int major = 0, minor = 0;

		/* Hopper: its own instructions (wgmma) need the sm_90a target,
		 * which NVRTC has from CUDA 12; such code runs on sm_90 devices
		 * only, and tcx compiles for the device at hand */
		if (want == 90 && rtc.Version(&major, &minor) == NVRTC_SUCCESS && major >= 12)
			snprintf(target, size, "sm_90a");
		return TCX_OK;
	}
	if (want > best) {
		snprintf(target, size, "compute_%d", best);
		*ptx = true;
		return TCX_OK;
	}
	return tcx_fail(err, TCX_EUNSUPPORTED, "%s cannot compile for %s (too old an architecture)",
			rtc_name, arch);
}

/* Compiles src for `arch`; see cuda_compile_offline.  `who` names the
 * target in messages ("'cuda:0' (sm_90)"). */
static enum tcx_status nvrtc_compile(const char *src, size_t len, const char *arch,
				     const char *opts, const char *who, unsigned char **bin,
				     size_t *bin_len, char **log, struct tcx_error *err)
{
	char target[64], archopt[96], head[320];
	const char *argv[40];
	char *text = NULL, *optcopy = NULL, *save = NULL, *tok;
	int argc = 0;
	nvrtcProgram prog = NULL;
	nvrtcResult rc;
	size_t n = 0;
	bool ptx;
	enum tcx_status st;

	if (bin)
		*bin = NULL;
	if (bin_len)
		*bin_len = 0;
	if (log)
		*log = NULL;
	st = need_nvrtc(err);
	if (!st)
		st = pick_target(arch, target, sizeof(target), &ptx, err);
	if (st)
		return st;
	/* the device's own architecture; every function a device function */
	snprintf(archopt, sizeof(archopt), "--gpu-architecture=%s", target);
	argv[argc++] = archopt;
	argv[argc++] = "-default-device";
	argv[argc++] = "--std=c++17";
	argv[argc++] = "-lineinfo";
	if (opts && *opts) {
		optcopy = strdup(opts);
		if (!optcopy)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (tok = strtok_r(optcopy, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save)) {
			if (argc == (int)ARRAY_SIZE(argv)) {
				st = tcx_fail(err, TCX_EINVAL, "too many compiler options: '%s'",
					      opts);
				goto out_free;
			}
			argv[argc++] = tok;
		}
	}
	/* NVRTC reads a C string */
	text = malloc(len + 1);
	if (!text) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out_free;
	}
	memcpy(text, src, len);
	text[len] = '\0';
	rc = rtc.CreateProgram(&prog, text, "tcx_kernel.cu", 0, NULL, NULL);
	if (rc != NVRTC_SUCCESS) {
		st = tcx_fail(err, rc == NVRTC_ERROR_OUT_OF_MEMORY ? TCX_ENOMEM : TCX_EBUILD,
			      "cannot create an NVRTC program: %s", rtc.GetErrorString(rc));
		goto out_free;
	}
	rc = rtc.CompileProgram(prog, argc, argv);
	if (log && rtc.GetProgramLogSize(prog, &n) == NVRTC_SUCCESS) {
		*log = calloc(n + 1, 1);
		if (*log && n && rtc.GetProgramLog(prog, *log) != NVRTC_SUCCESS)
			(*log)[0] = '\0';
	}
	if (rc != NVRTC_SUCCESS) {
		char *tmp = NULL;

		if (!log && rtc.GetProgramLogSize(prog, &n) == NVRTC_SUCCESS &&
		    (tmp = calloc(n + 1, 1)) != NULL && n)
			rtc.GetProgramLog(prog, tmp);
		log_head(log ? *log : tmp, head, sizeof(head));
		free(tmp);
		st = tcx_fail(err, TCX_EBUILD, "kernel does not compile for %s: %s", who, head);
		if (err)
			err->native = (int)rc;
		goto out_free;
	}
	if (!ptx && rtc.GetCUBINSize && rtc.GetCUBIN)
		rc = rtc.GetCUBINSize(prog, &n);
	else
		rc = rtc.GetPTXSize(prog, &n);
	if (rc == NVRTC_SUCCESS && bin) {
		*bin = malloc(n ? n : 1);
		if (!*bin) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out_free;
		}
		if (!ptx && rtc.GetCUBINSize && rtc.GetCUBIN)
			rc = rtc.GetCUBIN(prog, (char *)*bin);
		else
			rc = rtc.GetPTX(prog, (char *)*bin);
	}
	if (rc != NVRTC_SUCCESS) {
		if (bin) {
			free(*bin);
			*bin = NULL;
		}
		st = tcx_fail(err, TCX_EBUILD, "cannot read NVRTC's output for %s: %s", who,
			      rtc.GetErrorString(rc));
		goto out_free;
	}
	if (bin_len)
		*bin_len = n;
out_free:
	if (prog)
		rtc.DestroyProgram(&prog);
	free(text);
	free(optcopy);
	return st;
}

enum tcx_status cuda_nvrtc_version(int *major, int *minor, struct tcx_error *err)
{
	enum tcx_status st = need_nvrtc(err);

	*major = *minor = 0;
	if (st)
		return st;
	if (rtc.Version(major, minor) != NVRTC_SUCCESS)
		return tcx_fail(err, TCX_ENODEV, "%s does not report its version", rtc_name);
	return TCX_OK;
}

enum tcx_status cuda_compile_offline(const char *src, size_t len, const char *arch,
				     const char *opts, unsigned char **bin, size_t *bin_len,
				     char **log, struct tcx_error *err)
{
	return nvrtc_compile(src, len, arch, opts, arch, bin, bin_len, log, err);
}

/* --- devices ---------------------------------------------------------- */

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	CUdevice cudev;
	CUcontext ctx; /* the device's primary context, retained */
	CUstream stream;
	int64_t smem_default; /* shared memory per block without opting in (48 KiB) */
};

/* A function of a program, looked up on its first launch. */
struct kernel_entry {
	char *name;
	CUfunction fn;
	int max_threads;  /* per block, as compiled (registers, launch bounds) */
	int static_smem;  /* bytes */
	int dyn_smem_set; /* MAX_DYNAMIC_SHARED_SIZE_BYTES set so far */
	int nparams;	  /* -1 when the driver cannot tell */
	size_t psize[LAUNCH_MAX_ARGS];
	struct kernel_entry *next;
};

struct program {
	struct device *dev;
	CUmodule mod;
	char *log;	    /* never NULL once built */
	unsigned char *bin; /* the cubin (or PTX) loaded, for the disk cache */
	size_t bin_len;
	pthread_mutex_t lock; /* guards `kernels` */
	struct kernel_entry *kernels;
};

struct buffer {
	CUdeviceptr ptr;
	size_t size;
	CUcontext ctx; /* free needs it current */
};

static int attr(CUdevice d, CUdevice_attribute a)
{
	int v = 0;

	return cu.DeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
}

static void describe(CUdevice d, int ordinal, struct device_info *info)
{
	int drv = 0, rmaj = 0, rmin = 0;
	size_t mem = 0;

	memset(info, 0, sizeof(*info));
	snprintf(info->id, sizeof(info->id), "cuda:%d", ordinal);
	snprintf(info->backend, sizeof(info->backend), "cuda");
	snprintf(info->lang, sizeof(info->lang), "cuda");
	snprintf(info->vendor, sizeof(info->vendor), "NVIDIA");
	if (cu.DeviceGetName(info->name, (int)sizeof(info->name) - 1, d) != CUDA_SUCCESS)
		snprintf(info->name, sizeof(info->name), "CUDA device %d", ordinal);
	cu.DriverGetVersion(&drv);
	rtc.Version(&rmaj, &rmin);
	/* both compile the kernels that the cache keeps: both key it */
	snprintf(info->driver, sizeof(info->driver), "CUDA driver %d.%d; NVRTC %d.%d", drv / 1000,
		 drv % 1000 / 10, rmaj, rmin);
	info->type = DEV_GPU;
	info->cc_major = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	info->cc_minor = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	snprintf(info->arch, sizeof(info->arch), "sm_%d%d", info->cc_major, info->cc_minor);
	info->compute_units = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	if (cu.DeviceTotalMem(&mem, d) == CUDA_SUCCESS)
		info->global_mem = mem > INT64_MAX ? INT64_MAX : (int64_t)mem;
	info->max_alloc = info->global_mem; /* CUDA has no smaller per-buffer limit */
	/* what a block may use once it opts in (kernels use dynamic shared
	 * memory and the launch raises the limit past the default 48 KiB) */
	info->local_mem = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	if (info->local_mem <= 0)
		info->local_mem = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
	info->local_mem_per_cu = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
	info->cache_bytes = attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	info->max_wg_size = attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	info->max_wg_dim[0] = attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
	info->max_wg_dim[1] = attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
	info->max_wg_dim[2] = attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
	info->max_groups[0] = attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
	info->max_groups[1] = attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
	info->max_groups[2] = attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
	info->max_regs_per_wg = attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
	info->clock_mhz = attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000; /* kHz */
	info->simd_width = attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
	if (info->simd_width <= 0)
		info->simd_width = 32;
	info->pref_vector_float = 4; /* 16-byte loads */
	info->fp64 = true;
	info->fp16 = info->cc_major * 10 + info->cc_minor >= 53;
	info->timer_events = true;
	info->local_mem_real = true;
	info->wg_multiple = info->simd_width;
}

/* cuInit and the device count; TCX_ENODEV with the reason when none. */
static enum tcx_status cuda_start(int *count, struct tcx_error *err)
{
	enum tcx_status st = need_cuda(err);
	CUresult rc;

	*count = 0;
	if (st)
		return st;
	rc = cu.Init(0);
	if (rc == 34 /* CUDA_ERROR_STUB_LIBRARY, CUDA 11.1 */)
		return cu_fail(err, TCX_ENODEV, rc,
			       "the libcuda found is the CUDA toolkit's stub, not a driver (is "
			       "lib64/stubs on LD_LIBRARY_PATH?)");
	if (rc == CUDA_ERROR_NO_DEVICE)
		return cu_fail(err, TCX_ENODEV, rc, "the NVIDIA driver sees no CUDA device");
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_ENODEV, rc, "cannot initialize the CUDA driver");
	rc = cu.DeviceGetCount(count);
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_ENODEV, rc, "cannot count CUDA devices");
	if (*count <= 0)
		return tcx_fail(err, TCX_ENODEV, "the NVIDIA driver sees no CUDA device");
	/* a device tcx cannot compile for is no use: say so here */
	if (need_nvrtc(NULL))
		return tcx_fail(err, TCX_ENODEV, "%d CUDA device%s, but %s", *count,
				*count == 1 ? "" : "s", rtc_why);
	return TCX_OK;
}

static enum tcx_status cuda_probe(struct device_info *out, int max, int *count,
				  struct tcx_error *err)
{
	enum tcx_status st;
	int n;

	*count = 0;
	st = cuda_start(&n, err);
	if (st)
		return st;
	for (int k = 0; k < n && k < max; k++) {
		CUdevice d;
		CUresult rc = cu.DeviceGet(&d, k);

		if (rc != CUDA_SUCCESS)
			return cu_fail(err, TCX_ENODEV, rc, "cannot open CUDA device %d", k);
		describe(d, k, &out[*count]);
		(*count)++;
	}
	return TCX_OK;
}

/* Makes the device's context current on the calling thread. */
static enum tcx_status use_ctx(struct device *dev, struct tcx_error *err)
{
	CUresult rc = cu.CtxSetCurrent(dev->ctx);

	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EDEVICE, rc, "cannot use the CUDA context of '%s'",
			       dev->info.id);
	return TCX_OK;
}

static enum tcx_status cuda_open(int index, struct device **out, struct tcx_error *err)
{
	struct device *d;
	enum tcx_status st;
	CUresult rc;
	int n;

	*out = NULL;
	st = cuda_start(&n, err);
	if (st)
		return st;
	if (index < 0 || index >= n)
		return tcx_fail(err, TCX_ENODEV, "no CUDA device %d (there are %d)", index, n);
	d = calloc(1, sizeof(*d));
	if (!d)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	d->base.ops = backend_find("cuda");
	rc = cu.DeviceGet(&d->cudev, index);
	if (rc != CUDA_SUCCESS) {
		st = cu_fail(err, TCX_ENODEV, rc, "cannot open CUDA device %d", index);
		goto out_free_dev;
	}
	describe(d->cudev, index, &d->info);
	d->smem_default = attr(d->cudev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
	rc = cu.DevicePrimaryCtxRetain(&d->ctx, d->cudev);
	if (rc != CUDA_SUCCESS) {
		st = cu_fail(err, TCX_EDEVICE, rc, "cannot create a CUDA context on '%s'",
			     d->info.id);
		goto out_free_dev;
	}
	st = use_ctx(d, err);
	if (st)
		goto out_release_ctx;
	rc = cu.StreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
	if (rc != CUDA_SUCCESS) {
		st = cu_fail(err, TCX_EDEVICE, rc, "cannot create a CUDA stream on '%s'",
			     d->info.id);
		goto out_release_ctx;
	}
	*out = d;
	return TCX_OK;

out_release_ctx:
	cu.DevicePrimaryCtxRelease(d->cudev);
out_free_dev:
	free(d);
	return st;
}

static void cuda_close(struct device *dev)
{
	if (!dev)
		return;
	if (dev->ctx && cu.CtxSetCurrent(dev->ctx) == CUDA_SUCCESS && dev->stream) {
		cu.StreamSynchronize(dev->stream);
		cu.StreamDestroy(dev->stream);
	}
	if (dev->ctx)
		cu.DevicePrimaryCtxRelease(dev->cudev);
	free(dev);
}

static const struct device_info *cuda_info(const struct device *dev)
{
	return &dev->info;
}

/* --- programs --------------------------------------------------------- */

static struct program *program_new(struct device *dev)
{
	struct program *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->dev = dev;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

static void cuda_program_free(struct program *p)
{
	struct kernel_entry *k, *next;

	if (!p)
		return;
	for (k = p->kernels; k; k = next) {
		next = k->next;
		free(k->name);
		free(k);
	}
	if (p->mod && cu.CtxSetCurrent(p->dev->ctx) == CUDA_SUCCESS)
		cu.ModuleUnload(p->mod);
	pthread_mutex_destroy(&p->lock);
	free(p->bin);
	free(p->log);
	free(p);
}

static const char *cuda_build_log(const struct program *prog)
{
	return prog && prog->log ? prog->log : "";
}

/* Loads p->bin as p's module. */
static enum tcx_status load_module(struct program *p, enum tcx_status code, struct tcx_error *err)
{
	enum tcx_status st = use_ctx(p->dev, err);
	CUresult rc;

	if (st)
		return st;
	rc = cu.ModuleLoadData(&p->mod, p->bin);
	if (rc != CUDA_SUCCESS) {
		p->mod = NULL;
		return cu_fail(err, code, rc, "the CUDA driver cannot load a kernel for '%s' (%s)",
			       p->dev->info.id, p->dev->info.driver);
	}
	return TCX_OK;
}

static enum tcx_status cuda_build(struct device *dev, const char *src, size_t len, const char *opts,
				  struct program **out, struct tcx_error *err)
{
	struct program *p;
	char who[160];
	enum tcx_status st;

	*out = NULL;
	p = program_new(dev);
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	snprintf(who, sizeof(who), "'%s' (%s)", dev->info.id, dev->info.arch);
	st = nvrtc_compile(src, len, dev->info.arch, opts, who, &p->bin, &p->bin_len, &p->log, err);
	if (!p->log)
		p->log = strdup("");
	if (!st)
		st = load_module(p, TCX_EBUILD, err);
	if (st && st != TCX_EBUILD) {
		cuda_program_free(p);
		return st;
	}
	*out = p;
	return st;
}

static enum tcx_status cuda_binary(const struct program *prog, unsigned char **bin, size_t *len,
				   struct tcx_error *err)
{
	*bin = NULL;
	*len = 0;
	if (!prog->bin || !prog->bin_len)
		return tcx_fail(err, TCX_EUNSUPPORTED, "no binary for this program");
	*bin = malloc(prog->bin_len);
	if (!*bin)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	memcpy(*bin, prog->bin, prog->bin_len);
	*len = prog->bin_len;
	return TCX_OK;
}

static enum tcx_status cuda_build_binary(struct device *dev, const unsigned char *bin, size_t len,
					 struct program **out, struct tcx_error *err)
{
	struct program *p;
	enum tcx_status st;

	*out = NULL;
	if (!bin || len == 0)
		return tcx_fail(err, TCX_ECORRUPT, "empty program binary for '%s'", dev->info.id);
	p = program_new(dev);
	if (!p || !(p->log = strdup("")) || !(p->bin = malloc(len + 1))) {
		cuda_program_free(p);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	memcpy(p->bin, bin, len);
	p->bin[len] = '\0'; /* PTX is read as a C string */
	p->bin_len = len;
	st = load_module(p, TCX_ECORRUPT, err);
	if (st) {
		cuda_program_free(p);
		return st;
	}
	*out = p;
	return TCX_OK;
}

/* The function `name` of a program, looked up on first use.  Call with
 * p->lock held and the context current. */
static enum tcx_status kernel_get(struct program *p, const char *name, struct kernel_entry **out,
				  struct tcx_error *err)
{
	struct kernel_entry *k;
	CUresult rc;

	*out = NULL;
	if (!name || !*name)
		return tcx_fail(err, TCX_EINVAL, "a launch without a kernel name");
	if (!p->mod)
		return tcx_fail(err, TCX_EINVAL, "kernel '%s' of a program that did not build",
				name);
	for (k = p->kernels; k; k = k->next)
		if (strcmp(k->name, name) == 0) {
			*out = k;
			return TCX_OK;
		}
	k = calloc(1, sizeof(*k));
	if (!k || !(k->name = strdup(name))) {
		free(k);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	rc = cu.ModuleGetFunction(&k->fn, p->mod, name);
	if (rc == CUDA_SUCCESS)
		rc = cu.FuncGetAttribute(&k->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
					 k->fn);
	if (rc == CUDA_SUCCESS)
		rc = cu.FuncGetAttribute(&k->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
					 k->fn);
	if (rc != CUDA_SUCCESS) {
		free(k->name);
		free(k);
		if (rc == CUDA_ERROR_NOT_FOUND)
			return cu_fail(err, TCX_ELAUNCH, rc, "no kernel '%s' in the program", name);
		return cu_fail(err, TCX_ELAUNCH, rc, "cannot look up kernel '%s'", name);
	}
	k->nparams = -1;
	if (cu.FuncGetParamInfo) {
		size_t off, size;
		int n = 0;

		while (n < LAUNCH_MAX_ARGS &&
		       cu.FuncGetParamInfo(k->fn, (size_t)n, &off, &size) == CUDA_SUCCESS)
			k->psize[n++] = size;
		if (n > 0 || cu.FuncGetParamInfo(k->fn, 0, &off, &size) == CUDA_ERROR_INVALID_VALUE)
			k->nparams = n;
	}
	k->next = p->kernels;
	p->kernels = k;
	*out = k;
	return TCX_OK;
}

static void cuda_kernel_resources(const struct program *cprog, const char *kernel, int *regs,
				  int *spill_bytes, int64_t *local_bytes)
{
	/* the kernel list is a cache; filling it does not change the program */
	struct program *p = (struct program *)cprog;
	struct kernel_entry *k;
	int v;

	if (regs)
		*regs = -1;
	if (spill_bytes)
		*spill_bytes = -1;
	if (local_bytes)
		*local_bytes = -1;
	if (use_ctx(p->dev, NULL))
		return;
	pthread_mutex_lock(&p->lock);
	if (kernel_get(p, kernel, &k, NULL) == TCX_OK) {
		if (regs &&
		    cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k->fn) == CUDA_SUCCESS)
			*regs = v;
		/* local memory per thread is where registers spill */
		if (spill_bytes && cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
						       k->fn) == CUDA_SUCCESS)
			*spill_bytes = v;
		if (local_bytes)
			*local_bytes = k->static_smem;
	}
	pthread_mutex_unlock(&p->lock);
}

/* --- memory ----------------------------------------------------------- */

static enum tcx_status cuda_alloc(struct device *dev, size_t bytes, struct buffer **out,
				  struct tcx_error *err)
{
	struct buffer *b;
	enum tcx_status st;
	CUresult rc;

	*out = NULL;
	if (bytes == 0)
		bytes = 1;
	st = use_ctx(dev, err);
	if (st)
		return st;
	b = calloc(1, sizeof(*b));
	if (!b)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	rc = cu.MemAlloc(&b->ptr, bytes);
	if (rc != CUDA_SUCCESS) {
		free(b);
		return cu_fail(err, TCX_EDEVICE, rc,
			       "cannot allocate %zu bytes on '%s' (memory %lld bytes)", bytes,
			       dev->info.id, (long long)dev->info.global_mem);
	}
	b->size = bytes;
	b->ctx = dev->ctx;
	*out = b;
	return TCX_OK;
}

static void cuda_free(struct buffer *buf)
{
	if (!buf)
		return;
	if (buf->ptr && cu.CtxSetCurrent(buf->ctx) == CUDA_SUCCESS)
		cu.MemFree(buf->ptr);
	free(buf);
}

static enum tcx_status check_range(const struct buffer *buf, size_t off, size_t bytes,
				   const char *what, struct tcx_error *err)
{
	if (!buf)
		return tcx_fail(err, TCX_EINVAL, "%s of a NULL buffer", what);
	if (off > buf->size || bytes > buf->size - off)
		return tcx_fail(err, TCX_EINVAL,
				"%s of %zu bytes at offset %zu past the end of a %zu-byte buffer",
				what, bytes, off, buf->size);
	return TCX_OK;
}

/* Waits for the stream; an error there is an earlier kernel's. */
static enum tcx_status sync_stream(struct device *dev, const char *what, struct tcx_error *err)
{
	CUresult rc = cu.StreamSynchronize(dev->stream);

	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EDEVICE, rc, "%s on '%s' failed", what, dev->info.id);
	return TCX_OK;
}

static enum tcx_status cuda_write(struct device *dev, struct buffer *buf, size_t off,
				  const void *src, size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = check_range(buf, off, bytes, "write", err);
	CUresult rc;

	if (st || bytes == 0)
		return st;
	st = use_ctx(dev, err);
	if (st)
		return st;
	rc = cu.MemcpyHtoDAsync(buf->ptr + off, src, bytes, dev->stream);
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EDEVICE, rc, "cannot write %zu bytes to '%s'", bytes,
			       dev->info.id);
	return sync_stream(dev, "a write", err);
}

static enum tcx_status cuda_read(struct device *dev, struct buffer *buf, size_t off, void *dst,
				 size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = check_range(buf, off, bytes, "read", err);
	CUresult rc;

	if (st || bytes == 0)
		return st;
	st = use_ctx(dev, err);
	if (st)
		return st;
	rc = cu.MemcpyDtoHAsync(dst, buf->ptr + off, bytes, dev->stream);
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EDEVICE, rc, "cannot read %zu bytes from '%s'", bytes,
			       dev->info.id);
	return sync_stream(dev, "a read", err);
}

/* Patterns of 1, 2 or 4 bytes are memsets; wider ones set each 4-byte word
 * of the pattern down a 2D "column" whose pitch is the pattern's size. */
static enum tcx_status cuda_fill(struct device *dev, struct buffer *buf, const void *pattern,
				 size_t pattern_size, size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = check_range(buf, 0, bytes, "fill", err);
	const unsigned char *pat = pattern;
	CUresult rc = CUDA_SUCCESS;

	if (st || bytes == 0)
		return st;
	if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
	    bytes % pattern_size)
		return tcx_fail(err, TCX_EINVAL,
				"cannot fill %zu bytes with a %zu-byte pattern (a power of two up "
				"to 128 that divides the size)",
				bytes, pattern_size);
	st = use_ctx(dev, err);
	if (st)
		return st;
	if (pattern_size == 1) {
		rc = cu.MemsetD8Async(buf->ptr, pat[0], bytes, dev->stream);
	} else if (pattern_size == 2) {
		unsigned short v;

		memcpy(&v, pat, 2);
		rc = cu.MemsetD16Async(buf->ptr, v, bytes / 2, dev->stream);
	} else if (pattern_size == 4) {
		unsigned int v;

		memcpy(&v, pat, 4);
		rc = cu.MemsetD32Async(buf->ptr, v, bytes / 4, dev->stream);
	} else {
		for (size_t w = 0; w < pattern_size / 4 && rc == CUDA_SUCCESS; w++) {
			unsigned int v;

			memcpy(&v, pat + 4 * w, 4);
			rc = cu.MemsetD2D32Async(buf->ptr + 4 * w, pattern_size, v, 1,
						 bytes / pattern_size, dev->stream);
		}
	}
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EDEVICE, rc, "cannot fill %zu bytes on '%s'", bytes,
			       dev->info.id);
	return TCX_OK;
}

/* --- launches --------------------------------------------------------- */

/* Checks a launch against the device's and the kernel's limits and builds
 * its parameter array, so that a bad solution is rejected with a reason
 * rather than a bare error code.  *dyn gets the dynamic shared memory. */
static enum tcx_status check_launch(const struct device *dev, const struct kernel_entry *k,
				    const struct launch *l, unsigned grid[3], void **params,
				    size_t *dyn, struct tcx_error *err)
{
	const struct device_info *di = &dev->info;
	size_t block = 1;
	int np = 0;

	*dyn = 0;
	for (int d = 0; d < 3; d++) {
		if (l->local[d] == 0 || l->global[d] == 0)
			return tcx_fail(err, TCX_ELAUNCH,
					"kernel '%s': empty %s size in dimension %d", k->name,
					l->local[d] == 0 ? "block" : "global", d);
		if (l->global[d] % l->local[d])
			return tcx_fail(err, TCX_ELAUNCH,
					"kernel '%s': global size %zu in dimension %d is not a "
					"multiple of the block size %zu",
					k->name, l->global[d], d, l->local[d]);
		if (l->local[d] > (size_t)di->max_wg_dim[d])
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': block size %zu in dimension %d exceeds the "
					"device limit of %d",
					k->name, l->local[d], d, di->max_wg_dim[d]);
		/* a safety net: plan_grid keeps tcx's launches inside */
		if (l->global[d] / l->local[d] >
		    (di->max_groups[d] > 0 ? (size_t)di->max_groups[d] : (size_t)UINT_MAX))
			return tcx_fail(
			    err, TCX_ELIMIT,
			    "kernel '%s': %zu blocks in dimension %d exceed the device "
			    "limit of %lld",
			    k->name, l->global[d] / l->local[d], d,
			    (long long)(di->max_groups[d] > 0 ? di->max_groups[d] : UINT_MAX));
		grid[d] = (unsigned)(l->global[d] / l->local[d]);
		block *= l->local[d];
	}
	if (block > (size_t)di->max_wg_size)
		return tcx_fail(err, TCX_ELIMIT,
				"kernel '%s': block of %zu threads exceeds the device limit of %d",
				k->name, block, di->max_wg_size);
	if (k->max_threads > 0 && block > (size_t)k->max_threads)
		return tcx_fail(
		    err, TCX_ELIMIT,
		    "kernel '%s': block of %zu threads exceeds the kernel's limit of %d "
		    "(its registers or launch bounds)",
		    k->name, block, k->max_threads);
	for (int a = 0; a < l->nargs; a++) {
		const struct karg *g = &l->args[a];

		switch (g->kind) {
		case KARG_BUFFER:
			if (!g->buf)
				return tcx_fail(err, TCX_EINVAL,
						"kernel '%s': argument %d is a NULL buffer",
						k->name, a);
			if (k->nparams > np && k->psize[np] != sizeof(CUdeviceptr))
				return tcx_fail(err, TCX_ELAUNCH,
						"kernel '%s': parameter %d is %zu bytes, not a "
						"pointer",
						k->name, np, k->psize[np]);
			params[np++] = (void *)&g->buf->ptr;
			break;
		case KARG_BYTES:
			if (k->nparams > np && k->psize[np] != g->size)
				return tcx_fail(err, TCX_ELAUNCH,
						"kernel '%s': parameter %d is %zu bytes, not %zu",
						k->name, np, k->psize[np], g->size);
			params[np++] = (void *)g->ptr;
			break;
		case KARG_LOCAL:
			*dyn += g->size;
			break;
		default:
			return tcx_fail(err, TCX_EINVAL, "kernel '%s': argument %d of unknown kind",
					k->name, a);
		}
	}
	if (k->nparams >= 0 && np != k->nparams)
		return tcx_fail(err, TCX_ELAUNCH, "kernel '%s' takes %d arguments, not %d", k->name,
				k->nparams, np);
	if (di->local_mem > 0 && (int64_t)(*dyn + (size_t)k->static_smem) > di->local_mem)
		return tcx_fail(err, TCX_ELIMIT,
				"kernel '%s': needs %zu bytes of shared memory, above the device "
				"limit of %lld",
				k->name, *dyn + (size_t)k->static_smem, (long long)di->local_mem);
	return TCX_OK;
}

/* Waits for a kernel's end event and reads its duration. */
static enum tcx_status event_time(struct device *dev, const char *kernel, CUevent start,
				  CUevent end, double *ms, struct tcx_error *err)
{
	float t = 0;
	CUresult rc = cu.EventSynchronize(end);

	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_ELAUNCH, rc, "kernel '%s' failed on '%s'", kernel,
			       dev->info.id);
	rc = cu.EventElapsedTime(&t, start, end);
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EDEVICE, rc, "cannot time kernel '%s' on '%s'", kernel,
			       dev->info.id);
	*ms = t;
	return TCX_OK;
}

static enum tcx_status cuda_launch(struct device *dev, struct program *prog, const struct launch *l,
				   double *event_ms, struct tcx_error *err)
{
	struct kernel_entry *k = NULL;
	void *params[LAUNCH_MAX_ARGS];
	unsigned grid[3];
	size_t dyn = 0;
	CUevent ev[2] = {NULL, NULL};
	enum tcx_status st;
	CUresult rc;

	if (event_ms)
		*event_ms = 0;
	if (!prog || !l)
		return tcx_fail(err, TCX_EINVAL, "a launch without a program");
	if (prog->dev != dev)
		return tcx_fail(err, TCX_EINVAL, "kernel '%s' was built for '%s', not '%s'",
				l->kernel ? l->kernel : "", prog->dev->info.id, dev->info.id);
	if (l->nargs < 0 || l->nargs > LAUNCH_MAX_ARGS)
		return tcx_fail(err, TCX_EINVAL, "a launch with %d arguments", l->nargs);
	st = use_ctx(dev, err);
	if (st)
		return st;
	pthread_mutex_lock(&prog->lock);
	st = kernel_get(prog, l->kernel, &k, err);
	if (!st)
		st = check_launch(dev, k, l, grid, params, &dyn, err);
	/* beyond the default 48 KiB a kernel must opt in to the shared memory */
	if (!st && (int64_t)(dyn + (size_t)k->static_smem) > dev->smem_default &&
	    (int)dyn > k->dyn_smem_set) {
		rc = cu.FuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					 (int)dyn);
		if (rc != CUDA_SUCCESS)
			st = cu_fail(err, TCX_ELIMIT, rc,
				     "kernel '%s': cannot use %zu bytes of dynamic shared memory",
				     l->kernel, dyn);
		else
			k->dyn_smem_set = (int)dyn;
	}
	pthread_mutex_unlock(&prog->lock);
	if (st)
		return st;
	if (event_ms) {
		rc = cu.EventCreate(&ev[0], CU_EVENT_DEFAULT);
		if (rc == CUDA_SUCCESS)
			rc = cu.EventCreate(&ev[1], CU_EVENT_DEFAULT);
		if (rc == CUDA_SUCCESS)
			rc = cu.EventRecord(ev[0], dev->stream);
		if (rc != CUDA_SUCCESS) {
			st = cu_fail(err, TCX_EDEVICE, rc, "cannot create timing events on '%s'",
				     dev->info.id);
			goto out_events;
		}
	}
	rc = cu.LaunchKernel(k->fn, grid[0], grid[1], grid[2], (unsigned)l->local[0],
			     (unsigned)l->local[1], (unsigned)l->local[2], (unsigned)dyn,
			     dev->stream, params, NULL);
	if (rc != CUDA_SUCCESS) {
		st = cu_fail(err,
			     rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? TCX_ELIMIT : TCX_ELAUNCH,
			     rc, "cannot launch kernel '%s' on '%s'", l->kernel, dev->info.id);
		goto out_events;
	}
	if (event_ms) {
		rc = cu.EventRecord(ev[1], dev->stream);
		if (rc != CUDA_SUCCESS)
			st = cu_fail(err, TCX_EDEVICE, rc, "cannot time kernel '%s' on '%s'",
				     l->kernel, dev->info.id);
		else
			st = event_time(dev, l->kernel, ev[0], ev[1], event_ms, err);
	}
out_events:
	for (int e = 0; e < 2; e++)
		if (ev[e])
			cu.EventDestroy(ev[e]);
	return st;
}

static enum tcx_status cuda_finish(struct device *dev, struct tcx_error *err)
{
	enum tcx_status st = use_ctx(dev, err);
	CUresult rc;

	if (st)
		return st;
	rc = cu.StreamSynchronize(dev->stream);
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_ELAUNCH, rc, "the work queued on '%s' failed",
			       dev->info.id);
	return TCX_OK;
}

static enum tcx_status cuda_tensor_map(struct device *dev, struct buffer *buf, size_t off,
				       int elem_bytes, int rank, const int64_t *dim,
				       const int64_t *stride, const int *box, void *out,
				       struct tcx_error *err)
{
	cuuint64_t gdim[5], gstride[4];
	cuuint32_t gbox[5], one[5] = { 1, 1, 1, 1, 1 };
	CUresult rc;

	_Static_assert(sizeof(CUtensorMap) == TCX_TENSOR_MAP_BYTES, "tensor map size");
	if (!cu.TensorMapEncodeTiled)
		return tcx_fail(err, TCX_EUNSUPPORTED, "the CUDA driver of '%s' has no tensor maps",
				dev->info.id);
	if (rank < 1 || rank > 5 || (elem_bytes != 2 && elem_bytes != 4) || off > buf->size ||
	    (buf->ptr + off) % 16)
		return tcx_fail(err, TCX_EUNSUPPORTED, "no tensor map for this layout");
	for (int d = 0; d < rank; d++) {
		if (dim[d] < 1 || dim[d] > ((int64_t)1 << 32) || box[d] < 1 || box[d] > 256)
			return tcx_fail(err, TCX_EUNSUPPORTED, "no tensor map for this layout");
		gdim[d] = (cuuint64_t)dim[d];
		gbox[d] = (cuuint32_t)box[d];
		if (d > 0) {
			if (stride[d - 1] <= 0 || stride[d - 1] % 16 ||
			    stride[d - 1] >= ((int64_t)1 << 40))
				return tcx_fail(err, TCX_EUNSUPPORTED, "no tensor map for this layout");
			gstride[d - 1] = (cuuint64_t)stride[d - 1];
		}
	}
	rc = cu.TensorMapEncodeTiled((CUtensorMap *)out,
				     elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
						     : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
				     (cuuint32_t)rank, (void *)(uintptr_t)(buf->ptr + off), gdim,
				     gstride, gbox, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
				     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
				     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (rc != CUDA_SUCCESS)
		return cu_fail(err, TCX_EUNSUPPORTED, rc, "no tensor map for this layout");
	return TCX_OK;
}

void tcx_backend_cuda_ops(struct tcx_backend_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->name = "cuda";
	ops->probe = cuda_probe;
	ops->open = cuda_open;
	ops->close = cuda_close;
	ops->info = cuda_info;
	ops->build = cuda_build;
	ops->build_log = cuda_build_log;
	ops->program_free = cuda_program_free;
	ops->binary = cuda_binary;
	ops->build_binary = cuda_build_binary;
	ops->kernel_resources = cuda_kernel_resources;
	ops->alloc = cuda_alloc;
	ops->free = cuda_free;
	ops->write = cuda_write;
	ops->read = cuda_read;
	ops->fill = cuda_fill;
	ops->tensor_map = cuda_tensor_map;
	ops->launch = cuda_launch;
	ops->finish = cuda_finish;
}

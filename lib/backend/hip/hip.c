/* hip.c - the "hip" backend: AMD GPUs through the HIP runtime (Debian's
 * libamdhip64), with kernels compiled by hiprtc for the device's own
 * target.  Both are loaded with dlopen on first use, so one tcx binary runs
 * with or without ROCm; when they are absent, probe says why and `tcx
 * devices` shows it.  The kernels are the CUDA dialect of the template
 * (device language "cuda"): HIP compiles CUDA C++ as it is. */
#define __HIP_PLATFORM_AMD__ 1

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#include "backend/backend.h"
#include "backend/hip/hip.h"

/* --- the libraries ---------------------------------------------------- */

struct hip_api {
	hipError_t (*Init)(unsigned flags);
	hipError_t (*RuntimeGetVersion)(int *v);
	const char *(*GetErrorName)(hipError_t rc);
	hipError_t (*GetDeviceCount)(int *n);
	hipError_t (*SetDevice)(int ordinal);
	hipError_t (*DeviceGetName)(char *name, int len, hipDevice_t dev);
	hipError_t (*DeviceGetAttribute)(int *v, hipDeviceAttribute_t a, int ordinal);
	hipError_t (*DeviceTotalMem)(size_t *bytes, hipDevice_t dev);
	hipError_t (*GetDeviceProperties)(hipDeviceProp_t *p, int ordinal);
	hipError_t (*StreamCreateWithFlags)(hipStream_t *s, unsigned flags);
	hipError_t (*StreamDestroy)(hipStream_t s);
	hipError_t (*StreamSynchronize)(hipStream_t s);
	hipError_t (*Malloc)(void **p, size_t bytes);
	hipError_t (*Free)(void *p);
	hipError_t (*MemcpyHtoDAsync)(hipDeviceptr_t dst, void *src, size_t n, hipStream_t s);
	hipError_t (*MemcpyDtoHAsync)(void *dst, hipDeviceptr_t src, size_t n, hipStream_t s);
	hipError_t (*MemsetD8Async)(hipDeviceptr_t p, unsigned char v, size_t n, hipStream_t s);
	hipError_t (*MemsetD16Async)(hipDeviceptr_t p, unsigned short v, size_t n, hipStream_t s);
	hipError_t (*MemsetD32Async)(hipDeviceptr_t p, int v, size_t n, hipStream_t s);
	hipError_t (*ModuleLoadData)(hipModule_t *m, const void *image);
	hipError_t (*ModuleUnload)(hipModule_t m);
	hipError_t (*ModuleGetFunction)(hipFunction_t *f, hipModule_t m, const char *name);
	hipError_t (*FuncGetAttribute)(int *v, hipFunction_attribute a, hipFunction_t f);
	hipError_t (*ModuleLaunchKernel)(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
					 unsigned bx, unsigned by, unsigned bz, unsigned shared,
					 hipStream_t s, void **params, void **extra);
	hipError_t (*EventCreate)(hipEvent_t *e);
	hipError_t (*EventDestroy)(hipEvent_t e);
	hipError_t (*EventRecord)(hipEvent_t e, hipStream_t s);
	hipError_t (*EventSynchronize)(hipEvent_t e);
	hipError_t (*EventElapsedTime)(float *ms, hipEvent_t start, hipEvent_t end);
};

struct hiprtc_api {
	hiprtcResult (*Version)(int *major, int *minor);
	const char *(*GetErrorString)(hiprtcResult rc);
	hiprtcResult (*CreateProgram)(hiprtcProgram *p, const char *src, const char *name,
				      int nheaders, const char **headers,
				      const char **include_names);
	hiprtcResult (*DestroyProgram)(hiprtcProgram *p);
	hiprtcResult (*CompileProgram)(hiprtcProgram p, int nopts, const char **opts);
	hiprtcResult (*GetProgramLogSize)(hiprtcProgram p, size_t *n);
	hiprtcResult (*GetProgramLog)(hiprtcProgram p, char *log);
	hiprtcResult (*GetCodeSize)(hiprtcProgram p, size_t *n);
	hiprtcResult (*GetCode)(hiprtcProgram p, char *code);
};

/* The code object manager, asked which targets hiprtc can compile for. */
struct comgr_api {
	int (*GetIsaCount)(size_t *n);
	int (*GetIsaName)(size_t index, const char **name);
};

struct sym {
	const char *name;
	void **slot;
};

static struct hip_api hip;
static struct hiprtc_api rtc;
static struct comgr_api comgr;
static pthread_once_t hip_once = PTHREAD_ONCE_INIT, rtc_once = PTHREAD_ONCE_INIT,
		      comgr_once = PTHREAD_ONCE_INIT;
static char hip_why[256], rtc_why[512];
static char rtc_name[64];
static int rtc_hip_version; /* hiprtc's HIP release (hiprtcVersion says 9.0 in ROCm 5) */

#define SLOT(api, field) ((void **)&(api).field)

static const char *const runtime_names[] = {"libamdhip64.so.5", "libamdhip64.so", NULL};

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

static const char *resolve(void *h, const struct sym *syms, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		*syms[k].slot = dlsym(h, syms[k].name);
		if (!*syms[k].slot)
			return syms[k].name;
	}
	return NULL;
}

static void load_hip(void)
{
	const struct sym syms[] = {
	    {"hipInit", SLOT(hip, Init)},
	    {"hipRuntimeGetVersion", SLOT(hip, RuntimeGetVersion)},
	    {"hipGetErrorName", SLOT(hip, GetErrorName)},
	    {"hipGetDeviceCount", SLOT(hip, GetDeviceCount)},
	    {"hipSetDevice", SLOT(hip, SetDevice)},
	    {"hipDeviceGetName", SLOT(hip, DeviceGetName)},
	    {"hipDeviceGetAttribute", SLOT(hip, DeviceGetAttribute)},
	    {"hipDeviceTotalMem", SLOT(hip, DeviceTotalMem)},
	    {"hipGetDeviceProperties", SLOT(hip, GetDeviceProperties)},
	    {"hipStreamCreateWithFlags", SLOT(hip, StreamCreateWithFlags)},
	    {"hipStreamDestroy", SLOT(hip, StreamDestroy)},
	    {"hipStreamSynchronize", SLOT(hip, StreamSynchronize)},
	    {"hipMalloc", SLOT(hip, Malloc)},
	    {"hipFree", SLOT(hip, Free)},
	    {"hipMemcpyHtoDAsync", SLOT(hip, MemcpyHtoDAsync)},
	    {"hipMemcpyDtoHAsync", SLOT(hip, MemcpyDtoHAsync)},
	    {"hipMemsetD8Async", SLOT(hip, MemsetD8Async)},
	    {"hipMemsetD16Async", SLOT(hip, MemsetD16Async)},
	    {"hipMemsetD32Async", SLOT(hip, MemsetD32Async)},
	    {"hipModuleLoadData", SLOT(hip, ModuleLoadData)},
	    {"hipModuleUnload", SLOT(hip, ModuleUnload)},
	    {"hipModuleGetFunction", SLOT(hip, ModuleGetFunction)},
	    {"hipFuncGetAttribute", SLOT(hip, FuncGetAttribute)},
	    {"hipModuleLaunchKernel", SLOT(hip, ModuleLaunchKernel)},
	    {"hipEventCreate", SLOT(hip, EventCreate)},
	    {"hipEventDestroy", SLOT(hip, EventDestroy)},
	    {"hipEventRecord", SLOT(hip, EventRecord)},
	    {"hipEventSynchronize", SLOT(hip, EventSynchronize)},
	    {"hipEventElapsedTime", SLOT(hip, EventElapsedTime)},
	};
	const char *which = NULL, *missing;
	void *h = open_first(runtime_names, &which);
	int v = 0;

	if (!h) {
		snprintf(hip_why, sizeof(hip_why),
			 "libamdhip64.so.5 not found (no HIP runtime; Debian's libamdhip64-5)");
		return;
	}
	missing = resolve(h, syms, ARRAY_SIZE(syms));
	if (missing) {
		snprintf(hip_why, sizeof(hip_why), "%s has no %s", which, missing);
		memset(&hip, 0, sizeof(hip));
		dlclose(h);
		return;
	}
	/* hipDeviceProp_t and the attribute numbers change between majors */
	if (hip.RuntimeGetVersion(&v) == hipSuccess && v / 10000000 != HIP_VERSION_MAJOR) {
		snprintf(hip_why, sizeof(hip_why),
			 "%s is HIP %d.%d, but tcx was built with the HIP %d headers", which,
			 v / 10000000, v / 100000 % 100, HIP_VERSION_MAJOR);
		memset(&hip, 0, sizeof(hip));
		dlclose(h);
	}
}

static void load_hiprtc(void)
{
	/* hiprtc has its own library since ROCm 5.3; before, the runtime's */
	static const char *const names[] = {"libhiprtc.so.5", "libhiprtc.so", "libamdhip64.so.5",
					    "libamdhip64.so", NULL};
	const char *env = getenv("TCX_HIPRTC_LIBRARY");
	const char *const env_names[] = {env, NULL};
	const struct sym syms[] = {
	    {"hiprtcVersion", SLOT(rtc, Version)},
	    {"hiprtcGetErrorString", SLOT(rtc, GetErrorString)},
	    {"hiprtcCreateProgram", SLOT(rtc, CreateProgram)},
	    {"hiprtcDestroyProgram", SLOT(rtc, DestroyProgram)},
	    {"hiprtcCompileProgram", SLOT(rtc, CompileProgram)},
	    {"hiprtcGetProgramLogSize", SLOT(rtc, GetProgramLogSize)},
	    {"hiprtcGetProgramLog", SLOT(rtc, GetProgramLog)},
	    {"hiprtcGetCodeSize", SLOT(rtc, GetCodeSize)},
	    {"hiprtcGetCode", SLOT(rtc, GetCode)},
	};
	const char *which = NULL, *missing;
	void *h = open_first(env && *env ? env_names : names, &which);

	if (!h) {
		if (env && *env)
			snprintf(rtc_why, sizeof(rtc_why),
				 "hiprtc not found: cannot load TCX_HIPRTC_LIBRARY '%s'", env);
		else
			snprintf(rtc_why, sizeof(rtc_why),
				 "hiprtc not found (tried libhiprtc.so.5, libhiprtc.so and "
				 "libamdhip64; install libamdhip64-dev and libhiprtc-builtins5)");
		return;
	}
	missing = resolve(h, syms, ARRAY_SIZE(syms));
	if (missing) {
		snprintf(rtc_why, sizeof(rtc_why), "%s has no %s (no hiprtc in it)", which,
			 missing);
		memset(&rtc, 0, sizeof(rtc));
		dlclose(h);
		return;
	}
	snprintf(rtc_name, sizeof(rtc_name), "%s", which);
	{
		hipError_t (*version)(int *) = NULL;

		*(void **)&version = dlsym(h, "hipRuntimeGetVersion");
		if (!version) {
			void *rt = open_first(runtime_names, &which);

			if (rt)
				*(void **)&version = dlsym(rt, "hipRuntimeGetVersion");
		}
		if (!version || version(&rtc_hip_version) != hipSuccess)
			rtc_hip_version = 0;
	}
}

static void load_comgr(void)
{
	static const char *const names[] = {"libamd_comgr.so.2", "libamd_comgr.so.3",
					    "libamd_comgr.so", NULL};
	const struct sym syms[] = {
	    {"amd_comgr_get_isa_count", SLOT(comgr, GetIsaCount)},
	    {"amd_comgr_get_isa_name", SLOT(comgr, GetIsaName)},
	};
	const char *which;
	void *h = open_first(names, &which);

	if (h && resolve(h, syms, ARRAY_SIZE(syms))) {
		memset(&comgr, 0, sizeof(comgr));
		dlclose(h);
	}
}

static enum tcx_status need_hip(struct tcx_error *err)
{
	pthread_once(&hip_once, load_hip);
	return hip_why[0] ? tcx_fail(err, TCX_ENODEV, "%s", hip_why) : TCX_OK;
}

static enum tcx_status need_hiprtc(struct tcx_error *err)
{
	pthread_once(&rtc_once, load_hiprtc);
	return rtc_why[0] ? tcx_fail(err, TCX_ENODEV, "%s", rtc_why) : TCX_OK;
}

static const char *hip_err_name(hipError_t rc)
{
	const char *s = hip.GetErrorName ? hip.GetErrorName(rc) : NULL;

	return s ? s : "unknown HIP error";
}

static enum tcx_status hip_fail(struct tcx_error *err, enum tcx_status code, hipError_t rc,
				const char *fmt, ...) TCX_PRINTF(4, 5);
static enum tcx_status hip_fail(struct tcx_error *err, enum tcx_status code, hipError_t rc,
				const char *fmt, ...)
{
	char what[TCX_ERROR_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tcx_fail(err, code, "%s: %s (%d)", what, hip_err_name(rc), (int)rc);
	if (err)
		err->native = (int)rc;
	return code;
}

/* --- hiprtc ------------------------------------------------------------ */

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

/* Whether the code object manager knows the processor of target id
 * `arch` ("gfx90a:xnack-" -> gfx90a).  True when comgr cannot be asked. */
static bool arch_known(const char *arch)
{
	size_t n = 0, plen = strcspn(arch, ":");

	pthread_once(&comgr_once, load_comgr);
	if (!comgr.GetIsaCount || comgr.GetIsaCount(&n) != 0)
		return true;
	for (size_t k = 0; k < n; k++) {
		const char *name = NULL, *proc;

		if (comgr.GetIsaName(k, &name) != 0 || !name)
			continue;
		/* "amdgcn-amd-amdhsa--gfx90a" */
		proc = strrchr(name, '-');
		proc = proc ? proc + 1 : name;
		if (strlen(proc) == plen && strncmp(proc, arch, plen) == 0)
			return true;
	}
	return false;
}

static enum tcx_status rtc_compile(const char *src, size_t len, const char *arch, const char *opts,
				   const char *who, unsigned char **bin, size_t *bin_len,
				   char **log, struct tcx_error *err)
{
	char archopt[320], head[320];
	const char *argv[40];
	char *text = NULL, *optcopy = NULL, *save = NULL, *tok;
	int argc = 0, maj = 0, min = 0;
	hiprtcProgram prog = NULL;
	hiprtcResult rc;
	size_t n = 0;
	enum tcx_status st;

	if (bin)
		*bin = NULL;
	if (bin_len)
		*bin_len = 0;
	if (log)
		*log = NULL;
	st = need_hiprtc(err);
	if (st)
		return st;
	if (!arch_known(arch)) {
		hip_hiprtc_version(&maj, &min, NULL);
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"hiprtc of HIP %d.%d (%s) cannot compile for %.*s: its code object "
				"manager does not know that processor",
				maj, min, rtc_name, (int)strcspn(arch, ":"), arch);
	}
	snprintf(archopt, sizeof(archopt), "--offload-arch=%s", arch);
	argv[argc++] = archopt;
	argv[argc++] = "-std=c++17";
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
	text = malloc(len + 1);
	if (!text) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out_free;
	}
	memcpy(text, src, len);
	text[len] = '\0';
	rc = rtc.CreateProgram(&prog, text, "tcx_kernel.cu", 0, NULL, NULL);
	if (rc != HIPRTC_SUCCESS) {
		st = tcx_fail(err, rc == HIPRTC_ERROR_OUT_OF_MEMORY ? TCX_ENOMEM : TCX_EBUILD,
			      "cannot create a hiprtc program: %s", rtc.GetErrorString(rc));
		prog = NULL;
		goto out_free;
	}
	rc = rtc.CompileProgram(prog, argc, argv);
	if (log && rtc.GetProgramLogSize(prog, &n) == HIPRTC_SUCCESS) {
		*log = calloc(n + 1, 1);
		if (*log && n && rtc.GetProgramLog(prog, *log) != HIPRTC_SUCCESS)
			(*log)[0] = '\0';
	}
	if (rc != HIPRTC_SUCCESS) {
		char *tmp = NULL;

		if (!log && rtc.GetProgramLogSize(prog, &n) == HIPRTC_SUCCESS &&
		    (tmp = calloc(n + 1, 1)) != NULL && n)
			rtc.GetProgramLog(prog, tmp);
		log_head(log ? *log : tmp, head, sizeof(head));
		free(tmp);
		st = tcx_fail(err, TCX_EBUILD, "kernel does not compile for %s: %s", who, head);
		if (err)
			err->native = (int)rc;
		goto out_free;
	}
	rc = rtc.GetCodeSize(prog, &n);
	if (rc == HIPRTC_SUCCESS && bin) {
		*bin = malloc(n ? n : 1);
		if (!*bin) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out_free;
		}
		rc = rtc.GetCode(prog, (char *)*bin);
	}
	if (rc != HIPRTC_SUCCESS) {
		if (bin) {
			free(*bin);
			*bin = NULL;
		}
		st = tcx_fail(err, TCX_EBUILD, "cannot read hiprtc's output for %s: %s", who,
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

enum tcx_status hip_hiprtc_version(int *major, int *minor, struct tcx_error *err)
{
	enum tcx_status st = need_hiprtc(err);

	*major = *minor = 0;
	if (st)
		return st;
	if (rtc_hip_version > 0) {
		*major = rtc_hip_version / 10000000;
		*minor = rtc_hip_version / 100000 % 100;
		return TCX_OK;
	}
	if (rtc.Version(major, minor) != HIPRTC_SUCCESS)
		return tcx_fail(err, TCX_ENODEV, "%s does not report hiprtc's version", rtc_name);
	return TCX_OK;
}

enum tcx_status hip_compile_offline(const char *src, size_t len, const char *arch, const char *opts,
				    unsigned char **bin, size_t *bin_len, char **log,
				    struct tcx_error *err)
{
	return rtc_compile(src, len, arch, opts, arch, bin, bin_len, log, err);
}

/* --- devices ---------------------------------------------------------- */

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	int ordinal;
	char target[256]; /* the full target id, "gfx90a:sramecc+:xnack-" */
	hipStream_t stream;
	int max_grid[3];
};

struct kernel_entry {
	char *name;
	hipFunction_t fn;
	int max_threads;
	int static_smem;
	struct kernel_entry *next;
};

struct program {
	struct device *dev;
	hipModule_t mod;
	char *log;
	unsigned char *bin;
	size_t bin_len;
	pthread_mutex_t lock;
	struct kernel_entry *kernels;
};

struct buffer {
	void *ptr;
	size_t size;
	int ordinal; /* hipFree needs its device current */
};

static int attr(int ordinal, hipDeviceAttribute_t a)
{
	int v = 0;

	return hip.DeviceGetAttribute(&v, a, ordinal) == hipSuccess ? v : 0;
}

static void describe(int ordinal, struct device_info *info, char *target, size_t tsize)
{
	hipDeviceProp_t *props = calloc(1, sizeof(*props));
	int rt = 0;
	size_t mem = 0;

	memset(info, 0, sizeof(*info));
	snprintf(info->id, sizeof(info->id), "hip:%d", ordinal);
	snprintf(info->backend, sizeof(info->backend), "hip");
	snprintf(info->lang, sizeof(info->lang), "cuda"); /* the CUDA dialect, see above */
	snprintf(info->vendor, sizeof(info->vendor), "AMD");
	if (hip.DeviceGetName(info->name, (int)sizeof(info->name) - 1, ordinal) != hipSuccess)
		snprintf(info->name, sizeof(info->name), "HIP device %d", ordinal);
	target[0] = '\0';
	if (props && hip.GetDeviceProperties(props, ordinal) == hipSuccess)
		snprintf(target, tsize, "%s", props->gcnArchName);
	free(props);
	/* arch: the processor, without the target features */
	snprintf(info->arch, sizeof(info->arch), "%.*s", (int)strcspn(target, ":"), target);
	hip.RuntimeGetVersion(&rt);
	/* the runtime, hiprtc's release and the target features key the cache */
	snprintf(info->driver, sizeof(info->driver), "HIP %d.%d.%d; hiprtc of HIP %d.%d.%d; %s",
		 rt / 10000000, rt / 100000 % 100, rt % 100000, rtc_hip_version / 10000000,
		 rtc_hip_version / 100000 % 100, rtc_hip_version % 100000, target);
	info->type = DEV_GPU;
	info->cc_major = attr(ordinal, hipDeviceAttributeComputeCapabilityMajor);
	info->cc_minor = attr(ordinal, hipDeviceAttributeComputeCapabilityMinor);
	info->compute_units = attr(ordinal, hipDeviceAttributeMultiprocessorCount);
	if (hip.DeviceTotalMem(&mem, ordinal) == hipSuccess)
		info->global_mem = mem > INT64_MAX ? INT64_MAX : (int64_t)mem;
	info->max_alloc = info->global_mem;
	info->local_mem = attr(ordinal, hipDeviceAttributeMaxSharedMemoryPerBlock);
	info->local_mem_per_cu = attr(ordinal, hipDeviceAttributeMaxSharedMemoryPerMultiprocessor);
	info->cache_bytes = attr(ordinal, hipDeviceAttributeL2CacheSize);
	info->max_wg_size = attr(ordinal, hipDeviceAttributeMaxThreadsPerBlock);
	info->max_wg_dim[0] = attr(ordinal, hipDeviceAttributeMaxBlockDimX);
	info->max_wg_dim[1] = attr(ordinal, hipDeviceAttributeMaxBlockDimY);
	info->max_wg_dim[2] = attr(ordinal, hipDeviceAttributeMaxBlockDimZ);
	info->max_groups[0] = attr(ordinal, hipDeviceAttributeMaxGridDimX);
	info->max_groups[1] = attr(ordinal, hipDeviceAttributeMaxGridDimY);
	info->max_groups[2] = attr(ordinal, hipDeviceAttributeMaxGridDimZ);
	info->max_regs_per_wg = attr(ordinal, hipDeviceAttributeMaxRegistersPerBlock);
	info->clock_mhz = attr(ordinal, hipDeviceAttributeClockRate) / 1000; /* kHz */
	info->simd_width = attr(ordinal, hipDeviceAttributeWarpSize);
	if (info->simd_width <= 0)
		info->simd_width = 64;
	info->pref_vector_float = 4;
	info->fp64 = true;
	info->fp16 = true;
	info->timer_events = true;
	info->local_mem_real = true;
	info->wg_multiple = info->simd_width;
}

static enum tcx_status hip_start(int *count, struct tcx_error *err)
{
	enum tcx_status st = need_hip(err);
	hipError_t rc;

	*count = 0;
	if (st)
		return st;
	rc = hip.Init(0);
	if (rc == hipErrorNoDevice || rc == hipErrorInvalidDevice)
		return hip_fail(err, TCX_ENODEV, rc, "the HIP runtime sees no AMD GPU");
	if (rc != hipSuccess)
		return hip_fail(err, TCX_ENODEV, rc, "cannot initialize the HIP runtime");
	rc = hip.GetDeviceCount(count);
	if (rc == hipErrorNoDevice || (rc == hipSuccess && *count <= 0))
		return tcx_fail(err, TCX_ENODEV, "the HIP runtime sees no AMD GPU");
	if (rc != hipSuccess)
		return hip_fail(err, TCX_ENODEV, rc, "cannot count HIP devices");
	if (need_hiprtc(NULL))
		return tcx_fail(err, TCX_ENODEV, "%d HIP device%s, but %s", *count,
				*count == 1 ? "" : "s", rtc_why);
	return TCX_OK;
}

static enum tcx_status hip_probe(struct device_info *out, int max, int *count,
				 struct tcx_error *err)
{
	char target[256];
	enum tcx_status st;
	int n;

	*count = 0;
	/* AMD GPUs are reached through the kernel's /dev/kfd: without it there
	 * is nothing to find, and the HIP runtime is not even loaded (it is
	 * large, and its thread-local state upsets LeakSanitizer at exit) */
	if (access("/dev/kfd", F_OK) != 0 && !getenv("TCX_HIP_PROBE_ANYWAY"))
		return tcx_fail(err, TCX_ENODEV, "no AMD GPU (/dev/kfd is absent)");
	st = hip_start(&n, err);
	if (st)
		return st;
	for (int k = 0; k < n && k < max; k++)
		describe(k, &out[(*count)++], target, sizeof(target));
	return TCX_OK;
}

static enum tcx_status use_dev(struct device *dev, struct tcx_error *err)
{
	hipError_t rc = hip.SetDevice(dev->ordinal);

	if (rc != hipSuccess)
		return hip_fail(err, TCX_EDEVICE, rc, "cannot use '%s'", dev->info.id);
	return TCX_OK;
}

static enum tcx_status hip_open(int index, struct device **out, struct tcx_error *err)
{
	struct device *d;
	enum tcx_status st;
	hipError_t rc;
	int n;

	*out = NULL;
	st = hip_start(&n, err);
	if (st)
		return st;
	if (index < 0 || index >= n)
		return tcx_fail(err, TCX_ENODEV, "no HIP device %d (there are %d)", index, n);
	d = calloc(1, sizeof(*d));
	if (!d)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	d->base.ops = backend_find("hip");
	d->ordinal = index;
	describe(index, &d->info, d->target, sizeof(d->target));
	st = use_dev(d, err);
	if (st)
		goto out_free_dev;
	rc = hip.StreamCreateWithFlags(&d->stream, hipStreamNonBlocking);
	if (rc != hipSuccess) {
		st = hip_fail(err, TCX_EDEVICE, rc, "cannot create a HIP stream on '%s'",
			      d->info.id);
		goto out_free_dev;
	}
	*out = d;
	return TCX_OK;

out_free_dev:
	free(d);
	return st;
}

static void hip_close(struct device *dev)
{
	if (!dev)
		return;
	if (dev->stream && hip.SetDevice(dev->ordinal) == hipSuccess) {
		hip.StreamSynchronize(dev->stream);
		hip.StreamDestroy(dev->stream);
	}
	free(dev);
}

static const struct device_info *hip_info(const struct device *dev)
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

static void hip_program_free(struct program *p)
{
	struct kernel_entry *k, *next;

	if (!p)
		return;
	for (k = p->kernels; k; k = next) {
		next = k->next;
		free(k->name);
		free(k);
	}
	if (p->mod && hip.SetDevice(p->dev->ordinal) == hipSuccess)
		hip.ModuleUnload(p->mod);
	pthread_mutex_destroy(&p->lock);
	free(p->bin);
	free(p->log);
	free(p);
}

static const char *hip_build_log(const struct program *prog)
{
	return prog && prog->log ? prog->log : "";
}

static enum tcx_status load_module(struct program *p, enum tcx_status code, struct tcx_error *err)
{
	enum tcx_status st = use_dev(p->dev, err);
	hipError_t rc;

	if (st)
		return st;
	rc = hip.ModuleLoadData(&p->mod, p->bin);
	if (rc != hipSuccess) {
		p->mod = NULL;
		return hip_fail(err, code, rc, "the HIP runtime cannot load a kernel for '%s' (%s)",
				p->dev->info.id, p->dev->target);
	}
	return TCX_OK;
}

static enum tcx_status hip_build(struct device *dev, const char *src, size_t len, const char *opts,
				 struct program **out, struct tcx_error *err)
{
	struct program *p;
	char who[320];
	enum tcx_status st;

	*out = NULL;
	p = program_new(dev);
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	snprintf(who, sizeof(who), "'%s' (%s)", dev->info.id, dev->target);
	st = rtc_compile(src, len, dev->target[0] ? dev->target : dev->info.arch, opts, who,
			 &p->bin, &p->bin_len, &p->log, err);
	if (!p->log)
		p->log = strdup("");
	if (!st)
		st = load_module(p, TCX_EBUILD, err);
	if (st && st != TCX_EBUILD) {
		hip_program_free(p);
		return st;
	}
	*out = p;
	return st;
}

static enum tcx_status hip_binary(const struct program *prog, unsigned char **bin, size_t *len,
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

static enum tcx_status hip_build_binary(struct device *dev, const unsigned char *bin, size_t len,
					struct program **out, struct tcx_error *err)
{
	struct program *p;
	enum tcx_status st;

	*out = NULL;
	if (!bin || len == 0)
		return tcx_fail(err, TCX_ECORRUPT, "empty program binary for '%s'", dev->info.id);
	p = program_new(dev);
	if (!p || !(p->log = strdup("")) || !(p->bin = malloc(len))) {
		hip_program_free(p);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	memcpy(p->bin, bin, len);
	p->bin_len = len;
	st = load_module(p, TCX_ECORRUPT, err);
	if (st) {
		hip_program_free(p);
		return st;
	}
	*out = p;
	return TCX_OK;
}

/* Call with p->lock held and the device current. */
static enum tcx_status kernel_get(struct program *p, const char *name, struct kernel_entry **out,
				  struct tcx_error *err)
{
	struct kernel_entry *k;
	hipError_t rc;

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
	rc = hip.ModuleGetFunction(&k->fn, p->mod, name);
	if (rc == hipSuccess)
		rc = hip.FuncGetAttribute(&k->max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
					  k->fn);
	if (rc == hipSuccess)
		rc = hip.FuncGetAttribute(&k->static_smem, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
					  k->fn);
	if (rc != hipSuccess) {
		free(k->name);
		free(k);
		if (rc == hipErrorNotFound)
			return hip_fail(err, TCX_ELAUNCH, rc, "no kernel '%s' in the program",
					name);
		return hip_fail(err, TCX_ELAUNCH, rc, "cannot look up kernel '%s'", name);
	}
	k->next = p->kernels;
	p->kernels = k;
	*out = k;
	return TCX_OK;
}

static void hip_kernel_resources(const struct program *cprog, const char *kernel, int *regs,
				 int *spill_bytes, int64_t *local_bytes)
{
	struct program *p = (struct program *)cprog;
	struct kernel_entry *k;
	int v;

	if (regs)
		*regs = -1;
	if (spill_bytes)
		*spill_bytes = -1;
	if (local_bytes)
		*local_bytes = -1;
	if (use_dev(p->dev, NULL))
		return;
	pthread_mutex_lock(&p->lock);
	if (kernel_get(p, kernel, &k, NULL) == TCX_OK) {
		if (regs &&
		    hip.FuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_NUM_REGS, k->fn) == hipSuccess)
			*regs = v;
		if (spill_bytes && hip.FuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
							k->fn) == hipSuccess)
			*spill_bytes = v;
		if (local_bytes)
			*local_bytes = k->static_smem;
	}
	pthread_mutex_unlock(&p->lock);
}

/* --- memory ----------------------------------------------------------- */

static enum tcx_status hip_alloc(struct device *dev, size_t bytes, struct buffer **out,
				 struct tcx_error *err)
{
	struct buffer *b;
	enum tcx_status st;
	hipError_t rc;

	*out = NULL;
	if (bytes == 0)
		bytes = 1;
	st = use_dev(dev, err);
	if (st)
		return st;
	b = calloc(1, sizeof(*b));
	if (!b)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	rc = hip.Malloc(&b->ptr, bytes);
	if (rc != hipSuccess) {
		free(b);
		return hip_fail(err, TCX_EDEVICE, rc,
				"cannot allocate %zu bytes on '%s' (memory %lld bytes)", bytes,
				dev->info.id, (long long)dev->info.global_mem);
	}
	b->size = bytes;
	b->ordinal = dev->ordinal;
	*out = b;
	return TCX_OK;
}

static void hip_free_buffer(struct buffer *buf)
{
	if (!buf)
		return;
	if (buf->ptr && hip.SetDevice(buf->ordinal) == hipSuccess)
		hip.Free(buf->ptr);
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

static enum tcx_status sync_stream(struct device *dev, const char *what, struct tcx_error *err)
{
	hipError_t rc = hip.StreamSynchronize(dev->stream);

	if (rc != hipSuccess)
		return hip_fail(err, TCX_EDEVICE, rc, "%s on '%s' failed", what, dev->info.id);
	return TCX_OK;
}

static enum tcx_status hip_write(struct device *dev, struct buffer *buf, size_t off,
				 const void *src, size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = check_range(buf, off, bytes, "write", err);
	hipError_t rc;

	if (st || bytes == 0)
		return st;
	st = use_dev(dev, err);
	if (st)
		return st;
	/* HIP's prototype takes a non-const source it does not write */
	rc = hip.MemcpyHtoDAsync((char *)buf->ptr + off, (void *)src, bytes, dev->stream);
	if (rc != hipSuccess)
		return hip_fail(err, TCX_EDEVICE, rc, "cannot write %zu bytes to '%s'", bytes,
				dev->info.id);
	return sync_stream(dev, "a write", err);
}

static enum tcx_status hip_read(struct device *dev, struct buffer *buf, size_t off, void *dst,
				size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = check_range(buf, off, bytes, "read", err);
	hipError_t rc;

	if (st || bytes == 0)
		return st;
	st = use_dev(dev, err);
	if (st)
		return st;
	rc = hip.MemcpyDtoHAsync(dst, (char *)buf->ptr + off, bytes, dev->stream);
	if (rc != hipSuccess)
		return hip_fail(err, TCX_EDEVICE, rc, "cannot read %zu bytes from '%s'", bytes,
				dev->info.id);
	return sync_stream(dev, "a read", err);
}

/* Patterns of 1, 2 or 4 bytes are memsets; wider ones are written from a
 * host copy of the repeated pattern. */
static enum tcx_status hip_fill(struct device *dev, struct buffer *buf, const void *pattern,
				size_t pattern_size, size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = check_range(buf, 0, bytes, "fill", err);
	const unsigned char *pat = pattern;
	hipError_t rc = hipSuccess;

	if (st || bytes == 0)
		return st;
	if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
	    bytes % pattern_size)
		return tcx_fail(err, TCX_EINVAL,
				"cannot fill %zu bytes with a %zu-byte pattern (a power of two up "
				"to 128 that divides the size)",
				bytes, pattern_size);
	st = use_dev(dev, err);
	if (st)
		return st;
	if (pattern_size == 1) {
		rc = hip.MemsetD8Async(buf->ptr, pat[0], bytes, dev->stream);
	} else if (pattern_size == 2) {
		unsigned short v;

		memcpy(&v, pat, 2);
		rc = hip.MemsetD16Async(buf->ptr, v, bytes / 2, dev->stream);
	} else if (pattern_size == 4) {
		int v;

		memcpy(&v, pat, 4);
		rc = hip.MemsetD32Async(buf->ptr, v, bytes / 4, dev->stream);
	} else {
		unsigned char *host = malloc(bytes);

		if (!host)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (size_t k = 0; k < bytes; k += pattern_size)
			memcpy(host + k, pat, pattern_size);
		st = hip_write(dev, buf, 0, host, bytes, err);
		free(host);
		return st;
	}
	if (rc != hipSuccess)
		return hip_fail(err, TCX_EDEVICE, rc, "cannot fill %zu bytes on '%s'", bytes,
				dev->info.id);
	return TCX_OK;
}

/* --- launches --------------------------------------------------------- */

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
		/* HIP counts a dimension's threads in 32 bits */
		if (l->global[d] > UINT32_MAX)
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': %zu threads in dimension %d exceed HIP's "
					"limit of %lu",
					k->name, l->global[d], d, (unsigned long)UINT32_MAX);
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
		    "kernel '%s': block of %zu threads exceeds the kernel's limit of %d", k->name,
		    block, k->max_threads);
	for (int a = 0; a < l->nargs; a++) {
		const struct karg *g = &l->args[a];

		switch (g->kind) {
		case KARG_BUFFER:
			if (!g->buf)
				return tcx_fail(err, TCX_EINVAL,
						"kernel '%s': argument %d is a NULL buffer",
						k->name, a);
			params[np++] = (void *)&g->buf->ptr;
			break;
		case KARG_BYTES:
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
	if (di->local_mem > 0 && (int64_t)(*dyn + (size_t)k->static_smem) > di->local_mem)
		return tcx_fail(err, TCX_ELIMIT,
				"kernel '%s': needs %zu bytes of shared memory, above the device "
				"limit of %lld",
				k->name, *dyn + (size_t)k->static_smem, (long long)di->local_mem);
	return TCX_OK;
}

static enum tcx_status hip_launch(struct device *dev, struct program *prog, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	struct kernel_entry *k = NULL;
	void *params[LAUNCH_MAX_ARGS];
	unsigned grid[3];
	size_t dyn = 0;
	hipEvent_t ev[2] = {NULL, NULL};
	enum tcx_status st;
	hipError_t rc;
	float ms = 0;

	if (event_ms)
		*event_ms = 0;
	if (!prog || !l)
		return tcx_fail(err, TCX_EINVAL, "a launch without a program");
	if (prog->dev != dev)
		return tcx_fail(err, TCX_EINVAL, "kernel '%s' was built for '%s', not '%s'",
				l->kernel ? l->kernel : "", prog->dev->info.id, dev->info.id);
	if (l->nargs < 0 || l->nargs > LAUNCH_MAX_ARGS)
		return tcx_fail(err, TCX_EINVAL, "a launch with %d arguments", l->nargs);
	st = use_dev(dev, err);
	if (st)
		return st;
	pthread_mutex_lock(&prog->lock);
	st = kernel_get(prog, l->kernel, &k, err);
	if (!st)
		st = check_launch(dev, k, l, grid, params, &dyn, err);
	pthread_mutex_unlock(&prog->lock);
	if (st)
		return st;
	if (event_ms) {
		rc = hip.EventCreate(&ev[0]);
		if (rc == hipSuccess)
			rc = hip.EventCreate(&ev[1]);
		if (rc == hipSuccess)
			rc = hip.EventRecord(ev[0], dev->stream);
		if (rc != hipSuccess) {
			st = hip_fail(err, TCX_EDEVICE, rc, "cannot create timing events on '%s'",
				      dev->info.id);
			goto out_events;
		}
	}
	rc = hip.ModuleLaunchKernel(k->fn, grid[0], grid[1], grid[2], (unsigned)l->local[0],
				    (unsigned)l->local[1], (unsigned)l->local[2], (unsigned)dyn,
				    dev->stream, params, NULL);
	if (rc != hipSuccess) {
		st = hip_fail(err, TCX_ELAUNCH, rc, "cannot launch kernel '%s' on '%s'", l->kernel,
			      dev->info.id);
		goto out_events;
	}
	if (event_ms) {
		rc = hip.EventRecord(ev[1], dev->stream);
		if (rc == hipSuccess)
			rc = hip.EventSynchronize(ev[1]);
		if (rc != hipSuccess) {
			st = hip_fail(err, TCX_ELAUNCH, rc, "kernel '%s' failed on '%s'", l->kernel,
				      dev->info.id);
			goto out_events;
		}
		rc = hip.EventElapsedTime(&ms, ev[0], ev[1]);
		if (rc != hipSuccess)
			st = hip_fail(err, TCX_EDEVICE, rc, "cannot time kernel '%s' on '%s'",
				      l->kernel, dev->info.id);
		else
			*event_ms = ms;
	}
out_events:
	for (int e = 0; e < 2; e++)
		if (ev[e])
			hip.EventDestroy(ev[e]);
	return st;
}

static enum tcx_status hip_finish(struct device *dev, struct tcx_error *err)
{
	enum tcx_status st = use_dev(dev, err);
	hipError_t rc;

	if (st)
		return st;
	rc = hip.StreamSynchronize(dev->stream);
	if (rc != hipSuccess)
		return hip_fail(err, TCX_ELAUNCH, rc, "the work queued on '%s' failed",
				dev->info.id);
	return TCX_OK;
}

void tcx_backend_hip_ops(struct tcx_backend_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->name = "hip";
	ops->probe = hip_probe;
	ops->open = hip_open;
	ops->close = hip_close;
	ops->info = hip_info;
	ops->build = hip_build;
	ops->build_log = hip_build_log;
	ops->program_free = hip_program_free;
	ops->binary = hip_binary;
	ops->build_binary = hip_build_binary;
	ops->kernel_resources = hip_kernel_resources;
	ops->alloc = hip_alloc;
	ops->free = hip_free_buffer;
	ops->write = hip_write;
	ops->read = hip_read;
	ops->fill = hip_fill;
	ops->launch = hip_launch;
	ops->finish = hip_finish;
}

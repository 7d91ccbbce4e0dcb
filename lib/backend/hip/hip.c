/* hip.c - the "hip" backend: AMD GPUs through the HIP runtime (Debian's
 * libamdhip64), with kernels compiled by hiprtc for the device's own
 * target.  Both are loaded with dlopen on first use, so one tcx binary runs
 * with or without ROCm; when they are absent, probe says why and `tcx
 * devices` shows it.  The kernels are the CUDA dialect of the template
 * (device language "cuda"): HIP compiles CUDA C++ as it is.  Most of the
 * backend is lib/backend/gpu/gpu.c, which it shares with the cuda backend
 * and includes first; here is what is HIP's own: its libraries and
 * their releases, the targets hiprtc knows, device ids, wide fills. */
#define TCX_GPU_HIP 1

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/gpu/gpu.c"
#include "backend/hip/hip.h"

/* --- the libraries ---------------------------------------------------- */

/* The runtime's entry points only this backend uses. */
static struct {
	hipError_t (*RuntimeGetVersion)(int *v);
	const char *(*GetErrorName)(hipError_t rc);
	hipError_t (*GetDeviceProperties)(hipDeviceProp_t *p, int ordinal);
} hip;

static const struct gpu_sym hip_syms[] = {
    {"hipRuntimeGetVersion", GPU_SLOT(hip, RuntimeGetVersion), false},
    {"hipGetErrorName", GPU_SLOT(hip, GetErrorName), false},
    {"hipGetDeviceProperties", GPU_SLOT(hip, GetDeviceProperties), false},
};

/* The code object manager, asked which targets hiprtc can compile for. */
static struct {
	int (*GetIsaCount)(size_t *n);
	int (*GetIsaName)(size_t index, const char **name);
} comgr;
static pthread_once_t comgr_once = PTHREAD_ONCE_INIT;
static int rtc_hip_version; /* hiprtc's HIP release (hiprtcVersion says 9.0 in ROCm 5) */

static const char *const runtime_libs[] = {"libamdhip64.so.5", "libamdhip64.so", NULL};
/* hiprtc has its own library since ROCm 5.3; before, the runtime's */
static const char *const hiprtc_libs[] = {"libhiprtc.so.5", "libhiprtc.so", "libamdhip64.so.5",
					  "libamdhip64.so", NULL};

/* hipDeviceProp_t and the attribute numbers change between majors */
static bool hip_usable(const char *which)
{
	int v = 0;

	if (hip.RuntimeGetVersion(&v) == hipSuccess && v / 10000000 != HIP_VERSION_MAJOR) {
		snprintf(gpu_why, sizeof(gpu_why),
			 "%s is HIP %d.%d, but tcx was built with the HIP %d headers", which,
			 v / 10000000, v / 100000 % 100, HIP_VERSION_MAJOR);
		return false;
	}
	return true;
}

/* hiprtc's release: its library's, else the runtime's */
static void hiprtc_loaded(void *lib)
{
	hipError_t (*version)(int *) = NULL;
	const char *which;

	*(void **)&version = dlsym(lib, "hipRuntimeGetVersion");
	if (!version) {
		void *rt = gpu_open_first(runtime_libs, &which);

		if (rt)
			*(void **)&version = dlsym(rt, "hipRuntimeGetVersion");
	}
	if (!version || version(&rtc_hip_version) != hipSuccess)
		rtc_hip_version = 0;
}

static const struct gpu_libraries gpu_libraries = {
    .gpu = runtime_libs,
    .gpu_missing = "libamdhip64.so.5 not found (no HIP runtime; Debian's libamdhip64-5)",
    .gpu_too_old = "",
    .own = hip_syms,
    .nown = ARRAY_SIZE(hip_syms),
    .gpu_usable = hip_usable,
    .rtc = hiprtc_libs,
    .rtc_env = "TCX_HIPRTC_LIBRARY",
    .rtc_missing = "hiprtc not found (tried libhiprtc.so.5, libhiprtc.so and libamdhip64; "
		   "install libamdhip64-dev and libhiprtc-builtins5)",
    .rtc_too_old = " (no hiprtc in it)",
    .rtc_loaded = hiprtc_loaded,
};

static void load_comgr(void)
{
	static const char *const names[] = {"libamd_comgr.so.2", "libamd_comgr.so.3",
					    "libamd_comgr.so", NULL};
	const struct gpu_sym syms[] = {
	    {"amd_comgr_get_isa_count", GPU_SLOT(comgr, GetIsaCount), false},
	    {"amd_comgr_get_isa_name", GPU_SLOT(comgr, GetIsaName), false},
	};
	const char *which;
	void *h = gpu_open_first(names, &which);

	if (h && gpu_resolve(h, syms, ARRAY_SIZE(syms))) {
		memset(&comgr, 0, sizeof(comgr));
		dlclose(h);
	}
}

static const char *gpu_error_name(hipError_t rc)
{
	const char *s = hip.GetErrorName ? hip.GetErrorName(rc) : NULL;

	return s ? s : "unknown HIP error";
}

/* --- hiprtc ------------------------------------------------------------ */

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

static enum tcx_status rtc_target(const char *arch, char *opt, size_t size, const char **argv,
				  int *argc, bool *ptx, struct tcx_error *err)
{
	int maj = 0, min = 0;

	/* comgr 2.4 of ROCm 5.2 aborts the process on an unknown processor */
	if (!arch_known(arch)) {
		hip_hiprtc_version(&maj, &min, NULL);
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"hiprtc of HIP %d.%d (%s) cannot compile for %.*s: its code object "
				"manager does not know that processor",
				maj, min, rtc_name, (int)strcspn(arch, ":"), arch);
	}
	snprintf(opt, size, "--offload-arch=%s", arch);
	argv[(*argc)++] = opt;
	argv[(*argc)++] = "-std=c++17";
	return TCX_OK;
}

/* Its HIP release where it is known: hiprtcVersion says 9.0 in ROCm 5. */
enum tcx_status hip_hiprtc_version(int *major, int *minor, struct tcx_error *err)
{
	enum tcx_status st = rtc_version(major, minor, err);

	if (rtc_hip_version <= 0)
		return st;
	*major = rtc_hip_version / 10000000;
	*minor = rtc_hip_version / 100000 % 100;
	return TCX_OK;
}

enum tcx_status hip_compile_offline(const char *src, size_t len, const char *arch, const char *opts,
				    unsigned char **bin, size_t *bin_len, char **log,
				    struct tcx_error *err)
{
	return rtc_compile(src, len, arch, opts, arch, bin, bin_len, log, err);
}

/* --- devices ---------------------------------------------------------- */

static enum tcx_status gpu_start(int *count, struct tcx_error *err)
{
	enum tcx_status st;
	hipError_t rc;

	*count = 0;
	/* AMD GPUs are reached through the kernel's /dev/kfd: without it there
	 * is nothing to find, and the HIP runtime is not even loaded (it is
	 * large, and its thread-local state upsets LeakSanitizer at exit) */
	if (access("/dev/kfd", F_OK) != 0 && !getenv("TCX_HIP_PROBE_ANYWAY"))
		return tcx_fail(err, TCX_ENODEV, "no AMD GPU (/dev/kfd is absent)");
	st = need_gpu(err);
	if (st)
		return st;
	rc = gpu.Init(0);
	if (rc == hipErrorNoDevice || rc == hipErrorInvalidDevice)
		return gpu_fail(err, TCX_ENODEV, rc, "the HIP runtime sees no AMD GPU");
	if (rc != hipSuccess)
		return gpu_fail(err, TCX_ENODEV, rc, "cannot initialize the HIP runtime");
	rc = gpu.DeviceGetCount(count);
	if (rc == hipErrorNoDevice || (rc == hipSuccess && *count <= 0))
		return tcx_fail(err, TCX_ENODEV, "the HIP runtime sees no AMD GPU");
	if (rc != hipSuccess)
		return gpu_fail(err, TCX_ENODEV, rc, "cannot count HIP devices");
	if (need_rtc(NULL))
		return tcx_fail(err, TCX_ENODEV, "%d HIP device%s, but %s", *count,
				*count == 1 ? "" : "s", rtc_why);
	return TCX_OK;
}

/* HIP's device handles are the ordinals. */
static enum tcx_status gpu_device_get(int ordinal, hipDevice_t *out, struct tcx_error *err)
{
	*out = ordinal;
	return TCX_OK;
}

static void gpu_describe_own(hipDevice_t d, int ordinal, struct device_info *info, char *target,
			     size_t tsize)
{
	hipDeviceProp_t *props = calloc(1, sizeof(*props));
	int rt = 0;

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
}

/* What must be current to use a device is its ordinal. */
static enum tcx_status gpu_retain(struct device *dev, struct tcx_error *err)
{
	dev->ctx = dev->handle;
	return TCX_OK;
}

static void gpu_release(struct device *dev)
{
}

/* --- memory ----------------------------------------------------------- */

/* Written from a host copy of the repeated pattern. */
static enum tcx_status gpu_fill_wide(struct device *dev, struct buffer *buf,
				     const unsigned char *pat, size_t pattern_size, size_t bytes,
				     struct tcx_error *err)
{
	unsigned char *host = malloc(bytes);
	enum tcx_status st;

	if (!host)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (size_t k = 0; k < bytes; k += pattern_size)
		memcpy(host + k, pat, pattern_size);
	st = gpu_write(dev, buf, 0, host, bytes, err);
	free(host);
	return st;
}

void tcx_backend_hip_ops(struct tcx_backend_ops *ops)
{
	gpu_ops(ops);
}

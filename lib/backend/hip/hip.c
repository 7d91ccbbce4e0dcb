/* hip.c - the "hip" backend: AMD GPUs through the HIP runtime (Debian's
 * libamdhip64), with kernels compiled by hiprtc for the device's own
 * target.  Both are loaded with dlopen on first use, so one tcx binary runs
 * with or without ROCm; when they are absent, probe says why and `tcx
 * devices` shows it.  The kernels are the CUDA dialect of the template
 * (device language "cuda"): HIP compiles CUDA C++ as it is.  Most of the
 * backend is lib/backend/gpu/gpu.c, which it shares with the cuda backend
 * and includes first; here is what is HIP's own: what it says without its
 * libraries, their releases, the targets hiprtc knows, device ids. */
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

/* The code object manager, asked which targets hiprtc can compile for. */
static struct {
	int (*GetIsaCount)(size_t *n);
	int (*GetIsaName)(size_t index, const char **name);
} comgr;
static pthread_once_t comgr_once = PTHREAD_ONCE_INIT;
static int rtc_hip_version; /* hiprtc's HIP release (hiprtcVersion says 9.0 in ROCm 5) */

/* hiprtc's release: its library's, else the runtime's */
static void hiprtc_loaded(void *lib)
{
	static const char *const runtime_libs[] = TL_GPU_LIBS;
	hipError_t (*version)(int *) = NULL;
	const char *which;

	*(void **)&version = dlsym(lib, "hipRuntimeGetVersion");
	if (!version) {
		void *rt = tl_gpu_open(runtime_libs, &which);

		if (rt)
			*(void **)&version = dlsym(rt, "hipRuntimeGetVersion");
	}
	if (!version || version(&rtc_hip_version) != hipSuccess)
		rtc_hip_version = 0;
}

static const struct gpu_libraries gpu_libraries = {
    .gpu_too_old = "",
    .rtc_env = "TCX_HIPRTC_LIBRARY",
    .rtc_too_old = " (no hiprtc in it)",
    .rtc_loaded = hiprtc_loaded,
};

static void load_comgr(void)
{
	static const char *const names[] = {"libamd_comgr.so.2", "libamd_comgr.so.3",
					    "libamd_comgr.so", NULL};
	const struct tl_gpu_sym syms[] = {
	    {"amd_comgr_get_isa_count", &comgr.GetIsaCount, TL_GPU_TCX},
	    {"amd_comgr_get_isa_name", &comgr.GetIsaName, TL_GPU_TCX},
	};
	const char *which;
	void *h = tl_gpu_open(names, &which);

	if (h && tl_gpu_bind(h, syms, ARRAY_SIZE(syms))) {
		memset(&comgr, 0, sizeof(comgr));
		dlclose(h);
	}
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

static enum tcx_status rtc_target(const char *arch, char *target, size_t size, int *ptx,
				  struct tcx_error *err)
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
	snprintf(target, size, "%s", arch);
	*ptx = 0;
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
	rc = tl_gpu.Init(0);
	if (rc == hipErrorNoDevice || rc == hipErrorInvalidDevice)
		return gpu_fail(err, TCX_ENODEV, rc, "the HIP runtime sees no AMD GPU");
	if (rc != hipSuccess)
		return gpu_fail(err, TCX_ENODEV, rc, "cannot initialize the HIP runtime");
	rc = tl_gpu.DeviceGetCount(count);
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
	int rt = 0;

	tl_gpu.Version(&rt);
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

void tcx_backend_hip_ops(struct tcx_backend_ops *ops)
{
	gpu_ops(ops);
}

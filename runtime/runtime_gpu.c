/* runtime_gpu.c - the GPU side of runtime.c, for libraries built with
 * TL_WITH_CUDA (the CUDA driver API and NVRTC) or TL_WITH_HIP (the HIP
 * runtime's module API and hiprtc), one source for both (gpu.h says how).
 * Both libraries are loaded with dlopen at first use (libcuda.so.1,
 * libnvrtc.so.13 ... or libamdhip64.so.5, libhiprtc.so.5 ... as tcx's
 * cuda and hip backends do), so that the library loads where the runtime is
 * not installed and says so when called.  Kernels are the CUDA dialect of
 * the template (HIP compiles it as it is, as tcx's hip backend does),
 * compiled per device for its architecture: NVRTC for sm_XY (the newest
 * virtual one NVRTC has when it does not know the device's), hiprtc for
 * the device's gcnArchName ("gfx90a:sramecc+:xnack-").  They are launched
 * as tcx's backends launch them: grid = global / local (abi.c's abi_grid
 * keeps it within every device's limits), the tile's shared
 * memory as the launch's dynamic shared memory.
 *
 * A template: tcx export-lib copies it unchanged; runtime.c includes it
 * after gpu.h.
 */
#if !TL_HAVE_CUDA_KERNELS
#error "tcx export-lib wrote this library without CUDA-dialect kernels (tcx had no CUDA template)"
#endif

/* What modules are loaded in: CUDA a context, HIP the device. */
#if TL_WITH_CUDA
typedef CUcontext tl_gpu_ctx;
#else
typedef int tl_gpu_ctx;
#endif

/* The entry points used, resolved with dlsym. */
struct tl_gpu_api {
	int tried_gpu, tried_rtc;
	void *gpu, *rtc;
	tl_gpu_rc (*Init)(unsigned int);
	tl_gpu_rc (*Current)(tl_gpu_ctx *);	 /* cuCtxGetCurrent, hipGetDevice */
	tl_gpu_rc (*CtxGetDevice)(tl_gpu_dev *); /* CUDA only */
	tl_gpu_rc (*DeviceGetName)(char *, int, tl_gpu_dev);
	tl_gpu_rc (*ModuleLoadData)(tl_gpu_module *, const void *);
	tl_gpu_rc (*ModuleUnload)(tl_gpu_module);
	tl_gpu_rc (*ModuleGetFunction)(tl_gpu_function *, tl_gpu_module, const char *);
	tl_gpu_rc (*LaunchKernel)(tl_gpu_function, unsigned, unsigned, unsigned, unsigned,
				  unsigned, unsigned, unsigned, tl_gpu_stream, void **, void **);
	tl_gpu_rc (*MemAllocAsync)(tl_gpu_ptr *, size_t, tl_gpu_stream);
	tl_gpu_rc (*MemFreeAsync)(tl_gpu_ptr, tl_gpu_stream);
	/* C through the host, for an empty sum (runtime.c, tl_empty) */
	tl_gpu_rc (*MemcpyDtoHAsync)(void *, tl_gpu_ptr, size_t, tl_gpu_stream);
	tl_gpu_rc (*MemcpyHtoDAsync)(tl_gpu_ptr, const void *, size_t, tl_gpu_stream);
	tl_gpu_rc (*StreamSynchronize)(tl_gpu_stream);
#if TL_WITH_CUDA
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*GetErrorString)(CUresult, const char **);
#else
	hipError_t (*RuntimeGetVersion)(int *);
	hipError_t (*GetDeviceProperties)(hipDeviceProp_t *, int);
	const char *(*GetErrorString)(hipError_t);
#endif
	tl_rtc_rc (*CreateProgram)(tl_rtc_prog *, const char *, const char *, int,
				   const char *const *, const char *const *);
	tl_rtc_rc (*CompileProgram)(tl_rtc_prog, int, const char *const *);
	tl_rtc_rc (*GetProgramLogSize)(tl_rtc_prog, size_t *);
	tl_rtc_rc (*GetProgramLog)(tl_rtc_prog, char *);
	tl_rtc_rc (*GetCodeSize)(tl_rtc_prog, size_t *); /* a cubin, a code object */
	tl_rtc_rc (*GetCode)(tl_rtc_prog, char *);
	tl_rtc_rc (*GetPTXSize)(tl_rtc_prog, size_t *); /* CUDA only */
	tl_rtc_rc (*GetPTX)(tl_rtc_prog, char *);
	tl_rtc_rc (*DestroyProgram)(tl_rtc_prog *);
	tl_rtc_rc (*GetNumSupportedArchs)(int *); /* CUDA only */
	tl_rtc_rc (*GetSupportedArchs)(int *);
	tl_rtc_rc (*Version)(int *, int *); /* CUDA only */
};

static struct tl_gpu_api tl_gpu;
static char tl_gpu_why[512];

/* Loads the compiler (no GPU needed); with tl_lock held. */
static TL_STATUS tl_rtc_load(void)
{
	static const char *const names[] = TL_RTC_LIBS;
	const struct tl_gpu_sym syms[] = {
	    {TL_GPU("nvrtcCreateProgram", "hiprtcCreateProgram"), &tl_gpu.CreateProgram, 0},
	    {TL_GPU("nvrtcCompileProgram", "hiprtcCompileProgram"), &tl_gpu.CompileProgram, 0},
	    {TL_GPU("nvrtcGetProgramLogSize", "hiprtcGetProgramLogSize"),
	     &tl_gpu.GetProgramLogSize, 0},
	    {TL_GPU("nvrtcGetProgramLog", "hiprtcGetProgramLog"), &tl_gpu.GetProgramLog, 0},
	    {TL_GPU("nvrtcDestroyProgram", "hiprtcDestroyProgram"), &tl_gpu.DestroyProgram, 0},
	    {TL_GPU("nvrtcGetCUBINSize", "hiprtcGetCodeSize"), &tl_gpu.GetCodeSize,
	     TL_GPU(1, 0)},
	    {TL_GPU("nvrtcGetCUBIN", "hiprtcGetCode"), &tl_gpu.GetCode, TL_GPU(1, 0)},
	    {TL_GPU("nvrtcGetPTXSize", NULL), &tl_gpu.GetPTXSize, 0},
	    {TL_GPU("nvrtcGetPTX", NULL), &tl_gpu.GetPTX, 0},
	    {TL_GPU("nvrtcGetNumSupportedArchs", NULL), &tl_gpu.GetNumSupportedArchs, 1},
	    {TL_GPU("nvrtcGetSupportedArchs", NULL), &tl_gpu.GetSupportedArchs, 1},
	    {TL_GPU("nvrtcVersion", NULL), &tl_gpu.Version, 1},
	};
	const char *which = NULL, *missing;
	void *h;

	if (tl_gpu.rtc)
		return TL_UP(OK);
	if (tl_gpu.tried_rtc)
		return TL_UP(EDEVICE);
	tl_gpu.tried_rtc = 1;
	h = tl_gpu_open(names, &which);
	if (!h) {
		snprintf(tl_gpu_why, sizeof(tl_gpu_why), "%s not found (tried %s and others)",
			 TL_RTC_NAME, names[0]);
		return TL_UP(EDEVICE);
	}
	missing = tl_gpu_bind(h, syms, sizeof(syms) / sizeof(syms[0]));
	if (missing) {
		snprintf(tl_gpu_why, sizeof(tl_gpu_why), "%s lacks %s", which, missing);
		dlclose(h);
		return TL_UP(EDEVICE);
	}
	tl_gpu.rtc = h;
	return TL_UP(OK);
}

static const char *tl_gpu_error(tl_gpu_rc rc)
{
	const char *s = NULL;

#if TL_WITH_CUDA
	if (!tl_gpu.GetErrorString || tl_gpu.GetErrorString(rc, &s) != CUDA_SUCCESS)
		s = NULL;
#else
	if (tl_gpu.GetErrorString)
		s = tl_gpu.GetErrorString(rc);
#endif
	return s ? s : TL_GPU_NAME " error";
}

/* Loads the runtime; with tl_lock held. */
static TL_STATUS tl_gpu_load(void)
{
	static const char *const names[] = TL_GPU_LIBS;
	const struct tl_gpu_sym syms[] = {
	    {TL_GPU("cuInit", "hipInit"), &tl_gpu.Init, 0},
	    {TL_GPU("cuCtxGetCurrent", "hipGetDevice"), &tl_gpu.Current, 0},
	    {TL_GPU("cuCtxGetDevice", NULL), &tl_gpu.CtxGetDevice, 0},
	    {TL_GPU("cuDeviceGetName", "hipDeviceGetName"), &tl_gpu.DeviceGetName, 0},
	    {TL_GPU("cuModuleLoadData", "hipModuleLoadData"), &tl_gpu.ModuleLoadData, 0},
	    {TL_GPU("cuModuleUnload", "hipModuleUnload"), &tl_gpu.ModuleUnload, 0},
	    {TL_GPU("cuModuleGetFunction", "hipModuleGetFunction"), &tl_gpu.ModuleGetFunction, 0},
	    {TL_GPU("cuLaunchKernel", "hipModuleLaunchKernel"), &tl_gpu.LaunchKernel, 0},
	    {TL_GPU("cuMemAllocAsync", "hipMallocAsync"), &tl_gpu.MemAllocAsync, 0},
	    {TL_GPU("cuMemFreeAsync", "hipFreeAsync"), &tl_gpu.MemFreeAsync, 0},
	    {TL_GPU("cuMemcpyDtoHAsync_v2", "hipMemcpyDtoHAsync"), &tl_gpu.MemcpyDtoHAsync, 0},
	    {TL_GPU("cuMemcpyHtoDAsync_v2", "hipMemcpyHtoDAsync"), &tl_gpu.MemcpyHtoDAsync, 0},
	    {TL_GPU("cuStreamSynchronize", "hipStreamSynchronize"), &tl_gpu.StreamSynchronize, 0},
#if TL_WITH_CUDA
	    {"cuDeviceGetAttribute", &tl_gpu.DeviceGetAttribute, 0},
	    {"cuFuncSetAttribute", &tl_gpu.FuncSetAttribute, 0},
#else
	    {"hipRuntimeGetVersion", &tl_gpu.RuntimeGetVersion, 0},
	    {"hipGetDeviceProperties", &tl_gpu.GetDeviceProperties, 0},
#endif
	    {TL_GPU("cuGetErrorString", "hipGetErrorString"), &tl_gpu.GetErrorString, 0},
	};
	const char *which = NULL, *missing;
	tl_gpu_rc rc;
	void *h;

	if (tl_gpu.gpu)
		return TL_UP(OK);
	if (tl_gpu.tried_gpu)
		return TL_UP(EDEVICE);
	tl_gpu.tried_gpu = 1;
	h = tl_gpu_open(names, &which);
	if (!h) {
		snprintf(tl_gpu_why, sizeof(tl_gpu_why), "%s not found (%s)", names[0],
			 TL_GPU("no NVIDIA driver", "no HIP runtime"));
		return TL_UP(EDEVICE);
	}
	missing = tl_gpu_bind(h, syms, sizeof(syms) / sizeof(syms[0]));
	if (missing) {
		snprintf(tl_gpu_why, sizeof(tl_gpu_why), "%s lacks %s", which, missing);
		dlclose(h);
		return TL_UP(EDEVICE);
	}
#if TL_WITH_HIP
	{
		/* hipDeviceProp_t is the headers' */
		int v = 0;

		if (tl_gpu.RuntimeGetVersion(&v) == hipSuccess && v / 10000000 != HIP_VERSION_MAJOR) {
			snprintf(tl_gpu_why, sizeof(tl_gpu_why),
				 "%s is HIP %d.%d, but the library was built with the HIP %d "
				 "headers",
				 which, v / 10000000, v / 100000 % 100, HIP_VERSION_MAJOR);
			dlclose(h);
			return TL_UP(EDEVICE);
		}
	}
#endif
	rc = tl_gpu.Init(0);
	if (rc != TL_GPU_OK) {
		snprintf(tl_gpu_why, sizeof(tl_gpu_why), "%s failed: no usable %s GPU (%s)",
			 TL_GPU("cuInit", "hipInit"), TL_GPU_VENDOR, tl_gpu_error(rc));
		dlclose(h);
		return TL_UP(EDEVICE);
	}
	tl_gpu.gpu = h;
	return TL_UP(OK);
}

/* The compiler's target for arch.  CUDA: sm_XY itself when NVRTC knows it,
 * else the newest virtual architecture NVRTC has (PTX, which the driver
 * compiles).  HIP: the target id as it is. */
static void tl_rtc_target(const char *arch, char *target, size_t len, int *ptx)
{
	int want, n = 0, best = 0, known = 0, k, list[128], major = 0, minor = 0;

	*ptx = 0;
	snprintf(target, len, "%s", arch);
	if (sscanf(arch, "sm_%d", &want) != 1 || !tl_gpu.GetNumSupportedArchs ||
	    !tl_gpu.GetSupportedArchs || tl_gpu.GetNumSupportedArchs(&n) != TL_RTC_OK || n <= 0 ||
	    n > 128 || tl_gpu.GetSupportedArchs(list) != TL_RTC_OK)
		return;
	for (k = 0; k < n; k++) {
		known |= list[k] == want;
		best = list[k] > best ? list[k] : best;
	}
	if (!known && want > best) {
		snprintf(target, len, "compute_%d", best);
		*ptx = 1;
	}
	/* Hopper: its own instructions (wgmma) need the sm_90a target, which
	 * NVRTC has from CUDA 12; the code runs on sm_90 devices alone, which
	 * is all this device is */
	if (known && want == 90 && tl_gpu.Version && tl_gpu.Version(&major, &minor) == TL_RTC_OK &&
	    major >= 12)
		snprintf(target, len, "sm_90a");
}

/* Compiles kernel K (layout `generic`) for arch with NVRTC or hiprtc, with
 * tl_lock held; the cubin, PTX or code object in *bin, the caller's to
 * free. */
static TL_STATUS tl_rtc_compile(const struct tl_kernel *K, int generic, const char *arch,
				char **bin, size_t *bin_len)
{
	static const char *const base[] = TL_GPU(TL_NVRTC_OPTIONS, TL_HIPRTC_OPTIONS);
	const char *opts[8];
	char target[256], archopt[300];
	char *src;
	size_t plen = K->prelude_len[1][generic], tlen = sizeof(tl_template_cuda), n = 0;
	int nopt = 0, ptx, k;
	tl_rtc_prog prog = NULL;
	tl_rtc_rc rc;
	TL_STATUS st = tl_rtc_load();

	*bin = NULL;
	if (st) {
		tl_set_error_locked("%s", tl_gpu_why);
		return st;
	}
	if (!K->prelude[1][generic]) {
		tl_set_error_locked("kernel %s has no CUDA-dialect variant", K->name);
		return TL_UP(EUNSUPPORTED);
	}
	tl_rtc_target(arch, target, sizeof(target), &ptx);
	snprintf(archopt, sizeof(archopt), TL_GPU("--gpu-architecture=%s", "--offload-arch=%s"),
		 target);
	opts[nopt++] = archopt;
	for (k = 0; k < (int)(sizeof(base) / sizeof(base[0])) && nopt < 8; k++)
		opts[nopt++] = base[k];
	src = malloc(plen + tlen + 1);
	if (!src)
		return TL_UP(ENOMEM);
	memcpy(src, K->prelude[1][generic], plen);
	memcpy(src + plen, tl_template_cuda, tlen);
	src[plen + tlen] = '\0';
	rc = tl_gpu.CreateProgram(&prog, src, "tcx_kernel.cu", 0, NULL, NULL);
	if (rc == TL_RTC_OK)
		rc = tl_gpu.CompileProgram(prog, nopt, opts);
	free(src);
	if (rc != TL_RTC_OK) {
		size_t head = (size_t)snprintf(tl_error, sizeof(tl_error),
					       "kernel %s does not compile for %s (%s %d):\n",
					       K->name, target, TL_RTC_NAME, (int)rc);

		if (prog && head < sizeof(tl_error) &&
		    tl_gpu.GetProgramLogSize(prog, &n) == TL_RTC_OK &&
		    n < sizeof(tl_error) - head)
			tl_gpu.GetProgramLog(prog, tl_error + head);
		if (prog)
			tl_gpu.DestroyProgram(&prog);
		return TL_UP(EBUILD);
	}
	if (!ptx && tl_gpu.GetCodeSize && tl_gpu.GetCode)
		rc = tl_gpu.GetCodeSize(prog, &n);
	else
		rc = tl_gpu.GetPTXSize(prog, &n);
	if (rc == TL_RTC_OK) {
		*bin = malloc(n ? n : 1);
		if (!*bin) {
			tl_gpu.DestroyProgram(&prog);
			return TL_UP(ENOMEM);
		}
		rc = !ptx && tl_gpu.GetCode ? tl_gpu.GetCode(prog, *bin) : tl_gpu.GetPTX(prog, *bin);
	}
	tl_gpu.DestroyProgram(&prog);
	if (rc != TL_RTC_OK) {
		free(*bin);
		*bin = NULL;
		tl_set_error_locked("cannot read the code %s compiled for %s", TL_RTC_NAME,
				    K->name);
		return TL_UP(EBUILD);
	}
	*bin_len = n;
	return TL_UP(OK);
}

/* A device the library has seen (target: what the compiler is given), and
 * a module it loaded. */
struct tl_gpu_device {
	tl_gpu_dev dev;
	struct tl_ident ident;
	char target[256];
	struct tl_gpu_device *next;
};

struct tl_gpu_module {
	tl_gpu_ctx ctx;
	const struct tl_kernel *kernel;
	int generic;
	tl_gpu_module mod;
	tl_gpu_function contract, reduce;
	int dyn_set; /* dynamic shared memory opted in to (CUDA) */
	struct tl_gpu_module *next;
};

static struct tl_gpu_device *tl_gpu_devices;
static struct tl_gpu_module *tl_gpu_modules;

/* Names device d: its name, vendor, architecture and compiler target. */
static void tl_gpu_describe(struct tl_gpu_device *d)
{
	tl_gpu.DeviceGetName(d->ident.name, (int)sizeof(d->ident.name), d->dev);
	tl_squeeze(d->ident.name);
	snprintf(d->ident.vendor, sizeof(d->ident.vendor), "%s", TL_GPU_VENDOR);
#if TL_WITH_CUDA
	{
		int ma = 0, mi = 0;

		tl_gpu.DeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
		tl_gpu.DeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
		snprintf(d->ident.arch, sizeof(d->ident.arch), "sm_%d%d", ma, mi);
		snprintf(d->target, sizeof(d->target), "%s", d->ident.arch);
	}
#else
	{
		/* the target id, "gfx90a:sramecc+:xnack-"; the architecture is its
		 * processor, as tcx names it */
		hipDeviceProp_t *props = calloc(1, sizeof(*props));

		if (props && tl_gpu.GetDeviceProperties(props, d->dev) == hipSuccess)
			snprintf(d->target, sizeof(d->target), "%s", props->gcnArchName);
		free(props);
		snprintf(d->ident.arch, sizeof(d->ident.arch), "%.*s",
			 (int)strcspn(d->target, ":"), d->target);
	}
#endif
}

/* The calling thread's context (CUDA) or device (HIP) and its device. */
static TL_STATUS tl_gpu_current(tl_gpu_ctx *ctx, struct tl_gpu_device **out)
{
	struct tl_gpu_device *d;
	tl_gpu_dev dev;
	tl_gpu_rc rc;
	TL_STATUS st;

	pthread_mutex_lock(&tl_lock);
	st = tl_gpu_load();
	if (st) {
		tl_set_error_locked("%s", tl_gpu_why);
		pthread_mutex_unlock(&tl_lock);
		return st;
	}
	rc = tl_gpu.Current(ctx);
#if TL_WITH_CUDA
	if (rc == CUDA_SUCCESS && !*ctx)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		rc = tl_gpu.CtxGetDevice(&dev);
#else
	dev = *ctx;
#endif
	if (rc != TL_GPU_OK) {
		tl_set_error_locked("no current %s on this thread: %s",
				    TL_GPU("CUDA context", "HIP device"), tl_gpu_error(rc));
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(EINVAL);
	}
	for (d = tl_gpu_devices; d; d = d->next)
		if (d->dev == dev)
			break;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d) {
			pthread_mutex_unlock(&tl_lock);
			return TL_UP(ENOMEM);
		}
		d->dev = dev;
		tl_gpu_describe(d);
		d->next = tl_gpu_devices;
		tl_gpu_devices = d;
	}
	*out = d;
	pthread_mutex_unlock(&tl_lock);
	return TL_UP(OK);
}

static TL_STATUS tl_gpu_module_get(tl_gpu_ctx ctx, const struct tl_gpu_device *d,
				   const struct tl_kernel *K, int generic,
				   struct tl_gpu_module **out)
{
	struct tl_gpu_module *m;
	char *bin = NULL;
	size_t len = 0;
	tl_gpu_rc rc;
	TL_STATUS st;

	pthread_mutex_lock(&tl_lock);
	for (m = tl_gpu_modules; m; m = m->next)
		if (m->ctx == ctx && m->kernel == K && m->generic == generic) {
			*out = m;
			pthread_mutex_unlock(&tl_lock);
			return TL_UP(OK);
		}
	if (!d->target[0]) {
		tl_set_error_locked("cannot tell the architecture of %s", d->ident.name);
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(EDEVICE);
	}
	st = tl_rtc_compile(K, generic, d->target, &bin, &len);
	if (st) {
		pthread_mutex_unlock(&tl_lock);
		return st;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(bin);
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(ENOMEM);
	}
	rc = tl_gpu.ModuleLoadData(&m->mod, bin);
	free(bin);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.ModuleGetFunction(&m->contract, m->mod, TCX_CONTRACT_NAME);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.ModuleGetFunction(&m->reduce, m->mod, TCX_REDUCE_NAME);
	if (rc != TL_GPU_OK) {
		tl_set_error_locked("cannot load kernel %s: %s", K->name, tl_gpu_error(rc));
		if (m->mod)
			tl_gpu.ModuleUnload(m->mod);
		free(m);
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(EBUILD);
	}
	m->ctx = ctx;
	m->kernel = K;
	m->generic = generic;
	m->next = tl_gpu_modules;
	tl_gpu_modules = m;
	*out = m;
	pthread_mutex_unlock(&tl_lock);
	return TL_UP(OK);
}

static TL_STATUS tl_device(TL(queue) queue, struct tl_ident *ident)
{
	tl_gpu_ctx ctx;
	struct tl_gpu_device *d;
	TL_STATUS st = tl_gpu_current(&ctx, &d);

	(void)queue;
	if (!st)
		*ident = d->ident;
	return st;
}

/* Copies C to the host (to_device 0) or back, and waits for the stream:
 * after the work queued before it, and done when it returns. */
static TL_STATUS tl_copy(TL(queue) queue, TL(mem) c, void *buf, size_t bytes, int to_device)
{
	tl_gpu_stream stream = (tl_gpu_stream)queue;
	tl_gpu_ptr C = (tl_gpu_ptr)(uintptr_t)c;
	tl_gpu_ctx ctx;
	struct tl_gpu_device *d;
	tl_gpu_rc rc;
	TL_STATUS st = tl_gpu_current(&ctx, &d);

	if (st)
		return st;
	rc = to_device ? tl_gpu.MemcpyHtoDAsync(C, buf, bytes, stream)
		       : tl_gpu.MemcpyDtoHAsync(buf, C, bytes, stream);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.StreamSynchronize(stream);
	if (rc == TL_GPU_OK)
		return TL_UP(OK);
	tl_set_error("cannot %s C for an empty sum: %s", to_device ? "write" : "read",
		     tl_gpu_error(rc));
	return TL_UP(EDEVICE);
}

/* Opts kernel m in to dyn bytes of dynamic shared memory where the device
 * asks for it (CUDA, above 48 KiB; HIP has no such step: the device's
 * limit holds). */
static void tl_gpu_shared(struct tl_gpu_module *m, unsigned dyn)
{
#if TL_WITH_CUDA
	if (dyn <= 48 * 1024)
		return;
	pthread_mutex_lock(&tl_lock);
	if ((int)dyn > m->dyn_set &&
	    tl_gpu.FuncSetAttribute(m->contract, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				    (int)dyn) == CUDA_SUCCESS)
		m->dyn_set = (int)dyn;
	pthread_mutex_unlock(&tl_lock);
#else
	(void)m;
	(void)dyn;
#endif
}

static TL_STATUS tl_execute(TL(queue) queue, const struct tl_type *T, const struct tl_kernel *K,
			    const struct tl_problem *p, const double *alpha, const double *beta,
			    TL(mem) c, TL(mem) a, TL(mem) b)
{
	tl_gpu_stream stream = (tl_gpu_stream)queue;
	tl_gpu_ctx ctx;
	struct tl_gpu_device *d;
	struct tl_gpu_module *m;
	struct abi_launch L;
	tl_gpu_ptr C = (tl_gpu_ptr)(uintptr_t)c, A = (tl_gpu_ptr)(uintptr_t)a;
	tl_gpu_ptr B = (tl_gpu_ptr)(uintptr_t)b, P, Q, W = 0;
	void *params[TCX_PARAMS_WGMMA];
	/* the warpgroup kernel's tensor maps and their use: none, so that
	 * its producer copies with cp.async */
	static const unsigned char no_map[TCX_TMAP_BYTES];
	static const struct tcx_tma no_tma = {0, {-1, -1, -1}, {-1, -1, -1}};
	unsigned dyn;
	tl_gpu_rc rc;
	TL_STATUS st = tl_gpu_current(&ctx, &d);

	if (!st)
		st = tl_gpu_module_get(ctx, d, K, !p->packed, &m);
	if (st)
		return st;
	st = tl_launch_make(T, K, p, alpha, beta, &L);
	if (st)
		return st;
	P = T->p_is_a ? A : B;
	Q = T->p_is_a ? B : A;
	dyn = K->lds_bytes > 0 ? (unsigned)K->lds_bytes : 0;
	tl_gpu_shared(m, dyn);
	if (L.ws_bytes) {
		rc = tl_gpu.MemAllocAsync(&W, L.ws_bytes, stream);
		if (rc != TL_GPU_OK) {
			tl_set_error("cannot allocate the GlobalSplitU workspace: %s",
				     tl_gpu_error(rc));
			return TL_UP(ENOMEM);
		}
	}
	params[TCX_PARAM_C] = &C;
	params[TCX_PARAM_P] = &P;
	params[TCX_PARAM_Q] = &Q;
	params[TCX_PARAM_W] = W ? &W : &C;
	params[TCX_PARAM_ARGS] = &L.args;
	params[TCX_PARAM_ALPHA] = &L.alpha;
	params[TCX_PARAM_BETA] = &L.beta;
	params[TCX_PARAM_TMAP_P] = (void *)no_map;
	params[TCX_PARAM_TMAP_Q] = (void *)no_map;
	params[TCX_PARAM_TMA] = (void *)&no_tma;
	rc = tl_gpu.LaunchKernel(
	    m->contract, (unsigned)(L.global[0] / L.local[0]), (unsigned)(L.global[1] / L.local[1]),
	    (unsigned)(L.global[2] / L.local[2]), (unsigned)L.local[0], (unsigned)L.local[1],
	    (unsigned)L.local[2], dyn, stream, params, NULL);
	if (rc == TL_GPU_OK && W) {
		params[TCX_REDUCE_C] = &C;
		params[TCX_REDUCE_W] = &W;
		params[TCX_REDUCE_ARGS] = &L.args;
		params[TCX_REDUCE_ALPHA] = &L.alpha;
		params[TCX_REDUCE_BETA] = &L.beta;
		params[TCX_REDUCE_TOTAL] = &L.total;
		rc = tl_gpu.LaunchKernel(m->reduce, (unsigned)(L.rglobal[0] / L.rlocal[0]),
					 (unsigned)(L.rglobal[1] / L.rlocal[1]),
					 (unsigned)(L.rglobal[2] / L.rlocal[2]),
					 (unsigned)L.rlocal[0], (unsigned)L.rlocal[1],
					 (unsigned)L.rlocal[2], 0, stream, params, NULL);
	}
	if (W)
		tl_gpu.MemFreeAsync(W, stream);
	if (rc != TL_GPU_OK) {
		tl_set_error("cannot launch kernel %s: %s", K->name, tl_gpu_error(rc));
		return TL_UP(ELAUNCH);
	}
	return TL_UP(OK);
}

TL_UP(API) TL_STATUS TL(compile)(TL(queue) queue, const char *target)
{
	int t, k, g;
	TL_STATUS st = TL_UP(OK);

	(void)queue;
	if (target) {
		/* the compiler alone: no device, no driver needed */
		for (t = 0; t < TL_NTYPES && !st; t++)
			for (k = 0; k < tl_types[t].nkernels && !st; k++)
				for (g = 0; g < 2 && !st; g++) {
					char *bin = NULL;
					size_t len;

					pthread_mutex_lock(&tl_lock);
					st = tl_rtc_compile(&tl_types[t].kernels[k], g, target,
							    &bin, &len);
					pthread_mutex_unlock(&tl_lock);
					free(bin);
				}
		return st;
	}
	{
		tl_gpu_ctx ctx;
		struct tl_gpu_device *d;
		struct tl_gpu_module *m;

		st = tl_gpu_current(&ctx, &d);
		for (t = 0; t < TL_NTYPES && !st; t++)
			for (k = 0; k < tl_types[t].nkernels && !st; k++)
				for (g = 0; g < 2 && !st; g++)
					st = tl_gpu_module_get(ctx, d, &tl_types[t].kernels[k], g,
							       &m);
	}
	return st;
}

TL_UP(API) void TL(release)(void)
{
	pthread_mutex_lock(&tl_lock);
	while (tl_gpu_modules) {
		struct tl_gpu_module *m = tl_gpu_modules;

		tl_gpu_modules = m->next;
		tl_gpu.ModuleUnload(m->mod);
		free(m);
	}
	while (tl_gpu_devices) {
		struct tl_gpu_device *d = tl_gpu_devices;

		tl_gpu_devices = d->next;
		free(d);
	}
	pthread_mutex_unlock(&tl_lock);
}

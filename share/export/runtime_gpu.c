/* runtime_cuda.c - the CUDA side of runtime.c, for libraries built with
 * TL_WITH_CUDA: the driver API and NVRTC, both loaded with dlopen at first
 * use (libcuda.so.1, libnvrtc.so.13 ... as tcx's cuda backend does), so
 * that the library loads where CUDA is not installed and says so when
 * called.  Kernels are compiled with NVRTC for the device's architecture
 * (the newest virtual one NVRTC has when it does not know the device's) and
 * launched as tcx's cuda backend launches them: grid = global / local, the
 * tile's shared memory as the launch's dynamic shared memory.
 *
 * A template: tcx export-lib copies it unchanged; runtime.c includes it.
 */
#if !TL_HAVE_CUDA_KERNELS
#error "tcx export-lib wrote this library without CUDA kernels (tcx had no CUDA template)"
#endif

/* The entry points used, resolved with dlsym. */
struct tl_cuda_api {
	int tried_cu, tried_rtc;
	void *cu, *rtc;
	CUresult (*Init)(unsigned int);
	CUresult (*CtxGetCurrent)(CUcontext *);
	CUresult (*CtxGetDevice)(CUdevice *);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, unsigned, CUstream, void **, void **);
	CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*GetErrorString)(CUresult, const char **);
	nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
				     const char *const *, const char *const *);
	nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
	nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
	nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
	nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
	nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
	nvrtcResult (*GetPTX)(nvrtcProgram, char *);
	nvrtcResult (*DestroyProgram)(nvrtcProgram *);
	nvrtcResult (*GetNumSupportedArchs)(int *);
	nvrtcResult (*GetSupportedArchs)(int *);
};

static struct tl_cuda_api tl_cu;
static char tl_cu_why[512];

/* dlsym into a function pointer (through memcpy: ISO C has no cast). */
static int tl_sym(void *lib, const char *name, void *fn, int optional)
{
	void *p = dlsym(lib, name);

	if (!p) {
		if (!optional)
			snprintf(tl_cu_why, sizeof(tl_cu_why), "%s lacks %s", "the CUDA library",
				 name);
		return optional;
	}
	memcpy(fn, &p, sizeof(p));
	return 1;
}

static void *tl_open_first(const char *const *names)
{
	int k;

	for (k = 0; names[k]; k++) {
		void *h = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);

		if (h)
			return h;
	}
	return NULL;
}

/* Loads NVRTC (for compiling; no GPU needed); with tl_lock held. */
static TL_STATUS tl_rtc_load(void)
{
	static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
					    "libnvrtc.so", NULL};
	void *h;
	int ok;

	if (tl_cu.rtc)
		return TL_UP(OK);
	if (tl_cu.tried_rtc)
		return TL_UP(EDEVICE);
	tl_cu.tried_rtc = 1;
	h = tl_open_first(names);
	if (!h) {
		snprintf(tl_cu_why, sizeof(tl_cu_why),
			 "libnvrtc not found (the CUDA toolkit's NVRTC)");
		return TL_UP(EDEVICE);
	}
	ok = tl_sym(h, "nvrtcCreateProgram", &tl_cu.CreateProgram, 0) &&
	     tl_sym(h, "nvrtcCompileProgram", &tl_cu.CompileProgram, 0) &&
	     tl_sym(h, "nvrtcGetProgramLogSize", &tl_cu.GetProgramLogSize, 0) &&
	     tl_sym(h, "nvrtcGetProgramLog", &tl_cu.GetProgramLog, 0) &&
	     tl_sym(h, "nvrtcGetPTXSize", &tl_cu.GetPTXSize, 0) &&
	     tl_sym(h, "nvrtcGetPTX", &tl_cu.GetPTX, 0) &&
	     tl_sym(h, "nvrtcDestroyProgram", &tl_cu.DestroyProgram, 0) &&
	     tl_sym(h, "nvrtcGetCUBINSize", &tl_cu.GetCUBINSize, 1) &&
	     tl_sym(h, "nvrtcGetCUBIN", &tl_cu.GetCUBIN, 1) &&
	     tl_sym(h, "nvrtcGetNumSupportedArchs", &tl_cu.GetNumSupportedArchs, 1) &&
	     tl_sym(h, "nvrtcGetSupportedArchs", &tl_cu.GetSupportedArchs, 1);
	if (!ok) {
		dlclose(h);
		return TL_UP(EDEVICE);
	}
	tl_cu.rtc = h;
	return TL_UP(OK);
}

/* Loads the driver API; with tl_lock held. */
static TL_STATUS tl_cu_load(void)
{
	static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
	void *h;
	int ok;

	if (tl_cu.cu)
		return TL_UP(OK);
	if (tl_cu.tried_cu)
		return TL_UP(EDEVICE);
	tl_cu.tried_cu = 1;
	h = tl_open_first(names);
	if (!h) {
		snprintf(tl_cu_why, sizeof(tl_cu_why), "libcuda.so.1 not found (no NVIDIA driver)");
		return TL_UP(EDEVICE);
	}
	ok = tl_sym(h, "cuInit", &tl_cu.Init, 0) &&
	     tl_sym(h, "cuCtxGetCurrent", &tl_cu.CtxGetCurrent, 0) &&
	     tl_sym(h, "cuCtxGetDevice", &tl_cu.CtxGetDevice, 0) &&
	     tl_sym(h, "cuDeviceGetName", &tl_cu.DeviceGetName, 0) &&
	     tl_sym(h, "cuDeviceGetAttribute", &tl_cu.DeviceGetAttribute, 0) &&
	     tl_sym(h, "cuModuleLoadData", &tl_cu.ModuleLoadData, 0) &&
	     tl_sym(h, "cuModuleUnload", &tl_cu.ModuleUnload, 0) &&
	     tl_sym(h, "cuModuleGetFunction", &tl_cu.ModuleGetFunction, 0) &&
	     tl_sym(h, "cuFuncSetAttribute", &tl_cu.FuncSetAttribute, 0) &&
	     tl_sym(h, "cuLaunchKernel", &tl_cu.LaunchKernel, 0) &&
	     tl_sym(h, "cuMemAllocAsync", &tl_cu.MemAllocAsync, 0) &&
	     tl_sym(h, "cuMemFreeAsync", &tl_cu.MemFreeAsync, 0) &&
	     tl_sym(h, "cuGetErrorString", &tl_cu.GetErrorString, 0);
	if (!ok || tl_cu.Init(0) != CUDA_SUCCESS) {
		if (ok)
			snprintf(tl_cu_why, sizeof(tl_cu_why),
				 "cuInit failed: no usable NVIDIA GPU");
		dlclose(h);
		return TL_UP(EDEVICE);
	}
	tl_cu.cu = h;
	return TL_UP(OK);
}

static const char *tl_cu_error(CUresult rc)
{
	const char *s = NULL;

	if (tl_cu.GetErrorString && tl_cu.GetErrorString(rc, &s) == CUDA_SUCCESS && s)
		return s;
	return "CUDA error";
}

/* NVRTC's target for sm_XY: itself when NVRTC knows it, else the newest
 * virtual architecture NVRTC has (PTX, which the driver compiles). */
static void tl_rtc_target(const char *arch, char *target, size_t len, int *ptx)
{
	int want, n = 0, best = 0, known = 0, k, list[128];

	*ptx = 0;
	snprintf(target, len, "%s", arch);
	if (sscanf(arch, "sm_%d", &want) != 1 || !tl_cu.GetNumSupportedArchs ||
	    !tl_cu.GetSupportedArchs || tl_cu.GetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 ||
	    n > 128 || tl_cu.GetSupportedArchs(list) != NVRTC_SUCCESS)
		return;
	for (k = 0; k < n; k++) {
		known |= list[k] == want;
		best = list[k] > best ? list[k] : best;
	}
	if (!known && want > best) {
		snprintf(target, len, "compute_%d", best);
		*ptx = 1;
	}
}

/* Compiles kernel K (layout `generic`) for arch with NVRTC, with tl_lock
 * held; the cubin (or PTX) in *bin, the caller's to free. */
static TL_STATUS tl_rtc_compile(const struct tl_kernel *K, int generic, const char *arch,
				char **bin, size_t *bin_len)
{
	static const char *const base[] = TL_NVRTC_OPTIONS;
	const char *opts[8];
	char target[64], archopt[96];
	char *src;
	size_t plen = K->prelude_len[1][generic], tlen = sizeof(tl_template_cuda), n = 0;
	int nopt = 0, ptx, k;
	nvrtcProgram prog = NULL;
	nvrtcResult rc;
	TL_STATUS st = tl_rtc_load();

	*bin = NULL;
	if (st) {
		tl_set_error_locked("%s", tl_cu_why);
		return st;
	}
	if (!K->prelude[1][generic]) {
		tl_set_error_locked("kernel %s has no CUDA variant", K->name);
		return TL_UP(EUNSUPPORTED);
	}
	tl_rtc_target(arch, target, sizeof(target), &ptx);
	snprintf(archopt, sizeof(archopt), "--gpu-architecture=%s", target);
	opts[nopt++] = archopt;
	for (k = 0; k < (int)(sizeof(base) / sizeof(base[0])) && nopt < 8; k++)
		opts[nopt++] = base[k];
	src = malloc(plen + tlen + 1);
	if (!src)
		return TL_UP(ENOMEM);
	memcpy(src, K->prelude[1][generic], plen);
	memcpy(src + plen, tl_template_cuda, tlen);
	src[plen + tlen] = '\0';
	rc = tl_cu.CreateProgram(&prog, src, "tcx_kernel.cu", 0, NULL, NULL);
	if (rc == NVRTC_SUCCESS)
		rc = tl_cu.CompileProgram(prog, nopt, opts);
	free(src);
	if (rc != NVRTC_SUCCESS) {
		size_t head = (size_t)snprintf(tl_error, sizeof(tl_error),
					       "kernel %s does not compile for %s (NVRTC %d):\n",
					       K->name, target, (int)rc);

		if (prog && head < sizeof(tl_error) &&
		    tl_cu.GetProgramLogSize(prog, &n) == NVRTC_SUCCESS &&
		    n < sizeof(tl_error) - head)
			tl_cu.GetProgramLog(prog, tl_error + head);
		if (prog)
			tl_cu.DestroyProgram(&prog);
		return TL_UP(EBUILD);
	}
	if (!ptx && tl_cu.GetCUBINSize && tl_cu.GetCUBIN)
		rc = tl_cu.GetCUBINSize(prog, &n);
	else
		rc = tl_cu.GetPTXSize(prog, &n);
	if (rc == NVRTC_SUCCESS) {
		*bin = malloc(n ? n : 1);
		if (!*bin) {
			tl_cu.DestroyProgram(&prog);
			return TL_UP(ENOMEM);
		}
		rc = !ptx && tl_cu.GetCUBIN ? tl_cu.GetCUBIN(prog, *bin) : tl_cu.GetPTX(prog, *bin);
	}
	tl_cu.DestroyProgram(&prog);
	if (rc != NVRTC_SUCCESS) {
		free(*bin);
		*bin = NULL;
		tl_set_error_locked("cannot read the code NVRTC compiled for %s", K->name);
		return TL_UP(EBUILD);
	}
	*bin_len = n;
	return TL_UP(OK);
}

/* A device the library has seen, and a module it loaded. */
struct tl_cu_device {
	CUdevice dev;
	struct tl_ident ident;
	struct tl_cu_device *next;
};

struct tl_cu_module {
	CUcontext ctx;
	const struct tl_kernel *kernel;
	int generic;
	CUmodule mod;
	CUfunction contract, reduce;
	int dyn_set; /* dynamic shared memory opted in to */
	struct tl_cu_module *next;
};

static struct tl_cu_device *tl_cu_devices;
static struct tl_cu_module *tl_cu_modules;

/* The calling thread's context and its device's identity. */
static TL_STATUS tl_cu_current(CUcontext *ctx, struct tl_ident *ident)
{
	struct tl_cu_device *d;
	CUdevice dev;
	CUresult rc;
	TL_STATUS st;

	pthread_mutex_lock(&tl_lock);
	st = tl_cu_load();
	if (st) {
		tl_set_error_locked("%s", tl_cu_why);
		pthread_mutex_unlock(&tl_lock);
		return st;
	}
	rc = tl_cu.CtxGetCurrent(ctx);
	if (rc == CUDA_SUCCESS && !*ctx)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		rc = tl_cu.CtxGetDevice(&dev);
	if (rc != CUDA_SUCCESS) {
		tl_set_error_locked("no current CUDA context on this thread: %s", tl_cu_error(rc));
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(EINVAL);
	}
	for (d = tl_cu_devices; d; d = d->next)
		if (d->dev == dev)
			break;
	if (!d) {
		int ma = 0, mi = 0;

		d = calloc(1, sizeof(*d));
		if (!d) {
			pthread_mutex_unlock(&tl_lock);
			return TL_UP(ENOMEM);
		}
		d->dev = dev;
		tl_cu.DeviceGetName(d->ident.name, (int)sizeof(d->ident.name), dev);
		tl_squeeze(d->ident.name);
		snprintf(d->ident.vendor, sizeof(d->ident.vendor), "NVIDIA");
		tl_cu.DeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
		tl_cu.DeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
		snprintf(d->ident.arch, sizeof(d->ident.arch), "sm_%d%d", ma, mi);
		d->next = tl_cu_devices;
		tl_cu_devices = d;
	}
	*ident = d->ident;
	pthread_mutex_unlock(&tl_lock);
	return TL_UP(OK);
}

static TL_STATUS tl_cu_module_get(CUcontext ctx, const struct tl_ident *ident,
				  const struct tl_kernel *K, int generic, struct tl_cu_module **out)
{
	struct tl_cu_module *m;
	char *bin = NULL;
	size_t len = 0;
	CUresult rc;
	TL_STATUS st;

	pthread_mutex_lock(&tl_lock);
	for (m = tl_cu_modules; m; m = m->next)
		if (m->ctx == ctx && m->kernel == K && m->generic == generic) {
			*out = m;
			pthread_mutex_unlock(&tl_lock);
			return TL_UP(OK);
		}
	st = tl_rtc_compile(K, generic, ident->arch, &bin, &len);
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
	rc = tl_cu.ModuleLoadData(&m->mod, bin);
	free(bin);
	if (rc == CUDA_SUCCESS)
		rc = tl_cu.ModuleGetFunction(&m->contract, m->mod, "tcx_contract");
	if (rc == CUDA_SUCCESS)
		rc = tl_cu.ModuleGetFunction(&m->reduce, m->mod, "tcx_gsu_reduce");
	if (rc != CUDA_SUCCESS) {
		tl_set_error_locked("cannot load kernel %s: %s", K->name, tl_cu_error(rc));
		if (m->mod)
			tl_cu.ModuleUnload(m->mod);
		free(m);
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(EBUILD);
	}
	m->ctx = ctx;
	m->kernel = K;
	m->generic = generic;
	m->next = tl_cu_modules;
	tl_cu_modules = m;
	*out = m;
	pthread_mutex_unlock(&tl_lock);
	return TL_UP(OK);
}

static TL_STATUS tl_device(TL(queue) queue, struct tl_ident *ident)
{
	CUcontext ctx;

	(void)queue;
	return tl_cu_current(&ctx, ident);
}

static TL_STATUS tl_execute(TL(queue) queue, const struct tl_type *T, const struct tl_kernel *K,
			    const struct tl_problem *p, const double *alpha, const double *beta,
			    TL(mem) c, TL(mem) a, TL(mem) b)
{
	CUstream stream = (CUstream)queue;
	CUcontext ctx;
	struct tl_ident ident;
	struct tl_cu_module *m;
	struct tl_launch L;
	CUdeviceptr C = (CUdeviceptr)(uintptr_t)c, A = (CUdeviceptr)(uintptr_t)a;
	CUdeviceptr B = (CUdeviceptr)(uintptr_t)b, P, Q, W = 0;
	void *params[7];
	unsigned dyn;
	CUresult rc;
	TL_STATUS st = tl_cu_current(&ctx, &ident);

	if (!st)
		st = tl_cu_module_get(ctx, &ident, K, !p->packed, &m);
	if (st)
		return st;
	tl_launch_make(T, K, p, alpha, beta, &L);
	P = T->p_is_a ? A : B;
	Q = T->p_is_a ? B : A;
	dyn = K->lds_bytes > 0 ? (unsigned)K->lds_bytes : 0;
	if (dyn > 48 * 1024) {
		pthread_mutex_lock(&tl_lock);
		if ((int)dyn > m->dyn_set &&
		    tl_cu.FuncSetAttribute(m->contract,
					   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					   (int)dyn) == CUDA_SUCCESS)
			m->dyn_set = (int)dyn;
		pthread_mutex_unlock(&tl_lock);
	}
	if (L.ws_bytes) {
		rc = tl_cu.MemAllocAsync(&W, L.ws_bytes, stream);
		if (rc != CUDA_SUCCESS) {
			tl_set_error("cannot allocate the GlobalSplitU workspace: %s",
				     tl_cu_error(rc));
			return TL_UP(ENOMEM);
		}
	}
	params[0] = &C;
	params[1] = &P;
	params[2] = &Q;
	params[3] = W ? &W : &C;
	params[4] = &L.args;
	params[5] = &L.alpha;
	params[6] = &L.beta;
	rc = tl_cu.LaunchKernel(
	    m->contract, (unsigned)(L.global[0] / L.local[0]), (unsigned)(L.global[1] / L.local[1]),
	    (unsigned)(L.global[2] / L.local[2]), (unsigned)L.local[0], (unsigned)L.local[1],
	    (unsigned)L.local[2], dyn, stream, params, NULL);
	if (rc == CUDA_SUCCESS && W) {
		params[0] = &C;
		params[1] = &W;
		params[2] = &L.args;
		params[3] = &L.alpha;
		params[4] = &L.beta;
		params[5] = &L.total;
		rc = tl_cu.LaunchKernel(m->reduce, (unsigned)(L.rglobal[0] / 64),
					(unsigned)L.rglobal[1], 1, 64, 1, 1, 0, stream, params,
					NULL);
	}
	if (W)
		tl_cu.MemFreeAsync(W, stream);
	if (rc != CUDA_SUCCESS) {
		tl_set_error("cannot launch kernel %s: %s", K->name, tl_cu_error(rc));
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
		/* NVRTC alone: no device, no driver needed */
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
		CUcontext ctx;
		struct tl_ident ident;
		struct tl_cu_module *m;

		st = tl_cu_current(&ctx, &ident);
		for (t = 0; t < TL_NTYPES && !st; t++)
			for (k = 0; k < tl_types[t].nkernels && !st; k++)
				for (g = 0; g < 2 && !st; g++)
					st = tl_cu_module_get(ctx, &ident, &tl_types[t].kernels[k],
							      g, &m);
	}
	return st;
}

TL_UP(API) void TL(release)(void)
{
	pthread_mutex_lock(&tl_lock);
	while (tl_cu_modules) {
		struct tl_cu_module *m = tl_cu_modules;

		tl_cu_modules = m->next;
		tl_cu.ModuleUnload(m->mod);
		free(m);
	}
	while (tl_cu_devices) {
		struct tl_cu_device *d = tl_cu_devices;

		tl_cu_devices = d->next;
		free(d);
	}
	pthread_mutex_unlock(&tl_lock);
}

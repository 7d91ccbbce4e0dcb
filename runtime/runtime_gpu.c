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

/* The libraries, loaded once (tl_lock held), and why they did not load. */
static void *tl_gpu_lib, *tl_rtc_lib;
static int tl_gpu_tried, tl_rtc_tried;
static char tl_gpu_why[512];

/* Loads the runtime's or (rtc) the compiler's library and its entry
 * points, with tl_lock held. */
static TL_STATUS tl_gpu_need(int rtc)
{
	void **lib = rtc ? &tl_rtc_lib : &tl_gpu_lib;
	int *tried = rtc ? &tl_rtc_tried : &tl_gpu_tried;
	const char *which = NULL;
	tl_gpu_rc rc;

	if (*lib || *tried)
		return *lib ? TL_UP(OK) : TL_UP(EDEVICE);
	*tried = 1;
	*lib = tl_gpu_load(rtc, NULL, NULL, 0, "the library", "", tl_gpu_why, sizeof(tl_gpu_why),
			   &which);
	if (*lib && !rtc && (rc = tl_gpu.Init(0)) != TL_GPU_OK) {
		snprintf(tl_gpu_why, sizeof(tl_gpu_why), "%s failed: no usable %s GPU (%s)",
			 TL_GPU("cuInit", "hipInit"), TL_GPU_VENDOR, tl_gpu_error(rc));
		dlclose(*lib);
		*lib = NULL;
	}
	return *lib ? TL_UP(OK) : TL_UP(EDEVICE);
}

/* Compiles kernel K (layout `generic`) for arch with NVRTC or hiprtc, as
 * tcx compiles it, with tl_lock held; the cubin, PTX or code object in
 * *bin, the caller's to free. */
static TL_STATUS tl_rtc_compile(const struct tl_kernel *K, int generic, const char *arch,
				char **bin, size_t *bin_len)
{
	static const char *const base[] = TL_RTC_OPTIONS;
	const char *opts[8];
	char target[256], archopt[300], *src, *log = NULL;
	size_t plen = K->prelude_len[1][generic], tlen = sizeof(tl_template_cuda), head;
	int nopt = 0, ptx = 0, k;
	enum tl_rtc_step step;
	tl_rtc_rc rc;
	TL_STATUS st = tl_gpu_need(1);

	*bin = NULL;
	if (st) {
		tl_set_error_locked("%s", tl_gpu_why);
		return st;
	}
	if (!K->prelude[1][generic]) {
		tl_set_error_locked("kernel %s has no CUDA-dialect variant", K->name);
		return TL_UP(EUNSUPPORTED);
	}
#if TL_WITH_CUDA
	tl_rtc_target(arch, target, sizeof(target), &ptx); /* an old arch: NVRTC says why */
#else
	snprintf(target, sizeof(target), "%s", arch);
#endif
	snprintf(archopt, sizeof(archopt), TL_RTC_ARCH_OPTION, target);
	opts[nopt++] = archopt;
	for (k = 0; k < (int)(sizeof(base) / sizeof(base[0])) && nopt < 8; k++)
		opts[nopt++] = base[k];
	src = malloc(plen + tlen + 1);
	if (!src)
		return TL_UP(ENOMEM);
	memcpy(src, K->prelude[1][generic], plen);
	memcpy(src + plen, tl_template_cuda, tlen);
	src[plen + tlen] = '\0';
	step = tl_rtc_build(src, opts, nopt, ptx, bin, bin_len, &log, &rc);
	free(src);
	if (step == TL_RTC_CREATE || step == TL_RTC_COMPILE) {
		head = (size_t)snprintf(tl_error, sizeof(tl_error),
					"kernel %s does not compile for %s (%s %d):\n", K->name,
					target, TL_RTC_NAME, (int)rc);
		if (log && head < sizeof(tl_error) && strlen(log) + 1 < sizeof(tl_error) - head)
			strcpy(tl_error + head, log);
	} else if (step != TL_RTC_BUILT && step != TL_RTC_NOMEM) {
		tl_set_error_locked("cannot read the code %s compiled for %s", TL_RTC_NAME,
				    K->name);
	}
	free(log);
	return step == TL_RTC_BUILT  ? TL_UP(OK)
	       : step == TL_RTC_NOMEM ? TL_UP(ENOMEM)
				      : TL_UP(EBUILD);
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
	tl_gpu_arch(d->dev, d->ident.arch, sizeof(d->ident.arch), d->target, sizeof(d->target));
}

/* The calling thread's context (CUDA) or device (HIP) and its device. */
static TL_STATUS tl_gpu_current(tl_gpu_ctx *ctx, struct tl_gpu_device **out)
{
	struct tl_gpu_device *d;
	tl_gpu_dev dev;
	tl_gpu_rc rc;
	TL_STATUS st;

	pthread_mutex_lock(&tl_lock);
	st = tl_gpu_need(0);
	if (st) {
		tl_set_error_locked("%s", tl_gpu_why);
		pthread_mutex_unlock(&tl_lock);
		return st;
	}
	rc = tl_gpu.GetCurrent(ctx);
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

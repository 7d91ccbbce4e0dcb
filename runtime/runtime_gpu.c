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

/* A module loaded for a context, and its two kernels. */
struct tl_code {
	tl_gpu_module mod;
	tl_gpu_function contract, reduce;
	int dyn_set; /* dynamic shared memory opted in to (CUDA) */
};

/* Names device d as tcx's cuda and hip backends do (the driver's name as
 * it is): its name, vendor, architecture and compiler target. */
static void tl_describe(struct tl_device *d)
{
	tl_gpu_dev dev = (tl_gpu_dev)d->handle;

	tl_gpu.DeviceGetName(d->ident.name, (int)sizeof(d->ident.name), dev);
	snprintf(d->ident.vendor, sizeof(d->ident.vendor), "%s", TL_GPU_VENDOR);
	tl_gpu_arch(dev, d->ident.arch, sizeof(d->ident.arch), d->target, sizeof(d->target));
}

/* The calling thread's context (CUDA) or device (HIP) and its device. */
static TL_STATUS tl_current(TL(queue) queue, uintptr_t *context, struct tl_device **out)
{
	tl_gpu_ctx ctx;
	tl_gpu_dev dev;
	tl_gpu_rc rc;
	TL_STATUS st;

	(void)queue;
	pthread_mutex_lock(&tl_lock);
	st = tl_gpu_need(0);
	if (st) {
		tl_set_error_locked("%s", tl_gpu_why);
		pthread_mutex_unlock(&tl_lock);
		return st;
	}
	rc = tl_gpu.GetCurrent(&ctx);
#if TL_WITH_CUDA
	if (rc == CUDA_SUCCESS && !ctx)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		rc = tl_gpu.CtxGetDevice(&dev);
#else
	dev = ctx;
#endif
	if (rc != TL_GPU_OK) {
		tl_set_error_locked("no current %s on this thread: %s",
				    TL_GPU("CUDA context", "HIP device"), tl_gpu_error(rc));
		pthread_mutex_unlock(&tl_lock);
		return TL_UP(EINVAL);
	}
	*context = (uintptr_t)ctx;
	*out = tl_device_find((uintptr_t)dev);
	pthread_mutex_unlock(&tl_lock);
	return *out ? TL_UP(OK) : TL_UP(ENOMEM);
}

static TL_STATUS tl_code_build(uintptr_t ctx, const struct tl_device *d, const struct tl_kernel *K,
			       int generic, struct tl_code *out)
{
	char *bin = NULL;
	size_t len = 0;
	tl_gpu_rc rc;
	TL_STATUS st;

	(void)ctx;
	if (!d->target[0]) {
		tl_set_error_locked("cannot tell the architecture of %s", d->ident.name);
		return TL_UP(EDEVICE);
	}
	st = tl_rtc_compile(K, generic, d->target, &bin, &len);
	if (st)
		return st;
	rc = tl_gpu.ModuleLoadData(&out->mod, bin);
	free(bin);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.ModuleGetFunction(&out->contract, out->mod, TCX_CONTRACT_NAME);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.ModuleGetFunction(&out->reduce, out->mod, TCX_REDUCE_NAME);
	if (rc != TL_GPU_OK) {
		tl_set_error_locked("cannot load kernel %s: %s", K->name, tl_gpu_error(rc));
		if (out->mod)
			tl_gpu.ModuleUnload(out->mod);
		return TL_UP(EBUILD);
	}
	return TL_UP(OK);
}

static void tl_code_free(struct tl_code *c)
{
	tl_gpu.ModuleUnload(c->mod);
}

static TL_STATUS tl_compile_target(const char *target, const struct tl_kernel *K, int generic)
{
	char *bin = NULL;
	size_t len;
	TL_STATUS st;

	pthread_mutex_lock(&tl_lock);
	st = tl_rtc_compile(K, generic, target, &bin, &len);
	pthread_mutex_unlock(&tl_lock);
	free(bin);
	return st;
}

/* Copies C to the host (to_device 0) or back, and waits for the stream:
 * after the work queued before it, and done when it returns.  The call
 * found a current context (tl_current) before. */
static TL_STATUS tl_copy(TL(queue) queue, TL(mem) c, void *buf, size_t bytes, int to_device)
{
	tl_gpu_stream stream = (tl_gpu_stream)queue;
	tl_gpu_ptr C = (tl_gpu_ptr)(uintptr_t)c;
	tl_gpu_rc rc = to_device ? tl_gpu.MemcpyHtoDAsync(C, buf, bytes, stream)
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
static void tl_gpu_shared(struct tl_code *m, unsigned dyn)
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

static TL_STATUS tl_run(TL(queue) queue, uintptr_t ctx, struct tl_code *m,
			const struct tl_type *T, const struct tl_kernel *K,
			struct abi_launch *L, TL(mem) c, TL(mem) a, TL(mem) b)
{
	tl_gpu_stream stream = (tl_gpu_stream)queue;
	tl_gpu_ptr C = (tl_gpu_ptr)(uintptr_t)c, A = (tl_gpu_ptr)(uintptr_t)a;
	tl_gpu_ptr B = (tl_gpu_ptr)(uintptr_t)b, W = 0;
	tl_gpu_ptr P = T->p_is_a ? A : B, Q = T->p_is_a ? B : A;
	/* the warpgroup kernel's tensor maps and their use: none, so that
	 * its producer copies with cp.async */
	static const unsigned char no_map[TCX_TMAP_BYTES];
	static const struct tcx_tma no_tma = {0, {-1, -1, -1}, {-1, -1, -1}};
	/* the arguments in common/abi.h's order: tcx_contract's (the
	 * workspace C where there is none), and tcx_gsu_reduce's */
	void *params[TCX_PARAMS_WGMMA] = {&C, &P, &Q, &C, &L->args, &L->alpha, &L->beta,
					  (void *)no_map, (void *)no_map, (void *)&no_tma};
	void *rparams[TCX_REDUCE_PARAMS] = {&C, &W, &L->args, &L->alpha, &L->beta, &L->total};
	unsigned dyn;
	tl_gpu_rc rc;

	(void)ctx;
	dyn = K->lds_bytes > 0 ? (unsigned)K->lds_bytes : 0;
	tl_gpu_shared(m, dyn);
	if (L->ws_bytes) {
		rc = tl_gpu.MemAllocAsync(&W, L->ws_bytes, stream);
		if (rc != TL_GPU_OK) {
			tl_set_error("cannot allocate the GlobalSplitU workspace: %s",
				     tl_gpu_error(rc));
			return TL_UP(ENOMEM);
		}
		params[TCX_PARAM_W] = &W;
	}
	rc = tl_gpu.LaunchKernel(m->contract, (unsigned)(L->global[0] / L->local[0]),
				 (unsigned)(L->global[1] / L->local[1]),
				 (unsigned)(L->global[2] / L->local[2]), (unsigned)L->local[0],
				 (unsigned)L->local[1], (unsigned)L->local[2], dyn, stream, params,
				 NULL);
	if (rc == TL_GPU_OK && W)
		rc = tl_gpu.LaunchKernel(m->reduce, (unsigned)(L->rglobal[0] / L->rlocal[0]),
					 (unsigned)(L->rglobal[1] / L->rlocal[1]),
					 (unsigned)(L->rglobal[2] / L->rlocal[2]),
					 (unsigned)L->rlocal[0], (unsigned)L->rlocal[1],
					 (unsigned)L->rlocal[2], 0, stream, rparams, NULL);
	if (W)
		tl_gpu.MemFreeAsync(W, stream);
	if (rc != TL_GPU_OK) {
		tl_set_error("cannot launch kernel %s: %s", K->name, tl_gpu_error(rc));
		return TL_UP(ELAUNCH);
	}
	return TL_UP(OK);
}

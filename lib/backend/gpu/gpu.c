/* gpu.c - the part of the cuda and hip backends that is the same in both:
 * loading the libraries, compiling with NVRTC or hiprtc, programs and their
 * kernels, devices, memory and launches.  One source for both, written
 * against runtime/gpu.h's typedefs and TL_GPU(cuda, hip);
 * lib/backend/cuda/cuda.c and lib/backend/hip/hip.c each include it, then
 * define the hooks gpu.h declares.  What they may use of it: the entry
 * points (tl_gpu, tl_rtc), why a library is unusable (gpu_why, rtc_why),
 * the compiler's library (rtc_name), need_gpu, need_rtc, gpu_fail,
 * rtc_version, rtc_compile and gpu_ops. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu.h"

/* --- the libraries ---------------------------------------------------- */

static pthread_once_t gpu_once = PTHREAD_ONCE_INIT, rtc_once = PTHREAD_ONCE_INIT;
static char gpu_why[256], rtc_why[512]; /* why a library is unusable; "" when it is */
static char rtc_name[64];		/* the compiler's library, as loaded */

static void gpu_load(void)
{
	const char *which;

	tl_gpu_load(0, NULL, gpu_libraries.own, gpu_libraries.nown, "tcx",
		    gpu_libraries.gpu_too_old, gpu_why, sizeof(gpu_why), &which);
}

static void rtc_load(void)
{
	const char *which = NULL;
	void *h = tl_gpu_load(1, gpu_libraries.rtc_env, NULL, 0, "tcx", gpu_libraries.rtc_too_old,
			      rtc_why, sizeof(rtc_why), &which);

	if (!h)
		return;
	snprintf(rtc_name, sizeof(rtc_name), "%s", which);
	if (gpu_libraries.rtc_loaded)
		gpu_libraries.rtc_loaded(h);
}

/* Load the libraries once; TCX_ENODEV with the reason when unusable. */
static enum tcx_status need_gpu(struct tcx_error *err)
{
	pthread_once(&gpu_once, gpu_load);
	return gpu_why[0] ? tcx_fail(err, TCX_ENODEV, "%s", gpu_why) : TCX_OK;
}

static enum tcx_status need_rtc(struct tcx_error *err)
{
	pthread_once(&rtc_once, rtc_load);
	return rtc_why[0] ? tcx_fail(err, TCX_ENODEV, "%s", rtc_why) : TCX_OK;
}

/* As tcx_fail, with ": ERROR_NAME (code)" appended and err->native = rc. */
static enum tcx_status gpu_fail(struct tcx_error *err, enum tcx_status code, tl_gpu_rc rc,
				const char *fmt, ...) TCX_PRINTF(4, 5);
static enum tcx_status gpu_fail(struct tcx_error *err, enum tcx_status code, tl_gpu_rc rc,
				const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	backend_vfail(err, code, (int)rc, tl_gpu_error(rc), fmt, ap);
	va_end(ap);
	return code;
}

/* --- the compiler ------------------------------------------------------ */

/* The compiler's version; TCX_ENODEV without the compiler. */
static enum tcx_status rtc_version(int *major, int *minor, struct tcx_error *err)
{
	enum tcx_status st = need_rtc(err);

	*major = *minor = 0;
	if (st)
		return st;
	if (tl_rtc.Version(major, minor) != TL_RTC_OK)
		return tcx_fail(err, TCX_ENODEV, "%s does not report %s version", rtc_name,
				TL_GPU("its", "hiprtc's"));
	return TCX_OK;
}

/* Compiles src for `arch`, as cuda_compile_offline and hip_compile_offline
 * say, with runtime/gpu.h's options (those the libraries compile with)
 * and, on CUDA, line numbers for profilers; `who` names the target in
 * messages ("'cuda:0' (sm_90)"). */
static enum tcx_status rtc_compile(const char *src, size_t len, const char *arch,
				   const char *opts, const char *who, unsigned char **bin,
				   size_t *bin_len, char **log, struct tcx_error *err)
{
	static const char *const base[] = TL_RTC_OPTIONS;
	char target[256], archopt[320], head[320];
	const char *argv[40];
	char *text = NULL, *optcopy = NULL, *save = NULL, *tok, *code = NULL, *msgs = NULL;
	int argc = 0, ptx = 0;
	size_t n = 0;
	tl_rtc_rc rc;
	enum tl_rtc_step step;
	enum tcx_status st;

	if (bin)
		*bin = NULL;
	if (bin_len)
		*bin_len = 0;
	if (log)
		*log = NULL;
	st = need_rtc(err);
	if (!st)
		st = rtc_target(arch, target, sizeof(target), &ptx, err);
	if (st)
		return st;
	snprintf(archopt, sizeof(archopt), TL_RTC_ARCH_OPTION, target);
	argv[argc++] = archopt;
	for (size_t k = 0; k < ARRAY_SIZE(base); k++)
		argv[argc++] = base[k];
#if TL_WITH_CUDA
	argv[argc++] = "-lineinfo";
#endif
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
	/* the compiler reads a C string */
	text = strndup(src, len);
	if (!text) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out_free;
	}
	step = tl_rtc_build(text, argv, argc, ptx, &code, &n, &msgs, &rc);
	if (step == TL_RTC_CREATE) {
		st = tcx_fail(err,
			      rc == TL_GPU(NVRTC_ERROR_OUT_OF_MEMORY, HIPRTC_ERROR_OUT_OF_MEMORY)
				  ? TCX_ENOMEM
				  : TCX_EBUILD,
			      "cannot create %s program: %s", TL_GPU("an NVRTC", "a hiprtc"),
			      tl_rtc.GetErrorString(rc));
	} else if (step == TL_RTC_COMPILE) {
		backend_log_head(msgs, 1, head, sizeof(head));
		st = tcx_fail(err, TCX_EBUILD, "kernel does not compile for %s: %s", who, head);
		if (err)
			err->native = (int)rc;
	} else if (step == TL_RTC_NOMEM) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
	} else if (step == TL_RTC_OUTPUT) {
		st = tcx_fail(err, TCX_EBUILD, "cannot read %s's output for %s: %s", TL_RTC_NAME,
			      who, tl_rtc.GetErrorString(rc));
	}
	if (log) {
		*log = msgs;
		msgs = NULL;
	}
	if (!st && bin) {
		*bin = (unsigned char *)code;
		code = NULL;
	}
	if (!st && bin_len)
		*bin_len = n;
out_free:
	free(code);
	free(msgs);
	free(text);
	free(optcopy);
	return st;
}

/* --- devices ---------------------------------------------------------- */

/* A device attribute, 0 when the runtime does not say. */
static int gpu_attr(tl_gpu_dev d, tl_gpu_dev_attr a)
{
	int v = 0;

	return tl_gpu.DeviceGetAttribute(&v, a, d) == TL_GPU_OK ? v : 0;
}

/* The device_info of device `ordinal` (handle d); the compiler's target
 * for it (HIP's target id) into target. */
static void gpu_describe(tl_gpu_dev d, int ordinal, struct device_info *info, char *target,
			 size_t tsize)
{
	size_t mem = 0;

	memset(info, 0, sizeof(*info));
	snprintf(info->id, sizeof(info->id), "%s:%d", GPU_BACKEND, ordinal);
	snprintf(info->backend, sizeof(info->backend), "%s", GPU_BACKEND);
	/* HIP compiles the CUDA dialect of the template as it is */
	snprintf(info->lang, sizeof(info->lang), "cuda");
	snprintf(info->vendor, sizeof(info->vendor), "%s", TL_GPU_VENDOR);
	if (tl_gpu.DeviceGetName(info->name, (int)sizeof(info->name) - 1, d) != TL_GPU_OK)
		snprintf(info->name, sizeof(info->name), "%s device %d", TL_GPU_NAME, ordinal);
	info->type = DEV_GPU;
	info->cc_major = gpu_attr(d, GPU_ATTR(COMPUTE_CAPABILITY_MAJOR, ComputeCapabilityMajor));
	info->cc_minor = gpu_attr(d, GPU_ATTR(COMPUTE_CAPABILITY_MINOR, ComputeCapabilityMinor));
	tl_gpu_arch(d, info->arch, sizeof(info->arch), target, tsize);
	gpu_describe_own(d, ordinal, info, target, tsize);
	info->compute_units = gpu_attr(d, GPU_ATTR(MULTIPROCESSOR_COUNT, MultiprocessorCount));
	if (tl_gpu.DeviceTotalMem(&mem, d) == TL_GPU_OK)
		info->global_mem = mem > INT64_MAX ? INT64_MAX : (int64_t)mem;
	info->max_alloc = info->global_mem; /* no smaller per-buffer limit */
	/* CUDA: what a block may use once it opts in (kernels use dynamic
	 * shared memory and the launch raises the limit past the default) */
	info->local_mem = gpu_attr(d, GPU_ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
					       MaxSharedMemoryPerBlock));
	if (info->local_mem <= 0)
		info->local_mem =
		    gpu_attr(d, GPU_ATTR(MAX_SHARED_MEMORY_PER_BLOCK, MaxSharedMemoryPerBlock));
	info->local_mem_per_cu = gpu_attr(d, GPU_ATTR(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
						      MaxSharedMemoryPerMultiprocessor));
	info->cache_bytes = gpu_attr(d, GPU_ATTR(L2_CACHE_SIZE, L2CacheSize));
	info->max_wg_size = gpu_attr(d, GPU_ATTR(MAX_THREADS_PER_BLOCK, MaxThreadsPerBlock));
	info->max_wg_dim[0] = gpu_attr(d, GPU_ATTR(MAX_BLOCK_DIM_X, MaxBlockDimX));
	info->max_wg_dim[1] = gpu_attr(d, GPU_ATTR(MAX_BLOCK_DIM_Y, MaxBlockDimY));
	info->max_wg_dim[2] = gpu_attr(d, GPU_ATTR(MAX_BLOCK_DIM_Z, MaxBlockDimZ));
	info->max_groups[0] = gpu_attr(d, GPU_ATTR(MAX_GRID_DIM_X, MaxGridDimX));
	info->max_groups[1] = gpu_attr(d, GPU_ATTR(MAX_GRID_DIM_Y, MaxGridDimY));
	info->max_groups[2] = gpu_attr(d, GPU_ATTR(MAX_GRID_DIM_Z, MaxGridDimZ));
	info->max_regs_per_wg = gpu_attr(d, GPU_ATTR(MAX_REGISTERS_PER_BLOCK, MaxRegistersPerBlock));
	info->clock_mhz = gpu_attr(d, GPU_ATTR(CLOCK_RATE, ClockRate)) / 1000; /* kHz */
	info->simd_width = gpu_attr(d, GPU_ATTR(WARP_SIZE, WarpSize));
	if (info->simd_width <= 0)
		info->simd_width = TL_GPU(32, 64);
	info->pref_vector_float = 4; /* 16-byte loads */
	info->fp64 = true;
	info->fp16 = TL_GPU(info->cc_major * 10 + info->cc_minor >= 53, true);
	info->timer_events = true;
}

static enum tcx_status gpu_probe(struct device_info *out, int max, int *count,
				 struct tcx_error *err)
{
	char target[256];
	enum tcx_status st;
	int n;

	*count = 0;
	st = gpu_start(&n, err);
	if (st)
		return st;
	for (int k = 0; k < n && k < max; k++) {
		tl_gpu_dev d;

		st = gpu_device_get(k, &d, err);
		if (st)
			return st;
		gpu_describe(d, k, &out[*count], target, sizeof(target));
		(*count)++;
	}
	return TCX_OK;
}

/* Makes ctx current on the calling thread. */
static enum tcx_status use_ctx(const struct device *dev, struct tcx_error *err)
{
	tl_gpu_rc rc = tl_gpu.SetCurrent(dev->ctx);

	if (rc != TL_GPU_OK)
		return gpu_fail(err, TCX_EDEVICE, rc,
				TL_GPU("cannot use the CUDA context of '%s'", "cannot use '%s'"),
				dev->info.id);
	return TCX_OK;
}

static enum tcx_status gpu_open(int index, struct device **out, struct tcx_error *err)
{
	struct device *d;
	enum tcx_status st;
	tl_gpu_rc rc;
	int n;

	*out = NULL;
	st = gpu_start(&n, err);
	if (st)
		return st;
	if (index < 0 || index >= n)
		return tcx_fail(err, TCX_ENODEV, "no %s device %d (there are %d)", TL_GPU_NAME, index,
				n);
	d = calloc(1, sizeof(*d));
	if (!d)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	d->base.ops = backend_find(GPU_BACKEND);
	st = gpu_device_get(index, &d->handle, err);
	if (st)
		goto out_free_dev;
	gpu_describe(d->handle, index, &d->info, d->target, sizeof(d->target));
	d->base.info = &d->info;
	d->smem_default =
	    gpu_attr(d->handle, GPU_ATTR(MAX_SHARED_MEMORY_PER_BLOCK, MaxSharedMemoryPerBlock));
	st = gpu_retain(d, err);
	if (st)
		goto out_free_dev;
	st = use_ctx(d, err);
	if (st)
		goto out_release;
	rc = tl_gpu.StreamCreate(&d->stream, TL_GPU(CU_STREAM_NON_BLOCKING, hipStreamNonBlocking));
	if (rc != TL_GPU_OK) {
		st = gpu_fail(err, TCX_EDEVICE, rc, "cannot create a %s stream on '%s'", TL_GPU_NAME,
			      d->info.id);
		goto out_release;
	}
	*out = d;
	return TCX_OK;

out_release:
	gpu_release(d);
out_free_dev:
	free(d);
	return st;
}

static void gpu_close(struct device *dev)
{
	if (dev->stream && tl_gpu.SetCurrent(dev->ctx) == TL_GPU_OK) {
		tl_gpu.StreamSynchronize(dev->stream);
		tl_gpu.StreamDestroy(dev->stream);
	}
	gpu_release(dev);
	free(dev);
}

/* --- programs --------------------------------------------------------- */

static void gpu_program_free(struct program *p)
{
	if (!p)
		return;
	if (p->mod && tl_gpu.SetCurrent(p->head.dev->ctx) == TL_GPU_OK)
		tl_gpu.ModuleUnload(p->mod);
	free(p->bin);
	program_head_free(&p->head, NULL);
}

/* Loads p->bin as p's module; `code` is the status of a refusal. */
static enum tcx_status load_module(struct program *p, enum tcx_status code, struct tcx_error *err)
{
	enum tcx_status st = use_ctx(p->head.dev, err);
	tl_gpu_rc rc;

	if (st)
		return st;
	rc = tl_gpu.ModuleLoadData(&p->mod, p->bin);
	if (rc != TL_GPU_OK) {
		p->mod = NULL;
		return gpu_fail(err, code, rc, "the %s cannot load a kernel for '%s' (%s)",
				TL_GPU("CUDA driver", "HIP runtime"), p->head.dev->info.id,
				TL_GPU(p->head.dev->info.driver, p->head.dev->target));
	}
	return TCX_OK;
}

static enum tcx_status gpu_build(struct device *dev, const char *src, size_t len, const char *opts,
				 struct program **out, struct tcx_error *err)
{
	const char *arch = dev->target[0] ? dev->target : dev->info.arch;
	struct program *p;
	char who[320];
	enum tcx_status st;

	*out = NULL;
	p = program_head_new(sizeof(*p), dev);
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	snprintf(who, sizeof(who), "'%s' (%s)", dev->info.id, arch);
	st = rtc_compile(src, len, arch, opts, who, &p->bin, &p->bin_len, &p->head.log, err);
	if (!p->head.log)
		p->head.log = strdup("");
	if (!st)
		st = load_module(p, TCX_EBUILD, err);
	if (st && st != TCX_EBUILD) {
		gpu_program_free(p);
		return st;
	}
	*out = p;
	return st;
}

static enum tcx_status gpu_binary(const struct program *prog, unsigned char **bin, size_t *len,
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

static enum tcx_status gpu_build_binary(struct device *dev, const unsigned char *bin, size_t len,
					struct program **out, struct tcx_error *err)
{
	struct program *p;
	enum tcx_status st;

	*out = NULL;
	p = program_head_new(sizeof(*p), dev);
	if (!p || !(p->head.log = strdup("")) || !(p->bin = malloc(len + 1))) {
		gpu_program_free(p);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	memcpy(p->bin, bin, len);
	p->bin[len] = '\0'; /* PTX is read as a C string */
	p->bin_len = len;
	st = load_module(p, TCX_ECORRUPT, err);
	if (st) {
		gpu_program_free(p);
		return st;
	}
	*out = p;
	return TCX_OK;
}

/* Looks up a program's function k->head.name (program_kernel's init). */
static enum tcx_status kernel_init(struct program_head *ph, struct kernel_head *kh,
				   struct tcx_error *err)
{
	struct program *p = (struct program *)ph;
	struct kernel_entry *k = (struct kernel_entry *)kh;
	const char *name = kh->name;
	enum tcx_status st;
	tl_gpu_rc rc;

	if (!p->mod)
		return tcx_fail(err, TCX_EINVAL, "kernel '%s' of a program that did not build",
				name);
	st = use_ctx(ph->dev, err);
	if (st)
		return st;
	rc = tl_gpu.ModuleGetFunction(&k->fn, p->mod, name);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.FuncGetAttribute(&k->max_threads, GPU_FUNC_ATTR(MAX_THREADS_PER_BLOCK),
					  k->fn);
	if (rc == TL_GPU_OK)
		rc = tl_gpu.FuncGetAttribute(&k->static_smem, GPU_FUNC_ATTR(SHARED_SIZE_BYTES), k->fn);
	if (rc != TL_GPU_OK) {
		if (rc == TL_GPU(CUDA_ERROR_NOT_FOUND, hipErrorNotFound))
			return gpu_fail(err, TCX_ELAUNCH, rc, "no kernel '%s' in the program", name);
		return gpu_fail(err, TCX_ELAUNCH, rc, "cannot look up kernel '%s'", name);
	}
	k->nparams = -1;
	if (tl_gpu.FuncGetParamInfo) {
		size_t off, size;
		int n = 0;

		while (n < LAUNCH_MAX_ARGS &&
		       tl_gpu.FuncGetParamInfo(k->fn, (size_t)n, &off, &size) == TL_GPU_OK)
			k->psize[n++] = size;
		if (n > 0 || tl_gpu.FuncGetParamInfo(k->fn, 0, &off, &size) ==
				 TL_GPU(CUDA_ERROR_INVALID_VALUE, hipErrorInvalidValue))
			k->nparams = n;
	}
	return TCX_OK;
}

/* --- memory ----------------------------------------------------------- */

static enum tcx_status gpu_alloc(struct device *dev, size_t bytes, struct buffer **out,
				 struct tcx_error *err)
{
	struct buffer *b;
	enum tcx_status st;
	tl_gpu_rc rc;

	*out = NULL;
	st = use_ctx(dev, err);
	if (st)
		return st;
	b = calloc(1, sizeof(*b));
	if (!b)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	rc = tl_gpu.MemAlloc(&b->ptr, bytes);
	if (rc != TL_GPU_OK) {
		free(b);
		return gpu_fail(err, TCX_EDEVICE, rc,
				"cannot allocate %zu bytes on '%s' (memory %lld bytes)", bytes,
				dev->info.id, (long long)dev->info.global_mem);
	}
	b->size = bytes;
	b->ctx = dev->ctx;
	*out = b;
	return TCX_OK;
}

static void gpu_free(struct buffer *buf)
{
	if (buf->ptr && !buf->borrowed && tl_gpu.SetCurrent(buf->ctx) == TL_GPU_OK)
		tl_gpu.MemFree(buf->ptr);
	free(buf);
}

/* Waits for the stream; an error there is an earlier kernel's. */
static enum tcx_status sync_stream(struct device *dev, const char *what, struct tcx_error *err)
{
	tl_gpu_rc rc = tl_gpu.StreamSynchronize(dev->stream);

	if (rc != TL_GPU_OK)
		return gpu_fail(err, TCX_EDEVICE, rc, "%s on '%s' failed", what, dev->info.id);
	return TCX_OK;
}

/* Copies bytes between host memory and buffer buf at off, and waits. */
static enum tcx_status gpu_copy(struct device *dev, struct buffer *buf, size_t off, void *host,
				size_t bytes, bool to_dev, struct tcx_error *err)
{
	enum tcx_status st = use_ctx(dev, err);
	tl_gpu_rc rc;

	if (st)
		return st;
	rc = to_dev ? tl_gpu.MemcpyHtoDAsync(GPU_AT(buf->ptr, off), host, bytes, dev->stream)
		    : tl_gpu.MemcpyDtoHAsync(host, GPU_AT(buf->ptr, off), bytes, dev->stream);
	if (rc != TL_GPU_OK)
		return gpu_fail(err, TCX_EDEVICE, rc, "cannot %s %zu bytes %s '%s'",
				to_dev ? "write" : "read", bytes,
				to_dev ? "to" : "from", dev->info.id);
	return sync_stream(dev, to_dev ? "a write" : "a read", err);
}

/* --- launches --------------------------------------------------------- */

/* Waits for a kernel's end event and reads its duration. */
static enum tcx_status event_time(struct device *dev, const char *kernel, tl_gpu_event start,
				  tl_gpu_event end, double *ms, struct tcx_error *err)
{
	float t = 0;
	tl_gpu_rc rc = tl_gpu.EventSynchronize(end);

	if (rc != TL_GPU_OK)
		return gpu_fail(err, TCX_ELAUNCH, rc, "kernel '%s' failed on '%s'", kernel,
				dev->info.id);
	rc = tl_gpu.EventElapsedTime(&t, start, end);
	if (rc != TL_GPU_OK)
		return gpu_fail(err, TCX_EDEVICE, rc, "cannot time kernel '%s' on '%s'", kernel,
				dev->info.id);
	*ms = t;
	return TCX_OK;
}

/* Checks a launch (launch_check), builds its parameter array and opts the
 * kernel in to the shared memory it asks beyond the default.  Call with
 * prog->head.lock held and the context current. */
static enum tcx_status launch_prepare(struct device *dev, struct kernel_entry *k,
				      const struct launch *l, void **params, size_t *dyn,
				      struct tcx_error *err)
{
	struct kernel_facts f = {
	    k->head.name, k->max_threads, k->static_smem, k->nparams, k->nparams >= 0 ? k->psize : NULL,
	    sizeof(tl_gpu_ptr),
	};
	enum tcx_status st = launch_check(&dev->info, &f, l, dyn, err);
	int np = 0;
	tl_gpu_rc rc;

	if (st)
		return st;
	for (int a = 0; a < l->nargs; a++)
		if (l->args[a].kind == KARG_BUFFER)
			params[np++] = (void *)&l->args[a].buf->ptr;
		else if (l->args[a].kind == KARG_BYTES)
			params[np++] = (void *)l->args[a].ptr;
#if TCX_GPU_HIP
	/* HIP counts a dimension's threads in 32 bits */
	for (int d = 0; d < 3; d++)
		if (l->global[d] > UINT32_MAX)
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': %zu threads in dimension %d exceed HIP's "
					"limit of %lu",
					k->head.name, l->global[d], d, (unsigned long)UINT32_MAX);
#endif
	/* beyond the default 48 KiB a CUDA kernel must opt in to the shared memory */
	if (tl_gpu.FuncSetAttribute && (int64_t)(*dyn + (size_t)k->static_smem) > dev->smem_default &&
	    (int)*dyn > k->dyn_smem_set) {
		rc = tl_gpu.FuncSetAttribute(k->fn, GPU_FUNC_ATTR(MAX_DYNAMIC_SHARED_SIZE_BYTES),
					  (int)*dyn);
		if (rc != TL_GPU_OK)
			return gpu_fail(err, TCX_ELIMIT, rc,
					"kernel '%s': cannot use %zu bytes of dynamic shared memory",
					l->kernel, *dyn);
		k->dyn_smem_set = (int)*dyn;
	}
	return TCX_OK;
}

static enum tcx_status gpu_launch(struct device *dev, struct program *prog, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	struct kernel_entry *k = NULL;
	void *params[LAUNCH_MAX_ARGS];
	size_t dyn = 0;
	tl_gpu_event ev[2] = {NULL, NULL};
	/* the caller's stream (device_use_queue), else the device's */
	tl_gpu_stream stream = device_queue(dev) ? (tl_gpu_stream)device_queue(dev) : dev->stream;
	enum tcx_status st;
	tl_gpu_rc rc;

	st = use_ctx(dev, err);
	if (st)
		return st;
	pthread_mutex_lock(&prog->head.lock);
	st = program_kernel(&prog->head, l->kernel, sizeof(*k), kernel_init,
			    (struct kernel_head **)&k, err);
	if (!st)
		st = launch_prepare(dev, k, l, params, &dyn, err);
	pthread_mutex_unlock(&prog->head.lock);
	if (st)
		return st;
	if (event_ms) {
		rc = tl_gpu.EventCreate(&ev[0], TL_GPU(CU_EVENT_DEFAULT, hipEventDefault));
		if (rc == TL_GPU_OK)
			rc = tl_gpu.EventCreate(&ev[1], TL_GPU(CU_EVENT_DEFAULT, hipEventDefault));
		if (rc == TL_GPU_OK)
			rc = tl_gpu.EventRecord(ev[0], stream);
		if (rc != TL_GPU_OK) {
			st = gpu_fail(err, TCX_EDEVICE, rc, "cannot create timing events on '%s'",
				      dev->info.id);
			goto out_events;
		}
	}
	rc = tl_gpu.LaunchKernel(k->fn, (unsigned)(l->global[0] / l->local[0]),
			      (unsigned)(l->global[1] / l->local[1]),
			      (unsigned)(l->global[2] / l->local[2]), (unsigned)l->local[0],
			      (unsigned)l->local[1], (unsigned)l->local[2], (unsigned)dyn, stream,
			      params, NULL);
	if (rc != TL_GPU_OK) {
		st = gpu_fail(err,
			      rc == TL_GPU(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
					    hipErrorLaunchOutOfResources)
				  ? TCX_ELIMIT
				  : TCX_ELAUNCH,
			      rc, "cannot launch kernel '%s' on '%s'", l->kernel, dev->info.id);
		goto out_events;
	}
	if (event_ms) {
		rc = tl_gpu.EventRecord(ev[1], stream);
		if (rc != TL_GPU_OK)
			st = gpu_fail(err, TCX_EDEVICE, rc, "cannot time kernel '%s' on '%s'",
				      l->kernel, dev->info.id);
		else
			st = event_time(dev, l->kernel, ev[0], ev[1], event_ms, err);
	}
out_events:
	for (int e = 0; e < 2; e++)
		if (ev[e])
			tl_gpu.EventDestroy(ev[e]);
	return st;
}

static enum tcx_status gpu_finish(struct device *dev, struct tcx_error *err)
{
	enum tcx_status st = use_ctx(dev, err);
	tl_gpu_rc rc;

	if (st)
		return st;
	rc = tl_gpu.StreamSynchronize(dev->stream);
	if (rc != TL_GPU_OK)
		return gpu_fail(err, TCX_ELAUNCH, rc, "the work queued on '%s' failed",
				dev->info.id);
	return TCX_OK;
}

/* --- the device API's hooks ------------------------------------------ */

/* A device pointer of the caller's: nothing is asked of the driver, so
 * that an execute stays capture-safe; the caller vouches for its size. */
static enum tcx_status gpu_wrap(struct device *dev, void *native, size_t bytes,
				struct buffer **out, struct tcx_error *err)
{
	if (*out && !(*out)->borrowed)
		return tcx_fail(err, TCX_EINVAL, "a buffer of '%s' that wraps nothing",
				dev->info.id);
	if (!*out) {
		*out = calloc(1, sizeof(**out));
		if (!*out)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		(*out)->borrowed = true;
		(*out)->ctx = dev->ctx;
	}
	(*out)->ptr = (tl_gpu_ptr)(uintptr_t)native;
	(*out)->size = bytes;
	return TCX_OK;
}

static void *gpu_native(struct device *dev, int what)
{
	/* HIP's context is its device's ordinal, as the device is */
	return what == NATIVE_CONTEXT  ? TL_GPU((void *)dev->ctx, (void *)(intptr_t)dev->ctx)
	       : what == NATIVE_DEVICE ? (void *)(intptr_t)dev->handle
	       : what == NATIVE_QUEUE  ? (void *)dev->stream
				       : NULL;
}

/* The ops both backends have; the backend adds its own. */
static void gpu_ops(struct tcx_backend_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->name = GPU_BACKEND;
	ops->probe = gpu_probe;
	ops->open = gpu_open;
	ops->close = gpu_close;
	ops->build = gpu_build;
	ops->program_free = gpu_program_free;
	ops->binary = gpu_binary;
	ops->build_binary = gpu_build_binary;
	ops->alloc = gpu_alloc;
	ops->free = gpu_free;
	ops->copy = gpu_copy;
	ops->launch = gpu_launch;
	ops->finish = gpu_finish;
	ops->wrap = gpu_wrap;
	ops->kernel_size = sizeof(struct kernel_entry);
	ops->kernel_init = kernel_init;
	ops->native = gpu_native;
}

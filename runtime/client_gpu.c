/* client_gpu.c - the client's device on CUDA (TL_WITH_CUDA) or HIP
 * (TL_WITH_HIP), one source for both (gpu.h): CUDA makes the device's
 * primary context current, HIP sets the device; buffers and copies through
 * the runtime, loaded with dlopen like the library does.  A template: tcx
 * export-lib copies it unchanged; client.c includes it. */
struct dev {
	void *lib;
	tl_gpu_dev dev;
	tl_gpu_ctx ctx;
};

static int dev_open(const char *spec, struct dev *d)
{
	static const char *const names[] = TL_GPU_LIBS;
	const char *which = NULL, *missing;
	int ordinal = 0;
	tl_gpu_rc rc;

	memset(d, 0, sizeof(*d));
	if (spec && sscanf(spec, "%d", &ordinal) != 1) {
		fprintf(stderr, "client: bad --device '%s': expected a %s device number\n", spec,
			TL_GPU_NAME);
		return 2;
	}
	d->lib = tl_gpu_open(names, &which);
	if (!d->lib) {
		fprintf(stderr, "client: no %s device: %s not found (%s)\n", TL_GPU_NAME, names[0],
			TL_GPU("no NVIDIA driver", "no HIP runtime"));
		return 4;
	}
	missing = tl_gpu_bind(d->lib, tl_gpu_syms, sizeof(tl_gpu_syms) / sizeof(tl_gpu_syms[0]));
	if (missing) {
		fprintf(stderr, "client: %s lacks %s, which this client uses\n", which, missing);
		dlclose(d->lib);
		return 3;
	}
	rc = tl_gpu.Init(0);
	if (rc != TL_GPU_OK) {
		fprintf(stderr, "client: no %s device: %s failed, no usable %s GPU (error %d)\n",
			TL_GPU_NAME, TL_GPU("cuInit", "hipInit"), TL_GPU_VENDOR, (int)rc);
		dlclose(d->lib);
		return 4;
	}
	rc = tl_gpu.DeviceGet(&d->dev, ordinal);
	if (rc != TL_GPU_OK) {
		fprintf(stderr, "client: no %s device %d (error %d)\n", TL_GPU_NAME, ordinal,
			(int)rc);
		dlclose(d->lib);
		return 4;
	}
	/* the device made the calling thread's: on CUDA its primary context */
#if TL_WITH_CUDA
	rc = tl_gpu.PrimaryCtxRetain(&d->ctx, d->dev);
#else
	d->ctx = d->dev;
#endif
	if (rc == TL_GPU_OK)
		rc = tl_gpu.SetCurrent(d->ctx);
	if (rc != TL_GPU_OK) {
		fprintf(stderr, "client: cannot use %s device %d (%d)\n", TL_GPU_NAME, ordinal,
			(int)rc);
		dlclose(d->lib);
		return 3;
	}
	return 0;
}

static void dev_close(struct dev *d)
{
#if TL_WITH_CUDA
	tl_gpu.PrimaryCtxRelease(d->dev);
#endif
	dlclose(d->lib);
}

static TL(queue) queue_of(struct dev *d)
{
	(void)d;
	return NULL; /* the default stream (of the current context, CUDA) */
}

static int dev_upload(struct dev *d, const void *host, size_t bytes, TL(mem) * out)
{
	tl_gpu_ptr p = 0;
	tl_gpu_rc rc = tl_gpu.MemAlloc(&p, bytes);

	(void)d;
	if (rc == TL_GPU_OK)
		rc = tl_gpu.MemcpyHtoD(p, (void *)host, bytes); /* HIP: not const */
	if (rc != TL_GPU_OK) {
		fprintf(stderr, "client: cannot allocate or write %zu bytes (%d)\n", bytes,
			(int)rc);
		if (p)
			tl_gpu.MemFree(p);
		return 3;
	}
	*out = (TL(mem))(uintptr_t)p;
	return 0;
}

static int dev_download(struct dev *d, TL(mem) m, void *host, size_t bytes)
{
	(void)d;
	if (tl_gpu.MemcpyDtoH(host, (tl_gpu_ptr)(uintptr_t)m, bytes) != TL_GPU_OK) {
		fprintf(stderr, "client: cannot read the result\n");
		return 3;
	}
	return 0;
}

static int dev_finish(struct dev *d)
{
	(void)d;
	return tl_gpu.Synchronize() == TL_GPU_OK ? 0 : 3;
}

static void dev_free(TL(mem) m)
{
	if (m)
		tl_gpu.MemFree((tl_gpu_ptr)(uintptr_t)m);
}

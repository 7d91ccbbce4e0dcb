/* client_cuda.c - the client's device on CUDA (TL_WITH_CUDA): the device's
 * primary context made current, buffers and copies through the driver API,
 * loaded with dlopen like the library does.  A template: tcx export-lib
 * copies it unchanged; client.c includes it. */
struct dev {
	void *lib;
	CUdevice dev;
	CUcontext ctx;
	char name[256];
};

static struct {
	CUresult (*Init)(unsigned int);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*PrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
} cu;

static int cu_sym(void *lib, const char *name, void *fn)
{
	void *p = dlsym(lib, name);

	if (!p)
		return 0;
	memcpy(fn, &p, sizeof(p));
	return 1;
}

static int dev_open(const char *spec, struct dev *d)
{
	int ordinal = 0;
	CUresult rc;

	memset(d, 0, sizeof(*d));
	if (spec && sscanf(spec, "%d", &ordinal) != 1) {
		fprintf(stderr, "client: bad --device '%s': expected a CUDA device number\n", spec);
		return 2;
	}
	d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		fprintf(stderr,
			"client: no CUDA device: libcuda.so.1 not found (no NVIDIA driver)\n");
		return 4;
	}
	if (!cu_sym(d->lib, "cuInit", &cu.Init) || !cu_sym(d->lib, "cuDeviceGet", &cu.DeviceGet) ||
	    !cu_sym(d->lib, "cuDeviceGetName", &cu.DeviceGetName) ||
	    !cu_sym(d->lib, "cuDevicePrimaryCtxRetain", &cu.PrimaryCtxRetain) ||
	    !cu_sym(d->lib, "cuDevicePrimaryCtxRelease_v2", &cu.PrimaryCtxRelease) ||
	    !cu_sym(d->lib, "cuCtxSetCurrent", &cu.CtxSetCurrent) ||
	    !cu_sym(d->lib, "cuCtxSynchronize", &cu.CtxSynchronize) ||
	    !cu_sym(d->lib, "cuMemAlloc_v2", &cu.MemAlloc) ||
	    !cu_sym(d->lib, "cuMemFree_v2", &cu.MemFree) ||
	    !cu_sym(d->lib, "cuMemcpyHtoD_v2", &cu.MemcpyHtoD) ||
	    !cu_sym(d->lib, "cuMemcpyDtoH_v2", &cu.MemcpyDtoH)) {
		fprintf(stderr, "client: libcuda.so.1 lacks the driver API this client uses\n");
		dlclose(d->lib);
		return 3;
	}
	rc = cu.Init(0);
	if (rc == CUDA_SUCCESS)
		rc = cu.DeviceGet(&d->dev, ordinal);
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "client: no CUDA device %d (%d)\n", ordinal, (int)rc);
		dlclose(d->lib);
		return 4;
	}
	cu.DeviceGetName(d->name, (int)sizeof(d->name), d->dev);
	rc = cu.PrimaryCtxRetain(&d->ctx, d->dev);
	if (rc == CUDA_SUCCESS)
		rc = cu.CtxSetCurrent(d->ctx);
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "client: cannot use CUDA device %d (%d)\n", ordinal, (int)rc);
		dlclose(d->lib);
		return 3;
	}
	return 0;
}

static void dev_close(struct dev *d)
{
	cu.PrimaryCtxRelease(d->dev);
	dlclose(d->lib);
}

static TL(queue) dev_queue(struct dev *d)
{
	(void)d;
	return NULL; /* the default stream of the current context */
}

static int dev_upload(struct dev *d, const void *host, size_t bytes, TL(mem) * out)
{
	CUdeviceptr p = 0;
	CUresult rc = cu.MemAlloc(&p, bytes);

	(void)d;
	if (rc == CUDA_SUCCESS)
		rc = cu.MemcpyHtoD(p, host, bytes);
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "client: cannot allocate or write %zu bytes (%d)\n", bytes,
			(int)rc);
		if (p)
			cu.MemFree(p);
		return 3;
	}
	*out = (TL(mem))(uintptr_t)p;
	return 0;
}

static int dev_download(struct dev *d, TL(mem) m, void *host, size_t bytes)
{
	(void)d;
	if (cu.MemcpyDtoH(host, (CUdeviceptr)(uintptr_t)m, bytes) != CUDA_SUCCESS) {
		fprintf(stderr, "client: cannot read the result\n");
		return 3;
	}
	return 0;
}

static int dev_finish(struct dev *d)
{
	(void)d;
	return cu.CtxSynchronize() == CUDA_SUCCESS ? 0 : 3;
}

static void dev_free(TL(mem) m)
{
	if (m)
		cu.MemFree((CUdeviceptr)(uintptr_t)m);
}

/* cuda.c - the "cuda" backend: NVIDIA GPUs through the CUDA driver API,
 * with kernels compiled by NVRTC for the device's own architecture.  Both
 * libraries are loaded with dlopen on first use, so one tcx binary runs
 * with or without CUDA; when they are absent, probe says why and `tcx
 * devices` shows it.  Most of the backend is lib/backend/gpu/gpu.c, which
 * it shares with the hip backend and includes first; here is what is
 * CUDA's own: what it says without its libraries, the driver's devices and
 * their primary contexts, NVRTC's target (runtime/gpu.h's rule) and the
 * copy engine's tensor maps. */
#define TCX_GPU_CUDA 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu.c"
#include "backend/cuda/cuda.h"

/* --- the libraries ---------------------------------------------------- */

/* The driver API's entry point only this backend uses (12.0, optional):
 * tensor maps for the copy engine. */
static CUresult (*cu_tensor_map_encode)(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank,
					void *addr, const cuuint64_t *dim, const cuuint64_t *stride,
					const cuuint32_t *box, const cuuint32_t *estride,
					CUtensorMapInterleave il, CUtensorMapSwizzle sw,
					CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill);

static const struct tl_gpu_sym cu_syms[] = {
    {"cuTensorMapEncodeTiled", &cu_tensor_map_encode, 0},
};

static const struct gpu_libraries gpu_libraries = {
    .gpu_too_old = " (an NVIDIA driver too old for tcx)",
    .own = cu_syms,
    .nown = ARRAY_SIZE(cu_syms),
    .rtc_env = "TCX_NVRTC_LIBRARY",
    .rtc_too_old = " (NVRTC too old for tcx)",
};

/* --- NVRTC ------------------------------------------------------------- */

/* runtime/gpu.h's choice, the one the exported libraries make */
static enum tcx_status rtc_target(const char *arch, char *target, size_t size, int *ptx,
				  struct tcx_error *err)
{
	if (tl_rtc_target(arch, target, size, ptx) < 0)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"%s cannot compile for %s (too old an architecture)", rtc_name, arch);
	return TCX_OK;
}

enum tcx_status cuda_nvrtc_version(int *major, int *minor, struct tcx_error *err)
{
	return rtc_version(major, minor, err);
}

enum tcx_status cuda_compile_offline(const char *src, size_t len, const char *arch,
				     const char *opts, unsigned char **bin, size_t *bin_len,
				     char **log, struct tcx_error *err)
{
	return rtc_compile(src, len, arch, opts, arch, bin, bin_len, log, err);
}

/* --- devices ---------------------------------------------------------- */

static enum tcx_status gpu_start(int *count, struct tcx_error *err)
{
	enum tcx_status st = need_gpu(err);
	CUresult rc;

	*count = 0;
	if (st)
		return st;
	rc = tl_gpu.Init(0);
	if (rc == 34 /* CUDA_ERROR_STUB_LIBRARY, CUDA 11.1 */)
		return gpu_fail(err, TCX_ENODEV, rc,
				"the libcuda found is the CUDA toolkit's stub, not a driver (is "
				"lib64/stubs on LD_LIBRARY_PATH?)");
	if (rc == CUDA_ERROR_NO_DEVICE)
		return gpu_fail(err, TCX_ENODEV, rc, "the NVIDIA driver sees no CUDA device");
	if (rc != CUDA_SUCCESS)
		return gpu_fail(err, TCX_ENODEV, rc, "cannot initialize the CUDA driver");
	rc = tl_gpu.DeviceGetCount(count);
	if (rc != CUDA_SUCCESS)
		return gpu_fail(err, TCX_ENODEV, rc, "cannot count CUDA devices");
	if (*count <= 0)
		return tcx_fail(err, TCX_ENODEV, "the NVIDIA driver sees no CUDA device");
	/* a device tcx cannot compile for is no use: say so here */
	if (need_rtc(NULL))
		return tcx_fail(err, TCX_ENODEV, "%d CUDA device%s, but %s", *count,
				*count == 1 ? "" : "s", rtc_why);
	return TCX_OK;
}

static enum tcx_status gpu_device_get(int ordinal, CUdevice *out, struct tcx_error *err)
{
	CUresult rc = tl_gpu.DeviceGet(out, ordinal);

	if (rc != CUDA_SUCCESS)
		return gpu_fail(err, TCX_ENODEV, rc, "cannot open CUDA device %d", ordinal);
	return TCX_OK;
}

static void gpu_describe_own(CUdevice d, int ordinal, struct device_info *info, char *target,
			     size_t tsize)
{
	int drv = 0, rmaj = 0, rmin = 0;

	tl_gpu.Version(&drv);
	tl_rtc.Version(&rmaj, &rmin);
	/* both compile the kernels that the cache keeps: both key it */
	snprintf(info->driver, sizeof(info->driver), "CUDA driver %d.%d; NVRTC %d.%d", drv / 1000,
		 drv % 1000 / 10, rmaj, rmin);
}

static enum tcx_status gpu_retain(struct device *dev, struct tcx_error *err)
{
	CUresult rc = tl_gpu.PrimaryCtxRetain(&dev->ctx, dev->handle);

	if (rc != CUDA_SUCCESS)
		return gpu_fail(err, TCX_EDEVICE, rc, "cannot create a CUDA context on '%s'",
				dev->info.id);
	return TCX_OK;
}

static void gpu_release(struct device *dev)
{
	if (dev->ctx)
		tl_gpu.PrimaryCtxRelease(dev->handle);
}

static enum tcx_status cuda_tensor_map(struct device *dev, struct buffer *buf, size_t off,
				       int elem_bytes, int rank, const int64_t *dim,
				       const int64_t *stride, const int *box, void *out,
				       struct tcx_error *err)
{
	cuuint64_t gdim[5], gstride[4];
	cuuint32_t gbox[5], one[5] = { 1, 1, 1, 1, 1 };
	CUresult rc;

	_Static_assert(sizeof(CUtensorMap) == TCX_TENSOR_MAP_BYTES, "tensor map size");
	if (!cu_tensor_map_encode)
		return tcx_fail(err, TCX_EUNSUPPORTED, "the CUDA driver of '%s' has no tensor maps",
				dev->info.id);
	if (rank < 1 || rank > 5 || (elem_bytes != 2 && elem_bytes != 4) || off > buf->size ||
	    (buf->ptr + off) % 16)
		return tcx_fail(err, TCX_EUNSUPPORTED, "no tensor map for this layout");
	for (int d = 0; d < rank; d++) {
		if (dim[d] < 1 || dim[d] > ((int64_t)1 << 32) || box[d] < 1 || box[d] > 256)
			return tcx_fail(err, TCX_EUNSUPPORTED, "no tensor map for this layout");
		gdim[d] = (cuuint64_t)dim[d];
		gbox[d] = (cuuint32_t)box[d];
		if (d > 0) {
			if (stride[d - 1] <= 0 || stride[d - 1] % 16 ||
			    stride[d - 1] >= ((int64_t)1 << 40))
				return tcx_fail(err, TCX_EUNSUPPORTED, "no tensor map for this layout");
			gstride[d - 1] = (cuuint64_t)stride[d - 1];
		}
	}
	rc = cu_tensor_map_encode((CUtensorMap *)out,
				     elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
						     : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
				     (cuuint32_t)rank, (void *)(uintptr_t)(buf->ptr + off), gdim,
				     gstride, gbox, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
				     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
				     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (rc != CUDA_SUCCESS)
		return gpu_fail(err, TCX_EUNSUPPORTED, rc, "no tensor map for this layout");
	return TCX_OK;
}

void tcx_backend_cuda_ops(struct tcx_backend_ops *ops)
{
	gpu_ops(ops);
	ops->tensor_map = cuda_tensor_map;
}

/* fake_gpu.c - a stand-in GPU driver for tests on machines without one:
 * built with FAKE_CUDA as a libcuda.so.1 (the driver API entry points the
 * cuda backend resolves) and with FAKE_HIP as a libamdhip64.so.5 (the HIP
 * runtime's), it describes one device (an H100 or an MI250X), keeps its
 * memory in host memory, accepts any ELF image as a module, and runs one
 * kernel, vadd(float *a, float *b, float *c, int n) c = a + b, on the host;
 * other kernels' launches do nothing.  A name starting "no_such" is not in
 * any module.  The compilers stay the real NVRTC and hiprtc, so a test that
 * loads this first (test_backend_launch.c) runs the backends' own code from
 * compiling to launching. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if FAKE_CUDA
#include <cuda.h>
#undef cuEventElapsedTime /* the backend resolves the unversioned name */
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end);
#define FAKE(cuda, hip) cuda
typedef CUresult fake_rc;
typedef CUdeviceptr fake_ptr;
#else
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#define FAKE(cuda, hip) hip
typedef hipError_t fake_rc;
typedef hipDeviceptr_t fake_ptr;
#endif

#define OK	    FAKE(CUDA_SUCCESS, hipSuccess)
#define EINVALID    FAKE(CUDA_ERROR_INVALID_VALUE, hipErrorInvalidValue)
#define ENOMEMORY   FAKE(CUDA_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory)
#define EIMAGE	    FAKE(CUDA_ERROR_INVALID_IMAGE, hipErrorInvalidImage)
#define ENOTFOUND   FAKE(CUDA_ERROR_NOT_FOUND, hipErrorNotFound)
#define TOTAL_MEM   ((size_t)80 << 30)
#define PTR(p)	    ((void *)(uintptr_t)(p))
#define MAKE_PTR(p) ((fake_ptr)(uintptr_t)(p))

struct fake_fn {
	char *name;
	struct fake_fn *next;
};

struct fake_module {
	struct fake_fn *fns;
};

static fake_rc fake_alloc(void **handle, size_t bytes)
{
	*handle = calloc(1, bytes ? bytes : 1);
	return *handle ? OK : ENOMEMORY;
}

/* A device attribute, by the names of FAKE(CUDA's, HIP's) device. */
static int attribute(int a)
{
	switch (a) {
	case FAKE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		  hipDeviceAttributeComputeCapabilityMajor):
		return 9;
	case FAKE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, hipDeviceAttributeMultiprocessorCount):
		return FAKE(132, 110);
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, hipDeviceAttributeMaxThreadsPerBlock):
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, hipDeviceAttributeMaxBlockDimX):
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, hipDeviceAttributeMaxBlockDimY):
		return 1024;
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, hipDeviceAttributeMaxBlockDimZ):
		return FAKE(64, 1024);
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, hipDeviceAttributeMaxGridDimX):
		return 2147483647;
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, hipDeviceAttributeMaxGridDimY):
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, hipDeviceAttributeMaxGridDimZ):
		return 65535;
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
		  hipDeviceAttributeMaxSharedMemoryPerBlock):
		return FAKE(49152, 65536);
#if FAKE_CUDA
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		return 232448;
#endif
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		  hipDeviceAttributeMaxSharedMemoryPerMultiprocessor):
		return FAKE(233472, 65536);
	case FAKE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, hipDeviceAttributeL2CacheSize):
		return FAKE(52428800, 8388608);
	case FAKE(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
		  hipDeviceAttributeMaxRegistersPerBlock):
		return 65536;
	case FAKE(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, hipDeviceAttributeClockRate):
		return FAKE(1980000, 1700000);
	case FAKE(CU_DEVICE_ATTRIBUTE_WARP_SIZE, hipDeviceAttributeWarpSize):
		return FAKE(32, 64);
	default:
		return 0;
	}
}

static fake_rc load_module(void **out, const void *image)
{
	/* a cubin, a code object (both ELF), or PTX */
	if (!image || (memcmp(image, "\177ELF", 4) != 0 && memcmp(image, "//", 2) != 0))
		return EIMAGE;
	return fake_alloc(out, sizeof(struct fake_module));
}

static fake_rc unload_module(struct fake_module *m)
{
	struct fake_fn *f, *next;

	for (f = m->fns; f; f = next) {
		next = f->next;
		free(f->name);
		free(f);
	}
	free(m);
	return OK;
}

static fake_rc get_function(void **out, struct fake_module *m, const char *name)
{
	struct fake_fn *f;

	if (strncmp(name, "no_such", 7) == 0)
		return ENOTFOUND;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name))) {
		free(f);
		return ENOMEMORY;
	}
	f->next = m->fns;
	m->fns = f;
	*out = f;
	return OK;
}

static fake_rc function_attribute(int *v, int a)
{
	switch (a) {
	case FAKE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK):
		*v = 1024;
		return OK;
	case FAKE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES):
		*v = 0;
		return OK;
	default:
		return EINVALID;
	}
}

static fake_rc launch(const struct fake_fn *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		      unsigned by, unsigned bz, void **params)
{
	size_t threads = (size_t)gx * gy * gz * bx * by * bz;

	if (strcmp(f->name, "vadd") == 0) {
		const float *a = PTR(*(fake_ptr *)params[0]), *b = PTR(*(fake_ptr *)params[1]);
		float *c = PTR(*(fake_ptr *)params[2]);
		int n = *(const int *)params[3];

		for (size_t i = 0; i < threads && i < (size_t)n; i++)
			c[i] = a[i] + b[i];
	}
	return OK;
}

#if FAKE_CUDA
static int dummy_ctx; /* the primary context */

CUresult CUDAAPI cuInit(unsigned flags)
{
	return CUDA_SUCCESS;
}

/* NVRTC asks a libcuda.so.1 it finds loaded for the driver's private
 * tables: there are none here */
CUresult CUDAAPI cuGetExportTable(const void **table, const CUuuid *id)
{
	*table = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuDriverGetVersion(int *v)
{
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult rc, const char **s)
{
	static const struct {
		CUresult rc;
		const char *name;
	} names[] = {
	    {CUDA_SUCCESS, "CUDA_SUCCESS"},
	    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
	    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
	    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
	    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
	};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (names[k].rc == rc) {
			*s = names[k].name;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuDeviceGetCount(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal)
{
	*d = ordinal;
	return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d)
{
	strncpy(name, "fake H100 (tcx's test driver)", (size_t)len);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	*v = attribute(a);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
	*bytes = TOTAL_MEM;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
	*ctx = (CUcontext)(void *)&dummy_ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	return ctx == (CUcontext)(void *)&dummy_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned flags)
{
	return fake_alloc((void **)s, 1);
}

CUresult CUDAAPI cuStreamDestroy(CUstream s)
{
	free(s);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
	void *m;

	if (bytes > TOTAL_MEM || fake_alloc(&m, bytes))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = MAKE_PTR(m);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr p)
{
	free(PTR(p));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	memcpy(PTR(dst), src, n);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	memcpy(dst, PTR(src), n);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *m, const void *image)
{
	return load_module((void **)m, image);
}

CUresult CUDAAPI cuModuleUnload(CUmodule m)
{
	return unload_module((struct fake_module *)(void *)m);
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	return get_function((void **)f, (struct fake_module *)(void *)m, name);
}

CUresult CUDAAPI cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	return function_attribute(v, a);
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	return a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && v <= 232448
		   ? CUDA_SUCCESS
		   : CUDA_ERROR_INVALID_VALUE;
}

/* The parameters of vadd and uses_local (the driver reads them from the
 * cubin, from CUDA 12.4) */
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
	static const size_t vadd[] = { 8, 8, 8, 4 };
	const struct fake_fn *fn = (const struct fake_fn *)(void *)f;
	size_t n = strcmp(fn->name, "vadd") == 0 ? 4 : strcmp(fn->name, "uses_local") == 0;

	if (index >= n)
		return CUDA_ERROR_INVALID_VALUE;
	*offset = 8 * index;
	*size = vadd[index];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
				void **extra)
{
	return launch((const struct fake_fn *)(void *)f, gx, gy, gz, bx, by, bz, params);
}

CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned flags)
{
	return fake_alloc((void **)e, 1);
}

CUresult CUDAAPI cuEventDestroy(CUevent e)
{
	free(e);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent e)
{
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
	*ms = 0.25f;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank,
					void *addr, const cuuint64_t *dim,
					const cuuint64_t *stride, const cuuint32_t *box,
					const cuuint32_t *estride, CUtensorMapInterleave il,
					CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
					CUtensorMapFloatOOBfill oob)
{
	memset(m, 0x5a, sizeof(*m));
	return CUDA_SUCCESS;
}
#else
hipError_t hipInit(unsigned flags)
{
	return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int *v)
{
	*v = HIP_VERSION;
	return hipSuccess;
}

const char *hipGetErrorName(hipError_t rc)
{
	switch (rc) {
	case hipSuccess:
		return "hipSuccess";
	case hipErrorInvalidValue:
		return "hipErrorInvalidValue";
	case hipErrorOutOfMemory:
		return "hipErrorOutOfMemory";
	case hipErrorInvalidImage:
		return "hipErrorInvalidImage";
	case hipErrorNotFound:
		return "hipErrorNotFound";
	default:
		return "hipErrorUnknown";
	}
}

hipError_t hipGetDeviceCount(int *n)
{
	*n = 1;
	return hipSuccess;
}

hipError_t hipSetDevice(int ordinal)
{
	return ordinal == 0 ? hipSuccess : hipErrorInvalidDevice;
}

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t d)
{
	strncpy(name, "fake MI250X (tcx's test driver)", (size_t)len);
	return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int d)
{
	*v = attribute(a);
	return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t d)
{
	*bytes = TOTAL_MEM;
	return hipSuccess;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->gcnArchName, "gfx90a:sramecc+:xnack-");
	return hipSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags)
{
	return fake_alloc((void **)s, 1);
}

hipError_t hipStreamDestroy(hipStream_t s)
{
	free(s);
	return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t s)
{
	return hipSuccess;
}

hipError_t hipMalloc(void **p, size_t bytes)
{
	return bytes > TOTAL_MEM ? hipErrorOutOfMemory : fake_alloc(p, bytes);
}

hipError_t hipFree(void *p)
{
	free(p);
	return hipSuccess;
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t s)
{
	memcpy(dst, src, n);
	return hipSuccess;
}

hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t s)
{
	memcpy(dst, src, n);
	return hipSuccess;
}

hipError_t hipModuleLoadData(hipModule_t *m, const void *image)
{
	return load_module((void **)m, image);
}

hipError_t hipModuleUnload(hipModule_t m)
{
	return unload_module((struct fake_module *)(void *)m);
}

hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name)
{
	return get_function((void **)f, (struct fake_module *)(void *)m, name);
}

hipError_t hipFuncGetAttribute(int *v, hipFunction_attribute a, hipFunction_t f)
{
	return function_attribute(v, a);
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
				 unsigned bx, unsigned by, unsigned bz, unsigned shared,
				 hipStream_t s, void **params, void **extra)
{
	return launch((const struct fake_fn *)(void *)f, gx, gy, gz, bx, by, bz, params);
}

hipError_t hipEventCreate(hipEvent_t *e)
{
	return fake_alloc((void **)e, 1);
}

hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
	return fake_alloc((void **)e, 1);
}

hipError_t hipEventDestroy(hipEvent_t e)
{
	free(e);
	return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	return hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t e)
{
	return hipSuccess;
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t end)
{
	*ms = 0.25f;
	return hipSuccess;
}
#endif

/* opencl.c - the "opencl" backend: every device of every platform the
 * OpenCL ICD loader knows (PoCL on CPUs, NVIDIA, AMD and Intel drivers),
 * through the OpenCL 1.2 API only. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "backend/backend.h"
#include "backend/check.h"
#include "runtime/clerr.h"

/* Vendor queries, spelled out in case an older cl_ext.h lacks them (and
 * NVIDIA's compute capability in clerr.h). */
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif
#ifndef CL_DEVICE_REGISTERS_PER_BLOCK_NV
#define CL_DEVICE_REGISTERS_PER_BLOCK_NV 0x4002
#endif
#ifndef CL_DEVICE_WARP_SIZE_NV
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_WAVEFRONT_WIDTH_AMD
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#endif

#define MAX_PLATFORMS	     16
#define MAX_PLATFORM_DEVICES 64

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	cl_platform_id platform;
	cl_device_id id;
	cl_context ctx;
	cl_command_queue queue;
};

/* A kernel object of a program, created on its first launch. */
struct kernel_entry {
	struct kernel_head head; /* first: its name, the program's list */
	cl_kernel kernel;
	cl_uint nargs;
	size_t wg_max;	       /* CL_KERNEL_WORK_GROUP_SIZE */
	cl_ulong static_local; /* CL_KERNEL_LOCAL_MEM_SIZE before any argument is set */
};

struct program {
	struct program_head head; /* first: device, build log, kernels (check.h);
				   * its lock also guards the kernels' arguments */
	cl_program prog;
};

struct buffer {
	size_t size; /* first: the backend layer checks transfers against it */
	cl_mem mem;
	bool borrowed; /* the caller's (ocl_wrap): never released here */
};

/* As tcx_fail, with ": CL_NAME (code)" appended and err->native = rc. */
static enum tcx_status cl_fail(struct tcx_error *err, enum tcx_status code, cl_int rc,
			       const char *fmt, ...) TCX_PRINTF(4, 5);
static enum tcx_status cl_fail(struct tcx_error *err, enum tcx_status code, cl_int rc,
			       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	backend_vfail(err, code, rc, tl_cl_error(rc), fmt, ap);
	va_end(ap);
	return code;
}

/* --- device discovery ------------------------------------------------ */

static void platform_str_into(cl_platform_id p, cl_platform_info param, char *buf, size_t size)
{
	buf[0] = '\0';
	if (clGetPlatformInfo(p, param, size, buf, NULL) != CL_SUCCESS)
		buf[0] = '\0';
	buf[size - 1] = '\0';
}

static cl_ulong dev_ulong(cl_device_id d, cl_device_info param)
{
	cl_ulong v = 0;

	return clGetDeviceInfo(d, param, sizeof(v), &v, NULL) == CL_SUCCESS ? v : 0;
}

static cl_uint dev_uint(cl_device_id d, cl_device_info param)
{
	cl_uint v = 0;

	return clGetDeviceInfo(d, param, sizeof(v), &v, NULL) == CL_SUCCESS ? v : 0;
}

static size_t dev_size(cl_device_id d, cl_device_info param)
{
	size_t v = 0;

	return clGetDeviceInfo(d, param, sizeof(v), &v, NULL) == CL_SUCCESS ? v : 0;
}

static int clamp_int(unsigned long long v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

static int64_t clamp_i64(unsigned long long v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void describe(cl_platform_id plat, cl_device_id d, int pi, int di, struct device_info *info)
{
	char pver[256];
	char *exts = tl_cl_str(d, CL_DEVICE_EXTENSIONS);
	cl_device_type type = 0;
	size_t *dims;
	cl_uint ndims;

	memset(info, 0, sizeof(*info));
	snprintf(info->id, sizeof(info->id), "opencl:%d:%d", pi, di);
	snprintf(info->backend, sizeof(info->backend), "opencl");
	snprintf(info->lang, sizeof(info->lang), "opencl");
	/* name, vendor and arch (what kernels are compiled for) as the
	 * exported libraries name the device */
	tl_cl_ident(d, info->name, sizeof(info->name), info->vendor, sizeof(info->vendor),
		    info->arch, sizeof(info->arch));

	/* driver: the device driver's version, then the platform's, which
	 * together identify the compiler for the kernel cache */
	tl_cl_str_into(d, CL_DRIVER_VERSION, info->driver, sizeof(info->driver));
	platform_str_into(plat, CL_PLATFORM_VERSION, pver, sizeof(pver));
	tl_squeeze(pver);
	if (pver[0]) {
		size_t n = strlen(info->driver);

		snprintf(info->driver + n, sizeof(info->driver) - n, "; %s", pver);
	}

	clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	info->type = (type & CL_DEVICE_TYPE_GPU)	   ? DEV_GPU
		     : (type & CL_DEVICE_TYPE_ACCELERATOR) ? DEV_ACCEL
							   : DEV_CPU;
	info->compute_units = clamp_int(dev_uint(d, CL_DEVICE_MAX_COMPUTE_UNITS));
	info->global_mem = clamp_i64(dev_ulong(d, CL_DEVICE_GLOBAL_MEM_SIZE));
	info->max_alloc = clamp_i64(dev_ulong(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
	info->local_mem = clamp_i64(dev_ulong(d, CL_DEVICE_LOCAL_MEM_SIZE));
	info->cache_bytes = clamp_i64(dev_ulong(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
	info->max_wg_size = clamp_int(dev_size(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
	/* every dimension the device has, of which tcx uses three (1 where
	 * it has fewer) */
	ndims = dev_uint(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
	dims = calloc(ndims > 3 ? ndims : 3, sizeof(*dims));
	if (dims && clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, ndims * sizeof(*dims), dims,
				    NULL) == CL_SUCCESS)
		for (cl_uint k = 0; k < 3; k++)
			info->max_wg_dim[k] = clamp_int(k < ndims ? dims[k] : 1);
	free(dims);
	info->clock_mhz = clamp_int(dev_uint(d, CL_DEVICE_MAX_CLOCK_FREQUENCY));
	info->pref_vector_float = clamp_int(dev_uint(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));
	info->fp64 =
	    tl_cl_has_ext(exts, "cl_khr_fp64") || dev_ulong(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
	info->fp16 = tl_cl_has_ext(exts, "cl_khr_fp16");
	info->simd_width = info->type == DEV_CPU ? 1 : 32;
	/* PoCL's events say 0.5 us for launches that cost 24-119 us */
	info->timer_events = info->type != DEV_CPU;

	if (tl_cl_has_ext(exts, "cl_nv_device_attribute_query")) {
		info->cc_major = clamp_int(dev_uint(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV));
		info->cc_minor = clamp_int(dev_uint(d, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV));
		info->max_regs_per_wg = clamp_int(dev_uint(d, CL_DEVICE_REGISTERS_PER_BLOCK_NV));
		if (dev_uint(d, CL_DEVICE_WARP_SIZE_NV))
			info->simd_width = clamp_int(dev_uint(d, CL_DEVICE_WARP_SIZE_NV));
	}
	if (tl_cl_has_ext(exts, "cl_amd_device_attribute_query") && info->type == DEV_GPU &&
	    dev_uint(d, CL_DEVICE_WAVEFRONT_WIDTH_AMD))
		info->simd_width = clamp_int(dev_uint(d, CL_DEVICE_WAVEFRONT_WIDTH_AMD));
	free(exts);
}

/* One device found by enumeration. */
struct found {
	cl_platform_id platform;
	cl_device_id device;
	int pi, di;
};

/* Every device of every platform, in probe order, up to `max`. */
static enum tcx_status enumerate(struct found *out, int max, int *count, struct tcx_error *err)
{
	cl_platform_id plats[MAX_PLATFORMS];
	cl_uint np = 0;
	cl_int rc;
	int n = 0;

	*count = 0;
	rc = clGetPlatformIDs(MAX_PLATFORMS, plats, &np);
	if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && np == 0))
		return tcx_fail(err, TCX_ENODEV,
				"no OpenCL platform found (is an ICD such as pocl-opencl-icd "
				"installed?)");
	if (rc != CL_SUCCESS)
		return cl_fail(err, TCX_ENODEV, rc, "cannot list OpenCL platforms");
	if (np > MAX_PLATFORMS)
		np = MAX_PLATFORMS;
	for (cl_uint p = 0; p < np && n < max; p++) {
		cl_device_id devs[MAX_PLATFORM_DEVICES];
		cl_uint nd = 0;

		rc = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_PLATFORM_DEVICES, devs, &nd);
		if (rc != CL_SUCCESS)
			continue; /* CL_DEVICE_NOT_FOUND: a platform with no devices */
		if (nd > MAX_PLATFORM_DEVICES)
			nd = MAX_PLATFORM_DEVICES;
		for (cl_uint k = 0; k < nd && n < max; k++) {
			out[n].platform = plats[p];
			out[n].device = devs[k];
			out[n].pi = (int)p;
			out[n].di = (int)k;
			n++;
		}
	}
	if (n == 0)
		return tcx_fail(err, TCX_ENODEV, "%u OpenCL platform%s but no devices", np,
				np == 1 ? "" : "s");
	*count = n;
	return TCX_OK;
}

static enum tcx_status ocl_probe(struct device_info *out, int max, int *count,
				 struct tcx_error *err)
{
	struct found *f;
	enum tcx_status st;
	int n;

	*count = 0;
	if (max <= 0)
		return TCX_OK;
	f = calloc((size_t)max, sizeof(*f));
	if (!f)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	st = enumerate(f, max, &n, err);
	if (st)
		goto out_free;
	for (int k = 0; k < n; k++)
		describe(f[k].platform, f[k].device, f[k].pi, f[k].di, &out[k]);
	*count = n;
out_free:
	free(f);
	return st;
}

/* --- devices --------------------------------------------------------- */

/* Whether the platform keeps compiled kernels in a cache of its own: PoCL
 * does (POCL_CACHE_DIR) unless POCL_KERNEL_CACHE=0.  tcx's on-disk cache
 * only adds work there, since reading a program's binary makes PoCL
 * compile every kernel once more for a generic work-group size: a first
 * build of a batched GEMM took 6.4 s with it and 3.5 s without, the
 * second 0.16 and 0.21 s from the two caches. */
static bool platform_caches_kernels(cl_platform_id plat)
{
	const char *env = getenv("POCL_KERNEL_CACHE");
	char name[64] = "";

	clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL);
	return strstr(name, "Portable Computing Language") && !(env && strcmp(env, "0") == 0);
}

static enum tcx_status ocl_open(int index, struct device **out, struct tcx_error *err)
{
	struct found *all;
	struct device *d;
	cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, 0, 0};
	enum tcx_status st;
	cl_int rc;
	int n, max = index + 1;

	*out = NULL;
	if (index < 0 || index >= MAX_PLATFORMS * MAX_PLATFORM_DEVICES)
		return tcx_fail(err, TCX_ENODEV, "no OpenCL device %d", index);
	all = calloc((size_t)max, sizeof(*all));
	if (!all)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	st = enumerate(all, max, &n, err);
	if (st)
		goto out_free_all;
	if (index >= n) {
		st = tcx_fail(err, TCX_ENODEV, "no OpenCL device %d (there are %d)", index, n);
		goto out_free_all;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out_free_all;
	}
	/* device_open does not fill the header; the registry's copy of our ops */
	d->base.ops = backend_find("opencl");
	d->platform = all[index].platform;
	d->id = all[index].device;
	describe(d->platform, d->id, all[index].pi, all[index].di, &d->info);
	d->base.info = &d->info;
	d->base.platform_cache = platform_caches_kernels(d->platform);

	props[1] = (cl_context_properties)d->platform;
	d->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &rc);
	if (!d->ctx) {
		st = cl_fail(err, TCX_EDEVICE, rc, "cannot create an OpenCL context on '%s'",
			     d->info.id);
		goto out_free_dev;
	}
	d->queue = clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &rc);
	if (!d->queue) {
		st = cl_fail(err, TCX_EDEVICE, rc, "cannot create a command queue on '%s'",
			     d->info.id);
		goto out_release_ctx;
	}
	free(all);
	*out = d;
	return TCX_OK;

out_release_ctx:
	clReleaseContext(d->ctx);
out_free_dev:
	free(d);
out_free_all:
	free(all);
	return st;
}

static void ocl_close(struct device *dev)
{
	if (dev->queue) {
		clFinish(dev->queue);
		clReleaseCommandQueue(dev->queue);
	}
	if (dev->ctx)
		clReleaseContext(dev->ctx);
	free(dev);
}

/* --- programs -------------------------------------------------------- */

/* Reads the program's build log into p->head.log. */
static void fetch_log(struct program *p)
{
	size_t n = 0;

	if (clGetProgramBuildInfo(p->prog, p->head.dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) !=
	    CL_SUCCESS)
		n = 0;
	p->head.log = malloc(n + 1);
	if (!p->head.log)
		return;
	if (n && clGetProgramBuildInfo(p->prog, p->head.dev->id, CL_PROGRAM_BUILD_LOG, n, p->head.log,
				       NULL) != CL_SUCCESS)
		n = 0;
	p->head.log[n] = '\0';
	/* drivers end the log with blank lines */
	while (n > 0 && (p->head.log[n - 1] == '\n' || p->head.log[n - 1] == ' ' || p->head.log[n - 1] == '\0'))
		p->head.log[--n] = '\0';
}

static void kernel_release(struct kernel_head *k)
{
	clReleaseKernel(((struct kernel_entry *)k)->kernel);
}

static void ocl_program_free(struct program *p)
{
	if (!p)
		return;
	if (p->prog)
		clReleaseProgram(p->prog);
	program_head_free(&p->head, kernel_release);
}

static enum tcx_status ocl_build(struct device *dev, const char *src, size_t len, const char *opts,
				 struct program **out, struct tcx_error *err)
{
	struct program *p;
	cl_int rc;
	char head[320];

	*out = NULL;
	p = program_head_new(sizeof(*p), dev);
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	p->prog = clCreateProgramWithSource(dev->ctx, 1, &src, &len, &rc);
	if (!p->prog) {
		ocl_program_free(p);
		return cl_fail(err, TCX_EBUILD, rc, "cannot create a program on '%s'",
			       dev->info.id);
	}
	rc = clBuildProgram(p->prog, 1, &dev->id, opts ? opts : "", NULL, NULL);
	fetch_log(p);
	*out = p;
	if (rc == CL_SUCCESS)
		return TCX_OK;
	if (rc == CL_INVALID_BUILD_OPTIONS)
		return cl_fail(err, TCX_EBUILD, rc, "invalid build options '%s' for '%s'",
			       opts ? opts : "", dev->info.id);
	if (rc == CL_BUILD_PROGRAM_FAILURE) {
		backend_log_head(p->head.log, 2, head, sizeof(head));
		tcx_fail(err, TCX_EBUILD, "kernel does not compile for '%s': %s", dev->info.id,
			 head);
		if (err)
			err->native = rc;
		return TCX_EBUILD;
	}
	return cl_fail(err, TCX_EBUILD, rc, "cannot build a program for '%s'", dev->info.id);
}

/* A program's context has its one device (ocl_open), so the program has
 * one binary. */
static enum tcx_status ocl_binary(const struct program *prog, unsigned char **bin, size_t *len,
				  struct tcx_error *err)
{
	size_t size = 0;
	cl_int rc;

	*bin = NULL;
	*len = 0;
	rc = clGetProgramInfo(prog->prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, TCX_EDEVICE, rc, "cannot read the program's binary size");
	if (size == 0)
		return tcx_fail(err, TCX_EUNSUPPORTED, "'%s' gives no binary for this program",
				prog->head.dev->info.id);
	*bin = malloc(size);
	if (!*bin)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	rc = clGetProgramInfo(prog->prog, CL_PROGRAM_BINARIES, sizeof(*bin), bin, NULL);
	if (rc != CL_SUCCESS) {
		free(*bin);
		*bin = NULL;
		return cl_fail(err, TCX_EDEVICE, rc, "cannot read the program's binary");
	}
	*len = size;
	return TCX_OK;
}

static enum tcx_status ocl_build_binary(struct device *dev, const unsigned char *bin, size_t len,
					struct program **out, struct tcx_error *err)
{
	struct program *p;
	cl_int rc, status = CL_SUCCESS;
	char head[320];

	*out = NULL;
	p = program_head_new(sizeof(*p), dev);
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	p->prog = clCreateProgramWithBinary(dev->ctx, 1, &dev->id, &len, &bin, &status, &rc);
	if (!p->prog || rc != CL_SUCCESS || status != CL_SUCCESS) {
		ocl_program_free(p);
		if (rc == CL_INVALID_BINARY || status != CL_SUCCESS)
			return cl_fail(err, TCX_ECORRUPT, status != CL_SUCCESS ? status : rc,
				       "program binary rejected by '%s'", dev->info.id);
		return cl_fail(err, TCX_EDEVICE, rc, "cannot load a program binary on '%s'",
			       dev->info.id);
	}
	rc = clBuildProgram(p->prog, 1, &dev->id, NULL, NULL, NULL);
	fetch_log(p);
	if (rc != CL_SUCCESS) {
		/* a binary that loads but does not build is as good as damaged */
		backend_log_head(p->head.log, 2, head, sizeof(head));
		tcx_fail(err, TCX_ECORRUPT, "program binary rejected by '%s': %s: %s", dev->info.id,
			 tl_cl_error(rc), head);
		if (err)
			err->native = rc;
		*out = p;
		return TCX_ECORRUPT;
	}
	*out = p;
	return TCX_OK;
}

/* Creates the kernel object k->head.name of a program and reads its
 * limits (program_kernel's init). */
static enum tcx_status kernel_init(struct program_head *ph, struct kernel_head *kh,
				   struct tcx_error *err)
{
	struct program *p = (struct program *)ph;
	struct kernel_entry *k = (struct kernel_entry *)kh;
	const char *name = kh->name;
	cl_int rc;

	k->kernel = clCreateKernel(p->prog, name, &rc);
	if (!k->kernel) {
		if (rc == CL_INVALID_KERNEL_NAME)
			return cl_fail(err, TCX_ELAUNCH, rc, "no kernel '%s' in the program", name);
		return cl_fail(err, TCX_ELAUNCH, rc, "cannot create kernel '%s'", name);
	}
	rc = clGetKernelInfo(k->kernel, CL_KERNEL_NUM_ARGS, sizeof(k->nargs), &k->nargs, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetKernelWorkGroupInfo(k->kernel, p->head.dev->id, CL_KERNEL_WORK_GROUP_SIZE,
					      sizeof(k->wg_max), &k->wg_max, NULL);
	/* before any argument is set, __local pointer arguments count as 0 */
	if (rc == CL_SUCCESS)
		rc = clGetKernelWorkGroupInfo(k->kernel, p->head.dev->id, CL_KERNEL_LOCAL_MEM_SIZE,
					      sizeof(k->static_local), &k->static_local, NULL);
	if (rc != CL_SUCCESS) {
		clReleaseKernel(k->kernel);
		return cl_fail(err, TCX_ELAUNCH, rc, "cannot query kernel '%s'", name);
	}
	return TCX_OK;
}

/* --- memory ---------------------------------------------------------- */

static enum tcx_status ocl_alloc(struct device *dev, size_t bytes, struct buffer **out,
				 struct tcx_error *err)
{
	struct buffer *b;
	cl_int rc;

	*out = NULL;
	if (dev->info.max_alloc > 0 && (uint64_t)bytes > (uint64_t)dev->info.max_alloc)
		return tcx_fail(err, TCX_EDEVICE,
				"cannot allocate %zu bytes on '%s': above the device's largest "
				"buffer of %lld bytes",
				bytes, dev->info.id, (long long)dev->info.max_alloc);
	b = calloc(1, sizeof(*b));
	if (!b)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	b->mem = clCreateBuffer(dev->ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	if (!b->mem) {
		free(b);
		if (rc == CL_OUT_OF_HOST_MEMORY)
			return cl_fail(err, TCX_ENOMEM, rc, "cannot allocate %zu bytes on '%s'",
				       bytes, dev->info.id);
		return cl_fail(err, TCX_EDEVICE, rc,
			       "cannot allocate %zu bytes on '%s' (largest buffer %lld bytes, "
			       "memory %lld bytes)",
			       bytes, dev->info.id, (long long)dev->info.max_alloc,
			       (long long)dev->info.global_mem);
	}
	b->size = bytes;
	*out = b;
	return TCX_OK;
}

static void ocl_free(struct buffer *buf)
{
	if (buf->mem && !buf->borrowed)
		clReleaseMemObject(buf->mem);
	free(buf);
}

/* Errors of a transfer: memory errors are the device's, the rest ours. */
static enum tcx_status ocl_copy(struct device *dev, struct buffer *buf, size_t off, void *host,
				size_t bytes, bool to_dev, struct tcx_error *err)
{
	cl_int rc = to_dev ? clEnqueueWriteBuffer(dev->queue, buf->mem, CL_TRUE, off, bytes, host,
						  0, NULL, NULL)
			   : clEnqueueReadBuffer(dev->queue, buf->mem, CL_TRUE, off, bytes, host, 0,
						 NULL, NULL);

	if (rc != CL_SUCCESS)
		return cl_fail(err, rc == CL_OUT_OF_HOST_MEMORY ? TCX_ENOMEM : TCX_EDEVICE, rc,
			       "cannot %s %zu bytes %s '%s'", to_dev ? "write" : "read", bytes,
			       to_dev ? "to" : "from", dev->info.id);
	return TCX_OK;
}

/* --- launches -------------------------------------------------------- */

/* Checks the launch (launch_check) and sets the kernel's arguments. */
static enum tcx_status set_args(const struct device *dev, struct kernel_entry *k,
				const struct launch *l, struct tcx_error *err)
{
	const struct kernel_facts f = {
	    k->head.name, (int64_t)k->wg_max, (int64_t)k->static_local, (int)k->nargs, NULL,
	    sizeof(cl_mem),
	};
	enum tcx_status st = launch_check(&dev->info, &f, l, NULL, err);

	for (int a = 0; !st && a < l->nargs; a++) {
		const struct karg *g = &l->args[a];
		cl_int rc;

		if (g->kind == KARG_BUFFER)
			rc = clSetKernelArg(k->kernel, (cl_uint)a, sizeof(cl_mem), &g->buf->mem);
		else /* a value, or __local memory of g->size bytes */
			rc = clSetKernelArg(k->kernel, (cl_uint)a, g->size,
					    g->kind == KARG_BYTES ? g->ptr : NULL);
		if (rc != CL_SUCCESS)
			st = cl_fail(err, TCX_ELAUNCH, rc, "kernel '%s': cannot set argument %d",
				     k->head.name, a);
	}
	return st;
}

/* Waits for a kernel's event and reads its device-side duration. */
static enum tcx_status event_time(struct device *dev, const char *kernel, cl_event ev, double *ms,
				  struct tcx_error *err)
{
	cl_ulong t0 = 0, t1 = 0;
	cl_int status = CL_COMPLETE, rc;

	rc = clWaitForEvents(1, &ev);
	if (rc == CL_SUCCESS)
		rc = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
				    NULL);
	if (rc == CL_SUCCESS && status < 0)
		rc = status;
	if (rc != CL_SUCCESS)
		return cl_fail(err, TCX_ELAUNCH, rc, "kernel '%s' failed on '%s'", kernel,
			       dev->info.id);
	rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, TCX_EDEVICE, rc, "cannot time kernel '%s' on '%s'", kernel,
			       dev->info.id);
	*ms = t1 > t0 ? (double)(t1 - t0) / 1e6 : 0.0;
	return TCX_OK;
}

static enum tcx_status ocl_launch(struct device *dev, struct program *prog, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	struct kernel_entry *k;
	enum tcx_status st;
	cl_event ev = NULL;
	cl_int rc;

	pthread_mutex_lock(&prog->head.lock);
	st = program_kernel(&prog->head, l->kernel, sizeof(*k), kernel_init,
			    (struct kernel_head **)&k, err);
	if (!st)
		st = set_args(dev, k, l, err);
	if (!st) {
		cl_command_queue q = device_queue(dev) ? device_queue(dev) : dev->queue;

		rc = clEnqueueNDRangeKernel(q, k->kernel, 3, NULL, l->global, l->local, 0, NULL,
					    event_ms ? &ev : NULL);
		if (rc != CL_SUCCESS)
			st = cl_fail(err,
				     rc == CL_OUT_OF_HOST_MEMORY || rc == CL_INVALID_COMMAND_QUEUE
					 ? TCX_EDEVICE
					 : TCX_ELAUNCH,
				     rc, "cannot launch kernel '%s' on '%s'", l->kernel,
				     dev->info.id);
	}
	pthread_mutex_unlock(&prog->head.lock);
	if (!st && ev)
		st = event_time(dev, l->kernel, ev, event_ms, err);
	if (ev)
		clReleaseEvent(ev);
	return st;
}

static enum tcx_status ocl_finish(struct device *dev, struct tcx_error *err)
{
	cl_int rc = clFinish(dev->queue);

	if (rc != CL_SUCCESS)
		return cl_fail(err, TCX_EDEVICE, rc, "cannot finish the work queued on '%s'",
			       dev->info.id);
	return TCX_OK;
}

/* --- the device API's hooks ------------------------------------------ */

static enum tcx_status ocl_wrap(struct device *dev, void *native, size_t bytes,
				struct buffer **out, struct tcx_error *err)
{
	cl_mem mem = (cl_mem)native;
	cl_context ctx = NULL;
	size_t size = 0;
	cl_int rc;

	if (*out && !(*out)->borrowed)
		return tcx_fail(err, TCX_EINVAL, "a buffer of '%s' that wraps nothing",
				dev->info.id);
	if (!native)
		goto out_point;
	rc = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(ctx), &ctx, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, TCX_EINVAL, rc, "not an OpenCL buffer for '%s'", dev->info.id);
	if (ctx != dev->ctx)
		return tcx_fail(err, TCX_EINVAL,
				"an OpenCL buffer of another context than that of '%s'",
				dev->info.id);
	if (size < bytes)
		return tcx_fail(err, TCX_EINVAL,
				"an OpenCL buffer of %zu bytes where %zu bytes are needed", size,
				bytes);
out_point:
	if (!*out) {
		*out = calloc(1, sizeof(**out));
		if (!*out)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		(*out)->borrowed = true;
	}
	(*out)->mem = mem;
	(*out)->size = size;
	return TCX_OK;
}

static void *ocl_native(struct device *dev, int what)
{
	return what == NATIVE_CONTEXT  ? (void *)dev->ctx
	       : what == NATIVE_DEVICE ? (void *)dev->id
	       : what == NATIVE_QUEUE  ? (void *)dev->queue
				       : NULL;
}

void tcx_backend_opencl_ops(struct tcx_backend_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->name = "opencl";
	ops->probe = ocl_probe;
	ops->open = ocl_open;
	ops->close = ocl_close;
	ops->build = ocl_build;
	ops->program_free = ocl_program_free;
	ops->binary = ocl_binary;
	ops->build_binary = ocl_build_binary;
	ops->alloc = ocl_alloc;
	ops->free = ocl_free;
	ops->copy = ocl_copy;
	ops->launch = ocl_launch;
	ops->finish = ocl_finish;
	ops->wrap = ocl_wrap;
	ops->kernel_size = sizeof(struct kernel_entry);
	ops->kernel_init = kernel_init;
	ops->native = ocl_native;
}

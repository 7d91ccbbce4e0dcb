/* runtime.c - the run time of a library tcx export-lib wrote: checking a
 * call's sizes and strides, finding the device behind the caller's queue
 * and the logic tuned for it (by name, architecture, vendor, default),
 * choosing the solution (select.c), building its kernel once per device
 * and context, and launching it exactly as tcx does: abi.c lays out the
 * kernels' arguments, work sizes and GlobalSplitU reduction for tcx's
 * plan_launch and for this file alike.
 *
 * This file is a template: tcx copies it unchanged into the library's src/
 * directory, where the generated src/<prefix>.c includes it after config.h
 * (the TL() naming macros), the public header, runtime.h and the tables.
 * C99 with POSIX threads.  Backends: OpenCL (the default) or, with
 * TL_WITH_CUDA or TL_WITH_HIP, the CUDA driver API and NVRTC or the HIP
 * runtime and hiprtc (gpu.h, runtime_gpu.c), loaded with dlopen at first
 * use so that the library also loads where they are not installed.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select.c"
#include "abi.c"
#include "elem.h"

#if TL_WITH_CUDA || TL_WITH_HIP
#define TL_GPU_USER TL_GPU_LIB
#include "gpu.h"
#else
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#endif

#define TL_STATUS enum TL(status)

/* ---- errors ------------------------------------------------------------- */

static pthread_mutex_t tl_lock = PTHREAD_MUTEX_INITIALIZER;
static char tl_error[16384]; /* the last failure's detail (under tl_lock) */

static void tl_set_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tl_lock);
	va_start(ap, fmt);
	vsnprintf(tl_error, sizeof(tl_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&tl_lock);
}

/* As tl_set_error, with tl_lock already held. */
static void tl_set_error_locked(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tl_error, sizeof(tl_error), fmt, ap);
	va_end(ap);
}

TL_UP(API) const char *TL(status_str)(TL_STATUS s)
{
	static const char *const text[TL_UP(STATUS_COUNT)] = {
	    [TL_UP(OK)] = "success",
	    [TL_UP(EINVAL)] = "invalid argument",
	    [TL_UP(ENOMEM)] = "out of memory",
	    [TL_UP(ENOSOLUTION)] = "no solution of the library can run these sizes",
	    [TL_UP(EDEVICE)] = "device or runtime error",
	    [TL_UP(EBUILD)] = "a kernel failed to compile",
	    [TL_UP(ELAUNCH)] = "a kernel failed to launch",
	    [TL_UP(EUNSUPPORTED)] = "not supported by this library or device",
	};

	return (int)s >= 0 && s < TL_UP(STATUS_COUNT) && text[s] ? text[s] : "unknown status";
}

TL_UP(API) size_t TL(last_error)(char *buf, size_t len)
{
	size_t n;

	pthread_mutex_lock(&tl_lock);
	n = strlen(tl_error);
	if (buf && len) {
		size_t m = n < len - 1 ? n : len - 1;

		memcpy(buf, tl_error, m);
		buf[m] = '\0';
	}
	pthread_mutex_unlock(&tl_lock);
	return n;
}

/* ---- problem types ------------------------------------------------------- */

TL_UP(API) int TL(problem_count)(void)
{
	return TL_NTYPES;
}

TL_UP(API) const struct TL(problem_info) * TL(problem)(int k)
{
	return k >= 0 && k < TL_NTYPES ? &tl_types[k].info : NULL;
}

TL_UP(API) int TL(problem_find)(const char *name)
{
	int k;

	for (k = 0; name && k < TL_NTYPES; k++)
		if (strcmp(tl_types[k].info.name, name) == 0)
			return k;
	return -1;
}

/* One call's problem: sizes and strides by index id. */
struct tl_problem {
	int64_t size[TL_MAX_INDICES];
	int64_t stride[3][TL_MAX_INDICES]; /* C, A, B */
	int64_t extent_c;		   /* elements C spans (0: C has none) */
	int packed;			   /* every stride that matters is the packed one */
	int empty;			   /* an index has size 0: no kernel (tl_empty) */
};

/* *r = a * b for a, b >= 0; 0 if that overflows int64_t (never wraps). */
static int tl_mul(int64_t a, int64_t b, int64_t *r)
{
	if (a && b > INT64_MAX / a)
		return 0;
	*r = a * b;
	return 1;
}

static const char *const tl_tensor_name[3] = {"C", "A", "B"};

/* A tensor's strides: given (in the order its indices are written) or
 * packed; checks that C's elements do not share addresses.  Sizes and
 * strides are 64-bit throughout; a layout whose elements or bytes do not
 * fit in int64_t is refused (EINVAL), so no index can wrap. */
static TL_STATUS tl_strides(const struct tl_type *T, struct tl_problem *p, int t,
			    const size_t *given)
{
	const struct TL(problem_info) *in = &T->info;
	int64_t s = 1, extent = 1, term;
	int k;

	for (k = 0; k < in->rank[t]; k++) {
		int id = in->packed_order[t][k];

		p->stride[t][id] = s;
		if (!tl_mul(s, p->size[id] ? p->size[id] : 1, &s)) {
			if (!given)
				goto out_too_big;
			p->packed = 0; /* the given strides cannot be the packed ones */
			break;
		}
	}
	for (k = 0; given && k < in->rank[t]; k++) {
		int id = in->indices[t][k];

		if (given[k] > (size_t)INT64_MAX) {
			tl_set_error("stride %llu of %s (index '%s') is out of range",
				     (unsigned long long)given[k], tl_tensor_name[t],
				     in->index_names[id]);
			return TL_UP(EINVAL);
		}
		if (p->size[id] > 1 && (int64_t)given[k] != p->stride[t][id])
			p->packed = 0;
		p->stride[t][id] = (int64_t)given[k];
	}
	for (k = 0; k < in->rank[t]; k++)
		if (p->size[in->indices[t][k]] == 0)
			return TL_UP(OK); /* no elements: nothing to span or share */
	/* the elements the tensor spans, and their bytes, must fit */
	for (k = 0; k < in->rank[t]; k++) {
		int id = in->indices[t][k];

		if (!tl_mul(p->size[id] - 1, p->stride[t][id], &term) || term > INT64_MAX - extent)
			goto out_too_big;
		extent += term;
	}
	if (!tl_mul(extent, (int64_t)tl_elem_bytes(in->type), &term))
		goto out_too_big;
	if (!given)
		return TL_UP(OK);
	if (t == 0) {
		/* sufficient for no aliasing: by increasing stride, each dimension
		 * steps over everything the faster ones span */
		int used[TL_MAX_INDICES] = {0}, n;
		int64_t span = 0;

		for (n = 0; n < in->rank[0]; n++) {
			int best = -1, j, id;

			for (j = 0; j < in->rank[0]; j++) {
				id = in->indices[0][j];
				if (!used[j] && p->size[id] > 1 &&
				    (best < 0 ||
				     p->stride[0][id] < p->stride[0][in->indices[0][best]]))
					best = j;
			}
			if (best < 0)
				break;
			used[best] = 1;
			id = in->indices[0][best];
			if (p->stride[0][id] <= span) {
				tl_set_error("the strides of C let two elements share an address "
					     "(index '%s', stride %lld)",
					     in->index_names[id], (long long)p->stride[0][id]);
				return TL_UP(EINVAL);
			}
			span += (p->size[id] - 1) * p->stride[0][id];
		}
	}
	return TL_UP(OK);

out_too_big:
	tl_set_error("%s spans more than 2^63 elements or bytes with these sizes and strides",
		     tl_tensor_name[t]);
	return TL_UP(EINVAL);
}

static TL_STATUS tl_problem_make(const struct tl_type *T, const size_t *sizes, const size_t *sc,
				 const size_t *sa, const size_t *sb, struct tl_problem *p)
{
	const size_t *given[3] = {sc, sa, sb};
	TL_STATUS st;
	int id, t, k;

	memset(p, 0, sizeof(*p));
	p->packed = 1;
	if (!sizes) {
		tl_set_error("no sizes given");
		return TL_UP(EINVAL);
	}
	for (id = 0; id < T->info.num_indices; id++) {
		if (sizes[id] > (size_t)INT64_MAX / 2) {
			tl_set_error("size %lu of index '%s' is out of range",
				     (unsigned long)sizes[id], T->info.index_names[id]);
			return TL_UP(EINVAL);
		}
		p->size[id] = (int64_t)sizes[id];
		p->empty |= sizes[id] == 0;
	}
	for (t = 0; t < 3; t++) {
		st = tl_strides(T, p, t, given[t]);
		if (st)
			return st;
	}
	p->extent_c = 1;
	for (k = 0; k < T->info.rank[0] && p->extent_c; k++) {
		id = T->info.indices[0][k];
		p->extent_c = p->size[id] ? p->extent_c + (p->size[id] - 1) * p->stride[0][id] : 0;
	}
	/* the GlobalSplitU workspace: one C per split, in SCALAR_T */
	for (k = 0; k < T->nkernels; k++) {
		int64_t ws;

		if (T->kernels[k].plan.gsu > 1 &&
		    (!tl_mul(p->extent_c, (int64_t)abi_value_bytes(T->info.type), &ws) ||
		     !tl_mul(ws, T->kernels[k].plan.gsu, &ws))) {
			tl_set_error("the GlobalSplitU workspace of C would span more than 2^63 "
				     "bytes with these sizes and strides");
			return TL_UP(EINVAL);
		}
	}
	return TL_UP(OK);
}

/* ---- empty problems ---------------------------------------------------------- */

/* C = beta * C over C's elements in buf (p->extent_c elements laid out by
 * C's strides; the offsets between them are left as they are).  beta NULL
 * or 0: C is not read, its elements become 0. */
static void tl_scale_host(const struct tl_type *T, const struct tl_problem *p, const double *beta,
			  void *buf)
{
	const struct TL(problem_info) *in = &T->info;
	int cplx = in->type == 'c' || in->type == 'z', k;
	double br = beta ? beta[0] : 0, bi = beta && cplx ? beta[1] : 0;
	int64_t idx[TL_MAX_INDICES] = {0}, off = 0;

	for (;;) {
		double re = 0, im = 0;

		if (br != 0 || bi != 0) {
			tl_elem_get(in->type, buf, off, &re, &im);
			tl_elem_set(in->type, buf, off, br * re - bi * im, br * im + bi * re);
		} else {
			tl_elem_set(in->type, buf, off, 0, 0);
		}
		/* the next element: C's indices as an odometer */
		for (k = 0; k < in->rank[0]; k++) {
			int id = in->indices[0][k];

			off += p->stride[0][id];
			if (++idx[k] < p->size[id])
				break;
			off -= idx[k] * p->stride[0][id];
			idx[k] = 0;
		}
		if (k == in->rank[0])
			return;
	}
}

/* ---- devices and their logic ------------------------------------------------- */

/* What the library knows of a device. */
struct tl_ident {
	char name[256], vendor[256], arch[128];
};

static int tl_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The logic for this device: by name (the logic's device, then Tensile's
 * DeviceNames), then architecture, then vendor, then the one marked
 * default, else the last. */
static const struct tl_variant *tl_match(const struct tl_type *T, const struct tl_ident *id,
					 char *why, size_t len)
{
	int v, k;

	for (v = 0; v < T->nvariants; v++) {
		const struct tl_variant *x = &T->variants[v];

		if (tl_streq(x->device_name, id->name)) {
			snprintf(why, len, "device '%s' by name", id->name);
			return x;
		}
		for (k = 0; k < x->ndevice_names; k++)
			if (tl_streq(x->device_names[k], id->name)) {
				snprintf(why, len, "device '%s' by DeviceNames", id->name);
				return x;
			}
	}
	for (v = 0; v < T->nvariants; v++)
		if (id->arch[0] && tl_streq(T->variants[v].architecture, id->arch)) {
			snprintf(why, len, "architecture '%s' (logic tuned on '%s')", id->arch,
				 T->variants[v].device_name ? T->variants[v].device_name : "?");
			return &T->variants[v];
		}
	for (v = 0; v < T->nvariants; v++)
		if (id->vendor[0] && tl_streq(T->variants[v].vendor, id->vendor)) {
			snprintf(why, len, "vendor '%s' (logic tuned on '%s')", id->vendor,
				 T->variants[v].device_name ? T->variants[v].device_name : "?");
			return &T->variants[v];
		}
	for (v = 0; v < T->nvariants; v++)
		if (T->variants[v].is_default) {
			snprintf(why, len, "the default logic");
			return &T->variants[v];
		}
	snprintf(why, len, "no logic for '%s': the last one", id->name);
	return T->nvariants ? &T->variants[T->nvariants - 1] : NULL;
}

/* The choice for a problem on a device: the call's context and device,
 * the logic variant and solution. */
struct tl_pick {
	uintptr_t ctx;
	struct tl_device *dev;
	const struct tl_variant *var;
	int sol;    /* the logic's solution */
	int kernel; /* the type's kernel */
	char why[512];
};

/* The launch of kernel K of type T for problem p, as tcx's plan_launch
 * makes it (abi.c), with work sizes within every device's limits. */
static TL_STATUS tl_launch_make(const struct tl_type *T, const struct tl_kernel *K,
				const struct tl_problem *p, const double *alpha, const double *beta,
				struct abi_launch *L)
{
	const struct abi_sizes s = {.size = p->size,
				    .stride_p = p->stride[T->p_is_a ? 1 : 2],
				    .stride_q = p->stride[T->p_is_a ? 2 : 1],
				    .stride_c = p->stride[0], .extent_c = p->extent_c};
	int64_t cap[3] = {0, 0, 0}, rcap[3] = {0, 0, 0};

	abi_launch_make(&K->plan, &s, T->info.type, alpha, beta, L);
	if (abi_grid(L->args.groups, L->local, cap, L->global) == ABI_FITS &&
	    (K->plan.gsu <= 1 || abi_grid(L->rgroups, L->rlocal, rcap, L->rglobal) == ABI_FITS))
		return TL_UP(OK);
	tl_set_error("%s: kernel %s: too many work-groups for a launch", T->info.name, K->name);
	return TL_UP(ELAUNCH);
}

/* ---- devices and kernels, the part every backend shares ----------------------------- */

/* A device the library has seen: its handle (a cl_device_id, CUdevice or
 * hipDevice_t), what it is called, and (CUDA, HIP) what the compiler is
 * given for it. */
struct tl_device {
	uintptr_t handle;
	struct tl_ident ident;
	char target[256];
	struct tl_device *next;
};

static struct tl_device *tl_devices;

/* What each backend defines, the OpenCL one below and runtime_gpu.c: struct
 * tl_code (a kernel built for a context and device) and
 *   tl_describe       names device d (its ident and target);
 *   tl_current        the context (OpenCL: the queue's; CUDA: the calling
 *                     thread's; HIP: its device) and device of a call;
 *   tl_code_build     builds kernel K, layout `generic`, for a context and
 *                     device, with tl_lock held (tl_set_error_locked says why);
 *   tl_code_free      frees what tl_code_build made;
 *   tl_run            launches a built kernel, and the GlobalSplitU reduction;
 *   tl_copy           copies C to the host and back (empty problems);
 *   tl_compile_target compiles kernel K for a named target, with no device. */
static void tl_describe(struct tl_device *d);

/* Device `handle`, described on first sight; tl_lock held.  NULL when out
 * of memory. */
static struct tl_device *tl_device_find(uintptr_t handle)
{
	struct tl_device *d;

	for (d = tl_devices; d; d = d->next)
		if (d->handle == handle)
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->handle = handle;
	tl_describe(d);
	d->next = tl_devices;
	tl_devices = d;
	return d;
}

#if TL_WITH_CUDA || TL_WITH_HIP
#include "runtime_gpu.c"
#else
/* ---- OpenCL ------------------------------------------------------------------------ */

#include "clerr.h"

/* A program, and the context it holds. */
struct tl_code {
	cl_context ctx;
	cl_program prog;
};

/* Names the device as tcx does (clerr.h). */
static void tl_describe(struct tl_device *dev)
{
	struct tl_ident *id = &dev->ident;

	tl_cl_ident((cl_device_id)dev->handle, id->name, sizeof(id->name), id->vendor,
		    sizeof(id->vendor), id->arch, sizeof(id->arch));
}

/* The queue's context and device. */
static TL_STATUS tl_current(TL(queue) queue, uintptr_t *ctx, struct tl_device **out)
{
	cl_command_queue q = (cl_command_queue)queue;
	cl_context c;
	cl_device_id dev;
	cl_int rc;

	if (!q) {
		tl_set_error("no queue given");
		return TL_UP(EINVAL);
	}
	rc = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof(c), &c, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof(dev), &dev, NULL);
	if (rc != CL_SUCCESS) {
		tl_set_error("not an OpenCL command queue: %s (%d)", tl_cl_error(rc), (int)rc);
		return TL_UP(EINVAL);
	}
	*ctx = (uintptr_t)c;
	pthread_mutex_lock(&tl_lock);
	*out = tl_device_find((uintptr_t)dev);
	pthread_mutex_unlock(&tl_lock);
	return *out ? TL_UP(OK) : TL_UP(ENOMEM);
}

static TL_STATUS tl_code_build(uintptr_t context, const struct tl_device *d,
			       const struct tl_kernel *K, int generic, struct tl_code *out)
{
	cl_context ctx = (cl_context)context;
	cl_device_id dev = (cl_device_id)d->handle;
	const char *srcs[2] = {(const char *)K->prelude[0][generic],
			       (const char *)tl_template_opencl};
	size_t lens[2] = {K->prelude_len[0][generic], sizeof(tl_template_opencl)};
	cl_int rc;
	cl_program prog;
	cl_device_type type = 0;

	prog = clCreateProgramWithSource(ctx, 2, srcs, lens, &rc);
	if (rc != CL_SUCCESS) {
		tl_set_error_locked("cannot create a program for %s: %s (%d)", K->name,
				    tl_cl_error(rc), (int)rc);
		return rc == CL_OUT_OF_HOST_MEMORY ? TL_UP(ENOMEM) : TL_UP(EDEVICE);
	}
	/* GPUs get the template's second main loop for interior tiles; CPU
	 * devices do without it (TCX_SPLIT_LOOP in tcx(1)) */
	if (clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof(type), &type, NULL) != CL_SUCCESS)
		type = 0;
	rc = clBuildProgram(prog, 1, &dev,
			    (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) ?
				    TL_OPENCL_OPTIONS " -DSPLIT_LOOP=1" :
				    TL_OPENCL_OPTIONS,
			    NULL, NULL);
	if (rc != CL_SUCCESS) {
		size_t n = 0, head;

		head = (size_t)snprintf(tl_error, sizeof(tl_error),
					"kernel %s does not build (%s, %d):\n", K->name,
					tl_cl_error(rc), (int)rc);
		if (head < sizeof(tl_error) &&
		    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof(tl_error) - head,
					  tl_error + head, &n) != CL_SUCCESS)
			tl_error[head] = '\0';
		clReleaseProgram(prog);
		return TL_UP(EBUILD);
	}
	clRetainContext(ctx);
	out->ctx = ctx;
	out->prog = prog;
	return TL_UP(OK);
}

static void tl_code_free(struct tl_code *c)
{
	clReleaseProgram(c->prog);
	clReleaseContext(c->ctx);
}

static TL_STATUS tl_cl_fail(const char *what, const char *kernel, cl_int rc)
{
	tl_set_error("%s (kernel %s): %s (%d)", what, kernel, tl_cl_error(rc), (int)rc);
	if (rc == CL_OUT_OF_HOST_MEMORY)
		return TL_UP(ENOMEM);
	return TL_UP(ELAUNCH);
}

/* Sets kernel k's arguments 0..n): value[i], of size[i] bytes, and
 * enqueues it over global (local) work-items. */
static cl_int tl_cl_enqueue(cl_command_queue q, cl_kernel k, int n, const void *const value[],
			    const size_t size[], const size_t global[3], const size_t local[3])
{
	cl_int rc = CL_SUCCESS;
	int i;

	for (i = 0; i < n && rc == CL_SUCCESS; i++)
		rc = clSetKernelArg(k, (cl_uint)i, size[i], value[i]);
	if (rc == CL_SUCCESS)
		rc = clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL);
	return rc;
}

static TL_STATUS tl_run(TL(queue) queue, uintptr_t ctx, struct tl_code *code,
			const struct tl_type *T, const struct tl_kernel *K,
			struct abi_launch *L, TL(mem) cm, TL(mem) am, TL(mem) bm)
{
	cl_command_queue q = (cl_command_queue)queue;
	cl_kernel k = NULL;
	cl_mem c = (cl_mem)cm, a = (cl_mem)am, b = (cl_mem)bm;
	cl_mem ws = NULL, P = T->p_is_a ? a : b, Q = T->p_is_a ? b : a;
	/* the arguments in common/abi.h's order: tcx_contract's (the
	 * workspace C where there is none), and tcx_gsu_reduce's */
	const void *value[TCX_PARAMS] = {&c, &P, &Q, &c, &L->args, &L->alpha, &L->beta};
	const size_t mem = sizeof(cl_mem), args = sizeof(L->args), sb = L->scalar_bytes;
	const size_t size[TCX_PARAMS] = {mem, mem, mem, mem, args, sb, sb};
	const void *rvalue[TCX_REDUCE_PARAMS] = {&c, &ws, &L->args, &L->alpha, &L->beta, &L->total};
	const size_t rsize[TCX_REDUCE_PARAMS] = {mem, mem, args, sb, sb, sizeof(L->total)};
	cl_int rc;
	TL_STATUS st = TL_UP(OK);

	if (L->ws_bytes) {
		ws = clCreateBuffer((cl_context)ctx, CL_MEM_READ_WRITE, L->ws_bytes, NULL, &rc);
		if (rc != CL_SUCCESS)
			return tl_cl_fail("cannot allocate the GlobalSplitU workspace", K->name,
					  rc);
		value[TCX_PARAM_W] = &ws;
	}
	k = clCreateKernel(code->prog, TCX_CONTRACT_NAME, &rc);
	if (rc != CL_SUCCESS) {
		st = tl_cl_fail("cannot create the kernel", K->name, rc);
		goto out;
	}
	rc = tl_cl_enqueue(q, k, TCX_PARAMS, value, size, L->global, L->local);
	if (rc != CL_SUCCESS) {
		st = tl_cl_fail("cannot launch", K->name, rc);
		goto out;
	}
	if (!ws)
		goto out;
	clReleaseKernel(k);
	k = clCreateKernel(code->prog, TCX_REDUCE_NAME, &rc);
	if (rc != CL_SUCCESS) {
		st = tl_cl_fail("cannot create the reduction kernel", K->name, rc);
		goto out;
	}
	rc = tl_cl_enqueue(q, k, TCX_REDUCE_PARAMS, rvalue, rsize, L->rglobal, L->rlocal);
	if (rc != CL_SUCCESS)
		st = tl_cl_fail("cannot launch the GlobalSplitU reduction", K->name, rc);
out:
	if (k)
		clReleaseKernel(k);
	/* OpenCL keeps the workspace until the kernels that use it are done */
	if (ws)
		clReleaseMemObject(ws);
	return st;
}

/* Copies C to the host (to_device 0) or back, blocking: after the work
 * queued before it, and done when it returns. */
static TL_STATUS tl_copy(TL(queue) queue, TL(mem) c, void *buf, size_t bytes, int to_device)
{
	cl_command_queue q = (cl_command_queue)queue;
	cl_int rc = to_device ? clEnqueueWriteBuffer(q, (cl_mem)c, CL_TRUE, 0, bytes, buf, 0,
						     NULL, NULL)
			      : clEnqueueReadBuffer(q, (cl_mem)c, CL_TRUE, 0, bytes, buf, 0, NULL,
						    NULL);

	if (rc == CL_SUCCESS)
		return TL_UP(OK);
	tl_set_error("cannot %s C for an empty sum: %s (%d)", to_device ? "write" : "read",
		     tl_cl_error(rc), (int)rc);
	return rc == CL_OUT_OF_HOST_MEMORY ? TL_UP(ENOMEM) : TL_UP(EDEVICE);
}

static TL_STATUS tl_compile_target(const char *target, const struct tl_kernel *K, int generic)
{
	(void)K;
	(void)generic;
	tl_set_error("an OpenCL library builds for the device behind a queue: no target '%s'",
		     target);
	return TL_UP(EUNSUPPORTED);
}
#endif /* OpenCL */

/* A kernel built for a context and device, kept until TL(release). */
struct tl_module {
	uintptr_t ctx;
	const struct tl_device *dev;
	const struct tl_kernel *kernel;
	int generic;
	struct tl_code code;
	struct tl_module *next;
};

static struct tl_module *tl_modules;

/* Kernel K (layout `generic`) for this context and device: built on first
 * use. */
static TL_STATUS tl_module_get(uintptr_t ctx, const struct tl_device *d, const struct tl_kernel *K,
			       int generic, struct tl_module **out)
{
	struct tl_module *m;
	TL_STATUS st = TL_UP(OK);

	pthread_mutex_lock(&tl_lock);
	for (m = tl_modules; m; m = m->next)
		if (m->ctx == ctx && m->dev == d && m->kernel == K && m->generic == generic)
			break;
	if (!m) {
		m = calloc(1, sizeof(*m));
		st = m ? tl_code_build(ctx, d, K, generic, &m->code) : TL_UP(ENOMEM);
		if (st) {
			free(m);
			m = NULL;
		} else {
			m->ctx = ctx;
			m->dev = d;
			m->kernel = K;
			m->generic = generic;
			m->next = tl_modules;
			tl_modules = m;
		}
	}
	*out = m;
	pthread_mutex_unlock(&tl_lock);
	return st;
}

TL_UP(API) TL_STATUS TL(compile)(TL(queue) queue, const char *target)
{
	uintptr_t ctx = 0;
	struct tl_device *d = NULL;
	struct tl_module *m;
	int t, k, g;
	/* with a target, the compiler alone: no device, no driver needed */
	TL_STATUS st = target ? TL_UP(OK) : tl_current(queue, &ctx, &d);

	for (t = 0; t < TL_NTYPES && !st; t++)
		for (k = 0; k < tl_types[t].nkernels && !st; k++)
			for (g = 0; g < 2 && !st; g++)
				st = target ? tl_compile_target(target, &tl_types[t].kernels[k], g)
					    : tl_module_get(ctx, d, &tl_types[t].kernels[k], g, &m);
	return st;
}

TL_UP(API) void TL(release)(void)
{
	pthread_mutex_lock(&tl_lock);
	while (tl_modules) {
		struct tl_module *m = tl_modules;

		tl_modules = m->next;
		tl_code_free(&m->code);
		free(m);
	}
	while (tl_devices) {
		struct tl_device *d = tl_devices;

		tl_devices = d->next;
		free(d);
	}
	pthread_mutex_unlock(&tl_lock);
}

/* ---- the calls ------------------------------------------------------------------------ */

/* The problem of a call, and the choice for it on the queue's device. */
static TL_STATUS tl_prepare(int problem, TL(queue) queue, const size_t *sizes,
			    const size_t *strides_c, const size_t *strides_a,
			    const size_t *strides_b, struct tl_problem *p, struct tl_pick *pick)
{
	const struct tl_type *T;
	char dev_why[384], sel_why[512];
	TL_STATUS st;

	memset(pick, 0, sizeof(*pick));
	pick->sol = pick->kernel = -1;
	if (problem < 0 || problem >= TL_NTYPES) {
		tl_set_error("no problem type %d in this library", problem);
		return TL_UP(EINVAL);
	}
	T = &tl_types[problem];
	st = tl_problem_make(T, sizes, strides_c, strides_a, strides_b, p);
	if (!st)
		st = tl_current(queue, &pick->ctx, &pick->dev);
	if (st || p->empty) /* an empty problem runs no solution */
		return st;
	pick->var = tl_match(T, &pick->dev->ident, dev_why, sizeof(dev_why));
	if (!pick->var) {
		tl_set_error("the library has no logic for %s", T->info.name);
		return TL_UP(ENOSOLUTION);
	}
	pick->sol = sel_choose(&pick->var->sel, (enum sel_kind)pick->var->kind, p->size, sel_why,
			       sizeof(sel_why));
	snprintf(pick->why, sizeof(pick->why), "%.300s; %.200s", sel_why, dev_why);
	if (pick->sol < 0) {
		tl_set_error("%s: no solution can run these sizes (%s)", T->info.name, pick->why);
		return TL_UP(ENOSOLUTION);
	}
	pick->kernel = pick->var->kernel_of[pick->sol];
	return TL_UP(OK);
}

/* An empty problem (an index of size 0): no kernel, since there is nothing
 * to sum.  C has no elements (nothing to do), or a bound index of size 0
 * leaves C = beta * C, done through the host. */
static TL_STATUS tl_empty(TL(queue) queue, const struct tl_type *T, const struct tl_problem *p,
			  const double *beta, TL(mem) c)
{
	int cplx = T->info.type == 'c' || T->info.type == 'z';
	size_t bytes = (size_t)p->extent_c * tl_elem_bytes(T->info.type);
	void *buf;
	TL_STATUS st;

	if (!p->extent_c || (beta && beta[0] == 1 && (!cplx || beta[1] == 0)))
		return TL_UP(OK);
	if (!c) {
		tl_set_error("buffer C is missing");
		return TL_UP(EINVAL);
	}
	buf = malloc(bytes);
	if (!buf) {
		tl_set_error("out of host memory for C (%zu bytes)", bytes);
		return TL_UP(ENOMEM);
	}
	st = tl_copy(queue, c, buf, bytes, 0);
	if (!st) {
		tl_scale_host(T, p, beta, buf);
		st = tl_copy(queue, c, buf, bytes, 1);
	}
	free(buf);
	return st;
}

TL_UP(API)
TL_STATUS TL(query)(int problem, TL(queue) queue, const size_t *sizes, const size_t *strides_c,
		    const size_t *strides_a, const size_t *strides_b, struct TL(choice) * choice)
{
	struct tl_problem p;
	struct tl_pick pick;
	TL_STATUS st =
	    tl_prepare(problem, queue, sizes, strides_c, strides_a, strides_b, &p, &pick);

	if (!choice)
		return st ? st : TL_UP(EINVAL);
	memset(choice, 0, sizeof(*choice));
	choice->solution = -1;
	if (pick.var) {
		snprintf(choice->logic, sizeof(choice->logic), "%s", pick.var->logic);
		snprintf(choice->selector, sizeof(choice->selector), "%s",
			 sel_kind_name(pick.var->kind));
		snprintf(choice->why, sizeof(choice->why), "%s", pick.why);
	}
	if (st)
		return st;
	if (p.empty) {
		snprintf(choice->why, sizeof(choice->why),
			 "an index has size 0: no kernel runs (C = beta * C, or C has no "
			 "elements)");
		return TL_UP(OK);
	}
	choice->solution = pick.sol;
	choice->generic_strides = !p.packed;
	snprintf(choice->name, sizeof(choice->name), "%s",
		 tl_types[problem].kernels[pick.kernel].name);
	return TL_UP(OK);
}

TL_UP(API)
TL_STATUS TL(run)(int problem, TL(queue) queue, const size_t *sizes, const size_t *strides_c,
		  const size_t *strides_a, const size_t *strides_b, const double *alpha,
		  const double *beta, TL(mem) c, TL(mem) a, TL(mem) b)
{
	const struct tl_type *T;
	const struct tl_kernel *K;
	struct tl_problem p;
	struct tl_pick pick;
	struct tl_module *m;
	struct abi_launch L;
	TL_STATUS st;

	if (!alpha) {
		tl_set_error("alpha is missing");
		return TL_UP(EINVAL);
	}
	st = tl_prepare(problem, queue, sizes, strides_c, strides_a, strides_b, &p, &pick);
	if (st)
		return st;
	T = &tl_types[problem];
	if (p.empty)
		return tl_empty(queue, T, &p, beta, c);
	if (!c || !a || !b) {
		tl_set_error("a buffer is missing (C, A and B are needed)");
		return TL_UP(EINVAL);
	}
	K = &T->kernels[pick.kernel];
	st = tl_module_get(pick.ctx, pick.dev, K, !p.packed, &m);
	if (!st)
		st = tl_launch_make(T, K, &p, alpha, beta, &L);
	return st ? st : tl_run(queue, pick.ctx, &m->code, T, K, &L, c, a, b);
}

/* test_api_opencl.c - the device API of tcx.h on the first OpenCL device
 * (PoCL in CI): plans against the host reference with packed and strided
 * tensors, on the caller's queue and buffers, of the planner's choice, a
 * permuting (TTGT) one and a logic file's; a second plan compiles nothing;
 * the errors of execute; and 10,000 executes of a plan that allocate
 * nothing.
 *
 * The allocations counted are tcx's own: this test is linked with
 * -Wl,--wrap for malloc, calloc, realloc, strdup, strndup, aligned_alloc
 * and posix_memalign (tests/CMakeLists.txt), which routes every call of
 * them in tcx's statically linked objects through the counters below.
 * The OpenCL runtime's own allocations (PoCL makes a command node per
 * enqueue) are outside tcx and not counted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#include "api/api.h"
#include "check.h"
#include "tcx.h"

static unsigned long allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	allocs++;
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocs++;
	return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	allocs++;
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	allocs++;
	return __real_strndup(s, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	allocs++;
	return __real_aligned_alloc(a, n);
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
	allocs++;
	return __real_posix_memalign(p, a, n);
}

static void fill(float *x, size_t n, unsigned seed)
{
	for (size_t k = 0; k < n; k++) {
		seed = seed * 1103515245u + 12345u;
		x[k] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

static double max_diff(const float *x, const float *y, size_t n)
{
	double m = 0;

	for (size_t k = 0; k < n; k++)
		m = fmax(m, fabs((double)x[k] - y[k]));
	return m;
}

struct ocl {
	cl_context ctx;
	cl_command_queue q;
};

/* A buffer of the device's context holding `bytes` of x (NULL: zeros). */
static cl_mem buffer(const struct ocl *o, const void *x, size_t bytes)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);

	if (m && x)
		clEnqueueWriteBuffer(o->q, m, CL_TRUE, 0, bytes, x, 0, NULL, NULL);
	return m;
}

/* expr with one size per index id, planned with packed tensors and run on
 * the caller's queue and through execute_host, compared with the
 * reference.  An expression of one input passes NULL for B. */
static void contract_case(struct tcx_device *dev, const struct ocl *o, const char *expr,
			  const int64_t *sizes)
{
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	float *h[3] = { NULL, NULL, NULL }, *want = NULL, *got = NULL;
	size_t bytes[3], nc;
	cl_mem m[3] = { NULL, NULL, NULL };
	const double alpha = 0.75, beta = -0.5;
	const bool one = !strchr(expr, ',') && !strchr(expr, '*');
	char what[320];

	CHECK(tcx_contraction_parse(expr, TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, NULL, &plan, &err) == TCX_OK,
		  "%s: %s", expr, err.msg);
	if (!plan)
		goto out;
	tcx_plan_describe(plan, what, sizeof(what));
	fprintf(stderr, "%s: %s\n", expr, what);
	for (int t = 0; t < 3; t++) {
		bytes[t] = tcx_plan_bytes(plan, "ABC"[t]);
		if (one && t == 1)
			continue;
		h[t] = calloc(1, bytes[t]);
		fill(h[t], bytes[t] / 4, 7u + (unsigned)t);
		m[t] = buffer(o, h[t], bytes[t]);
	}
	nc = bytes[2] / 4;
	want = calloc(1, bytes[2]);
	got = calloc(1, bytes[2]);
	memcpy(want, h[2], bytes[2]);
	CHECK(tcx_contraction_reference(c, sizes, h[0], h[1], want, &alpha, &beta, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_execute(plan, o->q, m[0], m[1], m[2], &alpha, &beta, &err) == TCX_OK,
		  "%s", err.msg);
	clEnqueueReadBuffer(o->q, m[2], CL_TRUE, 0, bytes[2], got, 0, NULL, NULL);
	CHECK_MSG(max_diff(got, want, nc) < 1e-4, "%s: off by %g", expr, max_diff(got, want, nc));
	memcpy(got, h[2], bytes[2]);
	CHECK(tcx_plan_execute_host(plan, h[0], h[1], got, &alpha, &beta, &err) == TCX_OK);
	CHECK_MSG(max_diff(got, want, nc) < 1e-4, "%s host: off by %g", expr,
		  max_diff(got, want, nc));
	if (one) { /* B is the plan's: one of the caller's is refused */
		CHECK(tcx_plan_execute(plan, o->q, m[0], m[0], m[2], NULL, NULL, &err) ==
		      TCX_EINVAL);
		CHECK_MSG(strstr(err.msg, "pass NULL for it"), "%s", err.msg);
		CHECK(tcx_plan_execute_host(plan, h[0], h[0], got, NULL, NULL, &err) ==
		      TCX_EINVAL);
	}
out:
	for (int t = 0; t < 3; t++) {
		if (m[t])
			clReleaseMemObject(m[t]);
		free(h[t]);
	}
	free(want);
	free(got);
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
}

/* A GEMM on strided tensors: A column-major (NumPy's a.T of a packed
 * array), C with rows padded; compared with the packed reference. */
static void strided_gemm(struct tcx_device *dev)
{
	enum { I = 9, K = 7, J = 5, LD = K + 3 };
	const int64_t sizes[3] = { K, I, J }; /* ij,jk->ik: C's k, i (fastest first), then j */
	const int64_t sa[2] = { 1, I }, sc[2] = { LD, 1 };
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	float a[I * J], at[I * J], b[J * K], cp[I * K], want[I * K], cs[I * LD];

	fill(a, I * J, 3);
	fill(b, J * K, 4);
	fill(cp, I * K, 5);
	for (int i = 0; i < I; i++)
		for (int j = 0; j < J; j++)
			at[i + j * I] = a[i * J + j];
	for (int k = 0; k < I * LD; k++)
		cs[k] = 99;
	for (int i = 0; i < I; i++)
		for (int k = 0; k < K; k++)
			cs[i * LD + k] = cp[i * K + k];
	memcpy(want, cp, sizeof(cp));
	CHECK(tcx_contraction_parse("ij,jk->ik", TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK(tcx_contraction_reference(c, sizes, a, b, want, NULL, NULL, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_create(dev, c, sizes, sa, NULL, sc, NULL, &plan, &err) == TCX_OK, "%s",
		  err.msg);
	CHECK(tcx_plan_bytes(plan, 'C') == ((I - 1) * LD + K) * sizeof(float));
	CHECK(plan && tcx_plan_execute_host(plan, at, b, cs, NULL, NULL, &err) == TCX_OK);
	for (int i = 0; i < I; i++)
		for (int k = 0; k < LD; k++)
			if (k < K)
				CHECK_MSG(fabs(cs[i * LD + k] - want[i * K + k]) < 1e-5,
					  "C[%d,%d] %g, not %g", i, k, cs[i * LD + k],
					  want[i * K + k]);
			else if (i < I - 1)
				CHECK_MSG(cs[i * LD + k] == 99, "padding C[%d,%d] written", i, k);
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
}

/* A transpose of one input: the plan runs it as one permute of A into C
 * (plan/planner.h's plan_direct) for alpha 1 and beta 0, and through the
 * contraction kernel for other scalars; both agree with the reference. */
static void transpose_case(struct tcx_device *dev)
{
	const int64_t sizes[3] = { 5, 1, 7 };
	const double alpha = -2, beta = 0.5;
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	float a[35], got[35], want[35];
	char what[320];

	fill(a, 35, 31);
	fill(got, 35, 32);
	memcpy(want, got, sizeof(want));
	CHECK(tcx_contraction_parse("ijk->kji", TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, NULL, &plan, &err) == TCX_OK,
		  "%s", err.msg);
	if (!plan)
		goto out;
	tcx_plan_describe(plan, what, sizeof(what));
	CHECK_MSG(strstr(what, "a permute of A into C"), "%s", what);
	CHECK(tcx_plan_execute_host(plan, a, NULL, got, NULL, NULL, &err) == TCX_OK);
	CHECK(tcx_contraction_reference(c, sizes, a, NULL, want, NULL, NULL, &err) == TCX_OK);
	CHECK_MSG(max_diff(got, want, 35) == 0, "the permute is off by %g", max_diff(got, want, 35));
	CHECK(tcx_plan_execute_host(plan, a, NULL, got, &alpha, &beta, &err) == TCX_OK);
	CHECK(tcx_contraction_reference(c, sizes, a, NULL, want, &alpha, &beta, &err) == TCX_OK);
	CHECK_MSG(max_diff(got, want, 35) < 1e-5, "the kernel is off by %g",
		  max_diff(got, want, 35));
out:
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
}

/* A plan for an accuracy (tcx_plan_create_accuracy): measured at create
 * and described with its arithmetic and error; one no arithmetic of the
 * type meets is refused with the error measured; a bad accuracy is
 * refused before anything runs. */
static void accuracy_case(struct tcx_device *dev)
{
	const int64_t sizes[3] = { 24, 16, 33 };
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	char what[320];

	CHECK(tcx_contraction_parse("ij,jk->ik", TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_create_accuracy(dev, c, sizes, NULL, NULL, NULL, NULL, 1e-5, &plan,
					   &err) == TCX_OK,
		  "%s", err.msg);
	if (plan) {
		tcx_plan_describe(plan, what, sizeof(what));
		CHECK_MSG(strstr(what, "(fp32-simt, relative error ") && strstr(what, "within 1e-05)"),
			  "%s", what);
	}
	tcx_plan_destroy(plan);
	plan = NULL;
	CHECK(tcx_plan_create_accuracy(dev, c, sizes, NULL, NULL, NULL, NULL, 1e-30, &plan, &err) ==
	      TCX_EMISMATCH);
	CHECK_MSG(plan == NULL && strstr(err.msg, "above the accuracy 1e-30 asked even in fp32-simt"),
		  "%s", err.msg);
	CHECK(tcx_plan_create_accuracy(dev, c, sizes, NULL, NULL, NULL, NULL, -1, &plan, &err) ==
	      TCX_EINVAL);
	CHECK(tcx_plan_create_accuracy(dev, c, sizes, NULL, NULL, NULL, NULL, NAN, &plan, &err) ==
	      TCX_EINVAL);
	tcx_contraction_destroy(c);
}

/* A plan that permutes its operands first (TTGT, forced on PoCL with
 * $TCX_PLANNER=ttgt as for the commands): its permute kernels and copies
 * are made by create, so that its executes allocate nothing either. */
static void ttgt_case(struct tcx_device *dev, const struct ocl *o)
{
	const int64_t sizes[5] = { 5, 6, 7, 4, 3 };
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	float *h[3] = { NULL, NULL, NULL }, *want = NULL, *got = NULL;
	cl_mem m[3] = { NULL, NULL, NULL };
	size_t bytes[3], nc;
	const double beta = 0.5;
	unsigned long n0;
	char what[320];

	setenv("TCX_PLANNER", "ttgt", 1);
	CHECK(tcx_contraction_parse("abcd,ebd->aec", TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, NULL, &plan, &err) == TCX_OK,
		  "%s", err.msg);
	unsetenv("TCX_PLANNER");
	if (!plan)
		goto out;
	tcx_plan_describe(plan, what, sizeof(what));
	fprintf(stderr, "abcd,ebd->aec with TCX_PLANNER=ttgt: %s\n", what);
	CHECK_MSG(strstr(what, "permuted"), "%s", what);
	for (int t = 0; t < 3; t++) {
		bytes[t] = tcx_plan_bytes(plan, "ABC"[t]);
		h[t] = calloc(1, bytes[t]);
		fill(h[t], bytes[t] / 4, 21u + (unsigned)t);
		m[t] = buffer(o, h[t], bytes[t]);
	}
	nc = bytes[2] / 4;
	want = calloc(1, bytes[2]);
	got = calloc(1, bytes[2]);
	memcpy(want, h[2], bytes[2]);
	/* C = A B + 0.5 C, ten times */
	for (int k = 0; k < 10; k++)
		CHECK(tcx_contraction_reference(c, sizes, h[0], h[1], want, NULL, &beta, &err) ==
		      TCX_OK);
	n0 = allocs;
	for (int k = 0; k < 10; k++)
		CHECK_MSG(tcx_plan_execute(plan, o->q, m[0], m[1], m[2], NULL, &beta, &err) ==
				  TCX_OK,
			  "%s", err.msg);
	CHECK_MSG(allocs == n0, "%lu allocations in 10 executes", allocs - n0);
	clEnqueueReadBuffer(o->q, m[2], CL_TRUE, 0, bytes[2], got, 0, NULL, NULL);
	CHECK_MSG(max_diff(got, want, nc) < 1e-3, "off by %g", max_diff(got, want, nc));
out:
	for (int t = 0; t < 3; t++) {
		if (m[t])
			clReleaseMemObject(m[t]);
		free(h[t]);
	}
	free(want);
	free(got);
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
}

/* A plan of a logic file's solution: the one it selects, checked against
 * the reference; refused for sizes it selects nothing for and for another
 * contraction. */
static void logic_plans(struct tcx_device *dev)
{
	const char *data = getenv("TCX_TEST_DATA");
	const int64_t sizes[3] = { 16, 16, 16 }, other[3] = { 8, 8, 8 };
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL, *gemm = NULL;
	struct tcx_plan *plan = NULL, *none = NULL;
	float a[256], b[256], cc[256], want[256];
	char path[1024], what[320];

	if (!data) {
		fprintf(stderr, "no TCX_TEST_DATA: the logic plans are not tested\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/bench/gemm-logic.yaml", data);
	CHECK(tcx_contraction_parse("C[ij]=A[ik]*B[jk]", TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK_MSG(tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, path, &plan, &err) == TCX_OK,
		  "%s", err.msg);
	tcx_plan_describe(plan, what, sizeof(what));
	CHECK_MSG(strstr(what, "solution 0: ") && strstr(what, "TT16x4"), "%s", what);
	fill(a, 256, 11);
	fill(b, 256, 12);
	memset(cc, 0, sizeof(cc));
	memset(want, 0, sizeof(want));
	CHECK(tcx_contraction_reference(c, sizes, a, b, want, NULL, NULL, &err) == TCX_OK);
	CHECK(plan && tcx_plan_execute_host(plan, a, b, cc, NULL, NULL, &err) == TCX_OK);
	CHECK_MSG(max_diff(cc, want, 256) < 1e-4, "off by %g", max_diff(cc, want, 256));

	CHECK(tcx_plan_create(dev, c, other, NULL, NULL, NULL, path, &none, &err) == TCX_EINVAL);
	CHECK_MSG(strstr(err.msg, "selects no solution for these sizes"), "%s", err.msg);
	CHECK(tcx_contraction_parse("ij,jk->ik", TCX_DTYPE_S, &gemm, &err) == TCX_OK);
	CHECK(tcx_plan_create(dev, gemm, sizes, NULL, NULL, NULL, path, &none, &err) ==
	      TCX_EINVAL);
	CHECK_MSG(strstr(err.msg, "is for problem type Cij_Aik_Bjk_S, not"), "%s", err.msg);
	CHECK(none == NULL);
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
	tcx_contraction_destroy(gemm);
}

int main(void)
{
	static const char *const gemm = "ij,jk->ik";
	struct tcx_error err = { 0 };
	struct tcx_device *dev = NULL, *again = NULL;
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL, *second = NULL;
	struct device_cache_stats before, after;
	const int64_t gsz[3] = { 8, 8, 8 }; /* k, i, then the summed j */
	float a[64], b[64], cc[64], want[64];
	cl_mem m[3] = { NULL, NULL, NULL }, small = NULL;
	struct ocl o = { NULL, NULL };
	unsigned long n0;
	cl_int rc;
	int runs = 10000;

	if (tcx_device_open("opencl:0:0", &dev, &err) != TCX_OK)
		SKIP("no OpenCL device: %s", err.msg);
	CHECK(tcx_device_open(tcx_device_id(dev), &again, &err) == TCX_OK);
	CHECK_MSG(again == dev, "one id opened twice is one device");
	tcx_device_close(again);
	o.ctx = tcx_device_native(dev, TCX_NATIVE_CONTEXT);
	CHECK(o.ctx != NULL && tcx_device_native(dev, TCX_NATIVE_QUEUE) != NULL);
	o.q = clCreateCommandQueue(o.ctx, tcx_device_native(dev, TCX_NATIVE_DEVICE), 0, &rc);
	CHECK(o.q != NULL);
	if (!o.ctx || !o.q)
		goto out;

	/* a second plan of the same problem compiles nothing */
	CHECK(tcx_contraction_parse(gemm, TCX_DTYPE_S, &c, &err) == TCX_OK);
	CHECK(tcx_plan_create(dev, c, gsz, NULL, NULL, NULL, NULL, &plan, &err) == TCX_OK);
	device_cache_stats(api_device(dev), &before);
	CHECK(tcx_plan_create(dev, c, gsz, NULL, NULL, NULL, NULL, &second, &err) == TCX_OK);
	device_cache_stats(api_device(dev), &after);
	CHECK_MSG(after.builds == before.builds && after.memory_hits > before.memory_hits,
		  "builds %lu -> %lu, memory hits %lu -> %lu", before.builds, after.builds,
		  before.memory_hits, after.memory_hits);
	if (!plan || !second)
		goto out;

	fill(a, 64, 1);
	fill(b, 64, 2);
	memset(cc, 0, sizeof(cc));
	memcpy(want, cc, sizeof(cc));
	CHECK(tcx_contraction_reference(c, gsz, a, b, want, NULL, NULL, &err) == TCX_OK);
	m[0] = buffer(&o, a, sizeof(a));
	m[1] = buffer(&o, b, sizeof(b));
	m[2] = buffer(&o, cc, sizeof(cc));
	small = buffer(&o, NULL, 16);

	/* 10,000 executes on the caller's queue, from the first of a new
	 * plan: no allocation of tcx's */
	if (getenv("TCX_TEST_API_RUNS"))
		runs = atoi(getenv("TCX_TEST_API_RUNS"));
	for (int k = 0; k < 64; k++)
		cc[k] = 99;
	clEnqueueWriteBuffer(o.q, m[2], CL_TRUE, 0, sizeof(cc), cc, 0, NULL, NULL);
	n0 = allocs;
	for (int k = 0; k < runs; k++) {
		if (tcx_plan_execute(second, o.q, m[0], m[1], m[2], NULL, NULL, &err) != TCX_OK) {
			CHECK_MSG(0, "execute %d: %s", k, err.msg);
			break;
		}
		if (k % 1000 == 999)
			clFinish(o.q);
	}
	CHECK_MSG(allocs == n0, "%lu allocations in %d executes", allocs - n0, runs);
	fprintf(stderr, "%d executes: %lu allocations by tcx\n", runs, allocs - n0);
	clFinish(o.q);
	clEnqueueReadBuffer(o.q, m[2], CL_TRUE, 0, sizeof(cc), cc, 0, NULL, NULL);
	CHECK_MSG(max_diff(cc, want, 64) < 1e-5, "off by %g", max_diff(cc, want, 64));

	/* what execute refuses */
	CHECK(tcx_plan_execute(plan, o.q, m[0], NULL, m[2], NULL, NULL, &err) == TCX_EINVAL);
	CHECK(tcx_plan_execute(plan, o.q, m[0], m[1], small, NULL, NULL, &err) == TCX_EINVAL);
	CHECK_MSG(strstr(err.msg, "16 bytes where 256 bytes are needed"), "%s", err.msg);
	CHECK(tcx_plan_bytes(plan, 'C') == 256 && tcx_plan_bytes(plan, 'X') == 0);

	/* the device's own queue (NULL): execute waits */
	CHECK(tcx_plan_execute(plan, NULL, m[0], m[1], m[2], NULL, NULL, &err) == TCX_OK);
	clEnqueueReadBuffer(o.q, m[2], CL_TRUE, 0, sizeof(cc), cc, 0, NULL, NULL);
	CHECK_MSG(max_diff(cc, want, 64) < 1e-5, "off by %g", max_diff(cc, want, 64));

	/* three contractions and a strided one against the reference */
	{
		const int64_t s1[3] = { 24, 40, 16 }, s2[4] = { 9, 11, 7, 13 };
		const int64_t s3[5] = { 5, 6, 7, 4, 3 };

		contract_case(dev, &o, gemm, s1);
		contract_case(dev, &o, "C[ijk]=A[ilk]*B[jlk]", s2);
		contract_case(dev, &o, "abcd,ebd->aec", s3);
		contract_case(dev, &o, "ijk->ik", s2); /* one input: i, k, then j */
		strided_gemm(dev);
		logic_plans(dev);
		ttgt_case(dev, &o);
		accuracy_case(dev);
		transpose_case(dev);
	}

out:
	for (int t = 0; t < 3; t++)
		if (m[t])
			clReleaseMemObject(m[t]);
	if (small)
		clReleaseMemObject(small);
	tcx_plan_destroy(plan);
	tcx_plan_destroy(second);
	tcx_contraction_destroy(c);
	if (o.q)
		clReleaseCommandQueue(o.q);
	tcx_device_close(dev);
	return check_done();
}

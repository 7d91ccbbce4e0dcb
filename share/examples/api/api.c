/* api.c - an application of libtcx's device API (tcx.h, libtcx(3)) on
 * OpenCL: it plans three contractions once, executes each plan on its own
 * command queue with its own buffers, and compares C with libtcx's host
 * reference.
 *
 *   api [DEVICE]          a device id of `tcx devices` (default "opencl:0:0")
 *
 * The buffers and the queue are the application's; tcx only tells it the
 * context they must belong to (tcx_device_native).  C = alpha * A B +
 * beta * C with alpha 1 and beta 0.5, so that C's old values count too.
 * Exit 0 ok, 1 a result is wrong, 3 an OpenCL or tcx error, 4 no device
 * (tcx's exit codes).
 *
 * Build it with pkg-config:
 *   cc api.c -o api $(pkg-config --cflags --libs tcx) -lOpenCL            */
#define CL_TARGET_OPENCL_VERSION 120
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <tcx.h>

/* The contractions, in einsum and Tensile notation, and the size of each
 * letter (index names are single letters here). */
static const char *const exprs[] = {
	"ik,kj->ij",             /* a GEMM, NumPy's layout */
	"C[ijk]=A[ilk]*B[jlk]",  /* batched, Tensile's layout */
	"abcd,ebd->aec",         /* two summed indices, operands permuted */
};
static int64_t letter_size(char l)
{
	return 13 + (l - 'a') * 5 % 23;
}

static int fail_tcx(const char *what, const struct tcx_error *err)
{
	fprintf(stderr, "api: %s: %s (%s)\n", what, err->msg, tcx_status_str(err->code));
	return err->code == TCX_ENODEV ? 4 : 3;
}

static int fail_cl(const char *what, cl_int rc)
{
	fprintf(stderr, "api: %s failed (OpenCL error %d)\n", what, (int)rc);
	return 3;
}

static void fill(float *x, size_t n, unsigned *seed)
{
	for (size_t k = 0; k < n; k++) {
		*seed = *seed * 1103515245u + 12345u;
		x[k] = (float)((*seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

/* Plans, executes and checks one contraction; an exit code. */
static int one(struct tcx_device *dev, cl_context ctx, cl_command_queue q, const char *expr)
{
	struct tcx_error err = { 0 };
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	int64_t sizes[16];
	size_t bytes[3], n[3];
	float *host[3] = { NULL, NULL, NULL }, *want = NULL;
	cl_mem mem[3] = { NULL, NULL, NULL };
	const double alpha = 1, beta = 0.5;
	double worst = 0, scale = 0;
	char what[320];
	unsigned seed = 1;
	int ret = 3;
	cl_int rc = CL_SUCCESS;

	if (tcx_contraction_parse(expr, TCX_DTYPE_S, &c, &err))
		return fail_tcx(expr, &err);
	for (int id = 0; id < tcx_contraction_num_indices(c); id++)
		sizes[id] = letter_size(tcx_contraction_index_name(c, id)[0]);
	/* NULL strides: packed, as tcx_contraction_reference lays them out */
	if (tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, NULL, &plan, &err)) {
		ret = fail_tcx(expr, &err);
		goto out;
	}
	for (int t = 0; t < 3; t++) {
		bytes[t] = tcx_plan_bytes(plan, "ABC"[t]);
		n[t] = bytes[t] / sizeof(float);
		host[t] = malloc(bytes[t]);
		if (!host[t]) {
			fprintf(stderr, "api: out of memory\n");
			goto out;
		}
		fill(host[t], n[t], &seed);
		mem[t] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes[t],
					host[t], &rc);
		if (!mem[t]) {
			ret = fail_cl("clCreateBuffer", rc);
			goto out;
		}
	}
	want = malloc(bytes[2]);
	if (!want) {
		fprintf(stderr, "api: out of memory\n");
		goto out;
	}
	memcpy(want, host[2], bytes[2]);
	if (tcx_contraction_reference(c, sizes, host[0], host[1], want, &alpha, &beta, &err)) {
		ret = fail_tcx(expr, &err);
		goto out;
	}
	/* the plan runs on the application's queue and returns at once */
	if (tcx_plan_execute(plan, q, mem[0], mem[1], mem[2], &alpha, &beta, &err)) {
		ret = fail_tcx(expr, &err);
		goto out;
	}
	rc = clEnqueueReadBuffer(q, mem[2], CL_TRUE, 0, bytes[2], host[2], 0, NULL, NULL);
	if (rc != CL_SUCCESS) {
		ret = fail_cl("clEnqueueReadBuffer", rc);
		goto out;
	}
	for (size_t k = 0; k < n[2]; k++) {
		worst = fmax(worst, fabs((double)host[2][k] - want[k]));
		scale = fmax(scale, fabs(want[k]));
	}
	tcx_plan_describe(plan, what, sizeof(what));
	/* fp32 sums of a few hundred products */
	ret = worst <= 1e-4 * (scale > 1 ? scale : 1) ? 0 : 1;
	printf("%-22s %s: max |error| %.2g of %.3g, %s\n", expr, what, worst, scale,
	       ret ? "WRONG" : "ok");
out:
	for (int t = 0; t < 3; t++) {
		if (mem[t])
			clReleaseMemObject(mem[t]);
		free(host[t]);
	}
	free(want);
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
	return ret;
}

int main(int argc, char **argv)
{
	struct tcx_error err = { 0 };
	struct tcx_device *dev = NULL;
	cl_context ctx;
	cl_device_id did;
	cl_command_queue q;
	cl_int rc;
	int ret = 0;

	if (argc > 2) {
		fprintf(stderr, "usage: api [DEVICE]\n");
		return 2;
	}
	if (tcx_device_open(argc > 1 ? argv[1] : "opencl:0:0", &dev, &err))
		return fail_tcx("cannot open the device", &err);
	ctx = (cl_context)tcx_device_native(dev, TCX_NATIVE_CONTEXT);
	did = (cl_device_id)tcx_device_native(dev, TCX_NATIVE_DEVICE);
	if (!ctx || !did) {
		fprintf(stderr, "api: '%s' is not an OpenCL device\n", tcx_device_id(dev));
		tcx_device_close(dev);
		return 2;
	}
	q = clCreateCommandQueue(ctx, did, 0, &rc);
	if (!q) {
		tcx_device_close(dev);
		return fail_cl("clCreateCommandQueue", rc);
	}
	printf("device %s\n", tcx_device_id(dev));
	for (size_t k = 0; k < sizeof(exprs) / sizeof(exprs[0]); k++) {
		int r = one(dev, ctx, q, exprs[k]);

		ret = r > ret ? r : ret;
	}
	clReleaseCommandQueue(q);
	tcx_device_close(dev);
	return ret;
}

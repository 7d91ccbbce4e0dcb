/* app.c - an application of the library mylib that tcx export-lib writes
 * from the logic of the README's worked example (fp32 GEMM
 * C[ij] = A[ik] * B[kj], Tensile's Cij_Aik_Bkj_S, exported with
 * `-o mylib --name mylib`).
 *
 * It sets up OpenCL itself (the first GPU, else the first OpenCL device),
 * fills A and B with random numbers, asks the library which solution it
 * would run, runs it, reads C back and checks C[0,0] and the last element
 * against the sums computed here in double.
 *
 *   app [I J K]          sizes of i, j, k (default 300 200 100)
 *
 * Exit 0 ok, 1 a checked element is wrong, 2 bad usage, 3 an OpenCL or
 * library error, 4 no OpenCL device (tcx's exit codes).
 *
 * Build it with CMake (CMakeLists.txt beside it) or with pkg-config:
 *   cc app.c -o app $(pkg-config --cflags --libs mylib)                    */
#define CL_TARGET_OPENCL_VERSION 120
#include <stdio.h>
#include <stdlib.h>

#include <CL/cl.h>
#include <mylib.h>

/* Index order and layout: Tensile's, the first index listed moves fastest
 * (column-major matrices): A[i,k] at i + k*I, B[k,j] at k + j*K, C[i,j] at
 * i + j*I.  `sizes` lists i, j, k (the header gives the order). */
#define A_AT(i, k) ((i) + (k)*I)
#define B_AT(k, j) ((k) + (j)*K)
#define C_AT(i, j) ((i) + (j)*I)

static int fail(const char *what, cl_int rc)
{
	fprintf(stderr, "app: %s failed (OpenCL error %d)\n", what, (int)rc);
	return 3;
}

/* The first GPU of any platform, else the first device of any type. */
static int first_device(cl_device_id *dev)
{
	cl_platform_id plats[16];
	cl_uint np = 0, nd = 0;
	const cl_device_type types[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};

	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
		np = 0;
	for (int t = 0; t < 2; t++)
		for (cl_uint p = 0; p < np && p < 16; p++)
			if (clGetDeviceIDs(plats[p], types[t], 1, dev, &nd) == CL_SUCCESS && nd > 0)
				return 0;
	fprintf(stderr, "app: no OpenCL device\n");
	return 4;
}

/* Sum over k of A[i,k] * B[k,j], in double. */
static double host_element(const float *a, const float *b, size_t I, size_t K, size_t i, size_t j)
{
	double s = 0;

	for (size_t k = 0; k < K; k++)
		s += (double)a[A_AT(i, k)] * (double)b[B_AT(k, j)];
	return s;
}

/* Whether got is within the bound of fp32 sums of K products of numbers
 * below 1 in magnitude. */
static int check(const char *what, float got, double want, size_t K)
{
	double bound = 2.0 * (double)K * 6e-8 * (double)K + 1e-6, d = got - want;

	if (d < 0)
		d = -d;
	printf("%s = %.6g (host %.6g): %s\n", what, got, want, d <= bound ? "ok" : "WRONG");
	return d <= bound;
}

int main(int argc, char **argv)
{
	size_t I = 300, J = 200, K = 100, sizes[3];
	cl_device_id dev;
	cl_context ctx = NULL;
	cl_command_queue q = NULL;
	cl_mem ma = NULL, mb = NULL, mc = NULL;
	float *a = NULL, *b = NULL, *c = NULL;
	struct mylib_choice ch;
	enum mylib_status st;
	unsigned long long state = 1;
	cl_int rc;
	int ret;

	if (argc == 4) {
		I = strtoul(argv[1], NULL, 10);
		J = strtoul(argv[2], NULL, 10);
		K = strtoul(argv[3], NULL, 10);
	}
	if ((argc != 1 && argc != 4) || I == 0 || J == 0 || K == 0) {
		fprintf(stderr, "usage: app [I J K]   (sizes of i, j and k, at least 1)\n");
		return 2;
	}
	ret = first_device(&dev);
	if (ret)
		return ret;
	a = malloc(I * K * sizeof(*a));
	b = malloc(K * J * sizeof(*b));
	c = malloc(I * J * sizeof(*c));
	if (!a || !b || !c) {
		fprintf(stderr, "app: out of memory\n");
		ret = 3;
		goto out;
	}
	/* random numbers in [-1, 1) */
	for (size_t n = 0; n < I * K + K * J; n++) {
		float v;

		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		v = (float)((double)(state >> 40) / (double)(1ULL << 23) - 1.0);
		if (n < I * K)
			a[n] = v;
		else
			b[n - I * K] = v;
	}

	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
	if (rc != CL_SUCCESS) {
		ret = fail("clCreateContext", rc);
		goto out;
	}
	q = clCreateCommandQueue(ctx, dev, 0, &rc);
	if (rc != CL_SUCCESS) {
		ret = fail("clCreateCommandQueue", rc);
		goto out;
	}
	ma = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, I * K * sizeof(*a), a,
			    &rc);
	if (rc == CL_SUCCESS)
		mb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
				    K * J * sizeof(*b), b, &rc);
	if (rc == CL_SUCCESS)
		mc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, I * J * sizeof(*c), NULL, &rc);
	if (rc != CL_SUCCESS) {
		ret = fail("clCreateBuffer", rc);
		goto out;
	}

	/* the library: which solution, then C = 1 * A.B + 0 * C (packed
	 * strides: NULL) on this queue */
	sizes[0] = I;
	sizes[1] = J;
	sizes[2] = K;
	st = mylib_Cij_Aik_Bkj_S_query((mylib_queue)q, sizes, NULL, NULL, NULL, &ch);
	if (st == MYLIB_OK) {
		printf("solution %d, %s\n  %s\n", ch.solution, ch.name, ch.why);
		st = mylib_Cij_Aik_Bkj_S((mylib_queue)q, sizes, NULL, NULL, NULL, 1.0f, 0.0f,
					 (mylib_mem)mc, (mylib_mem)ma, (mylib_mem)mb);
	}
	if (st != MYLIB_OK) {
		char detail[512];

		mylib_last_error(detail, sizeof(detail));
		fprintf(stderr, "app: mylib: %s: %s\n", mylib_status_str(st), detail);
		ret = 3;
		goto out;
	}
	rc = clEnqueueReadBuffer(q, mc, CL_TRUE, 0, I * J * sizeof(*c), c, 0, NULL, NULL);
	if (rc != CL_SUCCESS) {
		ret = fail("clEnqueueReadBuffer", rc);
		goto out;
	}
	ret = 0;
	if (!check("C[0,0]", c[C_AT(0, 0)], host_element(a, b, I, K, 0, 0), K))
		ret = 1;
	if (!check("C[I-1,J-1]", c[C_AT(I - 1, J - 1)], host_element(a, b, I, K, I - 1, J - 1), K))
		ret = 1;
out:
	if (mc)
		clReleaseMemObject(mc);
	if (mb)
		clReleaseMemObject(mb);
	if (ma)
		clReleaseMemObject(ma);
	mylib_release();
	if (q)
		clReleaseCommandQueue(q);
	if (ctx)
		clReleaseContext(ctx);
	free(a);
	free(b);
	free(c);
	return ret;
}

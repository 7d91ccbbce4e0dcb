/* main.c - an application of the generated library tcxexp: runs the batched
 * contraction C[ijk] = alpha * Sum[l] A[ilk] * B[jlk] + beta * C[ijk] of
 * tests/data/tune/tiny.yaml through tcxexp_Cijk_Ailk_Bjlk_S on the first
 * OpenCL device for sizes that were tuned, between and outside them, 1 and
 * primes, packed and with padded strides, and checks every element against
 * its own loops in double.  Also checks the query and the errors.
 * Exit 0 ok, 1 a check failed, 77 no OpenCL device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <tcxexp.h>

static int failures;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "consumer: FAIL: ");                                               \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		failures++;                                                                        \
	} while (0)

static unsigned long long state = 0x853c49e6748fea9bULL;

static float rnd(void)
{
	state = state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((double)(state >> 40) / (double)(1ULL << 24) * 2 - 1) + 1e-3f;
}

struct ocl {
	cl_context ctx;
	cl_command_queue q;
};

static cl_mem upload(struct ocl *o, const float *h, size_t n)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
				  n * sizeof(float), (void *)h, &rc);

	return rc == CL_SUCCESS ? m : NULL;
}

/* One run: sizes i, j, k, l; pad > 0 gives every tensor padded strides. */
static void run(struct ocl *o, size_t I, size_t J, size_t K, size_t L, size_t pad, float alpha,
		float beta)
{
	/* strides as the expression writes the indices: A[i,l,k], B[j,l,k], C[i,j,k] */
	size_t sa[3], sb[3], sc[3], na, nb, nc, sizes[4], i, j, k, l;
	float *a, *b, *c, *got;
	cl_mem ma, mb, mc;
	struct tcxexp_choice ch;
	enum tcxexp_status st;
	long bad = 0;

	sizes[0] = I;
	sizes[1] = J;
	sizes[2] = K;
	sizes[3] = L;
	sa[0] = 1, sa[1] = I + pad, sa[2] = (I + pad) * (L + pad);
	sb[0] = 1, sb[1] = J + pad, sb[2] = (J + pad) * (L + pad);
	sc[0] = 1, sc[1] = I + pad, sc[2] = (I + pad) * (J + pad);
	na = sa[2] * K, nb = sb[2] * K, nc = sc[2] * K;
	a = malloc(na * sizeof(float));
	b = malloc(nb * sizeof(float));
	c = malloc(nc * sizeof(float));
	got = malloc(nc * sizeof(float));
	for (i = 0; i < na; i++)
		a[i] = rnd();
	for (i = 0; i < nb; i++)
		b[i] = rnd();
	for (i = 0; i < nc; i++)
		c[i] = rnd();
	ma = upload(o, a, na);
	mb = upload(o, b, nb);
	mc = upload(o, c, nc);
	if (!ma || !mb || !mc) {
		FAIL("cannot allocate buffers");
		goto out;
	}
	st = tcxexp_Cijk_Ailk_Bjlk_S_query((tcxexp_queue)o->q, sizes, pad ? sc : NULL,
					   pad ? sa : NULL, pad ? sb : NULL, &ch);
	if (st != TCXEXP_OK || ch.solution < 0 || !ch.name[0] || ch.generic_strides != (pad != 0))
		FAIL("%zu,%zu,%zu,%zu: query: %s, solution %d '%s', generic %d", I, J, K, L,
		     tcxexp_status_str(st), ch.solution, ch.name, ch.generic_strides);
	st = tcxexp_Cijk_Ailk_Bjlk_S((tcxexp_queue)o->q, sizes, pad ? sc : NULL, pad ? sa : NULL,
				     pad ? sb : NULL, alpha, beta, (tcxexp_mem)mc, (tcxexp_mem)ma,
				     (tcxexp_mem)mb);
	if (st != TCXEXP_OK) {
		char detail[1024];

		tcxexp_last_error(detail, sizeof(detail));
		FAIL("%zu,%zu,%zu,%zu: %s: %s", I, J, K, L, tcxexp_status_str(st), detail);
		goto out;
	}
	if (clEnqueueReadBuffer(o->q, mc, CL_TRUE, 0, nc * sizeof(float), got, 0, NULL, NULL) !=
	    CL_SUCCESS) {
		FAIL("cannot read C");
		goto out;
	}
	for (k = 0; k < K; k++)
		for (j = 0; j < J; j++)
			for (i = 0; i < I; i++) {
				size_t oc = i * sc[0] + j * sc[1] + k * sc[2];
				double s = 0, mag = 0, want, err;

				for (l = 0; l < L; l++) {
					double x = a[i * sa[0] + l * sa[1] + k * sa[2]];
					double y = b[j * sb[0] + l * sb[1] + k * sb[2]];

					s += x * y;
					mag += fabs(x * y);
				}
				want = alpha * s + beta * c[oc];
				mag = fabs(alpha) * mag + fabs(beta * c[oc]);
				err = fabs(got[oc] - want);
				if (!(err <= 4.0 * (L + 2) * ldexp(1, -24) * mag + 1e-30)) {
					if (bad++ < 3)
						FAIL("%zu,%zu,%zu,%zu pad %zu: C[%zu,%zu,%zu] = "
						     "%.9g, "
						     "want %.9g",
						     I, J, K, L, pad, i, j, k, got[oc], want);
				}
			}
	/* padding between the elements of C is never written */
	for (i = 0; pad && i < nc; i++)
		if (i % sc[1] >= I && got[i] != c[i]) {
			FAIL("%zu,%zu,%zu,%zu: padding of C at %zu written", I, J, K, L, i);
			break;
		}
	if (!bad)
		printf("ok %zu,%zu,%zu,%zu%s: solution %d (%s) by %s\n", I, J, K, L,
		       pad ? " padded" : "", ch.solution, ch.name, ch.selector);
out:
	if (ma)
		clReleaseMemObject(ma);
	if (mb)
		clReleaseMemObject(mb);
	if (mc)
		clReleaseMemObject(mc);
	free(a);
	free(b);
	free(c);
	free(got);
}

int main(void)
{
	struct ocl o;
	cl_platform_id plat;
	cl_device_id dev;
	cl_uint n = 0;
	cl_int rc;
	size_t sizes4[4] = {4, 4, 2, 4}, empty[4] = {4, 0, 2, 4}, huge[4] = {4, (size_t)-1, 2, 4};
	enum tcxexp_status st;

	if (clGetPlatformIDs(1, &plat, &n) != CL_SUCCESS || n == 0 ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, &n) != CL_SUCCESS || n == 0) {
		printf("skipped: no OpenCL device\n");
		return 77;
	}
	o.ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
	o.q = rc == CL_SUCCESS ? clCreateCommandQueue(o.ctx, dev, 0, &rc) : NULL;
	if (rc != CL_SUCCESS) {
		fprintf(stderr, "consumer: no OpenCL context or queue (%d)\n", (int)rc);
		return 1;
	}
	if (tcxexp_problem_count() != 1 || tcxexp_problem_find("Cijk_Ailk_Bjlk_S") != 0 ||
	    tcxexp_problem(0)->num_indices != 4)
		FAIL("the library does not describe Cijk_Ailk_Bjlk_S");
	/* tuned (16..48 x 16 x 2 x 8..31, 7,5,3,11), between, outside, 1, primes */
	run(&o, 32, 16, 2, 24, 0, 1.0f, 0.0f);
	run(&o, 7, 5, 3, 11, 0, 1.0f, 0.0f);
	run(&o, 24, 16, 2, 20, 0, 0.5f, 0.0f);
	run(&o, 100, 50, 4, 64, 0, 1.0f, -0.75f);
	run(&o, 1, 1, 1, 1, 0, 2.0f, 0.0f);
	run(&o, 1, 19, 1, 23, 0, 1.0f, 0.25f);
	run(&o, 13, 17, 3, 29, 0, 1.0f, 0.0f);
	run(&o, 31, 7, 5, 2, 0, 1.0f, 0.0f);
	run(&o, 13, 17, 3, 29, 3, 1.0f, 0.5f);
	run(&o, 32, 16, 2, 24, 1, 1.0f, 0.0f);
	/* errors: a missing buffer, no alpha, a size past 63 bits, a queue
	 * that is none; an empty problem (a size 0) is no error */
	st = tcxexp_Cijk_Ailk_Bjlk_S((tcxexp_queue)o.q, sizes4, NULL, NULL, NULL, 1, 0, NULL,
				     NULL, NULL);
	if (st != TCXEXP_EINVAL || !strcmp(tcxexp_status_str(st), "unknown status"))
		FAIL("a missing buffer gave %d", (int)st);
	st = tcxexp_run(0, (tcxexp_queue)o.q, sizes4, NULL, NULL, NULL, NULL, NULL,
			(tcxexp_mem)o.q, (tcxexp_mem)o.q, (tcxexp_mem)o.q);
	if (st != TCXEXP_EINVAL)
		FAIL("no alpha gave %d", (int)st);
	{
		struct tcxexp_choice ch;
		double one = 1;

		st = tcxexp_query(0, (tcxexp_queue)o.q, huge, NULL, NULL, NULL, &ch);
		if (st != TCXEXP_EINVAL || tcxexp_last_error(NULL, 0) == 0)
			FAIL("a size past 63 bits gave %d", (int)st);
		st = tcxexp_query(0, (tcxexp_queue)o.q, empty, NULL, NULL, NULL, &ch);
		if (st != TCXEXP_OK || ch.solution != -1)
			FAIL("a size 0 gave %d, solution %d", (int)st, ch.solution);
		st = tcxexp_Cijk_Ailk_Bjlk_S((tcxexp_queue)o.q, empty, NULL, NULL, NULL, 1, 0, NULL,
					     NULL, NULL);
		if (st != TCXEXP_OK)
			FAIL("an empty C with no buffers gave %d", (int)st);
		st = tcxexp_run(5, (tcxexp_queue)o.q, sizes4, NULL, NULL, NULL, &one, NULL,
				(tcxexp_mem)o.q, (tcxexp_mem)o.q, (tcxexp_mem)o.q);
		if (st != TCXEXP_EINVAL)
			FAIL("problem 5 gave %d", (int)st);
	}
	tcxexp_release();
	clReleaseCommandQueue(o.q);
	clReleaseContext(o.ctx);
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}

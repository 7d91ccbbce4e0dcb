/* empty.c - empty problems in an exported library's run time: a size of 0
 * launches no kernel.  A bound index of size 0 leaves C = beta * C (zeros
 * with beta 0 or NULL, C not read; C untouched with beta 1); a free or
 * batch index of size 0 leaves C without elements, so there is nothing to
 * do and no buffer is needed.  A and B have no elements then, and need no
 * buffers either.
 *
 * A unit test of runtime.c, which empty.sh builds with UBSan: it includes
 * the generated library source (src/tcxl.c of tests/export/data/special.yaml
 * and complex.yaml: Cijk_Ailk_Bjlk_S and a complex fp32 type) and runs
 * tcxl_run and tcxl_query on the first OpenCL device, with packed and
 * padded C (the offsets between C's elements keep their bytes); then the
 * host scaling for every element type, with the fp16 and bf16 rounding
 * checked over all their values.  No kernel is compiled.
 *
 * Exit status: 0 pass, 1 a check failed, 77 no OpenCL device.
 */
#include "tcxl.c"

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		checks++;                                                                          \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static cl_context ctx;
static cl_command_queue queue;

static int open_device(void)
{
	cl_platform_id pl[8];
	cl_uint np = 0, k;
	cl_device_id dev;
	cl_int rc;

	if (clGetPlatformIDs(8, pl, &np) != CL_SUCCESS)
		return 0;
	for (k = 0; k < np && k < 8; k++) {
		cl_uint nd = 0;

		if (clGetDeviceIDs(pl[k], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || !nd)
			continue;
		ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
		if (rc != CL_SUCCESS)
			continue;
		queue = clCreateCommandQueue(ctx, dev, 0, &rc);
		if (rc == CL_SUCCESS)
			return 1;
		clReleaseContext(ctx);
	}
	return 0;
}

/* C's element offsets: mark[off] = 1 for each element of C */
static void mark_elements(const struct tl_type *T, const size_t *sizes, const size_t *sc,
			  unsigned char *mark)
{
	const struct TL(problem_info) *in = &T->info;
	int64_t idx[TL_MAX_INDICES] = {0}, stride[TL_MAX_INDICES], s = 1, total = 1, e;
	int k;

	for (k = 0; k < in->rank[0]; k++) {
		int id = in->packed_order[0][k];

		stride[id] = s;
		s *= (int64_t)sizes[id];
	}
	for (k = 0; sc && k < in->rank[0]; k++)
		stride[in->indices[0][k]] = (int64_t)sc[k];
	for (k = 0; k < in->rank[0]; k++)
		total *= (int64_t)sizes[in->indices[0][k]];
	for (e = 0; e < total; e++) {
		int64_t off = 0;

		for (k = 0; k < in->rank[0]; k++)
			off += idx[k] * stride[in->indices[0][k]];
		mark[off] = 1;
		for (k = 0; k < in->rank[0]; k++) {
			if (++idx[k] < (int64_t)sizes[in->indices[0][k]])
				break;
			idx[k] = 0;
		}
	}
}

/* tcxl_run of problem type `type` (fp32 or complex fp32) with these sizes
 * and C strides on a C of `extent` elements that start as e + 1 (+ (e + 2) i),
 * or NaN when nan_c; each element of C must become beta * C (0 for beta
 * NULL), every other offset keep its value. */
static void run_scaled(const char *what, int type, const size_t *sizes, const size_t *sc,
		       size_t extent, const double *beta, int nan_c)
{
	const struct tl_type *T = &tl_types[type];
	int cplx = T->info.type == 'c', w = cplx ? 2 : 1;
	size_t n = extent * (size_t)w, e;
	float *host = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
	unsigned char *mark = calloc(extent, 1);
	double alpha[2] = {2, 0};
	cl_mem c;
	cl_int rc;
	TL_STATUS st;
	char msg[512];

	if (!host || !got || !mark) {
		CHECK(0, "%s: out of memory", what);
		goto out;
	}
	for (e = 0; e < extent; e++) {
		host[w * e] = nan_c ? NAN : (float)(e + 1);
		if (cplx)
			host[w * e + 1] = nan_c ? NAN : (float)(e + 2);
	}
	mark_elements(T, sizes, sc, mark);
	c = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), host,
			   &rc);
	CHECK(rc == CL_SUCCESS, "%s: clCreateBuffer %d", what, (int)rc);
	if (rc != CL_SUCCESS)
		goto out;
	st = TL(run)(type, (TL(queue))queue, sizes, sc, NULL, NULL, alpha, beta, (TL(mem))c, NULL,
		     NULL);
	TL(last_error)(msg, sizeof(msg));
	CHECK(st == TL_UP(OK), "%s: tcxl_run gives %d: %s", what, (int)st, msg);
	rc = clEnqueueReadBuffer(queue, c, CL_TRUE, 0, n * sizeof(float), got, 0, NULL, NULL);
	CHECK(rc == CL_SUCCESS, "%s: clEnqueueReadBuffer %d", what, (int)rc);
	clReleaseMemObject(c);
	for (e = 0; e < extent && rc == CL_SUCCESS; e++) {
		double re = host[w * e], im = cplx ? host[w * e + 1] : 0, wr = re, wi = im;

		if (mark[e] && (!beta || (beta[0] == 0 && beta[1] == 0))) {
			wr = wi = 0;
		} else if (mark[e]) {
			wr = beta[0] * re - (cplx ? beta[1] * im : 0);
			wi = cplx ? beta[0] * im + beta[1] * re : 0;
		}
		CHECK(((float)wr == got[w * e] || (isnan(wr) && isnan(got[w * e]))) &&
			  (!cplx || (float)wi == got[w * e + 1] ||
			   (isnan(wi) && isnan(got[w * e + 1]))),
		      "%s: offset %zu (%s): got %g%+gi, want %g%+gi", what, e,
		      mark[e] ? "an element" : "a gap", got[w * e], cplx ? got[w * e + 1] : 0.0,
		      wr, wi);
	}
out:
	free(host);
	free(got);
	free(mark);
}

static void device_checks(void)
{
	/* Cijk_Ailk_Bjlk_S: sizes i, j, k, l; C[ijk] */
	size_t bound0[4] = {3, 4, 2, 0}, free0[4] = {0, 4, 2, 5}, pad[3] = {1, 4, 20};
	/* the complex type: C[ij] = Sum[k] conj(A[ik]) * B[kj]; sizes i, j, k */
	size_t cbound0[3] = {3, 2, 0}, cpad[2] = {1, 5};
	double half[2] = {0.5, 0}, one[2] = {1, 0}, zero[2] = {0, 0}, cbeta[2] = {0.5, -2};
	double alpha[2] = {1, 0};
	struct TL(choice) ch;
	TL_STATUS st;
	char msg[512];
	int ct = 0;

	while (ct < TL_NTYPES - 1 && tl_types[ct].info.type != 'c')
		ct++;

	CHECK(strcmp(tl_types[0].info.name, "Cijk_Ailk_Bjlk_S") == 0, "problem type %s",
	      tl_types[0].info.name);
	CHECK(tl_types[ct].info.type == 'c', "problem type %d is %s, not complex", ct,
	      tl_types[ct].info.name);
	run_scaled("bound index 0, packed C", 0, bound0, NULL, 24, half, 0);
	run_scaled("bound index 0, padded C", 0, bound0, pad, 1 + 2 + 12 + 20, half, 0);
	run_scaled("bound index 0, beta NULL: C not read", 0, bound0, NULL, 24, NULL, 1);
	run_scaled("bound index 0, beta 0: C not read", 0, bound0, pad, 35, zero, 1);
	run_scaled("bound index 0, beta 1", 0, bound0, pad, 35, one, 0);
	run_scaled("complex, bound index 0, padded C", ct, cbound0, cpad, 1 + 2 + 5, cbeta, 0);
	/* C without elements: nothing to do, no buffer */
	st = TL(run)(0, (TL(queue))queue, free0, NULL, NULL, NULL, alpha, half, NULL, NULL, NULL);
	TL(last_error)(msg, sizeof(msg));
	CHECK(st == TL_UP(OK), "free index 0 without buffers: %d: %s", (int)st, msg);
	/* ... but C with elements needs its buffer */
	st = TL(run)(0, (TL(queue))queue, bound0, NULL, NULL, NULL, alpha, half, NULL, NULL, NULL);
	TL(last_error)(msg, sizeof(msg));
	CHECK(st == TL_UP(EINVAL) && strstr(msg, "buffer C"), "no C: %d: %s", (int)st, msg);
	/* the query: no solution, and why */
	st = TL(query)(0, (TL(queue))queue, bound0, NULL, NULL, NULL, &ch);
	CHECK(st == TL_UP(OK) && ch.solution == -1 && strstr(ch.why, "size 0"),
	      "query of an empty problem: %d, solution %d, why '%s'", (int)st, ch.solution,
	      ch.why);
	/* sizes are still checked */
	bound0[0] = (size_t)1 << 63;
	st = TL(query)(0, (TL(queue))queue, bound0, NULL, NULL, NULL, &ch);
	CHECK(st == TL_UP(EINVAL), "a size past 2^62 with a 0: %d", (int)st);
}

/* The host scaling for each element type, on a padded C of the fp32 type's
 * shape with the type changed. */
static void host_checks(void)
{
	static const char types[] = "sdczhb";
	size_t sizes[4] = {3, 4, 2, 0}, pad[3] = {1, 4, 20};
	unsigned char mark[35] = {0};
	double beta[2] = {-0.5, 0.25};
	int t;

	mark_elements(&tl_types[0], sizes, pad, mark);
	for (t = 0; types[t]; t++) {
		struct tl_type T = tl_types[0];
		struct tl_problem p;
		unsigned char buf[35 * 16], before[35 * 16];
		int cplx = types[t] == 'c' || types[t] == 'z', e;

		T.info.type = types[t];
		CHECK(tl_problem_make(&T, sizes, pad, NULL, NULL, &p) == TL_UP(OK) && p.empty &&
			  p.extent_c == 35,
		      "type %c: the empty problem", types[t]);
		for (e = 0; e < 35; e++)
			tl_elem_set(types[t], buf, e, e - 17, cplx ? 3 - e : 0);
		memcpy(before, buf, sizeof(buf));
		tl_scale_host(&T, &p, beta, buf);
		for (e = 0; e < 35; e++) {
			double re, im, wr = e - 17, wi = cplx ? 3 - e : 0;
			size_t b = tl_elem_bytes(types[t]);

			if (!mark[e]) {
				CHECK(memcmp(buf + e * b, before + e * b, b) == 0,
				      "type %c: gap %d changed", types[t], e);
				continue;
			}
			if (cplx) {
				double r = -0.5 * wr - 0.25 * wi;

				wi = -0.5 * wi + 0.25 * wr;
				wr = r;
			} else {
				wr = -0.5 * wr; /* beta's imaginary part is ignored */
			}
			tl_elem_get(types[t], buf, e, &re, &im);
			/* small multiples of 1/4: exact in every type */
			CHECK(re == wr && im == wi, "type %c: element %d is %g%+gi, want %g%+gi",
			      types[t], e, re, im, wr, wi);
		}
	}
}

/* fp16 and bf16: every value converts back to itself, and a value halfway
 * between two neighbours rounds to the even one (just above it, up). */
static void rounding_checks(void)
{
	int h;

	for (h = 0; h < 65536; h++) {
		uint16_t x = (uint16_t)h, y = (uint16_t)(h + 1);
		float f = tl_half_to_float(x), g = tl_bf16_to_float(x);

		if (isnan(f))
			CHECK(isnan(tl_half_to_float(tl_half_from_float(f))), "fp16 %04x: NaN lost", h);
		else
			CHECK(tl_half_from_float(f) == x, "fp16 %04x -> %g -> %04x", h, f,
			      tl_half_from_float(f));
		if (isnan(g))
			CHECK(isnan(tl_bf16_to_float(tl_bf16_from_float(g))), "bf16 %04x: NaN lost", h);
		else
			CHECK(tl_bf16_from_float(g) == x, "bf16 %04x -> %g -> %04x", h, g,
			      tl_bf16_from_float(g));
		if ((h & 0x7fff) < 0x7bff) { /* finite fp16 neighbours of one sign */
			float m = (f + tl_half_to_float(y)) / 2;

			CHECK(tl_half_from_float(m) == (h & 1 ? y : x), "fp16 halfway %04x/%04x -> %04x",
			      h, h + 1, tl_half_from_float(m));
			CHECK(tl_half_from_float(nextafterf(m, h & 0x8000 ? -INFINITY : INFINITY)) == y,
			      "fp16 past halfway %04x/%04x", h, h + 1);
		}
		if ((h & 0x7fff) < 0x7f7f) { /* finite bf16 neighbours of one sign */
			float m = g + (tl_bf16_to_float(y) - g) / 2; /* no overflow */

			CHECK(tl_bf16_from_float(m) == (h & 1 ? y : x), "bf16 halfway %04x/%04x -> %04x",
			      h, h + 1, tl_bf16_from_float(m));
		}
	}
	CHECK(tl_half_from_float(65519.0f) == 0x7bff && tl_half_from_float(65520.0f) == 0x7c00 &&
		  tl_half_from_float(-1e30f) == 0xfc00,
	      "fp16 overflow");
}

int main(void)
{
	rounding_checks();
	host_checks();
	if (!open_device()) {
		printf("%d checks, %d failed; skipped the device part: no OpenCL device\n", checks,
		       failures);
		return failures ? 1 : 77;
	}
	device_checks();
	TL(release)();
	clReleaseCommandQueue(queue);
	clReleaseContext(ctx);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

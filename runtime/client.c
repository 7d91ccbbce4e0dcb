/* client.c - the library's client: runs one problem through the library's
 * public interface for given sizes, on random data, and checks the result
 * against a host reference that accumulates in double (like Tensile's
 * library client).  Also lists the problem types and shows which solution
 * the library would choose, and why.
 *
 *   <prefix>-client --list
 *   <prefix>-client [--problem <name|number>] --sizes 127,129,61 [--pad <n>]
 *                   [--alpha <x>] [--beta <x>] [--seed <n>] [--device <p>:<d>] [--query]
 *                   [--dump <dir>]
 *   <prefix>-client --compile (device | <architecture>)
 *
 * --pad n gives every tensor strides that are not packed: each dimension
 * padded by n elements, and the elements two apart.  --dump writes A, B and
 * the result C as .npy files (Fortran order, the packed layout) for `tcx
 * run`; --compile builds every kernel for the device, or (CUDA, HIP)
 * compiles it with NVRTC or hiprtc for an architecture such as sm_90 or
 * gfx90a without a device.
 *
 * Exit status: 0 ok, 1 a result differs from the reference, 2 bad usage,
 * 3 a library or runtime error, 4 no device.
 *
 * This file is a template: tcx export-lib copies it unchanged; config.h
 * (generated) names the library.  C99.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include TL_HEADER
#include "elem.h"

#if TL_WITH_CUDA || TL_WITH_HIP
#define TL_GPU_USER TL_GPU_CLIENT
#include "gpu.h"
#else
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#endif

#define MAXIDX 16

static int quiet;

/* PCG32 (O'Neill 2014), the reference algorithm: random inputs, never zeros. */
struct pcg {
	uint64_t state, inc;
};

static uint32_t pcg_next(struct pcg *r)
{
	uint64_t old = r->state;
	uint32_t x, rot;

	r->state = old * 6364136223846793005ULL + r->inc;
	x = (uint32_t)(((old >> 18u) ^ old) >> 27u);
	rot = (uint32_t)(old >> 59u);
	return (x >> rot) | (x << ((-rot) & 31));
}

static void pcg_seed(struct pcg *r, uint64_t seed, uint64_t stream)
{
	r->state = 0;
	r->inc = (stream << 1u) | 1u;
	pcg_next(r);
	r->state += seed;
	pcg_next(r);
}

/* uniform in [-1, 1), away from 0 */
static double pcg_value(struct pcg *r)
{
	double v = (double)pcg_next(r) / 4294967296.0 * 2 - 1;

	return fabs(v) < 1e-3 ? 0.5 : v;
}

/* ---- element types ---------------------------------------------------------- */

static int is_complex(char t)
{
	return t == 'c' || t == 'z';
}

/* Unit round-off of the accumulation and of the stored result. */
static double u_acc(char t)
{
	return t == 'd' || t == 'z' ? ldexp(1, -53) : ldexp(1, -24);
}

static double u_out(char t)
{
	return t == 'h' ? ldexp(1, -11) : t == 'b' ? ldexp(1, -8) : u_acc(t);
}

/* ---- the problem ------------------------------------------------------------- */

struct tensor {
	int64_t stride[MAXIDX]; /* by index id; 0 where the tensor lacks it */
	size_t given[MAXIDX];	/* in the order the expression writes them */
	int64_t extent;
	void *host;
};

/* Packed strides, or with pad > 0 strides that are not: every dimension
 * padded by pad elements and the elements two apart (no unit stride). */
static void make_strides(const struct TL(problem_info) * in, const int64_t *size, int t, int pad,
			 struct tensor *x)
{
	int64_t s = pad ? 2 : 1;
	int k;

	memset(x->stride, 0, sizeof(x->stride));
	for (k = 0; k < in->rank[t]; k++) {
		int id = in->packed_order[t][k];

		x->stride[id] = s;
		s *= size[id] + pad;
	}
	x->extent = 1;
	for (k = 0; k < in->rank[t]; k++) {
		int id = in->indices[t][k];

		x->given[k] = (size_t)x->stride[id];
		x->extent += (size[id] - 1) * x->stride[id];
	}
}

static int parse_sizes(const char *text, const struct TL(problem_info) * in, int64_t *size)
{
	int n = 0;
	const char *p = text;

	while (*p) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p || v < 1 || n >= in->num_indices)
			return -1;
		size[n++] = v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return n == in->num_indices ? 0 : -1;
}

/* The reference: C = alpha * sum A*B + beta * C_in, in double, and the
 * magnitude sum |alpha| |a| |b| + |beta| |c| for the error bound.  The
 * number of products in each sum. */
static int64_t reference(const struct TL(problem_info) * in, const int64_t *size,
		      const struct tensor *x, const double alpha[2], const double beta[2],
		      double *ref, double *mag)
{
	int nfree = in->rank[0], nb = 0, bound[MAXIDX], k, id;
	int64_t ci[MAXIDX], n = 1, m = 1, e;
	char t = in->type;

	for (id = 0; id < in->num_indices; id++) {
		int inc = 0;

		for (k = 0; k < nfree; k++)
			inc |= in->indices[0][k] == id;
		if (!inc)
			bound[nb++] = id;
	}
	for (k = 0; k < nfree; k++)
		n *= size[in->indices[0][k]];
	for (k = 0; k < nb; k++)
		m *= size[bound[k]];
	for (e = 0; e < n; e++) {
		int64_t rest = e, oc = 0, oa0 = 0, ob0 = 0, bi[MAXIDX], j;
		double s[2] = {0, 0}, am = 0, cv[2];

		for (k = 0; k < nfree; k++) {
			id = in->indices[0][k];
			ci[k] = rest % size[id];
			rest /= size[id];
			oc += ci[k] * x[0].stride[id];
			oa0 += ci[k] * x[1].stride[id];
			ob0 += ci[k] * x[2].stride[id];
		}
		for (j = 0; j < m; j++) {
			int64_t r2 = j, oa = oa0, ob = ob0;
			double a[2], b[2];

			for (k = 0; k < nb; k++) {
				bi[k] = r2 % size[bound[k]];
				r2 /= size[bound[k]];
				oa += bi[k] * x[1].stride[bound[k]];
				ob += bi[k] * x[2].stride[bound[k]];
			}
			tl_elem_get(t, x[1].host, oa, &a[0], &a[1]);
			tl_elem_get(t, x[2].host, ob, &b[0], &b[1]);
			if (in->conjugate[1])
				a[1] = -a[1];
			if (in->conjugate[2])
				b[1] = -b[1];
			s[0] += a[0] * b[0] - a[1] * b[1];
			s[1] += a[0] * b[1] + a[1] * b[0];
			am += hypot(a[0], a[1]) * hypot(b[0], b[1]);
		}
		if (beta[0] == 0 && beta[1] == 0)
			cv[0] = cv[1] = 0; /* C is not read (it holds NaN) */
		else
			tl_elem_get(t, x[0].host, oc, &cv[0], &cv[1]);
		ref[2 * e] = alpha[0] * s[0] - alpha[1] * s[1] + beta[0] * cv[0] - beta[1] * cv[1];
		ref[2 * e + 1] =
		    alpha[0] * s[1] + alpha[1] * s[0] + beta[0] * cv[1] + beta[1] * cv[0];
		mag[e] =
		    hypot(alpha[0], alpha[1]) * am + hypot(beta[0], beta[1]) * hypot(cv[0], cv[1]);
	}
	return m;
}

/* Writes n elements as a NumPy .npy file in Fortran order (the first index
 * fastest: the packed layout), shape in the order the expression writes the
 * tensor's indices, for `tcx run` to read.  0 on success. */
static int write_npy(const char *path, char t, const struct TL(problem_info) * in, int tensor,
		     const int64_t *size, const void *data, int64_t n)
{
	const char *descr = t == 'd'   ? "<f8"
			    : t == 'c' ? "<c8"
			    : t == 'z' ? "<c16"
			    : t == 'h' ? "<f2"
				       : "<f4";
	char head[512];
	size_t len, pad;
	FILE *fp;
	int k;

	len = (size_t)snprintf(head, sizeof(head),
			       "{'descr': '%s', 'fortran_order': True, 'shape': (", descr);
	for (k = 0; k < in->rank[tensor]; k++)
		len += (size_t)snprintf(head + len, sizeof(head) - len, "%lld,%s",
					(long long)size[in->indices[tensor][k]],
					k + 1 < in->rank[tensor] ? " " : "");
	len += (size_t)snprintf(head + len, sizeof(head) - len, "), }");
	pad = 64 - (10 + len + 1) % 64;
	fp = fopen(path, "wb");
	if (!fp)
		return -1;
	fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
	fputc((int)((len + pad + 1) & 0xff), fp);
	fputc((int)((len + pad + 1) >> 8), fp);
	fwrite(head, 1, len, fp);
	while (pad--)
		fputc(' ', fp);
	fputc('\n', fp);
	fwrite(data, tl_elem_bytes(t), (size_t)n, fp);
	return fclose(fp) ? -1 : 0;
}

/* ---- the device ----------------------------------------------------------------------- */

#if TL_WITH_CUDA || TL_WITH_HIP
#include "client_gpu.c"
#else
struct dev {
	cl_context ctx;
	cl_command_queue q;
};

static int dev_open(const char *spec, struct dev *d)
{
	cl_platform_id plats[16];
	cl_device_id devs[64];
	cl_uint np = 0, nd = 0;
	unsigned pi = 0, di = 0;
	cl_int rc;

	if (spec && sscanf(spec, "%u:%u", &pi, &di) != 2) {
		fprintf(stderr, "client: bad --device '%s': expected <platform>:<device>\n", spec);
		return 2;
	}
	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0 || pi >= np) {
		fprintf(stderr, "client: no OpenCL platform%s\n", np ? " of that number" : "");
		return 4;
	}
	if (clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS ||
	    di >= nd) {
		fprintf(stderr, "client: no OpenCL device %u:%u\n", pi, di);
		return 4;
	}
	d->ctx = clCreateContext(NULL, 1, &devs[di], NULL, NULL, &rc);
	if (rc != CL_SUCCESS) {
		fprintf(stderr, "client: cannot create an OpenCL context (%d)\n", (int)rc);
		return 3;
	}
	d->q = clCreateCommandQueue(d->ctx, devs[di], 0, &rc);
	if (rc != CL_SUCCESS) {
		fprintf(stderr, "client: cannot create an OpenCL queue (%d)\n", (int)rc);
		clReleaseContext(d->ctx);
		return 3;
	}
	return 0;
}

static void dev_close(struct dev *d)
{
	clReleaseCommandQueue(d->q);
	clReleaseContext(d->ctx);
}

static TL(queue) queue_of(struct dev *d)
{
	return (TL(queue))d->q;
}

static int dev_upload(struct dev *d, const void *host, size_t bytes, TL(mem) * out)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);

	if (rc == CL_SUCCESS)
		rc = clEnqueueWriteBuffer(d->q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
	if (rc != CL_SUCCESS) {
		fprintf(stderr, "client: cannot allocate or write %zu bytes (%d)\n", bytes,
			(int)rc);
		if (m)
			clReleaseMemObject(m);
		return 3;
	}
	*out = (TL(mem))m;
	return 0;
}

static int dev_download(struct dev *d, TL(mem) m, void *host, size_t bytes)
{
	cl_int rc = clEnqueueReadBuffer(d->q, (cl_mem)m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);

	if (rc != CL_SUCCESS) {
		fprintf(stderr, "client: cannot read the result (%d)\n", (int)rc);
		return 3;
	}
	return 0;
}

static int dev_finish(struct dev *d)
{
	return clFinish(d->q) == CL_SUCCESS ? 0 : 3;
}

static void dev_free(TL(mem) m)
{
	if (m)
		clReleaseMemObject((cl_mem)m);
}
#endif

/* ---- main -------------------------------------------------------------------------- */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: %s-client --list\n"
		"   or: %s-client [--problem <name|number>] --sizes <n,n,...> [--pad <n>]\n"
		"                 [--alpha <x>] [--beta <x>] [--seed <n>] [--device <p>:<d>]\n"
		"                 [--query] [--quiet] [--dump <dir>]\n"
		"   or: %s-client --compile (device | <architecture>) [--device <p>:<d>]\n",
		TL_NAME, TL_NAME, TL_NAME);
}

static void list(void)
{
	int k, i, t;

	for (k = 0; k < TL(problem_count)(); k++) {
		const struct TL(problem_info) *in = TL(problem)(k);

		printf("%d  %s  %s  (%c, %d solutions)\n   sizes:", k, in->name, in->expression,
		       in->type, in->num_solutions);
		for (i = 0; i < in->num_indices; i++)
			printf(" %s", in->index_names[i]);
		for (t = 0; t < 3; t++) {
			printf("; %c:", "CAB"[t]);
			for (i = 0; i < in->rank[t]; i++)
				printf(" %s", in->index_names[in->indices[t][i]]);
		}
		printf("\n");
	}
}

static int show_error(const char *what, enum TL(status) st)
{
	char detail[4096];

	TL(last_error)(detail, sizeof(detail));
	fprintf(stderr, "client: %s: %s%s%s\n", what, TL(status_str)(st), detail[0] ? ": " : "",
		detail);
	return st == TL_UP(EINVAL) ? 2 : 3;
}

int main(int argc, char **argv)
{
	const char *problem = "0", *sizes_text = NULL, *device = NULL, *dump = NULL;
	const char *compile = NULL;
	double alpha[2] = {1.5, 0}, beta[2] = {0, 0};
	unsigned long long seed = 1;
	int pad = 0, query = 0, k, pi, ret = 0;
	const struct TL(problem_info) * in;
	int64_t size[MAXIDX];
	size_t usize[MAXIDX];
	struct tensor x[3];
	struct dev d;
	TL(mem) mem[3] = {NULL, NULL, NULL};
	struct TL(choice) ch;
	enum TL(status) st;
	char t;
	double *ref = NULL, *mag = NULL;
	void *got = NULL;
	int64_t nc = 1, bad = 0, unwritten = 0;
	double worst = 0, worst_bound = 0;

	for (k = 1; k < argc; k++) {
		const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;

		if (!strcmp(a, "--list")) {
			list();
			return 0;
		} else if (!strcmp(a, "--query")) {
			query = 1;
		} else if (!strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (v && !strcmp(a, "--problem")) {
			problem = v, k++;
		} else if (v && !strcmp(a, "--sizes")) {
			sizes_text = v, k++;
		} else if (v && !strcmp(a, "--compile")) {
			compile = v, k++;
		} else if (v && !strcmp(a, "--dump")) {
			dump = v, k++;
		} else if (v && !strcmp(a, "--device")) {
			device = v, k++;
		} else if (v && !strcmp(a, "--pad")) {
			pad = atoi(v), k++;
		} else if (v && !strcmp(a, "--seed")) {
			seed = strtoull(v, NULL, 10), k++;
		} else if (v && (!strcmp(a, "--alpha") || !strcmp(a, "--beta"))) {
			double *s = a[2] == 'a' ? alpha : beta;

			if (sscanf(v, "%lf,%lf", &s[0], &s[1]) < 1) {
				usage(stderr);
				return 2;
			}
			k++;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (compile) {
		/* every kernel: for a target architecture (NVRTC, hiprtc: no device
		 * needed), or "device": for the device */
		int dev_target = !strcmp(compile, "device");

		if (dev_target) {
			ret = dev_open(device, &d);
			if (ret)
				return ret;
		}
		st = TL(compile)(dev_target ? queue_of(&d) : NULL, dev_target ? NULL : compile);
		if (dev_target)
			dev_close(&d);
		if (st)
			return show_error("compile", st);
		if (!quiet)
			printf("ok: every kernel compiles for %s\n", compile);
		TL(release)();
		return 0;
	}
	pi = TL(problem_find)(problem);
	if (pi < 0) {
		char *end;
		long n = strtol(problem, &end, 10);

		pi = *end || n < 0 || n >= TL(problem_count)() ? -1 : (int)n;
	}
	if (pi < 0) {
		fprintf(stderr, "client: no problem type '%s' (see --list)\n", problem);
		return 2;
	}
	in = TL(problem)(pi);
	t = in->type;
	if (!sizes_text || parse_sizes(sizes_text, in, size) || pad < 0) {
		fprintf(stderr, "client: give --sizes with %d sizes >= 1 for %s\n", in->num_indices,
			in->name);
		return 2;
	}
	if (!is_complex(t))
		alpha[1] = beta[1] = 0;
	if (dump && (pad || t == 'b' || beta[0] != 0 || beta[1] != 0)) {
		fprintf(stderr, "client: --dump writes packed tensors with beta 0, not bf16\n");
		return 2;
	}
	for (k = 0; k < in->num_indices; k++)
		usize[k] = (size_t)size[k];
	memset(x, 0, sizeof(x));
	for (k = 0; k < 3; k++)
		make_strides(in, size, k, pad, &x[k]);
	ret = dev_open(device, &d);
	if (ret)
		return ret;
	st = TL(query)(pi, queue_of(&d), usize, pad ? x[0].given : NULL, pad ? x[1].given : NULL,
		       pad ? x[2].given : NULL, &ch);
	if (st) {
		ret = show_error("query", st);
		goto out_dev;
	}
	if (query) {
		printf("solution=%d name=%s selector=%s generic=%d\nwhy: %s\nlogic: %s\n",
		       ch.solution, ch.name, ch.selector, ch.generic_strides, ch.why, ch.logic);
		goto out_dev;
	}

	/* random inputs (and C when beta is not 0; else NaN, to catch gaps) */
	for (k = 0; k < 3; k++) {
		struct pcg r;
		int64_t e;

		x[k].host = malloc((size_t)x[k].extent * tl_elem_bytes(t));
		if (!x[k].host) {
			fprintf(stderr, "client: out of memory\n");
			ret = 3;
			goto out_mem;
		}
		pcg_seed(&r, seed, (uint64_t)k + 1);
		for (e = 0; e < x[k].extent; e++) {
			double v[2];

			v[0] = pcg_value(&r);
			v[1] = is_complex(t) ? pcg_value(&r) : 0;
			if (k == 0 && beta[0] == 0 && beta[1] == 0)
				v[0] = v[1] = NAN;
			tl_elem_set(t, x[k].host, e, v[0], v[1]);
		}
		ret = dev_upload(&d, x[k].host, (size_t)x[k].extent * tl_elem_bytes(t), &mem[k]);
		if (ret)
			goto out_mem;
	}
	for (k = 0; k < in->rank[0]; k++)
		nc *= size[in->indices[0][k]];
	ref = malloc((size_t)nc * 2 * sizeof(double));
	mag = malloc((size_t)nc * sizeof(double));
	got = malloc((size_t)x[0].extent * tl_elem_bytes(t));
	if (!ref || !mag || !got) {
		fprintf(stderr, "client: out of memory\n");
		ret = 3;
		goto out_mem;
	}
	st = TL(run)(pi, queue_of(&d), usize, pad ? x[0].given : NULL, pad ? x[1].given : NULL,
		     pad ? x[2].given : NULL, alpha, beta, mem[0], mem[1], mem[2]);
	if (st) {
		ret = show_error("run", st);
		goto out_mem;
	}
	ret = dev_finish(&d);
	if (!ret)
		ret = dev_download(&d, mem[0], got, (size_t)x[0].extent * tl_elem_bytes(t));
	if (ret)
		goto out_mem;
	if (dump) {
		static const char *const names[3] = {"c.npy", "a.npy", "b.npy"};

		for (k = 0; k < 3 && !ret; k++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", dump, names[k]);
			if (write_npy(path, t, in, k, size, k ? x[k].host : got, x[k].extent)) {
				fprintf(stderr, "client: cannot write '%s'\n", path);
				ret = 3;
			}
		}
		if (ret)
			goto out_mem;
	}
	{
		int64_t e, products = reference(in, size, x, alpha, beta, ref, mag);
		int id;

		for (e = 0; e < nc; e++) {
			int64_t rest = e, oc = 0;
			double g[2], err, bound;

			for (k = 0; k < in->rank[0]; k++) {
				id = in->indices[0][k];
				oc += rest % size[id] * x[0].stride[id];
				rest /= size[id];
			}
			tl_elem_get(t, got, oc, &g[0], &g[1]);
			/* products accumulated in u_acc, the result rounded to u_out */
			bound = 4.0 * (double)(products + 2) * u_acc(t) * mag[e] +
				2 * u_out(t) * hypot(ref[2 * e], ref[2 * e + 1]) + 1e-300;
			err = hypot(g[0] - ref[2 * e], g[1] - ref[2 * e + 1]);
			if (isnan(g[0]) || isnan(g[1]))
				unwritten++;
			if (!(err <= bound)) {
				if (bad < 5)
					fprintf(
					    stderr,
					    "client: element %lld: got %.9g%+.9gi, want %.9g%+.9gi "
					    "(error %.3g > bound %.3g)\n",
					    (long long)e, g[0], g[1], ref[2 * e], ref[2 * e + 1],
					    err, bound);
				bad++;
			} else if (err / bound > worst) {
				worst = err / bound;
				worst_bound = bound;
			}
		}
	}
	if (bad) {
		fprintf(stderr,
			"client: MISMATCH: %lld of %lld elements of %s (%lld unwritten), "
			"solution %d (%s)\n",
			(long long)bad, (long long)nc, in->name, (long long)unwritten, ch.solution,
			ch.name);
		ret = 1;
	} else if (!quiet) {
		printf("ok: %s sizes %s%s: %lld elements within bound (worst error %.2g of the "
		       "bound %.2g); solution %d by %s (%s)\n",
		       in->name, sizes_text, pad ? " (padded strides)" : "", (long long)nc, worst,
		       worst_bound, ch.solution, ch.selector, ch.name);
	}
out_mem:
	for (k = 0; k < 3; k++) {
		dev_free(mem[k]);
		free(x[k].host);
	}
	free(ref);
	free(mag);
	free(got);
	TL(release)();
out_dev:
	dev_close(&d);
	return ret;
}

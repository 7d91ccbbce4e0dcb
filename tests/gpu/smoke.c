/* smoke.c - the cuda and hip backends on a real GPU (CTest label gpu): the
 * device's description, memory round trips, a compile error with its
 * log, the program binary round trip of the kernel cache, launch limits
 * rejected with reasons, event timing, and a few
 * contractions validated against the host reference, among them one
 * whose tiles need more than the 48 KiB of shared memory a CUDA block gets
 * without opting in.  The validation matrix itself runs on the GPU as
 * gpu.<backend>.matrix.<type> (tests/opencl/matrix.c --device <backend>:0).
 *
 * usage: gpu_smoke BACKEND [--device ID] [--seed N]
 * Exit 0 all passed, 1 a check failed, 77 no device of that backend (the
 * reason on stderr).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "notation/notation.h"
#include "run/run.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static void check_info(const struct device_info *d, const char *backend)
{
	printf("%s: %s, %s, %s, %d CUs, %lld B shared/block, %lld B shared/CU, warp %d\n", d->id,
	       d->name, d->arch, d->driver, d->compute_units, (long long)d->local_mem,
	       (long long)d->local_mem_per_cu, d->simd_width);
	CHECK(strcmp(d->backend, backend) == 0, "backend '%s'", d->backend);
	CHECK(strcmp(d->lang, "cuda") == 0, "lang '%s'", d->lang);
	CHECK(d->type == DEV_GPU, "type %d", (int)d->type);
	CHECK(d->compute_units > 0 && d->global_mem > 0 && d->max_alloc > 0, "sizes");
	CHECK(d->local_mem >= 32 * 1024, "shared memory %lld", (long long)d->local_mem);
	CHECK(d->max_wg_size >= 256 && d->max_wg_dim[0] >= 256, "block limits");
	CHECK(d->simd_width == 32 || d->simd_width == 64, "warp %d", d->simd_width);
	CHECK(d->driver[0] && d->name[0], "names");
	if (strcmp(backend, "cuda") == 0) {
		CHECK(strncmp(d->arch, "sm_", 3) == 0 && d->cc_major >= 3, "arch '%s'", d->arch);
		CHECK(d->local_mem > 48 * 1024 || d->cc_major < 7,
		      "opt-in shared memory %lld on sm_%d%d", (long long)d->local_mem, d->cc_major,
		      d->cc_minor);
	} else {
		CHECK(strncmp(d->arch, "gfx", 3) == 0, "arch '%s'", d->arch);
	}
}

/* Random bytes up and down, at an offset, and fills of 1..16-byte patterns. */
static void check_memory(struct device *dev, uint64_t seed)
{
	struct tcx_error err = {0};
	struct buffer *b = NULL;
	enum { N = 1 << 20 };
	unsigned char *in = malloc(N), *out = malloc(N);
	struct pcg32 rng;

	pcg32_seed(&rng, seed, 7);
	for (size_t k = 0; k < N; k++)
		in[k] = (unsigned char)pcg32_next(&rng);
	CHECK(buffer_alloc(dev, N, &b, &err) == TCX_OK, "%s", err.msg);
	if (!b)
		goto out;
	CHECK(buffer_write(dev, b, 0, in, N, &err) == TCX_OK, "%s", err.msg);
	memset(out, 0, N);
	CHECK(buffer_read(dev, b, 0, out, N, &err) == TCX_OK, "%s", err.msg);
	CHECK(memcmp(in, out, N) == 0, "round trip differs");
	CHECK(buffer_write(dev, b, 4097, in, 1000, &err) == TCX_OK, "%s", err.msg);
	CHECK(buffer_read(dev, b, 4097, out, 1000, &err) == TCX_OK, "%s", err.msg);
	CHECK(memcmp(in, out, 1000) == 0, "offset round trip differs");
	CHECK(buffer_read(dev, b, N - 10, out, 11, &err) == TCX_EINVAL, "read past the end");
	buffer_free(dev, b);
out:
	free(in);
	free(out);
}

/* A compile error comes back as TCX_EBUILD with the compiler's log. */
static void check_build_error(struct device *dev)
{
	static const char bad[] = "extern \"C\" __global__ void k(float *x) { x[0] = nosuch; }\n";
	struct tcx_error err = {0};
	struct strbuf log = STRBUF_INIT;
	struct program *p = NULL;
	enum tcx_status st = device_build(dev, bad, strlen(bad), NULL, &p, NULL, &log, &err);

	CHECK(st == TCX_EBUILD, "status %d: %s", (int)st, err.msg);
	CHECK(strstr(err.msg, "nosuch") != NULL, "message '%s' names the error", err.msg);
	CHECK(strstr(strbuf_str(&log), "nosuch") != NULL, "log '%s'", strbuf_str(&log));
	strbuf_release(&log);
}

/* A tiny kernel: the binary round trip, resources, limits and timing. */
static void check_kernel(struct device *dev)
{
	static const char src[] = "extern \"C\" __global__ void scale(float *x, float a, long n)\n"
				  "{\n"
				  "\tlong i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
				  "\tif (i < n)\n"
				  "\t\tx[i] *= a;\n"
				  "}\n";
	const struct tcx_backend_ops *ops = device_ops(dev);
	struct tcx_error err = {0};
	struct program *p = NULL, *p2 = NULL;
	struct buffer *b = NULL;
	struct launch l;
	float v[1000], a = 3.0f;
	long n = 1000;
	unsigned char *bin = NULL;
	size_t blen = 0;
	double ms = -1;

	for (int k = 0; k < 1000; k++)
		v[k] = (float)k;
	CHECK(ops->build(dev, src, strlen(src), NULL, &p, &err) == TCX_OK, "%s", err.msg);
	if (!p)
		return;
	CHECK(ops->binary && ops->binary(p, &bin, &blen, &err) == TCX_OK && blen > 0, "%s",
	      err.msg);
	CHECK(ops->build_binary && ops->build_binary(dev, bin, blen, &p2, &err) == TCX_OK, "%s",
	      err.msg);
	if (ops->build_binary) {
		struct program *bad = NULL;

		bin[blen / 2] ^= 0xff;
		bin[0] ^= 0xff;
		CHECK(ops->build_binary(dev, bin, blen, &bad, &err) == TCX_ECORRUPT,
		      "a damaged binary: %s", err.msg);
		ops->program_free(bad);
	}
	free(bin);
	CHECK(buffer_alloc(dev, sizeof(v), &b, &err) == TCX_OK, "%s", err.msg);
	if (!b)
		goto out;
	CHECK(buffer_write(dev, b, 0, v, sizeof(v), &err) == TCX_OK, "%s", err.msg);
	launch_init(&l, "scale");
	l.local[0] = 128;
	l.global[0] = 1024;
	launch_arg_buffer(&l, b);
	launch_arg_bytes(&l, &a, sizeof(a));
	launch_arg_bytes(&l, &n, sizeof(n));
	CHECK(device_launch(dev, p2 ? p2 : p, &l, &ms, &err) == TCX_OK, "%s", err.msg);
	CHECK(ms > 0 && ms < 1000, "event time %g ms", ms);
	CHECK(buffer_read(dev, b, 0, v, sizeof(v), &err) == TCX_OK, "%s", err.msg);
	for (int k = 0; k < 1000; k++)
		if (v[k] != 3.0f * (float)k) {
			CHECK(v[k] == 3.0f * (float)k, "x[%d] = %g", k, v[k]);
			break;
		}
	/* limits come back as reasons, not as driver codes */
	l.local[0] = 4096;
	l.global[0] = 4096;
	CHECK(device_launch(dev, p, &l, NULL, &err) == TCX_ELIMIT, "block of 4096: %s", err.msg);
	l.local[0] = 128;
	l.global[0] = 1000;
	CHECK(device_launch(dev, p, &l, NULL, &err) == TCX_ELAUNCH, "uneven grid: %s", err.msg);
	l.global[0] = 1024;
	if (strcmp(device_info_of(dev)->backend, "cuda") == 0) {
		/* gridDim.y is 16-bit on NVIDIA GPUs */
		l.global[1] = 70000;
		CHECK(device_launch(dev, p, &l, NULL, &err) == TCX_ELIMIT, "grid y of 70000: %s",
		      err.msg);
		l.global[1] = 1;
	}
	l.kernel = "nosuch";
	CHECK(device_launch(dev, p, &l, NULL, &err) == TCX_ELAUNCH, "no such kernel: %s", err.msg);
	CHECK(device_finish(dev, &err) == TCX_OK, "%s", err.msg);
	buffer_free(dev, b);
out:
	ops->program_free(p2);
	ops->program_free(p);
}

struct vcase {
	const char *expr;
	const char *type;
	const char *params;
	int64_t sizes[8];
};

/* Contractions across the kernel families; the last ones need 64 KiB and
 * 96 KiB of shared memory (beyond 48 KiB: the opt-in path). */
static const struct vcase vcases[] = {
    {"C[ij]=A[ik]*B[kj]", "s", "", {1000, 999, 257}},
    {"C[ijk]=A[ilk]*B[jlk] + beta*C[ijk]", "d", "", {127, 65, 3, 129}},
    {"ilk,jlk->ijk",
     "c",
     "WorkGroup=[8,8,2],ThreadTile=[2,2],DepthU=16,GlobalSplitU=2",
     {33, 47, 5, 301}},
    {"C[ij]=conj(A[ik])*B[jk]", "z", "", {64, 31, 77}},
    {"C[ij]=A[ki]*B[jk]", "h", "VectorWidth=4", {200, 131, 517}},
    {"C[ij]=A[ik]*B[kj]", "b", "", {250, 129, 64}},
    {"C[i,j,k,l] = Sum[m,n] A[i,j,m,n,l] * B[m,n,k,j,l]", "s", "UseLDS=False", {9, 5, 11, 3, 7, 6}},
    {"C[ij]=A[ik]*B[kj]",
     "s",
     "UseLDS=True,WorkGroup=[16,16,1],ThreadTile=[8,8],VectorWidth=4,DepthU=32",
     {517, 389, 1031}},
    {"C[ij]=A[ik]*B[kj]",
     "s",
     "UseLDS=True,WorkGroup=[16,16,1],ThreadTile=[8,4],VectorWidth=4,DepthU=64,LdsPad=4",
     {300, 200, 700}},
};

static void check_contractions(struct device *dev, uint64_t seed)
{
	bool cuda = strcmp(device_info_of(dev)->backend, "cuda") == 0;

	for (size_t k = 0; k < ARRAY_SIZE(vcases); k++) {
		const struct vcase *v = &vcases[k];
		struct tcx_error err = {0};
		struct tcx_contraction *c = NULL;
		struct problem p;
		struct solution s;
		struct prepared pr;
		struct validate_opts o;
		struct validate_report r;
		enum tcx_dtype t;
		enum tcx_status st;

		memset(&pr, 0, sizeof(pr));
		dtype_parse(v->type, &t);
		st = notation_parse(v->expr, t, LAYOUT_BY_STYLE, &c, &err);
		if (!st)
			st = problem_init(&p, c, v->sizes, &err);
		solution_heuristic(c, device_info_of(dev), &s);
		if (!st && *v->params)
			st = solution_parse(&s, v->params, &err);
		if (!st)
			st = contract_prepare(dev, c, &p, &s, &pr, NULL, &err);
		validate_opts_default(&o);
		o.seed = seed + k;
		if (c && c->use_beta)
			o.beta[0] = 0.5;
		if (!st)
			st = validate_run(dev, &pr, &p, &o, &r, &err);
		if (st == TCX_ELIMIT && !cuda) {
			/* AMD's 64 KiB of LDS: the largest tiles are not for it */
			printf("n/a  %-48s %s: %s\n", v->expr, v->type, err.msg);
			contraction_free(c);
			continue;
		}
		printf("%s %-48s %s %-60s %s\n", st ? "FAIL" : "ok  ", v->expr, v->type, v->params,
		       st ? err.msg : "");
		if (st) {
			failures++;
			printf("     plan: %lld B of shared memory (seed %llu)\n",
			       (long long)pr.plan.lds_bytes, (unsigned long long)o.seed);
		} else if (pr.plan.lds_bytes > 48 * 1024) {
			printf("     %lld B of shared memory, %.3f ms\n",
			       (long long)pr.plan.lds_bytes, r.kernel_ms);
		}
		contraction_free(c);
	}
}

int main(int argc, char **argv)
{
	const char *backend, *id = NULL;
	char idbuf[64];
	uint64_t seed = 1;
	struct device *dev = NULL;
	struct tcx_error err = {0};
	enum tcx_status st;

	if (argc < 2 || (strcmp(argv[1], "cuda") && strcmp(argv[1], "hip"))) {
		fprintf(stderr, "usage: gpu_smoke cuda|hip [--device ID] [--seed N]\n");
		return 2;
	}
	backend = argv[1];
	for (int k = 2; k < argc; k++) {
		if (!strcmp(argv[k], "--device") && k + 1 < argc)
			id = argv[++k];
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 10);
	}
	if (!id) {
		snprintf(idbuf, sizeof(idbuf), "%s:0", backend);
		id = idbuf;
	}
	if (!backend_find(backend)) {
		fprintf(stderr, "skipped: tcx was built without the %s backend\n", backend);
		return 77;
	}
	st = device_open(id, &dev, &err);
	if (st == TCX_ENODEV) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		return 77;
	}
	if (st) {
		printf("FAIL cannot open '%s': %s\n", id, err.msg);
		return 1;
	}
	check_info(device_info_of(dev), backend);
	check_memory(dev, seed);
	check_build_error(dev);
	check_kernel(dev);
	check_contractions(dev, seed);
	device_close(dev);
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}

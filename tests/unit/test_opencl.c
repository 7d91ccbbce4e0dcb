/* test_opencl.c - the OpenCL backend on whatever device the ICD loader has
 * (PoCL on CI): probe, build, transfers, launches and their limits, build
 * errors, binaries and the program cache.  Skips without an OpenCL device. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"

#define N 1000
#define LOCAL 64
#define GLOBAL 1024 /* N rounded up to LOCAL */

static const char vadd_src[] =
	"__kernel void vadd(__global const float *a, __global const float *b,\n"
	"                   __global float *c, int n)\n"
	"{\n"
	"	int i = (int)get_global_id(0);\n"
	"	if (i < n)\n"
	"		c[i] = a[i] + b[i];\n"
	"}\n"
	"__kernel void uses_local(__global float *c, __local float *tmp)\n"
	"{\n"
	"	tmp[get_local_id(0)] = 1.0f;\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	c[get_global_id(0)] = tmp[0];\n"
	"}\n";

static const char broken_src[] =
	"__kernel void broken(__global float *c)\n"
	"{\n"
	"	c[0] = 1.0f +;\n"
	"}\n";

static uint64_t seed;

/* Checks c == a + b, element by element (exact in fp32 both ways). */
static int count_wrong(const float *a, const float *b, const float *c, int n)
{
	int wrong = 0;

	for (int i = 0; i < n; i++)
		if (c[i] != a[i] + b[i])
			wrong++;
	return wrong;
}

static void vadd_launch(struct launch *l, struct buffer *a, struct buffer *b, struct buffer *c,
			const int *n)
{
	launch_init(l, "vadd");
	l->global[0] = GLOBAL;
	l->local[0] = LOCAL;
	launch_arg_buffer(l, a);
	launch_arg_buffer(l, b);
	launch_arg_buffer(l, c);
	launch_arg_bytes(l, n, sizeof(*n));
}

int main(void)
{
	const struct tcx_backend_ops *ops = backend_find("opencl");
	struct device_info infos[16];
	const struct device_info *di;
	struct device *dev = NULL, *bad = NULL;
	struct program *prog = NULL, *broken = NULL, *fromb = NULL, *cached1 = NULL,
		       *cached2 = NULL;
	struct buffer *ba = NULL, *bb = NULL, *bc = NULL, *huge = NULL;
	struct tcx_error err = { 0 };
	struct launch l;
	struct pcg32 rng;
	enum tcx_status st;
	float a[N], b[N], c[N], c2[N];
	unsigned char *bin = NULL;
	size_t binlen = 0;
	double ms = -1;
	int n = N, count = 0;
	unsigned long hits;
	struct device_cache_stats stats;
	const char *s;

	seed = (uint64_t)(common_now_seconds() * 1e6);
	if ((s = getenv("TCX_TEST_SEED")) != NULL)
		seed = strtoull(s, NULL, 10);
	fprintf(stderr, "seed %" PRIu64 " (set TCX_TEST_SEED to repeat)\n", seed);
	pcg32_seed(&rng, seed, 1);

	if (!ops)
		SKIP("the OpenCL backend is not built");
	st = ops->probe(infos, (int)ARRAY_SIZE(infos), &count, &err);
	if (st || count == 0)
		SKIP("no OpenCL device: %s", st ? err.msg : "none found");
	for (int k = 0; k < count; k++) {
		CHECK(strncmp(infos[k].id, "opencl:", 7) == 0);
		CHECK(strcmp(infos[k].backend, "opencl") == 0);
		CHECK(strcmp(infos[k].lang, "opencl") == 0);
		CHECK(infos[k].name[0] != '\0');
		CHECK(infos[k].driver[0] != '\0');
		CHECK(infos[k].arch[0] != '\0');
		CHECK(infos[k].compute_units > 0);
		CHECK(infos[k].global_mem > 0);
		CHECK(infos[k].max_alloc > 0 && infos[k].max_alloc <= infos[k].global_mem);
		CHECK(infos[k].local_mem > 0);
		CHECK(infos[k].max_wg_size > 0);
		CHECK(infos[k].max_wg_dim[0] > 0);
		CHECK(infos[k].simd_width > 0);
		CHECK(infos[k].type != DEV_CPU || !infos[k].timer_events);
	}
	fprintf(stderr, "device %s: %s (%s)\n", infos[0].id, infos[0].name, infos[0].arch);

	st = device_open(infos[0].id, &dev, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	if (st)
		return check_done();
	di = device_info_of(dev);
	CHECK(strcmp(di->id, infos[0].id) == 0);
	CHECK(device_ops(dev) == ops);
	CHECK(!device_is_host(dev));

	/* build, transfer, launch with an event, read back */
	st = ops->build(dev, vadd_src, strlen(vadd_src), "-cl-std=CL1.2", &prog, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	if (st)
		goto out;
	CHECK(program_log(prog) != NULL);
	for (int i = 0; i < N; i++) {
		a[i] = (float)(pcg32_double(&rng) * 2 - 1);
		b[i] = (float)(pcg32_double(&rng) * 2 - 1);
		c[i] = c2[i] = -12345.0f;
	}
	st = buffer_alloc(dev, sizeof(a), &ba, &err);
	if (!st)
		st = buffer_alloc(dev, sizeof(b), &bb, &err);
	if (!st)
		st = buffer_alloc(dev, sizeof(c), &bc, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	if (st)
		goto out;
	CHECK(buffer_write(dev, ba, 0, a, sizeof(a), &err) == TCX_OK);
	CHECK(buffer_write(dev, bb, 0, b, sizeof(b), &err) == TCX_OK);
	/* C starts poisoned: the kernel must write all of it */
	CHECK(buffer_write(dev, bc, 0, c, sizeof(c), &err) == TCX_OK);
	vadd_launch(&l, ba, bb, bc, &n);
	st = device_launch(dev, prog, &l, &ms, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	CHECK(ms >= 0);
	CHECK(buffer_read(dev, bc, 0, c, sizeof(c), &err) == TCX_OK);
	CHECK_MSG(count_wrong(a, b, c, N) == 0, "vadd wrong at %d of %d elements (seed %" PRIu64 ")",
		  count_wrong(a, b, c, N), N, seed);
	/* without an event: enqueued, then finished */
	CHECK(device_launch(dev, prog, &l, NULL, &err) == TCX_OK);
	CHECK(device_finish(dev, &err) == TCX_OK);

	/* reads and writes past the end are refused */
	st = buffer_read(dev, bc, 4, c, sizeof(c), &err);
	CHECK(st == TCX_EINVAL);

	/* a work-group above the device limit is refused before enqueueing,
	 * as a device limit (TCX_ELIMIT, as on CUDA and HIP) */
	vadd_launch(&l, ba, bb, bc, &n);
	l.local[0] = (size_t)di->max_wg_size * 2;
	l.global[0] = l.local[0];
	tcx_error_clear(&err);
	st = device_launch(dev, prog, &l, NULL, &err);
	CHECK(st == TCX_ELIMIT);
	CHECK_MSG(strstr(err.msg, "exceeds") != NULL, "message '%s'", err.msg);
	/* a global size that is not a multiple of the work-group */
	vadd_launch(&l, ba, bb, bc, &n);
	l.global[0] = N;
	st = device_launch(dev, prog, &l, NULL, &err);
	CHECK(st == TCX_ELAUNCH);
	CHECK_MSG(strstr(err.msg, "multiple") != NULL, "message '%s'", err.msg);
	/* the wrong number of arguments */
	vadd_launch(&l, ba, bb, bc, &n);
	l.nargs = 3;
	st = device_launch(dev, prog, &l, NULL, &err);
	CHECK(st == TCX_ELAUNCH);
	CHECK_MSG(strstr(err.msg, "arguments") != NULL, "message '%s'", err.msg);
	/* a kernel the program does not have */
	vadd_launch(&l, ba, bb, bc, &n);
	l.kernel = "no_such_kernel";
	st = device_launch(dev, prog, &l, NULL, &err);
	CHECK(st == TCX_ELAUNCH);
	CHECK_MSG(strstr(err.msg, "CL_INVALID_KERNEL_NAME") != NULL && err.native != 0,
		  "message '%s'", err.msg);
	/* dynamic local memory: a fit runs, too much is refused */
	launch_init(&l, "uses_local");
	l.global[0] = GLOBAL;
	l.local[0] = LOCAL;
	launch_arg_buffer(&l, bc);
	launch_arg_local(&l, LOCAL * sizeof(float));
	st = device_launch(dev, prog, &l, NULL, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	CHECK(device_finish(dev, &err) == TCX_OK);
	CHECK(buffer_read(dev, bc, 0, c2, sizeof(c2), &err) == TCX_OK);
	CHECK(c2[0] == 1.0f && c2[N - 1] == 1.0f);
	l.args[1].size = (size_t)di->local_mem + 1;
	st = device_launch(dev, prog, &l, NULL, &err);
	CHECK(st == TCX_ELIMIT);
	CHECK_MSG(strstr(err.msg, "local memory") != NULL, "message '%s'", err.msg);

	/* more than the largest buffer: an error, not a crash */
	tcx_error_clear(&err);
	st = buffer_alloc(dev, (size_t)di->max_alloc + 1, &huge, &err);
	CHECK(st != TCX_OK);
	CHECK(huge == NULL);
	CHECK_MSG(strstr(err.msg, "bytes") != NULL, "message '%s'", err.msg);
	buffer_free(dev, huge);

	/* a syntax error: TCX_EBUILD, a log, the program still returned */
	tcx_error_clear(&err);
	st = ops->build(dev, broken_src, strlen(broken_src), NULL, &broken, &err);
	CHECK(st == TCX_EBUILD);
	CHECK(err.native == -11); /* CL_BUILD_PROGRAM_FAILURE */
	CHECK(err.msg[0] != '\0');
	CHECK(broken != NULL);
	if (broken) {
		CHECK(strlen(program_log(broken)) > 0);
		fprintf(stderr, "build error, as reported: %s\n", err.msg);
	}
	ops->program_free(broken);

	/* binary round trip: the same results from the binary */
	st = ops->binary(prog, &bin, &binlen, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	CHECK(binlen > 0);
	if (!st) {
		st = ops->build_binary(dev, bin, binlen, &fromb, &err);
		CHECK_MSG(st == TCX_OK, "%s", err.msg);
	}
	if (!st && fromb) {
		memset(c2, 0, sizeof(c2));
		CHECK(buffer_write(dev, bc, 0, c2, sizeof(c2), &err) == TCX_OK);
		vadd_launch(&l, ba, bb, bc, &n);
		st = device_launch(dev, fromb, &l, &ms, &err);
		CHECK_MSG(st == TCX_OK, "%s", err.msg);
		CHECK(buffer_read(dev, bc, 0, c2, sizeof(c2), &err) == TCX_OK);
		CHECK_MSG(memcmp(c, c2, sizeof(c)) == 0, "binary gives other results (seed %" PRIu64 ")",
			  seed);
	}
	ops->program_free(fromb);
	fromb = NULL;
	/* a damaged binary is refused as such */
	if (bin && binlen > 16) {
		unsigned char junk[64];

		for (size_t k = 0; k < sizeof(junk); k++)
			junk[k] = (unsigned char)pcg32_next(&rng);
		st = ops->build_binary(dev, junk, sizeof(junk), &fromb, &err);
		CHECK_MSG(st == TCX_ECORRUPT, "status %d: %s", st, err.msg);
		ops->program_free(fromb);
		fromb = NULL;
	}
	free(bin);

	/* the in-process cache: the second build is a hit */
	device_cache_stats(dev, &stats);
	hits = stats.memory_hits;
	st = device_build(dev, vadd_src, strlen(vadd_src), NULL, &cached1, NULL, NULL, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	st = device_build(dev, vadd_src, strlen(vadd_src), NULL, &cached2, NULL, NULL, &err);
	CHECK_MSG(st == TCX_OK, "%s", err.msg);
	CHECK(cached1 == cached2 && cached1 != NULL);
	device_cache_stats(dev, &stats);
	CHECK(stats.memory_hits == hits + 1);
	if (cached2) {
		vadd_launch(&l, ba, bb, bc, &n);
		CHECK(device_launch(dev, cached2, &l, NULL, &err) == TCX_OK);
		CHECK(buffer_read(dev, bc, 0, c2, sizeof(c2), &err) == TCX_OK);
		CHECK(count_wrong(a, b, c2, N) == 0);
	}
	/* a failed build through the cache is not cached */
	st = device_build(dev, broken_src, strlen(broken_src), NULL, &cached1, NULL, NULL, &err);
	CHECK(st == TCX_EBUILD && cached1 == NULL);

	/* an id that does not exist */
	tcx_error_clear(&err);
	st = device_open("opencl:99:0", &bad, &err);
	CHECK(st != TCX_OK);
	CHECK(bad == NULL);
	CHECK(err.msg[0] != '\0');
	device_close(bad);

out:
	buffer_free(dev, ba);
	buffer_free(dev, bb);
	buffer_free(dev, bc);
	if (prog)
		ops->program_free(prog);
	device_close(dev);
	return check_done();
}

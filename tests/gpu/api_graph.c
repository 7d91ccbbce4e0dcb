/* api_graph.c - the device API's execute captured into a CUDA graph (CTest
 * label gpu): two plans (a GEMM and a contraction with two summed indices
 * and permuted operands) are executed on a stream under a global-mode
 * stream capture, which fails if execute calls anything a capture forbids
 * (a memory allocation, a synchronisation); the graph is then replayed
 * three times and C, accumulated with beta 1, compared with three times the
 * host reference.
 *
 * usage: gpu_api_graph [DEVICE]   (default cuda:0)
 * Exit 0 passed, 1 a check failed, 77 no CUDA device (the reason on
 * stderr).  The driver is loaded with dlopen, as tcx loads it. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "tcx.h"

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			failures++;                                           \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                  \
			printf("\n");                                         \
		}                                                             \
	} while (0)

/* The driver's entry points this test calls itself. */
static struct {
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*BeginCapture)(CUstream, CUstreamCaptureMode);
	CUresult (*EndCapture)(CUstream, CUgraph *);
	CUresult (*Instantiate)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult (*GraphLaunch)(CUgraphExec, CUstream);
	CUresult (*GraphDestroy)(CUgraph);
	CUresult (*GraphExecDestroy)(CUgraphExec);
} cu;

static int load_driver(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	static const char *const names[] = {
		"cuCtxSetCurrent",	 "cuStreamCreate",	       "cuStreamDestroy_v2",
		"cuStreamSynchronize",	 "cuMemAlloc_v2",	       "cuMemFree_v2",
		"cuMemcpyHtoD_v2",	 "cuMemcpyDtoH_v2",	       "cuStreamBeginCapture_v2",
		"cuStreamEndCapture",	 "cuGraphInstantiateWithFlags", "cuGraphLaunch",
		"cuGraphDestroy",	 "cuGraphExecDestroy",
	};
	void **slot = (void **)&cu;

	if (!lib)
		return -1;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		slot[k] = dlsym(lib, names[k]);
		if (!slot[k]) {
			fprintf(stderr, "skipped: the CUDA driver has no %s\n", names[k]);
			return -1;
		}
	}
	return 0;
}

static void fill(float *x, size_t n, unsigned seed)
{
	for (size_t k = 0; k < n; k++) {
		seed = seed * 1103515245u + 12345u;
		x[k] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

struct job {
	const char *expr;
	int64_t sizes[8];
	struct tcx_contraction *c;
	struct tcx_plan *plan;
	float *h[3], *want;
	CUdeviceptr d[3];
	size_t bytes[3];
};

static int setup(struct tcx_device *dev, struct job *j)
{
	struct tcx_error err = { 0 };
	const double beta = 1;

	if (tcx_contraction_parse(j->expr, TCX_DTYPE_S, &j->c, &err) ||
	    tcx_plan_create(dev, j->c, j->sizes, NULL, NULL, NULL, NULL, &j->plan, &err)) {
		CHECK(0, "%s: %s", j->expr, err.msg);
		return -1;
	}
	for (int t = 0; t < 3; t++) {
		j->bytes[t] = tcx_plan_bytes(j->plan, "ABC"[t]);
		j->h[t] = calloc(1, j->bytes[t]);
		fill(j->h[t], j->bytes[t] / 4, 3u + (unsigned)t);
		if (t == 2)
			memset(j->h[t], 0, j->bytes[t]);
		if (cu.MemAlloc(&j->d[t], j->bytes[t]) != CUDA_SUCCESS ||
		    cu.MemcpyHtoD(j->d[t], j->h[t], j->bytes[t]) != CUDA_SUCCESS) {
			CHECK(0, "%s: device memory", j->expr);
			return -1;
		}
	}
	/* C = 3 A B: three replays of C += A B from C = 0 */
	j->want = calloc(1, j->bytes[2]);
	if (tcx_contraction_reference(j->c, j->sizes, j->h[0], j->h[1], j->want, NULL, &beta,
				      &err)) {
		CHECK(0, "%s: reference: %s", j->expr, err.msg);
		return -1;
	}
	for (size_t k = 0; k < j->bytes[2] / 4; k++)
		j->want[k] *= 3;
	return 0;
}

static void finish(struct job *j)
{
	double worst = 0, scale = 0;
	char what[320];

	if (cu.MemcpyDtoH(j->h[2], j->d[2], j->bytes[2]) != CUDA_SUCCESS) {
		CHECK(0, "%s: reading C", j->expr);
		return;
	}
	for (size_t k = 0; k < j->bytes[2] / 4; k++) {
		worst = fmax(worst, fabs((double)j->h[2][k] - j->want[k]));
		scale = fmax(scale, fabs(j->want[k]));
	}
	tcx_plan_describe(j->plan, what, sizeof(what));
	printf("%s: %s: max |error| %.3g of %.3g\n", j->expr, what, worst, scale);
	CHECK(worst <= 1e-3 * (scale > 1 ? scale : 1), "%s: off by %g", j->expr, worst);
}

static void release(struct job *j)
{
	for (int t = 0; t < 3; t++) {
		if (j->d[t])
			cu.MemFree(j->d[t]);
		free(j->h[t]);
	}
	free(j->want);
	tcx_plan_destroy(j->plan);
	tcx_contraction_destroy(j->c);
}

int main(int argc, char **argv)
{
	struct tcx_error err = { 0 };
	struct tcx_device *dev = NULL;
	struct job jobs[2] = {
		{ .expr = "ik,kj->ij", .sizes = { 384, 320, 256 } },
		{ .expr = "abcd,ebd->aec", .sizes = { 48, 40, 64, 24, 32 } },
	};
	const double beta = 1;
	CUstream s = NULL;
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	CUresult rc;

	if (tcx_device_open(argc > 1 ? argv[1] : "cuda:0", &dev, &err)) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		return 77;
	}
	if (load_driver()) {
		tcx_device_close(dev);
		return 77;
	}
	CHECK(cu.CtxSetCurrent(tcx_device_native(dev, TCX_NATIVE_CONTEXT)) == CUDA_SUCCESS,
	      "context");
	CHECK(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS, "stream");
	for (int k = 0; k < 2; k++)
		if (setup(dev, &jobs[k]))
			goto out;

	/* global mode: any call a capture forbids, from any thread, fails it */
	rc = cu.BeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	CHECK(rc == CUDA_SUCCESS, "begin capture: %d", (int)rc);
	for (int k = 0; k < 2; k++) {
		struct job *j = &jobs[k];

		CHECK(tcx_plan_execute(j->plan, s, (void *)(uintptr_t)j->d[0],
				       (void *)(uintptr_t)j->d[1], (void *)(uintptr_t)j->d[2], NULL,
				       &beta, &err) == TCX_OK,
		      "%s: execute under capture: %s", j->expr, err.msg);
	}
	rc = cu.EndCapture(s, &graph);
	CHECK(rc == CUDA_SUCCESS, "end capture: %d (an execute did what a capture forbids)",
	      (int)rc);
	if (rc != CUDA_SUCCESS)
		goto out;
	rc = cu.Instantiate(&exec, graph, 0);
	CHECK(rc == CUDA_SUCCESS, "instantiate: %d", (int)rc);
	for (int r = 0; r < 3 && rc == CUDA_SUCCESS; r++) {
		rc = cu.GraphLaunch(exec, s);
		CHECK(rc == CUDA_SUCCESS, "replay %d: %d", r, (int)rc);
	}
	rc = cu.StreamSynchronize(s);
	CHECK(rc == CUDA_SUCCESS, "synchronize: %d", (int)rc);
	for (int k = 0; k < 2; k++)
		finish(&jobs[k]);
out:
	if (exec)
		cu.GraphExecDestroy(exec);
	if (graph)
		cu.GraphDestroy(graph);
	for (int k = 0; k < 2; k++)
		release(&jobs[k]);
	if (s)
		cu.StreamDestroy(s);
	tcx_device_close(dev);
	printf("%s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}

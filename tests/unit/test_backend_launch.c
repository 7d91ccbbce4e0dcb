/* test_backend_launch.c - the same launches on every backend, and the same
 * status for each: launches past a device limit (work-items per group, in
 * all and in one dimension; local memory; groups in one dimension) are
 * TCX_ELIMIT, malformed ones (an uneven grid, a kernel the program lacks)
 * TCX_ELAUNCH, a NULL buffer TCX_EINVAL, and a launch that fits computes.
 * OpenCL runs on the first OpenCL device (PoCL in CI); CUDA and HIP compile
 * with their real compilers (NVRTC, hiprtc) and run on fake drivers
 * (fake_gpu.c, named by $TCX_TEST_FAKE_CUDA and $TCX_TEST_FAKE_HIP) that
 * stand in for a GPU, so that their host code runs on machines without
 * one: transfers, fills, binaries, build errors, kernel resources, tensor
 * maps and event timing besides the launches.  A backend whose compiler or
 * driver is missing is skipped, and the test says why. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "check.h"

#define N 1000

static const char cl_src[] =
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

static const char cu_src[] =
	"extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n)\n"
	"{\n"
	"	int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"	if (i < n)\n"
	"		c[i] = a[i] + b[i];\n"
	"}\n"
	"extern \"C\" __global__ void uses_local(float *c)\n"
	"{\n"
	"	extern __shared__ float tmp[];\n"
	"	tmp[threadIdx.x] = 1.0f;\n"
	"	__syncthreads();\n"
	"	c[blockIdx.x * blockDim.x + threadIdx.x] = tmp[0];\n"
	"}\n";

static const char cu_broken[] =
	"extern \"C\" __global__ void broken(float *c) { c[0] = 1.0f +; }\n";

/* The launches, each a change to a vadd launch that fits. */
enum launch_case {
	FITS,
	WG_TOO_LARGE,
	WG_DIM_TOO_LARGE,
	LOCAL_TOO_LARGE,
	GROUPS_TOO_MANY,
	UNEVEN,
	NO_KERNEL,
	EXTRA_ARG,
	ARG_SIZE,
	NULL_BUFFER,
	NCASES
};

static const struct {
	const char *what;
	enum tcx_status want;
} cases[NCASES] = {
	[FITS] = { "a launch that fits", TCX_OK },
	[WG_TOO_LARGE] = { "twice the work-items a group may have", TCX_ELIMIT },
	[WG_DIM_TOO_LARGE] = { "a group past the limit of dimension 2", TCX_ELIMIT },
	[LOCAL_TOO_LARGE] = { "a byte more local memory than the device has", TCX_ELIMIT },
	[GROUPS_TOO_MANY] = { "a group more than dimension 1 takes", TCX_ELIMIT },
	[UNEVEN] = { "a global size that is not a multiple of the group's", TCX_ELAUNCH },
	[NO_KERNEL] = { "a kernel the program does not have", TCX_ELAUNCH },
	[EXTRA_ARG] = { "an argument more than the kernel takes", TCX_ELAUNCH },
	[ARG_SIZE] = { "an 8-byte value for an int", TCX_ELAUNCH },
	[NULL_BUFFER] = { "a NULL buffer", TCX_EINVAL },
};

struct bufs {
	struct buffer *a, *b, *c;
	int n;
};

/* c = a + b in 16 groups of 64 work-items. */
static void vadd_launch(struct launch *l, const struct bufs *B)
{
	launch_init(l, "vadd");
	l->global[0] = 1024;
	l->local[0] = 64;
	launch_arg_buffer(l, B->a);
	launch_arg_buffer(l, B->b);
	launch_arg_buffer(l, B->c);
	launch_arg_bytes(l, &B->n, sizeof(B->n));
}

/* Launch k on dev; TCX_OK and nothing done when the device has no such
 * limit, or its runtime cannot tell (*skipped set): HIP's does not say
 * which parameters a kernel takes. */
static enum tcx_status launch_case(struct device *dev, struct program *prog, const struct bufs *B,
				   enum launch_case k, bool *skipped, struct tcx_error *err)
{
	const struct device_info *di = device_info_of(dev);
	int64_t wide = B->n;
	struct launch l;

	*skipped = false;
	vadd_launch(&l, B);
	switch (k) {
	case FITS:
	case NCASES:
		break;
	case WG_TOO_LARGE:
		/* each dimension within its limit, the group twice the device's */
		l.local[0] = l.global[0] = (size_t)di->max_wg_dim[0];
		l.local[1] = l.global[1] = ((size_t)di->max_wg_size * 2 + l.local[0] - 1) / l.local[0];
		break;
	case WG_DIM_TOO_LARGE:
		l.local[0] = 1;
		l.local[2] = l.global[2] = (size_t)di->max_wg_dim[2] * 2;
		break;
	case LOCAL_TOO_LARGE:
		launch_init(&l, "uses_local");
		l.global[0] = 1024;
		l.local[0] = 64;
		launch_arg_buffer(&l, B->c);
		launch_arg_local(&l, (size_t)di->local_mem + 1);
		break;
	case GROUPS_TOO_MANY:
		if (di->max_groups[1] <= 0) {
			*skipped = true;
			return TCX_OK;
		}
		l.global[1] = (size_t)di->max_groups[1] + 1;
		break;
	case UNEVEN:
		l.global[0] = 1000;
		break;
	case NO_KERNEL:
		l.kernel = "no_such_kernel";
		break;
	case EXTRA_ARG:
	case ARG_SIZE:
		if (strcmp(di->backend, "hip") == 0) {
			*skipped = true;
			return TCX_OK;
		}
		if (k == EXTRA_ARG) {
			launch_arg_bytes(&l, &B->n, sizeof(B->n));
		} else {
			l.args[3].ptr = &wide;
			l.args[3].size = sizeof(wide);
		}
		break;
	case NULL_BUFFER:
		l.args[1].buf = NULL;
		break;
	}
	tcx_error_clear(err);
	return device_launch(dev, prog, &l, NULL, err);
}

/* What the CUDA dialect backends do besides launches, on their fake
 * drivers: fills, ranges, binaries, build errors, resources, tensor maps,
 * timing. */
static void gpu_host_code(struct device *dev, struct program *prog, const struct bufs *B)
{
	const struct tcx_backend_ops *ops = device_ops(dev);
	const struct device_info *di = device_info_of(dev);
	struct program *p = NULL;
	struct tcx_error err = { 0 };
	unsigned char got[4] = { 0 }, *bin = NULL, junk[8] = "junk";
	size_t len = 0;
	int64_t dim[2] = { 64, 64 }, stride[1] = { 256 };
	int box[2] = { 32, 32 };
	unsigned char map[TCX_TENSOR_MAP_BYTES];
	struct launch l;
	double ms = -1;
	enum tcx_status st;

	CHECK(buffer_write(dev, B->c, 4 * N - 2, got, 4, &err) == TCX_EINVAL);
	CHECK_MSG(strstr(err.msg, "past the end") != NULL, "%s", err.msg);

	/* the binary round trip of the kernel cache, and a damaged binary */
	st = ops->binary(prog, &bin, &len, &err);
	CHECK_MSG(st == TCX_OK && len > 0, "%s: binary: %s", di->id, err.msg);
	if (!st) {
		st = ops->build_binary(dev, bin, len, &p, &err);
		CHECK_MSG(st == TCX_OK, "%s: from its binary: %s", di->id, err.msg);
		ops->program_free(p);
		p = NULL;
	}
	free(bin);
	st = ops->build_binary(dev, junk, sizeof(junk), &p, &err);
	CHECK_MSG(st == TCX_ECORRUPT && p == NULL, "%s: junk binary: %d %s", di->id, st, err.msg);

	/* a build error: the compiler's first error in the message, its log kept */
	st = ops->build(dev, cu_broken, strlen(cu_broken), NULL, &p, &err);
	CHECK_MSG(st == TCX_EBUILD && p && strlen(program_log(p)) > 0, "%s: broken: %s", di->id,
		  err.msg);
	CHECK_MSG(strstr(err.msg, "kernel does not compile for") != NULL, "%s", err.msg);
	printf("%-8s build error: %s\n", di->backend, err.msg);
	ops->program_free(p);

	st = device_tensor_map(dev, B->c, 0, 4, 2, dim, stride, box, map, &err);
	if (strcmp(di->backend, "cuda") == 0) {
		CHECK_MSG(st == TCX_OK && map[0] == 0x5a, "%s: tensor map: %s", di->id, err.msg);
		CHECK(device_tensor_map(dev, B->c, 4, 4, 2, dim, stride, box, map, &err) ==
		      TCX_EUNSUPPORTED);
	} else {
		CHECK(st == TCX_EUNSUPPORTED);
	}

	vadd_launch(&l, B);
	st = device_launch(dev, prog, &l, &ms, &err);
	CHECK_MSG(st == TCX_OK && ms == 0.25, "%s: timed launch: %g ms, %s", di->id, ms, err.msg);
	CHECK(device_finish(dev, &err) == TCX_OK);
}

/* Runs every case on the device, which it closes, and checks each status;
 * the exit code (77: the compiler cannot build for the device). */
static int run_device(struct device *dev)
{
	const char *id = device_info_of(dev)->id;
	struct program *prog = NULL;
	struct bufs B = { NULL, NULL, NULL, N };
	struct tcx_error err = { 0 };
	float a[N], b[N], c[N];
	const char *src;
	enum tcx_status s;
	int wrong = 0;

	src = strcmp(device_info_of(dev)->lang, "opencl") == 0 ? cl_src : cu_src;
	s = device_build(dev, src, strlen(src), NULL, &prog, NULL, NULL, &err);
	if (s == TCX_ENODEV || s == TCX_EUNSUPPORTED) {
		printf("%-10s skipped: %s\n", id, err.msg);
		device_close(dev);
		return 77;
	}
	CHECK_MSG(s == TCX_OK, "%s: build: %s", id, err.msg);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = (float)(3 * i) + 0.5f;
	}
	if (!s)
		s = buffer_alloc(dev, sizeof(a), &B.a, &err);
	if (!s)
		s = buffer_alloc(dev, sizeof(b), &B.b, &err);
	if (!s)
		s = buffer_alloc(dev, sizeof(c), &B.c, &err);
	if (!s)
		s = buffer_write(dev, B.a, 0, a, sizeof(a), &err);
	if (!s)
		s = buffer_write(dev, B.b, 0, b, sizeof(b), &err);
	CHECK_MSG(s == TCX_OK, "%s: buffers: %s", id, err.msg);
	for (int k = 0; !s && k < NCASES; k++) {
		bool skipped;
		enum tcx_status got = launch_case(dev, prog, &B, k, &skipped, &err);

		printf("%-10s %-52s %s\n", id, cases[k].what,
		       skipped ? "(not on this device)" : tcx_status_str(got));
		if (got)
			printf("%-10s   %s\n", "", err.msg);
		CHECK_MSG(skipped || got == cases[k].want, "%s: %s: %s, not %s", id,
			  cases[k].what, tcx_status_str(got), tcx_status_str(cases[k].want));
	}
	if (!s)
		s = device_finish(dev, &err);
	if (!s)
		s = buffer_read(dev, B.c, 0, c, sizeof(c), &err);
	for (int i = 0; !s && i < N; i++)
		wrong += c[i] != a[i] + b[i];
	CHECK_MSG(s == TCX_OK && wrong == 0, "%s: vadd: %d of %d wrong, %s", id, wrong, N, err.msg);
	if (!s && strcmp(device_info_of(dev)->backend, "opencl") != 0)
		gpu_host_code(dev, prog, &B);
	buffer_free(dev, B.a);
	buffer_free(dev, B.b);
	buffer_free(dev, B.c);
	device_close(dev);
	return check_done();
}

/* Opens the device of backend `name` for the child that runs it; 77 with
 * the reason printed when there is none. */
static int open_device(const char *name, struct device **dev)
{
	const struct tcx_backend_ops *ops = backend_find(name);
	const char *fake = strcmp(name, "cuda") == 0 ? "TCX_TEST_FAKE_CUDA" : "TCX_TEST_FAKE_HIP";
	const char *path = getenv(fake);
	struct device_info *infos = NULL;
	struct tcx_error err = { 0 };
	enum tcx_status st = TCX_ENODEV;
	int n = 0;

	if (!ops) {
		printf("%-10s skipped: not built\n", name);
		return 77;
	}
	if (strcmp(name, "opencl") == 0) {
		if (devices_list(&infos, &n, NULL, &err) == TCX_OK)
			for (int k = 0; k < n && st == TCX_ENODEV; k++)
				if (strcmp(infos[k].backend, name) == 0)
					st = device_open(infos[k].id, dev, &err);
		free(infos);
	} else if (!path || !*path) {
		snprintf(err.msg, sizeof(err.msg), "no fake driver ($%s is not set)", fake);
	} else if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
		snprintf(err.msg, sizeof(err.msg), "cannot load '%s': %s", path, dlerror());
	} else {
		/* the fake takes the driver's name: libcuda.so.1, libamdhip64.so.5
		 * (which holds hiprtc before ROCm 5.3: it is asked for by its
		 * other name then); no /dev/kfd here.  Opened without listing
		 * every backend's devices: PoCL's LLVM and hiprtc's do not
		 * share a process. */
		setenv("TCX_HIP_PROBE_ANYWAY", "1", 1);
		if (!dlopen("libhiprtc.so.5", RTLD_NOW | RTLD_LOCAL) &&
		    !dlopen("libhiprtc.so", RTLD_NOW | RTLD_LOCAL))
			setenv("TCX_HIPRTC_LIBRARY", "libamdhip64.so", 1);
		st = ops->open(0, dev, &err);
	}
	if (st) {
		printf("%-10s skipped: %s\n", name, err.msg[0] ? err.msg : "no device");
		return 77;
	}
	return 0;
}

int main(void)
{
	static const char *const names[] = { "opencl", "cuda", "hip" };
	int ran = 0, failed = 0;

	setenv("TCX_NO_KERNEL_CACHE", "1", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* one process for each backend: their compilers' LLVMs collide */
	for (size_t b = 0; b < ARRAY_SIZE(names); b++) {
		struct device *dev = NULL;
		pid_t pid = fork();
		int status = 0, rc;

		if (pid == 0) {
			rc = open_device(names[b], &dev);
			exit(rc ? rc : run_device(dev));
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
			printf("%-10s did not finish\n", names[b]);
			failed++;
		} else if (WEXITSTATUS(status) != 77) {
			ran++;
			failed += WEXITSTATUS(status) != 0;
		}
	}
	if (ran == 0)
		SKIP("no backend could run the launches");
	return failed ? 1 : 0;
}

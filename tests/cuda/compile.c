/* compile.c - the offline compile proof for CUDA (CTest label
 * cuda-compile): every kernel of the validation matrix, generated for an
 * H100-like device, compiled with NVRTC for sm_90 through the cuda
 * backend's own compile path.  No GPU is needed; without NVRTC the test
 * is skipped (exit 77) and says so.
 *
 * usage: cuda_compile TYPE [--list]
 */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "offline.h"

int main(int argc, char **argv)
{
	struct device_info d;
	struct tcx_error err = {0};
	char compiler[64];
	int major, minor;

	if (cuda_nvrtc_version(&major, &minor, &err)) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		return 77;
	}
	snprintf(compiler, sizeof(compiler), "NVRTC %d.%d", major, minor);

	/* what the cuda backend says of an H100 SXM */
	memset(&d, 0, sizeof(d));
	snprintf(d.id, sizeof(d.id), "cuda:offline");
	snprintf(d.backend, sizeof(d.backend), "cuda");
	snprintf(d.lang, sizeof(d.lang), "cuda");
	snprintf(d.name, sizeof(d.name), "offline sm_90");
	snprintf(d.vendor, sizeof(d.vendor), "NVIDIA");
	snprintf(d.arch, sizeof(d.arch), "sm_90");
	d.type = DEV_GPU;
	d.cc_major = 9;
	d.compute_units = 132;
	d.global_mem = 80LL << 30;
	d.max_alloc = d.global_mem;
	d.local_mem = 227 * 1024;
	d.local_mem_per_cu = 228 * 1024;
	d.cache_bytes = 50LL << 20;
	d.max_wg_size = 1024;
	d.max_wg_dim[0] = d.max_wg_dim[1] = 1024;
	d.max_wg_dim[2] = 64;
	d.max_regs_per_wg = 65536;
	d.clock_mhz = 1980;
	d.simd_width = 32;
	d.pref_vector_float = 4;
	d.fp64 = d.fp16 = d.timer_events = true;
	return offline_main(argc, argv, &d, cuda_compile_offline, compiler);
}

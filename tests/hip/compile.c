/* compile.c - the offline compile proof for HIP (CTest label hip-compile):
 * every kernel of the validation matrix, generated for an MI200/MI300-like
 * device, compiled with hiprtc for gfx90a or gfx942 through the hip
 * backend's own compile path.  No GPU is needed.  Skipped (exit 77, with
 * the reason) without hiprtc, or when hiprtc's code object manager does not
 * know the target: Debian 12's ROCm 5.2 (comgr 2.4, LLVM 15) predates
 * gfx942, which came with LLVM 17 and ROCm 5.7.
 *
 * usage: hip_compile TYPE ARCH [--list]
 */
#include <stdio.h>
#include <string.h>

#include "backend/hip/hip.h"
#include "../cuda/offline.h"

int main(int argc, char **argv)
{
	struct device_info d;
	struct tcx_error err = {0};
	char compiler[64];
	int major, minor;

	if (argc < 3 || strncmp(argv[2], "gfx", 3) != 0) {
		fprintf(stderr, "usage: %s TYPE ARCH [--list]  (ARCH: gfx90a, gfx942, ...)\n",
			argv[0]);
		return 2;
	}
	if (hip_hiprtc_version(&major, &minor, &err)) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		return 77;
	}
	snprintf(compiler, sizeof(compiler), "hiprtc of HIP %d.%d", major, minor);

	/* what the hip backend says of an MI250X / MI300X compute die */
	memset(&d, 0, sizeof(d));
	snprintf(d.id, sizeof(d.id), "hip:offline");
	snprintf(d.backend, sizeof(d.backend), "hip");
	snprintf(d.lang, sizeof(d.lang), "cuda");
	snprintf(d.name, sizeof(d.name), "offline %s", argv[2]);
	snprintf(d.vendor, sizeof(d.vendor), "AMD");
	snprintf(d.arch, sizeof(d.arch), "%s", argv[2]);
	d.type = DEV_GPU;
	d.cc_major = 9;
	d.compute_units = strcmp(argv[2], "gfx942") == 0 ? 304 : 110;
	d.global_mem = 64LL << 30;
	d.max_alloc = d.global_mem;
	d.local_mem = 64 * 1024;
	d.local_mem_per_cu = 64 * 1024;
	d.cache_bytes = 8LL << 20;
	d.max_wg_size = 1024;
	d.max_wg_dim[0] = d.max_wg_dim[1] = d.max_wg_dim[2] = 1024;
	d.max_regs_per_wg = 65536;
	d.clock_mhz = 1700;
	d.simd_width = 64;
	d.pref_vector_float = 4;
	d.fp64 = d.fp16 = d.timer_events = true;
	/* offline_main reads TYPE and the options; ARCH is ours */
	for (int k = 2; k + 1 < argc; k++)
		argv[k] = argv[k + 1];
	return offline_main(argc - 1, argv, &d, hip_compile_offline, compiler);
}

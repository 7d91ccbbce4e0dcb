/* target.h - which target NVRTC compiles a CUDA device's kernels for, the
 * rule in one place: the device's own architecture when NVRTC knows it (a
 * cubin; on Hopper sm_90a, whose wgmma instructions NVRTC has from CUDA 12
 * and whose code runs on sm_90 devices only, which is all the device at
 * hand is), else the newest virtual architecture NVRTC has (PTX, which the
 * driver compiles).  Plain C99 with no dependencies but <stdio.h>, so that
 * any C that runs kernels can include it. */
#ifndef TCX_CUDA_TARGET_H
#define TCX_CUDA_TARGET_H

#include <stdio.h>

/* The target for a device of architecture `arch` ("sm_90"), given the
 * architectures NVRTC knows (archs[0..n), as nvrtcGetSupportedArchs lists
 * them; n <= 0 when it cannot say) and NVRTC's major version, into target
 * (size bytes), *ptx set when it is a virtual one.  An architecture that is
 * not "sm_N", or one NVRTC cannot be asked about, is its own target.
 * Returns 0, or -1 when NVRTC knows only newer architectures than arch
 * (target is arch then). */
static int cuda_nvrtc_target(const char *arch, const int *archs, int n, int nvrtc_major,
			     char *target, size_t size, int *ptx)
{
	int want, best = 0, known = 0, k;

	*ptx = 0;
	snprintf(target, size, "%s", arch);
	if (sscanf(arch, "sm_%d", &want) != 1 || n <= 0)
		return 0;
	for (k = 0; k < n; k++) {
		known |= archs[k] == want;
		best = archs[k] > best ? archs[k] : best;
	}
	if (known) {
		if (want == 90 && nvrtc_major >= 12)
			snprintf(target, size, "sm_90a");
		return 0;
	}
	if (want > best) {
		snprintf(target, size, "compute_%d", best);
		*ptx = 1;
		return 0;
	}
	return -1;
}

#endif /* TCX_CUDA_TARGET_H */

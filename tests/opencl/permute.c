/* permute.c - the tensor permute (lib/gen/permute.c, kernels/opencl/
 * permute.cl) validated on the default OpenCL device (PoCL in CI): every
 * case of permute_cases.h for every element type, bit for bit against the
 * host reference, with the output poisoned first.
 *
 * usage: validate_permute [--device ID] [--seed N] [--type T]
 * Exit 0 when everything passes, 1 on any mismatch or error, 77 when there
 * is no device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "permute_cases.h"

int main(int argc, char **argv)
{
	static const enum tcx_dtype types[] = {TCX_DTYPE_S, TCX_DTYPE_D, TCX_DTYPE_C,
					       TCX_DTYPE_Z, TCX_DTYPE_H, TCX_DTYPE_B};
	const char *devid = getenv("TCX_TEST_DEVICE"), *only = NULL;
	struct device *dev = NULL;
	struct tcx_error err = {0};
	struct device_cache_stats cs;
	uint64_t seed = 1;
	int failures = 0, runs = 0, paths[3] = {0, 0, 0};
	enum tcx_status st;
	double t0 = common_now_seconds();

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--device") && k + 1 < argc) {
			devid = argv[++k];
		} else if (!strcmp(argv[k], "--seed") && k + 1 < argc) {
			seed = strtoull(argv[++k], NULL, 10);
		} else if (!strcmp(argv[k], "--type") && k + 1 < argc) {
			only = argv[++k];
		} else {
			fprintf(stderr, "usage: validate_permute [--device ID] [--seed N] "
					"[--type T]\n");
			return 2;
		}
	}
	st = device_open(devid && *devid ? devid : NULL, &dev, &err);
	if (st == TCX_ENODEV) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		return 77;
	}
	if (st) {
		fprintf(stderr, "cannot open the device: %s\n", err.msg);
		return 1;
	}
	if (device_is_host(dev)) {
		fprintf(stderr, "skipped: the host reference device runs no kernels\n");
		device_close(dev);
		return 77;
	}
	printf("device %s (%s), seed %llu\n", device_info_of(dev)->id, device_info_of(dev)->name,
	       (unsigned long long)seed);
	for (size_t ti = 0; ti < ARRAY_SIZE(types); ti++) {
		enum tcx_dtype t = types[ti], want;

		if (only && (!dtype_parse(only, &want) || want != t))
			continue;
		for (size_t c = 0; c < ARRAY_SIZE(permute_cases); c++) {
			struct permute_plan plan;

			plan.path = PERMUTE_EMPTY;
			failures += permute_case_run(dev, t, &permute_cases[c],
						     seed + ti * 1000 + c, &plan);
			paths[plan.path]++;
			runs++;
		}
	}
	device_cache_stats(dev, &cs);
	printf("%d permutes (%d copies, %d transposes, %d empty), %lu programs compiled, %lu "
	       "from the disk cache, %d failed; %.1f s\n",
	       runs, paths[PERMUTE_COPY], paths[PERMUTE_TILE], paths[PERMUTE_EMPTY], cs.builds,
	       cs.disk_hits, failures, common_now_seconds() - t0);
	device_close(dev);
	return failures ? 1 : 0;
}

/* permute_bench.c - how fast the tensor permute (lib/gen/permute.c) runs:
 * a 200 MiB fp32 tensor permuted a few ways (identity, the two fastest
 * indices swapped, a 4-index reversal, CCSD's nlmk to mnlk, a 2-index
 * transpose, the C permutes of TCCG's tensor-times-matrix plans), timed
 * with device events, with GB/s counting the bytes read and written, next
 * to a plain copy of the same bytes by the same kernel.
 * Each result is checked against the host first (every element).
 *
 * usage: permute_bench [--device ID] [--mib N] [--repeat N] [--type T]
 * The device is the first GPU (cuda, then hip, then OpenCL), or ID; 77
 * (skipped) when there is no GPU and no --device.  Prints one line a
 * permute; exit 1 when a result is wrong, 3 on a device error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "gen/permute.h"

struct bench_case {
	const char *name;
	int rank;
	int64_t shape[5]; /* relative sizes, scaled to the tensor's size */
	int order[5];	  /* the output's memory order, fastest first */
};

static const struct bench_case cases[] = {
	{"identity", 4, {80, 80, 64, 128}, {0, 1, 2, 3}},
	{"swap the two fastest", 4, {80, 80, 64, 128}, {1, 0, 2, 3}},
	{"reverse 4 indices", 4, {80, 80, 64, 128}, {3, 2, 1, 0}},
	{"CCSD nlmk to mnlk", 4, {72, 72, 72, 140}, {2, 0, 1, 3}},
	{"transpose 2 indices", 2, {8192, 6400}, {1, 0}},
	{"common fastest 24", 4, {24, 96, 96, 237}, {0, 3, 1, 2}},
	/* a CCSD(T) output (abcijk: a=24, ji=480, cb=400, k=20) from a GEMM's
	 * order into place: transposing its short fastest indices, or, from
	 * another GEMM order, copying along the fastest one they share */
	{"CCSD(T) C, transposing", 4, {24, 480, 400, 20}, {3, 1, 2, 0}},
	{"CCSD(T) C, common fastest", 4, {20, 400, 480, 24}, {0, 2, 1, 3}},
	/* TCCG's abjcd-dkbac-jk and ajbdc-ckbad-jk, their C from the GEMM's
	 * order (j,a,b,c,d and c,b,a,d,j) into place: short fastest indices */
	{"TCCG abjcd C", 5, {24, 48, 36, 36, 48}, {1, 2, 0, 3, 4}},
	{"TCCG ajbdc C", 5, {48, 36, 48, 36, 24}, {2, 4, 1, 3, 0}},
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run(struct device *dev, const struct bench_case *bc, enum tcx_dtype t, double mib,
	       int repeat, struct buffer *bin, struct buffer *bout, const unsigned char *hin,
	       unsigned char *hout)
{
	const int es = dtype_info(t)->bytes;
	int64_t size[5], si[5], so[5], count = 1, want;
	int in_order[5] = {0, 1, 2, 3, 4};
	double scale, *ms = calloc((size_t)repeat, sizeof(double));
	struct permute_plan plan;
	struct program *prog = NULL;
	struct strbuf log = STRBUF_INIT;
	struct tcx_error err = {0};
	char what[160];
	int rc = 0;

	if (!ms)
		return 3;
	/* scale the shape's slowest index to the size asked for */
	want = (int64_t)(mib * 1048576.0 / es);
	for (int k = 0; k < bc->rank; k++) {
		size[k] = bc->shape[k];
		count *= size[k];
	}
	scale = (double)want / (double)count;
	size[bc->rank - 1] = (int64_t)(size[bc->rank - 1] * scale);
	if (size[bc->rank - 1] < 1)
		size[bc->rank - 1] = 1;
	if (permute_packed_strides(bc->rank, size, in_order, si, &count, &err) ||
	    permute_packed_strides(bc->rank, size, bc->order, so, NULL, &err) ||
	    permute_plan_make(t, bc->rank, size, si, so, false, device_info_of(dev), &plan, &err)) {
		fprintf(stderr, "%s: %s\n", bc->name, err.msg);
		rc = 3;
		goto out;
	}
	if (count > want) {
		/* the slowest index at 1 and still too large: not run, rather
		 * than a launch past the buffers' end */
		printf("%-26s skipped: %lld elements do not fit in %.1f MiB\n", bc->name,
		       (long long)count, mib);
		goto out;
	}
	if (permute_build(&plan, dev, &prog, &log, &err)) {
		fprintf(stderr, "%s: %s\n%s", bc->name, err.msg, strbuf_str(&log));
		rc = 3;
		goto out;
	}
	permute_plan_str(&plan, what, sizeof(what));
	/* once, checked against the host */
	if (permute_launch(&plan, dev, prog, bin, 0, bout, 0, NULL, &err) ||
	    device_finish(dev, &err) ||
	    buffer_read(dev, bout, 0, hout, (size_t)(count * es), &err)) {
		fprintf(stderr, "%s: %s\n", bc->name, err.msg);
		rc = 3;
		goto out;
	}
	{
		int64_t idx[5] = {0, 0, 0, 0, 0}, bad = 0;

		for (int64_t e = 0; e < count; e++) {
			int64_t oo = 0;

			for (int k = 0; k < bc->rank; k++)
				oo += idx[k] * so[k];
			if (memcmp(hout + oo * es, hin + e * es, (size_t)es) != 0)
				bad++;
			for (int k = 0; k < bc->rank && ++idx[k] == size[k]; k++)
				idx[k] = 0;
		}
		if (bad) {
			printf("%-24s WRONG: %lld of %lld elements differ (%s)\n", bc->name,
			       (long long)bad, (long long)count, what);
			rc = 1;
			goto out;
		}
	}
	/* a warm-up, then the repeats */
	if (permute_launch(&plan, dev, prog, bin, 0, bout, 0, &ms[0], &err)) {
		fprintf(stderr, "%s: %s\n", bc->name, err.msg);
		rc = 3;
		goto out;
	}
	for (int r = 0; r < repeat; r++)
		if (permute_launch(&plan, dev, prog, bin, 0, bout, 0, &ms[r], &err)) {
			fprintf(stderr, "%s: %s\n", bc->name, err.msg);
			rc = 3;
			goto out;
		}
	qsort(ms, (size_t)repeat, sizeof(ms[0]), cmp_double);
	{
		double med = ms[repeat / 2], bytes = 2.0 * (double)count * es;

		char dims[64];
		int at = 0;

		for (int k = 0; k < bc->rank && at < (int)sizeof(dims); k++)
			at += snprintf(dims + at, sizeof(dims) - (size_t)at, "%s%lld", k ? "x" : "",
				       (long long)size[k]);
		printf("%-26s %-22s %8.3f ms %8.1f GB/s  (min %.3f ms; %s)\n", bc->name, dims,
		       med, bytes / (med * 1e6), ms[0], what);
	}
out:
	strbuf_release(&log);
	free(ms);
	return rc;
}

int main(int argc, char **argv)
{
	const char *devid = NULL;
	double mib = 200;
	int repeat = 20, rc = 0;
	enum tcx_dtype t = TCX_DTYPE_S;
	struct device *dev = NULL;
	struct buffer *bin = NULL, *bout = NULL;
	struct tcx_error err = {0};
	unsigned char *hin = NULL, *hout = NULL;
	struct pcg32 rng;
	size_t bytes;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--device") && k + 1 < argc) {
			devid = argv[++k];
		} else if (!strcmp(argv[k], "--mib") && k + 1 < argc) {
			mib = atof(argv[++k]);
		} else if (!strcmp(argv[k], "--repeat") && k + 1 < argc) {
			repeat = atoi(argv[++k]);
		} else if (!strcmp(argv[k], "--type") && k + 1 < argc && dtype_parse(argv[k + 1], &t)) {
			k++;
		} else {
			fprintf(stderr, "usage: permute_bench [--device ID] [--mib N] [--repeat N] "
					"[--type T]\n");
			return 2;
		}
	}
	if (mib <= 0 || repeat < 1) {
		fprintf(stderr, "permute_bench: --mib and --repeat must be positive\n");
		return 2;
	}
	if (device_open(devid, &dev, &err)) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		return 77;
	}
	if (!devid && device_info_of(dev)->type != DEV_GPU) {
		fprintf(stderr, "skipped: no GPU (the default device is %s; --device picks one)\n",
			device_info_of(dev)->name);
		device_close(dev);
		return 77;
	}
	printf("device %s (%s), %s, %.0f MiB a tensor, median of %d\n", device_info_of(dev)->id,
	       device_info_of(dev)->name, dtype_info(t)->name, mib, repeat);
	/* every case's tensor fits in the bytes asked for, rounded up, or is
	 * skipped */
	bytes = (size_t)(mib * 1048576.0) + 4096;
	hin = malloc(bytes);
	hout = malloc(bytes);
	if (!hin || !hout) {
		fprintf(stderr, "out of memory\n");
		rc = 3;
		goto out;
	}
	pcg32_seed(&rng, 1, 1);
	for (size_t b = 0; b < bytes; b += 4) {
		uint32_t v = pcg32_next(&rng);

		memcpy(hin + b, &v, bytes - b < 4 ? bytes - b : 4);
	}
	if (buffer_alloc(dev, bytes, &bin, &err) || buffer_alloc(dev, bytes, &bout, &err) ||
	    buffer_write(dev, bin, 0, hin, bytes, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		rc = 3;
		goto out;
	}
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		int r = run(dev, &cases[c], t, mib, repeat, bin, bout, hin, hout);

		if (r > rc)
			rc = r;
	}
out:
	buffer_free(dev, bin);
	buffer_free(dev, bout);
	device_close(dev);
	free(hin);
	free(hout);
	return rc;
}

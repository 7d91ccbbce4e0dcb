/* permute_cases.h - the permute's validation cases and their check, shared
 * by the run on the default OpenCL device (tests/opencl/permute.c), the
 * CUDA dialect on the host (tests/cuda/emulate.c --permute) and the offline
 * compile proofs (tests/cuda/offline.c): random bits permuted on a device
 * by lib/gen/permute.c's plan and compared bit for bit, over the whole
 * output buffer, with a host reference; the output is poisoned first, so an
 * element never written, or one written where none belongs, shows. */
#ifndef TCX_PERMUTE_CASES_H
#define TCX_PERMUTE_CASES_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "gen/permute.h"

struct permute_case {
	const char *name;
	int rank;
	int64_t size[TCX_MAX_INDICES];
	/* the output's memory order, fastest first (the input's is 0, 1, ..) */
	int order[TCX_MAX_INDICES];
	int64_t step_in;	  /* the input's innermost stride (0 taken as 1) */
	int64_t pad_in, pad_out;  /* elements past each index's span: padded strides */
	int64_t off_in, off_out;  /* offsets, elements */
	bool conj;
	const char *max_groups;	  /* $TCX_MAX_GROUPS for the plan: a folded grid */
	int64_t stride_in[TCX_MAX_INDICES]; /* explicit input strides, when [0] or [1] is set */
};

#define N(...) {__VA_ARGS__}
static const struct permute_case permute_cases[] = {
    {.name = "one element", .rank = 0},
    {.name = "rank 1, prime", .rank = 1, .size = N(1021)},
    {.name = "rank 1, size 1", .rank = 1, .size = N(1)},
    {.name = "rank 2 transposed, primes", .rank = 2, .size = N(37, 53), .order = N(1, 0)},
    {.name = "rank 2 in place, padded", .rank = 2, .size = N(37, 53), .order = N(0, 1),
     .pad_in = 3, .pad_out = 5},
    {.name = "rank 2 transposed, padded", .rank = 2, .size = N(45, 70), .order = N(1, 0),
     .pad_in = 2, .pad_out = 7},
    {.name = "rank 3 with a size 1", .rank = 3, .size = N(7, 1, 33), .order = N(2, 0, 1)},
    {.name = "rank 3, common fastest 24", .rank = 3, .size = N(24, 13, 5), .order = N(0, 2, 1)},
    {.name = "rank 4 reversed", .rank = 4, .size = N(5, 7, 11, 13), .order = N(3, 2, 1, 0)},
    {.name = "rank 4, CCSD's nlmk to mnlk", .rank = 4, .size = N(36, 8, 40, 9),
     .order = N(2, 0, 1, 3)},
    {.name = "rank 5", .rank = 5, .size = N(3, 4, 5, 6, 7), .order = N(1, 3, 0, 4, 2)},
    {.name = "rank 5, common fastest 2", .rank = 5, .size = N(2, 33, 3, 17, 5),
     .order = N(0, 4, 2, 1, 3)},
    {.name = "rank 5, tiles past the edge", .rank = 5, .size = N(33, 2, 65, 1, 3),
     .order = N(2, 1, 0, 3, 4)},
    {.name = "input stride 2, transposed", .rank = 2, .size = N(40, 30), .order = N(1, 0),
     .step_in = 2},
    {.name = "input stride 3, in place", .rank = 2, .size = N(40, 30), .order = N(0, 1),
     .step_in = 3},
    {.name = "offsets, transposed", .rank = 2, .size = N(64, 48), .order = N(1, 0),
     .off_in = 8, .off_out = 16},
    {.name = "offsets, in place", .rank = 3, .size = N(64, 48, 2), .order = N(0, 2, 1),
     .off_in = 16, .off_out = 8},
    {.name = "conjugated, transposed", .rank = 2, .size = N(33, 17), .order = N(1, 0),
     .conj = true},
    {.name = "conjugated, in place", .rank = 2, .size = N(16, 9), .order = N(0, 1),
     .conj = true},
    {.name = "conjugated, rank 4", .rank = 4, .size = N(6, 5, 4, 3), .order = N(2, 3, 0, 1),
     .pad_in = 1, .pad_out = 2, .conj = true},
    {.name = "broadcast input", .rank = 3, .size = N(5, 7, 3), .order = N(1, 2, 0),
     .stride_in = N(1, 0, 5)},
    {.name = "many tiles", .rank = 2, .size = N(300, 257), .order = N(1, 0)},
    {.name = "folded grid, spare groups", .rank = 3, .size = N(40, 50, 5),
     .order = N(1, 0, 2), .max_groups = "3,2,4"},
    {.name = "folded copy", .rank = 3, .size = N(300, 7, 5), .order = N(0, 2, 1),
     .max_groups = "2,2,64"},
    {.name = "16 indices reversed", .rank = 16,
     .size = N(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2),
     .order = N(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)},
    {.name = "16 indices, padded", .rank = 16,
     .size = N(3, 1, 2, 2, 1, 2, 3, 2, 1, 2, 2, 1, 2, 2, 1, 2),
     .order = N(5, 0, 9, 2, 14, 7, 1, 12, 3, 15, 6, 10, 4, 13, 8, 11), .pad_in = 1,
     .pad_out = 1, .conj = true},
};
#undef N

/* The strides of a case: the input in index order, the output in
 * case->order, each index's stride its predecessor's span plus the pad. */
static void permute_case_strides(const struct permute_case *pc, int64_t *si, int64_t *so)
{
	int64_t s = pc->step_in ? pc->step_in : 1;

	for (int k = 0; k < pc->rank; k++) {
		si[k] = s;
		s = s * (pc->size[k] ? pc->size[k] : 1) + pc->pad_in;
	}
	if (pc->stride_in[0] || pc->stride_in[1])
		memcpy(si, pc->stride_in, sizeof(pc->stride_in));
	s = 1;
	for (int k = 0; k < pc->rank; k++) {
		so[pc->order[k]] = s;
		s = s * (pc->size[pc->order[k]] ? pc->size[pc->order[k]] : 1) + pc->pad_out;
	}
}

/* Elements a tensor spans: its last element's offset plus one. */
static int64_t permute_case_span(int rank, const int64_t *size, const int64_t *stride)
{
	int64_t last = 0;

	for (int k = 0; k < rank; k++)
		last += (size[k] - 1) * stride[k];
	return last + 1;
}

/* The host reference, bit for bit: each element's bytes moved, the top bit
 * of its imaginary part flipped when conjugating a complex type. */
static void permute_reference(const unsigned char *in, unsigned char *out, int es, bool cplx,
			      bool conj, int rank, const int64_t *size, const int64_t *si,
			      const int64_t *so, int64_t off_in, int64_t off_out)
{
	int64_t idx[TCX_MAX_INDICES] = {0}, count = 1;

	for (int k = 0; k < rank; k++)
		count *= size[k];
	for (int64_t e = 0; e < count; e++) {
		int64_t oi = off_in, oo = off_out;

		for (int k = 0; k < rank; k++) {
			oi += idx[k] * si[k];
			oo += idx[k] * so[k];
		}
		memcpy(out + oo * es, in + oi * es, (size_t)es);
		if (conj && cplx)
			out[oo * es + es - 1] ^= 0x80;
		for (int k = 0; k < rank && ++idx[k] == size[k]; k++)
			idx[k] = 0;
	}
}

#define PERMUTE_POISON 0xa5

/* Runs case pc for type t on dev with random input from `seed`.  Returns 0
 * when the device's output matches the reference everywhere, else 1 (with
 * the first differences on stdout).  *plan_out (NULL allowed) gets the
 * plan, and *word_ok whether its programs built. */
static inline int permute_case_run(struct device *dev, enum tcx_dtype t,
				   const struct permute_case *pc, uint64_t seed,
				   struct permute_plan *plan_out)
{
	const struct dtype_info *ti = dtype_info(t);
	const int es = ti->bytes;
	int64_t si[TCX_MAX_INDICES], so[TCX_MAX_INDICES], nin, nout;
	struct permute_plan plan;
	struct program *prog = NULL;
	struct buffer *bin = NULL, *bout = NULL;
	struct strbuf log = STRBUF_INIT;
	struct tcx_error err = {0};
	unsigned char *hin = NULL, *hout = NULL, *want = NULL;
	enum tcx_status st;
	struct pcg32 rng;
	char *old = NULL;
	int bad = 0;
	char what[160];

	permute_case_strides(pc, si, so);
	nin = pc->off_in + permute_case_span(pc->rank, pc->size, si) + 3;
	nout = pc->off_out + permute_case_span(pc->rank, pc->size, so) + 3;
	if (pc->max_groups) {
		const char *o = getenv("TCX_MAX_GROUPS");

		old = o ? strdup(o) : NULL;
		setenv("TCX_MAX_GROUPS", pc->max_groups, 1);
	}
	st = permute_plan_make(t, pc->rank, pc->size, si, so, pc->conj, device_info_of(dev), &plan,
			       &err);
	if (pc->max_groups) {
		if (old)
			setenv("TCX_MAX_GROUPS", old, 1);
		else
			unsetenv("TCX_MAX_GROUPS");
		free(old);
	}
	if (st) {
		printf("FAIL %-32s %s: plan: %s\n", pc->name, ti->name, err.msg);
		return 1;
	}
	if (plan_out)
		*plan_out = plan;
	permute_plan_str(&plan, what, sizeof(what));
	hin = malloc((size_t)(nin * es));
	hout = malloc((size_t)(nout * es));
	want = malloc((size_t)(nout * es));
	if (!hin || !hout || !want) {
		printf("FAIL out of memory\n");
		bad = 1;
		goto out_free;
	}
	pcg32_seed(&rng, seed, 7);
	for (int64_t b = 0; b < nin * es; b++)
		hin[b] = (unsigned char)pcg32_next(&rng);
	/* no element may look like the poison */
	for (int64_t e = 0; e < nin; e++)
		hin[e * es] &= 0x7f;
	memset(want, PERMUTE_POISON, (size_t)(nout * es));
	memset(hout, 0, (size_t)(nout * es));
	permute_reference(hin, want, es, ti->complex, pc->conj, pc->rank, pc->size, si, so,
			  pc->off_in, pc->off_out);
	if (plan.path != PERMUTE_EMPTY) {
		st = permute_build(&plan, dev, &prog, &log, &err);
		if (st) {
			printf("FAIL %-32s %s (%s): build: %s\n%s\n", pc->name, ti->name, what,
			       err.msg, strbuf_str(&log));
			bad = 1;
			goto out_free;
		}
	}
	st = buffer_alloc(dev, (size_t)(nin * es), &bin, &err);
	if (!st)
		st = buffer_alloc(dev, (size_t)(nout * es), &bout, &err);
	if (!st)
		st = buffer_write(dev, bin, 0, hin, (size_t)(nin * es), &err);
	if (!st) {
		memset(hout, PERMUTE_POISON, (size_t)(nout * es));
		st = buffer_write(dev, bout, 0, hout, (size_t)(nout * es), &err);
	}
	if (!st)
		st = permute_launch(&plan, dev, prog, bin, pc->off_in, bout, pc->off_out, NULL, &err);
	if (!st)
		st = device_finish(dev, &err);
	if (!st) {
		memset(hout, 0, (size_t)(nout * es));
		st = buffer_read(dev, bout, 0, hout, (size_t)(nout * es), &err);
	}
	if (st) {
		printf("FAIL %-32s %s (%s): %s\n", pc->name, ti->name, what, err.msg);
		bad = 1;
		goto out_free;
	}
	for (int64_t e = 0; e < nout; e++) {
		if (memcmp(hout + e * es, want + e * es, (size_t)es) == 0)
			continue;
		if (bad < 3) {
			bool poison = true;

			for (int k = 0; k < es; k++)
				poison = poison && hout[e * es + k] == PERMUTE_POISON;
			printf("FAIL %-32s %s (%s): element %" PRId64 " of the output differs%s "
			       "(seed %llu)\n",
			       pc->name, ti->name, what, e, poison ? ": never written" : "",
			       (unsigned long long)seed);
		}
		bad++;
	}
	if (bad)
		printf("     %d elements differ\n", bad);
	bad = bad ? 1 : 0;
out_free:
	buffer_free(dev, bin);
	buffer_free(dev, bout);
	strbuf_release(&log);
	free(hin);
	free(hout);
	free(want);
	return bad;
}

#endif /* TCX_PERMUTE_CASES_H */

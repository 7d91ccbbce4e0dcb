/* test_gen.c - the generator at its limits: contractions of the most
 * indices tcx takes (TCX_MAX_INDICES, plus the three size-1 stand-ins a
 * plan may need: PLAN_MAX_SLOTS slots).
 *
 * Plans of 16 indices in C, in A, in B, 16 batch indices (19 slots) and 16
 * bound ones, launched through a device whose launch hook records the
 * launches: every slot reaches the kernel's arguments, the arguments of
 * every kernel fit OpenCL's least parameter size (1024 bytes), the
 * warpgroup kernel's CUDA's 4 KiB. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend/backend.h"
#include "gen/gen.h"
#include "notation/notation.h"

static struct tcx_contraction *parse(const char *expr, enum tcx_dtype t)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;

	if (notation_parse(expr, t, LAYOUT_BY_STYLE, &c, &err) != TCX_OK)
		fprintf(stderr, "%s: %s\n", expr, err.msg);
	return c;
}

/* An H100 as the CUDA backend describes it: the kernel language and the
 * block limits. */
static void cuda_info(struct device_info *di)
{
	memset(di, 0, sizeof(*di));
	snprintf(di->id, sizeof(di->id), "record:0");
	snprintf(di->backend, sizeof(di->backend), "record");
	snprintf(di->name, sizeof(di->name), "launch recorder");
	snprintf(di->lang, sizeof(di->lang), "cuda");
	snprintf(di->arch, sizeof(di->arch), "sm_90");
	di->type = DEV_GPU;
	di->compute_units = 132;
	di->global_mem = di->max_alloc = (int64_t)80 << 30;
	di->local_mem = 227 * 1024;
	di->local_mem_per_cu = 228 * 1024;
	di->max_wg_size = 1024;
	di->max_wg_dim[0] = di->max_wg_dim[1] = 1024;
	di->max_wg_dim[2] = 64;
	di->simd_width = di->wg_multiple = 32;
	di->fp64 = di->fp16 = true;
}

struct rec_device {
	struct device_base base;
	struct device_info info;
};

#define MAX_REC 4
static struct launch recorded[MAX_REC];
static struct kernel_args recorded_args[MAX_REC];
static size_t recorded_param_bytes[MAX_REC];
static int nrecorded;

static const struct device_info *rec_info(const struct device *dev)
{
	return &((const struct rec_device *)dev)->info;
}

/* Records the launch, its struct tcx_args, and its parameters' bytes (as
 * the kernel takes them: a pointer per buffer). */
static enum tcx_status rec_launch(struct device *dev, struct program *prog, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	size_t bytes = 0;

	(void)dev;
	(void)prog;
	(void)err;
	if (event_ms)
		*event_ms = 0;
	for (int a = 0; a < l->nargs; a++)
		if (l->args[a].kind == KARG_BUFFER)
			bytes += sizeof(void *);
		else if (l->args[a].kind == KARG_BYTES)
			bytes += l->args[a].size;
	if (nrecorded < MAX_REC) {
		recorded[nrecorded] = *l;
		recorded_param_bytes[nrecorded] = bytes;
		memset(&recorded_args[nrecorded], 0, sizeof(recorded_args[0]));
		/* tcx_contract(C, P, Q, W, args, ...), tcx_gsu_reduce(C, W, args, ...) */
		for (int a = 0; a < l->nargs; a++)
			if (l->args[a].kind == KARG_BYTES &&
			    l->args[a].size == sizeof(struct kernel_args)) {
				memcpy(&recorded_args[nrecorded], l->args[a].ptr,
				       sizeof(recorded_args[0]));
				break;
			}
		nrecorded++;
	}
	return TCX_OK;
}

/* Plans and launches expr (sizes all `size`, or `sizes` in id order) with
 * `params` over the GPU default, on the recorder; false when planning or
 * launching fails.  The plan k is the caller's to read, not to launch (its
 * contraction is freed). */
static bool launch(struct rec_device *rd, const char *expr, int64_t size, const int64_t *sizes,
		   const char *params, struct kernel_plan *k)
{
	struct tcx_contraction *c = parse(expr, TCX_DTYPE_S);
	struct solution s;
	struct problem p;
	struct tcx_error err;
	int64_t all[TCX_MAX_INDICES];
	double alpha[2] = {1, 0}, beta[2] = {0, 0};
	/* any non-NULL handles: the recorder never dereferences them */
	struct buffer *buf = (struct buffer *)rd;
	bool ok = false;

	CHECK(c != NULL);
	if (!c)
		return false;
	for (int i = 0; i < TCX_MAX_INDICES; i++)
		all[i] = size;
	CHECK(problem_init(&p, c, sizes ? sizes : all, &err) == TCX_OK);
	solution_heuristic(c, &rd->info, &s);
	if (params)
		CHECK_MSG(solution_parse(&s, params, &err) == TCX_OK, "%s", err.msg);
	nrecorded = 0;
	if (plan_make(c, &p, &s, &rd->info, k, &err) != TCX_OK) {
		CHECK_MSG(0, "%s: %s", expr, err.msg);
		goto out;
	}
	if (plan_launch(k, (struct device *)rd, NULL, &p, buf, buf, buf, buf, alpha, beta, NULL,
			&err) != TCX_OK) {
		CHECK_MSG(0, "%s: %s", expr, err.msg);
		goto out;
	}
	ok = true;
out:
	contraction_free(c);
	return ok;
}

static void test_max_indices(void)
{
	static const struct {
		const char *expr;
		int nslots, nf2, nb;
	} cases[] = {
	    /* 16 in C: D0, D1, a stand-in DU, 14 folded */
	    {"abcdefgh,ijklmnop->abcdefghijklmnop", 17, 14, 0},
	    /* 16 in A (and in B): D0 (D1), a stand-in, DU, 7 folded, 7 outer bound */
	    {"abcdefghijklmnop,ijklmnop->abcdefgh", 17, 7, 7},
	    {"ijklmnop,abcdefghijklmnop->abcdefgh", 17, 7, 7},
	    /* 16 batch indices: three stand-ins and 16 folded, every slot */
	    {"abcdefghijklmnop,abcdefghijklmnop->abcdefghijklmnop", PLAN_MAX_SLOTS, 16, 0},
	    /* 16 bound ones: DU and 15 outer */
	    {"abcdefghijklmnop,abcdefghijklmnop->", 18, 0, 15},
	};
	struct tcx_backend_ops ops;
	struct rec_device rd;
	struct kernel_plan k;

	memset(&ops, 0, sizeof(ops));
	ops.name = "record";
	ops.info = rec_info;
	ops.launch = rec_launch;
	memset(&rd, 0, sizeof(rd));
	rd.base.ops = &ops;
	cuda_info(&rd.info);
	for (size_t e = 0; e < ARRAY_SIZE(cases); e++) {
		const struct kernel_args *a = &recorded_args[0];

		if (!launch(&rd, cases[e].expr, 2, NULL, NULL, &k))
			continue;
		CHECK_MSG(k.nslots == cases[e].nslots, "%s: %d slots", cases[e].expr, k.nslots);
		CHECK(k.nf2 == cases[e].nf2 && k.nb == cases[e].nb);
		CHECK(a->nf2 == cases[e].nf2 && a->nb == cases[e].nb);
		/* every slot: size 2 for an index, 1 for a stand-in, and its strides */
		for (int sl = 0; sl < k.nslots; sl++) {
			CHECK_MSG(a->size[sl] == (k.slot[sl] < 0 ? 1 : 2), "%s: slot %d size %lld",
				  cases[e].expr, sl, (long long)a->size[sl]);
			if (k.slot[sl] >= 0)
				CHECK(a->sp[sl] + a->sq[sl] + a->sc[sl] > 0);
		}
		CHECK_MSG(recorded_param_bytes[0] <= 1024, "%zu bytes of parameters",
			  recorded_param_bytes[0]);
	}
	/* the warpgroup kernel's parameters (three more) within CUDA's 4 KiB */
	if (launch(&rd, cases[3].expr, 2, NULL,
		   "WorkGroup=[16,8,1],ThreadTile=[4,8],DepthU=32,MatrixInstruction=[64,64,8,1]",
		   &k)) {
		CHECK(k.wgmma);
		CHECK_MSG(recorded_param_bytes[0] <= 4096, "%zu bytes of parameters",
			  recorded_param_bytes[0]);
	}
}

int main(void)
{
	test_max_indices();
	return check_done();
}

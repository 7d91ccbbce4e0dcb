/* test_gen.c - the generator at its limits: contractions of the most
 * indices tcx takes (TCX_MAX_INDICES, plus the three size-1 stand-ins a
 * plan may need: TCX_MAX_SLOTS slots), and launch grids within the
 * devices' limits whatever the number of work-groups.
 *
 *  1. plan_grid: the work-groups a launch needs, laid out within CUDA's
 *     grid (2^31 - 1 x 65535 x 65535), within small artificial limits and
 *     within $TCX_MAX_GROUPS; every group numbered exactly once by the
 *     kernels' decode (GROUP_DECODE in kernels/opencl/contract.cl, mirrored
 *     here), fewer spare groups than a layer of the grid, and a clear
 *     refusal where the grid cannot hold them;
 *  2. plan_launch, through a device whose launch hook records the launches
 *     and which has CUDA's limits: TCCG's CCSD(T) contractions (192000
 *     work-groups along dimension 2 with the GPU default), with and without
 *     GlobalSplitU, launch within the grid, and the arguments say how many
 *     groups there are along each dimension;
 *  3. plans of 16 indices in C, in A, in B, 16 batch indices (19 slots)
 *     and 16 bound ones: every slot reaches the kernel's arguments, the
 *     arguments of every kernel fit OpenCL's least parameter size (1024
 *     bytes), the warpgroup kernel's CUDA's 4 KiB;
 *  4. the device's other limits a plan meets, exactly at the boundary and
 *     one past it: local memory, work-items per work-group and along one
 *     dimension;
 *  5. a kernel source is its plan's prelude, then the templates of its
 *     language in plan_templates' order, compiled with plan_options: the
 *     parts export-lib puts together again in a library; and the
 *     templates hold the kernels' ABI, common/abi.h, as the host has it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend/backend.h"
#include "backend/check.h"
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

/* An H100 as the CUDA backend describes it: the kernel language, the
 * block limits and the grid's. */
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
	di->max_groups[0] = INT32_MAX;
	di->max_groups[1] = di->max_groups[2] = 65535;
	di->simd_width = 32;
	di->fp64 = di->fp16 = true;
}

/* ---- 1. the grid --------------------------------------------------------- */

/* The kernels' decode of a group's place (contract.cl's GROUP_DECODE over
 * port.h's GROUP_LINEAR): false for a spare group. */
static bool decode(const size_t grid[3], const size_t b[3], const int64_t n[3], int64_t place[3])
{
	int64_t l = (int64_t)(b[0] + grid[0] * (b[1] + grid[1] * b[2]));

	if (l >= n[0] * n[1] * n[2])
		return false;
	place[0] = l % n[0];
	l /= n[0];
	place[1] = l % n[1];
	place[2] = l / n[1];
	return true;
}

/* plan_grid for n groups of `local` on dev: within the limits `cap`, and,
 * for grids small enough to walk, every group decoded exactly once. */
static void check_grid(const int64_t n[3], const size_t local[3], const struct device_info *dev,
		       const int64_t cap[3])
{
	size_t global[3], grid[3], b[3];
	struct tcx_error err;
	int64_t total = n[0] * n[1] * n[2], place[3];
	enum tcx_status st = plan_grid(n, local, dev, global, &err);

	CHECK_MSG(st == TCX_OK, "%lld x %lld x %lld: %s", (long long)n[0], (long long)n[1],
		  (long long)n[2], err.msg);
	if (st)
		return;
	for (int d = 0; d < 3; d++) {
		CHECK(global[d] % local[d] == 0);
		grid[d] = global[d] / local[d];
		CHECK_MSG((int64_t)grid[d] <= cap[d], "dimension %d: %zu groups, limit %lld", d,
			  grid[d], (long long)cap[d]);
		CHECK(global[d] <= (size_t)TCX_GRID_MAX_ITEMS);
	}
	CHECK((int64_t)(grid[0] * grid[1] * grid[2]) >= total);
	/* the spare groups are fewer than a layer of the grid */
	CHECK((int64_t)(grid[0] * grid[1] * grid[2]) - total < (int64_t)(grid[0] * grid[1]));
	if (total > 200000)
		return;
	{
		unsigned char *seen = calloc((size_t)total, 1);
		int64_t spare = 0;

		if (!seen)
			return;
		for (b[2] = 0; b[2] < grid[2]; b[2]++)
			for (b[1] = 0; b[1] < grid[1]; b[1]++)
				for (b[0] = 0; b[0] < grid[0]; b[0]++) {
					if (!decode(grid, b, n, place)) {
						spare++;
						continue;
					}
					CHECK(place[0] < n[0] && place[1] < n[1] &&
					      place[2] < n[2]);
					seen[place[0] + n[0] * (place[1] + n[1] * place[2])]++;
				}
		for (int64_t g = 0; g < total; g++)
			if (seen[g] != 1) {
				CHECK_MSG(seen[g] == 1, "group %lld decoded %d times", (long long)g,
					  seen[g]);
				break;
			}
		CHECK(spare == (int64_t)(grid[0] * grid[1] * grid[2]) - total);
		free(seen);
	}
}

static void test_grid(void)
{
	struct device_info dev;
	const size_t wg256[3] = {256, 1, 1}, wg16[3] = {16, 16, 1}, wg1[3] = {1, 1, 1};
	const size_t wg1024[3] = {1024, 1, 1};
	int64_t cap[3] = {INT32_MAX, 65535, 65535}, n[3];
	size_t global[3];
	struct tcx_error err;

	cuda_info(&dev);
	/* what fits is launched as it is */
	n[0] = 3, n[1] = 4, n[2] = 5;
	CHECK(plan_grid(n, wg16, &dev, global, &err) == TCX_OK);
	CHECK(global[0] == 48 && global[1] == 64 && global[2] == 5);
	n[0] = 1, n[1] = 1, n[2] = 65535; /* exactly CUDA's limit */
	CHECK(plan_grid(n, wg256, &dev, global, &err) == TCX_OK);
	CHECK(global[0] == 256 && global[1] == 1 && global[2] == 65535);
	check_grid(n, wg256, &dev, cap);
	/* one past it, and TCCG's CCSD(T) count */
	n[2] = 65536;
	check_grid(n, wg256, &dev, cap);
	n[2] = 192000;
	check_grid(n, wg256, &dev, cap);
	n[0] = 3, n[1] = 5, n[2] = 192000;
	check_grid(n, wg16, &dev, cap);
	/* past the limit along dimension 1, and along both */
	n[0] = 2, n[1] = 70001, n[2] = 3;
	check_grid(n, wg16, &dev, cap);
	n[0] = 1, n[1] = 65536, n[2] = 65536;
	check_grid(n, wg1, &dev, cap);
	/* 2^31 - 1 work-items along a dimension at most: 1024-item groups */
	n[0] = 3 << 20, n[1] = 1, n[2] = 1;
	CHECK(plan_grid(n, wg1024, &dev, global, &err) == TCX_OK);
	CHECK(global[0] <= (size_t)TCX_GRID_MAX_ITEMS);
	check_grid(n, wg1024, &dev, cap);
	/* a device without grid limits of its own (OpenCL) gets every
	 * device's: 65535 along dimensions 1 and 2 */
	dev.max_groups[0] = dev.max_groups[1] = dev.max_groups[2] = 0;
	n[0] = 1, n[1] = 1, n[2] = 192000;
	check_grid(n, wg1, &dev, cap);

	/* small artificial limits: every dimension of the grid in use */
	dev.max_groups[0] = 7, dev.max_groups[1] = 5, dev.max_groups[2] = 3;
	cap[0] = 7, cap[1] = 5, cap[2] = 3;
	for (n[2] = 1; n[2] <= 20; n[2]++)
		for (n[1] = 1; n[1] <= 6; n[1]++)
			for (n[0] = 1; n[0] <= 9; n[0]++)
				if (n[0] * n[1] * n[2] <= 105)
					check_grid(n, wg1, &dev, cap);
	/* one group past what the grid holds: refused, with the counts */
	n[0] = 2, n[1] = 53, n[2] = 1;
	CHECK(plan_grid(n, wg1, &dev, global, &err) == TCX_ELIMIT);
	CHECK_MSG(strstr(err.msg, "106 work-groups exceeds the 7 x 5 x 3") != NULL, "%s", err.msg);
	/* counts whose product overflows: refused, not wrapped */
	n[0] = INT64_MAX / 2, n[1] = 3, n[2] = 1;
	CHECK(plan_grid(n, wg1, &dev, global, &err) == TCX_ELIMIT);

	/* $TCX_MAX_GROUPS lowers the limits further (tests on any device) */
	cuda_info(&dev);
	setenv("TCX_MAX_GROUPS", "4,3,100", 1);
	cap[0] = 4, cap[1] = 3, cap[2] = 100;
	n[0] = 5, n[1] = 2, n[2] = 7;
	check_grid(n, wg16, &dev, cap);
	unsetenv("TCX_MAX_GROUPS");
}

/* ---- 2. launches --------------------------------------------------------- */

struct rec_device {
	struct device_base base;
	struct device_info info;
};

#define MAX_REC 4
static struct launch recorded[MAX_REC];
static struct tcx_args recorded_args[MAX_REC];
static size_t recorded_param_bytes[MAX_REC];
static int nrecorded;

/* Records the launch, its struct tcx_args, and its parameters' bytes (as
 * the kernel takes them: a pointer per buffer); refuses what the device's
 * limits refuse, as the CUDA backend's check does. */
static enum tcx_status rec_launch(struct device *dev, struct program *prog, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	const struct device_info *di = device_info_of(dev);
	size_t bytes = 0;

	(void)prog;
	if (event_ms)
		*event_ms = 0;
	for (int d = 0; d < 3; d++)
		if (l->global[d] / l->local[d] > (size_t)di->max_groups[d])
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': %zu blocks in dimension %d exceed the device "
					"limit of %lld",
					l->kernel, l->global[d] / l->local[d], d,
					(long long)di->max_groups[d]);
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
			    l->args[a].size == sizeof(struct tcx_args)) {
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
	/* a program of the recorder's, as device_launch checks */
	struct program_head prog = { .dev = (struct device *)rd };
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
	if (plan_launch(k, (struct device *)rd, (struct program *)&prog, &p, buf, buf, buf, buf, alpha, beta, NULL,
			&err) != TCX_OK) {
		CHECK_MSG(0, "%s: %s", expr, err.msg);
		goto out;
	}
	ok = true;
out:
	contraction_free(c);
	return ok;
}

/* The recorded contraction launch covers every group the arguments count. */
static void check_covered(const struct launch *l, const struct tcx_args *a)
{
	size_t groups = 1;

	for (int d = 0; d < 3; d++)
		groups *= l->global[d] / l->local[d];
	CHECK(a->groups[0] >= 1 && a->groups[1] >= 1 && a->groups[2] >= 1);
	CHECK(groups >= (size_t)(a->groups[0] * a->groups[1] * a->groups[2]));
}

static void test_launch_grid(void)
{
	struct tcx_backend_ops ops;
	struct rec_device rd;
	struct kernel_plan k;
	const char *ccsdt = "C[a,b,c,i,j,k] = Sum[m] A[i,j,m,a] * B[m,k,b,c]";

	memset(&ops, 0, sizeof(ops));
	ops.name = "record";
	ops.launch = rec_launch;
	memset(&rd, 0, sizeof(rd));
	rd.base.ops = &ops;
	rd.base.info = &rd.info;
	cuda_info(&rd.info);

	/* TCCG's CCSD(T) contraction at 24: the GPU default tiles i and k
	 * (D0, D1), and a b c j fold into dimension 2: 24^4 = 331776 groups */
	if (launch(&rd, ccsdt, 24, NULL, NULL, &k)) {
		CHECK(nrecorded == 1);
		CHECK(recorded_args[0].groups[2] == 24 * 24 * 24 * 24);
		check_covered(&recorded[0], &recorded_args[0]);
	}
	/* with GlobalSplitU, and its reduction over C's 24^6 elements */
	if (launch(&rd, ccsdt, 24, NULL, "GlobalSplitU=2", &k)) {
		CHECK(nrecorded == 2);
		CHECK(recorded_args[0].groups[2] == 2 * 24 * 24 * 24 * 24);
		check_covered(&recorded[0], &recorded_args[0]);
		if (nrecorded == 2) {
			size_t items =
			    recorded[1].global[0] * recorded[1].global[1] * recorded[1].global[2];

			CHECK(items >= (size_t)24 * 24 * 24 * 24 * 24 * 24);
			CHECK(items - (size_t)24 * 24 * 24 * 24 * 24 * 24 <
			      recorded[1].global[0] * recorded[1].global[1]);
		}
	}
	/* a grid over dimension 1 too: D1 of 70000 macro tiles */
	{
		const int64_t sizes[3] = {1, (int64_t)70000 * 128, 1};

		if (launch(&rd, "C[ij]=A[ik]*B[kj]", 0, sizes, NULL, &k)) {
			CHECK(k.mt1 == 128);
			CHECK(nrecorded == 1 && recorded_args[0].groups[1] == 70000);
			check_covered(&recorded[0], &recorded_args[0]);
		}
	}
}

/* ---- 3. sixteen indices -------------------------------------------------- */

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
	    {"abcdefghijklmnop,abcdefghijklmnop->abcdefghijklmnop", TCX_MAX_SLOTS, 16, 0},
	    /* 16 bound ones: DU and 15 outer */
	    {"abcdefghijklmnop,abcdefghijklmnop->", 18, 0, 15},
	};
	struct tcx_backend_ops ops;
	struct rec_device rd;
	struct kernel_plan k;

	memset(&ops, 0, sizeof(ops));
	ops.name = "record";
	ops.launch = rec_launch;
	memset(&rd, 0, sizeof(rd));
	rd.base.ops = &ops;
	rd.base.info = &rd.info;
	cuda_info(&rd.info);
	for (size_t e = 0; e < ARRAY_SIZE(cases); e++) {
		const struct tcx_args *a = &recorded_args[0];
		int64_t want_groups = 1;

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
		for (int sl = 3; sl < 3 + k.nf2; sl++)
			want_groups *= a->size[sl];
		CHECK(a->groups[2] == want_groups);
		check_covered(&recorded[0], a);
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

/* ---- 4. the device's other limits, exactly at the boundary --------------- */

static void test_device_limits(void)
{
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	struct device_info dev;
	struct kernel_plan k;
	struct solution s;
	struct tcx_error err;
	int64_t lds;

	CHECK(c != NULL);
	if (!c)
		return;
	cuda_info(&dev);
	/* local memory: a plan needing exactly what the device has is made,
	 * one byte more is refused */
	solution_default(&s);
	CHECK(solution_parse(&s, "WorkGroup=[16,16,1],ThreadTile=[4,4],DepthU=16,UseLDS=True",
			     &err) == TCX_OK);
	CHECK_MSG(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_OK, "%s", err.msg);
	lds = k.lds_bytes;
	CHECK(lds > 0);
	dev.local_mem = lds;
	CHECK_MSG(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_OK, "%s", err.msg);
	dev.local_mem = lds - 1;
	CHECK(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_ELIMIT);
	CHECK_MSG(strstr(err.msg, "local memory") != NULL, "%s", err.msg);
	/* work-items per work-group: exactly the device's limit, and one row
	 * more; along one dimension: exactly, and twice */
	cuda_info(&dev);
	solution_default(&s);
	CHECK(solution_parse(&s, "WorkGroup=[32,32,1],ThreadTile=[1,1],UseLDS=False", &err) ==
	      TCX_OK);
	CHECK_MSG(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_OK, "%s", err.msg);
	CHECK(k.nt == dev.max_wg_size);
	s.wg[1] = 33;
	CHECK(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_ELIMIT);
	CHECK_MSG(strstr(err.msg, "exceeds the device limit of 1024") != NULL, "%s", err.msg);
	solution_default(&s);
	CHECK(solution_parse(&s, "WorkGroup=[1,1,64],ThreadTile=[1,1],DepthU=64,UseLDS=False",
			     &err) == TCX_OK);
	CHECK_MSG(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_OK, "%s", err.msg);
	dev.max_wg_dim[2] = 32;
	CHECK(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_ELIMIT);
	CHECK_MSG(strstr(err.msg, "WorkGroup[2] = 64 exceeds the device limit of 32") != NULL, "%s",
		  err.msg);
	contraction_free(c);
}

/* ---- 5. a source from its parts ------------------------------------------ */

static void test_source_parts(void)
{
	static const struct {
		const char *lang, *params;
		enum tcx_dtype t;
	} cases[] = {
	    {"opencl", "WorkGroup=[8,8,1],ThreadTile=[4,4],GlobalSplitU=2", TCX_DTYPE_S},
	    {"cuda", "WorkGroup=[8,8,1],ThreadTile=[4,4],GlobalSplitU=2", TCX_DTYPE_Z},
	    {"cuda", "WorkGroup=[16,8,1],ThreadTile=[4,8],DepthU=32,MatrixInstruction=[64,64,8,1]",
	     TCX_DTYPE_S},
	};

	for (size_t e = 0; e < ARRAY_SIZE(cases); e++) {
		struct tcx_contraction *c = parse("C[ijk]=A[ilk]*B[jlk]", cases[e].t);
		struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT, parts = STRBUF_INIT;
		struct device_info dev;
		struct kernel_plan k;
		struct solution s;
		struct tcx_error err;
		int n = 0;

		CHECK(c != NULL);
		if (!c)
			continue;
		cuda_info(&dev);
		snprintf(dev.lang, sizeof(dev.lang), "%s", cases[e].lang);
		solution_default(&s);
		CHECK(solution_parse(&s, cases[e].params, &err) == TCX_OK);
		CHECK_MSG(plan_make(c, NULL, &s, &dev, &k, &err) == TCX_OK, "%s", err.msg);
		CHECK(plan_source(&k, &src, &opts, &err) == TCX_OK);
		CHECK(plan_prelude(&k, &parts, &err) == TCX_OK);
		/* the prelude: #define lines and its opening comment, no template */
		CHECK(strncmp(parts.buf, "/* tcx ", 7) == 0 && !strstr(parts.buf, "KERNEL"));
		for (const char *const *t = plan_templates(cases[e].lang); *t; t++, n++) {
			char *text = NULL;

			CHECK_MSG(kernel_source(*t, &text, NULL, &err) == TCX_OK, "%s", err.msg);
			strbuf_adds(&parts, text ? text : "");
			free(text);
		}
		CHECK(n >= 2);
		CHECK_MSG(src.len == parts.len && memcmp(src.buf, parts.buf, src.len) == 0,
			  "%s: plan_source differs from its parts", cases[e].lang);
		CHECK(strcmp(strbuf_str(&opts), plan_options(cases[e].lang)) == 0);
		strbuf_release(&src);
		strbuf_release(&opts);
		strbuf_release(&parts);
		contraction_free(c);
	}
	CHECK(strcmp(plan_options("opencl"), "-cl-std=CL1.2") == 0);
	CHECK(strcmp(plan_options("cuda"), "") == 0);
	/* every kernel source holds the ABI the host compiles, before the
	 * contraction that uses it */
	for (int l = 0; l < 2; l++) {
		const char *const *t = plan_templates(l ? "cuda" : "opencl");
		int abi = -1, body = -1;

		for (int n = 0; t[n]; n++) {
			if (strcmp(t[n], "common/abi.h") == 0)
				abi = n;
			if (strcmp(t[n], "opencl/contract.cl") == 0)
				body = n;
		}
		CHECK_MSG(abi >= 0 && abi < body, "%s: abi.h at %d, contract.cl at %d",
			  l ? "cuda" : "opencl", abi, body);
	}
}

int main(void)
{
	test_grid();
	test_launch_grid();
	test_max_indices();
	test_device_limits();
	test_source_parts();
	return check_done();
}

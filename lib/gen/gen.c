/* gen.c - kernel plans: roles and slots of a contraction's indices, the
 * resolution of automatic parameters, the validity rules (Tensile's, plus
 * the device's limits), the #define prelude, and launches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen/gen.h"
#include "gen/kernels.h"

/* the launch's arguments, work sizes and scalars: abi_*, the exported
 * libraries' too */
#include "runtime/abi.c"

enum tcx_status kernel_source(const char *path, char **text, size_t *len, struct tcx_error *err)
{
	const char *dir = getenv("TCX_KERNEL_DIR");

	*text = NULL;
	if (dir && *dir) {
		struct strbuf full = STRBUF_INIT;
		enum tcx_status st;

		strbuf_addf(&full, "%s/%s", dir, path);
		st = common_read_file(strbuf_str(&full), text, len, err);
		strbuf_release(&full);
		return st;
	}
	for (const struct embedded_kernel *k = embedded_kernels; k->path; k++)
		if (strcmp(k->path, path) == 0) {
			*text = malloc(k->len + 1);
			if (!*text)
				return tcx_fail(err, TCX_ENOMEM, "out of memory");
			memcpy(*text, k->data, k->len);
			(*text)[k->len] = '\0';
			if (len)
				*len = k->len;
			return TCX_OK;
		}
	return tcx_fail(err, TCX_EINVAL, "no kernel template '%s' in this build", path);
}

/* Registers per element in Tensile's sense (32-bit words), for VectorWidth
 * -1: S 1, D 2, C 2, Z 4, H and B a half. */
static double regs_per_elem(enum tcx_dtype t)
{
	switch (t) {
	case TCX_DTYPE_D:
	case TCX_DTYPE_C:
		return 2;
	case TCX_DTYPE_Z:
		return 4;
	case TCX_DTYPE_H:
	case TCX_DTYPE_B:
		return 0.5;
	default:
		return 1;
	}
}

/* An element type as runtime/abi.c names it: Tensile's letter, lowercase. */
static char abi_type(enum tcx_dtype t)
{
	return (char)(dtype_info(t)->letter | 0x20);
}

/* Bytes of one element in local memory and in registers (fp16 and bf16
 * are computed in fp32). */
static int value_bytes(enum tcx_dtype t)
{
	return (int)abi_value_bytes(abi_type(t));
}

/* Bytes of one element staged in local memory: with MatrixInstruction,
 * fp16 and bf16 stay 16 bits, as the tensor cores take them. */
static int stage_bytes(const struct kernel_plan *k)
{
	if (k->sol.mi[0] && (k->c->dtype == TCX_DTYPE_H || k->c->dtype == TCX_DTYPE_B))
		return 2;
	return value_bytes(k->c->dtype);
}

/* An index's position in tensor t's memory order, or its stride when the
 * strides are explicit: what decides coalescing. */
static double order_key(const struct tcx_contraction *c, const struct problem *p,
			enum tensor_role t, int id)
{
	int ids[TCX_MAX_INDICES], n;

	if (id < 0 || c->idx[id].pos[t] < 0)
		return -1;
	if (p && p->explicit_strides)
		return (double)p->stride[t][id];
	n = contraction_dims(c, t, ids);
	for (int k = 0; k < n; k++)
		if (ids[k] == id)
			return k;
	return -1;
}

/* Whether index id is the fastest-moving one of tensor t in a packed layout. */
static bool is_unit(const struct tcx_contraction *c, enum tensor_role t, int id)
{
	int ids[TCX_MAX_INDICES], n = contraction_dims(c, t, ids);

	return id >= 0 && n > 0 && ids[0] == id;
}

/* NumLoadsCoalesced: 1 = the smallest working count, -1 = the largest,
 * else that count, which must work (Tensile's rule 5). */
static bool resolve_nlc(int want, int num_loads, int ec, int ep, int vw, int *nlc, int *nlp)
{
	int best = -1;

	for (int c = 1; c <= num_loads; c++) {
		if (num_loads % c || (ec / vw) % c || ep % (num_loads / c))
			continue;
		if (want > 0 && want != 1 && c != want)
			continue;
		best = c;
		if (want == 1 || want > 1)
			break;
	}
	if (best < 0)
		return false;
	*nlc = best;
	*nlp = num_loads / best;
	return true;
}

static bool pow2(int x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

#define REJECT(...) return tcx_fail(err, TCX_EREJECT, __VA_ARGS__)
/* a rule of the device rather than of Tensile's parameter space */
#define LIMIT(...) return tcx_fail(err, TCX_ELIMIT, __VA_ARGS__)

/* The checks that need a resolved DepthU and VectorWidth; sets the load
 * pattern and local-memory size. */
static enum tcx_status check_loads(struct kernel_plan *k, const struct device_info *dev,
				   struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	const char *pn = k->p_is_a ? "A" : "B", *qn = k->p_is_a ? "B" : "A";
	int du = s->depth_u, vw = s->vw;
	int64_t lds;

	if (!s->use_lds) {
		k->nlc_p = k->nlp_p = k->nlc_q = k->nlp_q = 1;
		k->lds_bytes = 0;
		goto lsu;
	}
	{
		int ecp = k->tlu_p ? k->mt0 : du, epp = k->tlu_p ? du : k->mt0;
		int ecq = k->tlu_q ? k->mt1 : du, epq = k->tlu_q ? du : k->mt1;
		int64_t np = (int64_t)k->mt0 * du, nq = (int64_t)k->mt1 * du;
		int want_p = s->nlc[k->p_is_a ? 0 : 1], want_q = s->nlc[k->p_is_a ? 1 : 0];

		if (ecp % vw)
			REJECT("%s's coalesced extent %d (%s) is not a multiple of VectorWidth %d", pn,
			       ecp, k->tlu_p ? "the macro tile" : "DepthU", vw);
		if (ecq % vw)
			REJECT("%s's coalesced extent %d (%s) is not a multiple of VectorWidth %d", qn,
			       ecq, k->tlu_q ? "the macro tile" : "DepthU", vw);
		if (np % ((int64_t)vw * k->nt) || np < (int64_t)vw * k->nt)
			REJECT("tile of %s (%lld elements) is not a multiple of VectorWidth x "
			       "work-items (%d x %d)",
			       pn, (long long)np, vw, k->nt);
		if (nq % ((int64_t)vw * k->nt) || nq < (int64_t)vw * k->nt)
			REJECT("tile of %s (%lld elements) is not a multiple of VectorWidth x "
			       "work-items (%d x %d)",
			       qn, (long long)nq, vw, k->nt);
		if (!resolve_nlc(want_p, (int)(np / (vw * k->nt)), ecp, epp, vw, &k->nlc_p,
				 &k->nlp_p))
			REJECT("NumLoadsCoalesced%s %d does not split the %lld loads of %s evenly", pn,
			       want_p, (long long)(np / (vw * k->nt)), pn);
		if (!resolve_nlc(want_q, (int)(nq / (vw * k->nt)), ecq, epq, vw, &k->nlc_q,
				 &k->nlp_q))
			REJECT("NumLoadsCoalesced%s %d does not split the %lld loads of %s evenly", qn,
			       want_q, (long long)(nq / (vw * k->nt)), qn);
		/* registers matter on GPUs; a CPU keeps the staging on its stack */
		if ((!dev || dev->type != DEV_CPU) &&
		    (k->nlc_p * k->nlp_p + k->nlc_q * k->nlp_q) * vw > 256)
			LIMIT("%d elements staged per work-item: too many registers",
			       (k->nlc_p * k->nlp_p + k->nlc_q * k->nlp_q) * vw);
		lds = (int64_t)(s->pgr ? 2 : 1) * du *
		      ((int64_t)(k->mt0 + s->lds_pad) + (k->mt1 + s->lds_pad)) * stage_bytes(k);
		k->lds_bytes = lds;
	}
lsu:
	if (s->wg[2] > 1)
		k->lds_bytes += (int64_t)(s->wg[2] - 1) * s->tt[0] * s->tt[1] * s->wg[0] * s->wg[1] *
				value_bytes(k->c->dtype);
	if (dev && dev->local_mem > 0 && k->lds_bytes > dev->local_mem)
		LIMIT("needs %lld bytes of local memory; the device has %lld",
		       (long long)k->lds_bytes, (long long)dev->local_mem);
	return TCX_OK;
}

/* The mma.sync shapes (m, n, k) kernels/cuda/compat.h has for each type,
 * and the architecture (sm_XY as XY) each needs */
static const struct mi_shape {
	enum tcx_dtype t;
	int m, n, k, sm;
} mi_shapes[] = {
	{ TCX_DTYPE_H, 16, 8, 16, 80 },
	{ TCX_DTYPE_B, 16, 8, 16, 80 },
	{ TCX_DTYPE_S, 16, 8, 8, 80 }, /* through tf32 */
	/* the fp64 tensor cores; complex fp64 as four real products */
	{ TCX_DTYPE_D, 8, 8, 4, 80 },
	{ TCX_DTYPE_D, 16, 8, 4, 90 },
	{ TCX_DTYPE_D, 16, 8, 8, 90 },
	{ TCX_DTYPE_D, 16, 8, 16, 90 },
	{ TCX_DTYPE_Z, 8, 8, 4, 80 },
	{ TCX_DTYPE_Z, 16, 8, 4, 90 },
	{ TCX_DTYPE_Z, 16, 8, 8, 90 },
	{ TCX_DTYPE_Z, 16, 8, 16, 90 },
};

/* MatrixInstruction: the tensor-core shapes kernels/cuda/compat.h has, on
 * a CUDA device that runs them, and a split of the macro tile into warp
 * tiles of whole instruction tiles (the squarest, for the fewest fragment
 * reads).  Needs the resolved DepthU. */
static enum tcx_status check_mi(struct kernel_plan *k, const struct device_info *dev,
				struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	const enum tcx_dtype t = k->c->dtype;
	const bool half = t == TCX_DTYPE_H || t == TCX_DTYPE_B;
	const struct mi_shape *sh = NULL;
	int sm = 0, nw, best = -1;

	for (size_t x = 0; x < ARRAY_SIZE(mi_shapes); x++)
		if (mi_shapes[x].t == t && s->mi[0] == mi_shapes[x].m &&
		    s->mi[1] == mi_shapes[x].n && s->mi[2] == mi_shapes[x].k && s->mi[3] == 1)
			sh = &mi_shapes[x];
	if (!sh)
		REJECT("MatrixInstruction [%d, %d, %d, %d] is not a tensor-core shape tcx has for %s "
		       "(fp16 and bf16: [16, 8, 16, 1]; fp32 through tf32: [16, 8, 8, 1]; fp64 "
		       "and complex fp64: [8, 8, 4, 1], on sm_90 also [16, 8, 4, 1], [16, 8, 8, 1] "
		       "and [16, 8, 16, 1])",
		       s->mi[0], s->mi[1], s->mi[2], s->mi[3], dtype_info(t)->name);
	if (!dev || strcmp(k->lang, "cuda") != 0 || sscanf(dev->arch, "sm_%d", &sm) != 1 ||
	    sm < sh->sm)
		REJECT("MatrixInstruction [%d, %d, %d, %d] for %s needs the CUDA backend on a GPU "
		       "with tensor cores (sm_%d or later)",
		       s->mi[0], s->mi[1], s->mi[2], s->mi[3], dtype_info(t)->name, sh->sm);
	if (!s->use_lds || s->wg[2] != 1)
		REJECT("MatrixInstruction needs UseLDS and LocalSplitU 1");
	if (k->nt % 32)
		REJECT("MatrixInstruction needs whole warps: %d work-items is not a multiple of 32",
		       k->nt);
	if (s->depth_u % s->mi[2])
		REJECT("DepthU %d is not a multiple of MatrixInstruction's k = %d", s->depth_u,
		       s->mi[2]);
	nw = k->nt / 32;
	for (int w0 = 1; w0 <= nw; w0 *= 2) {
		const int w1 = nw / w0;

		if (nw % w0 || k->mt0 % (sh->m * w0) || k->mt1 % (sh->n * w1))
			continue;
		if (best < 0 || k->mt0 / w0 + k->mt1 / w1 < k->mt0 / best + k->mt1 / (nw / best))
			best = w0;
	}
	if (best < 0)
		REJECT("macro tile %dx%d does not split into %d warps of whole %dx%d tensor-core "
		       "tiles",
		       k->mt0, k->mt1, nw, sh->m, sh->n);
	k->mi = true;
	k->mi_raw = half;
	k->mi_warps0 = best;
	if (half && ((k->mt0 + s->lds_pad) % 8 || (k->mt1 + s->lds_pad) % 8))
		REJECT("MatrixInstruction on 16-bit data reads local memory by 16-byte rows: "
		       "MacroTile + LdsPad (%d + %d, %d + %d) must be multiples of 8",
		       k->mt0, s->lds_pad, k->mt1, s->lds_pad);
	/* a lane holds 1/32 of its warp tile's accumulators: fp32 in one
	 * register, fp64 in two, complex fp64 in four */
	if ((k->mt0 / best) * (k->mt1 / (nw / best)) / 32 *
		    (t == TCX_DTYPE_Z ? 4 : t == TCX_DTYPE_D ? 2 : 1) >
	    256)
		LIMIT("warp tile %dx%d holds too many accumulators for the registers",
		      k->mt0 / best, k->mt1 / (nw / best));
	return TCX_OK;
}

/* PackFreeIndices: D0 takes one more of P's free indices, folded until
 * now, as its outer part, and D1 one of Q's.  The warpgroup kernel copies
 * tiles by rows of the operand, so it takes the index that moves fastest
 * in the operand (`by_operand`); the others (SIMT and mma.sync) store C
 * element by element, so they take the one that moves fastest in C. */
static void pack_slots(struct kernel_plan *k, bool by_operand)
{
	for (int x = 0; x < 2 && k->sol.pack_free; x++) {
		const enum tensor_role op = (x == 0) == k->p_is_a ? T_A : T_B;
		const enum index_class want = op == T_A ? IDX_FREE_A : IDX_FREE_B;
		double best = -1;

		for (int sl = 3; sl < 3 + k->nf2; sl++) {
			const int id = k->slot[sl];
			const double key = order_key(k->c, NULL, by_operand ? op : T_C, id);

			if (k->c->idx[id].cls == want && (best < 0 || key < best)) {
				best = key;
				k->pack_slot[x] = sl;
			}
		}
	}
}

/* MatrixInstruction [64, n, k, 1]: Hopper's warpgroup instructions
 * (wgmma; kernels/cuda/wgmma.cuh).  Splits the macro tile among the
 * consumer warpgroups (as many along D0 as it allows), picks each
 * operand's layout in shared memory, and as many stages as fit Occupancy
 * work-groups per SM.  Needs the resolved DepthU. */
static enum tcx_status check_wgmma(struct kernel_plan *k, const struct device_info *dev,
				   struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	const enum tcx_dtype t = k->c->dtype;
	const bool half = t == TCX_DTYPE_H || t == TCX_DTYPE_B;
	const int es = half ? 2 : 4, row = 128 / es, occ = s->occupancy > 0 ? s->occupancy : 1;
	int nwg, wm = -1;
	int64_t stage, fixed, room;

	if (!(half || t == TCX_DTYPE_S) || s->mi[1] < 8 || s->mi[1] > 256 || s->mi[1] % 8 ||
	    s->mi[2] != (half ? 16 : 8) || s->mi[3] != 1)
		REJECT("MatrixInstruction [%d, %d, %d, %d] is not a warpgroup shape tcx has for %s "
		       "(fp16 and bf16: [64, n, 16, 1]; fp32 through tf32: [64, n, 8, 1]; n a "
		       "multiple of 8 up to 256)",
		       s->mi[0], s->mi[1], s->mi[2], s->mi[3], dtype_info(t)->name);
	if (!dev || strcmp(k->lang, "cuda") != 0 || strcmp(dev->arch, "sm_90") != 0)
		REJECT("MatrixInstruction [64, n, k, 1] needs the CUDA backend on a Hopper GPU "
		       "(sm_90)");
	if (!s->use_lds || s->wg[2] != 1)
		REJECT("MatrixInstruction needs UseLDS and LocalSplitU 1");
	if (k->nt % 128)
		REJECT("MatrixInstruction [64, n, k, 1] needs whole warpgroups: %d work-items is not "
		       "a multiple of 128",
		       k->nt);
	nwg = k->nt / 128;
	for (int w = nwg; w >= 1 && wm < 0; w--)
		if (nwg % w == 0 && k->mt0 % (64 * w) == 0 && k->mt1 % (s->mi[1] * (nwg / w)) == 0)
			wm = w;
	if (wm < 0)
		REJECT("macro tile %dx%d does not split into %d warpgroups of whole 64x%d tiles",
		       k->mt0, k->mt1, nwg, s->mi[1]);
	k->wg_wm = wm;
	/* An MN-major tile is stored (and copied) in columns of 128 bytes of
	 * its free index; a K-major one in rows, of which any multiple of 8
	 * (one swizzle atom) will do. */
	if (k->tlu_q && k->mt1 % row)
		REJECT("macro tile %dx%d: Q's free index moves fastest, so its tile is copied in "
		       "128-byte columns and MT1 must be a multiple of %d",
		       k->mt0, k->mt1, row);
	/* the tensor cores read fp16 and bf16 either way, tf32 K-major only */
	k->wg_mn_p = half && k->tlu_p;
	k->wg_mn_q = half && k->tlu_q;
	if (s->depth_u % s->mi[2])
		REJECT("DepthU %d is not a multiple of MatrixInstruction's k = %d", s->depth_u,
		       s->mi[2]);
	if (s->depth_u % row)
		REJECT("DepthU %d: tiles in shared memory have rows of 128 bytes, so DepthU must be "
		       "a multiple of %d here",
		       s->depth_u, row);
	if (s->depth_u > 256)
		REJECT("DepthU %d: the copy engine takes at most 256 rows a tile", s->depth_u);
	if (k->mt0 > 256 || k->mt1 > 256)
		REJECT("macro tile %dx%d: the copy engine takes at most 256 rows a tile", k->mt0,
		       k->mt1);
	if ((int64_t)k->mt0 * k->mt1 / k->nt > 192)
		LIMIT("warpgroup tile %dx%d holds too many accumulators for the registers",
		      k->mt0 / wm, k->mt1 / (nwg / wm));
	if (k->nt + 128 > dev->max_wg_size)
		LIMIT("%d consumer threads and 128 of the producer exceed the work-group limit %d",
		      k->nt, dev->max_wg_size);
	/* Stages of the ring the copies land in (each with two mbarriers of 16
	 * bytes), and for tf32 two stages of the ring Q's tile is split into
	 * (rounded, K-major; TF32x3 with the remainders), after 1 KiB that
	 * aligns the swizzled tiles. */
	stage = (int64_t)(k->mt0 + k->mt1) * s->depth_u * es;
	room = dev->local_mem > 0 ? dev->local_mem : 48 * 1024;
	/* CUDA keeps 1 KiB of each SM's shared memory per resident block */
	if (dev->local_mem_per_cu > 0 && dev->local_mem_per_cu / occ - 1024 < room)
		room = dev->local_mem_per_cu / occ - 1024;
	/* tf32: three stages of the math ring when four of the other still
	 * fit (the producer then works two chunks ahead), else two.  Plain
	 * tf32 (not TF32x3) with Q K-major needs no math ring: the tensor cores
	 * read Q's landed tile as it is, truncating it to tf32, as cuBLAS's
	 * tf32 does -- when three stages fit, as a stage is then freed only
	 * once the tensor cores are done with it, a chunk after the next is
	 * loaded. */
	k->wg_mstages = t == TCX_DTYPE_S ? 3 : 0;
	if (t == TCX_DTYPE_S && !s->tf32x3 && !k->tlu_q &&
	    (room - 1024) / (stage + 32) >= 3)
		k->wg_mstages = 0;
	k->tf32_trunc_q = t == TCX_DTYPE_S && k->wg_mstages == 0;
	for (;;) {
		fixed = 1024 + k->wg_mstages * ((int64_t)k->mt1 * s->depth_u * es *
							(s->tf32x3 ? 2 : 1) +
						32);
		k->wg_stages = (int)((room - fixed) / (stage + 32));
		if (k->wg_mstages != 3 || k->wg_stages >= 4)
			break;
		k->wg_mstages = 2;
	}
	if (k->wg_stages > 6)
		k->wg_stages = 6; /* a cap: deeper rings only take memory */
	if (k->wg_stages < 2)
		LIMIT("needs %lld bytes of shared memory for two stages of %dx%dx%d tiles; %lld "
		      "are free for each of %d work-groups per SM",
		      (long long)(fixed + 2 * (stage + 32)), k->mt0, k->mt1, s->depth_u,
		      (long long)room, occ);
	k->lds_bytes = fixed + (int64_t)k->wg_stages * (stage + 32);
	k->nlc_p = k->nlp_p = k->nlc_q = k->nlp_q = 1; /* the SIMT loads' pattern: unused */
	pack_slots(k, true);
	k->mi = true;
	k->wgmma = true;
	return TCX_OK;
}

/* One role the solution names (TileIndexA/B, UnrollIndex): the index's id,
 * which must be of class `want`. */
static enum tcx_status role_index(const struct tcx_contraction *c, const char *param,
				  const char *name, enum index_class want, int *id,
				  struct tcx_error *err)
{
	static const char *const what[] = { "a free index of A", "a free index of B", "",
					    "a bound index" };

	*id = contraction_find(c, name);
	if (*id < 0)
		REJECT("%s '%s' is not an index of %s", param, name, c->expr);
	if (c->idx[*id].cls != want)
		REJECT("%s '%s' is not %s", param, name, what[want]);
	return TCX_OK;
}

/* The roles a solution chooses instead of model_classify's rules: the free index
 * each operand's tiles run along, then D0 and D1 by the same rule (the one
 * with the shorter stride in C is D0), and the unrolled bound index. */
static enum tcx_status apply_roles(struct kernel_plan *k, const struct problem *p,
				   struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	const struct tcx_contraction *c = k->c;
	struct classification *cls = &k->cls;
	static const char *const names[2] = { "TileIndexA", "TileIndexB" };
	static const enum index_class want[2] = { IDX_FREE_A, IDX_FREE_B };
	enum tcx_status st;
	int id;

	for (int x = 0; x < 2; x++) {
		if (!s->tile_index[x][0])
			continue;
		st = role_index(c, names[x], s->tile_index[x], want[x], &id, err);
		if (st)
			return st;
		cls->free01[x ? T_B : T_A] = id;
	}
	if (s->tile_index[0][0] || s->tile_index[1][0]) {
		const int fa = cls->free01[T_A], fb = cls->free01[T_B];

		if (fa == IDX_VIRTUAL || fb == IDX_VIRTUAL) {
			cls->d0_from_a = fb == IDX_VIRTUAL;
		} else {
			double sa = order_key(c, p, T_C, fa), sb = order_key(c, p, T_C, fb);

			cls->d0_from_a = sa < sb || (sa == sb && fa < fb);
		}
		cls->d0 = cls->d0_from_a ? fa : fb;
		cls->d1 = cls->d0_from_a ? fb : fa;
	}
	if (s->unroll_index[0]) {
		st = role_index(c, "UnrollIndex", s->unroll_index, IDX_BOUND, &id, err);
		if (st)
			return st;
		cls->du = id;
	}
	return TCX_OK;
}

/* Whether every tensor of p is small enough for 32-bit offsets. */
static bool off32_fits(const struct problem *p)
{
	return p->extent[T_A] < PLAN_OFF32_ELEMS && p->extent[T_B] < PLAN_OFF32_ELEMS &&
	       p->extent[T_C] < PLAN_OFF32_ELEMS;
}

enum tcx_status plan_make(const struct tcx_contraction *c, const struct problem *p,
			  const struct solution *sol, const struct device_info *dev,
			  struct kernel_plan *k, struct tcx_error *err)
{
	struct solution *s;
	const struct dtype_info *di = dtype_info(c->dtype);
	enum tensor_role P, Q;
	int n = 3;
	enum tcx_status st;

	memset(k, 0, sizeof(*k));
	k->pack_slot[0] = k->pack_slot[1] = -1;
	k->c = c;
	k->sol = *sol;
	s = &k->sol;
	snprintf(k->lang, sizeof(k->lang), "%s", dev && dev->lang[0] ? dev->lang : "opencl");
	/* The second main loop (whole-vector reads, no bounds checks) pays on
	 * GPUs; on CPU devices it buys nothing and makes PoCL's compile several
	 * times slower (its work-group loops around barriers in both arms).
	 * TCX_SPLIT_LOOP=0|1 forces the choice, for tests. */
	{
		const char *e = getenv("TCX_SPLIT_LOOP");

		if (e && (strcmp(e, "0") == 0 || strcmp(e, "1") == 0))
			k->split_loop = e[0] == '1';
		else if (dev)
			k->split_loop = dev->type == DEV_GPU || dev->type == DEV_ACCEL ||
					strcmp(k->lang, "opencl") != 0;
		else
			k->split_loop = strcmp(k->lang, "opencl") != 0;
	}
	k->packed = !(p && p->explicit_strides);
	model_classify(c, k->packed ? NULL : p, &k->cls);
	st = apply_roles(k, k->packed ? NULL : p, err);
	if (st)
		return st;
	k->p_is_a = k->cls.d0_from_a;
	P = k->p_is_a ? T_A : T_B;
	Q = k->p_is_a ? T_B : T_A;

	/* slots: D0, D1, DU, then folded free/batch, then outer bound */
	k->slot[0] = k->cls.d0;
	k->slot[1] = k->cls.d1;
	k->slot[2] = k->cls.du;
	for (int id = 0; id < c->nidx; id++)
		if (c->idx[id].cls != IDX_BOUND && id != k->cls.d0 && id != k->cls.d1) {
			k->slot[n++] = id;
			k->nf2++;
		}
	for (int id = 0; id < c->nidx; id++)
		if (c->idx[id].cls == IDX_BOUND && id != k->cls.du) {
			k->slot[n++] = id;
			k->nb++;
		}
	k->nslots = n;

	if (k->packed) {
		k->unit_p_d0 = is_unit(c, P, k->cls.d0);
		k->unit_p_du = is_unit(c, P, k->cls.du);
		k->unit_q_d1 = is_unit(c, Q, k->cls.d1);
		k->unit_q_du = is_unit(c, Q, k->cls.du);
		k->unit_c_d0 = is_unit(c, T_C, k->cls.d0);
	}
	/* coalesce along D0 (D1) when it moves faster than DU in P (Q) */
	{
		double pd = order_key(c, p, P, k->cls.d0), pu = order_key(c, p, P, k->cls.du);
		double qd = order_key(c, p, Q, k->cls.d1), qu = order_key(c, p, Q, k->cls.du);

		k->tlu_p = pu < 0 || (pd >= 0 && pd < pu);
		k->tlu_q = qu < 0 || (qd >= 0 && qd < qu);
	}

	/* element type and device */
	if ((c->dtype == TCX_DTYPE_D || c->dtype == TCX_DTYPE_Z) && dev && !dev->fp64)
		return tcx_fail(err, TCX_EUNSUPPORTED, "device '%s' cannot compute in fp64 (%s)",
				dev->name, di->name);

	/* shape */
	if (!pow2(s->wg[2]) || s->wg[2] > 64)
		REJECT("LocalSplitU %d is not a power of two up to 64", s->wg[2]);
	k->mt0 = s->wg[0] * s->tt[0];
	k->mt1 = s->wg[1] * s->tt[1];
	k->nt = s->wg[0] * s->wg[1] * s->wg[2];
	if (s->mt_join[0] && (s->mt_join[0] != k->mt0 || s->mt_join[1] != k->mt1))
		REJECT("MacroTile [%d, %d] differs from WorkGroup x ThreadTile (%d x %d)",
		       s->mt_join[0], s->mt_join[1], k->mt0, k->mt1);
	{
		int ratio = k->mt0 > k->mt1 ? k->mt0 / k->mt1 : k->mt1 / k->mt0;

		if (ratio < s->mt_shape[0] || ratio > s->mt_shape[1])
			REJECT("macro tile %dx%d has side ratio %d, outside MacroTileShapeMin..Max "
			       "%d..%d",
			       k->mt0, k->mt1, ratio, s->mt_shape[0], s->mt_shape[1]);
	}
	if (dev && dev->max_wg_size > 0 && k->nt > dev->max_wg_size)
		LIMIT("work-group of %d work-items exceeds the device limit of %d", k->nt,
		       dev->max_wg_size);
	for (int d = 0; dev && d < 3; d++)
		if (dev->max_wg_dim[d] > 0 && s->wg[d] > dev->max_wg_dim[d])
			LIMIT("WorkGroup[%d] = %d exceeds the device limit of %d", d, s->wg[d],
			       dev->max_wg_dim[d]);
	if (s->wgm < 1)
		REJECT("WorkGroupMapping %d: tcx maps work-groups only in positive bands", s->wgm);
	if ((double)s->tt[0] * s->tt[1] * regs_per_elem(c->dtype) > 256)
		LIMIT("thread tile %dx%d holds too many accumulators for the registers", s->tt[0],
		       s->tt[1]);

	/* VectorWidth: automatic = 4 registers' worth, halved until it fits */
	if (s->vw <= 0) {
		int v = (int)(4 / regs_per_elem(c->dtype));

		while (v > 1 && (s->tt[0] % v || s->tt[1] % v))
			v /= 2;
		s->vw = v < 1 ? 1 : v;
	}
	if (!pow2(s->vw) || s->vw > 16)
		REJECT("VectorWidth %d is not 1, 2, 4, 8 or 16", s->vw);
	/* Tensile also asks TT1 % VW == 0; tcx narrows the vectors along D1
	 * instead (VW1), so that [16, 8] tiles with 16-wide vectors work */
	if (s->tt[0] % s->vw)
		REJECT("ThreadTile[0] = %d is not a multiple of VectorWidth %d", s->tt[0], s->vw);
	k->vw1 = s->vw;
	while (s->tt[1] % k->vw1)
		k->vw1 /= 2;

	if (s->tf32x3 && !((s->mi[0] == 64 || s->mi[0] == 16) && c->dtype == TCX_DTYPE_S))
		REJECT("TF32x3 is for fp32 data on MatrixInstruction [64, n, 8, 1] or "
		       "[16, 8, 8, 1]");
	if (s->pack_free && s->mi[0] != 64 && (!s->use_lds || s->edge == EDGE_SHIFTPTR))
		REJECT("PackFreeIndices needs MatrixInstruction [64, n, k, 1], or UseLDS "
		       "with EdgeType Branch or None");
	/* the warpgroup kernel: DepthU automatic = one 128-byte row */
	if (s->mi[0] == 64) {
		if (s->depth_u <= 0)
			s->depth_u = c->dtype == TCX_DTYPE_S ? 32 : 64;
		st = check_wgmma(k, dev, err);
		if (st)
			return st;
		goto sizes;
	}
	/* DepthU: automatic = the first of 2, 4, ... that fits */
	if (s->depth_u <= 0) {
		struct tcx_error e2;

		for (int du = 2; du <= 1024; du *= 2) {
			if (du % s->wg[2] || (s->mi[0] > 0 && s->mi[2] > 0 && du % s->mi[2]))
				continue;
			s->depth_u = du;
			if (check_loads(k, dev, &e2) == TCX_OK)
				break;
			s->depth_u = 0;
		}
		if (s->depth_u <= 0)
			REJECT("no DepthU up to 1024 fits this work-group's loads");
	}
	if (s->depth_u % s->wg[2])
		REJECT("DepthU %d is not a multiple of LocalSplitU %d", s->depth_u, s->wg[2]);
	st = check_loads(k, dev, err);
	if (!st && (s->mi[0] || s->mi[1] || s->mi[2] || s->mi[3]))
		st = check_mi(k, dev, err);
	if (st)
		return st;
	pack_slots(k, false);
sizes:
	if (s->const_sizes) {
		if (!p)
			return tcx_fail(err, TCX_EINVAL,
					"ConstantSizes needs the problem's sizes at generation");
		k->const_sizes = true;
		memcpy(k->sizes, p->size, sizeof(k->sizes));
	}
	/* The loop without P's bounds checks for tiles that cross D1's end
	 * only where the problem has such tiles (Q's free extent not a
	 * multiple of MT1: B's 24-long index of the tensor-times-matrix
	 * cases), so that every other kernel stays as it was.  Any size runs
	 * correctly either way: the kernel picks its loop at run time. */
	if (k->split_loop && p && !k->mi)
		k->split_loop_p = plan_tile_extent(k, p, 1) % k->mt1 != 0;
	/* 32-bit offsets where the problem's tensors allow them (the
	 * warpgroup kernel keeps 64); plan_accepts holds other sizes off.
	 * TCX_OFF32=0 keeps 64, so that tests run both. */
	{
		const char *e = getenv("TCX_OFF32");

		k->off32 = p && !k->wgmma && !(e && strcmp(e, "0") == 0) && off32_fits(p);
	}
	return TCX_OK;
}

int64_t plan_slot_size(const struct kernel_plan *k, const struct problem *p, int slot)
{
	int id = k->slot[slot];

	return id < 0 ? 1 : p->size[id];
}

int64_t plan_tile_extent(const struct kernel_plan *k, const struct problem *p, int x)
{
	return plan_slot_size(k, p, x) *
	       (k->pack_slot[x] >= 0 ? plan_slot_size(k, p, k->pack_slot[x]) : 1);
}

enum tcx_status plan_accepts(const struct kernel_plan *k, const struct problem *p,
			     struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	int64_t s0 = plan_slot_size(k, p, 0), s1 = plan_slot_size(k, p, 1);
	const int64_t su = plan_slot_size(k, p, 2);

	if (p->c->nidx != k->c->nidx)
		REJECT("the kernel was made for another contraction");
	if (k->packed && p->explicit_strides) {
		struct problem packed;

		if (problem_init(&packed, p->c, p->size, NULL) != TCX_OK ||
		    memcmp(packed.stride, p->stride, sizeof(packed.stride)) != 0)
			REJECT("the kernel assumes packed strides");
	}
	/* PackFreeIndices: the kernels split a packed coordinate by a 32-bit
	 * division, and the SIMT kernel moves along a vector (a run of VW1
	 * rows) without one, so that D0's own extent must hold whole vectors */
	if (!k->wgmma && k->pack_slot[0] >= 0 && s0 % s->vw)
		REJECT("PackFreeIndices needs D0's extent %lld to be a multiple of VectorWidth %d",
		       (long long)s0, s->vw);
	if (!k->wgmma && k->pack_slot[1] >= 0 && s1 % k->vw1)
		REJECT("PackFreeIndices needs D1's extent %lld to be a multiple of %d, the "
		       "vector width along D1",
		       (long long)s1, k->vw1);
	s0 = plan_tile_extent(k, p, 0);
	s1 = plan_tile_extent(k, p, 1);
	if ((k->pack_slot[0] >= 0 && s0 > INT32_MAX) || (k->pack_slot[1] >= 0 && s1 > INT32_MAX))
		REJECT("PackFreeIndices needs packed extents below 2^31 (got %lld x %lld)",
		       (long long)s0, (long long)s1);
	if (s->edge == EDGE_NONE && (s0 % k->mt0 || s1 % k->mt1))
		REJECT("EdgeType None needs sizes that are multiples of the macro tile %dx%d "
		       "(got %lld x %lld)",
		       k->mt0, k->mt1, (long long)s0, (long long)s1);
	if (!s->loop_tail && su % s->depth_u)
		REJECT("without LoopTail the bound size %lld must be a multiple of DepthU %d",
		       (long long)su, s->depth_u);
	if (k->const_sizes && memcmp(k->sizes, p->size, sizeof(int64_t) * (size_t)p->c->nidx))
		REJECT("the kernel was compiled for other sizes (ConstantSizes)");
	if (k->off32 && !off32_fits(p))
		REJECT("the kernel was compiled with 32-bit offsets, for tensors below 2^30 "
		       "elements (got %lld, %lld and %lld)",
		       (long long)p->extent[T_A], (long long)p->extent[T_B],
		       (long long)p->extent[T_C]);
	return TCX_OK;
}

static const char *type_macro(enum tcx_dtype t)
{
	switch (t) {
	case TCX_DTYPE_S:
		return "TCX_TYPE_S";
	case TCX_DTYPE_D:
		return "TCX_TYPE_D";
	case TCX_DTYPE_C:
		return "TCX_TYPE_C";
	case TCX_DTYPE_Z:
		return "TCX_TYPE_Z";
	case TCX_DTYPE_H:
		return "TCX_TYPE_H";
	case TCX_DTYPE_B:
		return "TCX_TYPE_B";
	}
	return "TCX_TYPE_S";
}

static void kernel_dump(const char *src, size_t len)
{
	const char *dir = getenv("TCX_DUMP_KERNELS");
	struct strbuf path = STRBUF_INIT;
	FILE *fp;

	if (!dir || !*dir)
		return;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		tcx_log(TCX_LOG_WARN, "cannot create TCX_DUMP_KERNELS directory '%s'", dir);
		return;
	}
	strbuf_addf(&path, "%s/tcx-%016llx.cl", dir,
		    (unsigned long long)common_hash64(src, len, 0));
	fp = fopen(strbuf_str(&path), "w");
	if (fp) {
		fwrite(src, 1, len, fp);
		fclose(fp);
		tcx_log(TCX_LOG_DEBUG, "kernel source written to %s", strbuf_str(&path));
	} else {
		tcx_log(TCX_LOG_WARN, "cannot write '%s'", strbuf_str(&path));
	}
	strbuf_release(&path);
}

/* The warpgroup kernel's macros, and its instruction as one asm statement
 * (PTX names every accumulator register, so the generator writes it out):
 * TCX_WGMMA_ASM(d, da, db) is d += A B on the descriptors da, db. */
static void wgmma_prelude(const struct kernel_plan *k, struct strbuf *src)
{
	const struct solution *s = &k->sol;
	const int n = s->mi[1], nreg = n / 2;
	const char *ty = k->c->dtype == TCX_DTYPE_H ? "f16" : k->c->dtype == TCX_DTYPE_B ? "bf16"
											  : "tf32";

	strbuf_addf(src,
		    "#define MI_M 64\n#define MI_N %d\n#define MI_K %d\n#define MI_WGMMA 1\n"
		    "#define WG_WM %d\n#define WG_STAGES %d\n#define WG_TNSP_P %d\n"
		    "#define WG_TNSP_Q %d\n#define TF32X3 %d\n#define WG_MSTAGES %d\n",
		    n, s->mi[2], k->wg_wm, k->wg_stages, k->wg_mn_p, k->wg_mn_q, s->tf32x3,
		    k->wg_mstages);
	strbuf_addf(src, "#define TCX_WGMMA_ASM(d, da, db) asm volatile(\"wgmma.mma_async.sync."
			 "aligned.m64n%dk%d.f32.%s.%s {", n, s->mi[2], ty, ty);
	for (int r = 0; r < nreg; r++)
		strbuf_addf(src, "%s%%%d", r ? ", " : "", r);
	strbuf_addf(src, "}, %%%d, %%%d, 1, 1, 1", nreg, nreg + 1);
	if (k->c->dtype != TCX_DTYPE_S)
		strbuf_addf(src, ", %d, %d", k->wg_mn_p, k->wg_mn_q);
	strbuf_adds(src, ";\" :");
	for (int r = 0; r < nreg; r++)
		strbuf_addf(src, "%s \"+f\"((d)[%d])", r ? "," : "", r);
	strbuf_adds(src, " : \"l\"(da), \"l\"(db) : \"memory\")\n");
	if (k->c->dtype != TCX_DTYPE_S)
		return;
	/* tf32 takes A from registers: TCX_WGMMA_RS_ASM(d, a, db) is d += A B,
	 * TCX_WGMMA_RS0_ASM d = A B (scale-d 0) */
	for (int zero = 0; zero < 2; zero++) {
		strbuf_addf(src, "#define TCX_WGMMA_RS%s_ASM(d, a, db) asm volatile(\"wgmma."
				 "mma_async.sync.aligned.m64n%dk8.f32.tf32.tf32 {",
			    zero ? "0" : "", n);
		for (int r = 0; r < nreg; r++)
			strbuf_addf(src, "%s%%%d", r ? ", " : "", r);
		strbuf_addf(src, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, %d, 1, 1;\" :", nreg,
			    nreg + 1, nreg + 2, nreg + 3, nreg + 4, !zero);
		for (int r = 0; r < nreg; r++)
			strbuf_addf(src, "%s \"+f\"((d)[%d])", r ? "," : "", r);
		strbuf_adds(src, " : \"r\"((a)[0]), \"r\"((a)[1]), \"r\"((a)[2]), "
				 "\"r\"((a)[3]), \"l\"(db) : \"memory\")\n");
	}
}

enum tcx_status plan_prelude(const struct kernel_plan *k, struct strbuf *src, struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	char key[1024];

	/* The prelude depends on the contraction only through layout facts, so
	 * that contractions with the same facts share one compiled program. */
	solution_key(s, key, sizeof(key));
	strbuf_addf(src, "/* tcx %s kernel; solution %s */\n", tcx_version(), key);
	if (strcmp(k->lang, "cuda") == 0)
		strbuf_adds(src, "#define TCX_LANG_CUDA 1\n");
	strbuf_addf(src, "#define %s 1\n", type_macro(k->c->dtype));
	strbuf_addf(src, "#define WG0 %d\n#define WG1 %d\n#define LSU %d\n", s->wg[0], s->wg[1],
		    s->wg[2]);
	strbuf_addf(src, "#define TT0 %d\n#define TT1 %d\n#define DEPTHU %d\n#define VW %d\n",
		    s->tt[0], s->tt[1], s->depth_u, s->vw);
	strbuf_addf(src, "#define VW1 %d\n", k->vw1);
	strbuf_addf(src, "#define GSU %d\n#define PGR %d\n#define PLR %d\n#define EDGE %d\n",
		    s->gsu, s->pgr, s->plr, (int)s->edge);
	strbuf_addf(src, "#define WGM %d\n#define LOOP_TAIL %d\n#define USE_LDS %d\n", s->wgm,
		    s->loop_tail, s->use_lds);
	strbuf_addf(src, "#define LDS_PAD %d\n", s->lds_pad);
	if (s->occupancy)
		strbuf_addf(src, "#define WG_OCC %d\n", s->occupancy);
	if (k->split_loop)
		strbuf_addf(src, "#define SPLIT_LOOP 1\n");
	if (k->split_loop_p)
		strbuf_addf(src, "#define SPLIT_LOOP_P 1\n");
	strbuf_addf(src, "#define PACK0_SLOT %d\n#define PACK1_SLOT %d\n", k->pack_slot[0],
		    k->pack_slot[1]);
	if (k->wgmma)
		wgmma_prelude(k, src);
	else if (k->mi)
		strbuf_addf(src, "#define MI_M %d\n#define MI_N %d\n#define MI_K %d\n"
			    "#define MI_WARPS0 %d\n#define TF32X3 %d\n",
			    s->mi[0], s->mi[1], s->mi[2], k->mi_warps0, s->tf32x3);
	strbuf_addf(src, "#define NLC_P %d\n#define NLP_P %d\n#define NLC_Q %d\n#define NLP_Q %d\n",
		    k->nlc_p, k->nlp_p, k->nlc_q, k->nlp_q);
	strbuf_addf(src, "#define TLU_P %d\n#define TLU_Q %d\n", k->tlu_p, k->tlu_q);
	strbuf_addf(src,
		    "#define UNIT_P_D0 %d\n#define UNIT_P_DU %d\n#define UNIT_Q_D1 %d\n"
		    "#define UNIT_Q_DU %d\n#define UNIT_C_D0 %d\n",
		    k->unit_p_d0, k->unit_p_du, k->unit_q_d1, k->unit_q_du, k->unit_c_d0);
	if (s->test_skip_last_u)
		strbuf_adds(src, "#define TEST_SKIP_LAST_U 1\n");
	if (k->off32)
		strbuf_adds(src, "#define OFF32 1\n");
	if (k->const_sizes) {
		static const char *const names[3] = { "SIZE_D0", "SIZE_D1", "SIZE_DU" };

		for (int sl = 0; sl < 3; sl++)
			strbuf_addf(src, "#define %s %lldL\n", names[sl],
				    (long long)(k->slot[sl] < 0 ? 1 : k->sizes[k->slot[sl]]));
	}
	return strbuf_status(src, err);
}

const char *const *plan_templates(const char *lang)
{
	/* OpenCL C: the language's words, the kernels' ABI, then the template */
	static const char *const opencl[] = {"common/port.h", "common/abi.h", "opencl/contract.cl",
					     NULL};
	/* CUDA and HIP: the OpenCL built-ins in C++ after the words, and the
	 * warpgroup kernel, all of it under #if MI_WGMMA, after the template */
	static const char *const cuda[] = {"common/port.h", "cuda/compat.h", "common/abi.h",
					   "opencl/contract.cl", "cuda/wgmma.cuh", NULL};

	return strcmp(lang, "cuda") == 0 ? cuda : opencl;
}

const char *plan_options(const char *lang)
{
	return strcmp(lang, "opencl") == 0 ? "-cl-std=CL1.2" : "";
}

enum tcx_status kernel_assemble(const char *const *templates, const char *lang,
				struct strbuf *src, struct strbuf *opts, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;

	for (const char *const *t = templates; !st && *t; t++) {
		char *text = NULL;

		st = kernel_source(*t, &text, NULL, err);
		if (!st) {
			strbuf_adds(src, text);
			st = strbuf_status(src, err);
		}
		free(text);
	}
	if (!st && opts && *plan_options(lang)) {
		strbuf_adds(opts, plan_options(lang));
		st = strbuf_status(opts, err);
	}
	if (!st)
		kernel_dump(src->buf, src->len);
	return st;
}

enum tcx_status kernel_assemble_family(const char *file, const char *lang, struct strbuf *src,
				       struct strbuf *opts, struct tcx_error *err)
{
	const char *const opencl[] = { "common/port.h", "common/abi.h", file, NULL };
	const char *const cuda[] = { "common/port.h", "cuda/compat.h", "common/abi.h", file, NULL };

	return kernel_assemble(strcmp(lang, "cuda") == 0 ? cuda : opencl, lang, src, opts, err);
}

enum tcx_status plan_source(const struct kernel_plan *k, struct strbuf *src, struct strbuf *opts,
			    struct tcx_error *err)
{
	enum tcx_status st = plan_prelude(k, src, err);

	return st ? st : kernel_assemble(plan_templates(k->lang), k->lang, src, opts, err);
}

size_t plan_workspace_bytes(const struct kernel_plan *k, const struct problem *p)
{
	return abi_workspace_bytes(abi_type(k->c->dtype), k->sol.gsu, p->extent[T_C]);
}

/* The warpgroup kernel's last three parameters (common/abi.h): the maps
 * of P and Q, whose extra dimensions stand for slots, and what struct
 * tcx_tma says of them. */
_Static_assert(TCX_TMAP_BYTES == TCX_TENSOR_MAP_BYTES, "a tensor map as the backends make it");
struct wg_maps {
	unsigned char map[2][TCX_TMAP_BYTES];
	struct tcx_tma k;
};

/* The layout of a map of operand X (0: P, 1: Q) for its tile of R rows:
 * the unit-stride index first (the free one for an MN-major tile, else
 * DU), then the other, then up to three of the operand's other slots
 * (folded or outer bound; those it does not have are left out), within
 * what the copy engine takes of any map (16-byte aligned start, strides
 * in multiples of 16 bytes, boxes of at most 256).  False when the layout
 * cannot have one. */
static bool wgmma_map_layout(const struct kernel_plan *k, const struct tcx_args *args, int x,
			     int64_t *dim, int64_t *stride, int *box, int *rank, int64_t *slots)
{
	const int64_t *st = x ? args->sq : args->sp;
	const int es = dtype_info(k->c->dtype)->bytes, e = 128 / es;
	const bool mn = x ? k->tlu_q : k->tlu_p;
	const int free_slot = x ? 1 : 0, rows = x ? k->mt1 : k->mt0;
	int n = 2, order[2];

	order[0] = mn ? free_slot : 2;
	order[1] = mn ? 2 : free_slot;
	if (args->size[order[0]] > 1 && st[order[0]] != 1)
		return false;
	/* PackFreeIndices: a box must not cross the packed index (the outer part
	 * is one of the extra dimensions, its coordinate per box) */
	if (k->pack_slot[x] >= 0 && args->size[free_slot] % (mn ? e : rows))
		return false;
	if ((x ? args->off_q : args->off_p) * es % 16)
		return false;
	box[0] = e;
	box[1] = mn ? k->sol.depth_u : rows;
	for (int d = 0; d < 2; d++)
		dim[d] = args->size[order[d]];
	/* a size-1 dimension's stride is never used; keep it valid (a multiple
	 * of 16 bytes past the first dimension's) */
	stride[0] = args->size[order[1]] > 1 ? st[order[1]] * es : (dim[0] * es + 15) / 16 * 16;
	for (int d = 0; d < 3; d++)
		slots[d] = -1;
	for (int sl = 3; sl < k->nslots; sl++) {
		if (st[sl] == 0 || args->size[sl] == 1)
			continue;
		if (n == 5)
			return false;
		slots[n - 2] = sl;
		dim[n] = args->size[sl];
		stride[n - 1] = st[sl] * es;
		box[n++] = 1;
	}
	for (int d = 0; d < n; d++)
		if (dim[d] > ((int64_t)1 << 32) || box[d] > 256 ||
		    (d > 0 && (stride[d - 1] % 16 || stride[d - 1] >= ((int64_t)1 << 40))))
			return false;
	*rank = n;
	return true;
}

/* TCX_NO_TMA set (and not "0"): the producer copies by cp.async always */
static bool tma_off(void)
{
	const char *v = getenv("TCX_NO_TMA");

	return v && *v && strcmp(v, "0") != 0;
}

/* The map of operand X (wgmma_map_layout's) made for buffer `buf`.  False
 * when the layout or the device cannot have one. */
static bool wgmma_map(const struct kernel_plan *k, struct device *dev, struct buffer *buf,
		      const struct tcx_args *args, int x, unsigned char *out, int64_t *slots)
{
	const int es = dtype_info(k->c->dtype)->bytes;
	int64_t dim[5], stride[4];
	int box[5], n;

	if (!wgmma_map_layout(k, args, x, dim, stride, box, &n, slots))
		return false;
	return device_tensor_map(dev, buf, (size_t)((x ? args->off_q : args->off_p) * es), es, n,
				 dim, stride, box, out, NULL) == TCX_OK;
}

static void wgmma_maps(const struct kernel_plan *k, struct device *dev, struct buffer *bp,
		       struct buffer *bq, const struct tcx_args *args, struct wg_maps *m)
{
	memset(m, 0, sizeof(*m));
	m->k.use = !tma_off() && wgmma_map(k, dev, bp, args, 0, m->map[0], m->k.xp) &&
		   wgmma_map(k, dev, bq, args, 1, m->map[1], m->k.xq);
	if (!m->k.use) {
		memset(m->map, 0, sizeof(m->map));
		for (int d = 0; d < 3; d++)
			m->k.xp[d] = m->k.xq[d] = -1;
	}
}

/* What a kernel takes, against the least any device must take: OpenCL's
 * CL_DEVICE_MAX_PARAMETER_SIZE is at least 1024 bytes; CUDA's parameters
 * (the warpgroup kernel's three more) at most 4 KiB.  The four buffers,
 * the arguments, alpha and beta (complex double at most). */
#define KARGS_BYTES (4 * sizeof(uint64_t) + sizeof(struct tcx_args) + 2 * 2 * sizeof(double))
_Static_assert(KARGS_BYTES <= 1024, "the kernel's arguments exceed OpenCL's minimum 1024 bytes");
_Static_assert(KARGS_BYTES + sizeof(struct wg_maps) <= 4096,
	       "the warpgroup kernel's arguments exceed CUDA's 4 KiB");

enum tcx_status plan_grid(const int64_t n[3], const size_t local[3], const struct device_info *dev,
			  size_t global[3], struct tcx_error *err)
{
	const char *env = getenv("TCX_MAX_GROUPS");
	int64_t cap[3] = {0, 0, 0};
	long long e[3];

	for (int d = 0; dev && d < 3; d++)
		cap[d] = dev->max_groups[d];
	if (env && sscanf(env, "%lld,%lld,%lld", &e[0], &e[1], &e[2]) == 3)
		for (int d = 0; d < 3; d++)
			if (e[d] > 0 && (cap[d] <= 0 || e[d] < cap[d]))
				cap[d] = e[d];
	switch (abi_grid(n, local, cap, global)) {
	case ABI_FITS:
		return TCX_OK;
	case ABI_TOO_MANY:
		LIMIT("a launch of %lld x %lld x %lld work-groups: too many", (long long)n[0],
		      (long long)n[1], (long long)n[2]);
	default:
		LIMIT("a launch of %lld work-groups exceeds the %lld x %lld x %lld a grid holds on "
		      "'%s'",
		      (long long)(n[0] * n[1] * n[2]), (long long)cap[0], (long long)cap[1],
		      (long long)cap[2], dev ? dev->id : "the device");
	}
}

void plan_abi(const struct kernel_plan *k, struct abi_plan *out)
{
	const struct solution *s = &k->sol;

	memset(out, 0, sizeof(*out));
	out->nslots = k->nslots;
	out->slot = k->slot;
	out->nf2 = k->nf2;
	out->nb = k->nb;
	out->conj_p = k->c->conj[k->p_is_a ? T_A : T_B];
	out->conj_q = k->c->conj[k->p_is_a ? T_B : T_A];
	for (int d = 0; d < 3; d++)
		out->wg[d] = s->wg[d];
	/* the consumer warpgroups and the producer, in one dimension */
	out->threads = k->wgmma ? k->nt + 128 : 0;
	out->mt0 = k->mt0;
	out->mt1 = k->mt1;
	out->gsu = s->gsu;
	out->pack[0] = k->pack_slot[0];
	out->pack[1] = k->pack_slot[1];
}

/* The launch of plan k on problem p (abi_launch_make's) */
static void launch_make(const struct kernel_plan *k, const struct problem *p,
			const double alpha[2], const double beta[2], struct abi_launch *L)
{
	enum tensor_role P = k->p_is_a ? T_A : T_B, Q = k->p_is_a ? T_B : T_A;
	struct abi_plan ap;
	const struct abi_sizes as = {
	    .size = p->size,
	    .stride_p = p->stride[P],
	    .stride_q = p->stride[Q],
	    .stride_c = p->stride[T_C],
	    .extent_c = p->extent[T_C],
	};

	plan_abi(k, &ap);
	abi_launch_make(&ap, &as, abi_type(k->c->dtype), alpha, beta, L);
}

/* Whether the producer's cp.async copies operand X (0: P, 1: Q) in
 * 16-byte vectors: what the kernel asks of it (kernels/cuda/wgmma.cuh's
 * vec_p and vec_q): unit stride along the tile's fast direction, the other
 * strides and the start in whole vectors, and a packed index's extent too */
static bool wgmma_vectors(const struct kernel_plan *k, const struct tcx_args *args, int x)
{
	const int64_t *st = x ? args->sq : args->sp;
	const int v = 16 / dtype_info(k->c->dtype)->bytes, fs = x, pk = k->pack_slot[x];
	const bool mn = x ? k->tlu_q : k->tlu_p;

	if ((mn ? st[fs] : st[2]) != 1 || (mn ? st[2] : st[fs]) % v ||
	    (x ? args->off_q : args->off_p) % v)
		return false;
	if (pk >= 0 && (args->size[fs] % v || st[pk] % v))
		return false;
	for (int b = 0; b < k->nb; b++)
		if (st[3 + k->nf2 + b] % v)
			return false;
	return true;
}

enum plan_copy plan_wgmma_copy(const struct kernel_plan *k, const struct problem *p)
{
	static const double zero[2] = { 0, 0 };
	struct abi_launch L;
	int64_t dim[5], stride[4], slots[3];
	int box[5], n;

	if (!k->wgmma)
		return PLAN_COPY_NONE;
	launch_make(k, p, zero, zero, &L);
	if (!tma_off() && wgmma_map_layout(k, &L.args, 0, dim, stride, box, &n, slots) &&
	    wgmma_map_layout(k, &L.args, 1, dim, stride, box, &n, slots))
		return PLAN_COPY_TMA;
	return wgmma_vectors(k, &L.args, 0) && wgmma_vectors(k, &L.args, 1) ? PLAN_COPY_VECTORS
									   : PLAN_COPY_ELEMENTS;
}

enum tcx_status plan_launch(const struct kernel_plan *k, struct device *dev, struct program *prog,
			    const struct problem *p, struct buffer *a, struct buffer *b,
			    struct buffer *c, struct buffer *ws, const double alpha[2],
			    const double beta[2], double *event_ms, struct tcx_error *err)
{
	const struct solution *s = &k->sol;
	struct abi_launch L;
	struct wg_maps tma;
	struct launch l;
	enum tcx_status st;
	double ms = 0, ms2 = 0;

	if (s->gsu > 1 && !ws)
		return tcx_fail(err, TCX_EINVAL, "GlobalSplitU needs a workspace buffer");
	launch_make(k, p, alpha, beta, &L);
	launch_init(&l, TCX_CONTRACT_NAME);
	memcpy(l.local, L.local, sizeof(l.local));
	st = plan_grid(L.args.groups, l.local, device_info_of(dev), l.global, err);
	if (st)
		return st;
	/* the parameters in common/abi.h's order */
	launch_arg_buffer(&l, c);
	launch_arg_buffer(&l, k->p_is_a ? a : b);
	launch_arg_buffer(&l, k->p_is_a ? b : a);
	launch_arg_buffer(&l, ws ? ws : c);
	launch_arg_bytes(&l, &L.args, sizeof(L.args));
	launch_arg_bytes(&l, &L.alpha, L.scalar_bytes);
	launch_arg_bytes(&l, &L.beta, L.scalar_bytes);
	if (k->wgmma) {
		wgmma_maps(k, dev, k->p_is_a ? a : b, k->p_is_a ? b : a, &L.args, &tma);
		launch_arg_bytes(&l, tma.map[0], sizeof(tma.map[0]));
		launch_arg_bytes(&l, tma.map[1], sizeof(tma.map[1]));
		launch_arg_bytes(&l, &tma.k, sizeof(tma.k));
	}
	/* CUDA and HIP carve the tiles out of dynamic shared memory (port.h's
	 * LOCAL_ARRAY): its size travels with the launch, not as an argument */
	if (strcmp(k->lang, "cuda") == 0 && k->lds_bytes > 0)
		launch_arg_local(&l, (size_t)k->lds_bytes);
	st = device_launch(dev, prog, &l, event_ms ? &ms : NULL, err);
	if (st || s->gsu <= 1) {
		if (event_ms)
			*event_ms = ms;
		return st;
	}
	launch_init(&l, TCX_REDUCE_NAME);
	memcpy(l.local, L.rlocal, sizeof(l.local));
	st = plan_grid(L.rgroups, l.local, device_info_of(dev), l.global, err);
	if (st)
		return st;
	launch_arg_buffer(&l, c);
	launch_arg_buffer(&l, ws);
	launch_arg_bytes(&l, &L.args, sizeof(L.args));
	launch_arg_bytes(&l, &L.alpha, L.scalar_bytes);
	launch_arg_bytes(&l, &L.beta, L.scalar_bytes);
	launch_arg_bytes(&l, &L.total, sizeof(L.total));
	st = device_launch(dev, prog, &l, event_ms ? &ms2 : NULL, err);
	if (event_ms)
		*event_ms = ms + ms2;
	return st;
}

void solution_heuristic(const struct tcx_contraction *c, const struct device_info *dev,
			struct solution *s)
{
	bool cplx = dtype_info(c->dtype)->complex;

	solution_default(s);
	if (dev && (dev->type == DEV_CPU || dev->type == DEV_HOST)) {
		/* CPUs: no local memory (it is plain RAM there), wide explicit
		 * vectors along D0 and a register block per work-item */
		s->use_lds = false;
		s->wg[0] = s->wg[1] = s->wg[2] = 1;
		s->pgr = s->plr = false;
		s->depth_u = 16;
		if (cplx) {
			s->tt[0] = s->tt[1] = 4;
			s->vw = 1;
		} else {
			/* 32x8 outputs in 16-wide vectors: measured best on
			 * AVX-512 PoCL for SGEMM (bench/NOTES.md) */
			s->vw = c->dtype == TCX_DTYPE_D ? 8 : 16;
			s->tt[0] = 2 * s->vw;
			s->tt[1] = 8;
		}
		return;
	}
	s->wg[0] = s->wg[1] = 16;
	s->tt[0] = s->tt[1] = cplx || c->dtype == TCX_DTYPE_D ? 4 : 8;
	s->depth_u = 16;
	s->vw = cplx ? 1 : c->dtype == TCX_DTYPE_D ? 2 : 4;
}

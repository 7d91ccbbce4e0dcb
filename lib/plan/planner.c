/* planner.c - the planner (planner.h): candidate solutions per kernel
 * family, the device model, and the choice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "notation/notation.h"
#include "gen/permute.h"
#include "plan/fit.h"
#include "plan/planner.h"

/* ---- the device model ---------------------------------------------------- */

/* Rates measured on the GPUs tcx knows (bench/results/: the committed
 * reports), as sustained by the kernel families on large tiles; other
 * devices get rates from their description. */
struct known_gpu {
	const char *name;      /* a substring of the device's name */
	double bw;             /* HBM copy, bytes/s */
	double simt_s;         /* fp32 SIMT GEMM, FLOP/s */
	double wgmma_s;        /* fp32 TF32x3 warpgroup GEMM */
	double wgmma_h;        /* fp16/bf16 warpgroup GEMM */
};

static const struct known_gpu known_gpus[] = {
	{ "H200", 4.2e12, 48e12, 110e12, 640e12 },
	{ "H100", 3.0e12, 45e12, 107e12, 610e12 },
};

/* Whether a CPU device's compiler targets AVX-512: PoCL names its devices
 * after LLVM's CPU ("pthread-skylake-avx512-AMD EPYC"), and reports 16-wide
 * floats preferred whatever the CPU, so the name is what tells. */
static bool cpu_avx512(const char *name)
{
	static const char *const cpus[] = { "avx512", "cascadelake", "cooperlake", "icelake",
					     "tigerlake", "sapphirerapids", "graniterapids",
					     "emeraldrapids", "znver4", "znver5", "x86-64-v4" };

	for (size_t k = 0; k < ARRAY_SIZE(cpus); k++)
		if (strstr(name, cpus[k]))
			return true;
	return false;
}

/* Whether m models a GPU (or another accelerator): else a CPU. */
static bool model_gpu(const struct plan_device *m)
{
	return m->type == DEV_GPU || m->type == DEV_ACCEL;
}

void plan_device_defaults(const struct device_info *dev, enum tcx_dtype t,
			  struct plan_device *m)
{
	const bool cplx = dtype_info(t)->complex;
	const bool wide = t == TCX_DTYPE_D || t == TCX_DTYPE_Z;
	const bool half = t == TCX_DTYPE_H || t == TCX_DTYPE_B;
	const double clock = (dev->clock_mhz > 0 ? dev->clock_mhz : 1000) * 1e6;

	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", dev->name);
	m->type = dev->type;
	m->units = dev->compute_units > 0 ? dev->compute_units : 1;
	m->cache = dev->cache_bytes > 0 ? (double)dev->cache_bytes : 4e6;
	if (dev->type == DEV_GPU || dev->type == DEV_ACCEL) {
		const bool cuda = strcmp(dev->lang, "cuda") == 0;

		/* 128 fp32 lanes a unit on NVIDIA, 64 elsewhere, at 70% */
		m->simt_flops = m->units * (cuda ? 128 : 64) * 2.0 * clock * 0.7;
		if (wide)
			m->simt_flops /= dev->cc_major >= 7 ? 2 : 16;
		m->bw = 0.8e12;
		m->mem_eff = 0.75;
		m->uncoalesced = 8;
		m->reread = 0.1;
		m->launch_s = 5e-6;
		/* from the H200 probes: a SIMT work-group of a few bound chunks
		 * took 15-18 us; a wave of warpgroup tiles of 128 x 128 and
		 * three chunks of 32 took 9 us, products included (AO2MO aqrs,
		 * bench/results/2026-11-26-h200-ao2mo-intensli-sweep.md; the
		 * 8 + 1.5 a chunk set before put it at 12.5 and chose 128 x 256
		 * tiles that ran at 0.42 of it) */
		m->group_s = 6e-6;
		m->simt_iter_s = 3e-6;
		m->simt_iters = 4;
		m->wg_group_s = 4e-6;
		m->wg_iter_s = 1.3e-6;
		m->launch_bounds = cuda;
		m->regs = cuda ? dev->max_regs_per_wg : 0;
		/* fp64's tensor cores do twice the fp64 FMA units' work on
		 * sm_80 and sm_90 (A100: 19.5 against 9.7 TFLOP/s at peak; H100
		 * and H200: 67 against 34); elsewhere they are no faster, or tcx
		 * has no figures */
		m->mma = cuda && dev->cc_major >= 8 &&
			 (half || t == TCX_DTYPE_S ||
			  (wide && (dev->cc_major == 8 || dev->cc_major == 9) &&
			   dev->cc_minor == 0));
		m->wgmma = cuda && dev->cc_major == 9 && (half || t == TCX_DTYPE_S);
		/* on an H200 the m16n8k8 shape ran fp64 GEMMs 1.4-1.6x as fast as
		 * m8n8k4, complex fp64 1.4x (bench/results/2026-11-27-h200-fp64-mma.md) */
		m->mma_f64_16 = m->mma && wide && dev->cc_major == 9;
		if (m->mma)
			m->mma_flops = half ? m->simt_flops * 3 : wide ? m->simt_flops * 2
								   : m->simt_flops * 1.5;
		for (size_t k = 0; k < ARRAY_SIZE(known_gpus); k++)
			if (strstr(dev->name, known_gpus[k].name)) {
				m->bw = known_gpus[k].bw;
				if (!wide && !cplx)
					m->simt_flops = known_gpus[k].simt_s;
				if (m->wgmma)
					m->wgmma_flops = half ? known_gpus[k].wgmma_h
							      : known_gpus[k].wgmma_s;
				break;
			}
		if (m->wgmma && m->wgmma_flops == 0)
			m->wgmma_flops = half ? m->simt_flops * 12 : m->simt_flops * 2;
	} else {
		/* CPUs (PoCL): explicit vectors of the preferred width, two FMA
		 * units a core, at about a quarter of that in generated code */
		int vw = dev->pref_vector_float > 0 ? dev->pref_vector_float : 8;

		m->simt_flops = m->units * vw * 2.0 * 2.0 * clock * 0.25;
		if (wide)
			m->simt_flops /= 2;
		m->bw = 10e9 * (m->units < 8 ? m->units : 8) / 2;
		m->mem_eff = 0.5;
		m->uncoalesced = 4;
		m->reread = 0.05;
		m->launch_s = 60e-6;
	}
	/* measured on an H200 (bench/results/2026-11-26-h200-planner.md): the
	 * warpgroup kernel runs fp32 best in 128 x 128 tiles (128 x 256 or a
	 * 64-wide tile ran at 0.4-0.65 of it), fp16 and bf16 in 128 x 256;
	 * PackFreeIndices costs it about 45% where the tile would be full
	 * without it; an operand with no unit stride along either of its
	 * tile's directions leaves the producer copying element by element
	 * (a tenth of the rate or less).  The SIMT kernel wants enough outputs
	 * per work-item to feed its loads. */
	m->eff_wg_wide = half ? 1.0 : 0.45;
	m->eff_wg_square = half ? 0.85 : 1.0;
	m->eff_wg_one = 0.6;
	m->eff_wg_small = 0.4;
	/* a 128 x 96 tile, fp32, against 128 x 128 per useful product: on an
	 * H200 CCSD's ijk-ilmk-mjl (D1 = 84) ran packed at 69.4 TFLOP/s in
	 * 128 x 96 (88% useful) and 58.8 in 128 x 128 (66%)
	 * (bench/results/2026-11-27-h200-tccg-gsu-waves.md) */
	m->eff_wg_near = 0.9;
	/* PackFreeIndices: fp32 measured there packed at 58.8 against 42.3
	 * unpacked (49% useful), about the same rate per useful product; the
	 * factor was 0.55 before the packed offsets lost their divisions, and
	 * stays so for the types not measured since */
	m->eff_pack = half ? 0.55 : 0.9;
	m->eff_gather = 0.15;
	/* ... and cp.async where the copy engine has no map (a stride not a
	 * multiple of 16 bytes, a packed index whose extent splits a box).
	 * On an H200: in 16-byte vectors, CCSD's ijk-il-jlk at 240 x 240 x
	 * 236 x 236 (j = 240 splits the 32-element boxes of its packed jk)
	 * ran packed 128 x 128 tiles at 30.4 TFLOP/s against 49.1 unpacked
	 * with maps, 0.58 per useful product (where the packed index is a
	 * multiple of 32 long, ilmk-mjl at TCCG's size, packing ran at 0.94);
	 * the factor 0.45 planned the selection cases it moves faster than
	 * 0.6 and 0.75 did.  Element by element (strides of an odd number of
	 * elements), a GEMM of 3637 x 2803 x 3323 ran 128 x 128 tiles at 19.5
	 * TFLOP/s where the model put them at 103 with maps and the SIMT
	 * kernel ran 31.3 (bench/results/2026-11-28-h200-tma-pack.md).  TF32x3
	 * measured; the 16-bit types take the same factors unmeasured */
	m->eff_wg_copy = 0.45;
	m->eff_wg_copy1 = 0.2;
	m->eff_mma = 0.8;
	m->eff_simt_mid = 0.6;
	m->eff_simt_small = 0.35;
	/* SIMT PackFreeIndices: on an H200 AO2MO's abrs-qb-aqrs, its 260 MB
	 * B packed, ran 15.8 TFLOP/s against 18.7 unpacked, where the model
	 * put the packed tile's fuller work (66% against 49%) ahead; packing
	 * only cached operands (CCSD(T)'s, 1 MB) ran 1.5-2.6x faster
	 * (bench/results/2026-11-26-h200-tccg-pack.md) */
	m->eff_pack_simt = 0.6;
	/* ... and packing an operand whose tile loads cross its fastest index
	 * (neither D0/D1 nor the sum moves by one element in it): every load a
	 * sector of its own from the cache.  On an H200 CCSD(T)'s kernel (A
	 * read along a, 11520 apart) ran 0.210 ms, and 0.184 with A's layout
	 * putting a first (0.234 and 0.204 for a second case): the whole
	 * kernel at 0.87 */
	m->eff_simt_gather = 0.87;
	/* ... and a 128-work-item 8 x 8 tile whose tiles overhang C: on an
	 * H200 the 128 x 64 tile ran CCSD(T)'s kernels 7-12% faster than
	 * 128 x 128 where all tiles were full, 0.84-1.04 where not
	 * (bench/results/2026-11-27-h200-ccsdt-occ4.md) */
	m->eff_simt_ragged = 0.85;
	/* ... and the store rate of add_simt_96's tile where its C tile is
	 * not a few whole blocks (plan_predict): on an H200 two CCSD(T) GEMMs
	 * ran in it at 0.89 and 0.91 of 128 x 128 tiles, where one whose
	 * tiles were blocks of C ran at 1.22
	 * (bench/results/2026-11-27-h200-ccsdt-96.md) */
	m->eff_simt96_c = 0.9;
	/* the tensor-times-matrix kernel: on an H200 it ran TCCG's eight
	 * tensor-times-matrix cases at 1.7-1.8 times the model's time with
	 * these at 0.7 and 1 where its products bound it (sums of 384), 1.4
	 * where its traffic did; fitted so that it predicts 0.85 of what it
	 * measures, as the contraction kernels' model does on those cases
	 * (bench/results/2026-11-27-h200-ttm.md) */
	m->eff_ttm = 0.48;
	m->eff_ttm_mem = 0.86;
	/* the tensor-times-vector kernel: on an H100 it ran the fourteen
	 * matrix-vector cases of the selection report at a median 0.52 of
	 * the time 0.8 predicted (0.2-0.36 where the sum is short or in three
	 * slots, 0.7-0.94 on three others), the contraction kernels' model
	 * predicting those cases' choices within 0.8-1.1; at 0.42 it takes the
	 * eight it ran 0.98-3.2 times as fast and leaves those it lost (a
	 * rate read off those same cases; bench/results/2026-12-06-h100-ttv.md) */
	m->eff_ttv_mem = 0.42;
	/* the permute's transpose through local memory: 2.3-2.6 TB/s for
	 * 32 x 32 tiles of an H200's 4.2 (0.6 of bw, permute_seconds scales
	 * it by how its tiles fill); on PoCL, where a work-group's barriers
	 * split its loops, 2.0-3.5 GB/s with 10 counted: 13.7 ms for a
	 * 384 x 384 x 24 transpose that 0.6 put at 4.8 */
	m->eff_perm_tile = model_gpu(m) ? 0.6 : 0.25;
	/* CPUs: over the 2,273 candidates an exhaustive tune measured for
	 * 58 contractions on PoCL (AMD EPYC, 16-wide floats preferred;
	 * bench/results/2026-11-27-pocl-selection.md), the median time over
	 * each problem's best was 1.37 for work-items of 16 x 8 in vectors
	 * of 8, 1.78-1.87 for 16 x 16 and 16 x 8 in vectors of 16, 1.58 and
	 * 1.94 for 32 x 8 and 8 x 8 in vectors of 8, 1.60 for 16 x 4, 2.97
	 * for 16 x 2; narrower vectors of 4 ran as well as 8.  The kernels'
	 * operands (2-4 MiB there) sat in the 32 MiB cache, so traffic that
	 * fits moves at a multiple of bw and the products decide. */
	m->eff_cpu_wide = 0.75;
	m->eff_cpu_line = 0.8;
	m->eff_cpu_cols = 0.86;
	m->cpu_cache_bw = 4;
	/* Each work-group costs a core a little beyond its products (its
	 * dispatch, its loops' setup), the permute's too; and where the
	 * compiler targets AVX-512 a row of two 64-byte lines runs as well as
	 * one.  Over the 108 contractions of the selection set on PoCL
	 * (AVX-512 EPYC, two cores) the planner's paired ratio to the
	 * exhaustive optimum went from a mean 0.892 (P10 0.667) to 0.938
	 * (0.701) with both, 0.897 with the lines alone, 0.928-0.945 with
	 * 0.25-0.5 us a work-group and no lines, which overstates the cost of
	 * the many work-groups of a large C (4096^2 x 16: 16 ms predicted for
	 * them, 7 ms measured in all): larger tiles where a sum is short
	 * (bench/results/2026-12-08-pocl-selection.md) */
	m->cpu_group_s = 0.15e-6;
	m->cpu_line_bytes = cpu_avx512(dev->name) ? 128 : 64;
	/* GlobalSplitU: its partial sums' traffic as counted, and the
	 * reduction's launch; on an H200 a split of 2 ran a median 1.56 times
	 * as long as the same tile unsplit (bench/results/
	 * 2026-11-26-h200-selection.md), which the fit makes of these */
	m->gsu_bytes = 1;
	m->gsu_launch_s = m->launch_s;
	/* plain tf32 does one product for TF32x3's three: on an H200 the
	 * warpgroup kernel ran a tf32 GEMM of 8192^3 at 184 TFLOP/s against
	 * TF32x3's 110 (issue 22's table; its memory and latency bounds keep
	 * it from 3x) */
	m->tf32_speedup = 184.0 / 110.0;
}

enum tcx_status plan_device_model(const struct device_info *dev, enum tcx_dtype t,
				  struct plan_device *m, struct tcx_error *err)
{
	plan_device_defaults(dev, t, m);
	return plan_model_find(dev, t, m, err);
}

bool plan_known_device(const char *name, struct device_info *d)
{
	/* as the CUDA driver reports them (tcx devices --format json): an
	 * H100's 85017493504 bytes and 50 MiB of L2, an H200's 150109880320
	 * and 60 MiB */
	static const struct {
		const char *key, *name;
		int64_t mem, cache;
	} gpus[] = {
		{ "h100", "NVIDIA H100 80GB HBM3", 85017493504, (int64_t)50 << 20 },
		{ "h200", "NVIDIA H200", 150109880320, (int64_t)60 << 20 },
	};

	for (size_t k = 0; k < ARRAY_SIZE(gpus); k++) {
		if (strcasecmp(name, gpus[k].key) != 0)
			continue;
		memset(d, 0, sizeof(*d));
		snprintf(d->id, sizeof(d->id), "%s (described, not opened)", gpus[k].key);
		snprintf(d->backend, sizeof(d->backend), "cuda");
		snprintf(d->name, sizeof(d->name), "%s", gpus[k].name);
		snprintf(d->vendor, sizeof(d->vendor), "NVIDIA");
		snprintf(d->arch, sizeof(d->arch), "sm_90");
		snprintf(d->lang, sizeof(d->lang), "cuda");
		d->type = DEV_GPU;
		d->compute_units = 132;
		d->global_mem = gpus[k].mem;
		d->max_alloc = gpus[k].mem;
		d->local_mem = 227 * 1024;
		d->local_mem_per_cu = 228 * 1024;
		d->cache_bytes = gpus[k].cache;
		d->max_wg_size = 1024;
		d->max_wg_dim[0] = d->max_wg_dim[1] = 1024;
		d->max_wg_dim[2] = 64;
		d->max_regs_per_wg = 65536;
		d->clock_mhz = 1980;
		d->simd_width = 32;
		d->pref_vector_float = 1;
		d->fp64 = d->fp16 = true;
		d->timer_events = true;
		d->cc_major = 9;
		d->cc_minor = 0;
		return true;
	}
	return false;
}

static int64_t slot_stride(const struct kernel_plan *k, const struct problem *p,
			   enum tensor_role t, int sl)
{
	int id = k->slot[sl];

	return id < 0 ? 1 : p->stride[t][id];
}

static double ceil_div(double a, double b)
{
	return ceil(a / b);
}

/* The launch bound a chosen SIMT tile needs to reach the occupancy the
 * model takes for it: a work-item of 8 x 8 (64 accumulators, 256 a
 * work-group) gets more than 128 registers from the CUDA compiler when
 * nothing caps them, which leaves one work-group an SM; Occupancy 2 caps
 * them at 128 (H200, fp32 C[ij]=A[ik]*B[kj]: 11520 x 8000 x 24 0.241 to
 * 0.193 ms, 4096^3 35.6 to 39.0 TFLOP/s, 9216^2 x 64 26.7 to 32.0;
 * Occupancy 3 spills and runs at a fifth).  With DepthU 16 the cap did
 * not pay (4096^3 34.2 capped; TCCG's ao2mo-abcs 16.7 to 15.5 TFLOP/s), so
 * only DepthU 8 gets it; work-groups of 128 get Occupancy 4, the same 128
 * registers.  0 where none is needed.  The model's SIMT rates were fitted
 * on uncapped kernels, so occupancy() passes over this bound and the
 * prediction stays as it is (the same for the planner, which adds the
 * bound to its choice, and for tcx tune's space, which ranks the bounded
 * solution). */
static int simt_launch_bound(const struct plan_device *m, const struct solution *s)
{
	const int nt = s->wg[0] * s->wg[1] * s->wg[2];

	if (!m->launch_bounds || s->mi[0] != 0 || s->tt[0] * s->tt[1] != 64)
		return 0;
	if ((nt == 256 || nt == 128) && s->depth_u <= 8)
		return 512 / nt;
	if (nt == 96 && s->depth_u == 12)
		return 5; /* 136 registers, of which ptxas takes 128 */
	return 0;
}

/* Work-groups one compute unit holds at once. */
static int occupancy(const struct kernel_plan *k, const struct plan_device *m)
{
	int occ;

	if (!model_gpu(m))
		return 1;
	if (k->wgmma)
		return k->sol.occupancy > 0 ? k->sol.occupancy : 1;
	occ = 2048 / (k->nt > 0 ? k->nt : 1);
	if (k->lds_bytes > 0) {
		int by_lds = (int)(228 * 1024 / k->lds_bytes);

		occ = by_lds < occ ? by_lds : occ;
	}
	if (k->mi && m->regs > 0) {
		/* mma.sync tiles keep their accumulators in registers (two a
		 * fp64 element), about 40 more a lane for fragments and
		 * offsets: an H200's 128 x 128 fp64 tile of eight warps holds
		 * one work-group an SM, not the three shared memory allows */
		const int es = dtype_info(k->c->dtype)->bytes;
		const double regs = (double)k->mt0 * k->mt1 / k->nt * es / 4 + 40;
		const int by_regs = (int)(m->regs / (k->nt * regs));

		occ = by_regs < occ ? by_regs : occ;
	}
	if (k->sol.occupancy > 0 && k->sol.occupancy < occ &&
	    k->sol.occupancy != simt_launch_bound(m, &k->sol))
		occ = k->sol.occupancy;
	return occ < 1 ? 1 : occ > 32 ? 32 : occ;
}

/* The share of its family's rate a solution sustains (the eff_ fields of
 * struct plan_device). */
static double family_eff(const struct plan_device *m, const struct kernel_plan *k, bool p_unit,
			 bool q_unit, enum plan_copy copy)
{
	const struct solution *s = &k->sol;
	double e, tt = (double)s->tt[0] * s->tt[1];

	if (k->wgmma) {
		if (k->mt0 >= 128 && k->mt1 >= 256)
			e = m->eff_wg_wide;
		else if (k->mt0 >= 128 && k->mt1 >= 128)
			e = m->eff_wg_square;
		else if (k->mt0 >= 128 && k->mt1 >= 96)
			e = m->eff_wg_square * m->eff_wg_near;
		else if (k->mt0 >= 128 || k->mt1 >= 128)
			e = m->eff_wg_one;
		else
			e = m->eff_wg_small;
		if (s->pack_free)
			e *= m->eff_pack;
		if (!p_unit || !q_unit)
			e *= m->eff_gather;
		else if (copy != PLAN_COPY_TMA)
			e *= copy == PLAN_COPY_VECTORS ? m->eff_wg_copy : m->eff_wg_copy1;
		return e;
	}
	if (k->mi)
		return m->eff_mma;
	if (!model_gpu(m)) {
		const int es = dtype_info(k->c->dtype)->bytes;

		e = s->vw * es > 32 ? m->eff_cpu_wide : 1.0;
		if (s->tt[0] * es != 64 && s->tt[0] * es != m->cpu_line_bytes)
			e *= m->eff_cpu_line;
		if (s->tt[1] < 8)
			e *= s->tt[1] < 4 ? m->eff_cpu_cols * m->eff_cpu_cols : m->eff_cpu_cols;
		return e;
	}
	return tt >= 32 ? 1.0 : tt >= 16 ? m->eff_simt_mid : m->eff_simt_small;
}

void plan_predict(const struct plan_device *m, const struct problem *kp,
		  const struct kernel_plan *k, struct plan_choice *out)
{
	const struct solution *s = &k->sol;
	const enum tensor_role P = k->p_is_a ? T_A : T_B, Q = k->p_is_a ? T_B : T_A;
	const int es = dtype_info(kp->c->dtype)->bytes;
	const double cplx = dtype_info(kp->c->dtype)->complex ? 4 : 1;
	const bool gpu = model_gpu(m);
	const bool simt = !k->wgmma && !k->mi; /* the SIMT kernel (or CPUs' direct one) */
	/* add_simt_96's tile: 96 work-items of 8 x 8 on a GPU */
	const bool simt96 = gpu && simt && k->nt == 96 && s->tt[0] * s->tt[1] == 64;
	const double s0 = (double)plan_tile_extent(k, kp, 0);
	const double s1 = (double)plan_tile_extent(k, kp, 1);
	double su = (double)plan_slot_size(k, kp, 2), fold = 1, outer = 1;
	double tiles, waves, kpad, iters, tile_flops, rate, occ, slots, pen_p, pen_q, pen_c;
	double bytes_p, bytes_q, bytes_c, useful, big;
	double held; /* A's, B's and C's bytes, each once */
	bool p_unit, q_unit;

	for (int sl = 3; sl < 3 + k->nf2; sl++)
		if (sl != k->pack_slot[0] && sl != k->pack_slot[1])
			fold *= (double)plan_slot_size(k, kp, sl);
	for (int sl = 3 + k->nf2; sl < k->nslots; sl++)
		outer *= (double)plan_slot_size(k, kp, sl);

	/* loads coalesce when the operand moves by one element along one of
	 * its tile's two directions (or has a single element along both) */
	p_unit = slot_stride(k, kp, P, 0) == 1 || slot_stride(k, kp, P, 2) == 1 ||
		 plan_slot_size(k, kp, 0) * plan_slot_size(k, kp, 2) == 1;
	q_unit = slot_stride(k, kp, Q, 1) == 1 || slot_stride(k, kp, Q, 2) == 1 ||
		 plan_slot_size(k, kp, 1) * plan_slot_size(k, kp, 2) == 1;

	/* the tiles, their padded work, and how they fill the device */
	tiles = ceil_div(s0, k->mt0) * ceil_div(s1, k->mt1) * fold * s->gsu;
	iters = ceil_div(su, s->depth_u) * outer / s->gsu;
	/* the kernel without local memory (CPUs' direct one) runs the last
	 * chunk for the elements left, not a whole DepthU of padding (PoCL:
	 * DepthU 32 over sums of 8 and 13 ran 2.7 and 2.5 times as fast as
	 * the model charged it) */
	kpad = s->use_lds ? iters * s->depth_u : su * outer / s->gsu;
	tile_flops = 2.0 * cplx * k->mt0 * k->mt1 * kpad;
	rate = k->wgmma ? m->wgmma_flops : k->mi ? m->mma_flops : m->simt_flops;
	if (rate <= 0)
		rate = m->simt_flops;
	if (k->wgmma && kp->c->dtype == TCX_DTYPE_S && !s->tf32x3)
		rate *= m->tf32_speedup;
	rate *= family_eff(m, k, p_unit, q_unit, plan_wgmma_copy(k, kp));
	/* 8 x 8 tiles of 128 work-items, four work-groups an SM: where every
	 * tile is full they overlap one another's loads and stores better than
	 * 256 work-items two an SM (which the model does not see, so the
	 * smaller is listed first and wins the tie); where tiles overhang,
	 * their checked paths cost more than that gains */
	if (gpu && simt && (k->nt == 128 || simt96) && s->tt[0] * s->tt[1] == 64 &&
	    (fmod(s0, k->mt0) != 0 || fmod(s1, k->mt1) != 0))
		rate *= m->eff_simt_ragged;
	bytes_p = (double)problem_count(kp, P) * es;
	bytes_q = (double)problem_count(kp, Q) * es;
	held = bytes_p + bytes_q + (double)problem_count(kp, T_C) * es;
	/* the SIMT kernel reads a packed operand element by element: cheap
	 * from the cache, not from memory */
	if (simt && ((k->pack_slot[0] >= 0 && bytes_p >= m->cache / 2) ||
		     (k->pack_slot[1] >= 0 && bytes_q >= m->cache / 2)))
		rate *= m->eff_pack_simt;
	occ = occupancy(k, m);
	slots = m->units * occ;
	waves = ceil_div(tiles, slots);
	/* every slot of a wave runs at the rate's share of one slot, so a
	 * wave takes one tile's time; a partly filled last wave too */
	out->compute_s = waves * tile_flops * slots / rate;
	if (!gpu)
		out->compute_s += tiles * m->cpu_group_s / m->units;
	useful = 2.0 * cplx * s0 * s1 * fold * su * outer;
	out->tile_util = useful / (tiles * tile_flops);

	/* memory: each operand once, and again for every further tile along
	 * the other side, less what the cache keeps; loads that do not
	 * coalesce, and stores that step by more than one element along D0,
	 * move whole sectors for one element */
	pen_p = p_unit ? 1 : m->uncoalesced;
	pen_q = q_unit ? 1 : m->uncoalesced;
	pen_c = slot_stride(k, kp, T_C, 0) == 1 || plan_slot_size(k, kp, 0) == 1
			? 1
			: m->uncoalesced;
	bytes_c = (double)problem_count(kp, T_C) * es * (kp->c->use_beta ? 2 : 1);
	/* a small operand stays in the cache whatever the order */
	big = bytes_p * pen_p < m->cache / 2 ? 0 : m->reread;
	bytes_p *= pen_p * (1 + (ceil_div(s1, k->mt1) - 1) * big);
	big = bytes_q * pen_q < m->cache / 2 ? 0 : m->reread;
	bytes_q *= pen_q * (1 + (ceil_div(s0, k->mt0) - 1) * big);
	bytes_c *= pen_c;
	if (s->gsu > 1) /* partial sums written, then read and reduced */
		bytes_c += 2.0 * (double)problem_count(kp, T_C) * s->gsu * (es < 4 ? 4 : es) *
			   m->gsu_bytes;
	out->memory_s = (bytes_p + bytes_q + bytes_c) / (m->bw * m->mem_eff);
	if (!gpu && held <= m->cache / 2)
		out->memory_s /= m->cpu_cache_bw;
	/* add_simt_96's tile stores C as a few whole blocks where C moves by
	 * one element along D0, D1 follows D0 in C, and a tile's 64 along D1
	 * lie within one run of D1's own index (ikma-mjbc: D0 over a, D1 over
	 * bc = 400 right after a); elsewhere it stores slower than the larger
	 * tiles (also where D1's index is b = 20, after a in C: 0.91-0.95) */
	if (simt96 && (slot_stride(k, kp, T_C, 0) != 1 ||
	     slot_stride(k, kp, T_C, 1) != plan_slot_size(k, kp, 0) ||
	     plan_slot_size(k, kp, 1) < k->mt1))
		out->memory_s /= m->eff_simt96_c;

	/* latency: the work-groups a unit holds overlap theirs, wave by wave */
	if (!gpu)
		out->latency_s = 0;
	else if (k->wgmma) /* its ring of stages overlaps the passes once full
			    * (PackFreeIndices slows the products, eff_pack, not
			    * the waves: on an H200 AO2MO's abrs-qb-aqrs, latency-
			    * bound, ran packed at 27.4 TFLOP/s against 21.6,
			    * bench/results/2026-11-27-h200-ao2mo-fitted.md) */
		out->latency_s = waves * (m->wg_group_s + fmin(iters, 4) * m->wg_iter_s);
	else /* an iteration's loads and products scale with its depth; past
	      * the first few, the prefetch overlaps them with the products */
		out->latency_s = waves * (m->group_s + fmin(iters, m->simt_iters) *
							m->simt_iter_s * s->depth_u / 16.0);
	/* a packed operand gathered from the cache: the cache's bandwidth is
	 * shared by every term (Nsight Compute on CCSD(T): L1 wavefronts 69%
	 * of their peak, DRAM 25%) */
	if (gpu && simt &&
	    ((k->pack_slot[0] >= 0 && !p_unit) || (k->pack_slot[1] >= 0 && !q_unit))) {
		out->compute_s /= m->eff_simt_gather;
		out->memory_s /= m->eff_simt_gather;
		out->latency_s /= m->eff_simt_gather;
	}
	out->overhead_s = m->launch_s + (s->gsu > 1 ? m->gsu_launch_s : 0);
	out->time_s = fmax(fmax(out->compute_s, out->memory_s), out->latency_s) + out->overhead_s;
	out->limit = out->overhead_s > fmax(fmax(out->compute_s, out->memory_s), out->latency_s)
			     ? "overhead"
		     : out->latency_s > fmax(out->compute_s, out->memory_s) ? "latency"
		     : out->compute_s >= out->memory_s			 ? "compute"
									 : "memory";
	out->sol = *s;
}

/* ---- candidates ------------------------------------------------------------ */

#define MAX_CANDIDATES PLAN_MAX_CANDIDATES

struct cands {
	int n;
	struct solution s[MAX_CANDIDATES];
};

static void add(struct cands *cs, const struct solution *s)
{
	if (cs->n < MAX_CANDIDATES)
		cs->s[cs->n++] = *s;
}

/* GlobalSplitU choices: split the bound loop when the output alone cannot
 * fill the device.  Powers of two, and the splits that fill whole waves of
 * the solution's own tiles: nine 128 x 128 tiles split 32 ways are 2.2
 * waves on 132 SMs, split 14 or 29 ways one or two full ones (more waves
 * gain little and double the planner's time).  A tile count
 * taken from C's size is low where tiles overhang, so one split less is
 * offered too; the model, which counts the real tiles, picks. */
static void add_gsu(struct cands *cs, const struct solution *s, double out_count, double units,
		    double k)
{
	const double min_k = 4.0 * (s->depth_u > 0 ? s->depth_u : 16);
	const double out_tiles = out_count / (128.0 * 128.0);
	const double own = out_count / ((double)s->wg[0] * s->tt[0] * s->wg[1] * s->tt[1]);
	int seen[4], nseen = 0;

	add(cs, s);
	for (int g = 2; g <= 64; g *= 2) {
		struct solution x = *s;

		if (out_tiles * g > 4 * units || k / g < min_k)
			break;
		x.gsu = g;
		add(cs, &x);
	}
	if (out_tiles * 2 > 4 * units)
		return;
	for (int w = 1; w <= 2; w++)
		for (int g = (int)(w * units / own), d = 0; d < 2; d++, g--) {
			struct solution x = *s;
			bool dup = false;

			if (g < 3 || g > 64 || (g & (g - 1)) == 0 || k / g < min_k)
				continue;
			for (int j = 0; j < nseen; j++)
				dup = dup || seen[j] == g;
			if (dup)
				continue;
			seen[nseen++] = g;
			x.gsu = g;
			add(cs, &x);
		}
}

/* The CPU family (PoCL): no local memory (it is ordinary RAM there), wide
 * explicit vectors along D0 and a register block per work-item. */
static void cands_cpu(const struct problem *p, struct cands *cs)
{
	const enum tcx_dtype t = p->c->dtype;
	const bool cplx = dtype_info(t)->complex;
	static const int tt1s[] = { 8, 4 };

	for (int v = 0; v < 2; v++)
		for (size_t j = 0; j < ARRAY_SIZE(tt1s); j++) {
			struct solution s;

			solution_default(&s);
			s.use_lds = false;
			s.wg[0] = s.wg[1] = s.wg[2] = 1;
			s.pgr = s.plr = false;
			s.depth_u = 16;
			if (cplx) {
				s.vw = 1;
				s.tt[0] = v ? 2 : 4;
				s.tt[1] = tt1s[j];
			} else {
				s.vw = t == TCX_DTYPE_D ? 8 : 16;
				s.tt[0] = v ? s.vw : 2 * s.vw;
				s.tt[1] = tt1s[j];
				add(cs, &s);
				/* and in 32-byte vectors, two or four of them
				 * along D0 */
				s.vw /= 2;
				s.tt[0] = v ? 2 * s.vw : 4 * s.vw;
			}
			add(cs, &s);
		}
}

/* Whether a bound index of p has an extent DepthU 16 would pad (24, 40,
 * ...: a sum of 24 runs 32 steps of products). */
static bool sum_padded_by_16(const struct problem *p)
{
	for (int id = 0; id < p->c->nidx; id++)
		if (p->c->idx[id].cls == IDX_BOUND && p->size[id] % 16 != 0)
			return true;
	return false;
}

/* Whether A or B has a free index (of more than one element) besides the
 * one its tiles run along: then PackFreeIndices has one to take. */
static bool has_folded_free(const struct problem *p)
{
	int n[2] = { 0, 0 };

	for (int id = 0; id < p->c->nidx; id++) {
		const enum index_class k = p->c->idx[id].cls;

		if ((k == IDX_FREE_A || k == IDX_FREE_B) && p->size[id] > 1)
			n[k == IDX_FREE_B]++;
	}
	return n[0] > 1 || n[1] > 1;
}

/* The default solution with a candidate's work-group and thread tile:
 * shape is { WG0, WG1, TT0, TT1, ... }. */
static void shape_solution(struct solution *s, const int *shape)
{
	solution_default(s);
	s->wg[0] = shape[0];
	s->wg[1] = shape[1];
	s->tt[0] = shape[2];
	s->tt[1] = shape[3];
}

/* A 96 x 64 SIMT tile: work-groups of 96 (12 x 8 work-items of 8 x 8),
 * DepthU 12 (a multiple of the 96 x 12 and 64 x 12 tiles' loads of four
 * elements a work-item), five an SM where launch bounds cap the registers
 * at 128 (simt_launch_bound).  It divides extents that 128 does not,
 * such as CCSD(T)'s packed 576 (a = i = 24) and 8000 (b c j = 20^3): on
 * an H200 ikma-mjbc's GEMM ran 25.9 TFLOP/s in full 96 x 64 tiles
 * against 21.2 in overhanging 128 x 128 ones; where its tiles overhang
 * too, or are not whole blocks of C (plan_predict), it ran at 0.89-0.95
 * of them (bench/results/2026-11-27-h200-ccsdt-96.md). */
static void add_simt_96(struct cands *cs, int pk)
{
	static const int shape[4] = { 12, 8, 8, 8 };
	struct solution s;

	shape_solution(&s, shape);
	s.depth_u = 12;
	s.vw = 4;
	s.pack_free = pk;
	add(cs, &s);
}

/* The SIMT family on GPUs: local-memory tiles of 32 to 128 a side, with
 * DepthU 16, and 8 as well for the large tiles where 16 would pad the sum
 * (on an H200 a sum of 24 ran 15-17% faster at 8:
 * bench/results/2026-11-26-h200-short-sum-sweep.md); each with
 * PackFreeIndices too where there is an index to pack (tiles across short
 * extents: C[a,b,c,i,j,k] with a = 24 tiles a x ij, not a alone), and a
 * 128 x 32 tile packed only, for a short B (TCCG's abjcd and ajbdc, j = 24:
 * 8.7 against 7.1 TFLOP/s for 64 x 32 on an H200; unpacked it ran at half,
 * bench/results/2026-11-27-h200-intensli-narrow.md); with launch bounds
 * (`bounded`), add_simt_96's tile too. */
static void cands_simt(const struct problem *p, bool bounded, struct cands *cs)
{
	const enum tcx_dtype t = p->c->dtype;
	const bool cplx = dtype_info(t)->complex, wide = t == TCX_DTYPE_D || t == TCX_DTYPE_Z;
	const int ndu = sum_padded_by_16(p) ? 2 : 1, npk = has_folded_free(p) ? 2 : 1;
	const int64_t sum = problem_bound_volume(p);
	const bool short12 = bounded && sum <= 48 && sum % 12 == 0;
	static const int shapes[][4] = {
		/* WG0, WG1, TT0, TT1 */
		{ 16, 8, 8, 8 }, { 16, 16, 8, 8 }, { 16, 16, 4, 4 }, { 16, 16, 8, 4 }, { 16, 16, 4, 8 },
		{ 16, 8, 4, 4 },  { 8, 16, 4, 4 },  { 8, 8, 4, 4 },  { 16, 8, 8, 4 },
	};

	for (int n = 0; n < ndu * npk * (int)ARRAY_SIZE(shapes); n++) {
		const int k = n % (int)ARRAY_SIZE(shapes), du = n / (int)ARRAY_SIZE(shapes) % ndu;
		const int pk = n / (int)ARRAY_SIZE(shapes) / ndu;
		struct solution s;

		if ((cplx || wide) && shapes[k][2] * shapes[k][3] > 32)
			continue;
		/* DepthU 8 for the large tiles only: the small ones it makes
		 * look cheaper to the model than TTGT's GEMM where they ran
		 * slower (6 of the 18 CCSD(T) cases, 5-7 against 9 TFLOP/s) */
		if (du && shapes[k][2] * shapes[k][3] < 32)
			continue;
		if (shapes[k][0] * shapes[k][2] == 128 && shapes[k][1] * shapes[k][3] == 32 && !pk)
			continue; /* 128 x 32: packed only */
		shape_solution(&s, shapes[k]);
		s.depth_u = du ? 8 : 16;
		s.vw = cplx ? 1 : wide ? 2 : 4;
		while (s.vw > 1 && (s.tt[0] % s.vw || s.tt[1] % s.vw))
			s.vw /= 2;
		s.pack_free = pk;
		add(cs, &s);
		/* 96 x 64 right after the last 128 x 64 tile of each packing,
		 * so that it wins a tie with the larger tiles only */
		if (short12 && k == 0 && du == ndu - 1)
			add_simt_96(cs, pk);
	}
}

/* Hopper's warpgroup family: MatrixInstruction [64, N, K, 1], one or two
 * consumer warpgroups, tiles of 64 to 256 a side; fp32 through TF32x3
 * (fp32's accuracy), PackFreeIndices on and off. */
static void cands_wgmma(const struct problem *p, struct cands *cs)
{
	const enum tcx_dtype t = p->c->dtype;
	static const int shapes[][6] = {
		/* MT0, MT1, WG0, WG1, MI_N, Occupancy */
		{ 128, 128, 32, 8, 128, 0 }, { 128, 256, 32, 8, 256, 0 }, { 64, 128, 16, 8, 128, 0 },
		{ 128, 64, 32, 8, 64, 0 },   { 64, 256, 16, 8, 256, 0 },  { 64, 64, 16, 8, 64, 0 },
		/* a tile 32 wide, two work-groups an SM: where D1 is short
		 * (ajb-kba-jk, j = 24: 23.7 TFLOP/s against 16.7 for the
		 * planner's 64 x 128 on an H200, 2026-11-27-h200-tccg-narrow.md) */
		{ 64, 32, 16, 8, 32, 2 },
		/* 96 wide, where D1 is 65-96 long (eff_wg_near) */
		{ 128, 96, 32, 8, 96, 0 },
	};

	for (size_t k = 0; k < ARRAY_SIZE(shapes); k++) {
		if (shapes[k][4] % 64 != 0 && t != TCX_DTYPE_S)
			continue; /* measured for fp32 (TF32x3) only */
		for (int pk = 0; pk < 2; pk++) {
			struct solution s;

			solution_default(&s);
			s.wg[0] = shapes[k][2];
			s.wg[1] = shapes[k][3];
			s.tt[0] = shapes[k][0] / shapes[k][2];
			s.tt[1] = shapes[k][1] / shapes[k][3];
			s.vw = 1;
			s.wgm = 8;
			s.mi[0] = 64;
			s.mi[1] = shapes[k][4];
			s.mi[2] = t == TCX_DTYPE_S ? 8 : 16;
			s.mi[3] = 1;
			s.depth_u = t == TCX_DTYPE_S ? 32 : 64;
			s.tf32x3 = t == TCX_DTYPE_S;
			s.pack_free = pk;
			s.occupancy = shapes[k][5];
			add(cs, &s);
		}
	}
}

/* The mma.sync family for fp64 and complex fp64 (the fp64 tensor cores:
 * MatrixInstruction [8, 8, 4, 1], with m16, on sm_90, [16, 8, 8, 1]):
 * tiles of 64 to 128 a side, fp64 with 32 or 64 accumulators a lane,
 * complex fp64 (twice the registers each) with 16 or 32; 16-byte reads of
 * two fp64 elements; DepthU 16, or 8 where a shape row says; rows padded
 * by 4 elements, so that the four rows of k a half-warp reads fall in
 * distinct banks. */
static void cands_mma_f64(struct cands *cs, bool cplx, bool m16)
{
	static const int shapes8[][5] = {
		/* WG0, WG1, TT0, TT1, DepthU */
		{ 16, 16, 8, 8, 16 }, { 16, 8, 8, 8, 16 }, { 8, 16, 8, 8, 16 }, { 16, 8, 4, 8, 16 },
		{ 16, 16, 4, 4, 16 }, { 16, 16, 4, 8, 16 },
	};
	/* m16n8k8 on an H200 ran fp64 GEMMs fastest in work-groups of eight
	 * warps: 128 x 128 tiles 46 TFLOP/s, 128 x 64 40.5, against 37.5 for
	 * 128 x 64 in four warps (bench/results/2026-11-27-h200-fp64-mma.md;
	 * the model takes 128 x 128 since occupancy() counts registers).
	 * Complex fp64 ran 35 with 16 accumulators a lane (DepthU 16) or 32
	 * at DepthU 8, 22 with 32 at DepthU 16, against m8n8k4's 24.4. */
	static const int shapes16[][5] = {
		{ 16, 16, 8, 8, 16 }, { 16, 16, 8, 4, 16 }, { 16, 16, 4, 8, 16 },
	};
	/* the faster first: equal predictions go to the earlier row (64 x 64
	 * ran 36.6 TFLOP/s at 4096^3 on an H200, 128 x 64 38.5) */
	static const int shapes16z[][5] = {
		{ 16, 16, 8, 4, 8 }, { 32, 8, 4, 8, 8 }, { 16, 16, 4, 4, 16 },
	};
	const int(*shapes)[5] = !m16 ? shapes8 : cplx ? shapes16z : shapes16;
	const size_t n = !m16 ? ARRAY_SIZE(shapes8) : cplx ? ARRAY_SIZE(shapes16z)
							    : ARRAY_SIZE(shapes16);

	for (size_t k = 0; k < n; k++) {
		struct solution s;

		/* fp64's tiles up to 64 accumulators a lane, complex fp64's 32 */
		if (shapes[k][2] * shapes[k][3] > (cplx ? 32 : 64) ||
		    (!cplx && shapes[k][2] * shapes[k][3] < 32))
			continue;
		shape_solution(&s, shapes[k]);
		s.depth_u = shapes[k][4];
		s.vw = cplx ? 1 : 2;
		s.lds_pad = 4;
		s.mi[0] = m16 ? 16 : 8;
		s.mi[1] = 8;
		s.mi[2] = m16 ? 8 : 4;
		s.mi[3] = 1;
		add(cs, &s);
	}
}

/* Role choices worth a try: for each operand the free index its tiles
 * would run along by model_classify's rule, the one that moves fastest in the
 * operand (coalesced loads) and the one that moves fastest in C
 * (coalesced stores); for the unrolled loop the rule's, and the bound
 * index that moves fastest in A, in B.  At most three of each. */
struct roles {
	int n[3];
	char name[3][3][TCX_INDEX_NAME_MAX]; /* [A, B, unroll][choice]; "" the rule's */
};

static void role_add(struct roles *r, int x, const struct tcx_contraction *c, int id, int rule)
{
	if (id < 0 || id == rule)
		return;
	for (int k = 1; k < r->n[x]; k++)
		if (strcmp(r->name[x][k], c->idx[id].name) == 0)
			return;
	snprintf(r->name[x][r->n[x]++], TCX_INDEX_NAME_MAX, "%s", c->idx[id].name);
}

/* The index of class k that moves fastest in tensor t, or -1. */
static int fastest(const struct problem *p, enum index_class k, enum tensor_role t)
{
	int best = -1;

	for (int id = 0; id < p->c->nidx; id++)
		if (p->c->idx[id].cls == k && p->size[id] > 1 &&
		    (best < 0 || p->stride[t][id] < p->stride[t][best]))
			best = id;
	return best;
}

static void list_roles(const struct problem *p, struct roles *r)
{
	struct classification cls;

	model_classify(p->c, p->explicit_strides ? p : NULL, &cls);
	memset(r, 0, sizeof(*r));
	for (int x = 0; x < 3; x++)
		r->n[x] = 1; /* the rule's */
	role_add(r, 0, p->c, fastest(p, IDX_FREE_A, T_A), cls.free01[T_A]);
	role_add(r, 0, p->c, fastest(p, IDX_FREE_A, T_C), cls.free01[T_A]);
	role_add(r, 1, p->c, fastest(p, IDX_FREE_B, T_B), cls.free01[T_B]);
	role_add(r, 1, p->c, fastest(p, IDX_FREE_B, T_C), cls.free01[T_B]);
	role_add(r, 2, p->c, fastest(p, IDX_BOUND, T_A), cls.du);
	role_add(r, 2, p->c, fastest(p, IDX_BOUND, T_B), cls.du);
}

/* Every candidate once with each combination of roles. */
static void cross_roles(struct cands *cs, const struct roles *r)
{
	const int base = cs->n;

	for (int a = 0; a < r->n[0]; a++)
		for (int b = 0; b < r->n[1]; b++)
			for (int u = 0; u < r->n[2]; u++) {
				if (a == 0 && b == 0 && u == 0)
					continue;
				for (int k = 0; k < base; k++) {
					struct solution x = cs->s[k];

					memcpy(x.tile_index[0], r->name[0][a], TCX_INDEX_NAME_MAX);
					memcpy(x.tile_index[1], r->name[1][b], TCX_INDEX_NAME_MAX);
					memcpy(x.unroll_index, r->name[2][u], TCX_INDEX_NAME_MAX);
					add(cs, &x);
				}
			}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* With an accuracy asked (planner_plan_accuracy), each TF32x3 candidate
 * has a twin in plain tf32, which the accuracy filter (accuracy_allows)
 * keeps where its predicted error meets the bound. */
static void cands_tf32(struct cands *cs, double accuracy)
{
	for (int k = 0, n = cs->n; k < n && accuracy > 0; k++)
		if (cs->s[k].tf32x3) {
			struct solution x = cs->s[k];

			x.tf32x3 = false;
			add(cs, &x);
		}
}

/* Whether a solution computing in arithmetic a, with its predicted error,
 * may run a problem that asked for `accuracy` (planner_plan_accuracy):
 * at least as accurate as floor, and, when less accurate than the type's
 * own arithmetic, predicted within the accuracy. */
static bool accuracy_allows(enum tcx_dtype t, enum arith a, double predicted, double accuracy,
			    enum arith floor)
{
	if (!arith_at_least(a, floor))
		return false;
	if (arith_at_least(a, arith_default(t)))
		return true;
	return accuracy > 0 && predicted <= accuracy;
}

/* The candidates of the device's families for problem kp, each with the
 * role choices and GlobalSplitU options worth a try (and, with an
 * accuracy, cands_tf32's twins). */
static void list_candidates(const struct problem *kp, const struct plan_device *m,
			    double accuracy, struct cands *cs)
{
	struct roles r;
	double out_count, kvol;

	cs->n = 0;
	if (model_gpu(m)) {
		if (m->wgmma)
			cands_wgmma(kp, cs);
		if (m->mma && (kp->c->dtype == TCX_DTYPE_D || kp->c->dtype == TCX_DTYPE_Z))
			cands_mma_f64(cs, kp->c->dtype == TCX_DTYPE_Z, m->mma_f64_16);
		cands_simt(kp, m->launch_bounds, cs);
	} else {
		cands_cpu(kp, cs);
	}
	cands_tf32(cs, accuracy);
	list_roles(kp, &r);
	cross_roles(cs, &r);
	/* GlobalSplitU where the output is a few tiles and the sum is long */
	out_count = (double)problem_count(kp, T_C);
	kvol = (double)problem_bound_volume(kp);
	for (int k = 0, n = cs->n; k < n && m->type == DEV_GPU; k++) {
		struct cands extra;

		extra.n = 0;
		add_gsu(&extra, &cs->s[k], out_count, m->units, kvol);
		for (int j = 1; j < extra.n; j++)
			add(cs, &extra.s[j]);
	}
}

/* Whether choice a beats b: a shorter predicted time, or, both bound by
 * the same traffic or the same products, the same time with less of the
 * tiles' work wasted, which the time does not see; else the earlier
 * listed.  On an H200, CCSD(T)'s ikma-mjbc: 96 x 64 tiles that fit C ran
 * 1.22 times as fast as the 128 x 128 tiles that overhang, both predicted
 * memory-bound alike; its sums of 24 in chunks of 16 (75% useful) ran 1.3
 * times as long as in chunks of 8, which the waves of their occupancies
 * had made an exact tie in compute (2026-11-27-h200-selection.md). */
static bool better(const struct plan_choice *a, const struct plan_choice *b)
{
	if (a->time_s != b->time_s)
		return a->time_s < b->time_s;
	return (!strcmp(a->limit, "memory") || !strcmp(a->limit, "compute")) &&
	       !strcmp(a->limit, b->limit) && a->tile_util > b->tile_util;
}

/* A chosen solution with the launch bound its SIMT tile needs
 * (simt_launch_bound), as planner_plan and planner_list give it. */
static void add_launch_bound(const struct plan_device *m, struct solution *s)
{
	if (s->occupancy == 0)
		s->occupancy = simt_launch_bound(m, s);
}

int planner_list(const struct problem *p, const struct device_info *dev, double accuracy,
		 struct solution *out, int max)
{
	struct plan_device m;
	struct cands *cs = malloc(sizeof(*cs));
	int n;

	if (!cs)
		return -1;
	/* a model that cannot be read leaves the built-in one: planner_plan
	 * reports it */
	plan_device_model(dev, p->c->dtype, &m, NULL);
	list_candidates(p, &m, accuracy, cs);
	n = cs->n < max ? cs->n : max;
	memcpy(out, cs->s, (size_t)n * sizeof(*out));
	free(cs);
	for (int k = 0; k < n; k++)
		add_launch_bound(&m, &out[k]); /* as planner_plan gives its choice */
	return n;
}

/* One way to run p: directly, or with A and/or B permuted first. */
struct variant {
	struct problem tp;              /* p with the permuted operands' strides */
	struct tcx_contraction *merged; /* tp merged (owned), or NULL */
	struct merge_map map;
	struct problem kp;
	struct plan_permute permute[3];
	unsigned which; /* its PLAN_FORM_* bits */
};

/* Ids of the indices of tensor t of class k, sorted by their stride in
 * tensor `by`, appended to list at *n. */
static void append_sorted(const struct problem *p, enum index_class k, enum tensor_role by,
			  int *list, int *n)
{
	const int first = *n;

	for (int id = 0; id < p->c->nidx; id++) {
		int j;

		if (p->c->idx[id].cls != k)
			continue;
		for (j = *n; j > first && p->stride[by][list[j - 1]] > p->stride[by][id]; j--)
			list[j] = list[j - 1];
		list[j] = id;
		(*n)++;
	}
}

/* The variants' bits (make_variant) */
enum {
	V_A = PLAN_FORM_A,
	V_B = PLAN_FORM_B,
	V_C = PLAN_FORM_C,
	V_C_BFIRST = PLAN_FORM_C_BFIRST,
	V_C_BYC = PLAN_FORM_C_BYC,
	V_COUNT = PLAN_FORM_BITS
};

/* The GEMM order of tensor t's indices (plan_permute): A's free indices,
 * then the bound ones, then the batch ones; B's bound ones, then its free
 * ones, then the batch ones; C's: A's free ones and B's (B's first with
 * V_C_BFIRST), then the batch ones.  Free indices go in the order of C's
 * strides, or, when C is permuted (and follows them) without V_C_BYC, in
 * their operand's; bound ones in the order of operand bound_by's
 * strides, batch ones in C's. */
static int gemm_order(const struct problem *p, enum tensor_role t, enum tensor_role bound_by,
		      unsigned which, int *order)
{
	const bool own = (which & V_C) && !(which & V_C_BYC);
	const bool bfirst = t == T_C && (which & V_C_BFIRST);
	int n = 0;

	if (bfirst)
		append_sorted(p, IDX_FREE_B, own ? T_B : T_C, order, &n);
	if (t == T_A || t == T_C)
		append_sorted(p, IDX_FREE_A, own ? T_A : T_C, order, &n);
	if (t != T_C)
		append_sorted(p, IDX_BOUND, bound_by, order, &n);
	if (t == T_B || (t == T_C && !bfirst))
		append_sorted(p, IDX_FREE_B, own ? T_B : T_C, order, &n);
	append_sorted(p, IDX_BATCH, T_C, order, &n);
	return n;
}

/* The predicted seconds of permuting tensor t of p from its strides into
 * `to` (by index id), from the permute's own plan (gen/permute.h): a copy
 * along an index both share as their fastest moves at about the copy
 * rate, a transpose through local memory slower, and slower again where
 * the two fastest indices fill its tiles partly (measured on an H200: 3.9,
 * 2.3-2.6 for 32 x 32 tiles, 3.0-3.2 for TCCG's 24 x 64 and 48 x 48 whole
 * and, for 24 x 20 in 24 x 24, 1.5 TB/s).  False when the device cannot
 * take it. */
static bool permute_seconds(const struct problem *p, enum tensor_role t, const int64_t *to,
			    const struct plan_device *m, const struct device_info *dev,
			    double *out)
{
	const double bytes = 2.0 * (double)problem_count(p, t) * dtype_info(p->c->dtype)->bytes;
	struct permute_plan pp;
	double rate = 0.92 * m->bw;

	if (permute_plan_tensor(p, t, to, dev, &pp, NULL))
		return false;
	if (pp.path == PERMUTE_TILE) {
		double fill = 1;

		for (int sl = 0; sl < 2; sl++) {
			const double n = (double)pp.size[sl];

			fill *= n / (ceil(n / pp.tile[sl]) * pp.tile[sl]);
		}
		rate = m->eff_perm_tile * m->bw * fill;
	}
	*out = pp.path == PERMUTE_EMPTY ? 0 : bytes / rate + m->launch_s;
	if (!model_gpu(m) && pp.path != PERMUTE_EMPTY)
		*out += (double)pp.groups[0] * pp.groups[1] * pp.groups[2] * m->cpu_group_s /
			m->units;
	return true;
}

bool plan_permutes(const struct plan_choice *ch)
{
	return ch->permute[0].on || ch->permute[1].on || ch->permute[2].on;
}

bool plan_is_permutation(const struct problem *p)
{
	const struct tcx_contraction *c = p->c;

	return c->implicit_b && c->rank[T_B] == 0 && c->rank[T_A] == c->rank[T_C] &&
	       contraction_count(c, IDX_BOUND) == 0;
}

/* The direct permute of A into C for a problem that is a permutation
 * (plan_is_permutation), with its predicted time as permute_seconds
 * predicts a TTGT copy's; off when the device cannot take it. */
static void plan_direct(const struct problem *p, const struct plan_device *m,
			const struct device_info *dev, struct plan_direct *out)
{
	const struct tcx_contraction *c = p->c;
	int64_t size[TCX_MAX_INDICES], si[TCX_MAX_INDICES], so[TCX_MAX_INDICES];

	memset(out, 0, sizeof(*out));
	if (!plan_is_permutation(p) || dev->type == DEV_HOST)
		return;
	for (int k = 0; k < c->rank[T_A]; k++) {
		const int id = c->written[T_A][k];

		size[k] = p->size[id];
		si[k] = p->stride[T_A][id];
		so[k] = p->stride[T_C][id];
	}
	if (permute_plan_make(c->dtype, c->rank[T_A], size, si, so, c->conj[T_A], dev,
			      &out->plan, NULL) != TCX_OK ||
	    !permute_seconds(p, T_A, p->stride[T_C], m, dev, &out->seconds))
		return;
	out->on = true;
}

int planner_env_ttm(void)
{
	const char *e = getenv("TCX_TTM");

	return e && strcmp(e, "0") == 0 ? 0 : e && strcmp(e, "1") == 0 ? 1 : -1;
}

/* The tensor-times-matrix or -vector kernel for p where one applies, and
 * its predicted time (force: as planner_env_ttm returns it).  The matrix
 * kernel: T, M and C moved once at the rate the SIMT kernel's loads and
 * stores reach (T once more for each further block of j, half of it from
 * the cache), its products at the SIMT rate, whichever is longer.  The
 * vector kernel: its traffic at
 * eff_ttv_mem of that rate, on a GPU in proportion to how much of half
 * the SMs' work-item slots its work-groups fill (below that too few loads
 * are in flight), its products at the SIMT rate. */
static void plan_ttm(const struct problem *p, const struct plan_device *m,
		     const struct device_info *dev, double best_s, int force, struct plan_ttm *out)
{
	const struct ttm_plan *t = &out->plan;
	double tbytes = 1;

	memset(out, 0, sizeof(*out));
	if (force == 0 || dev->type == DEV_HOST || ttm_plan_any(p, dev, &out->plan, NULL))
		return;
	/* GPUs only, unless asked: on PoCL's CPU device the matrix kernel ran
	 * two of the three CPU-size TCCG cases measured 2.6 times slower than
	 * the contraction kernel's TTGT plans, and the vector kernel the
	 * eleven matrix-vector cases of the selection report 1.2-9 times
	 * slower than the contraction kernel (its work-groups' loops of
	 * unequal length do not vectorise across work-items there) */
	if (dev->type != DEV_GPU && force != 1)
		return;
	if (t->vector) {
		out->memory_s = t->bytes / (m->bw * m->mem_eff * m->eff_ttv_mem * t->v.fill);
		out->compute_s = t->flops / (m->simt_flops * m->eff_ttm * t->v.util);
	} else {
		for (int x = 0; x < p->c->rank[t->big]; x++)
			tbytes *= (double)p->size[p->c->written[t->big][x]];
		tbytes *= dtype_info(p->c->dtype)->bytes;
		out->memory_s = (t->bytes + 0.5 * tbytes * (double)(t->jblocks - 1)) /
				(m->bw * m->mem_eff * m->eff_ttm_mem);
		out->compute_s = t->flops / (m->simt_flops * m->eff_ttm);
	}
	out->limit = out->compute_s > out->memory_s ? "compute" : "memory";
	out->seconds = (out->compute_s > out->memory_s ? out->compute_s : out->memory_s) +
		       m->launch_s * (t->vector && t->v.split > 1 ? 2 : 1);
	out->applies = true;
	out->on = force == 1 || out->seconds < best_s;
}

/* Makes variant `which` of p (V_A, V_B, V_C and C's order); false when a
 * tensor it permutes is in that order already, or the variant cannot be
 * described or run. */
static bool make_variant(const struct problem *p, const struct plan_device *m,
			 const struct device_info *dev, unsigned which, struct variant *v)
{
	/* the bound indices in the order of an operand left as it is */
	const enum tensor_role bound_by = !(which & V_A) ? T_A : !(which & V_B) ? T_B : T_A;

	memset(v, 0, sizeof(*v));
	v->tp = *p;
	v->which = which;
	for (int x = 0; x < 3; x++) {
		const enum tensor_role t = x == 0 ? T_A : x == 1 ? T_B : T_C;
		int order[TCX_MAX_INDICES], n, w = 0;
		int64_t acc = 1, written[TCX_MAX_INDICES];
		bool same = true;

		if (!(which >> x & 1))
			continue;
		n = gemm_order(p, t, bound_by, which, order);
		for (int k = 0; k < n; k++) {
			v->permute[x].stride[order[k]] = acc;
			if (p->size[order[k]] > 1 && p->stride[t][order[k]] != acc)
				same = false;
			acc *= p->size[order[k]];
		}
		if (same)
			return false; /* already in that order */
		for (int k = 0; k < p->c->rank[t]; k++)
			written[w++] = v->permute[x].stride[p->c->written[t][k]];
		if (problem_set_strides(&v->tp, t, written, w, NULL) != TCX_OK)
			return false;
		v->permute[x].on = true;
		/* A and B read and written once more before the kernel; C's
		 * copy, which the kernel writes, read once more and C written */
		if (!permute_seconds(p, t, v->permute[x].stride, m, dev, &v->permute[x].seconds))
			return false;
	}
	if (problem_merge(&v->tp, &v->merged, &v->kp, &v->map, NULL) != TCX_OK)
		return false;
	if (!v->merged)
		v->kp = v->tp;
	return true;
}

/* The variant that runs p as written, merged where it merges. */
static enum tcx_status direct_variant(const struct problem *p, struct variant *v,
				      struct tcx_error *err)
{
	enum tcx_status st;

	memset(v, 0, sizeof(*v));
	v->tp = *p;
	st = problem_merge(p, &v->merged, &v->kp, &v->map, err);
	if (!st && !v->merged)
		v->kp = *p;
	return st;
}

enum tcx_status planner_plan(const struct problem *p, const struct device_info *dev,
			     unsigned flags, struct plan_result *pl, struct tcx_error *err)
{
	return planner_plan_accuracy(p, dev, flags, 0, ARITH_TF32, pl, err);
}

enum tcx_status planner_plan_accuracy(const struct problem *p, const struct device_info *dev,
				      unsigned flags, double accuracy, enum arith floor,
				      struct plan_result *pl, struct tcx_error *err)
{
	const double t0 = now_s();
	const enum tcx_dtype t = p->c->dtype;
	const int64_t products = problem_bound_volume(p);
	struct cands *cs;
	struct tcx_error why = { 0 };
	struct variant *v;
	unsigned order[V_COUNT];
	int best_v = -1, nv = 0, norder = 0;
	enum tcx_status st;

	memset(pl, 0, sizeof(*pl));
	if ((flags & PLAN_SIMT) && !arith_at_least(floor, ARITH_FP32))
		floor = ARITH_FP32;
	st = plan_device_model(dev, p->c->dtype, &pl->model, err);
	if (st)
		return st;
	cs = malloc(sizeof(*cs));
	v = malloc(V_COUNT * sizeof(*v));
	if (!cs || !v) {
		free(cs);
		free(v);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	/* directly (0), then with A, B, C permuted (TTGT) in the orders worth
	 * a try; PLAN_PERMUTE_ONLY plans directly only when permuting changes
	 * nothing */
	if (!(flags & PLAN_PERMUTE_ONLY))
		order[norder++] = 0;
	for (unsigned w = 1; w < V_COUNT && (flags & (PLAN_PERMUTE | PLAN_PERMUTE_ONLY)); w++)
		if ((w & V_C) || !(w & (V_C_BFIRST | V_C_BYC)))
			order[norder++] = w;
	if (flags & PLAN_PERMUTE_ONLY)
		order[norder++] = 0;

	for (int o = 0; o < norder; o++) {
		const unsigned which = order[o];
		struct variant *cur = &v[nv];
		double extra;

		if (which == 0 && nv > 0)
			break; /* PLAN_PERMUTE_ONLY, and permuting changed the problem */
		if (which == 0) {
			if (direct_variant(p, cur, err) != TCX_OK) {
				free(cs);
				free(v);
				return err ? err->code : TCX_ENOMEM;
			}
		} else if (!make_variant(p, &pl->model, dev, which, cur)) {
			continue;
		} else if (best_v >= 0 && cur->permute[0].seconds + cur->permute[1].seconds +
						  cur->permute[2].seconds >=
					  pl->best.time_s) {
			/* its copies alone take longer than the best so far */
			contraction_free(cur->merged);
			continue;
		}
		nv++;
		extra = cur->permute[0].seconds + cur->permute[1].seconds + cur->permute[2].seconds;
		list_candidates(&cur->kp, &pl->model, accuracy, cs);
		for (int k = 0; k < cs->n; k++) {
			struct kernel_plan kpl;
			struct plan_choice ch;
			enum arith a;
			double perr;

			pl->considered++;
			if (plan_make(cur->kp.c, &cur->kp, &cs->s[k], dev, &kpl, &why) != TCX_OK ||
			    plan_accepts(&kpl, &cur->kp, &why) != TCX_OK)
				continue;
			a = arith_of(t, &cs->s[k]);
			perr = arith_predict(t, a, kpl.tf32_trunc_q, products);
			if (!accuracy_allows(t, a, perr, accuracy, floor)) {
				snprintf(why.msg, sizeof(why.msg),
					 "no arithmetic at least as accurate as %s is left",
					 arith_name(floor));
				continue;
			}
			pl->valid++;
			plan_predict(&pl->model, &cur->kp, &kpl, &ch);
			ch.arith = a;
			ch.predicted_err = perr;
			ch.time_s += extra;
			memcpy(ch.permute, cur->permute, sizeof(ch.permute));
			if (best_v < 0 || better(&ch, &pl->best)) {
				if (best_v >= 0) {
					pl->second = pl->best;
					pl->has_second = true;
				}
				pl->best = ch;
				best_v = nv - 1;
			} else if (!pl->has_second || better(&ch, &pl->second)) {
				pl->second = ch;
				pl->has_second = true;
			}
		}
	}
	free(cs);
	for (int k = 0; k < nv; k++)
		if (k != best_v)
			contraction_free(v[k].merged);
	pl->plan_s = now_s() - t0;
	if (best_v < 0) {
		free(v);
		return tcx_fail(err, TCX_EREJECT, "no solution the planner knows runs this problem: %s",
				why.msg[0] ? why.msg : "none was listed");
	}
	add_launch_bound(&pl->model, &pl->best.sol);
	if (pl->has_second)
		add_launch_bound(&pl->model, &pl->second.sol);
	plan_direct(p, &pl->model, dev, &pl->direct);
	if (!pl->direct.on)
		plan_ttm(p, &pl->model, dev, pl->best.time_s, planner_env_ttm(), &pl->ttm);
	pl->merged = v[best_v].merged;
	pl->map = v[best_v].map;
	pl->tp = v[best_v].tp;
	pl->kp = v[best_v].kp;
	pl->form.on = true;
	pl->form.permute = v[best_v].which;
	pl->form.ttm = pl->ttm.on;
	free(v);
	if (pl->merged)
		pl->kp.c = pl->merged;
	return TCX_OK;
}

bool plan_is_plain(const struct plan_result *pl)
{
	return !pl->merged && !plan_permutes(&pl->best) && !pl->ttm.on && !pl->direct.on;
}

enum tcx_status planner_plan_form(const struct problem *p, const struct device_info *dev,
				  const struct plan_form *f, const struct solution *s,
				  struct plan_result *pl, struct tcx_error *err)
{
	const double t0 = now_s();
	struct variant v;
	struct kernel_plan kpl;
	struct tcx_error why = { 0 };
	char name[128];
	enum tcx_status st;

	memset(pl, 0, sizeof(*pl));
	plan_form_name(f, name, sizeof(name));
	if (f->permute >= V_COUNT || ((f->permute & (V_C_BFIRST | V_C_BYC)) && !(f->permute & V_C)))
		return tcx_fail(err, TCX_EINVAL, "form '%s' is not one the planner makes", name);
	st = plan_device_model(dev, p->c->dtype, &pl->model, err);
	if (st)
		return st;
	if (f->permute == 0) {
		st = direct_variant(p, &v, err);
		if (st)
			return st;
	} else if (!make_variant(p, &pl->model, dev, f->permute, &v)) {
		return tcx_fail(err, TCX_EREJECT,
				"form '%s' does not apply at these sizes: an operand it permutes is "
				"in a GEMM's order already, or the permute cannot run",
				name);
	}
	if (v.merged)
		v.kp.c = v.merged;
	if (plan_make(v.kp.c, &v.kp, s, dev, &kpl, &why) != TCX_OK ||
	    plan_accepts(&kpl, &v.kp, &why) != TCX_OK) {
		contraction_free(v.merged);
		return tcx_fail(err, TCX_EREJECT, "the solution does not run form '%s' here: %s",
				name, why.msg);
	}
	plan_predict(&pl->model, &v.kp, &kpl, &pl->best);
	pl->best.sol = *s;
	pl->best.arith = arith_of(p->c->dtype, s);
	pl->best.predicted_err = arith_predict(p->c->dtype, pl->best.arith, kpl.tf32_trunc_q,
					       problem_bound_volume(p));
	memcpy(pl->best.permute, v.permute, sizeof(pl->best.permute));
	for (int x = 0; x < 3; x++)
		pl->best.time_s += v.permute[x].seconds;
	pl->considered = pl->valid = 1;
	if (f->ttm) {
		/* the form says so: wherever the kernel takes the problem,
		 * unless $TCX_TTM forbids it */
		plan_ttm(p, &pl->model, dev, INFINITY, planner_env_ttm() == 0 ? 0 : 1, &pl->ttm);
		if (!pl->ttm.applies) {
			contraction_free(v.merged);
			memset(pl, 0, sizeof(*pl));
			return tcx_fail(err, TCX_EREJECT,
					"form '%s' does not apply: the tensor-times-matrix kernel "
					"does not take this problem%s",
					name, planner_env_ttm() == 0 ? " ($TCX_TTM is 0)" : "");
		}
		pl->ttm.on = true;
	}
	pl->merged = v.merged;
	pl->map = v.map;
	pl->tp = v.tp;
	pl->kp = v.kp;
	pl->form = *f;
	pl->form.on = true;
	pl->plan_s = now_s() - t0;
	return TCX_OK;
}

bool planner_env_off(void)
{
	const char *e = getenv("TCX_PLANNER");

	return e && strcmp(e, "0") == 0;
}

unsigned planner_env_flags(void)
{
	const char *e = getenv("TCX_PLANNER");

	if (e && strcmp(e, "ttgt") == 0)
		return PLAN_PERMUTE_ONLY;
	if (e && strcmp(e, "simt") == 0)
		return PLAN_PERMUTE | PLAN_SIMT;
	return PLAN_PERMUTE;
}

void plan_release(struct plan_result *pl)
{
	if (!pl)
		return;
	contraction_free(pl->merged);
	pl->merged = NULL;
}

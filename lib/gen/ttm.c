/* ttm.c - plans, sources and launches of the tensor-times-matrix kernel
 * (kernels/opencl/ttm.cl): which operand is the matrix, the kernel's slots
 * (q, r, k, j and the folded indices), the tile and the grid. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "gen/ttm.h"

/* Work-items of a work-group where the device takes them. */
#define TTM_THREADS 256

#define REJECT(...) return tcx_fail(err, TCX_EREJECT, __VA_ARGS__)

/* The index of tensor t with the smallest stride among those of size > 1
 * that `want` accepts (by id; NULL: all), or -1. */
static int fastest_of(const struct problem *p, enum tensor_role t, const bool *want)
{
	const struct tcx_contraction *c = p->c;
	int best = -1;

	for (int k = 0; k < c->rank[t]; k++) {
		const int id = c->written[t][k];

		if (p->size[id] <= 1 || (want && !want[id]))
			continue;
		if (best < 0 || p->stride[t][id] < p->stride[t][best])
			best = id;
	}
	return best;
}

/* The widest block of q (a multiple of tq, up to 32) whose tiles waste
 * little more of Q than the best fitting one: short blocks cost C's
 * stores their whole lines. */
static int pick_qb(int64_t q, int tq)
{
	double util[4], best = 0;
	int cand[4], n = 0;

	for (int b = 32; b >= 8 && n < 4; b -= 8)
		if (b % tq == 0) {
			cand[n] = b;
			util[n] = (double)q / (double)(gen_ceil_div(q, b) * b);
			best = util[n] > best ? util[n] : best;
			n++;
		}
	for (int i = 0; i < n; i++)
		if (util[i] >= best - 0.1)
			return cand[i];
	return cand[n - 1];
}

/* The block of r and the r of a work-item: where T is read along r (unit
 * a multiple of it, its runs whole 32-byte sectors), the block of such
 * units that wastes least of R, the widest of those with one r a
 * work-item (two only where that wastes less); else as many r as the
 * work-group's other work-items leave room for, spread evenly over R's
 * blocks. */
static void pick_rb(int64_t r, int nr_max, int unit, int *rb, int *tr)
{
	if (unit > 1) {
		int64_t waste = -1;

		*rb = unit;
		*tr = 1;
		for (int t = 1; t <= 2; t++)
			for (int b = unit; b <= t * nr_max; b += unit) {
				const int64_t w = gen_ceil_div(r, b) * b - r;

				if (b % t != 0 || b / t > nr_max)
					continue;
				if (waste < 0 || w < waste || (w == waste && b > *rb && t == *tr)) {
					waste = w;
					*rb = b;
					*tr = t;
				}
			}
		return;
	}
	*tr = 1;
	*rb = (int)gen_ceil_div(r, gen_ceil_div(r, nr_max));
}

/* Values of k a chunk: one near 8 that divides K, else 8; where T is read
 * along k, multiples of 8 first (runs of whole 32-byte sectors). */
static int pick_kc(int64_t k, bool along_k)
{
	static const int near8[] = { 8, 6, 10, 4, 12, 14 };
	static const int near16[] = { 8, 16, 24, 12, 6, 10 };
	const int *c = along_k ? near16 : near8;
	int best = c[0];
	int64_t waste = gen_ceil_div(k, best) * best - k;

	for (int i = 1; i < 6 && waste > 0; i++) {
		const int64_t w = gen_ceil_div(k, c[i]) * c[i] - k;

		if (w < waste) {
			waste = w;
			best = c[i];
		}
	}
	return best;
}

enum tcx_status ttm_plan_make(const struct problem *p, const struct device_info *dev,
			      struct ttm_plan *out, struct tcx_error *err)
{
	const struct tcx_contraction *c = p->c;
	const struct dtype_info *ti = dtype_info(c->dtype);
	bool in_t[TCX_MAX_INDICES] = { false };
	int q, r, k = -1, j = -1, es;
	int64_t count_f = 1, t_elems = 1, c_elems = 1;

	memset(out, 0, sizeof(*out));
	if (!ti || (c->dtype != TCX_DTYPE_S && c->dtype != TCX_DTYPE_D))
		REJECT("the tensor-times-matrix kernel takes fp32 and fp64 only");
	if (c->implicit_b)
		REJECT("a one-operand expression has no matrix");
	if (contraction_count(c, IDX_BATCH) > 0)
		REJECT("the tensor-times-matrix kernel takes no batch index");
	if (contraction_count(c, IDX_BOUND) != 1)
		REJECT("the tensor-times-matrix kernel sums one index, not %d",
		       contraction_count(c, IDX_BOUND));
	if (problem_empty_index(p) >= 0)
		REJECT("an empty problem needs no kernel");
	for (int id = 0; id < c->nidx; id++)
		if (c->idx[id].cls == IDX_BOUND)
			k = id;
	/* the matrix: an operand of the summed index and one free index that
	 * does not move fastest in C (that one must be T's) */
	q = fastest_of(p, T_C, NULL);
	for (int x = 0; x < 2 && j < 0; x++) {
		const enum tensor_role m = x == 0 ? T_B : T_A;
		const int o = c->written[m][0] == k ? c->written[m][1] : c->written[m][0];

		if (c->rank[m] != 2 || c->rank[m == T_A ? T_B : T_A] < 2 || o == q)
			continue;
		out->mat = m;
		out->big = m == T_A ? T_B : T_A;
		j = o;
	}
	if (j < 0)
		REJECT("no operand is a matrix of the summed index and a free index other than "
		       "C's fastest");
	if (q < 0)
		q = c->written[T_C][0] == j ? c->written[T_C][1] : c->written[T_C][0];
	for (int x = 0; x < c->rank[out->big]; x++) {
		const int id = c->written[out->big][x];

		in_t[id] = id != k && id != q;
		t_elems *= p->size[id];
	}
	for (int x = 0; x < c->rank[T_C]; x++)
		c_elems *= p->size[c->written[T_C][x]];
	/* r: T's fastest where that is neither q nor k, else its fastest other
	 * free index */
	r = fastest_of(p, out->big, NULL);
	if (r < 0 || !in_t[r])
		r = fastest_of(p, out->big, in_t);

	es = ti->bytes;
	out->dtype = c->dtype;
	snprintf(out->lang, sizeof(out->lang), "%s", dev && dev->lang[0] ? dev->lang : "opencl");
	out->dim[TTM_Q] = q;
	out->dim[TTM_R] = r;
	out->dim[TTM_K] = k;
	out->dim[TTM_J] = j;
	out->nslots = TTM_FOLD;
	for (int x = 0; x < c->rank[out->big]; x++) {
		const int id = c->written[out->big][x];

		if (in_t[id] && id != r && p->size[id] > 1)
			out->dim[out->nslots++] = id;
	}
	out->nfold = out->nslots - TTM_FOLD;
	for (int s = 0; s < out->nslots; s++) {
		const int id = out->dim[s];

		out->size[s] = id >= 0 ? p->size[id] : 1;
		out->st[s] = id >= 0 && s != TTM_J ? p->stride[out->big][id] : 0;
		out->sc[s] = id >= 0 && s != TTM_K ? p->stride[T_C][id] : 0;
		if (s >= TTM_FOLD || s == TTM_R)
			count_f *= out->size[s];
	}
	out->sm_j = p->stride[out->mat][j];
	out->sm_k = p->stride[out->mat][k];
	{
		int64_t best = INT64_MAX;

		for (int s = TTM_Q; s <= TTM_K; s++)
			if (out->dim[s] >= 0 && out->size[s] > 1 && out->st[s] < best) {
				best = out->st[s];
				out->fast = s; /* TTM_Q, TTM_R, TTM_K: 0, 1, 2 */
			}
	}

	/* the tile */
	{
		const int64_t Q = out->size[TTM_Q], R = out->size[TTM_R], J = out->size[TTM_J];
		const int64_t K = out->size[TTM_K];
		const int64_t jt = J < 32 ? J : 32;
		const int64_t jb0 = gen_ceil_div(J, gen_ceil_div(J, jt));
		int nq, nj, nr, nr_max, tj;
		int64_t rblocks;

		out->tq = 16 / es;
		out->qb = pick_qb(Q, out->tq);
		nq = out->qb / out->tq;
		out->jblocks = gen_ceil_div(J, jb0);
		/* j a work-item: 12 where q's block is 24, else 6 (on an H200 the
		 * three intensli cases with q of 48 ran 6-14% faster with 12, two
		 * with q of 96 9% slower; bench/results/2026-11-27-h200-ttm.md) */
		tj = out->qb == 24 ? 12 : 6;
		nj = (int)gen_ceil_div(jb0, tj);
		out->tj = (int)gen_ceil_div(jb0, nj);
		out->jb = nj * out->tj;
		nr_max = TTM_THREADS / (nq * nj);
		if (dev && dev->max_wg_size > 0 && nq * nj * nr_max > dev->max_wg_size)
			nr_max = dev->max_wg_size / (nq * nj);
		if (nr_max < 1)
			return tcx_fail(err, TCX_ELIMIT,
					"the tensor-times-matrix kernel's work-group of %d work-items "
					"exceeds the device's %d",
					nq * nj, dev ? dev->max_wg_size : 0);
		pick_rb(R, nr_max, out->fast == TTM_R ? 32 / es : 1, &out->rb, &out->tr);
		nr = out->rb / out->tr;
		rblocks = gen_ceil_div(R, out->rb);
		out->threads = nq * nr * nj;
		out->kc = pick_kc(K, out->fast == TTM_K);
		/* with 6 j a work-item, chunks of 12 where 12 divides the sum
		 * (+1-5% there; with 12 j the registers made them 25% slower) */
		if (tj == 6 && K % 12 == 0)
			out->kc = 12;
		/* CUDA: four chunks in flight by cp.async (three loading while
		 * one is multiplied) and no launch bound on the registers; on an
		 * H200 both ran TCCG's tensor-times-matrix cases fastest of
		 * 1-4 stages and 0-4 work-groups an SM
		 * (bench/results/2026-11-27-h200-ttm.md) */
		/* the cp.async ring is CUDA's (HIP compiles the CUDA dialect
		 * without it: one stage); fewer stages where the device's local
		 * memory does not hold four */
		out->stages = strcmp(out->lang, "cuda") == 0 &&
				      !(dev && strcmp(dev->backend, "hip") == 0)
				  ? 4
				  : 1;
		for (;;) {
			out->lds_bytes = (int64_t)out->stages *
					 ((int64_t)out->kc * (out->rb * (out->qb + 4) + 4) +
					  (int64_t)out->kc * out->jb) *
					 es;
			if (!dev || dev->local_mem <= 0 || out->lds_bytes <= dev->local_mem)
				break;
			if (out->stages > 2) {
				out->stages--;
				continue;
			}
			return tcx_fail(err, TCX_ELIMIT,
					"the tensor-times-matrix kernel's %lld bytes of local memory "
					"exceed the device's %lld",
					(long long)out->lds_bytes, (long long)dev->local_mem);
		}
		out->groups[0] = out->jblocks * gen_ceil_div(Q, out->qb);
		out->groups[1] = rblocks;
		out->groups[2] = 1;
		for (int s = TTM_FOLD; s < out->nslots; s++)
			out->groups[2] *= out->size[s];
		out->util = (double)(Q * R * J * K) /
			    ((double)gen_ceil_div(Q, out->qb) * out->qb * (double)rblocks * out->rb *
			     (double)out->jblocks * out->jb * (double)gen_ceil_div(K, out->kc) * out->kc);
		out->flops = 2.0 * (double)Q * (double)count_f * (double)J * (double)K / out->util;
		out->bytes = (double)es * ((double)t_elems + (double)(J * K) + (double)c_elems);
	}
	/* the kernel's sizes, grid and offsets within a T box are 32-bit */
	for (int s = 0; s < out->nslots; s++)
		if (out->size[s] > INT32_MAX)
			REJECT("an index of %lld exceeds the tensor-times-matrix kernel's 32-bit "
			       "sizes",
			       (long long)out->size[s]);
	if ((double)out->groups[0] * (double)out->groups[1] * (double)out->groups[2] >=
	    2147483647.0)
		REJECT("the tensor-times-matrix kernel's grid exceeds 2^31 work-groups");
	{
		const double span = (double)(out->qb - 1) * (double)out->st[TTM_Q] +
				    (double)(out->rb - 1) * (double)out->st[TTM_R] +
				    (double)(out->kc - 1) * (double)out->st[TTM_K];

		const double mspan = (double)(out->size[TTM_J] - 1) * (double)out->sm_j +
				     (double)(out->size[TTM_K] - 1) * (double)out->sm_k;

		if (span >= 2147483647.0 || mspan >= 2147483647.0)
			REJECT("the operands' strides put a tile of the tensor-times-matrix kernel "
			       "beyond 32-bit offsets");
	}
	/* vectors of C: q of unit stride, every other stride a multiple of the
	 * vector (the kernel checks the base) */
	out->vec = out->tq > 1 && out->sc[TTM_Q] == 1;
	for (int s = TTM_R; s < out->nslots && out->vec; s++)
		out->vec = out->sc[s] % out->tq == 0;
	out->local[0] = (size_t)out->threads;
	out->local[1] = out->local[2] = 1;
	return plan_grid(out->groups, out->local, dev, out->global, err);
}

enum tcx_status ttm_plan_any(const struct problem *p, const struct device_info *dev,
			     struct ttm_plan *out, struct tcx_error *err)
{
	struct tcx_error why = { 0 };
	struct ttv_plan v;
	enum tcx_status st = ttm_plan_make(p, dev, out, &why);

	if (st != TCX_EREJECT) {
		if (st && err)
			*err = why;
		return st;
	}
	if (ttv_plan_make(p, dev, &v, NULL) != TCX_OK) {
		if (err)
			*err = why;
		return st;
	}
	memset(out, 0, sizeof(*out));
	out->vector = true;
	out->v = v;
	out->dtype = v.dtype;
	out->big = v.big;
	out->mat = v.vec;
	out->flops = v.flops;
	out->bytes = v.bytes;
	out->util = v.util;
	out->jblocks = 1;
	memcpy(out->lang, v.lang, sizeof(out->lang));
	return TCX_OK;
}

size_t ttm_workspace_bytes(const struct ttm_plan *t)
{
	return t->vector ? ttv_workspace_bytes(&t->v) : 0;
}

enum tcx_status ttm_ready(const struct ttm_plan *t, struct device *dev, struct program *prog,
			  struct tcx_error *err)
{
	return t->vector ? ttv_ready(&t->v, dev, prog, err)
			 : device_kernel_ready(dev, prog, TCX_TTM_NAME, err);
}

const char *ttm_kernel(const struct ttm_plan *t)
{
	return t->vector ? "the tensor-times-vector kernel" : "the tensor-times-matrix kernel";
}

enum tcx_status ttm_source(const struct ttm_plan *t, struct strbuf *src, struct strbuf *opts,
			   struct tcx_error *err)
{
	enum tcx_status st;

	if (t->vector)
		return ttv_source(&t->v, src, opts, err);
	strbuf_addf(src, "/* tcx %s tensor-times-matrix kernel */\n", tcx_version());
	if (strcmp(t->lang, "cuda") == 0)
		strbuf_adds(src, "#define TCX_LANG_CUDA 1\n");
	strbuf_addf(src,
		    "#define TTM_DOUBLE %d\n#define TTM_QB %d\n#define TTM_TQ %d\n"
		    "#define TTM_RB %d\n#define TTM_TR %d\n#define TTM_JB %d\n#define TTM_TJ %d\n"
		    "#define TTM_KC %d\n#define TTM_FAST %d\n#define TTM_VEC %d\n#define TTM_KFULL %d\n"
		    "#define TTM_STAGES %d\n",
		    t->dtype == TCX_DTYPE_D, t->qb, t->tq, t->rb, t->tr, t->jb, t->tj, t->kc,
		    t->fast, t->vec, t->size[TTM_K] % t->kc == 0, t->stages);
	st = strbuf_status(src, err);
	return st ? st : kernel_assemble_family("opencl/ttm.cl", t->lang, src, opts, err);
}

enum tcx_status ttm_build(const struct ttm_plan *t, struct device *dev, struct program **prog,
			  double *compile_s, struct strbuf *log, struct tcx_error *err)
{
	struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
	enum tcx_status st;

	*prog = NULL;
	st = ttm_source(t, &src, &opts, err);
	if (!st)
		st = device_build(dev, src.buf, src.len, strbuf_str(&opts), prog, compile_s, log,
				  err);
	strbuf_release(&src);
	strbuf_release(&opts);
	return st;
}

enum tcx_status ttm_launch(const struct ttm_plan *t, struct device *dev, struct program *prog,
			   struct buffer *a, struct buffer *b, struct buffer *c, struct buffer *ws,
			   const double alpha[2], const double beta[2], double *event_ms,
			   struct tcx_error *err)
{
	struct tcx_ttm_args args;
	struct launch l;
	const float af = (float)alpha[0], bf = (float)beta[0];
	const bool d = t->dtype == TCX_DTYPE_D;

	if (t->vector)
		return ttv_launch(&t->v, dev, prog, a, b, c, ws, alpha, beta, event_ms, err);
	if (event_ms)
		*event_ms = 0;
	memset(&args, 0, sizeof(args));
	for (int s = 0; s < t->nslots; s++) {
		args.size[s] = t->size[s];
		args.st[s] = t->st[s];
		args.sc[s] = t->sc[s];
	}
	args.sm_j = t->sm_j;
	args.sm_k = t->sm_k;
	args.nfold = t->nfold;
	args.jblocks = t->jblocks;
	memcpy(args.groups, t->groups, sizeof(args.groups));
	launch_init(&l, TCX_TTM_NAME);
	memcpy(l.local, t->local, sizeof(l.local));
	memcpy(l.global, t->global, sizeof(l.global));
	/* the parameters in common/abi.h's order */
	launch_arg_buffer(&l, c);
	launch_arg_buffer(&l, t->big == T_A ? a : b);
	launch_arg_buffer(&l, t->big == T_A ? b : a);
	launch_arg_bytes(&l, &args, sizeof(args));
	launch_arg_bytes(&l, d ? (const void *)&alpha[0] : (const void *)&af, d ? 8 : 4);
	launch_arg_bytes(&l, d ? (const void *)&beta[0] : (const void *)&bf, d ? 8 : 4);
	if (strcmp(t->lang, "cuda") == 0)
		launch_arg_local(&l, (size_t)t->lds_bytes);
	return device_launch(dev, prog, &l, event_ms, err);
}

void ttm_plan_str(const struct ttm_plan *t, const struct tcx_contraction *c, char *buf,
		  size_t len)
{
	const char *name[4];

	if (t->vector) {
		ttv_plan_str(&t->v, c, buf, len);
		return;
	}
	for (int s = 0; s < 4; s++)
		name[s] = t->dim[s] >= 0 ? c->idx[t->dim[s]].name : "-";
	snprintf(buf, len,
		 "C along %s, T along %s, summing %s against %s; tile %dx%dx%d (%dx%dx%d a "
		 "work-item), %d of %s a chunk, %d work-items",
		 name[TTM_Q], name[t->fast == 0 ? TTM_Q : t->fast == 1 ? TTM_R : TTM_K],
		 name[TTM_K], name[TTM_J], t->qb, t->rb, t->jb, t->tq, t->tr, t->tj, t->kc,
		 name[TTM_K], t->threads);
}

/* run.c - preparing kernels, running them on host arrays, test data, and
 * validation against the host reference with a type-aware error bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host/host.h"
#include "plan/arith.h"
#include "plan/planner.h"
#include "run/run.h"

/* contract_prepare, which with `build` false plans the kernel but builds
 * nothing (out->prog stays NULL): for a plan whose tensor-times-matrix
 * kernel runs instead. */
static enum tcx_status prepare(struct device *dev, const struct tcx_contraction *c,
			       const struct problem *p, const struct solution *s, bool build,
			       struct prepared *out, struct strbuf *log, struct tcx_error *err)
{
	struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	out->host = device_is_host(dev);
	out->kp = p;
	out->empty = p && problem_empty_index(p) >= 0;
	if (out->host || out->empty) {
		out->plan.c = c;
		out->plan.sol = *s;
		return TCX_OK;
	}
	st = plan_make(c, p, s, device_info_of(dev), &out->plan, err);
	if (!st && p)
		st = plan_accepts(&out->plan, p, err);
	if (!st && build)
		st = plan_source(&out->plan, &src, &opts, err);
	if (!st && build)
		st = device_build(dev, src.buf, src.len, strbuf_str(&opts), &out->prog,
				  &out->compile_s, log, err);
	strbuf_release(&src);
	strbuf_release(&opts);
	return st;
}

enum tcx_status contract_prepare(struct device *dev, const struct tcx_contraction *c,
				 const struct problem *p, const struct solution *s,
				 struct prepared *out, struct strbuf *log, struct tcx_error *err)
{
	return prepare(dev, c, p, s, true, out, log, err);
}

/* Plans and builds permute k of pr (prepared.perm) for tensor t: from
 * layout `from` into `to`. */
static enum tcx_status prepare_permute(struct device *dev, struct prepared *pr, int k,
				       enum tensor_role t, const struct problem *from,
				       const struct problem *to, struct strbuf *log,
				       struct tcx_error *err)
{
	struct prepared_permute *pp = &pr->perm[k];
	enum tcx_status st;

	st = permute_plan_tensor(from, t, to->stride[t], device_info_of(dev), &pp->plan, err);
	if (!st)
		st = permute_build(&pp->plan, dev, &pp->prog, log, err);
	pp->on = !st;
	return st;
}

enum tcx_status contract_prepare_permutes(struct device *dev, struct prepared *pr,
					  const struct problem *p, const struct problem *tp,
					  const bool which[3], struct strbuf *log,
					  struct tcx_error *err)
{
	const size_t es = (size_t)dtype_info(p->c->dtype)->bytes;
	enum tcx_status st = TCX_OK;

	if (pr->host || pr->empty)
		return TCX_OK;
	for (int x = 0; x < 3 && !st; x++) {
		const enum tensor_role t = x == 0 ? T_A : x == 1 ? T_B : T_C;

		if (!which[x])
			continue;
		if (t == T_C) {
			st = prepare_permute(dev, pr, PERM_C_OUT, t, tp, p, log, err);
			if (!st)
				st = prepare_permute(dev, pr, PERM_C_IN, t, p, tp, log, err);
		} else {
			st = prepare_permute(dev, pr, x, t, p, tp, log, err);
		}
		if (!st)
			st = buffer_alloc(dev, (size_t)tp->extent[t] * es, &pr->perm[x].copy, err);
	}
	if (st)
		contract_release(dev, pr);
	return st;
}

enum tcx_status contract_prepare_plan(struct device *dev, const struct problem *p,
				      const struct plan_result *pl, const struct solution *s,
				      struct prepared *pr, struct strbuf *log,
				      struct tcx_error *err)
{
	const struct problem *kp = pl ? &pl->kp : p;
	/* the tensor-times-matrix kernel runs alone: the contraction kernel is
	 * planned (for what describes the choice) but not built */
	enum tcx_status st = prepare(dev, kp->c, kp, s, !(pl && pl->ttm.on), pr, log, err);
	bool which[3] = { false, false, false };

	/* the tensor-times-matrix kernel runs alone: no permutes, no copies */
	for (int x = 0; pl && !pl->ttm.on && x < 3; x++)
		which[x] = pl->best.permute[x].on;
	if (!st && (which[0] || which[1] || which[2]))
		st = contract_prepare_permutes(dev, pr, p, &pl->tp, which, log, err);
	if (!st && pl && pl->direct.on && !pr->host && !pr->empty) {
		struct prepared_permute *pp = &pr->perm[PERM_DIRECT];

		pp->plan = pl->direct.plan;
		st = permute_build(&pp->plan, dev, &pp->prog, log, err);
		pp->on = !st;
		if (st)
			contract_release(dev, pr);
	}
	if (!st && pl && pl->ttm.on && !pr->host && !pr->empty) {
		pr->ttm.plan = pl->ttm.plan;
		st = ttm_build(&pr->ttm.plan, dev, &pr->ttm.prog, &pr->compile_s, log, err);
		pr->ttm.on = !st;
		if (st)
			contract_release(dev, pr);
	}
	return st;
}

enum arith contract_arith(const struct prepared *pr, enum tcx_dtype t, const struct solution *s)
{
	struct solution simt;

	if (!pr->ttm.on)
		return arith_of(t, s);
	solution_default(&simt);
	return arith_of(t, &simt);
}

size_t contract_workspace_bytes(const struct prepared *pr, const struct problem *p)
{
	if (pr->host || pr->empty)
		return 0;
	return pr->ttm.on ? ttm_workspace_bytes(&pr->ttm.plan) : plan_workspace_bytes(&pr->plan, p);
}

bool contract_direct(const struct prepared *pr, const double alpha[2], const double beta[2])
{
	return pr->perm[PERM_DIRECT].on && alpha[0] == 1 && alpha[1] == 0 && beta[0] == 0 &&
	       beta[1] == 0;
}

enum tcx_status contract_ready(struct device *dev, const struct prepared *pr,
			       struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;

	if (pr->host || pr->empty)
		return TCX_OK;
	if (pr->prog)
		st = device_kernel_ready(dev, pr->prog, TCX_CONTRACT_NAME, err);
	if (!st && pr->prog && pr->plan.sol.gsu > 1)
		st = device_kernel_ready(dev, pr->prog, TCX_REDUCE_NAME, err);
	for (int k = 0; k < PERM_COUNT && !st; k++)
		if (pr->perm[k].on)
			st = device_kernel_ready(dev, pr->perm[k].prog, TCX_PERMUTE_NAME, err);
	if (!st && pr->ttm.on)
		st = ttm_ready(&pr->ttm.plan, dev, pr->ttm.prog, err);
	return st;
}

enum tcx_status contract_launch(struct device *dev, const struct prepared *pr,
				const struct problem *p, struct buffer *a, struct buffer *b,
				struct buffer *c, struct buffer *ws, const double alpha[2],
				const double beta[2], double *event_ms, struct tcx_error *err)
{
	const struct prepared_permute *pc = &pr->perm[PERM_C_OUT];
	struct buffer *in[3] = { a, b, c };
	double ms = 0, part = 0;
	enum tcx_status st = TCX_OK;

	if (pr->ttm.on)
		return ttm_launch(&pr->ttm.plan, dev, pr->ttm.prog, a, b, c, ws, alpha, beta,
				  event_ms, err);
	if (contract_direct(pr, alpha, beta)) {
		const struct prepared_permute *pd = &pr->perm[PERM_DIRECT];

		return permute_launch(&pd->plan, dev, pd->prog, a, 0, c, 0, event_ms, err);
	}
	for (int x = 0; x < 2 && !st; x++) {
		const struct prepared_permute *pp = &pr->perm[x];

		if (!pp->on)
			continue;
		st = permute_launch(&pp->plan, dev, pp->prog, in[x], 0, pp->copy, 0,
				    event_ms ? &part : NULL, err);
		ms += part;
		in[x] = pp->copy;
	}
	if (pc->on) {
		const struct prepared_permute *pi = &pr->perm[PERM_C_IN];

		/* the kernel adds beta * C to its products: C's copy needs C */
		if (!st && (beta[0] != 0 || beta[1] != 0)) {
			st = permute_launch(&pi->plan, dev, pi->prog, c, 0, pc->copy, 0,
					    event_ms ? &part : NULL, err);
			ms += part;
		}
		in[2] = pc->copy;
	}
	if (!st) {
		st = plan_launch(&pr->plan, dev, pr->prog, pr->kp ? pr->kp : p, in[0], in[1], in[2],
				 ws, alpha, beta, event_ms ? &part : NULL, err);
		ms += st ? 0 : part;
	}
	if (!st && pc->on) {
		st = permute_launch(&pc->plan, dev, pc->prog, pc->copy, 0, c, 0,
				    event_ms ? &part : NULL, err);
		ms += part;
	}
	if (event_ms)
		*event_ms = ms;
	return st;
}

void contract_release(struct device *dev, struct prepared *pr)
{
	for (int k = 0; k < PERM_COUNT; k++) {
		buffer_free(dev, pr->perm[k].copy);
		pr->perm[k].copy = NULL;
		pr->perm[k].on = false;
	}
	pr->ttm.on = false;
}

/* The poison pattern: a quiet NaN with a payload no arithmetic produces. */
static void poison_fill(enum tcx_dtype t, void *data, int64_t n)
{
	const struct dtype_info *d = dtype_info(t);
	int64_t words = n * (d->complex ? 2 : 1);

	switch (d->real_bytes) {
	case 2:
		for (int64_t k = 0; k < words; k++)
			((uint16_t *)data)[k] = t == TCX_DTYPE_B ? 0x7fc5 : 0x7e5a;
		break;
	case 4:
		for (int64_t k = 0; k < words; k++)
			((uint32_t *)data)[k] = 0x7fc5a5a5u;
		break;
	default:
		for (int64_t k = 0; k < words; k++)
			((uint64_t *)data)[k] = 0x7ff8a5a5a5a5a5a5ull;
		break;
	}
}

static bool is_poison(enum tcx_dtype t, const void *data, int64_t off)
{
	const struct dtype_info *d = dtype_info(t);
	int64_t w = off * (d->complex ? 2 : 1);

	switch (d->real_bytes) {
	case 2:
		return ((const uint16_t *)data)[w] == (t == TCX_DTYPE_B ? 0x7fc5 : 0x7e5a);
	case 4:
		return ((const uint32_t *)data)[w] == 0x7fc5a5a5u;
	default:
		return ((const uint64_t *)data)[w] == 0x7ff8a5a5a5a5a5a5ull;
	}
}

enum tcx_status contract_host_arrays(struct device *dev, const struct prepared *pr,
				     const struct problem *p, const void *a, const void *b,
				     const void *c_in, void *c_out, const double alpha[2],
				     const double beta[2], bool poison, double *event_ms,
				     struct tcx_error *err)
{
	size_t esz = (size_t)dtype_info(p->c->dtype)->bytes;
	size_t na = (size_t)p->extent[T_A] * esz, nb = (size_t)p->extent[T_B] * esz;
	size_t nc = (size_t)p->extent[T_C] * esz, nws;
	struct buffer *ba = NULL, *bb = NULL, *bc = NULL, *bw = NULL;
	void *tmp = NULL, *ones = NULL;
	enum tcx_status st;

	if (event_ms)
		*event_ms = 0;
	if (!b && p->c->implicit_b) {
		b = ones = run_make_tensor(p, T_B, INIT_ONES, 0, err);
		if (!ones)
			return err && err->code ? err->code : TCX_ENOMEM;
	}
	if (pr->host || pr->empty) {
		double t0 = common_now_seconds();

		if (c_out != c_in && nc)
			memcpy(c_out, c_in, nc);
		st = host_contract(p, a, b, c_out, alpha, beta, 0, err);
		if (event_ms)
			*event_ms = (common_now_seconds() - t0) * 1e3;
		free(ones);
		return st;
	}
	nws = contract_workspace_bytes(pr, p);
	st = buffer_alloc(dev, na, &ba, err);
	if (!st)
		st = buffer_alloc(dev, nb, &bb, err);
	if (!st)
		st = buffer_alloc(dev, nc, &bc, err);
	if (!st && nws)
		st = buffer_alloc(dev, nws, &bw, err);
	if (st)
		goto out;
	st = buffer_write(dev, ba, 0, a, na, err);
	if (!st)
		st = buffer_write(dev, bb, 0, b, nb, err);
	if (st)
		goto out;
	if (poison) {
		tmp = malloc(nc);
		if (!tmp) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out;
		}
		poison_fill(p->c->dtype, tmp, p->extent[T_C]);
		st = buffer_write(dev, bc, 0, tmp, nc, err);
	} else {
		st = buffer_write(dev, bc, 0, c_in, nc, err);
	}
	if (st)
		goto out;
	st = contract_launch(dev, pr, p, ba, bb, bc, bw, alpha, beta, event_ms, err);
	if (!st)
		st = device_finish(dev, err);
	if (!st)
		st = buffer_read(dev, bc, 0, c_out, nc, err);
out:
	free(tmp);
	free(ones);
	buffer_free(dev, ba);
	buffer_free(dev, bb);
	buffer_free(dev, bc);
	buffer_free(dev, bw);
	return st;
}

static const char *const init_names[] = { "random", "serial", "ones", "zeros", "nan" };

bool init_parse(const char *s, enum init_kind *out)
{
	for (int k = 0; k < (int)ARRAY_SIZE(init_names); k++)
		if (strcmp(s, init_names[k]) == 0) {
			*out = (enum init_kind)k;
			return true;
		}
	return false;
}

const char *init_name(enum init_kind k)
{
	return init_names[k];
}

void run_fill_data(enum tcx_dtype t, void *data, int64_t n, enum init_kind k, uint64_t seed,
		   uint64_t stream)
{
	struct pcg32 rng;

	pcg32_seed(&rng, seed, stream);
	for (int64_t e = 0; e < n; e++) {
		double re = 0, im = 0;

		switch (k) {
		case INIT_RANDOM:
			re = 2 * pcg32_double(&rng) - 1;
			im = 2 * pcg32_double(&rng) - 1;
			break;
		case INIT_SERIAL:
			/* small integers, exact in every type */
			re = (double)(e % 17) - 8;
			im = (double)(e % 5) - 2;
			break;
		case INIT_ONES:
			re = 1;
			break;
		case INIT_ZEROS:
			break;
		case INIT_NAN:
			re = im = NAN;
			break;
		}
		host_elem_set(t, data, e, re, im);
	}
}

void *run_make_tensor(const struct problem *p, enum tensor_role t, enum init_kind k, uint64_t seed,
		      struct tcx_error *err)
{
	size_t n = (size_t)p->extent[t], esz = (size_t)dtype_info(p->c->dtype)->bytes;
	void *data;

	if (p->extent[t] < 0 || n > SIZE_MAX / esz) {
		tcx_fail(err, TCX_ERANGE, "tensor too large for this host");
		return NULL;
	}
	data = malloc(n * esz > 0 ? n * esz : 1);
	if (!data) {
		tcx_fail(err, TCX_ENOMEM, "cannot allocate %zu bytes for a tensor", n * esz);
		return NULL;
	}
	/* a one-operand contraction's B is ones, whatever the data asked for */
	run_fill_data(p->c->dtype, data, (int64_t)n, t == T_B && p->c->implicit_b ? INIT_ONES : k,
		      seed, (uint64_t)t + 1);
	return data;
}

void validate_opts_default(struct validate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->init = INIT_RANDOM;
	o->seed = 1;
	o->alpha[0] = 1;
	o->beta[0] = 0;
	o->rtol = o->atol = -1;
	o->sample = (int64_t)1 << 24;
	o->max_work = (int64_t)1 << 32;
	o->max_report = 10;
}

/* The linear indices to compare: all, or n spread evenly (first and last
 * included). */
static int64_t *pick_sample(int64_t total, int64_t n)
{
	int64_t *lin = malloc(((size_t)n + 1) * sizeof(*lin));

	if (!lin)
		return NULL;
	if (n >= total) {
		for (int64_t k = 0; k < total; k++)
			lin[k] = k;
		return lin;
	}
	for (int64_t k = 0; k < n; k++)
		lin[k] = n > 1 ? (int64_t)((double)k * (double)(total - 1) / (double)(n - 1)) : 0;
	return lin;
}

/* How many of C's `total` elements to compare: at most `sample`, fewer
 * where their reference would take more than max_work multiply-adds of
 * nprod each, but never fewer than 1024 (or all). */
static int64_t sample_count(int64_t total, int64_t nprod, int64_t sample, int64_t max_work)
{
	int64_t n = total;

	if (n > sample)
		n = sample;
	if (max_work > 0 && nprod > 0 && n > max_work / nprod)
		n = max_work / nprod;
	if (n < 1 && total > 0)
		n = 1;
	if (n < total && n < 1024)
		n = total < 1024 ? total : 1024;
	return n;
}

/* The host reference at n of C's elements spread over it: their linear
 * positions into *lin and, for each, its real and imaginary parts and the
 * magnitude of its products (host_reference_at) into *ref; both the
 * caller's to free, also on failure. */
static enum tcx_status reference_sample(const struct problem *p, const void *a, const void *b,
					const void *c_in, const double alpha[2],
					const double beta[2], int threads, int64_t n, int64_t **lin,
					double **ref, struct tcx_error *err)
{
	*lin = pick_sample(problem_count(p, T_C), n);
	*ref = malloc(((size_t)n + 1) * 3 * sizeof(**ref));
	if (!*lin || !*ref)
		return tcx_fail(err, TCX_ENOMEM, "out of memory for the reference");
	return host_reference_at(p, a, b, c_in, *lin, (size_t)n, alpha, beta, *ref, threads, err);
}

/* The relative error of one element (plan/arith.h), e over the magnitude of
 * its products, folded into the largest so far: infinity for a NaN. */
static void fold_err_mag(double *worst, double e, double mag)
{
	const double rel = mag > 0 ? e / mag : (e > 0 ? INFINITY : 0);

	if (isnan(rel) || rel > *worst)
		*worst = isnan(rel) ? INFINITY : rel;
}

static double unit_roundoff_acc(enum tcx_dtype t)
{
	return t == TCX_DTYPE_D || t == TCX_DTYPE_Z ? ldexp(1.0, -53) : ldexp(1.0, -24);
}

static double min_normal_out(enum tcx_dtype t)
{
	switch (t) {
	case TCX_DTYPE_D:
	case TCX_DTYPE_Z:
		return 2.2250738585072014e-308;
	case TCX_DTYPE_H:
		return ldexp(1.0, -14);
	default:
		return ldexp(1.0, -126);
	}
}

/* Checks that C's elements of a strided layout are the only offsets the
 * kernel wrote: every other offset in C's span keeps its initial value. */
static int64_t count_gap_writes(const struct problem *p, const void *before, const void *after)
{
	size_t esz = (size_t)dtype_info(p->c->dtype)->bytes;
	int64_t span = p->extent[T_C], count = problem_count(p, T_C), bad = 0;
	unsigned char *is_elem;

	if (span == count || span > ((int64_t)1 << 28))
		return 0;
	is_elem = calloc((size_t)span, 1);
	if (!is_elem)
		return 0;
	for (int64_t e = 0; e < count; e++)
		is_elem[host_c_offset_of(p, e, NULL)] = 1;
	for (int64_t o = 0; o < span; o++)
		if (!is_elem[o] &&
		    memcmp((const char *)before + o * esz, (const char *)after + o * esz, esz) != 0)
			bad++;
	free(is_elem);
	return bad;
}

enum tcx_status validate_run(struct device *dev, const struct prepared *pr,
			     const struct problem *p, const struct validate_opts *o,
			     struct validate_report *r, struct tcx_error *err)
{
	enum tcx_dtype t = p->c->dtype;
	bool beta0 = o->beta[0] == 0 && o->beta[1] == 0;
	void *a = NULL, *b = NULL, *c0 = NULL, *c1 = NULL;
	int64_t *lin = NULL, n;
	double *ref = NULL, t0;
	enum tcx_status st;
	int64_t nprod;

	memset(r, 0, sizeof(*r));
	r->seed = o->seed;
	r->total = problem_count(p, T_C);
	r->products = nprod = problem_bound_volume(p);
	r->u_acc = unit_roundoff_acc(t);
	r->u_out = dtype_info(t)->unit_roundoff;
	/* tensor cores take fp32 operands as tf32 (10 fraction bits, rounded
	 * to nearest): each product then carries up to 2 u_in + u_in^2 more.
	 * TF32x3 takes a = hi + lo, hi rounded to tf32 and lo the rest, which
	 * the tensor cores truncate to tf32, so |a - hi - lo| <= 2^-21 |a|; it
	 * drops lo * lo (<= 2^-22 |a b| more) and accumulates three products
	 * for each: u_in = 1.25 * 2^-21 covers the first two, three times the
	 * products the third.  Plain tf32 that reads Q's tile as it landed
	 * truncates Q (2^-10), P still rounded: u_in = 2^-10 covers both. */
	r->u_in = 0;
	if (!pr->host && pr->plan.mi && t == TCX_DTYPE_S)
		r->u_in = pr->plan.sol.tf32x3	   ? 1.25 * ldexp(1.0, -21)
			  : pr->plan.tf32_trunc_q ? ldexp(1.0, -10)
						  : ldexp(1.0, -11);
	{
		double neff = (dtype_info(t)->complex ? 2.0 : 1.0) * (double)nprod *
				      (!pr->host && pr->plan.sol.tf32x3 ? 3 : 1) +
			      2;
		double g = neff * r->u_acc + 2 * r->u_in + r->u_in * r->u_in;

		r->gamma = g < 0.5 ? g / (1 - g) : 1;
	}
	r->custom_tol = o->rtol >= 0 || o->atol >= 0;
	r->accuracy = r->custom_tol ? 0 : o->accuracy;
	r->rtol = o->rtol < 0 ? 0 : o->rtol;
	r->atol = o->atol < 0 ? 0 : o->atol;
	r->compile_s = pr->compile_s;

	n = r->checked = sample_count(r->total, nprod, o->sample, o->max_work);

	a = run_make_tensor(p, T_A, o->init, o->seed, err);
	b = a ? run_make_tensor(p, T_B, o->init, o->seed, err) : NULL;
	c0 = b ? run_make_tensor(p, T_C, beta0 ? INIT_ZEROS : o->init, o->seed, err) : NULL;
	c1 = c0 ? malloc((size_t)p->extent[T_C] * (size_t)dtype_info(t)->bytes + 1) : NULL;
	if (!c1) {
		st = err && err->code ? err->code : tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	if (beta0)
		poison_fill(t, c0, p->extent[T_C]); /* what the device's C starts as */
	st = contract_host_arrays(dev, pr, p, a, b, c0, c1, o->alpha, o->beta, beta0 && !pr->host,
				  &r->kernel_ms, err);
	if (st)
		goto out;

	t0 = common_now_seconds();
	st = reference_sample(p, a, b, c0, o->alpha, o->beta, o->threads, n, &lin, &ref, err);
	r->reference_s = common_now_seconds() - t0;
	if (st)
		goto out;

	for (int64_t k = 0; k < n; k++) {
		int64_t idx[TCX_MAX_INDICES] = { 0 };
		int64_t off = host_c_offset_of(p, lin[k], idx);
		double gr, gi, wr = ref[3 * k], wi = ref[3 * k + 1], mag = ref[3 * k + 2];
		double e, bound, mag_ref = fabs(wr) + fabs(wi), rel;
		bool unwritten = beta0 && is_poison(t, c1, off);
		bool bad;

		host_elem_get(t, c1, off, &gr, &gi);
		e = fabs(gr - wr) + fabs(gi - wi);
		if (r->custom_tol)
			bound = r->atol + r->rtol * mag_ref;
		else if (r->accuracy > 0)
			bound = r->accuracy * mag;
		else
			bound = r->gamma * mag + r->u_out * mag_ref * 2 +
				(double)(nprod + 2) * min_normal_out(t);
		bad = unwritten || isnan(gr) || isnan(gi) || !(e <= bound);
		if (isnan(gr) || isnan(gi))
			r->nan_results++;
		if (unwritten)
			r->unwritten++;
		rel = mag_ref > 0 ? e / mag_ref : (e > 0 ? INFINITY : 0);
		if (!isnan(e) && (e > r->max_abs || k == 0)) {
			r->max_abs = e;
			r->max_lin = lin[k];
			memcpy(r->max_idx, idx, sizeof(idx));
		}
		if (!isnan(rel) && rel > r->max_rel)
			r->max_rel = rel;
		fold_err_mag(&r->max_err_mag, e, mag);
		if (!bad)
			continue;
		r->mismatches++;
		if (r->nlist < o->max_report && r->nlist < (int)ARRAY_SIZE(r->list)) {
			struct mismatch *m = &r->list[r->nlist++];

			m->lin = lin[k];
			memcpy(m->idx, idx, sizeof(idx));
			m->got[0] = gr;
			m->got[1] = gi;
			m->want[0] = wr;
			m->want[1] = wi;
			m->err = e;
			m->bound = bound;
			m->unwritten = unwritten;
		}
	}
	if (p->explicit_strides)
		r->gap_writes = count_gap_writes(p, c0, c1);
	if (r->mismatches || r->gap_writes)
		st = tcx_fail(err, TCX_EMISMATCH, "%lld of %lld elements differ from the reference%s",
			      (long long)r->mismatches, (long long)r->checked,
			      r->gap_writes ? " and the kernel wrote outside C's elements" : "");
out:
	free(a);
	free(b);
	free(c0);
	free(c1);
	free(lin);
	free(ref);
	return st;
}

enum tcx_status validate_error(struct device *dev, const struct prepared *pr,
			       const struct problem *p, const struct validate_opts *o, double *out,
			       struct tcx_error *err)
{
	struct validate_report *r = malloc(sizeof(*r));
	enum tcx_status st;

	if (!r)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	st = validate_run(dev, pr, p, o, r, err);
	if (st == TCX_EMISMATCH) { /* the accuracy asked decides, not the type's bound */
		st = TCX_OK;
		tcx_error_clear(err);
	}
	*out = r->max_err_mag;
	free(r);
	return st;
}

enum tcx_status run_measure_error(const struct problem *p, const void *a, const void *b,
				  const void *c_in, const void *c_out, const double alpha[2],
				  const double beta[2], const struct validate_opts *o,
				  double *out, int64_t *checked, struct tcx_error *err)
{
	const enum tcx_dtype t = p->c->dtype;
	const int64_t total = problem_count(p, T_C);
	const int64_t n = sample_count(total, problem_bound_volume(p), o->sample, o->max_work);
	int64_t *lin = NULL;
	double *ref = NULL;
	void *ones = NULL;
	enum tcx_status st;

	*out = 0;
	if (checked)
		*checked = n;
	if (n <= 0)
		return TCX_OK;
	if (!b && p->c->implicit_b) {
		b = ones = run_make_tensor(p, T_B, INIT_ONES, 0, err);
		if (!ones)
			return err && err->code ? err->code : TCX_ENOMEM;
	}
	st = reference_sample(p, a, b, c_in, alpha, beta, o->threads, n, &lin, &ref, err);
	if (st)
		goto out;
	for (int64_t k = 0; k < n; k++) {
		const int64_t off = host_c_offset_of(p, lin[k], NULL);
		double gr, gi;

		host_elem_get(t, c_out, off, &gr, &gi);
		fold_err_mag(out, fabs(gr - ref[3 * k]) + fabs(gi - ref[3 * k + 1]), ref[3 * k + 2]);
	}
out:
	free(lin);
	free(ref);
	free(ones);
	return st;
}

enum tcx_status accuracy_search(enum tcx_dtype t, double accuracy, bool fallback,
				accuracy_try_fn try_fn, void *ctx, struct accuracy_outcome *out,
				struct tcx_error *err)
{
	enum arith floor = ARITH_TF32;
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	for (;;) {
		struct accuracy_try *tr = &out->tries[out->ntries];

		st = try_fn(ctx, floor, tr, err);
		if (st)
			return st;
		out->ntries++;
		out->arith = tr->arith;
		out->error = tr->error;
		if (tr->error <= accuracy)
			return TCX_OK;
		if (!fallback)
			return tcx_fail(err, TCX_EMISMATCH,
					"the result's relative error %.3g (%s) is above the accuracy "
					"%.3g asked",
					tr->error, arith_name(tr->arith), accuracy);
		/* the next more accurate arithmetic, once each: a try that ran
		 * no more accurately than the last ends it too */
		if (!arith_next(t, tr->arith, &floor) ||
		    out->ntries >= (int)ARRAY_SIZE(out->tries))
			return tcx_fail(err, TCX_EMISMATCH,
					"the result's relative error %.3g is above the accuracy %.3g "
					"asked even in %s, the most accurate arithmetic %s has",
					tr->error, accuracy, arith_name(tr->arith),
					dtype_info(t)->name);
	}
}

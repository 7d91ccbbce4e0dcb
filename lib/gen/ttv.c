/* ttv.c - plans, sources and launches of the tensor-times-vector kernel
 * (kernels/opencl/ttv.cl): which operand is the vector, the kernel's
 * slots (outputs, then the summed indices, each merged where they move
 * together), the lanes of a work-group and the grid. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "gen/ttv.h"

/* Work-items of a work-group, and the most a GPU's few work-groups widen
 * to along the sum when there are too few to fill its SMs. */
#define TTV_THREADS 256
#define TTV_WIDE    1024
/* Positions of the sum a lane loads at once (ttv.cl's TTV_UNROLL); the
 * work-items of tcx_ttv_reduce's work-groups (TTV_REDUCE_WG); the fewest
 * rounds of TTV_UNROLL positions a lane sums in a part of a split sum,
 * and the most parts. */
#define TTV_UNROLL	   4
#define TTV_REDUCE_THREADS 256
#define TTV_PART_ROUNDS	   8
#define TTV_MAX_SPLIT	   256

#define REJECT(...) return tcx_fail(err, TCX_EREJECT, __VA_ARGS__)

struct slot {
	int id;
	int64_t n, st, sv, sc;
};

/* Half the work-items a GPU's SMs hold (2048 each): below that too few
 * loads are in flight for its memory's rate. */
static int64_t half_slots(const struct device_info *dev)
{
	return (int64_t)(dev->compute_units > 0 ? dev->compute_units : 1) * 1024;
}

static int pow2_at_least(int64_t n, int cap)
{
	int p = 1;

	while (p < n && p < cap)
		p *= 2;
	return p;
}

/* Sorts s[0..n) by T's stride (insertion: a handful of slots), then
 * merges each slot into the one before where it continues it in T, V and
 * C alike; returns the slots left. */
static int sort_merge(struct slot *s, int n)
{
	int m = 0;

	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && s[j].st < s[j - 1].st; j--) {
			const struct slot x = s[j];

			s[j] = s[j - 1];
			s[j - 1] = x;
		}
	for (int i = 0; i < n; i++) {
		struct slot *prev = m ? &s[m - 1] : NULL;

		if (prev && s[i].st == prev->st * prev->n && s[i].sv == prev->sv * prev->n &&
		    s[i].sc == prev->sc * prev->n)
			prev->n *= s[i].n;
		else
			s[m++] = s[i];
	}
	return m;
}

enum tcx_status ttv_plan_make(const struct problem *p, const struct device_info *dev,
			      struct ttv_plan *out, struct tcx_error *err)
{
	const struct tcx_contraction *c = p->c;
	const struct dtype_info *ti = dtype_info(c->dtype);
	struct slot o[TCX_MAX_INDICES], s[TCX_MAX_INDICES];
	int no = 0, ns = 0, maxwg;
	int64_t q, nout = 1, total = 1, qblocks, groups;
	struct tcx_ttv_args *a = &out->args;

	memset(out, 0, sizeof(*out));
	if (!ti || (c->dtype != TCX_DTYPE_S && c->dtype != TCX_DTYPE_D))
		REJECT("the tensor-times-vector kernel takes fp32 and fp64 only");
	if (c->implicit_b)
		REJECT("a one-operand expression has no vector");
	if (contraction_count(c, IDX_BOUND) == 0)
		REJECT("the tensor-times-vector kernel needs a summed index");
	if (problem_empty_index(p) >= 0)
		REJECT("an empty problem needs no kernel");
	/* the vector: the operand with no free index (B where both have none) */
	if (contraction_count(c, IDX_FREE_B) == 0) {
		out->vec = T_B;
		out->big = T_A;
	} else if (contraction_count(c, IDX_FREE_A) == 0) {
		out->vec = T_A;
		out->big = T_B;
	} else {
		REJECT("both operands have free indices: no operand is a vector");
	}
	for (int id = 0; id < c->nidx; id++) {
		const enum index_class k = c->idx[id].cls;
		struct slot x = { id, p->size[id], p->stride[out->big][id], p->stride[out->vec][id],
				  p->stride[T_C][id] };

		if (p->size[id] > INT32_MAX)
			return tcx_fail(err, TCX_ELIMIT,
					"an index of %lld exceeds the tensor-times-vector kernel's "
					"32-bit extents",
					(long long)p->size[id]);
		if (p->size[id] <= 1)
			continue;
		if (k == IDX_BOUND) {
			x.sc = 0;
			s[ns++] = x;
		} else {
			o[no++] = x;
		}
	}
	no = sort_merge(o, no);
	ns = sort_merge(s, ns);
	if (no == 0)
		o[no++] = (struct slot){ -1, 1, 0, 0, 0 };
	if (ns == 0)
		s[ns++] = (struct slot){ -1, 1, 0, 0, 0 };
	if (no + ns > TCX_MAX_SLOTS)
		REJECT("%d slots exceed the tensor-times-vector kernel's %d", no + ns,
		       TCX_MAX_SLOTS);
	for (int i = 0; i < no; i++)
		nout *= o[i].n;
	for (int i = 0; i < ns; i++) {
		/* merged slots are digits too: each within an int, the whole sum
		 * well within a long */
		if (s[i].n > INT32_MAX || total > (INT64_MAX / 2) / s[i].n)
			return tcx_fail(err, TCX_ELIMIT, "a sum of more than %lld positions is too "
					"long for the tensor-times-vector kernel", (long long)total);
		total *= s[i].n;
	}
	out->dtype = c->dtype;
	out->no = no;
	out->ns = ns;
	snprintf(out->lang, sizeof(out->lang), "%s", dev && dev->lang[0] ? dev->lang : "opencl");
	for (int i = 0; i < no + ns; i++) {
		const struct slot *x = i < no ? &o[i] : &s[i - no];

		out->dim[i] = x->id;
		a->size[i] = x->n;
		a->st[i] = x->st;
		a->sv[i] = x->sv;
		a->sc[i] = x->sc;
	}
	/* the lanes: along the sum where T moves fastest along it (enough for
	 * the whole sum, the rest along q), else along q (at most 64: two
	 * warps' runs of T) with the rest along the sum */
	q = o[0].n;
	out->kfast = o[0].n == 1 || s[0].st < o[0].st;
	maxwg = dev && dev->max_wg_size > 0 ? dev->max_wg_size : TTV_THREADS;
	if (out->kfast) {
		out->kl = pow2_at_least(total, TTV_THREADS);
		out->ql = pow2_at_least(q, TTV_THREADS / out->kl);
	} else {
		out->ql = pow2_at_least(q, 64);
		out->kl = pow2_at_least(total, TTV_THREADS / out->ql);
	}
	qblocks = gen_ceil_div(q, out->ql);
	groups = qblocks * (nout / q);
	/* a GPU with fewer work-groups than a few per SM: more lanes along a
	 * long sum instead, so that enough loads are in flight */
	if (dev && dev->type == DEV_GPU && dev->compute_units > 0 &&
	    groups < 4 * (int64_t)dev->compute_units)
		while (out->ql * out->kl * 2 <= TTV_WIDE && out->kl < total)
			out->kl *= 2;
	while (out->ql * out->kl > maxwg)
		if (out->kl > 1)
			out->kl /= 2;
		else
			out->ql /= 2;
	qblocks = gen_ceil_div(q, out->ql);
	groups = qblocks * (nout / q);
	/* still too few work-items for half a GPU's slots: the sum in parts,
	 * each lane summing at least TTV_PART_ROUNDS rounds of a part */
	out->split = 1;
	if (dev && dev->type == DEV_GPU && dev->compute_units > 0) {
		const int64_t slots = half_slots(dev);
		const int64_t have = groups * out->ql * out->kl;
		const int64_t most = total / ((int64_t)out->kl * TTV_UNROLL * TTV_PART_ROUNDS);

		if (have < slots && most > 1) {
			int64_t n = gen_ceil_div(slots, have);

			n = n < most ? n : most;
			out->split = (int)(n < TTV_MAX_SPLIT ? n : TTV_MAX_SPLIT);
		}
	}
	/* $TCX_TTV_SPLIT: that many parts on any device (at most one a
	 * position), for tests */
	{
		const char *e = getenv("TCX_TTV_SPLIT");
		const long n = e ? strtol(e, NULL, 10) : 0;

		if (n > 0)
			out->split = (int)(n < total ? (n < TTV_MAX_SPLIT ? n : TTV_MAX_SPLIT) : total);
	}
	a->split = out->split;
	a->chunk = gen_ceil_div(total, out->split);
	a->pgroups = groups;
	a->nout = nout;
	groups *= out->split;
	if (groups >= INT32_MAX)
		return tcx_fail(err, TCX_ELIMIT, "the tensor-times-vector kernel's grid exceeds 2^31 "
				"work-groups");
	{
		int64_t r = out->kl;

		for (int i = 0; i < ns; i++) {
			a->kstep[i] = r % s[i].n;
			r /= s[i].n;
		}
	}
	a->total = total;
	a->qblocks = qblocks;
	a->groups = groups;
	out->fill = 1;
	if (dev && dev->type == DEV_GPU) {
		out->fill = (double)groups * (double)(out->ql * out->kl) / (double)half_slots(dev);
		out->fill = out->fill < 1 ? out->fill : 1;
	}
	out->util = (double)q / (double)(qblocks * out->ql) *
		    ((double)total / (double)(gen_ceil_div(total, out->kl) * out->kl));
	out->flops = 2.0 * (double)nout * (double)total;
	out->bytes = (double)ti->bytes * ((double)problem_count(p, out->big) +
					  (double)problem_count(p, out->vec) +
					  (double)problem_count(p, T_C) +
					  (out->split > 1 ? 2.0 * out->split * (double)nout : 0));
	out->local[0] = (size_t)(out->ql * out->kl);
	out->local[1] = out->local[2] = 1;
	{
		const int64_t n[3] = { groups, 1, 1 }, nr[3] = { gen_ceil_div(nout, TTV_REDUCE_THREADS), 1,
								  1 };
		const size_t lr[3] = { TTV_REDUCE_THREADS, 1, 1 };
		enum tcx_status st = plan_grid(n, out->local, dev, out->global, err);

		return st || out->split == 1 ? st : plan_grid(nr, lr, dev, out->global_reduce, err);
	}
}

size_t ttv_workspace_bytes(const struct ttv_plan *v)
{
	return v->split > 1 ? (size_t)v->split * (size_t)v->args.nout *
				      (size_t)dtype_info(v->dtype)->bytes
			    : 0;
}

enum tcx_status ttv_ready(const struct ttv_plan *v, struct device *dev, struct program *prog,
			  struct tcx_error *err)
{
	enum tcx_status st = device_kernel_ready(dev, prog, TCX_TTV_NAME, err);

	return st || v->split == 1 ? st : device_kernel_ready(dev, prog, TCX_TTV_REDUCE_NAME, err);
}

enum tcx_status ttv_source(const struct ttv_plan *v, struct strbuf *src, struct strbuf *opts,
			   struct tcx_error *err)
{
	enum tcx_status st;

	strbuf_addf(src, "/* tcx %s tensor-times-vector kernel */\n", tcx_version());
	if (strcmp(v->lang, "cuda") == 0)
		strbuf_adds(src, "#define TCX_LANG_CUDA 1\n");
	strbuf_addf(src,
		    "#define TTV_DOUBLE %d\n#define TTV_NO %d\n#define TTV_NS %d\n"
		    "#define TTV_QL %d\n#define TTV_KL %d\n#define TTV_KFAST %d\n"
		    "#define TTV_UNROLL %d\n#define TTV_SPLIT %d\n#define TTV_REDUCE_WG %d\n",
		    v->dtype == TCX_DTYPE_D, v->no, v->ns, v->ql, v->kl, v->kfast, TTV_UNROLL,
		    v->split > 1, TTV_REDUCE_THREADS);
	st = strbuf_status(src, err);
	return st ? st : kernel_assemble_family("opencl/ttv.cl", v->lang, src, opts, err);
}

enum tcx_status ttv_launch(const struct ttv_plan *v, struct device *dev, struct program *prog,
			   struct buffer *a, struct buffer *b, struct buffer *c, struct buffer *ws,
			   const double alpha[2], const double beta[2], double *event_ms,
			   struct tcx_error *err)
{
	struct launch l;
	const float af = (float)alpha[0], bf = (float)beta[0];
	const bool d = v->dtype == TCX_DTYPE_D;
	const void *pa = d ? (const void *)&alpha[0] : (const void *)&af;
	const void *pb = d ? (const void *)&beta[0] : (const void *)&bf;
	double ms = 0, part = 0;
	enum tcx_status st;

	if (event_ms)
		*event_ms = 0;
	if (v->split > 1 && !ws)
		return tcx_fail(err, TCX_EINVAL, "the tensor-times-vector kernel's split sum needs "
				"its workspace");
	launch_init(&l, TCX_TTV_NAME);
	memcpy(l.local, v->local, sizeof(l.local));
	memcpy(l.global, v->global, sizeof(l.global));
	/* the parameters in common/abi.h's order */
	launch_arg_buffer(&l, c);
	launch_arg_buffer(&l, v->big == T_A ? a : b);
	launch_arg_buffer(&l, v->big == T_A ? b : a);
	launch_arg_buffer(&l, v->split > 1 ? ws : c);
	launch_arg_bytes(&l, &v->args, sizeof(v->args));
	launch_arg_bytes(&l, pa, d ? 8 : 4);
	launch_arg_bytes(&l, pb, d ? 8 : 4);
	st = device_launch(dev, prog, &l, event_ms ? &ms : NULL, err);
	if (st || v->split == 1) {
		if (event_ms)
			*event_ms = ms;
		return st;
	}
	launch_init(&l, TCX_TTV_REDUCE_NAME);
	l.local[0] = TTV_REDUCE_THREADS;
	l.local[1] = l.local[2] = 1;
	memcpy(l.global, v->global_reduce, sizeof(l.global));
	launch_arg_buffer(&l, c);
	launch_arg_buffer(&l, ws);
	launch_arg_bytes(&l, &v->args, sizeof(v->args));
	launch_arg_bytes(&l, pa, d ? 8 : 4);
	launch_arg_bytes(&l, pb, d ? 8 : 4);
	st = device_launch(dev, prog, &l, event_ms ? &part : NULL, err);
	if (event_ms)
		*event_ms = ms + part;
	return st;
}

void ttv_plan_str(const struct ttv_plan *v, const struct tcx_contraction *c, char *buf,
		  size_t len)
{
	const int q = v->dim[0], k = v->dim[v->no];
	char split[48] = "";

	if (v->split > 1)
		snprintf(split, sizeof(split), ", the sum in %d parts", v->split);
	snprintf(buf, len,
		 "%s the vector, C along %s, T read along %s; %d x %d lanes (C x sum), %d output "
		 "and %d summed slots%s",
		 v->vec == T_A ? "A" : "B", q >= 0 ? c->idx[q].name : "-",
		 v->kfast ? (k >= 0 ? c->idx[k].name : "-") : (q >= 0 ? c->idx[q].name : "-"),
		 v->ql, v->kl, v->no, v->ns, split);
}

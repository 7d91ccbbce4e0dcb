/* reference.c - the host reference contraction.  Straightforward loops that
 * accumulate in double (complex double), split over threads by output
 * element: the oracle for every validation.  It is never tuned. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/host/host.h"
#include "runtime/elem.h"

int host_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* Tensile's letter of a type, as runtime/elem.h takes it */
static char elem_letter(enum tcx_dtype t)
{
	static const char letter[] = {
		[TCX_DTYPE_S] = 's', [TCX_DTYPE_D] = 'd', [TCX_DTYPE_C] = 'c',
		[TCX_DTYPE_Z] = 'z', [TCX_DTYPE_H] = 'h', [TCX_DTYPE_B] = 'b',
	};

	return letter[t];
}

void host_elem_get(enum tcx_dtype t, const void *base, int64_t off, double *re, double *im)
{
	tl_elem_get(elem_letter(t), base, off, re, im);
}

void host_elem_set(enum tcx_dtype t, void *base, int64_t off, double re, double im)
{
	tl_elem_set(elem_letter(t), base, off, re, im);
}

int64_t host_c_offset_of(const struct problem *p, int64_t lin, int64_t *idx)
{
	const struct tcx_contraction *c = p->c;
	int ids[TCX_MAX_INDICES], n = contraction_dims(c, T_C, ids);
	int64_t off = 0;

	for (int k = 0; k < n; k++) {
		int64_t s = p->size[ids[k]], v = lin % s;

		lin /= s;
		if (idx)
			idx[ids[k]] = v;
		off += v * p->stride[T_C][ids[k]];
	}
	return off;
}

struct ref_job {
	const struct problem *p;
	const void *a, *b, *c_in;
	void *c_out;            /* host_contract: write here */
	const int64_t *lin;     /* host_reference_at: these elements */
	double *out;
	int64_t begin, end;
	double alpha[2], beta[2];
	int bound[TCX_MAX_INDICES], nbound;
	bool no_products;       /* a bound index of size 0: every sum is empty */
};

/* The sum over the bound indices for one output element, and the sum of
 * the products' magnitudes (for the error bound). */
static void element_sum(const struct ref_job *j, const int64_t *idx, double *sre, double *sim,
			double *smag)
{
	const struct problem *p = j->p;
	const struct tcx_contraction *c = p->c;
	enum tcx_dtype t = c->dtype;
	bool cplx = dtype_info(t)->complex;
	int64_t oa = 0, ob = 0, bi[TCX_MAX_INDICES] = { 0 };
	double re = 0, im = 0, mag = 0;

	*sre = *sim = *smag = 0;
	if (j->no_products)
		return;
	for (int id = 0; id < c->nidx; id++) {
		if (c->idx[id].cls == IDX_BOUND)
			continue;
		oa += idx[id] * p->stride[T_A][id];
		ob += idx[id] * p->stride[T_B][id];
	}
	for (;;) {
		int64_t a_off = oa, b_off = ob;
		double ar, ai, br, bim;
		int k;

		for (k = 0; k < j->nbound; k++) {
			a_off += bi[k] * p->stride[T_A][j->bound[k]];
			b_off += bi[k] * p->stride[T_B][j->bound[k]];
		}
		host_elem_get(t, j->a, a_off, &ar, &ai);
		host_elem_get(t, j->b, b_off, &br, &bim);
		if (cplx) {
			if (c->conj[T_A])
				ai = -ai;
			if (c->conj[T_B])
				bim = -bim;
			re += ar * br - ai * bim;
			im += ar * bim + ai * br;
			mag += (fabs(ar) + fabs(ai)) * (fabs(br) + fabs(bim));
		} else {
			re += ar * br;
			mag += fabs(ar * br);
		}
		for (k = 0; k < j->nbound; k++) {
			if (++bi[k] < p->size[j->bound[k]])
				break;
			bi[k] = 0;
		}
		if (k == j->nbound)
			break;
	}
	*sre = re;
	*sim = im;
	*smag = mag;
}

static void finish_element(const struct ref_job *j, int64_t coff, double sre, double sim,
			   double *re, double *im, double *mag)
{
	enum tcx_dtype t = j->p->c->dtype;
	double r = j->alpha[0] * sre - j->alpha[1] * sim;
	double i = j->alpha[0] * sim + j->alpha[1] * sre;

	if (j->beta[0] != 0 || j->beta[1] != 0) {
		double cr, ci;

		host_elem_get(t, j->c_in, coff, &cr, &ci);
		r += j->beta[0] * cr - j->beta[1] * ci;
		i += j->beta[0] * ci + j->beta[1] * cr;
		*mag = (fabs(j->alpha[0]) + fabs(j->alpha[1])) * *mag +
		       (fabs(j->beta[0]) + fabs(j->beta[1])) * (fabs(cr) + fabs(ci));
	} else {
		*mag = (fabs(j->alpha[0]) + fabs(j->alpha[1])) * *mag;
	}
	*re = r;
	*im = i;
}

static void *ref_worker(void *arg)
{
	struct ref_job *j = arg;
	int64_t idx[TCX_MAX_INDICES] = { 0 };

	for (int64_t e = j->begin; e < j->end; e++) {
		int64_t lin = j->lin ? j->lin[e] : e;
		int64_t coff = host_c_offset_of(j->p, lin, idx);
		double sre, sim, re, im, mag;

		element_sum(j, idx, &sre, &sim, &mag);
		finish_element(j, coff, sre, sim, &re, &im, &mag);
		if (j->out) {
			j->out[3 * e] = re;
			j->out[3 * e + 1] = im;
			j->out[3 * e + 2] = mag;
		} else {
			host_elem_set(j->p->c->dtype, j->c_out, coff, re, im);
		}
	}
	return NULL;
}

static enum tcx_status run_jobs(struct ref_job *tmpl, int64_t total, int threads,
				struct tcx_error *err)
{
	pthread_t tid[256];
	struct ref_job jobs[256];
	int started = 0;

	if (threads <= 0)
		threads = host_cpu_count();
	if (threads > 256)
		threads = 256;
	if (total < 64 * threads)
		threads = total >= 64 ? (int)(total / 64) : 1;
	for (int k = 0; k < tmpl->p->c->nidx; k++)
		if (tmpl->p->c->idx[k].cls == IDX_BOUND) {
			tmpl->bound[tmpl->nbound++] = k;
			tmpl->no_products |= tmpl->p->size[k] == 0;
		}
	for (int k = 0; k < threads; k++) {
		jobs[k] = *tmpl;
		jobs[k].begin = total * k / threads;
		jobs[k].end = total * (k + 1) / threads;
	}
	for (int k = 1; k < threads; k++) {
		if (pthread_create(&tid[k], NULL, ref_worker, &jobs[k]) != 0)
			break;
		started = k;
	}
	/* whatever could not get a thread runs here */
	ref_worker(&jobs[0]);
	for (int k = started + 1; k < threads; k++)
		ref_worker(&jobs[k]);
	for (int k = 1; k <= started; k++)
		pthread_join(tid[k], NULL);
	(void)err;
	return TCX_OK;
}

enum tcx_status host_contract(const struct problem *p, const void *a, const void *b, void *c,
			      const double alpha[2], const double beta[2], int threads,
			      struct tcx_error *err)
{
	struct ref_job j = {
		.p = p, .a = a, .b = b, .c_in = c, .c_out = c,
		.alpha = { alpha[0], alpha[1] }, .beta = { beta[0], beta[1] },
	};

	return run_jobs(&j, problem_count(p, T_C), threads, err);
}

enum tcx_status host_reference_at(const struct problem *p, const void *a, const void *b,
				  const void *c_in, const int64_t *lin, size_t n,
				  const double alpha[2], const double beta[2], double *out,
				  int threads, struct tcx_error *err)
{
	struct ref_job j = {
		.p = p, .a = a, .b = b, .c_in = c_in, .lin = lin, .out = out,
		.alpha = { alpha[0], alpha[1] }, .beta = { beta[0], beta[1] },
	};

	return run_jobs(&j, (int64_t)n, threads, err);
}

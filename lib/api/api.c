/* api.c - the public functions of include/tcx.h over the internal model. */
#include <stdlib.h>
#include <string.h>

#include "backend/host/host.h"
#include "notation/notation.h"
#include "run/run.h"

TCX_API enum tcx_status tcx_contraction_parse(const char *expr, enum tcx_dtype dtype,
					      struct tcx_contraction **out,
					      struct tcx_error *err)
{
	if (!out)
		return tcx_fail(err, TCX_EINVAL, "no place for the result");
	return notation_parse(expr, dtype, LAYOUT_BY_STYLE, out, err);
}

TCX_API void tcx_contraction_destroy(struct tcx_contraction *c)
{
	contraction_free(c);
}

TCX_API int tcx_contraction_num_indices(const struct tcx_contraction *c)
{
	return c ? c->nidx : 0;
}

TCX_API const char *tcx_contraction_index_name(const struct tcx_contraction *c, int id)
{
	if (!c || id < 0 || id >= c->nidx)
		return NULL;
	return c->idx[id].name;
}

TCX_API void tcx_contraction_name(const struct tcx_contraction *c, char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	if (!c) {
		buf[0] = '\0';
		return;
	}
	contraction_tensile_name(c, buf, len);
}

TCX_API enum tcx_status tcx_contraction_reference(const struct tcx_contraction *c,
						  const int64_t *sizes, const void *a,
						  const void *b, void *cc, const double *alpha,
						  const double *beta, struct tcx_error *err)
{
	struct problem p;
	double al[2] = { 1, 0 }, be[2] = { 0, 0 };
	bool cplx;
	void *ones = NULL;
	enum tcx_status st;

	if (!c || !sizes || !a || (!b && !c->implicit_b) || !cc)
		return tcx_fail(err, TCX_EINVAL, "missing argument");
	if (b && c->implicit_b)
		return tcx_fail(err, TCX_EINVAL, "'%s' has one input tensor: pass NULL for B",
				c->expr);
	st = problem_init(&p, c, sizes, err);
	if (st)
		return st;
	if (!b) {
		b = ones = run_make_tensor(&p, T_B, INIT_ONES, 0, err);
		if (!ones)
			return err && err->code ? err->code : TCX_ENOMEM;
	}
	cplx = dtype_info(c->dtype)->complex;
	if (alpha) {
		al[0] = alpha[0];
		al[1] = cplx ? alpha[1] : 0;
	}
	if (beta) {
		be[0] = beta[0];
		be[1] = cplx ? beta[1] : 0;
	}
	st = host_contract(&p, a, b, cc, al, be, 0, err);
	free(ones);
	return st;
}

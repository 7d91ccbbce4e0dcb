/* measure.c - one measurement of a candidate through the results store:
 * found there (and not forced), or prepared, timed and recorded, with the
 * reason when it cannot run. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "tune/tune.h"

void tune_problem_key(const struct tcx_contraction *c, char *buf, size_t len)
{
	contraction_tensile_name(c, buf, len);
}

static void fill_key(struct measurement *m, const struct device_info *di,
		     const struct tcx_contraction *c, const struct solution *s,
		     const int64_t *sizes)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->device, sizeof(m->device), "%s", di->name);
	snprintf(m->driver, sizeof(m->driver), "%s", di->driver);
	snprintf(m->backend, sizeof(m->backend), "%s", di->backend);
	tune_problem_key(c, m->problem, sizeof(m->problem));
	m->nidx = c->nidx;
	memcpy(m->sizes, sizes, sizeof(int64_t) * (size_t)c->nidx);
	solution_key(s, m->solution, sizeof(m->solution));
	snprintf(m->version, sizeof(m->version), "%s", tcx_version());
}

static void to_measured(const struct measurement *r, double flops, struct measured *m)
{
	memset(m, 0, sizeof(*m));
	m->status = r->status;
	snprintf(m->reason, sizeof(m->reason), "%s", r->reason);
	m->median_ms = r->median_ms;
	m->ci_lo_ms = r->ci_lo_ms;
	m->ci_hi_ms = r->ci_hi_ms;
	if (r->status == MEAS_OK && r->median_ms > 0) {
		m->gflops = flops / (r->median_ms * 1e6);
		m->gflops_lo = r->ci_hi_ms > 0 ? flops / (r->ci_hi_ms * 1e6) : m->gflops;
		m->gflops_hi = r->ci_lo_ms > 0 ? flops / (r->ci_lo_ms * 1e6) : m->gflops;
	}
}

/* Statuses that describe the candidate rather than stop the run. */
static bool candidate_fault(enum tcx_status st)
{
	return st == TCX_EREJECT || st == TCX_ELIMIT || st == TCX_EBUILD || st == TCX_ELAUNCH ||
	       st == TCX_EDEVICE || st == TCX_ETIMEOUT || st == TCX_EUNSUPPORTED;
}

enum tcx_status tune_measure(struct tune_ctx *t, const struct tcx_contraction *c,
			     const struct solution *s, const int64_t *sizes, struct measured *m,
			     struct tcx_error *err)
{
	struct measurement rec;
	struct problem p;
	struct prepared pr;
	struct bench_result br;
	struct tcx_error e = { 0 };
	bool found = false;
	enum tcx_status st;
	double t0;

	fill_key(&rec, t->di, c, s, sizes);
	st = problem_init(&p, c, sizes, err);
	if (st)
		return st;
	if (!t->o->force) {
		struct measurement old;

		st = store_get(t->store, rec.device, rec.driver, rec.problem, rec.nidx, rec.sizes,
			       rec.solution, &old, &found, err);
		if (st)
			return st;
		if (found) {
			to_measured(&old, problem_flops(&p), m);
			m->from_store = true;
			t->sum->reused++;
			return TCX_OK;
		}
	}
	t0 = now_seconds();
	st = contract_prepare(t->dev, c, &p, s, &pr, NULL, &e);
	if (!st)
		st = bench_run(t->dev, &pr, &p, &t->o->bench, &br, &e);
	if (st && !candidate_fault(st)) {
		*err = e;
		return st;
	}
	rec.timestamp = (double)time(NULL);
	if (st) {
		rec.status = st == TCX_EREJECT || st == TCX_ELIMIT || st == TCX_EUNSUPPORTED
				     ? MEAS_SKIPPED
				     : MEAS_FAILED;
		snprintf(rec.reason, sizeof(rec.reason), "%s", e.msg);
		rec.median_ms = rec.ci_lo_ms = rec.ci_hi_ms = rec.min_ms = rec.max_ms = NAN;
		rec.gflops = 0;
		if (rec.status == MEAS_SKIPPED)
			t->sum->skipped++;
		else
			t->sum->failed++;
		tcx_log(TCX_LOG_DEBUG, "%s: %s", rec.solution, rec.reason);
	} else {
		rec.status = MEAS_OK;
		rec.median_ms = br.median_ms;
		rec.ci_lo_ms = br.ci_lo_ms;
		rec.ci_hi_ms = br.ci_hi_ms;
		rec.min_ms = br.min_ms;
		rec.max_ms = br.max_ms;
		rec.gflops = br.gflops;
		rec.reps = br.reps;
		snprintf(rec.timer, sizeof(rec.timer), "%s", br.timer);
		t->sum->measured++;
	}
	st = store_put(t->store, &rec, err);
	if (st)
		return st;
	t->measure_s += now_seconds() - t0;
	t->nmeasure++;
	to_measured(&rec, problem_flops(&p), m);
	return TCX_OK;
}

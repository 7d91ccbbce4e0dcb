/* measure.c - one measurement of a candidate: looked up in the results
 * store, or prepared, timed and recorded there, with the reason when it
 * cannot run.  The store and the counters are shared by worker threads and
 * touched only under the exec lock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/planner.h"
#include "tune/exec.h"

void tune_problem_key(const struct tcx_contraction *c, const char *strides, char *buf,
		      size_t len)
{
	char key[256];
	size_t n;

	contraction_tensile_name(c, buf, len);
	n = strlen(buf);
	if (!strides || n >= len)
		return;
	/* the strides a tune takes were checked before it started
	 * (problem_parse_strides): a spec the key cannot put in the order
	 * of its letters does not come here */
	if (problem_strides_key(c, strides, key, sizeof(key), NULL) != TCX_OK)
		snprintf(key, sizeof(key), "%s", strides);
	snprintf(buf + n, len - n, " strides %s", key);
}

enum tcx_status tune_problem_at(const struct tune_ctx *t, const struct tcx_contraction *c,
				const int64_t *sizes, struct problem *p, struct tcx_error *err)
{
	enum tcx_status st = problem_init(p, c, sizes, err);

	if (!st && t->o->strides)
		st = problem_parse_strides(p, t->o->strides, err);
	return st;
}

void tune_row_key(struct measurement *m, const struct device_info *di,
		  const struct tcx_contraction *c, const char *strides, const struct solution *s,
		  const int64_t *sizes)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->device, sizeof(m->device), "%s", di->name);
	snprintf(m->driver, sizeof(m->driver), "%s", di->driver);
	snprintf(m->backend, sizeof(m->backend), "%s", di->backend);
	tune_problem_key(c, strides, m->problem, sizeof(m->problem));
	m->nidx = c->nidx;
	/* a contraction's ids are the key's letters (model.h), the order of
	 * the store's sizes (store.h) */
	memcpy(m->sizes, sizes, sizeof(int64_t) * (size_t)c->nidx);
	solution_store_key(c, s, m->solution, sizeof(m->solution));
	snprintf(m->version, sizeof(m->version), "%s", tcx_version());
}

static double flops_of(const struct tcx_contraction *c, const int64_t *sizes)
{
	double f = dtype_info(c->dtype)->complex ? 8.0 : 2.0;

	for (int id = 0; id < c->nidx; id++)
		f *= (double)sizes[id];
	return f;
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

void tune_row_result(struct measurement *r, const struct measured *m)
{
	r->status = m->status;
	snprintf(r->reason, sizeof(r->reason), "%s", m->reason);
	r->median_ms = m->median_ms;
	r->ci_lo_ms = m->ci_lo_ms;
	r->ci_hi_ms = m->ci_hi_ms;
	r->min_ms = m->min_ms;
	r->max_ms = m->max_ms;
	r->gflops = m->gflops;
	r->reps = m->reps;
	snprintf(r->timer, sizeof(r->timer), "%s", m->timer);
	r->timestamp = (double)time(NULL);
}

/* TCX_FAKE_TIMING=1 (tests only): kernels are planned and built for real,
 * so validity and build failures are real, but instead of timing them each
 * measurement is a fixed function of the solution and the sizes.  Runs on
 * one process, several devices, shards or MPI ranks then make identical
 * decisions, which is what the tests of distributed tuning compare. */
static bool fake_timing(void)
{
	const char *v = getenv("TCX_FAKE_TIMING");

	return v && *v && strcmp(v, "0") != 0;
}

static void fake_result(const struct solution *s, const struct problem *p,
			struct bench_result *br)
{
	char key[2048];
	uint64_t h;
	double gflops;

	solution_key(s, key, sizeof(key));
	h = common_hash64(p->size, sizeof(int64_t) * (size_t)p->c->nidx,
			  common_hash64(key, strlen(key), 0));
	gflops = 10.0 + (double)(h % 9000) / 100.0; /* 10 .. 100 GFLOP/s */
	memset(br, 0, sizeof(*br));
	br->median_ms = problem_flops(p) / (gflops * 1e6);
	br->ci_lo_ms = br->min_ms = br->median_ms * 0.999;
	br->ci_hi_ms = br->max_ms = br->median_ms * 1.001;
	br->gflops = gflops;
	br->reps = 1;
	br->timer = "fake";
}

/* Statuses that describe the candidate rather than stop the run. */
static bool candidate_fault(enum tcx_status st)
{
	return st == TCX_EREJECT || st == TCX_ELIMIT || st == TCX_EBUILD || st == TCX_ELAUNCH ||
	       st == TCX_EDEVICE || st == TCX_ETIMEOUT || st == TCX_EUNSUPPORTED;
}

/* A hash of the row's key within one run (one device model), never 0. */
static uint64_t row_hash(const struct measurement *m)
{
	uint64_t h = common_hash64(m->problem, strlen(m->problem) + 1, 0);

	h = common_hash64(m->sizes, sizeof(int64_t) * (size_t)m->nidx, h);
	h = common_hash64(m->solution, strlen(m->solution), h);
	return h ? h : 1;
}

/* Adds h to the set: 1 when it was not there, 0 when it was, -1 when out
 * of memory. */
static int seen_add(struct tune_seen *s, uint64_t h)
{
	size_t k;

	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return -1;
		for (size_t j = 0; j < s->cap; j++)
			if (s->v[j]) {
				for (k = s->v[j] & (cap - 1); v[k]; k = (k + 1) & (cap - 1))
					;
				v[k] = s->v[j];
			}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	for (k = h & (s->cap - 1); s->v[k]; k = (k + 1) & (s->cap - 1))
		if (s->v[k] == h)
			return 0;
	s->v[k] = h;
	s->n++;
	return 1;
}

enum tcx_status tune_lookup(struct tune_ctx *t, const struct tcx_contraction *c,
			    const struct solution *s, const int64_t *sizes, struct measured *m,
			    bool *found, struct tcx_error *err)
{
	struct measurement rec, old;
	enum tcx_status st;

	tune_row_key(&rec, t->di, c, t->o->strides, s, sizes);
	*found = false;
	st = store_get(t->store, rec.device, rec.driver, rec.problem, rec.nidx, rec.sizes,
		       rec.solution, &old, found, err);
	if (st || !*found)
		return st;
	/* a failure (build, launch, timeout, memory) may be transient: measure
	 * it again; skips (validity rules, device limits) are for good.  Shards
	 * and --from-store take failures as stored: every shard of a round must
	 * see the same store, or one that measured a failure again would decide
	 * otherwise than the others, which would wait for it forever */
	if (old.status == MEAS_FAILED && !t->o->from_store && t->shard_n <= 1) {
		*found = false;
		return TCX_OK;
	}
	to_measured(&old, flops_of(c, sizes), m);
	m->from_store = true;
	/* a later step of this run reads what an earlier one measured: that
	 * is not reused, nor is a row read again */
	switch (seen_add(&t->seen, row_hash(&rec))) {
	case -1:
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	case 1:
		t->sum->reused++;
		break;
	}
	return TCX_OK;
}

enum tcx_status tune_record(struct tune_ctx *t, const struct tcx_contraction *c,
			    const struct solution *s, const int64_t *sizes,
			    const struct measured *m, struct tcx_error *err)
{
	struct measurement rec;

	tune_row_key(&rec, t->di, c, t->o->strides, s, sizes);
	tune_row_result(&rec, m);
	if (seen_add(&t->seen, row_hash(&rec)) < 0)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (m->status == MEAS_OK)
		t->sum->measured++;
	else if (m->status == MEAS_SKIPPED)
		t->sum->skipped++;
	else
		t->sum->failed++;
	/* MPI ranks other than 0 keep no store: rank 0 records for them */
	return t->store ? store_put(t->store, &rec, err) : TCX_OK;
}

void tune_measured(struct measured *m, enum tcx_status st, const char *reason,
		   const struct bench_result *br, const struct problem *p)
{
	memset(m, 0, sizeof(*m));
	if (st) {
		m->status = st == TCX_EREJECT || st == TCX_ELIMIT || st == TCX_EUNSUPPORTED
				    ? MEAS_SKIPPED
				    : MEAS_FAILED;
		snprintf(m->reason, sizeof(m->reason), "%s", reason);
		m->median_ms = m->ci_lo_ms = m->ci_hi_ms = m->min_ms = m->max_ms = NAN;
		return;
	}
	m->status = MEAS_OK;
	m->median_ms = br->median_ms;
	m->ci_lo_ms = br->ci_lo_ms;
	m->ci_hi_ms = br->ci_hi_ms;
	m->min_ms = br->min_ms;
	m->max_ms = br->max_ms;
	m->reps = br->reps;
	snprintf(m->timer, sizeof(m->timer), "%s", br->timer);
	m->gflops = br->gflops;
	m->gflops_lo = br->ci_hi_ms > 0 ? problem_flops(p) / (br->ci_hi_ms * 1e6) : br->gflops;
	m->gflops_hi = br->ci_lo_ms > 0 ? problem_flops(p) / (br->ci_lo_ms * 1e6) : br->gflops;
}

enum tcx_status tune_measure_on(struct tune_ctx *t, int dev, const struct tcx_contraction *c,
				const struct solution *s, const int64_t *sizes,
				struct measured *m, struct tcx_error *err)
{
	struct device *d = t->ndev > 0 ? t->devs[dev] : t->dev;
	struct problem p;
	struct prepared pr;
	struct bench_result br;
	struct bench_opts bo = t->o->bench;
	struct tcx_error e = { 0 };
	enum tcx_status st;
	double t0 = common_now_seconds();

	/* a signal stops the measurement between launches: nothing of it is
	 * recorded, and the run stops with TCX_EINTR */
	bo.stop = t->o->stop;
	st = tune_problem_at(t, c, sizes, &p, err);
	if (st)
		return st;
	memset(m, 0, sizeof(*m));
	st = contract_prepare(d, c, &p, s, &pr, NULL, &e);
	if (!st && fake_timing())
		fake_result(s, &p, &br);
	else if (!st)
		st = bench_run(d, &pr, &p, &bo, &br, &e);
	if (st && !candidate_fault(st)) {
		*err = e;
		return st;
	}
	tune_measured(m, st, e.msg, &br, &p);
	if (st)
		tcx_log(TCX_LOG_DEBUG, "%s", m->reason);
	exec_lock_acquire();
	st = tune_record(t, c, s, sizes, m, err);
	t->measure_s += common_now_seconds() - t0;
	t->nmeasure++;
	exec_lock_release();
	return st;
}

enum tcx_status tune_race(struct tune_ctx *t, const struct tcx_contraction *c,
			  const struct solution *const *sols, int n, const struct plan_result *pl,
			  const int64_t *sizes, struct measured *m, struct tcx_error *err)
{
	struct device *d = t->ndev > 0 ? t->devs[0] : t->dev;
	struct prepared pr[BENCH_MAX_RACE];
	const struct prepared *run[BENCH_MAX_RACE];
	struct bench_result br[BENCH_MAX_RACE];
	struct bench_opts bo = t->o->bench;
	struct tcx_error e = { 0 };
	struct problem p;
	const int racers = n + (pl != NULL);
	int ready = 0, who[BENCH_MAX_RACE];
	enum tcx_status st;

	if (racers < 2 || racers > BENCH_MAX_RACE)
		return tcx_fail(err, TCX_EINVAL, "a race takes 2 to %d kernels, not %d",
				BENCH_MAX_RACE, racers);
	bo.stop = t->o->stop;
	st = tune_problem_at(t, c, sizes, &p, err);
	if (st)
		return st;
	for (int k = 0; k < racers; k++) {
		m[k].status = MEAS_SKIPPED; /* until it has run */
		/* the solutions ran before, so their kernels come from the
		 * cache; the planner's plan runs on p's memory, merged or
		 * permuted as it says */
		if (k < n)
			st = contract_prepare(d, c, &p, sols[k], &pr[ready], NULL, &e);
		else
			st = contract_prepare_plan(d, &p, pl, &pl->best.sol, &pr[ready], NULL, &e);
		if (st && !candidate_fault(st)) {
			*err = e;
			goto out;
		}
		if (!st) {
			who[ready] = k;
			run[ready] = &pr[ready];
			ready++;
		}
	}
	st = TCX_OK;
	if (ready < 2)
		goto out; /* nothing to race: the solo measurements stand */
	if (fake_timing()) {
		for (int k = 0; k < ready; k++) {
			fake_result(who[k] < n ? sols[who[k]] : &pl->best.sol, &p, &br[k]);
			if (who[k] == n) {
				br[k].gflops = 200;
				br[k].median_ms = problem_flops(&p) / (200 * 1e6);
			}
		}
	} else {
		st = bench_race(d, run, ready, &p, &bo, br, &e);
		if (st) {
			/* a kernel that ran alone and fails beside the others:
			 * the solo measurements stand */
			if (candidate_fault(st)) {
				tcx_log(TCX_LOG_DEBUG, "race not run: %s", e.msg);
				st = TCX_OK;
			} else {
				*err = e;
			}
			goto out;
		}
	}
	for (int k = 0; k < ready; k++)
		tune_measured(&m[who[k]], TCX_OK, "", &br[k], &p);
out:
	for (int k = 0; k < ready; k++)
		contract_release(d, &pr[k]);
	return st;
}

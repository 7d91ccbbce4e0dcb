/* bench.c - the timing method of tcx bench and tcx tune (man tcx-bench,
 * TIMING METHOD). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

void bench_opts_default(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->warmup = 2;
	o->min_reps = 10;
	o->min_time = 0.2;
	o->max_reps = BENCH_MAX_REPS;
	o->timer = TIMER_AUTO;
	o->flush = FLUSH_AUTO;
	o->seed = 1;
	o->alpha[0] = 1;
}

enum tcx_status bench_opts_check(const struct bench_opts *o, struct tcx_error *err)
{
	if (o->min_reps < 1 || o->min_reps > BENCH_MAX_REPS)
		return tcx_fail(err, TCX_EINVAL, "min-reps %d is not a whole number from 1 to %d",
				o->min_reps, BENCH_MAX_REPS);
	if (o->max_reps < o->min_reps || o->max_reps > BENCH_MAX_REPS)
		return tcx_fail(err, TCX_EINVAL, "max-reps %d is not a whole number from %d to %d",
				o->max_reps, o->min_reps, BENCH_MAX_REPS);
	if (!isfinite(o->min_time) || o->min_time < 0)
		return tcx_fail(err, TCX_EINVAL, "min-time %g is not a number of seconds >= 0",
				o->min_time);
	return TCX_OK;
}

static bool stopped(const struct bench_opts *o)
{
	return o->stop && *o->stop;
}

bool bench_timer_parse(const char *s, enum bench_timer *out)
{
	if (!strcmp(s, "auto"))
		*out = TIMER_AUTO;
	else if (!strcmp(s, "event"))
		*out = TIMER_EVENT;
	else if (!strcmp(s, "wall"))
		*out = TIMER_WALL;
	else
		return false;
	return true;
}

bool bench_flush_parse(const char *s, enum bench_flush *out)
{
	if (!strcmp(s, "auto"))
		*out = FLUSH_AUTO;
	else if (!strcmp(s, "on"))
		*out = FLUSH_ON;
	else if (!strcmp(s, "off"))
		*out = FLUSH_OFF;
	else
		return false;
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_median_ci(double *v, int n, double *median, double *lo, double *hi)
{
	int j, k;
	double h;

	if (n <= 0) {
		*median = *lo = *hi = NAN;
		return;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	/* ranks n/2 -+ 1.96 sqrt(n)/2 (normal approximation of the binomial) */
	h = 1.96 * sqrt((double)n) / 2;
	j = (int)floor((double)n / 2 - h);
	k = (int)ceil((double)n / 2 + h);
	if (j < 1)
		j = 1;
	if (k > n)
		k = n;
	*lo = v[j - 1];
	*hi = v[k - 1];
}

/* One set of device buffers holding random inputs. */
struct bufset {
	struct buffer *a, *b, *c, *ws;
};

static void free_sets(struct device *dev, struct bufset *s, int n)
{
	for (int k = 0; k < n; k++) {
		buffer_free(dev, s[k].a);
		buffer_free(dev, s[k].b);
		buffer_free(dev, s[k].c);
		buffer_free(dev, s[k].ws);
	}
}

static enum tcx_status make_sets(struct device *dev, const struct prepared *const *prs, int nk,
				 const struct problem *p, const struct bench_opts *o,
				 struct bufset *sets, int nsets, struct tcx_error *err)
{
	size_t esz = (size_t)dtype_info(p->c->dtype)->bytes;
	size_t bytes[3];
	size_t nws = 0;
	enum tcx_status st = TCX_OK;

	/* the kernels of a race or a pair take turns on each set: its
	 * workspace is the largest any of them needs (GlobalSplitU's partial
	 * sums grow with the split) */
	for (int k = 0; k < nk; k++) {
		size_t w = contract_workspace_bytes(prs[k], p);

		nws = w > nws ? w : nws;
	}

	for (int t = 0; t < 3; t++)
		bytes[t] = (size_t)p->extent[t] * esz;
	memset(sets, 0, sizeof(*sets) * (size_t)nsets);
	for (int k = 0; k < nsets && !st; k++) {
		struct buffer **dst[3] = { &sets[k].c, &sets[k].a, &sets[k].b };

		for (int t = 0; t < 3 && !st; t++) {
			void *host = run_make_tensor(p, (enum tensor_role)t, INIT_RANDOM,
						     o->seed + (uint64_t)k * 7919, err);

			if (!host) {
				st = err && err->code ? err->code : TCX_ENOMEM;
				break;
			}
			st = buffer_alloc(dev, bytes[t], dst[t], err);
			if (!st)
				st = buffer_write(dev, *dst[t], 0, host, bytes[t], err);
			free(host);
		}
		if (!st && nws)
			st = buffer_alloc(dev, nws, &sets[k].ws, err);
	}
	if (st)
		free_sets(dev, sets, nsets);
	return st;
}

/* The most input sets one measurement rotates.  A flush costs as much as
 * writing twice the cache, while a small problem's launch touches a tiny
 * part of it: one flush then serves a round of up to MAX_SETS launches,
 * each on a set untouched since the flush (man tcx-bench, TIMING METHOD,
 * says how this was chosen). */
#define MAX_SETS 64

/* How many input sets to rotate so that no launch finds its inputs in the
 * last-level cache, and whether to flush too: when the sets together span
 * less than twice the cache, a flush before each round of the rotation
 * evicts them all, and each launch of the round takes a set that no launch
 * has touched since. */
static void plan_rotation(const struct device_info *di, const struct problem *p,
			  enum bench_flush flush, int *nsets, bool *do_flush)
{
	double ws = problem_min_bytes(p, true);
	double cache = di->cache_bytes > 0 ? (double)di->cache_bytes : 32.0 * 1024 * 1024;
	double want;

	*nsets = 1;
	*do_flush = false;
	if (flush == FLUSH_OFF)
		return;
	if (flush == FLUSH_AUTO && ws > 2 * cache)
		return;
	/* enough sets to span twice the cache, within MAX_SETS and within memory */
	want = ceil(2 * cache / ws);
	*nsets = want > MAX_SETS ? MAX_SETS : (int)want;
	if (di->global_mem > 0 && ws * *nsets > 0.5 * (double)di->global_mem)
		*nsets = (int)(0.5 * (double)di->global_mem / ws);
	if (*nsets < 1)
		*nsets = 1;
	*do_flush = ws * *nsets < 2 * cache;
}

/* Writes over a scratch buffer twice the cache's size, so that the next
 * round of launches starts with a cold cache; not timed. */
static enum tcx_status flush_cache(struct device *dev, struct buffer *scratch, void *host,
				   size_t bytes, struct tcx_error *err)
{
	enum tcx_status st = buffer_write(dev, scratch, 0, host, bytes, err);

	return st ? st : device_finish(dev, err);
}

struct timing {
	double *ev, *wall;
	int n, cap;
};

static enum tcx_status timed_launch(struct device *dev, const struct prepared *pr,
				    const struct problem *p, const struct bufset *s,
				    const struct bench_opts *o, double *ev_ms, double *wall_ms,
				    struct tcx_error *err)
{
	double t0 = common_now_seconds();
	enum tcx_status st;

	st = contract_launch(dev, pr, p, s->a, s->b, s->c, s->ws, o->alpha, o->beta, ev_ms, err);
	if (!st)
		st = device_finish(dev, err);
	*wall_ms = (common_now_seconds() - t0) * 1e3;
	return st;
}

static bool use_events(const struct device_info *di, enum bench_timer t)
{
	return t == TIMER_EVENT || (t == TIMER_AUTO && di->timer_events);
}

const char *bench_timer_name(const struct device_info *di, enum bench_timer t)
{
	return use_events(di, t) ? "event" : "wall";
}

static void summarise(struct timing *tm, const struct problem *p, bool events,
		      struct bench_result *r)
{
	double lo, hi, med, *v = events ? tm->ev : tm->wall, *other = events ? tm->wall : tm->ev;
	double omed, olo, ohi;

	r->reps = tm->n;
	r->timer = events ? "event" : "wall";
	bench_median_ci(other, tm->n, &omed, &olo, &ohi);
	bench_median_ci(v, tm->n, &med, &lo, &hi);
	r->median_ms = med;
	r->ci_lo_ms = lo;
	r->ci_hi_ms = hi;
	r->min_ms = tm->n ? v[0] : NAN;
	r->max_ms = tm->n ? v[tm->n - 1] : NAN;
	r->event_median_ms = events ? med : omed;
	r->wall_median_ms = events ? omed : med;
	r->gflops = med > 0 ? problem_flops(p) / (med * 1e6) : 0;
	r->gbs = med > 0 ? problem_min_bytes(p, false) / (med * 1e6) : 0;
}

static bool timing_add(struct timing *tm, double ev, double wall)
{
	if (tm->n == tm->cap) {
		int cap = tm->cap ? tm->cap * 2 : 64;
		double *e = realloc(tm->ev, (size_t)cap * sizeof(double));
		double *w;

		if (!e)
			return false;
		tm->ev = e;
		w = realloc(tm->wall, (size_t)cap * sizeof(double));
		if (!w)
			return false;
		tm->wall = w;
		tm->cap = cap;
	}
	tm->ev[tm->n] = ev;
	tm->wall[tm->n] = wall;
	tm->n++;
	return true;
}

/* Runs nk (1 to BENCH_MAX_RACE) prepared kernels interleaved, each rep
 * launching all of them in an order rotated from one rep to the next; ratio
 * (nk == 2 only, may be NULL): the paired ratio of the second to the first. */
static enum tcx_status measure(struct device *dev, const struct prepared *const *prs, int nk,
			       const struct problem *p, const struct bench_opts *o,
			       struct bench_result *res, double *ratio, struct tcx_error *err)
{
	const struct device_info *di = device_info_of(dev);
	struct bufset sets[MAX_SETS];
	struct timing tm[BENCH_MAX_RACE];
	struct buffer *scratch = NULL;
	void *scratch_host = NULL;
	size_t scratch_bytes = 0;
	int nsets, rep = 0, launches = 0, flushes = 0;
	bool do_flush, events = use_events(di, o->timer);
	double total = 0;
	enum tcx_status st;

	memset(tm, 0, sizeof(tm));
	if (prs[0]->empty)
		return tcx_fail(err, TCX_EINVAL,
				"index '%s' has size 0: an empty problem has nothing to time",
				p->c->idx[problem_empty_index(p)].name);
	plan_rotation(di, p, o->flush, &nsets, &do_flush);
	st = make_sets(dev, prs, nk, p, o, sets, nsets, err);
	if (st)
		return st;
	if (do_flush) {
		scratch_bytes = (size_t)(di->cache_bytes > 0 ? 2 * di->cache_bytes : 64 << 20);
		scratch_host = calloc(1, scratch_bytes);
		if (!scratch_host || buffer_alloc(dev, scratch_bytes, &scratch, err) != TCX_OK) {
			/* no room to flush: rotation alone */
			free(scratch_host);
			scratch_host = NULL;
			do_flush = false;
		}
	}
	for (int k = 0; k < nk; k++) {
		memset(&res[k], 0, sizeof(res[k]));
		res[k].compile_s = prs[k]->compile_s;
		res[k].sets = nsets;
		res[k].flushed = do_flush;
		/* warm-up; the first launch's wall time is reported apart */
		for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); w++) {
			double ev = 0, wall = 0;

			if (stopped(o)) {
				st = tcx_fail(err, TCX_EINTR, "interrupted");
				goto out;
			}
			st = timed_launch(dev, prs[k], p, &sets[w % nsets], o, NULL, &wall, err);
			if (st)
				goto out;
			if (w == 0)
				res[k].first_ms = wall;
			(void)ev;
		}
	}
	for (;;) {
		bool enough = rep >= o->min_reps && total >= o->min_time;

		if (enough || rep >= o->max_reps)
			break;
		/* checked between launches, so that a signal stops even a long
		 * measurement at once; its times so far are dropped */
		if (stopped(o)) {
			st = tcx_fail(err, TCX_EINTR, "interrupted");
			goto out;
		}
		for (int k = 0; k < nk; k++) {
			double ev = 0, wall = 0;
			/* rotate the order from one rep to the next (a pair
			 * alternates), so that none always runs first */
			int kk = (k + rep) % nk;
			/* each launch of a round takes its own set, so that none
			 * finds its inputs in cache after the round's flush */
			int set = launches % nsets;

			if (do_flush && set == 0) {
				st = flush_cache(dev, scratch, scratch_host, scratch_bytes, err);
				if (st)
					goto out;
				flushes++;
			}
			st = timed_launch(dev, prs[kk], p, &sets[set], o, &ev, &wall, err);
			if (st)
				goto out;
			launches++;
			if (!timing_add(&tm[kk], ev, wall)) {
				st = tcx_fail(err, TCX_ENOMEM, "out of memory");
				goto out;
			}
			total += (events ? ev : wall) * 1e-3;
		}
		rep++;
	}
	if (nk == 2 && ratio) {
		/* the paired ratio b/a per rep, before summarise sorts the times */
		double *q = malloc((size_t)rep * sizeof(*q));

		if (!q) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out;
		}
		for (int i = 0; i < rep; i++)
			q[i] = events ? tm[1].ev[i] / tm[0].ev[i] : tm[1].wall[i] / tm[0].wall[i];
		bench_median_ci(q, rep, &ratio[0], &ratio[1], &ratio[2]);
		free(q);
	}
	for (int k = 0; k < nk; k++)
		summarise(&tm[k], p, events, &res[k]);
	tcx_log(TCX_LOG_DEBUG, "timed %d launch%s on %d input set%s, %d cache flush%s between them",
		launches, launches == 1 ? "" : "es", nsets, nsets == 1 ? "" : "s", flushes,
		flushes == 1 ? "" : "es");
out:
	for (int k = 0; k < nk; k++) {
		free(tm[k].ev);
		free(tm[k].wall);
	}
	free_sets(dev, sets, nsets);
	buffer_free(dev, scratch);
	free(scratch_host);
	return st;
}

enum tcx_status bench_run(struct device *dev, const struct prepared *pr, const struct problem *p,
			  const struct bench_opts *o, struct bench_result *r, struct tcx_error *err)
{
	const struct prepared *one[1] = { pr };
	enum tcx_status st = bench_opts_check(o, err);

	if (st)
		return st;
	if (pr->host)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"the host reference is not benchmarked; choose a device");
	return measure(dev, one, 1, p, o, r, NULL, err);
}

enum tcx_status bench_compare(struct device *dev, const struct prepared *a,
			      const struct prepared *b, const struct problem *p,
			      const struct bench_opts *o, struct bench_result *ra,
			      struct bench_result *rb, double ratio[3], struct tcx_error *err)
{
	const struct prepared *two[2] = { a, b };
	struct bench_result res[2];
	enum tcx_status st = bench_opts_check(o, err);

	if (!st)
		st = measure(dev, two, 2, p, o, res, ratio, err);
	if (st)
		return st;
	*ra = res[0];
	*rb = res[1];
	return TCX_OK;
}

enum tcx_status bench_race(struct device *dev, const struct prepared *const *prs, int n,
			   const struct problem *p, const struct bench_opts *o,
			   struct bench_result *res, struct tcx_error *err)
{
	struct bench_opts each = *o;
	enum tcx_status st = bench_opts_check(o, err);

	if (st)
		return st;
	/* min_time is what the launches of all take together */
	each.min_time = o->min_time * n;
	if (n < 1 || n > BENCH_MAX_RACE)
		return tcx_fail(err, TCX_EINVAL, "a race times 1 to %d kernels, not %d",
				BENCH_MAX_RACE, n);
	for (int k = 0; k < n; k++)
		if (prs[k]->host)
			return tcx_fail(err, TCX_EUNSUPPORTED,
					"the host reference is not benchmarked; choose a device");
	return measure(dev, prs, n, p, &each, res, NULL, err);
}

/* bench.h - timing a prepared kernel honestly: warm-up launches, repeats
 * until both a minimum count and a minimum time are reached, the median
 * with a 95% confidence interval, device-event and host-wall times side by
 * side, rotating input sets or flushing the cache when the working set
 * would stay in cache, and compile time kept apart from kernel time. */
#ifndef TCX_BENCH_H
#define TCX_BENCH_H

#include "run/run.h"

/* The most timed launches one measurement makes (bench_opts.max_reps), and
 * so the largest min_reps there is any sense in asking for: a count past it
 * is refused rather than cut, so that nobody waits for one that cannot
 * be reached. */
#define BENCH_MAX_REPS 100000

enum bench_timer { TIMER_AUTO, TIMER_EVENT, TIMER_WALL };
enum bench_flush { FLUSH_AUTO, FLUSH_ON, FLUSH_OFF };

struct bench_opts {
	int warmup;           /* launches before timing */
	int min_reps;         /* at least this many timed launches ... */
	double min_time;      /* ... and at least this many seconds of them */
	int max_reps;         /* and at most this many */
	enum bench_timer timer;
	enum bench_flush flush;
	uint64_t seed;
	double alpha[2], beta[2];
	/* set asynchronously (a signal): the measurement stops before its
	 * next launch with TCX_EINTR and reports nothing; NULL: never */
	volatile int *stop;
};
void bench_opts_default(struct bench_opts *o);
/* TCX_EINVAL, naming the setting, unless min_reps is 1 to BENCH_MAX_REPS,
 * max_reps is min_reps to BENCH_MAX_REPS and min_time is a finite number
 * of seconds >= 0.  bench_run and bench_compare check this first. */
enum tcx_status bench_opts_check(const struct bench_opts *o, struct tcx_error *err);
bool bench_timer_parse(const char *s, enum bench_timer *out);
bool bench_flush_parse(const char *s, enum bench_flush *out);
/* The timer bench_run uses on a device for t: "event" or "wall" (auto:
 * events where the device's are trustworthy, else the wall clock). */
const char *bench_timer_name(const struct device_info *di, enum bench_timer t);

struct bench_result {
	double median_ms, min_ms, max_ms, ci_lo_ms, ci_hi_ms; /* by the chosen timer */
	double event_median_ms, wall_median_ms;
	int reps;
	const char *timer;   /* "event" or "wall" */
	double compile_s;    /* building the program: compiling it or loading it
			      * from the on-disk kernel cache (0: this process
			      * had built it already) */
	double first_ms;     /* the first launch's wall time */
	double gflops, gbs;  /* from the median */
	int sets;            /* input sets rotated */
	bool flushed;        /* the cache was flushed before each round of the
			      * rotation (every `sets` timed launches) */
};

/* Times `pr` on problem p.  Inputs are random (o->seed), never zeros.
 * TCX_EINTR when o->stop was set before the measurement was complete. */
enum tcx_status bench_run(struct device *dev, const struct prepared *pr, const struct problem *p,
			  const struct bench_opts *o, struct bench_result *r,
			  struct tcx_error *err);

/* The median and the 95% confidence interval of the median of n samples
 * (sorted in place), from order statistics: no assumption on the shape of
 * the distribution. */
void bench_median_ci(double *v, int n, double *median, double *lo, double *hi);

/* A paired A/B comparison: launches of a and b interleaved so that drifts
 * of a shared machine hit both; the median ratio time(b)/time(a) with its
 * 95% confidence interval. */
enum tcx_status bench_compare(struct device *dev, const struct prepared *a,
			      const struct prepared *b, const struct problem *p,
			      const struct bench_opts *o, struct bench_result *ra,
			      struct bench_result *rb, double ratio[3], struct tcx_error *err);

/* The most kernels one race times side by side. */
#define BENCH_MAX_RACE 8

/* A race: the n (1 to BENCH_MAX_RACE) kernels' launches interleaved, the
 * order rotated every rep, each timed for o's min_reps and min_time as if
 * alone, so that a drift of a shared machine (a CPU's clock, a neighbour)
 * hits all alike.  res[k] is prs[k]'s result; all on problem p. */
enum tcx_status bench_race(struct device *dev, const struct prepared *const *prs, int n,
			   const struct problem *p, const struct bench_opts *o,
			   struct bench_result *res, struct tcx_error *err);

#endif /* TCX_BENCH_H */

/* tune.h - the tuner: measuring candidate solutions over problem sizes
 * (through the results store, so a re-run skips what is measured), Tensile's
 * incremental benchmark protocol, search strategies for large spaces, the
 * validation of winners, and library logic. */
#ifndef TCX_TUNE_H
#define TCX_TUNE_H

#include <jansson.h>

#include "bench/bench.h"
#include "store/store.h"
#include "tune/config.h"

enum tune_strategy {
	STRAT_PROTOCOL,   /* Tensile's incremental protocol (the default) */
	STRAT_EXHAUSTIVE, /* every candidate of the space */
	STRAT_RANDOM,     /* a uniform sample of --budget candidates */
	STRAT_ANNEAL,     /* simulated annealing over one-parameter moves */
	STRAT_GENETIC,    /* a small genetic algorithm */
};
bool strategy_parse(const char *s, enum tune_strategy *out);
const char *strategy_name(enum tune_strategy s);

/* What the tuner reports as it goes (progress displays). */
struct tune_progress {
	const char *problem;  /* Tensile name */
	int group, ngroups;
	const char *step;     /* "common 01 (DepthU)", "final" */
	int64_t done, total;  /* measurements in this step */
	double best_gflops;
	double eta_s;         /* < 0 when unknown */
};
typedef void (*tune_progress_fn)(const struct tune_progress *p, void *ctx);

struct tune_opts {
	enum tune_strategy strategy;
	int budget;             /* evaluations for random/anneal/genetic */
	uint64_t seed;
	bool force;             /* measure again what the store holds */
	bool dry_run;           /* plan and count, run nothing */
	bool validate;          /* validate every winner (default true) */
	struct bench_opts bench;
	const char *out_dir;    /* where logic files go */
	tune_progress_fn progress;
	void *progress_ctx;
	volatile int *stop;     /* non-zero (a signal): stop before the next measurement */
};
void tune_opts_default(struct tune_opts *o);

/* A measurement as the tuner sees it. */
struct measured {
	enum meas_status status;
	double median_ms, ci_lo_ms, ci_hi_ms;
	double gflops, gflops_lo, gflops_hi; /* from the median and the CI */
	bool from_store;
	char reason[512];
};

/* What one tuning run did. */
struct tune_summary {
	int64_t measured, reused, skipped, failed, evaluations;
	int logic_files;
	int winners_dropped;
	double seconds;
	json_t *report; /* per problem: steps, winners, logic path (caller decrefs) */
};

/* The state shared by a tuning run. */
struct tune_ctx {
	struct device *dev;
	const struct device_info *di;
	struct store *store;
	const struct tune_opts *o;
	struct tune_summary *sum;
	double t_start;
	double measure_s; /* time spent measuring, for ETAs */
	int64_t nmeasure;
};

/* Measures solution s on the given sizes of contraction c, or returns the
 * stored measurement (unless o->force).  Solutions that are invalid, over a
 * device limit, fail to build or to launch are recorded with the reason and
 * come back with status MEAS_SKIPPED/MEAS_FAILED and TCX_OK; only errors
 * that stop the run (memory, the store, a signal) are returned. */
enum tcx_status tune_measure(struct tune_ctx *t, const struct tcx_contraction *c,
			     const struct solution *s, const int64_t *sizes, struct measured *m,
			     struct tcx_error *err);

/* The store's problem key for a contraction (Tensile's name). */
void tune_problem_key(const struct tcx_contraction *c, char *buf, size_t len);

/* Runs every problem and group of a config: the protocol or a strategy,
 * then the final benchmark, validation of winners and library logic. */
enum tcx_status tune_config(struct tune_ctx *t, const struct config *cfg,
			    struct tcx_error *err);

#endif /* TCX_TUNE_H */

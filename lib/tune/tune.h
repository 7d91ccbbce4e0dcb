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

/* The search strategies, one row each in strategy.c's table, which names
 * them for --strategy (strategy_parse, strategy_name). */
enum tune_strategy {
	STRAT_PROTOCOL,   /* Tensile's incremental protocol (the default) */
	STRAT_EXHAUSTIVE, /* every candidate of the space */
	STRAT_RANDOM,     /* a uniform sample of --budget candidates */
	STRAT_ANNEAL,     /* simulated annealing over one-parameter moves */
	STRAT_GENETIC,    /* a small genetic algorithm */
	STRAT_MODEL,      /* an expression's space in the model's order (tune/space.h) */
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
	int budget;             /* evaluations for random/anneal/genetic/model */
	double budget_s;        /* > 0: the model strategy's budget in seconds instead */
	uint64_t seed;
	bool force;             /* measure again what the store holds */
	bool dry_run;           /* plan and count, run nothing */
	bool validate;          /* validate every winner (default true) */
	/* > 0: the relative error every solution must meet (plan/arith.h):
	 * winners are validated against it instead of the type's bound (a
	 * miss drops them), and an expression's space may hold plain tf32 */
	double accuracy;
	struct bench_opts bench;
	const char *out_dir;    /* where logic files go */
	tune_progress_fn progress;
	void *progress_ctx;
	volatile int *stop;     /* non-zero (a signal): stop before the next measurement */
	bool from_store;        /* measure nothing: select from what the store holds */
	int shard_k, shard_n;   /* measure only tasks k (0-based) modulo n; n <= 1: all */
	int jobs;               /* host threads compiling ahead of the devices (-j) */
	/* the fastest solutions of each size timed again side by side
	 * before the logic is written (tune.c's race_table); < 2: none */
	int race;
	/* strides in elements for every problem and size, as model.h's
	 * problem_parse_strides takes them ("A=[1,1040],C=[..]"); NULL:
	 * packed.  Measurements with strides are stored apart
	 * (tune_problem_key). */
	const char *strides;
	/* set by the command line, which a config's GlobalParameters do not override */
	bool cli_min_time, cli_min_reps, cli_timer;
};
void tune_opts_default(struct tune_opts *o);

/* A measurement as the tuner sees it. */
struct measured {
	enum meas_status status;
	double median_ms, ci_lo_ms, ci_hi_ms, min_ms, max_ms;
	double gflops, gflops_lo, gflops_hi; /* from the median and the CI */
	int reps;
	char timer[8];
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

/* The store rows a run has measured or read back, by a hash of their
 * key: a row counts as reused (tune_summary.reused) once, and only when
 * this run did not measure it itself. */
struct tune_seen {
	uint64_t *v; /* open addressing; 0 is an empty slot */
	size_t n, cap;
};

#define TUNE_MAX_DEVICES 64
#define TUNE_MAX_JOBS 64

struct tune_mpi;

/* The state shared by a tuning run.  With several devices (all of one
 * model: results and logic are per model), one worker thread each. */
struct tune_ctx {
	struct device *dev;          /* devs[0] */
	const struct device_info *di;/* of devs[0]: the model the results are for */
	struct device *devs[TUNE_MAX_DEVICES];
	int ndev;
	struct store *store;
	const struct tune_opts *o;
	struct tune_summary *sum;
	struct tune_mpi *mpi;        /* NULL: no MPI */
	int shard_k, shard_n;
	int64_t task_seq;            /* tasks of this group enumerated so far
				      * (shards and MPI ranks split by it) */
	double t_start;
	double measure_s;            /* time spent measuring, for ETAs */
	int64_t nmeasure;
	/* called (under the exec lock) after each measurement */
	void (*progress_fn)(struct tune_ctx *t, const struct measured *m);
	void *progress_state;
	struct tune_seen seen;       /* the run's rows (tune_config), under the exec lock */
};

/* The stored measurement of solution s at these sizes on this device
 * model, if any (*found says).  One this run has not measured counts as
 * reused, the first time it is read. */
enum tcx_status tune_lookup(struct tune_ctx *t, const struct tcx_contraction *c,
			    const struct solution *s, const int64_t *sizes, struct measured *m,
			    bool *found, struct tcx_error *err);

/* Measures solution s on the given sizes of contraction c on device
 * devs[dev] and records it in the store.  Solutions that are invalid, over
 * a device limit, fail to build or to launch are recorded with the reason
 * and come back with status MEAS_SKIPPED/MEAS_FAILED and TCX_OK; only
 * errors that stop the run (memory, the store) are returned.  Thread-safe
 * for distinct devices. */
enum tcx_status tune_measure_on(struct tune_ctx *t, int dev, const struct tcx_contraction *c,
				const struct solution *s, const int64_t *sizes,
				struct measured *m, struct tcx_error *err);

/* Times the n solutions of c at these sizes side by side on the first
 * device (bench_race), so that a drift of the machine between their solo
 * measurements cannot decide between them; with pl (NULL: none), the
 * planner's plan of c at these sizes too (planner_plan: merged, permuted,
 * or by another kernel), as racer n, its result in m[n].  2 to
 * BENCH_MAX_RACE racers.  m[k] is sols[k]'s result; one that cannot be
 * prepared now, or a race that a kernel's failure stops, leaves
 * MEAS_SKIPPED (the solo measurement stands).  The store keeps the solo
 * measurements, which the steps of a re-run decide from as this run did.
 * Only errors that stop the run are returned.  Fake timing
 * ($TCX_FAKE_TIMING) rates the planner's plan at 200 GFLOP/s, above every
 * solution's, so that tests see it win. */
struct plan_result;
enum tcx_status tune_race(struct tune_ctx *t, const struct tcx_contraction *c,
			  const struct solution *const *sols, int n, const struct plan_result *pl,
			  const int64_t *sizes, struct measured *m, struct tcx_error *err);

/* Records a measurement taken elsewhere (another MPI rank) in the store. */
enum tcx_status tune_record(struct tune_ctx *t, const struct tcx_contraction *c,
			    const struct solution *s, const int64_t *sizes,
			    const struct measured *m, struct tcx_error *err);

/* The results store's row of one measurement, as tune and bench write it.
 * tune_row_key fills m's key and clears the rest: the device's model,
 * driver and backend, the problem key (tune_problem_key of c and strides),
 * the sizes (given by c's index ids) in the order of the key's letters,
 * solution s's store key (solution_store_key) and this tcx's version.
 * tune_measured makes a measurement of problem p from how its preparing
 * and timing went: TCX_OK with the timing br, or a status that describes
 * the solution (TCX_EREJECT, TCX_ELIMIT, TCX_EUNSUPPORTED: skipped; a
 * build, launch, device or timeout failure: failed) with its reason.
 * tune_row_result copies a measurement into the row, timestamped now. */
void tune_row_key(struct measurement *m, const struct device_info *di,
		  const struct tcx_contraction *c, const char *strides, const struct solution *s,
		  const int64_t *sizes);
void tune_measured(struct measured *m, enum tcx_status st, const char *reason,
		   const struct bench_result *br, const struct problem *p);
void tune_row_result(struct measurement *r, const struct measured *m);

/* The store's problem key for a contraction: Tensile's name, followed by
 * the strides when there are any (tune_opts.strides), so that strided and
 * packed measurements of one problem type never mix.  The strides are
 * written as problem_strides_key writes them, in the order of the name's
 * letters, as the store's sizes are (store.h). */
void tune_problem_key(const struct tcx_contraction *c, const char *strides, char *buf,
		      size_t len);
/* The problem of contraction c at these sizes with the run's strides
 * (tune_opts.strides). */
enum tcx_status tune_problem_at(const struct tune_ctx *t, const struct tcx_contraction *c,
				const int64_t *sizes, struct problem *p, struct tcx_error *err);

/* Runs every problem and group of a config: the protocol or a strategy,
 * then the final benchmark, validation of winners and library logic.
 * Returns TCX_EINCOMPLETE, err naming the first such step, when the store
 * lacks measurements that other shards owe (with --shard, after this
 * shard's slice of the first incomplete step of every group: another
 * round is needed) or that --from-store needs. */
enum tcx_status tune_config(struct tune_ctx *t, const struct config *cfg,
			    struct tcx_error *err);

#endif /* TCX_TUNE_H */

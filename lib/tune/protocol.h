/* protocol.h - the search over a config group: Tensile's incremental
 * protocol (protocol.c) and the strategies for large spaces (strategy.c).
 * Both end with a list of candidate solutions and the final sizes. */
#ifndef TCX_PROTOCOL_H
#define TCX_PROTOCOL_H

#include "tune/tune.h"

#define PROTOCOL_MAX_SIZES 1000000
#define PROTOCOL_MAX_SETS 100000

/* A hard-coded parameter set with its winners so far. */
struct pset {
	json_t *params; /* name -> value, applied over the initial values */
	double score;   /* GFLOP/s of its last winner */
	bool alive;
};

struct protocol {
	struct tune_ctx *t;
	const struct tcx_contraction *c;
	const char *name;      /* the problem's Tensile name, for progress */
	int group, ngroups;
	bool dry_run;
	volatile int *stop;    /* set asynchronously: stop at the next measurement */
	json_t *defaults;      /* solution_default as JSON */
	json_t *initial;       /* InitialSolutionParameters (first values) */
	struct pset *sets;
	int nsets;
	struct size_list sizes;       /* the current step's sizes */
	struct size_list final_sizes; /* BenchmarkFinalParameters' sizes */
	/* progress of the current step */
	const char *step_label;
	int64_t done, total;
	double best_gflops;
	bool dummy_step;
};

/* Runs the protocol up to (not including) the final benchmark: afterwards
 * the live sets are the final candidates and final_sizes is set. */
enum tcx_status protocol_run(struct protocol *pc, const struct config_group *g,
			     struct tcx_error *err);
void protocol_release(struct protocol *pc);

/* Takes a batch of measurements (or, in a dry run, pretends to). */
struct task;
enum tcx_status protocol_measure(struct protocol *pc, struct task *v, int64_t n,
				 struct tcx_error *err);

/* A solution from layers of name -> value objects over the defaults. */
enum tcx_status protocol_solution_from_layers(json_t *const *layers, int n, struct solution *s,
					      struct tcx_error *err);
/* Expands a config step's ProblemSizes (sorted, unique). */
enum tcx_status protocol_sizes_from_config(const struct config_sizes *cs, int nidx,
					   struct size_list *out, struct tcx_error *err);

/* Runs strategy strat over group g: protocol_run for STRAT_PROTOCOL; the
 * others search the Cartesian space of every benchmarked parameter of the
 * group, evaluating candidates on the final sizes (the objective is their
 * summed time), and leave the evaluated candidates as live sets (best
 * first) and final_sizes set, like protocol_run.  The strategies are one
 * table in strategy.c. */
enum tcx_status strategy_run(struct protocol *pc, const struct config_group *g,
			     enum tune_strategy strat, int budget, uint64_t seed,
			     struct tcx_error *err);

#endif /* TCX_PROTOCOL_H */

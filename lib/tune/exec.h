/* exec.h - batches of measurements (tasks) and who carries them out: the
 * store, this process's devices, a shard, or MPI ranks (exec.c, mpi.c). */
#ifndef TCX_EXEC_H
#define TCX_EXEC_H

#include "tune/tune.h"

/* One measurement to take: a solution at one size. */
struct task {
	struct solution sol;
	const int64_t *sizes; /* borrowed: nidx sizes */
	bool valid;           /* false: the candidate did not even make a solution */
	bool todo;            /* this process measures it */
	bool have;            /* m holds its result */
	struct measured m;
};

/* Fills every task's result: from the store, else by measuring those that
 * are this process's (all, or its shard's or MPI rank's share).  Returns
 * TCX_EINCOMPLETE when some belong to other shards (or, with --from-store,
 * are not in the store). */
enum tcx_status exec_tasks_run(struct tune_ctx *t, const struct tcx_contraction *c, struct task *v,
			       int64_t n, struct tcx_error *err);

/* The lock around what worker threads share (store, summary, display). */
void exec_lock_acquire(void);
void exec_lock_release(void);

/* MPI, when tcx is built with it and started by mpirun (mpi.c). */
struct tune_mpi {
	int rank, size, local_rank;
	/* measures this rank's share of the tasks not yet `have`, then shares
	 * every result with every rank; rank 0 records them in its store */
	enum tcx_status (*run)(struct tune_ctx *t, const struct tcx_contraction *c, struct task *v,
			       int64_t n, int64_t base, struct tcx_error *err);
};

#endif /* TCX_EXEC_H */

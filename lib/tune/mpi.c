/* mpi.c - tuning across MPI ranks (built with TCX_WITH_MPI).  Every rank
 * runs the same deterministic protocol; in each batch of measurements rank
 * 0 says which are already in its store, the others are split round-robin
 * by their global number, and every result is shared with every rank, so
 * that all ranks make the same decisions.  Only rank 0 keeps a store and
 * writes logic.  A rank that dies ends the job; rank 0's store keeps what
 * was gathered, and a re-run measures only the rest. */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "tune/exec.h"
#include "tune/mpi.h"

static enum tcx_status mpi_fail(struct tcx_error *err, int rc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(rc, msg, &len);
	return tcx_fail(err, TCX_EDEVICE, "MPI %s failed: %.*s", what, len, msg);
}

/* A result as it travels: the task's number and its measurement. */
struct wire {
	int64_t index;
	struct measured m;
};

static enum tcx_status mpi_run(struct tune_ctx *t, const struct tcx_contraction *c,
			       struct task *v, int64_t n, int64_t base, struct tcx_error *err)
{
	struct tune_mpi *mp = t->mpi;
	unsigned char *flags = calloc((size_t)(n ? n : 1), 1);
	struct wire *mine = NULL, *all = NULL;
	int *counts = NULL, *displs = NULL, nmine = 0, total = 0, rc;
	enum tcx_status st = TCX_OK;

	if (!flags)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	/* rank 0's view of what is already measured, for everyone */
	for (int64_t i = 0; i < n; i++)
		flags[i] = v[i].have;
	rc = MPI_Bcast(flags, (int)n, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS) {
		st = mpi_fail(err, rc, "broadcast");
		goto out;
	}
	for (int64_t i = 0; i < n; i++) {
		if (mp->rank != 0 && flags[i] && v[i].valid) {
			/* rank 0 has it; its value comes with the exchange below */
			v[i].have = false;
		}
		v[i].todo = v[i].valid && !flags[i] && (base + i) % mp->size == mp->rank &&
			    (t->shard_n <= 1 || (base + i) % t->shard_n == t->shard_k);
	}
	mine = calloc((size_t)(n ? n : 1), sizeof(*mine));
	counts = calloc((size_t)mp->size, sizeof(*counts));
	displs = calloc((size_t)mp->size, sizeof(*displs));
	if (!mine || !counts || !displs) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	for (int64_t i = 0; i < n && !st; i++) {
		if (!v[i].todo || (t->o->stop && *t->o->stop))
			continue;
		st = tune_measure_on(t, 0, c, &v[i].sol, v[i].sizes, &v[i].m, err);
		if (st)
			break;
		v[i].have = true;
		if (t->progress_fn) {
			exec_lock_acquire();
			t->progress_fn(t, &v[i].m);
			exec_lock_release();
		}
	}
	/* a failure on one rank must not leave the others waiting: agree first */
	{
		int bad = st != TCX_OK, anybad = 0;

		MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		if (anybad) {
			if (!st)
				st = tcx_fail(err, TCX_EDEVICE, "another MPI rank stopped with an error");
			goto out;
		}
	}
	/* every rank's new results, and rank 0's stored ones, to every rank */
	for (int64_t i = 0; i < n; i++)
		if (v[i].have && (v[i].todo || (mp->rank == 0 && flags[i]))) {
			mine[nmine].index = i;
			mine[nmine].m = v[i].m;
			nmine++;
		}
	{
		int bytes = nmine * (int)sizeof(struct wire);

		rc = MPI_Allgather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS) {
			st = mpi_fail(err, rc, "gather");
			goto out;
		}
		for (int r = 0; r < mp->size; r++) {
			displs[r] = total;
			total += counts[r];
		}
		all = malloc((size_t)(total ? total : 1));
		if (!all) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out;
		}
		rc = MPI_Allgatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE,
				    MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS) {
			st = mpi_fail(err, rc, "gather");
			goto out;
		}
	}
	for (int r = 0; r < mp->size; r++) {
		const struct wire *w = (const struct wire *)((const char *)all + displs[r]);
		int k = counts[r] / (int)sizeof(struct wire);

		for (int j = 0; j < k; j++) {
			int64_t i = w[j].index;

			if (i < 0 || i >= n)
				continue;
			if (!v[i].have || r != mp->rank) {
				v[i].m = w[j].m;
				v[i].have = true;
			}
			/* rank 0 records what the other ranks measured */
			if (mp->rank == 0 && r != 0 && t->store) {
				exec_lock_acquire();
				st = tune_record(t, c, &v[i].sol, v[i].sizes, &w[j].m, err);
				exec_lock_release();
				if (st)
					goto out;
			}
		}
	}
out:
	free(flags);
	free(mine);
	free(all);
	free(counts);
	free(displs);
	return st;
}

static struct tune_mpi the_mpi;

bool tune_mpi_requested(void)
{
	/* started by mpirun (Open MPI, or a PMI launcher) */
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_RANK") || getenv("PMIX_RANK");
}

enum tcx_status tune_mpi_start(int *argc, char ***argv, struct tune_mpi **out,
			       struct tcx_error *err)
{
	int rc = MPI_Init(argc, argv);
	const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");

	*out = NULL;
	if (rc != MPI_SUCCESS)
		return mpi_fail(err, rc, "initialisation");
	MPI_Comm_rank(MPI_COMM_WORLD, &the_mpi.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &the_mpi.size);
	the_mpi.local_rank = lr ? atoi(lr) : the_mpi.rank;
	the_mpi.run = mpi_run;
	*out = &the_mpi;
	return TCX_OK;
}

void tune_mpi_stop(bool abort_job)
{
	if (abort_job)
		MPI_Abort(MPI_COMM_WORLD, 1);
	else
		MPI_Finalize();
}

int tune_mpi_agree_status(int st)
{
	int worst = 0;

	MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

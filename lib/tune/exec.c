/* exec.c - carrying out a batch of measurements (tasks): from the store
 * where they are already measured, else on this process's devices (one
 * worker thread per device, taking tasks from a shared queue), or only a
 * deterministic slice of them (--shard K/N), or spread over MPI ranks.  Every
 * process enumerates the same tasks in the same order, so a task's global
 * number decides who measures it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tune/exec.h"

/* One lock for what workers share: the store, the summary, the queue and
 * the progress display. */
static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;

void exec_lock_acquire(void)
{
	pthread_mutex_lock(&exec_lock);
}

void exec_lock_release(void)
{
	pthread_mutex_unlock(&exec_lock);
}

struct queue {
	struct tune_ctx *t;
	const struct tcx_contraction *c;
	struct task *v;
	int64_t n, next;
	int64_t compile_next; /* compile-ahead cursor */
	bool measuring_done;
	enum tcx_status st;
	struct tcx_error err;
	int64_t done;
};

static bool mine(const struct tune_ctx *t, int64_t global)
{
	if (t->shard_n > 1)
		return global % t->shard_n == t->shard_k;
	return true;
}

struct worker {
	struct queue *q;
	int dev;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct queue *q = w->q;

	for (;;) {
		int64_t i;
		struct tcx_error e = { 0 };
		enum tcx_status st;
		struct measured m;

		exec_lock_acquire();
		while (q->next < q->n && (q->v[q->next].have || !q->v[q->next].todo))
			q->next++;
		if (q->next >= q->n || q->st || (q->t->o->stop && *q->t->o->stop)) {
			exec_lock_release();
			break;
		}
		i = q->next++;
		exec_lock_release();
		st = tune_measure_on(q->t, w->dev, q->c, &q->v[i].sol, q->v[i].sizes, &m, &e);
		exec_lock_acquire();
		if (st) {
			if (!q->st) {
				q->st = st;
				q->err = e;
			}
		} else {
			q->v[i].m = m;
			q->v[i].have = true;
			q->done++;
			if (q->t->progress_fn)
				q->t->progress_fn(q->t, &m);
		}
		exec_lock_release();
	}
	return NULL;
}

/* Compile-ahead (-j): host threads build the programs of the tasks still to
 * measure, so that the devices do not wait for the compiler.  Each program
 * lands in its device's in-process cache and in the disk cache, where the
 * other devices of the model find it.  Failures are left for the
 * measurement, which records them. */
static void *compile_ahead(void *arg)
{
	struct worker *w = arg;
	struct queue *q = w->q;
	struct tune_ctx *t = q->t;

	for (;;) {
		int64_t i;
		struct problem p;
		struct prepared pr;
		struct tcx_error e;
		bool seen = false;

		exec_lock_acquire();
		while (q->compile_next < q->n && !q->v[q->compile_next].todo)
			q->compile_next++;
		if (q->compile_next >= q->n || q->st || q->measuring_done ||
		    (t->o->stop && *t->o->stop)) {
			exec_lock_release();
			break;
		}
		i = q->compile_next++;
		/* one build per solution: sizes do not change the source */
		for (int64_t j = i - 1; j >= 0 && j >= i - 64 && !seen; j--)
			seen = q->v[j].todo && solution_equal(&q->v[j].sol, &q->v[i].sol);
		exec_lock_release();
		if (seen || tune_problem_at(t, q->c, q->v[i].sizes, &p, &e) != TCX_OK)
			continue;
		contract_prepare(t->ndev > 0 ? t->devs[(w->dev + (int)i) % t->ndev] : t->dev, q->c,
				 &p, &q->v[i].sol, &pr, NULL, &e);
	}
	return NULL;
}

enum tcx_status exec_tasks_run(struct tune_ctx *t, const struct tcx_contraction *c, struct task *v,
			       int64_t n, struct tcx_error *err)
{
	struct queue q;
	enum tcx_status st;
	int64_t missing = 0, base = t->task_seq;

	t->task_seq += n;
	/* 1: what the store holds (unless --force) */
	for (int64_t i = 0; i < n; i++) {
		v[i].have = false;
		v[i].todo = false;
		if (!v[i].valid) {
			v[i].have = true; /* nothing to measure: invalid before any device */
			continue;
		}
		if (t->store && (!t->o->force || t->o->from_store)) {
			bool found;

			exec_lock_acquire();
			st = tune_lookup(t, c, &v[i].sol, v[i].sizes, &v[i].m, &found, err);
			exec_lock_release();
			if (st)
				return st;
			if (found) {
				v[i].have = true;
				continue;
			}
		}
		v[i].todo = !t->o->from_store && mine(t, base + i);
	}
	/* 2: this process's share, on its devices (or its MPI rank's share) */
	if (t->mpi && t->mpi->size > 1) {
		st = t->mpi->run(t, c, v, n, base, err);
		if (st)
			return st;
	} else {
		pthread_t tid[TUNE_MAX_DEVICES], ctid[TUNE_MAX_JOBS];
		struct worker w[TUNE_MAX_DEVICES], cw[TUNE_MAX_JOBS];
		int started = 0, nw = t->ndev > 0 ? t->ndev : 1, ncomp = 0;
		int jobs = t->o->jobs > TUNE_MAX_JOBS ? TUNE_MAX_JOBS : t->o->jobs;

		memset(&q, 0, sizeof(q));
		q.t = t;
		q.c = c;
		q.v = v;
		q.n = n;
		for (int k = 0; k < nw; k++) {
			w[k].q = &q;
			w[k].dev = k;
		}
		for (int k = 0; k + 1 < jobs; k++) {
			cw[k].q = &q;
			cw[k].dev = k;
			if (pthread_create(&ctid[k], NULL, compile_ahead, &cw[k]) != 0)
				break;
			ncomp = k + 1;
		}
		for (int k = 1; k < nw; k++) {
			if (pthread_create(&tid[k], NULL, work, &w[k]) != 0)
				break;
			started = k;
		}
		work(&w[0]);
		for (int k = 1; k <= started; k++)
			pthread_join(tid[k], NULL);
		exec_lock_acquire();
		q.measuring_done = true;
		exec_lock_release();
		for (int k = 0; k < ncomp; k++)
			pthread_join(ctid[k], NULL);
		if (q.st) {
			*err = q.err;
			return q.st;
		}
	}
	if (t->o->stop && *t->o->stop)
		return tcx_fail(err, TCX_EINTR, "interrupted");
	/* 3: anything still missing belongs to other shards, or to a store
	 * that lacks it (--from-store) */
	for (int64_t i = 0; i < n; i++)
		missing += !v[i].have;
	if (missing && t->o->from_store)
		return tcx_fail(err, TCX_EINCOMPLETE,
				"the store lacks %lld measurement%s of this step: run every shard "
				"on the merged store, merge their stores and run again",
				(long long)missing, missing == 1 ? "" : "s");
	if (missing)
		return tcx_fail(err, TCX_EINCOMPLETE,
				"shard %d/%d measured its slice of this step; %lld measurement%s "
				"belong%s to other shards: merge the stores and run every shard "
				"again on the merged store (another round)",
				t->shard_k + 1, t->shard_n, (long long)missing,
				missing == 1 ? "" : "s", missing == 1 ? "s" : "");
	return TCX_OK;
}

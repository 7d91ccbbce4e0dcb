/* plan.c - the device API of include/tcx.h: devices shared within the
 * process, plans that compile and allocate once, and executes on the
 * caller's queue and buffers that do neither. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "backend/host/host.h"
#include "logic/logic.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "run/run.h"

struct tcx_device {
	struct device *dev;
	int refs;
	struct tcx_device *next;
};

/* The devices open in this process, so that one id is one device. */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tcx_device *devices;

struct tcx_plan {
	struct tcx_device *dev;	      /* a reference of the plan's */
	struct tcx_contraction *c;    /* the plan's copy */
	struct problem p;	      /* the caller's problem */
	struct plan_result pl;	      /* the planner's, when `planned` */
	bool planned;
	struct solution s;
	struct prepared pr;
	struct buffer *ws;	      /* GlobalSplitU's workspace, or NULL */
	struct buffer *wrap[3];	      /* the caller's buffers, by tensor_role */
	/* one input (implicit_b): the B of ones tcx makes, on the device or,
	 * for the host device, in host memory */
	struct buffer *ones;
	void *ones_host;
	size_t bytes[3];	      /* by tensor_role */
	char what[320];		      /* tcx_plan_describe */
};

TCX_API enum tcx_status tcx_device_open(const char *id, struct tcx_device **out,
					struct tcx_error *err)
{
	struct tcx_device *d;
	struct device *dev;
	enum tcx_status st;

	if (!out)
		return tcx_fail(err, TCX_EINVAL, "no place for the result");
	*out = NULL;
	pthread_mutex_lock(&devices_lock);
	st = device_open(id, &dev, err);
	if (st)
		goto out_unlock;
	/* one device per id: ids name it in several ways, so compare what
	 * was opened */
	for (d = devices; d; d = d->next)
		if (strcmp(device_info_of(d->dev)->id, device_info_of(dev)->id) == 0)
			break;
	if (d) {
		device_close(dev);
		d->refs++;
		*out = d;
		goto out_unlock;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		device_close(dev);
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out_unlock;
	}
	d->dev = dev;
	d->refs = 1;
	d->next = devices;
	devices = d;
	*out = d;
out_unlock:
	pthread_mutex_unlock(&devices_lock);
	return st;
}

TCX_API void tcx_device_close(struct tcx_device *dev)
{
	struct tcx_device **at;

	if (!dev)
		return;
	pthread_mutex_lock(&devices_lock);
	if (--dev->refs == 0) {
		for (at = &devices; *at && *at != dev; at = &(*at)->next)
			;
		if (*at)
			*at = dev->next;
		device_close(dev->dev);
		free(dev);
	}
	pthread_mutex_unlock(&devices_lock);
}

struct device *api_device(const struct tcx_device *dev)
{
	return dev ? dev->dev : NULL;
}

TCX_API const char *tcx_device_id(const struct tcx_device *dev)
{
	return dev ? device_info_of(dev->dev)->id : "";
}

TCX_API void *tcx_device_native(const struct tcx_device *dev, enum tcx_native what)
{
	if (!dev || device_is_host(dev->dev))
		return NULL;
	return device_native(dev->dev, what == TCX_NATIVE_CONTEXT  ? NATIVE_CONTEXT
				       : what == TCX_NATIVE_DEVICE ? NATIVE_DEVICE
								   : NATIVE_QUEUE);
}

/* The solution logic file `path` selects for the plan's sizes. */
static enum tcx_status logic_choice(struct tcx_plan *pl, const struct device_info *info,
				    const char *path, struct tcx_error *err)
{
	struct logic *lg;
	char want[256], have[256];
	enum tcx_status st = logic_load(path, &lg, err);
	int k;

	if (st)
		return st;
	contraction_tensile_name(pl->c, want, sizeof(want));
	contraction_tensile_name(lg->type, have, sizeof(have));
	if (strcmp(want, have) != 0) {
		st = tcx_fail(err, TCX_EINVAL, "logic file '%s' is for problem type %s, not %s",
			      path, have, want);
		goto out_free;
	}
	k = logic_lookup(lg, pl->p.size, NULL);
	if (k < 0) {
		st = tcx_fail(err, TCX_EINVAL, "logic file '%s' selects no solution for these sizes",
			      path);
		goto out_free;
	}
	/* in the planner's form where it was tuned in one */
	st = logic_plan(lg, k, &pl->p, info, &pl->pl, &pl->planned, &pl->s, err);
	if (st)
		goto out_free;
	snprintf(pl->what, sizeof(pl->what), "logic '%s' solution %d%s: ", path, k,
		 lg->sols[k].form.on && pl->planned ? " (in the planner's form)" : "");
out_free:
	logic_free(lg);
	return st;
}

/* The problem: sizes, then each tensor's strides where given. */
static enum tcx_status plan_problem(struct tcx_plan *pl, const int64_t *sizes,
				    const int64_t *const strides[3], struct tcx_error *err)
{
	static const enum tensor_role role[3] = { T_A, T_B, T_C };
	enum tcx_status st = problem_init(&pl->p, pl->c, sizes, err);

	for (int x = 0; x < 3 && !st; x++)
		if (strides[x])
			st = problem_set_strides(&pl->p, role[x], strides[x], pl->c->rank[role[x]],
						 err);
	return st;
}

/* The plan's solution (from logic, the planner for an accuracy and an
 * arithmetic at least as accurate as floor, or the built-in default where
 * no kernel chooses), prepared and ready; what the previous call chose is
 * released first. */
static enum tcx_status choose(struct tcx_plan *pl, struct tcx_device *dev,
			      const struct device_info *info, const char *logic, double accuracy,
			      enum arith floor, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;
	char name[256];

	contract_release(dev->dev, &pl->pr);
	memset(&pl->pr, 0, sizeof(pl->pr));
	if (pl->planned)
		plan_release(&pl->pl);
	pl->planned = false;
	pl->what[0] = '\0';
	if (logic) {
		st = logic_choice(pl, info, logic, err);
	} else if (problem_empty_index(&pl->p) >= 0 || info->type == DEV_HOST ||
		   planner_env_off()) {
		/* nothing for a kernel to do, no kernel at all, or the
		 * built-in default asked for, as the commands take it */
		solution_heuristic(pl->c, info, &pl->s);
		snprintf(pl->what, sizeof(pl->what), "%s: ",
			 info->type == DEV_HOST ? "host reference"
			 : planner_env_off()	? "built-in default ($TCX_PLANNER=0)"
						: "empty problem");
	} else {
		st = planner_plan_accuracy(&pl->p, info, planner_env_flags(), accuracy, floor,
					   &pl->pl, err);
		pl->planned = !st;
		if (!st) {
			pl->s = pl->pl.best.sol;
			snprintf(pl->what, sizeof(pl->what), "planner%s%s%s%s%s%s: ",
				 pl->pl.direct.on ? ", a permute of A into C for alpha 1 and "
						    "beta 0, else"
				 : pl->pl.ttm.on ? ", " : "",
				 /* the planner tries these kernels only where no
				  * permute alone runs the problem */
				 pl->pl.ttm.on ? ttm_kernel(&pl->pl.ttm.plan) : "",
				 pl->pl.ttm.on ? " instead of" : "",
				 pl->pl.best.permute[0].on ? ", A permuted" : "",
				 pl->pl.best.permute[1].on ? ", B permuted" : "",
				 pl->pl.best.permute[2].on ? ", C permuted" : "");
		}
	}
	if (st)
		return st;
	solution_name(&pl->s, name, sizeof(name));
	strncat(pl->what, name, sizeof(pl->what) - strlen(pl->what) - 1);
	st = contract_prepare_plan(dev->dev, &pl->p, pl->planned ? &pl->pl : NULL, &pl->s, &pl->pr,
				   NULL, err);
	if (!st)
		st = contract_ready(dev->dev, &pl->pr, err);
	return st;
}

/* One try of an accuracy asked (accuracy_search): the plan chosen for an
 * arithmetic at least as accurate as floor, run on random data and
 * measured against the host reference (validate_run's sample). */
struct plan_try {
	struct tcx_plan *pl;
	struct tcx_device *dev;
	const struct device_info *info;
	const char *logic;
	double accuracy;
};

static enum tcx_status plan_try(void *ctx, enum arith floor, struct accuracy_try *out,
				struct tcx_error *err)
{
	struct plan_try *x = ctx;
	struct validate_opts vo;
	enum tcx_status st;

	st = choose(x->pl, x->dev, x->info, x->logic, x->accuracy, floor, err);
	validate_opts_default(&vo);
	vo.sample = 1 << 16;
	vo.max_work = (int64_t)1 << 28;
	if (!st)
		st = validate_error(x->dev->dev, &x->pl->pr, &x->pl->p, &vo, &out->error, err);
	out->arith = arith_of(x->pl->c->dtype, &x->pl->s);
	return st;
}

TCX_API enum tcx_status tcx_plan_create(struct tcx_device *dev, const struct tcx_contraction *c,
					const int64_t *sizes, const int64_t *strides_a,
					const int64_t *strides_b, const int64_t *strides_c,
					const char *logic, struct tcx_plan **out,
					struct tcx_error *err)
{
	return tcx_plan_create_accuracy(dev, c, sizes, strides_a, strides_b, strides_c, logic, 0,
					out, err);
}

TCX_API enum tcx_status tcx_plan_create_accuracy(struct tcx_device *dev,
						 const struct tcx_contraction *c,
						 const int64_t *sizes, const int64_t *strides_a,
						 const int64_t *strides_b, const int64_t *strides_c,
						 const char *logic, double accuracy,
						 struct tcx_plan **out, struct tcx_error *err)
{
	const int64_t *const strides[3] = { strides_a, strides_b, strides_c };
	const struct device_info *info;
	struct tcx_plan *pl;
	enum tcx_status st;
	size_t es, nws;

	if (!out)
		return tcx_fail(err, TCX_EINVAL, "no place for the result");
	*out = NULL;
	if (!dev || !c || !sizes)
		return tcx_fail(err, TCX_EINVAL, "missing argument");
	if (!(accuracy >= 0) || accuracy > 1)
		return tcx_fail(err, TCX_EINVAL,
				"accuracy %g is not a relative error: give 0 (the type's own) or a "
				"number above 0 and at most 1",
				accuracy);
	info = device_info_of(dev->dev);
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	st = contraction_clone(c, &pl->c, err);
	if (st)
		goto out_free;
	st = plan_problem(pl, sizes, strides, err);
	if (st)
		goto out_free;
	if (accuracy > 0) {
		struct plan_try x = { pl, dev, info, logic, accuracy };
		struct accuracy_outcome ao;
		bool chooses = !logic && problem_empty_index(&pl->p) < 0 &&
			       info->type != DEV_HOST && !planner_env_off();

		st = accuracy_search(pl->c->dtype, accuracy, chooses, plan_try, &x, &ao, err);
		if (!st) {
			size_t len = strlen(pl->what);

			snprintf(pl->what + len, sizeof(pl->what) - len,
				 " (%s, relative error %.3g within %.3g)", arith_name(ao.arith),
				 ao.error, accuracy);
		}
	} else {
		st = choose(pl, dev, info, logic, 0, ARITH_TF32, err);
	}
	if (st)
		goto out_release;
	nws = contract_workspace_bytes(&pl->pr, pl->pr.kp);
	if (nws) {
		st = buffer_alloc(dev->dev, nws, &pl->ws, err);
		if (st)
			goto out_release;
	}
	/* the wrappers of the caller's buffers, pointed at them by execute */
	for (int t = 0; t < 3 && !pl->pr.host && !pl->pr.empty && !st; t++)
		if (t != T_B || !pl->c->implicit_b)
			st = buffer_wrap(dev->dev, NULL, 0, &pl->wrap[t], err);
	if (st)
		goto out_release;
	es = (size_t)dtype_info(pl->c->dtype)->bytes;
	for (int t = 0; t < 3; t++)
		pl->bytes[t] = (size_t)pl->p.extent[t] * es;
	if (pl->c->implicit_b && !pl->pr.empty) {
		pl->ones_host = run_make_tensor(&pl->p, T_B, INIT_ONES, 0, err);
		st = pl->ones_host ? TCX_OK : err ? err->code : TCX_ENOMEM;
		if (!st && !pl->pr.host) {
			st = buffer_alloc(dev->dev, pl->bytes[T_B], &pl->ones, err);
			if (!st)
				st = buffer_write(dev->dev, pl->ones, 0, pl->ones_host,
						  pl->bytes[T_B], err);
			free(pl->ones_host);
			pl->ones_host = NULL;
		}
		if (st)
			goto out_release;
	}
	pthread_mutex_lock(&devices_lock);
	dev->refs++;
	pthread_mutex_unlock(&devices_lock);
	pl->dev = dev;
	*out = pl;
	return TCX_OK;

out_release:
	for (int t = 0; t < 3; t++)
		buffer_free(dev->dev, pl->wrap[t]);
	buffer_free(dev->dev, pl->ws);
	buffer_free(dev->dev, pl->ones);
	free(pl->ones_host);
	contract_release(dev->dev, &pl->pr);
out_free:
	if (pl->planned)
		plan_release(&pl->pl);
	contraction_free(pl->c);
	free(pl);
	return st;
}

TCX_API void tcx_plan_destroy(struct tcx_plan *pl)
{
	if (!pl)
		return;
	for (int t = 0; t < 3; t++)
		buffer_free(pl->dev->dev, pl->wrap[t]);
	buffer_free(pl->dev->dev, pl->ws);
	buffer_free(pl->dev->dev, pl->ones);
	free(pl->ones_host);
	contract_release(pl->dev->dev, &pl->pr);
	if (pl->planned)
		plan_release(&pl->pl);
	contraction_free(pl->c);
	tcx_device_close(pl->dev);
	free(pl);
}

TCX_API size_t tcx_plan_bytes(const struct tcx_plan *pl, char tensor)
{
	if (!pl)
		return 0;
	switch (tensor) {
	case 'A':
		return pl->bytes[T_A];
	case 'B':
		return pl->bytes[T_B];
	case 'C':
		return pl->bytes[T_C];
	default:
		return 0;
	}
}

TCX_API void tcx_plan_describe(const struct tcx_plan *pl, char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	snprintf(buf, len, "%s", pl ? pl->what : "");
}

/* alpha and beta as the launches take them: two doubles each. */
static void scalars(const struct tcx_plan *pl, const double *alpha, const double *beta,
		    double al[2], double be[2])
{
	bool cplx = dtype_info(pl->c->dtype)->complex;

	al[0] = alpha ? alpha[0] : 1;
	al[1] = alpha && cplx ? alpha[1] : 0;
	be[0] = beta ? beta[0] : 0;
	be[1] = beta && cplx ? beta[1] : 0;
}

TCX_API enum tcx_status tcx_plan_execute(struct tcx_plan *pl, void *queue, void *a, void *b,
					 void *c, const double *alpha, const double *beta,
					 struct tcx_error *err)
{
	void *native[3];
	struct device *dev;
	double al[2], be[2];
	enum tcx_status st = TCX_OK;

	if (!pl)
		return tcx_fail(err, TCX_EINVAL, "no plan");
	dev = pl->dev->dev;
	if (pl->c->implicit_b && b)
		return tcx_fail(err, TCX_EINVAL,
				"'%s' has one input: its B is tcx's, pass NULL for it", pl->c->expr);
	native[T_A] = a;
	native[T_B] = b;
	native[T_C] = c;
	scalars(pl, alpha, beta, al, be);
	if (pl->pr.host && pl->c->implicit_b)
		b = pl->ones_host;
	if (pl->pr.host) {
		if (!a || !b || !c)
			return tcx_fail(err, TCX_EINVAL, "a NULL array for the host device");
		return host_contract(&pl->p, a, b, c, al, be, 0, err);
	}
	if (pl->pr.empty) {
		/* C has no elements, or gets beta * C, which needs no kernel
		 * only for beta 1 */
		if (pl->p.extent[T_C] == 0 || (be[0] == 1 && be[1] == 0))
			return TCX_OK;
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"a summed index of size 0 leaves C = beta * C, which "
				"tcx_plan_execute does not compute on a device; use "
				"tcx_plan_execute_host");
	}
	for (int t = 0; t < 3 && !st; t++)
		if (t != T_B || !pl->c->implicit_b)
			st = native[t] ? buffer_wrap(dev, native[t], pl->bytes[t], &pl->wrap[t], err)
				       : tcx_fail(err, TCX_EINVAL, "a NULL buffer for %c", "CAB"[t]);
	if (st)
		return st;
	device_use_queue(dev, queue);
	st = contract_launch(dev, &pl->pr, &pl->p, pl->wrap[T_A],
			     pl->c->implicit_b ? pl->ones : pl->wrap[T_B], pl->wrap[T_C],
			     pl->ws, al, be, NULL, err);
	device_use_queue(dev, NULL);
	if (!st && !queue)
		st = device_finish(dev, err);
	return st;
}

TCX_API enum tcx_status tcx_plan_execute_host(struct tcx_plan *pl, const void *a,
					      const void *b, void *c, const double *alpha,
					      const double *beta, struct tcx_error *err)
{
	double al[2], be[2];

	if (!pl)
		return tcx_fail(err, TCX_EINVAL, "no plan");
	if (pl->c->implicit_b && b)
		return tcx_fail(err, TCX_EINVAL,
				"'%s' has one input: its B is tcx's, pass NULL for it", pl->c->expr);
	if ((!a && pl->bytes[T_A]) || (!b && pl->bytes[T_B] && !pl->c->implicit_b) ||
	    (!c && pl->bytes[T_C]))
		return tcx_fail(err, TCX_EINVAL, "a NULL array");
	scalars(pl, alpha, beta, al, be);
	return contract_host_arrays(pl->dev->dev, &pl->pr, &pl->p, a, b, c, c, al, be, false,
				    NULL, err);
}

/* watchdog.c - the kernel timeout: first launches of a kernel shape on a
 * helper thread with a deadline, abandoned kernels, and the device calls
 * that wait for them (watchdog.h has the rules). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/watchdog.h"
#include "common/fault.h"

#define KNOWN_CAP 4096 /* shapes remembered; the set starts over when full */

struct launch_job {
	struct device *dev;
	const struct tcx_backend_ops *ops;
	struct program *prog;
	struct launch l;      /* KARG_BYTES point into bytes */
	unsigned char *bytes; /* copies of the value arguments */
	char kernel[128];
	bool hang;
	double event_ms;
	enum tcx_status st;
	struct tcx_error err;
	bool done, abandoned;
	pthread_cond_t cond;
};

struct watchdog {
	double timeout_s;
	const struct tcx_backend_ops *ops;
	struct launch_job *abandoned; /* still running, or done and not yet reaped */
	struct buffer **deferred;     /* freed while a kernel was abandoned */
	size_t ndeferred, cap_deferred;
	uint64_t known[KNOWN_CAP]; /* open addressing; 0 = empty */
	size_t nknown;
};

/* One lock for every watchdog: they are few, and waits are long anyway. */
static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;

/* Watchdogs left with a kernel still running at device_close: kept
 * reachable (and reported as such to leak checkers) until the process ends. */
static struct watchdog *left_running[8];

struct watchdog *watchdog_new(double timeout_s)
{
	struct watchdog *wd = calloc(1, sizeof(*wd));

	if (wd)
		wd->timeout_s = timeout_s;
	return wd;
}

void watchdog_set_timeout(struct watchdog *wd, double timeout_s)
{
	pthread_mutex_lock(&wd_lock);
	wd->timeout_s = timeout_s;
	pthread_mutex_unlock(&wd_lock);
}

static uint64_t shape_key(const struct program *prog, const struct launch *l)
{
	uint64_t h = common_hash64(&prog, sizeof(prog), 0);

	h = common_hash64(l->kernel, strlen(l->kernel), h);
	h = common_hash64(l->global, sizeof(l->global), h);
	h = common_hash64(l->local, sizeof(l->local), h);
	return h ? h : 1;
}

/* Called with wd_lock held. */
static bool known_has(const struct watchdog *wd, uint64_t key)
{
	for (size_t k = key % KNOWN_CAP;; k = (k + 1) % KNOWN_CAP) {
		if (wd->known[k] == key)
			return true;
		if (wd->known[k] == 0)
			return false;
	}
}

static void known_add(struct watchdog *wd, uint64_t key)
{
	size_t k;

	if (known_has(wd, key))
		return;
	if (wd->nknown >= KNOWN_CAP / 2) {
		memset(wd->known, 0, sizeof(wd->known));
		wd->nknown = 0;
	}
	for (k = key % KNOWN_CAP; wd->known[k]; k = (k + 1) % KNOWN_CAP)
		;
	wd->known[k] = key;
	wd->nknown++;
}

static void sleep_seconds(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void job_free(struct launch_job *j)
{
	if (!j)
		return;
	pthread_cond_destroy(&j->cond);
	free(j->bytes);
	free(j);
}

static void *worker(void *arg)
{
	struct launch_job *j = arg;
	enum tcx_status st = TCX_OK;
	struct tcx_error e = {0};
	double ms = 0;
	bool gone = false;

	if (j->hang) {
		/* as a kernel that hangs; when it was abandoned meanwhile, its
		 * caller has moved on and the launch is dropped */
		sleep_seconds(fault_hang_seconds());
		pthread_mutex_lock(&wd_lock);
		gone = j->abandoned;
		pthread_mutex_unlock(&wd_lock);
	}
	if (!gone)
		st = j->ops->launch(j->dev, j->prog, &j->l, &ms, &e);
	pthread_mutex_lock(&wd_lock);
	j->st = st;
	j->err = e;
	j->event_ms = ms;
	j->done = true;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&wd_lock);
	return NULL;
}

static void deadline_after(double s, struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)s;
	ts->tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

/* Waits, with wd_lock held, until j is done or the deadline passes. */
static bool wait_done(struct launch_job *j, const struct timespec *deadline)
{
	while (!j->done)
		if (pthread_cond_timedwait(&j->cond, &wd_lock, deadline) == ETIMEDOUT)
			return j->done;
	return true;
}

/* A copy of l whose value arguments point into j->bytes. */
static enum tcx_status job_copy(struct launch_job *j, const struct launch *l, struct tcx_error *err)
{
	size_t total = 0, at = 0;

	j->l = *l;
	snprintf(j->kernel, sizeof(j->kernel), "%s", l->kernel ? l->kernel : "");
	for (int a = 0; a < l->nargs; a++)
		if (l->args[a].kind == KARG_BYTES)
			total += l->args[a].size;
	j->bytes = malloc(total ? total : 1);
	if (!j->bytes)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int a = 0; a < l->nargs; a++)
		if (l->args[a].kind == KARG_BYTES) {
			memcpy(j->bytes + at, l->args[a].ptr, l->args[a].size);
			j->l.args[a].ptr = j->bytes + at;
			at += l->args[a].size;
		}
	return TCX_OK;
}

enum tcx_status watchdog_launch(struct watchdog *wd, struct device *dev,
				const struct tcx_backend_ops *ops, struct program *prog,
				const struct launch *l, bool hang, double *event_ms,
				struct tcx_error *err)
{
	struct launch_job *j;
	struct timespec deadline;
	pthread_condattr_t ca;
	pthread_t tid;
	uint64_t key = shape_key(prog, l);
	enum tcx_status st;
	double timeout = 0;
	bool direct = true;

	st = watchdog_idle(wd, dev, err);
	if (st)
		return st;
	if (wd) {
		pthread_mutex_lock(&wd_lock);
		wd->ops = ops;
		timeout = wd->timeout_s;
		direct = timeout <= 0 || (!hang && known_has(wd, key));
		pthread_mutex_unlock(&wd_lock);
	}
	if (direct) {
		if (hang)
			sleep_seconds(fault_hang_seconds());
		return ops->launch(dev, prog, l, event_ms, err);
	}

	j = calloc(1, sizeof(*j));
	if (!j)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	j->dev = dev;
	j->ops = ops;
	j->prog = prog;
	j->hang = hang;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cond, &ca);
	pthread_condattr_destroy(&ca);
	st = job_copy(j, l, err);
	if (st) {
		job_free(j);
		return st;
	}
	if (pthread_create(&tid, NULL, worker, j) != 0) {
		job_free(j);
		return tcx_fail(err, TCX_EDEVICE, "cannot start the kernel watchdog thread");
	}
	pthread_detach(tid);

	deadline_after(timeout, &deadline);
	pthread_mutex_lock(&wd_lock);
	if (!wait_done(j, &deadline)) {
		j->abandoned = true;
		wd->abandoned = j; /* reaped by watchdog_idle once it ends */
		pthread_mutex_unlock(&wd_lock);
		return tcx_fail(err, TCX_ETIMEOUT,
				"kernel '%s' ran past the kernel timeout of %g s on '%s' and was "
				"abandoned",
				j->kernel, timeout, device_info_of(dev)->id);
	}
	if (j->st == TCX_OK)
		known_add(wd, key);
	pthread_mutex_unlock(&wd_lock);
	st = j->st;
	if (st) {
		if (err)
			*err = j->err;
	} else if (event_ms) {
		*event_ms = j->event_ms;
	}
	job_free(j);
	return st;
}

/* Called with wd_lock held, once wd->abandoned is done. */
static void reap(struct watchdog *wd)
{
	job_free(wd->abandoned);
	wd->abandoned = NULL;
	for (size_t k = 0; k < wd->ndeferred; k++)
		wd->ops->free(wd->deferred[k]);
	free(wd->deferred);
	wd->deferred = NULL;
	wd->ndeferred = wd->cap_deferred = 0;
}

enum tcx_status watchdog_idle(struct watchdog *wd, struct device *dev, struct tcx_error *err)
{
	struct timespec deadline;
	char kernel[128];
	double drain;

	if (!wd)
		return TCX_OK;
	pthread_mutex_lock(&wd_lock);
	if (!wd->abandoned) {
		pthread_mutex_unlock(&wd_lock);
		return TCX_OK;
	}
	drain = wd->timeout_s * WATCHDOG_DRAIN_FACTOR;
	deadline_after(drain, &deadline);
	if (wait_done(wd->abandoned, &deadline)) {
		reap(wd);
		pthread_mutex_unlock(&wd_lock);
		return TCX_OK;
	}
	snprintf(kernel, sizeof(kernel), "%s", wd->abandoned->kernel);
	pthread_mutex_unlock(&wd_lock);
	return tcx_fail(err, TCX_EBUSY,
			"device '%s' is still running kernel '%s', abandoned after the kernel "
			"timeout %g s ago; no runtime can stop it",
			device_info_of(dev)->id, kernel, drain);
}

bool watchdog_defer_free(struct watchdog *wd, struct buffer *buf)
{
	bool kept = false;

	if (!wd)
		return false;
	pthread_mutex_lock(&wd_lock);
	if (wd->abandoned && wd->abandoned->done)
		reap(wd);
	if (wd->abandoned) {
		if (wd->ndeferred == wd->cap_deferred) {
			size_t cap = wd->cap_deferred ? 2 * wd->cap_deferred : 16;
			struct buffer **p = realloc(wd->deferred, cap * sizeof(*p));

			if (p) {
				wd->deferred = p;
				wd->cap_deferred = cap;
			}
		}
		/* out of memory: the buffer is leaked rather than freed under a kernel */
		if (wd->ndeferred < wd->cap_deferred)
			wd->deferred[wd->ndeferred++] = buf;
		kept = true;
	}
	pthread_mutex_unlock(&wd_lock);
	return kept;
}

bool watchdog_release(struct watchdog *wd, struct device *dev)
{
	if (!wd)
		return true;
	pthread_mutex_lock(&wd_lock);
	if (wd->abandoned && wd->abandoned->done)
		reap(wd);
	if (wd->abandoned) {
		/* no more waiting: whoever gave up on the device has waited already */
		for (size_t k = 0; k < ARRAY_SIZE(left_running); k++)
			if (!left_running[k]) {
				left_running[k] = wd;
				break;
			}
		pthread_mutex_unlock(&wd_lock);
		tcx_log(TCX_LOG_INFO, "device '%s' left open: it still runs an abandoned kernel",
			device_info_of(dev)->id);
		return false;
	}
	pthread_mutex_unlock(&wd_lock);
	free(wd);
	return true;
}

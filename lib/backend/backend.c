/* backend.c - the backend registry, device listing and choice, the
 * process-wide program cache, and thin wrappers over the ops. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/check.h"
#include "backend/kcache.h"
#include "backend/watchdog.h"
#include "common/fault.h"

/* One line per backend tcx has; those not built into this binary have no
 * ops.  Order matters only for listing. */
static const struct {
	const char *name;
	void (*ops)(struct tcx_backend_ops *);
} registry[] = {
#ifdef TCX_WITH_OPENCL
	{ "opencl", tcx_backend_opencl_ops },
#else
	{ "opencl", NULL },
#endif
#ifdef TCX_WITH_CUDA
	{ "cuda", tcx_backend_cuda_ops },
#else
	{ "cuda", NULL },
#endif
#ifdef TCX_WITH_HIP
	{ "hip", tcx_backend_hip_ops },
#else
	{ "hip", NULL },
#endif
	{ "host", tcx_backend_host_ops },
};

static struct tcx_backend_ops backends[ARRAY_SIZE(registry)];
static int nbackends;
static pthread_once_t backends_once = PTHREAD_ONCE_INIT;

static void backends_init(void)
{
	for (size_t k = 0; k < ARRAY_SIZE(registry); k++)
		if (registry[k].ops)
			registry[k].ops(&backends[nbackends++]);
}

int backend_count(void)
{
	pthread_once(&backends_once, backends_init);
	return nbackends;
}

const struct tcx_backend_ops *backend_at(int k)
{
	return k >= 0 && k < backend_count() ? &backends[k] : NULL;
}

const char *backend_known_at(int k)
{
	return k >= 0 && (size_t)k < ARRAY_SIZE(registry) ? registry[k].name : NULL;
}

const struct tcx_backend_ops *backend_find(const char *name)
{
	for (int k = 0; k < backend_count(); k++)
		if (strcmp(backends[k].name, name) == 0)
			return &backends[k];
	return NULL;
}

#define MAX_DEVICES_PER_BACKEND 64

enum tcx_status devices_list(struct device_info **out, int *count, struct strbuf *why,
			     struct tcx_error *err)
{
	struct device_info *all = NULL, *p;
	int n = 0;

	*out = NULL;
	*count = 0;
	for (int k = 0; k < backend_count(); k++) {
		struct device_info tmp[MAX_DEVICES_PER_BACKEND];
		struct tcx_error e = { 0 };
		int got = 0;
		enum tcx_status st = backends[k].probe(tmp, MAX_DEVICES_PER_BACKEND, &got, &e);

		if (st != TCX_OK || got == 0) {
			if (why)
				strbuf_addf(why, "%s: %s\n", backends[k].name,
					    st ? e.msg : "no devices found");
			continue;
		}
		p = realloc(all, (size_t)(n + got) * sizeof(*all));
		if (!p) {
			free(all);
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		}
		all = p;
		memcpy(all + n, tmp, (size_t)got * sizeof(*tmp));
		n += got;
	}
	*out = all;
	*count = n;
	return TCX_OK;
}

/* The default: the first GPU (preferring CUDA, then HIP, then OpenCL), else
 * the first OpenCL CPU device. */
static int default_rank(const struct device_info *d)
{
	if (d->type == DEV_GPU)
		return strcmp(d->backend, "cuda") == 0 ? 0 : strcmp(d->backend, "hip") == 0 ? 1 : 2;
	if (d->type == DEV_ACCEL)
		return 3;
	if (d->type == DEV_CPU)
		return 4;
	return 100; /* the host reference is never a default */
}

enum tcx_status device_open(const char *id, struct device **out, struct tcx_error *err)
{
	struct device_info *all;
	struct strbuf why = STRBUF_INIT;
	enum tcx_status st;
	int n, pick = -1, index = 0;
	const struct tcx_backend_ops *ops;

	*out = NULL;
	if (!id || !*id)
		id = getenv("TCX_DEVICE");
	if (id && !*id)
		id = NULL;
	st = devices_list(&all, &n, &why, err);
	if (st) {
		strbuf_release(&why);
		return st;
	}
	/* one line per backend without devices; the messages end without one */
	if (why.len && why.buf[why.len - 1] == '\n')
		why.buf[--why.len] = '\0';
	if (id) {
		const char *colon = strchr(id, ':');
		size_t blen = colon ? (size_t)(colon - id) : strlen(id);
		bool known = false;

		for (int k = 0; k < n; k++)
			if (strcmp(all[k].id, id) == 0)
				pick = k;
		for (int k = 0; k < backend_count(); k++)
			known |= strlen(backends[k].name) == blen &&
				 strncmp(backends[k].name, id, blen) == 0;
		if (pick < 0)
			st = tcx_fail(err, known ? TCX_ENODEV : TCX_EINVAL,
				      "unknown device id '%s'; 'tcx devices' lists them%s%s", id,
				      why.len ? "; " : "", strbuf_str(&why));
	} else {
		for (int k = 0; k < n; k++)
			if (default_rank(&all[k]) < 100 &&
			    (pick < 0 || default_rank(&all[k]) < default_rank(&all[pick])))
				pick = k;
		if (pick < 0)
			st = tcx_fail(err, TCX_ENODEV,
				      "no usable device: no GPU and no OpenCL CPU device (install "
				      "pocl-opencl-icd) %s%s",
				      why.len ? "- " : "", strbuf_str(&why));
	}
	strbuf_release(&why);
	if (st) {
		free(all);
		return st;
	}
	ops = backend_find(all[pick].backend);
	for (int k = 0; k < pick; k++)
		index += strcmp(all[k].backend, all[pick].backend) == 0;
	free(all);
	if (!ops)
		return tcx_fail(err, TCX_ENODEV, "no backend for device '%s'", id ? id : "?");
	st = ops->open(index, out, err);
	if (st == TCX_OK)
		((struct device_base *)*out)->ops = ops;
	return st;
}

/* The process-wide program cache: a short list keyed by a hash of the
 * source and options (compared in full on a hit). */
struct cache_entry {
	uint64_t key;
	size_t len;
	char *opts;
	struct program *prog;
	struct cache_entry *next;
	char src[]; /* len bytes */
};

struct program_cache {
	pthread_mutex_t lock;
	struct cache_entry *head;
};

static struct device_base *base_of(const struct device *dev)
{
	return (struct device_base *)dev;
}

const struct tcx_backend_ops *device_ops(const struct device *dev)
{
	return base_of(dev)->ops;
}

const struct device_info *device_info_of(const struct device *dev)
{
	return base_of(dev)->info;
}

bool device_is_host(const struct device *dev)
{
	return device_info_of(dev)->type == DEV_HOST;
}

void device_close(struct device *dev)
{
	struct device_base *b;
	struct cache_entry *e, *next;

	if (!dev)
		return;
	b = base_of(dev);
	if (!watchdog_release(b->wd, dev))
		return; /* a kernel still runs: leave the device to the process's end */
	b->wd = NULL;
	if (b->cache) {
		for (e = b->cache->head; e; e = next) {
			next = e->next;
			b->ops->program_free(e->prog);
			free(e->opts);
			free(e);
		}
		pthread_mutex_destroy(&b->cache->lock);
		free(b->cache);
		b->cache = NULL;
	}
	b->ops->close(dev);
}

void device_cache_stats(const struct device *dev, struct device_cache_stats *out)
{
	struct device_base *b = base_of(dev);

	if (b->cache)
		pthread_mutex_lock(&b->cache->lock);
	out->builds = b->builds;
	out->memory_hits = b->cache_hits;
	out->disk_hits = b->disk_hits;
	out->disk_stores = b->disk_stores;
	out->disk_rebuilt = b->disk_corrupt;
	out->platform_cache = b->platform_cache;
	if (b->cache)
		pthread_mutex_unlock(&b->cache->lock);
}

void device_set_disk_cache(struct device *dev, bool on)
{
	base_of(dev)->no_disk_cache = !on;
}

enum tcx_status device_set_kernel_timeout(struct device *dev, double seconds,
					  struct tcx_error *err)
{
	struct device_base *b = base_of(dev);

	if (seconds < 0)
		seconds = 0;
	if (b->wd) {
		watchdog_set_timeout(b->wd, seconds);
		return TCX_OK;
	}
	if (seconds == 0)
		return TCX_OK;
	b->wd = watchdog_new(seconds);
	return b->wd ? TCX_OK : tcx_fail(err, TCX_ENOMEM, "out of memory");
}

/* Adds one to a counter of b under the cache's lock. */
static void count_one(struct device_base *b, unsigned long *counter)
{
	pthread_mutex_lock(&b->cache->lock);
	(*counter)++;
	pthread_mutex_unlock(&b->cache->lock);
}

/* The on-disk cache step of device_build: a program from a stored binary,
 * or NULL (no entry, a damaged one, the cache off); never an error. */
static struct program *disk_cache_load(struct device *dev, const char *dir,
				       const struct kcache_key *kk)
{
	struct device_base *b = base_of(dev);
	struct tcx_error e = { 0 };
	struct program *prog = NULL;
	unsigned char *bin = NULL;
	size_t blen = 0;
	enum tcx_status st = kcache_load(dir, kk, &bin, &blen, &e);

	if (st == TCX_ECORRUPT) {
		tcx_log(TCX_LOG_INFO, "%s; compiling again", e.msg);
		count_one(b, &b->disk_corrupt);
		return NULL;
	}
	if (st || !bin) {
		if (st)
			tcx_log(TCX_LOG_DEBUG, "kernel cache: %s", e.msg);
		return NULL;
	}
	st = b->ops->build_binary(dev, bin, blen, &prog, &e);
	free(bin);
	if (st) {
		/* the driver refuses it: as good as damaged */
		struct strbuf path = STRBUF_INIT;

		kcache_entry_path(dir, kk, &path);
		tcx_log(TCX_LOG_INFO,
			"damaged kernel cache entry '%s' (%s): removed; compiling again",
			strbuf_str(&path), e.msg);
		strbuf_release(&path);
		kcache_remove(dir, kk, NULL);
		if (prog)
			b->ops->program_free(prog);
		count_one(b, &b->disk_corrupt);
		return NULL;
	}
	return prog;
}

/* Stores a compiled program's binary; failures are logged, not returned. */
static void disk_cache_store(struct device *dev, const char *dir, const struct kcache_key *kk,
			     const struct program *prog)
{
	struct device_base *b = base_of(dev);
	struct tcx_error e = { 0 };
	unsigned char *bin = NULL;
	size_t blen = 0;
	enum tcx_status st = b->ops->binary(prog, &bin, &blen, &e);

	if (!st)
		st = kcache_store(dir, kk, bin, blen, &e);
	free(bin);
	if (st) {
		tcx_log(TCX_LOG_DEBUG, "kernel not cached on disk: %s", e.msg);
		return;
	}
	count_one(b, &b->disk_stores);
	/* the size cap: the least recently used entries go */
	if (kcache_trim(dir, kcache_max_bytes(), NULL, &e) != TCX_OK)
		tcx_log(TCX_LOG_DEBUG, "kernel cache not trimmed: %s", e.msg);
}

const char *program_log(const struct program *prog)
{
	const struct program_head *h = (const struct program_head *)prog;

	return h && h->log ? h->log : "";
}

enum tcx_status device_build(struct device *dev, const char *src, size_t len, const char *opts,
			     struct program **out, double *compile_s, struct strbuf *log,
			     struct tcx_error *err)
{
	struct device_base *b = base_of(dev);
	struct cache_entry *e;
	struct strbuf dir = STRBUF_INIT;
	struct kcache_key kk;
	uint64_t key;
	enum tcx_status st;
	struct program *prog = NULL;
	bool use_disk, from_disk = false;
	double t0;

	*out = NULL;
	if (compile_s)
		*compile_s = 0;
	if (!b->ops->build)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"device '%s' runs the host reference and compiles no kernels",
				device_info_of(dev)->id);
	if (fault_hit(FAULT_BUILD)) {
		if (log)
			strbuf_adds(log, "error: build failure injected by TCX_FAULT\n");
		return tcx_fail(err, TCX_EBUILD,
				"kernel build failed on '%s' (injected by TCX_FAULT)",
				device_info_of(dev)->id);
	}
	if (!opts)
		opts = "";
	if (!b->cache) {
		b->cache = calloc(1, sizeof(*b->cache));
		if (!b->cache)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		pthread_mutex_init(&b->cache->lock, NULL);
	}
	key = common_hash64(opts, strlen(opts), common_hash64(src, len, 0));
	pthread_mutex_lock(&b->cache->lock);
	for (e = b->cache->head; e; e = e->next)
		if (e->key == key && e->len == len && memcmp(e->src, src, len) == 0 &&
		    strcmp(e->opts, opts) == 0) {
			b->cache_hits++;
			*out = e->prog;
			pthread_mutex_unlock(&b->cache->lock);
			return TCX_OK;
		}
	pthread_mutex_unlock(&b->cache->lock);

	use_disk = !b->no_disk_cache && !b->platform_cache && b->ops->binary && b->ops->build_binary &&
		   !kcache_disabled_by_env() && tcx_cache_path("kernels", &dir, NULL) == TCX_OK;
	t0 = common_now_seconds();
	if (use_disk) {
		kcache_key_make(device_info_of(dev), src, len, opts, &kk);
		prog = disk_cache_load(dev, strbuf_str(&dir), &kk);
		from_disk = prog != NULL;
	}
	if (!prog) {
		st = b->ops->build(dev, src, len, opts, &prog, err);
		if (st) {
			if (compile_s)
				*compile_s = common_now_seconds() - t0;
			if (prog && log)
				strbuf_adds(log, program_log(prog));
			if (prog)
				b->ops->program_free(prog);
			strbuf_release(&dir);
			return st;
		}
	}
	if (compile_s)
		*compile_s = common_now_seconds() - t0;
	if (use_disk && !from_disk)
		disk_cache_store(dev, strbuf_str(&dir), &kk, prog);
	strbuf_release(&dir);
	e = calloc(1, sizeof(*e) + len);
	if (e)
		e->opts = strdup(opts);
	if (!e || !e->opts) {
		free(e);
		b->ops->program_free(prog);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	memcpy(e->src, src, len);
	e->len = len;
	e->key = key;
	e->prog = prog;
	pthread_mutex_lock(&b->cache->lock);
	e->next = b->cache->head;
	b->cache->head = e;
	if (from_disk)
		b->disk_hits++;
	else
		b->builds++;
	pthread_mutex_unlock(&b->cache->lock);
	*out = prog;
	return TCX_OK;
}

enum tcx_status buffer_alloc(struct device *dev, size_t bytes, struct buffer **out,
			     struct tcx_error *err)
{
	enum tcx_status st;

	if (bytes == 0)
		bytes = 1;
	if (fault_hit(FAULT_ALLOC)) {
		*out = NULL;
		return tcx_fail(err, TCX_EDEVICE,
				"cannot allocate %zu bytes on '%s': out of device memory (injected "
				"by TCX_FAULT)",
				bytes, device_info_of(dev)->id);
	}
	st = watchdog_idle(base_of(dev)->wd, dev, err);
	if (st)
		return st;
	return base_of(dev)->ops->alloc(dev, bytes, out, err);
}

void buffer_free(struct device *dev, struct buffer *buf)
{
	if (buf && !watchdog_defer_free(base_of(dev)->wd, buf))
		base_of(dev)->ops->free(buf);
}

static enum tcx_status buffer_copy(struct device *dev, struct buffer *buf, size_t off, void *host,
				   size_t bytes, bool to_dev, struct tcx_error *err)
{
	/* every backend's struct buffer begins with its size */
	enum tcx_status st = buffer_check_range(buf != NULL, buf ? *(const size_t *)buf : 0, off,
						bytes, to_dev ? "write" : "read", err);

	if (!st)
		st = watchdog_idle(base_of(dev)->wd, dev, err);
	if (st || bytes == 0)
		return st;
	return base_of(dev)->ops->copy(dev, buf, off, host, bytes, to_dev, err);
}

enum tcx_status buffer_write(struct device *dev, struct buffer *buf, size_t off, const void *src,
			     size_t bytes, struct tcx_error *err)
{
	return buffer_copy(dev, buf, off, (void *)src, bytes, true, err);
}

enum tcx_status buffer_read(struct device *dev, struct buffer *buf, size_t off, void *dst,
			    size_t bytes, struct tcx_error *err)
{
	return buffer_copy(dev, buf, off, dst, bytes, false, err);
}

enum tcx_status device_tensor_map(struct device *dev, struct buffer *buf, size_t off,
				  int elem_bytes, int rank, const int64_t *dim, const int64_t *stride,
				  const int *box, void *out, struct tcx_error *err)
{
	const struct tcx_backend_ops *ops = base_of(dev)->ops;

	if (!ops->tensor_map)
		return tcx_fail(err, TCX_EUNSUPPORTED, "device '%s' has no tensor maps",
				device_info_of(dev)->id);
	return ops->tensor_map(dev, buf, off, elem_bytes, rank, dim, stride, box, out, err);
}

/* TCX_EINVAL unless kernel `name` of `prog` can run on `dev`. */
static enum tcx_status program_check(struct device *dev, const struct program *prog,
				     const char *name, struct tcx_error *err)
{
	const struct program_head *h = (const struct program_head *)prog;

	if (!h)
		return tcx_fail(err, TCX_EINVAL, "a launch without a program");
	if (h->dev != dev)
		return tcx_fail(err, TCX_EINVAL, "kernel '%s' was built for '%s', not '%s'", name,
				device_info_of(h->dev)->id, device_info_of(dev)->id);
	return TCX_OK;
}

enum tcx_status device_launch(struct device *dev, struct program *prog, const struct launch *l,
			      double *event_ms, struct tcx_error *err)
{
	struct device_base *b = base_of(dev);
	enum tcx_status st;
	bool hang;

	if (event_ms)
		*event_ms = 0;
	if (!b->ops->launch)
		return tcx_fail(err, TCX_EUNSUPPORTED, "device '%s' cannot launch kernels",
				device_info_of(dev)->id);
	if (!l || !l->kernel || !*l->kernel)
		return tcx_fail(err, TCX_EINVAL, "a launch without a kernel name");
	st = program_check(dev, prog, l->kernel, err);
	if (st)
		return st;
	if (l->nargs < 0 || l->nargs > LAUNCH_MAX_ARGS)
		return tcx_fail(err, TCX_EINVAL, "a launch with %d arguments", l->nargs);
	if (fault_hit(FAULT_LAUNCH))
		return tcx_fail(err, TCX_ELAUNCH,
				"kernel '%s' failed on '%s' (injected by TCX_FAULT)", l->kernel,
				device_info_of(dev)->id);
	hang = fault_hit(FAULT_LAUNCH_HANG);
	if (b->wd || hang)
		return watchdog_launch(b->wd, dev, b->ops, prog, l, hang, event_ms, err);
	return b->ops->launch(dev, prog, l, event_ms, err);
}

enum tcx_status device_finish(struct device *dev, struct tcx_error *err)
{
	enum tcx_status st = watchdog_idle(base_of(dev)->wd, dev, err);

	if (st)
		return st;
	if (!base_of(dev)->ops->finish)
		return TCX_OK;
	return base_of(dev)->ops->finish(dev, err);
}

enum tcx_status buffer_wrap(struct device *dev, void *native, size_t bytes, struct buffer **out,
			    struct tcx_error *err)
{
	const struct tcx_backend_ops *ops = base_of(dev)->ops;

	if (!ops->wrap)
		return tcx_fail(err, TCX_EUNSUPPORTED, "device '%s' cannot use the caller's memory",
				device_info_of(dev)->id);
	return ops->wrap(dev, native, bytes ? bytes : 1, out, err);
}

enum tcx_status device_kernel_ready(struct device *dev, struct program *prog, const char *name,
				    struct tcx_error *err)
{
	const struct tcx_backend_ops *ops = base_of(dev)->ops;
	struct program_head *h = (struct program_head *)prog;
	struct kernel_head *k;
	enum tcx_status st;

	if (!ops->kernel_init)
		return TCX_OK;
	st = program_check(dev, prog, name, err);
	if (st)
		return st;
	pthread_mutex_lock(&h->lock);
	st = program_kernel(h, name, ops->kernel_size, ops->kernel_init, &k, err);
	pthread_mutex_unlock(&h->lock);
	return st;
}

void *device_native(struct device *dev, enum native_handle what)
{
	const struct tcx_backend_ops *ops = base_of(dev)->ops;

	return ops->native ? ops->native(dev, (int)what) : NULL;
}

/* The caller's queue of this thread (device_use_queue): one device at a
 * time, which is what an execute needs. */
static _Thread_local struct {
	const struct device *dev;
	void *queue;
} thread_queue;

void device_use_queue(struct device *dev, void *queue)
{
	thread_queue.dev = queue ? dev : NULL;
	thread_queue.queue = queue;
}

void *device_queue(const struct device *dev)
{
	return dev && thread_queue.dev == dev ? thread_queue.queue : NULL;
}

void launch_init(struct launch *l, const char *kernel)
{
	memset(l, 0, sizeof(*l));
	l->kernel = kernel;
	for (int k = 0; k < 3; k++)
		l->global[k] = l->local[k] = 1;
}

static struct karg *next_arg(struct launch *l)
{
	/* LAUNCH_MAX_ARGS is far above what any template takes */
	return l->nargs < LAUNCH_MAX_ARGS ? &l->args[l->nargs++] : &l->args[LAUNCH_MAX_ARGS - 1];
}

void launch_arg_buffer(struct launch *l, struct buffer *buf)
{
	struct karg *a = next_arg(l);

	a->kind = KARG_BUFFER;
	a->buf = buf;
}

void launch_arg_bytes(struct launch *l, const void *ptr, size_t size)
{
	struct karg *a = next_arg(l);

	a->kind = KARG_BYTES;
	a->ptr = ptr;
	a->size = size;
}

void launch_arg_local(struct launch *l, size_t size)
{
	struct karg *a = next_arg(l);

	a->kind = KARG_LOCAL;
	a->size = size;
}

/* check.c - the checks and the error wording every backend shares
 * (check.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/check.h"

enum tcx_status buffer_check_range(bool present, size_t size, size_t off, size_t bytes,
				   const char *what, struct tcx_error *err)
{
	if (!present)
		return tcx_fail(err, TCX_EINVAL, "%s of a NULL buffer", what);
	if (off > size || bytes > size - off)
		return tcx_fail(err, TCX_EINVAL,
				"%s of %zu bytes at offset %zu past the end of a %zu-byte buffer",
				what, bytes, off, size);
	return TCX_OK;
}

/* How a kernel language's launches are counted and named. */
struct dialect {
	const char *group, *groups, *items, *local;
	const char *kernel_limit; /* what sets a kernel's own limit */
	bool local_params;	  /* dynamic local memory is a kernel parameter */
	uint64_t max_groups;	  /* groups per dimension the launch takes; 0: any */
};

static const struct dialect opencl_dialect = {
	"work-group", "work-groups", "work-items", "local memory", " on this device", true, 0,
};

static const struct dialect cuda_dialect = {
	"block", "blocks", "threads", "shared memory", " (its registers or launch bounds)", false,
	UINT_MAX,
};

enum tcx_status launch_check(const struct device_info *di, const struct kernel_facts *k,
			     const struct launch *l, size_t *local_bytes, struct tcx_error *err)
{
	const struct dialect *w = strcmp(di->lang, "opencl") == 0 ? &opencl_dialect : &cuda_dialect;
	size_t items = 1, local = 0;
	int np = 0;

	if (local_bytes)
		*local_bytes = 0;
	for (int d = 0; d < 3; d++) {
		uint64_t groups, max;

		if (l->local[d] == 0 || l->global[d] == 0)
			return tcx_fail(err, TCX_ELAUNCH,
					"kernel '%s': empty %s size in dimension %d", k->name,
					l->local[d] == 0 ? w->group : "global", d);
		if (l->global[d] % l->local[d])
			return tcx_fail(err, TCX_ELAUNCH,
					"kernel '%s': global size %zu in dimension %d is not a "
					"multiple of the %s size %zu",
					k->name, l->global[d], d, w->group, l->local[d]);
		if (l->local[d] > (size_t)di->max_wg_dim[d])
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': %s size %zu in dimension %d exceeds the "
					"device limit of %d",
					k->name, w->group, l->local[d], d, di->max_wg_dim[d]);
		/* a safety net: plan_grid keeps tcx's launches inside */
		groups = l->global[d] / l->local[d];
		max = di->max_groups[d] > 0 ? (uint64_t)di->max_groups[d] : w->max_groups;
		if (max && groups > max)
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': %llu %s in dimension %d exceed the device "
					"limit of %llu",
					k->name, (unsigned long long)groups, w->groups, d,
					(unsigned long long)max);
		if (items > SIZE_MAX / l->local[d])
			return tcx_fail(err, TCX_ELIMIT, "kernel '%s': %s size overflows", k->name,
					w->group);
		items *= l->local[d];
	}
	if (items > (size_t)di->max_wg_size)
		return tcx_fail(err, TCX_ELIMIT,
				"kernel '%s': %s of %zu %s exceeds the device limit of %d", k->name,
				w->group, items, w->items, di->max_wg_size);
	if (k->max_items > 0 && items > (uint64_t)k->max_items)
		return tcx_fail(err, TCX_ELIMIT,
				"kernel '%s': %s of %zu %s exceeds the kernel's limit of %lld%s",
				k->name, w->group, items, w->items, (long long)k->max_items,
				w->kernel_limit);
	for (int a = 0; a < l->nargs; a++) {
		const struct karg *g = &l->args[a];

		switch (g->kind) {
		case KARG_BUFFER:
			if (!g->buf)
				return tcx_fail(err, TCX_EINVAL,
						"kernel '%s': argument %d is a NULL buffer",
						k->name, a);
			if (k->psize && np < k->nparams && k->psize[np] != k->ptr_size)
				return tcx_fail(err, TCX_ELAUNCH,
						"kernel '%s': parameter %d is %zu bytes, not a "
						"pointer",
						k->name, np, k->psize[np]);
			np++;
			break;
		case KARG_BYTES:
			if (k->psize && np < k->nparams && k->psize[np] != g->size)
				return tcx_fail(err, TCX_ELAUNCH,
						"kernel '%s': parameter %d is %zu bytes, not %zu",
						k->name, np, k->psize[np], g->size);
			np++;
			break;
		case KARG_LOCAL:
			local += g->size;
			np += w->local_params;
			break;
		default:
			return tcx_fail(err, TCX_EINVAL, "kernel '%s': argument %d of unknown kind",
					k->name, a);
		}
	}
	if (k->nparams >= 0 && np != k->nparams)
		return tcx_fail(err, TCX_ELAUNCH, "kernel '%s' takes %d arguments, not %d", k->name,
				k->nparams, np);
	if (di->local_mem > 0 && (uint64_t)local + (uint64_t)k->static_local > (uint64_t)di->local_mem)
		return tcx_fail(err, TCX_ELIMIT,
				"kernel '%s': needs %llu bytes of %s, above the device limit of %lld",
				k->name, (unsigned long long)local + (unsigned long long)k->static_local,
				w->local, (long long)di->local_mem);
	if (local_bytes)
		*local_bytes = local;
	return TCX_OK;
}

enum tcx_status backend_vfail(struct tcx_error *err, enum tcx_status code, int rc, const char *name,
			      const char *fmt, va_list ap)
{
	char what[TCX_ERROR_SIZE];

	vsnprintf(what, sizeof(what), fmt, ap);
	tcx_fail(err, code, "%s: %s (%d)", what, name, rc);
	if (err)
		err->native = rc;
	return code;
}

void backend_log_head(const char *log, int lines, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	const char *start = log, *e;

	if (!log || !*log) {
		snprintf(buf, size, "(the compiler gave no log)");
		return;
	}
	e = strstr(log, "error");
	if (e) {
		while (e > log && e[-1] != '\n')
			e--;
		start = e;
	}
	for (int line = 0; line < lines; line++) {
		size_t n;

		start += strspn(start, "\n ");
		n = strcspn(start, "\n");
		if (n == 0)
			break;
		if (line)
			strbuf_adds(&sb, "; ");
		strbuf_add(&sb, start, n);
		start += n;
	}
	snprintf(buf, size, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

void *program_head_new(size_t size, struct device *dev)
{
	struct program_head *p = calloc(1, size);

	if (!p)
		return NULL;
	p->dev = dev;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void program_head_free(struct program_head *p, void (*release)(struct kernel_head *k))
{
	struct kernel_head *k, *next;

	if (!p)
		return;
	for (k = p->kernels; k; k = next) {
		next = k->next;
		if (release)
			release(k);
		free(k->name);
		free(k);
	}
	pthread_mutex_destroy(&p->lock);
	free(p->log);
	free(p);
}

enum tcx_status program_kernel(struct program_head *p, const char *name, size_t size,
			       enum tcx_status (*init)(struct program_head *p,
						       struct kernel_head *k,
						       struct tcx_error *err),
			       struct kernel_head **out, struct tcx_error *err)
{
	struct kernel_head *k;
	enum tcx_status st;

	for (k = p->kernels; k; k = k->next)
		if (strcmp(k->name, name) == 0) {
			*out = k;
			return TCX_OK;
		}
	*out = NULL;
	k = calloc(1, size);
	if (!k || !(k->name = strdup(name))) {
		free(k);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	st = init(p, k, err);
	if (st) {
		free(k->name);
		free(k);
		return st;
	}
	k->next = p->kernels;
	p->kernels = k;
	*out = k;
	return TCX_OK;
}

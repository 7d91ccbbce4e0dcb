/* host.c - the "host" backend: a device that holds memory in RAM and runs
 * the reference (reference.c) but compiles no kernels.  Always built, so
 * that `tcx run --device host` and validation work without any runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/host/host.h"

struct device {
	struct device_base base;
	struct device_info info;
};

struct buffer {
	size_t size; /* first: the backend layer checks transfers against it */
	unsigned char *data;
};

static void host_describe(struct device_info *d)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[512];

	memset(d, 0, sizeof(*d));
	snprintf(d->id, sizeof(d->id), "host");
	snprintf(d->backend, sizeof(d->backend), "host");
	snprintf(d->name, sizeof(d->name), "host reference (CPU)");
	snprintf(d->vendor, sizeof(d->vendor), "tcx");
	snprintf(d->driver, sizeof(d->driver), "%s", tcx_version());
	snprintf(d->lang, sizeof(d->lang), "none");
	while (fp && fgets(line, sizeof(line), fp)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(d->arch, sizeof(d->arch), "%s", colon);
			break;
		}
	}
	if (fp)
		fclose(fp);
	d->type = DEV_HOST;
	d->compute_units = host_cpu_count();
	d->fp64 = true;
	d->fp16 = true;
	d->simd_width = 1;
}

static enum tcx_status host_probe(struct device_info *out, int max, int *count,
				  struct tcx_error *err)
{
	*count = 0;
	if (max < 1)
		return TCX_OK;
	host_describe(&out[0]);
	*count = 1;
	return TCX_OK;
}

static enum tcx_status host_open(int index, struct device **out, struct tcx_error *err)
{
	struct device *d;

	if (index != 0)
		return tcx_fail(err, TCX_ENODEV, "no host device %d", index);
	d = calloc(1, sizeof(*d));
	if (!d)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	host_describe(&d->info);
	d->base.info = &d->info;
	*out = d;
	return TCX_OK;
}

static void host_close(struct device *dev)
{
	free(dev);
}

static enum tcx_status host_alloc(struct device *dev, size_t bytes, struct buffer **out,
				  struct tcx_error *err)
{
	struct buffer *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (b)
		b->data = malloc(bytes);
	if (!b || !b->data) {
		free(b);
		return tcx_fail(err, TCX_ENOMEM, "cannot allocate %zu bytes on the host", bytes);
	}
	b->size = bytes;
	*out = b;
	return TCX_OK;
}

static void host_free(struct buffer *buf)
{
	free(buf->data);
	free(buf);
}

static enum tcx_status host_copy(struct device *dev, struct buffer *buf, size_t off, void *host,
				 size_t bytes, bool to_dev, struct tcx_error *err)
{
	if (to_dev)
		memcpy(buf->data + off, host, bytes);
	else
		memcpy(host, buf->data + off, bytes);
	return TCX_OK;
}

void tcx_backend_host_ops(struct tcx_backend_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->name = "host";
	ops->probe = host_probe;
	ops->open = host_open;
	ops->close = host_close;
	ops->alloc = host_alloc;
	ops->free = host_free;
	ops->copy = host_copy;
}

/* test_backend.c - what the backends share (check.h): launch_check with the
 * facts a CUDA, a HIP and an OpenCL runtime give of a device and a kernel,
 * transfer ranges, fill patterns, compiler log heads; and the registry's
 * names.  No device needed (test_backend_launch.c runs the launches). */
#include <limits.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/check.h"
#include "check.h"

/* A device as the cuda backend describes an H100, the hip backend an
 * MI250X, the opencl backend PoCL on a CPU (limits only). */
static struct device_info device(const char *lang, int wg, int dim2, int64_t local,
				 int64_t groups)
{
	struct device_info d;

	memset(&d, 0, sizeof(d));
	snprintf(d.lang, sizeof(d.lang), "%s", lang);
	d.max_wg_size = wg;
	d.max_wg_dim[0] = d.max_wg_dim[1] = wg;
	d.max_wg_dim[2] = dim2;
	d.local_mem = local;
	for (int k = 0; k < 3; k++)
		d.max_groups[k] = groups;
	return d;
}

static void launch_of(struct launch *l, size_t global, size_t local, size_t dyn)
{
	static char buf; /* a stand-in: launch_check only asks whether there is one */

	launch_init(l, "k");
	l->global[0] = global;
	l->local[0] = local;
	launch_arg_buffer(l, (struct buffer *)&buf);
	launch_arg_bytes(l, &buf, 4);
	if (dyn)
		launch_arg_local(l, dyn);
}

static void test_launch_check(void)
{
	const struct device_info devs[] = {
		device("cuda", 1024, 64, 232448, 65535),  /* H100 */
		device("cuda", 1024, 1024, 65536, 0),	  /* MI250X, grid limits unknown */
		device("opencl", 4096, 4096, 1048576, 0), /* PoCL */
	};
	static const size_t psize[] = { 8, 4 };
	struct tcx_error err = { 0 };
	struct launch l;
	size_t dyn = 1;

	for (size_t d = 0; d < ARRAY_SIZE(devs); d++) {
		const struct device_info *di = &devs[d];
		bool cl = strcmp(di->lang, "opencl") == 0;
		/* OpenCL's dynamic local memory is a parameter of the kernel */
		struct kernel_facts k = { "k", 0, 0, 2, NULL, 8 }, kl = { "k", 0, 0, 2 + cl, NULL, 8 };

		launch_of(&l, 1024, 64, 0);
		CHECK_MSG(launch_check(di, &k, &l, &dyn, &err) == TCX_OK && dyn == 0, "%s", err.msg);
		launch_of(&l, 1024, 64, 4096);
		CHECK_MSG(launch_check(di, &kl, &l, &dyn, &err) == TCX_OK && dyn == 4096, "%s",
			  err.msg);

		/* the device's limits: work-items, local memory, groups */
		launch_of(&l, 2 * (size_t)di->max_wg_size, 2 * (size_t)di->max_wg_size, 0);
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELIMIT);
		CHECK_MSG(strstr(err.msg, cl ? "work-group size" : "block size") &&
			      strstr(err.msg, "exceeds the device limit"),
			  "%s", err.msg);
		launch_of(&l, 1024, 64, 0);
		/* each dimension within its limit, twice the work-items in all */
		l.local[1] = l.global[1] = 2;
		l.local[0] = l.global[0] = (size_t)di->max_wg_size;
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELIMIT);
		CHECK_MSG(strstr(err.msg, cl ? "work-group of" : "block of"), "%s", err.msg);
		launch_of(&l, 1024, 64, (size_t)di->local_mem - 99);
		kl.static_local = 100;
		CHECK(launch_check(di, &kl, &l, NULL, &err) == TCX_ELIMIT);
		CHECK_MSG(strstr(err.msg, cl ? "bytes of local memory" : "bytes of shared memory"),
			  "%s", err.msg);
		kl.static_local = 0;
		launch_of(&l, 64, 64, 0);
		l.global[2] = di->max_groups[2] > 0 ? (size_t)di->max_groups[2] + 1
						    : (size_t)UINT_MAX + 1;
		CHECK_MSG(launch_check(di, &k, &l, NULL, &err) == (cl ? TCX_OK : TCX_ELIMIT),
			  "%zu groups: %s", l.global[2], err.msg);

		/* the kernel's own limit */
		k.max_items = 256;
		launch_of(&l, 1024, 512, 0);
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELIMIT);
		CHECK_MSG(strstr(err.msg, cl ? "kernel's limit of 256 on this device"
					     : "kernel's limit of 256 (its registers"),
			  "%s", err.msg);
		k.max_items = 0;

		/* malformed for any device */
		launch_of(&l, 1000, 64, 0);
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELAUNCH);
		launch_of(&l, 1024, 0, 0);
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELAUNCH);
		launch_of(&l, 1024, 64, 0);
		launch_arg_bytes(&l, &dyn, 8);
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELAUNCH);
		CHECK_MSG(strstr(err.msg, "takes 2 arguments, not 3"), "%s", err.msg);
		k.psize = psize;
		launch_of(&l, 1024, 64, 0);
		l.args[1].size = 8;
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELAUNCH);
		CHECK_MSG(strstr(err.msg, "parameter 1 is 4 bytes, not 8"), "%s", err.msg);
		k.ptr_size = 4;
		launch_of(&l, 1024, 64, 0);
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_ELAUNCH);
		CHECK_MSG(strstr(err.msg, "parameter 0 is 8 bytes, not a pointer"), "%s", err.msg);
		k.ptr_size = 8;
		launch_of(&l, 1024, 64, 0);
		l.args[0].buf = NULL;
		CHECK(launch_check(di, &k, &l, NULL, &err) == TCX_EINVAL);
	}
}

static void test_buffers_and_logs(void)
{
	struct tcx_error err = { 0 };
	char head[64];

	CHECK(buffer_check_range(true, 16, 8, 8, "read", &err) == TCX_OK);
	CHECK(buffer_check_range(true, 16, 12, 8, "read", &err) == TCX_EINVAL);
	CHECK_MSG(strcmp(err.msg, "read of 8 bytes at offset 12 past the end of a 16-byte buffer") ==
		      0,
		  "%s", err.msg);
	CHECK(buffer_check_range(true, 16, SIZE_MAX, 2, "write", &err) == TCX_EINVAL);
	CHECK(buffer_check_range(false, 0, 0, 0, "write", &err) == TCX_EINVAL);
	CHECK(strcmp(err.msg, "write of a NULL buffer") == 0);

	backend_log_head(NULL, 1, head, sizeof(head));
	CHECK(strcmp(head, "(the compiler gave no log)") == 0);
	backend_log_head("warning: w\n  x.cu(3): error: bad\nnext line\nthird\n", 1, head,
			 sizeof(head));
	CHECK_MSG(strcmp(head, "x.cu(3): error: bad") == 0, "%s", head);
	backend_log_head("warning: w\n  x.cl:3: error: bad\nnext line\nthird\n", 2, head,
			 sizeof(head));
	CHECK_MSG(strcmp(head, "x.cl:3: error: bad; next line") == 0, "%s", head);
	backend_log_head("just a note\n", 2, head, sizeof(head));
	CHECK_MSG(strcmp(head, "just a note") == 0, "%s", head);
}

/* Every backend tcx has is named, built or not; the built ones are found. */
static void test_registry(void)
{
	static const char *const all[] = { "opencl", "cuda", "hip", "host" };
	int k;

	for (k = 0; backend_known_at(k); k++)
		CHECK(k < (int)ARRAY_SIZE(all) && strcmp(backend_known_at(k), all[k]) == 0);
	CHECK(k == (int)ARRAY_SIZE(all));
	for (k = 0; k < backend_count(); k++)
		CHECK(backend_find(backend_at(k)->name) == backend_at(k));
	CHECK(backend_find("host") != NULL);
	CHECK(backend_at(backend_count()) == NULL);
}

/* The backend layer checks every backend's transfers the same way: the
 * host's (which computes, never compiles) as OpenCL's and CUDA's. */
static void test_host_transfers(void)
{
	struct tcx_error err = { 0 };
	struct device *dev = NULL;
	struct buffer *buf = NULL;
	unsigned char bytes[16] = { 1, 2, 3 };

	CHECK(device_open("host", &dev, &err) == TCX_OK);
	if (!dev)
		return;
	CHECK(buffer_alloc(dev, 16, &buf, &err) == TCX_OK);
	CHECK(buffer_write(dev, buf, 0, bytes, 16, &err) == TCX_OK);
	CHECK(buffer_read(dev, buf, 12, bytes, 8, &err) == TCX_EINVAL);
	CHECK_MSG(strcmp(err.msg, "read of 8 bytes at offset 12 past the end of a 16-byte buffer") ==
		      0,
		  "%s", err.msg);
	CHECK(buffer_write(dev, NULL, 0, bytes, 4, &err) == TCX_EINVAL);
	CHECK_MSG(strcmp(err.msg, "write of a NULL buffer") == 0, "%s", err.msg);
	CHECK(buffer_read(dev, buf, 8, bytes, 8, &err) == TCX_OK && bytes[0] == 0);
	buffer_free(dev, buf);
	device_close(dev);
}

int main(void)
{
	test_launch_check();
	test_buffers_and_logs();
	test_host_transfers();
	test_registry();
	return check_done();
}

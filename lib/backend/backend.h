/* backend.h - the backend interface: how tcx finds devices, builds kernels,
 * moves data and launches work on OpenCL, CUDA, HIP and the host.
 *
 * A backend fills a struct tcx_backend_ops (pocl's device-ops idea): one
 * directory lib/backend/<name>/ providing tcx_backend_<name>_ops(), and one
 * registry line in backend.c.  The tuner and the generator never ask which
 * backend they have; they read struct device_info.
 *
 * Ownership: objects a hook creates (device, program, buffer) are freed by
 * the matching hook (close, program_free, free; close and free are never
 * given NULL).  Strings a hook returns are borrowed from the object they
 * describe.
 */
#ifndef TCX_BACKEND_H
#define TCX_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

enum device_type { DEV_CPU, DEV_GPU, DEV_ACCEL, DEV_HOST };

/* What tcx knows of a device.  Zero / empty where the runtime does not say. */
struct device_info {
	char id[64];        /* "opencl:0:1", "cuda:0", "hip:0", "host" */
	char backend[16];   /* "opencl" */
	char name[128];     /* "NVIDIA H100 80GB HBM3" */
	char vendor[128];
	char driver[256];   /* driver / runtime version, part of cache keys */
	char arch[64];      /* "sm_90", "gfx90a", CPU model for PoCL */
	char lang[16];      /* kernel language: "opencl" or "cuda" (CUDA and HIP) */
	enum device_type type;
	int compute_units;
	int64_t global_mem;      /* bytes */
	int64_t max_alloc;       /* largest single buffer, bytes */
	int64_t local_mem;       /* local/shared memory a work-group may use, bytes */
	int64_t local_mem_per_cu;/* per compute unit (SM), bytes; 0 if unknown */
	int64_t cache_bytes;     /* last-level cache in front of global memory; 0 if unknown */
	int max_wg_size;         /* work-items per work-group */
	int max_wg_dim[3];
	int64_t max_groups[3];   /* work-groups a launch may have along each dimension; 0
				  * where the runtime sets none of its own (OpenCL) */
	int max_regs_per_wg;     /* 32-bit registers per work-group; 0 if unknown */
	int clock_mhz;
	int simd_width;          /* warp / wavefront size; 1 for CPUs */
	int pref_vector_float;   /* preferred float vector width */
	bool fp64;               /* double arithmetic */
	bool fp16;               /* half arithmetic (storage works everywhere) */
	bool timer_events;       /* device-side event timing is trustworthy */
	int cc_major, cc_minor;  /* CUDA compute capability */
};

struct device;   /* an opened device (context + queue) */
struct program;  /* a compiled program */
struct buffer;   /* device memory */
struct program_head;
struct kernel_head;

enum karg_kind { KARG_BUFFER, KARG_BYTES, KARG_LOCAL };

/* One kernel argument: a buffer, a value (bytes copied at launch), or, in
 * OpenCL, a dynamic __local allocation of `size` bytes. */
struct karg {
	enum karg_kind kind;
	struct buffer *buf;
	const void *ptr;
	size_t size;
};

#define LAUNCH_MAX_ARGS 24

/* A launch: `global` counts work-items (OpenCL's NDRange, so CUDA's grid is
 * global / local), `local` the work-group shape. */
struct launch {
	const char *kernel;
	size_t global[3];
	size_t local[3];
	int nargs;
	struct karg args[LAUNCH_MAX_ARGS];
};

struct tcx_backend_ops {
	const char *name;

	/* Lists this backend's devices into out[0..max), sets *count.  A
	 * backend whose runtime is missing returns TCX_ENODEV with the reason
	 * in err ("libcuda.so.1 not found"), which `tcx devices` shows. */
	enum tcx_status (*probe)(struct device_info *out, int max, int *count,
				 struct tcx_error *err);

	/* Opens device `index` of this backend's list (probe order).  The
	 * device's struct device_base comes zeroed; open points its `info` at
	 * the device's description, device_open sets its ops. */
	enum tcx_status (*open)(int index, struct device **out, struct tcx_error *err);
	void (*close)(struct device *dev);

	/* Compiles `src` (len bytes) with backend options `opts` (may be NULL).
	 * On TCX_EBUILD *out may still be set so program_log can read it;
	 * the caller frees it with program_free either way.  A backend's
	 * struct program begins with a struct program_head (check.h). */
	enum tcx_status (*build)(struct device *dev, const char *src, size_t len, const char *opts,
				 struct program **out, struct tcx_error *err);
	void (*program_free)(struct program *prog);
	/* Optional: the compiled binary, for the on-disk kernel cache (caller
	 * frees *bin), and a build from such a binary (never empty: kcache.c
	 * refuses an empty entry). */
	enum tcx_status (*binary)(const struct program *prog, unsigned char **bin, size_t *len,
				  struct tcx_error *err);
	enum tcx_status (*build_binary)(struct device *dev, const unsigned char *bin, size_t len,
					struct program **out, struct tcx_error *err);

	/* Device memory: `alloc` is asked for 1 byte or more.  A backend's
	 * struct buffer begins with its size in bytes (a size_t), against
	 * which buffer_write and buffer_read check a transfer before `copy` is
	 * called: `bytes` (not 0) between the host and `buf` from byte
	 * `offset`, to the device when `to_dev`, else back, done when it
	 * returns. */
	enum tcx_status (*alloc)(struct device *dev, size_t bytes, struct buffer **out,
				 struct tcx_error *err);
	void (*free)(struct buffer *buf);
	enum tcx_status (*copy)(struct device *dev, struct buffer *buf, size_t offset, void *host,
				size_t bytes, bool to_dev, struct tcx_error *err);

	/* Optional: a copy-engine descriptor of a strided tensor in `buf`
	 * from byte `off` (CUDA's tensor map, TCX_TENSOR_MAP_BYTES bytes into
	 * `out`): `rank` dimensions of sizes `dim`, the first of unit stride,
	 * the others `stride` bytes apart (stride[0] is dimension 1's), copied
	 * in boxes of `box` elements with the 128-byte swizzle and zeros
	 * outside the tensor.  TCX_EUNSUPPORTED when this device or geometry
	 * cannot have one. */
	enum tcx_status (*tensor_map)(struct device *dev, struct buffer *buf, size_t off,
				      int elem_bytes, int rank, const int64_t *dim,
				      const int64_t *stride, const int *box, void *out,
				      struct tcx_error *err);

	/* Enqueues a kernel.  With event_ms non-NULL (*event_ms is 0) the call
	 * waits for the kernel and stores its device-side duration in
	 * milliseconds.  device_launch has refused a launch without a kernel
	 * name or with other than 0 to LAUNCH_MAX_ARGS arguments; check.h's
	 * launch_check says what a backend checks next. */
	enum tcx_status (*launch)(struct device *dev, struct program *prog,
				  const struct launch *l, double *event_ms, struct tcx_error *err);
	/* Waits until everything enqueued has finished. */
	enum tcx_status (*finish)(struct device *dev, struct tcx_error *err);

	/* Optional, for the device API (include/tcx.h): a buffer over memory
	 * the caller owns -- `native` is a cl_mem of the device's context, or
	 * a CUDA or HIP device pointer -- used for `bytes` bytes, which free
	 * does not release.  With *out already such a wrapper of this device,
	 * it is pointed at `native` instead and nothing is allocated, so that
	 * each execute can take new buffers; with `native` NULL, a wrapper of
	 * nothing is made, to be pointed later.  TCX_EINVAL when the memory
	 * cannot be this device's or is smaller than `bytes`. */
	enum tcx_status (*wrap)(struct device *dev, void *native, size_t bytes,
				struct buffer **out, struct tcx_error *err);
	/* Optional: how a program's kernel is looked up on its first launch
	 * or device_kernel_ready (program_kernel in check.h): the size of the
	 * backend's struct kernel_entry, and what fills it in from the runtime
	 * (the kernel object, its attributes), so that later launches of it
	 * allocate nothing. */
	size_t kernel_size;
	enum tcx_status (*kernel_init)(struct program_head *p, struct kernel_head *k,
				       struct tcx_error *err);
	/* Optional: the runtime's own handle of the device (enum
	 * native_handle): an OpenCL cl_context, cl_device_id and the device's
	 * cl_command_queue, or a CUcontext (hipCtx_t), the CUdevice as an
	 * integer and the device's stream; NULL where there is none. */
	void *(*native)(struct device *dev, int what);
};

enum native_handle { NATIVE_CONTEXT, NATIVE_DEVICE, NATIVE_QUEUE };

/* The registry: the backends built into this binary (backend_at, in
 * registry order; NULL past the end), one by name (NULL when it was not
 * built), and the name of every backend tcx has, built or not
 * (backend_known_at; NULL past the end), for messages that name them. */
int backend_count(void);
const struct tcx_backend_ops *backend_at(int k);
const struct tcx_backend_ops *backend_find(const char *name);
const char *backend_known_at(int k);

/* Every device of every backend.  `why` receives one line per backend that
 * has no devices and says why (NULL allowed).  Caller frees *out. */
enum tcx_status devices_list(struct device_info **out, int *count, struct strbuf *why,
			     struct tcx_error *err);

/* Opens a device by id ("opencl:0:0", "cuda:1", "host"), or the default
 * when id is NULL or empty: $TCX_DEVICE, else the first GPU, else the first
 * OpenCL CPU device; TCX_ENODEV when there is none. */
enum tcx_status device_open(const char *id, struct device **out, struct tcx_error *err);
void device_close(struct device *dev);
const struct device_info *device_info_of(const struct device *dev);
const struct tcx_backend_ops *device_ops(const struct device *dev);
/* True for the host reference device, which computes but never compiles. */
bool device_is_host(const struct device *dev);

/* Every backend's `struct device` starts with this header, so the generic
 * code can find the ops and the in-process program cache. */
struct device_base {
	const struct tcx_backend_ops *ops;
	const struct device_info *info; /* the backend's, device_info_of's */
	struct program_cache *cache;
	unsigned long builds, cache_hits, disk_hits; /* device_cache_stats's counters */
	/* the on-disk kernel cache (kcache.h): off for this device when set */
	bool no_disk_cache;
	/* the platform keeps compiled kernels itself (PoCL): tcx's on-disk
	 * cache stays out of its way */
	bool platform_cache;
	/* more counters: binaries stored on disk, damaged entries rebuilt */
	unsigned long disk_stores, disk_corrupt;
	/* the kernel timeout (watchdog.h); NULL when none was set */
	struct watchdog *wd;
};

/* Sets the longest a kernel may run on dev, in seconds (0: no limit, the
 * default).  A first launch of a kernel shape that runs longer fails with
 * TCX_ETIMEOUT and the kernel is abandoned, still running: no runtime can
 * stop it.  Later calls on the device wait for it (up to 10 times the
 * timeout), then fail with TCX_EBUSY.  lib/backend/watchdog.h has the
 * details.  TCX_ENOMEM when out of memory. */
enum tcx_status device_set_kernel_timeout(struct device *dev, double seconds,
					  struct tcx_error *err);

/* What device_build has done on a device since it was opened. */
struct device_cache_stats {
	unsigned long builds;	    /* programs compiled */
	unsigned long memory_hits;  /* found in the process-wide cache */
	unsigned long disk_hits;    /* loaded from the on-disk kernel cache */
	unsigned long disk_stores;  /* stored there */
	unsigned long disk_rebuilt; /* damaged entries there, compiled again */
	bool platform_cache;	    /* the platform caches kernels; tcx's cache is unused */
};
void device_cache_stats(const struct device *dev, struct device_cache_stats *out);

/* Turns the on-disk kernel cache on or off for one opened device (it is on
 * unless $TCX_NO_KERNEL_CACHE is set).  The in-process cache stays on. */
void device_set_disk_cache(struct device *dev, bool on);

/* Builds through the process-wide cache keyed by source and options, then
 * the on-disk kernel cache (when the backend has the binary hooks; see
 * kcache.h), then the compiler, storing what it compiles on disk.  The
 * program stays owned by the cache (freed by device_close); *compile_s gets
 * the seconds spent compiling, or loading the binary from disk (0 on an
 * in-process hit).  A damaged disk entry is removed and the kernel compiled
 * again.  On TCX_EBUILD the compiler's log is appended to `log` (NULL
 * allowed). */
enum tcx_status device_build(struct device *dev, const char *src, size_t len, const char *opts,
			     struct program **out, double *compile_s, struct strbuf *log,
			     struct tcx_error *err);

/* The compiler's log of a program (borrowed from it; "" when none). */
const char *program_log(const struct program *prog);

/* Thin wrappers over the ops. */
enum tcx_status buffer_alloc(struct device *dev, size_t bytes, struct buffer **out,
			     struct tcx_error *err);
void buffer_free(struct device *dev, struct buffer *buf);
enum tcx_status buffer_write(struct device *dev, struct buffer *buf, size_t off, const void *src,
			     size_t bytes, struct tcx_error *err);
enum tcx_status buffer_read(struct device *dev, struct buffer *buf, size_t off, void *dst,
			    size_t bytes, struct tcx_error *err);
enum tcx_status device_launch(struct device *dev, struct program *prog, const struct launch *l,
			      double *event_ms, struct tcx_error *err);
enum tcx_status device_finish(struct device *dev, struct tcx_error *err);

/* The size of a tensor map, and the op's wrapper (TCX_EUNSUPPORTED when
 * the backend has none). */
#define TCX_TENSOR_MAP_BYTES 128
enum tcx_status device_tensor_map(struct device *dev, struct buffer *buf, size_t off,
				  int elem_bytes, int rank, const int64_t *dim, const int64_t *stride,
				  const int *box, void *out, struct tcx_error *err);

/* The device API's wrappers of the ops above: TCX_EUNSUPPORTED where the
 * backend has no wrap; kernel_ready does nothing where it has no kernel_init, and
 * device_native returns NULL.  buffer_wrap of NULL makes a wrapper of
 * nothing (the op's); one of something is freed with buffer_free. */
enum tcx_status buffer_wrap(struct device *dev, void *native, size_t bytes, struct buffer **out,
			    struct tcx_error *err);
enum tcx_status device_kernel_ready(struct device *dev, struct program *prog, const char *name,
				    struct tcx_error *err);
void *device_native(struct device *dev, enum native_handle what);

/* Sends the launches of the calling thread on dev to `queue` -- a
 * cl_command_queue of dev's context, a CUDA or HIP stream of its context
 * -- instead of the device's own queue, until it is called again with
 * NULL.  Transfers (write, read) and finish stay on the device's queue.
 * Allocates nothing. */
void device_use_queue(struct device *dev, void *queue);
/* For the backends' launch: the queue device_use_queue set on this thread
 * for dev, or NULL. */
void *device_queue(const struct device *dev);

/* Launch helpers. */
void launch_init(struct launch *l, const char *kernel);
void launch_arg_buffer(struct launch *l, struct buffer *buf);
void launch_arg_bytes(struct launch *l, const void *ptr, size_t size);
void launch_arg_local(struct launch *l, size_t size);

/* Each backend: */
void tcx_backend_host_ops(struct tcx_backend_ops *ops);
#ifdef TCX_WITH_OPENCL
void tcx_backend_opencl_ops(struct tcx_backend_ops *ops);
#endif
#ifdef TCX_WITH_CUDA
void tcx_backend_cuda_ops(struct tcx_backend_ops *ops);
#endif
#ifdef TCX_WITH_HIP
void tcx_backend_hip_ops(struct tcx_backend_ops *ops);
#endif

#endif /* TCX_BACKEND_H */

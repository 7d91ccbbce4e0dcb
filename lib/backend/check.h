/* check.h - what every backend checks and words the same way, so that the
 * same condition gets the same status on OpenCL, CUDA and HIP: a
 * transfer's range, a launch against the device's and the kernel's limits;
 * and how a backend reports its runtime's error codes and
 * its compiler's log.  For the backends (lib/backend/<name>/) and their
 * tests; the rest of tcx goes through backend.h. */
#ifndef TCX_BACKEND_CHECK_H
#define TCX_BACKEND_CHECK_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"

/* TCX_EINVAL unless `bytes` at `off` lie within a buffer of `size` bytes;
 * `present` false says the buffer is NULL.  `what` names the transfer in
 * the message ("write", "read"). */
enum tcx_status buffer_check_range(bool present, size_t size, size_t off, size_t bytes,
				   const char *what, struct tcx_error *err);

/* What a backend's runtime says of a compiled kernel, for launch_check. */
struct kernel_facts {
	const char *name;
	int64_t max_items;    /* work-items a group of this kernel may have (its
			       * registers, its launch bounds); 0: the device's */
	int64_t static_local; /* local memory the kernel declares, bytes */
	int nparams;	      /* its parameters; -1 when the runtime cannot tell */
	const size_t *psize;  /* their sizes in bytes; NULL when it cannot tell */
	size_t ptr_size;      /* the size of a buffer parameter */
};

/* Checks launch `l` of kernel `k` on a device described by `di`, before
 * anything is enqueued, so that a bad solution is refused with a reason
 * rather than a runtime's bare error code.  The statuses, the same on every
 * backend:
 *   TCX_ELAUNCH  a launch no device takes: an empty grid or group, a global
 *                size that is not a multiple of the group's, arguments the
 *                kernel does not take (their number, or a size the runtime
 *                reports otherwise);
 *   TCX_ELIMIT   beyond this device's or this kernel's limits: work-items
 *                per group (per dimension and in all), groups per
 *                dimension, local memory (the kernel's own and the
 *                launch's dynamic local memory together);
 *   TCX_EINVAL   a NULL buffer, an argument of no known kind.
 * The words follow the device's kernel language: work-groups, work-items
 * and local memory in OpenCL, whose dynamic local memory is a parameter of
 * the kernel; blocks, threads and shared memory in the CUDA dialect (CUDA
 * and HIP), whose launches count groups in 32 bits.  *local_bytes (NULL
 * allowed) gets the launch's dynamic local memory. */
enum tcx_status launch_check(const struct device_info *di, const struct kernel_facts *k,
			     const struct launch *l, size_t *local_bytes, struct tcx_error *err);

/* As tcx_fail, with ": NAME (rc)" appended to the message and err->native
 * set to rc: how a backend reports its runtime's error code. */
enum tcx_status backend_vfail(struct tcx_error *err, enum tcx_status code, int rc, const char *name,
			      const char *fmt, va_list ap) TCX_PRINTF(5, 0);

/* For an error message: the first line of a compiler's log that reports an
 * error (else its first line) and up to lines - 1 lines after it, joined
 * with "; ", into buf; "(the compiler gave no log)" when there is none. */
void backend_log_head(const char *log, int lines, char *buf, size_t size);

/* --- programs --------------------------------------------------------- */

/* The head of each backend's struct kernel_entry: a function of a program,
 * looked up on its first launch. */
struct kernel_head {
	char *name;
	struct kernel_head *next;
};

/* The head of each backend's struct program (its first member; program_log
 * in backend.c reads it): the device it was built for, the compiler's log
 * and the kernels looked up so far. */
struct program_head {
	struct device *dev;
	char *log;	      /* never NULL once built */
	pthread_mutex_t lock; /* guards `kernels` and a launch's use of them */
	struct kernel_head *kernels;
};

/* A zeroed program of `size` bytes (the backend's struct program) for
 * `dev`, its lock initialised; NULL when out of memory. */
void *program_head_new(size_t size, struct device *dev);

/* Frees the program's log, its kernels, after `release` (NULL allowed) has
 * let go of the runtime's part of each, and the program.  The backend lets
 * go of its own part of the program first. */
void program_head_free(struct program_head *p, void (*release)(struct kernel_head *k));

/* The kernel `name` of p (call with p->lock held): the one looked up
 * before, else a new zeroed one of `size` bytes (the backend's struct
 * kernel_entry) that `init` fills in from the runtime, kept when init
 * succeeds; an init that fails lets go of what it took. */
enum tcx_status program_kernel(struct program_head *p, const char *name, size_t size,
			       enum tcx_status (*init)(struct program_head *p,
						       struct kernel_head *k,
						       struct tcx_error *err),
			       struct kernel_head **out, struct tcx_error *err);

#endif /* TCX_BACKEND_CHECK_H */

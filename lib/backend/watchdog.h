/* watchdog.h - the kernel timeout behind device_set_kernel_timeout
 * (backend.h), used by backend.c's wrappers only.
 *
 * With a timeout set, a launch of a kernel shape (program, kernel, global
 * and local size) that has not yet been seen to finish on the device runs
 * on a helper thread, synchronously, while the caller waits at most the
 * timeout.  Past it the caller gets TCX_ETIMEOUT and the kernel is
 * abandoned: it still runs, because no runtime can stop a running kernel
 * (OpenCL, PoCL included, has no way at all; CUDA and HIP only by
 * destroying the context).  Until it finishes the device is busy: the next
 * call on it waits for it at most WATCHDOG_DRAIN_FACTOR times the timeout,
 * then fails with TCX_EBUSY, which stops a tuning run after what it measured
 * is saved.  Buffers freed meanwhile are freed once the kernel ends, and a
 * device closed with a kernel still running is left open (the process is
 * about to end; the runtime frees it then).
 *
 * Shapes that finished once run directly afterwards, without the helper
 * thread, so that timing loops are not slowed: a kernel's running time does
 * not depend on the data, so its first launch is the one that can hang. */
#ifndef TCX_WATCHDOG_H
#define TCX_WATCHDOG_H

#include "backend/backend.h"

#define WATCHDOG_DRAIN_FACTOR 10

struct watchdog;

/* A watchdog with `timeout_s` > 0; NULL when out of memory. */
struct watchdog *watchdog_new(double timeout_s);
void watchdog_set_timeout(struct watchdog *wd, double timeout_s);

/* Launches through ops->launch under the timeout (wd NULL: no timeout).
 * `hang` (fault injection) sleeps fault_hang_seconds() first, as a kernel
 * that hangs; under a timeout the launch is then dropped. */
enum tcx_status watchdog_launch(struct watchdog *wd, struct device *dev,
				const struct tcx_backend_ops *ops, struct program *prog,
				const struct launch *l, bool hang, double *event_ms,
				struct tcx_error *err);

/* Waits until no abandoned kernel runs on the device; TCX_EBUSY when one
 * still runs after the drain time.  TCX_OK at once when none was abandoned. */
enum tcx_status watchdog_idle(struct watchdog *wd, struct device *dev, struct tcx_error *err);

/* buffer_free while a kernel is abandoned: true when buf was kept to be
 * freed once the kernel ends (the caller must not free it). */
bool watchdog_defer_free(struct watchdog *wd, struct buffer *buf);

/* device_close: frees the watchdog and returns true, or false, without
 * waiting, when an abandoned kernel still runs (the device must then be
 * left open; the watchdog stays, reachable, for the life of the process). */
bool watchdog_release(struct watchdog *wd, struct device *dev);

#endif /* TCX_WATCHDOG_H */

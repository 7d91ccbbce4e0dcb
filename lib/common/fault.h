/* fault.h - fault injection for tests: in builds with TCX_FAULT_INJECTION
 * (the CMake option of that name; scripts/test turns it on), the variable
 *
 *   TCX_FAULT=alloc:N,build:N,launch:N,launch-hang:N,write:N
 *
 * makes the Nth call of a kind fail as the real failure would, so that the
 * paths that record and skip a failed candidate, or report a full disk, can
 * be tested deterministically.  Counting starts at 1 and is per process;
 * "kind:N+" fails the Nth call and every later one; a kind may be given
 * more than once ("build:2,build:5").  The kinds and where they strike:
 *
 *   alloc        buffer_alloc (backend.c): TCX_EDEVICE, as an out-of-memory
 *                device allocation
 *   build        device_build (backend.c), before the caches: TCX_EBUILD
 *   launch       device_launch (backend.c): TCX_ELAUNCH
 *   launch-hang  device_launch: the launch sleeps TCX_FAULT_HANG_S seconds
 *                (default 30) instead of running, as a kernel that hangs,
 *                which --kernel-timeout must cut short
 *   write        atomic_file_commit (util.c), store_put (store.c) and
 *                export_tree_write (lib/export/tree.c: export-lib writes
 *                each file of its tree, then commits each), one count for
 *                all: the write fails with ENOSPC (no space left on
 *                device) and leaves what was there before intact
 *
 * In other builds fault_hit is a constant false and TCX_FAULT is ignored.
 * A malformed TCX_FAULT is reported once through tcx_log and ignored. */
#ifndef TCX_FAULT_H
#define TCX_FAULT_H

#include <stdbool.h>

enum fault_kind {
	FAULT_ALLOC,
	FAULT_BUILD,
	FAULT_LAUNCH,
	FAULT_LAUNCH_HANG,
	FAULT_WRITE,
	FAULT_KINDS
};

#ifdef TCX_FAULT_INJECTION
/* Counts one call of kind k; true when this call is to fail.  Thread-safe. */
bool fault_hit(enum fault_kind k);
/* The seconds a launch-hang sleeps. */
double fault_hang_seconds(void);
/* Forgets the counts and reads TCX_FAULT again (for unit tests). */
void fault_reset(void);
#else
static inline bool fault_hit(enum fault_kind k)
{
	(void)k;
	return false;
}
static inline double fault_hang_seconds(void)
{
	return 0;
}
static inline void fault_reset(void)
{
}
#endif

#endif /* TCX_FAULT_H */

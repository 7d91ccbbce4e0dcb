/* peak.h - a device's arithmetic peak, measured once with chains of fused
 * multiply-adds (kernels/opencl/peak.cl) and kept in
 * $XDG_CACHE_HOME/tcx/peaks.json, keyed by device id, name and driver, so
 * that tcx bench can report the fraction of peak each size reaches. */
#ifndef TCX_BENCH_PEAK_H
#define TCX_BENCH_PEAK_H

#include <stdbool.h>

#include "backend/backend.h"

struct peak {
	double fp32_gflops;  /* 0 when unknown */
	double fp64_gflops;  /* 0 when unknown or the device has no fp64 */
	char date[32];       /* when it was measured, UTC ISO 8601 */
};

/* Measures fp32 (and fp64 where the device has it) on an opened device:
 * launches of about 50 ms, the best of several.  TCX_EUNSUPPORTED for
 * devices whose kernel language has no peak kernel (only OpenCL C so far)
 * and for the host reference. */
enum tcx_status peak_measure(struct device *dev, struct peak *out, struct tcx_error *err);

/* The cache file's path ($XDG_CACHE_HOME/tcx/peaks.json), appended to out. */
enum tcx_status peak_cache_path(struct strbuf *out, struct tcx_error *err);

/* Looks the device up in the cache.  *found false (and TCX_OK) when the
 * file or the entry is missing; a damaged file is TCX_ECORRUPT. */
enum tcx_status peak_cache_lookup(const struct device_info *di, struct peak *out, bool *found,
				  struct tcx_error *err);

/* Adds or replaces the device's entry, atomically. */
enum tcx_status peak_cache_store(const struct device_info *di, const struct peak *p,
				 struct tcx_error *err);

/* The peak that applies to an element type: fp64 for d and z, else fp32
 * (fp16 and bf16 are stored as such but computed in fp32); 0 if unknown. */
double peak_for_dtype(const struct peak *p, enum tcx_dtype t);

#endif /* TCX_BENCH_PEAK_H */

/* peak.c - measuring a device's fp32/fp64 peak and caching it (peak.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backend/kcache.h"
#include "bench/peak.h"
#include "gen/gen.h"

#define PEAK_CACHE_VERSION 1
#define PEAK_TARGET_S 0.05
#define PEAK_TRIES 8

static int pow2_clamp(int v)
{
	int p = 1;

	while (p * 2 <= v && p < 16)
		p *= 2;
	return p;
}

/* The seconds one launch took: device events where they are trustworthy,
 * else the host's wall clock around launch and finish. */
static enum tcx_status timed(struct device *dev, struct program *prog, const struct launch *l,
			     bool events, double *s, struct tcx_error *err)
{
	double t0 = common_now_seconds(), ev = 0;
	enum tcx_status st = device_launch(dev, prog, l, events ? &ev : NULL, err);

	if (!st)
		st = device_finish(dev, err);
	*s = events ? ev * 1e-3 : common_now_seconds() - t0;
	return st;
}

static enum tcx_status measure_one(struct device *dev, bool dbl, double *gflops,
				   struct tcx_error *err)
{
	const struct device_info *di = device_info_of(dev);
	struct strbuf src = STRBUF_INIT;
	char *port = NULL, *body = NULL;
	struct program *prog = NULL;
	struct buffer *out = NULL;
	struct launch l;
	int vw = pow2_clamp(dbl ? TCX_MAX(1, di->pref_vector_float / 2)
				: TCX_MAX(1, di->pref_vector_float));
	/* GPUs: full work-groups, many per compute unit; CPUs (PoCL runs a
	 * work-group on one thread): one work-item per group, the vectors
	 * explicit, enough groups to balance the threads */
	bool gpu = di->type == DEV_GPU || di->type == DEV_ACCEL;
	size_t wg = !gpu ? 1 : (size_t)(di->max_wg_size > 0 ? TCX_MIN(256, di->max_wg_size) : 64);
	size_t groups = (size_t)TCX_MAX(1, di->compute_units) * (gpu ? 32 : 64);
	size_t global = wg * groups, esz = dbl ? sizeof(double) : sizeof(float);
	float af = 0.9999f, bf = 1e-4f;
	double ad = 0.9999, bd = 1e-4, best = 0, s = 0;
	int iters = 16;
	bool events = di->timer_events;
	enum tcx_status st;

	*gflops = 0;
	if (dbl)
		strbuf_adds(&src, "#define REAL double\n#pragma OPENCL EXTENSION cl_khr_fp64 : "
				  "enable\n");
	else
		strbuf_adds(&src, "#define REAL float\n");
	strbuf_addf(&src, "#define VW %d\n", vw);
	st = kernel_source("common/port.h", &port, NULL, err);
	if (!st)
		st = kernel_source("opencl/peak.cl", &body, NULL, err);
	if (!st) {
		strbuf_adds(&src, port);
		strbuf_adds(&src, body);
		st = strbuf_status(&src, err);
	}
	if (!st)
		st = device_build(dev, src.buf, src.len, "-cl-std=CL1.2", &prog, NULL, NULL, err);
	if (!st)
		st = buffer_alloc(dev, global * esz, &out, err);
	for (int tries = 0; !st && tries < 40; tries++) {
		launch_init(&l, "tcx_peak");
		l.global[0] = global;
		l.local[0] = wg;
		launch_arg_buffer(&l, out);
		if (dbl) {
			launch_arg_bytes(&l, &ad, sizeof(ad));
			launch_arg_bytes(&l, &bd, sizeof(bd));
		} else {
			launch_arg_bytes(&l, &af, sizeof(af));
			launch_arg_bytes(&l, &bf, sizeof(bf));
		}
		launch_arg_bytes(&l, &iters, sizeof(iters));
		st = timed(dev, prog, &l, events, &s, err);
		if (st)
			break;
		if (s >= PEAK_TARGET_S || iters >= (1 << 24))
			break;
		/* grow towards the target time (at most 16x a step) */
		iters = (int)TCX_MIN((double)(1 << 24),
				     iters * TCX_MIN(16.0, 1.2 * PEAK_TARGET_S / TCX_MAX(s, 1e-6)));
	}
	for (int t = 0; !st && t < PEAK_TRIES; t++) {
		st = timed(dev, prog, &l, events, &s, err);
		if (!st && s > 0) {
			double g = 2.0 * 8 * 8 * vw * (double)iters * (double)global / s * 1e-9;

			best = TCX_MAX(best, g);
		}
	}
	if (!st)
		*gflops = best;
	buffer_free(dev, out);
	free(port);
	free(body);
	strbuf_release(&src);
	return st;
}

static void utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

enum tcx_status peak_measure(struct device *dev, struct peak *out, struct tcx_error *err)
{
	const struct device_info *di = device_info_of(dev);
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	if (device_is_host(dev))
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"the host reference has no peak to measure; choose a device");
	if (strcmp(di->lang, "opencl") != 0)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"no peak kernel for '%s' devices yet; give --peak-gflops to tcx "
				"bench",
				di->lang);
	st = measure_one(dev, false, &out->fp32_gflops, err);
	if (!st && di->fp64)
		st = measure_one(dev, true, &out->fp64_gflops, err);
	utc_now(out->date, sizeof(out->date));
	return st;
}

enum tcx_status peak_cache_path(struct strbuf *out, struct tcx_error *err)
{
	enum tcx_status st = tcx_cache_path("", out, err);

	if (!st)
		strbuf_adds(out, "/peaks.json");
	return st ? st : strbuf_status(out, err);
}

static bool entry_is(json_t *e, const struct device_info *di)
{
	const char *id = json_string_value(json_object_get(e, "id"));
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *driver = json_string_value(json_object_get(e, "driver"));

	return id && name && driver && strcmp(id, di->id) == 0 && strcmp(name, di->name) == 0 &&
	       strcmp(driver, di->driver) == 0;
}

/* Reads the cache: *doc NULL when there is no file. */
static enum tcx_status cache_read(const char *path, json_t **doc, struct tcx_error *err)
{
	json_error_t je;
	json_t *d;

	*doc = NULL;
	if (access(path, F_OK) != 0)
		return errno == ENOENT || errno == ENOTDIR
			       ? TCX_OK
			       : tcx_fail(err, TCX_EIO, "cannot read '%s': %s", path,
					  strerror(errno));
	d = json_load_file(path, 0, &je);
	if (!d)
		return tcx_fail(err, TCX_ECORRUPT, "damaged peak cache '%s': %s (line %d)", path,
				je.text, je.line);
	if (!json_is_object(d) || !json_is_array(json_object_get(d, "devices"))) {
		json_decref(d);
		return tcx_fail(err, TCX_ECORRUPT, "damaged peak cache '%s': no 'devices' array",
				path);
	}
	*doc = d;
	return TCX_OK;
}

enum tcx_status peak_cache_lookup(const struct device_info *di, struct peak *out, bool *found,
				  struct tcx_error *err)
{
	struct strbuf path = STRBUF_INIT;
	json_t *doc = NULL, *e;
	size_t k;
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	*found = false;
	st = peak_cache_path(&path, err);
	if (!st)
		st = cache_read(strbuf_str(&path), &doc, err);
	if (!st && doc)
		json_array_foreach(json_object_get(doc, "devices"), k, e)
		{
			if (!entry_is(e, di))
				continue;
			out->fp32_gflops = json_number_value(json_object_get(e, "fp32_gflops"));
			out->fp64_gflops = json_number_value(json_object_get(e, "fp64_gflops"));
			snprintf(out->date, sizeof(out->date), "%s",
				 json_string_value(json_object_get(e, "date"))
					 ? json_string_value(json_object_get(e, "date"))
					 : "");
			*found = out->fp32_gflops > 0 || out->fp64_gflops > 0;
		}
	json_decref(doc);
	strbuf_release(&path);
	return st;
}

enum tcx_status peak_cache_store(const struct device_info *di, const struct peak *p,
				 struct tcx_error *err)
{
	struct strbuf path = STRBUF_INIT, dir = STRBUF_INIT;
	struct atomic_file af;
	json_t *doc = NULL, *devs, *e;
	size_t k;
	enum tcx_status st;

	st = peak_cache_path(&path, err);
	if (!st)
		st = tcx_cache_path("", &dir, err);
	if (!st)
		st = common_make_dirs(strbuf_str(&dir), err);
	if (!st) {
		st = cache_read(strbuf_str(&path), &doc, err);
		if (st == TCX_ECORRUPT) {
			/* a damaged cache is replaced by a good one */
			tcx_log(TCX_LOG_INFO, "%s: replaced",
				err ? err->msg : "damaged peak cache");
			tcx_error_clear(err);
			st = TCX_OK;
		}
	}
	if (st)
		goto out_free;
	if (!doc) {
		doc = json_object();
		json_object_set_new(doc, "version", json_integer(PEAK_CACHE_VERSION));
		json_object_set_new(doc, "devices", json_array());
	}
	devs = json_object_get(doc, "devices");
	for (k = json_array_size(devs); k-- > 0;)
		if (entry_is(json_array_get(devs, k), di))
			json_array_remove(devs, k);
	e = json_object();
	json_object_set_new(e, "id", json_string(di->id));
	json_object_set_new(e, "name", json_string(di->name));
	json_object_set_new(e, "driver", json_string(di->driver));
	json_object_set_new(e, "fp32_gflops", json_real(p->fp32_gflops));
	json_object_set_new(e, "fp64_gflops", json_real(p->fp64_gflops));
	json_object_set_new(e, "date", json_string(p->date));
	json_array_append_new(devs, e);
	st = atomic_file_open(&af, strbuf_str(&path), err);
	if (st)
		goto out_free;
	if (json_dumpf(doc, af.fp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
	    fputc('\n', af.fp) == EOF) {
		int saved = errno;

		atomic_file_abort(&af);
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", strbuf_str(&path),
			      strerror(saved));
		goto out_free;
	}
	st = atomic_file_commit(&af, err);
out_free:
	json_decref(doc);
	strbuf_release(&path);
	strbuf_release(&dir);
	return st;
}

double peak_for_dtype(const struct peak *p, enum tcx_dtype t)
{
	return t == TCX_DTYPE_D || t == TCX_DTYPE_Z ? p->fp64_gflops : p->fp32_gflops;
}

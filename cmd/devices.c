/* devices.c - `tcx devices`: list every device of every backend, with the
 * limits the tuner reads, and say why a backend has none. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "backend/backend.h"
#include "bench/peak.h"

static const char *const devices_synopsis[] = {
	"tcx devices [--format <fmt>]",
	"tcx devices --measure [--device <id>] [--format <fmt>]",
	NULL,
};

static const struct cmd_option devices_options[] = {
	{ "format", 'f', required_argument, "<fmt>", "output as table (default) or json", OV_ENUM,
	  "table json" },
	{ "measure", 0x100, no_argument, NULL,
	  "measure and cache each device's fp32/fp64 peak GFLOP/s (for tcx bench)", OV_NONE,
	  NULL },
	{ "device", 'd', required_argument, "<id>", "with --measure: only this device", OV_DEVICE,
	  NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const devices_examples[] = {
	"tcx devices",
	"tcx devices --format json",
	"tcx devices --measure --device opencl:0:0",
	NULL,
};

int cmd_devices(int argc, char **argv);
const struct cmd cmd_devices_def = {
	"devices", cmd_devices, devices_synopsis,
	"List the devices tcx can use",
	devices_options, devices_examples, "", 0,
	NULL,
};

static const char *type_name(enum device_type t)
{
	switch (t) {
	case DEV_CPU:
		return "CPU";
	case DEV_GPU:
		return "GPU";
	case DEV_ACCEL:
		return "ACCEL";
	case DEV_HOST:
		return "host";
	}
	return "?";
}

/* "3.7 GiB", "64 KiB", "-" when unknown. */
static void format_bytes(int64_t b, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	unsigned u = 0;

	if (b <= 0) {
		snprintf(buf, size, "-");
		return;
	}
	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v >= 100 || v == (double)(int64_t)v)
		snprintf(buf, size, "%.0f %s", v, units[u]);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* The unavailable backends: the lines of `why` ("name: reason"), then
 * those not built, as a JSON array of {backend, reason}. */
static json_t *unavailable_json(const char *why)
{
	json_t *arr = json_array();

	while (*why) {
		size_t n = strcspn(why, "\n");
		const char *colon = memchr(why, ':', n);
		json_t *o = json_object();

		if (colon) {
			const char *r = colon + 1;

			while (r < why + n && *r == ' ')
				r++;
			json_object_set_new(o, "backend",
					    json_stringn(why, (size_t)(colon - why)));
			json_object_set_new(o, "reason", json_stringn(r, (size_t)(why + n - r)));
		} else {
			json_object_set_new(o, "backend", json_string(""));
			json_object_set_new(o, "reason", json_stringn(why, n));
		}
		if (n)
			json_array_append_new(arr, o);
		else
			json_decref(o);
		why += n;
		if (*why == '\n')
			why++;
	}
	for (int k = 0; backend_known_at(k); k++)
		if (!backend_find(backend_known_at(k))) {
			json_t *o = json_object();

			json_object_set_new(o, "backend", json_string(backend_known_at(k)));
			json_object_set_new(o, "reason", json_string("not built"));
			json_array_append_new(arr, o);
		}
	return arr;
}

static json_t *device_json(const struct device_info *d)
{
	json_t *o = json_object(), *dims = json_array();

	json_object_set_new(o, "id", json_string(d->id));
	json_object_set_new(o, "backend", json_string(d->backend));
	json_object_set_new(o, "name", json_string(d->name));
	json_object_set_new(o, "vendor", json_string(d->vendor));
	json_object_set_new(o, "type", json_string(type_name(d->type)));
	json_object_set_new(o, "arch", json_string(d->arch));
	json_object_set_new(o, "driver", json_string(d->driver));
	json_object_set_new(o, "lang", json_string(d->lang));
	json_object_set_new(o, "compute_units", json_integer(d->compute_units));
	json_object_set_new(o, "clock_mhz", json_integer(d->clock_mhz));
	json_object_set_new(o, "global_mem", json_integer(d->global_mem));
	json_object_set_new(o, "max_alloc", json_integer(d->max_alloc));
	json_object_set_new(o, "local_mem", json_integer(d->local_mem));
	json_object_set_new(o, "local_mem_per_cu", json_integer(d->local_mem_per_cu));
	json_object_set_new(o, "cache_bytes", json_integer(d->cache_bytes));
	json_object_set_new(o, "max_wg_size", json_integer(d->max_wg_size));
	for (int k = 0; k < 3; k++)
		json_array_append_new(dims, json_integer(d->max_wg_dim[k]));
	json_object_set_new(o, "max_wg_dim", dims);
	json_object_set_new(o, "max_regs_per_wg", json_integer(d->max_regs_per_wg));
	json_object_set_new(o, "simd_width", json_integer(d->simd_width));
	json_object_set_new(o, "pref_vector_float", json_integer(d->pref_vector_float));
	json_object_set_new(o, "fp64", json_boolean(d->fp64));
	json_object_set_new(o, "fp16", json_boolean(d->fp16));
	json_object_set_new(o, "timer_events", json_boolean(d->timer_events));
	json_object_set_new(o, "cc_major", json_integer(d->cc_major));
	json_object_set_new(o, "cc_minor", json_integer(d->cc_minor));
	return o;
}

#define NCOLS 10

static void print_table(const struct device_info *devs, int n, json_t *unavailable)
{
	static const char *const head[NCOLS] = { "ID",	     "NAME",	 "VENDOR", "TYPE",
						  "CUS",     "GLOBAL",	 "LOCAL",  "MAX-WG",
						  "FP64/16", "DRIVER" };
	char(*cell)[NCOLS][160] = calloc((size_t)n + 1, sizeof(*cell));
	size_t width[NCOLS];
	json_t *u;
	size_t i;

	if (!cell) {
		error("out of memory");
		return;
	}
	for (int c = 0; c < NCOLS; c++)
		snprintf(cell[0][c], sizeof(cell[0][c]), "%s", head[c]);
	for (int k = 0; k < n; k++) {
		const struct device_info *d = &devs[k];
		char(*row)[160] = cell[k + 1];

		snprintf(row[0], sizeof(row[0]), "%s", d->id);
		snprintf(row[1], sizeof(row[1]), "%s", d->name);
		snprintf(row[2], sizeof(row[2]), "%s", d->vendor);
		snprintf(row[3], sizeof(row[3]), "%s", type_name(d->type));
		snprintf(row[4], sizeof(row[4]), "%d", d->compute_units);
		format_bytes(d->global_mem, row[5], sizeof(row[5]));
		format_bytes(d->local_mem, row[6], sizeof(row[6]));
		if (d->max_wg_size > 0)
			snprintf(row[7], sizeof(row[7]), "%d", d->max_wg_size);
		else
			snprintf(row[7], sizeof(row[7]), "-");
		snprintf(row[8], sizeof(row[8]), "%s/%s", d->fp64 ? "yes" : "no",
			 d->fp16 ? "yes" : "no");
		snprintf(row[9], sizeof(row[9]), "%s", d->driver);
	}
	for (int c = 0; c < NCOLS; c++) {
		width[c] = 0;
		for (int r = 0; r <= n; r++)
			width[c] = TCX_MAX(width[c], strlen(cell[r][c]));
	}
	for (int r = 0; r <= n; r++) {
		for (int c = 0; c < NCOLS; c++) {
			bool right = c == 4 || c == 5 || c == 6 || c == 7;

			if (c == NCOLS - 1)
				printf("%s", cell[r][c]);
			else if (right)
				printf("%*s  ", (int)width[c], cell[r][c]);
			else
				printf("%-*s  ", (int)width[c], cell[r][c]);
		}
		printf("\n");
	}
	free(cell);
	if (json_array_size(unavailable) == 0)
		return;
	printf("\nunavailable:\n");
	json_array_foreach(unavailable, i, u)
	{
		printf("  %s: %s\n", json_string_value(json_object_get(u, "backend")),
		       json_string_value(json_object_get(u, "reason")));
	}
}

/* tcx devices --measure: the peak of each device (or of `id`), measured
 * and cached in $XDG_CACHE_HOME/tcx/peaks.json. */
static int measure_peaks(const struct device_info *devs, int n, const char *id,
			 enum out_format fmt)
{
	json_t *arr = json_array();
	struct strbuf path = STRBUF_INIT;
	int ret = 0, done = 0;

	peak_cache_path(&path, NULL);
	if (fmt == FMT_TABLE)
		printf("%-12s %-40s %12s %12s\n", "ID", "NAME", "FP32-GFLOP/s", "FP64-GFLOP/s");
	for (int k = 0; k < n && !ret && !interrupted; k++) {
		struct device *dev = NULL;
		struct tcx_error err = { 0 };
		struct peak pk;
		enum tcx_status st;

		if (id ? strcmp(devs[k].id, id) != 0 : devs[k].type == DEV_HOST)
			continue;
		done++;
		st = device_open(devs[k].id, &dev, &err);
		if (!st)
			st = peak_measure(dev, &pk, &err);
		if (!st)
			st = peak_cache_store(device_info_of(dev), &pk, &err);
		device_close(dev);
		if (st == TCX_EUNSUPPORTED && !id) {
			warning("%s: %s", devs[k].id, err.msg);
			continue;
		}
		if (st) {
			ret = report(st, &err);
			break;
		}
		if (fmt == FMT_TABLE) {
			printf("%-12s %-40s %12.1f ", devs[k].id, devs[k].name, pk.fp32_gflops);
			if (pk.fp64_gflops > 0)
				printf("%12.1f\n", pk.fp64_gflops);
			else
				printf("%12s\n", "-");
		} else {
			json_t *o = json_object();

			json_object_set_new(o, "id", json_string(devs[k].id));
			json_object_set_new(o, "name", json_string(devs[k].name));
			json_object_set_new(o, "driver", json_string(devs[k].driver));
			json_object_set_new(o, "fp32_gflops", json_real(pk.fp32_gflops));
			json_object_set_new(o, "fp64_gflops", json_real(pk.fp64_gflops));
			json_object_set_new(o, "date", json_string(pk.date));
			json_array_append_new(arr, o);
		}
	}
	if (!ret && id && !done) {
		error("unknown device id '%s'; 'tcx devices' lists them", id);
		ret = TCX_EXIT_NODEV;
	}
	if (!ret && fmt == FMT_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "peaks", json_incref(arr));
		json_object_set_new(o, "cache", json_string(strbuf_str(&path)));
		print_json(stdout, o);
		json_decref(o);
	} else if (!ret && done) {
		info("peaks cached in '%s'", strbuf_str(&path));
	}
	json_decref(arr);
	strbuf_release(&path);
	return ret;
}

int cmd_devices(int argc, char **argv)
{
	enum out_format fmt = FMT_TABLE;
	struct device_info *devs = NULL;
	struct strbuf why = STRBUF_INIT;
	struct tcx_error err = { 0 };
	enum tcx_status st;
	json_t *unavailable;
	const char *id = NULL;
	bool measure = false;
	int n = 0, r;

	while ((r = cmd_getopt(&cmd_devices_def, argc, argv)) != -1) {
		switch (r) {
		case 'f':
			if (!parse_format(optarg, &fmt, FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_JSON)))
				return option_value_error(&cmd_devices_def, 'f', "format", optarg);
			break;
		case 0x100:
			measure = true;
			break;
		case 'd':
			id = optarg;
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error(&cmd_devices_def, "too many arguments");
	if (id && !measure)
		return usage_error(&cmd_devices_def, "--device goes with --measure");

	st = devices_list(&devs, &n, &why, &err);
	if (!st)
		st = strbuf_status(&why, &err);
	if (st) {
		free(devs);
		strbuf_release(&why);
		return report(st, &err);
	}
	if (measure) {
		r = measure_peaks(devs, n, id, fmt);
		free(devs);
		strbuf_release(&why);
		return r;
	}
	unavailable = unavailable_json(strbuf_str(&why));
	if (fmt == FMT_JSON) {
		json_t *o = json_object(), *arr = json_array();

		for (int k = 0; k < n; k++)
			json_array_append_new(arr, device_json(&devs[k]));
		json_object_set_new(o, "devices", arr);
		json_object_set(o, "unavailable", unavailable);
		print_json(stdout, o);
		json_decref(o);
	} else {
		print_table(devs, n, unavailable);
	}
	json_decref(unavailable);
	free(devs);
	strbuf_release(&why);
	return 0;
}

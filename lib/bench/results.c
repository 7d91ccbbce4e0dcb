/* results.c - tcx bench results read back, matched size by size, and the
 * regression rule of the CI gate (results.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/results.h"

static void copy_str(char *dst, size_t size, json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";

	snprintf(dst, size, "%s", s);
}

/* A number field of a result, or NaN with a message. */
static enum tcx_status get_number(json_t *row, const char *key, const char *what, size_t at,
				  double *out, struct tcx_error *err)
{
	json_t *v = json_object_get(row, key);

	if (!json_is_number(v))
		return tcx_fail(err, TCX_EPARSE, "%s: results[%zu] has no number '%s'", what, at,
				key);
	*out = json_number_value(v);
	return TCX_OK;
}

static enum tcx_status read_row(json_t *row, const char *what, size_t at, struct bench_row *r,
				struct tcx_error *err)
{
	json_t *sizes = json_object_get(row, "sizes"), *v;
	const char *status, *key;
	enum tcx_status st;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(row))
		return tcx_fail(err, TCX_EPARSE, "%s: results[%zu] is not an object", what, at);
	if (!json_is_object(sizes) || json_object_size(sizes) == 0)
		return tcx_fail(err, TCX_EPARSE, "%s: results[%zu] has no 'sizes' object", what,
				at);
	if (json_object_size(sizes) > TCX_MAX_INDICES)
		return tcx_fail(err, TCX_EPARSE, "%s: results[%zu] has more than %d sizes", what,
				at, TCX_MAX_INDICES);
	r->work = 1;
	json_object_foreach(sizes, key, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			return tcx_fail(err, TCX_EPARSE,
					"%s: results[%zu] size '%s' is not a whole number >= 1",
					what, at, key);
		if (strlen(key) >= TCX_INDEX_NAME_MAX)
			return tcx_fail(err, TCX_EPARSE,
					"%s: results[%zu] index name '%s' too long", what, at, key);
		snprintf(r->name[r->nidx], sizeof(r->name[0]), "%s", key);
		r->size[r->nidx] = json_integer_value(v);
		r->work *= (double)r->size[r->nidx];
		r->nidx++;
	}
	v = json_object_get(row, "status");
	if (!json_is_string(v))
		return tcx_fail(err, TCX_EPARSE, "%s: results[%zu] has no 'status'", what, at);
	status = json_string_value(v);
	r->ok = strcmp(status, "ok") == 0;
	copy_str(r->solution, sizeof(r->solution), json_object_get(row, "solution_name"));
	if (!r->ok) {
		r->median_ms = r->ci_lo_ms = r->ci_hi_ms = r->gflops = NAN;
		return TCX_OK;
	}
	st = get_number(row, "median_ms", what, at, &r->median_ms, err);
	if (!st)
		st = get_number(row, "ci_lo_ms", what, at, &r->ci_lo_ms, err);
	if (!st)
		st = get_number(row, "ci_hi_ms", what, at, &r->ci_hi_ms, err);
	if (!st)
		st = get_number(row, "gflops", what, at, &r->gflops, err);
	if (st)
		return st;
	if (!(r->ci_lo_ms >= 0) || !(r->ci_lo_ms <= r->median_ms) ||
	    !(r->median_ms <= r->ci_hi_ms) || !isfinite(r->ci_hi_ms))
		return tcx_fail(err, TCX_EPARSE,
				"%s: results[%zu] times are inconsistent: need 0 <= ci_lo_ms <= "
				"median_ms <= ci_hi_ms",
				what, at);
	return TCX_OK;
}

enum tcx_status bench_doc_from_json(json_t *doc, const char *what, struct bench_doc *out,
				    struct tcx_error *err)
{
	json_t *results, *row;
	size_t k;
	enum tcx_status st = TCX_OK;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(doc))
		return tcx_fail(err, TCX_EPARSE, "%s: not a tcx bench result (expected an object)",
				what);
	results = json_object_get(doc, "results");
	if (!json_is_array(results))
		return tcx_fail(err, TCX_EPARSE, "%s: not a tcx bench result (no 'results' array)",
				what);
	copy_str(out->expression, sizeof(out->expression), json_object_get(doc, "expression"));
	copy_str(out->problem_type, sizeof(out->problem_type),
		 json_object_get(doc, "problem_type"));
	copy_str(out->device_name, sizeof(out->device_name), json_object_get(doc, "device_name"));
	copy_str(out->driver, sizeof(out->driver), json_object_get(doc, "driver"));
	if (json_array_size(results)) {
		out->rows = calloc(json_array_size(results), sizeof(*out->rows));
		if (!out->rows)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	json_array_foreach(results, k, row)
	{
		st = read_row(row, what, k, &out->rows[k], err);
		if (st)
			break;
		out->nrows++;
	}
	if (st)
		bench_doc_release(out);
	return st;
}

enum tcx_status bench_doc_load(const char *path, struct bench_doc *out, struct tcx_error *err)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t je;
	json_t *doc;
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	st = common_read_file(path, &text, &len, err);
	if (st)
		return st;
	doc = json_loadb(text, len, 0, &je);
	free(text);
	if (!doc)
		return tcx_fail_at(err, TCX_EPARSE, (unsigned)(je.line > 0 ? je.line : 0),
				   (unsigned)(je.column > 0 ? je.column : 0),
				   "cannot parse '%s': %s (line %d, column %d)", path, je.text,
				   je.line, je.column);
	{
		char what[600];

		snprintf(what, sizeof(what), "'%s'", path);
		st = bench_doc_from_json(doc, what, out, err);
	}
	json_decref(doc);
	if (!st)
		snprintf(out->path, sizeof(out->path), "%s", path);
	return st;
}

void bench_doc_release(struct bench_doc *d)
{
	if (!d)
		return;
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
}

static bool same_sizes(const struct bench_row *a, const struct bench_row *b)
{
	if (a->nidx != b->nidx)
		return false;
	for (int i = 0; i < a->nidx; i++) {
		int j;

		for (j = 0; j < b->nidx; j++)
			if (strcmp(a->name[i], b->name[j]) == 0)
				break;
		if (j == b->nidx || a->size[i] != b->size[j])
			return false;
	}
	return true;
}

int bench_doc_find(const struct bench_doc *d, const struct bench_row *like)
{
	for (int k = 0; k < d->nrows; k++)
		if (same_sizes(&d->rows[k], like))
			return k;
	return -1;
}

void bench_row_sizes_text(const struct bench_row *r, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->nidx && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s=%lld", i ? "," : "", r->name[i],
				 (long long)r->size[i]);

		if (n < 0)
			break;
		at += (size_t)n;
	}
}

bool bench_threshold_parse(const char *s, double *out)
{
	char buf[64];
	size_t n = strlen(s);
	double v;
	bool pct = n > 0 && s[n - 1] == '%';

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n + 1);
	if (pct)
		buf[n - 1] = '\0';
	if (!common_parse_double(buf, &v) || !isfinite(v) || v < 0)
		return false;
	if (pct) {
		if (v > 1000)
			return false;
		v /= 100;
	} else if (v >= 1) {
		return false;
	}
	*out = v;
	return true;
}

bool bench_is_regression(const struct bench_row *old_r, const struct bench_row *new_r, double t)
{
	if (!old_r->ok || !new_r->ok)
		return false;
	return new_r->median_ms > old_r->median_ms * (1 + t) &&
	       new_r->ci_lo_ms > old_r->ci_hi_ms * (1 + t);
}

void bench_ratio(const struct bench_row *old_r, const struct bench_row *new_r, double out[3])
{
	out[0] = new_r->median_ms / old_r->median_ms;
	out[1] = new_r->ci_lo_ms / old_r->ci_hi_ms;
	out[2] = new_r->ci_hi_ms / old_r->ci_lo_ms;
}

enum tcx_status bench_gate_run(const struct bench_doc *base, const struct bench_doc *cur, double t,
			       struct bench_gate *g, struct tcx_error *err)
{
	memset(g, 0, sizeof(*g));
	g->verdict = calloc((size_t)cur->nrows + 1, sizeof(*g->verdict));
	g->base_row = calloc((size_t)cur->nrows + 1, sizeof(*g->base_row));
	if (!g->verdict || !g->base_row) {
		bench_gate_release(g);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	for (int k = 0; k < cur->nrows; k++) {
		const struct bench_row *r = &cur->rows[k];
		int b = bench_doc_find(base, r);

		g->base_row[k] = b;
		g->verdict[k] = -1;
		if (b < 0 || !base->rows[b].ok || !r->ok) {
			g->not_in_base++;
			continue;
		}
		g->compared++;
		g->verdict[k] = bench_is_regression(&base->rows[b], r, t) ? 1 : 0;
		g->regressions += g->verdict[k];
	}
	for (int k = 0; k < base->nrows; k++)
		g->not_in_cur += bench_doc_find(cur, &base->rows[k]) < 0;
	return TCX_OK;
}

void bench_gate_release(struct bench_gate *g)
{
	free(g->verdict);
	free(g->base_row);
	g->verdict = g->base_row = NULL;
}

/* test_bench_results.c - tcx bench's results read back and the regression
 * gate: the threshold's spellings, the rule (slower beyond the threshold
 * and both confidence intervals), size matching, ratios, malformed files. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/results.h"
#include "check.h"

static struct pcg32 rng;

static struct bench_row row(double med, double lo, double hi)
{
	struct bench_row r;

	memset(&r, 0, sizeof(r));
	r.nidx = 2;
	snprintf(r.name[0], sizeof(r.name[0]), "i");
	snprintf(r.name[1], sizeof(r.name[1]), "k");
	r.size[0] = 64;
	r.size[1] = 32;
	r.ok = true;
	r.median_ms = med;
	r.ci_lo_ms = lo;
	r.ci_hi_ms = hi;
	return r;
}

static void test_threshold(void)
{
	double t = -1;

	CHECK(bench_threshold_parse("5%", &t) && fabs(t - 0.05) < 1e-12);
	CHECK(bench_threshold_parse("0.05", &t) && fabs(t - 0.05) < 1e-12);
	CHECK(bench_threshold_parse("2.5%", &t) && fabs(t - 0.025) < 1e-12);
	CHECK(bench_threshold_parse("0%", &t) && t == 0);
	CHECK(bench_threshold_parse("150%", &t) && fabs(t - 1.5) < 1e-12);
	CHECK(!bench_threshold_parse("5", &t));     /* 500%?  say 5% */
	CHECK(!bench_threshold_parse("1", &t));
	CHECK(!bench_threshold_parse("-5%", &t));
	CHECK(!bench_threshold_parse("-0.05", &t));
	CHECK(!bench_threshold_parse("%", &t));
	CHECK(!bench_threshold_parse("", &t));
	CHECK(!bench_threshold_parse("5%%", &t));
	CHECK(!bench_threshold_parse("fast", &t));
	CHECK(!bench_threshold_parse("nan", &t));
	CHECK(!bench_threshold_parse("5000%", &t));
}

static void test_rule(void)
{
	struct bench_row old_r = row(1.0, 0.99, 1.01), new_r;

	/* clearly slower, tight intervals: a regression at 5%, not at 10% */
	new_r = row(1.10, 1.08, 1.12);
	CHECK(bench_is_regression(&old_r, &new_r, 0.05));
	CHECK(!bench_is_regression(&old_r, &new_r, 0.10));
	/* the median is slower, but the intervals widened by 5% overlap */
	new_r = row(1.10, 1.06, 1.2);
	CHECK(!bench_is_regression(&old_r, &new_r, 0.05));
	new_r = row(1.10, 1.061, 1.2);
	CHECK(bench_is_regression(&old_r, &new_r, 0.05));
	/* equal, and faster, never regress */
	CHECK(!bench_is_regression(&old_r, &old_r, 0));
	new_r = row(0.5, 0.49, 0.51);
	CHECK(!bench_is_regression(&old_r, &new_r, 0));
	/* a failed size on either side is not a regression */
	new_r = row(2, 1.9, 2.1);
	new_r.ok = false;
	CHECK(!bench_is_regression(&old_r, &new_r, 0.05));
	/* random pairs: the rule is exactly the documented formula */
	for (int k = 0; k < 2000; k++) {
		double m0 = 0.1 + pcg32_double(&rng), m1 = 0.1 + pcg32_double(&rng);
		double w0 = 0.2 * pcg32_double(&rng), w1 = 0.2 * pcg32_double(&rng);
		double t = 0.2 * pcg32_double(&rng);
		struct bench_row a = row(m0, m0 * (1 - w0), m0 * (1 + w0));
		struct bench_row b = row(m1, m1 * (1 - w1), m1 * (1 + w1));
		bool want = m1 > m0 * (1 + t) && m1 * (1 - w1) > m0 * (1 + w0) * (1 + t);

		CHECK(bench_is_regression(&a, &b, t) == want);
	}
}

static void test_ratio(void)
{
	struct bench_row a = row(2.0, 1.9, 2.2), b = row(3.0, 2.85, 3.3);
	double q[3];

	bench_ratio(&a, &b, q);
	CHECK(fabs(q[0] - 1.5) < 1e-12);
	CHECK(fabs(q[1] - 2.85 / 2.2) < 1e-12);
	CHECK(fabs(q[2] - 3.3 / 1.9) < 1e-12);
	CHECK(q[1] <= q[0] && q[0] <= q[2]);
}

static json_t *result(int64_t i, int64_t k, const char *status, double med, double lo, double hi)
{
	json_t *r = json_object(), *s = json_object();

	/* k before i: matching must not depend on key order */
	json_object_set_new(s, "k", json_integer(k));
	json_object_set_new(s, "i", json_integer(i));
	json_object_set_new(r, "sizes", s);
	json_object_set_new(r, "status", json_string(status));
	if (strcmp(status, "ok") == 0) {
		json_object_set_new(r, "median_ms", json_real(med));
		json_object_set_new(r, "ci_lo_ms", json_real(lo));
		json_object_set_new(r, "ci_hi_ms", json_real(hi));
		json_object_set_new(r, "gflops",
				    json_real(2.0 * (double)(i * i * k) / (med * 1e6)));
	}
	return r;
}

static json_t *doc_of(json_t *results)
{
	json_t *d = json_object();

	json_object_set_new(d, "expression", json_string("C[ij]=A[ik]*B[jk]"));
	json_object_set_new(d, "problem_type", json_string("Cij_Aik_Bjk_S"));
	json_object_set_new(d, "results", results);
	return d;
}

static void test_gate(void)
{
	json_t *ra = json_array(), *rb = json_array(), *da, *db;
	struct bench_doc a, b;
	struct bench_gate g;
	struct tcx_error err = { 0 };
	double f = 1 + 0.3 * pcg32_double(&rng);

	json_array_append_new(ra, result(64, 32, "ok", 1.0, 0.98, 1.02));
	json_array_append_new(ra, result(128, 32, "ok", 2.0, 1.98, 2.02));
	json_array_append_new(ra, result(256, 32, "ok", 4.0, 3.9, 4.1));
	json_array_append_new(ra, result(512, 32, "ok", 8.0, 7.9, 8.1));
	/* b: 64 equal, 128 much slower, 256 failed, 512 missing, 1024 new */
	json_array_append_new(rb, result(64, 32, "ok", 1.0, 0.98, 1.02));
	json_array_append_new(rb, result(128, 32, "ok", 2.0 * (1.2 + f), 1.98 * (1.2 + f),
					 2.02 * (1.2 + f)));
	json_array_append_new(rb, result(256, 32, "failed", 0, 0, 0));
	json_array_append_new(rb, result(1024, 32, "ok", 16.0, 15.9, 16.1));
	da = doc_of(ra);
	db = doc_of(rb);
	CHECK(bench_doc_from_json(da, "a", &a, &err) == TCX_OK);
	CHECK_MSG(bench_doc_from_json(db, "b", &b, &err) == TCX_OK, "%s", err.msg);
	CHECK(a.nrows == 4 && b.nrows == 4);
	CHECK(strcmp(a.problem_type, "Cij_Aik_Bjk_S") == 0);
	CHECK(a.rows[1].work == 128.0 * 32);
	CHECK(bench_doc_find(&b, &a.rows[0]) == 0);
	CHECK(bench_doc_find(&b, &a.rows[3]) == -1);
	CHECK(bench_gate_run(&a, &b, 0.05, &g, &err) == TCX_OK);
	CHECK_MSG(g.compared == 2 && g.regressions == 1, "compared %d regressions %d", g.compared,
		  g.regressions);
	CHECK(g.verdict[0] == 0 && g.verdict[1] == 1 && g.verdict[2] == -1 && g.verdict[3] == -1);
	CHECK(g.base_row[0] == 0 && g.base_row[2] == 2 && g.base_row[3] == -1);
	CHECK(g.not_in_base == 2 && g.not_in_cur == 1);
	bench_gate_release(&g);
	/* against itself: nothing regresses */
	CHECK(bench_gate_run(&a, &a, 0.0, &g, &err) == TCX_OK);
	CHECK(g.compared == 4 && g.regressions == 0);
	bench_gate_release(&g);
	bench_doc_release(&a);
	bench_doc_release(&b);
	json_decref(da);
	json_decref(db);
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"[]",
		"{\"results\": 3}",
		"{\"results\": [3]}",
		"{\"results\": [{\"status\": \"ok\"}]}",
		"{\"results\": [{\"sizes\": {}, \"status\": \"ok\"}]}",
		"{\"results\": [{\"sizes\": {\"i\": 0}, \"status\": \"ok\"}]}",
		"{\"results\": [{\"sizes\": {\"i\": 1.5}, \"status\": \"ok\"}]}",
		"{\"results\": [{\"sizes\": {\"i\": 4}}]}",
		"{\"results\": [{\"sizes\": {\"i\": 4}, \"status\": \"ok\"}]}",
		"{\"results\": [{\"sizes\": {\"i\": 4}, \"status\": \"ok\", \"median_ms\": \"1\", "
		"\"ci_lo_ms\": 1, \"ci_hi_ms\": 1, \"gflops\": 1}]}",
		"{\"results\": [{\"sizes\": {\"i\": 4}, \"status\": \"ok\", \"median_ms\": 1, "
		"\"ci_lo_ms\": 2, \"ci_hi_ms\": 3, \"gflops\": 1}]}",
	};
	struct bench_doc d;

	for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
		json_error_t je;
		json_t *j = json_loads(bad[k], 0, &je);
		struct tcx_error err = { 0 };
		enum tcx_status st;

		CHECK(j != NULL);
		st = bench_doc_from_json(j, "t", &d, &err);
		CHECK_MSG(st == TCX_EPARSE && strncmp(err.msg, "t: ", 3) == 0, "case %zu: %d '%s'",
			  k, (int)st, err.msg);
		CHECK(d.rows == NULL && d.nrows == 0);
		json_decref(j);
	}
	{
		/* a failed size needs no figures; extra fields are ignored */
		json_t *j = json_loads("{\"results\": [{\"sizes\": {\"i\": 4}, \"status\": "
				       "\"rejected\", \"reason\": \"x\", \"median_ms\": null, "
				       "\"future_field\": 1}], \"other\": 2}",
				       0, NULL);

		CHECK(bench_doc_from_json(j, "t", &d, NULL) == TCX_OK);
		CHECK(d.nrows == 1 && !d.rows[0].ok && isnan(d.rows[0].median_ms));
		bench_doc_release(&d);
		json_decref(j);
	}
	{
		struct tcx_error err = { 0 };

		CHECK(bench_doc_load("/nonexistent/tcx/x.json", &d, &err) == TCX_EIO);
	}
}

static void test_sizes_text(void)
{
	struct bench_row r = row(1, 1, 1);
	char buf[64];

	bench_row_sizes_text(&r, buf, sizeof(buf));
	CHECK(strcmp(buf, "i=64,k=32") == 0);
	bench_row_sizes_text(&r, buf, 5);
	CHECK(strlen(buf) < 5);
}

int main(void)
{
	const char *s = getenv("TCX_TEST_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 10) : (uint64_t)(common_now_seconds() * 1e6);

	fprintf(stderr, "seed %" PRIu64 " (set TCX_TEST_SEED to repeat)\n", seed);
	pcg32_seed(&rng, seed, 5);
	test_threshold();
	test_rule();
	test_ratio();
	test_gate();
	test_malformed();
	test_sizes_text();
	return check_done();
}

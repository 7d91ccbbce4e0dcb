/* test_selector.c - the selectors for untuned sizes (lib/logic/selector.h,
 * runtime/select.c) on synthetic data: Tensile's logic (exact, range,
 * fallback when its choice cannot run), the nearest tuned size in log-size
 * space, the performance model against a synthetic device whose times are
 * exactly its work model (so the model must find the true fastest at every
 * random size, padding and wave quantization included), the selector
 * section's reading, writing (tcx tune's selector_build, eval's
 * selector_record) and errors, and learning from a results store. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "logic/logic.h"
#include "logic/selector.h"
#include "notation/notation.h"
#include "store/store.h"

/* A GEMM logic: three solutions (macro tiles 16x8, 64x16, and 16x8 with
 * EdgeType None), an exact entry, range rules on k, and a selector section
 * filled by the caller.  compute_units 3. */
static const char *const logic_head =
    "tcx-logic: 1\n"
    "device: {name: synthetic, vendor: tcx, arch: synth1, backend: opencl, driver: '1',\n"
    "  compute_units: 3}\n"
    "schedule: synth\n"
    "device_names: [default]\n"
    "problem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
    "solutions:\n"
    "- parameters: {WorkGroup: [1, 1, 1], ThreadTile: [16, 8], DepthU: 8, VectorWidth: 16,\n"
    "    UseLDS: false, PrefetchGlobalRead: false, PrefetchLocalRead: false}\n"
    "- parameters: {WorkGroup: [2, 2, 1], ThreadTile: [32, 8], DepthU: 16, VectorWidth: 16,\n"
    "    UseLDS: false, PrefetchGlobalRead: false, PrefetchLocalRead: false}\n"
    "- parameters: {WorkGroup: [1, 1, 1], ThreadTile: [16, 8], DepthU: 8, VectorWidth: 16,\n"
    "    UseLDS: false, PrefetchGlobalRead: false, PrefetchLocalRead: false,\n"
    "    EdgeType: None, LoopTail: false}\n"
    "index_order: [2, 0, 1]\n"
    "exact:\n"
    "- {sizes: [127, 129, 61], solution: 1, gflops: 20}\n"
    "range: [[100, [[-1, [[-1, 2]]]]], [-1, [[-1, [[-1, 1]]]]]]\n";

static struct logic *load(const char *selector, struct tcx_error *err)
{
	struct logic *l = NULL;
	char *text = malloc(strlen(logic_head) + strlen(selector) + 32);

	sprintf(text, "%sselector: %s\n", logic_head, selector);
	memset(err, 0, sizeof(*err));
	if (logic_load_string(text, strlen(text), "synthetic.yaml", &l, err) != TCX_OK)
		fprintf(stderr, "load: %s\n", err->msg);
	free(text);
	return l;
}

static int choose(const struct selector *s, enum sel_kind k, int64_t i, int64_t j, int64_t kk)
{
	int64_t sz[3] = {i, j, kk};

	return selector_choose(s, k, sz, NULL);
}

/* ---- the synthetic device ----------------------------------------------- */

/* Macro tile, DepthU and a cost per scheduled multiply-add per solution. */
static const int mt0[3] = {16, 64, 16}, mt1[3] = {8, 16, 8}, du[3] = {8, 16, 8};
static const double cost[3] = {1.0, 0.55, 0.97};
#define CUS 3

static int64_t up(int64_t a, int64_t b)
{
	return (a + b - 1) / b * b;
}

/* The device's time: whole macro tiles, DepthU padding, work-groups in
 * waves of CUS (written here independently of select.c); or, for a device
 * where padding is free, the useful work only. */
static bool padding_free;

static double true_ms(int s, const int64_t *sz)
{
	int64_t groups = (up(sz[0], mt0[s]) / mt0[s]) * (up(sz[1], mt1[s]) / mt1[s]);
	int64_t waves = (groups + CUS - 1) / CUS;

	if (padding_free)
		return cost[s] * 1e-6 * (double)sz[0] * (double)sz[1] * (double)sz[2];
	return cost[s] * 1e-6 * (double)(waves * CUS) * mt0[s] * mt1[s] * (double)up(sz[2], du[s]);
}

static bool runs(int s, const int64_t *sz)
{
	return s != 2 || (sz[0] % 16 == 0 && sz[1] % 8 == 0 && sz[2] % 8 == 0);
}

static double gflops(int s, const int64_t *sz)
{
	return 2.0 * (double)sz[0] * (double)sz[1] * (double)sz[2] / (true_ms(s, sz) * 1e6);
}

/* A selector section with every solution measured on the device at sizes. */
static char *measured_section(const int64_t (*sz)[3], int n)
{
	char *buf = malloc(65536);
	size_t len = 0;

	len += (size_t)sprintf(buf + len, "{version: 1, points: [");
	for (int p = 0; p < n; p++) {
		len += (size_t)sprintf(buf + len, "%s{sizes: [%lld, %lld, %lld], gflops: [",
				       p ? ", " : "", (long long)sz[p][0], (long long)sz[p][1],
				       (long long)sz[p][2]);
		for (int s = 0; s < 3; s++)
			len += (size_t)sprintf(buf + len, "%s%.17g", s ? ", " : "",
					       runs(s, sz[p]) ? gflops(s, sz[p]) : -1.0);
		len += (size_t)sprintf(buf + len, "]}");
	}
	sprintf(buf + len, "]}");
	return buf;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_logic_selector(void)
{
	struct tcx_error err;
	struct logic *l = load("null", &err);
	struct selector *s = NULL;
	struct strbuf why = STRBUF_INIT;
	int64_t sz[3] = {127, 129, 61};

	CHECK(l != NULL);
	if (!l)
		return;
	CHECK(selector_create(l, "synthetic.yaml", &s, &err) == TCX_OK);
	/* exact entry */
	CHECK(selector_choose(s, SEL_LOGIC, sz, &why) == 1);
	CHECK(strstr(strbuf_str(&why), "exact size 127,129,61") != NULL);
	/* range: k <= 100 -> solution 2 (EdgeType None), when it can run */
	CHECK(choose(s, SEL_LOGIC, 64, 64, 64) == 2);
	CHECK(choose(s, SEL_LOGIC, 64, 64, 101) == 1);
	/* solution 2 cannot run 65 x 64: the fallback takes over (the model,
	 * which knows the exact entry's measurement only: solution 1) */
	strbuf_reset(&why);
	sz[0] = 65;
	sz[1] = 64;
	sz[2] = 64;
	CHECK(selector_choose(s, SEL_LOGIC, sz, &why) == 1);
	CHECK(strstr(strbuf_str(&why), "fallback") != NULL);
	/* without a selector section the exact entry is the only tuned size */
	CHECK(choose(s, SEL_NEAREST, 1000, 10, 3) == 1);
	CHECK(!selector_has_default(s));
	CHECK(selector_default(s) == SEL_MODEL);
	strbuf_release(&why);
	selector_destroy(s);
	logic_free(l);
}

static void test_nearest(void)
{
	struct tcx_error err;
	/* at 64^3 solution 0 is fastest, at 1024^3 solution 1; 2 never */
	struct logic *l = load("{version: 1, default: nearest, points: ["
			       "{sizes: [64, 64, 64], gflops: [10, 5, null]},"
			       "{sizes: [1024, 1024, 1024], gflops: [10, 50, 1]}]}",
			       &err);
	struct selector *s = NULL;
	struct strbuf why = STRBUF_INIT;
	int64_t sz[3] = {70, 70, 70};

	CHECK(l != NULL);
	if (!l)
		return;
	CHECK(selector_create(l, "synthetic.yaml", &s, &err) == TCX_OK);
	CHECK(selector_has_default(s) && selector_default(s) == SEL_NEAREST);
	/* log2 distance: 70 is nearest 64 (not the exact entry 127,129,61),
	 * 700 nearest 1024 */
	CHECK(selector_choose(s, SEL_NEAREST, sz, &why) == 0);
	CHECK(strstr(strbuf_str(&why), "tuned size 64,64,64") != NULL);
	CHECK(choose(s, SEL_NEAREST, 700, 700, 700) == 1);
	/* per index: near 64 in i, j, far in k still nearest to 64^3 overall */
	CHECK(choose(s, SEL_NEAREST, 64, 64, 300) == 0);
	CHECK(choose(s, SEL_NEAREST, 64, 1024, 1024) == 1);
	/* the exact entry 127,129,61 (solution 1) is a tuned size too */
	CHECK(choose(s, SEL_NEAREST, 125, 130, 60) == 1);
	strbuf_release(&why);
	selector_destroy(s);
	logic_free(l);
}

/* The model against a synthetic device: its parameters are fitted to the
 * measurements (padding costs on one device, not on the other) and then it
 * finds the fastest solution at every random size. */
/* Distances are in log2 space: 352^3 is nearer 1024^3 than the exact
 * entry 127,129,61 there (not in linear space). */
static void test_nearest_log(void)
{
	struct tcx_error err;
	struct logic *l = load("{points: [{sizes: [64, 64, 64], gflops: [10, 5, null]},"
			       "{sizes: [1024, 1024, 1024], gflops: [10, 5, 50]}]}",
			       &err);
	struct selector *s = NULL;

	CHECK(l != NULL);
	if (!l)
		return;
	CHECK(selector_create(l, "synthetic.yaml", &s, &err) == TCX_OK);
	CHECK(choose(s, SEL_NEAREST, 352, 352, 352) == 2);
	/* 350 is no multiple of 16: solution 2 cannot run it */
	CHECK(choose(s, SEL_NEAREST, 350, 352, 352) == 0);
	selector_destroy(s);
	logic_free(l);
}

static void test_model(bool free_padding)
{
	/* 127,129,61 too: the section's measurement, not the exact entry's
	 * GFLOP/s (made up), is what the model must use there; sizes off the
	 * tiles let the fit see what padding costs */
	static const int64_t pts[][3] = {{64, 64, 64},	 {256, 256, 256}, {1024, 1024, 1024},
					 {64, 512, 128}, {1000, 24, 200}, {16, 16, 16},
					 {127, 129, 61}, {65, 17, 64},	  {33, 9, 100},
					 {17, 200, 40},	 {130, 20, 30},	  {70, 300, 20}};
	char *sec;
	struct tcx_error err;
	struct logic *l;
	struct selector *s = NULL;
	struct pcg32 rng;
	int exact = 0, n = 400, differs = 0;
	json_t *fit;

	padding_free = free_padding;
	sec = measured_section(pts, (int)ARRAY_SIZE(pts));
	l = load(sec, &err);
	free(sec);
	CHECK(l != NULL);
	if (!l)
		return;
	CHECK(selector_create(l, "synthetic.yaml", &s, &err) == TCX_OK);
	if (!s) {
		logic_free(l);
		return;
	}
	fit = selector_model_json(s);
	CHECK_MSG(json_number_value(json_object_get(fit, "padding_exponent")) ==
		      (free_padding ? 0 : 1),
		  "padding exponent %g fitted (padding %s)",
		  json_number_value(json_object_get(fit, "padding_exponent")),
		  free_padding ? "free" : "costs");
	CHECK(json_number_value(json_object_get(fit, "fit_efficiency")) > 0.999);
	json_decref(fit);
	if (!free_padding) {
		/* padding decides: 66 x 17 pads 64x16 tiles to 128 x 32, 16x8
		 * ones to 80 x 24, though 64x16 is the faster per multiply-add
		 * and fastest at most tuned sizes */
		CHECK(choose(s, SEL_MODEL, 66, 17, 64) == 0);
		CHECK(choose(s, SEL_MODEL, 66, 17, 2048) == 0);
	}
	/* on random sizes the model knows the device exactly */
	pcg32_seed(&rng, 7, 1);
	for (int k = 0; k < n; k++) {
		int64_t sz[3];
		int best = -1, got;

		for (int i = 0; i < 3; i++)
			sz[i] = 1 + (int64_t)pcg32_bounded(&rng, i == 2 ? 700 : 300);
		if (k % 4 == 0) /* some that EdgeType None can run */
			for (int i = 0; i < 3; i++)
				sz[i] = up(sz[i], 16);
		for (int j = 0; j < 3; j++)
			if (runs(j, sz) && (best < 0 || true_ms(j, sz) < true_ms(best, sz)))
				best = j;
		got = selector_choose(s, SEL_MODEL, sz, NULL);
		exact += got == best;
		differs += choose(s, SEL_NEAREST, sz[0], sz[1], sz[2]) != best;
		if (got != best && n - exact < 5)
			fprintf(stderr, "model: %lld,%lld,%lld: chose %d, fastest is %d\n",
				(long long)sz[0], (long long)sz[1], (long long)sz[2], got, best);
	}
	CHECK_MSG(exact == n, "the model found the fastest at %d of %d sizes", exact, n);
	/* the test world is not trivial: nearest gets some wrong */
	CHECK(free_padding || differs > 0);
	/* never a solution that cannot run these sizes */
	CHECK(choose(s, SEL_MODEL, 17, 16, 16) != 2);
	selector_destroy(s);
	logic_free(l);
}

static void test_section_errors(void)
{
	static const struct {
		const char *section, *msg;
	} bad[] = {
	    {"{points: 3}", "'points' is not a list"},
	    {"{points: [{sizes: [1, 2], gflops: [1, 2, 3]}]}", "list of 3 sizes"},
	    {"{points: [{sizes: [1, 2, 0], gflops: [1, 2, 3]}]}", "not a positive"},
	    {"{points: [{sizes: [1, 2, 3], gflops: [1, 2]}]}", "one per solution"},
	    {"{points: [{sizes: [1, 2, 3], gflops: [1, x, 3]}]}", "not a number"},
	    {"{default: fastest}", "unknown default 'fastest'"},
	    {"{version: 99}", "newer than this tcx"},
	};

	for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
		struct tcx_error err;
		struct logic *l = load(bad[k].section, &err);
		struct selector *s = NULL;
		enum tcx_status st;

		CHECK(l != NULL);
		if (!l)
			continue;
		st = selector_create(l, "bad.yaml", &s, &err);
		CHECK_MSG(st != TCX_OK && s == NULL, "%s", bad[k].section);
		CHECK_MSG(strstr(err.msg, bad[k].msg) != NULL && strstr(err.msg, "bad.yaml"),
			  "%s: '%s'", bad[k].section, err.msg);
		logic_free(l);
	}
}

/* tcx tune's selector_build, eval's selector_record, through a file. */
static void test_build_record(const char *dir)
{
	struct tcx_error err;
	struct logic *l = load("null", &err), *back = NULL;
	struct selector *s = NULL;
	const int64_t sizes[] = {64, 64, 64, 200, 100, 300};
	struct solution sols[4];
	double g[2 * 4] = {3, 9, -2, 5, 0, 7, 8, 1};
	struct logic_table t;
	json_t *rep = json_pack("{s:s}", "best", "nearest");
	char path[512];

	CHECK(l != NULL);
	if (!l)
		return;
	/* the table's solutions: logic's 1 and 0, another, logic's 2 */
	sols[0] = l->sols[1].sol;
	sols[1] = l->sols[0].sol;
	solution_default(&sols[2]);
	sols[3] = l->sols[2].sol;
	memset(&t, 0, sizeof(t));
	t.nidx = 3;
	t.nsizes = 2;
	t.sizes = sizes;
	t.nsol = 4;
	t.sols = sols;
	t.gflops = g;
	CHECK(selector_build(l, &t, &err) == TCX_OK);
	CHECK(selector_record(l, SEL_NEAREST, rep, &err) == TCX_OK);
	snprintf(path, sizeof(path), "%s/built.yaml", dir);
	CHECK(logic_write(l, path, &err) == TCX_OK);
	CHECK(logic_load(path, &back, &err) == TCX_OK);
	if (back) {
		json_t *pts = json_object_get(back->selector, "points");
		json_t *p0 = json_array_get(pts, 0), *p1 = json_array_get(pts, 1);

		CHECK(json_array_size(pts) == 2);
		/* per logic solution 0, 1, 2: table columns 1, 0, 3 */
		CHECK(json_number_value(json_array_get(json_object_get(p0, "gflops"), 0)) == 9);
		CHECK(json_number_value(json_array_get(json_object_get(p0, "gflops"), 1)) == 3);
		CHECK(json_number_value(json_array_get(json_object_get(p0, "gflops"), 2)) == 5);
		/* 0 GFLOP/s (failed) is not a measurement */
		CHECK(json_is_null(json_array_get(json_object_get(p1, "gflops"), 1)));
		CHECK(!strcmp(json_string_value(json_object_get(back->selector, "default")),
			      "nearest"));
		CHECK(json_is_object(json_object_get(back->selector, "report")));
		CHECK(selector_create(back, path, &s, &err) == TCX_OK);
		if (s) {
			/* 200,100,300: solution 0 measured 7, 2 measured 1 */
			CHECK(choose(s, SEL_NEAREST, 200, 100, 300) == 0);
			CHECK(selector_default(s) == SEL_NEAREST);
			CHECK(selector_table(s)->npoints == 3); /* and the exact entry */
		}
	}
	json_decref(rep);
	selector_destroy(s);
	logic_free(back);
	logic_free(l);
	unlink(path);
}

static void put_row(struct store *db, const struct logic *l, int sol, int64_t i, int64_t j,
		    int64_t k, double g)
{
	struct measurement m;
	struct tcx_error err;

	memset(&m, 0, sizeof(m));
	snprintf(m.device, sizeof(m.device), "synthetic");
	snprintf(m.driver, sizeof(m.driver), "1");
	snprintf(m.backend, sizeof(m.backend), "opencl");
	contraction_tensile_name(l->type, m.problem, sizeof(m.problem));
	m.nidx = 3;
	m.sizes[0] = i;
	m.sizes[1] = j;
	m.sizes[2] = k;
	solution_key(&l->sols[sol].sol, m.solution, sizeof(m.solution));
	m.status = MEAS_OK;
	m.median_ms = m.ci_lo_ms = m.ci_hi_ms = m.min_ms = m.max_ms = 1;
	m.gflops = g;
	m.reps = 3;
	snprintf(m.timer, sizeof(m.timer), "wall");
	m.timestamp = 1e9;
	CHECK(store_put(db, &m, &err) == TCX_OK);
}

static void test_store(const char *dir)
{
	struct tcx_error err;
	struct logic *l =
	    load("{version: 1, points: [{sizes: [64, 64, 64], gflops: [10, 5, null]}]}", &err);
	struct selector *s = NULL;
	struct store *db = NULL;
	struct size_list hold;
	char path[512];
	int added = -1;
	int64_t held[3] = {512, 512, 512};

	CHECK(l != NULL);
	if (!l)
		return;
	snprintf(path, sizeof(path), "%s/results.db", dir);
	CHECK(store_open(path, true, &db, &err) == TCX_OK);
	if (!db) {
		logic_free(l);
		return;
	}
	put_row(db, l, 1, 1024, 1024, 1024, 80); /* a new size */
	put_row(db, l, 0, 1024, 1024, 1024, 20);
	put_row(db, l, 1, 64, 64, 64, 99);	/* the logic's own value stays */
	put_row(db, l, 2, 64, 64, 64, 7);	/* a value the logic lacks */
	put_row(db, l, 1, 512, 512, 512, 1000); /* held out: never learnt */
	size_list_init(&hold, 3);
	CHECK(size_list_add(&hold, held, &err) == TCX_OK);
	CHECK(selector_create(l, "synthetic.yaml", &s, &err) == TCX_OK);
	CHECK(choose(s, SEL_NEAREST, 900, 900, 900) == 1); /* only the exact entry: 1 */
	CHECK(selector_add_store(s, l, db, &hold, &added, &err) == TCX_OK);
	CHECK_MSG(added == 3, "added %d", added);
	CHECK(choose(s, SEL_NEAREST, 900, 900, 900) == 1);
	CHECK(choose(s, SEL_NEAREST, 60, 60, 60) == 0);
	for (int p = 0; p < selector_table(s)->npoints; p++)
		CHECK(selector_table(s)->point_sizes[3 * p] != 512);
	size_list_release(&hold);
	selector_destroy(s);
	store_close(db);
	logic_free(l);
	unlink(path);
	snprintf(path, sizeof(path), "%s/results.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/results.db-shm", dir);
	unlink(path);
}

/* A tensor-core solution's tile, planned without a device: fp64's
 * mma.sync shapes, the 16-row one (sm_90 only) too */
static void test_solution_info_mi(void)
{
	static const char *const params[] = {
		"WorkGroup=[16,8,1],ThreadTile=[8,8],VectorWidth=2,LdsPad=4,"
		"MatrixInstruction=[8,8,4,1]",
		"WorkGroup=[16,8,1],ThreadTile=[8,8],VectorWidth=2,LdsPad=4,"
		"MatrixInstruction=[16,8,8,1]",
	};
	struct tcx_contraction *c = NULL;
	struct tcx_error err;

	CHECK(notation_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_D, LAYOUT_BY_STYLE, &c, &err) ==
	      TCX_OK);
	for (size_t x = 0; c && x < sizeof(params) / sizeof(params[0]); x++) {
		struct solution s;
		struct sel_solution info;

		solution_default(&s);
		CHECK(solution_parse(&s, params[x], &err) == TCX_OK);
		CHECK_MSG(selector_solution_info(c, &s, &info, &err) == TCX_OK, "%s: %s",
			  params[x], err.msg);
		CHECK(info.mt0 == 128 && info.mt1 == 64 && info.depth_u == 16);
	}
	contraction_free(c);
}

int main(void)
{
	char dir[] = "/tmp/tcx-selector.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_logic_selector();
	test_nearest();
	test_nearest_log();
	test_model(false);
	test_model(true);
	test_section_errors();
	test_solution_info_mi();
	test_build_record(dir);
	test_store(dir);
	rmdir(dir);
	return check_done();
}

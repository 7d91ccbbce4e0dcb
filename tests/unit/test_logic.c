/* test_logic.c - library logic (lib/logic/logic.h): every Tensile logic
 * file in tests/data/tensile/logic loads with what the file says; tcx's
 * format and Tensile's v3 and v4 forms round-trip; Tensile's analysis
 * reproduces its rules on synthetic tables (and on random ones, checked
 * against brute force); bad files fail with a clear message. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "logic/logic.h"
#include "logic/ptype.h"
#include "notation/notation.h"

static char tmpdir[256];

/* ---- helpers ---------------------------------------------------------- */

static char *data_path(const char *rel)
{
	static char path[4096];
	const char *d = getenv("TCX_TEST_DATA");

	snprintf(path, sizeof(path), "%s/tensile/logic/%s", d ? d : ".", rel);
	return path;
}

static char *slurp(const char *rel)
{
	char *text = NULL;
	size_t len;
	struct tcx_error err;

	if (common_read_file(data_path(rel), &text, &len, &err) != TCX_OK)
		fprintf(stderr, "%s: %s\n", rel, err.msg);
	return text;
}

/* text with the one occurrence of `from` replaced by `to` (caller frees). */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = text ? strstr(text, from) : NULL;
	char *out;

	if (!at || strstr(at + 1, from)) {
		fprintf(stderr, "replace: '%s' does not occur exactly once\n", from);
		return NULL;
	}
	out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

static enum tcx_status load_text(const char *text, struct logic **l, struct tcx_error *err)
{
	memset(err, 0, sizeof(*err));
	if (!text) {
		*l = NULL;
		return TCX_EINVAL;
	}
	return logic_load_string(text, strlen(text), "t.yaml", l, err);
}

static struct logic *load_rel(const char *rel)
{
	struct logic *l = NULL;
	struct tcx_error err = {0};

	if (logic_load(data_path(rel), &l, &err) != TCX_OK)
		fprintf(stderr, "%s: %s\n", rel, err.msg);
	return l;
}

static int range_leaves(const struct range_node *n)
{
	int c = 0;

	for (int k = 0; n && k < n->nrules; k++)
		c += n->rules[k].child ? range_leaves(n->rules[k].child) : 1;
	return c;
}

static int range_depth(const struct range_node *n)
{
	int d = 0;

	for (; n; n = n->rules[0].child)
		d++;
	return d;
}

static bool json_text_is(json_t *v, const char *want)
{
	json_error_t je;
	json_t *w = json_loads(want, JSON_DECODE_ANY, &je);
	bool same = v && w && json_equal(v, w);

	if (!same) {
		char *got = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

		fprintf(stderr, "json: got %s, want %s\n", got ? got : "NULL", want);
		free(got);
	}
	json_decref(w);
	return same;
}

static bool range_is(const struct logic *l, const char *want)
{
	json_t *j = l->range ? range_to_json(l->range) : json_null();
	bool same = json_text_is(j, want);

	json_decref(j);
	return same;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The content lookups and exports depend on; `arch` also compares the
 * architecture (lost in a v3 export). */
static bool same_logic(const struct logic *a, const struct logic *b, bool arch)
{
	char na[256], nb[256];

	if (!a || !b)
		return false;
	contraction_tensile_name(a->type, na, sizeof(na));
	contraction_tensile_name(b->type, nb, sizeof(nb));
	if (strcmp(na, nb) || strcmp(a->type->expr, b->type->expr)) {
		fprintf(stderr, "problem types differ: %s / %s\n", na, nb);
		return false;
	}
	if (a->nsol != b->nsol || a->nexact != b->nexact || a->norder != b->norder) {
		fprintf(stderr, "counts differ: %d/%d solutions, %d/%d exact\n", a->nsol, b->nsol,
			a->nexact, b->nexact);
		return false;
	}
	for (int k = 0; k < a->nsol; k++)
		if (!solution_equal(&a->sols[k].sol, &b->sols[k].sol) ||
		    strcmp(a->sols[k].name, b->sols[k].name)) {
			fprintf(stderr, "solution %d differs: %s / %s\n", k, a->sols[k].name,
				b->sols[k].name);
			return false;
		}
	for (int k = 0; k < a->nexact; k++) {
		const struct logic_exact *x = &a->exact[k], *y = &b->exact[k];

		if (x->sol != y->sol || x->gflops != y->gflops ||
		    memcmp(x->sizes, y->sizes, sizeof(int64_t) * (size_t)a->type->nidx)) {
			fprintf(stderr, "exact entry %d differs\n", k);
			return false;
		}
	}
	if (memcmp(a->index_order, b->index_order, sizeof(int) * (size_t)a->norder) ||
	    !range_equal(a->range, b->range)) {
		fprintf(stderr, "index order or range logic differs\n");
		return false;
	}
	/* a Tensile form fills in a schedule (and v4 an architecture) where none was */
	if ((a->schedule && !str_eq(a->schedule, b->schedule)) ||
	    a->ndevice_names != b->ndevice_names ||
	    (arch && a->architecture && !str_eq(a->architecture, b->architecture))) {
		fprintf(stderr, "schedule, device names or architecture differ\n");
		return false;
	}
	for (int k = 0; k < a->ndevice_names; k++)
		if (strcmp(a->device_names[k], b->device_names[k]))
			return false;
	return true;
}

static int64_t *sz4(int64_t i, int64_t j, int64_t k, int64_t l)
{
	static int64_t s[TCX_MAX_INDICES];

	s[0] = i;
	s[1] = j;
	s[2] = k;
	s[3] = l;
	return s;
}

/* ---- the Tensile files ------------------------------------------------ */

struct expect {
	const char *rel;
	int format, nsol, nexact, leaves; /* leaves -1: no range logic */
	const char *tname, *schedule, *arch;
	int ndevices;
};

/* Counts from the files themselves (read with Python's yaml). */
static const struct expect files[] = {
    {"rocblas-3093ba2e/hip_lite_Tensile_Cijk_Ailk_Bjlk_SB.yaml", 3, 1, 0, 1, "Cijk_Ailk_Bjlk_SB",
     "Tensile", NULL, 1},
    {"rocblas-3093ba2e/r9nano_full_Tensile_Cijk_Ailk_Bjlk_SB.yaml", 3, 40, 10, 177,
     "Cijk_Ailk_Bjlk_SB", "Tensile", NULL, 1},
    {"rocblas-3093ba2e/r9nano_lite_Tensile_Cijk_Ailk_Bjlk_SB.yaml", 3, 15, 0, 158,
     "Cijk_Ailk_Bjlk_SB", "Tensile", NULL, 1},
    {"rocblas-5a8460f1/asm_lite_r9nano_Cijk_Ailk_Bjlk_DB.yaml", 4, 2, 0, 3, "Cijk_Ailk_Bjlk_DB",
     "r9nano", "gfx803", 1},
    {"tensile-develop/navi31_Cijk_Ailk_Bjlk_SB.yaml", 5, 1, 1, -1, "Cijk_Ailk_Bjlk_SB", "navi31",
     "gfx1100", 1},
    {"tensile-v4.6.0/vega10_Cijk_Ailk_Bljk_SB.yaml", 4, 44, 77, -1, "Cijk_Ailk_Bljk_SB", "vega10",
     "gfx900", 5},
};

static void test_files_load(void)
{
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		const struct expect *e = &files[f];
		struct logic *l = load_rel(e->rel);
		char name[128];
		static const int order[4] = {2, 3, 0, 1};

		CHECK_MSG(l, "%s loads", e->rel);
		if (!l)
			continue;
		contraction_tensile_name(l->type, name, sizeof(name));
		CHECK_MSG(l->format == e->format, "%s: format %d", e->rel, l->format);
		CHECK_MSG(l->nsol == e->nsol, "%s: %d solutions", e->rel, l->nsol);
		CHECK_MSG(l->nexact == e->nexact, "%s: %d exact", e->rel, l->nexact);
		CHECK_MSG(e->leaves < 0
			      ? !l->range
			      : range_leaves(l->range) == e->leaves && range_depth(l->range) == 4,
			  "%s: range tree %d leaves, depth %d", e->rel, range_leaves(l->range),
			  range_depth(l->range));
		CHECK_MSG(strcmp(name, e->tname) == 0, "%s: problem %s", e->rel, name);
		CHECK(str_eq(l->schedule, e->schedule));
		CHECK(str_eq(l->architecture, e->arch));
		CHECK(l->ndevice_names == e->ndevices);
		CHECK(l->norder == 4 && memcmp(l->index_order, order, sizeof(order)) == 0);
		CHECK(l->min_version != NULL);
		for (int k = 0; k < l->nsol; k++)
			CHECK(l->sols[k].tensile != NULL && l->sols[k].name[0]);
		logic_free(l);
	}
}

static void test_files_content(void)
{
	struct logic *l = load_rel(files[3].rel); /* asm_lite DB */

	if (l) {
		/* "for any batch and K: if I <= 1 use solution 1; otherwise if
		 * J <= 1 use 1, else 0" */
		CHECK(range_is(l, "[[-1,[[-1,[[1,[[-1,1]]],[-1,[[1,1],[-1,0]]]]]]]]"));
		CHECK(logic_lookup(l, sz4(1, 64, 1, 64), NULL) == 1);
		CHECK(logic_lookup(l, sz4(64, 1, 1, 64), NULL) == 1);
		CHECK(logic_lookup(l, sz4(64, 64, 1, 64), NULL) == 0);
		CHECK(logic_lookup(l, sz4(1, 1, 9, 100000), NULL) == 1);
		CHECK(logic_lookup(l, sz4(2, 2, 7, 3), NULL) == 0);
		CHECK(l->sols[0].sol.depth_u == 8 && l->sols[1].sol.depth_u == 4);
		CHECK(l->sols[0].sol.vw == 2 && l->sols[0].sol.wgm == 8 &&
		      l->sols[0].sol.edge == EDGE_SHIFTPTR);
		CHECK(l->type->dtype == TCX_DTYPE_D && l->type->use_beta);
		CHECK(strcmp(l->device_names[0], "Device 7300") == 0);
		logic_free(l);
	}
	l = load_rel(files[1].rel); /* r9nano full: exact and a deep range tree */
	if (l) {
		struct strbuf why = STRBUF_INIT;

		/* WorkGroup [16,8,2] with NumThreads 256 and LoopUnroll 16 (derived keys) */
		CHECK(l->sols[0].sol.wg[0] == 16 && l->sols[0].sol.wg[1] == 8 &&
		      l->sols[0].sol.wg[2] == 2 && l->sols[0].sol.depth_u == 32 &&
		      l->sols[0].sol.gsu == 2);
		CHECK(json_is_string(json_object_get(l->sols[0].tensile, "KernelLanguage")));
		CHECK(l->exact[0].sol == 31 && l->exact[0].gflops == 7471.44);
		CHECK(logic_lookup(l, sz4(4096, 7133, 1, 4096), &why) == 31);
		CHECK(strstr(strbuf_str(&why), "exact") != NULL);
		strbuf_reset(&why);
		/* sizes between and beyond the tuned ones: the first rule with
		 * size <= threshold, else the -1 rule.  i <= 4: */
		CHECK(logic_lookup(l, sz4(3, 100000, 1, 5), NULL) == 37);
		/* 4 < i <= 64, 4 < j <= 128: */
		CHECK(logic_lookup(l, sz4(5, 100, 1, 5), &why) == 13);
		CHECK_MSG(strstr(strbuf_str(&why), "4 < i <= 64") &&
			      strstr(strbuf_str(&why), "4 < j <= 128"),
			  "why: %s", strbuf_str(&why));
		/* 4 < i <= 64, j > 5888: */
		CHECK(logic_lookup(l, sz4(64, 1000000, 1, 5), NULL) == 26);
		/* 64 < i <= 128, 4 < j <= 64: */
		CHECK(logic_lookup(l, sz4(65, 64, 1, 5), NULL) == 14);
		/* not an exact size */
		CHECK(logic_lookup(l, sz4(4096, 7133, 1, 4095), NULL) >= 0);
		strbuf_release(&why);
		logic_free(l);
	}
	l = load_rel(files[4].rel); /* modern: 4 leading dimensions after the sizes */
	if (l) {
		CHECK(l->exact[0].nsizes == 8 && l->exact[0].gflops == 174.516);
		CHECK(logic_lookup(l, sz4(256, 256, 1, 256), NULL) == 0);
		CHECK(logic_lookup(l, sz4(256, 256, 1, 255), NULL) == -1);
		CHECK(json_array_size(l->modern_items) == 2);
		CHECK(strcmp(l->sols[0].name, "Cijk_Ailk_Bjlk_SB_MT64x64x8_SN_") == 0);
		logic_free(l);
	}
	l = load_rel(files[5].rel); /* vega10: exact logic only */
	if (l) {
		CHECK(logic_lookup(l, sz4(8448, 48000, 1, 2816), NULL) == l->exact[0].sol);
		CHECK(logic_lookup(l, sz4(8448, 48000, 1, 2817), NULL) == -1);
		CHECK(l->exact[76].sizes[3] == 2816 && l->exact[76].sol == 43);
		logic_free(l);
	}
	l = load_rel(files[0].rel); /* hip_lite: one solution for everything */
	if (l) {
		CHECK(range_is(l, "[[-1,[[-1,[[-1,[[-1,0]]]]]]]]"));
		CHECK(logic_lookup(l, sz4(7, 5, 3, 1), NULL) == 0);
		CHECK(strcmp(l->device_names[0], "default") == 0);
		logic_free(l);
	}
}

/* tcx's derivation of Tensile's ProblemType agrees with what Tensile wrote. */
static void test_problem_type(void)
{
	static const char *const skip[] = {"OperationType"};

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct logic *l = load_rel(files[f].rel);
		json_t *mine, *v;
		const char *key;
		int order[TCX_MAX_INDICES], n, same = 0;

		if (!l)
			continue;
		mine = ptype_derive(l->type);
		json_object_foreach(mine, key, v)
		{
			json_t *theirs = json_object_get(l->problem_type, key);
			bool skipped = false;

			for (size_t k = 0; k < ARRAY_SIZE(skip); k++)
				skipped |= strcmp(key, skip[k]) == 0;
			if (skipped || !theirs)
				continue;
			CHECK_MSG(json_equal(v, theirs), "%s: ProblemType key %s differs",
				  files[f].rel, key);
			same++;
		}
		CHECK(same >= 25);
		n = ptype_index_order(l->type, order);
		CHECK(n == 4 && memcmp(order, l->index_order, sizeof(int) * 4) == 0);
		json_decref(mine);
		logic_free(l);
	}
	/* GEMM flags alone (no IndexAssignments) */
	{
		static const char text[] = "{OperationType: GEMM, DataType: s, TransposeA: false, "
					   "TransposeB: false, Batched: true}";
		struct ynode *pt = NULL;
		struct tcx_contraction *c = NULL;
		struct tcx_error err = {0};
		char name[64] = "";

		CHECK(ydoc_parse(text, strlen(text), "t", 0, &pt, &err) == TCX_OK && pt);
		if (pt)
			CHECK(ptype_read(pt, "t", PTYPE_DERIVED, &c, &err) == TCX_OK);
		if (c)
			contraction_tensile_name(c, name, sizeof(name));
		CHECK_MSG(strcmp(name, "Cijk_Ailk_Bljk_SB") == 0, "%s", name);
		contraction_free(c);
		ynode_free(pt);
	}
}

/* ---- round trips ------------------------------------------------------ */

static struct logic *write_and_load(const struct logic *l, int format, const char *file)
{
	char path[512];
	struct tcx_error err = {0};
	struct logic *back = NULL;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, file);
	if (logic_write_format(l, path, format, &err) != TCX_OK) {
		fprintf(stderr, "write %s: %s\n", file, err.msg);
		return NULL;
	}
	if (logic_load(path, &back, &err) != TCX_OK)
		fprintf(stderr, "load %s: %s\n", file, err.msg);
	return back;
}

static bool files_equal(const char *a, const char *b)
{
	char pa[512], pb[512], *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	bool same;

	snprintf(pa, sizeof(pa), "%s/%s", tmpdir, a);
	snprintf(pb, sizeof(pb), "%s/%s", tmpdir, b);
	same = common_read_file(pa, &ta, &la, NULL) == TCX_OK &&
	       common_read_file(pb, &tb, &lb, NULL) == TCX_OK && la == lb &&
	       memcmp(ta, tb, la) == 0;
	free(ta);
	free(tb);
	return same;
}

static void test_round_trips(void)
{
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct logic *l = load_rel(files[f].rel), *t, *t2, *v3, *v4;

		if (!l)
			continue;
		t = write_and_load(l, LOGIC_TCX, "a.yaml");
		CHECK_MSG(t && t->format == LOGIC_TCX && same_logic(l, t, true),
			  "%s: tcx round trip", files[f].rel);
		CHECK(t && t->source_format == l->format && str_eq(t->min_version, l->min_version));
		/* a file read and written again is the same text */
		t2 = t ? write_and_load(t, LOGIC_TCX, "b.yaml") : NULL;
		CHECK_MSG(t2 && files_equal("a.yaml", "b.yaml"), "%s: stable text", files[f].rel);
		v3 = write_and_load(l, LOGIC_TENSILE_V3, "v3.yaml");
		CHECK_MSG(v3 && v3->format == LOGIC_TENSILE_V3 && same_logic(l, v3, false),
			  "%s: Tensile v3 round trip", files[f].rel);
		v4 = t ? write_and_load(t, LOGIC_TENSILE_V4, "v4.yaml") : NULL;
		CHECK_MSG(v4 && v4->format == LOGIC_TENSILE_V4 && same_logic(l, v4, true),
			  "%s: Tensile v4 round trip (through tcx's format)", files[f].rel);
		/* Tensile's solution states are kept as they were */
		for (int k = 0; v4 && k < v4->nsol; k++)
			CHECK(json_equal(v4->sols[k].tensile, l->sols[k].tensile));
		logic_free(l);
		logic_free(t);
		logic_free(t2);
		logic_free(v3);
		logic_free(v4);
	}
}

/* ---- the analysis ----------------------------------------------------- */

static struct logic *new_logic(const char *expr)
{
	struct tcx_contraction *c = NULL;
	struct logic *l = NULL;
	struct tcx_error err = {0};

	if (notation_parse(expr, TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) || logic_new(&l, &err) ||
	    logic_set_type(l, c, &err)) {
		fprintf(stderr, "%s: %s\n", expr, err.msg);
		logic_free(l);
		l = NULL;
	}
	contraction_free(c);
	return l;
}

#define MAXROWS 64
#define MAXSOL	8

struct table {
	int n, nsol;
	int64_t sizes[MAXROWS * 3];
	bool exact[MAXROWS];
	double g[MAXROWS * MAXSOL];
	struct solution sols[MAXSOL];
};

static void table_init(struct table *t, int nsol)
{
	memset(t, 0, sizeof(*t));
	t->nsol = nsol;
	for (int s = 0; s < nsol; s++) {
		solution_default(&t->sols[s]);
		t->sols[s].depth_u = 4 << s; /* distinct solutions */
	}
}

static double *row(struct table *t, int64_t i, int64_t j, int64_t l, bool exact)
{
	int r = t->n++;

	t->sizes[r * 3] = i;
	t->sizes[r * 3 + 1] = j;
	t->sizes[r * 3 + 2] = l;
	t->exact[r] = exact;
	return &t->g[r * t->nsol];
}

static enum tcx_status analyze(struct logic *l, struct table *t, double min, struct tcx_error *err)
{
	struct logic_table lt = {3, t->n, t->sizes, t->exact, t->nsol, t->sols, t->g, NULL};

	memset(err, 0, sizeof(*err));
	return logic_analyze(l, &lt, min, err);
}

static int sol_of(const struct logic *l, const struct table *t, int s)
{
	for (int k = 0; k < l->nsol; k++)
		if (solution_equal(&l->sols[k].sol, &t->sols[s]))
			return k;
	return -1;
}

/* GEMM C[ij]=A[il]*B[jl]: index order [l, i, j].  Solution 0 is faster for
 * i <= 32, solution 1 for i >= 64; ties where noted. */
static void fill_basic(struct table *t, struct pcg32 *rng, int nsol)
{
	static const int64_t is[] = {16, 32, 64, 128}, js[] = {16, 64};

	table_init(t, nsol);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 2; b++) {
			double base = 10 + 90 * pcg32_double(rng),
			       *g = row(t, is[a], js[b], 32, false);

			g[0] = is[a] <= 32 ? 1.5 * base : 0.5 * base;
			g[1] = base;
			if ((is[a] == 16 && js[b] == 64) || (is[a] == 64 && js[b] == 16))
				g[0] = g[1]; /* a full tie: no winner, the prior rule extends */
			for (int s = 2; s < nsol; s++)
				g[s] = (0.2 + 0.05 * s) * base; /* never wins */
		}
}

static void test_analyze_rules(void)
{
	struct pcg32 rng;
	struct table t;
	struct tcx_error err;
	struct logic *l = new_logic("C[ij]=A[il]*B[jl]");
	int order[3] = {2, 0, 1};

	if (!l)
		return;
	pcg32_seed(&rng, 42, 1);
	fill_basic(&t, &rng, 2);
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
	CHECK(l->nsol == 2 && l->nexact == 0);
	CHECK(l->norder == 3 && memcmp(l->index_order, order, sizeof(order)) == 0);
	/* merged consecutive rules, thresholds as sizes, the last -1; ties extend */
	CHECK(range_is(l, "[[-1,[[32,[[-1,0]]],[-1,[[-1,1]]]]]]"));
	/* between and outside the tuned sizes */
	CHECK(logic_lookup(l, (int64_t[]){1, 5, 1}, NULL) == 0);
	CHECK(logic_lookup(l, (int64_t[]){20, 5, 1000}, NULL) == 0);
	CHECK(logic_lookup(l, (int64_t[]){33, 5, 1}, NULL) == 1);
	CHECK(logic_lookup(l, (int64_t[]){100000, 100000, 7}, NULL) == 1);
	CHECK(logic_check(l, "t", &err) == TCX_OK);
	/* a size measured twice: the better run counts */
	{
		double *g = row(&t, 128, 64, 32, false);

		g[0] = 1e6;
		g[1] = 1;
		g = row(&t, 128, 64, 32, false);
		g[0] = 0.5;
		g[1] = 1;
		CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
		CHECK(logic_lookup(l, (int64_t[]){128, 64, 32}, NULL) == 0);
		CHECK(logic_lookup(l, (int64_t[]){128, 16, 32}, NULL) == 1);
	}
	logic_free(l);
}

static void test_analyze_removals(void)
{
	struct pcg32 rng;
	struct table t;
	struct tcx_error err;
	struct logic *l = new_logic("C[ij]=A[il]*B[jl]");
	double *g;

	if (!l)
		return;
	pcg32_seed(&rng, 7, 3);

	/* an unimportant solution: solution 2 wins one cell by 0.01% */
	fill_basic(&t, &rng, 4);
	g = &t.g[7 * t.nsol]; /* i=128, j=64 */
	g[2] = g[1] * 1.0001;
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
	CHECK_MSG(l->nsol == 2 && sol_of(l, &t, 0) == 0 && sol_of(l, &t, 1) == 1,
		  "unimportant and never-winning solutions removed: %d left", l->nsol);
	/* with no importance threshold it stays, the never-winner does not */
	CHECK(analyze(l, &t, 0, &err) == TCX_OK);
	CHECK(l->nsol == 3 && sol_of(l, &t, 2) == 2 && sol_of(l, &t, 3) < 0);
	CHECK(logic_lookup(l, (int64_t[]){128, 64, 32}, NULL) == 2);
	CHECK(logic_lookup(l, (int64_t[]){128, 16, 32}, NULL) == 1);

	/* a solution with a failed run in one cell is invalid, even where it is fastest */
	fill_basic(&t, &rng, 3);
	for (int r = 0; r < t.n; r++)
		t.g[r * t.nsol + 2] = 1000;
	t.g[5 * t.nsol + 2] = 0;
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
	CHECK(l->nsol == 2 && sol_of(l, &t, 2) < 0);
	CHECK(range_is(l, "[[-1,[[32,[[-1,0]]],[-1,[[-1,1]]]]]]"));
	t.g[5 * t.nsol + 2] = -1; /* negative and NaN count as failed too */
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK && sol_of(l, &t, 2) < 0);
	t.g[5 * t.nsol + 2] = NAN;
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK && sol_of(l, &t, 2) < 0);
	t.g[5 * t.nsol + 2] = 1000; /* control: valid everywhere, it wins everything */
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
	CHECK(l->nsol == 1 && sol_of(l, &t, 2) == 0);

	/* exact sizes: their winner is kept though it wins no cell of the grid */
	fill_basic(&t, &rng, 4);
	g = row(&t, 100, 100, 32, true);
	g[0] = 10, g[1] = 20, g[2] = 5, g[3] = 30;
	g = row(&t, 100, 100, 32, true); /* measured again: the better run counts */
	g[0] = 40, g[1] = 20, g[2] = 5, g[3] = 35;
	g = row(&t, 7, 9, 11, true);
	g[0] = 0, g[1] = 2, g[2] = 5, g[3] = 1; /* a failure at an exact size is no matter */
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
	CHECK(l->nsol == 3 && sol_of(l, &t, 2) == 2 && sol_of(l, &t, 3) < 0);
	CHECK(l->nexact == 2 && l->exact[0].sol == sol_of(l, &t, 0) && l->exact[0].gflops == 40 &&
	      l->exact[1].sol == sol_of(l, &t, 2));
	CHECK(logic_lookup(l, (int64_t[]){100, 100, 32}, NULL) == 0);
	CHECK(logic_lookup(l, (int64_t[]){100, 100, 33}, NULL) == 1); /* not exact: range */
	CHECK(logic_lookup(l, (int64_t[]){7, 9, 11}, NULL) == 2);

	/* every solution fails somewhere: no logic */
	fill_basic(&t, &rng, 2);
	t.g[0] = 0;
	t.g[3] = 0;
	CHECK(analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_EREJECT);
	CHECK(strstr(err.msg, "every one of the 2 solutions") != NULL);
	/* a table for another number of indices */
	{
		struct logic_table bad = {4, t.n, t.sizes, t.exact, t.nsol, t.sols, t.g, NULL};

		CHECK(logic_analyze(l, &bad, 0.01, &err) == TCX_EINVAL);
	}
	logic_free(l);
}

/* Contractions Tensile refuses: no free index in B, no index at all. */
static void test_analyze_degenerate(void)
{
	struct logic *l = new_logic("C[i]=A[ik]*B[k]");
	struct tcx_error err;
	struct solution sols[2];
	int order[TCX_MAX_INDICES];
	int64_t sizes[] = {8, 8, 8, 64, 64, 8, 64, 64};
	double g[] = {1, 2, 3, 1, 1, 4, 5, 1};

	solution_default(&sols[0]);
	solution_default(&sols[1]);
	sols[1].depth_u = 8;
	if (l) {
		struct logic_table t = {2, 4, sizes, NULL, 2, sols, g, NULL};

		/* ids: i 0, k 1; DU k, D0 i, no D1 */
		CHECK(l->norder == 2 && l->index_order[0] == 1 && l->index_order[1] == 0);
		CHECK(logic_analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
		/* solution 1 wins where k = 8, solution 0 where k = 64 */
		CHECK(range_is(l, "[[8,[[-1,1]]],[-1,[[-1,0]]]]"));
		CHECK(logic_lookup(l, (int64_t[]){500, 3}, NULL) == 1);
		CHECK(logic_lookup(l, (int64_t[]){5, 9}, NULL) == 0);
		logic_free(l);
	}
	l = new_logic("C[]=A[]*B[]");
	if (l) {
		struct logic_table t = {0, 2, sizes, NULL, 2, sols, g, NULL};

		CHECK(ptype_index_order(l->type, order) == 0);
		CHECK(logic_analyze(l, &t, LOGIC_IMPORTANCE_MIN, &err) == TCX_OK);
		CHECK(l->nsol == 1 && l->nexact == 1 && !l->range && l->exact[0].gflops == 3);
		CHECK(logic_lookup(l, sizes, NULL) == 0);
		logic_free(l);
	}
}

/* Random tables: for every measured grid cell the logic picks the fastest
 * solution it kept, every solution kept wins somewhere, and the result
 * survives writing and reading. */
static void test_analyze_random(void)
{
	struct logic *l = new_logic("C[ijk] = Sum[l] A[ilk] * B[jlk]");

	if (!l)
		return;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		enum { NI = 5, NJ = 4, NK = 2, NL = 3, NS = 6, MAXR = NI * NJ * NK * NL + 4 };
		static int64_t sizes[MAXR * 4];
		static double g[MAXR * NS];
		static bool exact[MAXR];
		struct solution sols[NS];
		int64_t ax[4][5];
		int n[4] = {NI, NJ, NK, NL}, rows = 0, wins[NS] = {0}, kept[NS], q;
		struct pcg32 rng;
		struct tcx_error err = {0};
		struct logic_table lt;
		bool ok = true;

		pcg32_seed(&rng, seed, 11);
		for (int i = 0; i < 4; i++) {
			int64_t v = 1 + pcg32_bounded(&rng, 8);

			for (int k = 0; k < n[i]; k++, v += 1 + pcg32_bounded(&rng, 300))
				ax[i][k] = v;
		}
		for (int s = 0; s < NS; s++) {
			solution_default(&sols[s]);
			sols[s].depth_u = 2 + s;
		}
		for (int a = 0; a < NI; a++)
			for (int b = 0; b < NJ; b++)
				for (int c = 0; c < NK; c++)
					for (int d = 0; d < NL; d++) {
						if (pcg32_bounded(&rng, 10) == 0)
							continue; /* not measured */
						sizes[rows * 4] = ax[0][a];
						sizes[rows * 4 + 1] = ax[1][b];
						sizes[rows * 4 + 2] = ax[2][c];
						sizes[rows * 4 + 3] = ax[3][d];
						exact[rows] = false;
						for (int s = 0; s < NS; s++)
							g[rows * NS + s] =
							    1 + 99 * pcg32_double(&rng);
						rows++;
					}
		for (int e = 0; e < 3; e++, rows++) { /* exact sizes off the grid */
			for (int i = 0; i < 4; i++)
				sizes[rows * 4 + i] = 1000 + 17 * e + i;
			exact[rows] = true;
			for (int s = 0; s < NS; s++)
				g[rows * NS + s] = 1 + 99 * pcg32_double(&rng);
		}
		lt = (struct logic_table){4, rows, sizes, exact, NS, sols, g, NULL};
		if (logic_analyze(l, &lt, LOGIC_IMPORTANCE_MIN, &err) != TCX_OK) {
			CHECK_MSG(false, "seed %llu: %s", (unsigned long long)seed, err.msg);
			continue;
		}
		for (int s = 0; s < NS; s++) /* table solution -> logic solution */
			for (kept[s] = -1, q = 0; q < l->nsol; q++)
				if (solution_equal(&l->sols[q].sol, &sols[s]))
					kept[s] = q;
		for (int r = 0; r < rows; r++) {
			int best = -1, got = logic_lookup(l, &sizes[r * 4], NULL);

			for (int s = 0; s < NS; s++)
				if (kept[s] >= 0 && (best < 0 || g[r * NS + s] > g[r * NS + best]))
					best = s;
			if (got < 0 || best < 0 || got != kept[best]) {
				ok = false;
				fprintf(stderr,
					"seed %llu: row %d (%s) picks %d, fastest kept is %d\n",
					(unsigned long long)seed, r, exact[r] ? "exact" : "range",
					got, best);
			} else {
				wins[got]++;
			}
		}
		for (int k = 0; k < l->nsol; k++)
			if (!wins[k]) {
				ok = false;
				fprintf(stderr, "seed %llu: solution %d kept but wins nowhere\n",
					(unsigned long long)seed, k);
			}
		CHECK_MSG(ok, "seed %llu", (unsigned long long)seed);
		CHECK(l->nsol >= 1 && l->nsol <= NS && l->nexact == 3);
		CHECK(logic_check(l, "t", &err) == TCX_OK);
		if (seed <= 3) {
			struct logic *back = write_and_load(l, LOGIC_TCX, "r.yaml");
			struct logic *v3 = write_and_load(l, LOGIC_TENSILE_V3, "r3.yaml");

			CHECK_MSG(same_logic(l, back, true), "seed %llu: tcx round trip",
				  (unsigned long long)seed);
			CHECK_MSG(same_logic(l, v3, false), "seed %llu: v3 round trip",
				  (unsigned long long)seed);
			logic_free(back);
			logic_free(v3);
		}
	}
	logic_free(l);
}

/* ---- errors ----------------------------------------------------------- */

static void expect_error(const char *text, enum tcx_status want, const char *msg, const char *what)
{
	struct logic *l = NULL;
	struct tcx_error err;
	enum tcx_status st = load_text(text, &l, &err);

	CHECK_MSG(st == want && !l, "%s: status %d (%s)", what, st, err.msg);
	CHECK_MSG(strstr(err.msg, msg) != NULL, "%s: message '%s' lacks '%s'", what, err.msg, msg);
	logic_free(l);
}

static void test_errors(void)
{
	char *asm_lite = slurp(files[3].rel), *t;
	struct logic *l = NULL;
	struct tcx_error err;

	/* control: the text as it is loads */
	CHECK(load_text(asm_lite, &l, &err) == TCX_OK);
	logic_free(l);

	expect_error("- {MinimumRequiredVersion: 4.2.0}\n- [1, 2\n- x\n", TCX_EPARSE,
		     "t.yaml:", "malformed YAML");
	load_text("- a\n- b\n- ]\n- c\n", &l, &err);
	CHECK_MSG(err.line == 3 && err.col == 3 && strstr(err.msg, "t.yaml:3:3: ") != NULL,
		  "line and column: %s", err.msg);
	expect_error("[1, 2, 3, 4, 5, 6, 7]\n", TCX_EPARSE, "has 7", "7 items");
	expect_error("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n", TCX_EPARSE, "8 items (v3), 9 (v4)",
		     "10 items");
	expect_error("[1, 2, 3, 4, 5]\n", TCX_EUNSUPPORTED, "v2 logic file", "v2 file");
	expect_error("{a: 1}\n", TCX_EPARSE, "not a logic file", "a mapping");
	expect_error("42\n", TCX_EPARSE, "not a logic file", "a scalar");

	/* solution indices out of range */
	t = replace(asm_lite, "- [2, 3, 0, 1]\n- []\n",
		    "- [2, 3, 0, 1]\n- - - [64, 64, 1, 64]\n    - [5, 1.5]\n");
	expect_error(t, TCX_ERANGE, "solution 5 out of range (the file has 2 solutions)",
		     "exact logic");
	free(t);
	t = replace(asm_lite, "[-1, 0]", "[-1, 2]");
	expect_error(t, TCX_ERANGE, "solution 2 out of range", "range logic");
	free(t);
	t = replace(asm_lite, "[-1, 0]", "[-1, -1]");
	expect_error(t, TCX_ERANGE, "solution -1 out of range", "negative solution");
	free(t);
	/* the tree's shape */
	t = replace(asm_lite, "[-1, 0]", "[-1, [[-1, 0]]]");
	expect_error(t, TCX_EPARSE, "expected a solution index at the last level", "too deep");
	free(t);
	t = replace(asm_lite, "            - - [-1, 1]\n", "            - 1\n");
	expect_error(t, TCX_EPARSE, "the tree must be 4 levels deep", "too shallow");
	free(t);
	t = replace(asm_lite, "[1, 1]", "[5, 1]\n              - [3, 1]");
	expect_error(t, TCX_EPARSE, "out of order", "thresholds out of order");
	free(t);
	t = replace(asm_lite, "[-1, 0]", "[9, 0]");
	expect_error(t, TCX_EPARSE, "the last rule must have -1", "last threshold");
	free(t);
	t = replace(asm_lite, "- [2, 3, 0, 1]\n", "- [2, 3, 0]\n");
	expect_error(t, TCX_EPARSE, "index order", "short index order");
	free(t);
	t = replace(asm_lite, "- [2, 3, 0, 1]\n- []\n",
		    "- [2, 3, 0, 1]\n- - - [64, 64, 1]\n    - [0, 1.5]\n");
	expect_error(t, TCX_EPARSE, "expected a list of 4 sizes", "short exact sizes");
	free(t);
	t = replace(asm_lite, "- [2, 3, 0, 1]\n- []\n",
		    "- [2, 3, 0, 1]\n- - - [64, 0, 1, 9]\n    - [0, 1.5]\n");
	expect_error(t, TCX_ERANGE, "not positive", "zero size");
	free(t);
	/* a problem type that does not parse */
	t = replace(asm_lite,
		    "- AssignedDerivedParameters: true\n  Batched: true\n  ComplexConjugateA: "
		    "false\n  ComplexConjugateB: false\n  DataType: 1\n  HighPrecisionAccumulate: "
		    "false\n  Index0: 0\n  Index01A: 0\n  Index01B: 1\n  Index1: 1\n  "
		    "IndexAssignmentsA: [0, 3, 2]\n  IndexAssignmentsB: [1, 3, 2]\n",
		    "- AssignedDerivedParameters: true\n  Batched: true\n  ComplexConjugateA: "
		    "false\n  ComplexConjugateB: false\n  DataType: 1\n  HighPrecisionAccumulate: "
		    "false\n  Index0: 0\n  Index01A: 0\n  Index01B: 1\n  Index1: 1\n  "
		    "IndexAssignmentsA: [0, 3, 2]\n  IndexAssignmentsB: [1, 2]\n");
	expect_error(t, TCX_EPARSE, "summation index 3 ('l') must be in both", "problem type");
	free(t);
	t = replace(asm_lite, "  DataType: 1\n  HighPrecisionAccumulate: false\n  Index0",
		    "  DataType: 99\n  HighPrecisionAccumulate: false\n  Index0");
	expect_error(t, TCX_EPARSE, "unknown DataType '99'", "data type");
	free(t);
	/* a solution whose parameters tcx cannot take */
	t = replace(asm_lite, "    DepthU: 4\n", "    DepthU: [4]\n");
	expect_error(t, TCX_EINVAL, "solution 1: bad value [4] for solution parameter 'DepthU'",
		     "bad parameter");
	free(t);

	/* tcx's format */
	expect_error("tcx-logic: 1\nproblem: {expression: 'C[ijn]=A[ik]*B[kj]', type: s}\n"
		     "solutions: []\n",
		     TCX_EPARSE, "cannot parse expression 'C[ijn]=A[ik]*B[kj]'", "tcx expression");
	expect_error("tcx-logic: 2\n", TCX_EUNSUPPORTED, "newer than this tcx reads", "version");
	expect_error("tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
		     "solutions:\n- parameters: {DepthU: 8}\nexact:\n- {sizes: [4, 4, 4], "
		     "solution: 1, gflops: 2.5}\n",
		     TCX_ERANGE, "solution 1 out of range (the file has 1 solutions)", "tcx exact");
	expect_error("tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
		     "solutions:\n- parameters: {DepthU: 8}\nrange: [[-1, [[-1, [[-1, 3]]]]]]\n",
		     TCX_ERANGE, "solution 3 out of range", "tcx range");
	expect_error("tcx-logic: 1\nsolutions: []\n", TCX_EPARSE, "no 'problem'", "no problem");
	/* control: a small tcx file by hand loads, with Tensile's order for C[ij]=A[ik]*B[kj] */
	CHECK(load_text("tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: d}\n"
			"solutions:\n- parameters: {DepthU: 8}\n- parameters: {DepthU: 16}\n"
			"range: [[-1, [[64, [[-1, 1]]], [-1, [[-1, 0]]]]]]\n",
			&l, &err) == TCX_OK);
	if (l) {
		CHECK(l->index_order[0] == 2 && l->index_order[1] == 0 && l->index_order[2] == 1);
		CHECK(logic_lookup(l, (int64_t[]){64, 1, 1}, NULL) == 1);
		CHECK(logic_lookup(l, (int64_t[]){65, 1, 1}, NULL) == 0);
		CHECK(l->type->dtype == TCX_DTYPE_D && l->sols[1].sol.depth_u == 16);
	}
	logic_free(l);
	free(asm_lite);
}

/* The accuracy a tuning asked for and what each solution's validation
 * measured (tcx tune --accuracy) go through tcx's format and back; a file
 * without them loads as before, with nothing measured. */
static void test_accuracy_keys(void)
{
	static const char *const text =
		"tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
		"accuracy: 0.001\n"
		"solutions:\n- parameters: {DepthU: 8}\n  arithmetic: tf32\n"
		"  measured_error: 2.5e-05\n- parameters: {DepthU: 16}\n"
		"range: [[-1, [[64, [[-1, 1]]], [-1, [[-1, 0]]]]]]\n";
	struct logic *l = NULL, *back;
	struct tcx_error err;

	CHECK_MSG(load_text(text, &l, &err) == TCX_OK, "%s", err.msg);
	if (!l)
		return;
	CHECK(l->accuracy == 1e-3);
	CHECK(l->sols[0].measured && l->sols[0].arith == ARITH_TF32 &&
	      l->sols[0].measured_error == 2.5e-5);
	CHECK(!l->sols[1].measured);
	back = write_and_load(l, LOGIC_TCX, "acc.yaml");
	CHECK(back && back->accuracy == 1e-3 && back->sols[0].measured &&
	      back->sols[0].arith == ARITH_TF32 && back->sols[0].measured_error == 2.5e-5 &&
	      !back->sols[1].measured);
	logic_free(back);
	logic_free(l);
	/* without the keys: no accuracy asked, nothing measured */
	CHECK(load_text("tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
			"solutions:\n- parameters: {DepthU: 8}\n",
			&l, &err) == TCX_OK);
	CHECK(l && l->accuracy == 0 && !l->sols[0].measured);
	logic_free(l);
	expect_error("tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
		     "solutions:\n- parameters: {DepthU: 8}\n  arithmetic: fp33\n"
		     "  measured_error: 1e-7\n",
		     TCX_EPARSE, "solution 0: 'arithmetic' must be one of", "bad arithmetic");
	expect_error("tcx-logic: 1\nproblem: {expression: 'C[ij]=A[ik]*B[kj]', type: s}\n"
		     "accuracy: 0\nsolutions:\n- parameters: {DepthU: 8}\n",
		     TCX_EPARSE, "'accuracy' must be a relative error", "bad accuracy");
}

/* Logic files are YAML as configs are (lib/yaml): the same refusals in the
 * same words, at the place; a ProblemType's fault names its key's place. */
static void test_yaml_rules(void)
{
	char *asm_lite = slurp(files[3].rel), *t;

	expect_error("tcx-logic: 1\nsolutions: []\ntcx-logic: 1\n", TCX_EPARSE,
		     "t.yaml:3:1: duplicate key 'tcx-logic' (first at line 1)", "duplicate key");
	expect_error("- a\n---\n- b\n", TCX_EPARSE, "t.yaml:2:1: a second YAML document",
		     "two documents");
	expect_error("- &x a\n- *x\n", TCX_EPARSE,
		     "t.yaml:2:3: aliases ('*x') are not supported: write the value out", "alias");
	expect_error("- a\n- b\xff\n", TCX_EPARSE,
		     "t.yaml:2:4: malformed YAML: invalid leading UTF-8 octet", "not UTF-8");
	t = replace(asm_lite, "  UseBeta: true\n  UseInitialStrides: false\n- - ",
		    "  UseBeta: maybe\n  UseInitialStrides: false\n- - ");
	expect_error(t, TCX_EPARSE, "t.yaml:37:12: 'UseBeta' must be True or False, found 'maybe'",
		     "ProblemType boolean");
	free(t);
	t = replace(asm_lite, "\n  IndexAssignmentsB: [1, 3, 2]\n",
		    "\n  IndexAssignmentsB: [1, 3, 2, 3]\n");
	expect_error(t, TCX_EPARSE, "t.yaml:16:32: index id 3 appears twice in 'IndexAssignmentsB'",
		     "ProblemType ids");
	free(t);
	free(asm_lite);
}

int main(void)
{
	const char *base = getenv("TMPDIR");

	if (!getenv("TCX_TEST_DATA"))
		SKIP("TCX_TEST_DATA is not set");
	snprintf(tmpdir, sizeof(tmpdir), "%s/tcx-logic-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_files_load();
	test_files_content();
	test_problem_type();
	test_round_trips();
	test_accuracy_keys();
	test_analyze_rules();
	test_analyze_removals();
	test_analyze_degenerate();
	test_analyze_random();
	test_errors();
	test_yaml_rules();
	{
		static const char *const names[] = {"a.yaml",  "b.yaml", "v3.yaml",
						    "v4.yaml", "r.yaml", "r3.yaml"};
		char path[512];

		for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, names[k]);
			unlink(path);
		}
		rmdir(tmpdir);
	}
	return check_done();
}

/* test_config.c - the tuning-config loader: every Tensile config in
 * tests/data/tensile/configs loads, what it loads is right, and bad configs
 * fail with the place and a clear message (lib/tune/config.h). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "logic/logic.h"
#include "tune/config.h"

/* ---- captured warnings ---- */

static char logbuf[16384];
static int nwarn;

static void log_hook(enum tcx_log_level level, const char *msg, void *ctx)
{
	size_t n = strlen(logbuf);

	(void)ctx;
	if (level == TCX_LOG_WARN)
		nwarn++;
	snprintf(logbuf + n, sizeof(logbuf) - n, "%s\n", msg);
}

static void log_reset(void)
{
	logbuf[0] = '\0';
	nwarn = 0;
}

/* ---- helpers ---- */

static const char *data_dir(void)
{
	return getenv("TCX_TEST_DATA");
}

static struct config *load_file(const char *rel)
{
	char path[4096];
	struct config *c = NULL;
	struct tcx_error err;

	if (!data_dir())
		return NULL;
	snprintf(path, sizeof(path), "%s/tensile/configs/%s", data_dir(), rel);
	if (config_load(path, &c, &err) != TCX_OK) {
		fprintf(stderr, "%s: %s\n", rel, err.msg);
		return NULL;
	}
	return c;
}

static enum tcx_status load_str(const char *yaml, struct config **c, struct tcx_error *err)
{
	memset(err, 0, sizeof(*err));
	log_reset();
	return config_load_string(yaml, strlen(yaml), "t.yaml", c, err);
}

static bool json_is(json_t *v, const char *want)
{
	json_error_t jerr;
	json_t *w = json_loads(want, JSON_DECODE_ANY, &jerr);
	bool same = v && w && json_equal(v, w);

	if (!same) {
		char *got = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

		fprintf(stderr, "json: got %s, want %s\n", got ? got : "NULL", want);
		free(got);
	}
	json_decref(w);
	return same;
}

static bool name_is(const struct config *c, int p, const char *want)
{
	char buf[128];

	if (!c || p >= c->nproblems || !c->problems[p].type)
		return false;
	contraction_tensile_name(c->problems[p].type, buf, sizeof(buf));
	if (strcmp(buf, want) != 0) {
		fprintf(stderr, "problem %d: name %s, want %s\n", p, buf, want);
		return false;
	}
	return true;
}

static const struct config_phase *phase(const struct config *c, int p, int g, enum phase_id ph)
{
	return &c->problems[p].groups[g].phase[ph];
}

/* The number of problems a step's Range r expands to. */
static size_t range_count(const struct config_sizes *sz, int r, int nidx)
{
	struct size_list l;
	struct tcx_error err;
	size_t n;

	size_list_init(&l, nidx);
	if (size_range_expand(&sz->ranges[r], nidx, &l, 1000000, &err) != TCX_OK) {
		fprintf(stderr, "expand: %s\n", err.msg);
		size_list_release(&l);
		return 0;
	}
	size_list_sort_unique(&l);
	n = l.count;
	size_list_release(&l);
	return n;
}

/* ---- every shipped config loads ---- */

static void test_all_files(void)
{
	char dir[4096], path[8192];
	DIR *top, *sub;
	struct dirent *d, *f;
	int nfiles = 0;

	CHECK_MSG(data_dir() != NULL, "TCX_TEST_DATA is not set");
	if (!data_dir())
		return;
	snprintf(dir, sizeof(dir), "%s/tensile/configs", data_dir());
	top = opendir(dir);
	CHECK_MSG(top != NULL, "cannot open %s", dir);
	if (!top)
		return;
	while ((d = readdir(top))) {
		char subdir[4096 + 256];

		if (d->d_name[0] == '.')
			continue;
		snprintf(subdir, sizeof(subdir), "%s/%s", dir, d->d_name);
		sub = opendir(subdir);
		if (!sub)
			continue;
		while ((f = readdir(sub))) {
			size_t n = strlen(f->d_name);
			struct config *c = NULL;
			struct tcx_error err = {0};
			enum tcx_status st;

			if (n < 6 || strcmp(f->d_name + n - 5, ".yaml") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", subdir, f->d_name);
			log_reset();
			st = config_load(path, &c, &err);
			CHECK_MSG(st == TCX_OK, "%s: %s", path, err.msg);
			CHECK_MSG(st != TCX_OK || c->nproblems > 0, "%s: no problems", path);
			if (nwarn)
				fprintf(stderr, "note: %s warned:\n%s", path, logbuf);
			config_free(c);
			nfiles++;
		}
		closedir(sub);
	}
	closedir(top);
	CHECK_MSG(nfiles >= 10, "found %d config files, expected at least 10", nfiles);
}

/* ---- what the real files hold ---- */

static void test_v2_sgemm_5760(void)
{
	struct config *c = load_file("v2.4.5/sgemm_5760.yaml");
	const struct config_phase *fork, *join, *common;
	const struct config_param *p;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->form == 2);
	CHECK(c->nproblems == 4);
	CHECK(name_is(c, 0, "Cij_Aik_Bkj_SB")); /* NN */
	CHECK(name_is(c, 1, "Cij_Aik_Bjk_SB")); /* NT */
	CHECK(name_is(c, 2, "Cij_Aki_Bkj_SB")); /* TN */
	CHECK(name_is(c, 3, "Cij_Aki_Bjk_SB")); /* TT */
	CHECK(c->problems[0].ngroups == 1 && c->problems[0].form == 2);
	CHECK(json_is(json_object_get(c->problems[1].problem_type, "IndexAssignmentsB"), "[1, 2]"));
	CHECK(json_is(json_object_get(c->problems[1].problem_type, "TransposeB"), "true"));
	CHECK(json_is(json_object_get(c->problems[0].problem_type, "TransposeB"), "false"));
	CHECK(json_is(json_object_get(c->problems[0].problem_type, "Name"), "\"Cij_Aik_Bkj_SB\""));
	fork = phase(c, 0, 0, PH_FORK);
	CHECK(fork->present && !fork->empty && fork->nsteps == 8);
	CHECK(fork->steps[0].nparams == 1 &&
	      strcmp(fork->steps[0].params[0].name, "LoopTail") == 0);
	CHECK(json_is(fork->steps[0].params[0].values, "[false, true]"));
	CHECK(json_is(fork->steps[1].params[0].values, "[\"None\", \"Branch\", \"Shift\"]"));
	CHECK(fork->steps[1].params[0].line == 39 && fork->steps[1].params[0].col == 9);
	/* commented out: absent, not empty */
	CHECK(!phase(c, 0, 0, PH_BENCH_FORK)->present);
	CHECK(!phase(c, 0, 0, PH_INITIAL)->present);
	join = phase(c, 0, 0, PH_JOIN);
	CHECK(join->present && join->nsteps == 1 && join->steps[0].nparams == 1);
	CHECK(strcmp(join->steps[0].params[0].name, "MacroTile") == 0);
	CHECK(join->steps[0].params[0].values == NULL);
	common = phase(c, 0, 0, PH_COMMON);
	CHECK(common->nsteps == 6 && common->steps[0].has_sizes && common->steps[0].nparams == 0);
	CHECK(common->steps[0].sizes.nranges == 1 && common->steps[0].sizes.nexact == 0);
	CHECK(range_count(&common->steps[0].sizes, 0, 3) == 1);
	p = config_step_find(&common->steps[3], "NumLoadsCoalescedB");
	CHECK(p && json_is(p->values, "[1]"));
	CHECK(c->global && json_is(json_object_get(c->global, "PrintLevel"), "1"));
	CHECK(c->library_logic == NULL && !c->library_client);
	config_free(c);
}

static void test_v2_tensor_contraction(void)
{
	struct config *c = load_file("v2.4.5/tensor_contraction.yaml");
	const struct config_phase *join, *final;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->form == 2 && c->nproblems == 1);
	CHECK(name_is(c, 0, "Cijk_Ailk_Bjlk_SB")); /* batched NT */
	CHECK(c->problems[0].type->nidx == 4);
	CHECK(c->problems[0].type->idx[2].cls == IDX_BATCH &&
	      c->problems[0].type->idx[3].cls == IDX_BOUND);
	CHECK(phase(c, 0, 0, PH_BENCH_FORK)->present && phase(c, 0, 0, PH_BENCH_FORK)->empty);
	CHECK(phase(c, 0, 0, PH_BENCH_FORK)->nsteps == 0);
	join = phase(c, 0, 0, PH_JOIN);
	CHECK(join->nsteps == 1 && join->steps[0].nparams == 2);
	CHECK(strcmp(join->steps[0].params[1].name, "DepthU") == 0);
	/* v2 sizes: [ [16, 128], [16, 128], [2, 2, 4], [256] ] = 8 * 8 * 2 * 1 */
	final = phase(c, 0, 0, PH_FINAL);
	CHECK(final->nsteps == 1 && final->steps[0].has_sizes);
	CHECK(final->steps[0].sizes.nranges == 1 && final->steps[0].sizes.line == 49);
	CHECK(range_count(&final->steps[0].sizes, 0, 4) == 128);
	CHECK(json_is(c->library_logic, "{\"BranchPenalty\": 0}"));
	CHECK(c->library_client);
	config_free(c);
}

static void test_v3_tensor_contraction(void)
{
	struct config *c = load_file("v3.0.0/tensor_contraction.yaml");
	const struct tcx_contraction *t;
	const struct config_step *s;
	const struct config_phase *fork;
	static const int64_t layer1[7] = {32, 32, 32, 100, 3, 5, 5};
	static const int64_t layer3[7] = {8, 8, 64, 100, 32, 5, 5};

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(c->form == 3 && c->nproblems == 2);
	CHECK(c->problems[0].ngroups == 1 && c->problems[1].ngroups == 1);
	CHECK(name_is(c, 0, "Cijk_Ailk_Bjlk_SB"));
	/* the 7-index convolution: free {0,2}, batch {1,3}, bound {4,5,6} */
	CHECK(name_is(c, 1, "Cijkl_Aonijml_Bonjmkl_SB"));
	t = c->problems[1].type;
	CHECK(t->nidx == 7 && t->rank[T_C] == 4 && t->rank[T_A] == 6 && t->rank[T_B] == 6);
	CHECK(t->idx[0].cls == IDX_FREE_A && t->idx[2].cls == IDX_FREE_B);
	CHECK(t->idx[1].cls == IDX_BATCH && t->idx[3].cls == IDX_BATCH);
	CHECK(t->idx[4].cls == IDX_BOUND && t->idx[5].cls == IDX_BOUND &&
	      t->idx[6].cls == IDX_BOUND);
	CHECK(
	    json_is(json_object_get(c->problems[1].problem_type, "IndicesSummation"), "[4, 5, 6]"));
	CHECK(json_is(json_object_get(c->problems[1].problem_type, "IndexAssignmentsA"),
		      "[6, 5, 0, 1, 4, 3]"));
	CHECK(json_is(json_object_get(c->problems[1].problem_type, "DataType"), "\"s\""));
	CHECK(phase(c, 1, 0, PH_INITIAL)->present && phase(c, 1, 0, PH_INITIAL)->empty);
	s = &phase(c, 1, 0, PH_COMMON)->steps[0];
	CHECK(s->has_sizes && s->nparams == 0 && s->sizes.nexact == 3 && s->sizes.nranges == 0);
	CHECK(s->sizes.exact && memcmp(s->sizes.exact, layer1, sizeof(layer1)) == 0);
	CHECK(s->sizes.exact && memcmp(s->sizes.exact + 14, layer3, sizeof(layer3)) == 0);
	fork = phase(c, 1, 0, PH_FORK);
	CHECK(fork->nsteps == 3);
	CHECK(json_is(config_step_find(&fork->steps[0], "ThreadTile")->values, "[[4, 4], [2, 2]]"));
	CHECK(json_is(fork->steps[1].params[0].values, "[[4, 8, 2], [8, 8, 1], [16, 16, 1]]"));
	CHECK(config_step_find(&fork->steps[0], "WorkGroup") == NULL);
	CHECK(json_is(c->library_logic,
		      "{\"ScheduleName\": \"Fiji\", \"DeviceNames\": [\"R9 Nano\"]}"));
	/* the first problem's final sizes: 8 * 8 * 2 * 1 */
	s = &phase(c, 0, 0, PH_FINAL)->steps[0];
	CHECK(s->sizes.nranges == 1 && range_count(&s->sizes, 0, 4) == 128);
	config_free(c);
}

static void test_v3_other_files(void)
{
	struct config *c;
	const struct config_step *s;

	c = load_file("v3.3.7/test_sgemm_defaults.yaml");
	CHECK(c != NULL);
	if (c) {
		CHECK(c->nproblems == 4 && c->global == NULL && c->library_logic == NULL);
		CHECK(name_is(c, 0, "Cij_Aik_Bjk_S")); /* UseBeta False */
		CHECK(name_is(c, 3, "Cij_Aki_Bjk_SB"));
		for (int p = 0; p < c->nproblems; p++) {
			CHECK(c->problems[p].ngroups == 1);
			for (int ph = 0; ph < PH_COUNT; ph++)
				CHECK(!phase(c, p, 0, ph)->present);
		}
		config_free(c);
	}

	c = load_file("v3.0.0/test_sgemm.yaml");
	CHECK(c != NULL);
	if (c) {
		CHECK(c->nproblems == 4 && c->problems[0].ngroups == 3);
		CHECK(name_is(c, 0, "Cijk_Ailk_Bljk_S")); /* batched NN */
		CHECK(name_is(c, 1, "Cij_Aik_Bjk_S"));
		CHECK(!phase(c, 0, 0, PH_INITIAL)->present && !phase(c, 0, 0, PH_JOIN)->present);
		s = &phase(c, 0, 0, PH_FINAL)->steps[0];
		CHECK(s->sizes.nexact == 1 && s->sizes.nranges == 1);
		CHECK(s->sizes.exact && s->sizes.exact[0] == 1 && s->sizes.exact[3] == 1);
		/* [127,1,129] x [127,1,129] x [1,2] x [63,1,65] */
		CHECK(range_count(&s->sizes, 0, 4) == 3 * 3 * 2 * 3);
		s = &phase(c, 0, 1, PH_COMMON)->steps[2];
		CHECK(json_is(config_step_find(s, "WorkGroup")->values, "[[8, 8, 2]]"));
		/* [8, 32, 0, 75] = 8, 40, 72 */
		s = &phase(c, 0, 2, PH_FINAL)->steps[0];
		CHECK(range_count(&s->sizes, 0, 4) == 3 * 3 * 1 * 2);
		config_free(c);
	}

	c = load_file("v3.3.7/rocblas_sgemm_asm_lite.yaml");
	CHECK(c != NULL);
	if (c) {
		CHECK(c->nproblems == 4 && c->problems[0].ngroups == 2);
		CHECK(name_is(c, 1, "Cijk_Ailk_Bjlk_SB"));
		s = &phase(c, 0, 0, PH_COMMON)->steps[0];
		CHECK(s->sizes.nexact == 1 && s->sizes.exact[0] == 5504 &&
		      s->sizes.exact[3] == 3104);
		s = &phase(c, 0, 0, PH_FINAL)->steps[0];
		CHECK(s->sizes.nranges == 1 && range_count(&s->sizes, 0, 4) == 15 * 15);
		CHECK(phase(c, 0, 1, PH_JOIN)->present && phase(c, 0, 1, PH_JOIN)->empty);
		s = &phase(c, 0, 1, PH_FINAL)->steps[0];
		CHECK(s->sizes.nranges == 3 && range_count(&s->sizes, 1, 4) == 15);
		CHECK(json_is(c->library_logic, "{}"));
		config_free(c);
	}

	c = load_file("v2.0.0/sgemm.yaml");
	CHECK(c != NULL);
	if (c) {
		CHECK(name_is(c, 0, "Cij_Aik_Bjk_SB"));
		s = &phase(c, 0, 0, PH_COMMON)->steps[2];
		CHECK(s->nparams == 2 && strcmp(s->params[1].name, "EdgeMultiKernel") == 0);
		CHECK(json_is(c->library_logic, "{\"Dilation\": 3, \"Threshold\": 0.1}"));
		config_free(c);
	}

	c = load_file("v3.3.7/test_tensor_contraction.yaml");
	CHECK(c != NULL);
	if (c) {
		CHECK(c->nproblems == 4);
		CHECK(name_is(c, 1, "Cij_Akil_Bkjl_SB"));
		CHECK(name_is(c, 2, "Cij_Amlik_Bmlkj_SB"));
		CHECK(c->problems[3].type->nidx == 6);
		config_free(c);
	}
}

/* ---- the grammar, from strings ---- */

#define GEMM_NT "    - {OperationType: GEMM, DataType: s}\n"

static void test_errors(void)
{
	struct config *c;
	struct tcx_error err;

	/* malformed YAML: an unclosed bracket (libyaml notices at the ':' of the next key) */
	CHECK(load_str("GlobalParameters:\n  PrintLevel: [1, 2\n  Device: 0\n", &c, &err) ==
	      TCX_EPARSE);
	CHECK(c == NULL);
	CHECK_MSG(err.line == 3 && err.col == 9, "line %u col %u", err.line, err.col);
	CHECK_MSG(strncmp(err.msg, "t.yaml:3:9: malformed YAML: ", 28) == 0, "%s", err.msg);
	CHECK(strstr(err.msg, "flow sequence") != NULL);

	CHECK(load_str("BenchmarkProblems: [[{OperationType: GEMM, DataType: s}]\n", &c, &err) ==
	      TCX_EPARSE);
	CHECK_MSG(err.line == 2 && strstr(err.msg, "t.yaml:2:"), "%s", err.msg);

	/* not a mapping; empty */
	CHECK(load_str("- 1\n- 2\n", &c, &err) == TCX_EPARSE && err.line == 1 && err.col == 1);
	CHECK(strstr(err.msg, "must be a mapping") != NULL);
	CHECK(load_str("", &c, &err) == TCX_EPARSE && strstr(err.msg, "empty config"));
	CHECK(load_str("# only a comment\n", &c, &err) == TCX_EPARSE);
	CHECK(load_str("---\n...\n", &c, &err) == TCX_EPARSE);
	CHECK(load_str("a: 1\n---\nb: 2\n", &c, &err) == TCX_EPARSE && err.line == 2);
	CHECK(load_str("a: \"\\0\"\n", &c, &err) == TCX_EPARSE);
	CHECK(load_str("a: \xff\n", &c, &err) == TCX_EPARSE && err.line == 1 && err.col == 4);

	/* a phase that is not a list */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT "    - ForkParameters: {DepthU: [8]}\n",
		       &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 4 && strstr(err.msg, "'ForkParameters' must be a list"), "%s",
		  err.msg);
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT "    - ForkParameters: 3\n", &c, &err) ==
	      TCX_EPARSE);
	/* a step that is not a mapping */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - ForkParameters:\n        - [DepthU, 8]\n",
		       &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 5 && err.col == 11 && strstr(err.msg, "each step"), "%s", err.msg);
	/* a group that is not a mapping; an entry that is neither form */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT "    - [1]\n", &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  - 7\n", &c, &err) == TCX_EPARSE && err.line == 2);
	CHECK(load_str("BenchmarkProblems: {a: 1}\n", &c, &err) == TCX_EPARSE);
	CHECK(load_str("GlobalParameters: [1]\n", &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  - {DataType: s}\n", &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "no 'ProblemType'"));

	/* missing DataType, bad DataType, bad OperationType */
	CHECK(
	    load_str("BenchmarkProblems:\n  -\n    - OperationType: GEMM\n      TransposeA: True\n",
		     &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 3 && err.col == 7 && strstr(err.msg, "no 'DataType'"), "%s", err.msg);
	CHECK(load_str("BenchmarkProblems:\n  -\n    - {OperationType: GEMM, DataType: q}\n", &c,
		       &err) == TCX_EPARSE &&
	      strstr(err.msg, "unknown DataType 'q'"));
	CHECK(load_str("BenchmarkProblems:\n  -\n    - {OperationType: Conv, DataType: s}\n", &c,
		       &err) == TCX_EPARSE &&
	      strstr(err.msg, "unknown OperationType 'Conv'"));
	CHECK(load_str("BenchmarkProblems:\n  -\n    - {DataType: s, TransposeA: maybe}\n", &c,
		       &err) == TCX_EPARSE &&
	      strstr(err.msg, "'TransposeA' must be True or False"));

	/* bad IndexAssignments */
#define TC(nc, a, b)                                                                               \
	"BenchmarkProblems:\n  -\n    - OperationType: TensorContraction\n      DataType: s\n"     \
	"      NumIndicesC: " nc "\n      IndexAssignmentsA: " a "\n      IndexAssignmentsB: " b   \
	"\n"
	CHECK(load_str(TC("3", "[0, 3, 2]", "[1, 2]"), &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 3 && strstr(err.msg, "summation index 3 ('l')") &&
		      strstr(err.msg, "only in IndexAssignmentsA"),
		  "%s", err.msg);
	CHECK(load_str(TC("3", "[0, 3]", "[1, 3]"), &c, &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "index 2 ('k') of C is in neither"), "%s", err.msg);
	CHECK(load_str(TC("2", "[0, 2, 2]", "[1, 2]"), &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 6 && err.col == 33 && strstr(err.msg, "appears twice"), "%s",
		  err.msg);
	CHECK(load_str(TC("2", "[0, 4]", "[1, 4]"), &c, &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "summation index 2 ('k')") && strstr(err.msg, "in neither"), "%s",
		  err.msg);
	CHECK(load_str(TC("2", "[0, x]", "[1, 2]"), &c, &err) == TCX_EPARSE && err.line == 6);
	CHECK(load_str(TC("2", "[0, 99]", "[1, 99]"), &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "out of range"));
	CHECK(load_str(TC("2", "0", "[1, 2]"), &c, &err) == TCX_EPARSE);
	CHECK(load_str(TC("x", "[0, 2]", "[1, 2]"), &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "'NumIndicesC'"));
	CHECK(load_str(
		  "BenchmarkProblems:\n  -\n    - {OperationType: TensorContraction, DataType: s, "
		  "IndexAssignmentsA: [0, 2], IndexAssignmentsB: [1, 2]}\n",
		  &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "no 'NumIndicesC'"));

	/* Exact with the wrong count; a bad range */
#define SIZES(body)                                                                                \
	"BenchmarkProblems:\n  -\n" GEMM_NT "    - BenchmarkCommonParameters:\n"                   \
	"        - ProblemSizes:\n" body
	CHECK(load_str(SIZES("          - Exact: [1024, 1024]\n"), &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 6 && err.col == 20 && strstr(err.msg, "has 2 sizes") &&
		      strstr(err.msg, "3 indices"),
		  "%s", err.msg);
	CHECK(load_str(SIZES("          - Exact: [1024, 0, 4]\n"), &c, &err) == TCX_ERANGE);
	CHECK(load_str(SIZES("          - Exact: [1024, a, 4]\n"), &c, &err) == TCX_EPARSE);
	CHECK(load_str(SIZES("          - Range: [[16, 8], 0, 0]\n"), &c, &err) == TCX_ERANGE);
	CHECK_MSG(err.line == 6 && err.col == 20, "%s", err.msg);
	CHECK(load_str(SIZES("          - Range: [[1, 2, 3, 4, 5], 0, 0]\n"), &c, &err) ==
	      TCX_EPARSE);
	CHECK(load_str(SIZES("          - Range: [[], 0, 0]\n"), &c, &err) == TCX_EPARSE);
	CHECK(load_str(SIZES("          - Range: [[[4]], 0, 0]\n"), &c, &err) == TCX_EPARSE);
	CHECK(load_str(SIZES("          - Range: [[16], 7, 0]\n"), &c, &err) == TCX_EINVAL);
	CHECK(load_str(SIZES("          - Ragne: [[16], 0, 0]\n"), &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "'Ragne'"));
	CHECK(load_str(SIZES("          - Exact: [1, 2, 3]\n          - [4]\n"), &c, &err) ==
	      TCX_EPARSE);
	CHECK(load_str(SIZES("          3\n"), &c, &err) == TCX_EPARSE);
	CHECK(load_str(SIZES("          []\n"), &c, &err) == TCX_EPARSE);
	/* ProblemSizes only where Tensile reads it */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - ForkParameters:\n        - ProblemSizes: [[16], 0, 0]\n",
		       &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "not allowed in 'ForkParameters'"));

	/* parameters: no values, a mapping */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - ForkParameters:\n        - DepthU:\n",
		       &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - ForkParameters:\n        - DepthU: []\n",
		       &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - ForkParameters:\n        - DepthU: {a: 1}\n",
		       &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - JoinParameters:\n        - MacroTile: [1]\n",
		       &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - JoinParameters: [MacroTile, MacroTile]\n",
		       &c, &err) == TCX_EPARSE &&
	      strstr(err.msg, "twice"));

	/* aliases, duplicate keys, complex keys, the Expression */
	CHECK(load_str("GlobalParameters: &g {a: 1}\nLibraryLogic: *g\n", &c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 2 && err.col == 15 && strstr(err.msg, "aliases ('*g')"), "%s",
		  err.msg);
	CHECK(load_str("GlobalParameters: {a: 1}\nGlobalParameters: {a: 2}\n", &c, &err) ==
	      TCX_EPARSE);
	CHECK_MSG(err.line == 2 && strstr(err.msg, "duplicate key 'GlobalParameters'"), "%s",
		  err.msg);
	CHECK(load_str("? [a]\n: 1\n", &c, &err) == TCX_EPARSE && strstr(err.msg, "mapping key"));
	CHECK(
	    load_str(
		"BenchmarkProblems:\n  -\n    - {Expression: \"C[ij]=A[ik]*B[kn]\", DataType: s}\n",
		&c, &err) == TCX_EPARSE);
	CHECK_MSG(err.line == 3 && strstr(err.msg, "cannot parse Expression"), "%s", err.msg);
	CHECK(load_str(
		  "BenchmarkProblems:\n  -\n    - {Expression: \"ik,kj->ij\", OperationType: GEMM, "
		  "DataType: s}\n",
		  &c, &err) == TCX_EPARSE);
	CHECK(load_str("BenchmarkProblems:\n  -\n    - {Expression: [1], DataType: s}\n", &c,
		       &err) == TCX_EPARSE);
}

static void test_limits(void)
{
	struct config *c;
	struct tcx_error err;
	char *deep = malloc(400);
	size_t n = 0;

	/* nesting beyond CONFIG_MAX_DEPTH */
	n += (size_t)snprintf(deep, 400, "a: ");
	for (int k = 0; k < 100; k++)
		deep[n++] = '[';
	deep[n] = '\0';
	CHECK(load_str(deep, &c, &err) == TCX_EPARSE && strstr(err.msg, "nested"));
	free(deep);
	/* more than CONFIG_MAX_BYTES */
	CHECK(config_load_string("a: 1", (size_t)CONFIG_MAX_BYTES + 1, "big", &c, &err) ==
	      TCX_EPARSE);
	CHECK(c == NULL);
	/* a missing file */
	CHECK(config_load("/nonexistent/tcx.yaml", &c, &err) == TCX_EIO && c == NULL);
	config_free(NULL);
}

/* The timing settings of GlobalParameters are checked where they are
 * written, as tcx tune checks --min-time and --min-reps: no NaN, infinity,
 * negative time or count past the launches a measurement makes. */
static void test_timing(void)
{
	static const char *const bad_time[] = {".nan",	".inf",	   "-.inf", "-1",  "-0.5",
					       "1e999", "\"0.1\"", "soon",  "[1]", "~"};
	static const char *const bad_reps[] = {
	    "0", "-3", "100001", "99999999999999", "99999999999999999999", "2.5", "\"5\"", ".nan"};
	static const char *const good[] = {"MinTime: 0", "MinTime: 0.25", "MinTime: 3",
					   "MinReps: 1", "MinReps: 100000"};
	struct config *c;
	struct tcx_error err;
	char yaml[256];

	for (size_t k = 0; k < ARRAY_SIZE(bad_time); k++) {
		snprintf(yaml, sizeof(yaml), "GlobalParameters:\n  MinTime: %s\n", bad_time[k]);
		CHECK_MSG(load_str(yaml, &c, &err) == TCX_EPARSE, "MinTime: %s", bad_time[k]);
		CHECK(c == NULL);
		CHECK_MSG(err.line == 2 && err.col == 12 &&
			      strstr(err.msg, "t.yaml:2:12: MinTime must be a number of seconds"),
			  "%s", err.msg);
	}
	for (size_t k = 0; k < ARRAY_SIZE(bad_reps); k++) {
		snprintf(yaml, sizeof(yaml), "GlobalParameters:\n  MinReps: %s\n", bad_reps[k]);
		CHECK_MSG(load_str(yaml, &c, &err) == TCX_EPARSE, "MinReps: %s", bad_reps[k]);
		CHECK_MSG(strstr(err.msg, "t.yaml:2:12: MinReps must be a whole number from 1 to "
					  "100000"),
			  "%s", err.msg);
	}
	for (size_t k = 0; k < ARRAY_SIZE(good); k++) {
		snprintf(yaml, sizeof(yaml), "GlobalParameters:\n  %s\n", good[k]);
		CHECK_MSG(load_str(yaml, &c, &err) == TCX_OK, "%s: %s", good[k], err.msg);
		config_free(c);
	}
}

/* Sizes past 64 bits are too large, not values of the wrong kind. */
static void test_huge_sizes(void)
{
	struct config *c;
	struct tcx_error err;

	CHECK(load_str(SIZES("          - Exact: [1024, 9223372036854775808, 4]\n"), &c, &err) ==
	      TCX_ERANGE);
	CHECK_MSG(err.line == 6 && err.col == 27 &&
		      strstr(err.msg, "size 9223372036854775808 is too large (the largest is "
				      "9223372036854775807)"),
		  "%s", err.msg);
	CHECK(load_str(SIZES("          - Exact: [1024, -9223372036854775809, 4]\n"), &c, &err) ==
	      TCX_ERANGE);
	CHECK_MSG(strstr(err.msg, "at least 1"), "%s", err.msg);
	CHECK(load_str(SIZES("          - Range: [[16, 1, 18446744073709551616], 0, 0]\n"), &c,
		       &err) == TCX_ERANGE);
	CHECK_MSG(strstr(err.msg, "size 18446744073709551616 is too large"), "%s", err.msg);
	/* what is no number at all keeps its message */
	CHECK(load_str(SIZES("          - Exact: [1024, 1e3, 4]\n"), &c, &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "holds a single value where a whole number belongs"), "%s",
		  err.msg);
}

static void test_accepted(void)
{
	struct config *c;
	struct tcx_error err;
	const struct config_phase *ph;
	const struct config_step *s;

	/* an unknown top-level key: refused with its place, and the key meant
	 * when one is close */
	CHECK(load_str("Foo: 1\nBenchmarkProblems:\n  -\n" GEMM_NT, &c, &err) == TCX_EPARSE);
	CHECK(c == NULL);
	CHECK_MSG(strstr(err.msg, "t.yaml:1:1: unknown key 'Foo' (expected GlobalParameters,"),
		  "msg: %s", err.msg);
	CHECK(load_str("GlobalParameter: {}\n", &c, &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "unknown key 'GlobalParameter'; did you mean "
				  "'GlobalParameters'?"),
		  "msg: %s", err.msg);
	CHECK(load_str("Parameters: {}\n", &c, &err) == TCX_EPARSE);
	CHECK(strstr(err.msg, "'GlobalParameters'") != NULL);

	/* an unknown phase key in a group: refused (its steps would be lost) */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT "    - ForkParamters: [{DepthU: [8]}]\n",
		       &c, &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "t.yaml:4:7: unknown key 'ForkParamters' in a benchmark group; "
				  "did you mean 'ForkParameters'?"),
		  "msg: %s", err.msg);
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT "    - Forks: [{DepthU: [8]}]\n", &c,
		       &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "unknown key 'Forks' in a benchmark group (expected a phase"),
		  "msg: %s", err.msg);

	/* a near miss of a global parameter tcx reads: refused; Tensile's
	 * others load */
	CHECK(load_str("GlobalParameters: {MinTim: 1}\n", &c, &err) == TCX_EPARSE);
	CHECK_MSG(strstr(err.msg, "t.yaml:1:20: unknown key 'MinTim' in GlobalParameters; did you "
				  "mean 'MinTime'?"),
		  "msg: %s", err.msg);
	CHECK(load_str("GlobalParameters: {PrintLevel: 1, EnqueuesPerSync: 1}\n", &c, &err) ==
	      TCX_OK);
	config_free(c);

	/* a scalar parameter value: a one-value list, with a warning */
	CHECK(load_str("BenchmarkProblems:\n  -\n" GEMM_NT
		       "    - ForkParameters:\n        - DepthU: 16\n          EdgeType: None\n"
		       "      InitialSolutionParameters:\n        - LoopTail: True\n",
		       &c, &err) == TCX_OK);
	if (c) {
		s = &c->problems[0].groups[0].phase[PH_FORK].steps[0];
		CHECK(s->nparams == 2 && json_is(s->params[0].values, "[16]"));
		CHECK(json_is(s->params[1].values, "[\"None\"]"));
		CHECK(s->params[0].line == 5 && s->params[0].col == 11);
		s = &c->problems[0].groups[0].phase[PH_INITIAL].steps[0];
		CHECK(json_is(s->params[0].values, "[true]"));
	}
	CHECK_MSG(strstr(logbuf, "t.yaml:5:19: 'DepthU' takes a list of values"), "log: %s",
		  logbuf);
	CHECK(nwarn == 2); /* DepthU and EdgeType, not the initial LoopTail */
	config_free(c);

	/* YAML scalars as JSON */
	CHECK(
	    load_str("GlobalParameters: {i: -12, f: 0.5, e: 1e3, t: true, T: True, n: ~, nn: null, "
		     "s: abc, q: \"12\", none: None, inf: .inf, v: 3.0.0}\n",
		     &c, &err) == TCX_OK);
	CHECK(c && json_is(c->global, "{\"i\": -12, \"f\": 0.5, \"e\": 1000.0, \"t\": true, "
				      "\"T\": true, \"n\": null, \"nn\": null, \"s\": \"abc\", "
				      "\"q\": \"12\", \"none\": \"None\", \"inf\": \".inf\", "
				      "\"v\": \"3.0.0\"}"));
	config_free(c);

	/* present-but-null vs absent vs [] */
	CHECK(load_str("GlobalParameters:\nLibraryLogic:\nLibraryClient:\nBenchmarkProblems:\n  "
		       "-\n" GEMM_NT "    - ForkParameters:\n      JoinParameters: []\n",
		       &c, &err) == TCX_OK);
	if (c) {
		CHECK(json_is(c->global, "{}") && json_is(c->library_logic, "{}") &&
		      c->library_client);
		ph = c->problems[0].groups[0].phase;
		CHECK(ph[PH_FORK].present && ph[PH_FORK].empty && ph[PH_FORK].nsteps == 0);
		CHECK(ph[PH_JOIN].present && ph[PH_JOIN].empty);
		CHECK(!ph[PH_COMMON].present && !ph[PH_COMMON].empty);
	}
	config_free(c);

	/* GEMM defaults: TransposeB True; batched forms; Tensile's DataType number; conj; HPA */
	CHECK(load_str("BenchmarkProblems:\n"
		       "  - [{DataType: 0}]\n"
		       "  - [{OperationType: GEMM, DataType: s, Batched: True}]\n"
		       "  - [{OperationType: GEMM, DataType: d, Batched: True, TransposeA: True, "
		       "TransposeB: False, UseBeta: False}]\n"
		       "  - [{DataType: c, ComplexConjugateA: True}]\n"
		       "  - [{DataType: h, HighPrecisionAccumulate: True}]\n",
		       &c, &err) == TCX_OK);
	CHECK(name_is(c, 0, "Cij_Aik_Bjk_SB"));
	CHECK(name_is(c, 1, "Cijk_Ailk_Bjlk_SB"));
	CHECK(name_is(c, 2, "Cijk_Alik_Bljk_D"));
	CHECK(name_is(c, 3, "Cij_AikC_Bjk_CB"));
	CHECK(name_is(c, 4, "Cij_Aik_Bjk_HBH"));
	CHECK(c && c->problems[4].type->hpa && c->problems[3].type->conj[T_A]);
	config_free(c);

	/* NumDimensionsC: read as NumIndicesC with a warning */
	CHECK(load_str(TC("2", "[0, 2]", "[2, 1]"), &c, &err) == TCX_OK);
	CHECK(name_is(c, 0, "Cij_Aik_Bkj_SB"));
	config_free(c);
	CHECK(load_str(
		  "BenchmarkProblems:\n  -\n    - {OperationType: TensorContraction, DataType: s, "
		  "NumDimensionsC: 2, IndexAssignmentsA: [0, 2], IndexAssignmentsB: [2, 1]}\n",
		  &c, &err) == TCX_OK);
	CHECK(name_is(c, 0, "Cij_Aik_Bkj_SB"));
	CHECK(strstr(logbuf, "'NumDimensionsC' read as 'NumIndicesC'") != NULL);
	config_free(c);

	/* tcx's Expression, in both notations, with sizes for its nidx */
	CHECK(load_str("BenchmarkProblems:\n"
		       "  -\n    - {Expression: \"C[ijk]=A[ilk]*B[jlk]\", DataType: s}\n"
		       "    - BenchmarkFinalParameters:\n"
		       "        - ProblemSizes:\n          - Range: [[16, 128], 0, [2], [64]]\n"
		       "          - Exact: [1, 2, 3, 4]\n"
		       "  -\n    - {Expression: \"ik,kj->ij\", DataType: d}\n",
		       &c, &err) == TCX_OK);
	CHECK_MSG(c != NULL, "%s", err.msg);
	if (c) {
		CHECK(name_is(c, 0, "Cijk_Ailk_Bjlk_S"));
		CHECK(json_is(json_object_get(c->problems[0].problem_type, "IndexAssignmentsB"),
			      "[1, 3, 2]"));
		s = &c->problems[0].groups[0].phase[PH_FINAL].steps[0];
		CHECK(s->sizes.nranges == 1 && s->sizes.nexact == 1 && s->sizes.exact[3] == 4);
		CHECK(range_count(&s->sizes, 0, 4) == 8);
		CHECK(c->problems[1].type->nidx == 3 && c->problems[1].type->dtype == TCX_DTYPE_D);
	}
	config_free(c);

	/* later Tensile's longer Exact: warned and skipped */
	CHECK(load_str(SIZES("          - Exact: [64, 64, 64, 64, 64, 64, 64]\n"
			     "          - Exact: {sizes: [1, 2, 3]}\n"
			     "          - Exact: [8, 8, 8]\n"),
		       &c, &err) == TCX_OK);
	if (c) {
		s = &c->problems[0].groups[0].phase[PH_COMMON].steps[0];
		CHECK(s->sizes.nexact == 1 && s->sizes.exact[0] == 8);
	}
	CHECK(nwarn == 2);
	config_free(c);

	/* a Range longer than the problem's indices: the extras ignored, with the place */
	CHECK(load_str(SIZES("          - Range: [[16], 0, 0, [5]]\n"), &c, &err) == TCX_OK);
	CHECK(nwarn == 1 && strstr(logbuf, "t.yaml:6:20: Range has 4 entries") != NULL);
	CHECK(c &&
	      range_count(&c->problems[0].groups[0].phase[PH_COMMON].steps[0].sizes, 0, 3) == 1);
	config_free(c);

	/* v2 entry with nothing but ProblemType: one group, all absent */
	CHECK(load_str("BenchmarkProblems:\n  - ProblemType: {DataType: s}\n", &c, &err) == TCX_OK);
	CHECK(c && c->form == 2 && c->problems[0].ngroups == 1);
	CHECK(c && !c->problems[0].groups[0].phase[PH_FINAL].present);
	config_free(c);
}

/* A ProblemType reads the same in a config as in a Tensile logic file (one
 * reader, lib/logic/ptype.h): the same contraction in the same words, and
 * the same fault in the same words. */
static void test_shared_problem_type(void)
{
	static const struct {
		const char *pt, *order, *expr;
	} cases[] = {
	    {"{OperationType: GEMM, DataType: s, TransposeA: False, TransposeB: True, Batched: "
	     "True}",
	     "[2, 3, 0, 1]", "C[ijk] = Sum[l] A[ilk] * B[jlk] + beta*C[ijk]"},
	    {"{OperationType: TensorContraction, DataType: d, NumIndicesC: 2, IndexAssignmentsA: "
	     "[2, 0], IndexAssignmentsB: [2, 1], UseBeta: False}",
	     "[2, 0, 1]", "C[ij] = Sum[k] A[ki] * B[kj]"},
	    {"{DataType: s, UseBeta: maybe}", "[0, 1, 2]", NULL},
	};
	char cfg[512], lgc[512];

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct config *c = NULL;
		struct logic *l = NULL;
		struct tcx_error cerr, lerr;
		enum tcx_status cst, lst;

		snprintf(cfg, sizeof(cfg), "BenchmarkProblems:\n  - [%s]\n", cases[k].pt);
		snprintf(lgc, sizeof(lgc),
			 "- {MinimumRequiredVersion: 3.0.0}\n- Tensile\n- default\n- %s\n- []\n"
			 "- %s\n- []\n- null\n",
			 cases[k].pt, cases[k].order);
		cst = load_str(cfg, &c, &cerr);
		memset(&lerr, 0, sizeof(lerr));
		lst = logic_load_string(lgc, strlen(lgc), "t.yaml", &l, &lerr);
		if (cases[k].expr) {
			CHECK_MSG(cst == TCX_OK && lst == TCX_OK, "%s: %s / %s", cases[k].pt, cerr.msg,
				  lerr.msg);
			if (c && l) {
				CHECK_MSG(strcmp(c->problems[0].type->expr, cases[k].expr) == 0,
					  "config: %s", c->problems[0].type->expr);
				CHECK_MSG(strcmp(l->type->expr, cases[k].expr) == 0, "logic: %s",
					  l->type->expr);
			}
		} else {
			const char *want = ": 'UseBeta' must be True or False, found 'maybe'";

			CHECK(cst == TCX_EPARSE && lst == TCX_EPARSE);
			CHECK_MSG(strstr(cerr.msg, "t.yaml:2:") && strstr(cerr.msg, want), "%s",
				  cerr.msg);
			CHECK_MSG(strstr(lerr.msg, "t.yaml:4:") && strstr(lerr.msg, want), "%s",
				  lerr.msg);
		}
		config_free(c);
		logic_free(l);
	}
}

int main(void)
{
	tcx_log_set(log_hook, NULL, TCX_LOG_WARN);
	test_all_files();
	test_v2_sgemm_5760();
	test_v2_tensor_contraction();
	test_v3_tensor_contraction();
	test_v3_other_files();
	test_errors();
	test_limits();
	test_timing();
	test_huge_sizes();
	test_accepted();
	test_shared_problem_type();
	return check_done();
}

/* test_notation.c - the notation parser, index classification, D0/D1/DU and
 * the host reference, through the internal and the public API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend/host/host.h"
#include "notation/notation.h"

static struct tcx_contraction *parse(const char *e)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;

	if (notation_parse(e, TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) != TCX_OK)
		fprintf(stderr, "parse '%s': %s\n", e, err.msg);
	return c;
}

static int id_of(const struct tcx_contraction *c, const char *n)
{
	return contraction_find(c, n);
}

static void test_classes(void)
{
	struct tcx_contraction *c = parse("C[ijk]=A[ilk]*B[jlk]");
	struct classification cls;
	char name[64];

	CHECK(c && c->nidx == 4);
	if (!c)
		return;
	CHECK(id_of(c, "i") == 0 && id_of(c, "j") == 1 && id_of(c, "k") == 2 && id_of(c, "l") == 3);
	CHECK(c->idx[0].cls == IDX_FREE_A && c->idx[1].cls == IDX_FREE_B);
	CHECK(c->idx[2].cls == IDX_BATCH && c->idx[3].cls == IDX_BOUND);
	contraction_tensile_name(c, name, sizeof(name));
	CHECK(strcmp(name, "Cijk_Ailk_Bjlk_S") == 0);
	model_classify(c, NULL, &cls);
	CHECK(cls.d0 == 0 && cls.d1 == 1 && cls.du == 3 && cls.d0_from_a);
	CHECK(cls.tlu[T_A] && cls.tlu[T_B]);
	contraction_free(c);

	/* einsum: last index fastest, so C's ids run k, j, i */
	c = parse("ilk,jlk->ijk");
	CHECK(c && id_of(c, "k") == 0 && id_of(c, "j") == 1 && id_of(c, "i") == 2);
	if (c) {
		model_classify(c, NULL, &cls);
		CHECK(cls.d0 == id_of(c, "j") && !cls.d0_from_a);
	}
	contraction_free(c);

	/* implicit output: once-appearing indices, sorted */
	c = parse("ba,ac");
	CHECK(c && c->rank[T_C] == 2 && strcmp(c->idx[c->written[T_C][0]].name, "b") == 0 &&
	      strcmp(c->idx[c->written[T_C][1]].name, "c") == 0);
	contraction_free(c);

	/* Tensile's 7-index convolution: DU = o by both rules */
	c = parse("C[i,j,k,l] = Sum[m,n,o] A[o,n,i,j,m,l] * B[o,n,j,m,k,l]");
	if (c) {
		model_classify(c, NULL, &cls);
		CHECK(cls.d0 == id_of(c, "i") && cls.d1 == id_of(c, "k"));
		CHECK(cls.du == id_of(c, "o") && cls.tensile_du == cls.du);
		CHECK(!cls.tlu[T_A] && !cls.tlu[T_B]);
		CHECK(c->idx[id_of(c, "j")].cls == IDX_BATCH && c->idx[id_of(c, "l")].cls == IDX_BATCH);
	}
	contraction_free(c);

	/* degenerate forms map to size-1 stand-ins */
	c = parse("C[]=A[k]*B[k]");
	if (c) {
		model_classify(c, NULL, &cls);
		CHECK(cls.d0 == IDX_VIRTUAL && cls.d1 == IDX_VIRTUAL && cls.du == 0);
	}
	contraction_free(c);
	c = parse("C[ij]=A[i]*B[j]");
	if (c) {
		model_classify(c, NULL, &cls);
		CHECK(cls.du == IDX_VIRTUAL && cls.d0 == 0 && cls.d1 == 1);
	}
	contraction_free(c);
}

static void test_du_by_stride(void)
{
	struct tcx_contraction *c = parse("C[i,j] = Sum[k,l] A[i,k,l] * B[j,l,k]");
	struct problem p;
	struct classification cls;
	struct tcx_error err;
	int64_t s1[4] = { 8, 8, 1000, 2 }, s2[4] = { 8, 8, 2, 1000 };

	if (!c)
		return;
	CHECK(problem_init(&p, c, s1, &err) == TCX_OK);
	model_classify(c, &p, &cls);
	CHECK(cls.du == id_of(c, "k")); /* A stride 8 + B stride 16 beats l's 8000 + 8 */
	CHECK(cls.tensile_du == id_of(c, "l"));
	CHECK(problem_init(&p, c, s2, &err) == TCX_OK);
	model_classify(c, &p, &cls);
	CHECK(cls.du == id_of(c, "l"));
	contraction_free(c);
}

static void test_errors(void)
{
	static const struct {
		const char *expr;
		unsigned col;
	} bad[] = {
		{ "", 1 },		       { "C[ij]=A[ik]*", 13 },	   { "C[ijn]=A[ik]*B[kj]", 5 },
		{ "C[ij]=A[ikk]*B[kj]", 11 }, { "C[ij=A[ik]*B[kj]", 2 },   { "ij,jk,kl->il", 7 },
		{ "C[ij]=A[ikl]*B[kj]", 11 }, { "...ij,jk->ik", 1 },	   { "C[ii]=A[ik]*B[ki]", 4 },
		/* beta scales the output, not another tensor */
		{ "C[ij]=A[ik]*B[kj]+beta*D[ij]", 24 }, { "C[ij]=A[ik]*B[kj]+beta*A[ik]", 24 },
		{ "C[ij]=A[ik]*B[kj]+beta*C[ik]", 24 },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct tcx_contraction *c = (void *)1;
		struct tcx_error err = { 0 };

		CHECK_MSG(notation_parse(bad[k].expr, TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) ==
				  TCX_EPARSE,
			  "'%s' parsed", bad[k].expr);
		CHECK(c == NULL);
		CHECK_MSG(err.col == bad[k].col, "'%s': col %u, want %u", bad[k].expr, err.col,
			  bad[k].col);
		CHECK(err.msg[0] != '\0');
	}
}

static void test_reference(void)
{
	/* a 2x3 by 3x2 GEMM by hand, through the public API */
	struct tcx_contraction *c = NULL;
	struct tcx_error err;
	int64_t sizes[3] = { 2, 2, 3 }; /* i, j, k */
	/* A[ik], first index fastest: A(i,k) = a[i + 2k] */
	float a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 0, -1, 2, 1, 0.5f }, cc[4] = { 1, 1, 1, 1 };
	double alpha = 2, beta = 0.5;
	char name[64];

	CHECK(tcx_contraction_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, &c, &err) == TCX_OK);
	if (!c)
		return;
	CHECK(tcx_contraction_num_indices(c) == 3);
	CHECK(strcmp(tcx_contraction_index_name(c, 2), "k") == 0);
	CHECK(tcx_contraction_index_name(c, 3) == NULL);
	tcx_contraction_name(c, name, sizeof(name));
	CHECK(strcmp(name, "Cij_Aik_Bkj_S") == 0);
	CHECK(tcx_contraction_reference(c, sizes, a, b, cc, &alpha, &beta, &err) == TCX_OK);
	/* B(k,j) = b[k + 3j]; C(i,j) = 2 * sum_k A(i,k) B(k,j) + 0.5 */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			double s = 0;

			for (int k = 0; k < 3; k++)
				s += a[i + 2 * k] * b[k + 3 * j];
			CHECK_MSG(fabs(cc[i + 2 * j] - (2 * s + 0.5)) < 1e-6, "C(%d,%d) = %g", i, j,
				  cc[i + 2 * j]);
		}
	tcx_contraction_destroy(c);
	CHECK(tcx_contraction_parse("C[ij]=A[ik]*", TCX_DTYPE_S, &c, &err) == TCX_EPARSE && !c);
	CHECK(strcmp(tcx_status_str(TCX_EMISMATCH), "result mismatch") == 0);
	CHECK(strcmp(tcx_status_str((enum tcx_status)999), "unknown status") == 0);
	for (int s = 0; s < TCX_STATUS_COUNT; s++)
		CHECK(strcmp(tcx_status_str((enum tcx_status)s), "unknown status") != 0);
}

static void test_complex_conj(void)
{
	/* C = conj(A) . B for 1-element vectors: (1+2i)* (3+4i) = (1-2i)(3+4i) = 11 - 2i */
	struct tcx_contraction *c = NULL;
	struct tcx_error err;
	struct problem p;
	int64_t sizes[1] = { 1 };
	float a[2] = { 1, 2 }, b[2] = { 3, 4 }, cc[2] = { 0, 0 };
	double one[2] = { 1, 0 }, zero[2] = { 0, 0 };

	CHECK(notation_parse("C[]=conj(A[k])*B[k]", TCX_DTYPE_C, LAYOUT_BY_STYLE, &c, &err) ==
	      TCX_OK);
	if (!c)
		return;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
	CHECK(host_contract(&p, a, b, cc, one, zero, 1, &err) == TCX_OK);
	CHECK(cc[0] == 11 && cc[1] == -2);
	contraction_free(c);
}

/* Sizes of 0: empty problems in the model, the size parsers and the host
 * reference, which computes them as NumPy does. */
static void test_empty(void)
{
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]");
	struct problem p;
	struct tcx_error err;
	int64_t bound0[3] = { 2, 3, 0 }, free0[3] = { 0, 3, 4 }, neg[3] = { 2, -1, 4 }, sz[3];
	/* A and B have no elements; a guard element each, which must not be read */
	float a[1] = { NAN }, b[1] = { NAN }, cc[6] = { 1, 2, 3, 4, 5, 6 }, keep[1] = { 7 };
	double alpha[2] = { 2, 0 }, beta[2] = { 0.5, 0 }, zero[2] = { 0, 0 };

	if (!c)
		return;
	CHECK(problem_init(&p, c, bound0, &err) == TCX_OK);
	CHECK(p.extent[T_A] == 0 && p.extent[T_B] == 0 && p.extent[T_C] == 6);
	CHECK(problem_count(&p, T_C) == 6 && problem_count(&p, T_A) == 0);
	CHECK(problem_bound_volume(&p) == 0 && problem_flops(&p) == 0);
	CHECK(problem_empty_index(&p) == id_of(c, "k"));
	CHECK(p.stride[T_A][id_of(c, "k")] == 2); /* packed strides step over the 0 as a 1 */
	CHECK(problem_check_alias(&p, &err) == TCX_OK);
	/* an empty sum: C = beta * C, then with beta 0 zeros, C not read */
	CHECK(host_contract(&p, a, b, cc, alpha, beta, 1, &err) == TCX_OK);
	for (int e = 0; e < 6; e++)
		CHECK_MSG(cc[e] == 0.5f * (float)(e + 1), "C[%d] = %g", e, cc[e]);
	cc[0] = NAN;
	CHECK(host_contract(&p, a, b, cc, alpha, zero, 1, &err) == TCX_OK);
	CHECK(cc[0] == 0 && cc[5] == 0);

	CHECK(problem_init(&p, c, free0, &err) == TCX_OK);
	CHECK(p.extent[T_C] == 0 && p.extent[T_A] == 0 && p.extent[T_B] == 12);
	CHECK(problem_empty_index(&p) == id_of(c, "i"));
	CHECK(problem_check_alias(&p, &err) == TCX_OK);
	CHECK(host_contract(&p, a, b, keep, alpha, beta, 0, &err) == TCX_OK && keep[0] == 7);

	CHECK(problem_init(&p, c, neg, &err) == TCX_ERANGE);
	CHECK(strstr(err.msg, "at least 0") != NULL);
	CHECK(sizes_parse_assign(c, "i=2,j=0,k=4", sz, &err) == TCX_ERANGE);
	CHECK(strstr(err.msg, "at least 1 (got 0)") != NULL);
	CHECK(sizes_parse_assign_zero(c, "i=2,j=0,k=4", sz, &err) == TCX_OK);
	CHECK(sz[id_of(c, "j")] == 0 && sz[id_of(c, "k")] == 4);
	CHECK(sizes_parse_assign_zero(c, "i=2,j=-1,k=4", sz, &err) == TCX_ERANGE);
	CHECK(problem_init(&p, c, bound0, &err) == TCX_OK);
	CHECK(problem_parse_strides(&p, "A=[1,5],B=[1,7],C=[1,2]", &err) == TCX_OK);
	CHECK(p.extent[T_A] == 0 && p.extent[T_C] == 6);
	contraction_free(c);
}

/* Positional sizes follow the notation as written: for einsum, the output's
 * letters, then the summed ones; for Tensile style, the ids. */
/* One input: a transpose or a reduction, B implicit (ones over the summed
 * indices); the two-input rules apply to the rest. */
static void test_one_input(void)
{
	static const struct {
		const char *expr;
		unsigned col;
		const char *msg;
	} bad[] = {
		{ "ii->i", 2, "index 'i' repeated in A: diagonals are not supported" },
		{ "ij->k", 5, "output index 'k' appears in no input" },
		{ "ij->ii", 6, "index 'i' repeated in the output" },
		{ "C[i]=Sum[k] A[ij]", 10, "summed index 'k' must appear in the input" },
		{ "C[i]=Sum[j] A[ijl]", 17, "index 'l' is summed over but not listed" },
		{ "C[i]=A[ij] B[j]", 12, "expected '*' and a second input, '+ beta*' or the end" },
		{ "...ij->ji", 1, "ellipsis" },
	};
	struct tcx_contraction *c = parse("ijk->ik");
	struct tcx_error err = { 0 };
	struct problem p;
	int64_t sz[3];
	/* A[ijk] 2x3x2, C order: a[(i*3 + j)*2 + k] */
	float a[12], want[4], got[4] = { 7, 7, 7, 7 }, t[6];
	double one = 1, zero = 0;
	char name[64];

	CHECK(c && c->implicit_b && c->rank[T_B] == 1);
	if (!c)
		return;
	CHECK(c->idx[c->written[T_B][0]].cls == IDX_BOUND &&
	      strcmp(c->idx[c->written[T_B][0]].name, "j") == 0);
	CHECK(contraction_count(c, IDX_FREE_A) == 2 && contraction_count(c, IDX_FREE_B) == 0);
	CHECK(sizes_parse_assign(c, "2,2,3", sz, &err) == TCX_OK); /* i, k, j */
	CHECK(problem_init(&p, c, sz, &err) == TCX_OK);
	/* an add per element of A; B is not traffic */
	CHECK(problem_flops(&p) == 12 && problem_min_bytes(&p, false) == 4.0 * (12 + 4));
	contraction_free(c);

	/* two inputs keep their count */
	c = parse("ijk,j->ik");
	CHECK(c && !c->implicit_b);
	if (c && problem_init(&p, c, sz, &err) == TCX_OK)
		CHECK(problem_flops(&p) == 24 && problem_min_bytes(&p, false) == 4.0 * (12 + 3 + 4));
	contraction_free(c);

	/* a transpose sums nothing: B is one element, and no flops */
	c = parse("C[ji]=A[ij]");
	CHECK(c && c->implicit_b && c->rank[T_B] == 0 && c->style == NOTATION_TENSILE);
	if (c) {
		int64_t s2[2] = { 3, 2 };

		CHECK(problem_init(&p, c, s2, &err) == TCX_OK && p.extent[T_B] == 1);
		CHECK(problem_flops(&p) == 0);
		contraction_free(c);
	}
	/* the implicit output of one input, as NumPy: "ji" is a transpose */
	c = parse("ji");
	CHECK(c && c->implicit_b && c->rank[T_C] == 2 &&
	      strcmp(c->idx[c->written[T_C][0]].name, "i") == 0);
	contraction_free(c);
	/* beta and alpha as with two inputs */
	c = parse("C[i]=alpha*Sum[j] A[ij] + beta*C[i]");
	CHECK(c && c->implicit_b && c->use_beta && c->has_alpha && c->explicit_sum);
	contraction_free(c);

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		c = (void *)1;
		memset(&err, 0, sizeof(err));
		CHECK_MSG(notation_parse(bad[k].expr, TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) ==
				  TCX_EPARSE,
			  "'%s' parsed", bad[k].expr);
		CHECK(c == NULL);
		CHECK_MSG(err.col == bad[k].col, "'%s': col %u, want %u", bad[k].expr, err.col,
			  bad[k].col);
		CHECK_MSG(strstr(err.msg, bad[k].msg) != NULL, "'%s': %s", bad[k].expr, err.msg);
	}

	/* the public API: a reduction and a transpose, B passed as NULL */
	for (int e = 0; e < 12; e++)
		a[e] = (float)(e * e % 7) - 2.5f;
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			want[i * 2 + k] = 0;
			for (int j = 0; j < 3; j++)
				want[i * 2 + k] += a[(i * 3 + j) * 2 + k];
		}
	c = NULL;
	CHECK(tcx_contraction_parse("ijk->ik", TCX_DTYPE_S, &c, &err) == TCX_OK);
	if (!c)
		return;
	tcx_contraction_name(c, name, sizeof(name));
	CHECK(strcmp(name, "Cij_Aikj_Bk_S") == 0);
	sz[0] = 2, sz[1] = 2, sz[2] = 3; /* by id: k, i, j */
	CHECK(tcx_contraction_reference(c, sz, a, NULL, got, &one, &zero, &err) == TCX_OK);
	for (int e = 0; e < 4; e++)
		CHECK_MSG(got[e] == want[e], "C[%d] = %g, want %g", e, got[e], want[e]);
	/* a B given to a one-input contraction is a mistake, not data */
	CHECK(tcx_contraction_reference(c, sz, a, a, got, &one, &zero, &err) == TCX_EINVAL);
	CHECK(strstr(err.msg, "pass NULL for B") != NULL);
	tcx_contraction_destroy(c);
	CHECK(tcx_contraction_parse("ij->ji", TCX_DTYPE_S, &c, &err) == TCX_OK);
	if (!c)
		return;
	sz[0] = 2, sz[1] = 3; /* by id: i, j; C[ji] is 3x2 */
	CHECK(tcx_contraction_reference(c, sz, a, NULL, t, NULL, NULL, &err) == TCX_OK);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			CHECK_MSG(t[j * 2 + i] == a[i * 3 + j], "C[%d,%d] = %g", j, i, t[j * 2 + i]);
	/* and two inputs still need B */
	tcx_contraction_destroy(c);
	CHECK(tcx_contraction_parse("ij,j->i", TCX_DTYPE_S, &c, &err) == TCX_OK);
	if (c)
		CHECK(tcx_contraction_reference(c, sz, a, NULL, t, NULL, NULL, &err) == TCX_EINVAL);
	tcx_contraction_destroy(c);
}

static void test_positional_order(void)
{
	struct tcx_contraction *c;
	struct tcx_error err;
	struct size_range r;
	int64_t sz[TCX_MAX_INDICES];
	int ids[TCX_MAX_INDICES];

	CHECK(notation_parse("ij,jk->ik", TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) == TCX_OK);
	CHECK(contraction_positional_order(c, ids) == 3);
	CHECK(ids[0] == id_of(c, "i") && ids[1] == id_of(c, "k") && ids[2] == id_of(c, "j"));
	CHECK(sizes_parse_assign(c, "100,200,300", sz, &err) == TCX_OK);
	CHECK(sz[id_of(c, "i")] == 100 && sz[id_of(c, "k")] == 200 && sz[id_of(c, "j")] == 300);
	CHECK(size_exact_parse_for(c, "[100,200,300]", sz, &err) == TCX_OK);
	CHECK(sz[id_of(c, "i")] == 100 && sz[id_of(c, "k")] == 200 && sz[id_of(c, "j")] == 300);
	/* a bare integer copies the entry at that position: j copies i */
	CHECK(size_range_parse_for(c, "[16],[32],0", &r, &err) == TCX_OK);
	CHECK(!r.e[id_of(c, "i")].is_map && r.e[id_of(c, "i")].min == 16);
	CHECK(!r.e[id_of(c, "k")].is_map && r.e[id_of(c, "k")].min == 32);
	CHECK(r.e[id_of(c, "j")].is_map && r.e[id_of(c, "j")].map == id_of(c, "i"));
	contraction_free(c);

	/* batched, and the same with the first-fastest layout: ids change,
	 * the positional order does not */
	for (int l = 0; l < 2; l++) {
		CHECK(notation_parse("bij,bjk->bik", TCX_DTYPE_S,
				     l ? LAYOUT_FIRST_FASTEST : LAYOUT_BY_STYLE, &c, &err) == TCX_OK);
		CHECK(sizes_parse_assign(c, "2,3,4,5", sz, &err) == TCX_OK);
		CHECK(sz[id_of(c, "b")] == 2 && sz[id_of(c, "i")] == 3 &&
		      sz[id_of(c, "k")] == 4 && sz[id_of(c, "j")] == 5);
		contraction_free(c);
	}

	/* Tensile style keeps Tensile's order: C's indices, then the bound */
	CHECK(notation_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, LAYOUT_BY_STYLE, &c, &err) == TCX_OK);
	CHECK(sizes_parse_assign(c, "100,200,300", sz, &err) == TCX_OK);
	CHECK(sz[id_of(c, "i")] == 100 && sz[id_of(c, "j")] == 200 && sz[id_of(c, "k")] == 300);
	CHECK(size_exact_parse_for(c, "100,200,300", sz, &err) == TCX_OK);
	CHECK(sz[0] == 100 && sz[1] == 200 && sz[2] == 300);
	contraction_free(c);
}

int main(void)
{
	test_classes();
	test_du_by_stride();
	test_errors();
	test_reference();
	test_complex_conj();
	test_empty();
	test_positional_order();
	test_one_input();
	return check_done();
}

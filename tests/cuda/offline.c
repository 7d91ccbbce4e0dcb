/* offline.c - the offline compile proofs' driver (see offline.h): the
 * validation matrix's cases (tests/opencl/matrix_cases.h) through the
 * generator for a CUDA-dialect device, the permute's cases
 * (tests/opencl/permute_cases.h) through its planner, and the
 * tensor-times-matrix kernel's (tests/cli/ttm.sh's problems) through its
 * own, each distinct source compiled once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "gen/ttm.h"
#include "notation/notation.h"
#include "offline.h"

#include "../opencl/matrix_cases.h"
#include "../opencl/permute_cases.h"

/* The distinct sources seen so far, by hash and length (a hash collision
 * would only skip a compile, never fail one). */
struct seen {
	uint64_t *key;
	size_t n, cap;
};

static bool seen_add(struct seen *s, const char *src, size_t len)
{
	uint64_t k = common_hash64(src, len, len);

	for (size_t i = 0; i < s->n; i++)
		if (s->key[i] == k)
			return false;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint64_t *p = realloc(s->key, cap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		s->key = p;
		s->cap = cap;
	}
	s->key[s->n++] = k;
	return true;
}

/* The first `lines` lines of a compiler log, indented. */
static void print_log(const char *log, int lines)
{
	const char *p = log ? log : "";

	for (int k = 0; k < lines && *p; k++) {
		size_t n = strcspn(p, "\n");

		fprintf(stderr, "    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	if (*p)
		fprintf(stderr, "    ...\n");
}

/* The tally of a proof. */
struct tally {
	int compiled, failures, rc;
};

/* Compiles one generated source, unless an identical one was (or only
 * lists it, with `list`); `what` names it in messages. */
static void compile_once(struct seen *seen, struct tally *ty, const struct device_info *dev,
			 offline_compile_fn fn, const char *compiler, bool list, enum tcx_dtype t,
			 const struct strbuf *src, const struct strbuf *opts, const char *what)
{
	struct tcx_error err = {0};
	enum tcx_status st;
	char *log = NULL;
	unsigned char *bin = NULL;
	size_t bin_len = 0;

	if (!seen_add(seen, src->buf, src->len))
		return;
	if (list) {
		printf("%016llx %s\n", (unsigned long long)common_hash64(src->buf, src->len, 0),
		       what);
		return;
	}
	st = fn(src->buf, src->len, dev->arch, strbuf_str(opts), &bin, &bin_len, &log, &err);
	if (st == TCX_ENODEV || st == TCX_EUNSUPPORTED) {
		fprintf(stderr, "skipped: %s\n", err.msg);
		ty->rc = 77;
	} else if (st) {
		fprintf(stderr, "FAIL %s (%s, first of its source):\n  %s\n", what,
			dtype_info(t)->name, err.msg);
		print_log(log, 30);
		ty->failures++;
	} else if (!bin || bin_len == 0) {
		fprintf(stderr, "FAIL %s: %s returned no code\n", what, compiler);
		ty->failures++;
	} else {
		ty->compiled++;
	}
	free(log);
	free(bin);
}

/* The permute's cases for type t, planned for dev: each distinct kernel
 * compiled once.  Returns the cases planned.  Its sources depend on the
 * word it moves, not on the type, so fp32 (words of 4, 8 and 16 bytes,
 * elements fused) and fp16 (2 too) cover them; the other types skip it. */
static int permute_proofs(struct seen *seen, struct tally *ty, const struct device_info *dev,
			  offline_compile_fn fn, const char *compiler, bool list, enum tcx_dtype t)
{
	int cases = 0;

	for (size_t c = 0; c < ARRAY_SIZE(permute_cases) && ty->rc == 0; c++) {
		const struct permute_case *pc = &permute_cases[c];
		int64_t si[TCX_MAX_INDICES], so[TCX_MAX_INDICES];
		struct permute_plan plan;
		struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
		struct tcx_error err = {0};
		char what[160];

		permute_case_strides(pc, si, so);
		snprintf(what, sizeof(what), "permute '%s'", pc->name);
		if (permute_plan_make(t, pc->rank, pc->size, si, so, pc->conj, dev, &plan, &err) ||
		    (plan.path != PERMUTE_EMPTY && permute_source(&plan, &src, &opts, &err))) {
			fprintf(stderr, "FAIL %s: %s\n", what, err.msg);
			ty->failures++;
		} else if (plan.path != PERMUTE_EMPTY) {
			cases++;
			compile_once(seen, ty, dev, fn, compiler, list, t, &src, &opts, what);
		}
		strbuf_release(&src);
		strbuf_release(&opts);
	}
	return cases;
}

/* The tensor-times-matrix and -vector kernels for fp32 and fp64 on
 * tests/cli/ttm.sh's and ttv.sh's problems (first index fastest), planned
 * for dev: each distinct kernel compiled once.  Returns the cases planned. */
static int ttm_proofs(struct seen *seen, struct tally *ty, const struct device_info *dev,
		      offline_compile_fn fn, const char *compiler, bool list, enum tcx_dtype t)
{
	static const char *const cases[][2] = {
		{ "C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]", "a=48,b=36,j=24,c=36,d=48,k=36" },
		{ "C[a,b,j,c]=A[k,b,a,c]*B[j,k]", "a=37,b=3,j=5,c=4,k=19" },
		{ "C[a,j]=A[a,k]*B[k,j]", "a=131,j=41,k=17" },
		{ "C[a,j,b,c]=A[c,k,b,a]*B[j,k]", "a=36,j=70,b=3,c=9,k=5" },
		{ "C[a,b,c,s]=A[r,c]*B[a,b,r,s]", "a=1,b=1,c=1,s=1,r=1" },
		{ "C[a,b,j,c]=A[c,b,k,a]*B[k,j]", "a=96,b=84,j=24,c=96,k=96" },
		/* the tensor-times-vector kernel (ttm_plan_any), tests/cli/ttv.sh's:
		 * along the sum and along C, one and several summed slots, a dot */
		{ "C[l]=A[h,l,p,w]*B[p,w,h]", "l=71,h=47,p=13,w=7" },
		{ "C[i]=A[i,k]*B[k]", "i=1000,k=37" },
		{ "C[]=A[k]*B[k]", "k=4099" },
		{ "C[z,k]=A[x,z,p,t,k]*B[t,z,p,x]", "z=5,k=16,x=3,p=7,t=11" },
		{ "C[i,b]=A[k,b]*B[i,k,b]", "i=33,k=17,b=5" },
		{ "C[b]=A[b,r,z]*B[z,r]", "b=184,r=624,z=139" }, /* split on an H100 */
	};
	int n = 0;

	for (size_t k = 0; k < ARRAY_SIZE(cases) && ty->rc == 0; k++) {
		struct tcx_contraction *c = NULL;
		struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
		struct tcx_error err = {0};
		int64_t sz[TCX_MAX_INDICES];
		struct problem p;
		struct ttm_plan plan;
		char what[160];

		snprintf(what, sizeof(what), "tensor times matrix or vector '%s'", cases[k][0]);
		if (notation_parse(cases[k][0], t, LAYOUT_FIRST_FASTEST, &c, &err) ||
		    sizes_parse_assign_zero(c, cases[k][1], sz, &err) ||
		    problem_init(&p, c, sz, &err) || ttm_plan_any(&p, dev, &plan, &err) ||
		    ttm_source(&plan, &src, &opts, &err)) {
			fprintf(stderr, "FAIL %s: %s\n", what, err.msg);
			ty->failures++;
		} else {
			n++;
			compile_once(seen, ty, dev, fn, compiler, list, t, &src, &opts, what);
		}
		strbuf_release(&src);
		strbuf_release(&opts);
		contraction_free(c);
	}
	return n;
}

int offline_main(int argc, char **argv, const struct device_info *dev, offline_compile_fn fn,
		 const char *compiler)
{
	struct seen seen = {NULL, 0, 0};
	enum tcx_dtype t;
	struct tcx_error err = {0};
	struct tally ty = {0, 0, 0};
	int cases = 0, skipped = 0, rejected = 0, failures = 0;
	bool list = false;
	double t0 = common_now_seconds();

	if (argc < 2 || !dtype_parse(argv[1], &t)) {
		fprintf(stderr, "usage: %s TYPE [--list]\n", argv[0]);
		return 2;
	}
	for (int k = 2; k < argc; k++)
		if (!strcmp(argv[k], "--list"))
			list = true;
	for (size_t e = 0; e < ARRAY_SIZE(exprs) && ty.rc == 0; e++) {
		struct tcx_contraction *c;

		if (notation_parse(exprs[e], t, LAYOUT_BY_STYLE, &c, &err)) {
			fprintf(stderr, "FAIL parse '%s': %s\n", exprs[e], err.msg);
			failures++;
			continue;
		}
		for (int set = 0; set < MATRIX_SIZE_SETS && ty.rc == 0; set++) {
			int64_t sz[TCX_MAX_INDICES];
			struct problem p;

			make_sizes(set, c->nidx, sz);
			if (problem_init(&p, c, sz, &err)) {
				fprintf(stderr, "FAIL sizes of '%s': %s\n", exprs[e], err.msg);
				failures++;
				continue;
			}
			for (size_t ps = 0; ps < ARRAY_SIZE(paramsets) && ty.rc == 0; ps++) {
				struct solution s;
				struct kernel_plan plan;
				struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
				enum tcx_status st;
				char what[200];

				if (!paramset_applies(&paramsets[ps], dtype_info(t)->letter,
						      dev->lang, dev->arch) ||
				    !size_set_applies(&paramsets[ps], set))
					continue;
				cases++;
				solution_default(&s);
				st = solution_parse(&s, paramsets[ps].params, &err);
				if (!st)
					st = plan_make(c, &p, &s, dev, &plan, &err);
				if (!st)
					st = plan_accepts(&plan, &p, &err);
				if (st == TCX_EREJECT && size_rule(err.msg)) {
					skipped++; /* as the matrix: not this size set's case */
					continue;
				}
				if (st == TCX_EREJECT || st == TCX_ELIMIT) {
					/* a validity rule of this device: never generated */
					printf("not generated: '%s' %s: %s\n", exprs[e],
					       paramsets[ps].name, err.msg);
					rejected++;
					continue;
				}
				if (!st)
					st = plan_source(&plan, &src, &opts, &err);
				if (st) {
					fprintf(stderr, "FAIL '%s' %s: %s\n", exprs[e],
						paramsets[ps].name, err.msg);
					failures++;
					goto next;
				}
				snprintf(what, sizeof(what), "'%s' %s", exprs[e],
					 paramsets[ps].name);
				compile_once(&seen, &ty, dev, fn, compiler, list, t, &src, &opts,
					     what);
			next:
				strbuf_release(&src);
				strbuf_release(&opts);
			}
		}
		contraction_free(c);
	}
	if (ty.rc == 0 && (t == TCX_DTYPE_S || t == TCX_DTYPE_H))
		cases += permute_proofs(&seen, &ty, dev, fn, compiler, list, t);
	if (ty.rc == 0 && (t == TCX_DTYPE_S || t == TCX_DTYPE_D))
		cases += ttm_proofs(&seen, &ty, dev, fn, compiler, list, t);
	free(seen.key);
	failures += ty.failures;
	if (ty.rc)
		return ty.rc;
	printf("%s, %s for %s: %d cases (the permute's and the tensor-times-matrix and -vector "
	       "kernels' included), %zu distinct kernels, %d "
	       "compiled, %d failed, %d not generated (device rules), %d skipped (size rules); "
	       "%.1f s\n",
	       compiler, dtype_info(t)->name, dev->arch, cases, seen.n, ty.compiled, failures,
	       rejected, skipped, common_now_seconds() - t0);
	if (!list && ty.compiled == 0 && failures == 0) {
		fprintf(stderr, "FAIL nothing was compiled\n");
		return 1;
	}
	return failures ? 1 : 0;
}

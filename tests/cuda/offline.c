/* offline.c - the offline compile proofs' driver (see offline.h): the
 * validation matrix's cases (tests/opencl/matrix_cases.h) through the
 * generator for a CUDA-dialect device, each distinct source compiled once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "notation/notation.h"
#include "offline.h"

#include "../opencl/matrix_cases.h"

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

int offline_main(int argc, char **argv, const struct device_info *dev, offline_compile_fn fn,
		 const char *compiler)
{
	struct seen seen = {NULL, 0, 0};
	enum tcx_dtype t;
	struct tcx_error err = {0};
	int cases = 0, skipped = 0, rejected = 0, compiled = 0, failures = 0, rc = 0;
	bool list = false;
	double t0 = common_now_seconds();

	if (argc < 2 || !dtype_parse(argv[1], &t)) {
		fprintf(stderr, "usage: %s TYPE [--list]\n", argv[0]);
		return 2;
	}
	for (int k = 2; k < argc; k++)
		if (!strcmp(argv[k], "--list"))
			list = true;
	for (size_t e = 0; e < ARRAY_SIZE(exprs) && rc == 0; e++) {
		struct tcx_contraction *c;

		if (notation_parse(exprs[e], t, LAYOUT_BY_STYLE, &c, &err)) {
			fprintf(stderr, "FAIL parse '%s': %s\n", exprs[e], err.msg);
			failures++;
			continue;
		}
		for (int set = 0; set < MATRIX_SIZE_SETS && rc == 0; set++) {
			int64_t sz[TCX_MAX_INDICES];
			struct problem p;

			make_sizes(set, c->nidx, sz);
			if (problem_init(&p, c, sz, &err)) {
				fprintf(stderr, "FAIL sizes of '%s': %s\n", exprs[e], err.msg);
				failures++;
				continue;
			}
			for (size_t ps = 0; ps < ARRAY_SIZE(paramsets) && rc == 0; ps++) {
				struct solution s;
				struct kernel_plan plan;
				struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
				enum tcx_status st;
				char *log = NULL;
				unsigned char *bin = NULL;
				size_t bin_len = 0;

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
				if (!seen_add(&seen, src.buf, src.len))
					goto next;
				if (list) {
					printf(
					    "%016llx '%s' %s\n",
					    (unsigned long long)common_hash64(src.buf, src.len, 0),
					    exprs[e], paramsets[ps].name);
					goto next;
				}
				st = fn(src.buf, src.len, dev->arch, strbuf_str(&opts), &bin,
					&bin_len, &log, &err);
				if (st == TCX_ENODEV || st == TCX_EUNSUPPORTED) {
					fprintf(stderr, "skipped: %s\n", err.msg);
					rc = 77;
				} else if (st) {
					fprintf(stderr,
						"FAIL '%s' %s (%s, first of its source):\n  %s\n",
						exprs[e], paramsets[ps].name, dtype_info(t)->name,
						err.msg);
					print_log(log, 30);
					failures++;
				} else if (!bin || bin_len == 0) {
					fprintf(stderr, "FAIL '%s' %s: %s returned no code\n",
						exprs[e], paramsets[ps].name, compiler);
					failures++;
				} else {
					compiled++;
				}
				free(log);
				free(bin);
			next:
				strbuf_release(&src);
				strbuf_release(&opts);
			}
		}
		contraction_free(c);
	}
	free(seen.key);
	if (rc)
		return rc;
	printf("%s, %s for %s: %d cases, %zu distinct kernels, %d compiled, %d failed, "
	       "%d not generated (device rules), %d skipped (size rules); %.1f s\n",
	       compiler, dtype_info(t)->name, dev->arch, cases, seen.n, compiled, failures,
	       rejected, skipped, common_now_seconds() - t0);
	if (!list && compiled == 0 && failures == 0) {
		fprintf(stderr, "FAIL nothing was compiled\n");
		return 1;
	}
	return failures ? 1 : 0;
}

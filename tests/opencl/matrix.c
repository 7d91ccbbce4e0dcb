/* matrix.c - the validation matrix: every kernel family against the host
 * reference, for one element type, over 30+ contractions (Tensile's
 * documented examples, the problem types of Tensile's configs, einsum
 * forms, the degenerate ones), awkward sizes (1, 7, 31, 64, a prime above
 * 100) and parameter sets covering VectorWidth > 1, GlobalSplitU > 1,
 * LocalSplitU > 1, every EdgeType, both kernel families.
 *
 * usage: matrix TYPE [--device ID] [--seed N] [--jobs N] [--list]
 * --jobs N builds every kernel first on N host threads (the compiler is the
 * slow part on GPUs), then validates.
 * Exit 0 when everything passes, 1 on any mismatch or error, 77 when there
 * is no device to run on.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "notation/notation.h"
#include "run/run.h"

#include "matrix_cases.h"

/* Builds every kernel of the matrix on `jobs` threads, so that the
 * validation then finds them in the device's program cache. */
struct prebuild {
	struct device *dev;
	enum tcx_dtype t;
	const char *only;
	pthread_mutex_t lock;
	int next, total;
};

/* Whether `name` is one of the comma-separated names of `list`. */
static bool name_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',')) {
		p += *p == ',';
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

static void *prebuild_worker(void *arg)
{
	struct prebuild *pb = arg;

	for (;;) {
		int k, e, ps;
		struct tcx_contraction *c;
		struct tcx_error err;
		struct solution s;
		struct prepared pr;
		struct problem p;
		int64_t sz[TCX_MAX_INDICES];

		pthread_mutex_lock(&pb->lock);
		k = pb->next++;
		pthread_mutex_unlock(&pb->lock);
		if (k >= pb->total)
			break;
		e = k / (int)ARRAY_SIZE(paramsets);
		ps = k % (int)ARRAY_SIZE(paramsets);
		if (!paramset_applies(&paramsets[ps], dtype_info(pb->t)->letter,
				      device_info_of(pb->dev)->lang, device_info_of(pb->dev)->arch) ||
		    (pb->only && !name_listed(pb->only, paramsets[ps].name)))
			continue;
		if (notation_parse(exprs[e], pb->t, LAYOUT_BY_STYLE, &c, &err))
			continue;
		/* the source does not depend on the sizes (they are arguments) */
		make_sizes(2, c->nidx, sz);
		solution_default(&s);
		if (!solution_parse(&s, paramsets[ps].params, &err) &&
		    !problem_init(&p, c, sz, &err))
			contract_prepare(pb->dev, c, &p, &s, &pr, NULL, &err);
		contraction_free(c);
	}
	return NULL;
}

static void prebuild(struct device *dev, enum tcx_dtype t, const char *only, int jobs)
{
	struct prebuild pb = { dev, t, only, PTHREAD_MUTEX_INITIALIZER, 0,
			       (int)(ARRAY_SIZE(exprs) * ARRAY_SIZE(paramsets)) };
	pthread_t tid[64];
	int n = 0;

	for (int k = 0; k < jobs && k < 64; k++)
		if (pthread_create(&tid[n], NULL, prebuild_worker, &pb) == 0)
			n++;
	prebuild_worker(&pb);
	for (int k = 0; k < n; k++)
		pthread_join(tid[k], NULL);
}

int main(int argc, char **argv)
{
	enum tcx_dtype t;
	const char *devid = NULL;
	uint64_t seed = 1;
	struct device *dev = NULL;
	struct tcx_error err = { 0 };
	int failures = 0, runs = 0, k, jobs = 0;
	bool list = false;
	const char *only = NULL; /* parameter sets by name, "a,b,..." */

	if (argc < 2 || !dtype_parse(argv[1], &t)) {
		fprintf(stderr, "usage: matrix TYPE [--device ID] [--seed N] [--jobs N] "
				"[--only PARAMSET,...] [--list]\n");
		return 2;
	}
	for (k = 2; k < argc; k++) {
		if (!strcmp(argv[k], "--device") && k + 1 < argc)
			devid = argv[++k];
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 10);
		else if (!strcmp(argv[k], "--jobs") && k + 1 < argc)
			jobs = atoi(argv[++k]);
		else if (!strcmp(argv[k], "--only") && k + 1 < argc)
			only = argv[++k];
		else if (!strcmp(argv[k], "--list"))
			list = true;
	}
	if (!devid)
		devid = getenv("TCX_TEST_DEVICE");
	if (!list) {
		enum tcx_status st = device_open(devid && *devid ? devid : NULL, &dev, &err);

		if (st == TCX_ENODEV) {
			fprintf(stderr, "skipped: %s\n", err.msg);
			return 77;
		}
		if (st) {
			fprintf(stderr, "cannot open the device: %s\n", err.msg);
			return 1;
		}
		if ((t == TCX_DTYPE_D || t == TCX_DTYPE_Z) && !device_info_of(dev)->fp64) {
			fprintf(stderr, "skipped: %s has no fp64\n", device_info_of(dev)->name);
			device_close(dev);
			return 77;
		}
		printf("device %s (%s), type %s, seed %llu\n", device_info_of(dev)->id,
		       device_info_of(dev)->name, dtype_info(t)->name, (unsigned long long)seed);
		if (jobs > 1)
			prebuild(dev, t, only, jobs - 1);
	}
	for (size_t e = 0; e < ARRAY_SIZE(exprs); e++) {
		struct tcx_contraction *c;

		if (notation_parse(exprs[e], t, LAYOUT_BY_STYLE, &c, &err)) {
			printf("FAIL parse '%s': %s\n", exprs[e], err.msg);
			failures++;
			continue;
		}
		for (int set = 0; set < MATRIX_SIZE_SETS; set++) {
			int64_t sz[TCX_MAX_INDICES];
			struct problem p;
			char sizes[128] = "";

			make_sizes(set, c->nidx, sz);
			for (int id = 0; id < c->nidx; id++)
				snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s=%lld",
					 id ? "," : "", c->idx[id].name, (long long)sz[id]);
			if (problem_init(&p, c, sz, &err)) {
				printf("FAIL sizes %s: %s\n", sizes, err.msg);
				failures++;
				continue;
			}
			for (size_t ps = 0; ps < ARRAY_SIZE(paramsets); ps++) {
				struct solution s;
				struct prepared pr;
				struct validate_opts o;
				struct validate_report r;
				enum tcx_status st;
				bool cplx = dtype_info(t)->complex;

				if (!size_set_applies(&paramsets[ps], set) ||
				    (only && !name_listed(only, paramsets[ps].name)))
					continue;
				if (list) {
					printf("%s | %s | %s\n", exprs[e], sizes, paramsets[ps].name);
					continue;
				}
				if (!paramset_applies(&paramsets[ps], dtype_info(t)->letter,
						      device_info_of(dev)->lang,
						      device_info_of(dev)->arch))
					continue;
				solution_default(&s);
				if (solution_parse(&s, paramsets[ps].params, &err)) {
					printf("FAIL params %s: %s\n", paramsets[ps].name, err.msg);
					failures++;
					continue;
				}
				validate_opts_default(&o);
				o.seed = seed + (uint64_t)(e * 131 + set * 7 + ps);
				/* exercise alpha and beta on the beta problem types */
				if (c->use_beta) {
					o.alpha[0] = 1.5;
					o.beta[0] = -0.5;
					if (cplx) {
						o.alpha[1] = 0.25;
						o.beta[1] = 0.75;
					}
				}
				runs++;
				st = contract_prepare(dev, c, &p, &s, &pr, NULL, &err);
				if (st == TCX_EREJECT && size_rule(err.msg)) {
					runs--; /* sizes this set cannot run: not its case */
					continue;
				}
				if (!st)
					st = validate_run(dev, &pr, &p, &o, &r, &err);
				if (st) {
					failures++;
					printf("FAIL %-48s %-36s %-20s: %s (seed %llu)\n", exprs[e], sizes,
					       paramsets[ps].name, err.msg, (unsigned long long)o.seed);
					for (int m = 0; st == TCX_EMISMATCH && m < r.nlist && m < 3; m++)
						printf("     element %lld: got %g, want %g%s\n",
						       (long long)r.list[m].lin, r.list[m].got[0],
						       r.list[m].want[0],
						       r.list[m].unwritten ? " (never written)" : "");
				}
			}
		}
		contraction_free(c);
	}
	if (!list)
		printf("%d runs, %d failed\n", runs, failures);
	device_close(dev);
	return failures ? 1 : 0;
}

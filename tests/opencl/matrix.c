/* matrix.c - the validation matrix: every kernel family against the host
 * reference, for one element type, over 30+ contractions (Tensile's
 * documented examples, the problem types of Tensile's configs, einsum
 * forms, the degenerate ones), awkward sizes (1, 7, 31, 64, a prime above
 * 100) and parameter sets covering VectorWidth > 1, GlobalSplitU > 1,
 * LocalSplitU > 1, every EdgeType, both kernel families.
 *
 * usage: matrix TYPE [--device ID] [--seed N] [--list]
 * Exit 0 when everything passes, 1 on any mismatch or error, 77 when there
 * is no device to run on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "notation/notation.h"
#include "run/run.h"

static const char *const exprs[] = {
	/* Tensile's documented examples */
	"C[i,j] = Sum[k] A[i,k] * B[k,j]",
	"C[i,j,k] = Sum[l] A[i,l,k] * B[l,j,k]",
	"C[i,j] = Sum[k,l] A[i,k,l] * B[j,l,k]",
	"C[i,j,k,l,m] = Sum[n] A[i,k,m,l,n] * B[j,k,l,n,m]",
	"C[i,j,k,l,m] = Sum[n,o] A[i,k,m,o,n] * B[j,m,l,n,o]",
	"C[i,j,k,l] = Sum[m,n] A[i,j,m,n,l] * B[m,n,k,j,l]",
	/* the problem types of Tensile's configs */
	"C[ij]=A[ik]*B[kj] + beta*C[ij]",
	"C[ij]=A[ik]*B[jk] + beta*C[ij]",
	"C[ij]=A[ki]*B[kj] + beta*C[ij]",
	"C[ij]=A[ki]*B[jk] + beta*C[ij]",
	"C[ijk]=A[ilk]*B[ljk] + beta*C[ijk]",
	"C[ijk]=A[ilk]*B[jlk] + beta*C[ijk]",
	"C[ijk]=A[lik]*B[ljk] + beta*C[ijk]",
	"C[ijk]=A[lik]*B[jlk] + beta*C[ijk]",
	"C[i,j,k,l] = Sum[m,n,o] A[o,n,i,j,m,l] * B[o,n,j,m,k,l]",
	"C[i,j] = Sum[k,l] A[k,i,l] * B[k,j,l]",
	"C[i,j] = Sum[k,l,m] A[m,l,i,k] * B[m,l,k,j]",
	"C[i,j,k] = Sum[l,m,n] A[n,m,i,j,l] * B[n,m,j,l,k]",
	/* einsum forms (last index fastest) */
	"ilk,jlk->ijk",
	"ikmon,jmlno->ijklm",
	"ik,kj->ij",
	"ij,jk",
	"bij,bjk->bik",
	/* degenerate contractions */
	"C[ij]=A[i]*B[j]",
	"C[]=A[k]*B[k]",
	"C[b]=A[bk]*B[bk]",
	"C[i]=A[ik]*B[k]",
	"C[j]=A[k]*B[kj]",
	"C[i]=A[i]*B[i]",
	"C[ij]=A[ij]*B[j]",
	/* D0 from B: C's fastest index is B's */
	"C[ji]=A[ik]*B[jk]",
	/* conjugation (complex types; plain product for real ones) */
	"C[ij]=conj(A[ik])*B[jk]",
};

struct paramset {
	const char *name;
	const char *params;
};

static const struct paramset paramsets[] = {
	{ "lds-vw4", "UseLDS=True,WorkGroup=[8,8,1],ThreadTile=[4,4],VectorWidth=4,DepthU=8,"
		     "EdgeType=Branch" },
	{ "lds-lsu2-gsu3-shift", "UseLDS=True,WorkGroup=[4,4,2],ThreadTile=[2,2],VectorWidth=2,"
				 "DepthU=8,EdgeType=ShiftPtr,GlobalSplitU=3,"
				 "PrefetchGlobalRead=False,NumLoadsCoalescedA=-1" },
	{ "direct-vw8-wgm2", "UseLDS=False,WorkGroup=[2,2,1],ThreadTile=[8,4],VectorWidth=8,"
			     "DepthU=4,WorkGroupMapping=2" },
	{ "lds-edge-none", "UseLDS=True,WorkGroup=[1,1,1],ThreadTile=[1,1],VectorWidth=1,"
			   "DepthU=1,EdgeType=None,LoopTail=False" },
	{ "lds-pad-shift-wgm3", "UseLDS=True,WorkGroup=[8,4,1],ThreadTile=[2,4],VectorWidth=2,"
				"DepthU=16,EdgeType=ShiftPtr,WorkGroupMapping=3,"
				"NumLoadsCoalescedB=2,LdsPad=1,PrefetchLocalRead=False" },
};

/* Size sets: by the index's position in the id order. */
static void make_sizes(int set, int n, int64_t *sz)
{
	static const int64_t pos31[] = { 31, 64, 3, 2, 2, 2, 2, 2 };
	double flops = 1;

	for (int k = 0; k < n; k++) {
		switch (set) {
		case 0:
			sz[k] = 1;
			break;
		case 1:
			sz[k] = 7;
			break;
		case 2:
			sz[k] = k < 8 ? pos31[k] : 1;
			break;
		default:
			/* a prime above 100 on the last index (usually bound) */
			sz[k] = k == n - 1 ? 127 : k == 0 ? 5 : 3;
			break;
		}
		flops *= (double)sz[k];
	}
	/* keep every case small: shrink the later indices */
	for (int k = n - 2; k >= 1 && flops > (double)(1 << 22); k--) {
		flops /= (double)sz[k];
		sz[k] = 1;
	}
}

int main(int argc, char **argv)
{
	enum tcx_dtype t;
	const char *devid = NULL;
	uint64_t seed = 1;
	struct device *dev = NULL;
	struct tcx_error err = { 0 };
	int failures = 0, runs = 0, k;
	bool list = false;

	if (argc < 2 || !dtype_parse(argv[1], &t)) {
		fprintf(stderr, "usage: matrix TYPE [--device ID] [--seed N] [--list]\n");
		return 2;
	}
	for (k = 2; k < argc; k++) {
		if (!strcmp(argv[k], "--device") && k + 1 < argc)
			devid = argv[++k];
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 10);
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
	}
	for (size_t e = 0; e < ARRAY_SIZE(exprs); e++) {
		struct tcx_contraction *c;

		if (notation_parse(exprs[e], t, LAYOUT_BY_STYLE, &c, &err)) {
			printf("FAIL parse '%s': %s\n", exprs[e], err.msg);
			failures++;
			continue;
		}
		for (int set = 0; set < 4; set++) {
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

				if (list) {
					printf("%s | %s | %s\n", exprs[e], sizes, paramsets[ps].name);
					continue;
				}
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
				if (st == TCX_EREJECT && strstr(err.msg, "EdgeType None")) {
					runs--; /* sizes not a multiple of the tile: not this set's case */
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

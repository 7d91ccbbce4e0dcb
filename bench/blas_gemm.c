/* blas_gemm.c - times OpenBLAS on the contractions bench/cpu.sh compares
 * with tcx, the way tcx bench times kernels: random inputs (never zeros),
 * input sets rotated so that no call finds its operands in the last-level
 * cache, two warm-up calls, repeats until a minimum count and a minimum
 * time, the median with min and max.  Layouts are tcx's (Tensile notation:
 * the first index listed moves fastest, i.e. column-major), so that both
 * sides compute the same thing on the same bytes.
 *
 * usage: blas_gemm [-d] [-r MIN_REPS] [-t MIN_SECONDS] CASE SIZES...
 *   gemm I J K          C[ij]=A[ik]*B[jk]: one sgemm, A no-trans, B trans
 *   bgemm I J K L       C[ijk]=A[ilk]*B[jlk]: a loop of K sgemm (i x j, sum l)
 *   c5d I J K L M N     C[ijkl]=A[ijmnl]*B[mnkjl]: a loop of J*L sgemm over
 *                       the batch indices j and l, each i x k summing m and n
 *                       as one index of length M*N: A's slice is i x (mn)
 *                       with leading dimension I*J, B's (mn) x k with M*N,
 *                       C's i x k with I*J; no transpose is needed
 * prints one line: median_ms min_ms max_ms gflops calls_per_rep, after
 * checking 64 elements of C against a direct sum (exit 1 if one differs). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#define MAX_REPS 100000
#define MAX_SETS 8

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Uniform in [-1, 1), never exactly zero in practice (xorshift64*). */
static void fill(void *p, size_t n, int dbl, uint64_t *s)
{
	for (size_t i = 0; i < n; i++) {
		double v;

		*s ^= *s >> 12;
		*s ^= *s << 25;
		*s ^= *s >> 27;
		v = (double)((*s * 2685821657736338717ULL) >> 11) * 0x1.0p-53 * 2 - 1;
		if (dbl)
			((double *)p)[i] = v;
		else
			((float *)p)[i] = (float)v;
	}
}

struct gemm {
	enum CBLAS_TRANSPOSE ta, tb;
	int m, n, k, lda, ldb, ldc;
};

/* One contraction: `calls` GEMMs, the q-th at element offsets oa[q], ... */
struct work {
	struct gemm g;
	int calls;
	size_t *oa, *ob, *oc;
	size_t na, nb, nc;   /* elements of A, B, C */
	double flops;
};

static int setup(const char *name, const long *v, int nv, struct work *w)
{
	memset(w, 0, sizeof(*w));
	if (strcmp(name, "gemm") == 0 && nv == 3) {
		long i = v[0], j = v[1], k = v[2];

		w->g = (struct gemm){ CblasNoTrans, CblasTrans, (int)i, (int)j, (int)k, (int)i,
				      (int)j, (int)i };
		w->calls = 1;
		w->na = (size_t)(i * k), w->nb = (size_t)(j * k), w->nc = (size_t)(i * j);
		w->flops = 2.0 * i * j * k;
	} else if (strcmp(name, "bgemm") == 0 && nv == 4) {
		long i = v[0], j = v[1], k = v[2], l = v[3];

		w->g = (struct gemm){ CblasNoTrans, CblasTrans, (int)i, (int)j, (int)l, (int)i,
				      (int)j, (int)i };
		w->calls = (int)k;
		w->na = (size_t)(i * l * k), w->nb = (size_t)(j * l * k),
		w->nc = (size_t)(i * j * k);
		w->flops = 2.0 * i * j * k * l;
	} else if (strcmp(name, "c5d") == 0 && nv == 6) {
		long i = v[0], j = v[1], k = v[2], l = v[3], m = v[4], n = v[5];

		w->g = (struct gemm){ CblasNoTrans, CblasNoTrans, (int)i, (int)k, (int)(m * n),
				      (int)(i * j), (int)(m * n), (int)(i * j) };
		w->calls = (int)(j * l);
		w->na = (size_t)(i * j * m * n * l), w->nb = (size_t)(m * n * k * j * l);
		w->nc = (size_t)(i * j * k * l);
		w->flops = 2.0 * i * j * k * l * m * n;
	} else {
		return -1;
	}
	w->oa = calloc((size_t)w->calls, sizeof(size_t));
	w->ob = calloc((size_t)w->calls, sizeof(size_t));
	w->oc = calloc((size_t)w->calls, sizeof(size_t));
	if (!w->oa || !w->ob || !w->oc)
		return -1;
	for (int q = 0; q < w->calls; q++) {
		if (strcmp(name, "bgemm") == 0) {
			w->oa[q] = (size_t)q * (size_t)(v[0] * v[3]);
			w->ob[q] = (size_t)q * (size_t)(v[1] * v[3]);
			w->oc[q] = (size_t)q * (size_t)(v[0] * v[1]);
		} else if (strcmp(name, "c5d") == 0) {
			long i = v[0], j = v[1], k = v[2], m = v[4], n = v[5];
			long jj = q % j, ll = q / j;

			/* A[ijmnl], B[mnkjl], C[ijkl], first index fastest */
			w->oa[q] = (size_t)(jj * i + ll * i * j * m * n);
			w->ob[q] = (size_t)(jj * m * n * k + ll * m * n * k * j);
			w->oc[q] = (size_t)(jj * i + ll * i * j * k);
		}
	}
	return 0;
}

static void run(const struct work *w, int dbl, void *a, void *b, void *c)
{
	const struct gemm *g = &w->g;

	for (int q = 0; q < w->calls; q++) {
		if (dbl)
			cblas_dgemm(CblasColMajor, g->ta, g->tb, g->m, g->n, g->k, 1.0,
				    (double *)a + w->oa[q], g->lda, (double *)b + w->ob[q], g->ldb,
				    0.0, (double *)c + w->oc[q], g->ldc);
		else
			cblas_sgemm(CblasColMajor, g->ta, g->tb, g->m, g->n, g->k, 1.0f,
				    (float *)a + w->oa[q], g->lda, (float *)b + w->ob[q], g->ldb,
				    0.0f, (float *)c + w->oc[q], g->ldc);
	}
}

static double at(const void *p, size_t i, int dbl)
{
	return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Checks 64 elements of C (last computed from set 0's a and b) against a
 * direct sum in double, by the contraction's index formula. */
static int check(const char *name, const long *v, int dbl, const void *a, const void *b,
		 const void *c, uint64_t *s)
{
	int bad = 0;

	for (int e = 0; e < 64; e++) {
		double want = 0, got, tol;
		long r[6], sum = 0;

		for (int d = 0; d < 6; d++) {
			*s ^= *s >> 12;
			*s ^= *s << 25;
			*s ^= *s >> 27;
			r[d] = (long)((*s * 2685821657736338717ULL) >> 33);
		}
		if (strcmp(name, "gemm") == 0) {
			long ni = v[0], nj = v[1], nk = v[2], i = r[0] % ni, j = r[1] % nj;

			for (long k = 0; k < nk; k++)
				want += at(a, (size_t)(i + k * ni), dbl) *
					at(b, (size_t)(j + k * nj), dbl);
			got = at(c, (size_t)(i + j * ni), dbl);
			sum = nk;
		} else if (strcmp(name, "bgemm") == 0) {
			long ni = v[0], nj = v[1], nk = v[2], nl = v[3];
			long i = r[0] % ni, j = r[1] % nj, k = r[2] % nk;

			for (long l = 0; l < nl; l++)
				want += at(a, (size_t)(i + l * ni + k * ni * nl), dbl) *
					at(b, (size_t)(j + l * nj + k * nj * nl), dbl);
			got = at(c, (size_t)(i + j * ni + k * ni * nj), dbl);
			sum = nl;
		} else {
			long ni = v[0], nj = v[1], nk = v[2], nl = v[3], nm = v[4], nn = v[5];
			long i = r[0] % ni, j = r[1] % nj, k = r[2] % nk, l = r[3] % nl;

			for (long m = 0; m < nm; m++)
				for (long n = 0; n < nn; n++)
					want +=
					    at(a,
					       (size_t)(i + j * ni + m * ni * nj +
							n * ni * nj * nm + l * ni * nj * nm * nn),
					       dbl) *
					    at(b,
					       (size_t)(m + n * nm + k * nm * nn +
							j * nm * nn * nk + l * nm * nn * nk * nj),
					       dbl);
			got = at(c, (size_t)(i + j * ni + k * ni * nj + l * ni * nj * nk), dbl);
			sum = nm * nn;
		}
		tol = (dbl ? 1e-12 : 1e-5) * (double)sum;
		if (fabs(got - want) > tol) {
			if (bad++ < 5)
				fprintf(stderr, "blas_gemm: %s element %d: got %g, want %g\n", name,
					e, got, want);
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	int dbl = 0, min_reps = 10, reps = 0, nsets, opt, nv = 0;
	double min_time = 0.5, total = 0, *t = malloc(MAX_REPS * sizeof(double));
	long v[8], cache = 32L << 20;
	void *a[MAX_SETS], *b[MAX_SETS], *c[MAX_SETS];
	size_t esz, bytes;
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	struct work w;

	while ((opt = getopt(argc, argv, "dr:t:")) != -1) {
		if (opt == 'd')
			dbl = 1;
		else if (opt == 'r')
			min_reps = atoi(optarg);
		else if (opt == 't')
			min_time = atof(optarg);
		else
			return 2;
	}
	for (int k = optind + 1; k < argc && nv < 8; k++)
		v[nv++] = atol(argv[k]);
	if (!t || optind >= argc || setup(argv[optind], v, nv, &w) != 0) {
		fprintf(stderr, "usage: blas_gemm [-d] [-r MIN_REPS] [-t MIN_SECONDS] "
				"(gemm I J K | bgemm I J K L | c5d I J K L M N)\n");
		return 2;
	}
#ifdef _SC_LEVEL3_CACHE_SIZE
	if (sysconf(_SC_LEVEL3_CACHE_SIZE) > 0)
		cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
	esz = dbl ? 8 : 4;
	bytes = (w.na + w.nb + w.nc) * esz;
	/* as tcx bench --flush auto: enough sets to span twice the cache */
	nsets = bytes >= 2 * (size_t)cache ? 1 : (int)((2 * (size_t)cache + bytes - 1) / bytes);
	if (nsets > MAX_SETS)
		nsets = MAX_SETS;
	for (int k = 0; k < nsets; k++) {
		a[k] = malloc(w.na * esz);
		b[k] = malloc(w.nb * esz);
		c[k] = malloc(w.nc * esz);
		if (!a[k] || !b[k] || !c[k])
			return 3;
		fill(a[k], w.na, dbl, &s);
		fill(b[k], w.nb, dbl, &s);
		fill(c[k], w.nc, dbl, &s);
	}
	for (int it = -2; reps < MAX_REPS && (reps < min_reps || total < min_time); it++) {
		int k = (it + 2) % nsets;
		double t0 = now(), dt;

		run(&w, dbl, a[k], b[k], c[k]);
		dt = now() - t0;
		if (it < 0)
			continue; /* warm-up */
		t[reps++] = dt * 1e3;
		total += dt;
	}
	/* the last set used holds the last result; run set 0 once more */
	run(&w, dbl, a[0], b[0], c[0]);
	if (check(argv[optind], v, dbl, a[0], b[0], c[0], &s))
		return 1;
	qsort(t, (size_t)reps, sizeof(double), cmp);
	{
		double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);

		printf("%.4f %.4f %.4f %.2f %d\n", med, t[0], t[reps - 1], w.flops / (med * 1e6),
		       w.calls);
	}
	for (int k = 0; k < nsets; k++) {
		free(a[k]);
		free(b[k]);
		free(c[k]);
	}
	free(w.oa);
	free(w.ob);
	free(w.oc);
	free(t);
	return 0;
}

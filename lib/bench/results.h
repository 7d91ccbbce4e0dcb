/* results.h - tcx bench's JSON results read back: for the regression gate
 * (--baseline, --max-regression), for side-by-side comparisons of two runs
 * (--compare), and for their plots.  The format is the one tcx bench
 * --format json writes (share/schemas/bench.schema.json); fields this code
 * does not need are ignored, so files from newer versions still load. */
#ifndef TCX_BENCH_RESULTS_H
#define TCX_BENCH_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "model/model.h"

/* One size of a results file. */
struct bench_row {
	int nidx;
	char name[TCX_MAX_INDICES][TCX_INDEX_NAME_MAX]; /* index names, in file order */
	int64_t size[TCX_MAX_INDICES];
	bool ok;                 /* status "ok"; the figures are meaningless otherwise */
	double median_ms, ci_lo_ms, ci_hi_ms, gflops;
	double work;             /* the product of the sizes (the plots' x) */
	char solution[128];      /* short solution name when the file has one, else "" */
};

/* A results file. */
struct bench_doc {
	char path[512];          /* where it was read from ("" when from memory) */
	char expression[256], problem_type[128], device_name[128], driver[256];
	int nrows;
	struct bench_row *rows;
};

/* Reads tcx bench JSON output from `path`.  TCX_EIO when it cannot be read,
 * TCX_EPARSE when it is not JSON or not tcx bench results (err names the
 * file and the offending field). */
enum tcx_status bench_doc_load(const char *path, struct bench_doc *out, struct tcx_error *err);
/* The same from a parsed document; `what` names it in messages. */
enum tcx_status bench_doc_from_json(json_t *doc, const char *what, struct bench_doc *out,
				    struct tcx_error *err);
void bench_doc_release(struct bench_doc *d);

/* The row of d with the same index names and sizes as `like`; -1 if none. */
int bench_doc_find(const struct bench_doc *d, const struct bench_row *like);

/* "i=64,j=64,k=128" into buf. */
void bench_row_sizes_text(const struct bench_row *r, char *buf, size_t len);

/* Parses a regression threshold: "5%" or "0.05" (a fraction in [0, 1)).
 * Percentages may be fractional ("2.5%") and go up to 1000%. */
bool bench_threshold_parse(const char *s, double *out);

/* The regression rule of the CI gate: slower by more than the threshold t
 * beyond both confidence intervals, that is
 *   new_median > old_median * (1 + t)  and  new_ci_lo > old_ci_hi * (1 + t). */
bool bench_is_regression(const struct bench_row *old_r, const struct bench_row *new_r, double t);

/* The ratio of medians new/old (time: > 1 is slower) and a conservative 95%
 * interval from the two independent intervals: [new_lo / old_hi,
 * new_hi / old_lo]. */
void bench_ratio(const struct bench_row *old_r, const struct bench_row *new_r, double out[3]);

/* The outcome of gating `cur` against `base`. */
struct bench_gate {
	int compared;            /* sizes in both, ok in both */
	int regressions;
	int not_in_base; /* sizes of cur without a baseline (missing, or failed on either side) */
	int not_in_cur;          /* sizes of the baseline that cur lacks */
	/* per row of cur: -1 no baseline, 0 compared, 1 regression */
	int *verdict;
	int *base_row;           /* per row of cur: the baseline's row or -1 */
};
/* Compares every row of cur with base under threshold t.  Caller releases
 * g with bench_gate_release. */
enum tcx_status bench_gate_run(const struct bench_doc *base, const struct bench_doc *cur, double t,
			       struct bench_gate *g, struct tcx_error *err);
void bench_gate_release(struct bench_gate *g);

#endif /* TCX_BENCH_RESULTS_H */

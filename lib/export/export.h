/* export.h - tcx export-lib: the source tree of a self-contained C library
 * generated from library logic (docs/export-lib.md), and the held-out
 * evaluation of the selectors that tcx logic eval and export-lib report. */
#ifndef TCX_EXPORT_H
#define TCX_EXPORT_H

#include <jansson.h>

#include "bench/bench.h"
#include "logic/logic.h"
#include "logic/selector.h"

/* ---- held-out evaluation (eval.c) ---------------------------------------- */

/* What export_eval says before each of its measurements (progress
 * displays): `done` of `total` are done (every solution at every size, in
 * EXPORT_EVAL_ROUNDS rounds); the next times solution `solution` (of nsol)
 * in round `round` (from 1) at held-out size `size` (from 1, of nsizes),
 * whose extents are `sizes` (nidx of them). */
struct export_progress {
	size_t done, total, size, nsizes;
	const int64_t *sizes;
	int nidx, solution, nsol, round;
};
typedef void (*export_progress_fn)(const struct export_progress *p, void *ctx);

/* Rounds of measurements, the solutions interleaved: on a shared machine a
 * burst of load then slows every solution alike rather than one. */
#define EXPORT_EVAL_ROUNDS 3

/* Measures every solution of l on every held-out size on dev (bench_run
 * with o's settings), takes the fastest as the oracle, and scores each
 * selector of sel: efficiency = GFLOP/s(selected) / GFLOP/s(oracle), its
 * mean, P10 (nearest rank) and minimum, and the top-1 and top-3 hit rates
 * (the selected solution is the fastest, or among the three fastest).
 * *report (the caller's) holds the per-size table and the scores, as
 * docs/export-lib.md describes; *best is the selector with the highest
 * mean efficiency (ties: higher P10, then higher minimum, then the order
 * logic, nearest, model).  `name` names the logic in the report.  Sizes no
 * solution can run are reported and left out of the scores.  TCX_EINVAL
 * without held-out sizes; TCX_EINTR when *stop becomes non-zero.
 * progress (NULL: none) is called with progress_ctx before each
 * measurement. */
enum tcx_status export_eval(struct device *dev, const struct logic *l, const char *name,
			    const struct selector *sel, const struct size_list *holdout,
			    const struct bench_opts *o, volatile int *stop,
			    export_progress_fn progress, void *progress_ctx, json_t **report,
			    enum sel_kind *best, struct tcx_error *err);

/* The choices of every selector for each size, without measuring: a
 * report of the same shape with no GFLOP/s and no scores. */
enum tcx_status export_choices(const struct logic *l, const char *name, const struct selector *sel,
			       const struct size_list *sizes, json_t **report,
			       struct tcx_error *err);

/* Held-out sizes from exact specs ("127,129,61", several separated by ';')
 * and Tensile Range specs, for nidx indices, sorted and without repeats.
 * TCX_EPARSE (and friends) naming the spec that does not parse. */
enum tcx_status export_holdout_sizes(const char *const *exact, int nexact,
				     const char *const *ranges, int nrange, int nidx,
				     struct size_list *out, struct tcx_error *err);

/* The report as Markdown (tables of scores and of the per-size choices). */
enum tcx_status export_report_markdown(json_t *report, struct strbuf *out, struct tcx_error *err);

/* ---- the library (export.c) --------------------------------------------------- */

/* One logic file going into the library. */
struct export_input {
	const char *path; /* for messages and the library's notes */
	const struct logic *logic;
	const struct selector *sel;
	enum sel_kind kind; /* the selector the library uses for it */
	json_t *report;	    /* its held-out report, or NULL */
};

struct export_opts {
	const char *out_dir; /* created when missing */
	const char *name;    /* the prefix: a C identifier */
	bool force;	     /* write into out_dir even when export_dir_check refuses */
	/* > 0: the relative error every solution of the inputs meets
	 * (export_accuracy_check), recorded in the header (<PREFIX>_ACCURACY)
	 * and the README */
	double accuracy;
};

/* Whether logic l meets a relative error of `accuracy` (plan/arith.h):
 * the accuracy it was tuned for (tcx tune --accuracy) is at most that,
 * and every measured error it records is too.  Logic tuned for the type's
 * own accuracy meets it where every solution's measured error does.
 * TCX_EINVAL, naming `path`, the accuracy and what the logic records,
 * otherwise. */
enum tcx_status export_accuracy_check(const struct logic *l, const char *path, double accuracy,
				      struct tcx_error *err);

/* Writes the library's source tree for the inputs into o->out_dir: the
 * logic files are grouped by problem type (one function each); several
 * files of one type are chosen among by device (name, architecture,
 * vendor, default).  The tree is written as a whole (export_tree_commit):
 * on failure the directory holds what it held before.  TCX_EINVAL for a
 * bad prefix, no input, or (without o->force) an output directory tcx did
 * not write that is not empty (export_dir_check), TCX_EUNSUPPORTED for solutions the library cannot
 * run (ConstantSizes, MatrixInstruction), TCX_EREJECT for an invalid one,
 * TCX_EIO when a file cannot be written. */
enum tcx_status export_lib(const struct export_input *in, int n, const struct export_opts *o,
			   struct tcx_error *err);

/* ---- writing the tree as a whole (tree.c) --------------------------------------- */

/* The file in the output directory that lists the files tcx wrote there. */
#define EXPORT_MANIFEST ".tcx-export"

/* Whether export-lib may write into dir without being told to (--force):
 * TCX_OK when dir is missing, empty, or a tree tcx wrote (it holds the
 * manifest); TCX_EINVAL, naming dir and --force, when it holds files of
 * someone else's.  Changes nothing. */
enum tcx_status export_dir_check(const char *dir, struct tcx_error *err);

/* A tree of files being written into a directory (opaque). */
struct export_tree;

/* Starts writing into dir, which is created with its parents when missing
 * (and removed again by export_tree_destroy without a commit).  TCX_EIO
 * when it cannot be. */
enum tcx_status export_tree_create(const char *dir, struct export_tree **out,
				   struct tcx_error *err);
/* Writes the file rel (a relative path; its directories are made) of the
 * new tree in full, fsync'd, under no name yet (atomic_file_open).
 * TCX_EIO, naming dir/rel and the reason, when it cannot (a full disk, a
 * file-size limit). */
enum tcx_status export_tree_write(struct export_tree *t, const char *rel, const char *data,
				  size_t len, struct tcx_error *err);
/* Puts the new tree in place: each file takes its name, replacing the one
 * there, the files the earlier tree's manifest lists and this one does not
 * write are removed, and the manifest (EXPORT_MANIFEST) lists this tree's
 * files; no other file of dir is touched.  When a step fails, every step
 * before it is undone, so that dir holds the earlier tree byte for byte,
 * and TCX_EIO names the file and the reason.  The earlier files wait in
 * dir/.tcx-export.old.XXXXXX meanwhile; one left by a killed export is
 * removed by the next. */
enum tcx_status export_tree_commit(struct export_tree *t, struct tcx_error *err);
/* Frees t; without a commit, removes what was written and the directories
 * made for it.  Accepts NULL. */
void export_tree_destroy(struct export_tree *t);

/* Whether name is a usable prefix: a C identifier of at most 40
 * characters, lowercase letters, digits and '_', not starting with a digit
 * or '_', without "__" or a trailing '_' (C and C++ reserve such names),
 * and none whose names would collide with the headers the library includes
 * (OpenCL's cl_, CUDA's cu and cuda, NVRTC's, HIP's and hiprtc's, POSIX
 * threads'), with its own files and internal names, with CMake's reserved
 * targets, or whose header would hide a system header (stdio.h).  When
 * not, why[len] says why. */
bool export_name_check(const char *name, char *why, size_t len);

#endif /* TCX_EXPORT_H */

/* fit.h - the planner's model learned from measurements: the rates and
 * shares of struct plan_device fitted, per device and element type, to
 * the times the results store holds (every candidate `tcx tune` measured),
 * so that the planner's untuned choices get better the more a device has
 * been measured, also for contractions never tuned.
 *
 * The fit minimises, over the problems of the store, how much slower the
 * candidate the model ranks first ran than the fastest one measured (the
 * choice's regret), plus a term for the error of the predicted
 * times themselves (which the planner also compares across merged and
 * permuted variants); coordinate descent over each rate's logarithm, from
 * the built-in values.  Its report says how good the choices are on
 * problems held out of the fit (k-fold by problem).
 *
 * A model is a JSON file (tcx-plan(1) documents it):
 *   { "tcx_model": 1, "device": "NVIDIA H200", "type": "s",
 *     "measurements": N, "problems": P, "held_out": {...},
 *     "params": { "simt_flops": 4.8e13, ... } }
 * The planner looks one up (plan_model_find) as $TCX_MODEL names it (a
 * file, or "none" for the built-in model), else as `tcx plan --fit` saved
 * it beside the default results store ($XDG_CACHE_HOME/tcx/models/), else
 * among the models shipped with tcx (share/tcx/models/ of the
 * installation, $TCX_MODELS_DIR instead when set). */
#ifndef TCX_PLAN_FIT_H
#define TCX_PLAN_FIT_H

#include <jansson.h>

#include "plan/planner.h"

/* How good a model's choices are over a set of problems: the fastest
 * measured time over the time of the candidate the model ranks first
 * (1 = it picks the best), mean and 10th percentile. */
struct fit_quality {
	int problems;
	double mean, p10;
};

/* One problem of the store under the fitted model: the candidate it
 * ranks first and the fastest one measured. */
struct fit_detail {
	char problem[256];     /* the store's problem key */
	int nidx;
	int64_t sizes[TCX_MAX_INDICES];
	int rows;              /* candidates measured */
	double share;          /* best_s / pick_s */
	double pick_s, pick_pred_s, best_s, best_pred_s; /* measured and predicted */
	struct solution pick, best;
};

struct fit_report {
	int rows, problems;    /* measurements and problems fitted */
	int skipped;           /* rows of the device and type that could not be read */
	int folds;             /* held-out folds (0: too few problems) */
	struct fit_quality builtin_held, fitted_held; /* on held-out problems */
	struct fit_quality builtin_all, fitted_all;   /* on all of them (fitted on them) */
	struct fit_detail *details; /* per problem, least share first (plan_fit_report_free) */
	int ndetails;
};

void plan_fit_report_free(struct fit_report *rep);

/* {"problems": n, "mean": x, "p10": y}, as model files and --fit's JSON
 * write a fit_quality. */
json_t *plan_fit_quality_json(const struct fit_quality *q);

/* Fits the model of device dev and type t from the measurements in the
 * results store at db: *m starts from the built-in model and gets the
 * fitted rates.  TCX_EINVAL (with a message) when the store holds
 * measurements of fewer than 3 problems of that device and type. */
enum tcx_status plan_fit(const char *db, const struct device_info *dev, enum tcx_dtype t,
			 struct plan_device *m, struct fit_report *rep, struct tcx_error *err);

/* Writes a fitted model (atomically). */
enum tcx_status plan_model_write(const char *path, const struct plan_device *m, enum tcx_dtype t,
				 const struct fit_report *rep, struct tcx_error *err);

/* The file name of a model: the device's name in lower case with runs of
 * other characters as '-', and the type's letter ("nvidia-h200-s.json"). */
void plan_model_name(const char *device, enum tcx_dtype t, char *buf, size_t len);

/* Finds and applies the model of dev and t to m (which holds the built-in
 * one), setting m->source and m->origin: $TCX_MODEL, else the saved one,
 * else the shipped one; a saved or shipped file of another device or
 * type is passed over.  Nothing found leaves m as it is.  A file that
 * cannot be read, or one that $TCX_MODEL names for another device or
 * type, fails with its name. */
enum tcx_status plan_model_find(const struct device_info *dev, enum tcx_dtype t,
				struct plan_device *m, struct tcx_error *err);

#endif /* TCX_PLAN_FIT_H */

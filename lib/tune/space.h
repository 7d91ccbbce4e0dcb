/* space.h - tuning a contraction that no config describes (tcx tune EXPR):
 * the config tcx makes for it, and the search space it builds on the
 * device -- the planner's best-ranked solutions (and the best of each
 * kernel family), and their neighbours, one parameter moved, as the device
 * and the kernel family allow -- in the
 * order of the planner's model, which the model strategy measures it in. */
#ifndef TCX_TUNE_SPACE_H
#define TCX_TUNE_SPACE_H

#include "tune/tune.h"

/* The planner's choices the space is built around, by default. */
#define SPACE_SEEDS 8

/* One candidate of the space. */
struct space_entry {
	struct solution sol;
	double predicted_s; /* the model's time, summed over the ranked sizes */
	int seed;           /* the planner's choice it comes from, 0 its best */
	const char *move;   /* "planner", or the parameter it moved from its seed */
};

struct tune_space {
	int n;
	struct space_entry *v; /* the model's order: best predicted first */
	int listed, valid;     /* solutions the planner listed, and that the device takes */
	int nseeds;            /* the planner's choices it is built around: its first
				* `seeds`, and the best of each kernel family none of
				* them is of */
	int nsizes;            /* the sizes the model ranked by (a spread sample) */
	/* the planner's own plan over the same sizes, which may merge indices
	 * or permute operands (what the space's kernels do not): its predicted time,
	 * and whether it is outside the space and much faster than its best
	 * (tune_space_attach then logs a warning) */
	double untuned_s;
	bool untuned_outside;
};

/* A config for contraction c (taken: the config owns it, also on failure)
 * with one group whose final sizes are the ranges and the exact sizes
 * given (rows of c->nidx, by index id), as tcx tune EXPR's --range,
 * --exact and --sizes say.  `name` names it in messages.  Its group has
 * no candidates until tune_space_attach. */
enum tcx_status config_from_expr(struct tcx_contraction *c, const char *name,
				 const struct size_range *ranges, int nranges, const int64_t *exact,
				 int nexact, struct config **out, struct tcx_error *err);

/* Builds the space of every group of cfg (a config_from_expr config) for
 * device di around the planner's first `seeds` choices over the group's
 * final sizes, and gives each group its candidates (config_group's
 * candidates, in the model's order).  The first group's space is left in
 * *out (NULL allowed) for showing; release it with tune_space_release.
 * accuracy 0 keeps the type's own accuracy (fp32: TF32x3, never plain
 * tf32); a positive one (tcx tune --accuracy) lets in plain tf32 where its
 * predicted error (plan/arith.h) at every size is within it.
 * TCX_EREJECT when the device takes no solution the planner lists. */
enum tcx_status tune_space_attach(struct config *cfg, const struct device_info *di, int seeds,
				  double accuracy, struct tune_space *out, struct tcx_error *err);
void tune_space_release(struct tune_space *s);

#endif /* TCX_TUNE_SPACE_H */

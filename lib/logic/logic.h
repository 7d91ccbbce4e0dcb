/* logic.h - library logic: which solution to run for which problem sizes,
 * for one device and one problem type.  tcx's own YAML format
 * (docs/logic-format.md) and Tensile's list forms (v3.0-3.3 with 8 items,
 * v4 with 9, modern with 11 or more: docs/tensile-compat.md section 7) are
 * read into one in-memory model; tcx's format and Tensile's v3 and v4 forms
 * are written.  Tensile's analysis (LibraryLogic.py) turns a table of
 * measurements into exact winners and range rules.
 *
 * Sizes are always in index-id order (tcx's numbering, which is Tensile's
 * for the layouts notation gives: C's indices from the fastest outward,
 * then the bound ones).
 */
#ifndef TCX_LOGIC_H
#define TCX_LOGIC_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/common.h"
#include "gen/solution.h"
#include "model/model.h"
#include "plan/arith.h"
#include "plan/form.h"

#define LOGIC_NAME_MAX 160
/* tcx's format version, the value of the `tcx-logic` key. */
#define LOGIC_TCX_VERSION 1

/* What a file was (struct logic.format) or is to be written as. */
enum logic_format {
	LOGIC_TCX = 0,		  /* tcx's YAML mapping */
	LOGIC_TENSILE_V3 = 3,	  /* Tensile v3.0-3.3: a list of 8 items */
	LOGIC_TENSILE_V4 = 4,	  /* Tensile v4: 9 items (ArchitectureName added) */
	LOGIC_TENSILE_MODERN = 5, /* Tensile 4.x later: 11 or more items (read only) */
};

struct logic_solution {
	struct solution sol; /* the parameters tcx honours */
	char name[LOGIC_NAME_MAX];
	json_t *tensile; /* owned: the solution's full mapping as a Tensile logic file
			    gave it (derived keys, parameters tcx ignores), or NULL */
	/* what its validation measured (tcx tune): the arithmetic it computes
	 * in and its result's relative error (plan/arith.h); measured is
	 * false where nothing was measured (keys absent from the file) */
	bool measured;
	enum arith arith;
	double measured_error;
	/* the planner's form it runs in (tcx tune, where the planner's own
	 * plan won: plan/form.h; the key 'form'), with sol a solution of the
	 * problem in that form; off: the problem as written.  fallback: a
	 * solution with no form, for where the form does not apply and for
	 * what cannot run one (exported libraries, Tensile's files); -1 none */
	struct plan_form form;
	int fallback;
};

struct logic_exact {
	int64_t sizes[TCX_MAX_INDICES];
	int nsizes; /* sizes given: the number of indices, or more where modern
		       Tensile appends leading dimensions (only the first
		       nidx take part in lookups) */
	int sol;    /* index into logic.sols */
	double gflops;
};

/* Tensile's range tree.  A node tests one index (index_order[depth]); its
 * rules are tried in order and the first with size <= threshold, or with
 * threshold -1 (everything larger; always the last rule), applies.  At the
 * last level a rule names a solution, above it a child node. */
struct range_node;
struct range_rule {
	int64_t threshold;	  /* a size, or -1 */
	int sol;		  /* last level: index into logic.sols, else -1 */
	struct range_node *child; /* other levels: the next index's node, else NULL */
};
struct range_node {
	int index; /* the index id this level tests */
	int nrules;
	struct range_rule *rules;
};

/* A logic file in memory.  Everything is owned by the struct and released
 * by logic_free; strings may be NULL where unknown. */
struct logic {
	int format;	      /* enum logic_format: what was read (LOGIC_TCX for new ones) */
	int source_format;    /* for a tcx file imported from Tensile: the Tensile form it
				 came from (3, 4, 5), else 0; equal to format for Tensile files */
	char *min_version;    /* Tensile's MinimumRequiredVersion */
	json_t *modern_items; /* modern Tensile's items from the tenth on (tile selection,
				 PerfMetric, ...), as a JSON array; NULL if none */
	char *schedule;	      /* Tensile's ScheduleName, or tcx's device family */
	char **device_names;  /* Tensile's DeviceNames, or ["default"] */
	int ndevice_names;
	char *architecture; /* Tensile's ArchitectureName; tcx: the device arch (sm_90) */
	char *device_name, *vendor, *driver, *backend; /* tcx's device identity */
	int compute_units;			       /* 0 if unknown */
	struct tcx_contraction *type;		       /* the problem type */
	json_t *problem_type; /* Tensile's ProblemType mapping: as read, or derived by tcx */
	int nsol;
	struct logic_solution *sols;
	int norder;
	int index_order[TCX_MAX_INDICES]; /* the range tree's levels: index ids */
	int nexact;
	struct logic_exact *exact;
	struct range_node *range; /* NULL: no range logic */
	double accuracy;	  /* tcx: the relative error the tuning asked for (tcx tune
				     --accuracy; the key 'accuracy'), 0 for the type's own */
	json_t *selector;	  /* tcx: the model for untuned sizes and its held-out report
				     (opaque here; passed through), or NULL */
	char *created_version, *created_date; /* what wrote the file, and when (UTC, ISO 8601);
						 NULL: filled in by the writer */
};

/* A new empty logic (format LOGIC_TCX, device names ["default"]).  The
 * caller fills it (logic_set_type, device fields) and frees it with
 * logic_free. */
enum tcx_status logic_new(struct logic **out, struct tcx_error *err);

/* Sets the problem type: a copy of c, Tensile's derived ProblemType mapping
 * (ptype_derive) and Tensile's index order (ptype_index_order). */
enum tcx_status logic_set_type(struct logic *l, const struct tcx_contraction *c,
			       struct tcx_error *err);

/* Reads a logic file, tcx's or Tensile's (told apart by the top level: a
 * mapping with `tcx-logic`, or a list).  Checks what lookups rely on:
 * solution indices in range, sizes per index, the range tree as deep as the
 * index order with the last threshold of every level -1.  On failure *out
 * is NULL and err says why: TCX_EIO, TCX_EPARSE ("FILE:LINE:COL: ..." for
 * malformed YAML (lib/yaml/ydoc.h) and the ProblemType (ptype.h); "FILE:
 * <item>: ..." for other content), TCX_ERANGE, TCX_ENOMEM. */
enum tcx_status logic_load(const char *path, struct logic **out, struct tcx_error *err);
/* The same for len bytes of text; name stands for the file in messages. */
enum tcx_status logic_load_string(const char *text, size_t len, const char *name,
				  struct logic **out, struct tcx_error *err);

/* Writes l in tcx's format, atomically ("-" is standard output). */
enum tcx_status logic_write(const struct logic *l, const char *path, struct tcx_error *err);
/* Writes l as LOGIC_TCX, LOGIC_TENSILE_V3 or LOGIC_TENSILE_V4. */
enum tcx_status logic_write_format(const struct logic *l, const char *path, int format,
				   struct tcx_error *err);
/* The document logic_write_format would write, as JSON (the caller's). */
enum tcx_status logic_to_json(const struct logic *l, int format, json_t **out,
			      struct tcx_error *err);

/* Releases l and everything it owns; NULL allowed. */
void logic_free(struct logic *l);

/* What runs solution k of l for problem p on device dev: its solution as
 * written (*planned false, *s its parameters), or, where it has a form,
 * the plan of it in that form (planner_plan_form: *planned true, pl to
 * release with plan_release).  Where the form does not apply at p's sizes
 * its fallback runs as written, or, with none, the planner's own plan;
 * a log line says why. */
struct plan_result;
enum tcx_status logic_plan(const struct logic *l, int k, const struct problem *p,
			   const struct device_info *dev, struct plan_result *pl, bool *planned,
			   struct solution *s, struct tcx_error *err);

/* The fallback of solution k (logic_solution.fallback) where it names one
 * that is a solution with no form, else NULL. */
const struct logic_solution *logic_fallback(const struct logic *l, int k);

/* For what runs no form (exported libraries, Tensile's files): every
 * solution with a form takes its fallback's parameters and name, so that
 * the sizes it was chosen for run the fastest solution measured there on
 * the problem as written.  TCX_EUNSUPPORTED, naming the solution, for one
 * with no fallback (a hand-written file's).  *changed (NULL allowed) says
 * whether any had a form. */
enum tcx_status logic_drop_forms(struct logic *l, const char *name, bool *changed,
				 struct tcx_error *err);

/* Checks the invariants logic_load checks (for logic built in memory). */
enum tcx_status logic_check(const struct logic *l, const char *name, struct tcx_error *err);

/* The solution for `sizes` (one per index id): an exact entry first, else
 * the range tree as Tensile's generated library walks it, else -1.  When
 * why is not NULL, a reason is appended to it ("exact size 64,64,1,64" or
 * "range: i <= 1"). */
int logic_lookup(const struct logic *l, const int64_t *sizes, struct strbuf *why);

/* Tensile's analysis (LibraryLogic.py, v3.0-3.3; docs/tensile-compat.md
 * section 7, steps 2-5) over a table of measurements.  Rows whose is_exact
 * is set are exact sizes; the others span the grid of range sizes (per
 * index the sorted union of the sizes used; cells not measured count as
 * not measured).  gflops <= 0 (or NaN) marks a failed or invalid run.
 *
 *  1. invalid: a solution with a failed run in some grid cell is dropped,
 *     repeatedly;
 *  2. exact winners: the fastest remaining solution per exact size;
 *  3. unimportant: each grid cell credits its winner with the runner-up's
 *     time minus the winner's; the solution with the least saved time that
 *     is neither an exact winner nor the only valid one for some cell is
 *     dropped while its share of all saved time is below importance_min or
 *     it wins no cell; repeatedly, while more than one solution is left;
 *  4. range rules over Tensile's index order: per level and grid position
 *     the sub-rule (last level: the solution with the smallest time, none
 *     on a full tie); equal consecutive sub-rules merge, a position with no
 *     sub-rule extends the previous rule; thresholds become sizes, the last
 *     of every level -1.
 * l->type must be set.  Fills l->sols (the solutions kept, in table order,
 * re-indexed), l->exact, l->range and l->index_order, replacing what was
 * there.  Where it differs from Tensile's code it is on purpose: an exact
 * winner is chosen among valid solutions only, and the saved-time share is
 * not clamped to 1 ms (so small problems work).  Fails with TCX_EINVAL for
 * a malformed table, TCX_EREJECT when every solution fails somewhere, and
 * TCX_ELIMIT when the grid is too large (LOGIC_MAX_CELLS). */
struct logic_table {
	int nidx; /* must equal l->type's number of indices */
	int nsizes;
	const int64_t *sizes; /* nsizes * nidx */
	const bool *is_exact; /* nsizes; NULL: none exact */
	int nsol;
	const struct solution *sols; /* nsol */
	const double *gflops;	     /* nsizes * nsol, row-major by size */
	const struct plan_form *forms; /* nsol: the form each runs in; NULL: none */
};

/* Whether column `col` of table t is solution ls (its parameters and
 * form). */
bool logic_table_is(const struct logic_table *t, int col, const struct logic_solution *ls);
#define LOGIC_MAX_CELLS ((int64_t)1 << 26) /* grid cells x solutions */
enum tcx_status logic_analyze(struct logic *l, const struct logic_table *t, double importance_min,
			      struct tcx_error *err);
/* Tensile's default SolutionImportanceMin. */
#define LOGIC_IMPORTANCE_MIN 0.01

/* ---- helpers shared by lib/logic's files, and useful to callers ---- */

/* Range trees. */
void range_free(struct range_node *n);
bool range_equal(const struct range_node *a, const struct range_node *b);
/* Tensile's nested-list form ([[threshold, child], ...]); NULL on no memory. */
json_t *range_to_json(const struct range_node *n);
/* Reads Tensile's nested-list form for l's index order and solutions. */
enum tcx_status range_from_json(json_t *v, const struct logic *l, const char *name,
				struct range_node **out, struct tcx_error *err);

/* A readable name for solution s: Tensile's SolutionNameMin when the mapping
 * has one, else tcx's solution_name. */
void logic_solution_name(const struct solution *s, json_t *tensile, char *buf, size_t len);

/* Readers of the parts tcx's format and Tensile's share ("name" for
 * messages): DeviceNames (a list or one name), exact logic (a list of
 * tcx's {sizes, solution, gflops} or Tensile's [[sizes...], [solution,
 * gflops]]; l->type and l->sols must be read), the index order (l->type
 * must be read). */
enum tcx_status logic_read_device_names(json_t *v, const char *name, struct logic *l,
					struct tcx_error *err);
enum tcx_status logic_read_exact(json_t *v, const char *name, struct logic *l,
				 struct tcx_error *err);
enum tcx_status logic_read_index_order(json_t *v, const char *name, struct logic *l,
				       struct tcx_error *err);

/* Tensile's list form (tensile.c): doc and the tree it was read from (for
 * the ProblemType's places). */
struct ynode;
enum tcx_status logic_from_tensile(json_t *doc, const struct ynode *tree, const char *name,
				   struct logic *l, struct tcx_error *err);
enum tcx_status logic_to_tensile(const struct logic *l, int format, json_t **out,
				 struct tcx_error *err);

#endif /* TCX_LOGIC_H */

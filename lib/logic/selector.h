/* selector.h - choosing solutions for sizes that were never tuned.
 *
 * Three selectors (runtime/select.c, the code the exported libraries
 * run too): "logic", Tensile's exact entries and range rules; "nearest",
 * the fastest solution at the nearest tuned size in log-size space; and
 * "model", a performance model: each solution's time is its work over its
 * rate, the work the useful multiply-adds times the padding overhead of
 * its launch (macro tiles padded at the edges, DepthU padding,
 * GlobalSplitU, work-groups in whole waves of compute units) to a fitted
 * power, the rate a distance-weighted mean of its measured rates over a
 * fitted bandwidth.  Both parameters are fitted to the measurements by
 * leaving each tuned size out in turn (selector.c, fit_model).
 *
 * Their data: the logic's solutions and exact entries, the per-solution
 * measurements `tcx tune` keeps in the logic's `selector` section, and
 * optionally the rows of a results store.  The `selector` section also
 * records which selector an exported library uses by default and the
 * held-out report that chose it (docs/logic-format.md, "selector").
 */
#ifndef TCX_SELECTOR_H
#define TCX_SELECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "runtime/select.h"
#include "logic/logic.h"
#include "store/store.h"

/* The `version` this tcx writes in a selector section. */
#define SELECTOR_VERSION 1

/* A logic's selection data (opaque). */
struct selector;

/* Reads l's selector section (its measurements, the recorded default) and
 * exact entries.  `name` names the file in messages.  TCX_EPARSE for a
 * malformed section ("NAME: selector: ..."), TCX_EUNSUPPORTED for
 * ConstantSizes solutions, TCX_ENOMEM.  On failure *out is NULL. */
enum tcx_status selector_create(const struct logic *l, const char *name, struct selector **out,
				struct tcx_error *err);
/* Frees s; NULL allowed. */
void selector_destroy(struct selector *s);

/* Adds the store's successful measurements of l's solutions, for l's
 * device and problem type, at sizes not already known and not in `exclude`
 * (held-out sizes; NULL for none).  *added counts the values added. */
enum tcx_status selector_add_store(struct selector *s, const struct logic *l, struct store *db,
				   const struct size_list *exclude, int *added,
				   struct tcx_error *err);

/* The tables the selectors read (borrowed from s), for export-lib. */
const struct sel_table *selector_table(const struct selector *s);

/* The solution selector `kind` picks for sizes (one per index id), with
 * the fallbacks of sel_choose; -1 when no solution can run them.  The
 * reason is appended to why (NULL allowed). */
int selector_choose(const struct selector *s, enum sel_kind kind, const int64_t *sizes,
		    struct strbuf *why);

/* The selector the logic records as the default, else SEL_MODEL. */
enum sel_kind selector_default(const struct selector *s);
/* Whether the logic records a default (a held-out evaluation chose it). */
bool selector_has_default(const struct selector *s);

/* The model's fitted parameters and how well they did leaving each tuned
 * size out: {padding_exponent, bandwidth_octaves, fit_efficiency (null:
 * nothing to fit), fit_sizes}; the caller's. */
json_t *selector_model_json(const struct selector *s);

/* "logic", "nearest", "model". */
const char *selector_kind_name(enum sel_kind k);
bool selector_kind_parse(const char *name, enum sel_kind *out);

/* The features of solution s the selectors use (its parameters resolved as
 * the kernel generator resolves them).  TCX_EREJECT when s is invalid,
 * TCX_EUNSUPPORTED for ConstantSizes. */
enum tcx_status selector_solution_info(const struct tcx_contraction *c, const struct solution *s,
				       struct sel_solution *out, struct tcx_error *err);

/* Stores in l's selector section the measurements of l's solutions at
 * every size of table t (the tuner's final table, after logic_analyze
 * chose l's solutions), replacing the section. */
enum tcx_status selector_build(struct logic *l, const struct logic_table *t, struct tcx_error *err);

/* Records in l's selector section the default selector and the held-out
 * report that chose it (report is copied; NULL removes it). */
enum tcx_status selector_record(struct logic *l, enum sel_kind dflt, json_t *report,
				struct tcx_error *err);

#endif /* TCX_SELECTOR_H */

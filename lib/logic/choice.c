/* choice.c - what runs a logic's choice (logic.h, logic_plan): its
 * solution as written, or in the planner's form it was tuned in. */
#include <string.h>

#include "logic/logic.h"
#include "plan/planner.h"

enum tcx_status logic_plan(const struct logic *l, int k, const struct problem *p,
			   const struct device_info *dev, struct plan_result *pl, bool *planned,
			   struct solution *s, struct tcx_error *err)
{
	const struct logic_solution *ls = &l->sols[k];
	struct tcx_error why = { 0 };
	enum tcx_status st;

	*planned = false;
	if (!ls->form.on) {
		*s = ls->sol;
		return TCX_OK;
	}
	st = planner_plan_form(p, dev, &ls->form, &ls->sol, pl, &why);
	if (st == TCX_OK) {
		*planned = true;
		*s = ls->sol;
		return TCX_OK;
	}
	if (st != TCX_EREJECT) {
		if (err)
			*err = why;
		return st;
	}
	if (logic_fallback(l, k)) {
		tcx_log(TCX_LOG_INFO, "logic solution %d: %s; its fallback, solution %d, runs", k,
			why.msg, ls->fallback);
		*s = logic_fallback(l, k)->sol;
		return TCX_OK;
	}
	tcx_log(TCX_LOG_INFO, "logic solution %d: %s, and it names no fallback: the planner's "
		"choice runs", k, why.msg);
	st = planner_plan(p, dev, planner_env_flags(), pl, err);
	if (st)
		return st;
	*planned = true;
	*s = pl->best.sol;
	return TCX_OK;
}

/* form.h - the form a plan runs a problem in (planner.h): merged, its
 * operands permuted first (TTGT), or by the tensor-times-matrix kernel.
 * Apart from the planner so that library logic (logic/logic.h), which
 * records a form beside a tuned solution, needs none of it. */
#ifndef TCX_PLAN_FORM_H
#define TCX_PLAN_FORM_H

#include <stdbool.h>
#include <stddef.h>

/* The form a plan runs its problem in, beyond one kernel on the problem
 * as written: merged where its indices merge (merge.h), with A, B and C
 * permuted into a GEMM's order first (TTGT) as `permute` says, and by the
 * tensor-times-matrix or -vector kernel instead of the contraction kernel
 * where `ttm` says.  planner_plan fills one in for its choice; library
 * logic records it beside a tuned solution (logic/logic.h), which
 * planner_plan_form makes a plan of again. */
enum {
	PLAN_FORM_A = 1 << 0,        /* permute A into a GEMM's order */
	PLAN_FORM_B = 1 << 1,        /* and B */
	PLAN_FORM_C = 1 << 2,        /* the kernel writes C in a GEMM's order, permuted after */
	PLAN_FORM_C_BFIRST = 1 << 3, /* with PLAN_FORM_C: B's free indices first in C's copy */
	PLAN_FORM_C_BYC = 1 << 4,    /* with PLAN_FORM_C: free indices in C's order */
	PLAN_FORM_BITS = 1 << 5
};
struct plan_form {
	bool on;          /* the planner's form; off: the problem as written */
	unsigned permute; /* PLAN_FORM_* bits */
	bool ttm;         /* the tensor-times-matrix or -vector kernel runs it */
};

/* "merged+permute-A+permute-C+ttm": form f in words, as logic files
 * write it (logic.h), and back; false for a word it does not know. */
void plan_form_name(const struct plan_form *f, char *buf, size_t len);
bool plan_form_parse(const char *text, struct plan_form *out);
bool plan_form_equal(const struct plan_form *a, const struct plan_form *b);

#endif /* TCX_PLAN_FORM_H */

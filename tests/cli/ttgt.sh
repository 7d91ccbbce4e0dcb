#!/bin/bash
# ttgt.sh - plans that permute A and/or B before the contraction and C
# after it (TTGT, plan/planner.h) compute the right answer in validate and
# bench.
# $TCX_PLANNER=ttgt makes the planner choose such a plan wherever one
# differs from the direct plan, so that the permutes run on PoCL too, where
# the model would rarely pick them.
. "$(dirname "$0")/lib.sh"
export TCX_PLANNER=ttgt

# a bound index stride-1 in A and in B (TCCG's ijkl-imjn-nlmk shape), a
# matrix-times-tensor, a batched case and one with every size 1; sizes of 1
# and primes, every element type
for t in s z; do
	run -v validate 'imjn,nlmk->ijkl' --sizes i=4,j=3,k=7,l=5,m=6,n=2 --type "$t"
	expect_rc 0 "imjn,nlmk->ijkl ($t)"
	expect_err 'planner: (A |B |C )+permuted' "a permute planned ($t)"
	expect_out 'result +PASS' "PASS ($t)"
done
for e in 'kil,lkj->ij:13,1,7,5' 'abcd,dbea->ce:3,5,7,2,11' 'bik,bkj->bij:3,17,5,9'; do
	run -v validate "${e%%:*}" --sizes "${e#*:}" --type d
	expect_rc 0 "${e%%:*}"
	expect_err 'permuted' "${e%%:*}: a permute planned"
	expect_out 'result +PASS' "${e%%:*}: PASS"
done

# A and B in a GEMM's order, C transposed: only C is permuted, the kernel
# writing its copy, which is made from C first when beta is not 0
for t in d c; do
	run -v validate 'ki,jk->ij' --sizes i=7,j=9,k=5 --beta 0.5 --type "$t"
	expect_rc 0 "C permuted, beta 0.5 ($t)"
	expect_err 'planner: C permuted' "only C permuted ($t)"
	expect_out 'result +PASS' "C permuted: PASS ($t)"
done

# left to the model, a GEMM in a GEMM's order runs directly
TCX_PLANNER= run -v validate 'ki,jk->ji' --sizes i=9,j=7,k=5
expect_rc 0 "a GEMM"
expect_out 'result +PASS' "GEMM: PASS"
printf '%s' "$err" | grep -q permuted && fail "a GEMM in GEMM order was permuted"

# bench launches the permutes with the kernel and says what it planned
run bench 'imjn,nlmk->ijkl' --exact 4,3,7,5,6,2 --min-reps 3 --min-time 0 --flush off --format json
expect_rc 0 "bench"
expect_out '"status": "ok"' "bench: timed"
expect_out '"permuted": \[' "bench: the permuted operands named"

run bench 'imjn,nlmk->ijkl' --exact 4,3,7,5,6,2 --min-reps 3 --min-time 0 --flush off
expect_rc 0 "bench table"
expect_out 'timer +path' "bench table: the path column"
expect_out 'wall +TTGT:[ABC]+$' "bench table: the path that ran"

# the permuted plan as `tcx plan` describes it
run plan 'imjn,nlmk->ijkl' --sizes i=4,j=3,k=7,l=5,m=6,n=2
expect_rc 0 "plan"
expect_out '(after permuting [AB]|writing C) in(to)? the order' "plan: the permute shown"

done_testing

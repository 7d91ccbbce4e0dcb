#!/bin/bash
# ttm.sh - the tensor-times-matrix kernel (gen/ttm.h) computes the right
# answer in validate and bench, over awkward sizes (1, primes, extents no
# tile divides), either operand as the matrix, T read along each of its
# indices' kinds (C's fastest, another free one, the summed one), fp32 and
# fp64, alpha and beta, explicit strides, and j longer than one block.
# $TCX_TTM=1 runs it wherever it applies: the planner offers it to GPUs
# only, so on PoCL it runs only when asked.
src=${TCX_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/lib.sh"
export TCX_TTM=1
py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
schema=$src/share/schemas
validator=$src/tests/docs/jsonschema.py
L='--layout first-fastest'

# T read along another free index (d), 6 indices; T along k; T along C's
# fastest (a); M transposed; j of 70 in blocks of 32 or less, beta 2;
# the matrix as A; fp64 with alpha and beta; every size 1
while IFS='|' read -r e s x; do
	# shellcheck disable=SC2086
	run -v validate "$e" --sizes "$s" $L $x
	expect_rc 0 "$e $x"
	expect_err 'tensor-times-matrix kernel runs it instead' "$e $x: the kernel planned"
	expect_out 'solution +none: the tensor-times-matrix kernel' "$e $x: the kernel named"
	expect_out 'result +PASS' "$e $x: PASS"
done <<'EOF'
C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]|a=7,b=5,j=3,c=2,d=13,k=11|
C[a,b,j,c]=A[k,b,a,c]*B[j,k]|a=37,b=3,j=5,c=4,k=19|
C[a,j]=A[a,k]*B[k,j]|a=131,j=41,k=17|
C[a,j,b,c]=A[c,k,b,a]*B[j,k]|a=36,j=70,b=3,c=9,k=5|--beta 2
C[a,b,c,s]=A[r,c]*B[a,b,r,s]|a=1,b=1,c=1,s=1,r=1|
C[a,c,s]=A[r,c]*B[a,r,s]|a=19,c=23,s=3,r=29|--type d --alpha 0.5 --beta -1.25
C[a,b,j]=A[b,k,a]*B[k,j]|a=45,b=30,j=24,k=23|--strides A=[1,31,713],B=[1,25],C=[3,137,4200]
EOF

# C's fastest index the matrix's: not for this kernel, even when asked
run -v validate 'abk,kj->abj' --sizes a=9,b=11,k=7,j=5
expect_rc 0 "C along j"
expect_out 'result +PASS' "C along j: PASS"
printf '%s' "$err" | grep -q 'tensor-times-matrix' && fail "C along j ran the tensor-times-matrix kernel"

# bench runs it alone and says so
run bench 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --exact 7,5,3,2,13,11 --min-reps 3 --min-time 0 --flush off --format json
expect_rc 0 "bench"
expect_out '"status": "ok"' "bench: timed"
expect_out '"tensor_times_matrix": true' "bench: the kernel named"
printf '%s' "$out" >b.json
$py "$validator" "$schema/bench.schema.json" b.json || fail "bench's JSON conforms to its schema"
run bench 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --exact 7,5,3,2,13,11 --min-reps 3 --min-time 0 --flush off
expect_rc 0 "bench table"
expect_out 'wall +ttm$' "bench table: the path that ran"

# as `tcx plan` describes it; $TCX_TTM=0 keeps it off
run plan 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --sizes a=7,b=5,j=3,c=2,d=13,k=11
expect_rc 0 "plan"
expect_out '^choice +the tensor-times-matrix kernel, no permutes: C along a, T along d' "plan: the kernel chosen"
expect_out '^instead of +MT' "plan: the contraction kernel it replaces"
run plan 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --sizes a=7,b=5,j=3,c=2,d=13,k=11 --format json
expect_out '"chosen": true' "plan JSON: chosen"
printf '%s' "$out" >p.json
$py "$validator" "$schema/plan.schema.json" p.json || fail "plan's JSON conforms to its schema"
TCX_TTM=0 run plan 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --sizes a=7,b=5,j=3,c=2,d=13,k=11
printf '%s' "$out" | grep -q 'tensor-times-matrix' && fail "TCX_TTM=0 offered the kernel"

# left to the model: on an H200 TCCG's abjcd-dkbac-jk runs it, abj-bka-kj
# (a sum of 384) does not; on the CPU device it is not offered
TCX_TTM= run plan 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --sizes a=48,b=36,j=24,c=36,d=48,k=36 --for h200
expect_out '^choice +the tensor-times-matrix kernel' "h200: abjcd runs it"
TCX_TTM= run plan 'C[a,b,j]=A[b,k,a]*B[k,j]' --sizes a=384,b=384,j=24,k=384 --for h200
expect_out '^not chosen +the tensor-times-matrix kernel' "h200: abj does not"
TCX_TTM= run plan 'C[a,b,j,c,d]=A[d,k,b,a,c]*B[j,k]' --sizes a=7,b=5,j=3,c=2,d=13,k=11
printf '%s' "$out" | grep -q 'tensor-times-matrix' && fail "the CPU device was offered the kernel"

done_testing

#!/bin/bash
# ttv.sh - the tensor-times-vector kernel (gen/ttv.h) computes the right
# answer in validate and bench, over awkward sizes (1, primes, extents no
# lane count divides), either operand as the vector, T read along a summed
# index and along C's, one and several summed slots (merged where they
# move together), batch indices, a dot product, fp32 and fp64, alpha and
# beta, explicit strides.  $TCX_TTM=1 runs it wherever it applies: the
# planner offers it to GPUs only, so on PoCL it runs only when asked.
src=${TCX_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/lib.sh"
export TCX_TTM=1
py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
schema=$src/share/schemas
validator=$src/tests/docs/jsonschema.py
L='--layout first-fastest'

# along the sum, two summed slots (p and w merged); along C; one output of
# size 1 and a sum longer than the lanes; a dot product; a batch index (d)
# with T along the sum; three summed slots and a batch index; a summed
# index of size 1; fp64; the vector as A, beta; alpha and beta with three
# summed slots and a batch index; explicit strides
while IFS='|' read -r e s x; do
	# shellcheck disable=SC2086
	run -v validate "$e" --sizes "$s" $L $x
	expect_rc 0 "$e $x"
	expect_err 'tensor-times-vector kernel runs it instead' "$e $x: the kernel planned"
	expect_out 'solution +none: the tensor-times-vector kernel' "$e $x: the kernel named"
	expect_out 'result +PASS' "$e $x: PASS"
done <<'EOF'
C[l]=A[h,l,p,w]*B[p,w,h]|l=71,h=47,p=13,w=7|
C[i]=A[i,k]*B[k]|i=1000,k=37|
C[i]=A[k,i]*B[k]|i=1,k=1001|
C[]=A[k]*B[k]|k=4099|
C[i,d]=A[v,d,i]*B[v,d]|i=77,d=79,v=12|
C[z,k]=A[x,z,p,t,k]*B[t,z,p,x]|z=5,k=16,x=3,p=7,t=11|
C[d,l,x]=A[c,l,d,u,x,r]*B[u,c,r]|d=3,l=15,x=11,c=8,u=1,r=12|
C[h,v,s]=A[h,s,e,v]*B[e]|h=23,v=7,s=12,e=40|--type d
C[i,b]=A[k,b]*B[i,k,b]|i=33,k=17,b=5|--beta 0.5
C[t,s,v]=A[h,c,s,z,t,v]*B[c,h,z,v]|t=3,s=5,v=7,h=2,c=3,z=4|--alpha 2 --beta -1
C[a,b]=A[a,k,b]*B[k]|a=31,b=6,k=19|--strides A=[1,37,900],B=[3],C=[2,70]
EOF

# the sum in parts, each part's sums added by a second kernel (what a GPU
# with too few elements of C for its SMs runs; TCX_TTV_SPLIT forces it)
while IFS='|' read -r e s x; do
	# shellcheck disable=SC2086
	TCX_TTV_SPLIT=3 run validate "$e" --sizes "$s" $L $x
	expect_out 'the sum in 3 parts' "$e $x split: the parts"
	expect_out 'result +PASS' "$e $x split: PASS"
done <<'EOF'
C[l]=A[h,l,p,w]*B[p,w,h]|l=71,h=47,p=13,w=7|
C[]=A[k]*B[k]|k=4099|
C[h,v,s]=A[h,s,e,v]*B[e]|h=23,v=7,s=12,e=40|--type d --beta 0.5
C[t,s,v]=A[h,c,s,z,t,v]*B[c,h,z,v]|t=3,s=5,v=7,h=2,c=3,z=4|--alpha 2 --beta -1
EOF

# both operands with free indices, or a complex type: not for this kernel
run -v validate 'ik,kj->ij' --sizes i=9,j=5,k=7
expect_rc 0 "a GEMM"
printf '%s' "$err" | grep -q 'tensor-times-vector' && fail "a GEMM ran the tensor-times-vector kernel"
run -v validate 'ik,k->i' --sizes i=9,k=7 --type c
expect_rc 0 "complex"
printf '%s' "$err" | grep -q 'tensor-times-vector' && fail "complex ran the tensor-times-vector kernel"

# bench runs it alone and says so
run bench 'C[l]=A[h,l,p,w]*B[p,w,h]' --exact 71,47,13,7 --min-reps 3 --min-time 0 --flush off --format json
expect_rc 0 "bench"
expect_out '"status": "ok"' "bench: timed"
expect_out '"tensor_times_matrix": true' "bench: the kernel named"
printf '%s' "$out" >b.json
$py "$validator" "$schema/bench.schema.json" b.json || fail "bench's JSON conforms to its schema"

# as `tcx plan` describes it; $TCX_TTM=0 keeps it off
run plan 'C[l]=A[h,l,p,w]*B[p,w,h]' --sizes l=71,h=47,p=13,w=7
expect_rc 0 "plan"
expect_out '^choice +the tensor-times-vector kernel, no permutes: B the vector, C along l, T read along h' "plan: the kernel chosen"
run plan 'C[l]=A[h,l,p,w]*B[p,w,h]' --sizes l=71,h=47,p=13,w=7 --format json
expect_out '"family": "the tensor-times-vector kernel"' "plan JSON: the family"
printf '%s' "$out" >p.json
$py "$validator" "$schema/plan.schema.json" p.json || fail "plan's JSON conforms to its schema"
TCX_TTM=0 run plan 'C[l]=A[h,l,p,w]*B[p,w,h]' --sizes l=71,h=47,p=13,w=7
printf '%s' "$out" | grep -q 'tensor-times-vector' && fail "TCX_TTM=0 offered the kernel"

# left to the model: on an H200 the selection report's matrix-vector
# product runs it (a contraction kernel's tiles use 2% of their work
# there); on the CPU device it is not offered
TCX_TTM= run plan 'C[l]=A[h,l,p,w]*B[p,w,h]' --sizes l=71,h=47,p=66,w=67 --for h200
expect_out '^choice +the tensor-times-vector kernel' "h200: the matrix-vector product runs it"
TCX_TTM= run plan 'C[l]=A[h,l,p,w]*B[p,w,h]' --sizes l=71,h=47,p=13,w=7
printf '%s' "$out" | grep -q 'tensor-times-vector' && fail "the CPU device was offered the kernel"

done_testing

#!/bin/bash
# accuracy.sh - accuracy as a contract (--accuracy, a relative error
# max |got - ref| / sum |a b|): the planner lets plain tf32 in only where
# its predicted error meets the accuracy asked, and says which arithmetic it
# chose and the error predicted for it; with no accuracy the plan is the
# type's own (TF32x3 on Hopper, never plain tf32).  Plans for a described
# H200 (--for): no device is opened.
. "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
[ -x $py ] || py=python3

gemm() {
	run plan 'C[ij]=A[ik]*B[kj]' --sizes i=4096,j=4096,k=4096 --for h200 "$@"
}

gemm
expect_rc 0 "no accuracy"
expect_out '^choice .*_TF32X3$' "no accuracy: TF32x3"
checks=$((checks + 1))
printf '%s' "$out" | grep -q arithmetic && fail "no accuracy: the table is as before"

gemm --accuracy 1e-3
expect_rc 0 "accuracy 1e-3"
expect_out '^accuracy +0\.001 relative error' "accuracy 1e-3: echoed"
expect_out '^choice .*_MI64x[0-9]+x8x1$' "accuracy 1e-3: tensor cores without TF32x3"
expect_out '^ +arithmetic tf32, predicted error [0-9.e-]+$' "accuracy 1e-3: plain tf32"

gemm --accuracy 1e-6
expect_rc 0 "accuracy 1e-6"
expect_out '^choice .*_TF32X3$' "accuracy 1e-6: TF32x3"
expect_out '^ +arithmetic tf32x3, ' "accuracy 1e-6: says tf32x3"

gemm --accuracy 1e-3 --format json
expect_rc 0 "accuracy 1e-3, json"
checks=$((checks + 1))
printf '%s' "$out" | $py -c '
import json, sys
o = json.load(sys.stdin)
c = o["choice"]
assert o["accuracy"] == 1e-3, o["accuracy"]
assert c["arithmetic"] == "tf32", c["arithmetic"]
assert 0 < c["predicted_error"] <= 1e-3, c["predicted_error"]
assert not c["solution"].get("TF32x3", False)
' || fail "accuracy 1e-3, json: arithmetic tf32 within the bound"

# fp64 has one arithmetic: any accuracy plans it as before
run plan 'C[ij]=A[ik]*B[kj]' --sizes 512,512,512 --for h200 -t d --accuracy 1e-3
expect_rc 0 "fp64 with an accuracy"
expect_out '^ +arithmetic fp64, ' "fp64 with an accuracy: fp64"

done_testing

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

# TCX_PLANNER=simt: the planner's best for fp32 without the tensor cores
# (what --accuracy is compared with), even when an accuracy would allow them
TCX_PLANNER=simt gemm
expect_rc 0 "TCX_PLANNER=simt"
expect_out '^choice +MT[0-9A-Zx_]*_LT1$' "TCX_PLANNER=simt: a SIMT solution (no _MI)"
TCX_PLANNER=simt gemm --accuracy 1e-3
expect_rc 0 "TCX_PLANNER=simt, accuracy 1e-3"
expect_out '^ +arithmetic fp32-simt, ' "TCX_PLANNER=simt, accuracy 1e-3: fp32 SIMT"

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

# tcx run --accuracy: C is checked against the host reference before it is
# written; a result outside the bound is never written.  The host device
# computes fp32 with fp64 sums: an error near 1e-8.
$py -c '
import numpy as np
r = np.random.default_rng(3)
np.save("a.npy", r.uniform(-1, 1, (40, 33)).astype(np.float32))
np.save("b.npy", r.uniform(-1, 1, (33, 24)).astype(np.float32))
' || { echo "skipped: no NumPy"; exit 77; }
run -v run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o c.npy --device host --accuracy 1e-6
expect_rc 0 "run within the accuracy"
expect_err 'accuracy: fp32-simt, measured relative error [0-9.e-]+ within the accuracy 1e-06 asked' \
	"run within the accuracy: arithmetic and measured error said"
checks=$((checks + 1))
[ -s c.npy ] || fail "run within the accuracy: c.npy written"
run run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o d.npy --device host --accuracy 1e-30
expect_rc 1 "run outside any accuracy fp32 reaches"
expect_err "relative error [0-9.e-]+ is above the accuracy 1e-30 asked even in fp32-simt, the most accurate arithmetic fp32 has" \
	"run outside any accuracy: the measured error, the bound, the arithmetic"
checks=$((checks + 1))
[ ! -e d.npy ] || fail "run outside any accuracy: nothing written"
# a solution given: checked, not replaced
run run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o d.npy --device host --accuracy 1e-30 \
	--params 'WorkGroup=[8,8,1]'
expect_rc 1 "a given solution outside the accuracy"
expect_err "relative error [0-9.e-]+ \(fp32-simt\) is above the accuracy 1e-30 asked" \
	"a given solution outside the accuracy: named"

# tcx validate --accuracy: the contract, |err| <= e * sum |a b| per element,
# instead of the type's bound; the relative error measured is printed
run validate 'C[ij]=A[ik]*B[kj]' --sizes 40,33,24 --device host --accuracy 1e-6
expect_rc 0 "validate within the accuracy"
expect_out '^bound +\|err\| <= 1e-06 \* sum\|alpha\*a\*b\| \+ \|beta\*c\| \(--accuracy\), in fp32-simt$' \
	"validate within the accuracy: the bound"
expect_out '^relative +[0-9.e-]+: the largest' "validate within the accuracy: the error"
run validate 'C[ij]=A[ik]*B[kj]' --sizes 40,33,24 --device host --accuracy 1e-12 --format json
expect_rc 1 "validate outside the accuracy"
checks=$((checks + 1))
printf '%s' "$out" | $py -c '
import json, sys
o = json.load(sys.stdin)
assert o["result"] == "fail" and o["bound"] == {"kind": "accuracy", "accuracy": 1e-12}, o["bound"]
assert o["accuracy"] == 1e-12 and o["arithmetic"] == "fp32-simt", o
assert o["measured_error"] > 1e-12 and o["mismatches"] > 0, o
' || fail "validate outside the accuracy: json"
expect_err "the result's relative error [0-9.e-]+ \(fp32-simt\) is above the accuracy 1e-12 asked" \
	"validate outside the accuracy: named"
# without it, validate is as before: no accuracy fields
run validate 'C[ij]=A[ik]*B[kj]' --sizes 40,33,24 --device host --format json
checks=$((checks + 1))
printf '%s' "$out" | $py -c '
import json, sys
o = json.load(sys.stdin)
assert "accuracy" not in o and "measured_error" not in o and o["bound"]["kind"] == "type-aware"
' || fail "validate without an accuracy: the type-aware bound, no accuracy fields"

# tcx bench --accuracy: each size's kernel is checked before it is timed,
# and the row says in what arithmetic and with what error; a size that
# misses stops the run with exit 1, writing no results file
need_opencl $py
run -v bench 'C[ij]=A[ik]*B[kj]' --exact 40,33,24 --accuracy 1e-5 --no-store \
	--min-reps 2 --min-time 0.001 --format json -o b.json
expect_rc 0 "bench within the accuracy"
expect_err 'accuracy: fp32-simt, measured relative error [0-9.e-]+ within the accuracy 1e-05' \
	"bench within the accuracy: said with -v"
checks=$((checks + 1))
$py -c '
import json, sys
r = json.load(open("b.json"))["results"][0]
assert r["status"] == "ok" and r["accuracy"] == 1e-5, r
assert r["arithmetic"] == "fp32-simt" and 0 <= r["measured_error"] <= 1e-5, r
' || fail "bench within the accuracy: accuracy, arithmetic and measured_error in its row"
checks=$((checks + 1))
$py "$TCX_SOURCE_DIR/tests/docs/jsonschema.py" "$TCX_SOURCE_DIR/share/schemas/bench.schema.json" \
	b.json || fail "bench within the accuracy: the results validate against bench.schema.json"
run bench 'C[ij]=A[ik]*B[kj]' --exact 40,33,24 --accuracy 1e-30 --no-store \
	--min-reps 2 --min-time 0.001 -o c.json
expect_rc 1 "bench outside any accuracy"
expect_err "relative error [0-9.e-]+ is above the accuracy 1e-30 asked even in fp32-simt" \
	"bench outside any accuracy: named"
checks=$((checks + 1))
[ ! -e c.json ] || fail "bench outside any accuracy: no results file"

# tcx tune --accuracy: winners are validated against it; the logic records
# the accuracy asked and, per solution, the arithmetic and the measured
# error; a tuning whose every winner misses it writes no logic (exit 1)
run tune 'C[ij]=A[ik]*B[kj]' --sizes i=32,j=16,k=8 --budget 2 --device opencl:0:0 \
	--db t.db -o logic --accuracy 1e-4 --min-reps 2 --min-time 0.001
expect_rc 0 "tune within the accuracy"
lg=$(ls logic/*.yaml 2>/dev/null | head -1)
checks=$((checks + 1))
[ -n "$lg" ] && grep -q '^accuracy: 0.0001$' "$lg" && grep -q '^  arithmetic: fp32-simt$' "$lg" &&
	grep -Eq '^  measured_error: [0-9.e-]+$' "$lg" ||
	fail "tune within the accuracy: the logic records it"
run logic show "$lg"
expect_rc 0 "the logic tune wrote loads"
run tune 'C[ij]=A[ik]*B[kj]' --sizes i=32,j=16,k=8 --budget 2 --device opencl:0:0 \
	--db t.db -o logic2 --accuracy 1e-30
expect_rc 1 "tune outside the accuracy"
expect_err 'WINNER DROPPED: .*relative error [0-9.e-]+ in fp32-simt is above the accuracy 1e-30 asked' \
	"tune outside the accuracy: the winners are dropped, saying why"
expect_err 'no solution is left for C\[ij\]=A\[ik\]\*B\[kj\]: every winner failed validation or missed the accuracy asked' \
	"tune outside the accuracy: no logic"
checks=$((checks + 1))
[ -z "$(ls logic2 2>/dev/null)" ] || fail "tune outside the accuracy: no logic file"

# tcx export-lib --accuracy: logic tuned within it (or weaker) is taken (or
# refused, exit 2, nothing written); logic that records no accuracy and no
# measured errors (older logic) is refused; the library records it
run export-lib "$lg" -o lib1 --accuracy 1e-3
expect_rc 0 "export within the accuracy"
checks=$((checks + 1))
grep -q '^#define TCXLIB_ACCURACY 0.001$' lib1/include/tcxlib.h ||
	fail "export within the accuracy: the header records it"
run export-lib "$lg" -o lib2 --accuracy 1e-5
expect_rc 2 "export of logic tuned for a weaker accuracy"
expect_err "logic '.*' was tuned for a relative error of 0.0001, weaker than the accuracy 1e-05 asked" \
	"export of logic tuned for a weaker accuracy: named"
checks=$((checks + 1))
[ ! -e lib2 ] || fail "export of logic tuned for a weaker accuracy: nothing written"
run export-lib "$TCX_SOURCE_DIR/tests/data/bench/gemm-logic.yaml" -o lib3 --accuracy 1e-3
expect_rc 2 "export of logic that records no accuracy"
expect_err "logic '.*gemm-logic.yaml' records no accuracy: solution 0 .* has no measured error" \
	"export of logic that records no accuracy: named"
run export-lib "$TCX_SOURCE_DIR/tests/data/bench/gemm-logic.yaml" -o lib4
expect_rc 0 "export without an accuracy takes it as before"
checks=$((checks + 1))
! grep -q ACCURACY lib4/include/tcxlib.h || fail "export without an accuracy: nothing recorded"

done_testing

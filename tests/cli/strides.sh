#!/bin/bash
# strides.sh - --strides on validate, bench and tune (views: tensors whose
# rows are padded past their sizes).  validate passes with a padded leading
# dimension for A, B and C and finds nothing written between C's rows;
# bench applies the strides to every size of --exact and --range, allocates
# the strided extent, counts only the view's elements as traffic and
# records the strides; strides that make C's elements share an address at
# any size of the set are refused before anything runs; a tune with strides
# completes, stores its measurements apart from packed ones, and validates
# its winners on the strided layout.
. "$(dirname "$0")/lib.sh"

export XDG_CACHE_HOME=$scratch/cache
gemm='C[ij]=A[ik]*B[kj]'

# validate: every operand with its leading dimension padded (first-fastest,
# so the first index is contiguous: A[ik] with i=13 in columns of 16, B[kj]
# with k=11 in columns of 12, C[ij] with i=13 in columns of 17)
run validate "$gemm" --sizes i=13,j=7,k=11 --strides 'A=[1,16],B=[1,12],C=[1,17]' \
	--format json --device opencl:0:0
expect_rc 0 "validate with padded A, B and C"
expect_out '"result": "pass"' "passes"
expect_out '"writes_outside_c": 0' "nothing written between C's rows"
# and einsum letters, with C's rows the slow index
run validate 'ik,kj->ij' --sizes i=5,j=9,k=3 --strides 'A=[4,1],B=[10,1],C=[11,1]' \
	--device opencl:0:0
expect_rc 0 "validate an einsum expression with padded rows"

# bench: the strides for every size of the set
run bench "$gemm" --exact i=13,j=7,k=11 --range '[4,4,8],[4],[4]' \
	--strides 'A=[1,16],B=[1,12],C=[1,17]' --min-reps 2 --min-time 0 --flush off \
	--format json --device opencl:0:0
expect_rc 0 "bench with strides over --exact and --range"
checks=$((checks + 1))
printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["strides"] == "A=[1,16],B=[1,12],C=[1,17]", d.get("strides")
rows = d["results"]
assert len(rows) == 3, len(rows)
for r in rows:
    s = r["sizes"]
    assert r["status"] == "ok", r
    # the view'"'"'s elements, not the padded extents
    want = 4 * (s["i"] * s["k"] + s["k"] * s["j"] + s["i"] * s["j"])
    got = r["gbs"] * r["median_ms"] * 1e6
    assert abs(got - want) < 1e-6 * want, (s, got, want)
' || fail "bench's JSON records the strides and counts the view's bytes"

# strides that fit the small sizes of a range but alias C at its largest
run bench "$gemm" --range '[4,4,24],[4],[4]' --strides 'C=[1,17]' -o out.json \
	--device opencl:0:0
expect_rc 2 "strides that alias C at the range's largest size"
expect_err "--strides 'C=\[1,17\]' at sizes i=20,j=4,k=4: strides of C alias" \
	"the first size they do not fit named"
checks=$((checks + 1))
[ ! -e out.json ] || fail "no results file left by a refused run"

# tune: a small config with padded A and C
cat >strided.yaml <<'YAML'
GlobalParameters:
  MinTime: 0.0
  MinReps: 2
BenchmarkProblems:
  - - {Expression: "C[ij]=A[ik]*B[kj]", DataType: s}
    - BenchmarkCommonParameters:
        - ProblemSizes:
            - Exact: [ 16, 12, 8 ]
        - UseLDS: [False]
      ForkParameters:
        - ThreadTile: [ [4, 4], [2, 2] ]
        - WorkGroup: [ [1, 1, 1] ]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Range: [ [8, 8, 16], [12], [8] ]
YAML
run tune strided.yaml --strides 'A=[1,20],C=[1,18]' --db db -o logic --device opencl:0:0
expect_rc 0 "tune with strides"
expect_err 'validated' "winners validated on the strided layout"
expect_out 'Cij_Aik_Bkj_S: [0-9]+ solutions? -> logic/' "logic written"
run results --db db
expect_out 'Cij_Aik_Bkj_S strides A=\[1,20\],C=\[1,18\]' "stored apart from packed measurements"
# a re-run without strides reuses nothing of it
run tune strided.yaml --db db -o logic2 --device opencl:0:0
expect_rc 0 "packed tune after a strided one"
expect_out 'reused 0' "strided measurements are not taken for packed ones"
# strides C cannot take at the config's largest size: refused up front
run tune strided.yaml --strides 'C=[1,12]' --db db2 -o logic3 --device opencl:0:0
expect_rc 2 "tune with strides that alias C"
expect_err "--strides 'C=\[1,12\]' at sizes i=16,j=12,k=8: strides of C alias" \
	"the size named"
checks=$((checks + 1))
[ ! -e db2 ] && [ ! -e logic3 ] || fail "nothing made by a refused tune"

done_testing

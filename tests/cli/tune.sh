#!/bin/bash
# tune.sh - tcx tune: every Tensile config plans (--dry-run), a small tune
# writes logic that validate uses (also for a candidate naming indices),
# random search is reproducible, a re-run reuses the store, --explain
# lists skips, runs killed with SIGKILL at random points resume to the
# same measurements as an uninterrupted run, and an expression with no
# config is tuned within its budget (a count or seconds) into logic that
# bench reads.
. "$(dirname "$0")/lib.sh"

data=$TCX_TEST_DATA
export XDG_CACHE_HOME=$scratch/cache

# every Tensile config loads and plans
n=0
for cfg in "$data"/tensile/configs/*/*.yaml; do
	run tune --dry-run "$cfg"
	expect_rc 0 "dry run of $cfg"
	expect_err 'final: [0-9]+ solution' "final step planned for $cfg"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n Tensile configs found"
run tune --dry-run "$data/tensile/configs/v3.3.7/rocblas_sgemm_asm_lite.yaml"
expect_err 'cannot honour these Tensile parameters and ignores them: KernelLanguage' \
	"one warning names what tcx ignores"

# a real (small) tune
tiny=$data/tune/tiny.yaml
run tune "$tiny" --db db1 -o logic1 --device opencl:0:0
expect_rc 0 "tiny tune"
expect_out 'Cijk_Ailk_Bjlk_S: [0-9]+ solutions? -> logic1/' "logic path printed"
logic=$(ls logic1/*_Cijk_Ailk_Bjlk_S.yaml 2>/dev/null)
[ -n "$logic" ] || fail "no logic file written"
expect_err 'validated' "winners validated"
run validate 'C[ijk]=A[ilk]*B[jlk]' --sizes 29,17,3,13 --logic "$logic" --device opencl:0:0
expect_rc 0 "the logic's choice validates"
run validate 'C[ij]=A[ik]*B[kj]' --sizes 8,8,8 --logic "$logic" --device opencl:0:0
expect_rc 2 "a logic file for another problem type"
expect_err 'is for problem type Cijk_Ailk_Bjlk_S' "named"

# the planner's model fitted to what the tune measured (sizes of one
# problem type: each its own problem), saved, and used through TCX_MODEL
run plan --fit --db db1 -o model.json --device opencl:0:0
expect_rc 0 "plan --fit"
expect_out 'fitted +.*: [0-9]+ measurements of [0-9]+ problems' "the fit's report"
expect_out 'wrote +model.json' "the model written"
TCX_MODEL=model.json run plan 'C[ijk]=A[ilk]*B[jlk]' --sizes 29,17,3,13 --device opencl:0:0
expect_rc 0 "a plan with the fitted model"
expect_out 'model +fitted to [0-9]+ measurements .*model.json' "the plan says which model"

# a candidate that names indices of an expression whose letters are not
# Tensile's: its measurements are found again for the logic's table (the
# store keys them by the problem key's letters), so the logic selects it
# for its size
run tune "$data/tune/roles.yaml" --db dbr -o logicr --device opencl:0:0
expect_rc 0 "tune of a candidate naming indices"
run validate 'C[z,e,u,m]=A[a,u,z,c,e]*B[m,a,c]' --sizes 5,4,3,6,2,3 --logic logicr/*_S.yaml \
	--device opencl:0:0
expect_rc 0 "its logic selects it for its own size"
expect_out '_Iu\.\*\.c' "the candidate naming indices"

# a re-run measures nothing new
run tune "$tiny" --db db1 -o logic1 --device opencl:0:0
expect_rc 0 "re-run"
expect_out 'measured 0, reused [1-9]' "everything reused"

# random search: the same seed gives the same candidates in the same order
cfgr=$scratch/space.yaml
cat >"$cfgr" <<'YAML'
BenchmarkProblems:
  - - {Expression: "C[ij]=A[ik]*B[kj]", DataType: s}
    - BenchmarkCommonParameters:
        - UseLDS: [False]
        - ThreadTile: [[4,4],[8,4],[8,8],[16,4]]
        - VectorWidth: [1,2,4]
        - DepthU: [4,8,16]
        - WorkGroup: [[1,1,1],[2,2,1]]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Exact: [16, 16, 16]
YAML
run -v tune "$cfgr" --strategy random --budget 6 --seed 7 --db db2 -o logic2 --device opencl:0:0
expect_rc 0 "random search"
a=$(printf '%s' "$err" | grep -E '^ *random [0-9]+/' | sed 's/ at .*//')
run -v tune "$cfgr" --strategy random --budget 6 --seed 7 --db db3 -o logic3 --device opencl:0:0
b=$(printf '%s' "$err" | grep -E '^ *random [0-9]+/' | sed 's/ at .*//')
# the sample is drawn before it is measured, so a smaller budget draws the
# first candidates of a larger one: another seed is checked on two
# candidates, against the first two of seed 7, which compiles fewer kernels
run -v tune "$cfgr" --strategy random --budget 2 --seed 8 --db db4 -o logic4 --device opencl:0:0
c=$(printf '%s' "$err" | grep -E '^ *random [0-9]+/' | sed 's/ at .*//; s/^ *random [0-9]*\/[0-9]*//')
a2=$(printf '%s\n' "$a" | head -2 | sed 's/^ *random [0-9]*\/[0-9]*//')
checks=$((checks + 3))
[ -n "$a" ] && [ "$(printf '%s\n' "$a" | wc -l)" -eq 6 ] || fail "6 random candidates listed"
[ "$a" = "$b" ] || fail "same seed, same candidates in the same order"
[ -n "$c" ] && [ "$(printf '%s\n' "$c" | wc -l)" -eq 2 ] || fail "2 random candidates listed"
[ "$a2" != "$c" ] || fail "another seed, other candidates"

# --explain lists what this device skipped, with the reason (the sizes are
# given from the first step: without them the WorkGroup step would measure
# Tensile's default 2880^3, minutes on PoCL)
cat >"$scratch/skip.yaml" <<'YAML'
BenchmarkProblems:
  - - {Expression: "C[ij]=A[ik]*B[kj]", DataType: s}
    - BenchmarkCommonParameters:
        - ProblemSizes:
            - Exact: [16, 16, 16]
        - UseLDS: [False]
        - PrefetchGlobalRead: [False]
        - ThreadTile: [[4,4]]
        - WorkGroup: [[8,8,1], [128,64,1]]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Exact: [16, 16, 16]
YAML
run tune "$scratch/skip.yaml" --db db5 -o logic5 --device opencl:0:0
expect_rc 0 "a space with an invalid candidate"
run tune "$scratch/skip.yaml" --db db5 --explain --device opencl:0:0
expect_rc 0 "explain"
expect_out 'skipped.*' "skipped listed"
expect_out 'exceeds the device limit' "reason given"

# SIGKILL at random points, then resume: the same (solution, size) pairs
# (8 candidates x 5 sizes: each kernel compiled costs seconds under the
# sanitizers, and 40 measurements are plenty of points for a kill to land)
cat >"$scratch/kill.yaml" <<'YAML'
BenchmarkProblems:
  - - {Expression: "C[ij]=A[ik]*B[kj]", DataType: s}
    - BenchmarkCommonParameters:
        - UseLDS: [False]
        - ThreadTile: [[4,4],[8,4]]
        - VectorWidth: [1,2]
        - DepthU: [4,8]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Range: [[8,8,40], 0, 0]
YAML
opts=(--strategy exhaustive --min-time 0.01 --min-reps 2 --device opencl:0:0)
run tune "$scratch/kill.yaml" "${opts[@]}" --db full.db -o logicf
expect_rc 0 "uninterrupted run"
# each kill at a random point of the first seventh of a whole run with the
# kernels compiled, so that ten kills land before the store fills up (a
# fixed 0.1-0.9 s let a fast, idle machine finish after six or seven)
t0=$(date +%s%N)
"$TCX" tune "$scratch/kill.yaml" "${opts[@]}" --db timed.db -o logict >/dev/null 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
kills=0
for attempt in $(seq 1 40); do
	"$TCX" tune "$scratch/kill.yaml" "${opts[@]}" --db killed.db -o logick >/dev/null 2>&1 &
	pid=$!
	at=$((ms * (RANDOM % 15 + 1) / 100))
	sleep "$((at / 1000)).$(printf '%03d' $((at % 1000)))"
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null && kills=$((kills + 1))
	fi
	wait "$pid" 2>/dev/null
	[ "$kills" -ge 10 ] && break
done
checks=$((checks + 1))
[ "$kills" -ge 10 ] || fail "only $kills runs were killed"
run tune "$scratch/kill.yaml" "${opts[@]}" --db killed.db -o logick
expect_rc 0 "the resumed run finishes"
pairs() {
	sqlite3 "$1" 'SELECT problem, sizes, solution FROM measurements ORDER BY 1, 2, 3'
}
checks=$((checks + 2))
[ "$(pairs full.db)" = "$(pairs killed.db)" ] || fail "killed+resumed store differs from the uninterrupted one"
[ "$(pairs killed.db | uniq -d | wc -l)" -eq 0 ] || fail "duplicate measurements"
[ "$(sqlite3 killed.db 'PRAGMA integrity_check')" = ok ] || fail "store damaged"
ls ./*.tmp.* logick/*.tmp.* 2>/dev/null && fail "temporary files left behind"

# an expression instead of a config: the space around the planner's
# choices, measured in the model's order until the budget is spent
ex='ilk,jlk->ijk'
run tune --dry-run "$ex" --sizes i=16,j=8,k=2,l=8 --budget 3 --device opencl:0:0 --db dry.db
expect_rc 0 "dry run of an expression"
expect_out "^$ex on .*: [0-9]+ candidates around the planner's first [0-9]+" "the space is shown"
expect_out 'measured in this order, the first 3' "with its budget"
expect_out '^ +1 +[0-9.]+ +(planner #1|#1 [A-Za-z]+) ' "ranked from the planner's first choice"
expect_out '#[0-9]+ (DepthU|ThreadTile|VectorWidth) ' "its neighbours"
expect_err 'model: 3 of [0-9]+ candidates' "the steps planned"
checks=$((checks + 1))
[ ! -e dry.db ] && [ ! -e logic ] || fail "a dry run wrote a store or logic"
run -v tune "$ex" --sizes i=16,j=8,k=2,l=8 --exact 5,3,2,7 --budget 2 --db expr.db -o logice \
	--device opencl:0:0
expect_rc 0 "an expression tuned"
expect_out 'Cijk_[A-Za-z]+_[A-Za-z]+_S: [0-9]+ solutions? -> logice/' "logic written"
expect_err 'winner .* validated' "winners validated"
checks=$((checks + 2))
[ "$(printf '%s' "$err" | grep -cE '^ *model [0-9]+/')" -eq 2 ] || fail "a budget of 2 measures 2"
[ "$(sqlite3 expr.db 'SELECT count(*) FROM measurements')" -eq 4 ] ||
	fail "2 candidates x 2 sizes in the store"
# said once: the logic written (on stdout), and what this run measured,
# which its final step reads back, is not counted as reused
expect_out 'measured 4, reused 0 from the store' "nothing of this run counted as reused"
checks=$((checks + 1))
[ "$(printf '%s\n%s\n' "$out" "$err" | grep -c 'logice/')" -eq 1 ] || fail "the logic named once"
logic=$(ls logice/*_S.yaml 2>/dev/null)
run bench "$ex" --exact 16,8,2,8 --exact 5,3,2,7 --logic "$logic" --min-reps 1 --min-time 0 \
	--device opencl:0:0
expect_rc 0 "bench reads the logic"
run logic show "$logic"
expect_rc 0 "logic show reads it"
run export-lib -o libe "$logic"
expect_rc 0 "export-lib reads it"
run tune "$ex" --sizes i=16,j=8,k=2,l=8 --exact 5,3,2,7 --budget 2 --db expr.db -o logice \
	--device opencl:0:0
expect_rc 0 "the same again"
expect_out 'measured 0, reused 4 from the store' "each stored measurement reused, once"
# seconds: checked before each candidate after the first, which always runs
run -v tune "$ex" --sizes i=16,j=8,k=2,l=8 --budget 0.001s --db exprs.db -o logics \
	--device opencl:0:0
expect_rc 0 "a budget in seconds"
expect_err 'the budget of 0.001 s is spent after 1 of [0-9]+ candidates' "stops at it"
checks=$((checks + 1))
[ "$(printf '%s' "$err" | grep -cE '^ *model [0-9]+/')" -eq 1 ] || fail "one candidate in 0.001 s"
ls logics/*_S.yaml >/dev/null 2>&1 || fail "logic from the one candidate"

# the race: each size's fastest few timed again side by side before the
# logic is chosen.  Solo figures made up by fake timing (10-100 GFLOP/s)
# and reused by a real run: the race times them for real (far less on
# PoCL at this size) and leaves the store's solo figures as they were.
TCX_FAKE_TIMING=1 run tune "$ex" --exact 9,7,3,5 --budget 6 --db race.db -o logicr \
	--device opencl:0:0
expect_rc 0 "solo figures made up"
solo=$(sqlite3 race.db 'SELECT solution, gflops FROM measurements ORDER BY 1')
run tune "$ex" --exact 9,7,3,5 --budget 6 --db race.db -o logicr --race 1 --format json \
	--device opencl:0:0
expect_rc 0 "no race"
checks=$((checks + 1))
printf '%s' "$out" | grep -q '"races"' && fail "--race 1 raced"
run tune "$ex" --exact 9,7,3,5 --budget 6 --db race.db -o logicr --format json \
	--device opencl:0:0
expect_rc 0 "the default race"
expect_out '"reused": 6' "a race is no new measurement"
checks=$((checks + 2))
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["problems"][0]["races"]
assert len(r) == 1 and r[0]["sizes"] == {"i": 9, "j": 7, "k": 3, "l": 5}, r
s = r[0]["solutions"]
# the 4 fastest of 6 solo figures, less those under half the best
assert 2 <= len(s) <= 4, s
# the plan of the planner itself, where it merges or permutes, races with no solo figure
s = [x for x in s if "form" not in x]
assert all(x["solo_gflops"] >= 10 and 0 < x["race_gflops"] < 10 for x in s), s
assert [x["solo_gflops"] for x in s] == sorted((x["solo_gflops"] for x in s), reverse=True), s
' || fail "the race timed the fastest solo figures for real"
[ "$(sqlite3 race.db 'SELECT solution, gflops FROM measurements ORDER BY 1')" = "$solo" ] ||
	fail "the race changed the store"
run tune "$ex" --exact 9,7,3,5 --db race.db -o logicr --race 0 --device opencl:0:0
expect_rc 2 "--race 0"
expect_err "race" "named"

# the planner's own plan races too: where it merges indices or permutes
# operands, which no kernel of the space does, and wins (fake timing rates
# it above every solution), the logic keeps it with its form and a
# fallback, and what reads the logic runs it in that form
em='C[a,b,j]=A[b,k,a]*B[k,j]'
TCX_PLANNER=ttgt TCX_FAKE_TIMING=1 run tune "$em" --sizes a=24,b=10,j=17,k=9 --budget 4 \
	--db form.db -o logicm --format json --device opencl:0:0
expect_rc 0 "a tune the planner's plan wins"
checks=$((checks + 1))
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["problems"][0]["races"][0]["solutions"]
f = [x for x in r if "form" in x]
assert len(f) == 1 and f[0]["form"] == "merged+permute-A" and f[0]["race_gflops"] == 200, r
assert f[0]["solo_gflops"] is None, f
' || fail "the planner's plan raced in its form"
lf=$(ls logicm/*.yaml)
checks=$((checks + 1))
run logic show --format json "$lf"
expect_rc 0 "logic show"
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["solutions"]
w = s[d["exact"][0]["solution"]]
assert w["form"] == "merged+permute-A" and w["name"].endswith("_Fmerged+permute-A"), w
assert "form" not in s[w["fallback"]], s
' || fail "the logic keeps the form and a fallback with none"
run logic show "$lf"
expect_out "in the planner's form: merged\+permute-A; fallback [0-9]" "logic show says so"
run validate "$em" --sizes a=24,b=10,j=17,k=9 --logic "$lf" --format json --device opencl:0:0
expect_rc 0 "the form validates"
expect_out '"planned_as": "C\[ab,j\] = A\[ab,k\] \* B\[k,j\]"' "run merged, A permuted"
run bench "$em" --exact a=24,b=10,j=17,k=9 --logic "$lf" --format json --device opencl:0:0 \
	--min-time 0.01 --no-store
expect_rc 0 "bench runs the form"
expect_out '"planned_as": "C\[ab,j\] = A\[ab,k\] \* B\[k,j\]"' "bench ran it merged"
run bench "$em" --exact a=24,b=10,j=17,k=9 --versus-logic "$lf" --format json \
	--device opencl:0:0 --min-time 0.01 --no-store
expect_rc 0 "bench --versus-logic runs the form"
checks=$((checks + 1))
printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
assert r["versus"]["planned_as"] == "C[ab,j] = A[ab,k] * B[k,j]", r["versus"]
assert r["ratio"]["median"] > 0, r["ratio"]
' || fail "the versus side ran the logic's form"
run export-lib -o libf "$lf"
expect_rc 0 "export-lib runs the fallback"
run logic export --tensile -o logicm.tensile.yaml "$lf"
expect_rc 0 "so does Tensile's format"
run logic eval --holdout 24,10,17,9 --min-time 0.01 "$lf" --device opencl:0:0
expect_rc 0 "logic eval measures what a library runs"
# a hand-written form with no fallback: tcx runs it, nothing else can
sed -e '/^  fallback: /d' "$lf" >nofb.yaml
run validate "$em" --sizes a=24,b=10,j=17,k=9 --logic nofb.yaml --device opencl:0:0
expect_rc 0 "no fallback: tcx runs the form"
run export-lib -o libnofb nofb.yaml
expect_rc 2 "no fallback: export-lib"
expect_err "names no fallback" "says why"
[ -e libnofb ] && fail "export-lib left a library behind"
sed -e 's/form: merged+permute-A/form: merged+permute-Q/' "$lf" >badform.yaml
run validate "$em" --sizes a=24,b=10,j=17,k=9 --logic badform.yaml --device opencl:0:0
expect_rc 2 "a form tcx does not know"
expect_err "'form' must be" "named"

done_testing

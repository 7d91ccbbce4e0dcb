#!/bin/bash
# eval.sh - tcx logic eval and export-lib --holdout on the tiny tune's logic
# (fixture export_logic): every solution measured at held-out sizes, the
# scores consistent with the measurements (recomputed here), the table and
# JSON forms, the report and the chosen default recorded in the logic and
# written next to an exported library, learning from the results store, and
# usage errors.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
skip_without_opencl
logic=$(fixture_logic)
[ -n "$logic" ] || { echo "FAIL: no fixture logic (export.tune)"; exit 1; }
hold=(--holdout '20,16,2,12;50,16,2,40;1,1,1,1' --holdout-range '[16,16,32],[16],[3],[9]'
	--min-time 0.01 --device opencl:0:0)
one=(--holdout 20,16,2,12 --min-time 0.01 --device opencl:0:0)

run logic eval "$logic" "${hold[@]}" --format json
expect_rc 0 "eval --format json"
printf '%s' "$out" >eval.json
check "the scores follow from the measurements" python3 - eval.json <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
nsol = len(d["solutions"])
assert len(d["sizes"]) == 5, "5 held-out sizes"
effs = {k: [] for k in ("logic", "nearest", "model")}
top1 = dict.fromkeys(effs, 0)
top3 = dict.fromkeys(effs, 0)
for row in d["sizes"]:
    g = row["gflops"]
    assert len(g) == nsol, "one GFLOP/s per solution"
    best = max(range(nsol), key=lambda k: g[k] or 0)
    assert row["oracle"] == best, "the oracle is the fastest"
    for kind, c in row["choices"].items():
        s = c["solution"]
        e = (g[s] or 0) / g[best]
        assert abs(c["efficiency"] - e) < 1e-9, (kind, row["sizes"], c["efficiency"], e)
        rank = 1 + sum(1 for x in g if (x or 0) > (g[s] or 0))
        assert c["rank"] == rank, (kind, row["sizes"], c["rank"], rank)
        effs[kind].append(e)
        top1[kind] += rank == 1
        top3[kind] += rank <= 3
for kind, v in effs.items():
    sc = d["selectors"][kind]
    v.sort()
    n = len(v)
    want = {"mean": sum(v) / n, "p10": v[math.ceil(0.1 * n) - 1], "min": v[0],
            "top1": top1[kind] / n, "top3": top3[kind] / n}
    for key, w in want.items():
        assert abs(sc[key] - w) < 1e-9, (kind, key, sc[key], w)
    assert 0 <= sc["min"] <= sc["p10"] <= sc["mean"] <= 1
best = max(("logic", "nearest", "model"),
           key=lambda k: (round(d["selectors"][k]["mean"], 12), round(d["selectors"][k]["p10"], 12),
                          round(d["selectors"][k]["min"], 12), -["logic", "nearest", "model"].index(k)))
assert d["best"] == best, (d["best"], best)
PY

run logic eval "$logic" "${one[@]}" -o recorded.yaml
expect_rc 0 "eval as a table, recording"
expect_out '^selector +mean +P10 +min +top-1 +top-3' "the score table"
expect_out '\(best\)' "the best marked"
expect_err "wrote recorded.yaml: default selector '(logic|nearest|model)'" "recorded"
best=$(printf '%s' "$err" | sed -n "s/.*default selector '\([a-z]*\)'.*/\1/p")
run logic show --format json recorded.yaml
expect_rc 0 "the recorded logic loads"
expect_out "\"default\": \"$best\"" "the default recorded"
expect_out '"report": \{' "the report recorded"
run export-lib recorded.yaml -o lib1 --name tcxev
expect_rc 0 "export-lib of the recorded logic"
checks=$((checks + 1))
grep -q "selector $best" lib1/include/tcxev.h || fail "the library uses the recorded $best"

# export-lib --holdout: the report beside the library
run export-lib "$logic" -o lib2 --name tcxev --holdout '20,16,2,12;50,16,2,40' --min-time 0.01
expect_rc 0 "export-lib --holdout"
expect_err 'does best at the held-out sizes' "the choice said"
checks=$((checks + 3))
grep -q '^| model' lib2/selector-report.md || fail "selector-report.md has the scores"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d[0]["selectors"]["model"]["sizes"] == 2' \
	lib2/selector-report.json || fail "selector-report.json has the scores"
grep -q 'selector-report.md' lib2/README.md || fail "the README points at the report"
run export-lib "$logic" -o lib3 --name tcxev --selector nearest "${one[@]}"
expect_rc 0 "export-lib --selector"
checks=$((checks + 1))
grep -q "selector nearest" lib3/include/tcxev.h || fail "--selector overrides the report"

# progress: with -v a line per measurement, on a terminal one line that each
# overwrites, else nothing
checks=$((checks + 1))
printf '%s' "$err" | grep -q '\[[0-9]*/[0-9]*\]' && fail "no progress without -v or a terminal"
nsol=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["solutions"]))' eval.json)
steps=$((nsol * 3))
run -v logic eval "$logic" "${one[@]}"
expect_rc 0 "eval -v"
expect_err "^tcx: \[0/$steps\]   0% ETA -:-- i=20,j=16,k=2,l=12 solution 1/$nsol round 1/3\$" "the first step said"
expect_err "^tcx: \[$((steps - 1))/$steps\] +[0-9]+% ETA [0-9]+:[0-9][0-9] i=20,j=16,k=2,l=12 solution $nsol/$nsol round 3/3\$" \
	"the last step said"
run -v export-lib "$logic" -o lib4 --name tcxev --holdout '20,16,2,12;50,16,2,40' --min-time 0.01
expect_rc 0 "export-lib --holdout -v"
expect_err "^tcx: \[$steps/$((2 * steps))\] +50% ETA [0-9]+:[0-9][0-9] i=50,j=16,k=2,l=40 solution 1/$nsol round 1/3\$" \
	"the second size's first step said"
if command -v script >/dev/null; then
	script -qec "'$TCX' export-lib '$logic' -o lib5 --name tcxev --holdout 20,16,2,12 --min-time 0.01" /dev/null >tty.txt 2>&1
	checks=$((checks + 2))
	grep -q $'\r\\[1/'"$steps"'\] .* solution [0-9][0-9]*/'"$nsol"' round [12]/3' tty.txt ||
		fail "progress on a terminal: $(od -c tty.txt | head -8)"
	grep -q $'\r\033\\[K' tty.txt || fail "the progress line is cleared"
else
	echo "note: no script(1): progress on a terminal not checked"
fi

# the results store: its measurements of the logic's solutions are learnt
run -v logic eval "$logic" --holdout 20,16,2,12 --choices --db "$TCX_EXPORT_FIXTURE/results.db"
expect_rc 0 "eval --db"
expect_err '[0-9]+ measurements? of the logic.s solutions from' "the store read"

# usage
run logic eval "$logic"
expect_rc 2 "no held-out sizes"
expect_err "needs --holdout" "said"
run logic eval "$logic" --holdout 1,2,3
expect_rc 2 "three sizes for four indices"
expect_err "held-out sizes '1,2,3'" "the spec named"
run logic eval "$logic" --holdout-range '[1,2'
expect_rc 2 "a bad range"
run logic show "$logic" --holdout 1,2,3,4
expect_rc 2 "--holdout is eval's"
expect_err "does not apply to 'tcx logic show'" "said"
run logic eval "$logic" --holdout 1,1,1,1 --min-time -1
expect_rc 2 "a negative --min-time"
done_testing

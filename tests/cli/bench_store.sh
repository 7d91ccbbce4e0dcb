#!/bin/bash
# bench_store.sh - tcx bench records its measurements in the results store
# on the default OpenCL device (PoCL in CI): the row tcx tune writes (its
# problem key, sizes in the key's letter order, one row per solution timed,
# skipped ones with their reason), the merged problem a plan ran, nothing
# for a plan that permutes or a permute alone, nothing with --no-store, a
# warning for a default store that cannot be opened, and rows that
# `tcx plan --fit` reads as its own.  Tiny sizes, one launch each.
. "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }

need_opencl "$py"

export XDG_CACHE_HOME=$scratch/cache
quick=(--min-reps 1 --min-time 0 --flush off)

# json FILE EXPR: evaluates a Python expression over the JSON document d
json() {
	$py -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(v)' "$1" "$2"
}

# rows DB: the store's rows as "problem sizes status", sorted
rows() {
	"$TCX" results --db "$1" --format json |
		$py -c 'import json,sys
for m in json.load(sys.stdin)["measurements"]:
    print(m["problem"], ",".join(map(str, m["sizes"])), m["status"])' | sort
}

# ---- the default store: the planner's choice, keyed as tune keys it --------
# einsum's C is row-major: j is the key's i, so the sizes come back 8,16,4
run bench 'ik,kj->ij' --exact 16,8,4 "${quick[@]}" -f json -o einsum.json
expect_rc 0 "bench into the default store"
checks=$((checks + 3))
[ -f "$XDG_CACHE_HOME/tcx/results.db" ] || fail "no store at \$XDG_CACHE_HOME/tcx/results.db"
[ "$(json einsum.json 'd["store"] == "'"$XDG_CACHE_HOME"'/tcx/results.db" and d["stored"] == 1')" = True ] ||
	fail "the JSON names the store and one row"
[ "$(rows "$XDG_CACHE_HOME/tcx/results.db")" = "Cij_Akj_Bik_S 8,16,4 ok" ] ||
	fail "the row's key and sizes: $(rows "$XDG_CACHE_HOME/tcx/results.db")"
$py "$TCX_SOURCE_DIR/tests/docs/jsonschema.py" "$TCX_SOURCE_DIR/share/schemas/bench.schema.json" \
	einsum.json || fail "einsum.json does not conform to bench.schema.json"

# ---- one row per solution and size; a skipped one with its reason ----------
run -v bench 'C[ij]=A[ik]*B[jk]' --exact 16,16,16 --exact 8,8,8 "${quick[@]}" \
	--params 'ThreadTile=[16,4]' --versus 'ThreadTile=[8,4]' --db fit.db
expect_rc 0 "bench --versus into --db"
expect_err '4 measurements recorded in fit.db' "-v counts the rows"
checks=$((checks + 2))
[ "$(rows fit.db)" = "$(printf '%s\n' 'Cij_Aik_Bjk_S 16,16,16 ok' 'Cij_Aik_Bjk_S 16,16,16 skipped' \
	'Cij_Aik_Bjk_S 8,8,8 ok' 'Cij_Aik_Bjk_S 8,8,8 skipped')" ] || fail "versus rows: $(rows fit.db)"
run results --db fit.db --status skipped --format json
printf '%s' "$out" | grep -q 'is not a multiple of VectorWidth' || fail "the skipped row's reason"

# ---- a merged plan: the problem the kernel ran ------------------------------
run bench 'C[ijk]=A[ijl]*B[lk]' --exact 4,4,8,8 "${quick[@]}" --db fit.db -f json -o merged.json
expect_rc 0 "bench of a problem the planner merges"
checks=$((checks + 2))
[ "$(json merged.json 'd["results"][0]["plan"]["planned_as"]')" = 'C[ij,k] = A[ij,l] * B[l,k]' ] ||
	fail "the plan merges i and j: $(json merged.json 'd["results"][0]["plan"]')"
rows fit.db | grep -qx 'Cij_Aik_Bkj_S 16,8,8 ok' || fail "the merged problem's row: $(rows fit.db)"

# ---- the fit reads them as tune rows: two sizes of one type, and the merged -
run plan --fit --db fit.db -o model.json --device opencl:0:0
expect_rc 0 "plan --fit on bench rows"
expect_out 'fitted .*: 3 measurements of 3 problems in fit.db$' "every ok row read"

# ---- not recorded: a plan that permutes operands, a permute alone ----------
TCX_PLANNER=ttgt run bench 'C[ijk]=A[jil]*B[lk]' --exact 4,4,8,8 "${quick[@]}" --db ttgt.db \
	-f json -o ttgt.json
expect_rc 0 "bench of a TTGT plan"
checks=$((checks + 2))
[ "$(json ttgt.json 'd["results"][0]["plan"]["permuted"] != [] and d["stored"] == 0')" = True ] ||
	fail "a TTGT plan, not recorded: $(json ttgt.json '(d["results"][0]["plan"], d["stored"])')"
[ -z "$(rows ttgt.db)" ] || fail "rows of a TTGT plan: $(rows ttgt.db)"
run bench 'ij->ji' --exact 4,8 "${quick[@]}" --db perm.db -f json -o perm.json
expect_rc 0 "bench of a transpose"
checks=$((checks + 1))
[ "$(json perm.json 'd["results"][0]["plan"]["direct_permute"] and d["stored"] == 0')" = True ] ||
	fail "a permute, not recorded"

# ---- --no-store: nothing, not even a store ---------------------------------
XDG_CACHE_HOME=$scratch/none run bench 'ik,kj->ij' --exact 16,8,4 "${quick[@]}" --no-store \
	-f json -o nostore.json
expect_rc 0 "bench --no-store"
checks=$((checks + 2))
[ ! -e "$scratch/none/tcx/results.db" ] || fail "--no-store made a store"
[ "$(json nostore.json 'd["store"] is None and d["stored"] == 0')" = True ] ||
	fail "--no-store's JSON: store null, nothing stored"

# ---- a default store that cannot be opened: a warning, the results out ------
: >notadir
XDG_CACHE_HOME=$scratch/notadir run bench 'ik,kj->ij' --exact 16,8,4 "${quick[@]}"
expect_rc 0 "bench with a default store that cannot be opened"
expect_err "^tcx: warning: cannot open results store '.*notadir/tcx/results.db': Not a directory; this run's measurements are not recorded$" \
	"a warning names the store"
expect_out '^ +8 +16 +4 +[0-9.]+ ' "the results are printed"

done_testing

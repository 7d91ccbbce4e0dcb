#!/bin/bash
# bench.sh - tcx bench end to end on the default OpenCL device (PoCL in CI),
# with no assertion on a timing: range expansion drives the sizes timed,
# JSON output conforms to share/schemas/bench.schema.json and CSV to
# bench.csv.md, the regression gate fails a baseline faster than reality and
# passes an equal one, plots are well-formed SVG with the expected series
# (and render with rsvg-convert), the kernel cache is hit on a second run
# (counted) and survives truncated entries, the peak is used, the cache is
# flushed once per round of launches over the input sets (counted), and
# progress appears on a terminal, or with -v a line per size.
. "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
schema=$TCX_SOURCE_DIR/share/schemas
validator=$TCX_SOURCE_DIR/tests/docs/jsonschema.py
# conforms SCHEMA FILE...: every file validates against share/schemas/SCHEMA.schema.json
conforms() {
	local s=$1 f
	shift
	for f in "$@"; do
		$py "$validator" "$schema/$s.schema.json" "$f" || return 1
	done
}

need_opencl "$py"

# a private cache, so that the counts below start from nothing
export XDG_CACHE_HOME=$scratch/cache
gemm='C[ij]=A[ik]*B[jk]'
quick=(--min-reps 2 --min-time 0 --flush off)

# json FILE EXPR: evaluates a Python expression over the JSON document d
json() {
	$py -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(v)' "$1" "$2"
}

# ---- range expansion drives the sizes -------------------------------------
range='[16,16,48],[8,8,16],0'
run sizes "$gemm" --range "$range" --format json
printf '%s' "$out" >sizes.json
run bench "$gemm" --range "$range" "${quick[@]}" --format json -o range.json
expect_rc 0 "bench over a range"
checks=$((checks + 1))
got=$(json range.json '[[r["sizes"][n] for n in ("i","j","k")] for r in d["results"]]')
want=$(json sizes.json 'd["sizes"]')
[ "$got" = "$want" ] || fail "sizes timed $got, tcx sizes says $want"
checks=$((checks + 1))
[ "$(json range.json 'len(d["results"])')" = 6 ] || fail "6 sizes"
checks=$((checks + 1))
[ "$(json range.json 'all(r["status"]=="ok" and r["reps"]>=2 and r["median_ms"]>0 for r in d["results"])')" = True ] ||
	fail "every size measured"
# --exact adds sizes to ranges; duplicates are timed once
run bench "$gemm" --range '[16,16,32],0,0' --exact 16,16,16 --exact 24,8,40 "${quick[@]}" --format json -o union.json
checks=$((checks + 1))
[ "$(json union.json '[list(r["sizes"].values()) for r in d["results"]]')" = "[[16, 16, 16], [24, 8, 40], [32, 32, 32]]" ] ||
	fail "range and exact sizes, sorted, once each: $(json union.json '[list(r["sizes"].values()) for r in d["results"]]')"

# baselines constructed from it (never a timing assertion): 1000x faster
# than reality must fail the gate, 1000x slower must pass
json range.json 'json.dump(dict(d, results=[dict(r, median_ms=r["median_ms"]/1000, ci_lo_ms=r["ci_lo_ms"]/1000, ci_hi_ms=r["ci_hi_ms"]/1000) for r in d["results"]]), open("fast.json","w"))' >/dev/null
json range.json 'json.dump(dict(d, results=[dict(r, median_ms=r["median_ms"]*1000, ci_lo_ms=r["ci_lo_ms"]*1000, ci_hi_ms=r["ci_hi_ms"]*1000) for r in d["results"]]), open("slow.json","w"))' >/dev/null

# ---- JSON schema, with every optional part present -------------------------
run bench "$gemm" --exact 16,8,16 --exact 17,9,33 --exact 48,16,48 "${quick[@]}" --params 'EdgeType=None,ThreadTile=[16,8]' \
	--versus 'ThreadTile=[16,4]' --peak-gflops 1000 --baseline slow.json -o full.json
expect_rc 0 "versus, peak and baseline"
checks=$((checks + 1))
conforms bench range.json union.json full.json || fail "JSON output conforms to the schema"
checks=$((checks + 1))
[ "$(json full.json '[r["status"] for r in d["results"]]')" = "['ok', 'rejected', 'ok']" ] ||
	fail "EdgeType=None rejects 17x9: $(json full.json '[r["status"] for r in d["results"]]')"
checks=$((checks + 1))
[ "$(json full.json 'json.loads(d["results"][0]["versus"]["solution"])["ThreadTile"] == [16, 4] and d["results"][0]["ratio"]["median"] > 0')" = True ] ||
	fail "versus record with the other solution and a ratio"
checks=$((checks + 1))
[ "$(json full.json 'abs(d["results"][0]["peak_fraction"] - d["results"][0]["gflops"]/1000) < 1e-9 and d["peak_gflops"] == 1000')" = True ] ||
	fail "peak_fraction = gflops / --peak-gflops"
checks=$((checks + 1))
[ "$(json full.json '(d["baseline"]["compared"], d["results"][0]["baseline"]["regression"] in (True, False), "baseline" in d["results"][2])')" = "(2, True, True)" ] ||
	fail "baseline records on the sizes both runs have"
# the schema is strict: an undocumented field fails it
json full.json 'd.update(new_field=1) or json.dump(d, open("extra.json","w"))' >/dev/null
checks=$((checks + 1))
conforms bench extra.json 2>/dev/null && fail "an undocumented field must fail the schema check"

# ---- a pair whose second kernel needs more workspace than the first ------
# The two take turns on each input set: its workspace must fit the larger
# split (GlobalSplitU 1 needs none; 64 partial sums outgrow those of 2).
for pair in 'GSU=1 GSU=16' 'GSU=2 GSU=64'; do
	set -- $pair
	run bench 'C[s,l]=A[s,i,o]*B[o,l,i]' --exact 57,28,80,43 "${quick[@]}" --params "$1" \
		--versus "$2" --format json -o gsu.json
	expect_rc 0 "bench --params $1 --versus $2"
	checks=$((checks + 1))
	[ "$(json gsu.json '[r["status"] for r in d["results"]] == ["ok"] and d["results"][0]["ratio"]["median"] > 0')" = True ] ||
		fail "a pair of GlobalSplitU $1 and $2 times both"
done

# ---- CSV: the header is the documented one --------------------------------
run bench "$gemm" --exact 16,16,16 "${quick[@]}" --versus 'ThreadTile=[16,4]' --format csv
expect_rc 0 "csv"
header=$(printf '%s\n' "$out" | head -1)
documented=$($py - "$schema/bench.csv.md" <<'EOF'
import re, sys
cols = []
for line in open(sys.argv[1]):
    if line.startswith("## "):
        break
    if line.startswith("| `"):
        cols += re.findall(r"`([^`]+)`", line.split("|")[1])
print(",".join(c.replace("size_<index>", "size_i,size_j,size_k") for c in cols))
EOF
)
checks=$((checks + 1))
[ "$header" = "$documented" ] || fail "CSV header '$header' is not the documented '$documented'"
checks=$((checks + 1))
[ "$(printf '%s\n' "$out" | $py -c 'import csv,sys; r=list(csv.reader(sys.stdin)); print(len(r), len(set(map(len, r))))')" = "2 1" ] ||
	fail "one row, as many fields as the header"
# -o FILE.csv picks CSV
run bench "$gemm" --exact 16,16,16 "${quick[@]}" -o by-name.csv
checks=$((checks + 1))
head -1 by-name.csv | grep -q '^size_i,size_j,size_k,median_ms' || fail "-o x.csv writes CSV"

# ---- the regression gate ---------------------------------------------------
run bench "$gemm" --range "$range" "${quick[@]}" --baseline fast.json --max-regression 5%
expect_rc 1 "a baseline faster than reality fails the gate"
checks=$((checks + 1))
[ "$(printf '%s\n' "$err" | grep -c '^tcx: regression at i=')" = 6 ] || fail "each of the 6 sizes named"
expect_err 'regression at i=16,j=8,k=16: median' "a size named with its figures"
run bench "$gemm" --range "$range" "${quick[@]}" --baseline slow.json --max-regression 0.05
expect_rc 0 "a slower baseline passes"
expect_err '6 sizes compared, no regression' "summary"
# an equal baseline passes; so does the identical run compared with itself
run bench --compare range.json range.json --max-regression 5%
expect_rc 0 "a run is no regression of itself"
run bench --compare fast.json range.json --max-regression 5%
expect_rc 1 "compare gate fails the slower file"
run bench --compare range.json fast.json --max-regression 5%
expect_rc 0 "a faster b passes"
run bench --compare fast.json range.json --max-regression 5% --format json -o cmp.json
expect_rc 1 "compare gate, JSON"
checks=$((checks + 1))
conforms bench-compare cmp.json || fail "compare output conforms to its schema"
checks=$((checks + 1))
[ "$(json cmp.json '[r["regression"] for r in d["results"]].count(True)')" = 6 ] || fail "6 regressions marked"
# sizes missing from the baseline are reported, not failed
run bench "$gemm" --exact 16,16,16 --exact 20,20,20 "${quick[@]}" --baseline slow.json
expect_rc 0 "missing sizes do not fail"
expect_err "size i=20,j=20,k=20 is not in the baseline" "reported"
expect_err "size i=16,j=8,k=16 of the baseline was not run" "reported"

# ---- plots -----------------------------------------------------------------
svg_series() {
	$py -c 'import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert t.tag == ns + "svg", t.tag
print(len(t.findall(ns + "g[@class=\"series\"]")), "log" if "(log scale)" in "".join(t.itertext()) else "linear")' "$1"
}
run bench "$gemm" --range '[16,16,64],0,0' "${quick[@]}" --plot one.svg
expect_rc 0 "plot"
checks=$((checks + 1))
[ "$(svg_series one.svg)" = "1 log" ] || fail "one series, log x (16^3..64^3 spans 64x): $(svg_series one.svg)"
checks=$((checks + 1))
grep -q 'C\[ij\]=A\[ik\]\*B\[jk\] on ' one.svg || fail "title names the expression and the device"
run bench "$gemm" --exact 32,32,32 --exact 40,40,40 "${quick[@]}" --versus 'ThreadTile=[16,4]' --plot two.svg
checks=$((checks + 1))
[ "$(svg_series two.svg)" = "2 linear" ] || fail "two series (first, versus), linear x: $(svg_series two.svg)"
run bench --compare fast.json range.json --plot cmp.svg
checks=$((checks + 1))
[ "$(svg_series cmp.svg)" = "2 log" ] || fail "two compared runs: $(svg_series cmp.svg)"
# text is escaped for XML: a file name in the legend
cp range.json 'r&d<1>.json'
run bench --compare 'r&d<1>.json' fast.json --plot amp.svg
checks=$((checks + 1))
[ "$(svg_series amp.svg)" = "2 log" ] || fail "a legend with & and < is well-formed XML"
# a Sum[] expression in the title
run bench 'C[i,j] = Sum[k] A[i,k] * B[k,j]' --exact 16,16,16 "${quick[@]}" --plot sum.svg
checks=$((checks + 1))
[ "$(svg_series sum.svg)" = "1 linear" ] || fail "plot of a Sum[] expression"
if command -v rsvg-convert >/dev/null; then
	for f in one two cmp sum amp; do
		checks=$((checks + 1))
		rsvg-convert "$f.svg" -o "$f.png" && [ "$(head -c 4 "$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
			fail "rsvg-convert renders $f.svg"
	done
else
	echo "note: rsvg-convert not found (Debian librsvg2-bin): plots not rendered"
fi

# ---- the kernel cache: counted, not timed ----------------------------------
export XDG_CACHE_HOME=$scratch/kcache
cached=(--exact 16,16,16 --exact 32,32,32 --params 'ConstantSizes=True' "${quick[@]}" --format json)
# PoCL keeps its own cache: tcx's stays out of its way (no binaries read
# back, nothing stored), unless POCL_KERNEL_CACHE=0 turns PoCL's off
run devices --format json
if printf '%s' "$out" | grep -q 'PoCL'; then
	POCL_CACHE_DIR=$scratch/pocl run bench "$gemm" "${cached[@]}" -o pocl.json
	checks=$((checks + 1))
	[ "$(json pocl.json '(d["cache"]["enabled"], d["cache"]["platform_cache"], d["cache"]["builds"], d["cache"]["disk_stores"])')" = "(False, True, 2, 0)" ] ||
		fail "PoCL's cache, not tcx's: $(json pocl.json 'd["cache"]')"
	checks=$((checks + 1))
	[ ! -d "$XDG_CACHE_HOME/tcx/kernels" ] || [ -z "$(ls "$XDG_CACHE_HOME/tcx/kernels")" ] ||
		fail "tcx stored kernels beside PoCL's cache"
	conforms bench pocl.json || fail "pocl.json does not conform to the bench schema"
fi
export POCL_KERNEL_CACHE=0
run bench "$gemm" "${cached[@]}" -o first.json
checks=$((checks + 1))
[ "$(json first.json '(d["cache"]["builds"], d["cache"]["disk_hits"], d["cache"]["disk_stores"], [r["kernel"] for r in d["results"]])')" = "(2, 0, 2, ['build', 'build'])" ] ||
	fail "first run compiles and stores two kernels: $(json first.json 'd["cache"]')"
checks=$((checks + 1))
[ "$(ls "$XDG_CACHE_HOME/tcx/kernels" | grep -c '\.bin$')" = 2 ] || fail "two entries on disk"
run bench "$gemm" "${cached[@]}" -o second.json
checks=$((checks + 1))
[ "$(json second.json '(d["cache"]["builds"], d["cache"]["disk_hits"], [r["kernel"] for r in d["results"]], [r["status"] for r in d["results"]])')" = "(0, 2, ['disk', 'disk'], ['ok', 'ok'])" ] ||
	fail "second run loads both from disk: $(json second.json 'd["cache"]')"
for f in "$XDG_CACHE_HOME"/tcx/kernels/*.bin; do truncate -s -50 "$f"; done
run -v bench "$gemm" "${cached[@]}" -o third.json
expect_rc 0 "truncated entries do not stop a run"
expect_err 'damaged kernel cache entry .*truncated binary' "logged at INFO"
checks=$((checks + 1))
[ "$(json third.json '(d["cache"]["builds"], d["cache"]["disk_hits"], d["cache"]["disk_rebuilt"], [r["status"] for r in d["results"]])')" = "(2, 0, 2, ['ok', 'ok'])" ] ||
	fail "truncated entries rebuilt: $(json third.json 'd["cache"]')"
run bench "$gemm" "${cached[@]}" -o fourth.json
checks=$((checks + 1))
[ "$(json fourth.json 'd["cache"]["disk_hits"]')" = 2 ] || fail "and stored again"
run bench "$gemm" "${cached[@]}" --no-cache -o off.json
checks=$((checks + 1))
[ "$(json off.json '(d["cache"]["enabled"], d["cache"]["builds"], d["cache"]["disk_hits"])')" = "(False, 2, 0)" ] ||
	fail "--no-cache compiles: $(json off.json 'd["cache"]')"
TCX_NO_KERNEL_CACHE=1 run bench "$gemm" "${cached[@]}" -o env.json
checks=$((checks + 1))
[ "$(json env.json '(d["cache"]["enabled"], d["cache"]["builds"], d["cache"]["disk_hits"])')" = "(False, 2, 0)" ] ||
	fail "TCX_NO_KERNEL_CACHE=1 compiles: $(json env.json 'd["cache"]')"
unset POCL_KERNEL_CACHE

# ---- the peak, from the cache 'tcx devices --measure' writes ----------------
run bench "$gemm" --exact 16,16,16 "${quick[@]}" -o nopeak.json
checks=$((checks + 1))
[ "$(json nopeak.json '"peak_gflops" in d or "peak_fraction" in d["results"][0]')" = False ] ||
	fail "no peak known: no fraction"
json nopeak.json 'json.dump({"version": 1, "devices": [{"id": d["device"], "name": d["device_name"], "driver": d["driver"], "fp32_gflops": 123.5, "fp64_gflops": 61.0, "date": "2026-01-01T00:00:00Z"}]}, open(sys.argv[1].replace("nopeak.json", "peaks.json"), "w"))' >/dev/null
mkdir -p "$XDG_CACHE_HOME/tcx" && mv peaks.json "$XDG_CACHE_HOME/tcx/peaks.json"
run bench "$gemm" --exact 16,16,16 "${quick[@]}" -o peak.json
checks=$((checks + 1))
[ "$(json peak.json '(d["peak_gflops"], abs(d["results"][0]["peak_fraction"] * 123.5 - d["results"][0]["gflops"]) < 1e-9)')" = "(123.5, True)" ] ||
	fail "the cached fp32 peak is used"
run bench "$gemm" --type d --exact 16,16,16 "${quick[@]}" -o peakd.json
checks=$((checks + 1))
[ "$(json peakd.json 'd["peak_gflops"]')" = 61.0 ] || fail "fp64 peak for type d"
run bench "$gemm" --exact 16,16,16 "${quick[@]}" --peak-gflops 10 -o peak10.json
checks=$((checks + 1))
[ "$(json peak10.json 'd["peak_gflops"]')" = 10.0 ] || fail "--peak-gflops wins over the cache"

# ---- library logic picks the solution per size -----------------------------
run bench "$gemm" --range '[16,8,32],0,0' "${quick[@]}" --logic "$TCX_TEST_DATA/bench/gemm-logic.yaml" -o logic.json --plot logic.svg
expect_rc 0 "--logic"
checks=$((checks + 1))
[ "$(json logic.json '[(r["status"], json.loads(r["solution"])["ThreadTile"] if r["solution"] else None) for r in d["results"]]')" = "[('ok', [16, 4]), ('rejected', None), ('ok', [32, 8])]" ] ||
	fail "the logic's solution per size, rejected where it selects none: $(json logic.json '[(r["status"], r["solution_name"]) for r in d["results"]]')"
checks=$((checks + 1))
[ "$(svg_series logic.svg)" = "2 linear" ] || fail "one line per solution: $(svg_series logic.svg)"
# the same logic as the versus side: the planner's choice against it, per
# size, and the first timed alone where the logic selects nothing
run bench "$gemm" --range '[16,8,32],0,0' "${quick[@]}" --versus-logic "$TCX_TEST_DATA/bench/gemm-logic.yaml" -o vlogic.json
expect_rc 0 "--versus-logic"
checks=$((checks + 1))
conforms bench vlogic.json || fail "--versus-logic's JSON conforms to the schema"
checks=$((checks + 1))
got=$(json vlogic.json '[(r["status"], "plan" in r, r["versus"]["status"], json.loads(r["versus"]["solution"])["ThreadTile"] if r["versus"]["solution"] else None, (r["ratio"]["median"] or 0) > 0) for r in d["results"]]')
[ "$got" = "[('ok', True, 'ok', [16, 4], True), ('ok', True, 'rejected', None, False), ('ok', True, 'ok', [32, 8], True)]" ] ||
	fail "the planner against the logic's solution per size, the first alone where it selects none: $got"

# ---- tcx devices --measure: the peak, measured once and cached ---------------
export XDG_CACHE_HOME=$scratch/peakcache
dev=$(json nopeak.json 'd["device"]')
run devices --measure --device "$dev" --format json
expect_rc 0 "devices --measure"
printf '%s\n' "$out" >measured.json
checks=$((checks + 1))
[ "$(json measured.json 'd["peaks"][0]["fp32_gflops"] > 0 and d["peaks"][0]["id"] == "'"$dev"'"')" = True ] ||
	fail "a positive fp32 peak: $out"
checks=$((checks + 1))
[ "$(json "$XDG_CACHE_HOME/tcx/peaks.json" 'len(d["devices"])')" = 1 ] || fail "cached once"
run bench "$gemm" --exact 16,16,16 "${quick[@]}" -o measured-bench.json
checks=$((checks + 1))
[ "$(json measured-bench.json 'd["peak_gflops"]')" = "$(json measured.json 'd["peaks"][0]["fp32_gflops"]')" ] ||
	fail "bench uses the measured peak"
run devices --device "$dev"
expect_rc 2 "--device without --measure"
run devices --measure --device opencl:9:9
expect_rc 4 "--measure of a device that is not there"
expect_err "unknown device id 'opencl:9:9'" "named"

# ---- cold caches: one flush per round of launches over the input sets -------
# A 16^3 problem fits 64 input sets in the cache many times over: the
# cache is flushed before each round of launches over them (man tcx-bench,
# TIMING METHOD), not before every launch; -vv counts both.
# rounds LABEL LAUNCHES: checks -vv's count of launches and flushes in $err
rounds() {
	local line launches sets flushes
	line=$(printf '%s\n' "$err" | grep -E '^tcx: timed [0-9]+ launches on [0-9]+ input sets, [0-9]+ cache flush(es)? between them$')
	checks=$((checks + 1))
	[ -n "$line" ] || { fail "$1: -vv counts the launches and flushes"; return; }
	read -r launches sets flushes <<<"$(printf '%s' "$line" | tr -cs '0-9' ' ')"
	checks=$((checks + 1))
	[ "$launches" = "$2" ] && [ "$sets" = 64 ] && [ "$flushes" = $((($2 + 63) / 64)) ] ||
		fail "$1: $2 launches on 64 sets, a flush per round of 64: '$line'"
}
run -vv bench "$gemm" --exact 16,16,16 --min-reps 130 --min-time 0 --format json -o rounds.json
expect_rc 0 "bench with the cache flushed"
rounds "one solution" 130
checks=$((checks + 1))
[ "$(json rounds.json '[(r["input_sets"], r["flushed"], r["reps"]) for r in d["results"]]')" = "[(64, True, 130)]" ] ||
	fail "64 input sets, flushed, 130 launches: $(json rounds.json '[(r["input_sets"], r["flushed"], r["reps"]) for r in d["results"]]')"
# a pair (--versus) takes a set per launch too: 2 x 70 launches
run -vv bench "$gemm" --exact 16,16,16 --versus 'ThreadTile=[16,4]' --min-reps 70 --min-time 0
expect_rc 0 "bench --versus with the cache flushed"
rounds "a pair" 140

# ---- progress: on a terminal only -------------------------------------------
run bench "$gemm" --exact 16,16,16 --exact 24,24,24 "${quick[@]}" --format json
checks=$((checks + 1))
[ -z "$err" ] || fail "nothing on a standard error that is not a terminal: '$err'"
if command -v script >/dev/null; then
	script -qec "'$TCX' bench '$gemm' --exact 16,16,16 --exact 24,24,24 --min-reps 2 --min-time 0 --flush off -o tty.json" /dev/null >tty.txt 2>&1
	checks=$((checks + 1))
	grep -q '\[1/2\]  50% ETA [0-9]*:[0-9][0-9] i=24,j=24,k=24' tty.txt ||
		fail "progress on a terminal: $(od -c tty.txt | head -5)"
	checks=$((checks + 1))
	grep -q $'\r\033\[K' tty.txt || fail "the progress line is cleared"
else
	echo "note: no script(1): progress on a terminal not checked"
fi
# with -v elsewhere, a line per size
run -v bench "$gemm" --exact 16,16,16 --exact 24,24,24 "${quick[@]}" --format json
expect_err '^tcx: \[1/2\]  50% ETA [0-9]+:[0-9][0-9] i=24,j=24,k=24$' "progress with -v"

done_testing

#!/bin/sh
# protocol_vs_exhaustive.sh - how close Tensile's incremental protocol gets
# to the best candidate of its space, and at what cost: tunes
# bench/protocol_vs_exhaustive.yaml both ways on one device and prints the
# winners' GFLOP/s, their ratio and the evaluations each took.
# usage: bench/protocol_vs_exhaustive.sh [TCX] [--device ID]
set -eu
tcx=${1:-build/cmd/tcx}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cfg=$here/protocol_vs_exhaustive.yaml
size=1024,1024,1024

"$tcx" -q tune "$cfg" "$@" --db "$work/p.db" -o "$work/p" --format json >"$work/p.json"
"$tcx" -q tune "$cfg" "$@" --db "$work/e.db" -o "$work/e" --strategy exhaustive \
	--format json >"$work/e.json"
# the GFLOP/s of the solution each run's logic picks at 1024^3 (its exact
# entry), and the number of candidates each timed
best() {
	"$tcx" logic show "$1"/*.yaml --format json |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(max(e["gflops"] for e in d["exact"]))'
}
count() { sqlite3 "$1" "SELECT count(DISTINCT solution) FROM measurements"; }
p=$(best "$work/p")
e=$(best "$work/e")
printf 'device: %s\n' "$("$tcx" devices --format json | sed -n 's/.*"name": "\([^"]*\)".*/\1/p' | head -1)"
printf '%-12s %12s %14s\n' strategy "GFLOP/s" "candidates"
printf '%-12s %12.2f %14d\n' protocol "$p" "$(count "$work/p.db")"
printf '%-12s %12.2f %14d\n' exhaustive "$e" "$(count "$work/e.db")"
awk -v p="$p" -v e="$e" 'BEGIN { printf "protocol / exhaustive optimum: %.3f\n", p / e }'

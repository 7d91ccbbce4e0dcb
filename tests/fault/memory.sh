#!/bin/bash
# memory.sh - the memory bound of a large tuning space: `tcx tune --dry-run`
# over a config whose fork phase has 10,000 candidates (25 ThreadTiles x 25
# WorkGroups x 16 DepthUs) plans and counts them, and walks them all with
# --strategy exhaustive, in bounded memory.  The
# bound is 200 MB of peak resident memory (measured by /usr/bin/time), or
# 600 MB in a sanitizer build, whose shadow memory and quarantine inflate
# every allocation.  Kernels are not run, so no device is needed.
. "$(dirname "$0")/lib.sh"
need_tools python3
[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"

python3 - >big.yaml <<'PY'
tiles = [[a, b] for a in (1, 2, 4, 8, 16) for b in (1, 2, 4, 8, 16)]
groups = [[a, b, 1] for a in (1, 2, 4, 8, 16) for b in (1, 2, 4, 8, 16)]
print("BenchmarkProblems:")
print("  - - Expression: \"C[ij]=A[ik]*B[kj]\"")
print("      DataType: s")
print("    - BenchmarkCommonParameters:")
print("        - ProblemSizes:")
print("            - Range: [ [64, 64, 1024], 0, 0 ]")
print("      ForkParameters:")
print("        - ThreadTile: %s" % tiles)
print("        - WorkGroup: %s" % groups)
print("        - DepthU: %s" % list(range(2, 34, 2)))
print("      BenchmarkFinalParameters:")
print("        - ProblemSizes:")
print("            - Range: [ [64, 64, 1024], 0, 0 ]")
PY

bound_mb=200
if nm "$TCX" 2>/dev/null | grep -q __asan_init; then
	bound_mb=600
fi
# Tensile's protocol counts the fork; the exhaustive strategy walks every
# candidate of it
for strategy in protocol exhaustive; do
	/usr/bin/time -f '%M' -o rss.txt "$TCX" tune --dry-run --strategy "$strategy" big.yaml \
		>"$scratch/.out" 2>"$scratch/.err"
	rc=$?
	out=$(cat "$scratch/.out") err=$(cat "$scratch/.err")
	expect_rc 0 "tune --dry-run --strategy $strategy over 10,000 candidates"
	if [ "$strategy" = protocol ]; then
		expect_err "fork: 10000 sets" "the plan counts 10,000 candidates"
	else
		expect_err "exhaustive 10000/10000" "the walk reaches the 10,000th candidate"
	fi
	rss_kb=$(tail -1 rss.txt)
	echo "$strategy: peak RSS ${rss_kb} KiB (bound ${bound_mb} MB)"
	checks=$((checks + 1))
	[ "$rss_kb" -lt $((bound_mb * 1000)) ] ||
		fail "$strategy: peak RSS ${rss_kb} KiB is over ${bound_mb} MB"
done
done_testing

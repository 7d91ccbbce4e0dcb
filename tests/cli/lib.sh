# lib.sh - helpers for the CLI tests (sourced).  Each test script runs tcx
# ($TCX) in a scratch directory and checks exit codes and output.
set -u
: "${TCX:?set TCX to the tcx binary}"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tcx-cli.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1
failures=0
checks=0

# run ARGS...: runs tcx, keeping stdout in $out, stderr in $err, status in $rc
run() {
	"$TCX" "$@" >"$scratch/.out" 2>"$scratch/.err"
	rc=$?
	out=$(cat "$scratch/.out")
	err=$(cat "$scratch/.err")
}

fail() {
	failures=$((failures + 1))
	echo "FAIL: $*"
	echo "  command status $rc"
	echo "  stdout: $(printf '%s' "$out" | head -c 2000)"
	echo "  stderr: $(printf '%s' "$err" | head -c 2000)"
}

expect_rc() {
	checks=$((checks + 1))
	[ "$rc" -eq "$1" ] || fail "expected exit $1 ($2)"
}

# expect_out PATTERN WHAT / expect_err PATTERN WHAT: extended regex
expect_out() {
	checks=$((checks + 1))
	printf '%s' "$out" | grep -Eq -- "$1" || fail "stdout lacks /$1/ ($2)"
}

expect_err() {
	checks=$((checks + 1))
	printf '%s' "$err" | grep -Eq -- "$1" || fail "stderr lacks /$1/ ($2)"
}

# need_opencl PY: exits 77 (skipped) unless tcx sees an OpenCL device;
# PY is a python3 to read 'tcx devices --format json' with
need_opencl() {
	run devices --format json
	printf '%s' "$out" | "$1" -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if any(x["backend"]=="opencl" for x in d["devices"]) else 1)' ||
		{ echo "skipped: no OpenCL device"; exit 77; }
}

done_testing() {
	echo "$checks checks, $failures failed"
	[ "$failures" -eq 0 ]
}

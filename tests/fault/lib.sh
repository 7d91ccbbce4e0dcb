# lib.sh - helpers for the fault-tolerance tests (sourced): tests/cli/lib.sh's
# run/expect_* in a scratch directory, plus what these tests need.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../cli/lib.sh
. "$here/../cli/lib.sh"
export XDG_CACHE_HOME="$scratch/cache" TCX_DEVICE=
unset TCX_FAULT TCX_FAULT_HANG_S

skip() {
	echo "skipped: $*"
	exit 77
}

# Skips unless tcx was built with TCX_FAULT_INJECTION (where fault_hit is a
# function; elsewhere it is an inline constant).  Asked of the binary, not
# of its behaviour, so that a broken switch fails the tests instead of
# skipping them.
need_fault_injection() {
	need_tools nm
	nm "$TCX" 2>/dev/null | grep -qw fault_hit ||
		skip "tcx was built without TCX_FAULT_INJECTION (cmake -DTCX_FAULT_INJECTION=ON)"
}

# Skips unless the default device is an OpenCL one (PoCL in CI).
need_opencl() {
	"$TCX" devices 2>/dev/null | grep -q '^opencl:' || skip "no OpenCL device"
}

need_tools() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "'$t' is not installed"
	done
}

# A small config: three candidates (ThreadTile) at one size, CPU-shaped so
# that PoCL builds and runs them in seconds.
tiny_config() {
	cat >"${1:-tiny.yaml}" <<'EOF'
GlobalParameters:
  MinTime: 0.01
BenchmarkProblems:
  -
    - Expression: "C[ij]=A[ik]*B[kj]"
      DataType: s
    - BenchmarkCommonParameters:
        - ProblemSizes:
            - Exact: [ 32, 32, 16 ]
        - EdgeType: ["Branch"]
        - UseLDS: [False]
        - PrefetchGlobalRead: [False]
        - PrefetchLocalRead: [False]
        - VectorWidth: [4]
      ForkParameters:
        - ThreadTile:
            - [ 4, 4 ]
            - [ 8, 4 ]
            - [ 4, 8 ]
        - WorkGroup:
            - [ 1, 1, 1 ]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Exact: [ 32, 32, 16 ]
EOF
}

# expect_store_ok DB: SQLite's own check passes and tcx opens the store.
expect_store_ok() {
	local ic

	checks=$((checks + 1))
	ic=$(sqlite3 "$1" 'PRAGMA integrity_check;' 2>&1)
	[ "$ic" = ok ] || fail "store '$1' fails integrity_check: $ic"
	"$TCX" results --db "$1" >/dev/null 2>"$scratch/.results.err" ||
		fail "tcx cannot open store '$1': $(cat "$scratch/.results.err")"
}

# expect_no_temps [DIR]: no temporary output file is left.
expect_no_temps() {
	local left

	checks=$((checks + 1))
	left=$(find "${1:-$scratch}" -name '*.tmp.*' 2>/dev/null | head -5)
	[ -z "$left" ] || fail "temporary files left: $left"
}

# rows DB [STATUS]: the number of measurements in a store.
rows() {
	sqlite3 "$1" "SELECT count(*) FROM measurements${2:+ WHERE status = $2};"
}

# expect_same FILE SUM: FILE still has the md5 sum SUM.
expect_same() {
	checks=$((checks + 1))
	[ "$(md5sum <"$1")" = "$2" ] || fail "'$1' changed"
}

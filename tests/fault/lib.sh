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
# A writer killed before its first write may leave the empty file it
# created: that is no store yet (tcx results refuses it, tcx tune takes it
# as a new one), and nothing was lost.
expect_store_ok() {
	local ic

	checks=$((checks + 1))
	if [ -f "$1" ] && [ ! -s "$1" ]; then
		return
	fi
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

# npy_f4 FILE ROWS COLS: a float32 .npy file of ROWS x COLS values, without
# NumPy
npy_f4() {
	python3 - "$@" <<'PY'
import struct, sys
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
head += " " * (63 - (10 + len(head)) % 64) + "\n"
data = b"".join(struct.pack("<f", ((k * 37) % 101) / 101.0) for k in range(rows * cols))
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + data)
PY
}

# measurements DB: the store's rows, in a stable order, as text
measurements() {
	sqlite3 "$1" 'SELECT * FROM measurements ORDER BY 1, 2, 3, 4, 5;'
}

# tree_sum DIR: one md5 sum over the names and contents of a tree's files
tree_sum() {
	(cd "$1" && find . -type f | LC_ALL=C sort | xargs md5sum) | md5sum
}

# ---- every writing command on a full disk (fsize.sh, fullfs.sh) ----------
#
# writers_setup DIR (an absolute path) makes, with room on the disk, what the writing commands
# read and, in DIR, the earlier outputs they will fail to replace;
# writers_check RUNNER WHY DIR then runs each command with its output in
# DIR through the function RUNNER, as "RUNNER KIB ARGS...": it runs
# "$TCX" ARGS with the disk full (or files limited to KIB KiB), leaving the
# status in $rc and stderr in $err.  Each command must exit 2 with a
# message naming its file and matching WHY; writers_kept DIR then checks
# that every earlier output is as it was.  Both need tiny.yaml and more.yaml (the same candidates at
# another size) in the scratch directory.  With w_device_outputs=1,
# writers_check also runs the commands whose outputs are smaller than what
# PoCL's compiler writes on its own (bench -o and --plot, logic eval -o,
# devices --measure), which only a full disk apart from PoCL's cache can
# fail alone.

writers_setup() {
	local d=$1

	mkdir -p "$d"
	case $d in /*) ;; *) echo "writers_setup: '$d' is not an absolute path"; exit 1 ;; esac
	export TCX_NO_KERNEL_CACHE=1
	# the store and its logic, from a tune with room
	"$TCX" tune --db "$d/store.db" -o "$d/logic" tiny.yaml >/dev/null 2>&1 ||
		{ echo "writers_setup: tune failed"; exit 1; }
	sqlite3 "$d/store.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
	w_logic=$(ls "$d"/logic/*_Cij_Aik_Bkj_S.yaml)
	# PoCL compiles what the commands below run, once, with room
	"$TCX" tune --db warm.db -o warm more.yaml >/dev/null 2>&1
	rm -rf warm warm.db*
	# a store to merge, with 1200 rows: merging it needs hundreds of KiB
	cp "$d/store.db" big.db
	sqlite3 big.db "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
		INSERT INTO measurements SELECT device, driver, problem, (100 + i) || ',32,16',
		solution, nidx, sizes_ord, backend, status, reason, median_ms, ci_lo_ms,
		ci_hi_ms, min_ms, max_ms, gflops, reps, timer, timestamp, version
		FROM measurements, n; PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
	"$TCX" results merge "$d/store.db" -o "$d/merged.db" >/dev/null 2>&1 ||
		{ echo "writers_setup: results merge failed"; exit 1; }
	sqlite3 "$d/merged.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
	# run's output is 4 MiB: past a limit that leaves PoCL room
	npy_f4 a.npy 1024 16
	npy_f4 b.npy 16 1024
	"$TCX" run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o /dev/null >/dev/null 2>&1
	cp a.npy "$d/out.npy"
	echo "previous results" >"$d/out.json"
	echo "previous plot" >"$d/out.svg"
	echo "previous export" >"$d/exp.yaml"
	echo "previous import" >"$d/imp.yaml"
	echo "previous eval" >"$d/ev.yaml"
	"$TCX" bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --min-time 0.001 --min-reps 1 \
		-o /dev/null >/dev/null 2>&1
	"$TCX" logic eval "$w_logic" --holdout 24,24,8 --min-time 0.001 >/dev/null 2>&1
	# an earlier library of another name: a new one that replaced only some
	# of its files would show
	"$TCX" export-lib --name prev -o "$d/lib" "$w_logic" >/dev/null 2>&1 ||
		{ echo "writers_setup: export-lib failed"; exit 1; }
	# the peak cache, with 40 devices more than this one: past stdio's
	# buffer, so that writing it fails before the file is committed
	XDG_CACHE_HOME="$d/cache" "$TCX" devices --measure >/dev/null 2>&1 ||
		{ echo "writers_setup: devices --measure failed"; exit 1; }
	python3 - "$d/cache/tcx/peaks.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for k in range(40):
    doc["devices"].append({"id": "opencl:9:%d" % k, "name": "another device %d" % k,
                           "driver": "none", "fp32_gflops": 1.0, "fp64_gflops": 0.5,
                           "date": "2024-01-01"})
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY
	w_tensile="$TCX_TEST_DATA/tensile/logic/rocblas-3093ba2e/hip_lite_Tensile_Cijk_Ailk_Bjlk_SB.yaml"
	w_files="out.npy out.json out.svg exp.yaml imp.yaml ev.yaml cache/tcx/peaks.json ${w_logic#"$d"/}"
	w_sums=$(cd "$d" && md5sum $w_files)
	w_store=$(measurements "$d/store.db")
	w_merged=$(measurements "$d/merged.db")
	w_lib=$(tree_sum "$d/lib")
}

# w_expect WHAT FILE WHY: exit 2, and a message naming FILE and WHY
w_expect() {
	expect_rc 2 "$1 on a full disk"
	expect_err "'$2'.*($3)" "$1 names '$2' and why"
}

writers_check() {
	local runner=$1 why=$2 d=$3

	$runner 1 tune --db "$d/store.db" -o "$d/logic" more.yaml
	w_expect "tune" "$d/store.db" "$why"
	$runner 64 results merge big.db -o "$d/merged.db"
	w_expect "results merge" "$d/merged.db" "$why"
	$runner 1024 run 'ik,kj->ij' -i A=a.npy -i B=b.npy -o "$d/out.npy"
	w_expect "run -o" "$d/out.npy" "$why"
	$runner 1 logic export -o "$d/exp.yaml" "$w_logic"
	w_expect "logic export" "$d/exp.yaml" "$why"
	$runner 1 logic import -o "$d/imp.yaml" "$w_tensile"
	w_expect "logic import" "$d/imp.yaml" "$why"
	$runner 64 export-lib -o "$d/lib" "$w_logic"
	w_expect "export-lib" "$d/lib[^']*" "$why"
	if [ "${w_device_outputs:-0}" = 1 ]; then
		$runner 1 bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --min-time 0.001 \
			--min-reps 1 -f json -o "$d/out.json"
		w_expect "bench -o" "$d/out.json" "$why"
		$runner 1 bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --min-time 0.001 \
			--min-reps 1 -o /dev/null --plot "$d/out.svg"
		w_expect "bench --plot" "$d/out.svg" "$why"
		$runner 1 logic eval "$w_logic" --holdout 24,24,8 --min-time 0.001 -o "$d/ev.yaml"
		w_expect "logic eval -o" "$d/ev.yaml" "$why"
		XDG_CACHE_HOME="$d/cache" $runner 1 devices --measure
		w_expect "devices --measure" "$d/cache/tcx/peaks.json" "$why"
	fi
}

# writers_kept DIR: what writers_setup left in DIR is all there, unchanged
# (reading a store needs room for SQLite's index: run with room again)
writers_kept() {
	local d=$1

	expect_store_ok "$d/store.db"
	expect_store_ok "$d/merged.db"
	checks=$((checks + 1))
	[ "$(measurements "$d/store.db")" = "$w_store" ] || fail "the store's rows changed"
	checks=$((checks + 1))
	[ "$(measurements "$d/merged.db")" = "$w_merged" ] || fail "the merged store's rows changed"
	checks=$((checks + 1))
	[ "$(cd "$d" && md5sum $w_files)" = "$w_sums" ] || fail "an earlier output changed"
	checks=$((checks + 1))
	[ "$(ls "$d/logic")" = "$(basename "$w_logic")" ] || fail "logic written: $(ls "$d/logic")"
	checks=$((checks + 1))
	[ "$(tree_sum "$d/lib")" = "$w_lib" ] || fail "export-lib changed the earlier tree"
	expect_no_temps "$d"
}

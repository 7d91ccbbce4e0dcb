#!/bin/bash
# limits.sh - inputs at and past tcx's limits that need more than one
# command line to set up: running out of memory while libyaml reads a
# file is "out of memory" (exit 3), not "malformed YAML" (exit 2); a read-
# only query leaves an empty file or another program's database as it was;
# a merge refuses a store with a row `tcx results` would refuse and leaves
# its output readable; a ScheduleName that would make a hidden or odd file
# name gives an ordinary one.
. "$(dirname "$0")/lib.sh"
export XDG_CACHE_HOME=$scratch/cache TCX_NO_KERNEL_CACHE=1

# ---- out of memory in libyaml ----------------------------------------------
# A double-quoted scalar of 3,000,000 "\L" escapes: 6 MB of file, which
# tcx reads into an 8 MiB buffer, and 9 MB of text, for which libyaml asks
# 16 MiB.  With allocations past 12 MiB refused, only libyaml's fails.
python3 - <<'PY'
big = '"' + "\\L" * 3000000 + '"'
with open("oom-config.yaml", "w") as f:
    f.write("GlobalParameters:\n  PrintLevel: %s\nBenchmarkProblems: []\n" % big)
with open("oom-logic.yaml", "w") as f:
    f.write("tcx-logic: 1\nnote: %s\n" % big)
PY
if nm "$TCX" 2>/dev/null | grep -q __asan_init; then
	for cmd in "logic show oom-logic.yaml" "tune --dry-run oom-config.yaml"; do
		# shellcheck disable=SC2086
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=12:allocator_may_return_null=1" \
			run $cmd
		expect_rc 3 "tcx $cmd with libyaml out of memory"
		expect_err "out of memory reading" "tcx $cmd says it ran out of memory"
		checks=$((checks + 1))
		! printf '%s' "$err" | grep -q "malformed" || fail "tcx $cmd calls the file malformed"
	done
else
	echo "skipped: out of memory in libyaml (needs a sanitizer build, whose allocator can refuse one large allocation)"
fi

# ---- read-only queries --------------------------------------------------------
: >empty.db
sqlite3 other.db 'PRAGMA user_version = 7;'
sqlite3 tables.db 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
for f in empty.db other.db tables.db; do
	sum=$(md5sum <"$f")
	run results --db "$f"
	expect_rc 2 "tcx results --db $f"
	expect_err "'$f' is (a SQLite database but )?not a tcx results store" "$f is refused"
	checks=$((checks + 1))
	[ "$(md5sum <"$f")" = "$sum" ] || fail "tcx results --db $f changed it"
	checks=$((checks + 1))
	[ -z "$(ls "$f"-* 2>/dev/null)" ] || fail "tcx results --db $f left $(ls "$f"-*)"
done

# ---- merge checks rows as tcx results reads them ------------------------------
# a store of three rows, made from SQL as tcx writes them, and a copy with
# a status tcx does not know
sqlite3 good.db <<'SQL'
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE measurements (device TEXT NOT NULL, driver TEXT NOT NULL, problem TEXT NOT NULL,
  sizes TEXT NOT NULL, solution TEXT NOT NULL, nidx INTEGER NOT NULL, sizes_ord BLOB NOT NULL,
  backend TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, median_ms REAL,
  ci_lo_ms REAL, ci_hi_ms REAL, min_ms REAL, max_ms REAL, gflops REAL, reps INTEGER NOT NULL,
  timer TEXT NOT NULL, timestamp REAL NOT NULL, version TEXT NOT NULL,
  PRIMARY KEY (device, driver, problem, sizes, solution));
INSERT INTO measurements VALUES
  ('dev', 'drv', 'Cij_Aik_Bkj_S', '32,32,16', 'sol1', 3, x'00', 'opencl', 0, '', 1, 1, 1, 1, 1, 2, 5, 'wall', 1.7e9, '0.1.0'),
  ('dev', 'drv', 'Cij_Aik_Bkj_S', '64,32,16', 'sol1', 3, x'00', 'opencl', 0, '', 2, 2, 2, 2, 2, 2, 5, 'wall', 1.7e9, '0.1.0'),
  ('dev', 'drv', 'Cij_Aik_Bkj_S', '96,32,16', 'sol1', 3, x'00', 'opencl', 0, '', 3, 3, 3, 3, 3, 2, 5, 'wall', 1.7e9, '0.1.0');
SQL
run results --db good.db
expect_rc 0 "tcx results reads the store made from SQL"
cp good.db bad.db
sqlite3 bad.db "UPDATE measurements SET device = 'other', status = 9 WHERE sizes = '64,32,16';"
run results --db bad.db
expect_rc 2 "tcx results refuses a row with status 9"
run results merge good.db -o out.db
expect_rc 0 "merge of the good store"
run results merge bad.db -o out.db
expect_rc 2 "merge of a store with a row tcx results refuses"
expect_err "bad.db.*unknown status 9" "merge names the store and the row's fault"
run results --db out.db
expect_rc 0 "the output of the refused merge is still readable"
checks=$((checks + 1))
[ "$(sqlite3 out.db 'SELECT count(*) FROM measurements;')" = 3 ] || fail "the refused merge wrote rows"

# ---- ScheduleName makes an ordinary file name --------------------------------
sched_config() {
	cat <<EOF
GlobalParameters:
  MinTime: 0
  MinReps: 1
BenchmarkProblems:
  -
    - Expression: "C[ij]=A[ik]*B[kj]"
      DataType: s
    - BenchmarkCommonParameters:
        - ProblemSizes:
            - Exact: [ 16, 16, 16 ]
        - ThreadTile: [ [4, 4] ]
        - WorkGroup: [ [1, 1, 1] ]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Exact: [ 16, 16, 16 ]
LibraryLogic:
  ScheduleName: "$1"
EOF
}
if "$TCX" devices 2>/dev/null | grep -q '^opencl:'; then
	for name in ".hidden" "-rf" "a/b/../c" "$(printf 'x%.0s' $(seq 300))"; do
		sched_config "$name" >sched.yaml
		rm -rf sl
		TCX_FAKE_TIMING=1 run tune --db sched.db -o sl sched.yaml
		expect_rc 0 "tune with ScheduleName '${name:0:20}'"
		f=$(cd sl 2>/dev/null && ls -A)
		checks=$((checks + 1))
		case $f in
		.* | -* | *[!A-Za-z0-9._-]* | "") fail "ScheduleName '${name:0:20}' made the file '$f'" ;;
		*_Cij_Aik_Bkj_S.yaml) ;;
		*) fail "ScheduleName '${name:0:20}' made the file '$f'" ;;
		esac
		checks=$((checks + 1))
		[ "${#f}" -le 160 ] || fail "ScheduleName of 300 bytes made a name of ${#f}"
		run logic show "sl/$f"
		expect_out "schedule +${name:0:20}" "the logic keeps the ScheduleName as it was"
	done
else
	echo "skipped: ScheduleName (no OpenCL device)"
fi
done_testing

#!/bin/bash
# run.sh - the bad-input catalogue: runs every case of tests/catalogue/cases
# against tcx and checks that each fails the way it should.
#
#   TCX=build/cmd/tcx bash tests/catalogue/run.sh [CASEFILE] [NAME-REGEX]
#
# A case is one line of four or five fields separated by " | ":
#
#   name | exit code | regex for stderr | command line | files it must not leave
#
# The command line is shell words (quotes as in sh) given to tcx, after any
# leading VAR=value words, which go to its environment; @empty-args stands
# for no arguments at all.  It runs in a fresh
# copy of the fixture directory (made once by make_fixtures below), where
# $DATA is tests/data.  For every case the runner checks:
#   - the exit code is exactly the one given, and tcx did not crash (no
#     signal, no sanitizer report);
#   - stderr matches the regex (grep -E), i.e. the message names the problem;
#   - no file listed in the fifth field exists afterwards, no temporary
#     output (*.tmp.*) is left anywhere, and no file that was there before
#     changed (outputs are written to a temporary file and renamed);
#   - nothing is left in the fixture's stores beyond what SQLite itself keeps.
# Names starting with "nonroot:" need file permissions to bite, which root
# ignores: as root (CI) the runner drops to nobody for that one command
# (setpriv --reuid=nobody --regid=nogroup --clear-groups), in a copy of the
# fixtures that nobody owns, in a mode-0755 directory nobody can reach; the
# exit code and message are asserted as for any case.  Only where root
# cannot drop to nobody (no setpriv, no such user, or nobody cannot run
# $TCX) are they skipped, with the reason.
set -u
: "${TCX:?set TCX to the tcx binary}"
here=$(cd "$(dirname "$0")" && pwd)
cases=${1:-$here/cases}
only=${2:-}
DATA=${TCX_TEST_DATA:-$(cd "$here/../data" && pwd)}
export DATA
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tcx-catalogue.XXXXXX")
lockpid=""
nobody_dir=""
cleanup() {
	[ -n "$lockpid" ] && kill "$lockpid" 2>/dev/null
	chmod -R u+rwx "$scratch" 2>/dev/null
	rm -rf "$scratch"
	[ -n "$nobody_dir" ] && rm -rf "$nobody_dir"
}
trap cleanup EXIT
export TCX_DB_BUSY_MS=300 TCX_DEVICE= POCL_CACHE_DIR=${POCL_CACHE_DIR:-$scratch/pocl}
export XDG_CACHE_HOME="$scratch/cache"
root=false
[ "$(id -u)" -eq 0 ] && root=true

# As root, the "nonroot:" cases run as nobody: drop (the command prefix) and
# nobody_dir (where their copy of the fixtures goes: $scratch is mode 0700,
# so nobody could not reach it), or nobody_why, why they cannot.
drop=() nobody_why=""
if $root; then
	if ! command -v setpriv >/dev/null 2>&1; then
		nobody_why="root, and setpriv (util-linux) is not installed to drop to nobody"
	elif ! getent passwd nobody >/dev/null || ! getent group nogroup >/dev/null; then
		nobody_why="root, and there is no user nobody or group nogroup to drop to"
	else
		drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
		nobody_dir=$(mktemp -d "${TMPDIR:-/tmp}/tcx-catalogue-nobody.XXXXXX")
		chmod 0755 "$nobody_dir"
		if ! (cd "$nobody_dir" && "${drop[@]}" "$TCX" --version) >/dev/null 2>&1; then
			nobody_why="root, and nobody cannot run '$TCX' in '$nobody_dir' (a directory on its path not searchable by others?)"
			drop=()
		fi
	fi
fi

# ---- fixtures ---------------------------------------------------------------
fix="$scratch/fixtures"
mkdir -p "$fix" "$XDG_CACHE_HOME"

# npy NAME DESCR SHAPE COUNT [BYTES-PER-ELEMENT]: a .npy file of random values
npy() {
	python3 - "$fix/$1" "$2" "$3" "$4" "${5:-4}" <<'EOF'
import os, random, struct, sys
path, descr, shape, count, size = sys.argv[1:6]
random.seed(path)
head = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
head += " " * (63 - (10 + len(head)) % 64) + "\n"
data = bytes(random.getrandbits(8) for _ in range(int(count) * int(size)))
if descr in ("<f4", ">f4"):
    data = b"".join(struct.pack(descr[0] + "f", random.uniform(-1, 1)) for _ in range(int(count)))
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + data)
EOF
}

make_fixtures() {
	cd "$fix" || exit 1
	npy a.npy '<f4' '(4, 3)' 12
	npy b.npy '<f4' '(5, 3)' 15
	npy b-wrong.npy '<f4' '(5, 7)' 35
	npy b-kj.npy '<f4' '(5, 4)' 20
	npy a-3d.npy '<f4' '(4, 3, 2)' 24
	npy a-i4.npy '<i4' '(4, 3)' 12
	npy a-be.npy '>f4' '(4, 3)' 12
	npy a-f8.npy '<f8' '(4, 3)' 12 8
	npy a-zero.npy '<f4' '(0, 3)' 0
	head -c 100 a.npy >trunc-data.npy
	head -c 20 a.npy >trunc-header.npy
	cat a.npy a.npy >trailing.npy
	printf 'not a numpy file at all, just text\n' >text.npy
	npy huge-shape.npy '<f4' '(4611686018427387904, 8)' 0
	: >empty.npy

	cat >good.yaml <<'EOF'
GlobalParameters:
  MinTime: 0.01
BenchmarkProblems:
  -
    - Expression: "C[ij]=A[ik]*B[kj]"
      DataType: s
    - BenchmarkCommonParameters:
        - ProblemSizes:
            - Exact: [ 32, 32, 16 ]
        - UseLDS: [False]
      ForkParameters:
        - ThreadTile:
            - [ 4, 4 ]
        - WorkGroup:
            - [ 1, 1, 1 ]
      BenchmarkFinalParameters:
        - ProblemSizes:
            - Exact: [ 32, 32, 16 ]
EOF
	printf 'BenchmarkProblems: [ [ {Expression: "C[ij]=A[ik]*B[kj]"}\n' >bad-yaml.yaml
	printf 'BenchmarkProblems: 5\n' >wrong-type.yaml
	printf 'BenchmarkProblems:\n  - - Expression: "C[ij]=A[ik]*B[kj]"\n      DataType: s\n    - ForkParameters:\n        - ThreadTile: 4\n          WorkGroup: {a: 1}\n' >wrong-param-type.yaml
	printf '' >empty.yaml
	printf -- '- 1\n- 2\n' >list-top.yaml
	printf 'a: 1\na: 2\n' >dup-key.yaml
	printf 'a: &x 1\nb: *x\n' >alias.yaml
	printf 'BenchmarkProblems:\n  - - Expression: "C[ij]=A[ik]*B[qj]"\n      DataType: s\n' >bad-expr.yaml
	printf 'BenchmarkProblems:\n  - - Expression: "C[ij]=A[ik]*B[kj]"\n      DataType: q\n' >bad-dtype.yaml
	printf 'BenchmarkProblems:\n  - - Expression: "ij->ji"\n      DataType: s\n' >one-input.yaml
	sed 's/Exact: \[ 32, 32, 16 \]/Exact: [ -32, 32, 16 ]/' good.yaml >negative-size.yaml
	sed 's/Exact: \[ 32, 32, 16 \]/Exact: [ 4294967296, 4294967296, 16 ]/' good.yaml >huge-size.yaml
	sed 's/Exact: \[ 32, 32, 16 \]/Range: [ [1, 1, 100000000], [1, 1, 100], [16] ]/' good.yaml >runaway-range.yaml
	sed 's/Exact: \[ 32, 32, 16 \]/Range: [ [1, 1, 2], [2305843009213693952], [16] ]/' good.yaml >huge-range.yaml
	sed 's/- UseLDS: \[False\]/- FrobnicateLevel: [3]/' good.yaml >unknown-param.yaml
	sed 's/ForkParameters:/ForkParameter:/' good.yaml >typo-phase.yaml
	sed 's/MinTime:/MinTim:/' good.yaml >typo-global.yaml
	sed 's/^GlobalParameters:/GlobalParameter:/' good.yaml >typo-top.yaml
	sed 's/- UseLDS: \[False\]/- DepthU: [lots]/' good.yaml >bad-param-value.yaml
	printf 'tcx-logic: 1\n' >logic-empty.yaml
	printf 'tcx-logic: 99\nproblem: {}\n' >logic-version.yaml
	printf 'just: a mapping\n' >logic-notlogic.yaml
	printf '{"WorkGroup": [16, 16, 1], "ThreadTile": "big"}\n' >sol-bad.json
	printf '{"NoSuchParameter": 1}\n' >sol-unknown.json
	printf '[1, 2, 3]\n' >sol-list.json
	mkdir adir
	printf 'secret\n' >unreadable.yaml
	cp good.yaml unreadable-config.yaml
	cp a.npy unreadable.npy
	chmod 000 unreadable.yaml unreadable-config.yaml unreadable.npy
	printf 'previous contents\n' >existing.out
	# stores: one with rows and its logic, from a real (one-candidate) tune;
	# a damaged copy; another program's database; random bytes
	if ! "$TCX" -q tune --db store.db -o tuned good.yaml >tune.log 2>&1; then
		echo "catalogue: the fixture tune failed:" >&2
		cat tune.log >&2
		exit 1
	fi
	rm -f tune.log
	mv tuned/*.yaml tuned-logic.yaml
	sed 's/^  expression: .*/  expression: C[ji]=A[ij]/' tuned-logic.yaml >one-input-logic.yaml
	rmdir tuned
	sqlite3 store.db 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
	head -c 4096 /dev/urandom >random.db
	sqlite3 other.db 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
	cp store.db damaged.db
	# keep SQLite's header page, overwrite the pages of the schema and rows
	size=$(stat -c %s damaged.db)
	dd if=/dev/urandom of=damaged.db bs=512 seek=8 count=$(((size - 4096) / 512)) \
		conv=notrunc 2>/dev/null
	head -c 3000 store.db >truncated.db
	cp store.db locked.db
	# logic for another problem type: Tensile's, for Cijk_Ailk_Bjlk_SB
	cp "$DATA/tensile/logic/rocblas-3093ba2e/hip_lite_Tensile_Cijk_Ailk_Bjlk_SB.yaml" \
		other-type-logic.yaml
	cd - >/dev/null || exit 1
}

# The store lock: a sqlite3 process holding an exclusive lock on locked.db
# for the whole run (killed by cleanup).
hold_lock() {
	python3 - "$fix/locked.db" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(600)
EOF
	lockpid=$!
	for _ in $(seq 50); do
		sqlite3 -cmd '.timeout 0' "$fix/locked.db" 'BEGIN IMMEDIATE; ROLLBACK;' \
			>/dev/null 2>&1 || return 0
		sleep 0.1
	done
	echo "catalogue: could not take the lock on locked.db" >&2
	exit 1
}

make_fixtures
hold_lock

# ---- running the cases --------------------------------------------------------
snapshot() {
	(cd "$1" && find . -type f ! -name '*-wal' ! -name '*-shm' ! -name '*-journal' \
		! -path './cache/*' ! -path './pocl/*' -print0 2>/dev/null | sort -z |
		xargs -0 -r md5sum 2>/dev/null)
}

total=0 passed=0 failed=0 skipped=0
declare -A seen
while IFS= read -r line || [ -n "$line" ]; do
	case $line in '#'* | '') continue ;; esac
	fields=() rest=$line
	while [[ $rest == *" | "* ]]; do
		fields+=("${rest%% | *}")
		rest=${rest#* | }
	done
	fields+=("$rest")
	name=${fields[0]} want=${fields[1]:-} regex=${fields[2]:-} cmd=${fields[3]:-}
	forbid=${fields[4]:-}
	[ -n "$only" ] && ! [[ $name =~ $only ]] && continue
	if [ -n "${seen[$name]:-}" ]; then
		echo "FAIL $name: the case name is used twice"
		failed=$((failed + 1))
		continue
	fi
	seen[$name]=1
	total=$((total + 1))
	as=() work="$scratch/case"
	if [[ $name == nonroot:* ]] && $root; then
		if [ -n "$nobody_why" ]; then
			echo "SKIP $name: runs as $nobody_why"
			skipped=$((skipped + 1))
			continue
		fi
		# nobody owns its copy, so mode-000 files bite as they do for
		# any user's own files; its caches are its own too
		as=("${drop[@]}" env "XDG_CACHE_HOME=$nobody_dir/case/cache"
			"POCL_CACHE_DIR=$nobody_dir/case/pocl" "HOME=$nobody_dir/case")
		work="$nobody_dir/case"
	fi
	rm -rf "$work"
	cp -a "$fix" "$work"
	[ ${#as[@]} -gt 0 ] && chown -hR nobody:nogroup "$work"
	# the lock is held on the fixture's file: the copy shares nothing, so
	# point locked.db at the held one
	ln -sf "$fix/locked.db" "$work/locked.db"
	before=$(snapshot "$work")
	env=() args=()
	if [ "$cmd" = "@empty-args" ]; then
		set --
	else
		eval "set -- $cmd"
	fi
	while [ $# -gt 0 ] && [[ $1 =~ ^[A-Z_][A-Z0-9_]*= ]]; do
		env+=("$1")
		shift
	done
	args=("$@")
	(cd "$work" && "${as[@]}" env "${env[@]}" timeout -k 5 120 "$TCX" "${args[@]}" \
		>"$scratch/out" 2>"$scratch/err" </dev/null)
	rc=$?
	why=""
	if [ "$rc" -ne "$want" ]; then
		why="exit $rc, expected $want"
	elif grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehavior' "$scratch/err"; then
		why="sanitizer report"
	elif ! grep -Eq -- "$regex" "$scratch/err"; then
		why="stderr lacks /$regex/"
	fi
	for f in $forbid; do
		[ -e "$work/$f" ] && why="${why:+$why; }left '$f' behind"
	done
	tmp=$(cd "$work" && find . -name '*.tmp.*' | head -3)
	[ -n "$tmp" ] && why="${why:+$why; }left temporary files: $tmp"
	after=$(snapshot "$work")
	if [ "$before" != "$after" ]; then
		changed=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')
		why="${why:+$why; }files changed: $changed"
	fi
	if [ -n "$why" ]; then
		echo "FAIL $name: $why"
		echo "     tcx $cmd"
		sed 's/^/     stderr: /' "$scratch/err" | head -8
		failed=$((failed + 1))
	else
		echo "ok   $name"
		passed=$((passed + 1))
	fi
done <"$cases"
echo "catalogue: $total cases, $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$total" -gt 0 ]

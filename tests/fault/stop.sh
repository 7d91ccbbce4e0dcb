#!/bin/bash
# stop.sh - a signal stops a long measurement at once: `tcx tune` (MinTime
# 600 s per measurement) and `tcx bench` (--min-time 600) get SIGTERM or
# SIGINT in the middle of a measurement and exit 130 within seconds, not at
# its end; the store keeps the measurements it had, whole, and none of the
# one interrupted; bench's output is whole, without the size it was
# measuring.  Absurd repetition counts are refused before anything runs.
. "$(dirname "$0")/lib.sh"
need_opencl
need_tools sqlite3 python3
export TCX_NO_KERNEL_CACHE=1 POCL_CACHE_DIR="$scratch/pocl"
tiny_config tiny.yaml
# the same candidates at another size, each measured for 600 s
sed -e 's/Exact: \[ 32, 32, 16 \]/Exact: [ 128, 128, 128 ]/' -e 's/MinTime: 0.01/MinTime: 600/' \
	tiny.yaml >long.yaml

# stop_after SIG SECONDS ARGS...: starts tcx ARGS, sends SIG after SECONDS,
# and waits at most 10 s more for it to exit (then kills it: a failure);
# leaves the status in $rc, stderr in $err and in $waited the milliseconds
# from the signal to the exit
stop_after() {
	local sig=$1 after=$2 pid t0

	shift 2
	"$TCX" "$@" >/dev/null 2>"$scratch/.stop.err" &
	pid=$!
	sleep "$after"
	t0=$(date +%s%N)
	kill -s "$sig" "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -s KILL "$pid"
		checks=$((checks + 1))
		fail "tcx $1 did not stop within 10 s of SIG$sig"
	fi
	wait "$pid"
	rc=$?
	waited=$((($(date +%s%N) - t0) / 1000000))
	checks=$((checks + 1))
	[ "$waited" -lt 5000 ] || fail "tcx $1 took $waited ms to stop after SIG$sig"
	out=""
	err=$(cat "$scratch/.stop.err")
}

# the store holds three measurements; PoCL's cache holds long.yaml's kernels
run tune --db store.db -o logic tiny.yaml
expect_rc 0 "tune tiny.yaml"
run tune --db warm.db -o warm --min-time 0 --min-reps 1 long.yaml
expect_rc 0 "tune long.yaml once, quickly (warming PoCL's cache)"
rm -rf warm warm.db*
run bench 'C[ij]=A[ik]*B[kj]' --exact 128,128,128 --min-time 0 --min-reps 1 -o /dev/null
expect_rc 0 "bench once, quickly (warming PoCL's cache)"
sqlite3 store.db 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
before=$(sqlite3 store.db 'SELECT * FROM measurements ORDER BY solution;')

for sig in TERM INT; do
	stop_after "$sig" 3 tune --db store.db -o logic long.yaml
	expect_rc 130 "tune stopped by SIG$sig in a measurement"
	expect_err "interrupted: 0 measurements are saved in store.db" "tune says what is saved"
	echo "tune: SIG$sig to exit in $waited ms"
	expect_store_ok store.db
	checks=$((checks + 1))
	[ "$(sqlite3 store.db 'SELECT * FROM measurements ORDER BY solution;')" = "$before" ] ||
		fail "tune: SIG$sig changed the store's measurements"
done

# bench: interrupted in its measurement, it writes a whole output without
# the size it was measuring
stop_after TERM 3 bench 'C[ij]=A[ik]*B[kj]' --exact 128,128,128 --min-time 600 -f json \
	-o out.json
expect_rc 130 "bench stopped by SIGTERM in a measurement"
echo "bench: SIGTERM to exit in $waited ms"
checks=$((checks + 1))
python3 - out.json <<'PY' || fail "bench's output is not a whole document without results"
import json, sys
assert json.load(open(sys.argv[1]))["results"] == []
PY
expect_no_temps

# absurd counts: refused at once (exit 2), not measured for minutes (a tcx
# that took them is stopped after 30 s: a failure)
run() {
	timeout -s KILL 30 "$TCX" "$@" >"$scratch/.out" 2>"$scratch/.err"
	rc=$?
	out=$(cat "$scratch/.out")
	err=$(cat "$scratch/.err")
}
run tune --db store.db --min-reps 99999999999999 long.yaml
expect_rc 2 "tune --min-reps 99999999999999"
expect_err "min-reps '99999999999999' is more than 100000" "tune says why"
run bench 'C[ij]=A[ik]*B[kj]' --exact 16,16,16 --min-reps 100001
expect_rc 2 "bench --min-reps 100001"
expect_err "min-reps '100001' is more than 100000" "bench says why"
sed 's/MinTime: 600/MinReps: 99999999999999/' long.yaml >reps.yaml
run tune --db store.db reps.yaml
expect_rc 2 "tune with MinReps 99999999999999"
expect_err "reps.yaml:2:12: MinReps must be a whole number from 1 to 100000" "tune says where"
done_testing

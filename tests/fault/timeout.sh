#!/bin/bash
# timeout.sh - --kernel-timeout: a kernel that hangs (TCX_FAULT=launch-hang)
# is abandoned after the timeout, recorded as failed, and the run goes on
# once the device is free again; a kernel that never ends stops tune with
# exit 3 after the timeout and the drain time (10 x the timeout), with what
# was measured saved.  The first launch of a shape includes PoCL's own
# compile for that work-group size, so the timeouts here leave room for it.
. "$(dirname "$0")/lib.sh"
need_fault_injection
need_opencl
need_tools sqlite3
tiny_config tiny.yaml
# warm PoCL's and tcx's caches, so that first launches are quick
run bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --exact 48,32,16 --min-time 0.01
expect_rc 0 "warm-up bench"

# bench: the first size's first launch hangs 9 s; the timeout is 3 s
t0=$(date +%s)
TCX_FAULT=launch-hang:1 TCX_FAULT_HANG_S=9 run bench 'C[ij]=A[ik]*B[kj]' \
	--exact 32,32,16 --exact 48,32,16 --min-time 0.01 --kernel-timeout 3
t1=$(date +%s)
expect_rc 0 "bench goes on after a timeout"
expect_out "32 +32 +16 failed: kernel 'tcx_contract' ran past the kernel timeout of 3 s" \
	"bench reports the timed-out size"
expect_out "48 +32 +16 +[0-9.]+ " "bench times the next size"
checks=$((checks + 1))
[ $((t1 - t0)) -lt 60 ] || fail "bench took $((t1 - t0)) s"

# without --kernel-timeout the same hang is only slow
TCX_FAULT=launch-hang:1 TCX_FAULT_HANG_S=2 run bench 'C[ij]=A[ik]*B[kj]' \
	--exact 32,32,16 --min-time 0.01
expect_rc 0 "a hang without a timeout just waits"
expect_out "32 +32 +16 +[0-9.]+ " "and then times the size"

# tune: the first candidate hangs 9 s, timeout 3 s: recorded, run goes on
TCX_FAULT=launch-hang:1 TCX_FAULT_HANG_S=9 run tune --db t.db -o logic --kernel-timeout 3 tiny.yaml
expect_rc 0 "tune goes on after a timeout"
expect_out "failed 1" "tune counts the timed-out candidate"
checks=$((checks + 1))
ls logic/*_Cij_Aik_Bkj_S.yaml >/dev/null 2>&1 || fail "no logic written"
run tune --explain --db t.db tiny.yaml
expect_out "ran past the kernel timeout of 3 s" "explain says why"
expect_store_ok t.db

# a kernel that never ends: tune stops (exit 3) after 2 s + 20 s of drain,
# keeping the failure it recorded; nothing half-written is left
t0=$(date +%s)
# (under timeout(1), so that a watchdog that fails to fire fails this test
# instead of hanging it)
TCX_FAULT=launch-hang:1 TCX_FAULT_HANG_S=100000 timeout -k 5 120 "$TCX" tune --db hung.db \
	-o hung-logic --kernel-timeout 2 tiny.yaml >"$scratch/.out" 2>"$scratch/.err"
rc=$?
out=$(cat "$scratch/.out") err=$(cat "$scratch/.err")
t1=$(date +%s)
expect_rc 3 "tune stops when the device stays busy"
expect_err "is still running kernel 'tcx_contract', abandoned after the kernel timeout" \
	"tune says the device is busy"
checks=$((checks + 1))
[ $((t1 - t0)) -lt 90 ] || fail "tune took $((t1 - t0)) s to give up"
checks=$((checks + 1))
[ "$(rows hung.db 2)" = 1 ] || fail "the timed-out candidate was not saved"
checks=$((checks + 1))
[ ! -e hung-logic ] || fail "logic written by a run that stopped"
expect_store_ok hung.db
expect_no_temps
done_testing

#!/bin/bash
# candidates.sh - a candidate whose build, device allocation or launch fails
# is recorded with the reason and skipped, and the run goes on: tune writes
# logic from the others and `tune --explain` says why; bench reports the
# size as failed and times the rest; validate, which has one candidate,
# fails with exit 3 and the reason.  Failures come from TCX_FAULT.
. "$(dirname "$0")/lib.sh"
need_fault_injection
need_opencl
need_tools sqlite3
tiny_config tiny.yaml

# tune: the Nth build / allocation / launch fails
for fault in build:2 alloc:1 launch:2; do
	db="$fault.db" dir="logic-$fault"
	TCX_FAULT=$fault run tune --db "$db" -o "$dir" tiny.yaml
	expect_rc 0 "tune with TCX_FAULT=$fault goes on"
	expect_out "measured 2, reused 0 from the store, skipped 0, failed 1" "one of three failed ($fault)"
	checks=$((checks + 1))
	ls "$dir"/*_Cij_Aik_Bkj_S.yaml >/dev/null 2>&1 || fail "no logic written ($fault)"
	expect_store_ok "$db"
	checks=$((checks + 1))
	[ "$(rows "$db" 2)" = 1 ] || fail "the failed candidate is not recorded ($fault)"
	run tune --explain --db "$db" tiny.yaml
	expect_rc 0 "tune --explain ($fault)"
	case $fault in
	build:*) expect_out "^failed .*Cij_Aik_Bkj_S" "explain lists the failure"
		expect_out "kernel build failed on 'opencl:[0-9:]+' \(injected by TCX_FAULT\)" "explain: build" ;;
	alloc:*) expect_out "cannot allocate [0-9]+ bytes on 'opencl:[0-9:]+': out of device memory" "explain: alloc" ;;
	launch:*) expect_out "kernel 'tcx_contract' failed on 'opencl:[0-9:]+' \(injected" "explain: launch" ;;
	esac
	# a second run reuses every stored result, the failure included (--force
	# measures again)
	run tune --db "$db" -o "$dir" tiny.yaml
	expect_rc 0 "tune again after $fault"
	expect_out "reused [0-9]+ from the store" "tune again reuses the store ($fault)"
	expect_no_temps
done

# bench: the first size's build / allocation / launch fails; the others run
for fault in build:1 alloc:1 launch:1; do
	TCX_FAULT=$fault run bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --exact 48,32,16 \
		--exact 64,32,16 --min-time 0.01 -f json -o "bench-$fault.json"
	expect_rc 0 "bench with TCX_FAULT=$fault goes on"
	checks=$((checks + 1))
	python3 - "bench-$fault.json" "$fault" <<'PY' || fail "bench rows wrong ($fault)"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
status = [r["status"] for r in rows]
assert len(rows) == 3, rows
assert status == ["failed", "ok", "ok"], status
assert "TCX_FAULT" in rows[0]["reason"], rows[0]["reason"]
PY
done

# validate: its one candidate fails, with exit 3 and the reason
for fault in build:1 alloc:1 launch:1; do
	TCX_FAULT=$fault run validate 'C[ij]=A[ik]*B[kj]' --sizes 32,32,16
	expect_rc 3 "validate with TCX_FAULT=$fault"
	expect_err "injected by TCX_FAULT" "validate says why ($fault)"
done
expect_no_temps
done_testing

#!/bin/bash
# enospc.sh - a full disk (TCX_FAULT=write:N makes the Nth durable write fail
# with ENOSPC) while writing the results store or an output file gives a
# clear error (a warning for bench's default store, its results still
# written), leaves the store intact and openable, and leaves the previous
# version of every output file as it was.  A real size limit (ulimit -f)
# checks the same without injection.
. "$(dirname "$0")/lib.sh"
need_fault_injection
need_opencl
need_tools sqlite3 python3
tiny_config tiny.yaml
# the on-disk kernel cache writes atomically too, which would take some of
# the counted writes: off, so that write:N counts stores and outputs only
export TCX_NO_KERNEL_CACHE=1

# bench -o over an existing file: the commit fails, the old file stays
# (no store: its row would be the first write)
echo "previous results" >out.json
old=$(md5sum <out.json)
TCX_FAULT=write:1 run bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --min-time 0.01 --no-store \
	-o out.json
expect_rc 2 "bench -o on a full disk"
expect_err "cannot write 'out.json': No space left on device" "bench names the file and ENOSPC"
expect_same out.json "$old"
expect_no_temps

# bench: the first size's row cannot be stored.  The default store is a
# warning: nothing more recorded, the results written, exit 0.  A --db
# store is an error, said when it happens: the results are still written,
# and the exit status is the store's.
TCX_FAULT=write:1 run bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --exact 16,16,16 \
	--min-time 0.001 -f json -o bench-default.json
expect_rc 0 "bench with a full disk under its default store"
expect_err "warning: cannot write results store '.*/tcx/results.db': database or disk is full; the rest of this run is not recorded" \
	"the warning names the default store"
checks=$((checks + 1))
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(len(d["results"]) != 2)' \
	bench-default.json || fail "bench's results lost to the default store"
expect_store_ok "$XDG_CACHE_HOME/tcx/results.db"
TCX_FAULT=write:2 run bench 'C[ij]=A[ik]*B[kj]' --exact 32,32,16 --exact 16,16,16 \
	--min-time 0.001 --db bench.db -f json -o bench-db.json
expect_rc 2 "bench with a full disk under its --db store"
expect_err "^tcx: cannot write results store 'bench.db': database or disk is full$" \
	"the error names the store"
expect_store_ok bench.db
checks=$((checks + 2))
[ "$(rows bench.db)" = 1 ] || fail "the row stored before the disk filled up is lost"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(len(d["results"]) != 2)' \
	bench-db.json || fail "bench's results lost to the --db store"
expect_no_temps

# tune: the first measurement cannot be stored
mkdir logic
echo "previous logic" >logic/pthread-old.yaml
oldlogic=$(md5sum <logic/pthread-old.yaml)
TCX_FAULT=write:1 run tune --db full.db -o logic tiny.yaml
expect_rc 2 "tune on a full disk"
expect_err "cannot write results store 'full.db': database or disk is full" "tune names the store"
expect_store_ok full.db
checks=$((checks + 1))
[ "$(rows full.db)" = 0 ] || fail "a measurement that could not be stored is in the store"
checks=$((checks + 1))
[ "$(ls logic)" = pthread-old.yaml ] || fail "tune wrote logic after a failed store: $(ls logic)"
expect_same logic/pthread-old.yaml "$oldlogic"

# the second of three measurements cannot be stored: the first stays
TCX_FAULT=write:2 run tune --db half.db -o logic tiny.yaml
expect_rc 2 "tune on a disk that fills up"
expect_store_ok half.db
checks=$((checks + 1))
[ "$(rows half.db)" = 1 ] || fail "the measurement stored before the disk filled up is lost"

# tune: every measurement stored, then the logic file cannot be written;
# the store keeps everything and a logic file written before stays whole
run tune --db ok.db -o logic tiny.yaml
expect_rc 0 "tune"
logicfile=$(ls logic/*_Cij_Aik_Bkj_S.yaml)
before=$(md5sum <"$logicfile")
TCX_FAULT=write:1 run tune --db ok.db -o logic --force tiny.yaml
checks=$((checks + 1))
[ "$rc" -ne 0 ] || fail "tune succeeded with a full disk"
expect_err "No space left on device|disk is full" "tune says the disk is full"
expect_store_ok ok.db
expect_same "$logicfile" "$before"
run tune --db ok.db -o logic tiny.yaml
expect_rc 0 "tune after the disk has room again"
checks=$((checks + 1))
grep -q 'tcx-logic' "$logicfile" || fail "the logic file is not whole"
expect_no_temps

# logic export over an existing file
TCX_FAULT=write:1 run logic export -o out.json "$logicfile"
expect_rc 2 "logic export on a full disk"
expect_err "No space left on device" "logic export says why"
expect_same out.json "$old"

# a real limit: files may not grow past 16 KiB (tcx ignores SIGXFSZ
# itself, so writes fail with EFBIG as they would with ENOSPC)
(
	ulimit -f 16
	"$TCX" bench 'C[ij]=A[ik]*B[kj]' --range '[16,1,400],0,0' --exact 32,32,16 --min-time 0.001 \
		--min-reps 1 -f csv -o out.json >/dev/null 2>err.txt
	echo $? >rc.txt
)
checks=$((checks + 1))
[ "$(cat rc.txt)" = 2 ] || fail "bench past the file-size limit: exit $(cat rc.txt): $(cat err.txt)"
expect_same out.json "$old"
expect_no_temps
done_testing

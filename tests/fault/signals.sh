#!/bin/bash
# signals.sh - SIGKILL and SIGINT at random points of `tcx bench -o`,
# `tcx tune` and `tcx export-lib`, 10 times each way: afterwards the store
# passes SQLite's integrity check and tcx opens it, no temporary file is
# left, and every output is either absent or complete.  SIGINT stops tune
# cleanly (exit 130) with what was measured saved, and the next run resumes
# from the store.
# The random points come from $TCX_SIGNAL_SEED (printed), for repeating a
# failure.
. "$(dirname "$0")/lib.sh"
need_opencl
need_tools sqlite3 python3
tiny_config tiny.yaml
seed=${TCX_SIGNAL_SEED:-$$}
echo "seed $seed (TCX_SIGNAL_SEED=$seed repeats these kill points)"
RANDOM=$seed
rounds=${TCX_SIGNAL_ROUNDS:-10}

# now_ms: the time in milliseconds
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}

	echo $((t / 1000))
}

# bench's JSON output, when there is one, is a whole document (with the
# rows measured before a SIGINT; none when it came before the first)
bench_complete() {
	python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert isinstance(doc["results"], list), "no results list"
PY
}

# starts "$@" in the background, sends signal $1 after $2 milliseconds
# (no later wait where it has ended before then: there is nothing to signal)
kill_after() {
	local sig=$1 ms=$2 t0

	shift 2
	t0=$(now_ms)
	"$TCX" "$@" >/dev/null 2>"$scratch/.sig.err" &
	pid=$!
	while [ $(($(now_ms) - t0)) -lt "$ms" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.02
	done
	kill -s "$sig" "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	out=""
	err=$(cat "$scratch/.sig.err")
}

# warm the caches so that kills land in measuring, not in one long compile
"$TCX" tune --db warm.db -o warm tiny.yaml >/dev/null 2>&1

for round in $(seq "$rounds"); do
	for sig in KILL INT; do
		ms=$((RANDOM % 2500))
		rm -f out.json
		kill_after "$sig" "$ms" bench 'C[ij]=A[ik]*B[kj]' --range '[16,16,128],0,0' \
			--min-time 0.02 -f json -o out.json
		if [ -e out.json ]; then
			checks=$((checks + 1))
			bench_complete out.json 2>/dev/null ||
				fail "bench: SIG$sig after $ms ms left an incomplete out.json"
		fi
		expect_no_temps

		ms=$((RANDOM % 6000))
		kill_after "$sig" "$ms" tune --force --db store.db -o logic tiny.yaml
		if [ "$sig" = INT ] && [ "$rc" -ne 0 ]; then
			checks=$((checks + 1))
			case $rc in
			130) echo "$err" | grep -q "interrupted: .* saved in store.db" ||
				fail "tune: SIGINT after $ms ms: exit 130 without saying what was saved" ;;
			*) fail "tune: SIGINT after $ms ms: exit $rc ($err)" ;;
			esac
		fi
		expect_store_ok store.db
		for f in logic/*.yaml; do
			[ -e "$f" ] || continue
			checks=$((checks + 1))
			"$TCX" logic show "$f" >/dev/null 2>&1 ||
				fail "tune: SIG$sig after $ms ms left an incomplete '$f'"
		done
		expect_no_temps
	done
done

# export-lib writes a tree of files, each atomically: after a kill at any
# point, every file present is whole (byte for byte what a full run writes)
logic=$(ls warm/*.yaml 2>/dev/null | head -1)
checks=$((checks + 1))
if [ -z "$logic" ]; then
	fail "the warm-up tune wrote no logic to export"
else
	"$TCX" export-lib -o ref --name mylib "$logic" >/dev/null 2>&1 || fail "export-lib failed"
	for round in $(seq "$rounds"); do
		for sig in KILL INT; do
			ms=$((RANDOM % 120))
			rm -rf lib
			kill_after "$sig" "$ms" export-lib -o lib --name mylib "$logic"
			checks=$((checks + 1))
			if [ -d lib ]; then
				(cd lib && find . -type f) | while read -r f; do
					cmp -s "lib/$f" "ref/$f" || echo "$f"
				done >bad.txt
				[ -s bad.txt ] &&
					fail "export-lib: SIG$sig after $ms ms left incomplete files: $(cat bad.txt)"
			fi
			expect_no_temps
		done
	done
fi

# interrupted runs resume: without --force, a run reuses what is stored
run tune --db store.db -o logic tiny.yaml
expect_rc 0 "tune after the interruptions"
expect_out "reused [1-9][0-9]* from the store" "tune resumes from the store"
expect_store_ok store.db
done_testing

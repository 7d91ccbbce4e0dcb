#!/bin/bash
# scale.sh - tuning spread out gives what one process gives: shards merged
# and finished from the store, several devices in one process, and MPI
# ranks (when tcx is built with MPI and mpirun is there).
. "$(dirname "$0")/lib.sh"

data=$TCX_TEST_DATA
tiny=$data/tune/tiny.yaml
example=$TCX_SOURCE_DIR/share/examples/sgemm.yaml

meas() { sqlite3 "$1" 'SELECT problem, sizes, solution, status FROM measurements ORDER BY 1, 2, 3'; }
# measurements taken (ok, skipped or failed) by the run whose JSON summary
# is in $out
taken() {
	printf '%s\n' "$out" | sed -n 's/^  "\(measured\|skipped\|failed\)": \([0-9]*\),$/\2/p' |
		awk '{ n += $1 } END { print n + 0 }'
}
# a logic file without the lines that name when it was made
logic_body() { grep -v -E '^ *(date|tcx_version):' "$1"/*.yaml; }

# Fake (deterministic) timings throughout: kernels are built for real, but
# each measurement is a fixed function of the solution and the sizes, so
# that runs spread out make the decisions one process makes (with PoCL's
# noisy timings the protocol's later candidates, which follow the winners,
# could differ), and the test takes seconds, not minutes.
export TCX_FAKE_TIMING=1

# shards 1/3, 2/3, 3/3 + merge + --from-store = one run (exhaustive search:
# one step, one round; each shard says, with exit 5, that the others'
# measurements are still missing)
opts=(--strategy exhaustive --device opencl:0:0)
run tune "$tiny" "${opts[@]}" --db single.db -o single
expect_rc 0 "single run"
for k in 1 2 3; do
	run tune "$tiny" "${opts[@]}" --shard $k/3 --db s$k.db -o shard$k
	expect_rc 5 "shard $k/3"
	expect_err "shard $k/3 measured its slice" "the shard says it did its part"
done
run results merge s1.db s2.db s3.db -o merged.db
expect_rc 0 "merge"
run tune "$tiny" "${opts[@]}" --from-store --db merged.db -o fromstore
expect_rc 0 "--from-store"
expect_out 'measured 0,' "nothing measured from the store"
checks=$((checks + 2))
[ "$(meas single.db)" = "$(meas merged.db)" ] || fail "shards merged differ from one run"
[ -n "$(ls fromstore/*.yaml 2>/dev/null)" ] || fail "no logic from the store"
run tune "$tiny" "${opts[@]}" --from-store --db s1.db -o partial
expect_rc 5 "--from-store with a store that lacks measurements"
expect_err 'group 00, exhaustive.*: the store lacks [0-9]+ measurement' "named, with the step"
run tune "$tiny" --shard 4/3 --db x.db
expect_rc 2 "a shard beyond N"
run tune "$tiny" --shard 1/3 --force --db x.db
expect_rc 2 "a shard that would not read the rounds before it"

# the protocol: one process, two devices in one process, shards in rounds
# and two MPI ranks make the same decisions
run tune "$example" --db f1.db -o f1 --device opencl:0:0 --format json
expect_rc 0 "one device"
single_measured=$(taken)
POCL_DEVICES="pthread pthread" run tune "$example" --db f2.db -o f2 --devices all -j 2
expect_rc 0 "two devices"
expect_err 'on opencl:0:0 and more' "both devices used"
checks=$((checks + 2))
[ "$(meas f1.db)" = "$(meas f2.db)" ] || fail "two devices measured other things"
[ "$(logic_body f1)" = "$(logic_body f2)" ] || fail "two devices chose other winners"
# shards with the protocol take rounds: each round every shard measures its
# slice of the first step the merged store cannot yet decide and exits 5,
# until the store decides every step and they exit 0; then --from-store
# writes what one process writes.  Together the shards measure what the
# single run measured, each measurement once: a shard that skipped its
# slice would leave the rounds unfinished, one that measured more than its
# slice would make the sum larger.
shards_measured=0
rm -f round.db
for round in 1 2 3 4 5 6; do
	done_all=1
	for k in 1 2 3; do
		rm -f r$k.db
		[ -f round.db ] && cp round.db r$k.db
		run tune "$example" --shard $k/3 --db r$k.db -o rs$k --format json
		case $rc in
		0) expect_out '"complete": true' "round $round, shard $k/3: complete" ;;
		5) expect_out '"complete": false' "round $round, shard $k/3: incomplete"
		   expect_err "group 00, .*: shard $k/3 measured its slice" "the step named"
		   done_all=0 ;;
		*) expect_rc 5 "round $round, shard $k/3" ;;
		esac
		shards_measured=$((shards_measured + $(taken)))
	done
	run results merge r1.db r2.db r3.db -o round.db
	expect_rc 0 "round $round: merge"
	[ $done_all = 1 ] && break
	if [ $round = 1 ]; then
		# the fork step is in the store, the final one is not
		run tune "$example" --from-store --db round.db -o early
		expect_rc 5 "--from-store after one round"
		expect_err 'group 00, final: the store lacks [0-9]+ measurement' "the step named"
		# a failure in the store is taken as it is by every shard (a
		# plain run would measure it again): were its owner alone to
		# measure it again, the others would wait for it at that step
		# round after round
		cp round.db failed.db
		sqlite3 failed.db "UPDATE measurements SET status = 2, reason = 'test'
			WHERE rowid = (SELECT min(rowid) FROM measurements)"
		for k in 1 2 3; do
			cp failed.db x$k.db
			run tune "$example" --shard $k/3 --db x$k.db -o xs$k
			expect_rc 5 "shard $k/3 over a stored failure"
			expect_err 'group 00, final: shard' "shard $k/3 past the failure"
		done
	fi
done
checks=$((checks + 3))
[ $done_all = 1 ] || fail "the shards were not complete after $round rounds"
[ "$round" = 3 ] || fail "the protocol's two steps took $round rounds, not 2 and 1 to see the end"
[ "$shards_measured" = "$single_measured" ] ||
	fail "the shards measured $shards_measured times, the single run $single_measured"
run tune "$example" --from-store --db round.db -o rounds
expect_rc 0 "--from-store after the rounds"
expect_out 'measured 0,' "nothing measured from the store"
checks=$((checks + 3))
[ -n "$(ls rounds/*.yaml 2>/dev/null)" ] || fail "no logic from the rounds' store"
[ "$(meas f1.db)" = "$(meas round.db)" ] || fail "the protocol's shards measured other things"
[ "$(logic_body f1)" = "$(logic_body rounds)" ] || fail "the protocol's shards chose other winners"
run tune "$example" --db f3.db --devices opencl:0:0,host
expect_rc 2 "devices of different models"
expect_err 'mixes models' "named"

if [ "${TCX_TEST_MPI:-0}" = 1 ] && command -v mpirun >/dev/null; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	# Open MPI's libraries are built without frame pointers: the fast
	# unwinder stops inside them, so LeakSanitizer sees two-frame stacks
	# that match none of the suppressions for them in tests/lsan.supp.
	# The slow unwinder sees the whole stack (a few seconds more here).
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" \
	mpirun -n 2 --oversubscribe "$TCX" tune "$example" --db fm.db -o fm >mpi.out 2>mpi.err
	rc=$?
	out=$(cat mpi.out) err=$(cat mpi.err)
	expect_rc 0 "mpirun -n 2"
	expect_err 'across MPI ranks' "ranks used"
	checks=$((checks + 2))
	[ "$(meas f1.db)" = "$(meas fm.db)" ] || fail "MPI ranks measured other things"
	[ "$(logic_body f1)" = "$(logic_body fm)" ] || fail "MPI ranks chose other winners"
else
	echo "note: tcx built without MPI or no mpirun: the MPI case is not run"
fi

done_testing

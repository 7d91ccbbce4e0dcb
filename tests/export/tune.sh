#!/bin/bash
# tune.sh - the export tests' fixture (FIXTURES_SETUP export_logic): tunes
# tests/data/tune/tiny.yaml on the default OpenCL device into
# $TCX_EXPORT_FIXTURE/logic, with its results store beside it.  The logic
# carries the per-solution measurements the selectors learn from.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
skip_without_opencl

rm -rf "$TCX_EXPORT_FIXTURE"
mkdir -p "$TCX_EXPORT_FIXTURE"
run tune "$TCX_TEST_DATA/tune/tiny.yaml" --db "$TCX_EXPORT_FIXTURE/results.db" \
	-o "$TCX_EXPORT_FIXTURE/logic" --device opencl:0:0
expect_rc 0 "tiny tune"
logic=$(fixture_logic)
checks=$((checks + 1))
[ -n "$logic" ] || fail "no logic file in $TCX_EXPORT_FIXTURE/logic"
run logic show --format json "$logic"
expect_rc 0 "the logic loads"
# tcx tune kept every solution's measurements for the selectors
expect_out '"points": \[' "a selector section with points"
expect_out '"gflops": \[' "with GFLOP/s per solution"
done_testing

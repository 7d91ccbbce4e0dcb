#!/bin/bash
# special-outputs.sh - an output that already exists and is not a regular
# file (a FIFO here; /dev/null and terminals alike) is written in place, not
# replaced by a renamed temporary file: as root, a rename over /dev/null
# would turn the device into a regular file for the whole machine.
. "$(dirname "$0")/lib.sh"
need_tools mkfifo
logic="$TCX_TEST_DATA/tensile/logic/rocblas-3093ba2e/hip_lite_Tensile_Cijk_Ailk_Bjlk_SB.yaml"

mkfifo out.fifo
timeout 60 cat out.fifo >got.yaml &
reader=$!
run logic import -o out.fifo "$logic"
expect_rc 0 "logic import into a FIFO"
checks=$((checks + 1))
if [ -p out.fifo ]; then
	wait "$reader"
else
	fail "the FIFO was replaced by a regular file"
	kill "$reader" 2>/dev/null
fi
checks=$((checks + 1))
grep -q '^tcx-logic: 1' got.yaml || fail "the reader did not get the logic"
expect_no_temps

# and a regular file is still replaced atomically
echo old >out.yaml
run logic import -o out.yaml "$logic"
expect_rc 0 "logic import into a file"
checks=$((checks + 1))
grep -q '^tcx-logic: 1' out.yaml || fail "out.yaml was not replaced"
expect_no_temps
done_testing

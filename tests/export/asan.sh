#!/bin/bash
# asan.sh - the generated library and its client under AddressSanitizer and
# UndefinedBehaviorSanitizer (any report fails): the tiny tune's logic and
# the hand-made one, packed and padded strides, and the error paths.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
skip_without_opencl
data=$(cd "$(dirname "$0")/data" && pwd)
logic=$(fixture_logic)
[ -n "$logic" ] || { echo "FAIL: no fixture logic (export.tune)"; exit 1; }
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# intercept_tls_get_addr=0: see scripts/test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$TCX_SOURCE_DIR/tests/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1

run export-lib "$logic" "$data/special.yaml" -o lib --name tcxasan
expect_rc 0 "export-lib"
build_tree lib build "$scratch/prefix" "-Wall -Wextra -Werror $san" || finish
client=build/tcxasan-client
for s in 16,16,2,8 7,5,3,11 1,1,1,1 29,17,3,13 17,19,2,23; do
	check "client $s" "$client" --sizes "$s"
	check "client $s padded" "$client" --sizes "$s" --pad 1 --beta 2
	check "query $s" "$client" --sizes "$s" --query
done
check_fails "client: a bad problem" "$client" --problem 7 --sizes 1,1,1,1
checks=$((checks + 1))
printf '%s' "$out" | grep -q "no problem type '7'" || fail "named: $out"
done_testing

#!/bin/bash
# limits.sh - the generated library at tcx's limits, built with
# AddressSanitizer and UndefinedBehaviorSanitizer: problem types of 16
# indices (the most tcx takes) in C, in A, in B, and 16 batch indices,
# which fill every slot of the kernels' arguments (three size-1 stand-ins
# and 16 folded indices), with and without GlobalSplitU; and a launch of
# 70000 work-groups along dimension 2, more than CUDA's grid takes there.
# Each validated by the library's client.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
skip_without_opencl
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# intercept_tls_get_addr=0: see scripts/test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$TCX_SOURCE_DIR/tests/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1

direct='{WorkGroup: [2, 2, 1], ThreadTile: [2, 2], DepthU: 2, VectorWidth: 2, UseLDS: false}'
# logic NAME EXPR SIZES [GSU]: a logic file whose one solution (small
# direct reads; GlobalSplitU when given) serves every size
logic() {
	local params=$direct
	[ -n "${4:-}" ] && params="${direct%\}}, GlobalSplitU: $4}"
	cat >"$1.yaml" <<YAML
tcx-logic: 1
device_names: [default]
problem: {expression: '$2', type: s}
solutions:
- name: small
  parameters: $params
exact:
- {sizes: [$3], solution: 0, gflops: 1}
range: null
selector: null
YAML
}
s16=2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2
logic c16 'abcdefgh,ijklmnop->abcdefghijklmnop' $s16
logic a16 'abcdefghijklmnop,ijklmnop->abcdefgh' $s16
logic b16 'ijklmnop,abcdefghijklmnop->abcdefgh' $s16
logic batch16 'abcdefghijklmnop,abcdefghijklmnop->abcdefghijklmnop' $s16 2
logic grid 'bij,bjk->bik' 70000,1,1,1
run export-lib c16.yaml a16.yaml b16.yaml batch16.yaml grid.yaml -o lib --name tcxlim \
	--selector logic
expect_rc 0 "export-lib"
build_tree lib build "$scratch/prefix" "-Wall -Wextra -Werror $san" || finish
client=build/tcxlim-client
for k in 0 1 2 3; do
	check "client: problem $k, 16 indices" "$client" --problem $k --sizes $s16 --beta 0.5
done
check "client: 16 batch indices, padded strides" "$client" --problem 3 --sizes $s16 --pad 1
check "client: 70000 work-groups along dimension 2" "$client" --problem 4 --sizes 70000,1,1,1
done_testing

#!/bin/bash
# launch.sh - the generated library launches exactly as tcx does: for each
# solution of a hand-made logic (GlobalSplitU and its reduction, local
# memory with prefetching, LocalSplitU, ShiftPtr edges with
# WorkGroupMapping, direct vector loads; a complex type with a conjugated
# operand), the library's result is validated by its client and is
# bit-for-bit tcx run's with the same parameters (plan_launch) on the same
# inputs; padded strides run the general-strides kernel and validate.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
skip_without_opencl
# tcx run builds each kernel once: its kernel cache would only add PoCL's
# build for a generic work-group size, when the binary is read to store it
export TCX_NO_KERNEL_CACHE=1
data=$(cd "$(dirname "$0")/data" && pwd)
strict="-pedantic -Wall -Wextra -Werror"

run export-lib "$data/special.yaml" "$data/complex.yaml" -o lib --name tcxl --selector logic
expect_rc 0 "export-lib"
build_tree lib build "$scratch/prefix" "$strict" || finish
client=build/tcxl-client

# params K FILE LOGIC: solution K's parameters (JSON, which tcx reads as YAML)
params() {
	"$TCX" logic show --format json "$3" |
		python3 -c "import json, sys; print(json.dumps(json.load(sys.stdin)['solutions'][$1]['parameters']))" >"$2"
}

# same PROBLEM SIZES SOLUTION LOGIC EXPR ALPHA: validated, and tcx run's bits
same() {
	local d="d-$2"

	mkdir -p "$d"
	check "client $1 $2" "$client" --problem "$1" --sizes "$2" --alpha "$6" --dump "$d" ||
		return
	checks=$((checks + 1))
	printf '%s' "$out" | grep -q "solution $3 by logic" || fail "$2 ran solution $3: $out"
	params "$3" "$d/sol.json" "$4"
	check "tcx run $2" "$TCX" run "$5" -i A="$d/a.npy" -i B="$d/b.npy" -o "$d/want.npy" \
		--alpha "$6" --solution "$d/sol.json" --device opencl:0:0 || return
	check "same bits $2" python3 - "$d/c.npy" "$d/want.npy" <<'PY'
import sys
def data(p):
    b = open(p, "rb").read()
    return b[10 + (b[8] | b[9] << 8):]
a, b = data(sys.argv[1]), data(sys.argv[2])
if a != b:
    n = sum(x != y for x, y in zip(a, b))
    sys.exit("%d of %d bytes differ" % (n, len(a)))
PY
	check "client $1 $2, padded strides" "$client" --problem "$1" --sizes "$2" --pad 3 \
		--beta 0.25
}

expr='C[ijk] = Sum[l] A[ilk] * B[jlk]'
same Cijk_Ailk_Bjlk_S 29,17,3,13 0 "$data/special.yaml" "$expr" 1.5
same Cijk_Ailk_Bjlk_S 33,9,2,20 1 "$data/special.yaml" "$expr" -0.5
same Cijk_Ailk_Bjlk_S 40,24,2,8 2 "$data/special.yaml" "$expr" 1
same Cijk_Ailk_Bjlk_S 7,5,3,11 3 "$data/special.yaml" "$expr" 2
same Cij_AikC_Bkj_C 16,16,16 0 "$data/complex.yaml" 'C[ij] = Sum[k] conj(A[ik]) * B[kj]' 1,0.5
# untuned sizes: the library's other choices validate too
for s in 1,1,1,1 31,37,5,41 64,3,2,97; do
	check "client $s" "$client" --sizes "$s" --beta -1
done
check "complex 17,3,33" "$client" --problem 1 --sizes 17,3,33 --alpha 1,2 --beta 0.5,-1 --pad 1
done_testing

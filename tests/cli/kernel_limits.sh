#!/bin/bash
# kernel_limits.sh - tcx at its limits on the default OpenCL device (PoCL in CI)
# and the host reference.  Contractions of 16 indices, the most tcx takes
# (TCX_MAX_INDICES), in C, in A, in B, 16 batch indices (every slot of the
# kernel's arguments: three size-1 stand-ins and 16 folded indices) and 16
# bound ones: validated, and `tcx run` on both devices against
# numpy.einsum.  Launches of more work-groups than CUDA's grid takes along
# dimension 2 (65535), and under small grid limits ($TCX_MAX_GROUPS) that
# fold the groups over every dimension, with spare groups, local memory
# and its barriers, GlobalSplitU and its reduction, WorkGroupMapping.
# Small kernels, as PoCL compiles them fastest.
. "$(dirname "$0")/lib.sh"

small='UseLDS=False,WorkGroup=[2,2,1],ThreadTile=[2,2],VectorWidth=2,DepthU=2'
sizes16=2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2
exprs=(
	'abcdefgh,ijklmnop->abcdefghijklmnop'
	'abcdefghijklmnop,ijklmnop->abcdefgh'
	'ijklmnop,abcdefghijklmnop->abcdefgh'
	'abcdefghijklmnop,abcdefghijklmnop->abcdefghijklmnop'
	'abcdefghijklmnop,abcdefghijklmnop->'
)
# the default solution, as the report had it
run validate "${exprs[0]}" --sizes $sizes16
expect_rc 0 "16 indices in C, the default solution"
expect_out 'result +PASS' "16 indices in C, the default solution, passes"
for e in "${exprs[@]}"; do
	run validate "$e" --sizes $sizes16 --beta 0.5 --params "$small"
	expect_rc 0 "16 indices: $e"
	expect_out 'result +PASS' "16 indices: $e passes"
done
# GlobalSplitU and its reduction over every slot
run validate "${exprs[3]}" --sizes $sizes16 --params "$small,GlobalSplitU=2"
expect_rc 0 "16 batch indices, GlobalSplitU"
expect_out 'result +PASS' "16 batch indices, GlobalSplitU, pass"

py=/usr/bin/python3
if [ -x $py ] && $py -c 'import numpy' 2>/dev/null; then
	for k in "${!exprs[@]}"; do
		e=${exprs[$k]}
		$py - "$e" <<'PY'
import sys
import numpy as np
r = np.random.default_rng(7)
ins = sys.argv[1].split("->")[0].split(",")
np.save("a.npy", r.uniform(-1, 1, (2,) * len(ins[0])).astype("f4"))
np.save("b.npy", r.uniform(-1, 1, (2,) * len(ins[1])).astype("f4"))
PY
		for d in opencl:0:0 host; do
			p=(--params "$small")
			[ "$k" -eq 0 ] && p=() # the default solution
			rm -f out.npy
			run run "$e" -i A=a.npy -i B=b.npy -o out.npy --device $d "${p[@]}"
			expect_rc 0 "tcx run $e on $d"
			checks=$((checks + 1))
			$py - "$e" <<'PY' || fail "tcx run $e on $d differs from numpy.einsum"
import sys
import numpy as np
e = sys.argv[1]
a, b, c = np.load("a.npy"), np.load("b.npy"), np.load("out.npy")
want = np.einsum(e, a.astype("f8"), b.astype("f8"))
mag = np.einsum(e, abs(a.astype("f8")), abs(b.astype("f8")))
err = abs(c - want)
if c.shape != want.shape or not (err <= 1e-6 * mag + 1e-30).all():
    sys.exit("max error %g" % err.max())
PY
		done
	done
else
	echo "no Python with NumPy: tcx run is not compared with numpy.einsum"
fi

# 70000 work-groups along dimension 2
run validate 'bij,bjk->bik' --sizes b=70000,i=1,j=1,k=1 --params "$small"
expect_rc 0 "70000 work-groups along dimension 2"
expect_out 'result +PASS' "70000 work-groups along dimension 2 pass"

# the groups of a batch of 3 over tiles of D0 and D1, in a grid of at most
# 5 x 2 x 100 (spare groups at its end): local memory, LocalSplitU, ShiftPtr
# and WorkGroupMapping (7 x 3 x 3 groups of 4x4 tiles); GlobalSplitU, its
# reduction and WorkGroupMapping (7 x 3 x 9); element-sized tiles (27 x 10
# x 3)
export TCX_MAX_GROUPS=5,2,100
for p in 'UseLDS=True,WorkGroup=[2,2,2],ThreadTile=[2,2],VectorWidth=2,DepthU=4,EdgeType=ShiftPtr,WorkGroupMapping=3' \
	"$small,GlobalSplitU=3,WorkGroupMapping=2" \
	'UseLDS=False,WorkGroup=[1,1,1],ThreadTile=[1,1],VectorWidth=1,DepthU=2'; do
	run validate 'C[ijk]=A[ilk]*B[jlk]' --sizes i=27,j=10,k=3,l=9 --params "$p" --beta 0.5
	expect_rc 0 "a grid of 5 x 2 x 100: $p"
	expect_out 'result +PASS' "a grid of 5 x 2 x 100 passes: $p"
done
# more groups than such a grid holds: refused, with the counts
export TCX_MAX_GROUPS=1,1,2
run validate 'ik,kj->ij' --sizes 40,40,3 --params "$small"
expect_rc 3 "100 groups in a grid of 1 x 1 x 2"
expect_err "a launch of 100 work-groups exceeds the 1 x 1 x 2 a grid holds on 'opencl:" \
	"the grid's refusal"
unset TCX_MAX_GROUPS

done_testing

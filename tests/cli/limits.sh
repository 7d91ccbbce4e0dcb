#!/bin/bash
# limits.sh - tcx at its limits on the default OpenCL device (PoCL in CI)
# and the host reference.  Contractions of 16 indices, the most tcx takes
# (TCX_MAX_INDICES), in C, in A, in B, 16 batch indices (every slot of the
# kernel's arguments: three size-1 stand-ins and 16 folded indices) and 16
# bound ones: validated, and `tcx run` on both devices against
# numpy.einsum.  Small kernels, as PoCL compiles them fastest.
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

done_testing

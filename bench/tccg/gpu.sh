#!/bin/bash
# gpu.sh - the TCCG table on an NVIDIA GPU machine, in one command: tcx's
# own choice for every case (validated), torch.einsum (fp32, TF32 off), and
# cuTENSOR (32F and 3XTF32, the better of the two) when its wheel has been
# unpacked (../shared/gpu/cutensor/README.md: the parts travel to /tmp/cut
# in earlier calls).  Run from the repository root with the bundle in .gpu/
# (../shared/gpu/bundle.sh .gpu build/cmd/tcx):
#
#   bench/tccg/gpu.sh [--only REGEX] [more run.py options]
#
# Writes $OUT (default ./gpu-out)/tccg.md, tccg.json and cutbench.txt.
# The roofline takes TF32x3's rate on Hopper (165 TFLOP/s: fp32 accuracy
# from the tensor cores) and the HBM copy rate ($TCCG_BW_TBS, default 4.2).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpu/env.sh
cache=$(mktemp -d)
export XDG_CACHE_HOME=$cache
anchors=torch
cut=()
if [ -x .gpu/cut/bin/cutbench ] && [ -e /tmp/cut/cutensor/lib/libcutensor.so.2 ]; then
	eval "$(.gpu/cut/bin/unpack.sh .gpu/cut)"
	{
		python3 bench/tccg/cases.py --format cutbench --compute 32f
		python3 bench/tccg/cases.py --format cutbench --compute 3xtf32
	} | .gpu/cut/bin/cutbench >"$out/cutbench.txt" 2>"$out/cutbench.err"
	echo "cutbench: exit $?, $(wc -l <"$out/cutbench.txt") lines"
	anchors=torch,cutensor
	cut=(--cutbench "$out/cutbench.txt")
fi
python3 bench/tccg/run.py --tcx "$(command -v tcx)" --device "${TCCG_DEVICE:-cuda:0}" \
	--anchors "$anchors" "${cut[@]}" --peak-tflops 165 --bw-tbs "${TCCG_BW_TBS:-4.2}" \
	--report "$out/tccg.md" --json "$out/tccg.json" "$@"
rc=$?
rm -rf "$cache"
exit $rc

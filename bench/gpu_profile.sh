#!/bin/bash
# gpu_profile.sh - one tcx kernel under Nsight Compute, on a GPU machine set
# up as for bench/gpu.sh (the bundle in .gpu/):
#
#   bench/gpu_profile.sh EXPR SIZES PARAMS [TYPE] [NAME]
#
# Profiles the one launch after tcx bench's warm-up with the speed-of-light,
# scheduler, warp-state, memory and instruction sections (the clocks left
# as they are), and writes $OUT/NAME.txt (the sections) and $OUT/NAME.csv
# (the SASS with each instruction's executions and stall samples, for
# finding where the warps wait).  NAME defaults to "profile".
set -u
[ $# -ge 3 ] || { echo "usage: bench/gpu_profile.sh EXPR SIZES PARAMS [TYPE] [NAME]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpu/env.sh
expr=$1 sizes=$2 params=$3 type=${4:-s} name=${5:-profile}
rep=$(mktemp -d)/$name
# --launch-skip 3: past the warm-up launches of tcx bench
ncu --clock-control none --kernel-name tcx_contract --launch-skip 3 --launch-count 1 \
	--section SpeedOfLight --section SchedulerStats --section WarpStateStats \
	--section MemoryWorkloadAnalysis_Tables --section InstructionStats \
	--section SourceCounters --import-source no -o "$rep" \
	tcx bench "$expr" --exact "$sizes" --type "$type" --params "$params" \
	--device cuda:0 --min-reps 5 --min-time 0 >"$out/$name.log" 2>&1
rc=$?
ncu -i "$rep.ncu-rep" --print-details all >"$out/$name.txt" 2>&1
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$out/$name.csv" 2>&1
echo "ncu: exit $rc; $(grep -m1 -E 'Duration' "$out/$name.txt")"

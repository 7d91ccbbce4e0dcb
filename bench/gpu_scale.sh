#!/bin/bash
# gpu_scale.sh - one tuning config on one GPU, then on two GPUs of the same
# host (tcx tune --devices), each with a cold kernel cache; prints the wall
# times, the measurement counts and both runs' winners.  Run from the
# repository root on a two-GPU machine with the bundle in .gpu/ (see
# bench/gpu.sh); results under $OUT (default ./gpu-out).
#
#   bench/gpu_scale.sh [CONFIG] [DEVICES]   default share/tune/hopper-sgemm-nn.yaml cuda:0,cuda:1
set -u
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
source .gpu/env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
cfg=${1:-share/tune/hopper-sgemm-nn.yaml}
two=${2:-cuda:0,cuda:1}
tcx devices | tee "$out/devices.txt"
for run in one two; do
	XDG_CACHE_HOME=$(mktemp -d)
	export XDG_CACHE_HOME
	if [ $run = one ]; then devs=(--device "${two%%,*}"); else devs=(--devices "$two"); fi
	s=$(date +%s.%N)
	tcx tune "$cfg" "${devs[@]}" -j "$(nproc)" --db "$out/$run.db" -o "$out/$run" >"$out/$run.log" 2>&1
	rc=$?
	e=$(date +%s.%N)
	echo "$run: exit $rc, $(python3 -c "print(round($e - $s, 1))") s wall; $(grep -E 'measured' "$out/$run.log" | tail -1)"
done
for run in one two; do
	echo "== $run: winners"
	grep -E '^- name:' "$out/$run"/*.yaml
done

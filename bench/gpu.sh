#!/bin/bash
# gpu.sh - tcx on an NVIDIA GPU machine in one command, from a bundle made
# by ../shared/gpu/bundle.sh (the GPU machines have the driver, CUDA and
# PyTorch, but none of tcx's Debian libraries).  Run from the repository
# root, with the bundle in .gpu/:
#
#   bench/gpu.sh [PHASE...]        phases: info smoke matrix probe torch tune bench
#                                  (default: all of them, in that order)
#
# Writes everything under $OUT (default ./gpu-out): logs, JSON, the tuned
# logic, and gpu-report.md, a dated report with the device, the driver, the
# validation results and a table of TFLOP/s with ratios against PyTorch.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpu/env.sh
export XDG_CACHE_HOME=$out/cache POCL_CACHE_DIR=$out/pocl-cache
jobs=$(nproc 2>/dev/null || echo 8)
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(info smoke matrix probe torch tune bench)
report=$out/gpu-report.md
want() { for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
log() { printf '%s\n' "$*" | tee -a "$report"; }
stamp() { date -u +%H:%M:%S; }

# the NVIDIA device through OpenCL, if NVIDIA's OpenCL driver is there
ocl=$(tcx devices --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next((x["id"] for x in d["devices"] if x["backend"] == "opencl" and x["type"].lower() == "gpu"), ""))')
cuda=cuda:0
backends=("$cuda")
[ -n "$ocl" ] && backends+=("$ocl")

if want info; then
	{
		echo "# tcx on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
		echo
		echo "Date (UTC): $(date -u '+%Y-%m-%d %H:%M')  "
		echo "Driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)  "
		echo "tcx: $(tcx --version | head -1)"
		echo
		echo '```'
		tcx devices
		echo '```'
	} >"$report"
	cat "$report"
fi

if want smoke; then
	log "" "## Smoke tests ($(stamp))" ""
	for b in cuda; do
		gpu_smoke "$b" >"$out/smoke-$b.log" 2>&1
		log "- gpu_smoke $b: exit $? ($(tail -1 "$out/smoke-$b.log"))"
	done
fi

if want matrix; then
	log "" "## Validation matrix ($(stamp))" ""
	log "| backend | type | result |"
	log "|---|---|---|"
	for dev in "${backends[@]}"; do
		for t in ${GPU_MATRIX_TYPES:-s d c z h b}; do
			timeout 600 validate_matrix "$t" --device "$dev" --jobs "$jobs" \
				>"$out/matrix-${dev//:/_}-$t.log" 2>&1
			rc=$?
			log "| $dev | $t | exit $rc: $(tail -1 "$out/matrix-${dev//:/_}-$t.log") |"
		done
	done
fi

if want probe; then
	# where the kernels stand before tuning: a few hand-picked solutions
	log "" "## Probe ($(stamp))" ""
	while IFS='|' read -r name params; do
		[ -z "$name" ] && continue
		for dev in "${backends[@]}"; do
			for size in 4096,4096,4096 8192,8192,8192; do
				r=$(tcx bench 'C[ij]=A[ik]*B[kj]' --exact "$size" --device "$dev" \
					--params "$params" --min-time 0.3 --format json 2>>"$out/probe.err" |
					python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.1f TFLOP/s" % (r["gflops"]/1e3) if r["gflops"] else r.get("reason","-"))')
				log "- $name on $dev at $size: $r"
			done
		done
	done <<'EOF'
lds-128x128-du8|UseLDS=True,WorkGroup=[16,16,1],ThreadTile=[8,8],DepthU=8,VectorWidth=4,PrefetchGlobalRead=True,PrefetchLocalRead=True,LdsPad=4
lds-128x128-du16|UseLDS=True,WorkGroup=[16,16,1],ThreadTile=[8,8],DepthU=16,VectorWidth=4,PrefetchGlobalRead=True,PrefetchLocalRead=True,LdsPad=4
lds-128x64-du16|UseLDS=True,WorkGroup=[16,16,1],ThreadTile=[8,4],DepthU=16,VectorWidth=4,PrefetchGlobalRead=True,PrefetchLocalRead=True,LdsPad=4
lds-64x64-du16|UseLDS=True,WorkGroup=[16,16,1],ThreadTile=[4,4],DepthU=16,VectorWidth=4,PrefetchGlobalRead=True,PrefetchLocalRead=True
EOF
fi

if want torch; then
	log "" "## PyTorch reference ($(stamp))" ""
	python3 bench/torch_ref.py >"$out/torch.json" 2>"$out/torch.err"
	log "- torch_ref.py: exit $? ($(python3 -c 'import json; d=json.load(open("'"$out"'/torch.json")); print(d["device"], "torch", d["torch"], "copy %.2f TB/s" % d["copy_tbs"])' 2>&1))"
fi

if want tune; then
	log "" "## Tuning ($(stamp))" ""
	mkdir -p "$out/logic"
	for cfg in share/tune/hopper-*.yaml; do
		for dev in "${backends[@]}"; do
			start=$(date +%s)
			tcx -q tune "$cfg" --device "$dev" -j "$jobs" --db "$out/results.db" \
				-o "$out/logic/${dev//:/_}" >"$out/tune-$(basename "$cfg" .yaml)-${dev//:/_}.log" 2>&1
			log "- $(basename "$cfg") on $dev: exit $? in $(($(date +%s) - start)) s"
		done
	done
fi

if want bench; then
	log "" "## tcx against PyTorch ($(stamp))" ""
	python3 bench/gpu_report.py --cases bench/gpu_cases.txt --torch "$out/torch.json" \
		--logic "$out/logic" --out "$out" --devices "${backends[@]}" | tee -a "$report"
fi
log "" "Finished $(stamp)."

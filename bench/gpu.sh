#!/bin/bash
# gpu.sh - tcx on an NVIDIA GPU machine in one command, from a bundle made
# by ../shared/gpu/bundle.sh (the GPU machines have the driver, CUDA and
# PyTorch, but none of tcx's Debian libraries).  Run from the repository
# root, with the bundle in .gpu/:
#
#   bench/gpu.sh [PHASE...]        phases: info smoke matrix probe torch cutensor tune bench
#                                  (default: all of them, in that order)
#
# The cutensor phase times the bench phase's cases through cuTENSOR with
# CUTBENCH=path/to/cutbench (../shared/gpu/cutensor/: its library path set
# by unpack.sh's line); without CUTBENCH it says so and the report has no
# cuTENSOR column.
#
# GPU_LOGIC_FROM=share/logic benches the committed logic of this device
# instead of what the tune phase wrote.
#
# Writes everything under $OUT (default ./gpu-out): logs, JSON, the tuned
# logic, and gpu-report.md, a dated report with the device, the driver,
# the validation results and a table of TFLOP/s with ratios against
# PyTorch.  GPU_PACK=1 packs all but the report into gpu-out.tar.gz.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpu/env.sh
# kernel caches outside $OUT: thousands of files nobody needs back
cache=$(mktemp -d)
export XDG_CACHE_HOME=$cache POCL_CACHE_DIR=$cache/pocl
jobs=$(nproc 2>/dev/null || echo 8)
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(info smoke matrix probe torch cutensor tune bench)
report=$out/gpu-report.md
want() { for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
log() { printf '%s\n' "$@" | tee -a "$report"; }
stamp() { date -u +%H:%M:%S; }
trim() { local t=${1#"${1%%[![:space:]]*}"}; printf '%s' "${t%"${t##*[![:space:]]}"}"; }

# the NVIDIA device through OpenCL, if NVIDIA's OpenCL driver is there
ocl=$(tcx devices --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next((x["id"] for x in d["devices"] if x["backend"] == "opencl" and x["type"].lower() == "gpu"), ""))')
cuda=cuda:0
backends=("$cuda")
[ -n "$ocl" ] && backends+=("$ocl")
# the backends the tune and bench phases use (GPU_TUNE_DEVICES="cuda:0 opencl:0:0")
read -r -a tuned <<<"${GPU_TUNE_DEVICES:-$cuda}"

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
	for dev in ${GPU_MATRIX_DEVICES:-${backends[@]}}; do
		for t in ${GPU_MATRIX_TYPES:-s d c z h b}; do
			timeout 600 validate_matrix "$t" --device "$dev" --jobs "$jobs" \
				${GPU_MATRIX_ONLY:+--only "$GPU_MATRIX_ONLY"} \
				>"$out/matrix-${dev//:/_}-$t.log" 2>&1
			rc=$?
			log "| $dev | $t | exit $rc: $(tail -1 "$out/matrix-${dev//:/_}-$t.log") |"
		done
	done
fi

if want probe; then
	# where hand-picked solutions stand before tuning (bench/gpu_probe.txt;
	# GPU_PROBE to use another list, GPU_PROBE_DEVICES for other backends)
	log "" "## Probe ($(stamp))" ""
	# GPU_PROBE_VALIDATE=1: also validate each at its size (a sample)
	log "| name | type | device | sizes | TFLOP/s | validated |"
	log "|---|---|---|---|---|---|"
	while IFS='|' read -r name expr sizes params type; do
		name=$(trim "$name") expr=$(trim "$expr") sizes=$(trim "$sizes") params=$(trim "$params")
		type=$(trim "${type:-s}")
		case $name in '' | '#'*) continue ;; esac
		# GPU_PROBE_ONLY: an extended regular expression the names must match
		[ -n "${GPU_PROBE_ONLY:-}" ] && ! [[ $name =~ $GPU_PROBE_ONLY ]] && continue
		for dev in ${GPU_PROBE_DEVICES:-$cuda}; do
			for size in ${sizes//;/ }; do
				r=$(tcx bench "$expr" --exact "$size" --type "$type" --device "$dev" \
					--params "$params" --min-time 0.2 --format json 2>>"$out/probe.err" |
					python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print("%.1f" % (r["gflops"]/1e3) if r.get("gflops") else r.get("reason","-"))' 2>&1 | tail -1)
				v=-
				if [ "${GPU_PROBE_VALIDATE:-0}" = 1 ]; then
					v=$(tcx validate "$expr" --sizes "$size" --type "$type" --device "$dev" \
						--params "$params" --sample 20000 2>&1 |
						awk '/^max error/ { e = $3 } { l = $0 } END { print l (e ? " (max error " e ")" : "") }')
				fi
				log "| $name | $type | $dev | $size | $r | $v |"
			done
		done
	done <"${GPU_PROBE:-bench/gpu_probe.txt}"
fi

if want torch; then
	log "" "## PyTorch reference ($(stamp))" ""
	python3 bench/torch_ref.py >"$out/torch.json" 2>"$out/torch.err"
	log "- torch_ref.py: exit $? ($(python3 -c 'import json; d=json.load(open("'"$out"'/torch.json")); print(d["device"], "torch", d["torch"], "copy %.2f TB/s" % d["copy_tbs"])' 2>&1))"
fi

if want cutensor; then
	log "" "## cuTENSOR reference ($(stamp))" ""
	if [ -z "${CUTBENCH:-}" ]; then
		log "- skipped: no CUTBENCH (../shared/gpu/cutensor/README.md)"
	else
		python3 bench/cutensor_cases.py --cases "${GPU_CASES:-bench/gpu_cases.txt}" \
			>"$out/cutensor.in" 2>"$out/cutensor.err" &&
			"$CUTBENCH" <"$out/cutensor.in" >"$out/cutensor.txt" 2>>"$out/cutensor.err"
		log "- cutbench: exit $? ($(grep -c ' [0-9.]* [0-9.]* [0-9.]*$' "$out/cutensor.txt" 2>/dev/null || echo 0) cases timed)"
	fi
fi

if want tune; then
	log "" "## Tuning ($(stamp))" ""
	mkdir -p "$out/logic"
	for cfg in ${GPU_TUNE_CONFIGS:-share/tune/hopper-*.yaml}; do
		for dev in "${tuned[@]}"; do
			start=$(date +%s)
			tcx -q tune "$cfg" --device "$dev" -j "$jobs" --db "$out/results.db" \
				-o "$out/logic/${dev//:/_}" >"$out/tune-$(basename "$cfg" .yaml)-${dev//:/_}.log" 2>&1
			log "- $(basename "$cfg") on $dev: exit $? in $(($(date +%s) - start)) s"
		done
	done
fi

if want bench; then
	# GPU_LOGIC_FROM=share/logic: no tuning in this run; the committed logic
	# of this device (its name, as nvidia-smi gives it, starts the files')
	if [ -n "${GPU_LOGIC_FROM:-}" ]; then
		gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' _)
		for dev in "${tuned[@]}"; do
			mkdir -p "$out/logic/${dev//:/_}"
			# what the tune phase of this run wrote stays
			cp -n "$GPU_LOGIC_FROM/${gpu}_"*.yaml "$out/logic/${dev//:/_}/" 2>/dev/null
		done
	fi
	cut=()
	[ -s "$out/cutensor.txt" ] && cut=(--cutensor "$out/cutensor.txt")
	log "" "## tcx against PyTorch${cut:+ and cuTENSOR} ($(stamp))" ""
	python3 bench/gpu_report.py --cases "${GPU_CASES:-bench/gpu_cases.txt}" --torch "$out/torch.json" \
		--logic "$out/logic" --out "$out" --devices "${tuned[@]}" "${cut[@]}" | tee -a "$report"
fi
log "" "Finished $(stamp)."
# GPU_PACK=1: leave only the report and one tarball of everything in $OUT
# (the GPU machines return a handful of files)
if [ "${GPU_PACK:-0}" = 1 ]; then
	tar -C "$out" -czf "$cache/gpu-out.tar.gz" . &&
		find "$out" -mindepth 1 ! -name gpu-report.md -delete &&
		mv "$cache/gpu-out.tar.gz" "$out/"
fi

#!/bin/bash
# cpu.sh - tcx against OpenBLAS and NumPy on the CPU, in one run on one
# machine: fp32 GEMM, a batched GEMM C[ijk]=A[ilk]*B[jlk] and the 6-index
# contraction C[ijkl]=A[ijmnl]*B[mnkjl], each timed by
#   tcx bench on PoCL (the best of a few hand-picked parameter sets),
#   OpenBLAS sgemm (bench/blas_gemm.c: one call, or a loop of calls over
#     the batch indices, on the same column-major layouts),
#   numpy.einsum(..., optimize=True) (bench/numpy_einsum.py, which also says
#     whether einsum reached BLAS or ran its own loops),
# and prints GFLOP/s and the ratios tcx/OpenBLAS and tcx/NumPy.  All three
# use random inputs, warm-up, repeats to a minimum time and the median;
# every library uses all the cores (PoCL's threads, OpenBLAS's threads).
#
# usage: bench/cpu.sh [--quick] [--record]
#   --quick   one size per contraction, shorter timing (a smoke test)
#   --record  also write bench/results/<date>-cpu.md
# environment: TCX (a tcx binary; default: build one in $BUILD), BUILD
# (default build-bench/ in the repository), MIN_TIME (seconds per figure,
# default 1), POCL_CACHE_DIR (default $BUILD/pocl-cache).
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
quick=0 record=0
for arg in "$@"; do
	case $arg in
	--quick) quick=1 ;;
	--record) record=1 ;;
	-h | --help)
		sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "cpu.sh: unknown argument '$arg'" >&2
		exit 2
		;;
	esac
done
build=${BUILD:-$repo/build-bench}
min_time=${MIN_TIME:-1}
[ $quick = 1 ] && min_time=${MIN_TIME:-0.3}
mkdir -p "$build"
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$build/pocl-cache}
py=/usr/bin/python3
[ -x $py ] || py=python3

# ---- build what is needed ---------------------------------------------------
if [ -z "${TCX:-}" ]; then
	cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
	cmake --build "$build" --target tcx -j "$(nproc)" >/dev/null
	TCX=$build/cmd/tcx
fi
cc -O2 -o "$build/blas_gemm" "$repo/bench/blas_gemm.c" -lopenblas -lm
have_numpy=1
$py -c 'import numpy' 2>/dev/null || have_numpy=0

# ---- the cases ----------------------------------------------------------------
# name | tcx expression | tcx sizes (index-id order) | blas_gemm case and sizes |
# einsum subscripts over C-order arrays | A's shape | B's shape
cases=(
	"gemm|C[ij]=A[ik]*B[jk]|1024,1024,1024|gemm 1024 1024 1024|ki,kj->ji|1024,1024|1024,1024"
	"gemm|C[ij]=A[ik]*B[jk]|2048,2048,2048|gemm 2048 2048 2048|ki,kj->ji|2048,2048|2048,2048"
	"batched|C[ijk]=A[ilk]*B[jlk]|256,256,16,256|bgemm 256 256 16 256|kli,klj->kji|16,256,256|16,256,256"
	"batched|C[ijk]=A[ilk]*B[jlk]|1024,1024,8,64|bgemm 1024 1024 8 64|kli,klj->kji|8,64,1024|8,64,1024"
	"6-index|C[ijkl]=A[ijmnl]*B[mnkjl]|128,8,128,8,32,32|c5d 128 8 128 8 32 32|lnmji,ljknm->lkji|8,32,32,8,128|8,8,128,32,32"
	"6-index|C[ijkl]=A[ijmnl]*B[mnkjl]|256,4,256,4,16,16|c5d 256 4 256 4 16 16|lnmji,ljknm->lkji|4,16,16,4,256|4,4,256,16,16"
)
if [ $quick = 1 ]; then
	cases=("${cases[0]}" "${cases[2]}" "${cases[4]}")
fi
# hand-picked parameter sets for CPUs: the heuristic default (UseLDS=False,
# ThreadTile=[32,8], VectorWidth=16) first; WorkGroupMapping=32 walks the
# tiles in bands that keep B's panel in the last-level cache (3x on 2048^3)
params=(
	""
	"ThreadTile=[32,4]"
	"ThreadTile=[16,8]"
	"DepthU=8"
	"DepthU=32"
	"WorkGroupMapping=32"
)
[ $quick = 1 ] && params=("" "ThreadTile=[32,4]")

# field FILE NAME: a figure of a tcx bench JSON file's one size ("" if it failed)
field() {
	$py -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r[sys.argv[2]] if r["status"]=="ok" else "")' "$1" "$2"
}

device=$("$TCX" devices --format json | $py -c 'import json,sys; d=[x for x in json.load(sys.stdin)["devices"] if x["backend"]=="opencl"]; print(d[0]["name"] + " (" + d[0]["driver"].split(";")[0] + ")" if d else "")')
[ -n "$device" ] || { echo "cpu.sh: no OpenCL device (install pocl-opencl-icd)" >&2; exit 4; }
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
threads=$(nproc)
blas_lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
cmdline="bench/cpu.sh"
[ $quick = 1 ] && cmdline+=" --quick"
cmdline+=" --record"
date=$(date -u +%Y-%m-%d)

rows=()
printf '%-8s %-18s %9s %9s %9s %-9s %8s %8s  %s\n' case sizes tcx OpenBLAS NumPy einsum \
	tcx/BLAS tcx/NumPy "tcx parameters"
for c in "${cases[@]}"; do
	IFS='|' read -r name expr sizes blas subs sa sb <<<"$c"
	best="" best_p=""
	for p in "${params[@]}"; do
		out=$build/cpu-bench.json
		if ! "$TCX" bench "$expr" --exact "$sizes" ${p:+--params "$p"} --min-time "$min_time" \
			--format json -o "$out" 2>"$build/cpu-bench.err"; then
			continue
		fi
		g=$(field "$out" gflops)
		if [ -n "$g" ] && { [ -z "$best" ] || $py -c "import sys; sys.exit(0 if $g > $best else 1)"; }; then
			best=$g best_p=${p:-default}
		fi
	done
	read -r _ _ _ blas_g _ <<<"$("$build/blas_gemm" -t "$min_time" $blas)"
	np_g="" np_how="-"
	if [ $have_numpy = 1 ]; then
		read -r _ _ _ np_g np_how <<<"$($py "$repo/bench/numpy_einsum.py" --min-reps 3 \
			--min-time "$min_time" "$subs" "$sa" "$sb")"
	fi
	ratio() { [ -n "$1" ] && [ -n "$2" ] && $py -c "print('%.2f' % ($1 / $2))" || echo -; }
	r_blas=$(ratio "$best" "$blas_g")
	r_np=$(ratio "$best" "$np_g")
	printf '%-8s %-18s %9.1f %9.1f %9s %-9s %8s %8s  %s\n' "$name" "$sizes" "${best:-0}" \
		"$blas_g" "${np_g:--}" "$np_how" "$r_blas" "$r_np" "$best_p"
	best1=$([ -n "$best" ] && printf '%.1f' "$best" || echo failed)
	rows+=("| \`$expr\` | $sizes | $best1 | $blas_g | ${np_g:--} ($np_how) | $r_blas | $r_np | \`$best_p\` |")
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "device: $device; CPU: $cpu, $threads threads; BLAS: $blas_lib"
echo "load average before/after: $load0 / $load1; timing: median of >= ${min_time}s per figure"

if [ $record = 1 ]; then
	mkdir -p "$repo/bench/results"
	f=$repo/bench/results/$date-cpu.md
	{
		echo "# CPU benchmark, $date"
		echo
		echo "Command: \`$cmdline\` (MIN_TIME=$min_time)."
		echo
		echo "- device: $device"
		echo "- CPU: $cpu, $threads hardware threads; PoCL, OpenBLAS and NumPy use all of them"
		echo "- BLAS: $blas_lib (NumPy's too, through Debian's alternatives)"
		echo "- tcx $("$TCX" --version | head -1 | cut -d' ' -f2), $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?')"
		echo "- load average before / after: $load0 / $load1"
		if $py -c "import sys; sys.exit(0 if max(float(x) for x in '$load0 $load1'.split()) > $threads / 2 else 1)"; then
			echo "- the machine was shared with other work (load average above half the hardware"
			echo "  threads): absolute figures are depressed and noisy; each row's three figures were"
			echo "  taken back to back, so its ratios are the more meaningful numbers"
		fi
		echo
		echo "GFLOP/s, fp32, medians (tcx: the best of ${#params[@]} parameter sets, wall-clock timer,"
		echo "inputs rotated or the cache flushed as tcx bench --flush auto does; OpenBLAS: one"
		echo "sgemm, or a loop of sgemm over the batch indices; NumPy: einsum(optimize=True),"
		echo "'c_einsum' meaning it ran its own loops, not BLAS)."
		echo
		echo "| contraction | sizes | tcx | OpenBLAS | NumPy einsum | tcx/OpenBLAS | tcx/NumPy | tcx parameters |"
		echo "|---|---|---|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
	} >"$f"
	echo "recorded in $f"
fi

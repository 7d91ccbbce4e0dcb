#!/bin/bash
# cuda.sh - the generated library's CUDA path (-D<P>_WITH_CUDA=ON): it
# builds warning-free with the CUDA headers; with NVRTC, every kernel of the
# hand-made logic and of the tiny tune's compiles for sm_90 without a GPU
# (the client's --compile); on a machine with an NVIDIA GPU the client
# validates sizes through it, and without one it says there is no device
# (exit 4).  Skips (77) without the CUDA headers or NVRTC.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
data=$(cd "$(dirname "$0")/data" && pwd)
inc=
for d in /usr/local/cuda/include /opt/cuda/include /usr/include; do
	[ -f "$d/cuda.h" ] && [ -f "$d/nvrtc.h" ] && { inc=$d; break; }
done
[ -n "$inc" ] || { echo "skipped: no CUDA headers (cuda.h, nvrtc.h)"; exit 77; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${LD_LIBRARY_PATH:-}" ] ||
	{ echo "skipped: no libnvrtc on the loader's path"; exit 77; }
strict="-pedantic -Wall -Wextra -Werror"
logics=("$data/special.yaml" "$data/complex.yaml")
logic=$(fixture_logic)
[ -n "$logic" ] && logics+=("$logic")

run export-lib "${logics[@]}" -o lib --name tcxcu --selector logic
expect_rc 0 "export-lib"
checks=$((checks + 1))
grep -q 'tl_template_cuda' lib/src/tcxcu.c || fail "the CUDA kernels are embedded"
check "configure (CUDA)" "$cmake_cmd" -S lib -B build -DTCXCU_WITH_CUDA=ON \
	-DCMAKE_C_COMPILER="$cc_cmd" "-DCMAKE_C_FLAGS=$strict" &&
	check "build (CUDA)" "$cmake_cmd" --build build -j 2 || finish
checks=$((checks + 1))
nm -D build/libtcxcu.so | grep -q ' cuLaunchKernel' &&
	fail "the library links libcuda instead of loading it"
check "NVRTC compiles every kernel for sm_90" build/tcxcu-client --compile sm_90
expect=0
"$TCX" devices 2>/dev/null | grep -q '^cuda:' || expect=4
build/tcxcu-client --sizes 29,17,3,13 >out.txt 2>&1
rc=$?
checks=$((checks + 1))
[ "$rc" -eq "$expect" ] || fail "client on CUDA: exit $rc, want $expect: $(cat out.txt)"
[ "$expect" -eq 0 ] || grep -q 'no CUDA device' out.txt || fail "no device said: $(cat out.txt)"
done_testing

#!/bin/bash
# cuda.sh - the generated library's CUDA path (-D<P>_WITH_CUDA=ON): it
# builds warning-free with the CUDA headers; with NVRTC, every kernel of the
# hand-made logic and of the tiny tune's compiles for sm_90 without a GPU
# (the client's --compile); on a machine with an NVIDIA GPU the client
# validates sizes through it, and without one it says there is no device
# (exit 4).  Skips (77) without the CUDA headers or NVRTC.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
inc=
for d in /usr/local/cuda/include /opt/cuda/include /usr/include; do
	[ -f "$d/cuda.h" ] && [ -f "$d/nvrtc.h" ] && { inc=$d; break; }
done
[ -n "$inc" ] || { echo "skipped: no CUDA headers (cuda.h, nvrtc.h)"; exit 77; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${LD_LIBRARY_PATH:-}" ] ||
	{ echo "skipped: no libnvrtc on the loader's path"; exit 77; }
strict="-pedantic -Wall -Wextra -Werror"

export_logics tcxcu
checks=$((checks + 1))
grep -q 'tl_template_cuda' lib/src/tcxcu.c || fail "the CUDA kernels are embedded"
check "configure (CUDA)" "$cmake_cmd" -S lib -B build -DTCXCU_WITH_CUDA=ON \
	-DCMAKE_C_COMPILER="$cc_cmd" "-DCMAKE_C_FLAGS=$strict" &&
	check "build (CUDA)" "$cmake_cmd" --build build -j 2 || finish
checks=$((checks + 1))
nm -D build/libtcxcu.so | grep -q ' cuLaunchKernel' &&
	fail "the library links libcuda instead of loading it"
check "NVRTC compiles every kernel for sm_90" build/tcxcu-client --compile sm_90
client_on_gpu cuda CUDA build/tcxcu-client
done_testing

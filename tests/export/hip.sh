#!/bin/bash
# hip.sh - the generated library's HIP path (-D<P>_WITH_HIP=ON): it builds
# warning-free with Debian's HIP headers (libamdhip64-dev) and does not link
# the HIP runtime (it loads it); the header stays C89; both GPU backends at
# once is a clear CMake error; with hiprtc, every kernel of the hand-made
# logic and of the tiny tune's compiles for gfx90a without a GPU (the
# client's --compile); on a machine with an AMD GPU the client validates
# sizes through it, and without one the client says there is no device
# (exit 4) and the library returns EDEVICE with the reason.  Skips (77)
# without the HIP headers.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
inc=
for d in ${ROCM_PATH:+"$ROCM_PATH/include"} /opt/rocm/include /usr/include; do
	[ -f "$d/hip/hip_runtime_api.h" ] && [ -f "$d/hip/hiprtc.h" ] && { inc=$d; break; }
done
[ -n "$inc" ] ||
	{ echo "skipped: no HIP headers (hip/hip_runtime_api.h, hip/hiprtc.h: libamdhip64-dev)"; exit 77; }
strict="-pedantic -Wall -Wextra -Werror"

export_logics tcxhip
checks=$((checks + 1))
grep -q 'TL_WITH_CUDA || TL_WITH_HIP' lib/src/tcxhip.c && grep -q 'tl_template_cuda' lib/src/tcxhip.c ||
	fail "the CUDA-dialect kernels are embedded for HIP"
checks=$((checks + 1))
grep -q 'WITH_HIP=ON' lib/README.md || fail "the README names -DTCXHIP_WITH_HIP=ON"

# the header: C89; the sources: C99 (the build below) and C11 on HIP
printf '#include "tcxhip.h"\nint main(void) { return tcxhip_problem_count() - 1; }\n' >h.c
check "header as C89" "$cc_cmd" -std=c89 $strict -fsyntax-only -Ilib/include h.c
for f in src/tcxhip.c client/client.c; do
	check "$f as C11 on HIP" "$cc_cmd" -std=c11 $strict -fsyntax-only -D_POSIX_C_SOURCE=200809L \
		-DTL_WITH_HIP=1 -isystem "$inc" -Ilib/include -Ilib/src "lib/$f"
done

# one GPU backend at a time
check_fails "CUDA and HIP at once" "$cmake_cmd" -S lib -B both -DTCXHIP_WITH_CUDA=ON \
	-DTCXHIP_WITH_HIP=ON -DCMAKE_C_COMPILER="$cc_cmd"
checks=$((checks + 1))
printf '%s' "$out" | grep -q 'TCXHIP_WITH_CUDA and TCXHIP_WITH_HIP are both ON' ||
	fail "the CMake error says why: $out"

check "configure (HIP)" "$cmake_cmd" -S lib -B build -DTCXHIP_WITH_HIP=ON \
	-DCMAKE_C_COMPILER="$cc_cmd" "-DCMAKE_C_FLAGS=$strict" &&
	check "build (HIP)" "$cmake_cmd" --build build -j 2 || finish
for f in build/libtcxhip.so build/tcxhip-client; do
	checks=$((checks + 1))
	readelf -d "$f" | grep NEEDED | grep -Eq 'amdhip64|hiprtc' &&
		fail "$f links the HIP runtime instead of loading it: $(readelf -d "$f" | grep NEEDED)"
	checks=$((checks + 1))
	nm -D "$f" | grep -Eq ' U hip' && fail "$f needs HIP symbols at load time"
done

# hiprtc alone, no GPU needed (Debian's hiprtc lives in libamdhip64.so.5)
if ldconfig -p 2>/dev/null | grep -Eq 'libhiprtc\.so|libamdhip64\.so' ||
	[ -n "${LD_LIBRARY_PATH:-}" ]; then
	check "hiprtc compiles every kernel for gfx90a" build/tcxhip-client --compile gfx90a
else
	echo "# no hiprtc on the loader's path: --compile gfx90a not tried"
fi

# on a GPU the client validates; without one it says so (exit 4), and the
# library returns EDEVICE with the reason rather than crashing
client_on_gpu hip HIP build/tcxhip-client
cat >q.c <<'EOF'
#include <stdio.h>
#include "tcxhip.h"
int main(void)
{
	size_t sizes[4] = { 29, 17, 3, 13 };
	struct tcxhip_choice choice;
	char why[1024];
	enum tcxhip_status st = tcxhip_query(0, NULL, sizes, NULL, NULL, NULL, &choice);

	tcxhip_last_error(why, sizeof(why));
	printf("%d %s: %s\n", (int)st, tcxhip_status_str(st), why);
	return 0;
}
EOF
check "a C89 caller builds" "$cc_cmd" -std=c89 $strict -Ilib/include q.c -Lbuild -ltcxhip -o q &&
	check "a C89 caller runs" env LD_LIBRARY_PATH="$PWD/build" ./q
if [ "$expect" -eq 4 ]; then
	checks=$((checks + 1))
	printf '%s' "$out" | grep -Eq '^4 .*(no usable AMD GPU|not found)' ||
		fail "the library says why there is no device: $out"
fi
done_testing

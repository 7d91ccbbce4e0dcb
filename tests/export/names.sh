#!/bin/bash
# names.sh - the library's prefix (--name): prefixes whose names would
# collide with OpenCL's, CUDA's, HIP's, C's reserved names, the library's
# own files or CMake's targets are refused with exit 2 and the reason
# (tests/catalogue/cases has more); prefixes close to those, or close to
# the names of the library's own helpers, give a library that compiles on
# every backend's headers and a header an application includes beside
# them; and no helper of the templates outside the library's tl_/sel_
# namespaces is named like a public name (<word>_run, <word>_queue, ...)
# or a public macro (<WORD>_OK, the header's guard <WORD>_H, ...), which
# some prefix would then collide with.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
echo '#include <CL/cl.h>' | "$cc_cmd" -E - >/dev/null 2>&1 ||
	{ echo "skipped: no OpenCL headers (CL/cl.h)"; exit 77; }
strict="-pedantic -Wall -Wextra -Werror"
data=$here/data/special.yaml
cuda_inc=
for d in /usr/local/cuda/include /opt/cuda/include /usr/include; do
	[ -f "$d/cuda.h" ] && [ -f "$d/nvrtc.h" ] && { cuda_inc=$d; break; }
done
hip=false
echo '#include <hip/hiprtc.h>' | "$cc_cmd" -D__HIP_PLATFORM_AMD__=1 -E - >/dev/null 2>&1 && hip=true

# refused: exit 2, the name and why
refused() {
	run export-lib "$data" -o "r-$1" --name "$1"
	expect_rc 2 "--name $1"
	expect_err "bad --name '$1': .*$2" "--name $1: why"
	checks=$((checks + 1))
	[ ! -e "r-$1" ] || fail "--name $1 left r-$1"
}
refused cl "OpenCL's names"
refused cl_ops "OpenCL's names"
refused cuda "CUDA's names"
refused hip_x "HIP's names"
refused _x "reserved"
refused x__y "'__'"
refused stdio "would hide the system's <stdio.h>"
refused runtime "src/runtime.c of its own"
refused abi "src/abi.h and src/abi.c of its own"
refused elem "src/elem.h of its own"
refused all "CMake reserves"

# accepted: the library and its client compile on each backend's headers,
# and an application includes the header with them
accepted() {
	local p=$1 src
	run export-lib "$data" -o "a-$p" --name "$p" --selector logic
	expect_rc 0 "--name $p"
	[ "$rc" -eq 0 ] || return
	for src in "a-$p/src/$p.c" "a-$p/client/client.c"; do
		check "$p: $src on OpenCL" "$cc_cmd" -std=c99 $strict -fsyntax-only \
			-D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 \
			-I"a-$p/include" -I"a-$p/src" "$src"
		[ -z "$cuda_inc" ] ||
			check "$p: $src on CUDA" "$cc_cmd" -std=c99 $strict -fsyntax-only \
				-D_POSIX_C_SOURCE=200809L -DTL_WITH_CUDA=1 -isystem "$cuda_inc" \
				-I"a-$p/include" -I"a-$p/src" "$src"
		! $hip ||
			check "$p: $src on HIP" "$cc_cmd" -std=c99 $strict -fsyntax-only \
				-D_POSIX_C_SOURCE=200809L -DTL_WITH_HIP=1 -D__HIP_PLATFORM_AMD__=1 \
				-I"a-$p/include" -I"a-$p/src" "$src"
	done
	printf '#include "%s.h"\n#include <CL/cl.h>\n#include <stdio.h>\n#include <pthread.h>\nint main(void) { return 0; }\n' \
		"$p" >"app-$p.c"
	check "$p: an application with OpenCL" "$cc_cmd" -std=c99 $strict -fsyntax-only \
		-DCL_TARGET_OPENCL_VERSION=120 -I"a-$p/include" "app-$p.c"
}
# beside the refused ones, and named like the helpers of the templates
# (client.c's device helpers, select.h's guard once was TCX_SELECT_H)
for p in clx cux hipx dev tcx_select command; do
	accepted "$p"
done

# the templates' own names (and the kernels' ABI, which the library
# compiles too): outside tl_/sel_ (and the runtimes' own), none is
# <word>_<public suffix> or <WORD>_<public macro suffix>
sources=("$TCX_SOURCE_DIR"/runtime/*.c "$TCX_SOURCE_DIR"/runtime/*.h
	"$TCX_SOURCE_DIR"/kernels/common/abi.h)
checks=$((checks + 1))
suffixes='status|queue|mem|queue_s|mem_s|choice|problem_info|status_str|last_error|problem_count|problem|problem_find|run|query|compile|release'
clash=$(cat "${sources[@]}" |
	grep -v '^\s*goto\|^[a-z_]*:$' |
	grep -oE "\b[a-z][a-z0-9_]*_($suffixes)\b" |
	grep -vE '^(tl|sel|cl|cu|cuda|hip|hiprtc|nvrtc)_' | sort -u)
[ -z "$clash" ] || fail "template names a prefix would collide with: $clash"
checks=$((checks + 1))
macros='H|OK|API|BUILDING|EBUILD|EDEVICE|EINVAL|ELAUNCH|ENOMEM|ENOSOLUTION|EUNSUPPORTED|STATUS_COUNT|TCX_VERSION|WITH_CUDA|WITH_HIP'
clash=$(cat "${sources[@]}" |
	grep -oE "\b[A-Z][A-Z0-9_]*_($macros)\b" |
	grep -vE '^(TL|SEL|CL|CU|CUDA|HIP|HIPRTC|NVRTC)_' | sort -u)
[ -z "$clash" ] || fail "template macros a prefix would collide with: $clash"
finish

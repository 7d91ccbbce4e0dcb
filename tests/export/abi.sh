#!/bin/bash
# abi.sh - the kernels' ABI is one text: struct tcx_args and struct tcx_tma
# are defined once in the source tree (kernels/common/abi.h) and no other
# struct restates their fields; the library export-lib writes compiles the
# same text and the same launch code as tcx (src/abi.h and src/abi.c are
# kernels/common/abi.h and runtime/abi.c as they are), and its kernels
# hold that text too (its embedded templates, OpenCL and CUDA).  tcx's
# own kernel sources are checked by test_gen (plan_templates).  Needs no
# device.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
src=$TCX_SOURCE_DIR
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
rc=0 out= err=

# once REGEX WHAT: of the tree's C, OpenCL and CUDA sources, abi.h alone
# has a line matching REGEX
once() {
	local files
	checks=$((checks + 1))
	files=$(cd "$src" && grep -rlE "$1" --include='*.[ch]' --include='*.cl' --include='*.cuh' \
		--include='*.cu' --include='*.in' kernels lib runtime cmd tools include tests | sort)
	[ "$files" = kernels/common/abi.h ] || fail "$2 is declared in: $(echo $files)"
}
once '^\s*struct tcx_args\s*\{' "struct tcx_args"
once '^\s*struct tcx_tma\s*\{' "struct tcx_tma"
# their fields, in a struct of any name
once '^\s*[A-Za-z0-9_]+\s+ws_stride\s*;' "a field ws_stride"
once '^\s*[A-Za-z0-9_]+\s+sq\[[A-Za-z0-9_ +]+\]\s*;' "a field sq[]"
once '^\s*[A-Za-z0-9_]+\s+use\s*;' "a field use"

# the library: the same header and launch code, and kernels made with it
run export-lib "$here/data/special.yaml" -o lib --name tcxl --selector logic
expect_rc 0 "export-lib"
check "src/abi.h is kernels/common/abi.h" cmp lib/src/abi.h "$src/kernels/common/abi.h"
check "src/abi.c is runtime/abi.c" cmp lib/src/abi.c "$src/runtime/abi.c"
check "the embedded templates hold abi.h" "$py" - lib/src/tcxl.c \
	"$src/kernels/common/abi.h" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
abi = open(sys.argv[2], "rb").read()
for name in ("tl_template_opencl", "tl_template_cuda"):
    m = re.search(r"%s\[\d+\] = \{([^}]*)\}" % name, text)
    if not m:
        sys.exit("no %s in the library" % name)
    data = bytes(int(v) for v in m.group(1).replace("\n", "").split(",") if v.strip())
    if abi not in data:
        sys.exit("%s lacks kernels/common/abi.h" % name)
PY
finish

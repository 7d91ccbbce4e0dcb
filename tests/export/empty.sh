#!/bin/bash
# empty.sh - empty problems in an exported library's run time: builds
# empty.c, a unit test that includes the library's generated source (from
# data/special.yaml and data/complex.yaml), with UBSan aborting on any
# undefined behaviour, and runs it on the first OpenCL device: a size of 0
# launches no kernel and leaves C = beta * C (a bound index) or nothing to
# do (a free index), without buffers for what has no elements; the host
# scaling and its fp16 and bf16 rounding are checked for every type.  No
# kernel is compiled.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
echo '#include <CL/cl.h>' | "$cc_cmd" -E - >/dev/null 2>&1 ||
	{ echo "skipped: no OpenCL headers (CL/cl.h)"; exit 77; }
skip_without_opencl

run export-lib "$here/data/special.yaml" "$here/data/complex.yaml" -o lib --name tcxl \
	--selector logic
expect_rc 0 "export-lib"
check "build empty.c with UBSan" "$cc_cmd" -std=c99 -Wall -Wextra -Werror -g \
	-fsanitize=undefined -fno-sanitize-recover=all -Ilib/src -Ilib/include \
	-o empty "$here/empty.c" -lOpenCL -lpthread -lm || finish
check "empty" ./empty
printf '%s\n' "$out" | tail -1
finish

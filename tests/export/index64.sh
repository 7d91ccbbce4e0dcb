#!/bin/bash
# index64.sh - the index width of an exported library's run time: builds
# index64.c, a unit test that includes the library's generated source
# (from data/special.yaml), with UBSan aborting on any signed overflow, and
# runs it: sizes and strides past 2^31 and 2^32 elements reach the launch
# exactly, and what does not fit in 64 bits is refused with EINVAL, never
# wrapped.  Needs no device: nothing is allocated or launched.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
echo '#include <CL/cl.h>' | "$cc_cmd" -E - >/dev/null 2>&1 ||
	{ echo "skipped: no OpenCL headers (CL/cl.h)"; exit 77; }

run export-lib "$here/data/special.yaml" -o lib --name tcxl --selector logic
expect_rc 0 "export-lib"
check "build index64.c with UBSan" "$cc_cmd" -std=c99 -Wall -Wextra -Werror -g \
	-fsanitize=undefined -fno-sanitize-recover=all -Ilib/src -Ilib/include \
	-o index64 "$here/index64.c" -lOpenCL -lpthread -lm || finish
check "index64" ./index64
printf '%s\n' "$out" | tail -1
finish

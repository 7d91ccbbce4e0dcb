#!/bin/bash
# app.sh - the installed library as an application uses it, with nothing
# set in the environment but PKG_CONFIG_PATH (the prefix is not a system
# one): the hand-made logic exported, built and installed into a prefix;
# the installed client runs without LD_LIBRARY_PATH (its run path finds
# the library); a program that calls OpenCL and the library, compiled and
# linked with only `pkg-config --cflags --libs` (OpenCL comes through the
# .pc file's Requires), runs without LD_LIBRARY_PATH (the .pc file's run
# path).  Installed with --prefix, the .pc file names that prefix.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
skip_without_opencl
command -v pkg-config >/dev/null || { echo "skipped: no pkg-config"; exit 77; }
unset LD_LIBRARY_PATH PKG_CONFIG_PATH
prefix=$scratch/prefix

run export-lib "$here/data/special.yaml" -o lib --name tcxapp --selector logic
expect_rc 0 "export-lib"
build_tree lib lib/build "$prefix" || finish

# installed elsewhere with cmake --install --prefix: the .pc file says where
check "install --prefix" "$cmake_cmd" --install lib/build --prefix "$scratch/other"
checks=$((checks + 1))
grep -qx "prefix=$scratch/other" "$scratch"/other/lib*/pkgconfig/tcxapp.pc ||
	fail "the .pc file names the prefix installed to: $(grep prefix= "$scratch"/other/lib*/pkgconfig/tcxapp.pc)"

# the installed client
check "the installed client" "$prefix/bin/tcxapp-client" --sizes 29,17,3,13
checks=$((checks + 1))
printf '%s' "$out" | grep -q '^ok:' || fail "the installed client validates: $out"

# pkg-config: OpenCL's flags come with the library's, and its run path
pcdir=$(dirname "$(ls "$prefix"/lib*/pkgconfig/tcxapp.pc | head -1)")
check "pkg-config" env PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tcxapp
flags=$out
checks=$((checks + 2))
printf '%s' "$flags" | grep -q -- '-lOpenCL' || fail "pkg-config names OpenCL: $flags"
printf '%s' "$flags" | grep -q -- "-Wl,-rpath,$prefix/lib" || fail "pkg-config gives the run path: $flags"
check "pkg-config --static" env PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs tcxapp
checks=$((checks + 1))
printf '%s' "$out" | grep -q -- '-lpthread' || fail "pkg-config --static adds the private libraries: $out"

cat >pc.c <<'C'
#define CL_TARGET_OPENCL_VERSION 120
#include <stdio.h>
#include <CL/cl.h>
#include <tcxapp.h>
int main(void)
{
	cl_uint n = 0;
	clGetPlatformIDs(0, NULL, &n);
	printf("platforms %u, problem types %d\n", (unsigned)n, tcxapp_problem_count());
	return n == 0 || tcxapp_problem_count() != 1;
}
C
# shellcheck disable=SC2086 # the flags are words
check "an application via pkg-config: build" "$cc_cmd" -std=c99 -pedantic -Wall -Wextra -Werror \
	pc.c -o pc $flags &&
	check "an application via pkg-config: run" ./pc
finish

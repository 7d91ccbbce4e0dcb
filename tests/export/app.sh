#!/bin/bash
# app.sh - the installed library as an application uses it, with nothing
# set in the environment but PKG_CONFIG_PATH (the prefix is not a system
# one): the hand-made logic exported, built and installed into a prefix;
# the installed client runs without LD_LIBRARY_PATH (its run path finds
# the library); the example application (share/examples/app/, the README's
# worked example: a GEMM exported as mylib) builds with CMake's package and
# with only `pkg-config --cflags --libs` (OpenCL comes through the .pc
# file's Requires), and runs without LD_LIBRARY_PATH (the .pc file's run
# path), its elements right.  Installed with --prefix, the .pc file names
# that prefix.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
skip_without_opencl
command -v pkg-config >/dev/null || { echo "skipped: no pkg-config"; exit 77; }
unset LD_LIBRARY_PATH PKG_CONFIG_PATH
prefix=$scratch/prefix

run export-lib "$here/data/gemm.yaml" -o lib --name mylib
expect_rc 0 "export-lib"
build_tree lib lib/build "$prefix" || finish

# installed elsewhere with cmake --install --prefix: the .pc file says where
check "install --prefix" "$cmake_cmd" --install lib/build --prefix "$scratch/other"
checks=$((checks + 1))
grep -qx "prefix=$scratch/other" "$scratch"/other/lib*/pkgconfig/mylib.pc ||
	fail "the .pc file names the prefix installed to: $(grep prefix= "$scratch"/other/lib*/pkgconfig/mylib.pc)"

# the installed client
check "the installed client" "$prefix/bin/mylib-client" --sizes 29,17,13
checks=$((checks + 1))
printf '%s' "$out" | grep -q '^ok:' || fail "the installed client validates: $out"

# pkg-config: OpenCL's flags come with the library's, and its run path
pcdir=$(dirname "$(ls "$prefix"/lib*/pkgconfig/mylib.pc | head -1)")
check "pkg-config" env PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs mylib
flags=$out
checks=$((checks + 2))
printf '%s' "$flags" | grep -q -- '-lOpenCL' || fail "pkg-config names OpenCL: $flags"
printf '%s' "$flags" | grep -q -- "-Wl,-rpath,$prefix/lib" || fail "pkg-config gives the run path: $flags"
check "pkg-config --static" env PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs mylib
checks=$((checks + 1))
printf '%s' "$out" | grep -q -- '-lpthread' || fail "pkg-config --static adds the private libraries: $out"

# the example application, with CMake's package and with pkg-config
cp -r "$TCX_SOURCE_DIR/share/examples/app" app
check "the example app via CMake: configure" "$cmake_cmd" -S app -B app/build \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc_cmd" \
	"-DCMAKE_C_FLAGS=-pedantic -Wall -Wextra -Werror" &&
	check "the example app via CMake: build" "$cmake_cmd" --build app/build &&
	check "the example app via CMake: run" app/build/app
checks=$((checks + 1))
[ "$(printf '%s\n' "$out" | grep -c ': ok$')" -eq 2 ] || fail "the app checks two elements: $out"
# shellcheck disable=SC2086 # the flags are words
check "the example app via pkg-config: build" "$cc_cmd" -std=c99 -pedantic -Wall -Wextra \
	-Werror app/app.c -o app-pc $flags &&
	check "the example app via pkg-config: run" ./app-pc 31 17 5
checks=$((checks + 1))
printf '%s\n' "$out" | grep -q '^C\[0,0\] = .*: ok$' || fail "the app's C[0,0]: $out"
check_fails "the example app: bad usage" ./app-pc 1 2
finish

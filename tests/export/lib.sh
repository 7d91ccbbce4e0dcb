#!/bin/bash
# lib.sh - tcx export-lib end to end: the tiny tune's logic (fixture
# export_logic) becomes a library whose header compiles as C89 and whose
# sources build as C99, C11 and C17 with -pedantic -Wall -Wextra -Werror
# (gcc, and clang when present); the library installs with a CMake package
# and a pkg-config file; a separate application finds it both ways and
# validates tuned, in-between, outside, 1 and prime sizes; the library's
# client validates more; its choices are tcx logic eval's; several logic
# files for one problem type are chosen among by device name, architecture,
# vendor and default; bad input fails with a clear message.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
skip_without_opencl
here=$(cd "$(dirname "$0")" && pwd)
logic=$(fixture_logic)
[ -n "$logic" ] || { echo "FAIL: no fixture logic (export.tune)"; exit 1; }
strict="-pedantic -Wall -Wextra -Werror"

# ---- the library -----------------------------------------------------------------
run export-lib "$logic" -o lib --name tcxexp
expect_rc 0 "export-lib"
expect_err 'wrote lib: the library tcxexp from 1 logic file' "summary"
for f in include/tcxexp.h src/tcxexp.c src/runtime.c src/select.c src/abi.h src/abi.c src/config.h \
	CMakeLists.txt cmake/tcxexpConfig.cmake.in tcxexp.pc.in client/client.c README.md; do
	checks=$((checks + 1))
	[ -s "lib/$f" ] || fail "lib/$f missing"
done
checks=$((checks + 1))
grep -q 'tcxexp_Cijk_Ailk_Bjlk_S(tcxexp_queue queue, const size_t sizes\[4\]' \
	lib/include/tcxexp.h || fail "the typed entry point is declared"

# the header: C89 and C++; the sources: C99, C11, C17; gcc and clang
printf '#include "tcxexp.h"\nint main(void) { return tcxexp_problem_count() - 1; }\n' >h.c
check "header as C89" "$cc_cmd" -std=c89 $strict -fsyntax-only -Ilib/include h.c
if command -v c++ >/dev/null; then
	cp h.c h.cpp
	check "header as C++" c++ -std=c++11 $strict -fsyntax-only -Ilib/include h.cpp
fi
for std in c99 c11 c17; do
	for c in "$cc_cmd" clang; do
		command -v "$c" >/dev/null || continue
		check "library as $std ($c)" "$c" -std=$std $strict -fsyntax-only \
			-D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 \
			-Ilib/include -Ilib/src lib/src/tcxexp.c
		check "client as $std ($c)" "$c" -std=$std $strict -fsyntax-only \
			-D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 \
			-Ilib/include -Ilib/src lib/client/client.c
	done
done

# configure, build (warnings are errors) and install
build_tree lib build "$scratch/prefix" "$strict" || finish
lib_so=$(ls "$scratch"/prefix/lib*/libtcxexp.so 2>/dev/null | head -1)
checks=$((checks + 4))
[ -n "$lib_so" ] || fail "libtcxexp.so installed"
[ -f "$scratch/prefix/include/tcxexp.h" ] || fail "tcxexp.h installed"
ls "$scratch"/prefix/lib*/cmake/tcxexp/tcxexpConfig.cmake >/dev/null 2>&1 ||
	fail "the CMake package installed"
ls "$scratch"/prefix/lib*/pkgconfig/tcxexp.pc >/dev/null 2>&1 || fail "tcxexp.pc installed"

# ---- a separate application: CMake's find_package, then pkg-config ----------------------
check "consumer: configure" "$cmake_cmd" -S "$here/consumer" -B consumer \
	-DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_C_COMPILER="$cc_cmd" \
	"-DCMAKE_C_FLAGS=$strict" &&
	check "consumer: build" "$cmake_cmd" --build consumer &&
	check "consumer: run" ./consumer/consumer
printf '%s\n' "$out" | grep '^ok' | head -20
checks=$((checks + 1))
[ "$(printf '%s\n' "$out" | grep -c '^ok')" -eq 10 ] || fail "10 sizes validated by the consumer"

pcdir=$(dirname "$(ls "$scratch"/prefix/lib*/pkgconfig/tcxexp.pc | head -1)")
check "pkg-config" env PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs tcxexp
flags=$out
checks=$((checks + 1))
printf '%s' "$flags" | grep -q -- '-ltcxexp' || fail "pkg-config names -ltcxexp: $flags"
check "consumer via pkg-config: build" "$cc_cmd" -std=c99 $strict \
	-DCL_TARGET_OPENCL_VERSION=120 "$here/consumer/main.c" -o consumer-pc $flags -lm &&
	check "consumer via pkg-config: run" ./consumer-pc

# ---- the client ---------------------------------------------------------------------
client=build/tcxexp-client
check "client --list" "$client" --list
checks=$((checks + 1))
printf '%s' "$out" | grep -q 'Cijk_Ailk_Bjlk_S' || fail "the client lists the problem type"
for s in 16,16,2,8 48,16,2,31 7,5,3,11 40,16,2,17 64,32,3,40 1,1,1,1 1,7,1,5 17,19,2,23 \
	3,61,2,5; do
	check "client $s" "$client" --sizes "$s" --seed 3
	check "client $s, padded strides and beta" "$client" --sizes "$s" --pad 2 --beta 0.5
done
check_fails "client without sizes" "$client"
check_fails "client with 3 sizes" "$client" --sizes 4,4,4

# ---- the library chooses as tcx logic eval says ---------------------------------------------
sizes="16,16,2,8;7,5,3,11;40,16,2,17;64,32,3,40;1,1,1,1;17,19,2,23;3,61,2,5;100,9,7,300"
run logic eval "$logic" --holdout "$sizes" --choices --format json
expect_rc 0 "eval --choices"
printf '%s' "$out" >choices.json
# (eval sorts the sizes: take them in its order)
want=$(python3 -c '
import json
d = json.load(open("choices.json"))
print(" ".join(str(r["choices"][d["default"]]["solution"]) for r in d["sizes"]))')
order=$(python3 -c '
import json
d = json.load(open("choices.json"))
print(" ".join(",".join(map(str, r["sizes"])) for r in d["sizes"]))')
got=""
for s in $order; do
	"$client" --sizes "$s" --query >q.txt 2>&1
	got="$got $(sed -n 's/^solution=\([-0-9]*\).*/\1/p' q.txt)"
done
checks=$((checks + 1))
[ "${got# }" = "$want" ] || fail "the library's choices '${got# }' are tcx's '$want'"
checks=$((checks + 1))
grep -q "by name" q.txt || fail "the device matched by name: $(cat q.txt)"

# ---- several logic files for one type: name, then architecture, vendor, default ---------------
field() { sed -n "/^device:/,/^[a-z_]*:/ s/^  $1: //p" "$logic"; }
dname=$(field name)
dvendor=$(field vendor)
darch=$(field arch)
checks=$((checks + 1))
[ -n "$dname" ] && [ -n "$dvendor" ] && [ -n "$darch" ] ||
	fail "the fixture logic names its device, vendor and arch"
# variant FILE NAME VENDOR ARCH DEVICE_NAMES: the fixture logic as another device's
variant() {
	sed -e "/^device:/,/^[a-z_]*:/ {
		s/^  name: .*/  name: $2/
		s/^  vendor: .*/  vendor: $3/
		s/^  arch: .*/  arch: $4/
	}" -e "s/^device_names: .*/device_names: $5/" "$logic" >"$1"
}
variant other.yaml "Other GPU" "Other Inc" "gfx000" "[Other GPU]"
variant arch.yaml "Same Arch" "Other Inc" "$darch" "[Same Arch]"
variant vendor.yaml "Same Vendor" "$dvendor" "gfx001" "[Same Vendor]"
variant default.yaml "Anything" "Nobody" "none" "[default]"
variant byname.yaml "Renamed" "Nobody" "none" "[\"$dname\"]"
# match CASE EXPECT-FILE EXPECT-WHY FILES...
match() {
	local name=$1 want=$2 why=$3
	shift 3
	run export-lib "$@" -o "m-$name" --name tcxexp
	expect_rc 0 "export-lib ($name)"
	check "build ($name)" "$cc_cmd" -std=c99 $strict -D_POSIX_C_SOURCE=200809L \
		-DCL_TARGET_OPENCL_VERSION=120 -I"m-$name/include" -I"m-$name/src" \
		"m-$name/src/tcxexp.c" "m-$name/client/client.c" -o "m-$name/client-bin" \
		-lOpenCL -lpthread -lm || return
	check "query ($name)" "m-$name/client-bin" --sizes 16,16,2,8 --query || return
	checks=$((checks + 2))
	printf '%s' "$out" | grep -q "^logic: $want\$" || fail "$name: not $want: $out"
	printf '%s' "$out" | grep -q "$why" || fail "$name: not '$why': $out"
}
match name "$(basename "$logic")" "by name" other.yaml arch.yaml "$logic" default.yaml
match devicenames byname.yaml "by DeviceNames" other.yaml byname.yaml default.yaml
match arch arch.yaml "architecture '$darch'" other.yaml vendor.yaml arch.yaml default.yaml
match vendor vendor.yaml "vendor '$dvendor'" other.yaml vendor.yaml default.yaml
match default default.yaml "the default logic" default.yaml other.yaml
match last other.yaml "no logic for" other.yaml

# ---- bad input --------------------------------------------------------------------------
run export-lib "$logic" -o bad --name 9lives
expect_rc 2 "a name that is no identifier"
expect_err "bad --name '9lives'" "named"
run export-lib "$logic"
expect_rc 2 "no -o"
run export-lib -o bad
expect_rc 2 "no logic file"
run export-lib "$TCX_TEST_DATA/tune/tiny.yaml" -o bad
expect_rc 2 "not a logic file"
run export-lib "$logic" -o bad --selector best
expect_rc 2 "an unknown selector"
expect_err "unknown selector 'best'" "named"
sed 's/ConstantSizes: false/ConstantSizes: true/' "$logic" >const.yaml
run export-lib const.yaml -o bad
expect_rc 2 "ConstantSizes solutions"
expect_err "ConstantSizes" "named"
done_testing

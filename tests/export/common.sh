# common.sh - helpers for the export tests (sourced after tests/cli/lib.sh):
# the fixture's logic, an OpenCL device or skip, and building a generated
# library tree with CMake.
: "${TCX_EXPORT_FIXTURE:?set TCX_EXPORT_FIXTURE to the fixture directory}"
cmake_cmd=${CMAKE_COMMAND:-cmake}
cc_cmd=${CMAKE_C_COMPILER:-cc}
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$scratch/pocl}
# the generated code's warnings must stay its own: no sanitizer options of
# the tcx build leak into the consumers' builds
unset CFLAGS LDFLAGS

# skip_without_opencl: exit 77 unless tcx sees an OpenCL device
skip_without_opencl() {
	"$TCX" devices 2>/dev/null | grep -q '^opencl:' ||
		{ echo "skipped: no OpenCL device"; exit 77; }
}

# fixture_logic: the tuned logic file of the fixture (export.tune)
fixture_logic() {
	ls "$TCX_EXPORT_FIXTURE"/logic/*_Cijk_Ailk_Bjlk_S.yaml 2>/dev/null | head -1
}

# export_logics NAME: exports the hand-made logics (data/) and the
# fixture's, when there is one, as the library NAME in lib/
export_logics() {
	local data logic
	local -a logics
	data=$(cd "$(dirname "${BASH_SOURCE[0]}")/data" && pwd)
	logics=("$data/special.yaml" "$data/complex.yaml")
	logic=$(fixture_logic)
	[ -n "$logic" ] && logics+=("$logic")
	run export-lib "${logics[@]}" -o lib --name "$1" --selector logic
	expect_rc 0 "export-lib"
}

# client_on_gpu BACKEND NAME CLIENT: where tcx sees a BACKEND device the
# client validates sizes through the library; where not it exits 4 and
# says "no NAME device".  Sets $expect (0 or 4).
client_on_gpu() {
	expect=0
	"$TCX" devices 2>/dev/null | grep -q "^$1:" || expect=4
	"$3" --sizes 29,17,3,13 >out.txt 2>&1
	rc=$?
	checks=$((checks + 1))
	[ "$rc" -eq "$expect" ] || fail "client on $2: exit $rc, want $expect: $(cat out.txt)"
	checks=$((checks + 1))
	[ "$expect" -eq 0 ] || grep -q "no $2 device" out.txt ||
		fail "no device said: $(cat out.txt)"
}

# check WHAT COMMAND...: the command must succeed; its output in $out
check() {
	local what=$1
	shift
	checks=$((checks + 1))
	if ! out=$("$@" 2>&1); then
		failures=$((failures + 1))
		echo "FAIL: $what: '$*' failed:"
		printf '%s\n' "$out" | tail -40
		return 1
	fi
	return 0
}

# check_fails WHAT COMMAND...: the command must fail; its output in $out
check_fails() {
	local what=$1
	shift
	checks=$((checks + 1))
	if out=$("$@" 2>&1); then
		failures=$((failures + 1))
		echo "FAIL: $what: '$*' succeeded:"
		printf '%s\n' "$out" | tail -20
		return 1
	fi
	return 0
}

# build_tree SRC BUILD PREFIX CFLAGS...: configure, build and install a
# generated library (warnings are errors)
build_tree() {
	local src=$1 build=$2 prefix=$3
	shift 3
	check "configure $src" "$cmake_cmd" -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
		-DCMAKE_C_COMPILER="$cc_cmd" -DCMAKE_INSTALL_PREFIX="$prefix" \
		"-DCMAKE_C_FLAGS=$*" || return 1
	check "build $src" "$cmake_cmd" --build "$build" -j 2 || return 1
	check "install $src" "$cmake_cmd" --install "$build" || return 1
}

# finish: the summary, and the script's end (cli/lib.sh's done_testing
# returns; this exits)
finish() {
	done_testing
	exit
}

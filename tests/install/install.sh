#!/bin/bash
# install.sh - `cmake --install` of this build into a scratch prefix gives a
# working tcx: the installed program runs, its man pages render with `man`,
# its bash completion loads from bash-completion's directory, and a separate
# CMake project finds the library with find_package(tcx) and links tcx::tcx,
# as does a plain compile with `pkg-config --cflags --libs tcx`.
# Needs TCX_SOURCE_DIR, TCX_BUILD_DIR and CMAKE_COMMAND; TCX_SANITIZE (the
# build's sanitizers) is given to the consumer's compiler too.
set -u
: "${TCX_SOURCE_DIR:?}" "${TCX_BUILD_DIR:?}"
cmake=${CMAKE_COMMAND:-cmake}
cc=${CMAKE_C_COMPILER:-cc}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tcx-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
failures=0
checks=0

fail() {
	failures=$((failures + 1))
	echo "FAIL: $*"
}

# check WHAT COMMAND...: the command must succeed (its output is kept in $out)
check() {
	local what=$1
	shift
	checks=$((checks + 1))
	if ! out=$("$@" 2>&1); then
		fail "$what: '$*' failed:"
		printf '%s\n' "$out" | head -30
		return 1
	fi
	return 0
}

check "install" "$cmake" --install "$TCX_BUILD_DIR" --prefix "$prefix" || {
	echo "$checks checks, $failures failed"
	exit 1
}

# ---- what is installed where -------------------------------------------------

# lib, lib64 or lib/<multiarch>, as GNUInstallDirs chose
libdir=$(cd "$prefix" && find lib* -name libtcx.so -printf '%h\n' 2>/dev/null | head -1)
[ -n "$libdir" ] || { fail "no libtcx.so under $prefix/lib*"; libdir=lib; }
for f in bin/tcx include/tcx.h "$libdir/libtcx.so" "$libdir/libtcx.so.0" \
	"$libdir/cmake/tcx/tcxConfig.cmake" "$libdir/cmake/tcx/tcxConfigVersion.cmake" \
	"$libdir/cmake/tcx/tcxTargets.cmake" "$libdir/pkgconfig/tcx.pc" \
	share/bash-completion/completions/tcx share/zsh/vendor-completions/_tcx \
	share/fish/vendor_completions.d/tcx.fish share/tcx/examples/sgemm.yaml \
	share/tcx/schemas/parse.schema.json share/tcx/logic/README.md share/tcx/tune/README.md \
	share/tcx/models/README.md; do
	checks=$((checks + 1))
	[ -e "$prefix/$f" ] || fail "not installed: $f"
done
checks=$((checks + 1))
soname=$(readelf -d "$prefix/$libdir/libtcx.so" 2>/dev/null |
	sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[ "$soname" = libtcx.so.0 ] || fail "libtcx.so has SONAME '$soname', not libtcx.so.0"
if command -v scdoc >/dev/null; then
	for scd in "$TCX_SOURCE_DIR"/man/*.scd; do
		page=$(basename "$scd" .scd)
		checks=$((checks + 1))
		[ -s "$prefix/share/man/man${page##*.}/$page" ] || fail "man page not installed: $page"
	done
fi

# ---- the installed program ---------------------------------------------------

tcx=$prefix/bin/tcx
version=$(sed -n 's/^#define TCX_VERSION_STRING "\(.*\)"/\1/p' "$TCX_SOURCE_DIR/include/tcx.h")
if check "tcx --version" "$tcx" --version; then
	checks=$((checks + 1))
	printf '%s\n' "$out" | head -1 | grep -qx "tcx $version" ||
		fail "tcx --version says '$(printf '%s' "$out" | head -1)', want 'tcx $version'"
	checks=$((checks + 1))
	printf '%s\n' "$out" | grep -q '^libraries: libyaml .*, jansson .*, SQLite ' ||
		fail "tcx --version names no library versions: $out"
fi
if check "tcx parse" "$tcx" parse 'C[ijk]=A[ilk]*B[jlk]' --format json; then
	checks=$((checks + 1))
	printf '%s\n' "$out" | grep -q '"problem_type": "Cijk_Ailk_Bjlk_S"' ||
		fail "the installed tcx parse says: $out"
fi
check "tcx validate on the host reference" "$tcx" validate 'ik,kj->ij' --sizes i=5,j=7,k=3 \
	--device host

# ---- man, as users run it ----------------------------------------------------

if command -v man >/dev/null && command -v scdoc >/dev/null; then
	if check "man -l tcx.1" env MANWIDTH=80 man -l "$prefix/share/man/man1/tcx.1"; then
		checks=$((checks + 1))
		printf '%s\n' "$out" | grep -q '^EXIT STATUS' || fail "man -l tcx.1 has no EXIT STATUS"
	fi
	# `man tcx` and `man 5 tcx-config` find the pages through MANPATH
	check "man tcx" env MANPATH="$prefix/share/man" MANWIDTH=80 man tcx
	check "man 5 tcx-config" env MANPATH="$prefix/share/man" MANWIDTH=80 man 5 tcx-config
	check "man tcx-validate" env MANPATH="$prefix/share/man" MANWIDTH=80 man tcx-validate
fi

# ---- bash completion from the installed file ---------------------------------

checks=$((checks + 1))
got=$(PATH="$prefix/bin:$PATH" bash -c '
	. "$1"
	COMP_LINE="tcx val"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(tcx val); COMP_CWORD=1
	_tcx tcx val tcx
	printf "%s\n" "${COMPREPLY[@]}"' bash "$prefix/share/bash-completion/completions/tcx")
[ "$got" = validate ] || fail "installed bash completion of 'tcx val' gives '$got'"

# ---- a consumer project: find_package(tcx) and tcx::tcx ----------------------

mkdir -p "$scratch/app"
cat >"$scratch/app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(tcx_consumer C)
find_package(tcx 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE tcx::tcx)
EOF
cat >"$scratch/app/app.c" <<'EOF'
/* A user of libtcx: the version, a parse, an error, and the host reference
 * against a hand-written GEMM on random data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tcx.h>

int main(void)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;
	char name[64];
	int64_t sizes[3] = { 5, 4, 3 }; /* i, j, k */
	float a[15], b[12], cc[20];
	double alpha = 1.5, worst = 0;
	unsigned seed = 12345;

	if (strcmp(tcx_version(), TCX_VERSION_STRING) != 0) {
		fprintf(stderr, "library %s, header %s\n", tcx_version(), TCX_VERSION_STRING);
		return 1;
	}
	if (tcx_contraction_parse("C[ij]=A[ik]*B[kj", TCX_DTYPE_S, &c, &err) != TCX_EPARSE ||
	    c != NULL || err.col == 0) {
		fprintf(stderr, "a bad expression was not refused\n");
		return 1;
	}
	if (tcx_contraction_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, &c, &err) != TCX_OK) {
		fprintf(stderr, "parse: %s\n", err.msg);
		return 1;
	}
	tcx_contraction_name(c, name, sizeof(name));
	if (strcmp(name, "Cij_Aik_Bkj_S") != 0 || tcx_contraction_num_indices(c) != 3) {
		fprintf(stderr, "name %s\n", name);
		return 1;
	}
	for (int k = 0; k < 15; k++)
		a[k] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512 - 1;
	for (int k = 0; k < 12; k++)
		b[k] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512 - 1;
	if (tcx_contraction_reference(c, sizes, a, b, cc, &alpha, NULL, &err) != TCX_OK) {
		fprintf(stderr, "reference: %s (%s)\n", err.msg, tcx_status_str(err.code));
		return 1;
	}
	/* first index fastest: A[i + 5k], B[k + 3j], C[i + 5j] */
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 4; j++) {
			double want = 0;

			for (int k = 0; k < 3; k++)
				want += (double)a[i + 5 * k] * b[k + 3 * j];
			want *= alpha;
			if (fabs(cc[i + 5 * j] - want) > worst)
				worst = fabs(cc[i + 5 * j] - want);
		}
	tcx_contraction_destroy(c);
	if (worst > 1e-5) {
		fprintf(stderr, "reference differs by %g\n", worst);
		return 1;
	}
	printf("ok %s %s\n", tcx_version(), name);
	return 0;
}
EOF
flags=""
[ -n "${TCX_SANITIZE:-}" ] && flags="-fsanitize=$TCX_SANITIZE -fno-omit-frame-pointer"
if check "configure the consumer" "$cmake" -S "$scratch/app" -B "$scratch/app/build" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" \
	-DCMAKE_EXE_LINKER_FLAGS="-lm $flags" &&
	check "build the consumer" "$cmake" --build "$scratch/app/build" &&
	check "run the consumer" "$scratch/app/build/app"; then
	checks=$((checks + 1))
	[ "$out" = "ok $version Cij_Aik_Bkj_S" ] || fail "the consumer says '$out'"
fi
# find_package must refuse a version this is not
checks=$((checks + 1))
sed -i 's/find_package(tcx 0.1 REQUIRED)/find_package(tcx 99 REQUIRED)/' \
	"$scratch/app/CMakeLists.txt"
if "$cmake" -S "$scratch/app" -B "$scratch/app/build99" -DCMAKE_PREFIX_PATH="$prefix" \
	>/dev/null 2>&1; then
	fail "find_package(tcx 99) succeeded against tcx $version"
fi

# ---- pkg-config ----------------------------------------------------------------

if command -v pkg-config >/dev/null; then
	export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
	if check "pkg-config --cflags --libs tcx" pkg-config --cflags --libs tcx; then
		pc=$out
		checks=$((checks + 1))
		[ "$(pkg-config --modversion tcx)" = "$version" ] || fail "pkg-config --modversion tcx"
		# shellcheck disable=SC2086
		check "compile with pkg-config" "$cc" $flags -o "$scratch/app-pc" "$scratch/app/app.c" \
			$pc -lm &&
			check "run the pkg-config build" env LD_LIBRARY_PATH="$prefix/$libdir" \
				"$scratch/app-pc"
	fi
fi

# ---- the planner's shipped models, from where this prefix put them -----------

# The program and libtcx find share/tcx/models relative to their own place,
# so the prefix given at install time, not the build's, is where they look.
models=$(realpath "$prefix")/share/tcx/models
# model_name DEVICE: the file name the planner looks for (plan_model_name)
model_name() {
	printf '%s' "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//'
	printf -- '-s.json\n'
}
printf '{"tcx_model": 1, "device": "NVIDIA H200", "type": "s", "measurements": 5, ' \
	>"$models/nvidia-h200-s.json"
printf '"problems": 3, "params": {"mem_eff": 0.5}}\n' >>"$models/nvidia-h200-s.json"
nomodel=(env -u TCX_MODEL -u TCX_MODELS_DIR XDG_CACHE_HOME="$scratch/cache")
if check "tcx plan with a shipped model" "${nomodel[@]}" "$tcx" plan 'ik,kj->ij' \
	--sizes 64,64,64 --for h200 --format json; then
	checks=$((checks + 1))
	printf '%s\n' "$out" | grep -q "\"model\": \"$models/nvidia-h200-s.json\"" &&
		printf '%s\n' "$out" | grep -q '"model_origin": "shipped"' ||
		fail "the installed tcx does not use $models/nvidia-h200-s.json: $out"
fi
rm -f "$models/nvidia-h200-s.json"
# libtcx on the default device: a damaged model of that device in the
# installed folder stops its plan, naming the file (when there is a device)
if out=$("${nomodel[@]}" "$tcx" plan 'ik,kj->ij' --sizes 8,8,8 --format json 2>/dev/null); then
	id=$(printf '%s\n' "$out" | sed -n 's/^ *"device": "\(.*\)",$/\1/p')
	name=$(model_name "$(printf '%s\n' "$out" | sed -n 's/^ *"device_name": "\(.*\)",$/\1/p')")
	echo '{"tcx_model": 1,' >"$models/$name"
	cat >"$scratch/plan.c" <<'EOF'
/* libtcx plans a GEMM on device argv[1] with the planner, which looks its
 * model up; prints tcx_plan_create's error, or "planned". */
#include <stdio.h>

#include <tcx.h>

int main(int argc, char **argv)
{
	struct tcx_device *dev = NULL;
	struct tcx_contraction *c = NULL;
	struct tcx_plan *plan = NULL;
	struct tcx_error err = { 0 };
	int64_t sizes[3] = { 64, 64, 64 };
	enum tcx_status st;

	if (argc != 2 || tcx_device_open(argv[1], &dev, &err) != TCX_OK ||
	    tcx_contraction_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, &c, &err) != TCX_OK) {
		fprintf(stderr, "setup: %s\n", err.msg);
		tcx_device_close(dev);
		return 2;
	}
	st = tcx_plan_create(dev, c, sizes, NULL, NULL, NULL, NULL, &plan, &err);
	printf("%s\n", st ? err.msg : "planned");
	tcx_plan_destroy(plan);
	tcx_contraction_destroy(c);
	tcx_device_close(dev);
	return 0;
}
EOF
	# shellcheck disable=SC2086
	if check "build a libtcx planner" "$cc" $flags -o "$scratch/plan" "$scratch/plan.c" \
		-I"$prefix/include" -L"$prefix/$libdir" -ltcx -Wl,-rpath,"$prefix/$libdir" &&
		check "run the libtcx planner with a damaged model" "${nomodel[@]}" "$scratch/plan" "$id"
	then
		checks=$((checks + 1))
		printf '%s\n' "$out" | grep -qF "model '$models/$name'" ||
			fail "libtcx did not find the damaged $models/$name: $out"
	fi
	checks=$((checks + 1))
	"${nomodel[@]}" "$tcx" plan 'ik,kj->ij' --sizes 8,8,8 >/dev/null 2>"$scratch/err" &&
		fail "the installed tcx planned on $id with a damaged $models/$name"
	grep -qF "model '$models/$name'" "$scratch/err" ||
		fail "the installed tcx did not name the damaged $models/$name: $(cat "$scratch/err")"
	rm -f "$models/$name"
fi

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]

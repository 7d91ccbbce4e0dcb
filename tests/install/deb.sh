#!/bin/bash
# deb.sh - `cpack -G DEB` builds tcx_<version>_<arch>.deb from this build,
# and the package is what a Debian user needs: its control data names the
# package, a maintainer and the shared libraries tcx runs with (Depends,
# from dpkg-shlibdeps) and recommends PoCL; it holds the program, the man
# pages, the completions, the library with its header, CMake package and
# pkg-config file, and the examples; and the program unpacked from it runs:
# tcx --version, tcx devices, tcx validate (on PoCL when there is a device,
# else on the host reference) and man -l tcx.1.  When apt can resolve the
# package's dependencies here, `apt-get -s install ./tcx_*.deb` must succeed.
# Slow-ish (CPack strips and packs): label cli.
# Needs TCX_SOURCE_DIR, TCX_BUILD_DIR and CPACK_COMMAND.
set -u
: "${TCX_SOURCE_DIR:?}" "${TCX_BUILD_DIR:?}"
cpack=${CPACK_COMMAND:-cpack}
for tool in "$cpack" dpkg-deb dpkg-shlibdeps; do
	command -v "$tool" >/dev/null || { echo "skipped: no $tool"; exit 77; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tcx-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
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
		printf '%s\n' "$out" | tail -30
		return 1
	fi
	return 0
}

done_testing() {
	echo "$checks checks, $failures failed"
	[ "$failures" -eq 0 ]
	exit
}

version=$(sed -n 's/^#define TCX_VERSION_STRING "\(.*\)"/\1/p' "$TCX_SOURCE_DIR/include/tcx.h")
arch=$(dpkg --print-architecture)
deb=$scratch/tcx_${version}_$arch.deb
check "cpack -G DEB" "$cpack" -G DEB -B "$scratch" --config "$TCX_BUILD_DIR/CPackConfig.cmake" ||
	done_testing
checks=$((checks + 1))
[ -f "$deb" ] || { fail "cpack wrote no $(basename "$deb"): $(ls "$scratch")"; done_testing; }

# ---- control data --------------------------------------------------------------

field() { dpkg-deb -f "$deb" "$1"; }
checks=$((checks + 5))
[ "$(field Package)" = tcx ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', want $version"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture is '$(field Architecture)'"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
[ -n "$(field Description)" ] || fail "no Description"
depends=$(field Depends)
for lib in libc6 libyaml-0-2 libjansson4 libsqlite3-0 ocl-icd-libopencl1; do
	checks=$((checks + 1))
	printf '%s' "$depends" | grep -q "\\b$lib\\b" || fail "Depends lacks $lib: '$depends'"
done
checks=$((checks + 1))
field Recommends | grep -q pocl-opencl-icd || fail "Recommends lacks pocl-opencl-icd"

# ---- contents ------------------------------------------------------------------

contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
expect=(./usr/bin/tcx ./usr/include/tcx.h ./usr/share/man/man1/tcx.1
	./usr/share/man/man1/tcx-validate.1 ./usr/share/man/man5/tcx-config.5
	./usr/share/man/man5/tcx-logic.5 ./usr/share/bash-completion/completions/tcx
	./usr/share/zsh/vendor-completions/_tcx ./usr/share/fish/vendor_completions.d/tcx.fish
	./usr/share/tcx/examples/sgemm.yaml ./usr/share/tcx/schemas/parse.schema.json
	./usr/share/tcx/logic/README.md ./usr/share/tcx/tune/README.md)
for f in "${expect[@]}"; do
	checks=$((checks + 1))
	printf '%s\n' "$contents" | grep -qxF "$f" || fail "the package lacks $f"
done
for pat in '/libtcx\.so\.0$' '/libtcx\.so$' '/cmake/tcx/tcxConfig\.cmake$' '/pkgconfig/tcx\.pc$'; do
	checks=$((checks + 1))
	printf '%s\n' "$contents" | grep -qE "$pat" || fail "the package lacks a file matching $pat"
done

# ---- unpacked, it runs -----------------------------------------------------------

root=$scratch/root
check "dpkg-deb -x" dpkg-deb -x "$deb" "$root" || done_testing
libdir=$(dirname "$(find "$root/usr/lib" -name libtcx.so.0 | head -1)")
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tcx=$root/usr/bin/tcx
if check "tcx --version" "$tcx" --version; then
	checks=$((checks + 1))
	printf '%s\n' "$out" | head -1 | grep -qx "tcx $version" || fail "tcx --version: $out"
fi
checks=$((checks + 1))
grep -q "prefix=/usr$" "$root"/usr/lib*/pkgconfig/tcx.pc "$root"/usr/lib/*/pkgconfig/tcx.pc \
	2>/dev/null || fail "tcx.pc does not say prefix=/usr"
if check "tcx devices" "$tcx" devices --format json; then
	if printf '%s\n' "$out" | grep -q '"id": "opencl:'; then
		dev=$(printf '%s\n' "$out" | sed -n 's/.*"id": "\(opencl:[0-9:]*\)".*/\1/p' | head -1)
	else
		dev=host
	fi
	check "tcx validate on $dev" "$tcx" validate 'C[ij]=A[ik]*B[kj]' --sizes 33,17,9 \
		--device "$dev"
fi
if command -v man >/dev/null; then
	check "man -l tcx.1 from the package" env MANWIDTH=80 man -l "$root/usr/share/man/man1/tcx.1"
fi

# ---- apt would install it here ----------------------------------------------------

if command -v apt-get >/dev/null && apt-cache show libyaml-0-2 >/dev/null 2>&1; then
	check "apt-get -s install ./$(basename "$deb")" apt-get -s install "$deb"
else
	echo "note: apt cannot resolve packages here: the install simulation is left out"
fi

done_testing

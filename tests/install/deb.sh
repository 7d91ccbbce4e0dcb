#!/bin/bash
# deb.sh - `cpack -G DEB` builds the three Debian packages of this build,
# tcx (the program), libtcx0 (the shared library) and libtcx-dev (its
# header, link, CMake package and pkg-config file), and they are what a
# Debian user needs: each one's control data names the package, a
# maintainer and what it depends on (the shared libraries from
# dpkg-shlibdeps; libtcx-dev on libtcx0 of the same version); each file is
# in the package it belongs to, the library and its development files in
# the multiarch folder /usr/lib/<triplet>; each package has its licence as
# a machine-readable (DEP-5) copyright file and a compressed changelog; the
# man pages are compressed with gzip -9n; folders are 0755, files 0644, the
# program 0755, all root's; the program and the library are stripped.
# lintian, when installed, reports no error on any of them.  The program
# unpacked from its package runs: tcx --version, tcx devices, tcx validate
# (on PoCL when there is a device, else on the host reference) and man -l
# tcx.1.gz.  When apt can resolve the packages' dependencies here,
# `apt-get -s install` of the three must succeed.  Seconds (CPack strips
# and packs, lintian reads): label cli.  tests/install/fresh-root.sh
# installs the packages into a fresh Debian 12 root (by hand).
# Needs TCX_SOURCE_DIR, TCX_BUILD_DIR and CPACK_COMMAND.
set -u
: "${TCX_SOURCE_DIR:?}" "${TCX_BUILD_DIR:?}"
cpack=${CPACK_COMMAND:-cpack}
for tool in "$cpack" dpkg-deb dpkg-shlibdeps dpkg-architecture gzip; do
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
major=${version%%.*}
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libpkg=libtcx$major
check "cpack -G DEB" "$cpack" -G DEB -B "$scratch" --config "$TCX_BUILD_DIR/CPackConfig.cmake" ||
	done_testing
declare -A deb
for pkg in tcx "$libpkg" libtcx-dev; do
	deb[$pkg]=$scratch/${pkg}_${version}_$arch.deb
	checks=$((checks + 1))
	[ -f "${deb[$pkg]}" ] || fail "cpack wrote no $(basename "${deb[$pkg]}"): $(ls "$scratch")"
done
checks=$((checks + 1))
[ "$(ls "$scratch"/*.deb | wc -l)" -eq 3 ] || fail "cpack wrote other packages: $(ls "$scratch")"
[ "$failures" -eq 0 ] || done_testing

# ---- control data --------------------------------------------------------------

field() { dpkg-deb -f "${deb[$1]}" "$2"; }
for pkg in tcx "$libpkg" libtcx-dev; do
	checks=$((checks + 5))
	[ "$(field "$pkg" Package)" = "$pkg" ] || fail "$pkg: Package is '$(field "$pkg" Package)'"
	[ "$(field "$pkg" Version)" = "$version" ] ||
		fail "$pkg: Version is '$(field "$pkg" Version)', want $version"
	[ "$(field "$pkg" Architecture)" = "$arch" ] ||
		fail "$pkg: Architecture is '$(field "$pkg" Architecture)'"
	[ -n "$(field "$pkg" Maintainer)" ] || fail "$pkg: no Maintainer"
	[ -n "$(field "$pkg" Description)" ] || fail "$pkg: no Description"
done
for pkg in tcx "$libpkg"; do
	depends=$(field "$pkg" Depends)
	for lib in libc6 libyaml-0-2 libjansson4 libsqlite3-0 ocl-icd-libopencl1; do
		checks=$((checks + 1))
		printf '%s' "$depends" | grep -q "\\b$lib\\b" || fail "$pkg: Depends lacks $lib: '$depends'"
	done
	checks=$((checks + 1))
	field "$pkg" Recommends | grep -q pocl-opencl-icd || fail "$pkg: Recommends lacks pocl-opencl-icd"
done
checks=$((checks + 2))
[ "$(field libtcx-dev Depends)" = "$libpkg (= $version)" ] ||
	fail "libtcx-dev: Depends is '$(field libtcx-dev Depends)', want '$libpkg (= $version)'"
field tcx Depends | grep -q libtcx && fail "tcx depends on libtcx: '$(field tcx Depends)'"
# the library's shlibs file for the packages that link it, ldconfig by trigger
ctl=$scratch/control
check "dpkg-deb -e $libpkg" dpkg-deb -e "${deb[$libpkg]}" "$ctl" && {
	checks=$((checks + 2))
	grep -qx "libtcx $major $libpkg (>= $version)" "$ctl/shlibs" ||
		fail "$libpkg's shlibs file: '$(cat "$ctl/shlibs" 2>&1)'"
	grep -qx "activate-noawait ldconfig" "$ctl/triggers" ||
		fail "$libpkg activates no ldconfig trigger: '$(cat "$ctl/triggers" 2>&1)'"
}

# ---- contents: each file in its package ------------------------------------------

# contents PKG: "MODE OWNER PATH" a line (symbolic links: their path)
contents() { dpkg-deb -c "${deb[$1]}" | awk '{ print $1, $2, $6 }'; }
# has PKG PATH...: the package holds each path, exactly
has() {
	local pkg=$1 list f
	shift
	list=$(contents "$pkg" | awk '{ print $3 }')
	for f in "$@"; do
		checks=$((checks + 1))
		printf '%s\n' "$list" | grep -qxF "./usr/$f" || fail "$pkg lacks /usr/$f"
	done
}
lib=lib/$triplet
has tcx bin/tcx share/man/man1/tcx.1.gz share/man/man1/tcx-validate.1.gz \
	share/man/man5/tcx-config.5.gz share/man/man5/tcx-logic.5.gz \
	share/bash-completion/completions/tcx share/zsh/vendor-completions/_tcx \
	share/fish/vendor_completions.d/tcx.fish share/tcx/examples/sgemm.yaml \
	share/tcx/examples/app/app.c share/tcx/schemas/parse.schema.json \
	share/tcx/logic/README.md share/tcx/tune/README.md share/tcx/models/README.md
has "$libpkg" "$lib/libtcx.so.$major" "$lib/libtcx.so.$version"
has libtcx-dev include/tcx.h "$lib/libtcx.so" "$lib/cmake/tcx/tcxConfig.cmake" \
	"$lib/cmake/tcx/tcxConfigVersion.cmake" "$lib/cmake/tcx/tcxTargets.cmake" \
	"$lib/pkgconfig/tcx.pc"
for pkg in tcx "$libpkg" libtcx-dev; do
	has "$pkg" "share/doc/$pkg/copyright" "share/doc/$pkg/changelog.gz"
	files=$(contents "$pkg" | awk '$1 !~ /^d/ { print $3 }')
	# nothing of another package's: the library only in libtcx0, the
	# development files only in libtcx-dev, man pages only in tcx
	for pat in '/libtcx\.so\.' '/libtcx\.so$|/include/|/cmake/|/pkgconfig/' '/share/(man|tcx|bash-completion|zsh|fish)/|/bin/'; do
		owner=$libpkg
		case $pat in
		*include*) owner=libtcx-dev ;;
		*share/*) owner=tcx ;;
		esac
		[ "$pkg" = "$owner" ] && continue
		checks=$((checks + 1))
		stray=$(printf '%s\n' "$files" | grep -E "$pat")
		[ -z "$stray" ] || fail "$pkg holds $owner's files: $stray"
	done
	checks=$((checks + 1))
	stray=$(printf '%s\n' "$files" | grep -E '^\./usr/lib/[^/]+$')
	[ -z "$stray" ] || fail "$pkg has files outside the multiarch folder: $stray"
	# folders 0755, files 0644, the program 0755, root's
	checks=$((checks + 1))
	bad=$(contents "$pkg" | awk '
		$2 != "root/root" { print; next }
		$1 ~ /^d/ && $1 != "drwxr-xr-x" { print; next }
		$1 ~ /^-/ && $3 == "./usr/bin/tcx" && $1 != "-rwxr-xr-x" { print; next }
		$1 ~ /^-/ && $3 != "./usr/bin/tcx" && $1 != "-rw-r--r--" { print }')
	[ -z "$bad" ] || fail "$pkg: wrong owner or mode: $bad"
done
# every man page compressed (how: below, from the unpacked files)
checks=$((checks + 1))
man=$(contents tcx | awk '$1 !~ /^d/ && $3 ~ /\/share\/man\// { print $3 }')
uncompressed=$(printf '%s\n' "$man" | grep -v '\.gz$')
[ -z "$uncompressed" ] || fail "man pages not compressed: $uncompressed"

# ---- unpacked, it runs -----------------------------------------------------------

root=$scratch/root
for pkg in tcx "$libpkg" libtcx-dev; do
	check "dpkg-deb -x $pkg" dpkg-deb -x "${deb[$pkg]}" "$root" || done_testing
done
for f in "$root"/usr/share/man/man*/* "$root"/usr/share/doc/*/changelog.gz; do
	checks=$((checks + 1))
	# bytes 3 (flags: no FNAME), 4-7 (time: 0) and 8 (XFL: 2, the best)
	head=$(od -An -tx1 -j3 -N6 "$f" | tr -d ' \n')
	gzip -t "$f" 2>/dev/null && [ "$head" = 000000000002 ] ||
		fail "${f#"$root"} is not compressed with gzip -9n (header bytes 3-8: $head)"
done
for pkg in tcx "$libpkg" libtcx-dev; do
	copyright=$root/usr/share/doc/$pkg/copyright
	checks=$((checks + 1))
	{ head -1 "$copyright" |
		grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' &&
		grep -qx 'Files: \*' "$copyright" && grep -qx 'Copyright: 2026 the tcx project' "$copyright" &&
		grep -qx 'License: Expat' "$copyright" &&
		grep -q '^ Permission is hereby granted, free of charge' "$copyright"; } ||
		fail "$pkg: /usr/share/doc/$pkg/copyright is not DEP-5 with the MIT (Expat) licence"
done
if command -v file >/dev/null; then
	for f in "$root/usr/bin/tcx" "$root/usr/$lib/libtcx.so.$version"; do
		checks=$((checks + 1))
		file "$f" | grep -q ', stripped' || fail "${f#"$root"} is not stripped: $(file -b "$f")"
	done
fi
checks=$((checks + 2))
grep -qx "prefix=/usr" "$root/usr/$lib/pkgconfig/tcx.pc" || fail "tcx.pc does not say prefix=/usr"
grep -qx "libdir=\${prefix}/$lib" "$root/usr/$lib/pkgconfig/tcx.pc" ||
	fail "tcx.pc's libdir is not \${prefix}/$lib: $(grep libdir= "$root/usr/$lib/pkgconfig/tcx.pc")"
export LD_LIBRARY_PATH="$root/usr/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tcx=$root/usr/bin/tcx
if check "tcx --version" "$tcx" --version; then
	checks=$((checks + 1))
	printf '%s\n' "$out" | head -1 | grep -qx "tcx $version" || fail "tcx --version: $out"
fi
if check "tcx devices" "$tcx" devices --format json; then
	if printf '%s\n' "$out" | grep -q '"id": "opencl:'; then
		dev=$(printf '%s\n' "$out" | sed -n 's/.*"id": "\(opencl:[0-9:]*\)".*/\1/p' | head -1)
	else
		dev=host
	fi
	check "tcx validate on $dev" "$tcx" validate 'C[ij]=A[ik]*B[kj]' --sizes 33,17,9 \
		--device "$dev"
fi
# the program built for the build's prefix finds the planner's models in
# the package's /usr/share/tcx/models, beside it wherever it is unpacked
models=$(realpath "$root")/usr/share/tcx/models
printf '{"tcx_model": 1, "device": "NVIDIA H200", "type": "s", "measurements": 5, %s\n' \
	'"problems": 3, "params": {"mem_eff": 0.5}}' >"$models/nvidia-h200-s.json"
if check "tcx plan with a model in the package's folder" env -u TCX_MODEL -u TCX_MODELS_DIR \
	XDG_CACHE_HOME="$scratch/cache" "$tcx" plan 'ik,kj->ij' --sizes 64,64,64 --for h200 \
	--format json; then
	checks=$((checks + 1))
	printf '%s\n' "$out" | grep -q "\"model\": \"$models/nvidia-h200-s.json\"" ||
		fail "the packaged tcx does not use $models/nvidia-h200-s.json: $out"
fi
if command -v man >/dev/null; then
	if check "man -l tcx.1.gz from the package" env MANWIDTH=80 \
		man -l "$root/usr/share/man/man1/tcx.1.gz"; then
		checks=$((checks + 1))
		printf '%s\n' "$out" | grep -q '^EXIT STATUS' || fail "man -l tcx.1.gz has no EXIT STATUS"
	fi
fi

# ---- lintian: no errors ------------------------------------------------------------

if command -v lintian >/dev/null; then
	# exit status 1 on errors; E: lines are what fails here, W: are shown
	lint=$(lintian --allow-root "${deb[tcx]}" "${deb[$libpkg]}" "${deb[libtcx-dev]}" 2>&1)
	checks=$((checks + 1))
	if printf '%s\n' "$lint" | grep -q '^E: '; then
		fail "lintian reports errors:"
		printf '%s\n' "$lint"
	elif [ -n "$lint" ]; then
		printf 'lintian:\n%s\n' "$lint"
	fi
else
	echo "note: no lintian (apt-get install lintian): the lintian check is left out"
fi

# ---- apt would install them here --------------------------------------------------

if command -v apt-get >/dev/null && apt-cache show libyaml-0-2 >/dev/null 2>&1; then
	check "apt-get -s install of the three packages" apt-get -s install \
		"${deb[tcx]}" "${deb[$libpkg]}" "${deb[libtcx-dev]}"
else
	echo "note: apt cannot resolve packages here: the install simulation is left out"
fi

done_testing

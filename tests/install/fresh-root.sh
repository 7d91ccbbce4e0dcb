#!/bin/bash
# fresh-root.sh - the Debian packages installed as a new user would, on a
# Debian 12 that has never seen tcx: builds the packages from BUILD_DIR
# (cpack -G DEB), makes a fresh bookworm root from Debian's archive
# (mmdebstrap, else debootstrap), installs the three packages into it with
# apt-get (which resolves their Depends and installs their Recommends: PoCL,
# man-db) with a compiler, CMake, pkg-config and OpenCL's headers, and runs
# as an ordinary user there:
#
#   tcx --version, tcx devices, tcx validate on PoCL, man tcx, man 5 tcx-logic
#   a program of the user's against libtcx, built with the README's
#     `cc app.c $(pkg-config --cflags --libs tcx)` and with find_package(tcx)
#   the README's worked example from the installed files: tune
#     /usr/share/tcx/examples/sgemm.yaml, export the library, build and
#     install it, run its client, and build and run the example application
#     (/usr/share/tcx/examples/app) with CMake's package and with pkg-config
#
# It prints each command and its output, and ends with "fresh root: PASS"
# or the command that failed.  Not run by ctest: it needs root, the network
# and several minutes (the tuning alone takes a few on a small CPU).
#
# Usage: tests/install/fresh-root.sh BUILD_DIR
# Environment: TCX_MIRROR (default http://deb.debian.org/debian),
# TCX_KEEP_ROOT=1 to keep the root (its path is printed).
set -eu
build=${1:?usage: fresh-root.sh BUILD_DIR (a configured and built tcx build)}
build=$(cd "$build" && pwd)
mirror=${TCX_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || { echo "fresh-root.sh: needs root (chroot, mounts)" >&2; exit 2; }
if command -v mmdebstrap >/dev/null; then
	bootstrap=mmdebstrap
elif command -v debootstrap >/dev/null; then
	bootstrap=debootstrap
else
	echo "fresh-root.sh: needs mmdebstrap or debootstrap (apt-get install mmdebstrap)" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tcx-fresh-root.XXXXXX")
root=$work/root
cleanup() {
	local m
	for m in sys proc dev/pts dev; do
		mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
	done
	if [ "${TCX_KEEP_ROOT:-0}" = 1 ]; then
		echo "kept: $root"
	else
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT
trap 'echo "fresh root: FAIL (line $LINENO: $BASH_COMMAND)"' ERR

step() { printf '\n## %s\n' "$*"; }

step "the packages, from $build"
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/debs" | grep 'package:'
ls "$work/debs"/*.deb

step "a fresh Debian 12 root ($bootstrap, $mirror)"
if [ "$bootstrap" = mmdebstrap ]; then
	mmdebstrap --variant=apt --quiet bookworm "$root" "$mirror"
else
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log"
fi
cat "$root/etc/debian_version"
mkdir -p "$root/tmp/debs"
cp "$work/debs"/*.deb "$root/tmp/debs/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# PoCL reads the CPU topology from /sys; man and apt want /proc and /dev
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

# as root, what the README tells a user to run (with the Recommends)
step "apt-get install ./tcx_*.deb ./libtcx0_*.deb ./libtcx-dev_*.deb (root)"
chroot "$root" sh -ec '
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	cd /tmp/debs
	apt-get install -y -qq ./tcx_*.deb ./libtcx0_*.deb ./libtcx-dev_*.deb \
		build-essential cmake pkg-config ocl-icd-opencl-dev >/tmp/apt.log ||
		{ tail -30 /tmp/apt.log; exit 1; }
	grep -E "^Setting up (tcx|libtcx|pocl-opencl-icd|man-db)" /tmp/apt.log
	dpkg -l tcx libtcx0 libtcx-dev pocl-opencl-icd | tail -4
	useradd -m -s /bin/bash alice'

# user SCRIPT: SCRIPT runs in bash as alice, in her home, with a login's
# environment and nothing of this machine's
user() {
	chroot "$root" su - alice -c "set -eu; export MANWIDTH=80
$1"
}

step "as a new user: the program"
user '
	echo "\$ tcx --version"; tcx --version
	echo "\$ tcx devices"; tcx devices
	echo "\$ tcx validate ... on PoCL"
	tcx validate "C[ij]=A[ik]*B[kj]" --sizes 33,17,29 --device opencl:0:0
	echo "\$ man -w tcx tcx-validate; man tcx | head -6; man 5 tcx-logic | head -4"
	man -w tcx tcx-validate; man tcx | head -6; man 5 tcx-logic | head -4
	echo "\$ ls /usr/share/tcx"; ls /usr/share/tcx'

step "as a new user: a program against libtcx (README, Installing)"
user '
	mkdir -p consumer && cd consumer
	cat >app.c <<EOF
#include <stdio.h>
#include <tcx.h>

int main(void)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;
	char name[64];

	if (tcx_contraction_parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S, &c, &err) != TCX_OK) {
		fprintf(stderr, "parse: %s\n", err.msg);
		return 1;
	}
	tcx_contraction_name(c, name, sizeof(name));
	printf("libtcx %s: %s\n", tcx_version(), name);
	tcx_contraction_destroy(c);
	return 0;
}
EOF
	cat >CMakeLists.txt <<EOF
cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package(tcx 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE tcx::tcx)
EOF
	echo "\$ cc app.c \$(pkg-config --cflags --libs tcx) && ./a.out"
	cc app.c $(pkg-config --cflags --libs tcx) && ./a.out
	echo "\$ cmake -S . -B build && cmake --build build && build/app   # find_package(tcx)"
	cmake -S . -B build >/dev/null && cmake --build build >/dev/null && build/app
	grep "^tcx_DIR" build/CMakeCache.txt'

step "as a new user: the README's worked example, from the installed files"
user '
	mkdir -p worked && cd worked && cp -r /usr/share/tcx/examples examples
	echo "\$ tcx parse \"C[ij]=A[ik]*B[kj]\" --sizes 1000,1000,1000"
	tcx parse "C[ij]=A[ik]*B[kj]" --sizes 1000,1000,1000
	echo "\$ tcx tune examples/sgemm.yaml -o logic"
	start=$(date +%s); tcx tune examples/sgemm.yaml -o logic 2>&1 | tail -4
	echo "(tuned in $(( $(date +%s) - start )) s)"
	echo "\$ tcx validate \"C[ij]=A[ik]*B[kj]\" --logic logic/*.yaml --sizes 1000,999,997"
	tcx validate "C[ij]=A[ik]*B[kj]" --logic logic/*.yaml --sizes 1000,999,997 | grep -E "^(solution|result)"
	echo "\$ tcx export-lib logic/*.yaml -o mylib --name mylib"
	tcx export-lib logic/*.yaml -o mylib --name mylib
	echo "\$ cmake -S mylib -B mylib/build -DCMAKE_INSTALL_PREFIX=\$PWD/prefix && cmake --build mylib/build && cmake --install mylib/build"
	cmake -S mylib -B mylib/build -DCMAKE_INSTALL_PREFIX=$PWD/prefix >/dev/null
	cmake --build mylib/build >/dev/null && cmake --install mylib/build | grep -E "\.so\.|\.h$|Config\.cmake$|\.pc$"
	echo "\$ prefix/bin/mylib-client --sizes 300,200,100"
	prefix/bin/mylib-client --sizes 300,200,100
	echo "\$ cmake -S examples/app -B app -DCMAKE_PREFIX_PATH=\$PWD/prefix && cmake --build app && app/app"
	cmake -S examples/app -B app -DCMAKE_PREFIX_PATH=$PWD/prefix >/dev/null
	cmake --build app >/dev/null && app/app
	pcdir=$(dirname prefix/lib*/pkgconfig/mylib.pc prefix/lib/*/pkgconfig/mylib.pc 2>/dev/null | head -1)
	echo "\$ export PKG_CONFIG_PATH=\$PWD/$pcdir"
	export PKG_CONFIG_PATH=$PWD/$pcdir
	echo "\$ cc examples/app/app.c -o app-pc \$(pkg-config --cflags --libs mylib) && ./app-pc 1000 999 997"
	cc examples/app/app.c -o app-pc $(pkg-config --cflags --libs mylib) && ./app-pc 1000 999 997'

step "fresh root: PASS"

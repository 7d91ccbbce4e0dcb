#!/bin/bash
# atomic.sh - export-lib over an earlier tree changes it as a whole or not
# at all: with the write or the replacement of one file failing
# (TCX_FAULT=write:N as a full disk, at the first, second, a middle, the
# last file and the manifest of each phase), under a real file-size limit
# (ulimit -f), and with a directory in the way of a file it writes,
# export-lib exits 2 naming the file and the reason, and the earlier tree
# (with the user's own files in it) is byte for byte what it was, with
# nothing of the attempt left; into a new directory, a failure leaves no
# directory.  When it succeeds, the files of the earlier tree it no longer
# writes (its manifest, .tcx-export, lists them) are gone and every file
# it did not write is kept; what an export killed half-way left aside is
# removed; a manifest naming a path outside the tree removes nothing.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
data=$here/data

# snapshot DIR: every entry's path, type, mode and content digest
snapshot() {
	python3 - "$1" <<'PY'
import hashlib, os, stat, sys
root = sys.argv[1]
for d, dirs, files in sorted(os.walk(root)):
    dirs.sort()
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        st = os.lstat(p)
        h = hashlib.sha256(open(p, "rb").read()).hexdigest() if stat.S_ISREG(st.st_mode) else "-"
        print(os.path.relpath(p, root), oct(st.st_mode), h)
PY
}

# the earlier tree: two logic files as "old", then the user's build and notes
run export-lib "$data/special.yaml" "$data/complex.yaml" -o lib --name old --selector logic
expect_rc 0 "the earlier export"
mkdir -p lib/build && echo "the user's" >lib/build/CMakeCache.txt && echo notes >lib/notes.txt
checks=$((checks + 1))
grep -qx 'include/old.h' lib/.tcx-export || fail "the manifest lists include/old.h"
before=$(snapshot lib)

# same WHAT: the tree is as it was, with no temporary file and no directory
# of earlier files left (the snapshot lists hidden entries too)
same() {
	checks=$((checks + 1))
	[ "$(snapshot lib)" = "$before" ] || {
		fail "$1: the earlier tree changed"
		diff <(printf '%s\n' "$before") <(snapshot lib) | head -10
	}
}

# a failure at each kind of step: the files are written (20 with the
# manifest: the first, the second, one between, the last but one, the
# manifest), then put in place (20: the same)
for n in 1 2 9 19 20 21 22 30 39 40; do
	TCX_FAULT=write:$n run export-lib "$data/special.yaml" -o lib --name new --selector logic
	expect_rc 2 "write:$n"
	expect_err "cannot (write|replace) 'lib/[^']*': No space left on device" "write:$n: named"
	same "write:$n"
done
TCX_FAULT=write:41 run export-lib "$data/special.yaml" -o lib2 --name new --selector logic
expect_rc 0 "no fault at the 41st write: the count above covers every step"

# a real file-size limit: src/new.c does not fit in 8 KiB
(
	ulimit -f 8
	trap '' XFSZ
	"$TCX" export-lib "$data/special.yaml" -o lib --name new --selector logic \
		>"$scratch/.out" 2>"$scratch/.err"
)
rc=$? out=$(cat "$scratch/.out") err=$(cat "$scratch/.err")
expect_rc 2 "ulimit -f 8"
expect_err "cannot write 'lib/src/new.c': File too large" "ulimit -f: named"
same "ulimit -f"

# a directory where the new tree puts a file, found after 15 files are in place
mkdir -p lib/new.pc.in/x
before=$(snapshot lib)
run export-lib "$data/special.yaml" -o lib --name new --selector logic
expect_rc 2 "a directory in the way"
expect_err "cannot (rename to|replace) 'lib/new.pc.in': Is a directory" "the directory named"
same "a directory in the way"
rm -r lib/new.pc.in
before=$(snapshot lib)

# a read-only folder (root writes into it anyway)
if [ "$(id -u)" -ne 0 ]; then
	chmod a-w lib/cmake
	run export-lib "$data/special.yaml" -o lib --name new --selector logic
	expect_rc 2 "a read-only folder"
	expect_err "cannot [a-z ]+ 'lib/cmake/newConfig.cmake.in': Permission denied" "named"
	chmod u+w lib/cmake
	same "a read-only folder"
fi

# into a new directory: a failure leaves none
TCX_FAULT=write:20 run export-lib "$data/special.yaml" -o fresh/sub --name new
expect_rc 2 "write:20 into a new directory"
checks=$((checks + 1))
[ ! -e fresh ] || fail "a failed export into a new directory left $(find fresh)"

# the export succeeds: old.* gone, new.* there, the user's files kept
run export-lib "$data/special.yaml" -o lib --name new --selector logic
expect_rc 0 "the export without faults"
checks=$((checks + 6))
[ ! -e lib/include/old.h ] && [ ! -e lib/src/old.c ] && [ ! -e lib/old.pc.in ] ||
	fail "the earlier tree's own files are removed: $(ls lib lib/include lib/src)"
[ -s lib/include/new.h ] && [ -s lib/src/new.c ] || fail "the new tree is there"
[ "$(cat lib/build/CMakeCache.txt)" = "the user's" ] || fail "the user's build directory is kept"
[ "$(cat lib/notes.txt)" = notes ] || fail "the user's notes are kept"
grep -qx 'include/new.h' lib/.tcx-export && ! grep -q 'old' lib/.tcx-export ||
	fail "the manifest lists the new tree: $(cat lib/.tcx-export)"
ls -a lib | grep -q '^\.tcx-export\.old' && fail "the earlier files' directory is left"

# the directory of earlier files an export killed half-way left: removed
mkdir -p lib/.tcx-export.old.AbC123/src && echo old >lib/.tcx-export.old.AbC123/src/x.c
run export-lib "$data/special.yaml" -o lib --name new --selector logic
expect_rc 0 "export over a killed export's leftovers"
checks=$((checks + 1))
[ ! -e lib/.tcx-export.old.AbC123 ] || fail "the killed export's directory of earlier files is left"

# a manifest that names what tcx never writes: nothing is removed
echo keep >outside.txt
printf '../outside.txt\n' >>lib/.tcx-export
run export-lib "$data/special.yaml" -o lib --name new --selector logic
expect_rc 0 "export over a doctored manifest"
expect_err "not a file tcx writes" "the manifest is ignored, with a warning"
checks=$((checks + 1))
[ "$(cat outside.txt 2>/dev/null)" = keep ] || fail "a file outside the tree was removed"
finish

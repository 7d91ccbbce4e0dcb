#!/bin/bash
# folder.sh - export-lib writes only into a directory that is missing,
# empty, or its own (it holds the manifest .tcx-export): into a folder of
# the user's that is not empty it exits 2 naming the folder and --force,
# before measuring anything, and leaves the folder byte for byte as it was;
# with --force it writes the library there, replacing the files of its
# names and keeping the others; the tree it wrote is written again without
# --force.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/lib.sh"
. "$here/common.sh"
data=$here/data

# snapshot DIR: every entry's path, mode and content digest
snapshot() {
	(cd "$1" && find . -print0 | sort -z | xargs -0 stat -c '%n %f %s' &&
		find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

# an application's folder of the user's, with a CMakeLists.txt of its own
mkdir -p app/src
printf 'project(app C)\nadd_executable(app src/app.c)\n' >app/CMakeLists.txt
printf 'int main(void) { return 0; }\n' >app/src/app.c
before=$(snapshot app)

run export-lib "$data/special.yaml" -o app --name tcxf --selector logic
expect_rc 2 "a folder of the user's"
expect_err "'app' is not empty and tcx export-lib did not write it .*--force" \
	"the folder and --force named"
checks=$((checks + 1))
[ "$(snapshot app)" = "$before" ] || fail "the user's folder changed"

# refused before the held-out sizes are measured (no device is opened)
run export-lib "$data/special.yaml" -o app --name tcxf --holdout 4,4,4,4 --device opencl:99
expect_rc 2 "refused before measuring"
expect_err "'app' is not empty" "the folder named, not the device"
checks=$((checks + 1))
[ "$(snapshot app)" = "$before" ] || fail "the user's folder changed (--holdout)"

# a hidden file is a file: a folder holding only .git is not empty
mkdir -p repo/.git && echo ref >repo/.git/HEAD
run export-lib "$data/special.yaml" -o repo --name tcxf --selector logic
expect_rc 2 "a folder holding only a hidden directory"
checks=$((checks + 1))
[ ! -e repo/CMakeLists.txt ] || fail "wrote into repo"

# an empty folder, and one that is missing, are written
mkdir empty
run export-lib "$data/special.yaml" -o empty --name tcxf --selector logic
expect_rc 0 "an empty folder"
run export-lib "$data/special.yaml" -o new/lib --name tcxf --selector logic
expect_rc 0 "a missing folder"

# --force: the library's files replace those of their names, the rest stays
run export-lib "$data/special.yaml" -o app --name tcxf --selector logic --force
expect_rc 0 "--force"
checks=$((checks + 4))
grep -q 'tcxf' app/CMakeLists.txt || fail "--force: CMakeLists.txt is the library's"
[ "$(cat app/src/app.c)" = 'int main(void) { return 0; }' ] || fail "--force: app.c kept"
[ -s app/include/tcxf.h ] || fail "--force: the header written"
grep -qx 'CMakeLists.txt' app/.tcx-export || fail "--force: the manifest lists the library's files"

# the tree tcx wrote is written again without --force, as is the empty one
echo notes >empty/notes.txt
run export-lib "$data/special.yaml" -o empty --name tcxf2 --selector logic
expect_rc 0 "a tree tcx wrote, with a file of the user's added"
checks=$((checks + 2))
[ -s empty/include/tcxf2.h ] && [ ! -e empty/include/tcxf.h ] || fail "re-export: the new tree"
[ "$(cat empty/notes.txt)" = notes ] || fail "re-export: the user's file kept"
run export-lib "$data/special.yaml" -o app --name tcxf --selector logic
expect_rc 0 "the folder written with --force, again"
finish

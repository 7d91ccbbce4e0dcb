#!/bin/bash
# fullfs.sh - a really full disk, without injection: a small tmpfs holds the
# earlier outputs of every writing command (the results store and its
# logic, a merged store, run's .npy, bench's JSON and SVG, logic export,
# import and eval outputs, an exported library, the peak cache) and is then
# filled up.  Each command (tune, results merge, run -o, bench -o and
# --plot, logic export, import and eval -o, export-lib, devices --measure)
# writing there exits 2 naming its file and "No space left on device" (or
# SQLite's "database or disk is full"), and leaves the earlier output
# whole; once there is room again, tune completes.  PoCL's cache stays off
# the full disk.  Mounting needs root or a user namespace: the test runs in
# a mount namespace of its own when unshare(1) can make one, and skips with
# the reason when no tmpfs can be mounted.
if [ -z "${TCX_FULLFS_NS:-}" ] && command -v unshare >/dev/null 2>&1; then
	export TCX_FULLFS_NS=1
	if unshare --mount --propagation private true 2>/dev/null; then
		exec unshare --mount --propagation private bash "$0" "$@"
	elif unshare --mount --map-root-user --propagation private true 2>/dev/null; then
		exec unshare --mount --map-root-user --propagation private bash "$0" "$@"
	fi
fi
. "$(dirname "$0")/lib.sh"
need_opencl
need_tools sqlite3 python3
export TCX_NO_KERNEL_CACHE=1 POCL_CACHE_DIR="$scratch/pocl"
tiny_config tiny.yaml
sed 's/Exact: \[ 32, 32, 16 \]/Exact: [ 64, 32, 16 ]/' tiny.yaml >more.yaml

mnt="$scratch/full"
mkdir "$mnt"
mount -t tmpfs -o size=16m tmpfs "$mnt" 2>"$scratch/.mount.err" ||
	skip "cannot mount a tmpfs: $(cat "$scratch/.mount.err")"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$scratch"' EXIT

# full ARGS...: run tcx ARGS (stdout discarded) on the full disk; the KiB
# limit writers_check passes first is fsize.sh's, not this test's
full() {
	shift
	"$TCX" "$@" >/dev/null 2>"$scratch/.err"
	rc=$?
	out=""
	err=$(cat "$scratch/.err")
}

writers_setup "$mnt/w"
# fill the disk: large blocks, then what is left page by page
dd if=/dev/zero of="$mnt/filler" bs=1M 2>/dev/null
dd if=/dev/zero of="$mnt/filler2" bs=4k 2>/dev/null
checks=$((checks + 1))
[ "$(df -P "$mnt" | awk 'NR == 2 { print $4 }')" = 0 ] ||
	fail "the disk is not full: $(df -P "$mnt" | tail -1)"

w_device_outputs=1
writers_check full "No space left on device|database or disk is full" "$mnt/w"

# room again: every earlier output is whole, and the same tune completes
rm -f "$mnt/filler" "$mnt/filler2"
writers_kept "$mnt/w"
run tune --db "$mnt/w/store.db" -o "$mnt/w/logic" more.yaml
expect_rc 0 "tune once the disk has room again"
expect_store_ok "$mnt/w/store.db"
checks=$((checks + 1))
[ "$(rows "$mnt/w/store.db")" = 6 ] || fail "the store holds $(rows "$mnt/w/store.db") measurements, not 6"
expect_no_temps "$mnt"
done_testing

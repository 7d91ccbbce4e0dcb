#!/bin/bash
# shipped.sh - what tcx installs under share/ stays loadable: every tuning
# config in share/tune and share/examples plans without error (--dry-run),
# and every logic file in share/logic loads, names its device and problem,
# and answers a lookup at its first tuned size with a solution of its own.
. "$(dirname "$0")/lib.sh"

src=${TCX_SOURCE_DIR:?set TCX_SOURCE_DIR}
for cfg in "$src"/share/tune/*.yaml "$src"/share/examples/*.yaml; do
	run tune "$cfg" --dry-run
	expect_rc 0 "tune --dry-run $(basename "$cfg")"
	expect_err "final:" "$(basename "$cfg") plans a final step"
done
n=0
for f in "$src"/share/logic/*.yaml; do
	n=$((n + 1))
	run logic show "$f"
	expect_rc 0 "logic show $(basename "$f")"
	# the file is named DEVICE_PROBLEM.yaml by tcx tune
	problem=$(printf '%s\n' "$out" | awk '$1 == "problem" { sub(":", "", $2); print $2 }')
	device=$(printf '%s\n' "$out" | awk '$1 == "device" { $1 = ""; sub(/^ /, ""); sub(/,.*/, ""); print }')
	case $(basename "$f" .yaml) in
	*_"$problem") ;;
	*) rc=1 fail "$(basename "$f") does not end in its problem type '$problem'" ;;
	esac
	[ -n "$device" ] || fail "$(basename "$f") names no device"
	sizes=$(printf '%s\n' "$out" | awk '/^exact sizes/ { getline; getline; print $1; exit }')
	run logic lookup --sizes "$sizes" "$f"
	expect_rc 0 "logic lookup $(basename "$f") $sizes"
done
checks=$((checks + 1))
[ "$n" -ge 10 ] || fail "expected at least 10 shipped logic files, found $n"
done_testing

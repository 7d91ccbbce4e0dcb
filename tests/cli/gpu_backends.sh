#!/bin/bash
# gpu_backends.sh - the cuda and hip backends seen from the command line:
# `tcx devices` works whether or not their libraries and GPUs are there,
# lists their devices or says why there are none (its JSON as its schema
# says), and a command asked for a device of a backend without one exits 4
# with that reason.
. "$(dirname "$0")/lib.sh"

has_lib() {
	ldconfig -p 2>/dev/null | grep -q "[[:space:]]$1 "
}

run devices
expect_rc 0 "tcx devices"
table=$out
run devices --format json
expect_rc 0 "tcx devices --format json"
json=$out
# and its form is the one share/schemas/devices.schema.json describes
py=$(command -v python3) && {
	printf '%s' "$json" > "$scratch/devices.json"
	checks=$((checks + 1))
	"$py" "$TCX_SOURCE_DIR/tests/docs/jsonschema.py" "$TCX_SOURCE_DIR/share/schemas/devices.schema.json" \
		"$scratch/devices.json" || fail "tcx devices --format json does not match its schema"
}

# The reason (or devices) of one backend, by what this machine has.
check_backend() {
	local b=$1 lib=$2 absent=$3 nodev=$4
	out=$table
	if printf '%s' "$table" | grep -Eq "^  $b: not built"; then
		echo "note: tcx was built without the $b backend"
		expect_out "^  $b: not built" "$b not built"
		return
	fi
	if ! has_lib "$lib"; then
		expect_out "^  $b: $absent" "$b without $lib"
	elif printf '%s' "$table" | grep -Eq "^$b:[0-9]"; then
		echo "note: $b devices present"
		expect_out "^$b:0 " "$b device listed"
		return
	else
		# found by ldconfig; the loader may still see another one
		expect_out "^  $b: ($nodev|$absent)" "$b without a device"
	fi
	# the JSON form carries the same reason
	out=$json
	expect_out "\"backend\": \"$b\"" "$b in the JSON unavailable list"
	# and asking for such a device is "no usable device" with the reason
	run validate 'C[ij]=A[ik]*B[kj]' --sizes 8,8,8 --device "$b:0"
	expect_rc 4 "--device $b:0 without one"
	expect_err "$b:0" "the device named"
	if ! has_lib "$lib"; then
		expect_err "$absent" "the reason given"
	else
		expect_err "$nodev|$absent" "the reason given"
	fi
}

check_backend cuda libcuda.so.1 "libcuda.so.1 not found \(no NVIDIA driver\)" \
	"(the NVIDIA driver sees no CUDA device|cannot initialize the CUDA driver|[0-9]+ CUDA devices?, but NVRTC)"
check_backend hip libamdhip64.so.5 "libamdhip64.so.5 not found" \
	"(the HIP runtime sees no AMD GPU|no AMD GPU \(/dev/kfd is absent\)|[0-9]+ HIP devices?, but hiprtc)"

done_testing

#!/bin/bash
# plan_models.sh - where the planner finds its model (tcx-plan(1), THE MODEL
# LEARNS): a model shipped with tcx ($TCX_MODELS_DIR here, share/tcx/models
# installed) is used when the user has fitted none; the user's own, in the
# cache, wins over it; TCX_MODEL=none leaves both for the built-in rates; a
# shipped model of another device is passed over, a damaged one is an
# error naming it.  `tcx plan` says which one it used, as text and as JSON.
# Plans for a described H200 (--for): no device is opened.
. "$(dirname "$0")/lib.sh"

export XDG_CACHE_HOME=$scratch/cache TCX_MODELS_DIR=$scratch/shipped
unset TCX_MODEL
mkdir -p "$XDG_CACHE_HOME/tcx/models" "$TCX_MODELS_DIR"
shipped=$TCX_MODELS_DIR/nvidia-h200-s.json
fitted=$XDG_CACHE_HOME/tcx/models/nvidia-h200-s.json

# model DEVICE MEASUREMENTS: a model file of the device, fitted to that many
# measurements of 3 problems (the count tells the files apart)
model() {
	printf '{"tcx_model": 1, "device": "%s", "type": "s", "measurements": %d, ' "$1" "$2"
	printf '"problems": 3, "params": {"simt_flops": 3e13, "mem_eff": 0.5}}\n'
}

plan() {
	run plan 'ik,kj->ij' --sizes i=512,j=512,k=256 --for h200 "$@"
}

# nothing fitted, nothing shipped: the built-in rates
plan
expect_rc 0 "no model anywhere"
expect_out '^model +built-in$' "no model anywhere: built-in"

# a shipped model, nothing fitted: the shipped one
model "NVIDIA H200" 7 >"$shipped"
plan
expect_rc 0 "a shipped model"
expect_out "^model +fitted to 7 measurements of 3 problems \($shipped, shipped with tcx\)$" \
	"the shipped model is used and named"
plan --format json
expect_rc 0 "a shipped model, json"
expect_out "\"model\": \"$shipped\"" "json: the shipped model's file"
expect_out '"model_origin": "shipped"' "json: model_origin shipped"
expect_out '"model_measurements": 7' "json: the shipped model's measurements"
# the other types of the device have no shipped model
plan --type d
expect_rc 0 "fp64: no model of that type"
expect_out '^model +built-in$' "fp64: built-in"

# the user's fitted model wins over the shipped one
model "NVIDIA H200" 9 >"$fitted"
plan
expect_rc 0 "fitted and shipped"
expect_out "^model +fitted to 9 measurements of 3 problems \($fitted, saved by tcx plan --fit\)$" \
	"the fitted model wins over the shipped one"
plan --format json
expect_out '"model_origin": "fitted"' "json: model_origin fitted"

# TCX_MODEL: a file wins over both, none disables both
model "NVIDIA H200" 11 >"$scratch/mine.json"
TCX_MODEL=$scratch/mine.json plan --format json
expect_rc 0 "TCX_MODEL a file"
expect_out '"model_origin": "TCX_MODEL"' "json: model_origin TCX_MODEL"
expect_out '"model_measurements": 11' "TCX_MODEL's file is used"
TCX_MODEL=$scratch/mine.json plan
expect_out "^model +fitted to 11 measurements of 3 problems \($scratch/mine.json, from TCX_MODEL\)$" \
	"TCX_MODEL's file is named as such"
TCX_MODEL=none plan
expect_rc 0 "TCX_MODEL=none"
expect_out '^model +built-in$' "TCX_MODEL=none: built-in over the fitted and the shipped model"
TCX_MODEL=none plan --format json
expect_out '"model": "built-in"' "TCX_MODEL=none, json: model built-in"
expect_out '"model_origin": "built-in"' "TCX_MODEL=none, json: model_origin built-in"

# a fitted model of another device (a file copied under the wrong name) is
# passed over for the shipped one, as a shipped one of another device is
model "NVIDIA H100 80GB HBM3" 13 >"$fitted"
plan
expect_rc 0 "a fitted model of another device"
expect_out "^model +fitted to 7 measurements .*, shipped with tcx\)$" \
	"a fitted model of another device: the shipped one"
rm "$fitted"
model "NVIDIA H100 80GB HBM3" 13 >"$shipped"
plan
expect_rc 0 "a shipped model of another device"
expect_out '^model +built-in$' "a shipped model of another device is passed over"

# a damaged or unreadable shipped model: exit 2, naming the file, no plan
printf '{"tcx_model": 1, "device": "NVIDIA H200", "type": "s", "params": {' >"$shipped"
plan
expect_rc 2 "a damaged shipped model"
expect_err "^tcx: model '$shipped': line 1:" "a damaged shipped model is named"
[ -z "$out" ] || fail "a damaged shipped model still printed a plan"
printf '{"tcx_model": 1, "device": "NVIDIA H200", "type": "s", "params": {"mem_eff": -1}}\n' \
	>"$shipped"
plan
expect_rc 2 "a shipped model with a negative rate"
expect_err "^tcx: model '$shipped': 'mem_eff' must be a number >= 0" "a bad rate is named"
rm "$shipped"
mkdir "$shipped"
plan
expect_rc 2 "a folder where the shipped model should be"
expect_err "'$shipped'" "the folder is named"
rmdir "$shipped"
# TCX_MODEL=none needs no readable model at all
printf 'not json\n' >"$shipped"
TCX_MODEL=none plan
expect_rc 0 "TCX_MODEL=none with a damaged shipped model"

done_testing

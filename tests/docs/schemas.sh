#!/bin/bash
# schemas.sh - the --format json output of parse, plan, sizes, devices, validate,
# results, tune (the summary, --explain and an expression's --dry-run) and logic (show, lookup, eval)
# validates against its schema in share/schemas/ (tests/docs/jsonschema.py,
# standard library only), over outputs that reach every optional part of the
# schemas; and the validator rejects documents that break them, so that
# this test can fail.  Most of it compiles no kernel: validate runs on the
# host reference device, where fp16 and complex types with --atol 0 give
# real (finite) mismatches.  Only a tuning summary and a measured logic eval
# need a device that runs kernels: tests/data/tune/tiny.yaml is tuned on the
# first OpenCL device (PoCL), and left out, saying so, where there is none.
# Needs TCX and TCX_SOURCE_DIR.
. "${TCX_SOURCE_DIR:?}/tests/cli/lib.sh"
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
schemas=$TCX_SOURCE_DIR/share/schemas
validator=$TCX_SOURCE_DIR/tests/docs/jsonschema.py

# check SCHEMA WHAT ARGS...: runs tcx ARGS, which must print JSON that
# validates against SCHEMA.json
check() {
	local schema=$1 what=$2
	shift 2
	run "$@"
	checks=$((checks + 1))
	printf '%s\n' "$out" >"$scratch/doc.json"
	if ! report=$($py "$validator" "$schemas/$schema.schema.json" "$scratch/doc.json" 2>&1); then
		fail "$what: output of 'tcx $*' does not validate against $schema.schema.json:
$(printf '%s\n' "$report" | head -20)"
	fi
}

# reject SCHEMA GOOD MUTATION...: each Python statement, applied to the
# document d read from GOOD (valid), must make it fail SCHEMA
reject() {
	local schema=$1 good=$2 mutation
	shift 2
	for mutation in "$@"; do
		checks=$((checks + 1))
		$py -c "import json, sys
d = json.load(open(sys.argv[1]))
$mutation
json.dump(d, open(sys.argv[2], 'w'))" "$good" "$scratch/bad.json"
		if $py "$validator" "$schemas/$schema.schema.json" "$scratch/bad.json" >/dev/null 2>&1; then
			fail "the validator accepts $schema output after: $mutation"
		fi
	done
}
# keep SCHEMA WHAT ARGS...: check, and keep the output as $scratch/good-SCHEMA.json
keep() {
	check "$@"
	cp "$scratch/doc.json" "$scratch/good-$1.json"
}

check parse "Tensile style" parse 'C[ijk]=A[ilk]*B[jlk]' --format json
check parse "einsum, implicit output" parse 'ij,jk' --format json
check parse "sizes, strides, alpha, beta, conj" parse \
	'C[ij] = alpha*Sum[k] conj(A[ik]) * B[jk] + beta*C[ij]' -t c --sizes 3,4,5 \
	--strides 'C=[1,3]' --format json
check parse "degenerate: a dot product" parse 'i,i->' --format json
check parse "degenerate: an outer product, fp16" parse 'C[ij]=A[i]*B[j]' -t h --sizes 7,9 \
	--format json
check plan "a merged problem on a described H100" plan \
	'C[a,b,c,i,j,k]=A[i,j,m,a]*B[m,k,b,c]' --sizes a=24,b=20,c=20,i=24,j=20,k=20,m=24 \
	--for h100 --format json
check plan "fp64 on a described H200" plan 'C[ij]=A[ik]*B[kj]' --sizes 5,7,3 \
	--for h200 -t d --format json
check plan "a transpose: a permute of A into C, the kernel otherwise" plan 'ijk->kji' \
	--sizes i=64,j=3,k=29 --for h100 --format json
check plan "an accuracy that lets plain tf32 in" plan 'C[ij]=A[ik]*B[kj]' \
	--sizes 4096,4096,4096 --for h200 --accuracy 1e-3 --format json
check sizes "a range and an exact size" sizes 'C[ijk]=A[ilk]*B[jlk]' \
	--range '[64,32,16,300],0,[2],[8]' --exact 5,6,7,8 --format json
check devices "the device list" devices --format json
check validate "a pass" validate 'C[ij]=A[ik]*B[kj]' --sizes 33,17,64 --device host --format json
check validate "real mismatches (fp16 stored, against the double reference)" validate \
	'C[ij]=A[ik]*B[kj]' --sizes 33,17,64 --device host --type h --atol 0 --rtol 0 --show 3 \
	--format json
check validate "complex mismatches, rtol/atol bound" validate 'ik,kj->ij' --sizes i=8,j=9,k=7 \
	--device host --type c --rtol 0 --atol 0 --format json
check validate "empty problems: no_kernel" validate 'ik,kj->ij' --sizes i=3,k=0,j=4 --beta 0.5 \
	--device host --format json
check validate "an accuracy missed" validate 'C[ij]=A[ik]*B[kj]' --sizes 33,17,64 --device host \
	--accuracy 1e-12 --show 2 --format json
check validate "an empty C" validate 'ik,kj->ij' --sizes i=0,k=5,j=4 --device host --format json
# a store holding what a tune on the host reference leaves (every candidate
# skipped, with its reason, and no times): results' optional parts
"$TCX" -q tune "$TCX_SOURCE_DIR/tests/data/tune/tiny.yaml" --device host --db "$scratch/host.db" \
	-o "$scratch/hl" >/dev/null 2>&1
check results "skipped measurements" results --db "$scratch/host.db" --format json
check results "an empty selection" results --db "$scratch/host.db" --status ok --format json
for f in "$TCX_SOURCE_DIR"/share/logic/*_Cij_Aik_Bkj_S.yaml; do
	check logic-lookup "an exact size of $(basename "$f")" logic lookup --sizes 4096,4096,4096 \
		"$f" --format json
	check logic-lookup "an untuned size of $(basename "$f")" logic lookup --sizes 7,1,1000 \
		"$f" --format json
done
# logic show: tcx's files (with a selector section of points) and Tensile's
# of each form (v3, v4, modern v5 with its items kept; range rules and none;
# per-solution Tensile states)
for f in "$TCX_SOURCE_DIR"/share/logic/*.yaml "$TCX_SOURCE_DIR"/tests/data/tensile/logic/*/*.yaml; do
	check logic "$(basename "$f")" logic show "$f" --format json
done
# logic eval --choices: what each selector picks, nothing measured
check logic-eval "choices of a tuned logic" logic eval --choices \
	"$TCX_SOURCE_DIR/share/logic/NVIDIA_H200_Cij_Aik_Bkj_S.yaml" \
	--holdout '7,1,1000;100,200,300;4096,4096,4096' --format json
check logic-eval "choices of Tensile's modern logic (no range rules)" logic eval --choices \
	"$TCX_SOURCE_DIR/tests/data/tensile/logic/tensile-develop/navi31_Cijk_Ailk_Bjlk_SB.yaml" \
	--holdout '64,64,2,64;1,1,1,1' --format json
# tune --explain: the store of skipped candidates above, and a problem the
# store has nothing on
check tune-explain "skipped candidates" tune "$TCX_SOURCE_DIR/tests/data/tune/tiny.yaml" \
	--device host --db "$scratch/host.db" --explain --format json
check tune-explain "nothing skipped" tune "$TCX_SOURCE_DIR/share/examples/sgemm.yaml" \
	--device host --db "$scratch/host.db" --explain --format json
# tune EXPR --dry-run: the space on the host reference's description, with a
# count and with seconds
check tune-space "an expression's space, a count" tune 'ilk,jlk->ijk' --sizes 16,8,2,8 \
	--device host --budget 5 --dry-run --format json
check tune-space "an expression's space over a range, seconds" tune 'C[ij]=A[ik]*B[kj]' \
	--range '[8,8,32],0,[4,4,16]' --device host --budget 30s --dry-run --format json
# On a device that runs kernels: the summary of a real tuning run, a measured
# evaluation of the logic it wrote, and that logic with the evaluation's
# default and report recorded (the report itself is logic eval's JSON)
if "$TCX" devices 2>/dev/null | grep -q '^opencl:'; then
	dev=$("$TCX" devices 2>/dev/null | sed -n 's/^\(opencl:[^ ]*\).*/\1/p' | head -1)
	keep tune "a tuning summary on $dev" -q tune "$TCX_SOURCE_DIR/tests/data/tune/tiny.yaml" \
		--device "$dev" --db "$scratch/pocl.db" -o "$scratch/logic" --format json
	logic=$(ls "$scratch"/logic/*.yaml 2>/dev/null | head -1)
	checks=$((checks + 1))
	if [ -z "$logic" ]; then
		fail "tcx tune wrote no logic into $scratch/logic"
	else
		check logic "a logic tcx tune wrote" logic show "$logic" --format json
		check validate "a transpose run as a permute on $dev" validate 'ij->ji' \
			--sizes i=7,j=5 --device "$dev" --format json
		check logic-eval "a measured evaluation on $dev" -q logic eval "$logic" --device "$dev" \
			--holdout '20,12,2,16;7,5,1,9' --min-time 0.01 -o "$scratch/evaluated.yaml" \
			--format json
		check logic "a logic with the evaluation recorded" logic show "$scratch/evaluated.yaml" \
			--format json
		$py -c "import json, sys
json.dump(json.load(open(sys.argv[1]))['selector']['report'], open(sys.argv[2], 'w'))" \
			"$scratch/doc.json" "$scratch/report.json" 2>/dev/null
		checks=$((checks + 1))
		$py "$validator" "$schemas/logic-eval.schema.json" "$scratch/report.json" >/dev/null 2>&1 ||
			fail "the report recorded in $scratch/evaluated.yaml does not validate against logic-eval.schema.json"
	fi
else
	echo "note: no OpenCL device; the tune summary and a measured logic eval are not checked"
fi
# (--init nan is left out: validate writes no got/want/error/bound for NaN
# values yet, where the schema asks for null)

# The validator must reject what breaks a schema: a missing required key, a
# key the schema lacks, a wrong type, a value outside an enum.
run parse 'C[ij]=A[ik]*B[jk]' --format json
printf '%s\n' "$out" >"$scratch/good.json"
reject parse "$scratch/good.json" \
	'del d["d0"]' \
	'd["surprise"] = 1' \
	'd["indices"][0]["id"] = "0"' \
	'd["notation"] = "fortran"' \
	'd["tensile"]["agrees"] = 1' \
	'd["indices"][1]["memory_position"]["A"] = -1'
keep logic "a logic file" logic show "$TCX_SOURCE_DIR/share/logic/NVIDIA_H200_Cij_Aik_Bkj_S.yaml" \
	--format json
reject logic "$scratch/good-logic.json" \
	'del d["created"]' \
	'd["tcx-logic"] = 2' \
	'd["problem"]["type"] = "q"' \
	'd["solutions"][0]["parameters"]["Tile"] = 4' \
	'd["solutions"][0]["parameters"]["UseLDS"] = 1' \
	'd["exact"][0]["sizes"] = [0, 1, 1]' \
	'd["range"] = [[-1, [[-1, [["x", 0]]]]]]' \
	'd["selector"]["points"][0]["gflops"][0] = "fast"'
keep logic-eval "choices" logic eval --choices \
	"$TCX_SOURCE_DIR/share/logic/NVIDIA_H200_Cij_Aik_Bkj_S.yaml" --holdout 100,200,300 --format json
reject logic-eval "$scratch/good-logic-eval.json" \
	'del d["sizes"][0]["choices"]["model"]' \
	'd["sizes"][0]["choices"]["logic"]["solution"] = -1' \
	'd["default"] = "fastest"' \
	'd["model"]["fit_sizes"] = 1.5' \
	'd["date"] = "yesterday"'
keep tune-explain "skipped candidates" tune "$TCX_SOURCE_DIR/tests/data/tune/tiny.yaml" \
	--device host --db "$scratch/host.db" --explain --format json
reject tune-explain "$scratch/good-tune-explain.json" \
	'del d["count"]' \
	'd["skipped_or_failed"][0]["status"] = "ok"' \
	'd["skipped_or_failed"][0]["sizes"] = "32,16,2,24"'
keep tune-space "an expression's space" tune 'ilk,jlk->ijk' --sizes 16,8,2,8 --device host \
	--budget 5 --dry-run --format json
reject tune-space "$scratch/good-tune-space.json" \
	'del d["candidates"]' \
	'd["candidates"] = []' \
	'd["candidates"][0]["move"] = "Magic"' \
	'd["budget_seconds"] = 0'
if [ -f "$scratch/good-tune.json" ]; then
	reject tune "$scratch/good-tune.json" \
		'del d["problems"]' \
		'd["complete"] = "yes"' \
		'd["measured"] = -1' \
		'd["problems"][0]["solutions"] = 0'
fi
# ... and refuses a schema keyword it does not implement
checks=$((checks + 1))
echo '{"type": "object", "oneOf": []}' >"$scratch/odd.schema.json"
$py "$validator" "$scratch/odd.schema.json" "$scratch/good.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "the validator does not refuse an unknown schema keyword"

done_testing

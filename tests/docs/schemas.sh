#!/bin/bash
# schemas.sh - the --format json output of parse, sizes, devices, validate,
# results and logic lookup
# validates against its schema in share/schemas/ (tests/docs/jsonschema.py,
# standard library only), over outputs that reach every optional part of the
# schemas; and the validator rejects documents that break them, so that
# this test can fail.  Nothing here compiles a kernel: validate runs on the
# host reference device, where fp16 and complex types with --atol 0 give
# real (finite) mismatches.
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

check parse "Tensile style" parse 'C[ijk]=A[ilk]*B[jlk]' --format json
check parse "einsum, implicit output" parse 'ij,jk' --format json
check parse "sizes, strides, alpha, beta, conj" parse \
	'C[ij] = alpha*Sum[k] conj(A[ik]) * B[jk] + beta*C[ij]' -t c --sizes 3,4,5 \
	--strides 'C=[1,3]' --format json
check parse "degenerate: a dot product" parse 'i,i->' --format json
check parse "degenerate: an outer product, fp16" parse 'C[ij]=A[i]*B[j]' -t h --sizes 7,9 \
	--format json
check sizes "a range and an exact size" sizes 'C[ijk]=A[ilk]*B[jlk]' \
	--range '[64,32,16,300],0,[2],[8]' --exact 5,6,7,8 --format json
check devices "the device list" devices --format json
check validate "a pass" validate 'C[ij]=A[ik]*B[kj]' --sizes 33,17,64 --device host --format json
check validate "real mismatches (fp16 stored, against the double reference)" validate \
	'C[ij]=A[ik]*B[kj]' --sizes 33,17,64 --device host --type h --atol 0 --rtol 0 --show 3 \
	--format json
check validate "complex mismatches, rtol/atol bound" validate 'ik,kj->ij' --sizes 9,8,7 \
	--device host --type c --rtol 0 --atol 0 --format json
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
# (--init nan is left out: validate writes no got/want/error/bound for NaN
# values yet, where the schema asks for null)

# The validator must reject what breaks a schema: a missing required key, a
# key the schema lacks, a wrong type, a value outside an enum.
run parse 'C[ij]=A[ik]*B[jk]' --format json
printf '%s\n' "$out" >"$scratch/good.json"
for mutation in \
	'del d["d0"]' \
	'd["surprise"] = 1' \
	'd["indices"][0]["id"] = "0"' \
	'd["notation"] = "fortran"' \
	'd["tensile"]["agrees"] = 1' \
	'd["indices"][1]["memory_position"]["A"] = -1'; do
	checks=$((checks + 1))
	$py -c "import json, sys
d = json.load(open(sys.argv[1]))
$mutation
json.dump(d, open(sys.argv[2], 'w'))" "$scratch/good.json" "$scratch/bad.json"
	if $py "$validator" "$schemas/parse.schema.json" "$scratch/bad.json" >/dev/null 2>&1; then
		fail "the validator accepts parse output after: $mutation"
	fi
done
# ... and refuses a schema keyword it does not implement
checks=$((checks + 1))
echo '{"type": "object", "oneOf": []}' >"$scratch/odd.schema.json"
$py "$validator" "$scratch/odd.schema.json" "$scratch/good.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "the validator does not refuse an unknown schema keyword"

done_testing

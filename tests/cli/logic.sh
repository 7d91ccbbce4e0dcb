#!/bin/bash
# logic.sh - tcx logic import and export through the binary: every Tensile
# logic file imports to tcx's format and exports to Tensile's v3 and v4
# forms with the same content (as `tcx logic show` prints it) and the same
# lookups; outputs are written atomically; bad uses fail with exit 2.
. "$(dirname "$0")/lib.sh"

logic="$TCX_TEST_DATA/tensile/logic"

# show's content, without the lines that name the file and its form, and
# what only modern Tensile files have (items 10 on, leading dimensions)
body() {
	"$TCX" logic show "$1" | grep -Ev '^(file|format|created|architecture|tile logic|perf metric) ' |
		sed 's/  (+[0-9,]*)$//'
}

for f in "$logic"/*/*.yaml; do
	name=$(basename "$f" .yaml)
	run logic import "$f" -o "$name.tcx.yaml"
	expect_rc 0 "import $name"
	expect_err "wrote $name.tcx.yaml: tcx's format" "import says what it wrote"
	checks=$((checks + 1))
	head -1 "$name.tcx.yaml" | grep -q '^tcx-logic: 1$' || fail "$name: not tcx's format"
	checks=$((checks + 1))
	[ "$(body "$f")" = "$(body "$name.tcx.yaml")" ] || fail "$name: import changed the content"
	for v in v3 v4; do
		run logic export --tensile=$v "$name.tcx.yaml" -o "$name.$v.yaml"
		expect_rc 0 "export $name as $v"
		checks=$((checks + 1))
		[ "$(body "$f")" = "$(body "$name.$v.yaml")" ] ||
			fail "$name: the Tensile $v export changed the content"
	done
	run logic show "$name.v4.yaml"
	expect_out 'format +Tensile v4 \(9 items\)' "$name: v4 form"
	run logic show "$name.v3.yaml"
	expect_out 'format +Tensile v3 \(8 items\)' "$name: v3 form"
done

# export without --tensile writes tcx's format; --tensile alone means v3
run logic export "$logic/tensile-v4.6.0/vega10_Cijk_Ailk_Bljk_SB.yaml"
expect_rc 0 "export in tcx's format"
expect_out '^tcx-logic: 1' "tcx's format by default"
run logic export --tensile vega10_Cijk_Ailk_Bljk_SB.tcx.yaml -o plain.yaml
run logic show plain.yaml
expect_out 'format +Tensile v3 \(8 items\)' "--tensile alone: v3"

# the v4 export of an imported v4 file is the file again, item by item
f="$logic/rocblas-5a8460f1/asm_lite_r9nano_Cijk_Ailk_Bjlk_DB.yaml"
run logic export --tensile=v4 asm_lite_r9nano_Cijk_Ailk_Bjlk_DB.tcx.yaml
expect_rc 0 "export to standard output"
expect_out '^- MinimumRequiredVersion: 4\.2\.0' "first item"
expect_out '^- r9nano' "schedule"
expect_out '^- gfx803' "architecture"
expect_out '^- \[Device 7300\]' "device names"
expect_out '^- \[2, 3, 0, 1\]' "index order"
expect_out '    KernelLanguage: Assembly' "Tensile's solution states kept"

# lookups agree between the original and the converted files
for sizes in 1,64,1,64 64,1,5,9 64,64,1,64 100000,3,2,1; do
	run logic lookup "$f" --sizes $sizes
	want=$(printf '%s' "$out" | grep '^solution')
	for g in asm_lite_r9nano_Cijk_Ailk_Bjlk_DB.tcx.yaml asm_lite_r9nano_Cijk_Ailk_Bjlk_DB.v3.yaml; do
		run logic lookup "$g" --sizes $sizes
		checks=$((checks + 1))
		[ "$(printf '%s' "$out" | grep '^solution')" = "$want" ] || fail "lookup $sizes in $g"
	done
done

# tcx's global options before the action as after it
run logic -q lookup "$f" --sizes 64,64,1,64
expect_rc 0 "-q before the action"
run logic --verbose lookup "$f" --sizes 64,64,1,64 -q
expect_rc 0 "--verbose before the action, -q after it"
expect_out '^solution' "the lookup, with global options around the action"

# atomic outputs: nothing but the outputs is left in the directory
checks=$((checks + 1))
[ -z "$(ls | grep -v '\.yaml$')" ] || fail "temporary files left: $(ls)"
run logic import "$f" -o no/such/dir/out.yaml
expect_rc 2 "an output in a missing directory"
expect_err "cannot create 'no/such/dir/out.yaml'" "named"

# SOURCE_DATE_EPOCH makes the output reproducible; the date is quoted text
SOURCE_DATE_EPOCH=86400 "$TCX" logic import "$f" >a.out 2>/dev/null
SOURCE_DATE_EPOCH=86400 "$TCX" logic import "$f" >b.out 2>/dev/null
checks=$((checks + 1))
cmp -s a.out b.out || fail "two imports differ"
checks=$((checks + 1))
grep -q '^  date: "1970-01-02T00:00:00Z"$' a.out || fail "created date: $(grep date: a.out)"

# usage errors
run logic export --tensile=v5 "$f"
expect_rc 2 "an unknown Tensile form"
expect_err "unknown Tensile form 'v5'" "named"
run logic import
expect_rc 2 "no file"
expect_err "missing the logic file" "said"
run logic
expect_rc 2 "no action"
run logic lookup "$f"
expect_rc 2 "lookup without sizes"
expect_err "needs --sizes" "said"
run logic show -o x.yaml "$f"
expect_rc 2 "--output with show"
expect_err "option '--output' does not apply to 'tcx logic show'" "said"
run logic --help
expect_rc 0 "help"
expect_out 'tcx logic lookup' "synopsis"
run logic show --format yaml "$f"
expect_rc 0 "show as YAML"
expect_out '^tcx-logic: 1' "tcx's format"
run logic show --format json "$f"
expect_out '"index_order": \[' "json"

done_testing

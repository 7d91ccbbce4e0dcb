#!/bin/bash
# options.sh - one meaning per option across commands: tcx's global options
# after the command as before it, -f as --format everywhere (tune's
# --force has no short option), and a long option's value never mistaken
# for a one-dash long option.
. "$(dirname "$0")/lib.sh"

gemm='C[ij]=A[ik]*B[kj]'
cp "$TCX_TEST_DATA/tune/tiny.yaml" .

# -v and --verbose after the command say what they say before it
run -v validate "$gemm" -d host --sizes 8,8,8
expect_rc 0 "-v before the command"
# (the seconds it reports differ from run to run)
secs() { printf '%s' "$1" | sed -E 's/[0-9]+\.[0-9]+ s/N s/g'; }
before=$(secs "$err")
expect_err 'device host' "-v before the command is verbose"
for v in -v --verbose; do
	run validate "$gemm" -d host --sizes 8,8,8 "$v"
	expect_rc 0 "$v after the command"
	checks=$((checks + 1))
	[ "$(secs "$err")" = "$before" ] || fail "$v after the command says what it says before"
done

# -q and --quiet after the command silence warnings as before it
printf 'ThreadTile: [2, 2]\nThreadTyle: [2, 2]\n' >sol.yaml
run validate "$gemm" -d host --sizes 8,8,8 --solution sol.yaml
expect_rc 0 "an unknown key of a solution file is a warning"
expect_err "unknown solution parameter 'ThreadTyle' ignored; did you mean 'ThreadTile'\\?" \
	"the warning names the parameter meant"
for q in -q --quiet; do
	run validate "$gemm" -d host --sizes 8,8,8 --solution sol.yaml "$q"
	expect_rc 0 "$q after the command"
	checks=$((checks + 1))
	[ -z "$err" ] || fail "$q after the command silences the warning"
done

# after "--" a -q is an argument, not the global option
run parse -- -q
expect_rc 2 "-q after -- is the expression"
expect_err "cannot parse expression '-q'" "the expression is -q"

# tune: -f is --format; --force is long only
run tune --dry-run -f json tiny.yaml
expect_rc 0 "tune -f json"
run tune --dry-run -f xml tiny.yaml
expect_rc 2 "tune -f xml"
expect_err "unknown format 'xml' \\(expected table or json\\)" "tune's -f is --format"
run tune --dry-run --force tiny.yaml
expect_rc 0 "tune --force still works"

# the value of an option is never taken for a one-dash long option
run bench "$gemm" --params -type
expect_rc 2 "a value that looks like -type"
expect_err 'give at least one --range or --exact' "--params took -type as its value"

done_testing

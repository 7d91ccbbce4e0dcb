#!/bin/bash
# run.sh TCX CASE - runs TCX with the arguments in CASE.args (one per line;
# '#' lines are comments; the line @empty stands for an empty argument) and
# compares exit status, standard output and standard error with CASE.out.
# TCX_BLESS=1 rewrites CASE.out instead: review the diff before committing.
# Paths of this build are replaced by placeholders so outputs are portable.
set -u
tcx=$1 case=$2
args=()
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	'#'*) continue ;;
	@empty) args+=("") ;;
	*) args+=("$line") ;;
	esac
done <"$case.args"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err" "$out.actual"' EXIT
"$tcx" "${args[@]}" >"$out" 2>"$err"
rc=$?
{
	echo "exit $rc"
	echo "--- stdout"
	cat "$out"
	echo "--- stderr"
	cat "$err"
} >"$out.actual"
if [ "${TCX_BLESS:-0}" = 1 ]; then
	cp "$out.actual" "$case.out"
	echo "blessed $case.out"
	exit 0
fi
if [ ! -e "$case.out" ]; then
	echo "no $case.out; run with TCX_BLESS=1 to create it. Output was:"
	cat "$out.actual"
	exit 1
fi
if ! diff -u "$case.out" "$out.actual"; then
	echo "output differs from $case.out (TCX_BLESS=1 rewrites it)"
	exit 1
fi

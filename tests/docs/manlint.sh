#!/bin/bash
# manlint.sh - every man page source in man/ is built, and every built page
# renders without a single warning: `mandoc -T lint` (messages of level
# warning and above), `groff -ww -man -z` and `man -l` (what users run).
# Needs TCX_SOURCE_DIR and TCX_MAN_DIR (the build's man/ directory);
# skipped when the pages are not built (no scdoc) or no checker is installed.
set -u
src=${TCX_SOURCE_DIR:?}/man
built=${TCX_MAN_DIR:?}
failures=0
checks=0

fail() {
	failures=$((failures + 1))
	echo "FAIL: $*"
}

if ! command -v scdoc >/dev/null && ! ls "$built"/*.[15] >/dev/null 2>&1; then
	echo "skipped: scdoc is not installed, so the man pages are not built"
	exit 77
fi
have=""
for tool in mandoc groff man; do
	command -v $tool >/dev/null && have="$have $tool"
done
[ -n "$have" ] || { echo "skipped: none of mandoc, groff, man is installed"; exit 77; }
echo "checking with:$have"

for scd in "$src"/*.scd; do
	name=$(basename "$scd" .scd)
	page=$built/$name
	checks=$((checks + 1))
	if [ ! -s "$page" ]; then
		fail "$name: not built from man/$name.scd"
		continue
	fi
	if command -v mandoc >/dev/null; then
		checks=$((checks + 1))
		msg=$(mandoc -T lint -W warning "$page" 2>&1)
		[ -z "$msg" ] || fail "$name: mandoc -T lint:
$msg"
	fi
	if command -v groff >/dev/null; then
		checks=$((checks + 1))
		msg=$(groff -ww -man -z -Tutf8 "$page" 2>&1)
		[ -z "$msg" ] || fail "$name: groff -ww:
$msg"
	fi
	if command -v man >/dev/null; then
		checks=$((checks + 1))
		text=$(MANWIDTH=80 man -l "$page" 2>"$built/.manlint.err")
		msg=$(cat "$built/.manlint.err")
		rm -f "$built/.manlint.err"
		[ -z "$msg" ] || fail "$name: man -l:
$msg"
		# the page has the sections every page has
		for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
			checks=$((checks + 1))
			printf '%s\n' "$text" | grep -qx "$section" || fail "$name: no $section section"
		done
	fi
done
echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]

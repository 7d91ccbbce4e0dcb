#!/bin/sh
# render-svg.sh - renders a tcx bench --plot SVG to PNG, to check that it
# opens in a real renderer: rsvg-convert (Debian librsvg2-bin; what the CTest
# uses) by default, or headless Chromium with --chromium (the browser's own
# engine; Debian's chromium is a large package, so CI does not install it).
#
# usage: bench/render-svg.sh [--chromium] IN.svg OUT.png
set -eu
engine=rsvg
if [ "${1:-}" = --chromium ]; then
	engine=chromium
	shift
fi
if [ $# -ne 2 ]; then
	echo "usage: bench/render-svg.sh [--chromium] IN.svg OUT.png" >&2
	exit 2
fi
in=$1 out=$2
case $engine in
rsvg)
	command -v rsvg-convert >/dev/null || { echo "render-svg: install librsvg2-bin" >&2; exit 3; }
	rsvg-convert "$in" -o "$out"
	;;
chromium)
	browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
	[ -n "$browser" ] || { echo "render-svg: no chromium found" >&2; exit 3; }
	# the plot's own size, from the root element's width and height
	w=$(sed -n 's/.*<svg[^>]* width="\([0-9]*\)".*/\1/p' "$in" | head -1)
	h=$(sed -n 's/.*<svg[^>]* height="\([0-9]*\)".*/\1/p' "$in" | head -1)
	abs=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
	"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
		--window-size="${w:-960},${h:-600}" --screenshot="$out" "file://$abs" >/dev/null 2>&1
	;;
esac
# a PNG starts with \211PNG
[ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "render-svg: no PNG written" >&2; exit 1; }
echo "$out"

#!/bin/bash
# probe.sh [FILE] - time given solutions of given problems on the GPU
# machine, one line each: what the planner's model should predict.  FILE
# (default bench/tccg/probe.txt) has lines "name | expression | exact sizes
# (index-id order) | params"; prints "name TFLOP/s solution" per line.  Run
# from the repository root with the bundle in .gpu/ (see gpu.sh).
set -u
cd "$(dirname "$0")/../.."
# shellcheck disable=SC1091
source .gpu/env.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$(mktemp -d)}
while IFS='|' read -r name expr exact params; do
	case $name in '#'* | '') continue ;; esac
	trim() { local t=${1#"${1%%[![:space:]]*}"}; printf '%s' "${t%"${t##*[![:space:]]}"}"; }
	name=$(trim "$name") expr=$(trim "$expr") exact=$(trim "$exact") params=$(trim "$params")
	args=()
	[ -n "$params" ] && args=(--params "$params")
	tcx bench "$expr" --exact "$exact" --device "${PROBE_DEVICE:-cuda:0}" --min-time 0.1 \
		--format json "${args[@]}" 2>&1 | python3 -c '
import json, sys
name = sys.argv[1]
text = sys.stdin.read()
try:
    r = json.loads(text)["results"][0]
    print("%-34s %8.2f  %s %s" % (name, (r.get("gflops") or 0) / 1e3, r.get("solution_name", ""),
                                 r.get("reason", "")))
except Exception:
    print("%-34s   failed  %s" % (name, text.strip().splitlines()[-1][:150] if text.strip() else "?"))
' "$name"
done <"${1:-bench/tccg/probe.txt}"

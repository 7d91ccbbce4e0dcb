#!/bin/bash
# bench_range.sh - the issue's acceptance run, exactly as CI runs it on PoCL:
# tcx bench 'C[ij]=A[ik]*B[jk]' --range '[64,64,1024],0,0' --format json,
# with the default timing method.  Checks the sizes it drove (64 to 1024 in
# steps of 64, j and k equal to i), that each was measured, and the output
# against share/schemas/bench.schema.json; never a timing.
. "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
need_opencl "$py"

"$TCX" bench 'C[ij]=A[ik]*B[jk]' --range '[64,64,1024],0,0' --format json >range.json 2>range.err
rc=$? out=$(head -c 2000 range.json) err=$(cat range.err)
expect_rc 0 "the acceptance run"
checks=$((checks + 1))
$py "$TCX_SOURCE_DIR/tests/docs/jsonschema.py" "$TCX_SOURCE_DIR/share/schemas/bench.schema.json" range.json ||
	fail "output conforms to the schema"
checks=$((checks + 1))
$py - range.json <<'PY' || fail "sizes and statuses"
import json, sys
d = json.load(open(sys.argv[1]))
sizes = [(r["sizes"]["i"], r["sizes"]["j"], r["sizes"]["k"]) for r in d["results"]]
want = [(n, n, n) for n in range(64, 1025, 64)]
if sizes != want:
    sys.exit("sizes %s, want %s" % (sizes, want))
bad = [r["sizes"] for r in d["results"]
       if r["status"] != "ok" or not r["median_ms"] > 0 or r["reps"] < 10 or not r["gflops"] > 0]
if bad:
    sys.exit("not measured: %s" % bad)
if d["timer"] != "wall" and d["device"].startswith("opencl") and "pthread" in d["device_name"]:
    sys.exit("PoCL's events are not trustworthy: the default timer must be wall")
PY

done_testing

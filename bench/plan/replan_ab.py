#!/usr/bin/env python3
"""replan_ab.py - two planners' untuned choices, interleaved, on the
cases of a selection.py run: for every row of ROWS.json, `tcx bench` (no
options) with OLD and with NEW, alternating which goes first, against the
row's exhaustive optimum.  Rows are written to OUT.json after every case
(resumable).  What a planner change does to the selection measurement
without tuning every space again.

    bench/plan/replan_ab.py ROWS.json OUT.json OLD NEW [--device ID]
                            [--min-time S] [--only REGEX] [--changed-only]

OLD and NEW are tcx binaries, each optionally with a model file to plan
with, TCX@MODEL.json (set as TCX_MODEL), and with variables of its
environment, TCX+NAME=VALUE (repeatable: TCX+TCX_TTM=0 plans without the
tensor-times-matrix and -vector kernels): the same binary with two models
or settings A/Bs a change without building anything.  ROWS.json is a
selection.py --json file, or a list of cases as `bench/tccg/cases.py
--format json` writes them (no exhaustive optimum: ratios of NEW to OLD
only).  --changed-only times only the cases whose plan (`tcx plan` on the
device) differs between OLD and NEW.
"""
import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selection  # noqa: E402


def summary(xs):
    xs = sorted(xs)
    return "mean %.3f  P10 %.3f  >=0.95: %d of %d" % (
        sum(xs) / len(xs), xs[max(0, int(math.ceil(0.1 * len(xs))) - 1)],
        sum(x >= 0.95 for x in xs), len(xs))


def planner(spec):
    """TCX[+NAME=VALUE...][@MODEL]: the binary and the environment it
    plans in."""
    spec, _, model = spec.partition("@")
    tcx, *sets = spec.split("+")
    env = dict(x.split("=", 1) for x in sets)
    if model:
        env["TCX_MODEL"] = model
    return tcx, (env or None)


def plan_of(spec, device, case):
    """The plan `tcx plan` makes on the device: solution and layout."""
    tcx, env = planner(spec)
    sizes = ",".join("%s=%d" % kv for kv in sorted(case["sizes"].items()))
    cmd = [tcx, "plan", case["tensile"], "--sizes", sizes, "--format", "json"]
    if device:
        cmd += ["--device", device]
    d = json.loads(selection.run(cmd, 60, env))
    return (d["choice"]["solution_name"], d.get("planned_as"),
            (d.get("tensor_times_matrix") or {}).get("chosen", False))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows")
    ap.add_argument("out")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--device", default=None)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--only", default=None, help="rows whose name matches")
    ap.add_argument("--changed-only", action="store_true",
                    help="time only the cases whose plan differs")
    args = ap.parse_args()
    rows = json.load(open(args.rows))
    res = json.load(open(args.out)) if os.path.exists(args.out) else []
    done = {r["name"] for r in res}
    for k, r in enumerate(rows):
        if r["name"] in done or (args.only and not re.search(args.only, r["name"])):
            continue
        case = {"name": r["name"], "tensile": r.get("expression") or r["tensile"],
                "sizes": r["sizes"]}
        if args.changed_only and plan_of(args.old, args.device, case) == \
                plan_of(args.new, args.device, case):
            continue
        exact = selection.exact_of(planner(args.new)[0], case)
        got = {}
        for tag in (("old", "new") if k % 2 == 0 else ("new", "old")):
            tcx, env = planner(getattr(args, tag))
            b = argparse.Namespace(tcx=tcx, device=args.device, min_time=args.min_time)
            try:
                g, rb = selection.bench(b, case, exact, [], env)
                got[tag] = {"gflops": g, "solution": rb.get("solution_name"),
                            "permuted": rb.get("plan", {}).get("permuted", [])}
            except RuntimeError as e:
                got[tag] = {"gflops": 0.0, "solution": str(e), "permuted": []}
        e = r.get("exhaustive_gflops") or 0
        out = dict(r)
        for tag in ("old", "new"):
            out.update({tag + "_" + f: v for f, v in got[tag].items()})
            out[tag + "_ratio"] = got[tag]["gflops"] / e if e > 0 else None
        res.append(out)
        print("%-34s exhaustive %9.1f  old %9.1f  new %9.1f  %s  %s" %
              (r["name"][:34], e, got["old"]["gflops"], got["new"]["gflops"],
               "%.3f -> %.3f" % (out["old_ratio"], out["new_ratio"]) if e > 0 else "",
               got["new"]["solution"][:60]), flush=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)
    if not res:
        print("no case to compare%s" % (" (no plan differs)" if args.changed_only else ""))
        return
    for tag in ("old", "new"):
        xs = [r[tag + "_ratio"] for r in res if r.get(tag + "_ratio") is not None]
        if xs:
            print("%s over the exhaustive optimum: %s" % (tag, summary(xs)))
    logs = [math.log(r["new_gflops"] / r["old_gflops"]) for r in res
            if r["old_gflops"] > 0 and r["new_gflops"] > 0]
    if logs:
        print("new over old, geometric mean: %.3f over %d cases" %
              (math.exp(sum(logs) / len(logs)), len(logs)))


if __name__ == "__main__":
    main()

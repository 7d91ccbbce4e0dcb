#!/usr/bin/env python3
"""replan_ab.py - two tcx binaries' untuned choices, interleaved, on the
cases of a selection.py run: for every row of ROWS.json, `tcx bench` (no
options) with OLD and with NEW, alternating which goes first, against the
row's exhaustive optimum.  Rows are written to OUT.json after every case
(resumable).  What a planner change does to the selection measurement
without tuning every space again.

    bench/plan/replan_ab.py ROWS.json OUT.json OLD_TCX NEW_TCX [--device ID]
                            [--min-time S]
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selection  # noqa: E402


def summary(xs):
    xs = sorted(xs)
    return "mean %.3f  P10 %.3f  >=0.95: %d of %d" % (
        sum(xs) / len(xs), xs[max(0, int(math.ceil(0.1 * len(xs))) - 1)],
        sum(x >= 0.95 for x in xs), len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows")
    ap.add_argument("out")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--device", default=None)
    ap.add_argument("--min-time", type=float, default=0.05)
    args = ap.parse_args()
    rows = json.load(open(args.rows))
    res = json.load(open(args.out)) if os.path.exists(args.out) else []
    done = {r["name"] for r in res}
    for k, r in enumerate(rows):
        if r["name"] in done:
            continue
        case = {"name": r["name"], "tensile": r["expression"], "sizes": r["sizes"]}
        exact = selection.exact_of(args.new, case)
        got = {}
        for tag in (("old", "new") if k % 2 == 0 else ("new", "old")):
            b = argparse.Namespace(tcx=getattr(args, tag), device=args.device,
                                   min_time=args.min_time)
            try:
                g, rb = selection.bench(b, case, exact, [])
                got[tag] = {"gflops": g, "solution": rb.get("solution_name"),
                            "permuted": rb.get("plan", {}).get("permuted", [])}
            except RuntimeError as e:
                got[tag] = {"gflops": 0.0, "solution": str(e), "permuted": []}
        e = r["exhaustive_gflops"]
        out = dict(r)
        for tag in ("old", "new"):
            out.update({tag + "_" + f: v for f, v in got[tag].items()})
            out[tag + "_ratio"] = got[tag]["gflops"] / e if e > 0 else None
        res.append(out)
        print("%-34s exhaustive %9.1f  old %9.1f  new %9.1f  %.3f -> %.3f" %
              (r["name"][:34], e, got["old"]["gflops"], got["new"]["gflops"],
               out["old_ratio"], out["new_ratio"]), flush=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)
    for tag in ("old", "new"):
        print("%s over the exhaustive optimum: %s" %
              (tag, summary([r[tag + "_ratio"] for r in res])))
    logs = [math.log(r["new_gflops"] / r["old_gflops"]) for r in res
            if r["old_gflops"] > 0 and r["new_gflops"] > 0]
    print("new over old, geometric mean: %.3f" % math.exp(sum(logs) / len(logs)))


if __name__ == "__main__":
    main()

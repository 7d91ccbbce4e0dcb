#!/usr/bin/env python3
"""sweep.py - tcx bench over a grid of cases and parameter sets, side by side:
what the planner's choice leaves on the table, and which way its model is
wrong.  Each row is a case (TCCG's, from cases.py, or one given as
NAME|EXPR|SIZES), each column a parameter set ("plan" = no --params, the
planner's choice); cells are TFLOP/s of `tcx bench --format json`, "-" where
the set does not apply or the bench failed (the reason is printed below).

    bench/tccg/sweep.py [--tcx PATH] [--device ID] [--only REGEX] [--mib N]
                        [--case NAME|EXPR|SIZES]... [--params SET]... [--json FILE]

SIZES are named (a=24,b=20,...).  A SET is a --params string; a case may
add its own parameters with {NAME:params} appended to a SET's text, e.g.
--params 'ThreadTile=[4,4]{ccsd_t-abcijk-ijmc-mkab:TileIndexB=ab}'.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as tccg  # noqa: E402
from run import tcx_bench  # noqa: E402


def split_set(text, name):
    """A SET's parameters for case `name`: the common part, plus the case's own."""
    extra = dict(re.findall(r"\{([^:}]+):([^}]*)\}", text))
    base = re.sub(r"\{[^}]*\}", "", text).strip(",")
    own = extra.get(name, "")
    return ",".join(x for x in (base, own) if x)


def bench(args, case, params):
    r, why = tcx_bench(args, case["expr"], case["sizes"],
                       extra=[] if params == "plan" else ["--params", params])
    if not r:
        return None, why[:100]
    return r["gflops"] / 1e3, r.get("solution_name", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcx", default="tcx")
    ap.add_argument("--device", default=None)
    ap.add_argument("--only", default=None, help="TCCG cases whose name matches")
    ap.add_argument("--mib", type=float, default=200.0,
                    help="TCCG's size rule: the largest tensor's MiB")
    ap.add_argument("--case", action="append", default=[], help="NAME|EXPR|SIZES")
    ap.add_argument("--params", action="append", default=[], help="a parameter set")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json", default=None, help="write every cell here too")
    args = ap.parse_args()

    cases = []
    if args.only:
        cases = [{"name": c["name"], "expr": c["tensile"], "sizes": c["sizes"]}
                 for c in (tccg.describe(g, n, fixed, args.mib, "s")
                           for g, cl, fixed in tccg.GROUPS for n in cl)
                 if re.search(args.only, c["name"])]
    for text in args.case:
        name, expr, sizes = text.split("|")
        cases.append({"name": name, "expr": expr,
                      "sizes": {k: int(v) for k, v in
                                (x.split("=") for x in sizes.split(","))}})
    sets = ["plan"] + args.params
    cells, notes = {}, []
    print("| case | " + " | ".join("p%d" % k for k in range(len(sets))) + " |")
    print("|---|" + "---:|" * len(sets))
    for c in cases:
        row = []
        for k, s in enumerate(sets):
            params = s if s == "plan" else split_set(s, c["name"])
            tf, why = bench(args, c, params)
            cells["%s|%d" % (c["name"], k)] = {"tflops": tf, "params": params, "note": why}
            row.append("%.2f" % tf if tf is not None else "-")
            if tf is None:
                notes.append("%s p%d: %s" % (c["name"], k, why))
        print("| %s | %s |" % (c["name"], " | ".join(row)), flush=True)
    print()
    for k, s in enumerate(sets):
        print("p%d = %s" % (k, s))
    for n in notes:
        print("note: " + n)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(cells, f, indent=1)


if __name__ == "__main__":
    main()

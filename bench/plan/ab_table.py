#!/usr/bin/env python3
"""ab_table.py - a replan_ab.py result as a Markdown table: each case's
GFLOP/s before (OLD) and after (NEW), their ratio, and against the row's
exhaustive optimum where there is one, then the geometric mean.

    bench/plan/ab_table.py OUT.json [--no-exhaustive]

--no-exhaustive leaves the optimum out (an A/B run on another device
than the one the optimum was measured on).
"""
import argparse
import json
import math


def short(name):
    """A solution name without the fields every planned solution shares."""
    return name.replace("_PGR1_PLR1_EB", "").replace("_NLC1x1_LT1", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--no-exhaustive", action="store_true")
    args = ap.parse_args()
    rows = json.load(open(args.out))
    exh = not args.no_exhaustive
    print("| case |%s before | after |%s after / before | after's solution |" %
          (" exhaustive |" if exh else "", " before / exh. | after / exh. |" if exh else ""))
    print("|---|%s---:|---:|%s---:|---|" % ("---:|" if exh else "", "---:|---:|" if exh else ""))
    logs = []
    for r in rows:
        e = r.get("exhaustive_gflops") or 0 if exh else 0
        o, n = r["old_gflops"], r["new_gflops"]
        if o > 0 and n > 0:
            logs.append(math.log(n / o))
        cells = [r["name"]]
        if exh:
            cells.append("%.0f" % e if e else "-")
        cells += ["%.0f" % o, "%.0f" % n]
        if exh:
            cells += ["%.3f" % (o / e) if e else "-", "%.3f" % (n / e) if e else "-"]
        cells += ["%.2f" % (n / o) if o > 0 else "-", short(r.get("new_solution", ""))]
        print("| " + " | ".join(cells) + " |")
    if logs:
        print("\n%d cases; after over before, geometric mean %.3f; faster by more than 5%%: %d, "
              "slower by more than 5%%: %d" %
              (len(logs), math.exp(sum(logs) / len(logs)), sum(x > math.log(1.05) for x in logs),
               sum(x < -math.log(1.05) for x in logs)))


if __name__ == "__main__":
    main()

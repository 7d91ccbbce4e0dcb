#!/usr/bin/env python3
"""configs.py - how each kernel configuration fares across the problems of
a results store: for every problem, each measured candidate's time over the
problem's fastest, summarised per configuration (work-item tile and vector
width, DepthU, TileIndex, GlobalSplitU) as the median and the geometric
mean of that slowdown.  What the planner's per-configuration rates are
read from (lib/plan/planner.c, plan_device_defaults).

    bench/plan/configs.py STORE [--device NAME] [--by tile|vw|du|ti|gsu]
"""
import argparse
import collections
import json
import math
import sqlite3
import statistics


def key(d, by):
    tt = "TT%dx%d" % tuple(d["ThreadTile"])
    return {"tile": "%s VW%d" % (tt, d["VectorWidth"]),
            "vw": "VW%d" % d["VectorWidth"],
            "du": "DepthU %d" % d["DepthU"],
            "ti": "TileIndex" if "TileIndexA" in d or "TileIndexB" in d else "none",
            "gsu": "GlobalSplitU %d" % d["GlobalSplitU"]}[by]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store")
    ap.add_argument("--device", default=None, help="only this device's rows")
    ap.add_argument("--by", default="tile", choices=["tile", "vw", "du", "ti", "gsu"])
    args = ap.parse_args()
    con = sqlite3.connect(args.store)
    q = "select device, problem, sizes, solution, median_ms from measurements where status = 0"
    probs = collections.defaultdict(list)
    for dev, prob, sizes, sol, ms in con.execute(q):
        if args.device and dev != args.device:
            continue
        probs[(dev, prob, sizes)].append((ms, json.loads(sol)))
    slow = collections.defaultdict(list)
    for rows in probs.values():
        best = min(ms for ms, _ in rows)
        for ms, d in rows:
            slow[key(d, args.by)].append(math.log(ms / best))
    print("%d problems, %d measurements" % (len(probs), sum(len(v) for v in probs.values())))
    print("%-18s %6s %8s %8s" % ("configuration", "rows", "median", "geomean"))
    for k, xs in sorted(slow.items(), key=lambda kv: statistics.median(kv[1])):
        print("%-18s %6d %8.2f %8.2f" % (k, len(xs), math.exp(statistics.median(xs)),
                                        math.exp(sum(xs) / len(xs))))


if __name__ == "__main__":
    main()

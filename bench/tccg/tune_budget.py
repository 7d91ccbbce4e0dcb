#!/usr/bin/env python3
"""tune_budget.py - how close `tcx tune EXPR --budget N` comes to the best
solution of the space it searches, and in how few evaluations, on the TCCG
cases (bench/tccg/cases.py).

    bench/tccg/tune_budget.py [--tcx PATH] [--device ID] [--mib N] [--only REGEX]
                              [--share F] [--min-time S] [-j N] [--json FILE]

For every case: the space tcx builds for it (`tcx tune --dry-run --format
json`), then every candidate of it measured (`--strategy exhaustive`) into
a results store, then the model strategy with a budget of --share of the
space (default 0.1, at least one candidate) on the same store, which reads
the candidates it would measure, in the model's order, from there.  Each
run's winner is the best GFLOP/s of the logic it writes (its exact entry);
the table gives both, their ratio and the evaluations each took, and the
last lines the mean and the least ratio and the cases within 5%.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as tccg  # noqa: E402


def run(cmd, timeout=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if p.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd[:3]),
                                       (p.stderr.strip().splitlines() or ["exit %d" %
                                                                          p.returncode])[-1]))
    return p.stdout


def index_order(tcx, expr):
    """Index names in tcx's index-number order (what --exact takes)."""
    out = run([tcx, "parse", expr, "--format", "json"])
    return [x["name"] for x in sorted(json.loads(out)["indices"], key=lambda x: x["id"])]


def best_gflops(tcx, folder):
    """The best GFLOP/s of the exact entries of the logic written there."""
    files = [os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".yaml")]
    if not files:
        raise RuntimeError("no logic in " + folder)
    d = json.loads(run([tcx, "logic", "show", files[0], "--format", "json"]))
    return max(e["gflops"] for e in d["exact"])


def one(args, case, work):
    order = index_order(args.tcx, case["tensile"])
    exact = ",".join(str(case["sizes"][n]) for n in order)
    base = [args.tcx, "-q", "tune", case["tensile"], "--exact", exact]
    if args.device:
        base += ["--device", args.device]
    if args.min_time is not None:
        base += ["--min-time", str(args.min_time)]
    space = json.loads(run(base + ["--dry-run", "--format", "json"]))
    if args.jobs > 1:
        base += ["-j", str(args.jobs)]
    n = len(space["candidates"])
    budget = max(1, int(math.floor(args.share * n)))
    db = os.path.join(work, case["name"] + ".db")
    whole = os.path.join(work, case["name"] + "-exhaustive")
    model = os.path.join(work, case["name"] + "-model")
    run(base + ["--strategy", "exhaustive", "--db", db, "-o", whole])
    run(base + ["--budget", str(budget), "--db", db, "-o", model])
    e, m = best_gflops(args.tcx, whole), best_gflops(args.tcx, model)
    return {"name": case["name"], "expression": case["tensile"], "space": n,
            "budget": budget, "exhaustive_gflops": e, "budget_gflops": m,
            "ratio": m / e if e > 0 else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcx", default="build/cmd/tcx")
    ap.add_argument("--device", default=None)
    ap.add_argument("--mib", type=float, default=200.0,
                    help="MiB of the largest tensor (TCCG: 200)")
    ap.add_argument("--only", default=None, help="regex on the case name")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="compile kernels on this many host threads (tcx tune -j)")
    ap.add_argument("--share", type=float, default=0.1,
                    help="the budget as a share of the space (default 0.1)")
    ap.add_argument("--min-time", type=float, default=None,
                    help="seconds of timed launches per measurement (tcx tune's default)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    args = ap.parse_args()
    cases = [tccg.describe(g, c, fixed, args.mib, "s")
             for g, cs, fixed in tccg.GROUPS for c in cs]
    if args.only:
        cases = [x for x in cases if re.search(args.only, x["name"])]
    rows = []
    print("%-24s %6s %6s %12s %12s %6s" % ("case", "space", "budget", "exhaustive",
                                           "budget", "ratio"))
    with tempfile.TemporaryDirectory() as work:
        for case in cases:
            try:
                r = one(args, case, work)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print("%-24s failed: %s" % (case["name"], e))
                continue
            rows.append(r)
            print("%-24s %6d %6d %12.2f %12.2f %6.3f" % (r["name"], r["space"], r["budget"],
                                                         r["exhaustive_gflops"],
                                                         r["budget_gflops"], r["ratio"]),
                  flush=True)
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    if ratios:
        print("mean ratio %.3f, least %.3f; %d of %d cases within 5%% of the exhaustive "
              "optimum with %.0f%% of the evaluations" %
              (sum(ratios) / len(ratios), min(ratios), sum(x >= 0.95 for x in ratios),
               len(ratios), 100 * args.share))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()

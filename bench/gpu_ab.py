#!/usr/bin/env python3
"""gpu_ab.py - two tcx binaries side by side on the cases of
bench/gpu_cases.txt, each case timed by both in turn (A B A B), with the
committed logic of this device (share/logic/<GPU name>_<problem>.yaml) or
the case's own parameters.  Prints TFLOP/s of each and B over A: what a
change does to the cases tcx already wins.

    bench/gpu_ab.py --a OLD/tcx --b NEW/tcx [--device cuda:0] [--rounds 2]
                    [--cases bench/gpu_cases.txt] [--only REGEX]
"""
import argparse
import glob
import json
import re
import subprocess
import sys


def problem_type(tcx, expr, dtype):
    out = subprocess.run([tcx, "parse", expr, "--type", dtype, "--format", "json"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(out)["problem_type"]


def bench(tcx, expr, dtype, sizes, sol, device):
    cmd = [tcx, "bench", expr, "--type", dtype, "--exact", sizes, "--device", device,
           "--format", "json"] + sol
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    r = json.loads(p.stdout)["results"][0]
    return (r["gflops"] / 1e3 if r.get("gflops") else None), r.get("solution_name", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default="bench/gpu_cases.txt")
    ap.add_argument("--only", default=None)
    ap.add_argument("--gpu-name", default=None, help="the logic files' prefix")
    args = ap.parse_args()
    gpu = args.gpu_name or subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], stdout=subprocess.PIPE,
        text=True).stdout.splitlines()[0].strip().replace(" ", "_")
    print("| case | A TFLOP/s | B TFLOP/s | B/A | solution |")
    print("|---|---:|---:|---:|---|")
    for line in open(args.cases):
        if not line.strip() or line.startswith("#"):
            continue
        name, expr, dtype, sizes, _torch, how = [x.strip() for x in line.split("|")]
        if args.only and not re.search(args.only, name):
            continue
        if how.startswith("params:"):
            sol = ["--params", how[len("params:"):].strip()]
        else:
            files = glob.glob("share/logic/%s_%s.yaml" % (gpu, problem_type(args.a, expr, dtype)))
            sol = ["--logic", files[0]] if files else []
        best = {"a": 0.0, "b": 0.0}
        note = ""
        for _ in range(args.rounds):
            for k in ("a", "b"):
                v, note_k = bench(getattr(args, k), expr, dtype, sizes, sol, args.device)
                if v:
                    best[k] = max(best[k], v)
                note = note_k
        ratio = best["b"] / best["a"] if best["a"] and best["b"] else float("nan")
        print("| %s | %.1f | %.1f | %.3f | %s |" % (name, best["a"], best["b"], ratio, note))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""gpu_report.py - the "Speed on Hopper" table: each case of gpu_cases.txt
timed through tcx (the logic tuned on each backend, given parameters, or
the planner's untuned choice), validated at that size in the same run,
next to PyTorch's time from torch_ref.py's JSON and, with --cutensor,
cuTENSOR's from cutbench (bench/cutensor_cases.py makes its input), with
the ratio to the better of them.  Prints markdown; writes gpu-bench.json
under --out.

usage: gpu_report.py --cases FILE --torch TORCH.json --logic DIR --out DIR
                     --devices DEV... [--tcx tcx] [--cutensor CUTBENCH.txt]"""
import argparse
import glob
import json
import os
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def tensile_name(tcx, expr, dtype):
    rc, out, _ = run([tcx, "parse", "--format", "json", "--type", dtype, expr])
    return json.loads(out)["problem_type"] if rc == 0 else None


def find_logic(logic_dir, dev, name):
    for f in sorted(glob.glob(os.path.join(logic_dir, dev.replace(":", "_"), "*.yaml"))):
        if os.path.basename(f).endswith("_" + name + ".yaml"):
            return f
    return None


def read_cutbench(path):
    """cutbench's lines 'name compute jit|nojit TFLOP/s median_ms plan_ms'
    as {name: (TFLOP/s, compute)}; the faster of jit and nojit."""
    got = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return got
    for ln in lines:
        f = ln.split()
        if len(f) < 4:
            continue
        try:
            tfl = float(f[3])
        except ValueError:
            continue
        if f[0] not in got or tfl > got[f[0]][0]:
            got[f[0]] = (tfl, f[1])
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--logic", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", nargs="+", required=True)
    ap.add_argument("--tcx", default="tcx")
    ap.add_argument("--cutensor", help="cutbench's output for cutensor_cases.py's lines")
    a = ap.parse_args()
    cut = read_cutbench(a.cutensor) if a.cutensor else {}
    try:
        ref = {c["name"]: c for c in json.load(open(a.torch))["cases"]}
    except (OSError, ValueError, KeyError):
        ref = {}
    rows = []
    for line in open(a.cases):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, expr, dtype, sizes, tref, cfg = [x.strip() for x in line.split("|")]
        pname = tensile_name(a.tcx, expr, dtype)
        row = {"case": name, "expression": expr, "sizes": sizes,
               "torch_tflops": ref.get(tref, {}).get("tflops"),
               "torch_err": ref.get(tref, {}).get("max_err"),
               "cutensor_tflops": cut.get(name, (None, None))[0],
               "cutensor_compute": cut.get(name, (None, None))[1], "tcx": {}}
        for dev in a.devices:
            # the last field: a tuning config (the logic it made decides),
            # or "params: ..." for a solution given outright
            if cfg.startswith("params:"):
                logic = None
                how = ["--params", cfg[len("params:"):].strip()]
            elif cfg == "planner":
                logic, how = None, []
            else:
                logic = find_logic(a.logic, dev, pname) if pname else None
                how = ["--logic", logic] if logic else []
            rc, out, err = run([a.tcx, "bench", expr, "--exact", sizes, "--type", dtype,
                                "--device", dev, "--min-time", "0.5", "--format", "json"] + how)
            tfl = None
            sol = None
            if rc == 0:
                r = json.loads(out)["results"][0]
                tfl = (r["gflops"] or 0) / 1e3 or None
                sol = r.get("solution_name") or r.get("solution")
            vrc, vout, verr = run([a.tcx, "validate", expr, "--sizes", sizes, "--type", dtype,
                                   "--device", dev, "--sample", "200000"] + how)
            maxerr = next((ln.split()[2] for ln in vout.splitlines()
                           if ln.startswith("max error")), None)
            row["tcx"][dev] = {"tflops": tfl, "valid": vrc == 0, "logic": logic,
                               "solution": sol, "max_err": maxerr,
                               "error": (err.strip().splitlines() or [""])[-1] if rc else None,
                               "validate": (vout.strip().splitlines() or [""])[-1]}
        rows.append(row)
    json.dump(rows, open(os.path.join(a.out, "gpu-bench.json"), "w"), indent=1)
    devs = a.devices
    anchors = "PyTorch" + (" and cuTENSOR" if cut else "")
    print("| case | sizes | PyTorch TFLOP/s | " + ("cuTENSOR TFLOP/s | " if cut else "") +
          " | ".join("tcx %s" % d for d in devs) +
          " | best tcx / better of %s | validated |" % anchors)
    print("|---|---|---:|" + ("---:|" if cut else "") + "---:|" * len(devs) + "---:|---|")
    for r in rows:
        vals = [r["tcx"][d]["tflops"] for d in devs]
        best = max([v for v in vals if v] or [0])
        t = r["torch_tflops"]
        c = r["cutensor_tflops"]
        anchor = max([x for x in (t, c) if x] or [0])
        ratio = "%.2f" % (best / anchor) if anchor and best else "-"
        ok = all(r["tcx"][d]["valid"] for d in devs if r["tcx"][d]["tflops"])
        cells = [r["case"], r["sizes"], "%.1f" % t if t else "-"]
        if cut:
            cells.append("%.1f (%s)" % (c, r["cutensor_compute"]) if c else "-")
        cells += ["%.1f" % v if v else "-" for v in vals]
        cells += [ratio, "yes" if ok else "NO"]
        print("| " + " | ".join(cells) + " |")
    # which solution each timed, and the largest error against the fp64
    # reference next to PyTorch's own where torch_ref.py measured it
    print()
    print("| case | device | solution | tcx max error | PyTorch max error |")
    print("|---|---|---|---:|---:|")
    for r in rows:
        for d in devs:
            x = r["tcx"][d]
            if x["tflops"]:
                print("| %s | %s | %s | %s | %s |" % (
                    r["case"], d, x["solution"] or "-", x["max_err"] or "-",
                    "%.3g" % r["torch_err"] if r["torch_err"] is not None else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""run.py - the TCCG benchmark (bench/tccg/cases.py): tcx against the
tools users would otherwise use, side by side in one run, one table.

    bench/tccg/run.py [--tcx PATH] [--device ID] [--mib N] [--only REGEX]
                      [--anchors numpy,tblis | torch,cutensor | simt] [--cutbench FILE]
                      [--peak-tflops X --bw-tbs Y] [--report FILE] [--json FILE]

For every case: tcx's own choice (`tcx bench` with no parameters, plus
any --tcx-args), checked by `tcx validate --sample` at the same sizes
(against the host reference in fp64), then each anchor on the same
problem with random fp32 data:
  numpy     numpy.einsum(optimize=True)             (CPU)
  tblis     pytblis.einsum                          (CPU; pip install pytblis)
  torch     torch.einsum on CUDA, TF32 off          (GPU)
  cutensor  the best line per case of a cutbench output file (--cutbench),
            made by ../shared/gpu/cutensor's cutbench from `cases.py
            --format cutbench` (GPU)
  simt      tcx itself with TCX_PLANNER=simt: the planner's best without
            the tensor cores for fp32 (the baseline of --accuracy; pass
            --tcx-args '--accuracy E' for the other side)
With --accuracy in --tcx-args the note gives the arithmetic bench chose and
the error it measured.
The table gives TFLOP/s (GFLOP/s on CPUs) of each, tcx over the best
anchor, and, given --peak-tflops and --bw-tbs, the roofline bound
min(peak, FLOPs / minimum bytes x bandwidth) and tcx's fraction of it.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as tccg  # noqa: E402


def run(cmd, timeout, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def index_order(tcx, expr):
    """Index names in tcx's index-number order (what --exact takes)."""
    rc, out, err = run([tcx, "parse", expr, "--format", "json"], 60)
    if rc:
        raise RuntimeError(err.strip())
    return [x["name"] for x in sorted(json.loads(out)["indices"], key=lambda x: x["id"])]


def tcx_bench(args, expr, sizes, order=None, extra=(), env=None):
    """`tcx bench` of expr at sizes (by index name), --format json, with
    args' device and timeout: its first result row and "", or None and why
    not (the status, "timed out", or the last line of tcx's error)."""
    order = order or index_order(args.tcx, expr)
    exact = ",".join(str(sizes[n]) for n in order)
    dev = ["--device", args.device] if args.device else []
    try:
        rc, out, err = run([args.tcx, "bench", expr, "--exact", exact, "--format", "json"] +
                           dev + list(extra), args.timeout, env)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    if rc:
        return None, (err.strip().splitlines() or ["exit %d" % rc])[-1]
    r = json.loads(out)["results"][0]
    if r.get("status") != "ok":
        return None, r.get("status", "failed")
    return r, ""


def tcx_case(args, case):
    order = index_order(args.tcx, case["tensile"])
    named = ",".join("%s=%d" % (n, case["sizes"][n]) for n in order)
    dev = ["--device", args.device] if args.device else []
    res = {"ok": False, "gflops": None, "valid": None, "note": ""}
    r, why = tcx_bench(args, case["tensile"], case["sizes"], order, args.tcx_args)
    if why == "timed out":
        res["note"] = "bench timed out"
        return res
    if r:
        res.update(ok=True, gflops=r["gflops"], ms=r["median_ms"],
                   solution=r.get("solution_name", ""))
        if "arithmetic" in r:
            res.update(arithmetic=r["arithmetic"], error=r.get("measured_error"))
            res["note"] = "%s, error %.2g" % (r["arithmetic"], r.get("measured_error") or 0)
    else:
        res["note"] = why[:120]
    if args.validate:
        try:
            rc, out, err = run([args.tcx, "validate", case["tensile"], "--sizes", named,
                                "--sample", str(args.validate), "--format", "json"] + dev +
                               args.tcx_args, args.timeout)
            res["valid"] = rc == 0
            if rc not in (0, 1):
                res["note"] += " validate: " + (err.strip().splitlines() or ["?"])[-1][:80]
        except subprocess.TimeoutExpired:
            res["valid"] = False
            res["note"] += " validate timed out"
    return res


def anchor_simt(args, case):
    """tcx's own best without the tensor cores for fp32 (TCX_PLANNER=simt)."""
    r, why = tcx_bench(args, case["tensile"], case["sizes"],
                       env=dict(os.environ, TCX_PLANNER="simt"))
    if not r:
        raise RuntimeError(why)
    return r["gflops"]


def median_time(fn, min_time=0.2, min_reps=5, sync=None):
    fn()
    if sync:
        sync()
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
        if len(times) > 1000:
            break
    times.sort()
    return times[len(times) // 2]


def host_arrays(case, np):
    a_idx, b_idx = case["einsum"].split("->")[0].split(",")
    rng = np.random.default_rng(1)
    shape = lambda s: tuple(case["sizes"][c] for c in s)  # noqa: E731
    a = rng.random(shape(a_idx), dtype=np.float32) - 0.5
    b = rng.random(shape(b_idx), dtype=np.float32) - 0.5
    return a, b


def anchor_numpy(case):
    import numpy as np
    a, b = host_arrays(case, np)
    return case["gflop"] / median_time(lambda: np.einsum(case["einsum"], a, b, optimize=True))


def anchor_tblis(case):
    import numpy as np
    import pytblis
    a, b = host_arrays(case, np)
    return case["gflop"] / median_time(lambda: pytblis.einsum(case["einsum"], a, b))


def anchor_torch(case):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a_idx, b_idx = case["einsum"].split("->")[0].split(",")
    g = torch.Generator(device="cuda").manual_seed(1)
    mk = lambda s: torch.rand(*[case["sizes"][c] for c in s], device="cuda",  # noqa: E731
                              generator=g) - 0.5
    a, b = mk(a_idx), mk(b_idx)
    fn = lambda: torch.einsum(case["einsum"], a, b)  # noqa: E731
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    del a, b
    torch.cuda.empty_cache()
    return case["gflop"] / times[len(times) // 2]


def cutbench_table(path):
    """Best GFLOP/s per case name from cutbench output lines
    'name compute jit|nojit TFLOP/s median_ms plan_ms'."""
    best = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 4:
                continue
            try:
                v = float(w[3]) * 1e3
            except ValueError:
                continue
            if v > best.get(w[0], (0, ""))[0]:
                best[w[0]] = (v, w[1])
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcx", default=os.environ.get("TCX", "tcx"))
    ap.add_argument("--device", default=None)
    ap.add_argument("--mib", type=float, default=200.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--anchors", default="numpy,tblis")
    ap.add_argument("--cutbench", default=None, help="cutbench output to read")
    ap.add_argument("--tcx-args", default="", help="more arguments to tcx bench/validate")
    ap.add_argument("--validate", type=int, default=4096,
                    help="output elements tcx validate compares (0: skip)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--peak-tflops", type=float, default=None)
    ap.add_argument("--bw-tbs", type=float, default=None)
    ap.add_argument("--unit", default=None, choices=["GFLOP/s", "TFLOP/s"])
    ap.add_argument("--report", default=None, help="also write the table (markdown) here")
    ap.add_argument("--json", default=None, help="write every figure as JSON here")
    args = ap.parse_args()
    args.tcx_args = args.tcx_args.split()
    anchors = [x for x in args.anchors.split(",") if x]
    fns = {"numpy": anchor_numpy, "tblis": anchor_tblis, "torch": anchor_torch,
           "simt": lambda case: anchor_simt(args, case)}
    cut = cutbench_table(args.cutbench) if args.cutbench else {}
    unit = args.unit or ("TFLOP/s" if "torch" in anchors or cut else "GFLOP/s")
    scale = 1e-3 if unit == "TFLOP/s" else 1.0
    cs = [tccg.describe(g, c, fixed, args.mib, "s") for g, cl, fixed in tccg.GROUPS for c in cl]
    if args.only:
        cs = [x for x in cs if re.search(args.only, x["name"])]
    rows = []
    for case in cs:
        r = {"case": case["name"], "gflop": case["gflop"], "mbytes": case["mbytes"],
             "sizes": case["sizes"]}
        r["tcx"] = tcx_case(args, case)
        r["anchors"] = {}
        for a in anchors:
            if a == "cutensor":
                if case["name"] in cut:
                    r["anchors"]["cutensor"] = cut[case["name"]][0]
                continue
            try:
                r["anchors"][a] = fns[a](case)
            except Exception as e:  # an anchor that fails is reported, not fatal
                r["anchors"][a] = None
                r["tcx"]["note"] += " %s: %s" % (a, str(e)[:60])
        if args.peak_tflops and args.bw_tbs:
            seconds = case["mbytes"] * 1e6 / (args.bw_tbs * 1e12)
            r["roofline_gflops"] = min(args.peak_tflops * 1e3, case["gflop"] / seconds)
        rows.append(r)
        print(line(r, anchors, scale), file=sys.stderr, flush=True)
    table = render(rows, anchors, scale, unit)
    print(table)
    if args.report:
        with open(args.report, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def fmt(v, scale):
    return "-" if v is None else "%.2f" % (v * scale)


def best_anchor(r):
    vals = [(v, k) for k, v in r["anchors"].items() if v]
    return max(vals) if vals else (None, None)


def line(r, anchors, scale):
    t = r["tcx"]
    return "%-32s tcx %8s %s %s" % (r["case"], fmt(t["gflops"], scale),
                                    " ".join("%s %s" % (a, fmt(r["anchors"].get(a), scale))
                                             for a in anchors), t["note"])


def render(rows, anchors, scale, unit):
    head = ["case", "GFLOP", "tcx"] + anchors + ["tcx/best"]
    if rows and "roofline_gflops" in rows[0]:
        head += ["roofline", "tcx/roof", "best/roof"]
    head += ["valid", "note"]
    out = ["All figures in %s; tcx/best = tcx over the best anchor." % unit, "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios, fr, fb = [], [], []
    for r in rows:
        t = r["tcx"]
        b, _ = best_anchor(r)
        ratio = t["gflops"] / b if t["gflops"] and b else None
        cells = [r["case"], "%.3g" % r["gflop"], fmt(t["gflops"], scale)]
        cells += [fmt(r["anchors"].get(a), scale) for a in anchors]
        cells.append("-" if ratio is None else "%.2f" % ratio)
        if ratio:
            ratios.append(ratio)
        if "roofline_gflops" in r:
            roof = r["roofline_gflops"]
            cells += [fmt(roof, scale), "-" if not t["gflops"] else "%.0f%%" % (100 * t["gflops"] / roof),
                      "-" if not b else "%.0f%%" % (100 * b / roof)]
            if t["gflops"]:
                fr.append(t["gflops"] / roof)
            if b:
                fb.append(b / roof)
        cells.append({True: "yes", False: "NO", None: "-"}[t["valid"]])
        cells.append(t["note"].strip())
        out.append("| " + " | ".join(cells) + " |")
    gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")  # noqa
    out.append("")
    if ratios:
        out.append("geometric mean of tcx/best over %d cases: %.2f; tcx ahead on %d" %
                   (len(ratios), gm(ratios), sum(1 for x in ratios if x >= 1)))
    if fr:
        out.append("roofline fraction (geometric mean): tcx %.0f%%%s" %
                   (100 * gm(fr), ", best anchor %.0f%%" % (100 * gm(fb)) if fb else ""))
    failed = [r["case"] for r in rows if not r["tcx"]["ok"]]
    if failed:
        out.append("tcx failed on %d: %s" % (len(failed), ", ".join(failed)))
    return "\n".join(out)


if __name__ == "__main__":
    main()

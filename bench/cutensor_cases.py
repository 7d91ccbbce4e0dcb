#!/usr/bin/env python3
"""cutensor_cases.py - the GPU report's cases (bench/gpu_cases.txt) as the
lines cutbench reads (../shared/gpu/cutensor/), so that cuTENSOR times the
same contraction, layout and sizes as tcx:

    name|einsum|a=N,b=N,...|type|compute

The einsum is in NumPy's order (last index fastest), made from tcx's
memory positions (`tcx parse --format json`), one letter per index.  The
compute type is the like-for-like one: 3xtf32 for fp32 (tcx's default
arithmetic, TF32x3), tf32 for the cases that ask for plain tf32, 32f
accumulation for fp16 and bf16, 64f for fp64.  cutbench has no complex
types: complex cases are left out (the report shows "-").

usage: cutensor_cases.py [--cases FILE] [--tcx TCX] > cases.cut
"""
import argparse
import json
import string
import subprocess
import sys

COMPUTE = {"s": "3xtf32", "h": "32f", "b": "32f", "d": "64f"}


def line_of(tcx, name, expr, dtype, sizes):
    if dtype not in COMPUTE:
        return None
    out = subprocess.run([tcx, "parse", expr, "--type", dtype, "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    idx = json.loads(out)["indices"]
    sz = [int(x) for x in sizes.split(",")]
    if len(sz) != len(idx) or len(idx) > len(string.ascii_letters):
        raise ValueError("%s: %d sizes for %d indices" % (name, len(sz), len(idx)))
    letter = {x["id"]: string.ascii_letters[k] for k, x in enumerate(idx)}

    def numpy_order(t):
        # memory position 0 is the fastest: NumPy lists it last
        have = [x for x in idx if x["memory_position"][t] is not None]
        have.sort(key=lambda x: -x["memory_position"][t])
        return "".join(letter[x["id"]] for x in have)

    ein = "%s,%s->%s" % (numpy_order("A"), numpy_order("B"), numpy_order("C"))
    ext = ",".join("%s=%d" % (letter[x["id"]], sz[x["id"]]) for x in idx)
    compute = "tf32" if "tf32" in name else COMPUTE[dtype]
    return "%s|%s|%s|%s|%s" % (name, ein, ext, dtype, compute)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="bench/gpu_cases.txt")
    ap.add_argument("--tcx", default="tcx")
    a = ap.parse_args()
    for raw in open(a.cases):
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        name, expr, dtype, sizes = [x.strip() for x in raw.split("|")][:4]
        ln = line_of(a.tcx, name, expr, dtype, sizes)
        if ln:
            print(ln)
    return 0


if __name__ == "__main__":
    sys.exit(main())

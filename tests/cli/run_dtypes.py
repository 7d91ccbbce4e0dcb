#!/usr/bin/env python3
"""run_dtypes.py - `tcx run` with every triple of types for A, B and C.

The files of one run must all hold one type (tcx-run(1)).  For each of the
125 triples of s d c z h over A, B and C (beta 0.5, so C is read), and for
each of the 6 orders of the -i options, tcx must either give NumPy's answer
(all three the same type) or exit 2 naming the file that differs, writing
no output -- never exit 0 with an answer computed in the wrong type.  Runs
on the host reference (--device host): no kernel is compiled, the check of
the types comes before the device.  Usage: run_dtypes.py TCX."""
import itertools
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

TYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128,
         "h": np.float16}
SHAPES = {"A": (3, 4), "B": (4, 5), "C": (3, 5)}
ALPHA, BETA = 1.0, 0.5


def odd_one(types):
    """The roles that may be named: the one whose type the other two share,
    or, with three different types, B or C (those that differ from A)."""
    for r, others in (("A", "BC"), ("B", "AC"), ("C", "AB")):
        o1, o2 = others
        if types[o1] == types[o2] != types[r]:
            return {r}
    return {"B", "C"}


def main():
    tcx = sys.argv[1]
    rng = np.random.default_rng(18)
    with tempfile.TemporaryDirectory() as d:
        path = {}
        data = {}
        for role, shape in SHAPES.items():
            x = rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)
            for t, dt in TYPES.items():
                v = (x if np.issubdtype(dt, np.complexfloating) else x.real).astype(dt)
                path[role, t] = os.path.join(d, "%s-%s.npy" % (role.lower(), t))
                data[role, t] = v
                np.save(path[role, t], v)

        jobs = []
        for n, types in enumerate(itertools.product(TYPES, repeat=3)):
            types = dict(zip("ABC", types))
            for k, order in enumerate(itertools.permutations("ABC")):
                out = os.path.join(d, "out-%d-%d.npy" % (n, k))
                cmd = [tcx, "run", "ik,kj->ij", "-o", out, "--device", "host",
                       "--alpha", str(ALPHA), "--beta", str(BETA)]
                for r in order:
                    cmd += ["-i", "%s=%s" % (r, path[r, types[r]])]
                jobs.append((types, "".join(order), out, cmd))

        def one(job):
            types, order, out, cmd = job
            r = subprocess.run(cmd, capture_output=True, text=True)
            what = "A %s, B %s, C %s, -i order %s" % (types["A"], types["B"], types["C"],
                                                     order)
            if len(set(types.values())) > 1:
                named = [x for x in odd_one(types)
                         if "%s ('%s')" % (x, path[x, types[x]]) in r.stderr.split(" holds")[0]]
                if r.returncode != 2 or "share one type" not in r.stderr or not named:
                    return "FAIL %s: exit %d, want 2 naming %s: %s" % (
                        what, r.returncode, " or ".join(sorted(odd_one(types))),
                        r.stderr.strip())
                if os.path.exists(out):
                    return "FAIL %s: refused but wrote %s" % (what, out)
                return None
            if r.returncode != 0:
                return "FAIL %s: exit %d: %s" % (what, r.returncode, r.stderr.strip())
            t = types["A"]
            dt = TYPES[t]
            a, b, c = (data[x, t].astype(np.complex128) for x in "ABC")
            want = ALPHA * (a @ b) + BETA * c
            mag = np.abs(a) @ np.abs(b) + BETA * np.abs(c)
            got = np.load(out)
            tol = 8 * (4 + 2) * np.finfo(dt).eps * mag
            if got.dtype != dt or got.shape != want.shape or \
                    np.any(~(np.abs(got.astype(np.complex128) - want) <= tol)):
                return "FAIL %s: wrong answer (%s %s, max error %g)" % (
                    what, got.dtype, got.shape,
                    float(np.max(np.abs(got.astype(np.complex128) - want))))
            return None

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(one, jobs))
    failures = [x for x in results if x]
    for f in failures[:40]:
        print(f)
    print("%d runs, %d failed" % (len(results), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

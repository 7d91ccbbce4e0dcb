#!/usr/bin/env python3
"""run_logic.py - `tcx run --logic`: the solution a library-logic file selects.

tests/export/data/gemm.yaml (fp32 GEMM C[ij]=A[ik]*B[kj], two solutions:
exact size 64,64,64 -> lds-8x8, 7,5,3 -> direct-4x4) chooses the kernel for
the arrays' sizes; C agrees with NumPy, and `-v` names the solution chosen.
An einsum of the same problem in Fortran order is the same problem type; in
C order it is another (exit 2, naming both), as are sizes the logic does
not cover (exit 2, as for validate and bench) and --logic with --params.
Usage: run_logic.py TCX LOGIC."""
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    tcx, logic = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(8)
    failures = checks = 0

    def fail(msg):
        nonlocal failures
        failures += 1
        print("FAIL " + msg)

    with tempfile.TemporaryDirectory() as d:
        pa, pb, out = (os.path.join(d, n) for n in ("a.npy", "b.npy", "c.npy"))

        def save(i, j, k, fortran=True):
            a = rng.uniform(-1, 1, size=(i, k)).astype(np.float32)
            b = rng.uniform(-1, 1, size=(k, j)).astype(np.float32)
            if fortran:
                a, b = np.asfortranarray(a), np.asfortranarray(b)
            np.save(pa, a)
            np.save(pb, b)
            return a.astype(np.float64) @ b.astype(np.float64)

        for expr, (i, j, k), name in (("C[ij]=A[ik]*B[kj]", (64, 64, 64), "lds-8x8"),
                                      ("C[ij]=A[ik]*B[kj]", (7, 5, 3), "direct-4x4"),
                                      ("ik,kj->ij", (7, 5, 3), "direct-4x4")):
            checks += 1
            want = save(i, j, k)
            if os.path.exists(out):
                os.remove(out)
            r = run([tcx, "-v", "run", expr, "-i", "A=" + pa, "-i", "B=" + pb, "-o", out,
                     "--logic", logic])
            what = "run %s %d,%d,%d --logic" % (expr, i, j, k)
            if r.returncode != 0:
                fail("%s: exit %d: %s" % (what, r.returncode, r.stderr.strip()))
                continue
            if "logic selects solution %d (%s)" % (0 if name == "lds-8x8" else 1, name) \
                    not in r.stderr:
                fail("%s: -v does not name %s: %s" % (what, name, r.stderr.strip()))
            got = np.load(out)
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                fail("%s: C differs from NumPy's (largest error %g)" %
                     (what, float(np.abs(got - want).max()) if got.shape == want.shape
                      else float("nan")))

        # refused, each with exit 2 and no output file
        bad = (
            (["ik,kj->ij"], True, "is for problem type Cij_Aik_Bkj_S, not "),
            (["C[ij]=A[ik]*B[kj]"], False, "selects no solution for these sizes"),
            (["C[ij]=A[ik]*B[kj]", "-p", "DepthU=8"], False,
             "--logic cannot be combined with --params or --solution"),
        )
        for args, c_order, msg in bad:
            checks += 1
            save(7, 5, 3, fortran=False) if c_order else save(8, 8, 8)
            if os.path.exists(out):
                os.remove(out)
            r = run([tcx, "run"] + args + ["-i", "A=" + pa, "-i", "B=" + pb, "-o", out,
                                           "--logic", logic])
            if r.returncode != 2 or msg not in r.stderr or os.path.exists(out):
                fail("run %s --logic: want exit 2 and '%s', no output; got exit %d: %s" %
                     (" ".join(args), msg, r.returncode, r.stderr.strip()))
    print("%d checks, %d failed" % (checks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""run_numpy.py - `tcx run` agrees with numpy.einsum.

For 20+ contractions, in C and Fortran order (and mixed), draw random
inputs, save them as .npy, run `tcx run` and numpy.einsum on the same files
and compare within a tolerance scaled by the summed magnitudes.  Then
float16 files (fp32 accumulation, one rounding to fp16 at the end), and
alpha/beta with a C input: beta = 0 must not read C (a C of NaNs leaves no
trace), beta != 0 must add beta*C.  Usage: run_numpy.py TCX [--device ID]."""
import os
import subprocess
import sys
import tempfile

import numpy as np

CASES = [
    # (einsum, tensile form or None, sizes by letter)
    ("ik,kj->ij", "C[i,k] = Sum[j] A[i,j] * B[j,k]", dict(i=13, k=7, j=29)),
    ("ik,jk->ij", None, dict(i=17, j=5, k=33)),
    ("ki,kj->ij", None, dict(i=9, j=11, k=31)),
    ("ki,jk->ij", None, dict(i=7, j=3, k=64)),
    ("ilk,jlk->ijk", "C[ijk]=A[ilk]*B[jlk]", dict(i=8, j=7, k=3, l=19)),
    ("ilk,ljk->ijk", None, dict(i=5, j=9, k=2, l=11)),
    ("bij,bjk->bik", None, dict(b=3, i=6, j=10, k=5)),
    ("ikmon,jmlno->ijklm", None, dict(i=3, j=4, k=2, l=3, m=2, n=5, o=3)),
    ("ikl,jlk->ij", None, dict(i=6, j=7, k=4, l=5)),
    ("ikml,jklm->ij", None, dict(i=3, j=4, k=2, l=5, m=3)),
    ("i,j->ij", "C[ij]=A[i]*B[j]", dict(i=9, j=13)),
    ("k,k->", "C[]=A[k]*B[k]", dict(k=101)),
    ("bk,bk->b", None, dict(b=7, k=23)),
    ("ik,k->i", None, dict(i=12, k=17)),
    ("k,kj->j", None, dict(k=19, j=8)),
    ("i,i->i", None, dict(i=31)),
    ("ij,j->ij", None, dict(i=5, j=6)),
    ("ij,jk", None, dict(i=4, j=9, k=6)),
    ("ba,ac", None, dict(a=7, b=5, c=3)),
    ("ijmnl,mnkjl->ijkl", "C[i,j,k,l] = Sum[m,n] A[i,j,m,n,l] * B[m,n,k,j,l]",
     dict(i=3, j=2, k=4, l=2, m=5, n=3)),
    ("aj,jb->ab", None, dict(a=1, b=1, j=1)),
    ("ik,kj->ji", None, dict(i=6, j=7, k=8)),
]
TYPES = [np.float32, np.float64, np.complex64, np.complex128]


def operands(einsum):
    lhs = einsum.split("->")[0]
    return lhs.replace(" ", "").split(",")


def rand(rng, shape, dt):
    x = rng.uniform(-1, 1, size=shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.uniform(-1, 1, size=shape)
    return x.astype(dt)


def main():
    tcx = sys.argv[1]
    extra = sys.argv[2:]
    rng = np.random.default_rng(2024)
    failures = 0
    runs = 0
    with tempfile.TemporaryDirectory() as d:
        for n, (expr, tensile, sizes) in enumerate(CASES):
            a_idx, b_idx = operands(expr)
            for order in ("C", "F", "mixed"):
                dt = TYPES[(n + len(order)) % len(TYPES)]
                a = rand(rng, [sizes[c] for c in a_idx], dt)
                b = rand(rng, [sizes[c] for c in b_idx], dt)
                if order == "F" or (order == "mixed"):
                    a = np.asfortranarray(a)
                if order == "F":
                    b = np.asfortranarray(b)
                np.save(os.path.join(d, "a.npy"), a)
                np.save(os.path.join(d, "b.npy"), b)
                want = np.einsum(expr, a.astype(np.complex128), b.astype(np.complex128))
                mag = np.einsum(expr, np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
                for form in (expr, tensile):
                    if form is None:
                        continue
                    runs += 1
                    out = os.path.join(d, "c.npy")
                    if os.path.exists(out):
                        os.remove(out)
                    cmd = [tcx, "run", form, "-i", "A=" + os.path.join(d, "a.npy"),
                           "-i", "B=" + os.path.join(d, "b.npy"), "-o", out] + extra
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    if r.returncode != 0:
                        failures += 1
                        print("FAIL %s (%s, %s): exit %d: %s" %
                              (form, order, np.dtype(dt).name, r.returncode, r.stderr.strip()))
                        continue
                    got = np.load(out)
                    eps = np.finfo(dt).eps
                    # |error| <= (products + 2) * eps * sum|a*b|, with room to spare
                    nprod = max(1, int(np.prod(a.shape) * np.prod(b.shape)) // max(1, want.size))
                    tol = 4 * (nprod + 2) * eps * (mag + 1e-30)
                    if got.shape != want.shape or got.dtype != dt:
                        failures += 1
                        print("FAIL %s (%s): shape %s dtype %s, want %s %s" %
                              (form, order, got.shape, got.dtype, want.shape, np.dtype(dt)))
                        continue
                    bad = ~(np.abs(got.astype(np.complex128) - want) <= tol)
                    if np.any(bad):
                        failures += 1
                        print("FAIL %s (%s, %s): %d of %d elements differ, max error %g" %
                              (form, order, np.dtype(dt).name, int(bad.sum()), bad.size,
                               float(np.max(np.abs(got - want)))))
        r, f = extra_cases(tcx, extra, rng, d)
        runs += r
        failures += f
    print("%d runs, %d failed" % (runs, failures))
    return 1 if failures else 0


def extra_cases(tcx, extra, rng, d):
    """float16 files, and alpha/beta with C; returns (runs, failures)."""
    runs = failures = 0
    eps32 = np.finfo(np.float32).eps
    cases = [(e, s) for e, _t, s in CASES[:8]]
    for k, (expr, sizes) in enumerate(cases):
        a_idx, b_idx = operands(expr)
        out_idx = expr.split("->")[1]
        for what in ("float16", "beta0", "beta"):
            dt = np.float16 if what == "float16" else np.float32
            a = rand(rng, [sizes[c] for c in a_idx], dt)
            b = rand(rng, [sizes[c] for c in b_idx], dt)
            if k % 2:
                a = np.asfortranarray(a)
            paths = {n: os.path.join(d, n + ".npy") for n in ("a", "b", "c", "out")}
            np.save(paths["a"], a)
            np.save(paths["b"], b)
            cmd = [tcx, "run", expr, "-i", "A=" + paths["a"], "-i", "B=" + paths["b"],
                   "-o", paths["out"]] + extra
            want = np.einsum(expr, a.astype(np.float64), b.astype(np.float64))
            mag = np.einsum(expr, np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
            cshape = [sizes[c] for c in out_idx]
            if what == "beta0":
                np.save(paths["c"], np.full(cshape, np.nan, dt))
                cmd += ["-i", "C=" + paths["c"], "--beta", "0"]
            elif what == "beta":
                c = rand(rng, cshape, dt)
                np.save(paths["c"], c)
                cmd += ["-i", "C=" + paths["c"], "--alpha", "-1.5", "--beta", "0.5"]
                want = -1.5 * want + 0.5 * c.astype(np.float64)
                mag = 1.5 * mag + 0.5 * np.abs(c).astype(np.float64)
            if os.path.exists(paths["out"]):
                os.remove(paths["out"])
            runs += 1
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                failures += 1
                print("FAIL %s (%s): exit %d: %s" % (expr, what, r.returncode, r.stderr.strip()))
                continue
            got = np.load(paths["out"])
            nprod = max(1, int(np.prod(a.shape) * np.prod(b.shape)) // max(1, want.size))
            tol = 4 * (nprod + 2) * eps32 * (mag + 1e-30) + np.finfo(dt).eps * np.abs(want)
            bad = ~(np.abs(got.astype(np.float64) - want) <= tol)
            if got.dtype != dt or got.shape != want.shape or np.any(bad):
                failures += 1
                print("FAIL %s (%s): dtype %s shape %s, %d elements off" %
                      (expr, what, got.dtype, got.shape, int(bad.sum()) if bad.shape else -1))
    return runs, failures


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""run_zero.py - problems with an index of size 0 are computed as NumPy does.

A bound index of size 0 leaves every sum empty: C = alpha * 0 + beta * C.  A
free or batch index of size 0 leaves C without elements: an empty array of
the right shape and type.  For s d c z h, `tcx run` on .npy files with such
shapes (C and Fortran order, with and without an initial C) must write what
NumPy computes, on the host reference and on the default device (no kernel
is built for an empty problem, so this compiles nothing); `tcx validate`
with a 0 in --sizes must pass and report C's element count, 0 products for
an empty sum, and why no kernel ran.  Usage: run_zero.py TCX."""
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

TYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128,
         "h": np.float16}
# (einsum, sizes by letter): the 0 is bound, free in A, free in B, batch, or
# everywhere
CASES = [
    ("ij,jk->ik", dict(i=3, j=0, k=5)),
    ("ij,jk->ik", dict(i=0, j=4, k=5)),
    ("ij,jk->ik", dict(i=3, j=4, k=0)),
    ("bij,bjk->bik", dict(b=0, i=2, j=3, k=4)),
    ("bij,bjk->bik", dict(b=2, i=3, j=0, k=4)),
    ("ikl,jlk->ij", dict(i=2, j=3, k=4, l=0)),
    ("k,k->", dict(k=0)),
    ("i,j->ij", dict(i=0, j=3)),
    ("ij,jk->ik", dict(i=0, j=0, k=0)),
]
ALPHA, BETA = -1.5, 0.5


def operands(expr):
    lhs, out = expr.split("->")
    a, b = lhs.split(",")
    return a, b, out


def rand(rng, shape, dt):
    x = rng.uniform(-1, 1, size=shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.uniform(-1, 1, size=shape)
    return x.astype(dt)


def run_jobs(tcx, d, rng):
    """(what, command, check) for tcx run; check(returncode, stderr) -> failure or None."""
    jobs = []
    for n, (expr, sizes) in enumerate(CASES):
        ia, ib, ic = operands(expr)
        for k, (t, dt) in enumerate(TYPES.items()):
            a = rand(rng, [sizes[x] for x in ia], dt)
            b = rand(rng, [sizes[x] for x in ib], dt)
            c = rand(rng, [sizes[x] for x in ic], dt)
            if (n + k) % 2:
                a, b, c = (np.asfortranarray(x) if x.ndim else x for x in (a, b, c))
            path = {}
            for x, name in ((a, "a"), (b, "b"), (c, "c")):
                path[name] = os.path.join(d, "%s-%d-%s.npy" % (name, n, t))
                np.save(path[name], x)
            prod = np.einsum(expr, a.astype(np.complex128), b.astype(np.complex128))
            # every type on the host reference, one a case on the device
            for device in ("host", None) if k == n % len(TYPES) else ("host",):
                for with_c in (False, True):
                    out = os.path.join(d, "out-%d-%s-%s-%d.npy" % (n, t, device, with_c))
                    cmd = [tcx, "run", expr, "-i", "A=" + path["a"], "-i", "B=" + path["b"],
                           "-o", out]
                    want = prod
                    if with_c:
                        cmd += ["-i", "C=" + path["c"], "--alpha", str(ALPHA),
                                "--beta", str(BETA)]
                        want = ALPHA * prod + BETA * c.astype(np.complex128)
                    if device:
                        cmd += ["--device", device]
                    what = "%s %s (%s, %s, %s)" % (
                        expr, ",".join("%s=%d" % kv for kv in sizes.items()), t,
                        device or "default device", "beta*C" if with_c else "no C")
                    jobs.append((what, cmd, check_run(out, want, dt)))
    return jobs


def check_run(out, want, dt):
    def check(r):
        if r.returncode != 0:
            return "exit %d: %s" % (r.returncode, r.stderr.strip())
        got = np.load(out)
        tol = 4 * np.finfo(dt).eps * np.abs(want)
        if got.dtype != dt or got.shape != want.shape or \
                np.any(~(np.abs(got.astype(np.complex128) - want) <= tol)):
            return "got %s %s %s, want %s %s %s" % (got.dtype, got.shape, got.ravel()[:4],
                                                   np.dtype(dt), want.shape, want.ravel()[:4])
        return None
    return check


def validate_jobs(tcx):
    jobs = []
    for n, (expr, sizes) in enumerate(CASES):
        ia, ib, ic = operands(expr)
        elements = int(np.prod([sizes[x] for x in ic]))
        bound = [x for x in sizes if x not in ic]
        products = int(np.prod([sizes[x] for x in bound]))
        spec = ",".join("%s=%d" % kv for kv in sizes.items())
        for k, t in enumerate(list(TYPES) + ["b"]):
            for device in ("host", None) if k == n % (len(TYPES) + 1) else ("host",):
                cmd = [tcx, "validate", expr, "--sizes", spec, "--type", t, "--beta",
                       str(BETA), "--format", "json"] + (["--device", device] if device else [])
                what = "validate %s --sizes %s --type %s (%s)" % (expr, spec, t,
                                                                device or "default device")
                jobs.append((what, cmd, check_validate(elements, products)))
    return jobs


def check_validate(elements, products):
    def check(r):
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = {}
        if r.returncode != 0 or doc.get("result") != "pass" or \
                doc.get("elements") != elements or doc.get("checked") != elements or \
                doc.get("bound", {}).get("products") != products or "no_kernel" not in doc:
            return "exit %d, %s %s" % (r.returncode, r.stdout.strip()[:400], r.stderr.strip())
        return None
    return check


def main():
    tcx = sys.argv[1]
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as d:
        jobs = run_jobs(tcx, d, rng) + validate_jobs(tcx)

        def one(job):
            what, cmd, check = job
            why = check(subprocess.run(cmd, capture_output=True, text=True))
            return "FAIL %s: %s" % (what, why) if why else None

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(one, jobs))
    failures = [x for x in results if x]
    for f in failures[:40]:
        print(f)
    print("%d runs, %d failed" % (len(results), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

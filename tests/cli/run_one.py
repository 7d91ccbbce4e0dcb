#!/usr/bin/env python3
"""run_one.py - one-input expressions (transposes and reductions) on a device.

`tcx run` with only -i A agrees with numpy.einsum for transposes, copies,
partial and full reductions, in einsum and Tensile notation, over sizes of 1
and primes, in C and Fortran order and in four element types, and with
alpha, beta and an initial C; `tcx validate` passes on the same shapes; and
`tcx bench` counts one addition per element of A summed (none for a
transpose) and A and C as the traffic.  A transpose or a copy (nothing
summed) runs as one permute of A into C, not through the contraction kernel,
for alpha 1 and beta 0 -- `tcx plan`, `validate` and `bench` say so, and
validate passes for several permutations, element types (fp16, bf16 and
conjugated complex included), awkward sizes and a C with padded rows --
and through the kernel for other scalars.  Usage: run_one.py TCX [--device ID]."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CASES = [
    # (einsum, tensile form or None, sizes by letter, file orders, check
    # alpha/beta, validate)
    ("ij->ji", "C[ji]=A[ij]", dict(i=7, j=13), "CF", True, True),
    ("ij->ji", None, dict(i=1, j=31), "F", False, False),
    ("ijk->ik", "C[i,k] = Sum[j] A[i,j,k]", dict(i=5, j=17, k=3), "C", False, True),
    ("ijk->ik", None, dict(i=2, j=1, k=11), "F", False, False),
    ("ijk->kji", None, dict(i=3, j=7, k=5), "CF", False, True),
    ("ijk->kji", None, dict(i=1, j=1, k=19), "C", False, False),
    ("ijk->j", None, dict(i=7, j=3, k=11), "F", True, False),
    ("ij->", "C[]=A[ij]", dict(i=13, j=29), "C", True, True),
    ("ji", None, dict(i=5, j=3), "C", False, False),  # NumPy's implicit output: a transpose
    ("ij", None, dict(i=3, j=2), "F", False, False),  # ... and a copy
]
TYPES = [np.float32, np.float64, np.complex64, np.complex128]


def rand(rng, shape, dt):
    x = rng.uniform(-1, 1, size=shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.uniform(-1, 1, size=shape)
    return x.astype(dt)


def close(got, want, mag, dt, nsum):
    eps = np.finfo(dt).eps
    tol = 4 * (nsum + 2) * eps * (mag + 1e-30)
    return got.shape == want.shape and bool(np.all(np.abs(got.astype(np.complex128) - want) <= tol))


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    tcx = sys.argv[1]
    extra = sys.argv[2:]
    rng = np.random.default_rng(23)
    failures = runs = 0
    with tempfile.TemporaryDirectory() as d:
        pa, out = os.path.join(d, "a.npy"), os.path.join(d, "out.npy")
        for n, (expr, tensile, sizes, orders, with_beta, check) in enumerate(CASES):
            a_idx = expr.split("->")[0]
            out_idx = expr.split("->")[1] if "->" in expr else "".join(sorted(a_idx))
            nsum = int(np.prod([sizes[c] for c in a_idx if c not in out_idx]))
            for k, order in enumerate(orders):
                dt = TYPES[(n + k) % len(TYPES)]
                a = rand(rng, [sizes[c] for c in a_idx], dt)
                if order == "F":
                    a = np.asfortranarray(a)
                np.save(pa, a)
                want = np.einsum(expr, a.astype(np.complex128))
                mag = np.einsum(expr, np.abs(a).astype(np.float64))
                for form in (expr, tensile):
                    if form is None:
                        continue
                    runs += 1
                    if os.path.exists(out):
                        os.remove(out)
                    r = run([tcx, "run", form, "-i", "A=" + pa, "-o", out] + extra)
                    if r.returncode != 0:
                        failures += 1
                        print("FAIL run %s (%s, %s): exit %d: %s" %
                              (form, order, np.dtype(dt).name, r.returncode, r.stderr.strip()))
                        continue
                    got = np.load(out)
                    if got.dtype != dt or not close(got, want, mag, dt, nsum):
                        failures += 1
                        print("FAIL run %s (%s, %s): got %s %s, want %s" %
                              (form, order, np.dtype(dt).name, got.dtype, got.shape, want.shape))
            if with_beta:
                failures += beta(tcx, extra, rng, d, expr, a_idx, out_idx, sizes, nsum)
                runs += 1
            if check:
                failures += validate(tcx, extra, expr, a_idx, out_idx, sizes)
                runs += 1
        failures += bench(tcx, extra)
        runs += 2
        f, n = permutes(tcx, extra)
        failures += f
        runs += n
    print("%d runs, %d failed" % (runs, failures))
    return 1 if failures else 0


def beta(tcx, extra, rng, d, expr, a_idx, out_idx, sizes, nsum):
    """alpha, beta and an initial C: C = alpha * A-summed + beta * C"""
    pa, pc, out = (os.path.join(d, n) for n in ("a.npy", "c.npy", "out.npy"))
    a = rand(rng, [sizes[x] for x in a_idx], np.float32)
    c = rand(rng, [sizes[x] for x in out_idx], np.float32)
    np.save(pa, a)
    np.save(pc, c)
    want = -1.5 * np.einsum(expr, a.astype(np.float64)) + 0.5 * c
    mag = 1.5 * np.einsum(expr, np.abs(a).astype(np.float64)) + 0.5 * np.abs(c)
    r = run([tcx, "run", expr, "-i", "A=" + pa, "-i", "C=" + pc, "--alpha", "-1.5",
             "--beta", "0.5", "-o", out] + extra)
    if r.returncode != 0 or not close(np.load(out), want, mag, np.float32, nsum):
        print("FAIL run %s with beta: exit %d: %s" % (expr, r.returncode, r.stderr.strip()))
        return 1
    return 0


def validate(tcx, extra, expr, a_idx, out_idx, sizes):
    """the kernel against the host reference"""
    letters = out_idx + "".join(x for x in a_idx if x not in out_idx)
    spec = ",".join("%s=%d" % (x, sizes[x]) for x in letters)
    r = run([tcx, "validate", expr, "--sizes", spec] + extra)
    if r.returncode != 0:
        print("FAIL validate %s --sizes %s: exit %d: %s%s" %
              (expr, spec, r.returncode, r.stdout, r.stderr.strip()))
        return 1
    return 0


def bench(tcx, extra):
    """The flop count and the traffic bench reports for one input."""
    failures = 0
    for expr, spec, flops, nbytes in (
        ("ijk->ik", "i=5,j=7,k=3", 5 * 7 * 3, 4 * (5 * 7 * 3 + 5 * 3)),
        ("ij->ji", "i=7,j=13", 0, 4 * 2 * 7 * 13),
    ):
        r = run([tcx, "bench", expr, "--exact", spec, "--min-reps", "3", "--min-time", "0.001",
                 "--flush", "off", "-f", "json"] + extra)
        if r.returncode != 0:
            print("FAIL bench %s: exit %d: %s" % (expr, r.returncode, r.stderr.strip()))
            failures += 1
            continue
        row = json.loads(r.stdout)["results"][0]
        ms = row["median_ms"]
        gf, gbs = row["gflops"] * ms * 1e6, row["gbs"] * ms * 1e6
        if abs(gf - flops) > 1e-6 * max(1, flops) or abs(gbs - nbytes) > 1e-6 * nbytes:
            print("FAIL bench %s: %g flops and %g bytes, want %d and %d" %
                  (expr, gf, gbs, flops, nbytes))
            failures += 1
    return failures


# (expression, sizes, type, strides or None, alpha, beta, permute expected)
PERMUTES = [
    ("ij->ji", "i=1,j=31", "s", None, None, None, True),
    ("ijk->kij", "i=13,j=1,k=37", "h", None, None, None, True),
    ("ijk->jki", "i=7,j=5,k=3", "b", None, None, None, True),
    ("ijkl->ljik", "i=3,j=5,k=2,l=7", "d", None, None, None, True),
    ("C[ji]=conj(A[ij])", "i=5,j=11", "c", None, None, None, True),
    ("ij->ij", "i=17,j=3", "z", None, None, None, True),
    # padded rows: A's and C's leading dimensions past their sizes; the
    # gaps between C's rows must stay as they were
    ("ij->ji", "i=31,j=7", "s", "A=[11,1],C=[37,1]", None, None, True),
    # scalars the permute does not compute: the contraction kernel
    ("ij->ji", "i=13,j=7", "s", None, "2", None, False),
    ("ijk->kji", "i=3,j=7,k=5", "h", None, None, "0.5", False),
]


def permutes(tcx, extra):
    """Transposes and copies run as one permute of A into C."""
    failures = 0
    for expr, spec, t, strides, alpha, beta, want in PERMUTES:
        cmd = [tcx, "validate", expr, "--sizes", spec, "-t", t, "--format", "json"]
        cmd += ["--strides", strides] if strides else []
        cmd += ["--alpha", alpha] if alpha else []
        cmd += ["--beta", beta] if beta else []
        r = run(cmd + extra)
        doc = json.loads(r.stdout) if r.stdout.startswith("{") else {}
        if r.returncode != 0 or doc.get("result") != "pass" or ("permute" in doc) != want:
            print("FAIL validate %s --sizes %s -t %s%s: exit %d, permute %s (want %s): %s" %
                  (expr, spec, t, " --strides " + strides if strides else "", r.returncode,
                   doc.get("permute"), want, r.stderr.strip()))
            failures += 1
    r = run([tcx, "plan", "ijk->kji", "--sizes", "i=64,j=3,k=29"] + extra)
    if r.returncode != 0 or "a permute of A into C, no contraction kernel" not in r.stdout:
        print("FAIL plan ijk->kji does not choose the permute: exit %d: %s%s" %
              (r.returncode, r.stdout, r.stderr.strip()))
        failures += 1
    r = run([tcx, "bench", "ij->ji", "--exact", "i=33,j=17", "--min-reps", "3", "--min-time",
             "0.001", "--flush", "off", "-f", "json"] + extra)
    row = json.loads(r.stdout)["results"][0] if r.returncode == 0 else {}
    plan = row.get("plan", {})
    ms = row.get("median_ms", 0)
    if r.returncode != 0 or plan.get("direct_permute") is not True or \
            abs(row.get("gbs", 0) * ms * 1e6 - 4 * 2 * 33 * 17) > 1e-3:
        print("FAIL bench ij->ji did not time the permute honestly: exit %d: %s %s" %
              (r.returncode, plan, r.stderr.strip()))
        failures += 1
    return failures, len(PERMUTES) + 2


if __name__ == "__main__":
    sys.exit(main())

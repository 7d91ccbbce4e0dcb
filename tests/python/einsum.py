"""einsum.py - the Python module (python/tcx) on the default device (PoCL in
CI) against numpy.einsum: three element types, implicit outputs, one-operand
expressions, views with
strides (transposed, sliced), out= and beta, tcx.plan's reuse, and the
errors a user meets.  Exit 0 passed, 1 a check failed, 77 no device."""
import sys

import numpy as np

import tcx

failures = 0
rng = np.random.default_rng(7)


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def rand(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def close(got, a, b, expr, tol):
    want = np.einsum(expr, a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), b)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = float(np.max(np.abs(got - want))) / scale if want.size else 0.0
    return err <= tol, err


try:
    dev = tcx.devices_default()
except tcx.Error as e:
    print("skipped:", e)
    sys.exit(77)
print("device", dev, "library", tcx.library_path())

cases = [
    ("ik,kj->ij", (30, 20), (20, 40)),
    ("ilk,jlk->ijk", (9, 11, 7), (13, 11, 7)),
    ("abcd,ebd->aec", (5, 6, 7, 4), (3, 6, 4)),
    ("ik,kj", (12, 5), (5, 9)),                 # NumPy's implicit output
    ("ij,j->i", (17, 23), (23,)),               # a matrix-vector product
]
# every case in fp32; one in fp64 and complex64 (each type compiles its own
# kernels, which PoCL takes seconds for)
tols = {np.float32: 1e-5, np.float64: 1e-12, np.complex64: 1e-5}
for dtype, tol in tols.items():
    for expr, sa, sb in cases if dtype == np.float32 else cases[:1]:
        a, b = rand(sa, dtype), rand(sb, dtype)
        c = tcx.einsum(expr, a, b)
        ok, err = close(c, a, b, expr, tol)
        check(ok and c.dtype == dtype, f"{expr} {np.dtype(dtype)}: error {err:.3g}, {c.dtype}")

# views: a transposed A, a sliced and transposed B, a padded out
a = rand((20, 30), np.float32).T
b = rand((40, 20), np.float32)[::2].T[:, 1:]
c = tcx.einsum("ik,kj->ij", a, b)
check(close(c, a, b, "ik,kj->ij", 1e-5)[0], "strided views")
big = np.full((30, 25), 7.0, np.float32)
out = big[:, 3:22]
r = tcx.einsum("ik,kj->ij", a, b, out=out)
check(r is out and close(out, a, b, "ik,kj->ij", 1e-5)[0], "out= a view")
check(np.all(big[:, :3] == 7) and np.all(big[:, 22:] == 7), "out='s padding untouched")

# tcx.plan: one plan, called again with beta accumulating
p = tcx.plan("ik,kj->ij", a, b, out=out)
check(tcx.plan("ik,kj->ij", a, b, out=out) is p, "plans are cached")
for _ in range(3):
    p(a, b, out=out, beta=1, alpha=0.5)
check(close(out / 2.5, a, b, "ik,kj->ij", 1e-5)[0], "alpha and beta")

# one operand: a transpose, a reduction, NumPy's implicit output (the
# letters seen once, sorted: "ji" is a transpose)
for expr, sa in [("ij->ji", (7, 13)), ("ijk->ik", (5, 3, 11)), ("ji", (4, 9))]:
    a = rand(sa, np.float32)
    c = tcx.einsum(expr, a)
    want = np.einsum(expr, a.astype(np.float64))
    err = float(np.max(np.abs(c - want))) / max(1.0, float(np.max(np.abs(want))))
    check(err <= 1e-5 and c.shape == want.shape, f"{expr} one operand: error {err:.3g}")
p1 = tcx.plan("ijk->ik", rand((5, 3, 11), np.float32))
check(p1 is tcx.plan("ijk->ik", rand((5, 3, 11), np.float32)), "one-operand plans are cached")

# what a user gets wrong
for what, call, exc in [
    ("shapes", lambda: tcx.einsum("ik,kj->ij", rand((3, 4), np.float32),
                                   rand((5, 6), np.float32)), ValueError),
    ("integers", lambda: tcx.einsum("ik,kj->ij", np.ones((2, 2), np.int32),
                                     np.ones((2, 2), np.int32)), TypeError),
    ("mixed types", lambda: tcx.einsum("ik,kj->ij", rand((2, 2), np.float32),
                                        rand((2, 2), np.float64)), TypeError),
    ("ellipsis", lambda: tcx.einsum("...k,kj->...j", rand((2, 2), np.float32),
                                     rand((2, 2), np.float32)), ValueError),
    ("bad expression", lambda: tcx.einsum("ik,k#->i", rand((2, 2), np.float32),
                                           rand((2, 2), np.float32)), ValueError),
    ("b for one operand", lambda: tcx.einsum("ij->ji", rand((2, 3), np.float32),
                                              rand((3, 2), np.float32)), ValueError),
    ("no b for two", lambda: tcx.einsum("ik,kj->ij", rand((2, 3), np.float32)), ValueError),
    ("out's shape", lambda: tcx.einsum("ik,kj->ij", rand((2, 3), np.float32),
                                        rand((3, 4), np.float32),
                                        out=np.empty((4, 2), np.float32)), ValueError),
]:
    try:
        call()
        check(False, f"{what}: no error")
    except exc as e:
        check(str(e).startswith("tcx: ") or "TCX_E" in str(e), f"{what}: message {e}")
    except Exception as e:  # noqa: BLE001 - any other kind is the failure
        check(False, f"{what}: {type(e).__name__}: {e}")

print(f"{'FAILED' if failures else 'passed'}")
sys.exit(1 if failures else 0)

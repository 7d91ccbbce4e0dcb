#!/usr/bin/python3
"""numpy_einsum.py - times numpy.einsum(..., optimize=True) the way tcx bench
times kernels (random inputs, two warm-up calls, repeats until a minimum
count and time, the median), for bench/cpu.sh.

usage: numpy_einsum.py [--min-reps N] [--min-time S] [--dtype float32|float64]
                       SUBSCRIPTS SHAPE_A SHAPE_B
  SUBSCRIPTS  einsum subscripts over C-order arrays, e.g. 'kli,klj->kji'
  SHAPE_x     comma-separated shape, e.g. 16,256,256

tcx's Tensile notation lists the fastest index first; NumPy's C order lists
it last: C[ijk]=A[ilk]*B[jlk] is 'kli,klj->kji' over arrays of shapes
(K, L, I) and (K, L, J), the same bytes in the same order.

prints one line: median_ms min_ms max_ms gflops how
  how: 'blas' when einsum's optimised path ran through tensordot (BLAS),
       'c_einsum' when it ran NumPy's own loops (no BLAS)
"""
import argparse
import sys
import time

import numpy as np
import numpy.core.einsumfunc as ef


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-reps", type=int, default=10)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("subscripts")
    ap.add_argument("shape_a")
    ap.add_argument("shape_b")
    a = ap.parse_args()
    sa = tuple(int(x) for x in a.shape_a.split(","))
    sb = tuple(int(x) for x in a.shape_b.split(","))
    rng = np.random.default_rng(1)
    A = (rng.random(sa, dtype=np.float64) * 2 - 1).astype(a.dtype)
    B = (rng.random(sb, dtype=np.float64) * 2 - 1).astype(a.dtype)

    # count the BLAS calls einsum makes through tensordot
    calls = [0]
    real_tensordot = ef.tensordot

    def counting(*args, **kw):
        calls[0] += 1
        return real_tensordot(*args, **kw)

    ef.tensordot = counting
    ins, out = a.subscripts.split("->")
    sizes = {}
    for sub, shape in zip(ins.split(","), (sa, sb)):
        for ch, n in zip(sub, shape):
            sizes[ch] = n
    flops = 2.0
    for n in sizes.values():
        flops *= n

    times = []
    total = 0.0
    for it in range(-2, 100000):
        t0 = time.perf_counter()
        np.einsum(a.subscripts, A, B, optimize=True)
        dt = time.perf_counter() - t0
        if it < 0:
            continue
        times.append(dt * 1e3)
        total += dt
        if len(times) >= a.min_reps and total >= a.min_time:
            break
    times.sort()
    n = len(times)
    med = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    how = "blas" if calls[0] else "c_einsum"
    print("%.4f %.4f %.4f %.2f %s" % (med, times[0], times[-1], flops / (med * 1e6), how))
    return 0


if __name__ == "__main__":
    sys.exit(main())

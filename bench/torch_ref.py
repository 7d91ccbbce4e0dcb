#!/usr/bin/env python3
"""torch_ref.py - what users run today on an NVIDIA GPU, timed the way tcx
bench times its kernels: cuBLAS through torch.matmul and torch.einsum, CUDA
events, warm-up, the median of repeated runs on random data.

usage: torch_ref.py [--reps N] [--only REGEX] > reference.json

Prints one JSON object: {"device": ..., "torch": ..., "cases": [{"name", "what",
"shape", "ms", "tflops"}]}.  Shapes follow the "Speed on Hopper" cases: GEMM
fp32 (NN and NT), tf32, fp16, bf16, fp64 (cuBLAS DGEMM), complex64 and complex128
(CGEMM, ZGEMM: 8 real flops a complex product); torch.einsum('ilk,jlk->ijk') for four
shapes (I, J, L, K) and the 5-index contraction 'ikmon,jmlno->ijklm'.  --only keeps
the cases whose name matches."""
import json
import re
import statistics
import sys

import torch


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    reps = 20
    if "--reps" in sys.argv:
        reps = int(sys.argv[sys.argv.index("--reps") + 1])
    only = re.compile(sys.argv[sys.argv.index("--only") + 1]) if "--only" in sys.argv else None
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(1)
    cases = []

    def rnd(shape, dt):
        return (torch.rand(shape, generator=gen, device=dev, dtype=torch.float32) * 2 - 1).to(dt)

    def add(name, what, shape, flops, fn, exact=None):
        if only and not only.search(name):
            return
        ms = timed(fn, reps)
        c = {"name": name, "what": what, "shape": shape, "ms": ms,
             "tflops": flops / (ms * 1e9)}
        # exact: the same in fp64, for the largest error of the fp32 result
        if exact is not None:
            c["max_err"] = (fn().double() - exact()).abs().max().item()
        cases.append(c)

    for n in (1024, 4096, 8192):
        for mode, dt, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                               ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a, b = rnd((n, n), dt), rnd((n, n), dt)
            add("gemm-%s-nn-%d" % (mode, n), "torch.matmul(a, b) (%s)" % mode, [n, n, n],
                2.0 * n ** 3, lambda a=a, b=b: torch.matmul(a, b),
                (lambda a=a, b=b: torch.matmul(a.double(), b.double()))
                if mode in ("fp32", "tf32") and n == 8192 else None)
            if mode == "fp32":
                add("gemm-fp32-nt-%d" % n, "torch.matmul(a, b.T) (fp32)", [n, n, n],
                    2.0 * n ** 3, lambda a=a, b=b: torch.matmul(a, b.t()))
    torch.backends.cuda.matmul.allow_tf32 = False
    for n in (4096, 8192):
        for mode, dt, per in (("fp64", torch.float64, 2.0), ("c64", torch.complex64, 8.0),
                              ("c128", torch.complex128, 8.0)):
            if only and not only.search("gemm-%s-nn-%d" % (mode, n)):
                continue
            if dt.is_complex:
                a = torch.complex(rnd((n, n), torch.float32), rnd((n, n), torch.float32)).to(dt)
                b = torch.complex(rnd((n, n), torch.float32), rnd((n, n), torch.float32)).to(dt)
            else:
                a, b = rnd((n, n), dt), rnd((n, n), dt)
            add("gemm-%s-nn-%d" % (mode, n), "torch.matmul(a, b) (%s)" % mode, [n, n, n],
                per * n ** 3, lambda a=a, b=b: torch.matmul(a, b))
    for (i, j, l, k) in ((1024, 1024, 1024, 64), (256, 256, 256, 512), (4096, 4096, 64, 8),
                         (5760, 5760, 5760, 1)):
        a, b = rnd((i, l, k), torch.float32), rnd((j, l, k), torch.float32)
        add("einsum-ilk-jlk-%dx%dx%dx%d" % (i, j, l, k), "torch.einsum('ilk,jlk->ijk')",
            [i, j, l, k], 2.0 * i * j * l * k,
            lambda a=a, b=b: torch.einsum("ilk,jlk->ijk", a, b),
            lambda a=a, b=b: torch.einsum("ilk,jlk->ijk", a.double(), b.double()))
    s = 32
    m = 16
    a = rnd((s, s, m, s, s), torch.float32)   # i k m o n
    b = rnd((s, m, s, s, s), torch.float32)   # j m l n o
    add("einsum-5idx", "torch.einsum('ikmon,jmlno->ijklm')", [s, s, s, s, m, s, s],
        2.0 * s ** 6 * m, lambda: torch.einsum("ikmon,jmlno->ijklm", a, b),
        lambda: torch.einsum("ikmon,jmlno->ijklm", a.double(), b.double()))
    x = torch.empty(1 << 28, device=dev, dtype=torch.float32)
    y = torch.empty_like(x)
    ms = timed(lambda: y.copy_(x), reps)
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "copy_tbs": 2 * x.numel() * 4 / (ms * 1e9),
           "cases": cases}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

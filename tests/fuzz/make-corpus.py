#!/usr/bin/env python3
"""make-corpus.py - (re)writes the seed corpora tests/fuzz/corpus/<target>/
from the test suite's data: expressions and size specs from the golden
tests, Tensile configs and logic files from tests/data/tensile and share/,
.npy files from tests/data/npy, and kernel-cache entries built in the
format of lib/backend/kcache.h.  Each file is named by the SHA-1 of its
bytes, as libFuzzer names what it finds.  Run from anywhere; commit what
it writes.  scripts/fuzz grows a copy of these corpora, never these."""
import glob
import hashlib
import os
import struct

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = os.path.join(top, "tests", "fuzz", "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def golden_args():
    for path in sorted(glob.glob(os.path.join(top, "tests", "golden", "*", "*.args"))):
        with open(path) as f:
            yield [l.rstrip("\n") for l in f if not l.startswith("#")]


def is_expr(a):
    return ("[" in a and "=" in a) or "->" in a or ("," in a and a.replace(",", "").isalpha())


# notation: every expression the golden tests parse, good or bad
exprs = set()
for args in golden_args():
    for a in args:
        if is_expr(a) and not a.startswith("-"):
            exprs.add(a)
for e in sorted(exprs):
    put("notation", e)

# sizes: an expression, then r:/e:/a:/s: lines from the golden tests' options
kinds = {"--range": "r", "-r": "r", "--exact": "e", "-e": "e", "--sizes": "a", "--strides": "s"}
for args in golden_args():
    expr = next((a for a in args if is_expr(a) and not a.startswith("-")), None)
    lines = []
    for opt, val in zip(args, args[1:]):
        if opt in kinds:
            lines.append(kinds[opt] + ":" + val)
    if expr and lines:
        put("sizes", expr + "\n" + "\n".join(lines) + "\n")
put("sizes", "C[ijk]=A[ilk]*B[jlk]\nr:[[16,128],0,[2],[256]]\ne:127,129,3,64\n"
    "a:i=4,j=4,k=2,l=8\ns:A=[1,4,32],B=[1,4,32],C=[1,4,16]\n")

# configs (and YAML): Tensile's and tcx's
configs = sorted(glob.glob(os.path.join(top, "tests", "data", "tensile", "configs", "*", "*.yaml"))
                 + glob.glob(os.path.join(top, "share", "examples", "*.yaml")))
for p in configs:
    data = open(p, "rb").read()
    put("config", data)
    put("yaml", data)

# logic: Tensile's logic files (the small ones: large seeds slow fuzzing)
# and tcx's
logic = sorted(glob.glob(os.path.join(top, "tests", "data", "tensile", "logic", "*", "*.yaml"))
               + glob.glob(os.path.join(top, "share", "logic", "*.yaml"))
               + glob.glob(os.path.join(top, "tests", "data", "logic", "*.yaml")))
for p in logic:
    data = open(p, "rb").read()
    if len(data) <= 64 * 1024:
        put("logic", data)
        put("yaml", data)

# npy: every test file
for p in sorted(glob.glob(os.path.join(top, "tests", "data", "npy", "*.npy"))):
    put("npy", open(p, "rb").read())


# kcache: valid entries and the damaged kinds kcache.c names
def fnv1a64(data, seed=0):
    h = 0xcbf29ce484222325 ^ seed
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def entry(key, binary, version=1, hsize=48, blen=None, csum=None):
    blen = len(binary) if blen is None else blen
    csum = fnv1a64(binary) if csum is None else csum
    return (b"TCXKBIN\0" + struct.pack("<II", version, hsize) + key
            + struct.pack("<QQ", blen, csum) + binary)


key = bytes(range(16))
for binary in (b"\x7fELF" + bytes(60), b"x", bytes(range(256)) * 4):
    put("kcache", entry(key, binary))
good = entry(key, b"kernel binary")
put("kcache", good[:40])                       # truncated header
put("kcache", good[:-3])                       # truncated binary
put("kcache", good + b"junk")                  # trailing bytes
put("kcache", entry(key, b"abc", version=2))   # another format version
put("kcache", entry(key, b"abc", csum=1))      # checksum mismatch
put("kcache", entry(key, b"abc", blen=0))      # bad length

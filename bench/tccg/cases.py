#!/usr/bin/env python3
"""cases.py - the 48 contractions of the TCCG benchmark (HPAC/tccg,
benchmark/benchmark.py with _fullbenchmark = 1) with its size rule.

TCCG writes a case as C-A-B with the first index of each tensor moving
fastest (column-major), e.g. "ij-kil-lkj" is C[i,j] = A[k,i,l] * B[l,k,j].
Its size rule: every index about the same extent, chosen so that the
largest tensor holds about 200 MiB; an index that moves fastest in any
tensor rounded up to a multiple of 24, every other index to the nearest
multiple of 4 (at least 4); in the "intensli" cases the index j is 24.

    bench/tccg/cases.py [--mib 200] [--type s] [--format FORMAT] [--only REGEX]

FORMAT is one of
  tcx       name|Tensile expression|named sizes|GFLOP|minimum MB moved  (default)
  cutbench  name|einsum|sizes|type|compute lines for cutbench (last index fastest)
  json      a list of objects with every field
"""
import argparse
import json
import re
import sys

CCSD = ["ij-ik-kj", "ij-ikl-ljk", "ij-kil-lkj", "ijk-ikl-lj", "ijk-il-jlk", "ijk-ilk-jl",
        "ijk-ilk-lj", "ijk-ilmk-mjl", "ijkl-imjn-lnkm", "ijkl-imjn-nlmk", "ijkl-imkn-jnlm",
        "ijkl-imkn-njml", "ijkl-imln-jnkm", "ijkl-imln-njmk", "ijkl-imnj-nlkm",
        "ijkl-imnk-njml", "ijkl-minj-nlmk", "ijkl-mink-jnlm", "ijkl-minl-njmk"]
AO2MO = ["aqrs-pa-pqrs", "abrs-qb-aqrs", "abcs-rc-abrs"]
INTENSLI = ["abj-bka-kj", "ajb-kba-jk", "abjc-cbka-kj", "ajbc-ckba-jk", "abjc-kbac-jk",
            "abjcd-dkbac-jk", "adbjc-cbdka-kj", "ajbdc-ckbad-jk"]
CCSD_T = ["abcijk-ijma-mkbc", "abcijk-ijmb-mkac", "abcijk-ijmc-mkab", "abcijk-ikma-mjbc",
          "abcijk-ikmb-mjac", "abcijk-ikmc-mjab", "abcijk-jkma-mibc", "abcijk-jkmb-miac",
          "abcijk-jkmc-miab", "abcijk-eiab-jkec", "abcijk-eiac-jkeb", "abcijk-eibc-jkea",
          "abcijk-ejab-ikec", "abcijk-ejac-ikeb", "abcijk-ejbc-ikea", "abcijk-ekab-ijec",
          "abcijk-ekac-ijeb", "abcijk-ekbc-ijea"]
GROUPS = [("intensli", INTENSLI, {"j": 24}), ("ao2mo", AO2MO, {}), ("ccsd", CCSD, {}),
          ("ccsd_t", CCSD_T, {})]
BYTES = {"s": 4, "d": 8, "c": 8, "z": 16, "h": 2, "b": 2}


def sizes_of(case, fixed, mib, elem):
    """TCCG's rule (benchmark.py, generate()), for an element of elem bytes."""
    tensors = case.split("-")
    avg = (mib * 2**20 / elem) ** (1.0 / max(len(t) for t in tensors))
    out = {}
    for idx in sorted(set("".join(tensors))):
        if idx in fixed:
            out[idx] = fixed[idx]
        elif any(t[0] == idx for t in tensors):
            out[idx] = int((avg + 23) / 24) * 24
        else:
            up = int((avg + 3) / 4) * 4
            down = max(4, int(avg / 4) * 4)
            out[idx] = up if abs(avg - up) < abs(avg - down) else down
    return out


def describe(group, case, fixed, mib, dtype):
    c, a, b = case.split("-")
    elem = BYTES[dtype]
    # TCCG sizes its double-precision runs for 8-byte elements; this keeps
    # its fp32 rule (4-byte elements) for every type unless asked otherwise
    sz = sizes_of(case, fixed, mib, 4 if dtype in "sh b" else elem)
    vol = lambda t: eval("*".join(str(sz[i]) for i in t))  # noqa: E731
    flops = 2.0
    for v in sz.values():
        flops *= v
    if dtype in "cz":
        flops *= 4
    return {
        "name": "%s-%s" % (group, case),
        "group": group,
        "case": case,
        "tensile": "C[%s]=A[%s]*B[%s]" % (",".join(c), ",".join(a), ",".join(b)),
        # NumPy's einsum: last index fastest, so each tensor's letters reversed
        "einsum": "%s,%s->%s" % (a[::-1], b[::-1], c[::-1]),
        "sizes": sz,
        "gflop": flops / 1e9,
        "mbytes": (vol(a) + vol(b) + vol(c)) * elem / 1e6,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=float, default=200.0,
                    help="MiB of the largest tensor (TCCG: 200)")
    ap.add_argument("--type", default="s", choices=sorted(BYTES))
    ap.add_argument("--format", default="tcx", choices=["tcx", "cutbench", "json"])
    ap.add_argument("--compute", default="32f", help="cutbench compute type")
    ap.add_argument("--only", default=None, help="regex on the case name")
    args = ap.parse_args()
    cases = [describe(g, c, fixed, args.mib, args.type)
             for g, cs, fixed in GROUPS for c in cs]
    if args.only:
        cases = [x for x in cases if re.search(args.only, x["name"])]
    if args.format == "json":
        json.dump(cases, sys.stdout, indent=1)
        print()
        return
    for x in cases:
        named = ",".join("%s=%d" % kv for kv in sorted(x["sizes"].items()))
        if args.format == "tcx":
            print("%s|%s|%s|%.3f|%.3f" % (x["name"], x["tensile"], named, x["gflop"],
                                          x["mbytes"]))
        else:
            print("%s|%s|%s|%s|%s" % (x["name"], x["einsum"], named, args.type, args.compute))


if __name__ == "__main__":
    main()

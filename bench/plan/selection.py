#!/usr/bin/env python3
"""selection.py - how good tcx's untuned choice is: on the TCCG cases and on
seeded random contractions, the planner's choice (`tcx bench` with no
options) against the best solution an exhaustive tune of the same kernel
family finds (`tcx tune EXPR --strategy exhaustive`), and `tcx tune EXPR
--budget` (a share of the space, model-first) against the same optimum.

    bench/plan/selection.py [--tcx PATH] [--device ID] [--db FILE] [--mib N]
                            [--random N] [--seed N] [--only REGEX] [--share F]
                            [--min-time S] [--rounds N] [-j N] [--json FILE]
                            [--deadline S] [--builtin-too] [--interleave]
                            [--list] [--replan TAG]

Every measurement goes into one results store (--db), so a later
`tcx plan --fit --db FILE` fits the planner's model from them and reports
its choices on contractions it was not fitted on.  With --json the rows
are written after every case, and cases already there are skipped, so a
run cut short (--deadline, a lost machine) goes on where it stopped.

--replan TAG re-times only the planner's choice of the cases already in
--json (their tune columns stay), for a newer tcx against the same
exhaustive optimum; rows so timed carry planner_tag TAG, so that a run cut
short goes on where it stopped.  Where the optimum's logic is still in
the store's folder (FILE.logic), it is timed again beside the planner.
Cases not in --json are measured whole.

Each ratio is paired: the exhaustive optimum's logic is timed beside the
planner's choice (and beside the budgeted tune's logic) in one `tcx bench
--versus-logic`, their launches interleaved, and the ratio is the median
of the per-launch ratios.  On a device whose speed drifts (a CPU shared
with other work: PoCL's absolute timings move by a factor of 1.5-2 between
runs a minute apart) a ratio of two separate runs' GFLOP/s is mostly that
drift; the paired ratio moves by a few percent.  --rounds N repeats each
pair N times and keeps the medians.

Columns: the space's size, GFLOP/s of the exhaustive optimum, of the
planner's choice ("planned as" when it merged indices or permuted
operands, which the space, the problem as written, does not contain) and of
the budgeted tune, and the two ratios.  The summary gives the mean and the
10th percentile of each ratio.
"""
import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tccg"))
import cases as tccg  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def random_case(rng, k, mib):
    """One contraction of random classes, layouts and extents: 1-3 free
    indices of A, 0-3 of B, 1-3 bound, sometimes a batch index; each
    tensor's order shuffled; extents spread around TCCG's rule (the
    largest tensor about mib MiB), some rounded, some prime, some short
    bound extents."""
    names = rng.sample(LETTERS, 10)
    nfa, nfb, nb = rng.randint(1, 3), rng.randint(0, 3), rng.randint(1, 3)
    nbatch = 1 if rng.random() < 0.25 else 0
    fa, fb = names[:nfa], names[nfa:nfa + nfb]
    bound = names[nfa + nfb:nfa + nfb + nb]
    batch = names[nfa + nfb + nb:nfa + nfb + nb + nbatch]
    a, b, c = fa + bound + batch, fb + bound + batch, fa + fb + batch
    for t in (a, b, c):
        rng.shuffle(t)
    rank = max(len(a), len(b), len(c))
    avg = (mib * 2 ** 20 / 4) ** (1.0 / rank)
    style = rng.choice(["round", "prime", "short", "mixed"])
    sizes = {}
    for x in a + fb:
        if x in sizes:
            continue
        e = max(1.0, avg * 2 ** rng.uniform(-1.5, 1.5))
        if style == "short" and x in bound:
            n = rng.choice([4, 8, 12, 16, 20, 24])
        elif style == "prime" or (style == "mixed" and rng.random() < 0.5):
            n = int(e)
            while not is_prime(n) and n > 2:
                n += 1
            n = max(n, 1)
        else:
            n = max(1, int(round(e / 8)) * 8)
        sizes[x] = n
    # the largest tensor between half and one and a half times mib MiB:
    # shrink the largest extents, grow the smallest (not the short sums)
    def mbytes(t):
        v = 4
        for x in t:
            v *= sizes[x]
        return v / 2 ** 20
    while max(mbytes(t) for t in (a, b, c)) > 1.5 * mib:
        x = max(sizes, key=lambda y: sizes[y])
        sizes[x] = max(1, sizes[x] * 3 // 4)
    while max(mbytes(t) for t in (a, b, c)) < 0.5 * mib:
        x = min((y for y in sizes if not (style == "short" and y in bound)),
                key=lambda y: sizes[y])
        sizes[x] = sizes[x] * 4 // 3 + 1
    flops = 2.0
    for v in sizes.values():
        flops *= v
    return {
        "name": "rand%02d-%s-%s-%s" % (k, "".join(c), "".join(a), "".join(b)),
        "group": "random",
        "tensile": "C[%s]=A[%s]*B[%s]" % (",".join(c), ",".join(a), ",".join(b)),
        "sizes": sizes,
        "gflop": flops / 1e9,
    }


def run(cmd, timeout=None, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=dict(os.environ, **env) if env else None)
    if p.returncode:
        lines = p.stderr.strip().splitlines() or ["exit %d" % p.returncode]
        raise RuntimeError("%s: %s" % (" ".join(cmd[1:3]), lines[-1]))
    return p.stdout


def exact_of(tcx, case):
    """The sizes in tcx's index-number order (what --exact takes)."""
    out = json.loads(run([tcx, "parse", case["tensile"], "--format", "json"]))
    order = [x["name"] for x in sorted(out["indices"], key=lambda x: x["id"])]
    return ",".join(str(case["sizes"][n]) for n in order)


def logic_file(folder):
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".yaml"))
    if not files:
        raise RuntimeError("no logic in " + folder)
    return files[0]


def bench(args, case, exact, extra, env=None):
    """One `tcx bench` of the case: GFLOP/s and the result's fields.  The
    planner's choice and the tuned winners are timed alike, by bench."""
    cmd = [args.tcx, "-q", "bench", case["tensile"], "--exact", exact, "--format", "json"]
    if args.device:
        cmd += ["--device", args.device]
    if args.min_time is not None:
        cmd += ["--min-time", str(args.min_time)]
    r = json.loads(run(cmd + extra, 600, env))["results"][0]
    if r["status"] != "ok":
        raise RuntimeError("bench %s: %s" % (" ".join(extra), r.get("reason", r["status"])))
    return r["gflops"], r


def versus(args, case, exact, first, logic, env=None):
    """The paired ratio of `logic`'s solution against the first side
    (bench's extra arguments: [] for the planner's choice), as GFLOP/s
    first / versus: time_versus / time_first from `tcx bench
    --versus-logic`, the median over args.rounds runs.  Returns the ratio,
    the two sides' median GFLOP/s and the last result row."""
    rs, gf, gv, last = [], [], [], None
    for _ in range(max(1, args.rounds)):
        _, last = bench(args, case, exact, first + ["--versus-logic", logic], env)
        v = last.get("versus", {})
        if v.get("status") != "ok" or last["ratio"]["median"] is None:
            raise RuntimeError("bench --versus-logic: %s" % v.get("reason", v.get("status")))
        rs.append(last["ratio"]["median"])
        gf.append(last["gflops"])
        gv.append(v["gflops"])
    return statistics.median(rs), statistics.median(gf), statistics.median(gv), last


def planner_fields(args, case, exact, e, planner=None, whole=None):
    """The planner's choice timed by bench, as a row's fields (e: the
    exhaustive optimum's GFLOP/s; planner: its bench and paired ratio,
    when timed already; whole: the optimum's logic, to pair the built-in
    model's choice with)."""
    p, r, ratio = planner or bench(args, case, exact, []) + (None,)
    plan = r.get("plan", {})
    out = {"planner_gflops": p, "planner_solution": r.get("solution_name"),
           "planner_ttm": plan.get("tensor_times_matrix", False),
           "planned_as": plan.get("planned_as"), "permuted": plan.get("permuted", []),
           "planner_ratio": ratio if ratio is not None else p / e if e > 0 else None,
           "paired": ratio is not None}
    if args.replan:
        out["planner_tag"] = args.replan
    if args.builtin_too:
        env = {"TCX_MODEL": "none"}
        if whole:
            ratio, b, _, rb = versus(args, case, exact, [], whole, env)
        else:
            (b, rb), ratio = bench(args, case, exact, [], env), None
        out.update(builtin_gflops=b, builtin_solution=rb.get("solution_name"),
                   builtin_ratio=ratio if ratio is not None else b / e if e > 0 else None)
    return out


def one(args, case, work):
    exact = exact_of(args.tcx, case)
    dev = ["--device", args.device] if args.device else []
    mt = ["--min-time", str(args.min_time)] if args.min_time is not None else []
    base = [args.tcx, "-q", "tune", case["tensile"], "--exact", exact] + dev + mt
    space = json.loads(run(base + ["--dry-run", "--format", "json"]))
    n = len(space["candidates"])
    budget = max(1, int(math.floor(args.share * n)))
    jobs = ["-j", str(args.jobs)] if args.jobs > 1 else []
    whole = os.path.join(work, case["name"] + "-exhaustive")
    model = os.path.join(work, case["name"] + "-budget")
    t0 = time.time()
    run(base + jobs + ["--strategy", "exhaustive", "--db", args.db, "-o", whole], 1800)
    t1 = time.time()
    run(base + jobs + ["--budget", str(budget), "--db", args.db, "-o", model], 1800)
    best = logic_file(whole)
    pr, p, e, rp = versus(args, case, exact, [], best)
    br, m, e2, rm = versus(args, case, exact, ["--logic", logic_file(model)], best)
    e = statistics.median([e, e2])
    extra = planner_fields(args, case, exact, e, (p, rp, pr), best)
    return {"name": case["name"], "group": case["group"], "expression": case["tensile"],
            "sizes": case["sizes"], "space": n, "budget": budget,
            "exhaustive_gflops": e, "budget_gflops": m,
            "exhaustive_solution": rp["versus"].get("solution_name"),
            "budget_solution": rm.get("solution_name"),
            "budget_ratio": br, "tune_s": round(t1 - t0, 1), **extra}


def p10(xs):
    xs = sorted(xs)
    return xs[max(0, int(math.ceil(0.1 * len(xs))) - 1)] if xs else float("nan")


def summary(rows, share):
    out = []
    for key, what in (("planner_ratio", "planner / exhaustive"),
                      ("builtin_ratio", "built-in model / exhaustive"),
                      ("budget_ratio", "budget %.0f%% / exhaustive" % (100 * share))):
        for grp in ("tccg", "random", None):
            xs = [r[key] for r in rows if r.get(key) is not None and
                  (grp is None or (r["group"] == "random") == (grp == "random"))]
            if not xs:
                continue
            out.append("%-28s %-7s n=%3d  mean %.3f  P10 %.3f  least %.3f  >=0.95: %d" %
                       (what, grp or "all", len(xs), sum(xs) / len(xs), p10(xs), min(xs),
                        sum(x >= 0.95 for x in xs)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcx", default="build/cmd/tcx")
    ap.add_argument("--device", default=None)
    ap.add_argument("--db", default="selection.db", help="results store for every measurement")
    ap.add_argument("--mib", type=float, default=50.0,
                    help="MiB of the largest tensor (TCCG: 200; default 50)")
    ap.add_argument("--random", type=int, default=60, help="random contractions (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=None, help="regex on the case name")
    ap.add_argument("--share", type=float, default=0.1,
                    help="tune --budget as a share of the space (default 0.1)")
    ap.add_argument("--min-time", type=float, default=None)
    ap.add_argument("--rounds", type=int, default=1,
                    help="time each pair (the optimum beside the planner's choice, beside the "
                    "budgeted tune) this many times and take the medians (default 1)")
    ap.add_argument("--jobs", "-j", type=int, default=1)
    ap.add_argument("--json", default=None, help="rows, written after every case (resumable)")
    ap.add_argument("--deadline", type=float, default=None,
                    help="start no case after this many seconds")
    ap.add_argument("--builtin-too", action="store_true",
                    help="also bench the planner with its built-in model (TCX_MODEL=none)")
    ap.add_argument("--interleave", action="store_true",
                    help="alternate TCCG and random cases (a run cut short keeps both kinds)")
    ap.add_argument("--list", action="store_true", help="print the cases and stop")
    ap.add_argument("--replan", metavar="TAG", default=None,
                    help="re-time the planner's choice of the cases already in --json")
    args = ap.parse_args()

    cases = [dict(tccg.describe(g, c, fixed, args.mib, "s"), group="tccg")
             for g, cs, fixed in tccg.GROUPS for c in cs]
    rng = random.Random(args.seed)
    rand = [random_case(rng, k, args.mib) for k in range(args.random)]
    if args.interleave:
        mixed = []
        for k in range(max(len(cases), len(rand))):
            mixed += cases[k:k + 1] + rand[k:k + 1]
        cases = mixed
    else:
        cases += rand
    if args.only:
        cases = [x for x in cases if re.search(args.only, x["name"])]
    if args.list:
        for x in cases:
            print("%s|%s|%s|%.3f" % (x["name"], x["tensile"],
                                     ",".join("%s=%d" % kv for kv in sorted(x["sizes"].items())),
                                     x["gflop"]))
        return
    rows = []
    if args.json and os.path.exists(args.json):
        with open(args.json) as f:
            rows = json.load(f)
    done = {r["name"]: r for r in rows}

    def pending(case):
        r = done.get(case["name"])
        return r is None or bool(args.replan and r.get("planner_tag") != args.replan)

    start = time.time()
    work = os.path.abspath(args.db) + ".logic"
    os.makedirs(work, exist_ok=True)
    print("%-34s %5s %10s %10s %10s %6s %6s" % ("case", "space", "exhaustive", "planner",
                                                "budget", "plan", "budget"))
    for case in cases:
        if not pending(case):
            continue
        if args.deadline and time.time() - start > args.deadline:
            print("deadline: %d cases left" % sum(pending(c) for c in cases))
            break
        try:
            r = done.get(case["name"])
            if r is not None:
                # the built-in model's figures were timed with the old tcx
                for k in ("builtin_gflops", "builtin_solution", "builtin_ratio"):
                    r.pop(k, None)
                exact = exact_of(args.tcx, case)
                whole = os.path.join(work, case["name"] + "-exhaustive")
                if os.path.isdir(whole):
                    # the optimum's logic is at hand: time it again beside the planner
                    best = logic_file(whole)
                    pr, p, e, rp = versus(args, case, exact, [], best)
                    r.update(exhaustive_gflops=e,
                             exhaustive_solution=rp["versus"].get("solution_name"))
                    r.update(planner_fields(args, case, exact, e, (p, rp, pr), best))
                else:
                    r.update(planner_fields(args, case, exact, r["exhaustive_gflops"]))
            else:
                r = one(args, case, work)
                rows.append(r)
                done[r["name"]] = r
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print("%-34s failed: %s" % (case["name"], e), flush=True)
            continue
        print("%-34s %5d %10.1f %10.1f %10.1f %6.3f %6.3f%s" %
              (r["name"][:34], r["space"], r["exhaustive_gflops"], r["planner_gflops"],
               r["budget_gflops"], r["planner_ratio"], r["budget_ratio"],
               "  (planned as %s)" % r["planned_as"]
               if r["planned_as"] and r["planned_as"] != r["expression"] else ""), flush=True)
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(rows, f, indent=1)
                f.write("\n")
            os.replace(tmp, args.json)
    for line in summary(rows, args.share):
        print(line)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Same-machine regression check of Rondo's hot paths against a reference commit.

Builds the reference commit (in a git worktree beside the repository) and the
working tree with `bazel build -c opt`, then runs the key benchmark cases of
both, alternating reference and working tree round after round on this
machine, and prints the ratio working/reference of each case's median:

  task_latency  same_core, core:1   (the engine's task path)
  pingpong      8 B                 (nmad over UCX, 2 ranks)
  msg_path      8 B                 (one eager message through nmad's core)
  mpi_suite     latency, allreduce  (MadMPI, 8 B, 2 ranks, Rondo's defaults)

A ratio above 1 is slower. Each round runs both builds back to back, so the
ratio of one round compares runs a few seconds apart; the table gives the
median of the rounds' ratios and their range. A case whose every round is
slower by more than --threshold is marked REGRESSION (exit status 1).

With --gbench-compare, the samples are also written as Google Benchmark JSON
and handed to Google Benchmark's compare.py (Debian's libbenchmark-tools, which
needs python3-scipy) for its Mann-Whitney U test.

Usage (from the repository root):
  tools/perf_compare.py --ref e97c05a              # one commit against the tree
  tools/perf_compare.py --ref v1 --cases task_latency --rounds 9
  tools/perf_compare.py --ref HEAD~1 --json out.json

Exit status: 0 no regression, 1 a regression (or a case that failed to run),
2 bad arguments or a build that failed.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# name -> (bazel target, arguments, cases to keep: {json case: label})
SUITES = {
    "task_latency": ("//bench/engine:task_latency", ["-n", "5000", "--only", "core"],
                     {"same_core": "task_latency:same_core",
                      "core:1": "task_latency:core:1"}),
    "pingpong": ("//bench/p2p:pingpong", ["-n", "2000"],
                 {"pingpong:rondo:8": "pingpong:rondo:8"}),
    "msg_path": ("//bench/p2p:msg_path",
                 ["--benchmark_filter=BM_RondoUcx/8/"],
                 {"msg_path:rondo:ucx:8": "msg_path:rondo:ucx:8"}),
    "mpi_suite": ("//bench/p2p:mpi_suite",
                  ["--ranks", "2", "--tests", "latency,allreduce_float",
                   "--configs", "rondo:default", "--rounds", "1",
                   "--time-per-case-ms", "500"],
                  {"suite:rondo:default:latency:2:8": "mpi_suite:latency:8",
                   "suite:rondo:default:allreduce_float:2:8":
                       "mpi_suite:allreduce_float:8"}),
}


def run(cmd, cwd=None, quiet=False):
    out = subprocess.run(cmd, cwd=cwd, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if out.returncode != 0 and not quiet:
        sys.stderr.write(out.stdout[-4000:])
    return out.returncode, out.stdout


def bazel_bin(tree):
    rc, out = run(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=tree, quiet=True)
    if rc != 0:
        return None
    return out.strip().splitlines()[-1]


def former_label(target):
    """The label `target` had before bench/ was split by purpose (issue 30):
    //bench/engine:task_latency was //bench:task_latency. A reference commit
    from before the split has only that one."""
    return "//bench:" + target.split(":")[1]


def build(tree, targets):
    """Builds what exists among `targets` in `tree`, each under its current
    label or, in a tree from before issue 30, its former one; returns
    {target: the label built}."""
    built = {}
    for t in targets:
        pkg = t[2:].split(":")[0]
        label = t if os.path.isfile(os.path.join(tree, pkg, "BUILD")) \
            else former_label(t)
        rc, _ = run(["bazel", "build", "-c", "opt", label], cwd=tree, quiet=True)
        if rc == 0:
            built[t] = label
        else:
            print(f"perf_compare: {label} does not build in {tree}: skipped there")
    return built


def target_path(bindir, target):
    pkg, name = target[2:].split(":")
    return os.path.join(bindir, pkg, name)


def prebuilt(bindir, targets):
    """{target: label} of the programs already in `bindir` (a bazel-bin
    folder), under the current label or the former one."""
    found = {}
    for t in targets:
        for label in (t, former_label(t)):
            if os.path.exists(target_path(bindir, label)):
                found[t] = label
                break
    return found


def medians(program, args, cases):
    """Runs one benchmark with --json; returns {label: median_ns} of `cases`."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        rc, out = run([program] + args + ["--json", path])
        if rc != 0:
            print(f"perf_compare: {os.path.basename(program)} exited {rc}")
            return {}
        with open(path) as f:
            doc = json.load(f)
    finally:
        os.unlink(path)
    got = {}
    for r in doc.get("results", []):
        label = cases.get(r.get("case"))
        if label is not None and isinstance(r.get("median_ns"), (int, float)):
            got[label] = float(r["median_ns"])
    return got


def main():
    ap = argparse.ArgumentParser(
        description="Ratios of Rondo's hot-path benchmarks, working tree / "
                    "reference commit, measured back to back on this machine.")
    ap.add_argument("--ref", help="reference commit (a tag, hash or HEAD~N)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="alternating rounds of both builds (default 5)")
    ap.add_argument("--cases", default=",".join(SUITES),
                    help="among " + ", ".join(SUITES) + " (default all)")
    ap.add_argument("--threshold", type=float, default=0.05,
                    help="a case slower in every round by more than this "
                         "fraction is a regression (default 0.05)")
    ap.add_argument("--json", help="write the ratios to this file")
    ap.add_argument("--gbench-compare", action="store_true",
                    help="also run Google Benchmark's compare.py (U test)")
    ap.add_argument("--worktree", help="where to check the reference out "
                    "(default: a folder beside the repository)")
    # For tests: benchmark programs already built (bazel-bin folders).
    ap.add_argument("--ref-bin", help=argparse.SUPPRESS)
    ap.add_argument("--new-bin", help=argparse.SUPPRESS)
    a = ap.parse_args()
    suites = [s for s in a.cases.split(",") if s]
    bad = [s for s in suites if s not in SUITES]
    if bad or not suites:
        print(f"perf_compare: unknown case set {bad}; allowed: {', '.join(SUITES)}")
        return 2
    if a.rounds < 1 or a.rounds > 100:
        print("perf_compare: --rounds must be 1..100")
        return 2
    targets = [SUITES[s][0] for s in suites]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    if a.ref_bin and a.new_bin:
        ref_bin, new_bin, ref_name = a.ref_bin, a.new_bin, a.ref or "ref"
        ref_built, new_built = prebuilt(ref_bin, targets), prebuilt(new_bin, targets)
    else:
        if not a.ref:
            print("perf_compare: --ref COMMIT is required")
            return 2
        rc, sha = run(["git", "rev-parse", "--short", a.ref + "^{commit}"],
                      cwd=repo, quiet=True)
        if rc != 0:
            print(f"perf_compare: '{a.ref}' is not a commit of {repo}")
            return 2
        sha = sha.strip()
        ref_name = f"{a.ref} ({sha})" if a.ref != sha else sha
        wt = a.worktree or os.path.join(os.path.dirname(repo),
                                        f".rondo-ref-{sha}")
        if not os.path.isdir(wt):
            rc, _ = run(["git", "worktree", "add", "--detach", wt, sha], cwd=repo)
            if rc != 0:
                return 2
        print(f"perf_compare: building {ref_name} in {wt} and the working "
              f"tree ({', '.join(targets)})", flush=True)
        ref_built = build(wt, targets)
        new_built = build(repo, targets)
        ref_bin, new_bin = bazel_bin(wt), bazel_bin(repo)
        if ref_bin is None or new_bin is None or not new_built:
            print("perf_compare: the build failed")
            return 2

    samples = {}  # label -> {"ref": [...], "new": [...]}
    for rnd in range(a.rounds):
        print(f"round {rnd + 1}/{a.rounds}", flush=True)
        for s in suites:
            target, args, cases = SUITES[s]
            # Alternate which build goes first, so neither always runs on a
            # machine the other has just warmed.
            order = [("ref", ref_bin, ref_built), ("new", new_bin, new_built)]
            if rnd % 2:
                order.reverse()
            for side, bindir, built in order:
                if target not in built:
                    continue
                for label, ns in medians(target_path(bindir, built[target]), args,
                                         cases).items():
                    samples.setdefault(label, {"ref": [], "new": []})[side].append(ns)

    rows = []
    failed = False
    print(f"\nworking tree / {ref_name}, {a.rounds} alternating rounds "
          f"(median ns per case; ratio > 1 is slower)\n")
    print(f"{'case':34} {'ref ns':>10} {'new ns':>10} {'ratio':>7} "
          f"{'range':>13}  verdict")
    for s in suites:
        for label in SUITES[s][2].values():
            d = samples.get(label, {"ref": [], "new": []})
            n = min(len(d["ref"]), len(d["new"]))
            if n == 0:
                why = "not measured in " + ("both" if not d["ref"] and not d["new"]
                                            else "ref" if not d["ref"] else "new")
                print(f"{label:34} {'-':>10} {'-':>10} {'-':>7} {'-':>13}  {why}")
                rows.append({"case": label, "valid": False, "note": why})
                if d["ref"] and not d["new"]:
                    failed = True
                continue
            ratios = [nw / rf for rf, nw in zip(d["ref"][:n], d["new"][:n]) if rf > 0]
            ratio = statistics.median(ratios)
            verdict = "ok"
            if min(ratios) > 1 + a.threshold:
                verdict = "REGRESSION"
                failed = True
            elif max(ratios) < 1 - a.threshold:
                verdict = "faster"
            rmed, nmed = statistics.median(d["ref"]), statistics.median(d["new"])
            print(f"{label:34} {rmed:10.1f} {nmed:10.1f} {ratio:7.3f} "
                  f"{min(ratios):6.3f}-{max(ratios):<6.3f}  {verdict}")
            rows.append({"case": label, "median_ns": nmed, "min_ns": min(d["new"]),
                         "p99_ns": max(d["new"]), "ref_median_ns": rmed,
                         "ratio": ratio, "ratio_min": min(ratios),
                         "ratio_max": max(ratios), "rounds": n,
                         "verdict": verdict, "ref_samples_ns": d["ref"],
                         "new_samples_ns": d["new"]})
    if a.json:
        doc = {"benchmark": "perf_compare",
               "machine": {"host": os.uname().nodename,
                           "processors": os.cpu_count(),
                           "kernel": os.uname().release, "build": "opt"},
               "reference": ref_name, "rounds": a.rounds,
               "threshold": a.threshold, "results": rows}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"\nJSON written to {a.json}")
    if a.gbench_compare:
        gbench_compare(rows)
    return 1 if failed else 0


def gbench_compare(rows):
    """Google Benchmark's compare.py on the same samples (its U test)."""
    tool = "/usr/share/benchmark/compare.py"
    py = "/usr/bin/python3"
    if not os.path.exists(tool) or subprocess.run(
            [py, "-c", "import scipy"], capture_output=True).returncode != 0:
        print("perf_compare: --gbench-compare needs libbenchmark-tools and "
              "python3-scipy (apt-get install libbenchmark-tools python3-scipy)")
        return
    tmp = tempfile.mkdtemp()
    try:
        for side in ("ref", "new"):
            runs = []
            for r in rows:
                for i, ns in enumerate(r.get(side + "_samples_ns", [])):
                    runs.append({"name": r["case"], "run_name": r["case"],
                                 "run_type": "iteration", "repetitions": 0,
                                 "repetition_index": i, "threads": 1,
                                 "iterations": 1, "real_time": ns, "cpu_time": ns,
                                 "time_unit": "ns"})
            with open(os.path.join(tmp, side + ".json"), "w") as f:
                json.dump({"context": {}, "benchmarks": runs}, f)
        subprocess.run([py, tool, "-a", "benchmarks", os.path.join(tmp, "ref.json"),
                        os.path.join(tmp, "new.json")])
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())

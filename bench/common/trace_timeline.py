#!/usr/bin/env python3
"""trace_timeline: one picture of Rondo traces (RONDO_TRACE, Chrome/Perfetto
JSON) of several ranks: per rank, the application's spans ("cat": "app",
e.g. StarPU's kernels recorded with rondo_trace_span) and, below them, the
engine's task runs that did work (nmad polling, callbacks, collective steps)
on one time axis. For the docs; the same files open in ui.perfetto.dev.

  trace_timeline.py --out timeline.png [--title T]
                    [--window LABEL:A:B ...] TRACE.json [TRACE.json ...]

Each --window draws the interval [A, B] ms in a panel of its own (e.g. one
run of each mode), one under the other; without it, the whole trace.

The ranks of one machine share CLOCK_MONOTONIC; each file's "ts" is
relative to its tracer's start, whose clock value is "otherData.origin_ns":
the files are aligned on it (time 0: the earliest first kernel).
"""
import argparse
import json
import sys

KERNEL_COLORS = {"potrf": "#d62728", "trsm": "#ff7f0e", "syrk": "#2ca02c",
                 "gemm": "#1f77b4"}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    app, engine = [], []
    shift = float(doc.get("otherData", {}).get("origin_ns", 0)) / 1e6  # ms
    for e in doc.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        start = float(e["ts"]) / 1000.0 + shift  # ms
        dur = float(e.get("dur", 0)) / 1000.0
        if e.get("cat") == "app":
            app.append((start, dur, e.get("name", "")))
        elif e.get("args", {}).get("result") in ("progress", "done"):
            engine.append((start, dur, e.get("name", "")))
    return app, engine


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("--window", action="append", default=[],
                    help="LABEL:FROM_MS:TO_MS, a panel of its own")
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("trace_timeline: matplotlib is missing (python3-matplotlib)",
              file=sys.stderr)
        return 2
    ranks = [load(p) for p in args.traces]
    origin = min((min((s for s, _, _ in app), default=float("inf"))
                  for app, _ in ranks), default=0.0)
    windows = []
    for w in args.window:
        label, a, b = w.rsplit(":", 2)
        windows.append((label, float(a), float(b)))
    if not windows:
        windows = [("", None, None)]
    fig, axes = plt.subplots(len(windows), 1, squeeze=False,
                             figsize=(14, (0.75 * len(ranks) + 1.2) *
                                      len(windows) + 0.5))
    for (label, lo, hi), ax in zip(windows, axes[:, 0]):
        for r, (app, engine) in enumerate(ranks):
            y = len(ranks) - 1 - r
            for s, d, name in app:
                ax.broken_barh([(s - origin, max(d, 0.05))], (y + 0.35, 0.55),
                               color=KERNEL_COLORS.get(name, "#7f7f7f"))
            for s, d, name in engine:
                ax.broken_barh([(s - origin, max(d, 0.05))], (y + 0.05, 0.25),
                               color="#000000")
        ax.set_yticks([len(ranks) - 1 - r + 0.5 for r in range(len(ranks))])
        ax.set_yticklabels([f"rank {r}" for r in range(len(ranks))])
        if lo is not None:
            ax.set_xlim(lo, hi)
        ax.set_title(label, fontsize=10, loc="left")
        ax.set_xlabel("ms since the first kernel of any rank")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in
               KERNEL_COLORS.values()] + [plt.Rectangle((0, 0), 1, 1,
                                                        color="#000000")]
    axes[0, 0].legend(handles, list(KERNEL_COLORS) + ["Rondo task (did work)"],
                      loc="upper right", ncol=5, fontsize=8)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"trace_timeline: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
